"""Searching and sorting: argmax/argmin, argsort, sort, topk, and the selections
whose result size depends on the data: nonzero, unique, masked_select.

A data-dependent size is counted from the operand's value in eager code; while
tracing it is a fresh symbol of the program (`Tracer.fresh_dim`), bound when the
compiled program runs, so these work compiled too.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..dispatch import apply
from ..ir import dtypes
from ..ops.sort import distinct
from .convert import as_tensor, cast
from .tensor import Tensor


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    out = apply("argmax", (as_tensor(x),), {"axis": axis, "keepdim": bool(keepdim)})
    return out if dtypes.dtype(dtype) is dtypes.int64 else out.astype(dtype)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    out = apply("argmin", (as_tensor(x),), {"axis": axis, "keepdim": bool(keepdim)})
    return out if dtypes.dtype(dtype) is dtypes.int64 else out.astype(dtype)


def argsort(x, axis=-1, descending=False, stable=False, name=None) -> Tensor:
    """The int64 indices that sort x along `axis`; ties keep their order (which is
    also what Paddle's unstable sort gives)."""
    return apply("argsort", (as_tensor(x),), {"axis": int(axis), "descending": bool(descending)})


def sort(x, axis=-1, descending=False, stable=False, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("take_along_axis", (x, argsort(x, axis, descending)), {"axis": int(axis)})


def topk(x, k, axis=None, largest=True, sorted=True, name=None):  # noqa: A002
    """The `k` largest (or smallest) elements along `axis` (default -1), sorted, and
    their int64 indices."""
    from .manipulation import slice as slice_
    x = as_tensor(x)
    axis = -1 if axis is None else int(axis)
    k = int(k.item()) if isinstance(k, Tensor) else int(k)
    order = argsort(x, axis, descending=largest)
    indices = slice_(order, [axis], [0], [k])
    return apply("take_along_axis", (x, indices), {"axis": axis}), indices


def data_size(x: Tensor, count) -> int | str:
    """A result length that depends on x's values: `count(value)` eagerly, a fresh
    symbol while tracing."""
    if x._value is None:
        return x._tracer.fresh_dim()
    return int(count(x._value))


def nonzero(x, as_tuple=False):
    """The coordinates of x's nonzero elements: an int64 [count, rank] tensor, or
    with `as_tuple` one 1-D tensor per axis."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ShapeError("nonzero needs a tensor of at least one dim, as in Paddle; got a 0-d "
                         "tensor (reshape it to [1])")
    coords = apply("nonzero", (x,), {"size": data_size(x, np.count_nonzero)})
    if not as_tuple:
        return coords
    from .manipulation import slice as slice_, squeeze
    return tuple(squeeze(slice_(coords, [1], [a], [a + 1]), [1]) for a in range(x.ndim))


def flat_positions(mask: Tensor) -> Tensor:
    """The int64 positions of the true elements of the flattened bool `mask`."""
    from .manipulation import reshape
    flat = reshape(mask, [-1])
    return reshape(nonzero(flat), [-1])


def masked_select(x, mask, name=None) -> Tensor:
    """The elements of x where the bool `mask` (broadcast with x) holds, as a 1-D
    tensor; differentiable in x."""
    from .manipulation import broadcast_to, exact_shape, gather, reshape
    from ..ir.types import broadcast_shapes
    x, mask = as_tensor(x), as_tensor(mask)
    if not mask.dtype.is_bool:
        raise TypeError(f"masked_select: the mask must be a bool tensor, got {mask.dtype.name}")
    shape = broadcast_shapes(tuple(exact_shape(x)), tuple(exact_shape(mask)))
    if tuple(exact_shape(x)) != shape:
        x = broadcast_to(x, shape)
    if tuple(exact_shape(mask)) != shape:
        mask = broadcast_to(mask, shape)
    return gather(reshape(x, [-1]), flat_positions(mask), axis=0)


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None,
           dtype="int64", name=None):
    """The sorted distinct elements of x (flattened unless `axis`; every NaN is one of
    them, as in Paddle), and as asked the first index of each, the inverse mapping and
    the counts (in `dtype`)."""
    x = as_tensor(x)
    if axis is not None:
        axis = int(axis)

    def count(value):
        return len(distinct(value, axis))
    out, index, inverse, counts = apply("unique", (x,), {"axis": axis,
                                                        "size": data_size(x, count)})
    extras = [t for t, wanted in ((index, return_index), (inverse, return_inverse),
                                  (counts, return_counts)) if wanted]
    if not extras:
        return out
    return (out, *(cast(t, dtype) for t in extras))


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None, *,
                 side=None, sorter=None) -> Tensor:
    """For each of `values`, the position in `sorted_sequence` (sorted along its last
    axis) where it would be inserted to keep the order: before equal elements, or
    after them with `right` (or ``side='right'``). A 1-D sequence serves every
    value; an N-D one has the values' leading dims. `sorter` holds the indices that
    sort an unsorted sequence, as in Paddle. The count of smaller elements is a
    comparison and a sum, so it traces like any composition; it compares every value
    with every element (memory: values x sequence length), where a binary search
    would not."""
    from .creation import full_like
    from .logic import isnan, less_equal, less_than, logical_not, where
    from .manipulation import exact_shape, take_along_axis, unsqueeze
    from .math import sum as sum_
    seq, values = as_tensor(sorted_sequence), as_tensor(values)
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    if sorter is not None:
        seq = take_along_axis(seq, sorter, -1)
    if seq.ndim > 1 and tuple(exact_shape(seq))[:-1] != tuple(exact_shape(values))[:-1]:
        raise ShapeError(f"searchsorted: an N-D sorted_sequence (shape {list(seq.shape)}) "
                         "needs values with the same leading dims, as in Paddle, got shape "
                         f"{list(values.shape)}")
    seq = seq if seq.ndim == 1 else unsqueeze(seq, -2)
    column = unsqueeze(values, -1)
    dtype = dtypes.int32 if out_int32 else dtypes.int64
    count = sum_(cast((less_equal if right else less_than)(seq, column), dtype), axis=-1,
                 dtype=dtype)
    if not (values.dtype.is_float or seq.dtype.is_float):
        return count
    # Paddle's binary searches over a sequence whose NaNs sort last: a NaN value goes
    # after everything, and so does a value (right) no number of the sequence exceeds
    last = full_like(count, exact_shape(seq)[-1])
    if right:
        numbers = sum_(cast(logical_not(isnan(seq)), dtype), axis=-1, dtype=dtype)
        count = where(less_than(count, numbers), count, last)
    return where(isnan(values), last, count) if values.dtype.is_float else count


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None) -> Tensor:
    """The index of the bucket of the 1-D `sorted_sequence` each element of x falls
    in: searchsorted with the sequence first."""
    sorted_sequence = as_tensor(sorted_sequence)
    if sorted_sequence.ndim != 1:
        raise ShapeError("bucketize: sorted_sequence must be 1-D, as in Paddle, got shape "
                         f"{list(sorted_sequence.shape)}; paddle.searchsorted takes N-D ones")
    return searchsorted(sorted_sequence, x, out_int32=out_int32, right=right)


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """The k-th smallest element along `axis` (default -1) and its int64 index; the
    gradient goes to that element alone. Among equal elements the k-th in x's order
    is taken (a stable sort): Paddle's std::nth_element leaves that choice to the C++
    library, so its index for ties can differ."""
    from .manipulation import exact_shape, slice as slice_, squeeze, take_along_axis
    from ..errors import OutOfRangeError
    x = as_tensor(x)
    axis = -1 if axis is None else int(axis)
    k = int(k.item()) if isinstance(k, Tensor) else int(k)
    size = exact_shape(x)[axis] if x.ndim else 1
    if k < 1 or (isinstance(size, int) and k > size):
        raise OutOfRangeError(f"kthvalue: k must be in [1, {size}] (the size of axis "
                              f"{axis}), got {k}")
    if x.ndim == 0:
        return x, cast(as_tensor(0), dtypes.int64)
    index = slice_(argsort(x, axis), [axis], [k - 1], [k])
    value = take_along_axis(x, index, axis)
    if keepdim:
        return value, index
    return squeeze(value, [axis]), squeeze(index, [axis])


def bincount(x, weights=None, minlength=0, name=None) -> Tensor:
    """How often each value 0..n-1 occurs in the 1-D non-negative int x (or the sum
    of the `weights` at its positions), with n the larger of max(x) + 1 and
    `minlength`. The length is a traced scalar while compiling, so the result's size
    is the data-dependent symbol of the `arange` that spans it. As Paddle's, counts
    are int64 and int weights sum in float64."""
    from ..errors import DTypeError, InputError
    from .creation import arange
    from .logic import equal, where
    from .manipulation import unsqueeze
    from .math import max as max_, maximum, sum as sum_
    x = as_tensor(x)
    if x.dtype.kind != "int":
        raise DTypeError(f"bincount: x must be an int tensor, as in Paddle, got {x.dtype.name}")
    if x.ndim != 1:
        raise ShapeError(f"bincount: x must be 1-D, as in Paddle, got shape {list(x.shape)}")
    if x._value is not None and x._value.size and x._value.min() < 0:
        raise InputError("bincount: the elements of x must be non-negative, as in Paddle, "
                         f"got {x._value.min()}")
    if x._value is not None and not x._value.size:
        length = as_tensor(int(minlength))
    else:
        length = maximum(cast(max_(x), dtypes.int64) + 1, as_tensor(int(minlength)))
    hits = equal(unsqueeze(x, -1), arange(length, dtype=x.dtype))
    if weights is None:
        return sum_(cast(hits, dtypes.int64), axis=0)
    weights = as_tensor(weights)
    if weights.dtype.kind != "float":
        weights = cast(weights, dtypes.float64)
    zero = cast(as_tensor(0), weights.dtype)
    return sum_(where(hits, unsqueeze(weights, -1), zero), axis=0)
