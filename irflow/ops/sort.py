"""Sorting and searching: `argsort`, and the ops whose result size depends on the
data, `nonzero` and `unique`.

`argsort` gives indices only; sorted values and `topk` are `take_along_axis` of
them (in `irflow.tensor.search`), so their gradient is that op's VJP. Ties keep
their original order, ascending or descending (Paddle's order for both).

`nonzero` and `unique` take their result length as the attribute ``size``: eagerly
the caller counts it from the operand's value; while tracing it is a fresh symbol
(`Tracer.fresh_dim`), bound from the result when the program runs, as for `range`.
Neither is differentiable (their results are indices, or values chosen by
comparison: Paddle's `unique` has no gradient either).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import dtypes
from ..ir.registry import REQUIRED
from ..ir.types import TensorType, normalize_dim, numel
from ._rules import check_kind, defop, norm_axis


def _axis_canon(attrs, types):
    return {**attrs, "axis": norm_axis(attrs["axis"], types[0].rank)}


def _argsort_infer(types, attrs):
    (t,) = types
    check_kind(t, "any")
    return TensorType(dtypes.int64, t.shape)


def _argsort_kernel(x, axis, descending):
    if x.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Stable descending: sort the reversed axis ascending and read the order backwards,
    # so equal elements keep their original order.
    n = x.shape[axis]
    order = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return (n - 1 - order).astype(np.int64)


defop("argsort", _argsort_infer, _argsort_kernel, arity=1,
      attrs={"axis": -1, "descending": False}, canonicalize=_axis_canon, nondiff=True,
      doc="argsort(x) {axis, descending}: the int64 indices that sort x along `axis` "
          "(default -1), ascending unless `descending`; equal elements keep their order. "
          "Same shape as x")


def _size_canon(attrs, types):
    return {**attrs, "size": normalize_dim(attrs["size"])}


def _nonzero_infer(types, attrs):
    (t,) = types
    check_kind(t, "any")
    return TensorType(dtypes.int64, (attrs["size"], t.rank))


def _nonzero_kernel(x, size):
    out = np.argwhere(x)
    if isinstance(size, int) and out.shape[0] != size:
        raise ShapeError(f"nonzero: expected {size} nonzero elements, found {out.shape[0]}")
    return out.astype(np.int64)


defop("nonzero", _nonzero_infer, _nonzero_kernel, arity=1, attrs={"size": REQUIRED},
      canonicalize=_size_canon, nondiff=True,
      doc="nonzero(x) {size}: the int64 [size, rank(x)] coordinates of x's nonzero (true) "
          "elements in row-major order. `size`, their count, depends on x's values: a "
          "symbol of its own in compiled code, bound from the result when the op runs")


def _unique_canon(attrs, types):
    axis = attrs["axis"]
    if axis is not None:
        axis = norm_axis(axis, types[0].rank)
    return {"axis": axis, "size": normalize_dim(attrs["size"])}


def _unique_infer(types, attrs):
    (t,) = types
    check_kind(t, "any")
    axis, size = attrs["axis"], attrs["size"]
    if axis is None:
        out, along = (size,), numel(t.shape)
    else:
        out, along = t.shape[:axis] + (size,) + t.shape[axis + 1:], t.shape[axis]
    index = TensorType(dtypes.int64, (size,))
    return (TensorType(t.dtype, out), index, TensorType(dtypes.int64, (along,)), index)


def distinct(x: np.ndarray, axis: int | None, **returns):
    """np.unique of x (flattened when `axis` is None) with every NaN distinct, as
    Paddle's unique counts them (NumPy's default merges them into one)."""
    return np.unique(x.reshape(-1) if axis is None else x, axis=axis, equal_nan=False,
                     **returns)


def _unique_kernel(x, axis, size):
    values, index, inverse, counts = distinct(x, axis, return_index=True,
                                              return_inverse=True, return_counts=True)
    return values, index.astype(np.int64), inverse.reshape(-1).astype(np.int64), \
        counts.astype(np.int64)


defop("unique", _unique_infer, _unique_kernel, arity=1, attrs={"axis": None, "size": REQUIRED},
      canonicalize=_unique_canon, nondiff=True,
      doc="unique(x) {axis, size}: four results: the sorted distinct elements of x "
          "(flattened when `axis` is None, else the distinct slices along `axis`; each "
          "NaN is distinct, as in Paddle), the "
          "index of each one's first occurrence, the inverse (for every element or slice "
          "of x, the position of its value among the distinct ones) and the counts, all "
          "int64 but the first. `size`, the number of distinct values, depends on x's "
          "values: a symbol of its own in compiled code. Not differentiable")
