"""Paddle's geometric warps: `rotate`, `affine` and `perspective`. Each output pixel
reads the input at a source position (the warp inverted), by "nearest" or
"bilinear" sampling; positions outside the image read `fill` (a number for every
channel, or one value per channel).

The two image forms follow Paddle's two paths, whose pixel grids differ by half a
pixel, so an array and a tensor of the same image warp to slightly different
results, as in Paddle:

- An array follows the OpenCV path (``cv2.warpAffine`` / ``warpPerspective``):
  pixels at integer coordinates, the default centre (width / 2, height / 2).
  Positions are computed in float64; nearest reads the pixel at floor(position +
  0.5) (half-way rounds up, as OpenCV's fixed point up to 4.10), bilinear weighs
  the four neighbours exactly; integer results are rounded and clipped. OpenCV's
  arithmetic depends on its version: since 4.11 it computes positions in float32
  and resolves a position exactly half-way between two pixels (a right-angle
  rotation of an image with one odd and one even side) either way; up to 4.10 it
  takes positions in 1/1024 pixel (nearest) or 1/32 (bilinear), so its integer
  results may differ by a few levels (since 4.11, by at most one).
- A tensor follows the tensor path: Paddle's sampling grid, built in float32 as
  Paddle builds it, read by `grid_sample` (align_corners=False; pixel centres at
  half-integers around the image centre). Float tensors only, as Paddle's.

Where Paddle contradicts its own documentation, irflow does what it documents:

- `affine` of an array: Paddle's OpenCV path overwrites the matrix's translation,
  so it rotates and scales about the top-left corner (ignoring `center`), turns
  counter-clockwise (its doc and tensor path: clockwise) and shears otherwise;
  irflow applies the tensor path's transform about the centre in the array's grid.
- An int `fill` of an array in `rotate` and `perspective`: Paddle fills only the
  first channel with it (OpenCV's scalar); irflow fills every channel.
- `affine` of a tensor with a `center`: Paddle swaps its width and height.
- Bilinear sampling of a tensor with a `fill`: Paddle blends ``img * mask + (1 -
  mask) * fill`` where `img` already carries the weights `mask`, darkening the
  border even where `fill` equals the image; irflow adds ``(1 - mask) * fill``, the
  fill read outside the image, as OpenCV's border.
- `rotate(expand=True)` of a tensor: Paddle measures the rotated corners from the
  centre, which grows an odd side by one (a 5x7 image rotated by 0 becomes 6x8);
  irflow sizes the output as the array path (and PIL) do.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...errors import DTypeError, InputError
from ...nn import functional as F
from ...tensor import Tensor, to_tensor as _tensor
from ._image import _cast_result, _check_image

_MODES = ("nearest", "bilinear")


def _check_interpolation(interpolation, function: str) -> None:
    if interpolation == "bicubic":
        raise NotImplementedError(f"{function}: interpolation 'bicubic' is not supported by "
                                  "irflow (Paddle's tensor path has none either); use "
                                  "'nearest' or 'bilinear'")
    if interpolation not in _MODES:
        raise ValueError(f"{function}: interpolation must be one of {_MODES}, got "
                         f"{interpolation!r}")


def _fill_values(fill, channels: int, function: str) -> np.ndarray:
    """`fill` as one float64 value per channel: a number for all, or a sequence of
    one value or at least `channels` (the first ones taken, as OpenCV's scalar)."""
    if fill is None:
        fill = 0
    if isinstance(fill, numbers.Number):
        return np.full(channels, float(fill))
    values = np.asarray(fill, np.float64).ravel()
    if values.size == 1:
        return np.full(channels, values[0])
    if values.size < channels:
        raise InputError(f"{function}: fill must be a number or give a value for each of "
                         f"the {channels} channels, got {fill!r}")
    return values[:channels]


# ---------------------------------------------------------------- matrices


def _inverse_affine_matrix(center, angle, translate, scale, shear) -> np.ndarray:
    """The 2x3 matrix taking an output position to its source (Paddle's
    `_get_affine_matrix`): the inverse of translating by `translate` after rotating
    by `angle` degrees clockwise, scaling and shearing (degrees, along x and y)
    about `center`."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    (cx, cy), (tx, ty) = center, translate
    m = np.array([[d, -b, 0.0], [-c, a, 0.0]]) / scale
    m[:, 2] = m[:, 0] * (-cx - tx) + m[:, 1] * (-cy - ty) + (cx, cy)
    return m


def _rotation_matrix(center, angle: float) -> np.ndarray:
    """The 2x3 matrix taking a source position to its output when rotating by
    `angle` degrees counter-clockwise about `center` (``cv2.getRotationMatrix2D``)."""
    rad = math.radians(angle)
    alpha, beta = math.cos(rad), math.sin(rad)
    cx, cy = center
    return np.array([[alpha, beta, (1 - alpha) * cx - beta * cy],
                     [-beta, alpha, beta * cx + (1 - alpha) * cy]])


def _invert_affine(m: np.ndarray) -> np.ndarray:
    """The inverse of a 2x3 affine matrix."""
    full = np.vstack([m, [0.0, 0.0, 1.0]])
    return np.linalg.inv(full)[:2]


def _expanded_size(inverse: np.ndarray, width: int, height: int) -> tuple[int, int]:
    """(width, height) of the box holding the image's corners (0, 0) to (width,
    height) moved by the rotation whose inverse is `inverse` (Paddle's OpenCV path,
    as PIL): the extreme coordinates floored and ceiled."""
    corners = np.array([[0, 0, 1], [width, 0, 1], [width, height, 1], [0, height, 1]],
                       np.float64)
    xs, ys = (corners @ inverse.T).T
    return (math.ceil(xs.max()) - math.floor(xs.min()),
            math.ceil(ys.max()) - math.floor(ys.min()))


def _rounded_rotation(center, angle: float) -> np.ndarray:
    """The inverse of the rotation by `angle` degrees counter-clockwise about
    `center`, its cosine and sine rounded to 15 places (as Paddle's expand) so that
    right angles give exact corners."""
    rad = -math.radians(angle)
    cos, sin = round(math.cos(rad), 15), round(math.sin(rad), 15)
    cx, cy = center
    return np.array([[cos, sin, cx - cos * cx - sin * cy],
                     [-sin, cos, cy + sin * cx - cos * cy]])


def _perspective_coeffs(startpoints, endpoints) -> np.ndarray:
    """(a, b, c, d, e, f, g, h) taking an output point (x, y) to its source
    ((ax + by + c) / (gx + hy + 1), (dx + ey + f) / (gx + hy + 1)): the least-squares
    fit of the four `endpoints` to the `startpoints` (Paddle's)."""
    start, end = np.asarray(startpoints, np.float64), np.asarray(endpoints, np.float64)
    if start.shape != (4, 2) or end.shape != (4, 2):
        raise InputError(f"perspective: startpoints and endpoints must be four [x, y] "
                         f"points, got {startpoints!r} and {endpoints!r}")
    rows = []
    for (x, y), (u, v) in zip(end, start):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    return np.linalg.lstsq(np.array(rows), start.reshape(8), rcond=None)[0]


# ---------------------------------------------------------------- arrays


def _sample_array(array: np.ndarray, src_x: np.ndarray, src_y: np.ndarray, mode: str,
                  fill, function: str) -> np.ndarray:
    """The HWC (or HW) `array` read at the source positions (pixel grid) of each output
    pixel, positions outside it reading `fill`; the array's dtype."""
    planes = array[:, :, None] if array.ndim == 2 else array
    height, width, channels = planes.shape
    fill = _fill_values(fill, channels, function)
    finite = np.isfinite(src_x) & np.isfinite(src_y)
    src_x, src_y = np.where(finite, src_x, -2.0), np.where(finite, src_y, -2.0)
    if mode == "nearest":
        # rounded first, so that float noise (a right angle's cosine) does not decide a
        # position half-way between two pixels
        src_x, src_y = np.round(src_x, 9), np.round(src_y, 9)
        taps = [(np.floor(src_y + 0.5), np.floor(src_x + 0.5), 1.0)]
    else:
        x0, y0 = np.floor(src_x), np.floor(src_y)
        fx, fy = src_x - x0, src_y - y0
        taps = [(y0, x0, (1 - fy) * (1 - fx)), (y0, x0 + 1, (1 - fy) * fx),
                (y0 + 1, x0, fy * (1 - fx)), (y0 + 1, x0 + 1, fy * fx)]
    out = np.zeros(src_x.shape + (channels,))
    for rows, cols, weight in taps:
        inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
        values = planes[np.clip(rows, 0, height - 1).astype(np.intp),
                        np.clip(cols, 0, width - 1).astype(np.intp)].astype(np.float64)
        out += np.where(inside[..., None], values, fill) * np.asarray(weight)[..., None]
    out = _cast_result(out, array.dtype, truncate=False)
    return out if array.ndim == 3 else out[:, :, 0]


def _warp_array_affine(array, inverse, out_size, mode, fill, function):
    """`array` warped by the 2x3 `inverse` (output pixel to source) into `out_size`
    (width, height)."""
    xs, ys = np.meshgrid(np.arange(out_size[0], dtype=np.float64),
                         np.arange(out_size[1], dtype=np.float64))
    src_x = inverse[0, 0] * xs + inverse[0, 1] * ys + inverse[0, 2]
    src_y = inverse[1, 0] * xs + inverse[1, 1] * ys + inverse[1, 2]
    return _sample_array(array, src_x, src_y, mode, fill, function)


# ---------------------------------------------------------------- tensors


def _float_tensor_image(img, function: str) -> np.ndarray:
    array = img.numpy()
    if not np.issubdtype(array.dtype, np.floating):
        raise DTypeError(f"{function}: a tensor image must be float32 or float64 (Paddle's "
                         f"grid_sample), got {img.dtype}; convert it with "
                         "astype('float32')")
    return array


def _affine_grid(theta: np.ndarray, width: int, height: int, out_w: int,
                 out_h: int) -> np.ndarray:
    """Paddle's normalized sampling grid [out_h, out_w, 2] (float32) for the 2x3
    `theta` taking an output position (from the output's centre) to its source
    (from the input's centre)."""
    base = np.ones((out_h, out_w, 3), np.float32)
    base[..., 0] = np.linspace(-out_w * 0.5 + 0.5, out_w * 0.5 - 0.5, out_w, dtype=np.float32)
    base[..., 1] = np.linspace(-out_h * 0.5 + 0.5, out_h * 0.5 - 0.5, out_h,
                               dtype=np.float32)[:, None]
    scaled = theta.astype(np.float32).T / np.array([0.5 * width, 0.5 * height], np.float32)
    return base.reshape(-1, 3) @ scaled


def _tensor_rotation(angle: float, offset) -> np.ndarray:
    """Paddle's float32 2x3 matrix taking an output position to its source for a
    rotation by `angle` degrees counter-clockwise about `offset` (from the image's
    centre), rounded as Paddle's float32 tensor arithmetic rounds it."""
    rad = math.radians(-angle % 360)
    cos, sin = math.cos(rad), math.sin(rad)
    theta = np.array([[cos, sin, 0.0], [-sin, cos, 0.0]], np.float32)
    ox, oy = np.float32(-offset[0]), np.float32(-offset[1])
    theta[:, 2] += theta[:, 0] * ox + theta[:, 1] * oy + np.float32(offset)
    return theta


def _perspective_grid(coeffs: np.ndarray, width: int, height: int) -> np.ndarray:
    """Paddle's normalized sampling grid [height, width, 2] (float32) for the
    perspective `coeffs` of positions measured from the top-left corner."""
    coeffs = coeffs.astype(np.float32)
    base = np.ones((height, width, 3), np.float32)
    base[..., 0] = np.linspace(0.5, width - 0.5, width, dtype=np.float32)
    base[..., 1] = np.linspace(0.5, height - 0.5, height, dtype=np.float32)[:, None]
    base = base.reshape(-1, 3)
    numerator = base @ (coeffs[:6].reshape(2, 3).T /
                        np.array([0.5 * width, 0.5 * height], np.float32))
    denominator = base @ np.append(coeffs[6:], np.float32(1))[:, None]
    return numerator / denominator - np.float32(1)


def _sample_tensor(img: Tensor, grid: np.ndarray, out_h: int, out_w: int, mode: str,
                   fill, function: str) -> Tensor:
    """The CHW float tensor read at the normalized `grid` ([out_h * out_w, 2]) by
    `grid_sample`, positions outside reading `fill`: nearest takes it where the
    nearest pixel is outside, bilinear weighs it by the weight falling outside."""
    array = _float_tensor_image(img, function)
    channels = array.shape[0]
    planes = np.concatenate([array, np.ones_like(array[:1])])[None]
    # a degenerate perspective divides by zero: those positions lie outside
    grid = np.where(np.isfinite(grid), grid, np.float32(-2))
    grid = grid.reshape(1, out_h, out_w, 2).astype(array.dtype)
    sampled = F.grid_sample(_tensor(planes), _tensor(grid), mode=mode, padding_mode="zeros",
                            align_corners=False).numpy()[0]
    image, covered = sampled[:-1], sampled[-1:]
    fill = _fill_values(fill, channels, function).astype(array.dtype)[:, None, None]
    if mode == "nearest":
        out = np.where(covered < 0.5, fill, image)
    else:
        out = image + (1 - covered) * fill
    return _tensor(out.astype(array.dtype))


# ---------------------------------------------------------------- the warps


def _pair_of_numbers(value, name: str, function: str) -> tuple[float, float]:
    if not (isinstance(value, list | tuple) and len(value) == 2
            and all(isinstance(v, numbers.Number) for v in value)):
        raise TypeError(f"{function}: {name} must be a sequence of two numbers, got "
                        f"{value!r}")
    return float(value[0]), float(value[1])


def rotate(img, angle: float, interpolation: str = "nearest", expand: bool = False,
           center=None, fill=0):
    """The image rotated by `angle` degrees counter-clockwise about `center` ((x, y)
    from the top-left corner; default the image's centre), in the input's size or,
    with `expand`, one holding the whole rotated image (which assumes the default
    centre). Outside the image reads `fill`."""
    _check_image(img, "rotate")
    _check_interpolation(interpolation, "rotate")
    if not isinstance(angle, numbers.Number):
        raise TypeError(f"rotate: angle must be a number, got {angle!r}")
    if center is not None:
        center = _pair_of_numbers(center, "center", "rotate")
    if isinstance(img, Tensor):
        height, width, offset = _tensor_offset(img, center)
        theta = _tensor_rotation(angle, offset)
        out_w, out_h = width, height
        if expand:
            corner_center = (width * 0.5 + offset[0], height * 0.5 + offset[1])
            out_w, out_h = _expanded_size(_rounded_rotation(corner_center, angle), width,
                                          height)
        grid = _affine_grid(theta, width, height, out_w, out_h)
        return _sample_tensor(img, grid, out_h, out_w, interpolation, fill, "rotate")
    height, width = img.shape[:2]
    center = (width / 2.0, height / 2.0) if center is None else center
    forward = _rotation_matrix(center, angle)
    out_w, out_h = width, height
    if expand:
        out_w, out_h = _expanded_size(_rounded_rotation(center, angle), width, height)
        forward[:, 2] += ((out_w - width) * 0.5, (out_h - height) * 0.5)
    return _warp_array_affine(img, _invert_affine(forward), (out_w, out_h), interpolation,
                              fill, "rotate")


def _tensor_offset(img: Tensor, center) -> tuple[int, int, tuple[float, float]]:
    """(height, width, `center` as an offset from the image's centre) of a CHW tensor:
    Paddle's tensor path measures from the centre (None: no offset)."""
    height, width = img.shape[1], img.shape[2]
    if center is None:
        return height, width, (0.0, 0.0)
    return height, width, (center[0] - width * 0.5, center[1] - height * 0.5)


def _affine_shear(shear, function: str) -> tuple[float, float]:
    """(along x, along y) from a number (x only), one value (both) or two."""
    if isinstance(shear, numbers.Number):
        return float(shear), 0.0
    if isinstance(shear, list | tuple) and len(shear) == 1:
        return float(shear[0]), float(shear[0])
    if isinstance(shear, list | tuple) and len(shear) == 2:
        return float(shear[0]), float(shear[1])
    raise TypeError(f"{function}: shear must be a number or a sequence of one or two "
                    f"numbers, got {shear!r}")


def affine(img, angle: float, translate, scale: float, shear, interpolation: str = "nearest",
           fill=0, center=None):
    """The image rotated by `angle` degrees clockwise, scaled by `scale` and sheared by
    `shear` degrees (along x, and along y) about `center` ((x, y) from the top-left
    corner; default the image's centre), then moved by `translate` pixels (x, y).
    Outside the image reads `fill`."""
    _check_image(img, "affine")
    _check_interpolation(interpolation, "affine")
    if not isinstance(angle, numbers.Number):
        raise TypeError(f"affine: angle must be a number, got {angle!r}")
    translate = _pair_of_numbers(translate, "translate", "affine")
    if not isinstance(scale, numbers.Number) or scale <= 0:
        raise InputError(f"affine: scale must be a positive number, got {scale!r}")
    shear = _affine_shear(shear, "affine")
    if center is not None:
        center = _pair_of_numbers(center, "center", "affine")
    if isinstance(img, Tensor):
        height, width, offset = _tensor_offset(img, center)
        theta = _inverse_affine_matrix(offset, angle, translate, scale, shear)
        grid = _affine_grid(theta, width, height, width, height)
        return _sample_tensor(img, grid, height, width, interpolation, fill, "affine")
    height, width = img.shape[:2]
    center = (width / 2.0, height / 2.0) if center is None else center
    inverse = _inverse_affine_matrix(center, angle, translate, scale, shear)
    return _warp_array_affine(img, inverse, (width, height), interpolation, fill, "affine")


def perspective(img, startpoints, endpoints, interpolation: str = "nearest", fill=0):
    """The image warped so that its four `startpoints` ([top-left, top-right,
    bottom-right, bottom-left] [x, y] points) land on the `endpoints`, in the input's
    size. Outside the image reads `fill`."""
    _check_image(img, "perspective")
    _check_interpolation(interpolation, "perspective")
    coeffs = _perspective_coeffs(startpoints, endpoints)
    if isinstance(img, Tensor):
        height, width = img.shape[1], img.shape[2]
        grid = _perspective_grid(coeffs, width, height)
        return _sample_tensor(img, grid, height, width, interpolation, fill, "perspective")
    height, width = img.shape[:2]
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64),
                         np.arange(height, dtype=np.float64))
    denominator = coeffs[6] * xs + coeffs[7] * ys + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        src_x = (coeffs[0] * xs + coeffs[1] * ys + coeffs[2]) / denominator
        src_y = (coeffs[3] * xs + coeffs[4] * ys + coeffs[5]) / denominator
    return _sample_array(img, src_x, src_y, interpolation, fill, "perspective")


__all__ = ["affine", "perspective", "rotate"]
