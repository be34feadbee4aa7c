"""Paddle's ``paddle.vision.models.AlexNet``, with Paddle's state-dict names and
initialization (uniform in +-1/sqrt(fan_in))."""
from __future__ import annotations

import math

from ... import nn
from ...nn.param_attr import ParamAttr
from ...nn import functional as F
from ...tensor import flatten
from ._utils import no_pretrained

__all__ = ["AlexNet", "alexnet"]


def _uniform(fan_in: int) -> ParamAttr:
    stdv = 1.0 / math.sqrt(fan_in)
    return ParamAttr(initializer=nn.initializer.Uniform(-stdv, stdv))


class ConvPoolLayer(nn.Layer):
    """A convolution (`_conv`), ReLU when ``act='relu'``, and a 3x3 stride-2 max
    pooling (`_pool`)."""

    def __init__(self, input_channels, output_channels, filter_size, stride, padding,
                 stdv, groups=1, act=None) -> None:
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        init = ParamAttr(initializer=nn.initializer.Uniform(-stdv, stdv))
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, stride=stride,
                               padding=padding, groups=groups, weight_attr=init,
                               bias_attr=ParamAttr(initializer=init.initializer))
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, x):
        x = self._conv(x)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    """``AlexNet(num_classes=1000)`` for 224x224 images: five convolutions, then (when
    `num_classes` > 0) three Linear layers, each of the first two after a Dropout of
    0.5 in ``downscale_in_infer`` mode (Paddle's: evaluation scales by 0.5, training
    does not rescale)."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, 1.0 / math.sqrt(3 * 11 * 11),
                                    act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, 1.0 / math.sqrt(64 * 5 * 5),
                                    act="relu")
        self._conv3 = nn.Conv2D(192, 384, 3, stride=1, padding=1,
                                weight_attr=_uniform(192 * 3 * 3),
                                bias_attr=_uniform(192 * 3 * 3))
        self._conv4 = nn.Conv2D(384, 256, 3, stride=1, padding=1,
                                weight_attr=_uniform(384 * 3 * 3),
                                bias_attr=_uniform(384 * 3 * 3))
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, 1.0 / math.sqrt(256 * 3 * 3),
                                    act="relu")
        if num_classes > 0:
            fan_in = 256 * 6 * 6
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(fan_in, 4096, weight_attr=_uniform(fan_in),
                                  bias_attr=_uniform(fan_in))
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, weight_attr=_uniform(fan_in),
                                  bias_attr=_uniform(fan_in))
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=_uniform(fan_in),
                                  bias_attr=_uniform(fan_in))

    def forward(self, inputs):
        x = self._conv2(self._conv1(inputs))
        x = F.relu(self._conv3(x))
        x = F.relu(self._conv4(x))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = F.relu(self._fc6(self._drop1(flatten(x, start_axis=1, stop_axis=-1))))
            x = F.relu(self._fc7(self._drop2(x)))
            x = self._fc8(x)
        return x


def alexnet(pretrained=False, **kwargs) -> AlexNet:
    """AlexNet."""
    no_pretrained("alexnet", pretrained)
    return AlexNet(**kwargs)
