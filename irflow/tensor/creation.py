"""Creating tensors: from data, filled, ranges, and the `*_like` forms."""
from __future__ import annotations

import numpy as np

from ..dispatch import apply
from ..ir import dtypes
from ..ir.types import dim_sub, is_symbol
from .convert import as_tensor, dims, to_array, traced_dim
from .manipulation import exact_shape
from .tensor import Tensor


def to_tensor(data, dtype=None, place=None, stop_gradient=True) -> Tensor:
    """A new Tensor holding a copy of `data` (Python floats become float32, ints
    int64, as in Paddle; NumPy arrays keep their dtype)."""
    if isinstance(data, Tensor) and data._value is None:  # a new leaf, as eagerly
        t = data.detach() if dtype is None else data.detach().astype(dtype)
    else:
        t = Tensor._from_array(np.array(to_array(data, dtype), copy=True))
    t.stop_gradient = stop_gradient
    return t


def full(shape, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor of `shape` filled with `fill_value`: float32 unless `dtype` says
    otherwise, even for an int fill value, as in Paddle; bool for a bool one."""
    if dtype is None:
        dtype = dtypes.bool_ if isinstance(fill_value, bool) else dtypes.float32
    value = Tensor._from_array(dtypes.astype(fill_value, dtypes.dtype(dtype)))
    return apply("broadcast_to", (value,), {"shape": dims(shape)})


def zeros(shape, dtype=None, name=None) -> Tensor:
    return full(shape, 0.0, dtype or dtypes.float32)


def ones(shape, dtype=None, name=None) -> Tensor:
    return full(shape, 1.0, dtype or dtypes.float32)


def empty(shape, dtype=None, name=None) -> Tensor:
    return zeros(shape, dtype)


def full_like(x, fill_value, dtype=None, name=None) -> Tensor:
    x = as_tensor(x)
    value = Tensor._from_array(dtypes.astype(fill_value, dtypes.dtype(dtype or x.dtype)))
    return apply("broadcast_to", (value,), {"shape": exact_shape(x)})


def zeros_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 1, dtype)


def empty_like(x, dtype=None, name=None) -> Tensor:
    return zeros_like(x, dtype)


def arange(start=0, end=None, step=1, dtype=None, name=None) -> Tensor:
    if end is None:
        start, end = 0, start
    bounds = (start, end, step)
    if any(isinstance(v, Tensor) and v._value is None for v in bounds):
        return _traced_arange(bounds, dtype)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in bounds)
    if dtype is None:
        dtype = dtypes.int64 if all(isinstance(v, int) for v in bounds) else dtypes.float32
    return apply("arange", (), {"start": start, "stop": end, "step": step,
                                "dtype": dtypes.dtype(dtype)})


def _traced_arange(bounds, dtype) -> Tensor:
    """arange with bounds known only when the program runs: a `range` op, whose length
    is a symbolic dim where the bounds are sizes that give one (``arange(x.shape[0])``
    has length N), else a fresh symbol."""
    tensors = [as_tensor(v) for v in bounds]
    if dtype is None:
        dtype = dtypes.int64 if all(t.dtype.is_int for t in tensors) else dtypes.float32
    start, end, step = (traced_dim(t) if t._value is None else t.item() for t in tensors)
    size = dim_sub(end, start) if step == 1 and all(
        isinstance(v, int | str) for v in (start, end)) else None
    if not (is_symbol(size) or isinstance(size, int) and size >= 0):
        # N - 1 (empty for N = 0) and lengths from tensor values: a symbol of its own
        size = next(t._tracer for t in tensors if t._value is None).fresh_dim()
    return apply("range", tensors, {"dtype": dtypes.dtype(dtype), "size": size})


def linspace(start, stop, num, dtype=None, name=None) -> Tensor:
    dtype = dtypes.dtype(dtype or dtypes.float32)
    step = (stop - start) / (num - 1) if num > 1 else 0.0
    ramp = apply("arange", (), {"start": 0, "stop": num, "step": 1, "dtype": dtype})
    from .math import add, multiply
    return add(multiply(ramp, step), start)


def eye(num_rows, num_columns=None, dtype=None, name=None) -> Tensor:
    from .logic import equal
    from .manipulation import reshape
    num_columns = num_rows if num_columns is None else num_columns
    rows = reshape(arange(num_rows), [num_rows, 1])
    cols = reshape(arange(num_columns), [1, num_columns])
    return equal(rows, cols).astype(dtype or dtypes.float32)


def assign(x, output=None) -> Tensor:
    t = to_tensor(x) if not isinstance(x, Tensor) else x.clone()
    if output is not None:
        output.set_value(t)
        return output
    return t


def fill_constant(shape, dtype, value, force_cpu=False, out=None, name=None) -> Tensor:
    """Paddle's older spelling of `full` (``paddle.tensor.fill_constant``)."""
    return full(shape, value, dtype)
