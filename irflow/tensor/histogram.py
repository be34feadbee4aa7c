"""Paddle's histograms: `histogram` (the counts, or weights, per bin) and
`histogram_bin_edges` in one dimension, and `histogramdd` over points in D.

`histogram` follows Paddle's CPU kernel: the range and each element's bin are computed
in the input's dtype (integer division for int inputs, whose `min` and `max` are
truncated toward zero), an element at exactly `max` goes into the last bin, and NaN
or elements outside the range are dropped. The bin of each kept element is scattered
into the counts with `index_add`, so the function runs eagerly and compiles from
existing ops; it has no gradient, as in Paddle.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DTypeError, InputError, ShapeError
from ..ir import dtypes
from .convert import as_tensor, cast
from .creation import linspace, ones_like, zeros
from .logic import equal, greater_equal, isnan, less_equal, logical_and, select
from .manipulation import exact_shape, index_add, reshape, slice as slice_
from .math import (add, divide, floor_divide, max as max_, min as min_, multiply, subtract,
                   sum as sum_)
from .tensor import Tensor

_DTYPES = ("float32", "float64", "int32", "int64")


def histogram(input, bins=100, min=0, max=0, weight=None, density=False,  # noqa: A002
              name=None) -> Tensor:
    """Counts of `input`'s elements in `bins` equal-width bins over [min, max], as
    Paddle's: when min == max the data's own range is used (NaN skipped; Paddle
    raises when the first element is NaN, and skips a later one), and a
    degenerate one widened to [v - 1, v + 1]; the last bin includes `max`. The result
    is int64 counts, or float32 when `weight` (input's shape and dtype; each element
    adds its weight, summed in float32) is given or `density` is set, which scales
    the bins to integrate to 1. Paddle rounds a float64 input's `min` and `max`
    through float32 (histogram(x, min=0.1) of a float64 x drops 0.1); irflow keeps
    them in float64, and gives an empty input int64 zeros where Paddle gives zeros
    of the input's dtype."""
    x = _checked_input(input, "histogram")
    bins = _checked_bins(bins, "histogram")
    weighted = weight is not None
    out_dtype = dtypes.float32 if weighted or density else dtypes.int64
    x = reshape(x, (-1,))
    if weighted:
        weight = _checked_weight(weight, input, x, "histogram")
    if exact_shape(x)[0] == 0:
        return zeros((bins,), out_dtype)
    lo, hi = _kernel_range(x, float(min), float(max))
    kept = logical_and(greater_equal(x, lo), less_equal(x, hi))
    index = _bin_index(select(kept, x, lo), lo, hi, bins)
    ones = weight if weighted else cast(as_tensor(1), out_dtype)
    counts = index_add(zeros((bins,), out_dtype), index, 0,
                       select(kept, cast(ones, out_dtype), cast(as_tensor(0), out_dtype)))
    if not density:
        return counts
    width = cast(subtract(hi, lo), dtypes.float32)
    return multiply(counts, divide(divide(cast(as_tensor(float(bins)), dtypes.float32), width),
                                   sum_(counts)))


def histogram_bin_edges(input, bins=100, min=0, max=0, name=None) -> Tensor:  # noqa: A002
    """The `bins` + 1 float32 edges from min to max, as Paddle's: when both are 0 the
    data's min and max are used, and a degenerate range v..v becomes v - 0.5..v + 0.5.
    These are Paddle's rules for this function; Paddle's `histogram` itself widens a
    degenerate range to v - 1..v + 1 and uses the data's range whenever min == max,
    so in those cases the two disagree, in Paddle and here alike."""
    x = _checked_input(input, "histogram_bin_edges")
    bins = _checked_bins(bins, "histogram_bin_edges")
    lo, hi = float(min), float(max)
    if lo == 0.0 and hi == 0.0:
        lo, hi = min_(x), max_(x)
    elif hi < lo:
        raise InputError(f"histogram_bin_edges: max must be at least min, got min={lo}, "
                         f"max={hi}")
    if isinstance(lo, Tensor):
        same = equal(lo, hi)
        lo, hi = select(same, subtract(lo, 0.5), lo), select(same, add(hi, 0.5), hi)
    elif lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, bins + 1, dtype="float32")


def _checked_input(input, what: str) -> Tensor:  # noqa: A002
    x = as_tensor(input)
    if x.dtype.name not in _DTYPES:
        raise DTypeError(f"{what}: input must be one of {', '.join(_DTYPES)}, as in Paddle, "
                         f"got {x.dtype.name}")
    return x


def _checked_bins(bins, what: str) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InputError(f"{what}: bins must be an int of at least 1, as in Paddle, "
                         f"got {bins!r}")
    return int(bins)


def _checked_weight(weight, input, flat: Tensor, what: str) -> Tensor:  # noqa: A002
    weight = as_tensor(weight)
    if weight.dtype != flat.dtype:
        raise DTypeError(f"{what}: weight must have input's dtype {flat.dtype.name}, as in "
                         f"Paddle, got {weight.dtype.name}")
    if tuple(exact_shape(weight)) != tuple(exact_shape(as_tensor(input))):
        raise ShapeError(f"{what}: weight must have input's shape "
                         f"{list(exact_shape(as_tensor(input)))}, got "
                         f"{list(exact_shape(weight))}")
    return reshape(weight, (-1,))


def _kernel_range(x: Tensor, lo: float, hi: float):
    """The kernel's [lo, hi] as 0-D tensors of x's dtype: the given bounds (truncated
    toward zero for an int x), else the data's range without NaN, widened by 1 each
    way when it is a single value."""
    if x.dtype.is_int:
        lo, hi = math.trunc(lo), math.trunc(hi)
    if lo != hi:
        if hi < lo:
            raise InputError(f"histogram: max must be at least min, got min={lo}, max={hi}")
        _check_finite(lo, hi)
        return as_tensor(np.asarray(lo, x.dtype.np)), as_tensor(np.asarray(hi, x.dtype.np))
    inf = cast(as_tensor(np.inf if x.dtype.is_float else np.iinfo(x.dtype.np).max), x.dtype)
    nan = isnan(x)
    lo_t = min_(select(nan, inf, x))
    hi_t = max_(select(nan, multiply(inf, -1), x))
    if lo_t._value is not None:
        _check_finite(float(lo_t._value), float(hi_t._value))
    same = equal(lo_t, hi_t)
    return select(same, subtract(lo_t, 1), lo_t), select(same, add(hi_t, 1), hi_t)


def _check_finite(lo: float, hi: float):
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputError(f"histogram: the range must be finite, as in Paddle, got "
                         f"[{lo}, {hi}]")


def _bin_index(x: Tensor, lo: Tensor, hi: Tensor, bins: int) -> Tensor:
    """Each in-range element's bin, ``(x - lo) * bins / (hi - lo)`` truncated, computed
    in x's dtype as the kernel does (so in integers for an int x), with `hi` itself in
    the last bin."""
    if x.dtype.is_int:
        x, lo, hi = (cast(v, dtypes.int64) for v in (x, lo, hi))
        index = floor_divide(multiply(subtract(x, lo), bins), subtract(hi, lo))
    else:
        scaled = multiply(subtract(x, lo), cast(as_tensor(float(bins)), x.dtype))
        index = cast(divide(scaled, subtract(hi, lo)), dtypes.int64)
    return select(equal(index, bins), cast(as_tensor(bins - 1), dtypes.int64), index)


def histogramdd(x, bins=10, ranges=None, density=False, weights=None, name=None):
    """The histogram of the points in the rows of x (its last axis is each point's D
    coordinates; the other axes are flattened), and the D 1-D tensors of bin edges,
    as Paddle's: `bins` an int for every dimension, a list of ints, or a sequence of
    D 1-D edge tensors of x's dtype; `ranges` [min_0, max_0, min_1, ...] (by default
    each dimension's min and max, not widened when they are equal). A point at the
    last edge of a dimension falls in its last bin; a point outside the edges, or
    with a NaN coordinate, is dropped. The result, in x's dtype, sums `weights`
    (x's shape without the last axis) or counts; `density` divides it by the total
    and by each bin's volume. Each point's bin is found with `searchsorted` and its
    weight scattered with `index_add` into the bins plus one under- and one overflow
    bin per dimension, which are then cut off, so it compiles like any composition."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"histogramdd: x must have at least 2 dims (points in its rows), "
                         f"as in Paddle, got shape {list(exact_shape(x))}")
    if x.dtype.name not in ("float32", "float64"):
        raise DTypeError(f"histogramdd: x must be float32 or float64, as in Paddle, got "
                         f"{x.dtype.name}")
    dims = exact_shape(x)[-1]
    points = reshape(x, (-1, dims))
    edges = _dd_edges(points, bins, ranges, dims)
    sizes = [exact_shape(edge)[0] + 1 for edge in edges]
    index = None
    for axis, edge in enumerate(edges):
        position = _dd_bin(points[:, axis], edge)
        index = position if index is None else add(multiply(index, sizes[axis]), position)
    values = ones_like(index, x.dtype) if weights is None else _dd_weights(weights, x)
    total = index_add(zeros((math.prod(sizes),), x.dtype), index, 0, values)
    hist = slice_(reshape(total, sizes), list(range(dims)), [1] * dims,
                  [size - 1 for size in sizes])
    if density:
        hist = _dd_density(hist, edges)
    return hist, edges


def _dd_edges(points: Tensor, bins, ranges, dims: int) -> list:
    """histogramdd's D 1-D edge tensors: given ones (checked), or `bins` + 1 evenly
    spaced from each dimension's range."""
    if isinstance(bins, (list, tuple)) and bins and all(isinstance(b, Tensor) for b in bins):
        return [_dd_given_edges(edge, points.dtype, dims, len(bins)) for edge in bins]
    counts = [bins] * dims if isinstance(bins, (int, np.integer)) else list(bins)
    if len(counts) != dims:
        raise InputError(f"histogramdd: bins must give one count per dimension ({dims}), "
                         f"got {bins!r}")
    counts = [_checked_bins(count, "histogramdd") for count in counts]
    if ranges is None:
        lows, highs = min_(points, axis=0), max_(points, axis=0)
        bounds = [(lows[axis], highs[axis]) for axis in range(dims)]
    else:
        ranges = [float(v) for v in ranges]
        if len(ranges) != 2 * dims:
            raise InputError(f"histogramdd: ranges must hold a min and a max per dimension "
                             f"({2 * dims} numbers), got {len(ranges)}")
        bounds = list(zip(ranges[::2], ranges[1::2]))
    return [linspace(lo, hi, count + 1, dtype=points.dtype)
            for (lo, hi), count in zip(bounds, counts)]


def _dd_given_edges(edge: Tensor, dtype, dims: int, given: int) -> Tensor:
    if given != dims:
        raise InputError(f"histogramdd: bins must give one edge tensor per dimension "
                         f"({dims}), got {given}")
    if edge.ndim != 1 or edge.dtype != dtype:
        raise DTypeError(f"histogramdd: each edge tensor must be 1-D of x's dtype "
                         f"{dtype.name}, as in Paddle, got {edge.dtype.name} of shape "
                         f"{list(exact_shape(edge))}")
    return edge


def _dd_bin(column: Tensor, edge: Tensor) -> Tensor:
    """Each coordinate's bin among `edge`, counting from 1 (0 and len(edge) are the
    under- and overflow bins): the number of edges at or below it, less one at the
    last edge, which closes the last bin."""
    from .search import searchsorted
    position = searchsorted(edge, column, right=True)
    return select(equal(column, edge[-1]), subtract(position, 1), position)


def _dd_weights(weights, x: Tensor) -> Tensor:
    weights = as_tensor(weights)
    if tuple(exact_shape(weights)) != tuple(exact_shape(x))[:-1]:
        raise ShapeError(f"histogramdd: weights must have x's shape without its last axis, "
                         f"{list(exact_shape(x))[:-1]}, as in Paddle, got "
                         f"{list(exact_shape(weights))}")
    if weights.dtype != x.dtype:
        raise DTypeError(f"histogramdd: weights must have x's dtype {x.dtype.name}, as in "
                         f"Paddle, got {weights.dtype.name}")
    return reshape(weights, (-1,))


def _dd_density(hist: Tensor, edges: list) -> Tensor:
    """The histogram divided by each bin's width along every dimension and by its
    total, in Paddle's order."""
    total = sum_(hist)
    for axis, edge in enumerate(edges):
        widths = subtract(edge[1:], edge[:-1])
        hist = divide(hist, reshape(widths, [-1 if a == axis else 1 for a in range(hist.ndim)]))
    return divide(hist, total)
