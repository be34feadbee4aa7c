"""Paddle's ``paddle.vision.models.ShuffleNetV2`` (scales 0.25 to 2.0, ReLU or
Swish), with Paddle's sublayer and state-dict names."""
from __future__ import annotations

from ... import nn
from ...tensor import concat, flatten, reshape, split, transpose
from ._utils import ConvNormActivation, no_pretrained

__all__ = ["ShuffleNetV2", "shufflenet_v2_swish", "shufflenet_v2_x0_25",
           "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
           "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]

_ACTIVATIONS = {"relu": nn.ReLU, "swish": nn.Swish, None: None}


def create_activation_layer(act):
    """The activation layer class named by `act` ("relu", "swish" or None)."""
    if act not in _ACTIVATIONS:
        raise ValueError(f"ShuffleNetV2: act must be 'relu', 'swish' or None, got {act!r}")
    return _ACTIVATIONS[act]


def channel_shuffle(x, groups: int):
    """The channels of NCHW `x` interleaved from `groups` groups."""
    _, channels, height, width = x.shape
    x = reshape(x, [-1, groups, channels // groups, height, width])
    return reshape(transpose(x, [0, 2, 1, 3, 4]), [-1, channels, height, width])


def _conv(in_channels, out_channels, kernel_size, stride, groups, activation_layer):
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride,
                              padding=(kernel_size - 1) // 2, groups=groups,
                              activation_layer=activation_layer)


class InvertedResidual(nn.Layer):
    """Half the channels kept, the other half through a 1x1, a depthwise 3x3 and a
    1x1 convolution; concatenated and shuffled."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_pw = _conv(in_channels // 2, half, 1, 1, 1, activation_layer)
        self._conv_dw = _conv(half, half, 3, stride, half, None)
        self._conv_linear = _conv(half, half, 1, 1, 1, activation_layer)

    def forward(self, x):
        half = x.shape[1] // 2
        x1, x2 = split(x, [half, half], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return channel_shuffle(concat([x1, x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """The downsampling unit: two branches (a depthwise 3x3 then 1x1; a 1x1, a
    depthwise 3x3 and a 1x1), each at `stride`, concatenated and shuffled."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU):
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = _conv(in_channels, in_channels, 3, stride, in_channels, None)
        self._conv_linear_1 = _conv(in_channels, half, 1, 1, 1, activation_layer)
        self._conv_pw_2 = _conv(in_channels, half, 1, 1, 1, activation_layer)
        self._conv_dw_2 = _conv(half, half, 3, stride, half, None)
        self._conv_linear_2 = _conv(half, half, 1, 1, 1, activation_layer)

    def forward(self, x):
        x1 = self._conv_linear_1(self._conv_dw_1(x))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(x)))
        return channel_shuffle(concat([x1, x2], axis=1), 2)


# scale: the output channels of the stem, the three stages and the last convolution
_STAGE_CHANNELS = {0.25: [24, 24, 48, 96, 512], 0.33: [24, 32, 64, 128, 512],
                   0.5: [24, 48, 96, 192, 1024], 1.0: [24, 116, 232, 464, 1024],
                   1.5: [24, 176, 352, 704, 1024], 2.0: [24, 224, 488, 976, 2048]}
_STAGE_REPEATS = [4, 8, 4]


class ShuffleNetV2(nn.Layer):
    """``ShuffleNetV2(scale=1.0, act="relu", num_classes=1000, with_pool=True)``: a
    3x3 stem and max pooling, three stages (each a downsampling unit, then
    InvertedResiduals, named ``{stage}_{i}``), a 1x1 convolution, then
    (`with_pool`) global average pooling and (`num_classes` > 0) the Linear `_fc`."""

    def __init__(self, scale: float = 1.0, act="relu", num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        if scale not in _STAGE_CHANNELS:
            raise NotImplementedError(f"ShuffleNetV2: scale {scale} is not implemented; "
                                      f"the scales are {list(_STAGE_CHANNELS)}")
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        activation_layer = create_activation_layer(act)
        channels = _STAGE_CHANNELS[scale]
        self._conv1 = _conv(3, channels[0], 3, 2, 1, activation_layer)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._block_list = []
        for stage, repeats in enumerate(_STAGE_REPEATS):
            for i in range(repeats):
                if i == 0:
                    block = InvertedResidualDS(channels[stage], channels[stage + 1], 2,
                                               activation_layer)
                else:
                    block = InvertedResidual(channels[stage + 1], channels[stage + 1], 1,
                                             activation_layer)
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = _conv(channels[-2], channels[-1], 1, 1, 1, activation_layer)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = channels[-1]
            self._fc = nn.Linear(channels[-1], num_classes)

    def forward(self, x):
        x = self._max_pool(self._conv1(x))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            x = self._fc(flatten(x, 1))
        return x


def _shufflenet_v2(arch, pretrained, scale, **kwargs) -> ShuffleNetV2:
    no_pretrained(arch, pretrained)
    return ShuffleNetV2(scale=scale, **kwargs)


def shufflenet_v2_x0_25(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 0.25."""
    return _shufflenet_v2("shufflenet_v2_x0_25", pretrained, 0.25, **kwargs)


def shufflenet_v2_x0_33(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 0.33."""
    return _shufflenet_v2("shufflenet_v2_x0_33", pretrained, 0.33, **kwargs)


def shufflenet_v2_x0_5(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 0.5."""
    return _shufflenet_v2("shufflenet_v2_x0_5", pretrained, 0.5, **kwargs)


def shufflenet_v2_x1_0(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 1.0."""
    return _shufflenet_v2("shufflenet_v2_x1_0", pretrained, 1.0, **kwargs)


def shufflenet_v2_x1_5(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 1.5."""
    return _shufflenet_v2("shufflenet_v2_x1_5", pretrained, 1.5, **kwargs)


def shufflenet_v2_x2_0(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 2.0."""
    return _shufflenet_v2("shufflenet_v2_x2_0", pretrained, 2.0, **kwargs)


def shufflenet_v2_swish(pretrained=False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 at scale 1.0 with Swish activations."""
    return _shufflenet_v2("shufflenet_v2_swish", pretrained, 1.0, act="swish", **kwargs)
