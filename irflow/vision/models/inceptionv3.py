"""Paddle's ``paddle.vision.models.InceptionV3``, with Paddle's sublayer and
state-dict names (each convolution a `ConvNormActivation` with BatchNorm and
ReLU)."""
from __future__ import annotations

from ... import nn
from ...tensor import concat, reshape
from ._utils import ConvNormActivation, no_pretrained

__all__ = ["InceptionV3", "inception_v3"]


def _conv(in_channels, out_channels, kernel_size, stride=1, padding=0):
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, activation_layer=nn.ReLU)


def _avg_pool():
    """3x3 average pooling at stride 1 counting the zero padding (exclusive=False)."""
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


class InceptionStem(nn.Layer):
    """Five convolutions and two max poolings: 299x299 to 35x35 with 192 channels."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_1a_3x3 = _conv(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _conv(32, 32, 3)
        self.conv_2b_3x3 = _conv(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _conv(64, 80, 1)
        self.conv_4a_3x3 = _conv(80, 192, 3)

    def forward(self, x):
        x = self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x)))
        x = self.conv_4a_3x3(self.conv_3b_1x1(self.max_pool(x)))
        return self.max_pool(x)


class InceptionA(nn.Layer):
    """1x1; 1x1 then 5x5; 1x1 then two 3x3; average pooling then 1x1 to
    `pool_features`: concatenated."""

    def __init__(self, num_channels, pool_features) -> None:
        super().__init__()
        self.branch1x1 = _conv(num_channels, 64, 1)
        self.branch5x5_1 = _conv(num_channels, 48, 1)
        self.branch5x5_2 = _conv(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _conv(num_channels, 64, 1)
        self.branch3x3dbl_2 = _conv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _conv(96, 96, 3, padding=1)
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _conv(num_channels, pool_features, 1)

    def forward(self, x):
        branch5x5 = self.branch5x5_2(self.branch5x5_1(x))
        branch3x3dbl = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        branch_pool = self.branch_pool_conv(self.branch_pool(x))
        return concat([self.branch1x1(x), branch5x5, branch3x3dbl, branch_pool], axis=1)


class InceptionB(nn.Layer):
    """The grid reduction to 17x17: a 3x3 at stride 2; 1x1, 3x3, then 3x3 at stride
    2; 3x3 max pooling at stride 2: concatenated."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch3x3 = _conv(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _conv(num_channels, 64, 1)
        self.branch3x3dbl_2 = _conv(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _conv(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        branch3x3dbl = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return concat([self.branch3x3(x), branch3x3dbl, self.branch_pool(x)], axis=1)


class InceptionC(nn.Layer):
    """1x1; factorized 7x7 (1x7, 7x1); twice factorized 7x7; average pooling then
    1x1: concatenated, 192 channels each."""

    def __init__(self, num_channels, channels_7x7) -> None:
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = _conv(num_channels, 192, 1)
        self.branch7x7_1 = _conv(num_channels, c7, 1)
        self.branch7x7_2 = _conv(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _conv(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _conv(num_channels, c7, 1)
        self.branch7x7dbl_2 = _conv(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _conv(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _conv(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _conv(c7, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _conv(num_channels, 192, 1)

    def forward(self, x):
        branch7x7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        dbl = self.branch7x7dbl_2(self.branch7x7dbl_1(x))
        dbl = self.branch7x7dbl_5(self.branch7x7dbl_4(self.branch7x7dbl_3(dbl)))
        branch_pool = self.branch_pool_conv(self.branch_pool(x))
        return concat([self.branch1x1(x), branch7x7, dbl, branch_pool], axis=1)


class InceptionD(nn.Layer):
    """The grid reduction to 8x8: 1x1 then 3x3 at stride 2; 1x1, 1x7, 7x1, then 3x3
    at stride 2; 3x3 max pooling at stride 2: concatenated."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch3x3_1 = _conv(num_channels, 192, 1)
        self.branch3x3_2 = _conv(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _conv(num_channels, 192, 1)
        self.branch7x7x3_2 = _conv(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _conv(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _conv(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        branch3x3 = self.branch3x3_2(self.branch3x3_1(x))
        branch7x7x3 = self.branch7x7x3_2(self.branch7x7x3_1(x))
        branch7x7x3 = self.branch7x7x3_4(self.branch7x7x3_3(branch7x7x3))
        return concat([branch3x3, branch7x7x3, self.branch_pool(x)], axis=1)


class InceptionE(nn.Layer):
    """1x1; 1x1 then (1x3 | 3x1); 1x1, 3x3 then (1x3 | 3x1); average pooling then
    1x1: concatenated (2048 channels)."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch1x1 = _conv(num_channels, 320, 1)
        self.branch3x3_1 = _conv(num_channels, 384, 1)
        self.branch3x3_2a = _conv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _conv(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _conv(num_channels, 448, 1)
        self.branch3x3dbl_2 = _conv(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _conv(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _conv(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _conv(num_channels, 192, 1)

    def forward(self, x):
        branch3x3 = self.branch3x3_1(x)
        branch3x3 = concat([self.branch3x3_2a(branch3x3), self.branch3x3_2b(branch3x3)],
                           axis=1)
        dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        dbl = concat([self.branch3x3dbl_3a(dbl), self.branch3x3dbl_3b(dbl)], axis=1)
        branch_pool = self.branch_pool_conv(self.branch_pool(x))
        return concat([self.branch1x1(x), branch3x3, dbl, branch_pool], axis=1)


class InceptionV3(nn.Layer):
    """``InceptionV3(num_classes=1000, with_pool=True)``: the stem, three
    InceptionA, InceptionB, four InceptionC, InceptionD and two InceptionE (the
    LayerList `inception_block_list`), then (`with_pool`) global average pooling
    and (`num_classes` > 0) Dropout(0.2) and the Linear `fc` on the 2048 features
    (which needs the pooling, or an 8x8 map of one pixel)."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        self.inception_stem = InceptionStem()
        blocks = [InceptionA(c, pool) for c, pool in ((192, 32), (256, 64), (288, 64))]
        blocks.append(InceptionB(288))
        blocks += [InceptionC(768, c7) for c7 in (128, 160, 160, 192)]
        blocks.append(InceptionD(768))
        blocks += [InceptionE(c) for c in (1280, 2048)]
        self.inception_block_list = nn.LayerList(blocks)
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(reshape(x, [-1, 2048])))
        return x


def inception_v3(pretrained=False, **kwargs) -> InceptionV3:
    """Inception v3."""
    no_pretrained("inception_v3", pretrained)
    return InceptionV3(**kwargs)
