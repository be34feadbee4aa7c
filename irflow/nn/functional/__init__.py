"""Paddle's ``paddle.nn.functional``: stateless layers, activations and losses, all
composed from irflow's tensor operations so they run eagerly and trace alike."""
from .activation import (elu, gelu, glu, hardsigmoid, hardswish, hardtanh, leaky_relu,
                         log_sigmoid, log_softmax, mish, prelu, relu, relu6, selu, sigmoid,
                         silu, softmax, softplus, tanh)
from .common import (cosine_similarity, dropout, dropout2d, embedding, linear, normalize,
                     one_hot, pad, sequence_mask)
from .conv import (adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool1d, avg_pool2d, conv1d,
                   conv2d, conv2d_transpose, max_pool1d, max_pool2d)
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                   kl_div, l1_loss, label_smooth, margin_ranking_loss, mse_loss, nll_loss,
                   smooth_l1_loss, softmax_with_cross_entropy, square_error_cost)
from .norm import batch_norm, group_norm, instance_norm, layer_norm
from .resample import interpolate, unfold

upsample = interpolate

swish = silu

__all__ = ["adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d",
           "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d",
           "conv2d", "conv2d_transpose", "cosine_similarity", "cross_entropy", "dropout",
           "dropout2d", "elu", "embedding", "gelu", "glu", "group_norm", "hardsigmoid",
           "hardswish", "hardtanh", "instance_norm", "interpolate", "kl_div", "l1_loss",
           "label_smooth", "layer_norm", "margin_ranking_loss", "leaky_relu", "linear",
           "log_sigmoid", "log_softmax", "max_pool1d", "max_pool2d", "mish", "mse_loss",
           "nll_loss", "normalize", "one_hot", "pad", "prelu", "relu", "relu6", "selu",
           "sequence_mask", "sigmoid", "silu", "smooth_l1_loss", "softmax",
           "softmax_with_cross_entropy", "softplus", "square_error_cost", "swish", "tanh",
           "unfold", "upsample"]
