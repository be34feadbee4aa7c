"""Paddle's ``paddle.vision.transforms`` for images held as NumPy arrays (HWC, or HW
for one channel) or irflow tensors (CHW, Paddle's layout for tensor images): the
functional forms (`to_tensor`, `normalize`, `resize`, `crop`, `center_crop`, `hflip`,
`vflip`, `pad`, `to_grayscale`, the colour adjustments, `erase`, and the geometric
warps `rotate`, `affine` and `perspective`, whose conventions `geometric`
describes) and the transforms built on them.

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

from ...errors import InputError
from ...io.random import host_rng
from ...tensor import Tensor
from . import functional  # noqa: F401  (paddle.vision.transforms.functional)
from .functional import (_INTERPOLATIONS, _PAD_MODES, _channels, _check_image, _image_size,
                         _pad_sides, _pair, adjust_brightness, adjust_contrast, adjust_hue,
                         adjust_saturation, center_crop, crop, erase, hflip, normalize, pad,
                         resize, to_grayscale, to_tensor, vflip)
from .geometric import affine, perspective, rotate

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


class Grayscale(BaseTransform):
    """`to_grayscale` with `num_output_channels` (1 or 3)."""

    def __init__(self, num_output_channels: int = 1, keys=None):
        super().__init__(keys)
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return to_grayscale(img, self.num_output_channels)


def _factor_range(value, name: str, center: float = 1.0, bound=(0.0, float("inf")),
                  clip_first_on_zero: bool = True):
    """Paddle's range of a colour factor: a number v is [center - v, center + v] (the
    lower end at least 0 unless `clip_first_on_zero` is off), a pair is kept if it
    lies in `bound`; None when the range is the single `center` (no change)."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise InputError(f"{name}: a single number must be non-negative, got {value}")
        low, high = center - value, center + value
        if clip_first_on_zero:
            low = max(low, 0.0)
    elif isinstance(value, list | tuple) and len(value) == 2:
        low, high = value
        if not bound[0] <= low <= high <= bound[1]:
            raise InputError(f"{name}: the range must lie in {bound} with low <= high, "
                             f"got {value!r}")
    else:
        raise TypeError(f"{name} must be a number or a (low, high) pair, got {value!r}")
    return None if low == high == center else (low, high)


class _ColorTransform(BaseTransform):
    """A colour adjustment by a factor drawn uniformly from a range (see
    `_factor_range`) for each image."""

    _adjust = None
    _center, _bound, _clip_first_on_zero = 1.0, (0.0, float("inf")), True

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _factor_range(value, type(self).__name__, self._center, self._bound,
                                   self._clip_first_on_zero)

    def _apply_image(self, img):
        if self.value is None:
            return img
        return type(self)._adjust(img, float(host_rng().uniform(*self.value)))


class BrightnessTransform(_ColorTransform):
    """`adjust_brightness` by a factor drawn from ``[max(0, 1 - value), 1 + value]``
    (or the given range)."""

    _adjust = adjust_brightness


class ContrastTransform(_ColorTransform):
    """`adjust_contrast` by a factor drawn from ``[max(0, 1 - value), 1 + value]``
    (or the given range)."""

    _adjust = adjust_contrast


class SaturationTransform(_ColorTransform):
    """`adjust_saturation` by a factor drawn from ``[max(0, 1 - value), 1 + value]``
    (or the given range)."""

    _adjust = adjust_saturation


class HueTransform(_ColorTransform):
    """`adjust_hue` by a turn drawn from ``[-value, value]`` (or the given range,
    within [-0.5, 0.5])."""

    _adjust = adjust_hue
    _center, _bound, _clip_first_on_zero = 0.0, (-0.5, 0.5), False


class ColorJitter(BaseTransform):
    """Brightness, contrast, saturation and hue transforms (those whose value is not
    None) applied in a random order, each with its own random factor."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        self.brightness, self.contrast = brightness, contrast
        self.saturation, self.hue = saturation, hue

    def _apply_image(self, img):
        kinds = ((BrightnessTransform, self.brightness), (ContrastTransform, self.contrast),
                 (SaturationTransform, self.saturation), (HueTransform, self.hue))
        transforms = [kind(value, self.keys) for kind, value in kinds if value is not None]
        for k in host_rng().permutation(len(transforms)):
            img = transforms[k](img)
        return img


class RandomResizedCrop(BaseTransform):
    """A crop of random area (a `scale` fraction of the image) and aspect ratio
    (uniform in log within `ratio`), resized to `size`, as Paddle's: up to ten draws,
    then the central crop of the aspect ratio clamped to `ratio`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3),
                 interpolation: str = "bilinear", keys=None):
        super().__init__(keys)
        self.size = _pair(size, "RandomResizedCrop: size")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise InputError(f"RandomResizedCrop: scale and ratio must be (min, max), got "
                             f"{scale!r} and {ratio!r}")
        self.scale, self.ratio, self.interpolation = scale, ratio, interpolation

    def _crop_box(self, height: int, width: int) -> tuple[int, int, int, int]:
        """(top, left, height, width) of the crop."""
        rng = host_rng()
        area = height * width
        log_ratio = (np.log(self.ratio[0]), np.log(self.ratio[1]))
        for _ in range(10):
            target_area = rng.uniform(*self.scale) * area
            aspect = np.exp(rng.uniform(*log_ratio))
            w = int(round(np.sqrt(target_area * aspect)))
            h = int(round(np.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return (int(rng.integers(0, height - h + 1)),
                        int(rng.integers(0, width - w + 1)), h, w)
        in_ratio = width / height
        h, w = height, width
        if in_ratio < min(self.ratio):
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            w = int(round(h * max(self.ratio)))
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img):
        box = self._crop_box(*_image_size(img, "RandomResizedCrop"))
        return resize(crop(img, *box), self.size, self.interpolation)


class RandomErasing(BaseTransform):
    """With probability `prob`, `erase` a random rectangle (area a `scale` fraction of
    the image, aspect ratio log-uniform in `ratio`) with `value`: a number, one per
    channel, or "random" (standard normal noise, times 255 for an array, clipped to
    an integer dtype). Ten draws that do not fit leave the image as it is."""

    def __init__(self, prob: float = 0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0,
                 inplace: bool = False, keys=None):
        super().__init__(keys)
        if not 0 <= prob <= 1:
            raise InputError(f"RandomErasing: prob must be in [0, 1], got {prob}")
        if not 0 <= scale[0] <= scale[1] <= 1 or not 0 <= ratio[0] <= ratio[1]:
            raise InputError(f"RandomErasing: scale must be (min, max) in [0, 1] and "
                             f"ratio (min, max) >= 0, got {scale!r} and {ratio!r}")
        if isinstance(value, str) and value != "random":
            raise InputError(f"RandomErasing: a str value must be 'random', got {value!r}")
        if isinstance(value, list | tuple) and len(value) not in (1, 3):
            raise InputError(f"RandomErasing: value must be a number or 1 or 3 values, "
                             f"got {value!r}")
        self.prob, self.scale, self.ratio = prob, scale, ratio
        self.value, self.inplace = value, inplace

    def _patch(self, img, h: int, w: int, channels: int, rng):
        """The values written into an `h` x `w` region, in the image's layout."""
        tensor = isinstance(img, Tensor)
        if isinstance(self.value, str):
            noise = rng.standard_normal((channels, h, w) if tensor else (h, w, channels))
            if tensor:
                return noise.astype(img.numpy().dtype)
            noise = noise * 255
            if np.issubdtype(img.dtype, np.integer):
                limits = np.iinfo(img.dtype)
                noise = np.clip(noise, limits.min, limits.max)
            return noise.astype(img.dtype)
        values = np.atleast_1d(np.asarray(self.value))
        return values[:, None, None] if tensor else values[None, None, :]

    def _apply_image(self, img):
        rng = host_rng()
        if rng.random() >= self.prob:
            return img
        height, width = _image_size(img, "RandomErasing")
        channels = _channels(img, "RandomErasing")
        log_ratio = (np.log(self.ratio[0]), np.log(self.ratio[1]))
        for _ in range(10):
            area = rng.uniform(*self.scale) * height * width
            aspect = np.exp(rng.uniform(*log_ratio))
            h = int(round(np.sqrt(area * aspect)))
            w = int(round(np.sqrt(area / aspect)))
            if h < height and w < width:
                top = int(rng.integers(0, height - h + 1))
                left = int(rng.integers(0, width - w + 1))
                return erase(img, top, left, h, w, self._patch(img, h, w, channels, rng),
                             self.inplace)
        return img


def _angle_range(value, name: str, sizes=(2,)) -> tuple[float, ...]:
    """Paddle's range of angles: a number v is (-v, v) (v must be non-negative), a
    sequence is kept if its length is one of `sizes`."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise InputError(f"{name}: a single number must be non-negative, got {value}")
        return -float(value), float(value)
    if isinstance(value, list | tuple) and len(value) in sizes:
        return tuple(float(v) for v in value)
    raise TypeError(f"{name} must be a number or a sequence of {' or '.join(map(str, sizes))}"
                    f" numbers, got {value!r}")


class RandomRotation(BaseTransform):
    """`rotate` by an angle drawn uniformly from `degrees` ((min, max), or a number v
    for (-v, v)), with `interpolation`, `expand`, `center` and `fill`."""

    def __init__(self, degrees, interpolation: str = "nearest", expand: bool = False,
                 center=None, fill=0, keys=None):
        super().__init__(keys)
        self.degrees = _angle_range(degrees, "RandomRotation: degrees")
        self.interpolation, self.expand = interpolation, expand
        self.center, self.fill = center, fill

    def _apply_image(self, img):
        angle = float(host_rng().uniform(*self.degrees))
        return rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class RandomAffine(BaseTransform):
    """`affine` by random parameters, as Paddle draws them: an angle uniform in
    `degrees`; with `translate` (fractions (x, y) of the width and height, in [0, 1])
    a move uniform within them, truncated to whole pixels; with `scale` (min, max) a
    uniform scale; with `shear` (a number v: (-v, v) along x; (min, max) along x;
    or four: x then y ranges) uniform shears."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation: str = "nearest", fill=0, center=None, keys=None):
        super().__init__(keys)
        self.degrees = _angle_range(degrees, "RandomAffine: degrees")
        if translate is not None and not (
                isinstance(translate, list | tuple) and len(translate) == 2
                and all(0.0 <= t <= 1.0 for t in translate)):
            raise InputError(f"RandomAffine: translate must be two fractions in [0, 1], "
                             f"got {translate!r}")
        if scale is not None and not (isinstance(scale, list | tuple) and len(scale) == 2
                                      and all(s > 0 for s in scale)):
            raise InputError(f"RandomAffine: scale must be two positive numbers, got "
                             f"{scale!r}")
        self.translate, self.scale = translate, scale
        self.shear = None if shear is None else _angle_range(shear, "RandomAffine: shear",
                                                             (2, 4))
        self.interpolation, self.fill, self.center = interpolation, fill, center

    def _apply_image(self, img):
        rng = host_rng()
        height, width = _image_size(img, "RandomAffine")
        angle = float(rng.uniform(*self.degrees))
        translate = (0, 0)
        if self.translate is not None:
            max_dx, max_dy = self.translate[0] * width, self.translate[1] * height
            translate = (int(rng.uniform(-max_dx, max_dx)), int(rng.uniform(-max_dy, max_dy)))
        scale = 1.0 if self.scale is None else float(rng.uniform(*self.scale))
        shear = [0.0, 0.0]
        if self.shear is not None:
            shear[0] = float(rng.uniform(self.shear[0], self.shear[1]))
            if len(self.shear) == 4:
                shear[1] = float(rng.uniform(self.shear[2], self.shear[3]))
        return affine(img, angle, translate, scale, shear, self.interpolation, self.fill,
                      self.center)


class RandomPerspective(BaseTransform):
    """With probability `prob`, `perspective` moving each corner inwards by a random
    amount up to `distortion_scale` (in [0, 1]) of half the image, as Paddle draws
    them (whole pixels)."""

    def __init__(self, prob: float = 0.5, distortion_scale: float = 0.5,
                 interpolation: str = "nearest", fill=0, keys=None):
        super().__init__(keys)
        if not 0 <= prob <= 1 or not 0 <= distortion_scale <= 1:
            raise InputError(f"RandomPerspective: prob and distortion_scale must be in "
                             f"[0, 1], got {prob} and {distortion_scale}")
        self.prob, self.distortion_scale = prob, distortion_scale
        self.interpolation, self.fill = interpolation, fill

    def get_params(self, width: int, height: int, distortion_scale: float):
        """(startpoints, endpoints): the image's corners and where they move."""
        rng = host_rng()
        dx = int(distortion_scale * (width // 2))
        dy = int(distortion_scale * (height // 2))

        def near(low_end: bool, size: int, d: int) -> int:
            return int(rng.uniform(0, d + 1) if low_end else rng.uniform(size - d - 1, size))

        endpoints = [[near(True, width, dx), near(True, height, dy)],
                     [near(False, width, dx), near(True, height, dy)],
                     [near(False, width, dx), near(False, height, dy)],
                     [near(True, width, dx), near(False, height, dy)]]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, endpoints

    def _apply_image(self, img):
        height, width = _image_size(img, "RandomPerspective")
        if host_rng().random() >= self.prob:
            return img
        startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
        return perspective(img, startpoints, endpoints, self.interpolation, self.fill)


__all__ = ["BaseTransform", "BrightnessTransform", "CenterCrop", "ColorJitter", "Compose",
           "ContrastTransform", "Grayscale", "HueTransform", "Normalize", "Pad",
           "RandomAffine", "RandomCrop", "RandomErasing", "RandomHorizontalFlip",
           "RandomPerspective", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip",
           "Resize", "SaturationTransform", "ToTensor", "Transpose", "adjust_brightness",
           "adjust_contrast", "adjust_hue", "adjust_saturation", "affine", "center_crop",
           "crop", "erase", "hflip", "normalize", "pad", "perspective", "resize", "rotate",
           "to_grayscale", "to_tensor", "vflip"]
