"""Random tensors. One global NumPy generator, reseeded by `seed`, draws an explicit
seed for each random op, so the op itself stays a pure function of its seed (in
eager code and in compiled programs alike)."""
from __future__ import annotations

import copy

import numpy as np

from ..dispatch import apply, state
from ..errors import OutOfRangeError
from ..ir import dtypes
from .convert import cast, default_float_dtype, dims
from .manipulation import exact_shape, in_place, reshape
from .tensor import Tensor

_generator = np.random.default_rng()


def seed(s: int):
    """Reseed irflow's global random generator (Paddle's paddle.seed)."""
    global _generator
    _generator = np.random.default_rng(int(s))
    return _generator


def get_rng_state(device=None) -> list:
    """A copy of the global generator's state, as the one-element list of Paddle's
    ``paddle.get_rng_state`` (one generator: irflow draws on the host)."""
    return [copy.deepcopy(_generator.bit_generator.state)]


def set_rng_state(state_list, device=None) -> None:
    """Restore a state from `get_rng_state`: the draws after it repeat."""
    (state,) = state_list
    _generator.bit_generator.state = copy.deepcopy(state)


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
    if not (dtype.is_float or dtype is dtypes.bfloat16):
        raise TypeError(f"random floats need a float dtype (float16, bfloat16, float32 "
                        f"or float64), got {dtype.name}")
    return dtype


def draw(op: str, seed: Tensor, shape, dtype, **params) -> Tensor:
    """The `uniform` or `normal` op's draws in the float `dtype`. bfloat16, which the
    ops do not produce, is drawn in float32 and rounded (so, as in Paddle, a
    bfloat16 uniform draw can round up to `max`)."""
    dtype = _float_dtype(dtype)
    drawn_dtype = dtypes.float32 if dtype is dtypes.bfloat16 else dtype
    drawn = apply(op, (seed,), {"shape": tuple(shape), "dtype": drawn_dtype, **params})
    return drawn if drawn_dtype is dtype else cast(drawn, dtype)


def _op_seed(seed) -> Tensor:
    """The seed of one draw: Paddle's `seed` argument when it is not 0, which makes
    the draw the same every time, else a fresh one from the global generator."""
    if seed:
        return Tensor._from_array(np.asarray(int(seed), dtype=np.int64))
    return next_seed()


def normal(mean=0.0, std=1.0, shape=None, name=None) -> Tensor:
    """Normal draws of `mean` and `std`. As Paddle's: a tensor `mean` gives the
    result its shape and dtype (a tensor `std` is cast and reshaped to it), else a
    tensor `std` does, and `shape` (default [1]) counts only when both are numbers.
    With a tensor the draw is z * std + mean, z standard normal, so gradients reach
    mean (1) and std (z)."""
    if isinstance(mean, Tensor):
        if isinstance(std, Tensor):
            std = reshape(cast(std, mean.dtype), exact_shape(mean))
        like = mean
    elif isinstance(std, Tensor):
        like = std
    else:
        return draw("normal", next_seed(), dims(shape or [1]), None,
                     mean=float(mean), std=float(std))
    return draw("normal", next_seed(), exact_shape(like), like.dtype) * std + mean


def uniform_(x, min=0.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Fill the float tensor x in place with draws uniform in [min, max), as Paddle's
    ``Tensor.uniform_``; returns x. A nonzero `seed` makes the draws the same every
    time."""
    drawn = draw("uniform", _op_seed(seed), exact_shape(x), x.dtype,
                  min=float(min), max=float(max))
    return in_place(x, drawn, "uniform")


def normal_(x, mean=0.0, std=1.0, name=None) -> Tensor:
    """Fill the float tensor x in place with normal draws of `mean` and `std`, as
    Paddle's ``Tensor.normal_``; returns x."""
    drawn = draw("normal", next_seed(), exact_shape(x), x.dtype,
                  mean=float(mean), std=float(std))
    return in_place(x, drawn, "normal")


def randn(shape, dtype=None, name=None) -> Tensor:
    return draw("normal", next_seed(), dims(shape), dtype)


def standard_normal(shape, dtype=None, name=None) -> Tensor:
    return randn(shape, dtype)


def uniform(shape, dtype=None, min=0.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Draws uniform in [min, max), by default [0, 1) as Paddle 3's. A nonzero
    `seed` makes the draws the same every time (the global generator is untouched)."""
    return draw("uniform", _op_seed(seed), dims(shape), dtype, min=float(min),
                 max=float(max))


def rand(shape, dtype=None, name=None) -> Tensor:
    return uniform(shape, dtype, 0.0, 1.0)


_INDEX_DTYPES = (dtypes.int32, dtypes.int64)
_EXACT_FLOAT64_INTS = 2 ** 53


def randint(low=0, high=None, shape=(1,), dtype=None, name=None) -> Tensor:
    """Integers uniform in [low, high), or [0, low) when `high` is None, in int64
    (default) or int32, as Paddle's."""
    from .math import floor
    if high is None:
        if low <= 0:
            raise ValueError(f"randint: if high is None, low must be greater than 0, as "
                             f"in Paddle, got low={low}")
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low={low}, "
                         f"high={high}")
    if max(abs(low), abs(high), high - low) > _EXACT_FLOAT64_INTS:
        raise OutOfRangeError(f"randint: low, high and high - low must be at most 2**53 "
                              f"in size, which the float64 draws hold exactly, got "
                              f"low={low}, high={high}")
    dtype = dtypes.dtype(dtype or dtypes.int64)
    if dtype not in _INDEX_DTYPES:
        raise TypeError(f"randint: dtype must be int32 or int64, as in Paddle, got "
                        f"{dtype.name}")
    u = uniform(shape, dtypes.float64, float(low), float(high))
    return floor(u).astype(dtype)


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
