"""Statistics of Paddle's tensor API: medians and quantiles, and the reductions that
skip NaN (nansum, nanmean) or count (count_nonzero).

Medians and quantiles are order statistics: the reduced axes are moved last and
flattened into one, each row is sorted (`argsort`, which puts NaN last) and the
quantile is read at its position in the sorted row (`take_along_axis`), so they run
eagerly, differentiate (the gradient reaches the elements read) and compile from
existing ops. The positions are computed in x's float dtype (float32 for other
dtypes), as Paddle computes them, and per row, so that the NaN-skipping forms count
each row's own numbers.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from .convert import as_tensor, cast, to_array
from .logic import (equal, greater_than, isfinite, isnan, logical_and, logical_not,
                    logical_or, select)
from .manipulation import _traced_size, exact_shape, moveaxis, reshape, take_along_axis, transpose
from .math import (_axis, add, any, ceil, divide, floor, lerp, maximum, multiply, round,
                   subtract, sum)
from .search import argmax, argsort
from .tensor import Tensor

_INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")
_MEDIAN_MODES = ("avg", "min")


# ---------------------------------------------------------------- quantiles

def quantile(x, q, axis=None, keepdim=False, interpolation="linear", name=None) -> Tensor:
    """The `q`-th quantiles of x over `axis` (an int, a list of ints, or None for all
    axes), as Paddle's: `q` a number in [0, 1], a list of them or a 0-D / 1-D tensor;
    a list gives the quantiles stacked along a new first axis. `interpolation` is how
    a position between two sorted elements reads: 'linear' (default), 'lower',
    'higher', 'nearest' (halves to even) or 'midpoint'. A row holding NaN gives NaN.
    Integer x works with 'lower', 'higher' and 'nearest' (and keeps its dtype);
    'linear' and 'midpoint' need a float x, as in Paddle."""
    return _quantile(x, q, axis, keepdim, interpolation, skip_nan=False, what="quantile")


def nanquantile(x, q, axis=None, keepdim=False, interpolation="linear") -> Tensor:
    """`quantile` ignoring NaN: each row's quantile among its numbers; a row of NaN
    alone gives NaN."""
    return _quantile(x, q, axis, keepdim, interpolation, skip_nan=True, what="nanquantile")


def _quantile(x, q, axis, keepdim, interpolation, skip_nan: bool, what: str) -> Tensor:
    x = as_tensor(x)
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{what}: interpolation must be one of 'linear', 'lower', 'higher', "
                         f"'nearest' or 'midpoint', as in Paddle, got {interpolation!r}")
    if interpolation in ("linear", "midpoint") and not x.dtype.is_float:
        raise TypeError(f"{what}: interpolation {interpolation!r} needs a float tensor, as in "
                        f"Paddle, got {x.dtype.name}; cast it, or use 'lower', 'higher' or "
                        "'nearest'")
    axes = _quantile_axes(x, axis, what)
    rows = _SortedRows(_rows(x, axes), skip_nan)
    levels, single = _levels(q, rows.work, what)
    values = rows.read(rows.positions(levels), interpolation)
    return _shaped(values, x, axes, keepdim, single)


def _quantile_axes(x: Tensor, axis, what: str) -> tuple:
    """The reduced axes, non-negative and sorted (all of them for None)."""
    axes = _axis(axis)
    if axes is None:
        return tuple(range(x.ndim))
    if not all(-x.ndim <= int(a) < x.ndim for a in axes):
        raise ValueError(f"{what}: axis {axis} is out of range for a tensor of rank {x.ndim}: "
                         f"each axis must be in [-{x.ndim}, {x.ndim}), as in Paddle")
    normal = sorted(int(a) % x.ndim for a in axes)
    if len(set(normal)) != len(normal):
        raise ValueError(f"{what}: axis {axis} repeats an axis, as Paddle refuses")
    return tuple(normal)


def _levels(q, work: dtypes.DType, what: str) -> tuple[Tensor, bool]:
    """`q` as a 1-D tensor of levels in `work`, and whether it was one number (the
    result then has no axis of levels). Levels known now are checked to be in [0, 1]."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"{what}: q must be a number, a list or a 0-D or 1-D tensor, as "
                             f"in Paddle, got a tensor of shape {list(q.shape)}")
        known = None if q._value is None else q._value.reshape(-1).tolist()
        levels, single = cast(reshape(q, [-1]), work), q.ndim == 0
    elif isinstance(q, list | tuple):
        if not q:
            raise ValueError(f"{what}: q is empty; give at least one level in [0, 1]")
        known, single = [float(v) for v in q], False
        levels = Tensor._from_array(to_array(known, work))
    else:
        known, single = [float(q)], True
        levels = Tensor._from_array(to_array(known, work))
    if known is not None and not all(0 <= v <= 1 for v in known):
        raise ValueError(f"{what}: q must be in [0, 1], as in Paddle, got {q}")
    return levels, single


def _rows(x: Tensor, axes: tuple) -> Tensor:
    """x with the reduced `axes` moved last and flattened into one axis."""
    kept = [a for a in range(x.ndim) if a not in axes]
    perm = kept + list(axes)
    moved = x if perm == sorted(perm) else transpose(x, perm)
    shape = exact_shape(x)
    return reshape(moved, [shape[a] for a in kept] + [-1])


class _SortedRows:
    """Rows sorted along their last axis, NaN last, with how many elements of each
    count: all of them, or with `skip_nan` its numbers (then a [..., 1] tensor)."""

    def __init__(self, rows: Tensor, skip_nan: bool):
        self.rows, self.skip_nan = rows, skip_nan
        self.work = rows.dtype if rows.dtype in (dtypes.float32, dtypes.float64) \
            else dtypes.float32
        self.order = argsort(rows, axis=-1)
        self.sorted = take_along_axis(rows, self.order, -1)
        self.nan = isnan(rows)
        self.counts = self._counts()

    def _counts(self) -> Tensor:
        if self.skip_nan:
            return sum(cast(logical_not(self.nan), self.work), -1, keepdim=True)
        size = exact_shape(self.rows)[-1]
        if size == 0:
            raise ValueError("the median or quantile of an empty tensor (or of an empty "
                             "axis) is not defined; irflow refuses it")
        if isinstance(size, int):
            return Tensor._from_array(to_array(float(size), self.work))
        return cast(_traced_size(self.rows, self.rows.ndim - 1), self.work)

    def positions(self, levels: Tensor) -> Tensor:
        """Each level's fractional position in its sorted row: [..., Q] for rows
        [..., n] (its leading axes of size 1 when every row counts the same); 0 for a
        row with nothing to count. Unless NaN is skipped, a row holding NaN reads its
        last element, a NaN (NaN sorts last), as Paddle's quantile does: the result
        is NaN and its gradient goes to that element."""
        levels = reshape(levels, [1] * (self.rows.ndim - 1) + [-1])
        last = subtract(self.counts, 1)
        positions = maximum(multiply(levels, last), 0)
        if self.skip_nan or not self.rows.dtype.is_float:
            return positions
        return select(any(self.nan, -1, keepdim=True), last, positions)

    def at(self, positions: Tensor) -> Tensor:
        """The sorted elements at whole `positions` (a float tensor)."""
        return take_along_axis(self.sorted, cast(positions, dtypes.int64), -1)

    def read(self, positions: Tensor, interpolation: str) -> Tensor:
        """The quantiles at `positions`, read from the sorted rows as `interpolation`
        says."""
        if interpolation == "lower":
            return self.at(floor(positions))
        if interpolation == "higher":
            return self.at(ceil(positions))
        if interpolation == "nearest":
            return self.at(round(positions))
        low, high = self.at(floor(positions)), self.at(ceil(positions))
        if interpolation == "midpoint":
            return multiply(add(low, high), 0.5)
        weight = cast(subtract(positions, floor(positions)), low.dtype)
        return lerp(low, high, weight)

    def index_at(self, positions: Tensor) -> Tensor:
        """The position along the reduced axis of the element `read(positions,
        'lower')` reads: of the first NaN in a row holding one when NaN is not
        skipped, -1 for a row of NaN alone when it is (Paddle's indices)."""
        index = take_along_axis(self.order, cast(floor(positions), dtypes.int64), -1)
        if self.skip_nan:
            return select(equal(self.counts, 0), as_tensor(-1, like=index), index)
        if not self.rows.dtype.is_float:
            return index
        has_nan = any(self.nan, -1, keepdim=True)
        return select(has_nan, argmax(cast(self.nan, dtypes.int32), -1, keepdim=True), index)


def _shaped(values: Tensor, x: Tensor, axes: tuple, keepdim: bool, single: bool) -> Tensor:
    """Quantiles [..., Q] of the rows of x in Paddle's shape: the levels first (unless
    `single`), then x's kept axes (the reduced ones as 1s with `keepdim`)."""
    shape = exact_shape(x)
    kept = [1 if a in axes else d for a, d in enumerate(shape) if keepdim or a not in axes]
    values = moveaxis(values, -1, 0)
    return reshape(values, kept if single else [-1] + kept)


# ---------------------------------------------------------------- medians

def median(x, axis=None, keepdim=False, mode="avg", name=None):
    """The median of x over `axis` (an int, or None for all of x), as Paddle's.

    mode 'avg' (default) averages the two middle elements of an even count; the
    result is float64 for float64 x and float32 for any other dtype. mode 'min'
    takes the lower of them and keeps x's dtype; over one axis it also returns the
    int64 indices of the medians along it, as ``(values, indices)``. A row holding
    NaN gives NaN (its index: the first NaN's). Among equal elements the index is
    the first in x's order, where Paddle's may be another of them."""
    x = as_tensor(x)
    _check_mode(mode, "median")
    axes = _median_axes(x, axis)
    if mode == "avg":
        work = dtypes.float64 if x.dtype is dtypes.float64 else dtypes.float32
        return _median_avg(cast(x, work), axes, keepdim, skip_nan=False)
    return _median_min(x, axes, keepdim, skip_nan=False, with_index=axis is not None)


def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    """`median` ignoring NaN: each row's median among its numbers, NaN for a row of
    NaN alone. `axis` may also be a list of axes. Unlike median, mode 'avg' keeps
    x's dtype (an int median truncates toward zero, as Paddle's); mode 'min' over one
    int axis returns ``(values, indices)``, the index -1 for a row of NaN alone."""
    x = as_tensor(x)
    _check_mode(mode, "nanmedian")
    axes = _quantile_axes(x, axis, "nanmedian")
    if mode == "min":
        return _median_min(x, axes, keepdim, skip_nan=True, with_index=isinstance(axis, int))
    if x.dtype.is_float:
        return _median_avg(x, axes, keepdim, skip_nan=True)
    return cast(_median_avg(cast(x, dtypes.float64), axes, keepdim, skip_nan=True), x.dtype)


def _check_mode(mode, what: str) -> None:
    if mode not in _MEDIAN_MODES:
        raise ValueError(f"{what}: mode must be 'avg' or 'min', as in Paddle, got {mode!r}")


def _median_axes(x: Tensor, axis) -> tuple:
    """median's reduced axes: all for None, else the one int axis (of a 0-D x, 0 or
    -1, as Paddle accepts)."""
    if axis is None:
        return tuple(range(x.ndim))
    rank = max(x.ndim, 1)
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer) or \
            not -rank <= axis < rank:
        raise ValueError(f"median: axis must be None or an int in [-{rank}, {rank}), as in "
                         f"Paddle, got {axis!r}")
    return (int(axis) % x.ndim,) if x.ndim else ()


def _middle(x: Tensor, axes: tuple, skip_nan: bool) -> tuple[_SortedRows, Tensor]:
    """The sorted rows of x over `axes` and the position of the median in each."""
    rows = _SortedRows(_rows(x, axes), skip_nan)
    half, _ = _levels(0.5, rows.work, "median")
    return rows, rows.positions(half)


def _median_avg(x: Tensor, axes: tuple, keepdim: bool, skip_nan: bool) -> Tensor:
    rows, positions = _middle(x, axes, skip_nan)
    value = _shared_among_ties(rows, rows.read(positions, "midpoint"))
    return _shaped(value, x, axes, keepdim, True)


def _median_min(x: Tensor, axes: tuple, keepdim: bool, skip_nan: bool, with_index: bool):
    """The lower median, and with `with_index` its index too. With the index the
    value is read at it, so that, as in Paddle, the gradient goes to the element the
    index names (for a row holding NaN, its first NaN, where the sorted row's middle
    is its last); an index of -1 (a row of NaN alone, skipped) names none, and that
    row's NaN is read from the sorted row."""
    rows, positions = _middle(x, axes, skip_nan)
    value = rows.read(positions, "lower")
    if not with_index:
        return _shaped(_shared_among_ties(rows, value), x, axes, keepdim, True)
    index = rows.index_at(positions)
    if not skip_nan:
        value = take_along_axis(rows.rows, index, -1)
    return _shaped(value, x, axes, keepdim, True), _shaped(index, x, axes, keepdim, True)


def _shared_among_ties(rows: _SortedRows, value: Tensor) -> Tensor:
    """The medians `value` [..., 1] with the gradient of each shared equally among
    the elements of its row equal to it, as Paddle's median and nanmedian give it
    (which of several equal elements sorts to the middle is arbitrary, so each gets
    the same share). Equal means as values, inf to inf, and NaN to NaN: a median of
    NaN shares it among the row's NaNs. A median equal to no element (the average
    of two different middle ones) keeps the gradient of the elements it was read
    from. The value is unchanged: a finite median adds ``x - x.detach()``, exactly
    0, over its equals; a non-finite one is their weighted sum, which is inf, -inf
    or NaN as they are. An x that needs no gradient skips it."""
    x = rows.rows
    if not x.dtype.is_float or x.stop_gradient:  # no gradient to share
        return value
    fixed = value.detach()
    tie = logical_or(equal(x, fixed), logical_and(rows.nan, isnan(fixed)))
    count = sum(cast(tie, value.dtype), -1, keepdim=True)
    share = divide(1.0, maximum(count, 1))
    zero = as_tensor(0.0, like=x)
    finite = isfinite(fixed)
    moved = sum(select(logical_and(tie, finite), subtract(x, x.detach()), zero), -1,
                keepdim=True)
    exact = add(fixed, multiply(moved, share))
    weighted = sum(select(tie, multiply(x, share), zero), -1, keepdim=True)
    shared = select(finite, exact, weighted)
    return select(greater_than(count, 0), shared, value)


# ---------------------------------------------------------------- reductions skipping NaN

def nansum(x, axis=None, dtype=None, keepdim=False, name=None) -> Tensor:
    """The sum of x over `axis` counting NaN as zero (`sum`'s dtypes: int32 sums to
    int64 unless `dtype` says otherwise)."""
    x = as_tensor(x)
    _check_not_bool(x, "nansum")
    return sum(_nan_as_zero(x), axis, dtype, keepdim)


def nanmean(x, axis=None, keepdim=False, name=None) -> Tensor:
    """The mean of x's numbers over `axis`, ignoring NaN (NaN where a row has
    nothing else). Integer x gives float32, as in Paddle."""
    x = as_tensor(x)
    _check_not_bool(x, "nanmean")
    if not x.dtype.is_float:
        x = cast(x, dtypes.float32)
    counted = cast(logical_not(isnan(x)), x.dtype)
    return divide(sum(_nan_as_zero(x), axis, keepdim=keepdim), sum(counted, axis, keepdim=keepdim))


def count_nonzero(x, axis=None, keepdim=False, name=None) -> Tensor:
    """The number of nonzero elements of x over `axis`, int64 (NaN counts)."""
    x = as_tensor(x)
    return sum(cast(x, dtypes.bool_), axis, dtypes.int64, keepdim)


def _nan_as_zero(x: Tensor) -> Tensor:
    if not x.dtype.is_float:
        return x
    return select(isnan(x), as_tensor(0, like=x), x)


def _check_not_bool(x: Tensor, what: str) -> None:
    if x.dtype.is_bool:
        raise TypeError(f"{what}: x is a bool tensor, which Paddle does not take; cast it "
                        "to a number dtype first")
