"""Paddle's ``paddle.vision.models.SqueezeNet`` (versions 1.0 and 1.1), with Paddle's
state-dict names."""
from __future__ import annotations

from ... import nn
from ...nn import functional as F
from ...tensor import concat, squeeze
from ._utils import no_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


class MakeFireConv(nn.Layer):
    """A convolution (`_conv`) and ReLU."""

    def __init__(self, input_channels, output_channels, filter_size, padding=0) -> None:
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size,
                               padding=padding)

    def forward(self, x):
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """A Fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated on the
    channels."""

    def __init__(self, input_channels, squeeze_channels, expand1x1_channels,
                 expand3x3_channels) -> None:
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs):
        x = self._conv(inputs)
        return concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


# the Fire modules' (in, squeeze, expand 1x1, expand 3x3) channels after the stem
_FIRES = [(16, 64, 64), (16, 64, 64), (32, 128, 128), (32, 128, 128), (48, 192, 192),
          (48, 192, 192), (64, 256, 256), (64, 256, 256)]
# after which Fire modules (by index) a max pooling comes
_POOL_AFTER = {"1.0": (2, 6), "1.1": (1, 3)}


class SqueezeNet(nn.Layer):
    """``SqueezeNet(version, num_classes=1000, with_pool=True)``, version '1.0' or
    '1.1': a stem convolution (7x7 with 96 channels, or 3x3 with 64), eight Fire
    modules with max poolings between, then (`num_classes` > 0) Dropout(0.5,
    ``downscale_in_infer``) and a 1x1 convolution to the classes, and (`with_pool`)
    ReLU, global average pooling and a squeeze to [N, classes]."""

    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if version not in _POOL_AFTER:
            raise ValueError(f"SqueezeNet: supported versions are {list(_POOL_AFTER)} "
                             f"but input version is {version}")
        self.version, self.num_classes, self.with_pool = version, num_classes, with_pool
        if version == "1.0":
            self._conv = nn.Conv2D(3, 96, 7, stride=2)
        else:
            self._conv = nn.Conv2D(3, 64, 3, stride=2, padding=1)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        channels = self._conv.weight.shape[0]
        for i, (squeeze_c, e1, e3) in enumerate(_FIRES, start=1):
            setattr(self, f"_conv{i}", MakeFire(channels, squeeze_c, e1, e3))
            channels = e1 + e3
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        x = self._pool(F.relu(self._conv(inputs)))
        pool_after = _POOL_AFTER[self.version]
        for i in range(len(_FIRES)):
            x = getattr(self, f"_conv{i + 1}")(x)
            if i in pool_after:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = squeeze(self._avg_pool(F.relu(x)), axis=[2, 3])
        return x


def squeezenet1_0(pretrained=False, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.0."""
    no_pretrained("squeezenet1_0", pretrained)
    return SqueezeNet("1.0", **kwargs)


def squeezenet1_1(pretrained=False, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.1."""
    no_pretrained("squeezenet1_1", pretrained)
    return SqueezeNet("1.1", **kwargs)
