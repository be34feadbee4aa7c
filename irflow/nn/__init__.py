"""Paddle's ``paddle.nn``: `Layer`, the standard layers, `functional` and `initializer`.

Layers compute only through irflow's tensor operations (`irflow.tensor`), which run
through `irflow.dispatch.apply`: eagerly they compute at once and record gradients,
and under the frontend's tracer the same forward code becomes IR.
"""
from ..optimizer.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from . import functional, initializer, utils
from .layer.activation import (ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh,
                               LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6,
                               Sigmoid, SiLU, Softmax, Softplus, Tanh)
from .layer.common import Dropout, Dropout2D, Embedding, Flatten, Identity, Linear
from .layer.container import LayerDict, LayerList, ParameterList, Sequential
from .layer.conv import Conv1D, Conv2D, Conv2DTranspose
from .layer.layers import Layer
from .layer.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss,
                         MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
from .layer.norm import BatchNorm1D, BatchNorm2D, GroupNorm, InstanceNorm2D, LayerNorm
from .layer.pooling import (AdaptiveAvgPool2D, AdaptiveMaxPool2D, AvgPool1D, AvgPool2D,
                            MaxPool1D, MaxPool2D)
from .layer.resample import Pad2D, Unfold, Upsample
from .layer.rnn import (GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN,
                        SimpleRNNCell)
from .layer.transformer import (MultiHeadAttention, Transformer, TransformerDecoder,
                                TransformerDecoderLayer, TransformerEncoder,
                                TransformerEncoderLayer)

Silu = SiLU

__all__ = ["AdaptiveAvgPool2D", "AdaptiveMaxPool2D", "AvgPool1D", "AvgPool2D", "BCELoss",
           "BCEWithLogitsLoss", "BatchNorm1D", "BatchNorm2D", "BiRNN", "ClipGradByGlobalNorm",
           "ClipGradByNorm", "ClipGradByValue", "Conv1D", "Conv2D", "Conv2DTranspose",
           "CrossEntropyLoss", "Dropout", "Dropout2D", "ELU", "Embedding", "Flatten", "GELU",
           "GLU", "GRU", "GRUCell", "GroupNorm", "Hardsigmoid", "Hardswish", "Hardtanh",
           "Identity", "InstanceNorm2D", "KLDivLoss", "L1Loss", "LSTM", "LSTMCell", "Layer",
           "LayerDict", "LayerList", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid",
           "LogSoftmax", "MSELoss", "MarginRankingLoss", "MaxPool1D", "MaxPool2D", "Mish",
           "MultiHeadAttention", "NLLLoss", "PReLU", "Pad2D", "ParameterList", "RNN",
           "RNNCellBase", "ReLU", "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "Silu",
           "SimpleRNN", "SimpleRNNCell", "SmoothL1Loss", "Softmax", "Softplus", "Tanh",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer", "Unfold", "Upsample", "functional", "initializer", "utils"]
