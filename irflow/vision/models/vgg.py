"""Paddle's ``paddle.vision.models`` VGGs, with Paddle's state-dict names."""
from __future__ import annotations

from ... import nn
from ...tensor import flatten
from ._utils import no_pretrained

__all__ = ["VGG", "make_layers", "vgg11", "vgg13", "vgg16", "vgg19"]


class VGG(nn.Layer):
    """``VGG(features, num_classes=1000, with_pool=True)``: the convolutional
    `features`, then (`with_pool`) adaptive average pooling to 7x7 and (`num_classes`
    > 0) the `classifier`: three Linear layers with ReLU and Dropout(0.5) between."""

    def __init__(self, features, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.features = features
        self.num_classes, self.with_pool = num_classes, with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(flatten(x, 1))
        return x


def make_layers(cfg, batch_norm: bool = False) -> nn.Sequential:
    """The VGG features of `cfg`: a number is a 3x3 convolution to that many channels
    (with BatchNorm when `batch_norm`) and ReLU, ``'M'`` a 2x2 max pooling."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(v))
        layers.append(nn.ReLU())
        in_channels = v
    return nn.Sequential(*layers)


_CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512,
          512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}


def _vgg(arch, cfg, batch_norm, pretrained, **kwargs) -> VGG:
    no_pretrained(arch + ("_bn" if batch_norm else ""), pretrained)
    return VGG(make_layers(_CFGS[cfg], batch_norm=batch_norm), **kwargs)


def vgg11(pretrained=False, batch_norm=False, **kwargs) -> VGG:
    """VGG-11 (configuration A)."""
    return _vgg("vgg11", "A", batch_norm, pretrained, **kwargs)


def vgg13(pretrained=False, batch_norm=False, **kwargs) -> VGG:
    """VGG-13 (configuration B)."""
    return _vgg("vgg13", "B", batch_norm, pretrained, **kwargs)


def vgg16(pretrained=False, batch_norm=False, **kwargs) -> VGG:
    """VGG-16 (configuration D)."""
    return _vgg("vgg16", "D", batch_norm, pretrained, **kwargs)


def vgg19(pretrained=False, batch_norm=False, **kwargs) -> VGG:
    """VGG-19 (configuration E)."""
    return _vgg("vgg19", "E", batch_norm, pretrained, **kwargs)
