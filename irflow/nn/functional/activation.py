"""Activation functions, composed from irflow's primitives.

Softmax and log-softmax subtract the row maximum before exponentiating so that no
exponent overflows. The maximum is detached: both functions are invariant to the
shift, so its gradient would be zero anyway, and the backward pass skips it.
"""
from __future__ import annotations

import math

from ...tensor import erf, exp, log, max as reduce_max, sum as reduce_sum, where
from ...tensor import math as tensor_math
from ...tensor.convert import as_tensor


def relu(x, name=None):
    return tensor_math.relu(x)


def sigmoid(x, name=None):
    return tensor_math.sigmoid(x)


def tanh(x, name=None):
    return tensor_math.tanh(x)


def silu(x, inplace=False, name=None):
    """x * sigmoid(x) (also known as swish)."""
    x = as_tensor(x)
    return x * tensor_math.sigmoid(x)


def leaky_relu(x, negative_slope: float = 0.01, name=None):
    """x where x > 0, else negative_slope * x (the gradient at 0 is negative_slope)."""
    x = as_tensor(x)
    return where(x > 0, x, x * negative_slope)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x, approximate=False, name=None):
    """x * Phi(x), with the exact normal CDF (erf) unless `approximate` is True or
    "tanh" (the tanh approximation)."""
    x = as_tensor(x)
    if approximate is True or approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
        return x * 0.5 * (tensor_math.tanh(inner) + 1.0)
    if approximate is False or approximate == "none":
        return x * 0.5 * (erf(x * (1.0 / math.sqrt(2.0))) + 1.0)
    raise ValueError(f"approximate must be a bool, 'tanh' or 'none', got {approximate!r}")


def _shifted(x, axis: int, dtype):
    x = as_tensor(x)
    if dtype is not None:
        x = x.astype(dtype)
    return x - reduce_max(x, axis, keepdim=True).detach()


def softmax(x, axis: int = -1, dtype=None, name=None):
    e = exp(_shifted(x, axis, dtype))
    return e / reduce_sum(e, axis, keepdim=True)


def log_softmax(x, axis: int = -1, dtype=None, name=None):
    shifted = _shifted(x, axis, dtype)
    return shifted - log(reduce_sum(exp(shifted), axis, keepdim=True))
