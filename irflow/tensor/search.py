"""Searching and sorting: argmax/argmin, argsort, sort, topk, and the selections
whose result size depends on the data: nonzero, unique, masked_select.

A data-dependent size is counted from the operand's value in eager code; while
tracing it is a fresh symbol of the program (`Tracer.fresh_dim`), bound when the
compiled program runs, so these work compiled too.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, OutOfRangeError, ShapeError
from ..dispatch import apply
from ..ir import dtypes
from ..ops.sort import distinct
from .convert import as_tensor, cast
from .tensor import Tensor


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    """The int64 (or `dtype`) index of x's largest element along `axis` (of the
    flattened x when None); `axis` may be a 0-D int tensor, as in Paddle."""
    return _arg_extremum("argmax", x, axis, keepdim, dtype)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    """The index of x's smallest element along `axis`, as `argmax`."""
    return _arg_extremum("argmin", x, axis, keepdim, dtype)


def _arg_extremum(op: str, x, axis, keepdim, dtype) -> Tensor:
    axis = None if axis is None else _int_arg(axis, "axis", op)
    out = apply(op, (as_tensor(x),), {"axis": axis, "keepdim": bool(keepdim)})
    return out if dtypes.dtype(dtype) is dtypes.int64 else out.astype(dtype)


def _int_arg(value, what: str, op: str) -> int:
    """An int argument (an axis, or k) given as a Python int or, as Paddle accepts
    it, a one-element int tensor whose value is known (it sets a shape, so it cannot
    wait for the program to run)."""
    if isinstance(value, Tensor):
        if value._value is None or value.size != 1 or value.dtype.kind != "int":
            raise InputError(f"{op}: {what} must be an int or a one-element int tensor with "
                             f"a known value, got a {value.dtype.name} tensor of shape "
                             f"{list(value.shape)}")
        return int(value._value.reshape(-1)[0])
    return int(value)


def _scalar_axis(axis: int, op: str) -> None:
    """Check `axis` for a 0-D x, whose only axes are 0 and -1 in Paddle."""
    if axis not in (0, -1):
        raise ShapeError(f"{op}: axis {axis} is out of range for a 0-D tensor (0 or -1, "
                         "as in Paddle)")


def _checked_k(x: Tensor, k, axis: int, op: str) -> int:
    """`k` as an int in [1, size of `axis`] (1 for a 0-D x, whose axis must be 0 or
    -1), as Paddle checks it for topk and kthvalue; a symbolic size is not checked."""
    from .manipulation import exact_shape
    k = _int_arg(k, "k", op)
    if x.ndim == 0:
        _scalar_axis(axis, op)
    size = exact_shape(x)[axis] if x.ndim else 1
    if k < 1 or (isinstance(size, int) and k > size):
        raise OutOfRangeError(f"{op}: k must be in [1, {size}] (the size of axis {axis}), "
                              f"as in Paddle, got {k}")
    return k


def argsort(x, axis=-1, descending=False, stable=False, name=None) -> Tensor:
    """The int64 indices that sort x along `axis` (NaN after every number, or first
    when `descending`); a 0-D x gives 0. Equal elements keep their order, which
    `stable=True` asks of Paddle too; Paddle's default unstable sort keeps it only
    for short rows (up to 16 elements on CPU), so among ties its indices may differ."""
    x = as_tensor(x)
    axis = _int_arg(axis, "axis", "argsort")
    if x.ndim == 0:
        _scalar_axis(axis, "argsort")
        return cast(as_tensor(0), dtypes.int64)
    return apply("argsort", (x,), {"axis": axis, "descending": bool(descending)})


def sort(x, axis=-1, descending=False, stable=False, name=None) -> Tensor:
    """x sorted along `axis`, as `argsort` orders it (a 0-D x gives a copy); the
    gradient goes back to where each element came from."""
    from .manipulation import clone
    x = as_tensor(x)
    axis = _int_arg(axis, "axis", "sort")
    if x.ndim == 0:
        _scalar_axis(axis, "sort")
        return clone(x)
    return apply("take_along_axis", (x, argsort(x, axis, descending)), {"axis": axis})


def topk(x, k, axis=None, largest=True, sorted=True, name=None):  # noqa: A002
    """The `k` largest (or smallest) elements along `axis` (default -1), sorted, and
    their int64 indices; k must be in [1, size of the axis] (1 for a 0-D x), as
    Paddle checks. With `sorted=False` they are sorted too (one of the orders Paddle
    allows), and among equal elements the first in x's order are taken, where
    Paddle's heap-based selection may pick and order others."""
    from .manipulation import clone, slice as slice_
    x = as_tensor(x)
    axis = -1 if axis is None else _int_arg(axis, "axis", "topk")
    k = _checked_k(x, k, axis, "topk")
    if x.ndim == 0:
        return clone(x), cast(as_tensor(0), dtypes.int64)
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
           dtype="int64", sorted=True, name=None):  # noqa: A002  (Paddle's name)
    """The sorted distinct elements of x (flattened unless `axis`; every NaN is one of
    them, as in Paddle), and as asked the first index of each, the inverse mapping and
    the counts (in `dtype`). `sorted=False` gives them sorted too, as Paddle 3.3.1's
    CPU kernel does (sorted order is one of the orders it allows)."""
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


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None,
                       dtype="int64", name=None):
    """x with each run of equal consecutive elements (or slices along `axis`; x is
    flattened when None, a 0-d x giving [1]) kept once, and as asked the inverse
    mapping (the run of each element or slice) and each run's length, in `dtype`.
    NaN equals nothing, so each NaN is a run of its own, as in Paddle. As in Paddle
    the result records no gradient."""
    from .creation import full_like
    from .logic import not_equal
    from .manipulation import concat, diff, index_select, moveaxis, reshape
    from .math import any as any_, cumsum, subtract, sum as sum_
    x = as_tensor(x).detach()
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis = int(axis) % x.ndim
    rows = moveaxis(x, axis, 0)
    changed = not_equal(rows, concat([rows[:1], rows[:-1]], axis=0))
    if rows.ndim > 1:
        changed = any_(changed, axis=list(range(1, rows.ndim)))
    starts = concat([full_like(changed[:1], True), changed[1:]], axis=0)
    positions = flat_positions(starts)
    extras = []
    if return_inverse:
        extras.append(cast(subtract(cumsum(cast(starts, dtypes.int64)), 1), dtype))
    if return_counts:
        length = reshape(sum_(full_like(starts, 1, dtypes.int64)), [1])
        extras.append(cast(diff(positions, append=length), dtype))
    out = index_select(x, positions, axis)
    return (out, *extras) if extras else out


def mode(x, axis=-1, keepdim=False, name=None):
    """The most frequent value along `axis` and its int64 index, as Paddle's: among
    equally frequent values the smallest, at its last position in x (where Paddle,
    sorting with an unstable sort, puts it for up to 16 elements; beyond that its
    index among equal values is unspecified). Each NaN counts once and sorts after
    the numbers, so NaN is the mode only of all-NaN slices (at its first position).
    The value is read at the index, so the gradient goes to that element. Every
    element is compared with every other along the axis (memory: n**2 per slice)."""
    from ..errors import DTypeError
    from .creation import full_like
    from .logic import equal, greater_equal, isnan, select
    from .manipulation import moveaxis, reshape, squeeze, take_along_axis, unsqueeze
    from .math import add, cumsum, max as max_, subtract, sum as sum_
    x = as_tensor(x)
    if x.dtype.kind not in ("int", "float"):
        raise DTypeError(f"mode: x must be an int or float tensor, as in Paddle, got "
                         f"{x.dtype.name}")
    if x.ndim == 0:
        return mode(reshape(x, [1]), 0)
    axis = int(axis) % x.ndim
    moved = moveaxis(x, axis, -1)
    same = equal(unsqueeze(moved, -1), unsqueeze(moved, -2))
    counts = add(sum_(cast(same, dtypes.int64), -1), cast(isnan(moved), dtypes.int64))
    order = argsort(moved, -1)  # stable, NaN last: the first most frequent is the smallest
    first = argmax(take_along_axis(counts, order, -1), -1, keepdim=True)
    chosen = take_along_axis(order, first, -1)
    positions = subtract(cumsum(full_like(moved, 1, dtypes.int64), -1), 1)
    matches = equal(moved, take_along_axis(moved, chosen, -1))
    last = max_(select(matches, positions, full_like(positions, -1)), -1, keepdim=True)
    index = select(greater_equal(last, 0), last, chosen)  # a NaN matches nothing: its own
    value = take_along_axis(moved, index, -1)
    value, index = moveaxis(value, -1, axis), moveaxis(index, -1, axis)
    if keepdim:
        return value, index
    return squeeze(value, [axis]), squeeze(index, [axis])


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
    from .logic import isnan, less_equal, less_than, logical_not, select
    from .manipulation import exact_shape, take_along_axis, unsqueeze
    from .math import sum as sum_
    seq, values = as_tensor(sorted_sequence), as_tensor(values)
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    if sorter is not None:
        seq = take_along_axis(seq, sorter, -1)
    seq, values = _comparable(seq, values)
    if seq.ndim > 1 and tuple(exact_shape(seq))[:-1] != tuple(exact_shape(values))[:-1]:
        raise ShapeError(f"searchsorted: an N-D sorted_sequence (shape "
                         f"{list(exact_shape(seq))}) needs values with the same leading dims, "
                         f"as in Paddle, got shape {list(exact_shape(values))}")
    seq = seq if seq.ndim == 1 else unsqueeze(seq, -2)
    column = unsqueeze(values, -1)
    dtype = dtypes.int32 if out_int32 else dtypes.int64
    count = sum_(cast((less_equal if right else less_than)(seq, column), dtype), axis=-1,
                 dtype=dtype)
    if not (values.dtype.is_float or seq.dtype.is_float):
        return count
    # Paddle's binary searches over a sequence whose NaNs sort last: a NaN value goes
    # after everything, and so does a value (right) no number of the sequence exceeds
    last = _last_position(seq, count)
    if right:
        numbers = sum_(cast(logical_not(isnan(seq)), dtype), axis=-1, dtype=dtype)
        count = select(less_than(count, numbers), count, last)
    return select(isnan(values), last, count) if values.dtype.is_float else count


def _comparable(seq: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
    """The sequence and values in one dtype for comparing, as Paddle's kernel compares
    elements of two dtypes (C++'s conversions: an int to the other's float type, two
    ints as int64), where irflow's promotion refuses to mix them."""
    if seq.dtype is values.dtype or (seq.dtype.is_float and values.dtype.is_float):
        return seq, values
    if seq.dtype.is_float:
        return seq, cast(values, seq.dtype)
    if values.dtype.is_float:
        return cast(seq, values.dtype), values
    return cast(seq, dtypes.int64), cast(values, dtypes.int64)


def _last_position(seq: Tensor, count: Tensor) -> Tensor:
    """The position after the whole sequence (its last axis's size) in count's dtype
    and shape; a symbolic size, which is no number while tracing, is read when the
    program runs."""
    from .creation import full_like
    from .manipulation import _traced_size, broadcast_to, exact_shape
    length = exact_shape(seq)[-1]
    if isinstance(length, int):
        return full_like(count, length)
    length = cast(_traced_size(seq, seq.ndim - 1), count.dtype)
    return broadcast_to(length, exact_shape(count))


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
    from .manipulation import clone, slice as slice_, squeeze, take_along_axis
    x = as_tensor(x)
    axis = -1 if axis is None else _int_arg(axis, "axis", "kthvalue")
    k = _checked_k(x, k, axis, "kthvalue")
    if x.ndim == 0:
        return clone(x), cast(as_tensor(0), dtypes.int64)
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
    from .logic import equal, select
    from .manipulation import concat, unsqueeze
    from .math import max as max_, maximum, sum as sum_
    x = as_tensor(x)
    if x.dtype.kind != "int":
        raise DTypeError(f"bincount: x must be an int tensor, as in Paddle, got {x.dtype.name}")
    if x.ndim != 1:
        raise ShapeError(f"bincount: x must be 1-D, as in Paddle, got shape {list(x.shape)}")
    if x._value is not None and x._value.size and x._value.min() < 0:
        raise InputError("bincount: the elements of x must be non-negative, as in Paddle, "
                         f"got {x._value.min()}")
    # the maximum of x and -1, so that an empty x (whose max NumPy refuses) spans 0
    largest = max_(concat([cast(x, dtypes.int64), as_tensor([-1])]))
    length = maximum(largest + 1, as_tensor(int(minlength)))
    hits = equal(unsqueeze(x, -1), arange(length, dtype=x.dtype))
    if weights is None:
        return sum_(cast(hits, dtypes.int64), axis=0)
    weights = as_tensor(weights)
    if weights.dtype.kind != "float":
        weights = cast(weights, dtypes.float64)
    zero = cast(as_tensor(0), weights.dtype)
    return sum_(select(hits, unsqueeze(weights, -1), zero), axis=0)
