"""Activation layers: each calls its `irflow.nn.functional` counterpart."""
from __future__ import annotations

from .. import functional as F
from .layers import Layer


class ReLU(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class Sigmoid(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Layer):
    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.tanh(x)


class SiLU(Layer):
    def __init__(self, inplace: bool = False, name=None):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


class GELU(Layer):
    """GELU with the exact erf form, or the tanh approximation (``approximate=True``)."""

    def __init__(self, approximate=False, name=None):
        super().__init__()
        self._approximate = approximate

    def forward(self, x):
        return F.gelu(x, self._approximate)

    def extra_repr(self) -> str:
        return f"approximate={self._approximate}"


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self._negative_slope}"


class Softmax(Layer):
    def __init__(self, axis: int = -1, name=None):
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self._axis)
