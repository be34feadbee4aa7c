"""Pooling layers: MaxPool2D, AvgPool2D and AdaptiveAvgPool2D."""
from __future__ import annotations

from .. import functional as F
from .layers import Layer


class MaxPool2D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCHW", name=None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x):
        return F.max_pool2d(x, self.ksize, self.stride, self.padding, self.return_mask,
                            self.ceil_mode, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
                 name=None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x):
        return F.avg_pool2d(x, self.ksize, self.stride, self.padding, self.ceil_mode,
                            self.exclusive, self.divisor, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2D(Layer):
    def __init__(self, output_size, data_format: str = "NCHW", name=None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self._output_size, self._data_format)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"
