"""The two forms an image takes in `irflow.vision.transforms`: a NumPy array (HWC,
or HW for one channel) and an irflow tensor (CHW), and the conversions between
them that the image functions share."""
from __future__ import annotations

import numbers

import numpy as np

from ...tensor import Tensor, to_tensor as _tensor


def _check_image(img, function: str) -> None:
    if isinstance(img, Tensor):
        if img.ndim != 3:
            raise ValueError(f"{function}: a tensor image must be 3-D CHW, got shape "
                             f"{img.shape}")
    elif not (isinstance(img, np.ndarray) and img.ndim in (2, 3)):
        raise TypeError(f"{function}: img must be a NumPy array of 2 or 3 dims (HW or HWC) "
                        f"or a 3-D CHW irflow Tensor, got {type(img).__name__}"
                        f"{' of shape ' + str(img.shape) if hasattr(img, 'shape') else ''}")


def _hwc(img, function: str) -> np.ndarray:
    """The image as an HWC (or HW) array."""
    _check_image(img, function)
    return img.numpy().transpose(1, 2, 0) if isinstance(img, Tensor) else img


def _like(array: np.ndarray, img):
    """An HWC result in the form of the input image `img` (a CHW tensor for a tensor)."""
    if isinstance(img, Tensor):
        return _tensor(np.ascontiguousarray(array.transpose(2, 0, 1)))
    return array


def _image_size(img, function: str) -> tuple[int, int]:
    """(height, width) of an image."""
    shape = _hwc(img, function).shape
    return shape[0], shape[1]


def _pair(size, what: str) -> tuple[int, int]:
    """(height, width) from an int (square) or a pair."""
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, list | tuple) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise TypeError(f"{what} must be an int or a (height, width) pair, got {size!r}")


def _cast_result(out: np.ndarray, dtype, truncate: bool) -> np.ndarray:
    """A float result (of resampling) in the image's `dtype`. Integers are clipped to the
    dtype and truncated for a tensor image (Paddle's interpolate kernel casts its
    float result) or rounded for an array (OpenCV rounds)."""
    if np.issubdtype(dtype, np.integer):
        limits = np.iinfo(dtype)
        out = np.clip(np.trunc(out) if truncate else np.rint(out), limits.min, limits.max)
    return out.astype(dtype)
