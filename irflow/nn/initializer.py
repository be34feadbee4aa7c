"""Parameter initializers (Paddle's ``paddle.nn.initializer``).

An initializer fills a parameter when a Layer creates it: ``create_parameter`` asks
it for the initial NumPy array (`Initializer.array`), and calling it on an existing
parameter, ``Normal(0, 0.02)(layer.weight)``, overwrites that parameter's value.
Initial values are data, not computation, so they are built in NumPy directly. Each
call draws one fresh seed from irflow's global generator (`irflow.tensor.random`),
so ``paddle.seed(s)`` makes every initialization reproducible.

Most initializers draw from one distribution, which `distribution` names in the
terms of irflow's random functions (``("uniform", low, high)``); the NumPy draw is
made from that description, and so is the ``uniform`` or ``normal`` op by which a
static-graph startup program initializes a parameter (`irflow.static`).

Fans follow Paddle: a 2-D weight ``[in, out]`` (Linear's layout) has fan_in ``in``
and fan_out ``out``; a convolution filter ``[out, in, *kernel]`` has fan_in
``in * prod(kernel)`` and fan_out ``out * prod(kernel)``; a 1-D shape has both equal
to its length.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import dtypes
from ..tensor.random import host_seed


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for `nonlinearity`, as Paddle's (``param`` is leaky_relu's
    negative slope, default 0.01)."""
    slope = 0.01 if param is None else float(param)
    linear = ("sigmoid", "linear", "conv1d", "conv2d", "conv3d", "conv1d_transpose",
              "conv_transpose1d", "conv2d_transpose", "conv_transpose2d",
              "conv3d_transpose", "conv_transpose3d")
    gains = {**{name: 1.0 for name in linear}, "tanh": 5.0 / 3, "relu": math.sqrt(2.0),
             "leaky_relu": math.sqrt(2.0 / (1 + slope ** 2)), "selu": 3.0 / 4}
    if nonlinearity not in gains:
        raise ValueError(f"nonlinearity function {nonlinearity} is not supported now.")
    return gains[nonlinearity]


def compute_fans(shape) -> tuple[int, int]:
    """(fan_in, fan_out) of a parameter of `shape`, by Paddle's convention."""
    shape = list(shape)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


def _generator() -> np.random.Generator:
    return np.random.default_rng(host_seed())


class Initializer:
    """Base class: subclasses name their `distribution`, or implement
    `_sample(shape, rng)` (float64 values) when they draw from none."""

    def array(self, shape, dtype=dtypes.float32) -> np.ndarray:
        """A fresh initial value of `shape` and `dtype`."""
        shape = tuple(int(d) for d in shape)
        return np.asarray(self._sample(shape, _generator()), dtype=dtypes.dtype(dtype).np)

    def distribution(self, shape: tuple) -> tuple | None:
        """What the values of a parameter of `shape` are drawn from, as the irflow
        function that draws them and its arguments: ``("uniform", low, high)``,
        ``("normal", mean, std)`` or ``("full", value)``; None if it is none of those."""
        return None

    def _sample(self, shape: tuple, rng: np.random.Generator) -> np.ndarray:
        kind, *args = self.distribution(shape)
        if kind == "full":
            return np.full(shape, args[0], dtype=np.float64)
        return getattr(rng, kind)(*args, shape)  # Generator.uniform / Generator.normal

    def __call__(self, param, block=None):
        """Overwrite `param`'s value with a fresh initial value."""
        param.set_value(self.array(param.shape, param.dtype))
        return param

    def __repr__(self) -> str:
        fields = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Constant(Initializer):
    def __init__(self, value: float = 0.0):
        self.value = value

    def distribution(self, shape):
        return "full", self.value


class Assign(Initializer):
    """Initialize with a given array, list or Tensor of the parameter's shape."""

    def __init__(self, value, name=None):
        self.value = np.array(getattr(value, "_value", value), dtype=np.float64)

    def _sample(self, shape, rng):
        if self.value.shape != shape:
            raise ValueError(f"Assign: the value has shape {list(self.value.shape)} but the "
                             f"parameter has shape {list(shape)}")
        return self.value


class Normal(Initializer):
    def __init__(self, mean: float = 0.0, std: float = 1.0, name=None):
        self.mean, self.std = mean, std

    def distribution(self, shape):
        return "normal", self.mean, self.std


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, name=None):
        self.low, self.high = low, high

    def distribution(self, shape):
        return "uniform", self.low, self.high


class TruncatedNormal(Initializer):
    """Normal(mean, std) restricted to the absolute interval [a, b] (Paddle's
    meaning of `a` and `b`), by redrawing the values that fall outside."""

    _MAX_ROUNDS = 100

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                 name=None):
        if not a < b:
            raise ValueError(f"TruncatedNormal needs a < b, got a={a}, b={b}")
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def _sample(self, shape, rng):
        values = rng.normal(self.mean, self.std, shape)
        for _ in range(self._MAX_ROUNDS):
            outside = (values < self.a) | (values > self.b)
            if not outside.any():
                return values
            values[outside] = rng.normal(self.mean, self.std, int(outside.sum()))
        raise ValueError(f"TruncatedNormal(mean={self.mean}, std={self.std}) almost never "
                         f"falls in [{self.a}, {self.b}]; choose a <= mean <= b")


class XavierUniform(Initializer):
    """Uniform in ±gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, fan_in: float | None = None, fan_out: float | None = None,
                 gain: float = 1.0, name=None):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def _fans(self, shape) -> tuple[float, float]:
        fan_in, fan_out = compute_fans(shape)
        return (fan_in if self.fan_in is None else self.fan_in,
                fan_out if self.fan_out is None else self.fan_out)

    def distribution(self, shape):
        fan_in, fan_out = self._fans(shape)
        limit = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return "uniform", -limit, limit


class XavierNormal(XavierUniform):
    """Normal with std gain * sqrt(2 / (fan_in + fan_out))."""

    def distribution(self, shape):
        fan_in, fan_out = self._fans(shape)
        return "normal", 0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out))


class KaimingUniform(Initializer):
    """Uniform in ±gain * sqrt(3 / fan), gain from `nonlinearity` (He et al.)."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", mode: str = "fan_in", name=None):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError("The mode of KaimingNormal/KaimingUniform should be 'fan_in' or "
                             f"'fan_out', but received {mode}.")
        if mode == "fan_out" and fan_in is not None:
            raise ValueError("The mode of KaimingNormal/KaimingUniform is 'fan_out', but "
                             "fan_in is set. Please set fan_in to None.")
        self.fan_in, self.negative_slope = fan_in, negative_slope
        self.nonlinearity, self.mode = nonlinearity, mode

    def _fan_and_gain(self, shape) -> tuple[float, float]:
        fan_in, fan_out = compute_fans(shape)
        if self.mode == "fan_out":
            fan = fan_out
        else:
            fan = fan_in if self.fan_in is None else self.fan_in
        return float(fan), calculate_gain(self.nonlinearity, self.negative_slope)

    def distribution(self, shape):
        fan, gain = self._fan_and_gain(shape)
        limit = gain * math.sqrt(3.0 / fan)
        return "uniform", -limit, limit


class KaimingNormal(KaimingUniform):
    """Normal with std gain / sqrt(fan)."""

    def distribution(self, shape):
        fan, gain = self._fan_and_gain(shape)
        return "normal", 0.0, gain / math.sqrt(fan)


__all__ = ["Assign", "Constant", "Initializer", "KaimingNormal", "KaimingUniform", "Normal",
           "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform", "calculate_gain"]
