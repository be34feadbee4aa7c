"""Conv1D, Conv2D and Conv2DTranspose."""
from __future__ import annotations

import math

from .. import functional as F
from ..functional.conv import pair
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


class Conv2D(Layer):
    """2-D convolution with a weight [out_channels, in_channels/groups, kH, kW],
    initialized Normal(0, sqrt(2 / (in_channels * kH * kW))) as Paddle, and a zero
    bias [out_channels] (``bias_attr=False`` or ``bias=False``: no bias)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW"):
        super().__init__()
        _check_padding_mode("Conv2D", padding_mode, padding)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._kernel_size = list(pair(kernel_size, "kernel_size"))
        self._stride = list(pair(stride, "stride"))
        self._dilation = list(pair(dilation, "dilation"))
        self._padding, self._padding_mode = padding, padding_mode
        self._groups, self._data_format = groups, data_format
        std = math.sqrt(2.0 / (in_channels * math.prod(self._kernel_size)))
        self.weight = self.create_parameter(
            [out_channels, in_channels // groups, *self._kernel_size], weight_attr,
            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], bias_attr if bias else False,
                                          is_bias=True)

    def forward(self, x):
        padding = self._padding
        if self._padding_mode != "zeros":
            x = _mode_padded(x, padding, self._padding_mode, 2, self._data_format)
            padding = 0
        return F.conv2d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1, 1]:
            text += f", stride={self._stride}"
        if self._padding != 0:
            text += f", padding={self._padding}"
        if self._dilation != [1, 1]:
            text += f", dilation={self._dilation}"
        if self._groups != 1:
            text += f", groups={self._groups}"
        return text + f", data_format={self._data_format}"


class Conv1D(Layer):
    """1-D convolution over [N, C, L] ("NCL") or [N, L, C] ("NLC") inputs, weight
    [out_channels, in_channels/groups, k] initialized as Conv2D's."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 weight_attr=None, bias_attr=None, data_format: str = "NCL"):
        super().__init__()
        _check_padding_mode("Conv1D", padding_mode, padding)
        self._in_channels, self._out_channels = in_channels, out_channels
        kernel = kernel_size if isinstance(kernel_size, int) else int(list(kernel_size)[0])
        self._kernel_size = [kernel]
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._padding_mode, self._groups, self._data_format = padding_mode, groups, data_format
        std = math.sqrt(2.0 / (in_channels * kernel))
        self.weight = self.create_parameter([out_channels, in_channels // groups, kernel],
                                            weight_attr, default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], bias_attr if bias else False,
                                          is_bias=True)

    def forward(self, x):
        padding = self._padding
        if self._padding_mode != "zeros":
            x = _mode_padded(x, padding, self._padding_mode, 1, self._data_format)
            padding = 0
        return F.conv1d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)

    def extra_repr(self) -> str:
        return (f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}, "
                f"data_format={self._data_format}")


class Conv2DTranspose(Layer):
    """Transposed 2-D convolution, weight [in_channels, out_channels/groups, kH, kW]
    (initialized XavierUniform, as Paddle's), bias [out_channels]; `forward(x,
    output_size=None)`."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups: int = 1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW"):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._kernel_size = list(pair(kernel_size, "kernel_size"))
        self._stride, self._padding, self._output_padding = stride, padding, output_padding
        self._dilation, self._groups, self._data_format = dilation, groups, data_format
        self.weight = self.create_parameter(
            [in_channels, out_channels // groups, *self._kernel_size], weight_attr)
        self.bias = self.create_parameter([out_channels], bias_attr, is_bias=True)

    def forward(self, x, output_size=None):
        return F.conv2d_transpose(x, self.weight, self.bias, self._stride, self._padding,
                                  0 if output_size is not None else self._output_padding,
                                  dilation=self._dilation, groups=self._groups,
                                  output_size=output_size, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}, "
                f"data_format={self._data_format}")
