"""Paddle's ``paddle.vision.models.DenseNet`` (121, 161, 169, 201 and 264 layers),
with Paddle's sublayer and state-dict names (its legacy ``BatchNorm`` with a fused
ReLU, so the keys end in ``_mean`` and ``_variance``)."""
from __future__ import annotations

from ... import nn
from ...tensor import concat, flatten
from ._utils import no_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "densenet264"]


class BNACConvLayer(nn.Layer):
    """BatchNorm with ReLU (`_batch_norm`), then a convolution without bias (`_conv`)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1,
                 act="relu") -> None:
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)

    def forward(self, x):
        return self._conv(self._batch_norm(x))


class ConvBNLayer(nn.Layer):
    """A convolution without bias (`_conv`), then BatchNorm with ReLU (`_batch_norm`)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1,
                 act="relu") -> None:
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class DenseLayer(nn.Layer):
    """A 1x1 bottleneck to ``bn_size * growth_rate`` channels and a 3x3 convolution to
    `growth_rate` (each after BatchNorm and ReLU), optionally dropped out, appended
    to the input's channels."""

    def __init__(self, num_channels, growth_rate, bn_size, dropout) -> None:
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, x):
        conv = self.bn_ac_func2(self.bn_ac_func1(x))
        if self.dropout:
            conv = self.dropout_func(conv)
        return concat([x, conv], axis=1)


class DenseBlock(nn.Layer):
    """`num_layers` DenseLayers, named ``{name}_1``, ``{name}_2``, ..."""

    def __init__(self, num_channels, num_layers, bn_size, growth_rate, dropout,
                 name=None) -> None:
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = []
        channels = num_channels
        for i in range(num_layers):
            self.dense_layer_func.append(self.add_sublayer(
                f"{name}_{i + 1}", DenseLayer(channels, growth_rate, bn_size, dropout)))
            channels += growth_rate

    def forward(self, x):
        for layer in self.dense_layer_func:
            x = layer(x)
        return x


class TransitionLayer(nn.Layer):
    """BatchNorm, ReLU and a 1x1 convolution to `num_output_features`, then 2x2
    average pooling."""

    def __init__(self, num_channels, num_output_features) -> None:
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, x):
        return self.pool2d_avg(self.conv_ac_func(x))


# layers: (initial features, growth rate, DenseLayers in each of the four blocks)
_SPECS = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]),
          169: (64, 32, [6, 12, 32, 32]), 201: (64, 32, [6, 12, 48, 32]),
          264: (64, 32, [6, 12, 64, 48])}


class DenseNet(nn.Layer):
    """``DenseNet(layers=121, bn_size=4, dropout=0.0, num_classes=1000,
    with_pool=True)``: a 7x7 stem and max pooling, four dense blocks with
    transitions halving the channels between them, BatchNorm and ReLU, then
    (`with_pool`) global average pooling and (`num_classes` > 0) the Linear `out`.
    Paddle fails without `with_pool` (its forward reads an unset variable); irflow
    then returns the features (or, with classes, classifies their flattening)."""

    def __init__(self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0,
                 num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if layers not in _SPECS:
            raise ValueError(f"DenseNet: supported layers are {list(_SPECS)} but input "
                             f"layer is {layers}")
        self.num_classes, self.with_pool = num_classes, with_pool
        num_features, growth_rate, block_config = _SPECS[layers]
        self.conv1_func = ConvBNLayer(3, num_features, 7, stride=2, pad=3)
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block_config = block_config
        self.dense_block_func_list, self.transition_func_list = [], []
        for i, num_layers in enumerate(block_config):
            self.dense_block_func_list.append(self.add_sublayer(
                f"db_conv_{i + 2}",
                DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout,
                           name=f"conv{i + 2}")))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.transition_func_list.append(self.add_sublayer(
                    f"tr_conv{i + 2}_blk", TransitionLayer(num_features, num_features // 2)))
                num_features //= 2
        self.batch_norm = nn.BatchNorm(num_features, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.out = nn.Linear(num_features, num_classes)

    def forward(self, x):
        x = self.pool2d_max(self.conv1_func(x))
        for i, block in enumerate(self.dense_block_func_list):
            x = block(x)
            if i < len(self.transition_func_list):
                x = self.transition_func_list[i](x)
        x = self.batch_norm(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.out(flatten(x, 1))
        return x


def _densenet(arch, layers, pretrained, **kwargs) -> DenseNet:
    no_pretrained(arch, pretrained)
    return DenseNet(layers=layers, **kwargs)


def densenet121(pretrained=False, **kwargs) -> DenseNet:
    """DenseNet-121."""
    return _densenet("densenet121", 121, pretrained, **kwargs)


def densenet161(pretrained=False, **kwargs) -> DenseNet:
    """DenseNet-161."""
    return _densenet("densenet161", 161, pretrained, **kwargs)


def densenet169(pretrained=False, **kwargs) -> DenseNet:
    """DenseNet-169."""
    return _densenet("densenet169", 169, pretrained, **kwargs)


def densenet201(pretrained=False, **kwargs) -> DenseNet:
    """DenseNet-201."""
    return _densenet("densenet201", 201, pretrained, **kwargs)


def densenet264(pretrained=False, **kwargs) -> DenseNet:
    """DenseNet-264."""
    return _densenet("densenet264", 264, pretrained, **kwargs)
