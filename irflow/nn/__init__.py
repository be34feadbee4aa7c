"""Paddle's ``paddle.nn``: `Layer`, the standard layers, `functional` and `initializer`.

Layers compute only through irflow's tensor operations (`irflow.tensor`), which run
through `irflow.dispatch.apply`: eagerly they compute at once and record gradients,
and under the frontend's tracer the same forward code becomes IR.
"""
from ..optimizer.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from . import functional, initializer, utils
from .layer.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                               Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Maxout, Mish,
                               PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmax2D,
                               Softplus, Softshrink, Softsign, Swish, Tanh, Tanhshrink,
                               ThresholdedReLU)
from .layer.common import (AlphaDropout, Bilinear, ChannelShuffle, CosineSimilarity, Dropout,
                           Dropout2D, Embedding, Flatten, Identity, Linear, PairwiseDistance,
                           Unflatten)
from .layer.container import LayerDict, LayerList, ParameterDict, ParameterList, Sequential
from .layer.conv import (Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D,
                         Conv3DTranspose)
from .layer.layers import Layer
from .layer.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,
                         CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, KLDivLoss, L1Loss,
                         MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, NLLLoss,
                         PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .layer.loss_extra import (HSigmoidLoss, MultiLabelMarginLoss, MultiMarginLoss,
                               TripletMarginWithDistanceLoss)

HuberLoss = SmoothL1Loss  # Paddle 3's name of the same layer
from .layer.norm import (BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, GroupNorm,
                         InstanceNorm1D, InstanceNorm2D, InstanceNorm3D, LayerNorm,
                         LocalResponseNorm, SyncBatchNorm)
from .layer.pooling import (AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D,
                            AdaptiveMaxPool1D, AdaptiveMaxPool2D, AdaptiveMaxPool3D, AvgPool1D,
                            AvgPool2D, AvgPool3D, LPPool1D, LPPool2D, MaxPool1D, MaxPool2D,
                            MaxPool3D, MaxUnPool1D, MaxUnPool2D, MaxUnPool3D)
from .layer.resample import (Fold, Pad1D, Pad2D, Pad3D, PixelShuffle, PixelUnshuffle, Unfold,
                             Upsample, UpsamplingBilinear2D, UpsamplingNearest2D, ZeroPad1D,
                             ZeroPad2D, ZeroPad3D)
from .layer.rnn import (GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN,
                        SimpleRNNCell)
from .layer.spectral import SpectralNorm
from .layer.transformer import (MultiHeadAttention, Transformer, TransformerDecoder,
                                TransformerDecoderLayer, TransformerEncoder,
                                TransformerEncoderLayer)

Silu = SiLU

__all__ = ["AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D", "AdaptiveMaxPool1D",
           "AdaptiveMaxPool2D", "AdaptiveMaxPool3D", "AlphaDropout", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "BCELoss", "BCEWithLogitsLoss", "BatchNorm", "BatchNorm1D", "BatchNorm2D",
           "BatchNorm3D", "BiRNN", "Bilinear", "CELU", "ChannelShuffle",
           "ClipGradByGlobalNorm", "ClipGradByNorm",
           "ClipGradByValue", "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D",
           "Conv3DTranspose", "CosineEmbeddingLoss", "CosineSimilarity", "CrossEntropyLoss",
           "CTCLoss", "Dropout", "Dropout2D", "ELU", "Embedding", "Flatten", "Fold", "GELU",
           "GLU", "GRU",
           "GRUCell", "GaussianNLLLoss", "GroupNorm", "Hardshrink", "Hardsigmoid", "Hardswish",
           "Hardtanh", "HingeEmbeddingLoss", "HSigmoidLoss", "HuberLoss", "Identity",
           "InstanceNorm1D", "InstanceNorm2D",
           "InstanceNorm3D", "KLDivLoss", "L1Loss", "LSTM", "LSTMCell", "Layer", "LayerDict",
           "LayerList", "LayerNorm", "LeakyReLU", "Linear", "LocalResponseNorm", "LogSigmoid",
           "LPPool1D", "LPPool2D",
           "LogSoftmax", "MSELoss", "MarginRankingLoss", "MaxPool1D", "MaxPool2D", "MaxPool3D",
           "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D",
           "Maxout", "Mish", "MultiHeadAttention", "MultiLabelMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PReLU",
           "Pad1D", "Pad2D", "Pad3D", "PairwiseDistance", "ParameterDict", "ParameterList",
           "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss", "RNN", "RNNCellBase", "RReLU",
           "ReLU", "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "Silu", "SimpleRNN",
           "SimpleRNNCell", "SmoothL1Loss", "SoftMarginLoss", "Softmax", "Softmax2D", "Softplus",
           "Softshrink", "Softsign", "SpectralNorm", "Swish", "SyncBatchNorm", "Tanh",
           "Tanhshrink",
           "ThresholdedReLU",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
           "Unflatten", "Unfold", "Upsample",
           "UpsamplingBilinear2D", "UpsamplingNearest2D", "ZeroPad1D", "ZeroPad2D", "ZeroPad3D",
           "functional", "initializer", "utils"]
