"""BatchNorm1D, BatchNorm2D, LayerNorm, GroupNorm and InstanceNorm2D."""
from __future__ import annotations

import math

from .. import functional as F
from ..initializer import Constant
from ..param_attr import ParamAttr
from .layers import Layer


class _BatchNormBase(Layer):
    """Per-channel normalization with learnable `weight` (ones) and `bias` (zeros) and
    running statistics `_mean` (zeros) and `_variance` (ones).

    As in Paddle, the running statistics are non-trainable Parameters
    (``stop_gradient=True``, ``trainable=False``): they are listed by
    `parameters()`, saved by `state_dict()` after weight and bias, and counted by
    `irflow.summary` as non-trainable. Training mode normalizes by the batch's
    statistics and updates the running ones; eval mode uses the running ones."""

    _default_format = "NCHW"
    _ranks = (4,)

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05,
                 weight_attr=None, bias_attr=None, data_format: str | None = None,
                 use_global_stats=None, name=None):
        super().__init__()
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._data_format = data_format or self._default_format
        self._use_global_stats, self._name = use_global_stats, name
        shape = [num_features]
        self.weight = self.create_parameter(shape, weight_attr,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter(shape, bias_attr, is_bias=True)
        self._mean = self._running_stat(shape, name and f"{name}_mean", 0.0)
        self._variance = self._running_stat(shape, name and f"{name}_variance", 1.0)

    def _running_stat(self, shape, name, value: float):
        stat = self.create_parameter(shape, ParamAttr(name=name, initializer=Constant(value),
                                                      trainable=False))
        stat.stop_gradient = True
        return stat

    def forward(self, x):
        if x.ndim not in self._ranks:
            raise ValueError(f"{type(self).__name__} expects an input of rank "
                             f"{' or '.join(map(str, self._ranks))}, got shape {x.shape}")
        return F.batch_norm(x, self._mean, self._variance, self.weight, self.bias,
                            self.training, self._momentum, self._epsilon, self._data_format,
                            self._use_global_stats)

    def extra_repr(self) -> str:
        text = (f"num_features={self._num_features}, momentum={self._momentum}, "
                f"epsilon={self._epsilon}")
        if self._data_format != "NCHW":
            text += f", data_format={self._data_format}"
        return text + (f", name={self._name}" if self._name is not None else "")


class BatchNorm1D(_BatchNormBase):
    """Batch normalization of [N, C] or [N, C, L] inputs (data_format "NC"/"NCL", or
    "NLC" for channels last)."""

    _default_format = "NCL"
    _ranks = (2, 3)


class BatchNorm2D(_BatchNormBase):
    """Batch normalization of [N, C, H, W] inputs (or [N, H, W, C] with "NHWC")."""


class LayerNorm(Layer):
    """Normalization over the trailing `normalized_shape` dims, with a learnable weight
    (ones) and bias (zeros) of as many elements, flat as Paddle's (``LayerNorm([5,
    6])`` holds weights of [30]: a Paddle checkpoint's state dict loads)."""

    def __init__(self, normalized_shape, epsilon: float = 1e-05, *,
                 elementwise_affine: bool = True, bias: bool = True, weight_attr=None,
                 bias_attr=None, name=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self._normalized_shape = list(normalized_shape)
        self._epsilon = epsilon
        affine = elementwise_affine and weight_attr is not False
        flat = [math.prod(self._normalized_shape)]
        self.weight = self.create_parameter(flat, weight_attr if affine else False,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter(flat,
                                          bias_attr if elementwise_affine and bias else False,
                                          is_bias=True)

    def forward(self, x):
        return F.layer_norm(x, self._normalized_shape, self.weight, self.bias, self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Normalization over groups of channels, with a per-channel `weight` (ones)
    and `bias` (zeros)."""

    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-05, *,
                 affine: bool = True, device=None, dtype=None, weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self._num_groups, self._num_channels = num_groups, num_channels
        self._epsilon, self._data_format = epsilon, data_format
        self.weight = self.create_parameter([num_channels], weight_attr if affine else False,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_channels], bias_attr if affine else False,
                                          is_bias=True)

    def forward(self, x):
        return F.group_norm(x, self._num_groups, self._epsilon, self.weight, self.bias,
                            self._data_format)

    def extra_repr(self) -> str:
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class InstanceNorm2D(Layer):
    """Per-sample, per-channel normalization of [N, C, H, W] inputs over H and W,
    with a per-channel `scale` (ones) and `bias` (zeros), Paddle's names."""

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__()
        self._num_features, self._epsilon = num_features, epsilon
        self.scale = self.create_parameter([num_features], weight_attr,
                                           default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_features], bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002  (Paddle's name)
        if input.ndim != 4:
            raise ValueError(f"InstanceNorm2D expects a 4-D input, got shape {input.shape}")
        return F.instance_norm(input, weight=self.scale, bias=self.bias, eps=self._epsilon)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"
