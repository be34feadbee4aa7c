"""Shape manipulation, joining and splitting, gathering, and indexing (`x[...]`)."""
from __future__ import annotations

import builtins

import numpy as np

from ..dispatch import apply
from ..errors import IrflowError
from ..ir import dtypes
from .convert import as_tensor, cast
from .tensor import Tensor


def exact_shape(x: Tensor) -> tuple:
    """x's shape with symbolic dims as symbols (while tracing), for shape attributes."""
    return x._ir.type.shape if x._value is None else x._value.shape


def _ints(values) -> tuple:
    if isinstance(values, Tensor):
        return tuple(values.tolist())
    if isinstance(values, int):
        return (values,)
    return tuple(int(v) if not isinstance(v, Tensor) else v.item() for v in values)


def reshape(x, shape, name=None) -> Tensor:
    return apply("reshape", (as_tensor(x),), {"shape": _ints(shape)})


def transpose(x, perm, name=None) -> Tensor:
    return apply("transpose", (as_tensor(x),), {"perm": _ints(perm)})


def moveaxis(x, source, destination, name=None) -> Tensor:
    x = as_tensor(x)
    perm = [i for i in range(x.ndim) if i != source % x.ndim]
    perm.insert(destination % x.ndim, source % x.ndim)
    return transpose(x, perm)


def squeeze(x, axis=None, name=None) -> Tensor:
    return apply("squeeze", (as_tensor(x),), {"axis": None if axis is None else _ints(axis)})


def unsqueeze(x, axis, name=None) -> Tensor:
    return apply("unsqueeze", (as_tensor(x),), {"axis": _ints(axis)})


def flatten(x, start_axis=0, stop_axis=-1, name=None) -> Tensor:
    x = as_tensor(x)
    rank = x.ndim
    if rank == 0:
        return reshape(x, [1])
    start, stop = start_axis % rank, stop_axis % rank
    if start > stop:
        raise IrflowError(f"flatten: start_axis {start_axis} comes after stop_axis {stop_axis}")
    shape = exact_shape(x)  # symbolic dims outside the flattened range stay symbolic
    return apply("reshape", (x,), {"shape": (*shape[:start], -1, *shape[stop + 1:])})


def concat(x, axis=0, name=None) -> Tensor:
    tensors = _same_dtype([as_tensor(t) for t in x])
    return apply("concat", tensors, {"axis": int(axis)})


def stack(x, axis=0, name=None) -> Tensor:
    tensors = _same_dtype([as_tensor(t) for t in x])
    return apply("stack", tensors, {"axis": int(axis)})


def _same_dtype(tensors: list[Tensor]) -> list[Tensor]:
    from .convert import promote
    first = tensors[0]
    for t in tensors[1:]:
        first, _ = promote(first, t)
    return [cast(t, first.dtype) for t in tensors]


def split(x, num_or_sections, axis=0, name=None) -> list[Tensor]:
    x = as_tensor(x)
    axis = int(axis) % x.ndim
    size = x.shape[axis]
    if isinstance(num_or_sections, int):
        if size % num_or_sections:
            raise IrflowError(f"split: dim {axis} of size {size} does not divide into "
                              f"{num_or_sections} equal parts")
        sections = [size // num_or_sections] * num_or_sections
    else:
        sections = list(num_or_sections)
        if -1 in sections:
            sections[sections.index(-1)] = size - builtins.sum(s for s in sections if s != -1)
    out, start = [], 0
    for s in sections:
        out.append(slice(x, [axis], [start], [start + s]))
        start += s
    return out


def chunk(x, chunks, axis=0, name=None) -> list[Tensor]:
    return split(x, chunks, axis)


def unbind(input, axis=0) -> list[Tensor]:  # noqa: A002
    x = as_tensor(input)
    return [squeeze(t, [axis]) for t in split(x, x.shape[axis], axis)]


def slice(input, axes, starts, ends) -> Tensor:  # noqa: A001,A002  (Paddle's names)
    return apply("slice", (as_tensor(input),),
                 {"axes": _ints(axes), "starts": _ints(starts), "stops": _ints(ends)})


def strided_slice(x, axes, starts, ends, strides, name=None) -> Tensor:
    return apply("slice", (as_tensor(x),), {"axes": _ints(axes), "starts": _ints(starts),
                                            "stops": _ints(ends), "steps": _ints(strides)})


def flip(x, axis, name=None) -> Tensor:
    x = as_tensor(x)
    axes = _ints(axis)
    n = len(axes)
    return apply("slice", (x,), {"axes": axes, "starts": (None,) * n, "stops": (None,) * n,
                                 "steps": (-1,) * n})


def broadcast_to(x, shape, name=None) -> Tensor:
    return apply("broadcast_to", (as_tensor(x),), {"shape": _ints(shape)})


expand = broadcast_to


def expand_as(x, y, name=None) -> Tensor:
    return apply("broadcast_to", (as_tensor(x),), {"shape": exact_shape(y)})


def tile(x, repeat_times, name=None) -> Tensor:
    x = as_tensor(x)
    reps = _ints(repeat_times)
    shape = list(exact_shape(x))
    shape = [1] * (len(reps) - len(shape)) + shape
    reps = (1,) * (len(shape) - len(reps)) + reps
    interleaved = [d for pair in zip([1] * len(shape), shape) for d in pair]
    expanded = [d for pair in zip(reps, shape) for d in pair]
    y = reshape(x, interleaved)
    y = broadcast_to(y, expanded)
    return reshape(y, [r * d if isinstance(d, int) else -1 for r, d in zip(reps, shape)])


def gather(x, index, axis=None, name=None) -> Tensor:
    index = as_tensor(index)
    return apply("gather", (as_tensor(x), _as_index(index)),
                 {"axis": 0 if axis is None else int(axis)})


def index_select(x, index, axis=0, name=None) -> Tensor:
    return gather(x, index, axis)


def take_along_axis(arr, indices, axis, broadcast=True) -> Tensor:
    return apply("take_along_axis", (as_tensor(arr), _as_index(as_tensor(indices))),
                 {"axis": int(axis)})


def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True,
                   broadcast=True) -> Tensor:
    arr = as_tensor(arr)
    values = cast(as_tensor(values, like=arr), arr.dtype)
    return apply("put_along_axis", (arr, _as_index(as_tensor(indices)), values),
                 {"axis": int(axis), "reduce": reduce})


def _as_index(index: Tensor) -> Tensor:
    if index.dtype not in (dtypes.int32, dtypes.int64):
        raise IrflowError(f"an index tensor must be int32 or int64, got {index.dtype.name}")
    return index


def clone(x, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("cast", (x,), {"dtype": x.dtype})


def astype(x, dtype, name=None) -> Tensor:
    """x converted to `dtype` (Paddle's paddle.cast); Python numbers are accepted."""
    return cast(as_tensor(x), dtype)


# ---------------------------------------------------------------- indexing

def _index_parts(x: Tensor, index):
    """Split an index into basic slicing (axes, starts, stops, steps), the axes ints
    removed, where None adds axes, and at most one advanced (tensor) index."""
    if not isinstance(index, tuple):
        index = (index,)
    if builtins.any(i is Ellipsis for i in index):
        at = [i for i, v in enumerate(index) if v is Ellipsis]
        if len(at) > 1:
            raise IrflowError("an index can hold only one Ellipsis (...)")
        used = builtins.sum(1 for v in index if v is not None and v is not Ellipsis)
        index = index[:at[0]] + (builtins.slice(None),) * (x.ndim - used) + index[at[0] + 1:]
    axes, starts, stops, steps, squeezed, advanced, new_axes = [], [], [], [], [], None, []
    axis = 0
    out_axis = 0
    for item in index:
        if item is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if axis >= x.ndim:
            raise IrflowError(f"too many indices for a tensor of rank {x.ndim}")
        if isinstance(item, builtins.slice):
            if item != builtins.slice(None):
                axes.append(axis)
                starts.append(_int_or_none(item.start))
                stops.append(_int_or_none(item.stop))
                steps.append(1 if item.step is None else _int_or_none(item.step))
            out_axis += 1
        elif isinstance(item, int | np.integer) and not isinstance(item, bool):
            i = int(item)
            axes.append(axis)
            starts.append(i)
            stops.append(i + 1 if i != -1 else None)
            steps.append(1)
            squeezed.append(axis)
        elif isinstance(item, Tensor | list | np.ndarray):
            t = as_tensor(item)
            if t.dtype.is_bool:
                raise IrflowError("indexing with a boolean mask gives a data-dependent shape, "
                                  "which irflow does not support; use paddle.where instead")
            if advanced is not None:
                raise IrflowError("irflow supports one tensor index per indexing expression")
            advanced = (axis, t)
            out_axis += t.ndim
        else:
            raise IrflowError(f"unsupported index {item!r}")
        axis += 1
    return axes, starts, stops, steps, squeezed, advanced, new_axes


def _int_or_none(v):
    if v is None:
        return None
    return int(v)


def getitem(x: Tensor, index) -> Tensor:
    axes, starts, stops, steps, squeezed, advanced, new_axes = _index_parts(x, index)
    y = x
    if axes:
        y = apply("slice", (y,), {"axes": tuple(axes), "starts": tuple(starts),
                                  "stops": tuple(stops), "steps": tuple(steps)})
    if advanced is not None:
        axis, t = advanced
        axis -= builtins.sum(1 for a in squeezed if a < axis)
        if squeezed:
            y = squeeze(y, squeezed)
        y = gather(y, t, axis)
    elif squeezed:
        y = squeeze(y, squeezed)
    if new_axes:
        y = unsqueeze(y, new_axes)
    return y


def setitem(x: Tensor, index, value) -> None:
    """``x[index] = value``: x is rebound to a copy with that slice replaced (recorded
    as a `set_slice` op, so gradients flow to both x's old value and `value`)."""
    if not x.stop_gradient and x.is_leaf and x._value is not None:
        raise IrflowError("a leaf tensor that requires a gradient cannot be modified in "
                          "place (as in Paddle); use paddle.where or work on a copy")
    axes, starts, stops, steps, squeezed, advanced, new_axes = _index_parts(x, index)
    if advanced is not None or new_axes:
        raise IrflowError("assignment supports ints, slices and Ellipsis as indices")
    if not axes:
        axes, starts, stops, steps = [0], [None], [None], [1]
    attrs = {"axes": tuple(axes), "starts": tuple(starts), "stops": tuple(stops),
             "steps": tuple(steps)}
    region = apply("slice", (x,), attrs)
    value = cast(as_tensor(value, like=x), x.dtype)
    value = apply("broadcast_to", (value,), {"shape": exact_shape(region)})
    _rebind(x, apply("set_slice", (x, value), attrs))


def _rebind(dst: Tensor, src: Tensor) -> None:
    """Make `dst` the tensor `src` is (in-place update semantics)."""
    dst._value, dst._ir, dst._tracer = src._value, src._ir, src._tracer
    dst._node, dst._index, dst.stop_gradient = src._node, src._index, src.stop_gradient
