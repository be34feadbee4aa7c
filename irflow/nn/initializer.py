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

from ..errors import ShapeError
from ..ir import dtypes
from ..ops.elementwise import _erfinv_kernel
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
        if low > high:
            raise ValueError(f"Uniform needs low <= high, as in Paddle, got low={low}, "
                             f"high={high}")
        self.low, self.high = low, high

    def distribution(self, shape):
        return "uniform", self.low, self.high


class TruncatedNormal(Initializer):
    """Normal(mean, std) restricted to the absolute interval [a, b] (Paddle's
    meaning of `a` and `b`), drawn as Paddle's by inverting the normal CDF on the
    interval's share of it, so an interval far from the mean (Normal(5, 1) in
    [-2, 2]) is as easy as a central one. The draws are clipped to [a, b] against
    rounding. An interval so far out (beyond about 8 std above the mean) that the
    float64 normal CDF is the same at both ends raises ValueError (Paddle fills it
    with one of the bounds)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                 name=None):
        if not a < b:
            raise ValueError(f"TruncatedNormal needs a < b, got a={a}, b={b}")
        if not std > 0:
            raise ValueError(f"TruncatedNormal needs std > 0, got {std}")
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def _sample(self, shape, rng):
        low, high = (self.a - self.mean) / self.std, (self.b - self.mean) / self.std
        cdf_low, cdf_high = _normal_cdf(low), _normal_cdf(high)
        if not cdf_low < cdf_high:
            raise ValueError(f"TruncatedNormal(mean={self.mean}, std={self.std}) almost "
                             f"never falls in [{self.a}, {self.b}]; choose bounds nearer "
                             f"the mean")
        u = rng.uniform(cdf_low, cdf_high, shape)
        z = math.sqrt(2.0) * _erfinv_kernel(np.asarray(2.0 * u - 1.0, dtype=np.float64))
        z = np.clip(z, low, high)
        return self.mean + self.std * z


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


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


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`, as Paddle's: the parameter, seen as
    rows = shape[0] by cols = the product of the rest, has orthonormal rows (when
    rows <= cols) or columns. It is the Q of the QR factorization of a standard
    normal [max, min] matrix, its columns' signs those of R's diagonal (which makes
    it uniform over orthogonal matrices), transposed when rows < cols."""

    def __init__(self, gain: float = 1.0, name=None):
        self.gain = gain

    def _sample(self, shape, rng):
        if len(shape) < 2:
            raise ShapeError(f"Orthogonal: only a parameter of 2 or more dims can be "
                             f"initialized, got shape {list(shape)}")
        rows, cols = shape[0], math.prod(shape[1:])
        q, r = np.linalg.qr(rng.normal(0.0, 1.0, (max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


class Dirac(Initializer):
    """The identity of a convolution, as Paddle's: in a filter [out, in, *kernel] (3-D
    to 5-D) of `groups` groups, the kernel's centre (index k // 2 of each spatial
    dim) is 1 for output channel g * out_per_group + i and input channel i, for
    i < min(out_per_group, in); everything else is 0."""

    def __init__(self, groups: int = 1, name=None):
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"Dirac: groups must be a positive int, got {groups!r}")
        self.groups = groups

    def _sample(self, shape, rng):
        if len(shape) not in (3, 4, 5):
            raise ShapeError(f"Dirac: only a parameter of 3, 4 or 5 dims can be "
                             f"initialized, got shape {list(shape)}")
        if shape[0] % self.groups:
            raise ShapeError(f"Dirac: the output channels ({shape[0]}) must be divisible "
                             f"by groups ({self.groups})")
        values = np.zeros(shape, dtype=np.float64)
        per_group = shape[0] // self.groups
        centre = tuple(k // 2 for k in shape[2:])
        for group in range(self.groups):
            for i in range(min(per_group, shape[1])):
                values[(group * per_group + i, i) + centre] = 1.0
        return values


class Bilinear(Initializer):
    """The bilinear-interpolation kernel, for a transposed convolution that upsamples:
    a filter [out, in, k, k] whose every k x k kernel is (1 - |x / f - c|) *
    (1 - |y / f - c|) at column x and row y, f = ceil(k / 2) and
    c = (2f - 1 - f mod 2) / (2f). Paddle 3.3.1 computes the row as (i / k) mod k
    with true division, which makes its kernel lopsided (and negative in a corner);
    this is the kernel its documentation describes, with the row index i // k."""

    def _sample(self, shape, rng):
        if len(shape) != 4 or shape[2] != shape[3]:
            raise ShapeError(f"Bilinear: the parameter must be [out, in, k, k], got shape "
                             f"{list(shape)}")
        size = shape[3]
        factor = math.ceil(size / 2.0)
        centre = (2 * factor - 1 - factor % 2) / (2.0 * factor)
        taps = 1.0 - np.abs(np.arange(size) / factor - centre)
        return np.broadcast_to(np.outer(taps, taps), shape).copy()


__all__ = ["Assign", "Bilinear", "Constant", "Dirac", "Initializer", "KaimingNormal",
           "KaimingUniform", "Normal", "Orthogonal", "TruncatedNormal", "Uniform",
           "XavierNormal", "XavierUniform", "calculate_gain"]
