"""Paddle's ``paddle.nn.functional``: stateless layers, activations and losses, all
composed from irflow's tensor operations so they run eagerly and trace alike."""
from .activation import gelu, leaky_relu, log_softmax, relu, sigmoid, silu, softmax, tanh
from .common import dropout, embedding, linear, normalize, one_hot, pad
from .conv import adaptive_avg_pool2d, avg_pool2d, conv2d, max_pool2d
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,
                   l1_loss, mse_loss, nll_loss)
from .norm import batch_norm, layer_norm

swish = silu

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout",
           "embedding", "gelu", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax",
           "max_pool2d", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu",
           "sigmoid", "silu", "softmax", "swish", "tanh"]
