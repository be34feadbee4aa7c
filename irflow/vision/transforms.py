"""Paddle's ``paddle.vision.transforms`` for images held as NumPy arrays (HWC, or HW
for one channel) or irflow tensors (CHW, Paddle's layout for tensor images): the
functional forms (`to_tensor`, `normalize`, `resize`, `crop`, `center_crop`, `hflip`,
`vflip`, `pad`) and the transforms built on them.

Transforms prepare data; they are not part of a model, so they compute with NumPy
(a tensor image goes to an array and back) and record no gradient. Paddle resizes
arrays with OpenCV, which irflow does not use: `resize` samples as
`irflow.nn.functional.interpolate` (Paddle's resize of tensor images), which for
nearest, bilinear and bicubic uses OpenCV's source positions; integer arrays are
rounded and clipped to their dtype, where OpenCV's fixed-point arithmetic may differ
by one level, and integer tensors truncated, as Paddle's interpolate kernel does.
The random transforms draw from irflow's generator (``paddle.seed``).
"""
from __future__ import annotations

import numbers

import numpy as np

from ..io.random import host_rng
from ..nn import functional as F
from ..tensor import Tensor, to_tensor as _tensor

# ---------------------------------------------------------------- the image forms


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
    (float32 for others) and ignores `to_rgb`, as Paddle's tensor path does."""
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format must be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    _check_image(img, "normalize")
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.asarray(mean, np.float32).reshape(shape)
    std = np.asarray(std, np.float32).reshape(shape)
    if not isinstance(img, Tensor):
        channels = 0 if data_format == "CHW" else -1
        return ((np.flip(img, channels) if to_rgb else img) - mean) / std
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
    out = _cast_resized(out.transpose(1, 2, 0), array.dtype, isinstance(img, Tensor))
    return _like(out, img) if array.ndim == 3 else out[:, :, 0]


def _cast_resized(out: np.ndarray, dtype, truncate: bool) -> np.ndarray:
    """The float resize result in the image's `dtype`. Integers are clipped to the
    dtype and truncated for a tensor image (Paddle's interpolate kernel casts its
    float result) or rounded for an array (OpenCV rounds)."""
    if np.issubdtype(dtype, np.integer):
        limits = np.iinfo(dtype)
        out = np.clip(np.trunc(out) if truncate else np.rint(out), limits.min, limits.max)
    return out.astype(dtype)


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


# ---------------------------------------------------------------- transforms


class BaseTransform:
    """A transform of the image: ``transform(img)``, or ``transform((img, label,
    ...))`` which transforms the first item (the "image" key, the only one irflow
    supports) and passes the others through, as Paddle's."""

    def __init__(self, keys=None):
        keys = ("image",) if keys is None else tuple(keys)
        unsupported = [k for k in keys if k != "image"]
        if unsupported:
            raise NotImplementedError(f"{type(self).__name__}: keys {unsupported} are not "
                                      "supported by irflow (only 'image')")
        self.keys = keys

    def __call__(self, inputs):
        if not isinstance(inputs, tuple):
            return self._apply_image(inputs)
        return (self._apply_image(inputs[0]),) + inputs[1:]

    def _apply_image(self, img):
        raise NotImplementedError(f"{type(self).__name__} does not define _apply_image")


class Compose:
    """The `transforms` applied in order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, data):
        for transform in self.transforms:
            data = transform(data)
        return data

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class ToTensor(BaseTransform):
    """`to_tensor`: an HWC array to a CHW float tensor (uint8 scaled to [0, 1])."""

    def __init__(self, data_format: str = "CHW", keys=None):
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img):
        return to_tensor(img, self.data_format)


class Normalize(BaseTransform):
    """`normalize` by per-channel `mean` and `std` (a number: the same for three
    channels)."""

    def __init__(self, mean=0.0, std=1.0, data_format: str = "CHW", to_rgb: bool = False,
                 keys=None):
        super().__init__(keys)
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        self.data_format, self.to_rgb = data_format, to_rgb

    def _apply_image(self, img):
        return normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Resize(BaseTransform):
    """`resize` to `size` ((height, width), or an int for the shorter side)."""

    def __init__(self, size, interpolation: str = "bilinear", keys=None):
        super().__init__(keys)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"Resize: interpolation must be one of {_INTERPOLATIONS}, got "
                             f"{interpolation!r}")
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img):
        return resize(img, self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """`center_crop` to `size` ((height, width) or an int)."""

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = _pair(size, "CenterCrop: size")

    def _apply_image(self, img):
        return center_crop(img, self.size)


class RandomCrop(BaseTransform):
    """A crop of `size` at a random position, after padding the image by `padding`
    (see `pad`) and, with `pad_if_needed`, by its shortfall from `size` on both
    sides."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0,
                 padding_mode: str = "constant", keys=None):
        super().__init__(keys)
        self.size = _pair(size, "RandomCrop: size")
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def _pad_to_size(self, img):
        """The image padded where it is smaller than `size`: by the shortfall on both
        sides (left and right, then top and bottom), as Paddle's, so that the image
        may land anywhere in the crop, not only at its top-left corner."""
        th, tw = self.size
        height, width = _image_size(img, "RandomCrop")
        if width < tw:
            img = pad(img, (tw - width, 0), self.fill, self.padding_mode)
        if height < th:
            img = pad(img, (0, th - height), self.fill, self.padding_mode)
        return img

    def _apply_image(self, img):
        if self.padding is not None:
            img = pad(img, self.padding, self.fill, self.padding_mode)
        th, tw = self.size
        if self.pad_if_needed:
            img = self._pad_to_size(img)
        height, width = _image_size(img, "RandomCrop")
        if height < th or width < tw:
            raise ValueError(f"RandomCrop: the image ({height}x{width}) is smaller than the "
                             f"crop size {self.size}; set pad_if_needed=True to pad it")
        rng = host_rng()
        return crop(img, int(rng.integers(0, height - th + 1)),
                    int(rng.integers(0, width - tw + 1)), th, tw)


class RandomHorizontalFlip(BaseTransform):
    """`hflip` with probability `prob`."""

    def __init__(self, prob: float = 0.5, keys=None):
        super().__init__(keys)
        self.prob = prob

    def _apply_image(self, img):
        return hflip(img) if host_rng().random() < self.prob else img


class RandomVerticalFlip(BaseTransform):
    """`vflip` with probability `prob`."""

    def __init__(self, prob: float = 0.5, keys=None):
        super().__init__(keys)
        self.prob = prob

    def _apply_image(self, img):
        return vflip(img) if host_rng().random() < self.prob else img


class Transpose(BaseTransform):
    """The image's axes permuted by `order` (default HWC to CHW); an HW array gets a
    channel axis first."""

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = tuple(order)

    def _apply_image(self, img):
        _check_image(img, "Transpose")
        if isinstance(img, Tensor):
            return img.transpose(list(self.order))
        return (img[:, :, None] if img.ndim == 2 else img).transpose(self.order)


class Pad(BaseTransform):
    """`pad` by `padding` in `padding_mode` (constant with `fill`, edge, reflect,
    symmetric)."""

    def __init__(self, padding, fill=0, padding_mode: str = "constant", keys=None):
        super().__init__(keys)
        _pad_sides(padding)
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"Pad: padding_mode must be one of {_PAD_MODES}, got "
                             f"{padding_mode!r}")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def _apply_image(self, img):
        return pad(img, self.padding, self.fill, self.padding_mode)


__all__ = ["BaseTransform", "CenterCrop", "Compose", "Normalize", "Pad", "RandomCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "Resize", "ToTensor", "Transpose",
           "center_crop", "crop", "hflip", "normalize", "pad", "resize", "to_tensor",
           "vflip"]
