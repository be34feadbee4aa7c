"""Paddle's ``paddle.nn.functional``: stateless layers, activations and losses, all
composed from irflow's tensor operations so they run eagerly and trace alike."""
from .activation import (celu, elu, elu_, gelu, glu, gumbel_softmax, hardshrink, hardsigmoid,
                         hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_, log_sigmoid,
                         log_softmax, maxout, mish, prelu, relu, relu_, relu6, rrelu, selu,
                         sigmoid, silu, softmax, softmax_, softplus, softshrink, softsign, tanh,
                         tanh_, tanhshrink, thresholded_relu, thresholded_relu_)
from . import flash_attention
from .attention import scaled_dot_product_attention
from .common import (alpha_dropout, bilinear, channel_shuffle, cosine_similarity, dropout,
                     dropout2d, embedding, linear, normalize, one_hot, pad, pairwise_distance,
                     sequence_mask, zeropad2d)
from .conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                   adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d,
                   avg_pool2d, avg_pool3d, conv1d, conv1d_transpose, conv2d, conv2d_transpose,
                   conv3d, conv3d_transpose, lp_pool1d, lp_pool2d, max_pool1d, max_pool2d,
                   max_pool3d, max_unpool1d, max_unpool2d, max_unpool3d)
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                   cosine_embedding_loss, cross_entropy, ctc_loss, gaussian_nll_loss,
                   hinge_embedding_loss, kl_div, l1_loss, label_smooth, margin_ranking_loss,
                   mse_loss, multi_label_soft_margin_loss, nll_loss, poisson_nll_loss,
                   sigmoid_focal_loss, smooth_l1_loss, soft_margin_loss,
                   softmax_with_cross_entropy, square_error_cost, triplet_margin_loss)
from .loss_extra import (dice_loss, hsigmoid_loss, log_loss, multi_label_margin_loss,
                         multi_margin_loss, npair_loss, triplet_margin_with_distance_loss)
from .norm import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm
from .resample import (affine_grid, fold, grid_sample, interpolate, pixel_shuffle,
                       pixel_unshuffle, unfold)

upsample = interpolate

swish = silu

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "affine_grid",
           "alpha_dropout", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "celu", "channel_shuffle",
           "conv1d", "conv1d_transpose", "conv2d", "conv2d_transpose", "conv3d",
           "conv3d_transpose", "cosine_embedding_loss",
           "cosine_similarity", "cross_entropy", "ctc_loss", "dice_loss", "dropout", "dropout2d",
           "elu",
           "elu_",
           "embedding",
           "fold", "gaussian_nll_loss", "gelu", "glu", "grid_sample", "group_norm",
           "gumbel_softmax", "hardshrink",
           "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "hinge_embedding_loss",
           "hsigmoid_loss",
           "instance_norm",
           "interpolate", "kl_div", "l1_loss", "label_smooth", "layer_norm", "leaky_relu",
           "leaky_relu_",
           "linear", "local_response_norm", "log_loss", "log_sigmoid", "log_softmax", "lp_pool1d",
           "lp_pool2d",
           "margin_ranking_loss",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "maxout", "mish", "mse_loss",
           "multi_label_margin_loss", "multi_label_soft_margin_loss", "multi_margin_loss",
           "nll_loss", "npair_loss", "normalize", "one_hot", "pad",
           "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
           "relu", "relu_", "relu6", "rrelu", "scaled_dot_product_attention", "selu",
           "sequence_mask",
           "sigmoid", "sigmoid_focal_loss", "silu", "smooth_l1_loss", "soft_margin_loss",
           "softmax", "softmax_", "softmax_with_cross_entropy", "softplus", "softshrink",
           "softsign",
           "square_error_cost", "swish", "tanh", "tanh_", "tanhshrink", "thresholded_relu",
           "thresholded_relu_",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "unfold", "upsample",
           "zeropad2d"]
