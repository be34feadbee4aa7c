"""Elementwise ops: unary math, broadcasting binary arithmetic, comparisons, logic,
`select` and `cast`.

Binary ops take operands of one dtype (the eager API and the frontend insert casts
and turn Python scalars into constants of the other operand's dtype) and broadcast
their shapes as NumPy does. Each VJP ends with `unbroadcast`, which sums the
cotangent back to the operand's shape.

Every op has an out kernel that writes into a given buffer (a ufunc is
its own), and may do so over an operand of the result's type (in place): ufuncs
handle exact overlap, the others here read each operand element before writing
its position, except `select`, which may overwrite only its last operand.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import dtypes
from ..ir.types import TensorType, broadcast_shapes
from ..ir.registry import REQUIRED
from ..ir.traits import Affine, Elementwise, Fallible, View
from ._rules import (Involution, NeutralOperand, ReturnsOperand, check_divisor, check_kind, defop,
                     quiet, same_dtype, unbroadcast)

_erf = np.frompyfunc(math.erf, 1, 1)


def _unary_rule(kind: str, result_dtype=None):
    def infer(types, attrs):
        (t,) = types
        check_kind(t, kind)
        return TensorType(result_dtype or t.dtype, t.shape)
    return infer


_KIND_TEXT = {"float": "a float", "number": "a float or int", "bool": "a bool",
              "integral": "an int or bool", "any": "any"}


def _traits(traits, affine) -> tuple:
    """`traits`, and `Affine` with the rule `affine` when the op has one."""
    return tuple(traits) + ((Affine(affine),) if affine is not None else ())


def unary(name, kernel, vjp=None, kind="float", result_dtype=None, doc="", patterns=(),
          out=None, traits=(Elementwise(),), affine=None):
    result = f"{result_dtype.name}" if result_dtype else "x's dtype"
    return defop(name, _unary_rule(kind, result_dtype), kernel, arity=1, vjp=vjp,
                 nondiff=vjp is None, traits=_traits(traits, affine), patterns=patterns,
                 out_kernel=out,
                 doc=f"{name}(x): {doc}, elementwise. x is {_KIND_TEXT[kind]} tensor; the "
                     f"result has x's shape and {result}.")


def _sigmoid_out(x, out):
    """``1 / (1 + e**-x)``, Paddle's formula, in place: e**-x overflows to inf below
    -88 (float32), where the result is 0, and a negative x keeps its tiny result
    (sigmoid(-30) is 9.4e-14; (tanh(x/2) + 1) / 2 gave 0 from -17 down). Float16
    computes in float32, rounded once (its e**-x overflows from -11)."""
    if x.dtype.itemsize < 4:
        out[...] = _sigmoid(x.astype(np.float32))
        return out
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.divide(1, out, out=out)


def _sigmoid(x):
    return _sigmoid_out(x, np.empty(x.shape, x.dtype))


def _rsqrt_out(x, out):
    np.sqrt(x, out=out)
    np.divide(1, out, out=out)


def _relu_out(x, out):
    np.maximum(x, 0, out=out)


def _erf_kernel(x):
    """math.erf elementwise: exact, but a Python call per element (frompyfunc gives a
    Python float, not an array, for a 0-d input)."""
    return np.asarray(_erf(x), dtype=x.dtype)


def _erf_out(x, out):
    _erf(x, out=out, casting="unsafe")  # the Python floats, rounded chunk by chunk


def _zero_vjp(b, g, i, o):
    """Piecewise-constant ops: the gradient is zero almost everywhere, and it exists:
    eager code (and Paddle) gives what a backward reaches through them zeros, not
    None, so an optimizer still steps it (momentum, weight decay)."""
    return [b.zeros_like(i[0])]


# VJP rules: (builder, cotangents, operands, results) -> operand cotangents.
unary("neg", np.negative, lambda b, g, i, o: [b.neg(g[0])], kind="number",
      doc="-x", patterns=(Involution(),), affine=lambda k, c: (-1, 0))
unary("abs", np.abs, lambda b, g, i, o: [b.mul(g[0], b.sign(i[0]))], kind="number",
      doc="|x|; its gradient at 0 is 0")
unary("sign", np.sign, _zero_vjp, kind="number", doc="-1, 0 or 1 by the sign of x; gradient 0")
unary("exp", quiet(np.exp), lambda b, g, i, o: [b.mul(g[0], o[0])], doc="e**x")
unary("log", quiet(np.log), lambda b, g, i, o: [b.div(g[0], i[0])], doc="natural logarithm")
unary("sqrt", quiet(np.sqrt),
      lambda b, g, i, o: [b.div(g[0], b.mul(o[0], b.constant(2, o[0].type.dtype)))],
      doc="square root")
unary("rsqrt", quiet(lambda x: 1 / np.sqrt(x)),
      lambda b, g, i, o: [b.mul(g[0], b.mul(b.constant(-0.5, o[0].type.dtype),
                                            b.div(o[0], i[0])))],
      doc="1 / sqrt(x)", out=quiet(_rsqrt_out))
unary("tanh", np.tanh,
      lambda b, g, i, o: [b.mul(g[0], b.sub(b.constant(1, o[0].type.dtype), b.mul(o[0], o[0])))],
      doc="hyperbolic tangent")
unary("sigmoid", quiet(_sigmoid),
      lambda b, g, i, o: [b.mul(g[0], b.mul(o[0], b.sub(b.constant(1, o[0].type.dtype), o[0])))],
      doc="1 / (1 + e**-x) (0 where e**-x overflows)",
      out=quiet(_sigmoid_out))
# relu's VJP reads its result (positive exactly where x is), not x: x then dies at
# relu, which can run in place, and backward keeps one tensor per activation, not two.
unary("relu", lambda x: np.maximum(x, 0),
      lambda b, g, i, o: [b.select(b.gt(o[0], b.constant(0, o[0].type.dtype)), g[0],
                                   b.constant(0, o[0].type.dtype))],
      kind="number", doc="max(x, 0); its gradient at 0 is 0", out=_relu_out)
unary("erf", _erf_kernel,
      lambda b, g, i, o: [b.mul(g[0], b.mul(b.constant(2 / math.sqrt(math.pi), i[0].type.dtype),
                                            b.exp(b.neg(b.mul(i[0], i[0])))))],
      doc="the error function", out=_erf_out)
unary("sin", np.sin, lambda b, g, i, o: [b.mul(g[0], b.cos(i[0]))], doc="sine")
unary("cos", np.cos, lambda b, g, i, o: [b.neg(b.mul(g[0], b.sin(i[0])))], doc="cosine")


# The inverse and hyperbolic trigonometric functions and tan have no LLVM code yet, so
# they are not `Elementwise`: fusion leaves them alone and they run as NumPy kernels
# (`irflow.codegen.llvm.scalar.EMITTERS` holds the code of every Elementwise op).
NO_LLVM_CODE = ()


def _over_root(sign: int, inner):
    """The VJP g * sign / sqrt(inner(x)) (asin, acos, asinh, acosh)."""
    def vjp(b, g, i, o):
        root = b.sqrt(inner(b, i[0], b.constant(1, i[0].type.dtype)))
        ct = b.div(g[0], root)
        return [ct if sign > 0 else b.neg(ct)]
    return vjp


unary("tan", quiet(np.tan), lambda b, g, i, o: [
    b.mul(g[0], b.add(b.constant(1, o[0].type.dtype), b.mul(o[0], o[0])))],
      doc="tangent", traits=NO_LLVM_CODE)
unary("asin", quiet(np.arcsin), _over_root(1, lambda b, x, one: b.sub(one, b.mul(x, x))),
      doc="arcsine (NaN outside [-1, 1])", traits=NO_LLVM_CODE)
unary("acos", quiet(np.arccos), _over_root(-1, lambda b, x, one: b.sub(one, b.mul(x, x))),
      doc="arccosine (NaN outside [-1, 1])", traits=NO_LLVM_CODE)
unary("atan", np.arctan, lambda b, g, i, o: [
    b.div(g[0], b.add(b.constant(1, i[0].type.dtype), b.mul(i[0], i[0])))],
      doc="arctangent", traits=NO_LLVM_CODE)
unary("sinh", quiet(np.sinh), lambda b, g, i, o: [b.mul(g[0], b.cosh(i[0]))],
      doc="hyperbolic sine", traits=NO_LLVM_CODE)
unary("cosh", quiet(np.cosh), lambda b, g, i, o: [b.mul(g[0], b.sinh(i[0]))],
      doc="hyperbolic cosine", traits=NO_LLVM_CODE)
unary("asinh", np.arcsinh, _over_root(1, lambda b, x, one: b.add(b.mul(x, x), one)),
      doc="inverse hyperbolic sine", traits=NO_LLVM_CODE)
unary("acosh", quiet(np.arccosh), _over_root(1, lambda b, x, one: b.sub(b.mul(x, x), one)),
      doc="inverse hyperbolic cosine (NaN below 1)", traits=NO_LLVM_CODE)
unary("atanh", quiet(np.arctanh), lambda b, g, i, o: [
    b.div(g[0], b.sub(b.constant(1, i[0].type.dtype), b.mul(i[0], i[0])))],
      doc="inverse hyperbolic tangent (NaN outside [-1, 1], infinite at them)",
      traits=NO_LLVM_CODE)
# Special functions, also without LLVM code: lgamma and erfinv compute per element or
# iterate, and digamma and trigamma use a recurrence and an asymptotic series.
_lgamma = np.frompyfunc(lambda v: math.lgamma(v) if not math.isfinite(v) or v > 0 or
                        v != math.floor(v) else math.inf, 1, 1)


def _lgamma_kernel(x):
    """math.lgamma per element: exact, +inf at the poles 0, -1, -2, ... (where
    math.lgamma raises), as Paddle's; NaN at NaN and +inf at +-inf."""
    return np.asarray(_lgamma(x), dtype=x.dtype)


def _shifted_up(x, derivative: int, floor: int = 6):
    """``(sum, y)`` with y = x + k >= `floor` and sum the terms the recurrence of
    digamma (derivative 0: psi(x) = psi(x + 1) - 1/x) or trigamma (1: + 1/x**2)
    collects on the way, computed in float64."""
    y = x.astype(np.float64)
    total = np.zeros_like(y)
    for _ in range(floor):
        low = y < floor
        term = 1 / y if derivative == 0 else 1 / (y * y)
        total = np.where(low, total + term, total)
        y = np.where(low, y + 1, y)
    return total, y


def _digamma_kernel(x):
    """psi(x) = d log Gamma(x): the reflection psi(1 - x) - pi / tan(pi x) below 0.5,
    then the recurrence up to 10 and the asymptotic series
    ln y - 1/(2y) - sum B_2k / (2k y**2k) through B_14, in float64: from 10 the first
    term left out, 3617/8160 / y**16, is below 5e-17, so the result is as exact as
    float64 rounding allows (as Paddle's). NaN at the negative poles; at 0 the limit
    from the side of its sign, -inf at +0 and +inf at -0, as Paddle's."""
    xf = x.astype(np.float64)
    reflect = xf < 0.5
    z = np.where(reflect, 1 - xf, xf)
    total, y = _shifted_up(z, 0, floor=10)
    inv2 = 1 / (y * y)
    series = np.log(y) - 0.5 / y - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (
        1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760 - inv2 / 12))))))
    psi = series - total
    # tan has period pi: x less its nearest integer (an exact difference) keeps pi x
    # from rounding away the distance to a pole
    psi = np.where(reflect, psi - np.pi / np.tan(np.pi * (xf - np.round(xf))), psi)
    pole = reflect & (xf == np.floor(xf))
    psi = np.where(pole, np.where(xf == 0, np.copysign(np.inf, -xf), np.nan), psi)
    return psi.astype(x.dtype)


def _trigamma_kernel(x):
    """psi'(x), digamma's derivative: the reflection pi**2 / sin(pi x)**2 - psi'(1 - x)
    below 0.5, then the recurrence and the asymptotic series as in digamma."""
    xf = x.astype(np.float64)
    reflect = xf < 0.5
    z = np.where(reflect, 1 - xf, xf)
    total, y = _shifted_up(z, 1)
    inv, inv2 = 1 / y, 1 / (y * y)
    series = inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (
        1 / 42 - inv2 / 30)))
    value = series + total
    value = np.where(reflect, (np.pi / np.sin(np.pi * xf)) ** 2 - value, value)
    return np.where(reflect & (xf == np.floor(xf)), np.inf, value).astype(x.dtype)


def _erfinv_kernel(x):
    """The inverse of erf on (-1, 1): Giles' single-precision approximation, then two
    Newton steps on erf in float64, which make it exact to float64 rounding. +-inf at
    +-1 and NaN outside [-1, 1]."""
    xf = x.astype(np.float64)
    inside = np.abs(xf) < 1
    t = np.where(inside, xf, 0.0)
    w = -np.log((1 - t) * (1 + t))
    central = w < 5
    wc, wt = w - 2.5, np.sqrt(w) - 3
    p = np.where(central, _horner(wc, _ERFINV_CENTRAL), _horner(wt, _ERFINV_TAIL))
    y = p * t
    for _ in range(2):
        y = y - (np.asarray(_erf(y), np.float64) - t) / (2 / math.sqrt(math.pi) * np.exp(-y * y))
    y = np.where(np.abs(xf) == 1, np.copysign(np.inf, xf), y)
    return np.where(np.abs(xf) > 1, np.nan, y).astype(x.dtype)


def _horner(v, coefficients):
    result = np.zeros_like(v)
    for c in coefficients:
        result = result * v + c
    return result


_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

unary("expm1", np.expm1, lambda b, g, i, o: [
    b.mul(g[0], b.add(o[0], b.constant(1, o[0].type.dtype)))],
      doc="e**x - 1, exact for small x", traits=NO_LLVM_CODE)
unary("lgamma", quiet(_lgamma_kernel), lambda b, g, i, o: [b.mul(g[0], b.digamma(i[0]))],
      doc="log |Gamma(x)| (+inf at 0, -1, -2, ...)", traits=NO_LLVM_CODE)
unary("digamma", quiet(_digamma_kernel), lambda b, g, i, o: [b.mul(g[0], b.trigamma(i[0]))],
      doc="psi(x), the derivative of lgamma (-inf at 0, NaN at -1, -2, ...)",
      traits=NO_LLVM_CODE)
unary("trigamma", quiet(_trigamma_kernel),
      doc="psi'(x), the derivative of digamma (digamma's VJP); no gradient of its own",
      traits=NO_LLVM_CODE)
unary("erfinv", quiet(_erfinv_kernel), lambda b, g, i, o: [
    b.mul(g[0], b.mul(b.constant(math.sqrt(math.pi) / 2, o[0].type.dtype),
                      b.exp(b.mul(o[0], o[0]))))],
      doc="the inverse error function (+-inf at +-1, NaN outside [-1, 1])",
      traits=NO_LLVM_CODE)
unary("floor", np.floor, _zero_vjp, doc="round toward -inf; gradient 0")
unary("ceil", np.ceil, _zero_vjp, doc="round toward +inf; gradient 0")
unary("round", np.round, _zero_vjp, doc="round to the nearest integer, halves to even as "
      "Python's round() and NumPy's; gradient 0")
unary("logical_not", np.logical_not, kind="bool", doc="not x")
unary("bitwise_not", np.invert, kind="integral",
      doc="~x: each bit flipped (two's complement, so -x - 1 for signed ints); not x on bools")
unary("stop_gradient", lambda x: x, kind="any", traits=(Elementwise(), View()),
      doc="x itself; no gradient flows through it (Tensor.detach() in compiled code)")
unary("isnan", np.isnan, result_dtype=dtypes.bool_, doc="x is NaN")
unary("isinf", np.isinf, result_dtype=dtypes.bool_, doc="x is +inf or -inf")
unary("isfinite", np.isfinite, result_dtype=dtypes.bool_, doc="x is neither NaN nor infinite")


def _binary_rule(kind: str, result_dtype=None):
    def infer(types, attrs):
        a, b = types
        check_kind(a, kind, "left operand")
        check_kind(b, kind, "right operand")
        same_dtype(types)
        return TensorType(result_dtype or a.dtype, broadcast_shapes(a.shape, b.shape))
    return infer


def binary(name, kernel, vjp=None, kind="number", result_dtype=None, doc="", patterns=(),
           out=None, affine=None, traits=(Elementwise(),)):
    result = f"{result_dtype.name}" if result_dtype else "their dtype"
    return defop(name, _binary_rule(kind, result_dtype), kernel, arity=2, vjp=vjp,
                 nondiff=vjp is None, traits=_traits(traits, affine),
                 patterns=patterns, out_kernel=out,
                 doc=f"{name}(x, y): {doc}, elementwise. x and y are {_KIND_TEXT[kind]} "
                     "tensors of one dtype whose shapes broadcast as in NumPy; the result "
                     f"has the broadcast shape and {result}.")


def _both(b, i, ga, gb):
    """Cotangents of a broadcasting binary op, each summed back to its operand."""
    return [None if ga is None else unbroadcast(b, ga, i[0].type),
            None if gb is None else unbroadcast(b, gb, i[1].type)]


def _div_vjp(b, g, i, o):
    gx = b.div(g[0], i[1])
    return _both(b, i, gx, b.neg(b.mul(gx, o[0])))


def _pow_vjp(b, g, i, o):
    """As Paddle's: d/dx x**y = y * x**(y-1), taken as 0 where y == 0 (x**0 is 1
    everywhere; the formula gives 0 * inf at x == 0); d/dy x**y = x**y * log(x), taken
    as 0 where x == 0 (the limit for y > 0) and NaN where x < 0 (x**y is not defined
    there for y near a non-integer)."""
    x, y = i
    one, zero = b.constant(1, x.type.dtype), b.constant(0, x.type.dtype)
    gx = b.mul(g[0], b.select(b.eq(y, zero), zero, b.mul(y, b.pow(x, b.sub(y, one)))))
    x_zero = b.eq(x, zero)
    safe_x = b.select(x_zero, one, x)
    gy = b.mul(g[0], b.select(x_zero, zero, b.mul(o[0], b.log(safe_x))))
    return _both(b, i, gx, gy)


def _minmax_vjp(wins):
    """The operand that is the result gets the cotangent; ties split it evenly, as in
    Paddle. `wins(b, x, y)`: where x alone is the result."""
    def vjp(b, g, i, o):
        x, y = i
        dt = g[0].type.dtype
        zero, half = b.constant(0, dt), b.mul(g[0], b.constant(0.5, dt))
        tie = b.select(b.eq(x, y), half, zero)
        return _both(b, i, b.select(wins(b, x, y), g[0], tie),
                     b.select(wins(b, y, x), g[0], tie))
    return vjp


# `affine`: result = scale * operand k + shift given the other operand c (floats).
binary("add", quiet(np.add), lambda b, g, i, o: _both(b, i, g[0], g[0]), doc="x + y",
       patterns=(NeutralOperand(-0.0),), affine=lambda k, c: (1, c[0]))
binary("sub", quiet(np.subtract), lambda b, g, i, o: _both(b, i, g[0], b.neg(g[0])),
       doc="x - y",
       patterns=(NeutralOperand(0, keep=(0,)),),
       affine=lambda k, c: (1, -c[0]) if k == 0 else (-1, c[0]))
binary("mul", quiet(np.multiply),
       lambda b, g, i, o: _both(b, i, b.mul(g[0], i[1]), b.mul(g[0], i[0])), doc="x * y",
       patterns=(NeutralOperand(1),), affine=lambda k, c: (c[0], 0))


def _division(float_fn, int_fn):
    """A kernel dividing floats quietly (x / 0 is inf or NaN) and integers only by
    nonzero divisors."""
    quiet_float = quiet(float_fn)

    def kernel(x, y, out=None):  # also the out kernel
        if x.dtype.kind == "f":
            return quiet_float(x, y, out=out)
        check_divisor(y)
        return int_fn(x, y, out=out)
    return kernel


_div, _mod = _division(np.divide, np.floor_divide), _division(np.mod, np.mod)
binary("div", _div, _div_vjp, out=_div, traits=(Elementwise(), Fallible()),
       doc="x / y; integer operands divide with floor, as Paddle's, and a zero integer "
           "divisor is an error",
       patterns=(NeutralOperand(1, keep=(0,)),),
       affine=lambda k, c: (1 / c[0], 0) if k == 0 else None)
binary("pow", quiet(np.power), _pow_vjp, kind="float", doc="x ** y")
def _atan2_vjp(b, g, i, o):
    y, x = i
    scale = b.div(g[0], b.add(b.mul(x, x), b.mul(y, y)))
    return _both(b, i, b.mul(scale, x), b.neg(b.mul(scale, y)))


binary("atan2", quiet(np.arctan2), _atan2_vjp, kind="float",
       doc="the angle of the point (x=second, y=first) in radians, in [-pi, pi]",
       traits=NO_LLVM_CODE)
binary("maximum", np.maximum, _minmax_vjp(lambda b, x, y: b.gt(x, y)),
       doc="the larger of x and y; ties split the gradient evenly")
binary("minimum", np.minimum, _minmax_vjp(lambda b, x, y: b.lt(x, y)),
       doc="the smaller of x and y; ties split the gradient evenly")
binary("mod", _mod,
       lambda b, g, i, o: _both(b, i, g[0], b.neg(b.mul(g[0], b.floor(b.div(i[0], i[1]))))),
       out=_mod, kind="number", traits=(Elementwise(), Fallible()), doc="x - floor(x / y) * y (Python's %; a zero integer divisor is "
                          "an error); d/dx is 1, d/dy is -floor(x / y)")

for _name, _fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    binary(_name, _fn, kind="any", result_dtype=dtypes.bool_,
           doc=f"x {dict(eq='==', ne='!=', lt='<', le='<=', gt='>', ge='>=')[_name]} y")
for _name, _fn in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)]:
    binary(_name, _fn, kind="bool", doc=f"x {_name[8:]} y on bools")
for _name, _fn, _symbol in [("bitwise_and", np.bitwise_and, "&"),
                            ("bitwise_or", np.bitwise_or, "|"),
                            ("bitwise_xor", np.bitwise_xor, "^")]:
    binary(_name, _fn, kind="integral",
           doc=f"x {_symbol} y bit by bit on ints, logical on bools (Paddle's {_name})")


def _select_infer(types, attrs):
    c, x, y = types
    check_kind(c, "bool", "condition")
    same_dtype([x, y])
    return TensorType(x.dtype, broadcast_shapes(c.shape, x.shape, y.shape))


def _select_vjp(b, g, i, o):
    c, x, y = i
    zero = b.constant(0, g[0].type.dtype)
    return [None, unbroadcast(b, b.select(c, g[0], zero), x.type),
            unbroadcast(b, b.select(c, zero, g[0]), y.type)]


def _select_kernel(c, x, y):
    """np.where, but where one side is a +0.0 scalar (as in the VJPs of relu, max and
    select) the other's bits times the mask, as integers: ten times faster on a
    random mask, and exact for every float (1 keeps the bits, a NaN's, an inf's and a
    -0.0's too; 0 gives +0.0), which multiplying the floats is not (-1.0 * 0 is -0.0,
    inf * 0 is NaN)."""
    for value, zero, keep in ((x, y, c), (y, x, None)):
        if zero.ndim == 0 and value.dtype.kind == "f" and _positive_zero(zero):
            mask = keep if keep is not None else ~c
            out = np.multiply(_bits(value), mask).view(value.dtype)
            if out.shape == np.broadcast_shapes(c.shape, x.shape, y.shape):
                return out
            break
    return np.where(c, x, y)


def _select_out(c, x, y, out):
    """The kernel's fast path when y is a +0.0 scalar (x's bits times the mask), else
    y, then x where `c` holds (NumPy's masked copy is slower than np.where, which
    allocates): correct when `out` is y's memory, not x's."""
    if y.ndim == 0 and x.dtype.kind == "f" and _positive_zero(y) and out.dtype == x.dtype:
        np.multiply(_bits(x), c, out=_bits(out))
        return
    np.copyto(out, y)
    np.copyto(out, x, where=c)


def _positive_zero(scalar: np.ndarray) -> bool:
    return scalar == 0 and not np.signbit(scalar)


def _bits(array: np.ndarray) -> np.ndarray:
    """A float array's memory as signed integers of its width."""
    return array.view(f"i{array.dtype.itemsize}")


defop("select", _select_infer, _select_kernel, arity=3, vjp=_select_vjp,
      traits=(Elementwise(),), out_kernel=_select_out, in_place=(2,),
      doc="select(cond, x, y): x where the bool `cond` is true, else y (Paddle's where). x and "
          "y share a dtype; the three shapes broadcast; the result has x's dtype and the "
          "broadcast shape. The VJP sends the cotangent to x where cond holds, to y elsewhere.")


def _cast_infer(types, attrs):
    return TensorType(attrs["dtype"], types[0].shape)


def _cast_canon(attrs, types):
    return {"dtype": dtypes.dtype(attrs["dtype"])}


def _cast_vjp(b, g, i, o, dtype):
    if not i[0].type.dtype.is_float:
        return [None]
    return [b.cast(g[0], dtype=i[0].type.dtype)]


def _cast_out(x, out, dtype):
    if dtype is dtypes.bfloat16 or x.dtype == dtypes.bfloat16.np:
        np.copyto(out, dtypes.astype(x, dtype))  # through bfloat16's bits: a temporary
        return
    with np.errstate(invalid="ignore", over="ignore"):  # as dtypes.astype
        np.copyto(out, x, casting="unsafe")


defop("cast", _cast_infer, lambda x, dtype: dtypes.astype(x, dtype), arity=1,
      attrs={"dtype": REQUIRED}, canonicalize=_cast_canon, vjp=_cast_vjp, out_kernel=_cast_out,
      traits=(Elementwise(),), patterns=(ReturnsOperand(),),
      doc="cast(x) {dtype}: x converted to `dtype` (any dtype to any), same shape; floats to "
          "ints truncate toward zero; to bfloat16 rounds to nearest even. Gradients flow "
          "between float types only")
