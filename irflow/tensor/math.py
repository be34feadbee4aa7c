"""Elementwise math, reductions and matrix products: Paddle's ``paddle.*`` math API.

Each function is a thin layer over one registered op (`apply`), or a composition of
a few, so it runs eagerly, records gradients and traces into IR alike.
"""
from __future__ import annotations

import math as _math

import numpy as np

from ..dispatch import apply
from ..ir import dtypes
from .convert import as_tensor, cast, promote
from .logic import (BFLOAT16_ARRAY_DTYPE, equal, greater_equal, greater_than, isinf, isnan,
                    less_equal, less_than, logical_and, logical_or, logical_xor, not_equal,
                    select)
from .tensor import Tensor



def _unary(op: str):
    def fn(x, name=None):
        x = as_tensor(x)
        if x.dtype is dtypes.bfloat16:
            return _in_float32(fn, x)
        return apply(op, (x,))
    fn.__name__ = op
    fn.__doc__ = f"Elementwise `{op}` of x (bfloat16 is computed in float32)."
    return fn


def _float_unary(op: str):
    """A unary op defined on floats: integer inputs are computed in float32."""
    def fn(x, name=None):
        x = as_tensor(x)
        if x.dtype is dtypes.bfloat16:
            return _in_float32(fn, x)
        if not x.dtype.is_float:
            x = cast(x, dtypes.float32)
        return apply(op, (x,))
    fn.__name__ = op
    fn.__doc__ = (f"Elementwise `{op}` of x (integer inputs are computed in float32, "
                  "bfloat16 in float32 rounded back).")
    return fn


def _binary(op: str, bfloat16_pairs: bool = False):
    """The binary op `op` after promotion; `bfloat16_pairs`: two bfloat16 tensors
    are computed (in float32), as Paddle's CPU kernel of `op` computes them, where
    other ops refuse them (see `_has_scalar`)."""
    def fn(x, y, name=None):
        a, b = promote(x, y)
        if a.dtype is dtypes.bfloat16 and (bfloat16_pairs or _has_scalar(x, y)):
            return _both_in_float32(fn, a, b)
        return apply(op, (a, b))
    fn.__name__ = op
    return fn


abs = _unary("abs")  # noqa: A001  (Paddle's name)
_neg = _unary("neg")


def neg(x, name=None) -> Tensor:
    """-x, elementwise (bfloat16 computed in float32); of a bool tensor its values, as
    Paddle's (NumPy refuses it), in a new tensor."""
    x = as_tensor(x)
    return logical_or(x, x) if x.dtype.is_bool else _neg(x)


sign = _unary("sign")
exp = _float_unary("exp")
log = _float_unary("log")
sqrt = _float_unary("sqrt")
rsqrt = _float_unary("rsqrt")
tanh = _float_unary("tanh")
sigmoid = _float_unary("sigmoid")
erf = _float_unary("erf")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
asin = _float_unary("asin")
acos = _float_unary("acos")
atan = _float_unary("atan")
sinh = _float_unary("sinh")
cosh = _float_unary("cosh")
asinh = _float_unary("asinh")
acosh = _float_unary("acosh")
atanh = _float_unary("atanh")
expm1 = _float_unary("expm1")
lgamma = _float_unary("lgamma")
digamma = _float_unary("digamma")
erfinv = _float_unary("erfinv")


def logit(x, eps=None, name=None) -> Tensor:
    """log(x / (1 - x)), elementwise, as Paddle's: with `eps`, x is first clipped to
    [eps, 1 - eps] (so the gradient is 0 outside it); without, it is NaN outside
    [0, 1]. Integer inputs are computed in float32."""
    x = _as_float(x)
    if eps is not None:
        x = clip(x, float(eps), 1 - float(eps))
    return _log_odds(x)


def _log_odds(x: Tensor) -> Tensor:
    """log(x / (1 - x)), whose gradient 1 / (x (1 - x)) is +inf at 0 and 1, as
    Paddle's: there the quotient's chain rule multiplies an infinite slope by a zero
    (NaN), so 0 and 1 take log(x) - log1p(-x) instead, each of its terms fed a
    harmless 1/2 elsewhere."""
    edge = logical_or(equal(x, 0), equal(x, 1))
    inside = _select(edge, 0.5, x)
    at_edge = _select(edge, x, 0.5)
    return _select(edge, subtract(log(at_edge), log1p(neg(at_edge))),
                   log(divide(inside, subtract(1, inside))))


def atan2(x, y, name=None) -> Tensor:
    """The angle of the point (y, x) in radians, in [-pi, pi], elementwise: Paddle's
    ``atan2(x, y)`` is arctan(x / y) with the quadrant of (y, x), as NumPy's
    ``arctan2(x, y)``. Integer inputs are computed in float64, as in Paddle."""
    x, y = as_tensor(x), as_tensor(y)
    if not (x.dtype.is_float and y.dtype.is_float):
        x, y = cast(x, dtypes.float64), cast(y, dtypes.float64)
    return apply("atan2", promote(x, y))


def _rounding(op: str):
    """floor, ceil, round: an integer tensor is whole already and comes back as a copy
    in its own dtype, as in Paddle (it was computed in float32)."""
    float_fn = _float_unary(op)

    def fn(x, name=None):
        x = as_tensor(x)
        if x.dtype.is_int:
            return apply("cast", (x,), {"dtype": x.dtype})
        return float_fn(x)
    fn.__name__ = op
    fn.__doc__ = f"Elementwise `{op}` of x (integer inputs are returned unchanged)."
    return fn


floor = _rounding("floor")
ceil = _rounding("ceil")
_round_half_even = _rounding("round")
relu = _unary("relu")


def _bool_as_logical(op: str, logical_op: str, bfloat16_pairs: bool = False):
    """add/multiply, which on two bool tensors are logical or/and, as in Paddle;
    `bfloat16_pairs` as `_binary`'s."""
    def fn(x, y, name=None):
        a, b = promote(x, y)
        value = a._value  # the dtype read cheaply: this is the hot path of eager code
        is_bool = value.dtype.kind == "b" if value is not None else a.dtype.is_bool
        if not is_bool and (value.dtype == BFLOAT16_ARRAY_DTYPE if value is not None
                            else a.dtype is dtypes.bfloat16) and (
                                bfloat16_pairs or _has_scalar(x, y)):
            return _both_in_float32(fn, a, b)
        return apply(logical_op if is_bool else op, (a, b))
    fn.__name__ = op
    return fn


add = _bool_as_logical("add", "logical_or")
# Paddle 3.3's CPU kernels subtract, multiply, floor-divide and take maxima and minima
# of two bfloat16 tensors, but refuse to add them or take their remainder
_subtract = _binary("sub", bfloat16_pairs=True)
multiply = _bool_as_logical("mul", "logical_and", bfloat16_pairs=True)


def subtract(x, y, name=None, *, alpha=1) -> Tensor:
    """``x - alpha * y`` (Paddle 3.3's `alpha`, a scale of y)."""
    return _subtract(x, y if alpha == 1 else multiply(y, alpha))


def round(x, decimals=0, name=None) -> Tensor:  # noqa: A001  (Paddle's name)
    """x rounded to `decimals` places, halves to even, as Paddle's (and NumPy's):
    x * 10**decimals rounded and divided back, or for a negative `decimals` (tens,
    hundreds) x / 10**-decimals rounded and multiplied back, in x's dtype. Integer
    inputs come back unchanged."""
    x = as_tensor(x)
    decimals = int(decimals)
    if decimals == 0 or not x.dtype.is_float:
        return _round_half_even(x)
    if decimals > 0:
        return divide(_round_half_even(multiply(x, 10.0 ** decimals)), 10.0 ** decimals)
    return multiply(_round_half_even(divide(x, 10.0 ** -decimals)), 10.0 ** -decimals)


maximum = _binary("maximum", bfloat16_pairs=True)
minimum = _binary("minimum", bfloat16_pairs=True)
remainder = _binary("mod")
mod = remainder


_ROUNDING_MODES = (None, "trunc", "floor")


def divide(x, y, name=None, *, rounding_mode=None) -> Tensor:
    """x / y; integer operands divide as floats (Paddle 3's true division). With
    `rounding_mode` 'trunc' or 'floor' (Paddle 3.3), the quotient rounded toward zero
    or down, in the inputs' dtype, which as in Paddle never requires a gradient."""
    if rounding_mode not in _ROUNDING_MODES:
        raise ValueError(f"divide: rounding_mode should be one of {_ROUNDING_MODES}, not "
                         f"{rounding_mode!r}")
    if rounding_mode is None:
        return _divide(x, y)
    if rounding_mode == "floor":
        return floor_divide(x, y)
    x, y = promote(x, y)
    if not x.dtype.is_float:
        return _int_trunc_divide(x, y)
    return trunc(_divide(x, y)).detach()


def _int_trunc_divide(x: Tensor, y: Tensor) -> Tensor:
    """x / y rounded toward zero for integers: the floor quotient, one more where the
    division is inexact and the quotient negative (x and y of opposite signs).
    Never through |x|, which has no value for the dtype's minimum (|-128| is -128 in
    int8, and the quotient came out with the wrong sign)."""
    quotient = floor_divide(x, y)
    negative = logical_xor(less_than(x, 0), less_than(y, 0))
    inexact = not_equal(remainder(x, y), 0)
    return _select(logical_and(negative, inexact), add(quotient, 1), quotient)


def _divide(x, y) -> Tensor:
    """x / y, ints as floats: `divide` without a rounding mode (the ``/`` operator)."""
    a, b = promote(*_int_tensor_as_float(x, y))
    if a.dtype is dtypes.bfloat16 and _has_scalar(x, y):
        return _both_in_float32(_divide, a, b)
    if not a.dtype.is_float:
        a, b = cast(a, dtypes.float32), cast(b, dtypes.float32)
    return apply("div", (a, b))


def _int_tensor_as_float(x, y) -> tuple:
    """x and y, an int or bool tensor that meets a Python number cast to float32 first:
    true division takes the number as it is (``uint8 / -2`` divides by -2.0, as in
    Paddle), not wrapped into the tensor's dtype as other arithmetic would."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor) and x.dtype.kind in ("int", "bool"):
        return cast(x, dtypes.float32), y
    if isinstance(y, Tensor) and not isinstance(x, Tensor) and y.dtype.kind in ("int", "bool"):
        return x, cast(y, dtypes.float32)
    return x, y


def trunc(input, name=None) -> Tensor:  # noqa: A002  (Paddle's name)
    """x rounded toward zero (-1.7 -> -1, -0.5 -> -0.0); an integer tensor comes back
    as it is. Its gradient is 0, as Paddle's."""
    x = as_tensor(input)
    if not x.dtype.is_float:
        return floor(x)
    return _select(x < 0, ceil(x), floor(x))  # (NaN fails x < 0: floor keeps it)


def fmax(x, y, name=None) -> Tensor:
    """The elementwise maximum ignoring NaN: where one of x and y is NaN, the other
    (NaN only where both are); a tie goes to x, and so does its gradient, as Paddle's."""
    return _ignoring_nan(x, y, greater_equal)


def fmin(x, y, name=None) -> Tensor:
    """The elementwise minimum ignoring NaN (see `fmax`)."""
    return _ignoring_nan(x, y, less_equal)


def _ignoring_nan(x, y, keeps_x) -> Tensor:
    """x where ``keeps_x(x, y)`` holds or y is NaN, else y."""
    x, y = promote(x, y)
    return _select(logical_or(isnan(y), keeps_x(x, y)), x, y)


def floor_divide(x, y, name=None) -> Tensor:
    """x // y, rounding toward -inf (Python's rule). Not differentiable: as in Paddle
    the result never requires a gradient. Floats follow Python's (and NumPy's, and
    Paddle's) divmod, not floor(x / y), so that ``x == (x // y) * y + x % y``:
    1.0 // 0.1 is 9.0, 0.1 being a little more than a tenth, though 1.0 / 0.1
    rounds to 10.0. float16 is computed in float32, as NumPy's."""
    a, b = promote(x, y)
    if a.dtype is dtypes.bfloat16:  # Paddle's kernel takes two bfloat16 tensors too
        return _both_in_float32(floor_divide, a, b)
    if a.dtype is dtypes.float16:
        return cast(_float_floor_divide(cast(a, dtypes.float32), cast(b, dtypes.float32)),
                    dtypes.float16)
    if a.dtype.is_float:
        return _float_floor_divide(a, b).detach()
    return apply("div", (a, b))


def _float_floor_divide(x: Tensor, y: Tensor) -> Tensor:
    """x // y for floats, step by step as NumPy's ``npy_divmod`` (and Paddle's kernel),
    so that every rounding is the same: x less fmod(x, y) (exact) divided by y, one
    less where the remainder and y differ in sign, then rounded to the nearest whole
    number. fmod is |x| % |y| (the remainder of two non-negative numbers needs no
    sign correction) with x's sign. A zero y gives x / y (inf or NaN), a zero
    quotient the sign of x / y."""
    quotient = divide(x, y)
    magnitude = remainder(abs(x), abs(y))
    truncated = _select(less_than(x, 0), neg(magnitude), magnitude)
    ratio = divide(subtract(x, truncated), y)
    other_sign = logical_and(not_equal(truncated, 0),
                             logical_xor(less_than(y, 0), less_than(truncated, 0)))
    ratio = _select(other_sign, subtract(ratio, 1.0), ratio)
    whole = floor(ratio)
    whole = _select(greater_than(subtract(ratio, whole), 0.5), add(whole, 1.0), whole)
    whole = _select(equal(ratio, 0), multiply(quotient, 0.0), whole)
    return _select(equal(y, 0), quotient, whole)


def pow(x, y, name=None) -> Tensor:  # noqa: A001  (Paddle's name)
    """x ** y in the promoted dtype: integers stay integers (``2 ** 10``), an int
    tensor to a float power gives float32. An integer tensor to a Python int power of
    at least 0 is multiplied out by squaring in its own dtype, so a result past its
    range wraps around as Paddle's (and NumPy's) does; the `pow` op is defined on
    floats, so other integer powers are computed in float64, exact below 2**53."""
    if isinstance(y, int) and not isinstance(y, bool) and y >= 0 \
            and isinstance(x, Tensor) and (x.dtype.is_int or x.dtype.is_bool):
        return _int_power(cast(x, dtypes.int64) if x.dtype.is_bool else x, y)
    scalar = _has_scalar(x, y)
    x, y = promote(x, y)
    if x.dtype is dtypes.bfloat16 and scalar:
        return _both_in_float32(pow, x, y)
    if x.dtype.is_float:
        return apply("pow", (x, y))
    if x.dtype.is_bool:
        x, y = cast(x, dtypes.int64), cast(y, dtypes.int64)
    power = apply("pow", (cast(x, dtypes.float64), cast(y, dtypes.float64)))
    # 0 to a negative power is 0 in Paddle's integer pow (inf cast to int64 was its minimum)
    power = apply("select", (apply("isinf", (power,)), as_tensor(0.0, like=power), power))
    return cast(power, x.dtype)


def _int_power(x: Tensor, exponent: int) -> Tensor:
    """x ** exponent (an int of at least 0) for an integer x, by squaring: integer
    multiplications, which wrap around past the dtype's range."""
    result, base = None, x
    while exponent:
        if exponent & 1:
            result = base if result is None else multiply(result, base)
        exponent >>= 1
        if exponent:
            base = multiply(base, base)
    return add(multiply(x, 0), 1) if result is None else result  # x ** 0: ones


def square(x, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("mul", (x, x))


def reciprocal(x, name=None) -> Tensor:
    return divide(1.0, x)


def log1p(x, name=None) -> Tensor:
    """log(1 + x), accurate near 0, as Paddle's: 1 + x rounded to u loses every x
    below the dtype's epsilon (log(1 + 1e-10) is 0 in float32), so the rounding
    error c = (u - 1) - x, exact, is taken back: log(1 + x) = log(u) - c / u to
    second order in c. Where u is 0 or infinite, log(u) is the answer (-inf, inf or
    NaN), and the formula is fed 0 there so that its gradient stays finite.
    Integer inputs are computed in float32, bfloat16 in float32 rounded back."""
    x = as_tensor(x)
    if x.dtype is dtypes.bfloat16:
        return _in_float32(log1p, x)
    x = _as_float(x)
    u = add(x, 1.0)
    edge = logical_or(equal(u, 0.0), isinf(u))
    safe_x = select(edge, as_tensor(0, like=x), x)
    safe_u = add(safe_x, 1.0)
    rounding = subtract(subtract(safe_u, 1.0), safe_x)
    return select(edge, log(u), subtract(log(safe_u), divide(rounding, safe_u)))


def log2(x, name=None) -> Tensor:
    """The base-2 logarithm, log(x) / log(2); integer inputs give float32, bfloat16 is
    computed in float32 and rounded once, as Paddle's kernel."""
    return _log_base(x, 2.0)


def log10(x, name=None) -> Tensor:
    """The base-10 logarithm (see `log2`)."""
    return _log_base(x, 10.0)


def _log_base(x, base: float) -> Tensor:
    x = as_tensor(x)
    if x.dtype is dtypes.bfloat16:
        return _in_float32(_log_base, x, base)
    return divide(log(x), _math.log(base))


def lerp(x, y, weight, name=None) -> Tensor:
    """x + weight * (y - x), broadcast, for float tensors (Paddle has no integer
    lerp). Unlike Paddle's, whose weight gets no gradient, a weight tensor that
    requires one gets it."""
    x, y = promote(x, y)
    if not x.dtype.is_float:
        raise TypeError(f"lerp needs float tensors, as in Paddle, got {x.dtype.name}")
    weight = cast(as_tensor(weight, like=x), x.dtype)
    return add(x, multiply(weight, subtract(y, x)))


def logaddexp(x, y, name=None) -> Tensor:
    """log(exp(x) + exp(y)) without overflow, by Paddle's formula max(x, y) +
    log1p(exp(-|x - y|)): so, as in Paddle, two equal infinities give NaN. Integer
    tensors are computed in float32."""
    x, y = promote(x, y)
    if not x.dtype.is_float:
        x, y = cast(x, dtypes.float32), cast(y, dtypes.float32)
    return add(maximum(x, y), log1p(exp(neg(abs(subtract(x, y))))))


def heaviside(x, y, name=None) -> Tensor:
    """The Heaviside step of x, elementwise, taking the value y where x is 0 (x and y
    broadcast): 0 below 0, 1 above, and 0 for NaN, as Paddle's (its kernel computes
    ``x > 0``). The gradient is 0 for x and 1 for y where x is 0. The step is
    ceil(clip(x, 0, 1)) of x with NaN taken as 0, which keeps x on the gradient
    path (with gradient 0), so that a loss of it alone still backpropagates."""
    x, y = promote(x, y)
    step = ceil(clip(_select(isnan(x), 0, x), 0, 1))
    return _select(equal(x, 0), y, step)


def frac(x, name=None) -> Tensor:
    """The fractional part x - trunc(x), elementwise, with x's sign (frac(-2.5) is
    -0.5; inf gives NaN); an integer tensor gives zeros of its dtype. The gradient
    is 1, as Paddle's."""
    x = as_tensor(x)
    return subtract(x, trunc(x))


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None) -> Tensor:
    """The scaled tanh scale_b * tanh(scale_a * x), elementwise; integer inputs are
    computed in float32, as in Paddle."""
    return multiply(tanh(multiply(_as_float(x), scale_a)), scale_b)


def rad2deg(x, name=None) -> Tensor:
    """Radians to degrees; integer inputs give float32, as in Paddle, and bfloat16
    stays bfloat16."""
    return _scaled_angle(x, 180.0 / _math.pi)


def deg2rad(x, name=None) -> Tensor:
    """Degrees to radians (see `rad2deg`)."""
    return _scaled_angle(x, _math.pi / 180.0)


def _scaled_angle(x, factor: float) -> Tensor:
    x = as_tensor(x)
    if x.dtype is dtypes.bfloat16:
        return _in_float32(_scaled_angle, x, factor)
    return multiply(_as_float(x), factor)


def _as_float(x) -> Tensor:
    """x itself if float, else x in float32 (Paddle's dtype for integer math)."""
    x = as_tensor(x)
    return x if x.dtype.is_float else cast(x, dtypes.float32)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, name=None) -> Tensor:
    """x with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default
    the largest and the lowest finite value of x's dtype). float32 and float64 only,
    as in Paddle; the gradient is 1 where x is kept and 0 where it is replaced."""
    x = as_tensor(x)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"nan_to_num needs a float32 or float64 tensor, as in Paddle, got "
                        f"{x.dtype.name}")
    limits = np.finfo(x.dtype.np)
    high = float(limits.max) if posinf is None else posinf
    low = float(limits.min) if neginf is None else neginf
    x = _select(isnan(x), nan, x)
    x = _select(x == float("inf"), high, x)
    return _select(x == float("-inf"), low, x)


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None) -> Tensor:
    """scale * x + bias (or scale * (x + bias)). An int or bool tensor keeps its dtype,
    as in Paddle, whose kernel computes in it: the factors truncate toward zero
    (scale(int_t, 1.5, 0.5) is int_t)."""
    x = as_tensor(x)
    if x.dtype.kind not in ("int", "bool"):  # float16/32/64 and bfloat16
        return _scaled(x, scale, bias, bias_after_scale)
    scale, bias = _truncated(scale), _truncated(bias)
    return cast(_scaled(x, scale, bias, bias_after_scale), x.dtype)


def _scaled(x: Tensor, scale, bias, bias_after_scale: bool) -> Tensor:
    if bias_after_scale:
        return add(multiply(x, scale), bias)
    return multiply(add(x, bias), scale)


def _truncated(factor):
    """A factor of `scale` on an integer tensor: its integer part (toward zero)."""
    if isinstance(factor, Tensor):
        return cast(factor, dtypes.int64)
    return _math.trunc(factor)


def clip(x, min=None, max=None, name=None) -> Tensor:  # noqa: A002  (Paddle's names)
    """x limited to [min, max] (either may be None). min > max is a ValueError, as in
    Paddle (every element became max)."""
    x = as_tensor(x)
    low, high = _known_number(min), _known_number(max)
    if low is not None and high is not None and low > high:
        raise ValueError(f"clip: min {low} is greater than max {high}, as Paddle refuses")
    # selections, not maximum/minimum: the gradient is 1 inside the closed range, at
    # the bounds too, and 0 outside, as Paddle's clip (a tie of maximum splits it in
    # two); a NaN stays NaN
    if min is not None:
        x = _select(x < min, min, x)
    if max is not None:
        x = _select(x > max, max, x)
    return x


def _select(condition: Tensor, x, y) -> Tensor:
    x, y = promote(x, y)
    return apply("select", (condition, x, y))


def _known_number(v):
    """A clip bound's value when known now: a number, or a one-element tensor with a
    value (a traced bound is only known when the program runs)."""
    if isinstance(v, Tensor):
        return v._value.item() if v._value is not None and v._value.size == 1 else None
    return v


# ---------------------------------------------------------------- reductions

def _axis(axis):
    """A reduction's axis as a tuple, or None for all axes (Paddle reads [] as all)."""
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return axes or None


def _reduction(op: str, int_as_int64: bool = False, float_only: bool = False):
    """A reduction op as Paddle's function; `int_as_int64`: a bool or int32 x is
    reduced in int64 (Paddle's documented sum rule; int8, int16 and uint8 keep their
    dtype and wrap around)."""
    def fn(x, axis=None, keepdim=False, dtype=None, name=None):
        x = as_tensor(x)
        if dtype is None and x.dtype is dtypes.bfloat16:
            return _in_float32(fn, x, axis, keepdim)
        if dtype is not None and dtypes.dtype(dtype) is dtypes.bool_:
            return cast(fn(x, axis, keepdim, dtypes.int64), dtypes.bool_)
        if dtype is not None:
            x = cast(x, dtype)
        elif int_as_int64 and x.dtype in (dtypes.bool_, dtypes.int32):
            x = cast(x, dtypes.int64)
        elif float_only and not x.dtype.is_float:
            x = cast(x, dtypes.float32)
        return apply(op, (x,), {"axis": _axis(axis), "keepdim": bool(keepdim)})
    fn.__name__ = op
    fn.__doc__ = (f"`{op}` of x over `axis` (None: all axes), keeping reduced dims if "
                  "`keepdim`, in `dtype` if given (bool: whether the result in int64 is "
                  "nonzero).")
    return fn


_sum = _reduction("sum", int_as_int64=True)


def sum(x, axis=None, dtype=None, keepdim=False, name=None, *, out=None  # noqa: A001
        ) -> Tensor:
    """The sum of x over `axis` (None: all axes), in `dtype` if given, keeping reduced
    dims if `keepdim`. The third positional parameter is `dtype`, as Paddle's
    (``paddle.sum(x, 0, 'float64')``), unlike prod's and mean's. A bool or int32 x
    sums in int64; int8, int16 and uint8 keep their dtype and wrap around. `out`
    takes the result (and so ``np.sum(t)`` is a Tensor, as in Paddle)."""
    return _into(_sum(x, axis, keepdim, dtype), out)


_float_mean = _reduction("mean", float_only=True)


def mean(x, axis=None, keepdim=False, name=None, *, dtype=None, out=None) -> Tensor:
    """The mean of x over `axis` (None: all axes), keeping reduced dims if `keepdim`,
    of x cast to `dtype` if given; `out` takes the result. An int or bool tensor's
    mean keeps its dtype, as in Paddle 3.3.1, which computes it in floating point and
    truncates toward zero: mean([1, 2]) is 1, mean([-1, -4]) is -2, and a bool mean
    is true where any element is."""
    x = as_tensor(x) if dtype is None else cast(as_tensor(x), dtype)
    if x.dtype.is_float:
        return _into(_float_mean(x, axis, keepdim), out)
    return _into(cast(_float_mean(cast(x, dtypes.float64), axis, keepdim), x.dtype), out)


_prod = _reduction("prod")


def prod(x, axis=None, keepdim=False, dtype=None, out=None, name=None) -> Tensor:
    """The product of x over `axis` (None: all axes), keeping reduced dims if
    `keepdim`, in `dtype` if given; `out` takes the result."""
    return _into(_prod(x, axis, keepdim, dtype), out)


def _extremum(op: str):
    def fn(x, axis=None, keepdim=False, name=None):
        return apply(op, (as_tensor(x),), {"axis": _axis(axis), "keepdim": bool(keepdim)})
    fn.__name__ = op
    return fn


max = _extremum("max")  # noqa: A001
min = _extremum("min")  # noqa: A001
amax, amin = max, min


def _logical_reduction(op: str):
    def fn(x, axis=None, keepdim=False, name=None, *, out=None):
        x = cast(as_tensor(x), dtypes.bool_)
        return _into(apply(op, (x,), {"axis": _axis(axis), "keepdim": bool(keepdim)}), out)
    fn.__name__ = op
    return fn


any = _logical_reduction("any")  # noqa: A001
all = _logical_reduction("all")  # noqa: A001


def var(x, axis=None, unbiased=True, keepdim=False, name=None) -> Tensor:
    """The variance of x over `axis` (None: all axes), divided by n - 1 if `unbiased`.
    An int or bool x is computed in float32: centring it on its integer mean (the
    mean of ints keeps their dtype, truncated) would shift every deviation, as
    Paddle's undocumented integer var does (var([1, 2, 4]) came out 2, not 7/3)."""
    x = _as_float(x)
    centered = subtract(x, mean(x, axis, keepdim=True))
    total = sum(multiply(centered, centered), axis, keepdim=keepdim)
    axes = _axis(axis)
    count = x.size if axes is None else _count(x, axes)
    # of nothing, 0 / 0: NaN, as Paddle's (0 / -1 was -0.0)
    if isinstance(count, Tensor):  # a symbolic size: the same, when the program runs
        divisor = maximum(subtract(count, 1), 0) if unbiased else count
        return divide(total, cast(divisor, total.dtype))
    return divide(total, float(count - 1 if unbiased and count else count))


def std(x, axis=None, unbiased=True, keepdim=False, name=None) -> Tensor:
    return sqrt(var(x, axis, unbiased, keepdim))


def _count(x: Tensor, axes) -> int:
    shape = x.shape
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def logsumexp(x, axis=None, keepdim=False, name=None) -> Tensor:
    """log(sum(exp(x))) over `axis`, shifted by the maximum so that no exponent
    overflows (over an empty axis -inf, the log of an empty sum); an integer or bool
    x is computed in float32, as Paddle's."""
    x = _as_float(x)
    m = max_shift(x, axis)
    if m is None:
        out = log(sum(exp(x), axis, keepdim=True))
    else:
        out = add(log(sum(exp(subtract(x, m)), axis, keepdim=True)), m)
    if not keepdim and x.ndim:
        from .manipulation import squeeze
        out = squeeze(out, list(_axis(axis) or range(x.ndim)))  # axis=[] is every axis
    return out


def max_shift(x: Tensor, axis) -> Tensor | None:
    """The detached maximum of x over `axis` (None: every axis), reduced axes kept,
    that softmax and logsumexp subtract so that no exponent overflows; None when a
    reduced axis has size 0, which has no maximum: the sum of exponentials over it is
    0 without a shift, so softmax comes back empty and logsumexp -inf, as Paddle's.
    Over a symbolic axis, which may turn out empty when the program runs, the shift
    is `max_or_neg_inf`'s: -inf there, which leaves those results as they are."""
    from .manipulation import exact_shape
    shape = exact_shape(x)
    axes = _axis(axis) or range(len(shape))
    sizes = [shape[a] for a in axes if -len(shape) <= a < len(shape)]
    if 0 in sizes:
        return None
    symbolic = [d for d in sizes if not isinstance(d, int)]
    if not symbolic:
        return max(x, axis, keepdim=True).detach()
    return apply("max_or_neg_inf", (x,), {"axis": _axis(axis), "keepdim": True}).detach()


def norm(x, p=None, axis=None, keepdim=False, out=None, dtype=None, name=None) -> Tensor:
    """Paddle's ``paddle.norm``, dispatched as Paddle's: over one axis, or all of them
    (axis None), the vector p-norm (`vector_norm`; p None or "fro" the Euclidean
    norm); over a pair of axes, or for a string p other than "fro" over all axes,
    the matrix norm (`matrix_norm`; p None there is 2, the spectral norm). `dtype`
    casts x first; `out` takes the result."""
    x = as_tensor(x)
    if isinstance(axis, list | tuple) and len(axis) == 1:
        axis = int(axis[0])
    if dtype is not None:
        x = cast(x, dtype)
    if isinstance(p, str) and not (p == "fro" and (axis is None or isinstance(axis, int))):
        result = matrix_norm(x, p, list(range(x.ndim)) if axis is None else axis, keepdim)
    elif not isinstance(p, str) and isinstance(axis, list | tuple) and len(axis) == 2:
        result = matrix_norm(x, 2.0 if p is None else p, axis, keepdim)
    else:
        result = vector_norm(x, 2.0 if p is None or p == "fro" else p, axis, keepdim)
    return _into(result, out)


def _into(result: Tensor, out) -> Tensor:
    """`result`, given to `out` as well when one is passed (Paddle's ``out=``)."""
    if out is None:
        return result
    from .creation import assign
    return assign(result, out)


def vector_norm(x, p=2.0, axis=None, keepdim=False, name=None, *, dtype=None,
                out=None) -> Tensor:
    """Paddle's ``paddle.linalg.vector_norm``: the p-norm of the entries over `axis`
    (an int, a list of them, or None for all), whatever the number of axes: p 2 (or
    "fro") the Euclidean norm, 1, 0 (the count of nonzeros), +-inf (max / min of
    |x|), or any other number. `dtype` casts x first; `out` takes the result."""
    x = as_tensor(x)
    if dtype is not None:
        x = cast(x, dtype)
    return _into(_vector_norm(x, p, axis, keepdim), out)


def _vector_norm(x: Tensor, p, axis, keepdim: bool) -> Tensor:
    if p == "fro" or p == 2:
        return _root(sum(multiply(x, x), axis, keepdim=keepdim), sqrt)
    if isinstance(p, str):
        raise ValueError(f"vector_norm: p={p!r} is not a vector norm (numbers and 'fro', as "
                         "in Paddle)")
    if p == 1:
        return sum(abs(x), axis, keepdim=keepdim)
    if p == 0:
        return sum(cast(apply("ne", (x, as_tensor(0, like=x))), x.dtype), axis, keepdim=keepdim)
    if p == float("inf"):
        return max(abs(x), axis, keepdim)
    if p == float("-inf"):
        return min(abs(x), axis, keepdim)
    return _root(sum(pow(abs(x), float(p)), axis, keepdim=keepdim), lambda t: pow(t, 1.0 / p))


def _root(total: Tensor, root) -> Tensor:
    """``root(total)`` (a norm from its sum of powers) with gradient zero where the
    total is zero, as Paddle's p_norm gradient: the chain rule there multiplies the
    root's infinite slope by zero, a NaN gradient for every all-zero vector."""
    nonzero = not_equal(total, as_tensor(0, like=total))  # NaN and inf stay as they are
    safe = select(nonzero, total, as_tensor(1, like=total))
    return select(nonzero, root(safe), as_tensor(0, like=total))


_MATRIX_ORDERS = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))


def matrix_norm(x, p="fro", axis=(-2, -1), keepdim=False, name=None) -> Tensor:
    """Paddle's ``paddle.linalg.matrix_norm`` of the matrices spanned by the two axes
    `axis` (rows, columns): "fro" the Frobenius norm; "nuc" the sum of the singular
    values; 2 / -2 the largest / smallest singular value; 1 / -1 the largest /
    smallest column sum of |x|; inf / -inf the largest / smallest row sum. The
    singular values come from `svdvals` (float32 or float64 only), whose SVD gives
    the gradient; repeated singular values make it infinite, as Paddle's."""
    x = as_tensor(x)
    if isinstance(axis, int) or len(axis) != 2:
        raise ValueError(f"matrix_norm: axis must be a list of two axes, as in Paddle, got "
                         f"{axis!r}")
    if isinstance(p, bool) or p not in _MATRIX_ORDERS:
        raise ValueError(f"matrix_norm: p must be 'fro', 'nuc', 1, -1, inf, -inf, 2 or -2 "
                         f"over two axes, as in Paddle, got {p!r}")
    axis = [int(a) for a in axis]
    if p == "fro":
        # (its gradient is 0 at a zero matrix)
        return _root(sum(multiply(x, x), axis, keepdim=keepdim), sqrt)
    if p in ("nuc", 2, -2):
        return _singular_value_norm(x, p, axis, keepdim)
    return _sum_norm(x, p, axis, keepdim)


def _singular_value_norm(x: Tensor, p, axis: list[int], keepdim: bool) -> Tensor:
    """The nuclear (p "nuc") or spectral (p 2 / -2) norm from the singular values of
    x with the axes `axis` moved last."""
    from .linalg import svdvals
    from .manipulation import moveaxis, unsqueeze
    s = svdvals(moveaxis(x, axis, [-2, -1]))
    out = sum(s, -1) if p == "nuc" else (max if p > 0 else min)(s, -1)
    return unsqueeze(out, sorted(a % x.ndim for a in axis)) if keepdim else out


def _sum_norm(x: Tensor, p, axis: list[int], keepdim: bool) -> Tensor:
    """The column (p 1 / -1) or row (p inf / -inf) sum norm over the axes `axis`."""
    from .manipulation import squeeze
    if p in (1, -1):
        summed, across = axis[0], axis[1]       # the sum of |x| down each column
    else:
        summed, across = axis[1], axis[0]       # the sum of |x| along each row
    sums = sum(abs(x), summed, keepdim=True)
    out = (max if p > 0 else min)(sums, across, keepdim=True)
    return out if keepdim else squeeze(out, axis)


# ---------------------------------------------------------------- scans

def cumsum(x, axis=None, dtype=None, name=None, *, out=None) -> Tensor:
    """The running sum along `axis`, or over the flattened x when None. Integer
    inputs sum in int64 unless `dtype` says otherwise, as in Paddle; `out` takes the
    result."""
    x = as_tensor(x)
    if dtype is None and x.dtype is dtypes.bfloat16:
        return _into(_in_float32(cumsum, x, axis), out)
    return _into(_scan("cumsum", x, axis, dtype, int_as_int64=True), out)


def cumprod(x, dim=None, dtype=None, name=None) -> Tensor:
    """The running product along `dim`, or over the flattened x when None."""
    x = as_tensor(x)
    if dtype is None and x.dtype is dtypes.bfloat16:
        return _in_float32(cumprod, x, dim)
    return _scan("cumprod", x, dim, dtype, int_as_int64=False)


def _scan(op: str, x, axis, dtype, int_as_int64: bool) -> Tensor:
    """The running `op` along `axis`, or over the flattened x when None; a 0-d x
    scanned along an axis stays 0-d, as in Paddle."""
    from .manipulation import reshape
    if dtype is not None:
        x = cast(x, dtype)
    elif int_as_int64 and x.dtype.kind in ("int", "bool"):
        x = cast(x, dtypes.int64)
    if x.ndim == 0 and axis is not None and int(axis) not in (0, -1):
        from ..errors import ShapeError
        raise ShapeError(f"{op}: axis {axis} is out of range for a 0-d tensor (0 or -1, as "
                         "in Paddle)")
    if axis is None or x.ndim == 0:
        out = apply(op, (reshape(x, [-1]),), {"axis": -1})
        return out if axis is None else reshape(out, [])
    return apply(op, (x,), {"axis": int(axis)})


def logcumsumexp(x, axis=None, dtype=None, name=None) -> Tensor:
    """log(cumsum(exp(x))) along `axis` (over the flattened x when None), without
    overflow or underflow: a doubling scan (as `cummax`'s) whose step adds two
    partial results in log space, each shifted by the larger of the pair, so
    [100, -100, 1000] gives [100, 100, 1000]. `dtype` casts x first; integer inputs
    are computed in float32, as in Paddle. Where Paddle differs, irflow keeps the
    math: a prefix of only -inf gives -inf (Paddle: the dtype's lowest number) and
    a NaN makes the rest NaN (Paddle skips it). The gradient is softmax-weighted,
    and 0 for a prefix of only -inf, as Paddle's. The axis needs a size known when
    tracing."""
    from .manipulation import reshape
    x = as_tensor(x) if dtype is None else cast(as_tensor(x), dtype)
    x = _as_float(x)
    if axis is None or x.ndim == 0:
        out = _log_add_scan(reshape(x, [-1]), 0, "logcumsumexp")
        return out if axis is None else reshape(out, [])
    return _log_add_scan(x, int(axis), "logcumsumexp")


def _log_add_scan(x: Tensor, axis: int, what: str) -> Tensor:
    """The running log-sum-exp along `axis` by Hillis and Steele's doubling scan: after
    step k each position holds the log-sum-exp of the 2**k elements ending there."""
    from .manipulation import moveaxis
    moved = moveaxis(x, axis, -1)
    n = _static_last_dim(moved, x, axis, what)
    total, step = moved, 1
    while step < n:
        total = _log_add(total, _shift_right(total, step, -np.inf))
        step *= 2
    return moveaxis(total, -1, axis)


def _log_add(a: Tensor, b: Tensor) -> Tensor:
    """log(exp(a) + exp(b)) as hi + log1p(exp(lo - hi)), hi and lo the larger and the
    smaller. An infinite hi is not subtracted (inf - inf would be NaN): two -inf give
    -inf, with gradient 0 (0 / 0 in the exact formula), and +inf gives +inf."""
    hi, lo = maximum(a, b), minimum(a, b)
    finite_hi = _select(isinf(hi), 0, hi)
    total = add(hi, log1p(exp(subtract(lo, finite_hi))))
    return _select(equal(hi, -np.inf), hi.detach(), total)


def _shift_right(t: Tensor, step: int, fill) -> Tensor:
    """t moved `step` places along its last axis, `fill` taking the first places and
    the last `step` elements dropped: the partner of each position in a doubling
    scan."""
    from .creation import full_like
    from .manipulation import concat, exact_shape
    n = exact_shape(t)[-1]
    return concat([full_like(t[..., :step], fill), t[..., :n - step]], axis=-1)


def _static_last_dim(moved: Tensor, x: Tensor, axis: int, what: str) -> int:
    """The size of the last axis of `moved` (axis `axis` of x), which a doubling scan
    unrolls over and so needs known when tracing."""
    from ..errors import ShapeError
    from .manipulation import exact_shape
    n = exact_shape(moved)[-1]
    if not isinstance(n, int):
        raise ShapeError(f"{what}: axis {axis} of x (shape {list(x.shape)}) needs a static "
                         "size, which irflow reads when it traces")
    return n


def _in_float32(fn, x: Tensor, *args) -> Tensor:
    """``fn(x, *args)`` of a bfloat16 x computed in float32 and rounded back to
    bfloat16, as Paddle's sum gives it: irflow's ops store bfloat16 but do not
    compute in it (and its sums cast it to int64, truncating every element)."""
    return cast(fn(cast(x, dtypes.float32), *args), dtypes.bfloat16)


def _has_scalar(x, y) -> bool:
    """Whether x or y is a scalar, a Python number or a 0-d tensor (``2 - x`` meets
    the number as one): a bfloat16 tensor with a scalar (``x * 2``, ``x / 2``,
    ``2 ** x``) is computed, as Paddle's scale kernels compute it, while two bfloat16
    tensors of higher rank are refused, as most of Paddle's CPU kernels refuse them
    (cast them to float32); the ops whose kernels take them say `bfloat16_pairs`."""
    return not isinstance(x, Tensor) or not isinstance(y, Tensor) or x.ndim == 0 or \
        y.ndim == 0


def _both_in_float32(fn, x: Tensor, y: Tensor) -> Tensor:
    """``fn(x, y)`` of two bfloat16 operands computed in float32 and rounded back to
    bfloat16, as Paddle's bfloat16 kernels compute: irflow's ops store bfloat16 but do
    not compute in it."""
    return cast(fn(cast(x, dtypes.float32), cast(y, dtypes.float32)), dtypes.bfloat16)


# ---------------------------------------------------------------- products

def matmul(x, y, transpose_x=False, transpose_y=False, name=None) -> Tensor:
    """x @ y. Tensors of different dtypes are refused, as Paddle does (a float64
    input into a float32 layer is an error, not a silent promotion)."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        xv, yv = x._value, y._value  # the dtypes read cheaply: this is eager's hot path
        # (`is` first, for speed; an unpickled array's dtype equals the usual one but
        # is another object)
        if ((xv.dtype is not yv.dtype and xv.dtype != yv.dtype)
                if xv is not None and yv is not None else x.dtype is not y.dtype):
            from ..dispatch import user_location
            from ..errors import DTypeError
            raise DTypeError(f"matmul: x is {x.dtype.name} and y is {y.dtype.name}; matmul "
                             "does not mix dtypes (as in Paddle): cast one with .astype()",
                             user_location())
    else:
        x, y = promote(x, y)
    return apply("matmul", (x, y), {"transpose_x": bool(transpose_x),
                                    "transpose_y": bool(transpose_y)})


def mm(input, mat2, name=None) -> Tensor:  # noqa: A002
    return matmul(input, mat2)


def bmm(x, y, name=None) -> Tensor:
    """Batched matrix product of two 3-D tensors [B, M, K] @ [B, K, N]."""
    x, y = as_tensor(x), as_tensor(y)
    if x.ndim != 3 or y.ndim != 3:
        raise ValueError(f"bmm needs two 3-D tensors, got shapes {x.shape} and {y.shape}")
    return matmul(x, y)


def dot(x, y, name=None) -> Tensor:
    """The sums of products over the last axis of x and y, in their dtype, as
    Paddle's: an int32 dot stays int32 (a plain `sum` widens ints to int64)."""
    products = multiply(x, y)
    if products.dtype.is_bool:
        from ..dispatch import user_location
        from ..errors import DTypeError
        raise DTypeError("dot: x and y are bool tensors, which Paddle's dot does not take; "
                         "cast them to a number dtype first", user_location())
    return sum(products, axis=-1, dtype=products.dtype)


def outer(x, y, name=None) -> Tensor:
    """The outer product of x and y, each flattened."""
    from .manipulation import reshape
    return multiply(reshape(x, [-1, 1]), reshape(y, [1, -1]))


def add_n(inputs, name=None) -> Tensor:
    """The sum of a list of tensors of one shape and dtype (or of one tensor)."""
    tensors = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    total = tensors[0]
    for t in tensors[1:]:
        total = add(total, t)
    return total


def increment(x, value=1.0, name=None) -> Tensor:
    """``x += value`` in place for a one-element tensor, returning `x`, as Paddle's
    (a loop counter in static-graph style code)."""
    from .manipulation import _rebind
    if x.size not in (1, -1):  # -1: a symbolic size while tracing
        raise ValueError(f"increment needs a tensor with one element, got shape {x.shape}")
    _rebind(x, add(x, Tensor._from_array(np.asarray(value, dtype=x.dtype.np))))
    return x


# ---------------------------------------------------------------- running extrema

def cummax(x, axis=None, dtype="int64", name=None):
    """The running maximum along `axis` (over the flattened x when None) and the
    index where each was reached: among equal maxima the latest, and once a NaN is
    seen NaN at the latest NaN, as in Paddle. The values are read at those indices, so the
    gradient goes to the chosen element."""
    return _running_extremum("cummax", x, axis, dtype, max)


def cummin(x, axis=None, dtype="int64", name=None):
    """The running minimum along `axis` and its index, as `cummax`."""
    return _running_extremum("cummin", x, axis, dtype, min)


def _running_extremum(what: str, x, axis, dtype, reduce):
    """`reduce` over each prefix along `axis` and the index it was reached at, by a
    doubling scan (Hillis and Steele's): after step k each position holds the winner
    of the 2**k elements ending there, so log2(N) steps of N comparisons. A later
    element wins ties (and a NaN wins all), as in Paddle. Composed from ops every
    backend has (a scan op would need kernels and a VJP of its own); the values are
    read at the indices, so the gradient goes to the chosen element. The axis needs
    a size known when tracing."""
    from ..errors import DTypeError
    from .creation import arange
    from .manipulation import broadcast_to, exact_shape, moveaxis, reshape, take_along_axis
    x = as_tensor(x)
    if x.dtype.kind not in ("int", "float"):
        raise DTypeError(f"{what}: x must be an int or float tensor, got {x.dtype.name}")
    if axis is None or x.ndim == 0:
        values, index = _running_extremum(what, reshape(x, [-1]), 0, dtype, reduce)
        shape = [-1] if axis is None else []
        return reshape(values, shape), reshape(index, shape)
    axis = int(axis)
    moved = moveaxis(x, axis, -1)
    n = _static_last_dim(moved, x, axis, what)
    wins = greater_equal if reduce is max else less_equal
    best = moved.detach()
    index = broadcast_to(arange(n, dtype="int64"), exact_shape(moved))
    step = 1
    while step < n:
        before = _shift_right(best, step, _sentinel(x.dtype, reduce is max))
        before_index = _shift_right(index, step, -1)
        later = wins(best, before)
        if x.dtype.is_float:
            later = logical_or(later, isnan(best))
        best, index = select(later, best, before), select(later, index, before_index)
        step *= 2
    values = take_along_axis(moved, index, -1)
    return moveaxis(values, -1, axis), cast(moveaxis(index, -1, axis), dtype)


def _sentinel(dtype: dtypes.DType, for_max: bool):
    """The value of `dtype` that a running max (or min) never prefers to an element
    (a later one wins ties): it stands before the first element."""
    if dtype.is_float:
        return -np.inf if for_max else np.inf
    info = np.iinfo(dtype.np)
    return int(info.min if for_max else info.max)
