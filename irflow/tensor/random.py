"""Random tensors. One global NumPy generator, reseeded by `seed`, draws an explicit
seed for each random op, so the op itself stays a pure function of its seed (in
eager code and in compiled programs alike)."""
from __future__ import annotations

import numpy as np

from ..dispatch import apply, state
from ..ir import dtypes
from .convert import default_float_dtype, dims
from .manipulation import exact_shape, in_place
from .tensor import Tensor

_generator = np.random.default_rng()


def seed(s: int):
    """Reseed irflow's global random generator (Paddle's paddle.seed)."""
    global _generator
    _generator = np.random.default_rng(int(s))
    return _generator


def host_seed() -> int:
    """A fresh seed drawn now from irflow's global generator, never traced: for
    values that are data (initial parameter values) and for the seed argument each
    run of a program gets."""
    return int(_generator.integers(0, 2**62))


def next_seed() -> Tensor:
    """A fresh i64 seed for one random op (while tracing, the program's own)."""
    if state.tracer is not None:
        return state.tracer.next_seed()
    return Tensor._from_array(np.asarray(host_seed(), dtype=np.int64))


def _float_dtype(dtype):
    dtype = dtypes.dtype(dtype or default_float_dtype())
    if not dtype.is_float:
        raise TypeError(f"random floats need a float dtype, got {dtype.name}")
    return dtype


def normal(mean=0.0, std=1.0, shape=None, name=None) -> Tensor:
    return apply("normal", (next_seed(),), {"shape": dims(shape or [1]),
                                             "dtype": default_float_dtype(),
                                             "mean": float(mean), "std": float(std)})


def uniform_(x, min=0.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Fill the float tensor x in place with draws uniform in [min, max), as Paddle's
    ``Tensor.uniform_``; returns x. `seed` is accepted and ignored: `irflow.seed`
    governs every draw."""
    drawn = apply("uniform", (next_seed(),), {"shape": exact_shape(x),
                                               "dtype": _float_dtype(x.dtype),
                                               "min": float(min), "max": float(max)})
    return in_place(x, drawn, "uniform")


def normal_(x, mean=0.0, std=1.0, name=None) -> Tensor:
    """Fill the float tensor x in place with normal draws of `mean` and `std`, as
    Paddle's ``Tensor.normal_``; returns x."""
    drawn = apply("normal", (next_seed(),), {"shape": exact_shape(x),
                                              "dtype": _float_dtype(x.dtype),
                                              "mean": float(mean), "std": float(std)})
    return in_place(x, drawn, "normal")


def randn(shape, dtype=None, name=None) -> Tensor:
    return apply("normal", (next_seed(),), {"shape": dims(shape),
                                             "dtype": _float_dtype(dtype)})


def standard_normal(shape, dtype=None, name=None) -> Tensor:
    return randn(shape, dtype)


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    return apply("uniform", (next_seed(),), {"shape": dims(shape),
                                              "dtype": _float_dtype(dtype),
                                              "min": float(min), "max": float(max)})


def rand(shape, dtype=None, name=None) -> Tensor:
    return uniform(shape, dtype, 0.0, 1.0)


def randint(low=0, high=None, shape=(1,), dtype=None, name=None) -> Tensor:
    from .math import floor
    if high is None:
        low, high = 0, low
    u = uniform(shape, dtypes.float64, float(low), float(high))
    return floor(u).astype(dtype or dtypes.int64)


_PERMUTATION_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def randperm(n, dtype="int64", name=None) -> Tensor:
    """A random permutation of the integers from 0 to n - 1, in int32, int64
    (default), float32 or float64 (the dtypes of Paddle's kernel). It is the order
    that sorts n draws of the seeded `uniform` op, so `seed` governs it and it
    compiles like the other random ops; the draws are float64, so ties, which would
    keep their order, all but never happen."""
    from .search import argsort
    dtype = dtypes.dtype(dtype)
    if dtype not in _PERMUTATION_DTYPES:
        raise TypeError(f"randperm: dtype must be int32, int64, float32 or float64, as in "
                        f"Paddle, got {dtype.name}")
    if isinstance(n, bool) or not isinstance(n, int | Tensor):
        raise TypeError(f"randperm: n must be an int, got {type(n).__name__}")
    (size,) = dims(n)
    if isinstance(size, int) and size < 0:
        raise ValueError(f"randperm: n must be at least 0, got {size}")
    draws = apply("uniform", (next_seed(),), {"shape": (size,), "dtype": dtypes.float64,
                                               "min": 0.0, "max": 1.0})
    return argsort(draws).astype(dtype)
