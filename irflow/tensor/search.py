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
