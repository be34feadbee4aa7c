"""Creating tensors: from data, filled, ranges, and the `*_like` forms."""
from __future__ import annotations

import numpy as np

from ..context import current_tracer
from ..dispatch import apply
from ..ir import dtypes
from ..ir.types import dim_sub, is_symbol
from .convert import (as_tensor, cast, default_dtype_of, default_float_dtype, dims,
                      holds_tensors, python_number_of, to_array, traced_dim)
from .logic import less_than, select
from .manipulation import _rebind, exact_shape
from .math import add, divide, multiply, subtract
from .tensor import Tensor


def to_tensor(data, dtype=None, place=None, stop_gradient=True) -> Tensor:
    """A new Tensor holding a copy of `data` (Python floats get the default float
    dtype, float32 unless `set_default_dtype` says otherwise, ints int64, as in
    Paddle; NumPy arrays keep their dtype)."""
    if data is None:
        raise TypeError("to_tensor(None): data must be a number, a list, an array or a "
                        "Tensor, as in Paddle")
    tracing = current_tracer() is not None
    if isinstance(data, Tensor) and (data._value is None or tracing):
        if dtype is None and data.python_number:  # the number eager code has (t.item())
            dtype = default_dtype_of(python_number_of(data))
        # a new leaf, as eagerly; in traced code, of the value the program computes
        t = data.detach() if dtype is None else data.detach().astype(dtype)
    elif tracing and isinstance(data, list | tuple) and holds_tensors(data):
        t = _stacked(data, dtype).detach()
    else:
        t = Tensor._from_array(np.array(to_array(data, dtype), copy=True))
    t.stop_gradient = stop_gradient
    return t


def _stacked(data, dtype) -> Tensor:
    """``to_tensor`` of a (nested) list holding tensors, in traced code: the items
    stacked (as eagerly, each tensor keeping its shape), of the dtype eager code gives
    such a list (`to_array` of it, each tensor a zero of its dtype) unless `dtype` is
    given."""
    from .manipulation import stack
    if dtype is None:
        dtype = dtypes.from_numpy(to_array(_zeros_for_tensors(data)))
    return stack([_stacked(v, dtype) if isinstance(v, list | tuple) else
                  cast(as_tensor(v), dtype) for v in data])


def _zeros_for_tensors(data):
    """`data` with each tensor a 0-d one of its dtype holding zero, and each stand-in
    for a Python number (``t.item()`` in compiled code) a number of its kind."""
    if isinstance(data, list | tuple):
        return [_zeros_for_tensors(v) for v in data]
    if isinstance(data, Tensor) and data.python_number:
        return python_number_of(data)
    if isinstance(data, Tensor):
        return Tensor._from_array(dtypes.astype(np.zeros(()), data.dtype))
    return data


def full(shape, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor of `shape` filled with `fill_value`: of the default float dtype
    unless `dtype` says otherwise, even for an int fill value, as in Paddle; bool for
    a bool one."""
    if dtype is None:
        number = python_number_of(fill_value) if isinstance(fill_value, Tensor) and \
            fill_value.python_number else fill_value
        dtype = dtypes.bool_ if isinstance(number, bool) else default_float_dtype()
    return apply("broadcast_to", (_fill("full", fill_value, dtype),), {"shape": dims(shape)})


def _fill(what: str, fill_value, dtype) -> Tensor:
    """The 0-d tensor of `dtype` holding a fill value: a number, or a tensor of one
    element (in compiled code, one the program computes, such as a loop's counter),
    through which no gradient flows, as in Paddle."""
    dtype = dtypes.dtype(dtype)
    if not isinstance(fill_value, Tensor):
        return Tensor._from_array(dtypes.astype(fill_value, dtype))
    size = exact_shape(fill_value)
    if any(isinstance(d, int) and d != 1 for d in size):
        raise ValueError(f"{what}: a tensor fill_value must have one element, got shape "
                         f"{list(size)}")
    return cast(fill_value.detach().reshape([]), dtype)


def zeros(shape, dtype=None, name=None) -> Tensor:
    return full(shape, 0.0, dtype or default_float_dtype())


def ones(shape, dtype=None, name=None) -> Tensor:
    return full(shape, 1.0, dtype or default_float_dtype())


def empty(shape, dtype=None, name=None) -> Tensor:
    return zeros(shape, dtype)


def full_like(x, fill_value, dtype=None, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("broadcast_to", (_fill("full_like", fill_value, dtype or x.dtype),),
                 {"shape": exact_shape(x)})


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
    if dtype is None:
        dtype = _arange_dtype(bounds)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in bounds)
    return apply("arange", (), {"start": start, "stop": end, "step": step,
                                "dtype": dtypes.dtype(dtype)})


def _arange_dtype(bounds) -> dtypes.DType:
    """Paddle's default: int64 when every bound is an int or an int tensor (of any int
    dtype), else the default float dtype (for a float64 bound too: Tensor bounds gave
    float32 always)."""
    integral = all(isinstance(v, Tensor) and v.dtype.is_int
                   or isinstance(v, int) and not isinstance(v, bool) for v in bounds)
    return dtypes.int64 if integral else default_float_dtype()


def _traced_arange(bounds, dtype) -> Tensor:
    """arange with bounds known only when the program runs: a `range` op, whose length
    is a symbolic dim where the bounds are sizes that give one (``arange(x.shape[0])``
    has length N), else a fresh symbol."""
    tensors = [as_tensor(v) for v in bounds]
    if dtype is None:
        dtype = _arange_dtype(tensors)
    start, end, step = (traced_dim(t) if t._value is None else t.item() for t in tensors)
    size = dim_sub(end, start) if step == 1 and all(
        isinstance(v, int | str) for v in (start, end)) else None
    if not (is_symbol(size) or isinstance(size, int) and size >= 0):
        # N - 1 (empty for N = 0) and lengths from tensor values: a symbol of its own
        size = next(t._tracer for t in tensors if t._value is None).fresh_dim()
    return apply("range", tensors, {"dtype": dtypes.dtype(dtype), "size": size})


def linspace(start, stop, num, dtype=None, name=None) -> Tensor:
    """`num` evenly spaced values from start to stop, both included, computed as
    Paddle's kernel does: the bounds converted to `dtype` first, the first half of the
    values counted up from start and the rest down from stop, in `dtype` for floats
    (float32 for the 16-bit ones) and float64 for ints, then truncated toward zero
    (linspace(0, 10, 5, dtype='int32') is [0, 2, 5, 7, 10])."""
    dtype = dtypes.dtype(dtype or default_float_dtype())
    if isinstance(num, Tensor) and num._value is None:
        return _traced_linspace(start, stop, num, dtype)
    num = int(num.item() if isinstance(num, Tensor) else num)
    if num < 0:
        raise ValueError(f"linspace: num must be at least 0, as in Paddle, got {num}")
    first, last, work = _linspace_bounds(start, stop, dtype)
    ramp = apply("arange", (), {"start": 0, "stop": num, "step": 1, "dtype": work})
    if num <= 1:
        return cast(add(multiply(ramp, 0), first), dtype)
    step = divide(subtract(last, first), num - 1)
    up = add(first, multiply(step, ramp))
    down = subtract(last, multiply(step, subtract(num - 1, ramp)))
    return cast(select(less_than(ramp, num // 2), up, down), dtype)


def _linspace_bounds(start, stop, dtype: dtypes.DType):
    """linspace's bounds in the dtype it computes in (see `linspace`), and that dtype."""
    if dtype.is_bool:
        raise TypeError("linspace: dtype bool is not supported (as in Paddle); give a "
                        "float or int dtype")
    work = dtype if dtype.is_float and dtype.np.itemsize >= 4 else \
        dtypes.float64 if dtype.is_int else dtypes.float32
    return cast(_of_dtype(start, dtype), work), cast(_of_dtype(stop, dtype), work), work


def _traced_linspace(start, stop, num: Tensor, dtype: dtypes.DType) -> Tensor:
    """linspace of a count known only when the program runs (``x.shape[0]`` in
    converted code): `linspace`'s formula over a traced `arange`, with its cases of
    at most one value (start alone) chosen by `where` rather than by Python. A
    negative count, which no size gives, is not checked."""
    from .logic import greater_than
    from .math import floor_divide, maximum
    first, last, work = _linspace_bounds(start, stop, dtype)
    ramp = arange(num, dtype=work)
    count = cast(num, work)
    step = divide(subtract(last, first), maximum(subtract(count, 1), 1))  # no 0 / 0
    up = add(first, multiply(step, ramp))
    down = subtract(last, multiply(step, subtract(subtract(count, 1), ramp)))
    several = select(less_than(ramp, floor_divide(count, 2)), up, down)
    return cast(select(greater_than(count, 1), several, add(multiply(ramp, 0), first)), dtype)


def _of_dtype(value, dtype: dtypes.DType) -> Tensor:
    """A bound as a tensor of `dtype`, a Python number converted directly (by way of
    float32, 1/3 would lose its float64 digits)."""
    if isinstance(value, Tensor):
        return cast(value, dtype)
    return Tensor._from_array(to_array(value, dtype))


def eye(num_rows, num_columns=None, dtype=None, name=None) -> Tensor:
    from .logic import equal
    from .manipulation import reshape
    num_columns = num_rows if num_columns is None else num_columns
    rows = reshape(arange(num_rows), [num_rows, 1])
    cols = reshape(arange(num_columns), [1, num_columns])
    return equal(rows, cols).astype(dtype or default_float_dtype())


def assign(x, output=None) -> Tensor:
    """A copy of `x`, or `output` made that copy, as Paddle's ``assign``.

    `x` is taken as Paddle takes it: a Python number as a [1] array and a list or
    tuple of numbers as an array, both of NumPy's dtype (float64 for floats, where
    `to_tensor` gives float32), a NumPy array as it is, a Tensor copied.

    `output` keeps its identity and becomes that copy in value *and dtype* (a float32
    `x` makes an int32 `output` float32), as Paddle's ``assign_out_``. An `x` that
    requires a gradient makes `output` its copy, gradients flowing back to `x`. Any
    other `x` gives `output` its value in place (`set_value`): `output` keeps its own
    place in the graph, a parameter staying a trainable leaf, an intermediate passing
    gradients on to what made it (through a cast, where the dtype changes). Traced
    tensors alike, except that the state a compiled program updates (a parameter, a
    buffer) keeps its dtype. Unlike Paddle, which gives `output` x's shape, the
    shapes must match."""
    from ..context import current_tracer
    from ..dispatch import enable_grad, user_location
    from ..errors import ConversionError, ShapeError
    if isinstance(x, Tensor):
        t = x.clone()
    elif isinstance(x, (list, tuple)) and not any(isinstance(v, Tensor) for v in x):
        t = to_tensor(np.array(x))
    elif np.isscalar(x) and not isinstance(x, str):
        t = to_tensor(np.array([x]))
    else:
        t = to_tensor(x)
    if output is None:
        return t
    if tuple(exact_shape(t)) != tuple(exact_shape(output)):
        raise ShapeError(f"assign: x has shape {list(exact_shape(t))} but output has shape "
                         f"{list(exact_shape(output))}", user_location())
    retyped = t.dtype is not output.dtype
    if retyped and output._value is not None and current_tracer() is not None:
        raise ConversionError(f"assign: output is state of the program ({output.dtype.name}), "
                              f"which keeps its dtype, and x is {t.dtype.name}; cast x first "
                              f"(x.astype('{output.dtype.name}'))", user_location())
    if not t.stop_gradient:
        _rebind(output, t)
    elif retyped and output._node is None and output._value is not None:
        output._value = t._value  # a leaf: a parameter stays a trainable one
    else:
        if retyped:
            with enable_grad():  # as set_value records its own change
                _rebind(output, cast(output, t.dtype))
        output.set_value(t)
    return output


def fill_constant(shape, dtype, value, force_cpu=False, out=None, name=None) -> Tensor:
    """Paddle's older spelling of `full` (``paddle.tensor.fill_constant``)."""
    return full(shape, value, dtype)
