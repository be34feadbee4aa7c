"""Upsample, Unfold and Pad2D: layers over `interpolate`, `unfold` and `pad`."""
from __future__ import annotations

from .. import functional as F
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


class Unfold(Layer):
    """`F.unfold` (sliding blocks as columns)."""

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self._options = dict(kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
                             dilations=dilations)

    def forward(self, x):
        return F.unfold(x, **self._options)


class Pad2D(Layer):
    """`F.pad` of a 4-D tensor's spatial dims by [left, right, top, bottom]."""

    def __init__(self, padding, mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self._padding = [padding] * 4 if isinstance(padding, int) else list(padding)
        self._mode, self._value, self._data_format = mode, value, data_format

    def forward(self, x):
        return F.pad(x, self._padding, self._mode, self._value, self._data_format)
