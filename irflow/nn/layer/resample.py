"""Upsample, UpsamplingBilinear2D, UpsamplingNearest2D, Unfold, the padding layers
(Pad1D/2D/3D, ZeroPad1D/2D/3D) and PixelShuffle/PixelUnshuffle: layers over
`interpolate`, `unfold`, `pad` and `pixel_shuffle`/`pixel_unshuffle`."""
from __future__ import annotations

from .. import functional as F
from ..functional.common import check_pixel_options
from .layers import Layer


class Upsample(Layer):
    """`F.interpolate` with the options given here."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool = False, align_mode: int = 0, data_format=None,
                 recompute_scale_factor=None, name=None):
        super().__init__()
        self._options = dict(size=size, scale_factor=scale_factor, mode=mode,
                             align_corners=align_corners, align_mode=align_mode,
                             data_format=data_format,
                             recompute_scale_factor=recompute_scale_factor)

    def forward(self, x):
        return F.interpolate(x, **self._options)


class _Upsampling2D(Layer):
    """`F.interpolate` of an image by `size` (an int is used for both dims) or
    `scale_factor`, in the fixed `_mode`: Paddle's UpsamplingBilinear2D and
    UpsamplingNearest2D, kept as their own classes for their names and defaults."""

    _mode, _align_corners = "nearest", False

    def __init__(self, size=None, scale_factor=None, data_format: str = "NCHW", name=None):
        super().__init__()
        self.size = [size, size] if isinstance(size, int) else size
        self.scale_factor, self.data_format, self.name = scale_factor, data_format, name

    def forward(self, x):
        return F.interpolate(x, size=self.size, scale_factor=self.scale_factor,
                             mode=self._mode, align_corners=self._align_corners,
                             align_mode=0, data_format=self.data_format)

    def extra_repr(self) -> str:
        main = (f"scale_factor={self.scale_factor}" if self.scale_factor is not None
                else f"size={self.size}")
        name = f", name={self.name}" if self.name else ""
        return f"{main}, data_format={self.data_format}{name}"


class UpsamplingBilinear2D(_Upsampling2D):
    """Bilinear upsampling with corners aligned (``align_corners=True``), as Paddle."""

    _mode, _align_corners = "bilinear", True


class UpsamplingNearest2D(_Upsampling2D):
    """Nearest-neighbour upsampling."""


class Unfold(Layer):
    """`F.unfold` (sliding blocks as columns)."""

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self._options = dict(kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
                             dilations=dilations)

    def forward(self, x):
        return F.unfold(x, **self._options)


class Fold(Layer):
    """`F.fold` (columns of blocks summed back into an image)."""

    def __init__(self, output_sizes, kernel_sizes, dilations=1, paddings=0, strides=1,
                 name=None):
        super().__init__()
        self._options = dict(output_sizes=output_sizes, kernel_sizes=kernel_sizes,
                             strides=strides, paddings=paddings, dilations=dilations)

    def forward(self, x):
        return F.fold(x, **self._options)


class _PadND(Layer):
    """`F.pad` of the `_spatial` spatial dims of an input: `padding` is an int for
    every side, or two numbers per spatial dim from the innermost out ([left, right,
    top, bottom, front, back]), kept as given (Paddle's attribute `padding`)."""

    _spatial = 2

    def __init__(self, padding, mode: str, value: float, data_format: str, name):
        super().__init__()
        self.padding = [padding] * (2 * self._spatial) if isinstance(padding, int) else padding
        self._mode, self.value, self._data_format, self._name = mode, value, data_format, name

    def forward(self, x):
        return F.pad(x, self.padding, self._mode, self.value, self._data_format)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return (f"padding={self.padding}, mode={self._mode}, value={self.value}, "
                f"data_format={self._data_format}{name}")


class Pad1D(_PadND):
    """`F.pad` of a 3-D tensor's length by [left, right]."""

    _spatial = 1

    def __init__(self, padding, mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCL", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad2D(_PadND):
    """`F.pad` of a 4-D tensor's spatial dims by [left, right, top, bottom]."""

    def __init__(self, padding, mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_PadND):
    """`F.pad` of a 5-D tensor's spatial dims by [left, right, top, bottom, front,
    back]."""

    _spatial = 3

    def __init__(self, padding, mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCDHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class ZeroPad1D(Pad1D):
    def __init__(self, padding, data_format: str = "NCL", name=None):
        super().__init__(padding, "constant", 0.0, data_format, name)


class ZeroPad2D(Pad2D):
    def __init__(self, padding, data_format: str = "NCHW", name=None):
        super().__init__(padding, "constant", 0.0, data_format, name)


class ZeroPad3D(Pad3D):
    def __init__(self, padding, data_format: str = "NCDHW", name=None):
        super().__init__(padding, "constant", 0.0, data_format, name)


class PixelShuffle(Layer):
    """`F.pixel_shuffle`: [N, C r^2, H, W] to [N, C, H r, W r]."""

    def __init__(self, upscale_factor: int, data_format: str = "NCHW", name=None):
        super().__init__()
        check_pixel_options("PixelShuffle", upscale_factor, "upscale_factor", data_format)
        self._upscale_factor, self._data_format, self._name = upscale_factor, data_format, name

    def forward(self, x):
        return F.pixel_shuffle(x, self._upscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return _pixel_repr("upscale_factor", self._upscale_factor, self._data_format,
                           self._name)


class PixelUnshuffle(Layer):
    """`F.pixel_unshuffle`: [N, C, H r, W r] to [N, C r^2, H, W]."""

    def __init__(self, downscale_factor: int, data_format: str = "NCHW", name=None):
        super().__init__()
        check_pixel_options("PixelUnshuffle", downscale_factor, "downscale_factor",
                            data_format)
        self._downscale_factor = downscale_factor
        self._data_format, self._name = data_format, name

    def forward(self, x):
        return F.pixel_unshuffle(x, self._downscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return _pixel_repr("downscale_factor", self._downscale_factor, self._data_format,
                           self._name)


def _pixel_repr(what: str, factor: int, data_format: str, name) -> str:
    """Paddle's repr of the pixel (un)shuffle layers: the layout and the name only
    when they are not the defaults."""
    text = f"{what}={factor}"
    if data_format != "NCHW":
        text += f", data_format={data_format}"
    return text + (f", name={name}" if name is not None else "")
