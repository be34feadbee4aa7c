"""Paddle's ``paddle.vision.models`` ResNets (also ResNeXt and Wide ResNet): the same
sublayers and state-dict names, so Paddle's weights load with ``set_state_dict``."""
from __future__ import annotations

from ... import nn
from ...tensor import flatten
from ._utils import no_pretrained

__all__ = ["BasicBlock", "BottleneckBlock", "ResNet", "resnet18", "resnet34", "resnet50",
           "resnet101", "resnet152", "resnext50_32x4d", "resnext50_64x4d",
           "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d",
           "resnext152_64x4d", "wide_resnet50_2", "wide_resnet101_2"]


class BasicBlock(nn.Layer):
    """Two 3x3 convolutions with BatchNorm and a residual connection (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                 base_width=64, dilation=1, norm_layer=None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride,
                               bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class BottleneckBlock(nn.Layer):
    """1x1, 3x3 (grouped) and 1x1 convolutions with BatchNorm and a residual
    connection (ResNet-50 and deeper); the inner width is ``planes * base_width / 64
    * groups``."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                 base_width=64, dilation=1, norm_layer=None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride,
                               groups=groups, dilation=dilation, bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


_LAYERS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
           152: [3, 8, 36, 3]}


class ResNet(nn.Layer):
    """``ResNet(block, depth=50, width=64, num_classes=1000, with_pool=True,
    groups=1)``: a 7x7 stem, four stages of `block`, then (`with_pool`) global
    average pooling and (`num_classes` > 0) the Linear `fc`."""

    def __init__(self, block, depth: int = 50, width: int = 64, num_classes: int = 1000,
                 with_pool: bool = True, groups: int = 1) -> None:
        super().__init__()
        layers = _LAYERS[depth]
        self.groups, self.base_width = groups, width
        self.num_classes, self.with_pool = num_classes, with_pool
        self._norm_layer = nn.BatchNorm2D
        self.inplanes, self.dilation = 64, 1
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias_attr=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride,
                          bias_attr=False),
                norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups,
                        self.base_width, previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def _resnet(arch, block, depth, pretrained, **kwargs) -> ResNet:
    no_pretrained(arch, pretrained)
    return ResNet(block, depth, **kwargs)


def resnet18(pretrained=False, **kwargs) -> ResNet:
    """ResNet-18 (BasicBlock)."""
    return _resnet("resnet18", BasicBlock, 18, pretrained, **kwargs)


def resnet34(pretrained=False, **kwargs) -> ResNet:
    """ResNet-34 (BasicBlock)."""
    return _resnet("resnet34", BasicBlock, 34, pretrained, **kwargs)


def resnet50(pretrained=False, **kwargs) -> ResNet:
    """ResNet-50 (BottleneckBlock)."""
    return _resnet("resnet50", BottleneckBlock, 50, pretrained, **kwargs)


def resnet101(pretrained=False, **kwargs) -> ResNet:
    """ResNet-101 (BottleneckBlock)."""
    return _resnet("resnet101", BottleneckBlock, 101, pretrained, **kwargs)


def resnet152(pretrained=False, **kwargs) -> ResNet:
    """ResNet-152 (BottleneckBlock)."""
    return _resnet("resnet152", BottleneckBlock, 152, pretrained, **kwargs)


def _resnext(arch, depth, groups, width, pretrained, **kwargs) -> ResNet:
    kwargs.update(groups=groups, width=width)
    return _resnet(arch, BottleneckBlock, depth, pretrained, **kwargs)


def resnext50_32x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-50, 32 groups of width 4."""
    return _resnext("resnext50_32x4d", 50, 32, 4, pretrained, **kwargs)


def resnext50_64x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-50, 64 groups of width 4."""
    return _resnext("resnext50_64x4d", 50, 64, 4, pretrained, **kwargs)


def resnext101_32x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-101, 32 groups of width 4."""
    return _resnext("resnext101_32x4d", 101, 32, 4, pretrained, **kwargs)


def resnext101_64x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-101, 64 groups of width 4."""
    return _resnext("resnext101_64x4d", 101, 64, 4, pretrained, **kwargs)


def resnext152_32x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-152, 32 groups of width 4."""
    return _resnext("resnext152_32x4d", 152, 32, 4, pretrained, **kwargs)


def resnext152_64x4d(pretrained=False, **kwargs) -> ResNet:
    """ResNeXt-152, 64 groups of width 4."""
    return _resnext("resnext152_64x4d", 152, 64, 4, pretrained, **kwargs)


def wide_resnet50_2(pretrained=False, **kwargs) -> ResNet:
    """Wide ResNet-50-2: bottlenecks twice as wide."""
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet50_2", BottleneckBlock, 50, pretrained, **kwargs)


def wide_resnet101_2(pretrained=False, **kwargs) -> ResNet:
    """Wide ResNet-101-2: bottlenecks twice as wide."""
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet101_2", BottleneckBlock, 101, pretrained, **kwargs)
