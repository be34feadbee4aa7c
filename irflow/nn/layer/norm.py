"""BatchNorm1D, BatchNorm2D, BatchNorm3D, SyncBatchNorm, the fluid-style BatchNorm,
LayerNorm, GroupNorm, and InstanceNorm1D, InstanceNorm2D and InstanceNorm3D."""
from __future__ import annotations

import math

from ...ir import dtypes
from .. import functional as F
from ..initializer import Constant
from ..param_attr import ParamAttr
from .layers import Layer


def _add_batch_norm_parameters(layer: Layer, num_features: int, weight_attr, bias_attr,
                               mean_name: str | None, variance_name: str | None) -> None:
    """Give `layer` Paddle's batch norm parameters, in Paddle's order so that its state
    dicts load: `weight` (ones), `bias` (zeros), and the running statistics `_mean`
    (zeros) and `_variance` (ones), non-trainable Parameters named `mean_name` and
    `variance_name` when given."""
    shape = [num_features]
    layer.weight = layer.create_parameter(shape, weight_attr,
                                          default_initializer=Constant(1.0))
    layer.bias = layer.create_parameter(shape, bias_attr, is_bias=True)
    layer._mean = _running_stat(layer, shape, mean_name, 0.0)
    layer._variance = _running_stat(layer, shape, variance_name, 1.0)


def _running_stat(layer: Layer, shape, name: str | None, value: float):
    stat = layer.create_parameter(shape, ParamAttr(name=name, initializer=Constant(value),
                                                   trainable=False))
    stat.stop_gradient = True
    return stat


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
        _add_batch_norm_parameters(self, num_features, weight_attr, bias_attr,
                                   name and f"{name}_mean", name and f"{name}_variance")

    def forward(self, input):  # noqa: A002  (Paddle's name)
        if input.ndim not in self._ranks:
            raise ValueError(f"{type(self).__name__} expects an input of rank "
                             f"{' or '.join(map(str, self._ranks))}, got shape {input.shape}")
        return F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
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


class BatchNorm3D(_BatchNormBase):
    """Batch normalization of [N, C, D, H, W] inputs (or [N, D, H, W, C] with
    "NDHWC")."""

    _default_format = "NCDHW"
    _ranks = (5,)


class SyncBatchNorm(_BatchNormBase):
    """Batch normalization whose statistics, in Paddle, are those of the batch across
    all the devices; irflow runs on one, so it computes `BatchNorm2D`'s (of any rank
    from 2 to 5, the channels at axis 1, or last for "NHWC"-style formats)."""

    _ranks = (2, 3, 4, 5)

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         None, name)

    @classmethod
    def convert_sync_batchnorm(cls, layer: Layer) -> Layer:
        """`layer` with each BatchNorm1D/2D/3D in it (itself included) replaced by a
        SyncBatchNorm of the same settings that shares its parameters and running
        statistics, as Paddle's: the layers holding them are changed in place."""
        converted = layer
        if isinstance(layer, _BatchNormBase):
            converted = cls(layer._num_features, layer._momentum, layer._epsilon,
                            None if layer.weight is not None else False,
                            None if layer.bias is not None else False,
                            layer._data_format, layer._name)
            converted.weight, converted.bias = layer.weight, layer.bias
            converted._mean, converted._variance = layer._mean, layer._variance
        for name, sublayer in layer.named_children():
            converted.add_sublayer(name, cls.convert_sync_batchnorm(sublayer))
        return converted


# Paddle's legacy activation ops that `BatchNorm(act=...)` may name, as irflow's
# functional names: those whose defaults equal the functional form's (Paddle 3.3.1's
# legacy ``hard_sigmoid`` has another slope, its ``leaky_relu`` and ``softplus`` fail).
_LEGACY_ACTIVATIONS = {
    "relu": "relu", "relu6": "relu6", "sigmoid": "sigmoid", "tanh": "tanh", "gelu": "gelu",
    "softmax": "softmax", "elu": "elu", "selu": "selu", "celu": "celu", "silu": "silu",
    "swish": "swish", "mish": "mish", "softsign": "softsign", "hard_swish": "hardswish",
    "tanh_shrink": "tanhshrink", "logsigmoid": "log_sigmoid"}


def _legacy_activation(act: str | None):
    """The functional form of the activation Paddle's fluid-style layers name by `act`
    (None: none)."""
    if act is None:
        return None
    if act not in _LEGACY_ACTIVATIONS:
        raise ValueError(f"BatchNorm: act={act!r} is not an activation irflow knows; "
                         f"expected None or one of {sorted(_LEGACY_ACTIVATIONS)}")
    return getattr(F, _LEGACY_ACTIVATIONS[act])


def _layer_dtype(dtype) -> str | None:
    """The name of a layer's `dtype` argument (a name or a DType), None for none."""
    return None if dtype is None else dtypes.dtype(dtype).name


def _parameter_dtype(dtype) -> str:
    """The dtype of BatchNorm's parameters for the `dtype` given: float32 for float16,
    as Paddle (statistics in half precision lose too much)."""
    dtype = dtypes.dtype(dtype)
    return dtypes.float32.name if dtype == dtypes.float16 else dtype.name


class BatchNorm(Layer):
    """Paddle's fluid-style batch normalization over the channels of a 2-D to 5-D
    input (`data_layout` "NCHW": axis 1, or "NHWC": the last axis), followed by the
    activation named by `act` ("relu", "sigmoid", ...; None for none).

    The parameters are `BatchNorm2D`'s (`weight`, `bias`, `_mean`, `_variance`), so
    Paddle checkpoints load. `is_test=True` starts the layer in eval mode (``train()``
    leaves it). Training normalizes by the batch's statistics and updates the running
    ones, eval mode uses the running ones, except with `trainable_statistics`, which
    keeps the training behaviour in eval mode; `use_global_stats` uses the running
    statistics always. `in_place` and `do_model_average_for_mean_and_var` are
    accepted for Paddle's signature and change nothing: irflow has no in-place
    memory reuse nor model averaging. A float16 `dtype` keeps float32 parameters,
    as Paddle."""

    def __init__(self, num_channels: int, act: str | None = None, is_test: bool = False,
                 momentum: float = 0.9, epsilon: float = 1e-05, param_attr=None,
                 bias_attr=None, dtype="float32", data_layout: str = "NCHW",
                 in_place: bool = False, moving_mean_name: str | None = None,
                 moving_variance_name: str | None = None,
                 do_model_average_for_mean_and_var: bool = True,
                 use_global_stats: bool = False, trainable_statistics: bool = False):
        super().__init__(dtype=_parameter_dtype(dtype))
        if data_layout not in ("NCHW", "NHWC"):
            raise ValueError(f"BatchNorm: data_layout must be 'NCHW' or 'NHWC', got "
                             f"{data_layout!r}")
        self._num_channels, self._act = num_channels, act
        self._activation = _legacy_activation(act)
        self._momentum, self._epsilon, self._data_layout = momentum, epsilon, data_layout
        self._use_global_stats = use_global_stats
        self._trainable_statistics = trainable_statistics
        _add_batch_norm_parameters(self, num_channels, param_attr, bias_attr,
                                   moving_mean_name, moving_variance_name)
        self.training = not is_test

    def forward(self, input):  # noqa: A002  (Paddle's name)
        if input.ndim not in (2, 3, 4, 5):
            raise ValueError(f"BatchNorm expects an input of rank 2 to 5, got shape "
                             f"{input.shape}")
        use_batch = (self.training or self._trainable_statistics) \
            and not self._use_global_stats
        y = F.batch_norm(input, self._mean, self._variance, self.weight, self.bias,
                         use_batch, self._momentum, self._epsilon, self._data_layout,
                         not use_batch)
        return y if self._activation is None else self._activation(y)

    def extra_repr(self) -> str:
        text = (f"num_channels={self._num_channels}, momentum={self._momentum}, "
                f"epsilon={self._epsilon}")
        if self._act is not None:
            text += f", act={self._act}"
        if self._data_layout != "NCHW":
            text += f", data_layout={self._data_layout}"
        return text


class LayerNorm(Layer):
    """Normalization over the trailing `normalized_shape` dims, with a learnable weight
    (ones) and bias (zeros) of as many elements, flat as Paddle's (``LayerNorm([5,
    6])`` holds weights of [30]: a Paddle checkpoint's state dict loads), of `dtype`
    if given (else the default dtype); `device` is accepted for Paddle's signature."""

    def __init__(self, normalized_shape, epsilon: float = 1e-05, *,
                 elementwise_affine: bool = True, bias: bool = True, device=None, dtype=None,
                 weight_attr=None, bias_attr=None, name=None):
        super().__init__(dtype=_layer_dtype(dtype))
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

    def forward(self, input):  # noqa: A002  (Paddle's name)
        return F.layer_norm(input, self._normalized_shape, self.weight, self.bias, self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Normalization over groups of channels, with a per-channel `weight` (ones)
    and `bias` (zeros), of `dtype` if given (else the default dtype)."""

    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-05, *,
                 affine: bool = True, device=None, dtype=None, weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__(dtype=_layer_dtype(dtype))
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self._num_groups, self._num_channels = num_groups, num_channels
        self._epsilon, self._data_format = epsilon, data_format
        self.weight = self.create_parameter([num_channels], weight_attr if affine else False,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_channels], bias_attr if affine else False,
                                          is_bias=True)

    def forward(self, input):  # noqa: A002  (Paddle's name)
        return F.group_norm(input, self._num_groups, self._epsilon, self.weight, self.bias,
                            self._data_format)

    def extra_repr(self) -> str:
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class LocalResponseNorm(Layer):
    """`F.local_response_norm` as a layer (no parameters)."""

    def __init__(self, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k
        self.data_format = data_format

    def forward(self, input):  # noqa: A002  (Paddle's name)
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k,
                                     self.data_format)

    def extra_repr(self) -> str:
        return (f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}, "
                f"data_format={self.data_format}")


class _InstanceNormBase(Layer):
    """Per-sample, per-channel normalization over the spatial dims, with a
    per-channel `scale` (ones) and `bias` (zeros), Paddle's names; ``weight_attr=False``
    and ``bias_attr=False`` (only together, as Paddle requires) leave both out."""

    _ranks: tuple = ()

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__()
        if (weight_attr is False or bias_attr is False) and weight_attr is not bias_attr:
            raise ValueError(f"{type(self).__name__}: weight_attr and bias_attr must be set "
                             f"to False at the same time")
        self._num_features, self._epsilon = num_features, epsilon
        self._momentum, self._data_format = momentum, data_format
        self.scale = self.create_parameter([num_features], weight_attr,
                                           default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_features], bias_attr, is_bias=True)

    def forward(self, input):  # noqa: A002  (Paddle's name)
        if input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}-D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__} expects a {ranks} input, got shape "
                             f"{input.shape}")
        return F.instance_norm(input, weight=self.scale, bias=self.bias, eps=self._epsilon)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance norm of [N, C, L] inputs over L ([N, C] inputs too, as Paddle accepts:
    each value is its own instance, so the result is the bias)."""

    _ranks = (2, 3)

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCL", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class InstanceNorm2D(_InstanceNormBase):
    """Instance norm of [N, C, H, W] inputs over H and W."""

    _ranks = (4,)


class InstanceNorm3D(_InstanceNormBase):
    """Instance norm of [N, C, D, H, W] inputs over D, H and W."""

    _ranks = (5,)

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCDHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)
