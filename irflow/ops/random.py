"""Random tensors: `uniform` and `normal`.

Programs stay pure: each op takes its seed as an i64 scalar operand, and the same seed
always gives the same values (`Effect.RANDOM`), so a program can be re-run, compared
and differentiated; whoever builds the program (the eager API, ``paddle.seed``)
supplies fresh seeds. The values come from NumPy's default generator,
``np.random.default_rng(seed)`` (PCG64 seeded through a SeedSequence), taking the seed's
64-bit two's complement pattern so negative seeds are valid. They are drawn in float64
and rounded to the result dtype, so a float32 result is the float64 one of the same
seed, rounded.

The result shape is an attribute and may hold symbolic dims (``("N", 16)``), which the
interpreter binds before calling the kernel. Neither op is differentiable.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import dtypes
from ..ir.registry import REQUIRED, Effect
from ..ir.types import TensorType, normalize_dim
from ._rules import defop

_U64_MASK = (1 << 64) - 1


def _number(attrs, key: str) -> float:
    value = attrs[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ShapeError(f"{key} must be a number, got {value!r}")
    return float(value)


def _shape_and_dtype(attrs) -> dict:
    shape = attrs["shape"]
    if not isinstance(shape, tuple):
        raise ShapeError(f"shape must be a list of dims, got {shape!r}")
    try:
        dtype = dtypes.dtype(attrs["dtype"])
    except TypeError as e:
        raise ShapeError(str(e)) from None
    return {"shape": tuple(normalize_dim(d) for d in shape), "dtype": dtype}


def _uniform_canon(attrs, types):
    low, high = _number(attrs, "min"), _number(attrs, "max")
    if not low < high:
        raise ShapeError(f"min must be less than max, got min={low} and max={high}")
    return {**_shape_and_dtype(attrs), "min": low, "max": high}


def _normal_canon(attrs, types):
    mean, std = _number(attrs, "mean"), _number(attrs, "std")
    if std < 0:
        raise ShapeError(f"std must be non-negative, got {std}")
    return {**_shape_and_dtype(attrs), "mean": mean, "std": std}


def _random_infer(types, attrs):
    (seed,) = types
    if seed.dtype is not dtypes.int64 or seed.rank != 0:
        raise ShapeError(f"the seed must be an i64 scalar, got {seed}")
    if not attrs["dtype"].is_float:
        raise ShapeError(f"dtype must be a float type, got {attrs['dtype'].name}")
    return TensorType(attrs["dtype"], attrs["shape"])


def _generator(seed: np.ndarray) -> np.random.Generator:
    return np.random.default_rng(int(seed) & _U64_MASK)


def _uniform(seed, shape, dtype, **bounds):
    """`min` and `max` arrive in `bounds` so as not to shadow the builtins."""
    return _generator(seed).uniform(bounds["min"], bounds["max"], shape).astype(dtype.np)


def _normal(seed, shape, dtype, mean, std):
    return _generator(seed).normal(mean, std, shape).astype(dtype.np)


_COMMON_DOC = (
    "Operand: the seed, an i64 scalar; the same seed gives the same values (NumPy's "
    "default_rng(seed), PCG64). Attributes: `shape` (required; dims may be symbolic), "
    "`dtype` (a float type, default float32). Result dtype[shape]. Not differentiable.")

defop("uniform", _random_infer, _uniform, arity=1,
      attrs={"shape": REQUIRED, "dtype": dtypes.float32, "min": -1.0, "max": 1.0},
      shape_attrs=("shape",), canonicalize=_uniform_canon, nondiff=True,
      effect=Effect.RANDOM,
      doc="uniform(seed): values uniformly distributed in [min, max) (rounding to "
          "float32 may reach max); `min` < `max`, defaults -1.0 and 1.0 (Paddle 2's; "
          "`paddle.uniform` passes Paddle 3's 0 and 1, and programs that leave them out "
          "keep these). " + _COMMON_DOC)
defop("normal", _random_infer, _normal, arity=1,
      attrs={"shape": REQUIRED, "dtype": dtypes.float32, "mean": 0.0, "std": 1.0},
      shape_attrs=("shape",), canonicalize=_normal_canon, nondiff=True,
      effect=Effect.RANDOM,
      doc="normal(seed): normally distributed values with `mean` (default 0.0) and "
          "standard deviation `std` (>= 0, default 1.0). " + _COMMON_DOC)
