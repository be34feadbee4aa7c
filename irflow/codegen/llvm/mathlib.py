"""Vectorizable approximations of exp, log, tanh, sigmoid, erf, sin and cos.

Calling libm per element is what makes a fused kernel slower than NumPy's SIMD loops:
a call stops LLVM's loop vectorizer. These functions are straight-line code of
multiplies, FMAs, compares and selects (and, for sin/cos, loads from a constant
table), so a loop using them vectorizes for the host's vector width.

**Working precision.** Every function is evaluated in float64. (For float32 data,
the functions come from the float32-native `mathlib32` instead, a few times faster;
float32 sin and cos beyond its reduction's bound come from here.) A float32 argument
is widened (exactly), the function is computed to a relative accuracy far beyond
float32's (``TOLERANCE["f32"]``, 1e-12), and the result is rounded once to
float32: so float32 results are the correctly rounded value except in the rare
cases where the exact value lies within 1e-12 of a midpoint between two floats,
and float32 denormals need no special path. glibc's ``expf``, ``logf`` and
``sinf`` use the same strategy. For float64 (``TOLERANCE["f64"]``, 2**-57) the
polynomials are longer and the reductions carry double-double terms.

**Polynomials.** Taylor series on a reduced interval, truncated where the first
omitted term falls below the tolerance (`_terms`), evaluated by Horner's rule with
FMA where the CPU has it. Series with positive terms are preferred where a
function offers one (erf), because alternating series lose bits to cancellation.

**Reductions.**

- exp: ``x = k ln2 + r``, ``|r| <= ln2/2``, with ln2 split Cody-Waite style (the
  high part has trailing zeros, so ``k * LN2_HI`` is exact); ``2**k`` is applied
  as two factors, so results that overflow give inf and results in the denormal
  range are rounded once.
- log: ``x = 2**e m`` with ``m`` in ``[sqrt(1/2), sqrt(2))``, ``f = m - 1``,
  ``log(1+f) = f - s (f - R(s^2))`` with ``s = f / (2 + f)``: the leading ``f`` is
  exact and the correction is small, so the error stays near half an ulp.
- sin/cos: Payne-Hanek style with a table. For ``x = M 2**s`` (``M`` the 53-bit
  integer significand), ``x (2/pi) mod 4 = M ((2**s 2/pi) mod 4)``; the table holds
  ``(2**s 2/pi) mod 4`` for every exponent as three doubles (159 bits), derived at
  first use from 2/pi computed exactly with Python integers. The products are
  summed exactly (two-prod, two-sum, exact reductions mod 4), so the reduced
  argument is right to about 2**-100 absolute even for |x| = 1e308 (only doubles
  within 2**-47 of a multiple of pi/2, a handful, lose relative accuracy); then
  ``r = f pi/2`` with ``|f| <= 1/2`` is a double-double.
- tanh: ``tanh |x| = e / (e + 2)`` with ``e = expm1(2|x|)``, which has no
  cancellation anywhere; 1 beyond where tanh rounds to 1.
- sigmoid: ``1 / (1 + e**-x)`` for ``x >= 0`` and ``e**x / (1 + e**x)`` below, so
  it never overflows and keeps full relative accuracy for large negative x.
- erf: ``erf x = (2x/sqrt(pi)) e**-x^2 sum (2x^2)^n / (2n+1)!!`` (all terms
  positive) where that converges quickly, and for float64 above 2
  ``1 - erfc x`` with erfc from its continued fraction; 1 where erf rounds to 1.

Special values follow NumPy: NaN in, NaN out; exp(-inf) = 0, exp(inf) = inf;
log(0) = -inf, log(x < 0) = NaN; sin/cos(inf) = NaN; signed zeros are kept by the
odd functions.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from llvmlite import ir

F64 = ir.DoubleType()
I64 = ir.IntType(64)

# Relative accuracy each polynomial is truncated at, by the dtype of the result.
TOLERANCE = {"f32": 1e-12, "f64": 2.0 ** -57}


def _split_hi(value: float, bits: int) -> float:
    """`value` with only its leading `bits` significant bits (the rest zero)."""
    mantissa, exponent = math.frexp(value)
    return math.ldexp(math.floor(mantissa * 2.0 ** bits), exponent - bits)


def _ln2() -> Fraction:
    """ln 2 to 200 bits: sum of 1 / (k 2**k)."""
    bits = 200
    return Fraction(sum((1 << bits) // (k << k) for k in range(1, bits)), 1 << bits)


def _pi_fixed(bits: int) -> int:
    """floor(pi 2**bits), by Machin's formula in integer arithmetic (with guard bits)."""
    guard = 32
    one = 1 << (bits + guard)

    def arctan_inv(n: int) -> int:  # arctan(1/n) * one
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    return (16 * arctan_inv(5) - 4 * arctan_inv(239)) >> guard


LN2_HI = _split_hi(math.log(2), 40)   # k * LN2_HI is exact for |k| < 2**13
LN2_LO = float(_ln2() - Fraction(LN2_HI))
LOG2E = 1 / math.log(2)
SQRT2 = math.sqrt(2)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
PIO2_HI = math.pi / 2
PIO2_LO = float(Fraction(_pi_fixed(200), 1 << 201) - Fraction(PIO2_HI))


def _terms(bound, tol: float) -> int:
    """The least n with bound(n) < tol: how many series terms reach `tol` when
    bound(n) bounds the relative size of everything after the first n terms."""
    n = 1
    while bound(n) >= tol:
        n += 1
    return n


class Math:
    """Emits the approximations, on float64 values, at `builder`'s position.

    `fma`: the CPU has fused multiply-add, so ``llvm.fma`` is one instruction
    (without it, FMA-dependent steps use Dekker's exact products)."""

    def __init__(self, builder: ir.IRBuilder, fma: bool):
        self.b = builder
        self.has_fma = fma

    # ------------------------------------------------------------ primitives

    @property
    def module(self) -> ir.Module:
        return self.b.module

    def intrinsic(self, name: str, ret, args) -> ir.Function:
        """The declaration of an LLVM intrinsic (or any function) in the module."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return fn

    def unary(self, name: str, x):
        return self.b.call(self.intrinsic(f"llvm.{name}.f64", F64, [F64]), [x])

    def c(self, value: float):
        return ir.Constant(F64, value)

    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def fma(self, x, y, z):
        """x * y + z, rounded once where the CPU has FMA."""
        if self.has_fma:
            return self.b.call(self.intrinsic("llvm.fma.f64", F64, [F64, F64, F64]), [x, y, z])
        return self.add(self.mul(x, y), z)

    def lt(self, x, y):
        return self.b.fcmp_ordered("<", x, y)

    def ge(self, x, y):
        return self.b.fcmp_ordered(">=", x, y)

    def select(self, cond, x, y):
        return self.b.select(cond, x, y)

    def bits(self, x):
        return self.b.bitcast(x, I64)

    def from_bits(self, n):
        return self.b.bitcast(n, F64)

    def is_nan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def abs(self, x):
        return self.unary("fabs", x)

    def with_sign_of(self, value, sign_source):
        """`value` with its sign bit flipped where `sign_source`'s is set (x * sign,
        signed zeros included)."""
        sign = self.b.and_(self.bits(sign_source), ir.Constant(I64, 1 << 63))
        return self.from_bits(self.b.xor(self.bits(value), sign))

    def pow2(self, k):
        """2.0**k for an i64 k in the normal exponent range [-1022, 1023]."""
        return self.from_bits(self.b.shl(self.b.add(k, ir.Constant(I64, 1023)),
                                         ir.Constant(I64, 52)))

    def to_int(self, kf):
        """An integral float (possibly NaN) as an i64; NaN gives 0, never poison."""
        safe = self.select(self.is_nan(kf), self.c(0.0), kf)
        return self.b.fptosi(safe, I64)

    def horner(self, x, coefficients):
        """c0 + x (c1 + x (c2 + ...))."""
        acc = self.c(coefficients[-1])
        for coef in reversed(coefficients[:-1]):
            acc = self.fma(acc, x, self.c(coef))
        return acc

    def two_prod(self, x, y):
        """(p, e) with p + e == x * y exactly."""
        p = self.mul(x, y)
        if self.has_fma:
            return p, self.fma(x, y, self.b.fneg(p))
        xh, xl = self._veltkamp(x)
        yh, yl = self._veltkamp(y)
        e = self.sub(self.mul(xh, yh), p)
        e = self.add(e, self.mul(xh, yl))
        e = self.add(e, self.mul(xl, yh))
        return p, self.add(e, self.mul(xl, yl))

    def _veltkamp(self, x):
        t = self.mul(x, self.c(134217729.0))  # 2**27 + 1
        hi = self.sub(t, self.sub(t, x))
        return hi, self.sub(x, hi)

    def two_sum(self, x, y):
        """(s, e) with s + e == x + y exactly (Knuth; no ordering needed)."""
        s = self.add(x, y)
        yv = self.sub(s, x)
        e = self.add(self.sub(x, self.sub(s, yv)), self.sub(y, yv))
        return s, e

    def clamp_above(self, x, limit: float):
        """min(x, limit), keeping NaN."""
        return self.select(self.b.fcmp_ordered(">", x, self.c(limit)), self.c(limit), x)

    def clamp_below(self, x, limit: float):
        """max(x, limit), keeping NaN."""
        return self.select(self.lt(x, self.c(limit)), self.c(limit), x)

    # ------------------------------------------------------------ exp and expm1

    def _exp_reduce(self, x, tol: float):
        """(k, q) with x = k ln2 + r and q = expm1(r), for |x| < 2**12."""
        kf = self.unary("rint", self.mul(x, self.c(LOG2E)))
        r = self.fma(self.b.fneg(kf), self.c(LN2_HI), x)  # exact: k * LN2_HI has 53 bits
        r = self.fma(self.b.fneg(kf), self.c(LN2_LO), r)
        half = math.log(2) / 2 * 1.0001
        n = _terms(lambda n: half ** (n + 1) / math.factorial(n + 2), tol)
        # q = r + r^2 (1/2! + r/3! + ... ), the Taylor series of expm1
        poly = self.horner(r, [1 / math.factorial(i + 2) for i in range(n)])
        q = self.fma(self.mul(r, r), poly, r)
        return self.to_int(kf), q

    def exp(self, x, tol: float):
        x = self.clamp_below(self.clamp_above(x, 712.0), -760.0)  # k within [-1097, 1028]
        k, q = self._exp_reduce(x, tol)
        k1 = self.b.ashr(k, ir.Constant(I64, 1))
        k2 = self.b.sub(k, k1)
        p = self.add(self.c(1.0), q)
        return self.mul(self.mul(p, self.pow2(k1)), self.pow2(k2))

    def expm1(self, x, tol: float):
        """e**x - 1 for x in [0, 40] (what tanh needs)."""
        k, q = self._exp_reduce(x, tol)
        scale = self.pow2(k)
        scaled = self.fma(scale, q, self.sub(scale, self.c(1.0)))
        return self.select(self.b.icmp_signed("==", k, ir.Constant(I64, 0)), q, scaled)

    # ------------------------------------------------------------ log

    def log(self, x, tol: float):
        tiny = self.lt(x, self.c(2.0 ** -1022))
        scaled = self.select(tiny, self.mul(x, self.c(2.0 ** 54)), x)
        bits = self.bits(scaled)
        e = self.b.sub(self.b.lshr(bits, ir.Constant(I64, 52)), ir.Constant(I64, 1023))
        e = self.b.sub(e, self.b.select(tiny, ir.Constant(I64, 54), ir.Constant(I64, 0)))
        m = self.from_bits(self.b.or_(self.b.and_(bits, ir.Constant(I64, (1 << 52) - 1)),
                                      ir.Constant(I64, 1023 << 52)))
        big = self.b.fcmp_ordered(">", m, self.c(SQRT2))
        m = self.select(big, self.mul(m, self.c(0.5)), m)
        e = self.b.select(big, self.b.add(e, ir.Constant(I64, 1)), e)
        f = self.sub(m, self.c(1.0))
        s = self.div(f, self.add(f, self.c(2.0)))
        z = self.mul(s, s)
        zmax = (SQRT2 - 1) ** 2 / (SQRT2 + 1) ** 2 * 1.0001
        n = _terms(lambda n: zmax ** (n + 1), tol)
        # R = sum_{k>=1} 2 z^k / (2k + 1)
        big_r = self.mul(z, self.horner(z, [2 / (2 * i + 3) for i in range(n)]))
        log_m = self.sub(f, self.mul(s, self.sub(f, big_r)))
        ef = self.b.sitofp(e, F64)
        result = self.fma(ef, self.c(LN2_HI), self.fma(ef, self.c(LN2_LO), log_m))
        result = self.select(self.b.fcmp_ordered("==", x, self.c(math.inf)), x, result)
        result = self.select(self.b.fcmp_ordered("==", x, self.c(0.0)), self.c(-math.inf),
                             result)
        invalid = self.b.fcmp_unordered("<", x, self.c(0.0))  # x < 0 or NaN
        return self.select(invalid, self.c(math.nan), result)

    # ------------------------------------------------------------ tanh, sigmoid

    def tanh(self, x, tol: float):
        a = self.abs(x)
        e = self.expm1(self.clamp_above(self.mul(a, self.c(2.0)), 40.0), tol)
        t = self.div(e, self.add(e, self.c(2.0)))
        t = self.select(self.b.fcmp_ordered(">", a, self.c(20.0)), self.c(1.0), t)
        return self.with_sign_of(t, x)

    def sigmoid(self, x, tol: float):
        e = self.exp(self.b.fneg(self.abs(x)), tol)
        top = self.select(self.ge(x, self.c(0.0)), self.c(1.0), e)
        return self.div(top, self.add(self.c(1.0), e))

    # ------------------------------------------------------------ erf

    def erf(self, x, tol: float):
        a = self.abs(x)
        z, z_err = self.two_prod(a, a)
        gauss = self.mul(self.exp(self.b.fneg(z), tol), self.sub(self.c(1.0), z_err))  # e**-a^2
        single = tol >= TOLERANCE["f32"]
        one_at = 3.92 if single else 6.0  # erf rounds to 1 above (float32, float64)
        series_to = one_at if single else 2.0
        series = self._erf_series(self.mul(z, self.c(2.0)), series_to, tol)
        value = self.mul(self.mul(self.mul(a, self.c(TWO_OVER_SQRT_PI)), gauss), series)
        if series_to < one_at:
            # erfc a = e**-a^2 / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...))))
            t = a
            for n in range(56, 0, -1):
                t = self.add(a, self.div(self.c(n / 2), t))
            erfc = self.div(self.mul(gauss, self.c(1 / math.sqrt(math.pi))), t)
            value = self.select(self.lt(a, self.c(series_to)), value,
                                self.sub(self.c(1.0), erfc))
        value = self.select(self.ge(a, self.c(one_at)), self.c(1.0), value)
        return self.with_sign_of(value, x)

    def _erf_series(self, u, a_max: float, tol: float):
        """sum_n u^n / (2n+1)!! for u = 2a^2, a <= a_max, to relative `tol`."""
        coefficients, c = [], 1.0
        u_max = 2 * a_max * a_max
        total = math.exp(a_max * a_max) * math.erf(a_max) / (a_max * TWO_OVER_SQRT_PI)
        n = 0
        while c * u_max ** n >= tol * total / 4 or n < 2:
            coefficients.append(c)
            n += 1
            c /= 2 * n + 1
        return self.horner(u, coefficients)

    # ------------------------------------------------------------ sin, cos

    def sin(self, x, tol: float):
        q, s, c = self._sincos(x, tol)
        # quadrants 0..3 of a = |x|: sin, cos, -sin, -cos
        value = self.select(self._bit(q, 1), c, s)
        value = self.select(self._bit(q, 2), self.b.fneg(value), value)
        return self._nan_unless_finite(x, self.with_sign_of(value, x))

    def cos(self, x, tol: float):
        q, s, c = self._sincos(x, tol)
        # quadrants 0..3 of a = |x|: cos, -sin, -cos, sin
        value = self.select(self._bit(q, 1), s, c)
        negate = self.b.xor(self._bit(q, 1), self._bit(q, 2))
        value = self.select(negate, self.b.fneg(value), value)
        return self._nan_unless_finite(x, value)

    def _bit(self, q, mask: int):
        return self.b.icmp_unsigned("!=", self.b.and_(q, ir.Constant(I64, mask)),
                                    ir.Constant(I64, 0))

    def _nan_unless_finite(self, x, value):
        finite = self.lt(self.abs(x), self.c(math.inf))
        return self.select(finite, value, self.c(math.nan))

    def _sincos(self, x, tol: float):
        """(quadrant, sin r, cos r) with |x| = quadrant pi/2 + r (mod 2 pi)."""
        a = self.abs(x)
        q, r_hi, r_lo = self._reduce_pio2(a)
        small = self.b.fcmp_unordered("<=", a, self.c(math.pi / 4))  # NaN too: no reduction
        q = self.b.select(small, ir.Constant(I64, 0), q)
        r_hi = self.select(small, a, r_hi)
        r_lo = self.select(small, self.c(0.0), r_lo)
        z, z_err = self.two_prod(r_hi, r_hi)
        rmax = math.pi / 4 * 1.0001
        ns = _terms(lambda n: rmax ** (2 * n) / math.factorial(2 * n + 1), tol)
        nc = _terms(lambda n: rmax ** (2 * n) / math.factorial(2 * n) / 0.7, tol)
        # sin r = r + r z P(z) + r_lo (1 - z/2), P = -1/3! + z/5! - ...
        sin_poly = self.horner(z, [(-1) ** (i + 1) / math.factorial(2 * i + 3)
                                   for i in range(ns - 1)])
        sin_tail = self.fma(self.mul(r_hi, z), sin_poly,
                            self.mul(r_lo, self.fma(z, self.c(-0.5), self.c(1.0))))
        sin = self.add(r_hi, sin_tail)
        # cos r = w + tail, w = 1 - z/2 with its rounding error recovered
        cos_poly = self.horner(z, [(-1) ** i / math.factorial(2 * i + 4)
                                   for i in range(max(nc - 2, 1))])
        hz = self.mul(z, self.c(0.5))
        w = self.sub(self.c(1.0), hz)
        tail = self.sub(self.sub(self.sub(self.c(1.0), w), hz), self.mul(z_err, self.c(0.5)))
        tail = self.add(tail, self.fma(self.mul(z, z), cos_poly,
                                       self.b.fneg(self.mul(r_hi, r_lo))))
        return q, sin, self.add(w, tail)

    def _reduce_pio2(self, a):
        """(k mod 4, r_hi, r_lo) with a = k pi/2 + r_hi + r_lo, |r| <= pi/4 (about),
        for finite a > pi/4; meaningless (but finite, never out of bounds) otherwise."""
        b = self.b
        bits = self.bits(a)
        exponent = b.lshr(bits, ir.Constant(I64, 52))
        significand = b.sitofp(b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)),
                                     ir.Constant(I64, 1 << 52)), F64)
        index = b.sub(exponent, ir.Constant(I64, _TABLE_FIRST))
        index = b.select(b.icmp_signed("<", index, ir.Constant(I64, 0)),
                         ir.Constant(I64, 0), index)
        last = ir.Constant(I64, _TABLE_SIZE - 1)
        index = b.select(b.icmp_signed(">", index, last), last, index)
        table = self._pio2_table()
        parts = []
        for j in range(3):
            slot = b.add(b.mul(index, ir.Constant(I64, 3)), ir.Constant(I64, j))
            address = b.gep(table, [ir.Constant(I64, 0), slot], inbounds=True,
                            source_etype=table.value_type)
            parts.append(b.load(address, typ=F64))
        h0, l0 = self.two_prod(significand, parts[0])
        h1, l1 = self.two_prod(significand, parts[1])
        t2 = self.mul(significand, parts[2])
        # Sum h0 + l0 + h1 + l1 + t2 modulo 4, exactly down to t2's rounding.
        s, e1 = self.two_sum(self._mod4(h0), self._mod4(l0))
        s, e2 = self.two_sum(self._mod4(s), self._mod4(h1))
        s = self._mod4(s)
        k = self.unary("rint", s)
        s = self.sub(s, k)  # exact: s in [-2, 2], k the integer nearest it
        lo = self.add(self.add(e1, e2), self.add(l1, t2))
        f_hi, f_lo = self.two_sum(s, lo)
        # r = f pi/2 as a double-double
        r_hi, r_err = self.two_prod(f_hi, self.c(PIO2_HI))
        r_lo = self.add(r_err, self.fma(f_hi, self.c(PIO2_LO), self.mul(f_lo, self.c(PIO2_HI))))
        r_hi, r_lo = self.two_sum(r_hi, r_lo)
        quadrant = b.and_(self.to_int(k), ir.Constant(I64, 3))
        return quadrant, r_hi, r_lo

    def _mod4(self, v):
        """v - 4 rint(v / 4), in [-2, 2]: exact for every double v (a v of magnitude
        above 2 has an ulp of at least 2**-51, and so has the result)."""
        return self.sub(v, self.mul(self.unary("rint", self.mul(v, self.c(0.25))),
                                    self.c(4.0)))

    def _pio2_table(self) -> ir.GlobalVariable:
        name = "irflow.two_over_pi_mod4"
        table = self.module.globals.get(name)
        if table is None:
            values = [ir.Constant(F64, v) for v in two_over_pi_table()]
            kind = ir.ArrayType(F64, len(values))
            table = ir.GlobalVariable(self.module, kind, name=name)
            table.global_constant = True
            table.linkage = "internal"
            table.initializer = ir.Constant(kind, values)
        return table


# Table rows are the biased exponents 1021 (|x| in [0.25, 0.5)) to 2046, the largest
# finite; inf and NaN read the last row and are replaced by NaN afterwards.
_TABLE_FIRST = 1021
_TABLE_SIZE = 2047 - _TABLE_FIRST


@cache
def two_over_pi_table() -> tuple[float, ...]:
    """For each row's exponent e (scale s = e - 1075, so |x| = M 2**s), three doubles
    summing to (2**s 2/pi) mod 4 within 2**-160: immutable data, computed once."""
    bits = 1500
    two_over_pi = (1 << (2 * bits + 1)) // _pi_fixed(bits)  # floor(2/pi 2**bits)
    four = 4 << bits
    out = []
    for e in range(_TABLE_FIRST, 2047):
        s = e - 1075
        v = (two_over_pi << s) % four if s >= 0 else (two_over_pi >> -s) % four
        rest = Fraction(v, 1 << bits)
        for _ in range(3):
            part = float(rest)
            out.append(part)
            rest -= Fraction(part)
    return tuple(out)

