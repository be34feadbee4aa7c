"""Paddle's ``paddle.vision.models.GoogLeNet``, with Paddle's sublayer and state-dict
names: its convolutions have neither bias nor BatchNorm, the ReLU follows each
Inception module's concatenation, and it returns the main output and the two
auxiliary classifiers' (the second without a ReLU after its first Linear, as
Paddle's)."""
from __future__ import annotations

from ... import nn
from ...nn import functional as F
from ...tensor import concat, flatten, squeeze
from ._utils import no_pretrained

__all__ = ["GoogLeNet", "googlenet"]


class ConvLayer(nn.Layer):
    """A convolution without bias, padded to keep the size at stride 1 (`_conv`)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1) -> None:
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups,
                               bias_attr=False)

    def forward(self, x):
        return self._conv(x)


class Inception(nn.Layer):
    """Four branches concatenated, then ReLU: a 1x1 convolution, 1x1 then 3x3, 1x1
    then 5x5, and 3x3 max pooling then a 1x1 projection."""

    def __init__(self, input_channels, output_channels, filter1, filter3R, filter3,
                 filter5R, filter5, proj) -> None:
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, x):
        branches = [self._conv1(x), self._conv3(self._conv3r(x)), self._conv5(self._conv5r(x)),
                    self._convprj(self._pool(x))]
        return F.relu(concat(branches, axis=1))


class GoogLeNet(nn.Layer):
    """``GoogLeNet(num_classes=1000, with_pool=True)``: returns (out, out1, out2), the
    main classifier's and the auxiliary ones' on Inception 4a and 4d. With
    `with_pool` the three are pooled (globally; 5x5 stride 3 for the auxiliaries,
    whose Linear layers expect the 3x3 map of a 224x224 input); with `num_classes`
    > 0 each is classified."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        self._ince3a = Inception(192, 192, 64, 96, 128, 16, 32, 32)
        self._ince3b = Inception(256, 256, 128, 128, 192, 32, 96, 64)
        self._ince4a = Inception(480, 480, 192, 96, 208, 16, 48, 64)
        self._ince4b = Inception(512, 512, 160, 112, 224, 24, 64, 64)
        self._ince4c = Inception(512, 512, 128, 128, 256, 24, 64, 64)
        self._ince4d = Inception(512, 512, 112, 144, 288, 32, 64, 64)
        self._ince4e = Inception(528, 528, 256, 160, 320, 32, 128, 128)
        self._ince5a = Inception(832, 832, 256, 160, 320, 32, 128, 128)
        self._ince5b = Inception(832, 832, 384, 192, 384, 48, 128, 128)
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes)
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024)
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes)
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024)
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes)

    def forward(self, x):
        x = self._pool(self._conv(x))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        ince4a = self._ince4a(x)
        ince4d = self._ince4d(self._ince4c(self._ince4b(ince4a)))
        x = self._pool(self._ince4e(ince4d))
        out, out1, out2 = self._ince5b(self._ince5a(x)), ince4a, ince4d
        if self.with_pool:
            out, out1, out2 = self._pool_5(out), self._pool_o1(out1), self._pool_o2(out2)
        if self.num_classes > 0:
            out = self._fc_out(squeeze(self._drop(out), axis=[2, 3]))
            out1 = self._fc_o1(flatten(self._conv_o1(out1), 1))
            out1 = self._out1(self._drop_o1(F.relu(out1)))
            out2 = self._fc_o2(flatten(self._conv_o2(out2), 1))
            out2 = self._out2(self._drop_o2(out2))
        return out, out1, out2


def googlenet(pretrained=False, **kwargs) -> GoogLeNet:
    """GoogLeNet (Inception v1)."""
    no_pretrained("googlenet", pretrained)
    return GoogLeNet(**kwargs)
