"""Paddle's ``paddle.vision.models.MobileNetV1``, with Paddle's state-dict names."""
from __future__ import annotations

from ... import nn
from ...tensor import flatten
from ._utils import ConvNormActivation, no_pretrained

__all__ = ["MobileNetV1", "mobilenet_v1"]


class DepthwiseSeparable(nn.Layer):
    """A depthwise 3x3 convolution then a pointwise 1x1 one, each with BatchNorm and
    ReLU; the channel counts are scaled by `scale`."""

    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride,
                 scale) -> None:
        super().__init__()
        self._depthwise_conv = ConvNormActivation(
            in_channels, int(out_channels1 * scale), kernel_size=3, stride=stride,
            padding=1, groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(
            int(out_channels1 * scale), int(out_channels2 * scale), kernel_size=1,
            stride=1, padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


# (name, channels in, channels of the depthwise and pointwise convolutions, stride),
# unscaled, in Paddle's order
_BLOCKS = ([("conv2_1", 32, 32, 64, 1), ("conv2_2", 64, 64, 128, 2),
            ("conv3_1", 128, 128, 128, 1), ("conv3_2", 128, 128, 256, 2),
            ("conv4_1", 256, 256, 256, 1), ("conv4_2", 256, 256, 512, 2)]
           + [(f"conv5_{i}", 512, 512, 512, 1) for i in range(1, 6)]
           + [("conv5_6", 512, 512, 1024, 2), ("conv6", 1024, 1024, 1024, 1)])


class MobileNetV1(nn.Layer):
    """``MobileNetV1(scale=1.0, num_classes=1000, with_pool=True)``: a strided 3x3
    convolution, 13 depthwise-separable blocks (sublayers ``conv2_1`` ... ``conv6``),
    then (`with_pool`) global average pooling and (`num_classes` > 0) the Linear
    `fc`."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2,
                                        padding=1)
        self.dwsl = []
        for name, channels, out1, out2, stride in _BLOCKS:
            block = DepthwiseSeparable(int(channels * scale), out1, out2, channels, stride,
                                       scale)
            self.dwsl.append(self.add_sublayer(name, block))
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def mobilenet_v1(pretrained=False, scale=1.0, **kwargs) -> MobileNetV1:
    """MobileNetV1 with channels scaled by `scale`."""
    no_pretrained(f"mobilenet_v1(scale={scale})", pretrained)
    return MobileNetV1(scale=scale, **kwargs)
