"""Pooling layers: max and average pools, fixed and adaptive, over 1-D, 2-D and 3-D
inputs."""
from __future__ import annotations

from .. import functional as F
from .layers import Layer


class _MaxPoolNd(Layer):
    """MaxPool2D and MaxPool3D: `_pool` with the arguments kept as given."""

    _pool = None

    def __init__(self, kernel_size, stride, padding, return_mask: bool, ceil_mode: bool,
                 data_format: str, name):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x):
        return self._pool(x, self.ksize, self.stride, self.padding, self.return_mask,
                          self.ceil_mode, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class MaxPool2D(_MaxPoolNd):
    _pool = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCHW", name=None):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                         name)


class MaxPool3D(_MaxPoolNd):
    """`F.max_pool3d` as a layer: the maximum of each window of [N, C, D, H, W] inputs."""

    _pool = staticmethod(F.max_pool3d)

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCDHW", name=None):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                         name)


class _AvgPoolNd(Layer):
    """AvgPool2D and AvgPool3D: `_pool` with the arguments kept as given."""

    _pool = None

    def __init__(self, kernel_size, stride, padding, ceil_mode: bool, exclusive: bool,
                 divisor_override, data_format: str, name):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x):
        return self._pool(x, self.ksize, self.stride, self.padding, self.ceil_mode,
                          self.exclusive, self.divisor, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(_AvgPoolNd):
    _pool = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
                 name=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                         data_format, name)


class AvgPool3D(_AvgPoolNd):
    """`F.avg_pool3d` as a layer: the mean of each window of [N, C, D, H, W] inputs."""

    _pool = staticmethod(F.avg_pool3d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCDHW",
                 name=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                         data_format, name)


class AdaptiveAvgPool2D(Layer):
    def __init__(self, output_size, data_format: str = "NCHW", name=None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self._output_size, self._data_format)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class AdaptiveAvgPool3D(Layer):
    """`F.adaptive_avg_pool3d` as a layer: means over an output_size grid of bins."""

    def __init__(self, output_size, data_format: str = "NCDHW", name=None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x):
        return F.adaptive_avg_pool3d(x, self._output_size, self._data_format)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class MaxPool1D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, name=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode = return_mask, ceil_mode

    def forward(self, x):
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding, self.return_mask,
                            self.ceil_mode)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, exclusive: bool = True,
                 ceil_mode: bool = False, name=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.exclusive, self.ceil_mode = exclusive, ceil_mode

    def forward(self, x):
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.exclusive,
                            self.ceil_mode)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveMaxPool2D(Layer):
    def __init__(self, output_size, return_mask: bool = False, name=None):
        super().__init__()
        self._output_size, self._return_mask = output_size, return_mask

    def forward(self, x):
        return F.adaptive_max_pool2d(x, self._output_size, self._return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class AdaptiveAvgPool1D(Layer):
    def __init__(self, output_size: int, name=None):
        super().__init__()
        self.output_size, self.name = output_size, name

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1D(Layer):
    def __init__(self, output_size, return_mask: bool = False, name=None):
        super().__init__()
        self.output_size, self.return_mask, self.name = output_size, return_mask, name

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, return_mask={self.return_mask}"


class AdaptiveMaxPool3D(Layer):
    """`F.adaptive_max_pool3d` as a layer: maxima over an output_size grid of bins."""

    def __init__(self, output_size, return_mask: bool = False, name=None):
        super().__init__()
        self._output_size, self._return_mask = output_size, return_mask

    def forward(self, x):
        return F.adaptive_max_pool3d(x, self._output_size, self._return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class _MaxUnPoolNd(Layer):
    """MaxUnPool1D, 2D and 3D: `_unpool` with the arguments kept as given."""

    _unpool = None

    def __init__(self, kernel_size, stride, padding, data_format: str, output_size, name):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.data_format, self.output_size = data_format, output_size

    def forward(self, x, indices):
        return self._unpool(x, indices, self.ksize, self.stride, self.padding,
                            self.data_format, self.output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class MaxUnPool1D(_MaxUnPoolNd):
    """`F.max_unpool1d` as a layer: undoes MaxPool1D given its mask."""

    _unpool = staticmethod(F.max_unpool1d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format: str = "NCL",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool2D(_MaxUnPoolNd):
    """`F.max_unpool2d` as a layer: undoes MaxPool2D given its mask."""

    _unpool = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format: str = "NCHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool3D(_MaxUnPoolNd):
    """`F.max_unpool3d` as a layer: undoes MaxPool3D given its mask."""

    _unpool = staticmethod(F.max_unpool3d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format: str = "NCDHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class _LPPoolNd(Layer):
    """LPPool1D and LPPool2D: `_pool` with the arguments kept as given (norm_type as a
    float, as Paddle keeps it)."""

    _pool = None

    def __init__(self, norm_type, kernel_size, stride, padding, ceil_mode: bool,
                 data_format: str, name):
        super().__init__()
        self.norm_type, self.kernel_size = float(norm_type), kernel_size
        self.stride, self.padding = stride, padding
        self.ceil_mode, self.data_format = ceil_mode, data_format

    def forward(self, x):
        return self._pool(x, self.norm_type, self.kernel_size, self.stride, self.padding,
                          self.ceil_mode, self.data_format)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class LPPool1D(_LPPoolNd):
    """`F.lp_pool1d` as a layer: the power-average of each window of [N, C, L] inputs."""

    _pool = staticmethod(F.lp_pool1d)

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 data_format: str = "NCL", name=None):
        super().__init__(norm_type, kernel_size, stride, padding, ceil_mode, data_format, name)


class LPPool2D(_LPPoolNd):
    """`F.lp_pool2d` as a layer: the power-average of each window of [N, C, H, W] inputs."""

    _pool = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 data_format: str = "NCHW", name=None):
        super().__init__(norm_type, kernel_size, stride, padding, ceil_mode, data_format, name)
