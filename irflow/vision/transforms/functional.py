"""Paddle's ``paddle.vision.transforms.functional``: the image functions the
transforms of `irflow.vision.transforms` apply (see that package's doc for the image
forms and how their numbers relate to Paddle's)."""
from __future__ import annotations

import numbers

import numpy as np

from ...errors import DTypeError, InputError
from ...nn import functional as F
from ...tensor import Tensor, to_tensor as _tensor
from ._image import _cast_result, _check_image, _hwc, _image_size, _like, _pair
from .geometric import affine, perspective, rotate

# ---------------------------------------------------------------- functional forms


def to_tensor(pic, data_format: str = "CHW") -> Tensor:
    """An HWC (or HW) array as a CHW (or HWC) float tensor: uint8 scaled to [0, 1],
    other dtypes kept. A tensor image is returned as it is (transposed for HWC)."""
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format must be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    _check_image(pic, "to_tensor")
    if isinstance(pic, Tensor):
        return pic if data_format == "CHW" else pic.transpose([1, 2, 0])
    array = pic[:, :, None] if pic.ndim == 2 else pic
    if data_format == "CHW":
        array = array.transpose(2, 0, 1)
    if array.dtype == np.uint8:
        return _tensor(array.astype(np.float32) / np.float32(255.0))
    return _tensor(np.ascontiguousarray(array))


def normalize(img, mean, std, data_format: str = "CHW", to_rgb: bool = False):
    """(img - mean) / std per channel for an image in `data_format`. An array follows
    NumPy's promotion (float32 for uint8) and, with `to_rgb`, has its channels
    reversed first (BGR to RGB). Paddle's cv2 path reverses the last axis whatever
    `data_format`, so a CHW array has its columns mirrored there; irflow reverses
    the channels, which is what `to_rgb` means. A tensor keeps a float dtype
    (float32 for others) and ignores `to_rgb`, as Paddle's tensor path does; so does
    an HW array, which has no channels to reverse."""
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format must be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    _check_image(img, "normalize")
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.asarray(mean, np.float32).reshape(shape)
    std = np.asarray(std, np.float32).reshape(shape)
    if not isinstance(img, Tensor):
        channels = 0 if data_format == "CHW" else -1
        flip = to_rgb and img.ndim == 3
        return ((np.flip(img, channels) if flip else img) - mean) / std
    array = img.numpy()
    dtype = array.dtype if np.issubdtype(array.dtype, np.floating) else np.float32
    return _tensor(((array - mean) / std).astype(dtype))


_INTERPOLATIONS = ("nearest", "bilinear", "bicubic")


def _resized_size(height: int, width: int, size) -> tuple[int, int]:
    """Paddle's output (height, width): an int is the shorter side's new size, the
    other side keeping the aspect ratio (rounded down)."""
    if not isinstance(size, numbers.Integral):
        return _pair(size, "resize: size")
    if width < height:
        return int(size * height / width), int(size)
    return int(size), int(size * width / height)


def resize(img, size, interpolation: str = "bilinear"):
    """The image resized to `size` ((height, width), or an int for the shorter side)
    with "nearest", "bilinear" or "bicubic" sampling (see the module's doc)."""
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"resize: interpolation must be one of {_INTERPOLATIONS}, got "
                         f"{interpolation!r}")
    array = _hwc(img, "resize")
    out_hw = _resized_size(array.shape[0], array.shape[1], size)
    if out_hw == array.shape[:2]:
        return img
    planes = array[:, :, None] if array.ndim == 2 else array
    batch = _tensor(planes.transpose(2, 0, 1)[None].astype(np.float32))
    out = F.interpolate(batch, size=list(out_hw), mode=interpolation).numpy()[0]
    out = _cast_result(out.transpose(1, 2, 0), array.dtype, isinstance(img, Tensor))
    return _like(out, img) if array.ndim == 3 else out[:, :, 0]


def crop(img, top: int, left: int, height: int, width: int):
    """The `height` x `width` region whose top-left corner is (top, left)."""
    return _like(_hwc(img, "crop")[top:top + height, left:left + width], img)


def center_crop(img, output_size):
    """The centred region of `output_size` ((height, width) or an int)."""
    height, width = _image_size(img, "center_crop")
    th, tw = _pair(output_size, "center_crop: output_size")
    return crop(img, int(round((height - th) / 2.0)), int(round((width - tw) / 2.0)), th, tw)


def hflip(img):
    """The image mirrored left to right."""
    return _like(_hwc(img, "hflip")[:, ::-1].copy(), img)


def vflip(img):
    """The image mirrored top to bottom."""
    return _like(_hwc(img, "vflip")[::-1].copy(), img)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _pad_sides(padding) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, (left/right, top/bottom) or four."""
    if isinstance(padding, numbers.Integral):
        return (int(padding),) * 4
    if isinstance(padding, list | tuple) and len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if isinstance(padding, list | tuple) and len(padding) == 4:
        return tuple(padding)
    raise ValueError(f"pad: padding must be an int or a 2 or 4 element sequence, got "
                     f"{padding!r}")


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    """The image padded by `padding` (an int, (left/right, top/bottom) or (left, top,
    right, bottom)) in `padding_mode`: "constant" with `fill` (a number, or one per
    channel), "edge", "reflect" (without repeating the edge) or "symmetric" (with)."""
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: padding_mode must be one of {_PAD_MODES}, got "
                         f"{padding_mode!r}")
    left, top, right, bottom = _pad_sides(padding)
    array = _hwc(img, "pad")
    widths = ((top, bottom), (left, right))
    if padding_mode != "constant":
        out = np.pad(array, widths + ((0, 0),) * (array.ndim - 2), mode=padding_mode)
    elif array.ndim == 2 or isinstance(fill, numbers.Number):
        out = np.pad(array, widths + ((0, 0),) * (array.ndim - 2), constant_values=fill)
    else:
        out = np.stack([np.pad(array[:, :, c], widths, constant_values=value)
                        for c, value in enumerate(fill)], axis=-1)
    return _like(out, img)


# ---------------------------------------------------------------- colour


def _channels(img, function: str) -> int:
    """The number of channels of an image (1 for an HW array)."""
    _check_image(img, function)
    if isinstance(img, Tensor):
        return img.shape[0]
    return 1 if img.ndim == 2 else img.shape[2]


def _rgb_image(img, function: str) -> np.ndarray:
    """The HWC array of an image that must have three (RGB) channels."""
    array = _hwc(img, function)
    if array.ndim != 3 or array.shape[2] != 3:
        raise InputError(f"{function}: the image must have 3 (RGB) channels, got shape "
                         f"{tuple(img.shape)}")
    return array


# Paddle's tensor weights (ITU-R 601 to four places); OpenCV's RGB2GRAY for arrays
_TENSOR_GRAY = np.array([0.2989, 0.5870, 0.1140], np.float32)
_ARRAY_GRAY = np.array([0.299, 0.587, 0.114], np.float32)
# OpenCV's 8-bit RGB2GRAY: the weights above in 14-bit fixed point, rounded half up
_ARRAY_GRAY_FIXED = np.array([4899, 9617, 1868], np.int64)


def _gray(array: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The HW luma of an HWC RGB array, in float32."""
    planes = array.astype(np.float32)
    return planes[..., 0] * weights[0] + planes[..., 1] * weights[1] + \
        planes[..., 2] * weights[2]


def _array_gray(array: np.ndarray) -> np.ndarray:
    """The HW luma of an HWC RGB array in its dtype, as OpenCV's RGB2GRAY (Paddle's
    array path): integers in 14-bit fixed point, floats with float32 weights."""
    if np.issubdtype(array.dtype, np.integer):
        fixed = array.astype(np.int64) @ _ARRAY_GRAY_FIXED
        return ((fixed + (1 << 13)) >> 14).astype(array.dtype)
    return _gray(array, _ARRAY_GRAY).astype(array.dtype)


def to_grayscale(img, num_output_channels: int = 1):
    """The RGB image's luma, as 1 channel or repeated in 3. An array is weighted as
    OpenCV's RGB2GRAY (0.299, 0.587, 0.114; 8-bit in fixed point, rounded), a tensor
    with Paddle's (0.2989, 0.587, 0.114) in float32, truncated back to an integer
    dtype (Paddle's uint8 tensor has no kernel for it)."""
    if num_output_channels not in (1, 3):
        raise InputError(f"to_grayscale: num_output_channels must be 1 or 3, got "
                         f"{num_output_channels!r}")
    array = _rgb_image(img, "to_grayscale")
    if isinstance(img, Tensor):
        luma = _gray(array, _TENSOR_GRAY).astype(array.dtype)
    else:
        luma = _array_gray(array)
    return _like(np.repeat(luma[:, :, None], num_output_channels, axis=2), img)


def _check_factor(factor, function: str) -> None:
    if factor < 0:
        raise InputError(f"{function}: the factor must be non-negative, got {factor}")


def _blend(array: np.ndarray, target, ratio: float, compute=np.float32) -> np.ndarray:
    """``target + ratio * (array - target)`` (Paddle's lerp) in `compute`, clipped to
    the image's range ([0, 1] for floats, [0, 255] for integers) and truncated back
    to the array's dtype (Paddle's astype truncates)."""
    top = 1.0 if np.issubdtype(array.dtype, np.floating) else 255.0
    target = np.asarray(target, compute)
    out = target + compute(ratio) * (array.astype(compute) - target)
    return np.clip(out, 0.0, top).astype(array.dtype)


def _uint8_array(img, function: str) -> np.ndarray:
    """The HWC uint8 array Paddle's array (OpenCV look-up table) path requires."""
    if img.dtype != np.uint8:
        raise DTypeError(f"{function}: a NumPy image must be uint8 (Paddle applies a "
                         f"256-entry look-up table), got {img.dtype}; convert it, or "
                         "pass a CHW tensor")
    return img


def adjust_brightness(img, brightness_factor: float):
    """The image scaled by `brightness_factor` (0: black, 1: unchanged), clipped and
    truncated to its dtype. Arrays must be uint8 (as Paddle's)."""
    _check_factor(brightness_factor, "adjust_brightness")
    array = _hwc(img, "adjust_brightness")
    if not isinstance(img, Tensor):
        return _blend(_uint8_array(img, "adjust_brightness"), 0.0, brightness_factor,
                      np.float64)
    return _like(_blend(array, 0.0, brightness_factor), img)


# the fixed grey level Paddle's array path blends with (its OpenCV look-up table)
_ARRAY_CONTRAST_CENTER = 74.0


def adjust_contrast(img, contrast_factor: float):
    """The image blended with a grey level by `contrast_factor` (0: that grey, 1:
    unchanged). For a tensor the grey is the mean of its luma (of the image for one
    channel); for a uint8 array it is Paddle's fixed level 74, as Paddle's OpenCV
    path computes ``(i - 74) * factor + 74``."""
    _check_factor(contrast_factor, "adjust_contrast")
    channels = _channels(img, "adjust_contrast")
    if not isinstance(img, Tensor):
        return _blend(_uint8_array(img, "adjust_contrast"), _ARRAY_CONTRAST_CENTER,
                      contrast_factor, np.float64)
    if channels not in (1, 3):
        raise InputError(f"adjust_contrast: the image must have 1 or 3 channels, got "
                         f"{channels}")
    array = _hwc(img, "adjust_contrast")
    luma = array.astype(np.float32) if channels == 1 else \
        _gray(array, _TENSOR_GRAY).astype(array.dtype)
    return _like(_blend(array, np.mean(luma, dtype=np.float32), contrast_factor), img)


def adjust_saturation(img, saturation_factor: float):
    """The RGB image blended with its luma by `saturation_factor` (0: grey, 1:
    unchanged). A tensor is clipped to its range; an array, as Paddle's, is clipped
    to [0, 255]. Paddle's array path draws a random factor around the given one
    instead, and weighs the channels as BGR; irflow uses the factor and RGB weights."""
    _check_factor(saturation_factor, "adjust_saturation")
    if isinstance(img, Tensor):
        if _channels(img, "adjust_saturation") == 1:
            return img
        array = _rgb_image(img, "adjust_saturation")
        luma = _gray(array, _TENSOR_GRAY).astype(array.dtype)
        return _like(_blend(array, luma[:, :, None], saturation_factor), img)
    array = _rgb_image(img, "adjust_saturation").astype(np.float32)
    luma = _gray(array, _ARRAY_GRAY)[:, :, None]
    factor = np.float32(saturation_factor)
    out = array * factor + luma * (np.float32(1) - factor)
    return np.clip(out, 0, 255).astype(img.dtype)


def _rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    """HSV (each in [0, 1]) of RGB in [0, 1], last axis the channels (Pillow's
    formulas, as Paddle's tensor path)."""
    maxc, minc = rgb.max(-1), rgb.min(-1)
    delta = maxc - minc
    grey = delta == 0
    s = delta / np.where(grey, 1, maxc)
    divisor = np.where(grey, 1, delta)
    rc, gc, bc = ((maxc - rgb[..., k]) / divisor for k in range(3))
    r_max = maxc == rgb[..., 0]
    g_max = (maxc == rgb[..., 1]) & ~r_max
    h = np.where(r_max, bc - gc, np.where(g_max, rc - bc + 2, gc - rc + 4))
    h = h / 6.0 + 1.0
    return np.stack([h - np.trunc(h), s, maxc], axis=-1)


def _hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    """RGB in [0, 1] of HSV in [0, 1], last axis the channels."""
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    f = h * 6.0
    i = np.floor(f)
    f = f - i
    sector = i.astype(np.int64) % 6
    p = np.clip(v * (1 - s), 0, 1)
    q = np.clip(v * (1 - s * f), 0, 1)
    t = np.clip(v * (1 - s * (1 - f)), 0, 1)
    table = np.stack([np.stack([v, q, p, p, t, v]), np.stack([t, v, v, q, p, p]),
                      np.stack([p, p, t, v, v, q])])
    return np.take_along_axis(table, sector[None, None], axis=1)[:, 0].transpose(1, 2, 0)


def adjust_hue(img, hue_factor: float):
    """The RGB image with its hue turned by `hue_factor` of a full turn (in [-0.5,
    0.5]) in HSV, as Paddle's tensor path; an integer image is taken as [0, 255] and
    rounded back (Paddle truncates, which darkens even a zero turn by one level).
    Paddle's array path turns BGR hues in 8 bits, which turns RGB ones the other way;
    irflow turns arrays as tensors. One channel is returned unchanged."""
    if not -0.5 <= hue_factor <= 0.5:
        raise InputError(f"adjust_hue: hue_factor must be in [-0.5, 0.5], got "
                         f"{hue_factor}")
    if _channels(img, "adjust_hue") == 1:
        return img
    array = _rgb_image(img, "adjust_hue")
    integer = np.issubdtype(array.dtype, np.integer)
    rgb = array.astype(np.float32) / np.float32(255) if integer else array
    hsv = _rgb_to_hsv(rgb)
    hue = hsv[..., 0] + np.asarray(hue_factor, hsv.dtype)
    hsv[..., 0] = hue - np.floor(hue)
    out = _hsv_to_rgb(hsv)
    out = np.rint(out * 255) if integer else out
    return _like(out.astype(array.dtype), img)


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """The image with its `h` x `w` region at (`i`, `j`) set to `v` (broadcast: a
    number, one value per channel, or a full patch: HWC for an array, CHW for a
    tensor); `inplace` writes into `img` itself."""
    _check_image(img, "erase")
    if isinstance(img, Tensor):
        array = img.numpy().copy()
        array[..., i:i + h, j:j + w] = v.numpy() if isinstance(v, Tensor) else v
        if not inplace:
            return _tensor(array)
        img.set_value(array)
        return img
    out = img if inplace else img.copy()
    out[i:i + h, j:j + w, ...] = v
    return out


__all__ = ["adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation",
           "affine", "center_crop", "crop", "erase", "hflip", "normalize", "pad",
           "perspective", "resize", "rotate", "to_grayscale", "to_tensor", "vflip"]
