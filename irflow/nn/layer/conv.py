"""Conv1D, Conv2D, Conv3D and their transposes."""
from __future__ import annotations

import math

from .. import functional as F
from ..functional.conv import ntuple
from ..initializer import Normal
from .layers import Layer

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _check_padding_mode(layer: str, padding_mode: str, padding) -> None:
    """Paddle pads by a non-zero mode with `F.pad` before a padding-free conv, which it
    only does for one int padding applied to every side."""
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"{layer}: padding_mode must be one of {_PADDING_MODES}, "
                         f"got {padding_mode!r}")
    if padding_mode != "zeros" and not isinstance(padding, int):
        raise TypeError(f"{layer}: padding_mode {padding_mode!r} needs an int padding, "
                        f"got {padding!r}")


def _mode_padded(x, padding: int, padding_mode: str, spatial_dims: int, data_format: str):
    """`x` padded by `padding` on both sides of every spatial axis in `padding_mode`
    (the conv that follows then pads nothing)."""
    return F.pad(x, [padding] * (2 * spatial_dims), mode=padding_mode, data_format=data_format)


class _ConvNd(Layer):
    """What Paddle's convolution layers share: the arguments kept as lists (kernel size,
    stride and dilation one int per spatial axis), the weight and bias, and Paddle's
    repr, which names the arguments that differ from their defaults."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding,
                 dilation, groups: int, padding_mode: str, output_padding, weight_attr,
                 bias_attr, data_format: str):
        super().__init__()
        layer = type(self).__name__
        _check_padding_mode(layer, padding_mode, padding)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{layer}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._kernel_size = list(ntuple(kernel_size, self._dims, "kernel_size"))
        self._stride = list(ntuple(stride, self._dims, "stride"))
        self._dilation = list(ntuple(dilation, self._dims, "dilation"))
        self._padding, self._padding_mode = padding, padding_mode
        self._output_padding = output_padding
        self._groups, self._data_format = groups, data_format
        self.weight = self.create_parameter(self._weight_shape(), weight_attr,
                                            default_initializer=self._initializer())
        self.bias = self.create_parameter([out_channels], bias_attr, is_bias=True)

    def _weight_shape(self) -> list[int]:
        if self._transposed:
            return [self._in_channels, self._out_channels // self._groups, *self._kernel_size]
        return [self._out_channels, self._in_channels // self._groups, *self._kernel_size]

    def _initializer(self):
        """Normal(0, sqrt(2 / (in_channels * kernel volume))) as Paddle's convolutions;
        None (the default XavierUniform) for the transposed ones, as Paddle's."""
        if self._transposed:
            return None
        return Normal(0.0, math.sqrt(2.0 / (self._in_channels * math.prod(self._kernel_size))))

    def _padded(self, x):
        """(x, the padding left to the convolution): with a non-zero `padding_mode`, x
        padded in that mode and no padding left."""
        if self._padding_mode == "zeros":
            return x, self._padding
        return _mode_padded(x, self._padding, self._padding_mode, self._dims,
                            self._data_format), 0

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * self._dims:
            text += f", stride={self._stride}"
        if self._padding != 0:
            text += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            text += f", padding_mode={self._padding_mode}"
        if self._output_padding != 0:
            text += f", output_padding={self._output_padding}"
        if self._dilation != [1] * self._dims:
            text += f", dilation={self._dilation}"
        if self._groups != 1:
            text += f", groups={self._groups}"
        return text + f", data_format={self._data_format}"


class Conv1D(_ConvNd):
    """1-D convolution over [N, C, L] ("NCL") or [N, L, C] ("NLC") inputs, weight
    [out_channels, in_channels/groups, k] initialized as Conv2D's."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 weight_attr=None, bias_attr=None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, 0, weight_attr, bias_attr if bias else False,
                         data_format)

    def forward(self, x):
        x, padding = self._padded(x)
        return F.conv1d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)


class Conv2D(_ConvNd):
    """2-D convolution with a weight [out_channels, in_channels/groups, kH, kW],
    initialized Normal(0, sqrt(2 / (in_channels * kH * kW))) as Paddle, and a zero
    bias [out_channels] (``bias_attr=False`` or ``bias=False``: no bias)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, 0, weight_attr, bias_attr if bias else False,
                         data_format)

    def forward(self, x):
        x, padding = self._padded(x)
        return F.conv2d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)


class Conv3D(_ConvNd):
    """3-D convolution over [N, C, D, H, W] ("NCDHW") or [N, D, H, W, C] ("NDHWC")
    inputs, weight [out_channels, in_channels/groups, kD, kH, kW] initialized as
    Conv2D's, and a zero bias [out_channels] (``bias_attr=False`` or ``bias=False``:
    no bias)."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 weight_attr=None, bias_attr=None, data_format: str = "NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, 0, weight_attr, bias_attr if bias else False,
                         data_format)

    def forward(self, x):
        x, padding = self._padded(x)
        return F.conv3d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)


class Conv1DTranspose(_ConvNd):
    """Transposed 1-D convolution, weight [in_channels, out_channels/groups, k]
    (initialized XavierUniform, as Paddle's), bias [out_channels]; `forward(x,
    output_size=None)`. (groups comes before dilation, Paddle's order.)"""

    _dims, _transposed = 1, True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, dilation=1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", output_padding, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv1d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  0 if output_size is not None else self._output_padding,
                                  self._groups, self._dilation, output_size,
                                  self._data_format)


class Conv2DTranspose(_ConvNd):
    """Transposed 2-D convolution, weight [in_channels, out_channels/groups, kH, kW]
    (initialized XavierUniform, as Paddle's), bias [out_channels]; `forward(x,
    output_size=None)`."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups: int = 1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", output_padding, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv2d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  0 if output_size is not None else self._output_padding,
                                  dilation=self._dilation, groups=self._groups,
                                  output_size=output_size, data_format=self._data_format)


class Conv3DTranspose(_ConvNd):
    """Transposed 3-D convolution, weight [in_channels, out_channels/groups, kD, kH,
    kW] (initialized XavierUniform, as Paddle's), bias [out_channels]; `forward(x,
    output_size=None)`. (dilation comes before groups here, unlike
    `F.conv3d_transpose`: Paddle's order.)"""

    _dims, _transposed = 3, True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups: int = 1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", output_padding, weight_attr, bias_attr, data_format)

    def forward(self, x, output_size=None):
        return F.conv3d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  0 if output_size is not None else self._output_padding,
                                  self._groups, self._dilation, output_size,
                                  self._data_format)
