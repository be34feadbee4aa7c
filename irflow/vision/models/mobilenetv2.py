"""Paddle's ``paddle.vision.models.MobileNetV2``, with Paddle's state-dict names."""
from __future__ import annotations

from ... import nn
from ...tensor import flatten
from ._utils import ConvNormActivation, _make_divisible, no_pretrained

__all__ = ["MobileNetV2", "mobilenet_v2"]


class InvertedResidual(nn.Layer):
    """A 1x1 expansion by `expand_ratio` (none for 1), a depthwise 3x3 convolution
    (both with BatchNorm and ReLU6) and a linear 1x1 projection with BatchNorm, as the
    Sequential `conv`; residual when the stride is 1 and the channels are kept."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2D) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"InvertedResidual: stride must be 1 or 2, got {stride}")
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden_dim, kernel_size=1,
                                             norm_layer=norm_layer,
                                             activation_layer=nn.ReLU6))
        layers += [ConvNormActivation(hidden_dim, hidden_dim, stride=stride,
                                      groups=hidden_dim, norm_layer=norm_layer,
                                      activation_layer=nn.ReLU6),
                   nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False),
                   norm_layer(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


# (expansion t, channels c, repeats n, first stride s), Paddle's table
_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
            [6, 160, 3, 2], [6, 320, 1, 1]]


class MobileNetV2(nn.Layer):
    """``MobileNetV2(scale=1.0, num_classes=1000, with_pool=True)``: the Sequential
    `features` (a strided 3x3 convolution, the inverted residual blocks, a 1x1
    convolution to 1280 * max(1, scale) channels), then (`with_pool`) global average
    pooling and (`num_classes` > 0) the `classifier`, Dropout(0.2) and Linear."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        norm_layer = nn.BatchNorm2D
        input_channel = _make_divisible(32 * scale, 8)
        self.last_channel = _make_divisible(1280 * max(1.0, scale), 8)
        features = [ConvNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.ReLU6)]
        for t, c, n, s in _SETTING:
            output_channel = _make_divisible(c * scale, 8)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel,
                                                 s if i == 0 else 1, expand_ratio=t,
                                                 norm_layer=norm_layer))
                input_channel = output_channel
        features.append(ConvNormActivation(input_channel, self.last_channel, kernel_size=1,
                                           norm_layer=norm_layer,
                                           activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2),
                                            nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def mobilenet_v2(pretrained=False, scale=1.0, **kwargs) -> MobileNetV2:
    """MobileNetV2 with channels scaled by `scale`."""
    no_pretrained("mobilenet_v2", pretrained)
    return MobileNetV2(scale=scale, **kwargs)
