"""Resampling: `interpolate` (nearest, linear, bilinear, trilinear, bicubic, area),
`unfold` (im2col) and `fold` (col2im), the non-constant `pad` modes (reflect,
replicate, circular), `pixel_shuffle` and `pixel_unshuffle`, and the spatial
transformer's `affine_grid` and `grid_sample`.

The first three are each a `gather` of positions computed with NumPy from the static
spatial sizes (the linear modes: two gathers per axis mixed by fixed weights,
bicubic: four; "area" is adaptive average pooling; antialiased resizing is a
matmul by a fixed weight matrix per axis), so the gradient is gather's (or matmul's),
and a symbolic batch dim traces; the spatial dims must be static. The pixel shuffles
are reshapes around a transpose, so any dim may be symbolic (the channels must divide
exactly).
"""
from __future__ import annotations

import itertools

import numpy as np

from ...dispatch import user_location
from ...errors import DTypeError, IrflowError, ShapeError
from ...ir.types import dim_div, dim_mul
from ...tensor import (Tensor, clip, clone, expand, floor, gather, index_add, matmul, moveaxis,
                       reshape, round as round_half_even, take_along_axis, transpose,
                       unsqueeze, zeros)
from ...tensor.convert import as_tensor
from ...tensor.logic import select
from ...tensor.manipulation import exact_shape
from .common import check_pixel_options
from .conv import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, pair


def _static(x, axes, what: str) -> list[int]:
    shape = exact_shape(x)
    sizes = [shape[a] for a in axes]
    if not all(isinstance(d, int) for d in sizes):
        raise IrflowError(f"{what} needs static sizes for the axes it resamples, got "
                          f"{[shape[a] for a in axes]}", user_location())
    return sizes


def _index(positions: np.ndarray) -> Tensor:
    return Tensor._from_array(np.ascontiguousarray(positions, dtype=np.int64))


def _take(x, axis: int, positions: np.ndarray):
    return gather(x, _index(positions), axis)


# ---------------------------------------------------------------- interpolate

def _output_sizes(in_sizes, size, scale_factor) -> tuple[list[int], list[float | None]]:
    """Output sizes, and per axis the scale Paddle uses for the source positions
    (1 / scale_factor when a scale factor was given, None: in / out)."""
    n = len(in_sizes)
    if size is not None:
        if isinstance(size, Tensor):
            size = size.tolist()
        size = [int(s.item()) if isinstance(s, Tensor) else int(s)
                for s in ([size] * n if isinstance(size, int) else size)]
        return size, [None] * n
    if scale_factor is None:
        raise ValueError("interpolate: one of size and scale_factor must be set")
    if isinstance(scale_factor, Tensor):
        scale_factor = scale_factor.tolist()
    scales = [float(scale_factor)] * n if isinstance(scale_factor, int | float) \
        else [float(s) for s in scale_factor]
    return [int(d * s) for d, s in zip(in_sizes, scales)], [1.0 / s for s in scales]


def _ratio(in_size: int, out_size: int, scale, align_corners: bool,
           single_at_origin: bool = True) -> float:
    """Source positions per output position. Where the output has size 1, Paddle's
    nearest, bilinear and bicubic kernels (`single_at_origin`) sample at ratio 0,
    whatever the scale, and all kernels do with `align_corners`; its linear and
    trilinear kernels keep the ratio of the sizes (or of the scale factor) there."""
    if out_size == 1 and (single_at_origin or align_corners):
        return 0.0
    if align_corners:
        return (in_size - 1) / (out_size - 1)
    return scale if scale is not None else in_size / out_size


def _nearest(x, axis, in_size, out_size, scale):
    """Paddle's nearest kernel takes source cell floor(ratio * k), in float32: the
    ratio (1 / scale_factor, or in / out) rounded to float32 and multiplied there, so
    a product that float64 puts just below an integer can land on it (100 cells by
    1.3: output 39 reads cell 30, not 29)."""
    if out_size == 1:
        ratio = np.float32(0.0)
    elif scale is not None:
        ratio = np.float32(scale)
    else:
        ratio = np.float32(in_size) / np.float32(out_size)
    positions = (np.arange(out_size, dtype=np.float32) * ratio).astype(np.int64)
    return _take(x, axis, np.minimum(positions, in_size - 1))


def _along(weights: np.ndarray, x, axis: int) -> Tensor:
    """Per-position weights (one per output position on `axis`) as a constant that
    broadcasts against x, in x's dtype."""
    shape = [1] * x.ndim
    shape[axis] = weights.size
    return Tensor._from_array(weights.astype(x.dtype.np).reshape(shape))


def _linear(x, axis, in_size, out_size, scale, align_corners, align_mode,
            single_at_origin: bool = True):
    ratio = _ratio(in_size, out_size, scale, align_corners, single_at_origin)
    dst = np.arange(out_size, dtype=np.float64)
    if align_corners or align_mode == 1:
        src = dst * ratio
    else:  # half-pixel centres
        src = np.maximum(ratio * (dst + 0.5) - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    high = np.minimum(low + 1, in_size - 1)
    w = _along(src - low, x, axis)
    return _take(x, axis, low) * (1.0 - w) + _take(x, axis, high) * w


_CUBIC_A = -0.75  # the cubic convolution coefficient of Paddle's bicubic (and OpenCV's)


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic convolution weights of the taps at floor(src) - 1, ..., + 2, for
    `t` = src - floor(src): the kernel at distances t + 1, t, 1 - t and 2 - t."""
    a = _CUBIC_A

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic(x, axis, in_size, out_size, scale, align_corners):
    """Bicubic resampling along one axis, as Paddle's: source positions half-pixel
    (not clamped at 0, unlike bilinear's) unless `align_corners`, taps beyond the
    border replaced by the border's value. Bicubic is separable, so two passes give
    Paddle's 4x4 taps."""
    ratio = _ratio(in_size, out_size, scale, align_corners)
    dst = np.arange(out_size, dtype=np.float64)
    src = dst * ratio if align_corners else ratio * (dst + 0.5) - 0.5
    base = np.floor(src).astype(np.int64)
    out = None
    for offset, weights in enumerate(_cubic_weights(src - base), start=-1):
        tap = _take(x, axis, np.clip(base + offset, 0, in_size - 1)) * _along(weights, x, axis)
        out = tap if out is None else out + tap
    return out


def _triangle(d: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(d), 0.0)


def _keys_half(d: np.ndarray) -> np.ndarray:
    """Keys' cubic kernel with a = -0.5 (Pillow's, and what antialiased bicubic uses)."""
    d, a = np.abs(d), -0.5
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d < 1, near, np.where(d < 2, far, 0.0))


# per antialiased mode: the filter and its support (in source cells) at scale 1
_ANTIALIAS_FILTERS = {"bilinear": (_triangle, 1.0), "bicubic": (_keys_half, 2.0)}


def _antialias_weights(in_size: int, out_size: int, scale, align_corners: bool,
                       mode: str) -> np.ndarray:
    """The [out, in] matrix of antialiased resampling along one axis (Paddle's
    `interp_antialias`, PyTorch's and Pillow's rule): output cell i centred at source
    position ratio * (i + 0.5) averages the cells within the filter's support around
    it, the filter stretched by the ratio when downsampling, its weights normalized to
    sum to 1. The ratio is (in - 1) / (out - 1) with `align_corners`, else 1 /
    scale_factor, or in / out."""
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = scale if scale is not None else in_size / out_size
    kernel, support = _ANTIALIAS_FILTERS[mode]
    stretch = max(ratio, 1.0)
    support *= stretch
    weights = np.zeros((out_size, in_size))
    for i in range(out_size):
        centre = ratio * (i + 0.5)
        low = max(int(centre - support + 0.5), 0)
        high = min(int(centre + support + 0.5), in_size)
        row = kernel((np.arange(low, high) - centre + 0.5) / stretch)
        total = row.sum()
        weights[i, low:high] = row / total if total != 0 else row
    return weights


def _antialiased(x, axis: int, weights: np.ndarray):
    """x resampled along `axis` by the [out, in] matrix `weights`."""
    matrix = Tensor._from_array(np.ascontiguousarray(weights.T.astype(x.dtype.np)))
    return moveaxis(matmul(moveaxis(x, axis, -1), matrix), -1, axis)


def _resample(x, mode, axis, in_size, out_size, scale, align_corners, align_mode):
    if mode == "nearest":
        return _nearest(x, axis, in_size, out_size, scale)
    if mode == "bicubic":
        return _cubic(x, axis, in_size, out_size, scale, align_corners)
    return _linear(x, axis, in_size, out_size, scale, align_corners, align_mode,
                   single_at_origin=mode == "bilinear")


# the input ranks each mode takes, as Paddle checks them
_MODE_RANKS = {"linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,),
               "nearest": (4, 5), "area": (3, 4, 5)}
# (channels first, channels last) layouts of each rank
_LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _check_mode(x, mode: str) -> None:
    if mode not in _MODE_RANKS:
        raise ValueError(f"interpolate: mode must be one of {sorted(_MODE_RANKS)}, got "
                         f"{mode!r}")
    ranks = _MODE_RANKS[mode]
    if x.ndim not in ranks:
        raise ValueError(f"interpolate: {mode} needs a {' or '.join(map(str, ranks))}-D "
                         f"input, got shape {x.shape}")


def _spatial_axes(ndim: int, data_format) -> range:
    """The resampled axes: all but N and C, C second or last as `data_format` says
    (by default channels first, the layout Paddle infers from the rank)."""
    first, last = _LAYOUTS[ndim]
    layout = (data_format or first).upper()
    if layout not in (first, last):
        raise ValueError(f"interpolate: data_format of a {ndim}-D input must be {first!r} or "
                         f"{last!r}, got {data_format!r}")
    return range(2, ndim) if layout == first else range(1, ndim - 1)


def _area(x, size):
    """Paddle's "area" mode: adaptive average pooling to `size` (channels first,
    whatever `data_format` says, as Paddle calls the pools with their defaults)."""
    if size is None:
        raise ValueError("interpolate: mode 'area' needs size (output size can not be None "
                         "in AREA mode)")
    pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[x.ndim]
    if isinstance(size, Tensor):
        size = size.tolist()
    if x.ndim == 3 and not isinstance(size, int):
        (size,) = size
    return pool(x, size)


def interpolate(x, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format=None,
                recompute_scale_factor=None, antialias: bool = False, name=None):
    """Resize the spatial dims of a 3-D [N, C, W], 4-D [N, C, H, W] or 5-D
    [N, C, D, H, W] tensor (channels last with `data_format` NWC, NHWC, NDHWC) to
    `size`, or by `scale_factor`: "linear" (3-D), "bilinear" and "bicubic" (4-D),
    "trilinear" (5-D), "nearest" (4-D and 5-D) or "area" (adaptive average pooling).
    Paddle's source positions: half-pixel for the linear modes unless `align_corners`
    or ``align_mode=1``, half-pixel for bicubic unless `align_corners`; bicubic's
    cubic coefficient is -0.75 and its taps beyond the border repeat the border. The
    linear modes are separable, so one linear pass per axis gives Paddle's 2- and
    3-D weights. With `recompute_scale_factor`, the sampling ratio is the sizes'
    (in / out), not the factor's. `antialias` (bilinear and bicubic) resamples with
    the filter widened when downsampling (see `_antialias_weights`). When no size
    changes, x is copied, as Paddle's kernels do."""
    mode = mode.lower()
    x = as_tensor(x)
    _check_mode(x, mode)
    if align_corners and mode == "nearest":
        raise ValueError("align_corners option can only be set with the interpolating "
                         "modes: linear | bilinear | bicubic | trilinear")
    if antialias and mode not in _ANTIALIAS_FILTERS:
        raise ValueError(f"interpolate: antialias takes mode 'bilinear' or 'bicubic', got "
                         f"{mode!r}")
    if mode == "area":
        return _area(x, size)
    if mode != "nearest" and not x.dtype.is_float:
        # Paddle has no such kernel; bicubic's weights gave integer images all zeros
        raise DTypeError(f"interpolate: {mode} takes a float tensor, got {x.dtype.name} "
                         "(cast it to float32 first, as Paddle has no integer kernel)",
                         user_location())
    axes = _spatial_axes(x.ndim, data_format)
    in_sizes = _static(x, axes, "interpolate")
    out_sizes, scales = _output_sizes(in_sizes, size, scale_factor)
    if recompute_scale_factor:  # the ratio from the sizes, not from the factor given
        scales = [None] * len(scales)
    if any(n_out <= 0 for n_out in out_sizes):
        raise ValueError(f"interpolate: output sizes must be positive, got {out_sizes}")
    if out_sizes == in_sizes:
        # Paddle's kernels copy x when no size changes, whatever the scale factor says
        # (one changed axis and the others resample at 1 / scale_factor)
        return clone(x)
    for axis, n_in, n_out, scale in zip(axes, in_sizes, out_sizes, scales):
        if antialias:
            x = _antialiased(x, axis, _antialias_weights(n_in, n_out, scale, align_corners,
                                                         mode))
        else:
            x = _resample(x, mode, axis, n_in, n_out, scale, align_corners, align_mode)
    return x


# ---------------------------------------------------------------- unfold

def _unfold_paddings(paddings) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from an int, [h, w] or [top, left, bottom, right]."""
    if isinstance(paddings, int):
        return (paddings,) * 4
    paddings = [int(p) for p in paddings]
    if len(paddings) == 2:
        return paddings[0], paddings[1], paddings[0], paddings[1]
    if len(paddings) == 4:
        return tuple(paddings)
    raise ValueError(f"paddings must be an int, [h, w] or [top, left, bottom, right], got "
                     f"{paddings}")


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sliding blocks of a [N, C, H, W] tensor as columns: [N, C * kH * kW, L], L the
    number of blocks (row-major), rows ordered by channel, then kernel row, column."""
    from ...dispatch import apply
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"unfold needs a 4-D [N, C, H, W] input, got shape {x.shape}")
    (kh, kw), (sh, sw), (dh, dw) = (pair(kernel_sizes, "kernel_sizes"),
                                    pair(strides, "strides"), pair(dilations, "dilations"))
    top, left, bottom, right = _unfold_paddings(paddings)
    channels, height, width = _static(x, (1, 2, 3), "unfold")
    if any((top, left, bottom, right)):
        x = apply("pad", (x,), {"pads": ((0, 0), (0, 0), (top, bottom), (left, right)),
                                "value": 0.0})
    hp, wp = height + top + bottom, width + left + right
    oh, ow = (hp - (dh * (kh - 1) + 1)) // sh + 1, (wp - (dw * (kw - 1) + 1)) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"unfold: the kernel does not fit the padded input {hp}x{wp}")
    rows = (np.arange(oh)[None, :] * sh + np.arange(kh)[:, None] * dh)  # [kh, oh]
    cols = (np.arange(ow)[None, :] * sw + np.arange(kw)[:, None] * dw)  # [kw, ow]
    flat = rows[:, None, :, None] * wp + cols[None, :, None, :]         # [kh, kw, oh, ow]
    blocks = _take(reshape(x, [exact_shape(x)[0], channels, hp * wp]), 2, flat.reshape(-1))
    return reshape(blocks, [exact_shape(x)[0], channels * kh * kw, oh * ow])


def _fold_sizes(function: str, value, what: str) -> tuple[int, int]:
    """(h, w) from an int or a list of two ints, as fold's arguments take them."""
    if isinstance(value, int):
        return value, value
    value = [int(v) for v in value]
    if len(value) != 2:
        raise ValueError(f"{function}: {what} must be an int or two ints, got {value}")
    return value[0], value[1]


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """The adjoint of `unfold` (col2im): x [N, C * kH * kW, L] holds L blocks, which
    are summed into a [N, C, H, W] image at the positions `unfold` reads them from
    (overlapping cells add up)."""
    x = as_tensor(x)
    if x.ndim != 3:
        raise ValueError(f"fold needs a 3-D [N, C * kH * kW, L] input, got shape {x.shape}")
    (height, width) = _fold_sizes("fold", output_sizes, "output_sizes")
    (kh, kw), (sh, sw), (dh, dw) = (_fold_sizes("fold", kernel_sizes, "kernel_sizes"),
                                    _fold_sizes("fold", strides, "strides"),
                                    _fold_sizes("fold", dilations, "dilations"))
    top, left, bottom, right = _unfold_paddings(paddings)
    hp, wp = height + top + bottom, width + left + right
    oh, ow = (hp - (dh * (kh - 1) + 1)) // sh + 1, (wp - (dw * (kw - 1) + 1)) // sw + 1
    rows_in, blocks = _static(x, (1, 2), "fold")
    if rows_in % (kh * kw) or blocks != oh * ow:
        raise ShapeError(f"fold: expected an input [N, C * {kh * kw}, {oh * ow}] for output "
                         f"{height}x{width}, got {x.shape}")
    channels = rows_in // (kh * kw)
    rows = (np.arange(oh)[None, :] * sh + np.arange(kh)[:, None] * dh)  # [kh, oh]
    cols = (np.arange(ow)[None, :] * sw + np.arange(kw)[:, None] * dw)  # [kw, ow]
    flat = rows[:, None, :, None] * wp + cols[None, :, None, :]         # [kh, kw, oh, ow]
    batch = exact_shape(x)[0]
    values = reshape(x, [batch, channels, kh * kw * oh * ow])
    image = index_add(zeros([batch, channels, hp * wp], dtype=x.dtype), _index(flat.reshape(-1)),
                      2, values)
    image = reshape(image, [batch, channels, hp, wp])
    return image[:, :, top:top + height, left:left + width]


# ---------------------------------------------------------------- spatial transformer

def _grid_axis(size: int, align_corners: bool) -> np.ndarray:
    """The normalized coordinates of `size` cells: -1 and 1 at the centres of the end
    cells with `align_corners`, at their outer edges without."""
    points = np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(1)
    return points if align_corners else points * (size - 1) / size


def affine_grid(theta, out_shape, align_corners: bool = True, name=None):
    """The sampling grid of affine maps `theta` [N, 2, 3] (or [N, 3, 4] for 3-D) over
    an output of `out_shape` [N, C, H, W] (or [N, C, D, H, W]): [N, H, W, 2] (or
    [N, D, H, W, 3]) normalized (x, y[, z]) source positions for `grid_sample`."""
    theta = as_tensor(theta)
    if isinstance(out_shape, Tensor):
        out_shape = out_shape.numpy().tolist()
    spatial = [int(v) for v in out_shape[2:]]
    if len(spatial) not in (2, 3) or exact_shape(theta)[1:] != (len(spatial),
                                                                len(spatial) + 1):
        raise ShapeError(f"affine_grid: expected theta [N, 2, 3] with a 4-D out_shape or "
                         f"[N, 3, 4] with a 5-D one, got theta {theta.shape} and out_shape "
                         f"{list(out_shape)}")
    axes = np.meshgrid(*[_grid_axis(n, align_corners) for n in spatial], indexing="ij")
    base = np.stack([*reversed(axes), np.ones(spatial)], -1).reshape(-1, len(spatial) + 1)
    points = matmul(Tensor._from_array(base.astype(theta.dtype.np)),
                    transpose(theta, [0, 2, 1]))
    return reshape(points, [exact_shape(theta)[0], *spatial, len(spatial)])


def _reflect(coord, twice_low: int, twice_high: int):
    """`coord` reflected back and forth into [twice_low / 2, twice_high / 2], as
    Paddle's kernels fold it: the distance from the low end taken modulo a round trip,
    then mirrored if past halfway. The folding also sets the gradient's sign where it
    has none (at the ends themselves): +1 at the low end and at the high one."""
    if twice_low == twice_high:
        return coord * 0.0
    low, trip = twice_low / 2, float(twice_high - twice_low)
    offset = coord - low
    sign = 1.0 - 2.0 * (offset < 0).astype(offset.dtype)
    distance = offset * sign
    extra = distance - floor(distance / trip).detach() * trip
    return select(extra > trip - extra, trip - extra, extra) + low


def _source_coord(coord, size: int, padding_mode: str, align_corners: bool):
    """A normalized grid coordinate as a pixel position of an axis of `size` cells,
    folded back into the image for the border and reflection padding modes."""
    coord = (coord + 1.0) * ((size - 1) / 2) if align_corners else ((coord + 1.0) * size - 1) / 2
    if padding_mode == "border":
        return clip(coord, 0.0, size - 1.0)
    if padding_mode == "reflection":
        coord = (_reflect(coord, 0, 2 * (size - 1)) if align_corners
                 else _reflect(coord, -1, 2 * size - 1))
        return clip(coord, 0.0, size - 1.0)
    return coord


def _cells(flat, positions, sizes):
    """The cells of `flat` [N, C, prod(sizes)] (x's spatial axes flattened row-major) at
    integer `positions`, one [N, *out] tensor per spatial axis: [N, C, *out], zero
    where a position lies outside x or is NaN (as Paddle's; an inf or NaN cell that
    a clamped outside position would read does not leak into the zero)."""
    inside, index = None, None
    for position, size in zip(positions, sizes):
        within = (position >= 0) & (position <= size - 1)
        inside = within if inside is None else inside & within
        safe = select(within, position, 0.0)
        index = safe if index is None else index * size + safe
    batch, channels, _ = exact_shape(flat)
    index = reshape(index.astype("int64"), [batch, 1, -1])
    values = take_along_axis(flat, expand(index, [batch, channels, index.shape[-1]]), 2)
    values = reshape(values, [batch, channels, *exact_shape(positions[0])[1:]])
    return select(unsqueeze(inside, 1), values, 0.0)


def grid_sample(x, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = True, name=None):
    """Sample x [N, C, H, W] at the normalized (x, y) positions of grid [N, Ho, Wo, 2]
    (or x [N, C, D, H, W] at the (x, y, z) of grid [N, Do, Ho, Wo, 3]; -1 and 1 the
    centres of the end cells with `align_corners`, their outer edges without), by
    `mode` "bilinear" (trilinear in 3-D) or "nearest" (round half to even); positions
    outside x read zeros, the nearest border cell ("border"), or x reflected at its
    borders ("reflection"). Result [N, C, Ho, Wo] (or [N, C, Do, Ho, Wo]); gradients
    reach x and, for bilinear, the grid."""
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"grid_sample: mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample: padding_mode must be 'zeros', 'border' or "
                         f"'reflection', got {padding_mode!r}")
    x, grid = as_tensor(x), as_tensor(grid)
    if x.ndim not in (4, 5):
        raise ShapeError(f"grid_sample: x must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], "
                         f"got shape {x.shape}")
    spatial = x.ndim - 2
    if grid.ndim != x.ndim or exact_shape(grid)[-1] != spatial:
        raise ShapeError(f"grid_sample: grid must be {x.ndim}-D with a last dim of "
                         f"{spatial} for a {x.ndim}-D x, got {grid.shape}")
    batch, channels, *sizes = exact_shape(x)
    flat = reshape(x, [batch, channels, -1])
    # the grid's last dim lists the coordinates from the innermost axis (W) out
    coords = [_source_coord(grid[..., spatial - 1 - axis], size, padding_mode, align_corners)
              for axis, size in enumerate(sizes)]
    if mode == "nearest":
        return _cells(flat, [round_half_even(c).detach() for c in coords], sizes)
    lows = [floor(c).detach() for c in coords]
    fractions = [c - low for c, low in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=spatial):
        weight = None
        for step, fraction in zip(corner, fractions):
            factor = fraction if step else 1.0 - fraction
            weight = factor if weight is None else weight * factor
        cells = _cells(flat, [low + step for low, step in zip(lows, corner)], sizes)
        term = cells * unsqueeze(weight, 1)
        out = term if out is None else out + term
    return out


# ---------------------------------------------------------------- pad modes

_NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad_by_gather(x, pairs, mode: str):
    """x padded per axis by `pairs` (low, high) in a non-constant mode: a gather of
    the positions np.pad gives an index ramp (circular padding wider than the dim wraps
    around it again, as Paddle's)."""
    for axis, (low, high) in enumerate(pairs):
        if not (low or high):
            continue
        (size,) = _static(x, (axis,), f"pad mode {mode!r}")
        if mode == "reflect" and max(low, high) >= size:
            raise ValueError(f"pad: reflect padding ({low}, {high}) must be smaller than the "
                             f"dim it pads ({size})")
        if low < 0 or high < 0:
            raise ValueError(f"pad: mode {mode!r} takes no negative padding, got {pairs}")
        x = _take(x, axis, np.pad(np.arange(size), (low, high), mode=_NUMPY_MODE[mode]))
    return x


# ---------------------------------------------------------------- pixel shuffle

def _pixel_layout(function: str, x, factor, what: str, data_format: str):
    """x [N, C, H, W] (NHWC transposed to it), after the checks of the options."""
    check_pixel_options(function, factor, what, data_format)
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"{function}: x must be a 4-D tensor in {data_format}, got shape "
                         f"{x.shape}")
    return transpose(x, [0, 3, 1, 2]) if data_format == "NHWC" else x


def _back_to(x, data_format: str):
    return transpose(x, [0, 2, 3, 1]) if data_format == "NHWC" else x


def pixel_shuffle(x, upscale_factor: int, data_format: str = "NCHW", name=None):
    """[N, C r^2, H, W] to [N, C, H r, W r] (r = upscale_factor; NHWC alike):
    out[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w]."""
    x = _pixel_layout("pixel_shuffle", x, upscale_factor, "upscale_factor", data_format)
    r = upscale_factor
    n, c, h, w = exact_shape(x)
    channels = dim_div(c, r * r)
    if channels is None:
        raise ShapeError(f"pixel_shuffle: upscale_factor**2 = {r * r} must divide the number "
                         f"of channels {c} (x of shape {list(exact_shape(x))} in NCHW)")
    x = transpose(reshape(x, [n, channels, r, r, h, w]), [0, 1, 4, 2, 5, 3])
    return _back_to(reshape(x, [n, channels, dim_mul(h, r), dim_mul(w, r)]), data_format)


def pixel_unshuffle(x, downscale_factor: int, data_format: str = "NCHW", name=None):
    """The inverse of `pixel_shuffle`: [N, C, H r, W r] to [N, C r^2, H, W]."""
    x = _pixel_layout("pixel_unshuffle", x, downscale_factor, "downscale_factor",
                      data_format)
    r = downscale_factor
    n, c, h, w = exact_shape(x)
    height, width = dim_div(h, r), dim_div(w, r)
    if height is None or width is None:
        raise ShapeError(f"pixel_unshuffle: downscale_factor {r} must divide both height {h} "
                         f"and width {w} (x of shape {list(exact_shape(x))} in NCHW)")
    x = transpose(reshape(x, [n, c, height, r, width, r]), [0, 1, 3, 5, 2, 4])
    return _back_to(reshape(x, [n, dim_mul(c, r * r), height, width]), data_format)
