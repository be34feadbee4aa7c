"""Activation layers: each calls its `irflow.nn.functional` counterpart."""
from __future__ import annotations

from .. import functional as F
from ..initializer import Constant
from .layers import Layer


class ReLU(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class Sigmoid(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.tanh(x)


class SiLU(Layer):
    def __init__(self, inplace: bool = False, name=None):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


class GELU(Layer):
    """GELU with the exact erf form, or the tanh approximation (``approximate=True``)."""

    def __init__(self, approximate=False, name=None):
        super().__init__()
        self._approximate = approximate

    def forward(self, x):
        return F.gelu(x, self._approximate)

    def extra_repr(self) -> str:
        return f"approximate={self._approximate}"


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self._negative_slope}"


class RReLU(Layer):
    """`F.rrelu`: a random negative slope while training, the mean slope in eval."""

    def __init__(self, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, name=None):
        super().__init__()
        self._lower, self._upper = lower, upper

    def forward(self, x):
        return F.rrelu(x, self._lower, self._upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self._lower}, upper={self._upper}"


class Softmax(Layer):
    def __init__(self, axis: int = -1, name=None):
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self._axis)


class _WithOptions(Layer):
    """An activation whose keyword options (`_options`: name -> default, in Paddle's
    order) are stored and passed to its functional form `_function`."""

    _options: dict = {}

    def __init__(self, *args, name=None, **kwargs):
        super().__init__()
        options = dict(self._options)
        options.update(zip(self._options, args))
        options.update(kwargs)
        self._values = options

    def forward(self, x):
        return getattr(F, self._function)(x, **self._values)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._values.items())


class Softplus(_WithOptions):
    _function, _options = "softplus", {"beta": 1, "threshold": 20}


class ReLU6(_WithOptions):
    _function = "relu6"


class Hardtanh(_WithOptions):
    _function, _options = "hardtanh", {"min": -1.0, "max": 1.0}


class LogSigmoid(_WithOptions):
    _function = "log_sigmoid"


class PReLU(Layer):
    """`F.prelu` with a learned slope per channel (`num_parameters` = C) or one for
    all (1), starting at `init`. The parameter is `_weight`, Paddle's name, so state
    dicts load across."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, weight_attr=None,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self._num_parameters, self._init = num_parameters, init
        self._data_format, self._name = data_format, name
        self._weight = self.create_parameter([num_parameters], weight_attr,
                                             default_initializer=Constant(init))

    def forward(self, x):
        return F.prelu(x, self._weight, self._data_format)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return (f"num_parameters={self._num_parameters}, data_format={self._data_format}, "
                f"init={self._init}, dtype={self._dtype}{name}")


class Hardswish(_WithOptions):
    _function = "hardswish"


class Hardsigmoid(_WithOptions):
    _function, _options = "hardsigmoid", {"slope": 0.1666667, "offset": 0.5}


class Mish(_WithOptions):
    _function = "mish"


class ELU(_WithOptions):
    _function, _options = "elu", {"alpha": 1.0}


class SELU(_WithOptions):
    _function, _options = "selu", {"scale": 1.0507009873554804934193349852946,
                                   "alpha": 1.6732632423543772848170429916717}


class GLU(_WithOptions):
    _function, _options = "glu", {"axis": -1}


class CELU(_WithOptions):
    _function, _options = "celu", {"alpha": 1.0}


class Softshrink(_WithOptions):
    _function, _options = "softshrink", {"threshold": 0.5}


class Hardshrink(_WithOptions):
    _function, _options = "hardshrink", {"threshold": 0.5}


class Tanhshrink(_WithOptions):
    _function = "tanhshrink"


class ThresholdedReLU(_WithOptions):
    _function, _options = "thresholded_relu", {"threshold": 1.0, "value": 0.0}


class Softsign(_WithOptions):
    _function = "softsign"


class Swish(_WithOptions):
    """x * sigmoid(x): `SiLU` under Paddle's other name, which takes no options."""
    _function = "swish"


class Maxout(Layer):
    """`F.maxout`: the maximum over each run of `groups` channels."""

    def __init__(self, groups: int, axis: int = 1, name=None):
        super().__init__()
        self._groups, self._axis, self._name = groups, axis, name

    def forward(self, x):
        return F.maxout(x, self._groups, self._axis)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return f"groups={self._groups}, axis={self._axis}{name}"


class Softmax2D(Layer):
    """Softmax over the channels (axis -3) of a 3-D [C, H, W] or 4-D [N, C, H, W]
    input."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2D requires a 3-D or 4-D input, got shape {x.shape}")
        return F.softmax(x, -3)
