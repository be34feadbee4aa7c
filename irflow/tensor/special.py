"""Special functions, floating-point helpers, integer arithmetic, integration and
distances of Paddle's tensor API: gammaln, polygamma, multigammaln, gammainc(c),
the modified Bessel functions i0 / i1 (and their scaled forms), sinc, hypot, ldexp,
copysign, frexp, signbit, gcd / lcm, the infinity tests, trapezoid rules, cdist /
pdist, addmm / baddbmm and renorm.

Each is composed from the tensor functions of the other modules (no op of its own),
so it runs eagerly, records gradients and traces into IR alike. Iterative methods
(series, continued fractions, Euclid's algorithm) are unrolled a fixed number of
times chosen so that they converge over the documented range.
"""
from __future__ import annotations

import math as _math

import numpy as np

from ..errors import DTypeError, ShapeError
from ..ir import dtypes
from .convert import as_tensor, cast, promote
from .logic import equal, isinf, isnan, less_than, logical_and, logical_not, logical_or, select
from .math import (abs, add, cos, digamma, divide, exp, floor, floor_divide, lgamma, log,
                   log2, matmul, multiply, neg, pow, remainder, round as _round, sign, sin,
                   sqrt, subtract, sum, tan, vector_norm)
from .tensor import Tensor

# ---------------------------------------------------------------- helpers


def _float(x) -> Tensor:
    """x as a Tensor, integer and bool inputs in float32 (Paddle's autocast for math)."""
    x = as_tensor(x)
    return x if x.dtype.is_float else cast(x, dtypes.float32)


def _float_pair(x, y) -> tuple[Tensor, Tensor]:
    """Two operands promoted to one dtype, computed in float32 when it is not a float."""
    x, y = promote(x, y)
    if not x.dtype.is_float:
        x, y = cast(x, dtypes.float32), cast(y, dtypes.float32)
    return x, y


def _constant(value, like: Tensor) -> Tensor:
    return as_tensor(value, like=like)


def _finite_max(x: Tensor) -> float:
    return float(np.finfo(x.dtype.np).max)


# ---------------------------------------------------------------- gamma family


def gammaln(x, name=None) -> Tensor:
    """log |Gamma(x)|, elementwise: Paddle's newer name of `lgamma` (+inf at 0, -1,
    -2, ...); its gradient is digamma(x)."""
    return lgamma(x)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
"""B_2, B_4, ..., B_16: the Euler-Maclaurin tail of the Hurwitz zeta function."""
_ZETA_SHIFT = 10
"""Terms summed before the asymptotic tail, which then starts at z + 10 >= 10.5."""


def polygamma(x, n, name=None) -> Tensor:
    """The n-th derivative of digamma, psi^(n)(x), elementwise (n = 0 is digamma).
    For n >= 1 it is (-1)**(n+1) n! zeta(n + 1, x), the Hurwitz zeta function summed
    directly for 10 terms and by Euler-Maclaurin after; below 0.5 the reflection
    formula psi^(n)(x) = (-1)**n psi^(n)(1 - x) - pi d^n/dx^n cot(pi x) brings x
    up. At the poles 0, -1, -2, ... it is (-1)**(n+1) inf, as Paddle's. Integer
    inputs are computed in float32; the gradient is polygamma(x, n + 1)."""
    n = _order(n)
    x = _float(x)
    if n == 0:
        return digamma(x)
    pole = logical_and(less_than(x, _constant(0.5, x)), equal(x, floor(x)))
    safe = select(pole, _constant(0.5, x), x)
    reflect = less_than(safe, _constant(0.5, x))
    shifted = _hurwitz_polygamma(select(reflect, subtract(1.0, safe), safe), n)
    cot_term = multiply(_cot_derivative(select(reflect, safe, _constant(0.25, x)), n), _math.pi)
    reflected = subtract(multiply(shifted, (-1.0) ** n), cot_term)
    value = select(reflect, reflected, shifted)
    return select(pole, _constant((-1.0) ** (n + 1) * _math.inf, x), value)


def _order(n) -> int:
    if isinstance(n, Tensor):
        n = n.item()
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"polygamma: n must be an integer >= 0, as in Paddle, got {n!r}")
    return int(n)


def _hurwitz_polygamma(z: Tensor, n: int) -> Tensor:
    """psi^(n)(z) for z >= 0.5 and n >= 1: (-1)**(n+1) n! times zeta(n + 1, z), the
    first `_ZETA_SHIFT` terms of its series and the Euler-Maclaurin formula for the
    rest, zeta(s, w) ~ w**(1-s)/(s-1) + w**-s/2 + sum B_2j/(2j)! (s)_(2j-1) w**(1-s-2j)."""
    s = n + 1
    total = None
    for k in range(_ZETA_SHIFT):
        term = pow(add(z, float(k)), float(-s))
        total = term if total is None else add(total, term)
    w = add(z, float(_ZETA_SHIFT))
    tail = add(divide(pow(w, float(1 - s)), float(s - 1)), multiply(pow(w, float(-s)), 0.5))
    rising = float(s)  # (s)_(2j-1) = s (s+1) ... (s+2j-2)
    for j, bernoulli in enumerate(_BERNOULLI, start=1):
        coefficient = bernoulli / _math.factorial(2 * j) * rising
        tail = add(tail, multiply(pow(w, float(1 - s - 2 * j)), coefficient))
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return multiply(add(total, tail), (-1.0) ** (n + 1) * _math.factorial(n))


def _cot_derivative(x: Tensor, n: int) -> Tensor:
    """d^n/dx^n cot(pi x), a polynomial in c = cot(pi x): d/dx P(c) = -pi (1 + c**2) P'(c)."""
    poly = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        poly = poly.deriv() * np.polynomial.Polynomial([-_math.pi, 0.0, -_math.pi])
    c = _cot_pi(x)
    result = _constant(0.0, c)
    for coefficient in poly.coef[::-1]:
        result = add(multiply(result, c), float(coefficient))
    return result


def _cot_pi(x: Tensor) -> Tensor:
    """cot(pi x) without the rounding of pi x: cot has period pi, so it is taken at
    r = x less its nearest integer (an exact difference), and, odd and equal to
    tan(pi (1/2 - r)), for |r| >= 1/4 as tan(pi (1/2 - |r|)) with r's sign, 1/2 - |r|
    being exact there. So it is 0 at a half-integer, where cos(pi x) / sin(pi x)
    was the rounding error of pi x, which times pi**(n+1) swamped polygamma's
    result (float32 polygamma(-100.5, 4) was off by a factor of 4000)."""
    r = subtract(x, _round(x))
    near_pole = less_than(abs(r), _constant(0.25, r))
    angle = multiply(r, _math.pi)
    by_ratio = divide(cos(angle), sin(select(near_pole, angle, _constant(1.0, r))))
    complement = multiply(subtract(0.5, abs(r)), _math.pi)
    by_tan = multiply(tan(select(near_pole, _constant(0.25, r), complement)), sign(r))
    return select(near_pole, by_ratio, by_tan)


def multigammaln(x, p, name=None) -> Tensor:
    """The log of the multivariate gamma function of dimension p, elementwise:
    p (p - 1) / 4 log(pi) + sum over j < p of lgamma(x - j / 2). p must be at least
    1, as in Paddle."""
    if isinstance(p, bool) or int(p) != p or p < 1:
        raise ValueError(f"multigammaln: p must be an integer >= 1, as in Paddle, got {p!r}")
    x = _float(x)
    total = None
    for j in range(int(p)):
        term = lgamma(subtract(x, j / 2))
        total = term if total is None else add(total, term)
    return add(total, p * (p - 1) / 4 * _math.log(_math.pi))


_GAMMAINC_STEPS = 100
"""Terms of the series and the continued fraction of the incomplete gamma function:
enough for 1e-13 up to x = 100, 1e-8 at x = 300 (the error grows with sqrt(x))."""


def gammainc(x, y, name=None) -> Tensor:
    """The regularized lower incomplete gamma function P(x, y) = gamma(x, y) / Gamma(x)
    of shape x and limit y (broadcast), as SciPy's gammainc: by the series for
    y < x + 1 and the continued fraction of 1 - P beyond (Numerical Recipes'
    gser / gcf), each 100 steps. P(0, y > 0) is 1 and P(x, inf) is 1 (Paddle gives
    0 and NaN); negative arguments give NaN (Paddle raises). As Paddle's, only y
    gets a gradient, the density exp(-y) y**(x-1) / Gamma(x)."""
    return _incomplete_gamma(x, y)[0]


def gammaincc(x, y, name=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(x, y) = 1 - P(x, y) (see
    `gammainc`), computed directly where it is the small one."""
    return _incomplete_gamma(x, y)[1]


def _incomplete_gamma(x, y) -> tuple[Tensor, Tensor]:
    """(P, Q) of shape x and limit y, values from the inputs detached and y's
    gradient attached as +-density * (y - detached y)."""
    x, y = _float_pair(x, y)
    a, z = x.detach(), y.detach()
    invalid = logical_or(logical_or(less_than(a, _constant(0, a)), isnan(a)),
                         logical_or(less_than(z, _constant(0, z)), isnan(z)))
    use_series = less_than(z, add(a, 1.0))
    # lgamma's kernel fails on NaN: every edge case is fed 1 and overruled below
    safe_a = select(logical_or(invalid, logical_or(equal(a, 0), isinf(a))), _constant(1, a), a)
    safe_z = select(logical_or(invalid, logical_or(equal(z, 0), isinf(z))), _constant(1, z), z)
    log_prefix = subtract(subtract(multiply(safe_a, log(safe_z)), safe_z), lgamma(safe_a))
    prefix = exp(log_prefix)
    series_p = multiply(prefix, _gamma_series(safe_a, safe_z))
    fraction_q = multiply(prefix, _gamma_fraction(safe_a, safe_z))
    lower = select(use_series, series_p, subtract(1.0, fraction_q))
    upper = select(use_series, subtract(1.0, series_p), fraction_q)
    one = logical_or(logical_and(equal(a, 0), logical_not(equal(z, 0))), isinf(z))
    zero = logical_or(equal(z, 0), logical_and(isinf(a), logical_not(isinf(z))))
    nan = logical_or(invalid, logical_and(isinf(a), isinf(z)))
    lower = _overrule(lower, one, zero, nan)
    upper = _overrule(upper, zero, one, nan)
    log_z = log(select(invalid, _constant(1, z), z))
    density = exp(subtract(add(multiply(subtract(safe_a, 1.0), log_z), neg(z)), lgamma(safe_a)))
    density = select(isinf(density), _constant(_finite_max(density), density), density)
    no_slope = logical_or(logical_or(equal(a, 0), isinf(a)), isnan(density))
    density = select(no_slope, _constant(0, density), density)
    density = select(invalid, _constant(np.nan, density), density)
    infinite = isinf(z)  # inf - inf would be NaN
    moved = subtract(select(infinite, _constant(0, y), y), select(infinite, _constant(0, z), z))
    step = multiply(density, moved)  # 0 in value, the density in gradient
    return add(lower, step), subtract(upper, step)


def _overrule(value: Tensor, ones: Tensor, zeros: Tensor, nans: Tensor) -> Tensor:
    value = select(ones, _constant(1, value), value)
    value = select(zeros, _constant(0, value), value)
    return select(nans, _constant(np.nan, value), value)


def _gamma_series(a: Tensor, z: Tensor) -> Tensor:
    """sum over k >= 0 of z**k / (a (a+1) ... (a+k)), P(a, z) over its prefix."""
    term = divide(1.0, a)
    total, denominator = term, a
    for _ in range(_GAMMAINC_STEPS):
        denominator = add(denominator, 1.0)
        term = multiply(term, divide(z, denominator))
        total = add(total, term)
    return total


def _gamma_fraction(a: Tensor, z: Tensor) -> Tensor:
    """The continued fraction of Q(a, z) over its prefix, by Lentz's method."""
    tiny = float(np.finfo(z.dtype.np).tiny) * 16
    b = subtract(add(z, 1.0), a)
    c = _constant(1 / tiny, z)
    d = divide(1.0, _away_from_zero(b, tiny))
    h = d
    for i in range(1, _GAMMAINC_STEPS + 1):
        an = multiply(subtract(a, float(i)), float(i))  # -i (i - a)
        b = add(b, 2.0)
        d = divide(1.0, _away_from_zero(add(multiply(an, d), b), tiny))
        c = _away_from_zero(add(b, divide(an, c)), tiny)
        h = multiply(h, multiply(d, c))
    return h


def _away_from_zero(v: Tensor, tiny: float) -> Tensor:
    return select(less_than(abs(v), _constant(tiny, v)), _constant(tiny, v), v)


# ---------------------------------------------------------------- Bessel functions

_BESSEL_SPLIT = 30.0
"""|x| at which the power series (exact below, all terms positive) hands over to the
asymptotic expansion (exact above): both are within 2e-15 there."""
_BESSEL_SERIES_TERMS = 48
_BESSEL_ASYMPTOTIC_TERMS = 16


def i0(x, name=None) -> Tensor:
    """The modified Bessel function of the first kind of order 0, elementwise (as
    NumPy's np.i0); integer inputs are computed in float32. Its gradient is i1(x)."""
    return _bessel(x, 0, scaled=False)


def i0e(x, name=None) -> Tensor:
    """i0(x) exp(-|x|), which does not overflow for large |x|."""
    return _bessel(x, 0, scaled=True)


def i1(x, name=None) -> Tensor:
    """The modified Bessel function of the first kind of order 1, elementwise (odd in x)."""
    return _bessel(x, 1, scaled=False)


def i1e(x, name=None) -> Tensor:
    """i1(x) exp(-|x|), which does not overflow for large |x|."""
    return _bessel(x, 1, scaled=True)


def _bessel(x, order: int, scaled: bool) -> Tensor:
    """I_order(x), or I_order(x) exp(-|x|): the power series for |x| <= 30, the
    asymptotic expansion beyond; each branch is fed a harmless value where the
    other is taken, so that neither leaks an infinite gradient."""
    x = _float(x)
    ax = abs(x)
    small = less_than(ax, _constant(_BESSEL_SPLIT, x))
    near = select(small, x, _constant(0, x))
    series = _bessel_series(near, order)
    if scaled:
        series = multiply(series, exp(neg(abs(near))))
    far = select(small, _constant(_BESSEL_SPLIT, x), ax)
    expansion = _bessel_asymptotic(far, order)
    if not scaled:
        expansion = multiply(expansion, exp(far))
    if order == 1:
        expansion = select(less_than(x, _constant(0, x)), neg(expansion), expansion)
    return select(small, series, expansion)


def _bessel_series(x: Tensor, order: int) -> Tensor:
    """sum over k of (x/2)**(2k + order) / (k! (k + order)!)."""
    half = multiply(x, 0.5)
    quarter_square = multiply(half, half)
    term = half if order == 1 else add(multiply(x, 0.0), 1.0)
    total = term
    for k in range(1, _BESSEL_SERIES_TERMS):
        term = multiply(term, divide(quarter_square, float(k * (k + order))))
        total = add(total, term)
    return total


def _bessel_asymptotic(x: Tensor, order: int) -> Tensor:
    """I_order(x) exp(-x) for large x > 0: (2 pi x)**-1/2 times the sum over k of
    (-1)**k prod_{j<=k} (4 order**2 - (2j - 1)**2) / (k! (8x)**k)."""
    mu = 4.0 * order * order
    inverse = divide(1.0, multiply(x, 8.0))
    term = add(multiply(x, 0.0), 1.0)
    total = term
    for k in range(1, _BESSEL_ASYMPTOTIC_TERMS):
        term = multiply(term, multiply(inverse, -(mu - (2 * k - 1) ** 2) / k))
        total = add(total, term)
    return divide(total, sqrt(multiply(x, 2 * _math.pi)))


# ---------------------------------------------------------------- floating point


def sinc(x, name=None) -> Tensor:
    """sin(pi x) / (pi x), and 1 at 0 (with gradient 0 there), elementwise. Integer
    inputs are computed in float32 (Paddle refuses them)."""
    x = _float(x)
    zero = equal(x, 0)
    safe = multiply(select(zero, _constant(1, x), x), _math.pi)
    return select(zero, _constant(1, x), divide(sin(safe), safe))


def hypot(x, y, name=None) -> Tensor:
    """sqrt(x**2 + y**2), elementwise and broadcast, as Paddle's (which overflows too
    when x**2 does); integer inputs give float32. The gradient at (0, 0) is NaN,
    as Paddle's."""
    x, y = _float_pair(x, y)
    return sqrt(add(multiply(x, x), multiply(y, y)))


def ldexp(x, y, name=None) -> Tensor:
    """x * 2**y, elementwise and broadcast, in x's float dtype (float32 for an
    integer x). The gradient of x is 2**y; an integer y gets none."""
    x = _float(x)
    y = as_tensor(y)
    return multiply(x, pow(_constant(2.0, x), cast(y, x.dtype)))


def copysign(x, y, name=None) -> Tensor:
    """|x| with the sign of y, elementwise and broadcast: -0.0 counts as negative,
    as in Paddle (and NumPy). An integer x stays integer; the gradient of x is
    sign(x) sign(y) (0 at x = 0), and y gets none."""
    x, y = promote(x, y)
    magnitude = abs(x)
    return select(signbit(y), neg(magnitude), magnitude)


def frexp(x, name=None) -> tuple[Tensor, Tensor]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1,
    both of x's dtype, as Paddle's; 0 gives (0, 0), and inf and NaN themselves with
    exponent 0 (NumPy's; Paddle's exponent is 1 and NaN). float32 and float64 only,
    as in Paddle. The mantissa's gradient is 2**-exponent."""
    x = as_tensor(x)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"frexp: x must be float32 or float64, as in Paddle, got "
                         f"{x.dtype.name}")
    special = logical_or(equal(x, 0), logical_or(isinf(x), isnan(x)))
    magnitude = select(special, _constant(1, x), abs(x)).detach()
    exponent = add(floor(log2(magnitude)), 1.0)
    mantissa = _scale_by_power_of_two(magnitude, neg(exponent))
    exponent = add(exponent, _correction(mantissa))  # log2 can miss by one near 2**k
    exponent = select(special, _constant(0, x), exponent)
    return _scale_by_power_of_two(x, neg(exponent)), exponent


def _correction(mantissa: Tensor) -> Tensor:
    high = cast(logical_not(less_than(mantissa, _constant(1, mantissa))), mantissa.dtype)
    low = cast(less_than(mantissa, _constant(0.5, mantissa)), mantissa.dtype)
    return subtract(high, low)


def _scale_by_power_of_two(x: Tensor, exponent: Tensor) -> Tensor:
    """x * 2**exponent in two halves, so that neither power overflows or underflows
    where the product does not (1e308 is 0.56 * 2**1024, past float64's range)."""
    half = floor(multiply(exponent, 0.5))
    two = _constant(2.0, x)
    return multiply(multiply(x, pow(two, half)), pow(two, subtract(exponent, half)))


def signbit(x, name=None) -> Tensor:
    """Whether x's sign bit is set, elementwise, as a bool tensor: True for negative
    numbers and -0.0 (1 / -0.0 is -inf). NaN gives False whatever its sign bit
    (Paddle reads the bit; irflow has no op to)."""
    x = as_tensor(x)
    negative = less_than(x, _constant(0, x))
    if not x.dtype.is_float:
        return negative
    zero = equal(x, 0)
    reciprocal = divide(1.0, select(zero, x, _constant(1, x)))
    return logical_or(negative, logical_and(zero, less_than(reciprocal, _constant(0, x))))


def isposinf(x, name=None) -> Tensor:
    """Whether x is +inf, elementwise, as a bool tensor (all False for integers)."""
    return _equals_infinity(x, _math.inf)


def isneginf(x, name=None) -> Tensor:
    """Whether x is -inf, elementwise, as a bool tensor (all False for integers)."""
    return _equals_infinity(x, -_math.inf)


def _equals_infinity(x, infinity: float) -> Tensor:
    from .creation import full_like
    x = as_tensor(x)
    if not x.dtype.is_float:
        return full_like(x, False, dtype="bool")
    return equal(x, _constant(infinity, x))


def isreal(x, name=None) -> Tensor:
    """Whether each element is real, as a bool tensor: all True, irflow having no
    complex dtypes (Paddle's is True where a complex tensor's imaginary part is 0)."""
    from .creation import full_like
    return full_like(as_tensor(x), True, dtype="bool")


# ---------------------------------------------------------------- integers


def gcd(x, y, name=None) -> Tensor:
    """The greatest common divisor of |x| and |y|, elementwise and broadcast, by
    Euclid's algorithm, in their integer dtype; gcd(0, 0) is 0. Euclid's steps are
    bounded by the dtype (a pair below Fibonacci F(n+2) needs at most n), so the
    loop is unrolled that many times; eagerly it stops once every pair is done."""
    x, y = promote(x, y)
    if not x.dtype.is_int:
        raise DTypeError(f"gcd: x and y must be integer tensors, as in Paddle, got "
                         f"{x.dtype.name}")
    a, b = abs(x), abs(y)
    a, b = promote(add(a, multiply(b, 0)), add(b, multiply(a, 0)))  # broadcast both
    zero, one = _constant(0, a), _constant(1, a)
    for _ in range(_euclid_steps(x.dtype)):
        if b._value is not None and not b._value.any():
            break
        done = equal(b, zero)
        a, b = select(done, a, b), select(done, zero, remainder(a, select(done, one, b)))
    return a


def _euclid_steps(dtype: dtypes.DType) -> int:
    """The most division steps Euclid's algorithm takes on values of `dtype`: n for
    the largest n with Fibonacci F(n+2) within the dtype's range."""
    largest = int(np.iinfo(dtype.np).max)
    previous, current, steps = 1, 2, 0  # F(2), F(3)
    while current <= largest:
        previous, current, steps = current, previous + current, steps + 1
    return steps + 1


def lcm(x, y, name=None) -> Tensor:
    """The least common multiple of |x| and |y|, elementwise and broadcast, in their
    integer dtype: |x / gcd(x, y) * y|, 0 where either is 0."""
    x, y = promote(x, y)
    divisor = gcd(x, y)
    zero = equal(divisor, _constant(0, divisor))
    quotient = floor_divide(x, select(zero, _constant(1, divisor), divisor))
    return select(zero, _constant(0, divisor), abs(multiply(quotient, y)))


# ---------------------------------------------------------------- integration


def trapezoid(y, x=None, dx=None, axis=-1, name=None) -> Tensor:
    """The integral of y along `axis` by the trapezoid rule: samples spaced by the
    points `x` (1-D along the axis, or of y's shape), else by `dx` (1 by default).
    Giving both x and dx is a ValueError, as in Paddle."""
    return sum(_trapezoids(y, x, dx, axis, "trapezoid"), axis=-1)


def cumulative_trapezoid(y, x=None, dx=None, axis=-1, name=None) -> Tensor:
    """The running trapezoid-rule integral of y along `axis` (see `trapezoid`): one
    element shorter than y there."""
    from .manipulation import moveaxis
    from .math import cumsum
    areas = _trapezoids(y, x, dx, axis, "cumulative_trapezoid")
    return moveaxis(cumsum(areas, axis=-1), -1, axis)


def _trapezoids(y, x, dx, axis: int, what: str) -> Tensor:
    """The areas of the trapezoids between consecutive samples, `axis` moved last."""
    from .manipulation import moveaxis
    if x is not None and dx is not None:
        raise ValueError(f"{what}: give x or dx, not both, as Paddle refuses")
    y = moveaxis(_float(y), axis, -1)
    heights = multiply(add(y[..., 1:], y[..., :-1]), 0.5)
    if x is None:
        return multiply(heights, 1.0 if dx is None else dx)
    x = as_tensor(x)
    if x.ndim != 1:
        x = moveaxis(x, axis, -1)
    return multiply(heights, cast(subtract(x[..., 1:], x[..., :-1]), y.dtype))


# ---------------------------------------------------------------- distances


def cdist(x, y, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary", name=None) -> Tensor:
    """The p-norm distances between the rows of x [..., P, M] and of y [..., R, M]
    (batch dims broadcast), as a [..., P, R] tensor: p 0 counts the differing
    coordinates, inf takes the largest. Computed from the differences for every
    `compute_mode` (the matrix-product shortcut only changes rounding); the gradient
    at a zero distance is 0, as Paddle's."""
    from .manipulation import unsqueeze
    x, y = promote(x, y)
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"cdist: x and y must be [..., P, M] and [..., R, M], got shapes "
                         f"{list(x.shape)} and {list(y.shape)}")
    differences = subtract(unsqueeze(x, -2), unsqueeze(y, -3))
    return vector_norm(_float(differences), p=float(p), axis=-1)


def pdist(x, p=2.0, name=None) -> Tensor:
    """The p-norm distances between each pair of rows i < j of x [N, M], in row-major
    order of the pairs, as a tensor of N (N - 1) / 2 elements."""
    from .manipulation import exact_shape, index_select
    x = as_tensor(x)
    if x.ndim != 2:
        raise ShapeError(f"pdist: x must be a 2-D tensor [N, M], got shape {list(x.shape)}")
    rows = exact_shape(x)[0]
    first, second = (as_tensor(np.asarray(i, np.int64)) for i in np.triu_indices(rows, 1))
    differences = subtract(index_select(x, first), index_select(x, second))
    return vector_norm(_float(differences), p=float(p), axis=-1)


# ---------------------------------------------------------------- products and norms


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None) -> Tensor:  # noqa: A002  (Paddle's)
    """beta * input + alpha * (x @ y) for matrices x [M, K] and y [K, N], input
    broadcast to [M, N]."""
    x, y, input = as_tensor(x), as_tensor(y), as_tensor(input)
    if x.ndim != 2 or y.ndim != 2:
        raise ShapeError(f"addmm: x and y must be 2-D, as in Paddle, got shapes "
                         f"{list(x.shape)} and {list(y.shape)}")
    return _scaled_sum(input, matmul(x, y), beta, alpha, "addmm")


def baddbmm(input, x, y, beta=1.0, alpha=1.0, name=None) -> Tensor:  # noqa: A002
    """beta * input + alpha * (x @ y) for batches of matrices x [B, M, K] and
    y [B, K, N], input (3-D or 2-D, as in Paddle) broadcast to [B, M, N]."""
    x, y, input = as_tensor(x), as_tensor(y), as_tensor(input)
    if x.ndim != 3 or y.ndim != 3 or input.ndim not in (2, 3):
        raise ShapeError(f"baddbmm: x and y must be 3-D and input 2-D or 3-D, as in Paddle, "
                         f"got shapes {list(x.shape)}, {list(y.shape)} and "
                         f"{list(input.shape)}")
    return _scaled_sum(input, matmul(x, y), beta, alpha, "baddbmm")


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha, what: str) -> Tensor:
    """beta * input + alpha * product, refusing an input that would widen the product
    by broadcasting (as Paddle does)."""
    from .manipulation import exact_shape
    result = add(multiply(input, beta), multiply(product, alpha))
    if tuple(exact_shape(result)) != tuple(exact_shape(product)):
        raise ShapeError(f"{what}: input of shape {list(input.shape)} does not broadcast "
                         f"to the product's shape {list(product.shape)}")
    return result


def renorm(x, p, axis, max_norm) -> Tensor:
    """x with each slice along `axis` whose p-norm exceeds `max_norm` scaled down to
    it, by max_norm / (norm + 1e-7), as Paddle's; the gradient goes through the norm."""
    x = _float(x)
    axis = int(axis) % x.ndim if x.ndim else 0
    others = [i for i in range(x.ndim) if i != axis]
    norms = vector_norm(x, p=float(p), axis=others, keepdim=True)
    factor = divide(float(max_norm), add(norms, 1e-7))
    over = less_than(_constant(float(max_norm), norms), norms)
    return multiply(x, select(over, factor, _constant(1, factor)))
