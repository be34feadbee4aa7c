"""Activation functions, composed from irflow's primitives.

Softmax and log-softmax subtract the row maximum before exponentiating so that no
exponent overflows. The maximum is detached: both functions are invariant to the
shift, so its gradient would be zero anyway, and the backward pass skips it.

A NaN input gives NaN, as Paddle's kernels do (relu aside, where Paddle gives 0 and
irflow keeps the NaN): each piecewise function takes its arithmetic branch when a
comparison fails (``where(x <= t, ..., x - t)``, not ``where(x > t, x - t, 0)``), so
that a NaN, which fails every comparison, is not turned into a constant that would
hide a diverging run.
"""
from __future__ import annotations

import math

from ...tensor import (argmax, erf, exp, log, put_along_axis, reshape, squeeze,
                       sum as reduce_sum, zeros_like)
from ...tensor import math as tensor_math
from ...ir import dtypes
from ...tensor.convert import as_tensor, cast
from ...tensor.logic import isnan, select
from ...tensor.manipulation import exact_shape, in_place
from ...tensor.random import draw, next_seed
from .common import first_max, test_twins


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
    """x where x >= 0, else negative_slope * x (the gradient at 0 is 1, as Paddle's)."""
    x = as_tensor(x)
    return select(x >= 0, x, x * negative_slope)


def rrelu(x, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = True,
          name=None):
    """Randomized leaky ReLU: x where x >= 0, else a * x with a slope a drawn per element
    from U(lower, upper) while training and fixed at (lower + upper) / 2 otherwise."""
    if not isinstance(lower, float) or not isinstance(upper, float):
        raise TypeError(f"rrelu: lower and upper must be floats, got {lower!r} and {upper!r}")
    if not 0 <= lower <= upper <= 1:
        raise ValueError(f"rrelu: expected 0 <= lower <= upper <= 1, got lower={lower}, "
                         f"upper={upper}")
    x = as_tensor(x)
    if not training:
        return leaky_relu(x, (lower + upper) / 2)
    slope = draw("uniform", next_seed(), exact_shape(x), x.dtype, min=lower, max=upper)
    out = select(x >= 0, x, x * slope)
    twins = test_twins()
    if twins is not None:
        twins[out._ir] = leaky_relu(x, (lower + upper) / 2)._ir
    return out


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
    shift = tensor_math.max_shift(x, axis)
    return x if shift is None else x - shift


def softmax(x, axis: int = -1, dtype=None, name=None):
    e = exp(_shifted(x, axis, dtype))
    return e / reduce_sum(e, axis, keepdim=True)


def log_softmax(x, axis: int = -1, dtype=None, name=None):
    shifted = _shifted(x, axis, dtype)
    return shifted - log(reduce_sum(exp(shifted), axis, keepdim=True))


# The smallest uniform draw for Gumbel noise: above 0, so that -log(-log(u)) is finite.
_GUMBEL_MIN_UNIFORM = 1e-20


def gumbel_softmax(x, temperature: float = 1.0, hard: bool = False, axis: int = -1,
                   name=None):
    """A sample of the Gumbel-softmax (concrete) distribution of the logits x:
    softmax((x + g) / temperature) along `axis`, with g = -log(-log(u)) Gumbel noise,
    u uniform, drawn per element. With `hard`, the one-hot vector of that sample's
    argmax, differentiated as the soft sample (straight-through: its value is
    exactly one-hot, its gradient the soft sample's)."""
    if not temperature > 0:
        raise ValueError(f"gumbel_softmax: temperature must be greater than 0, got "
                         f"{temperature}")
    x = as_tensor(x)
    # the noise in float32 at least: a float16 draw rounds up to 1.0 (noise +inf, a
    # row of NaN) about once in 2048
    wide = dtypes.float64 if x.dtype is dtypes.float64 else dtypes.float32
    uniform = draw("uniform", next_seed(), exact_shape(x), wide, min=_GUMBEL_MIN_UNIFORM,
                   max=1.0)
    noise = cast(-log(-log(uniform)), x.dtype)
    soft = softmax((x + noise) / temperature, axis)
    if not hard:
        return soft
    one_hot = put_along_axis(zeros_like(soft), argmax(soft, axis, keepdim=True), 1.0, axis)
    # a NaN sample (an infinite logit) keeps the value one-hot too, as Paddle's
    return select(isnan(soft), one_hot, one_hot + (soft - soft.detach()))


def softplus(x, beta: float = 1, threshold: float = 20, name=None):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold. The
    exponent is clamped at the threshold so the branch not taken never overflows."""
    x = as_tensor(x)
    scaled = x * beta
    soft = tensor_math.log1p(exp(select(scaled > threshold, float(threshold), scaled))) / beta
    return select(scaled > threshold, x, soft)


def hardtanh(x, min: float = -1.0, max: float = 1.0, name=None):  # noqa: A002
    """x limited to [min, max], as Paddle's min(max(x, min), max) (every element is
    `max` when min > max), with its gradient: 1 strictly inside the range, 0 at the
    bounds and outside (unlike `clip`, whose bounds pass the gradient)."""
    x = as_tensor(x)
    low = select(x <= min, float(min), x)
    return select(low >= max, float(max), low)


def relu6(x, name=None):
    """min(max(x, 0), 6); the gradient is 1 strictly between 0 and 6, as Paddle's."""
    return hardtanh(x, 0.0, 6.0)


def log_sigmoid(x, name=None):
    """log(1 / (1 + exp(-x))), as Paddle's kernel computes it without overflow:
    -m - log(exp(-m) + exp(-x - m)) with m = max(-x, 0). The value does not depend on
    m, so m is detached (its gradient would be zero anyway)."""
    x = as_tensor(x)
    m = select(x < 0, -x, 0.0).detach()
    return -m - log(exp(-m) + exp(-x - m))


_PRELU_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def prelu(x, weight, data_format: str = "NCHW", name=None):
    """max(0, x) + weight * min(0, x): one slope for all of x (weight of shape [] or
    [1]), or one per channel (weight [C]; the channel axis is 1, or the last for a
    channels-last `data_format`). At 0 the gradient is the slope, as Paddle's."""
    x, weight = as_tensor(x), as_tensor(weight)
    if weight.ndim > 1:
        raise ValueError(f"prelu: weight must have shape [], [1] or [C], got {weight.shape}")
    if weight.ndim == 1 and weight.shape[0] > 1:
        if data_format not in _PRELU_FORMATS:
            raise ValueError(f"prelu: data_format must be one of {', '.join(_PRELU_FORMATS)}, "
                             f"got {data_format!r}")
        axis = 1 if data_format[1] == "C" else x.ndim - 1
        if x.ndim < 2 or x.shape[axis] != weight.shape[0]:
            raise ValueError(f"prelu: {weight.shape[0]} slopes for an input of shape "
                             f"{x.shape} in {data_format}: the weight needs one per channel")
        weight = reshape(weight, [-1 if i == axis else 1 for i in range(x.ndim)])
    elif weight.ndim == 1:
        weight = reshape(weight, [])
    return select(x > 0, x, x * weight)


def hardswish(x, name=None):
    """x * clip(x + 3, 0, 6) / 6: 0 for x <= -3, x for x >= 3, x (x + 3) / 6 between,
    so that the gradient at -3 is 0 and at 3 is 1, as Paddle's."""
    x = as_tensor(x)
    return select(x <= -3.0, 0.0, select(x >= 3.0, x, x * (x + 3.0) / 6.0))


def hardsigmoid(x, slope: float = 0.1666667, offset: float = 0.5, name=None):
    """clip(slope * x + offset, 0, 1), with Paddle's gradient: slope strictly inside,
    0 at the bounds and outside."""
    y = as_tensor(x) * slope + offset
    return select(y <= 0.0, 0.0, select(y >= 1.0, 1.0, y))


def mish(x, name=None):
    """x * tanh(softplus(x)), softplus with Paddle's threshold 20."""
    x = as_tensor(x)
    return x * tensor_math.tanh(softplus(x, 1.0, 20.0))


def _exp_minus_one_below_zero(x):
    """exp(x) - 1 for x <= 0 (the exponent 0 above it, so the positive side, which
    the callers do not use, never overflows or makes a NaN gradient; at 0 the
    gradient is exp(0), as Paddle's elu and selu have it)."""
    return exp(select(x > 0, 0.0, x)) - 1.0  # (NaN fails x > 0: it stays NaN)


def elu(x, alpha: float = 1.0, name=None):
    """x where x > 0, else alpha * (exp(x) - 1) (its gradient at 0 is alpha)."""
    x = as_tensor(x)
    return select(x > 0, x, _exp_minus_one_below_zero(x) * alpha)


_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def selu(x, scale: float = _SELU_SCALE, alpha: float = _SELU_ALPHA, name=None):
    """scale * (x where x > 0, else alpha * (exp(x) - 1))."""
    x = as_tensor(x)
    return select(x > 0, x, _exp_minus_one_below_zero(x) * alpha) * scale


def glu(x, axis: int = -1, name=None):
    """a * sigmoid(b), a and b the two halves of x along `axis`."""
    from ...tensor import split
    a, b = split(as_tensor(x), 2, axis)
    return a * tensor_math.sigmoid(b)


def celu(x, alpha: float = 1.0, name=None):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which is x where x > 0 and
    alpha * (exp(x / alpha) - 1) elsewhere for either sign of alpha; the gradient at
    0 is 1, as Paddle's. The exponent of the branch not taken is 0, so a large x over
    a small alpha neither overflows nor makes a NaN gradient."""
    if alpha == 0:
        raise ZeroDivisionError(f"celu: alpha cannot be 0, got alpha={alpha!r}")
    x = as_tensor(x)
    not_positive = select(x > 0, 0.0, x)
    return select(x > 0, x, (exp(not_positive / alpha) - 1.0) * alpha)


def softshrink(x, threshold: float = 0.5, name=None):
    """x - threshold above threshold, x + threshold below -threshold, 0 between (and
    at the bounds, where the gradient is 0, as Paddle's)."""
    if threshold < 0:
        raise ValueError(f"softshrink: threshold must be no less than zero, got {threshold}")
    x = as_tensor(x)
    return select(x <= threshold, select(x >= -threshold, 0.0, x + threshold), x - threshold)


def hardshrink(x, threshold: float = 0.5, name=None):
    """x where |x| >= threshold, else 0. Paddle 3.3.1 keeps x at exactly +-threshold
    (gradient 1 there), and keeps every x for a negative threshold."""
    x = as_tensor(x)
    return select(tensor_math.abs(x) < threshold, 0.0, x)


def tanhshrink(x, name=None):
    """x - tanh(x)."""
    x = as_tensor(x)
    return x - tensor_math.tanh(x)


def thresholded_relu(x, threshold: float = 1.0, value: float = 0.0, name=None):
    """x where x > threshold, else `value` (gradient 0 there, and at the threshold)."""
    x = as_tensor(x)
    return select(x <= threshold, float(value), x)


def softsign(x, name=None):
    """x / (1 + |x|)."""
    x = as_tensor(x)
    return x / (tensor_math.abs(x) + 1.0)


def maxout(x, groups: int, axis: int = 1, name=None):
    """The maximum over each run of `groups` consecutive channels of a 4-D x: channel
    axis 1 (NCHW) or 3 / -1 (NHWC), which shrinks from C to C / groups. A tie gives
    the gradient to the first channel of the run, as Paddle's kernel does."""
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"maxout: x must be a 4-D tensor, got shape {x.shape}")
    if axis not in (1, -1, 3):
        raise ValueError(f"maxout: axis must be 1 (NCHW), 3 or -1 (NHWC), got {axis}")
    if not isinstance(groups, int) or groups <= 1:
        raise ValueError(f"maxout: groups must be an int larger than 1, got {groups!r}")
    axis %= 4
    shape = list(exact_shape(x))
    if not isinstance(shape[axis], int) or shape[axis] % groups:
        raise ValueError(f"maxout: the number of channels (axis {axis} of shape {shape}) must "
                         f"be static and divisible by groups={groups}")
    grouped = shape[:axis] + [shape[axis] // groups, groups] + shape[axis + 1:]
    return squeeze(first_max(reshape(x, grouped), axis + 1)[0], axis + 1)


# In-place forms (Paddle's ``F.relu_``, ...): x takes the result and is returned, with
# Paddle's rules for changing a tensor in place (`irflow.tensor.manipulation.in_place`:
# a leaf that requires a gradient cannot be; an intermediate passes gradients on).

def relu_(x, name=None):
    """`relu` in place: x takes the result and is returned."""
    return in_place(x, relu(x), "relu")


def tanh_(x, name=None):
    """`tanh` in place: x takes the result and is returned."""
    return in_place(x, tanh(x), "tanh")


def elu_(x, alpha: float = 1.0, name=None):
    """`elu` in place; as in Paddle, only for alpha >= 0 (a negative alpha makes elu
    non-invertible, which Paddle's in-place gradient needs)."""
    if alpha < 0:
        raise ValueError(f"elu_: alpha must be >= 0 (use elu for a negative alpha), got {alpha}")
    return in_place(x, elu(x, alpha), "elu")


def leaky_relu_(x, negative_slope: float = 0.01, name=None):
    """`leaky_relu` in place: x takes the result and is returned."""
    return in_place(x, leaky_relu(x, negative_slope), "leaky_relu")


def hardtanh_(x, min: float = -1.0, max: float = 1.0, name=None):  # noqa: A002
    """`hardtanh` in place: x takes the result and is returned."""
    return in_place(x, hardtanh(x, min, max), "hardtanh")


def thresholded_relu_(x, threshold: float = 1.0, value: float = 0.0, name=None):
    """`thresholded_relu` in place: x takes the result and is returned."""
    return in_place(x, thresholded_relu(x, threshold, value), "thresholded_relu")


def softmax_(x, axis: int = -1, dtype=None, name=None):
    """`softmax` in place; given a `dtype`, as in Paddle, in place on x cast to it (a
    new tensor, even of x's own dtype), so x itself is left unchanged."""
    target = x if dtype is None else as_tensor(x).astype(dtype).clone()
    return in_place(target, softmax(target, axis), "softmax")
