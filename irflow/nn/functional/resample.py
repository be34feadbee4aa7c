"""Resampling: `interpolate` (nearest, bilinear, bicubic), `unfold` (im2col), the
non-constant `pad` modes (reflect, replicate, circular), and `pixel_shuffle` and
`pixel_unshuffle`.

The first three are each a `gather` of positions computed with NumPy from the static
spatial sizes (bilinear: two gathers per axis mixed by fixed weights, bicubic: four),
so the gradient is gather's, and a symbolic batch dim traces; the spatial dims must
be static. The pixel shuffles are reshapes around a transpose, so any dim may be
symbolic (the channels must divide exactly).
"""
from __future__ import annotations

import numpy as np

from ...dispatch import user_location
from ...errors import DTypeError, IrflowError, ShapeError
from ...ir.types import dim_div, dim_mul
from ...tensor import Tensor, gather, reshape, transpose
from ...tensor.convert import as_tensor
from ...tensor.manipulation import exact_shape
from .conv import pair


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


def _ratio(in_size: int, out_size: int, scale, align_corners: bool) -> float:
    """Source positions per output position: Paddle samples at ratio 0 (the first row
    or column) where the output has size 1, whatever the scale."""
    if out_size == 1:
        return 0.0
    if align_corners:
        return (in_size - 1) / (out_size - 1)
    return scale if scale is not None else in_size / out_size


def _nearest(x, axis, in_size, out_size, scale):
    ratio = _ratio(in_size, out_size, scale, False)
    positions = np.minimum(np.floor(np.arange(out_size) * ratio).astype(np.int64), in_size - 1)
    return _take(x, axis, positions)


def _along(weights: np.ndarray, x, axis: int) -> Tensor:
    """Per-position weights (one per output position on `axis`) as a constant that
    broadcasts against x, in x's dtype."""
    shape = [1] * x.ndim
    shape[axis] = weights.size
    return Tensor._from_array(weights.astype(x.dtype.np).reshape(shape))


def _linear(x, axis, in_size, out_size, scale, align_corners, align_mode):
    ratio = _ratio(in_size, out_size, scale, align_corners)
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


def _resample(x, mode, axis, in_size, out_size, scale, align_corners, align_mode):
    if mode == "nearest":
        return _nearest(x, axis, in_size, out_size, scale)
    if mode == "bicubic":
        return _cubic(x, axis, in_size, out_size, scale, align_corners)
    return _linear(x, axis, in_size, out_size, scale, align_corners, align_mode)


def interpolate(x, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format=None,
                recompute_scale_factor=None, antialias: bool = False, name=None):
    """Resize the spatial dims of a 4-D NCHW (or NHWC) tensor to `size`, or by
    `scale_factor`, with "nearest", "bilinear" or "bicubic" sampling (Paddle's source
    positions: half-pixel for bilinear unless `align_corners` or ``align_mode=1``,
    half-pixel for bicubic unless `align_corners`; bicubic's cubic coefficient is
    -0.75 and its taps beyond the border repeat the border). With
    `recompute_scale_factor`, the sampling ratio is the sizes' (in / out), not the
    factor's."""
    mode = mode.lower()
    if mode not in ("nearest", "bilinear", "bicubic"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported by irflow "
                                  "(nearest, bilinear, bicubic)")
    if align_corners and mode == "nearest":
        raise ValueError("align_corners option can only be set with the interpolating "
                         "modes: linear | bilinear | bicubic | trilinear")
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"interpolate: {mode} needs a 4-D input, got shape {x.shape}")
    if mode != "nearest" and not x.dtype.is_float:
        # Paddle has no such kernel; bicubic's weights gave integer images all zeros
        raise DTypeError(f"interpolate: {mode} takes a float tensor, got {x.dtype.name} "
                         "(cast it to float32 first, as Paddle has no integer kernel)",
                         user_location())
    axes = (1, 2) if (data_format or "NCHW").upper() == "NHWC" else (2, 3)
    in_sizes = _static(x, axes, "interpolate")
    out_sizes, scales = _output_sizes(in_sizes, size, scale_factor)
    if recompute_scale_factor:  # the ratio from the sizes, not from the factor given
        scales = [None] * len(scales)
    for axis, n_in, n_out, scale in zip(axes, in_sizes, out_sizes, scales):
        if n_out <= 0:
            raise ValueError(f"interpolate: output sizes must be positive, got {out_sizes}")
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


# ---------------------------------------------------------------- pad modes

_NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad_by_gather(x, pairs, mode: str):
    """x padded per axis by `pairs` (low, high) in a non-constant mode: a gather of
    the positions np.pad gives an index ramp."""
    for axis, (low, high) in enumerate(pairs):
        if not (low or high):
            continue
        (size,) = _static(x, (axis,), f"pad mode {mode!r}")
        if mode == "reflect" and max(low, high) >= size:
            raise ValueError(f"pad: reflect padding ({low}, {high}) must be smaller than the "
                             f"dim it pads ({size})")
        if mode == "circular" and max(low, high) > size:
            raise ValueError(f"pad: circular padding ({low}, {high}) must not exceed the dim "
                             f"it pads ({size})")
        if low < 0 or high < 0:
            raise ValueError(f"pad: mode {mode!r} takes no negative padding, got {pairs}")
        x = _take(x, axis, np.pad(np.arange(size), (low, high), mode=_NUMPY_MODE[mode]))
    return x


# ---------------------------------------------------------------- pixel shuffle

def check_pixel_options(function: str, factor, what: str, data_format: str) -> None:
    """Paddle's checks of the options of a pixel (un)shuffle, which its layers run
    when constructed: `factor` (named `what`) a positive int, an NCHW or NHWC layout."""
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{function}: {what} must be an int, got {factor!r}")
    if factor <= 0:
        raise ValueError(f"{function}: {what} must be positive, got {factor}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{function}: data_format must be 'NCHW' or 'NHWC', got "
                         f"{data_format!r}")


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
