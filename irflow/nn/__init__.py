"""Paddle's ``paddle.nn``: `Layer`, the standard layers, `functional` and `initializer`.

Layers compute only through irflow's tensor operations (`irflow.tensor`), which run
through `irflow.dispatch.apply`: eagerly they compute at once and record gradients,
and under the frontend's tracer the same forward code becomes IR.
"""
from . import functional, initializer
from .layer.activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .layer.common import Dropout, Embedding, Flatten, Identity, Linear
from .layer.container import LayerDict, LayerList, Sequential
from .layer.conv import Conv2D
from .layer.layers import Layer
from .layer.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .layer.norm import BatchNorm1D, BatchNorm2D, LayerNorm
from .layer.pooling import AdaptiveAvgPool2D, AvgPool2D, MaxPool2D
from .layer.rnn import (GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN,
                        SimpleRNNCell)

Silu = SiLU

__all__ = ["BiRNN", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCellBase", "SimpleRNN",
           "SimpleRNNCell", "AdaptiveAvgPool2D", "AvgPool2D", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1D",
           "BatchNorm2D", "Conv2D", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten",
           "GELU", "Identity", "L1Loss", "Layer", "LayerDict", "LayerList",
           "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool2D", "NLLLoss",
           "ReLU", "Sequential", "SiLU", "Sigmoid", "Silu", "Softmax", "Tanh",
           "functional", "initializer"]
