"""Float32-native vectorizable approximations of exp, log, tanh, sigmoid, erf, sin
and cos.

`mathlib.Math` computes every function in float64, which for float32 data halves the
vector width and, for erf, costs a 50-term series: the float32 erf was most of a
fused GELU's time (and its sin and cos, with a table reduction, 4.7 ms per million
against NumPy's 0.5). These functions work in float32 throughout: range reduction, then
a minimax polynomial whose coefficients are float32 constants fitted by
``tools/fit_float32_math.py`` (weighted minimax by Lawson's algorithm against mpmath,
coefficients rounded to float32 one at a time with refitting; the script's docstring
says what each fit approximates and its weight). `ScalarEmitter` uses them for
float32; every float64 function stays in `mathlib`. They are branch-free: both
sides of a piecewise function are computed and a select picks one, so the loop
vectorizer turns them into ``<16 x float>`` code on AVX-512 (sin and cos beyond
SINCOS_BOUND: below).

Measured maximum errors against the correctly rounded result (over every 16th
float32 and the edges; ``tests/codegen/llvm/jit/test_math.py`` asserts the bounds
and docs/llvm.md lists them): exp 1 ulp, log 1, tanh 1, sigmoid 2, erf 1, sin 1,
cos 1 (sin and cos: over every float32 below SINCOS_BOUND, erf over every float32,
with FMA and without).

- exp: ``x = k ln2 + r``, ``|r| <= ln2/2``, ln2 split in a 16-bit high part (``k
  LN2_HI`` is exact for ``|k| < 2**8``, and so is ``x - k LN2_HI``, FMA or not);
  ``e**r = 1 + r + r**2 P(r)``, P of degree 4; ``2**k`` applied as two factors so
  overflow gives inf and the denormal range rounds once. x is clamped to
  [-104, 89] first (beyond, the result is 0 or inf anyway).
- log: ``x = 2**e m``, ``m`` in ``[sqrt(1/2), sqrt(2))`` (denormals scaled by
  ``2**24`` first), ``f = m - 1`` (exact), ``log(1+f) = f + f**2 (f P(f) - 1/2)``,
  P of degree 7, plus ``e ln2`` in two parts.
- tanh: ``a + a**3 P(a**2)`` for ``a = |x| < 0.3`` (P of degree 2), above
  ``tanh a = h / (h + 1)`` with ``h = (e**(2a) - 1) / 2``, a clamped to 10 (tanh
  rounds to 1 from |x| = 9.0109), the sign by ``copysign``: 22 operations a
  vector, the division among them, where the form before (P of degree 4 below
  0.625, ``e / (e + 2)`` with a full expm1 above) took 29; measured 14-17% less
  time. ``2a = k ln2 + 2r`` with ``|r| <= ln2/4``; k is rounded by adding ``1.5 *
  2**23 + 127`` to ``2a / ln2``, so the sum's low bits shifted into the exponent
  field are ``2**k`` (no ``rint``, ``fptosi``, NaN select or bias add); ``r = a - k
  ln2/2`` with ln2 in one float32 (its error, ``k 2e-9``, reaches the result damped
  by ``2 / (e**(2a) + 1)``); ``g = e**(2r) / 2 = 1/2 + r + r**2 Q(r)`` in one
  Horner chain (Q of degree 4) and ``h = 2**k g - 1/2`` in one FMA (without FMA,
  ``h = 2**k q + (2**k - 1)/2`` with ``q = r + r**2 Q(r)``, whose rounding is
  small where g's, times ``2**k``, made 2 ulp at 20 floats). Over every float32: 1
  ulp at most, 0.37% not correctly rounded, FMA or not. A single rational form
  ``x P(x**2) / Q(x**2)`` over the clamped range (14 operations) measured 4 ulp:
  near 1, every rounding of P, Q and the product costs up to an ulp of the result,
  where ``h / (h + 1)`` damps the errors of h. A reciprocal refined by Newton steps
  in place of the division measured slower: the divider works beside the FMA ports,
  so the count of operations is what costs, not it.
- sigmoid: ``1 / (1 + e**-x)`` for ``x >= 0`` and ``e**x / (1 + e**x)`` below.
- erf: ``a + a P(a**2)`` for ``a = |x| < 1.0625`` (P of degree 6, P(0) =
  2/sqrt(pi) - 1, so the leading term is exact); above, ``1 - 2**q`` with ``q =
  Q(a - 1.25)``, Q a degree-6 fit of ``log2 erfc`` (erfc's relative error reaches
  erf damped by ``erfc/erf <= 0.16``): ``q = k + r`` with k rounded by adding
  ``1.5 * 2**23 + 127`` (its low bits shifted into the exponent field are
  ``2**k``, as tanh's) and ``r = q - k`` exact, ``2**r`` by a degree-5 P on ``|r|
  <= 1/2`` with negated coefficients, so ``1 - 2**k 2**r`` is one FMA; 1 from ``a
  >= 3.9192059`` (erfc < 2**-25), which also keeps the tail's values beyond (any,
  never poison: no ``fptosi``) out, so nothing is clamped. 32 vector operations
  (the vectorized loop's, bitcasts and loop control aside) where the form before
  (split at 0.921875, ``exp`` of a degree-7 fit of ``log erfc`` by the general
  reduction: ``rint``, ln2 in two parts, ``fptosi`` with its NaN select, the
  clamps) took 45. At the old split this form measured 2 ulp without FMA
  (``erfc/erf`` is 0.23 there, 0.16 at 1.0625, and Q's unfused roundings, in
  units of ``2**-22`` near ``q = -2.4``, are not small). Over every float32: 1 ulp
  at most, FMA or not (``tools/exhaustive_float32_erf.py``).
- sin, cos: ``|x| = k pi/2 + r`` by Cody-Waite with pi/2 in three float32 parts,
  every product exact (FMA, or Dekker's halves without it), r kept as a float32
  pair; ``sin r = r + r**3 S(r**2)`` (S of degree 3) and ``cos r = 1 - r**2/2 +
  r**4 C(r**2)`` (C of degree 2) on ``|r| <= pi/4``, both computed and picked by
  the quadrant ``k mod 4``. Valid to ``|x| <= SINCOS_BOUND`` = 2**21 (beyond, ``x
  fl(2/pi)`` may round to the wrong k and r leaves the fitted interval: measured,
  3 ulp in [2**21, 2**22), 65 in the next binade). Beyond the bound (and for inf
  and NaN) `Math`'s float64 code, rounded, runs in a function the vectorizer
  calls on whole vectors, which does anything only when a lane needs it
  (`_HugeArguments`).

Special values follow NumPy as `mathlib` does: NaN in, NaN out (clamps and selects
use ordered compares that keep NaN), exp(-inf) = 0, log(0) = -inf, log(x < 0) = NaN,
signed zeros kept by the odd functions.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from llvmlite import ir

from .mathlib import F64, TOLERANCE, Math, _pi_fixed, _split_hi

F32 = ir.FloatType()
I32 = ir.IntType(32)

FUNCTIONS = frozenset({"exp", "log", "tanh", "sigmoid", "erf", "sin", "cos"})

# Coefficients from tools/fit_float32_math.py (all exactly float32).
EXP_P = (0.4999999403953552, 0.1666652113199234, 0.041668277233839035,
         0.008368686772882938, 0.001381982583552599)
LOG_P = (0.3333333134651184, -0.2500082552433014, 0.20001249015331268,
         -0.1662318855524063, 0.14201216399669647, -0.13161522150039673,
         0.1276593804359436, -0.07635954022407532)
TANH_SMALL_P = (-0.33333060145378113, 0.13314789533615112, -0.0503615140914917)
TANH_EXP_P = (0.9999998807907104, 0.6666608452796936, 0.3333462178707123,
              0.13389898836612701, 0.044223442673683167)
TANH_SPLIT = 0.3
TANH_CLAMP = 10.0  # tanh rounds to 1 from 9.0109; 2**k stays a normal float
ERF_SMALL_P = (0.12837916612625122, -0.37612617015838623, 0.11283449083566666,
               -0.026847289875149727, 0.005174892954528332, -0.0007885678205639124,
               7.427189848385751e-05)
ERF_TAIL_Q = (-3.6971278190612793, -4.425790309906006, -1.256301999092102,
              -0.047152578830718994, 0.011048669926822186, -0.0019561497028917074,
              0.00015124885248951614)
ERF_EXP2_P = (1.0000001192092896, 0.6931472420692444, 0.2402191162109375,
              0.055500831454992294, 0.00968555174767971, 0.0013521612854674459)
ERF_SPLIT = 1.0625
ERF_CENTER = 1.25
ERF_ONE = 3.9192059  # erfc(a) <= 2**-25 from here on: erf rounds to 1

SIN_P = (-0.1666666716337204, 0.008333379402756691, -0.00019853070261888206,
         2.832627842508373e-06)
COS_P = (0.04166664555668831, -0.0013887309469282627, 2.4432327336398885e-05)
SINCOS_BOUND = 2097152.0  # 2**21: the float32 reduction's limit (module docstring)


def _float32_parts(value: Fraction, n: int) -> tuple[float, ...]:
    """`n` float32 values whose sum is `value` to about 24 n bits: each the float32
    nearest to what the ones before leave."""
    parts = []
    for _ in range(n):
        parts.append(float(np.float32(float(value))))
        value -= Fraction(parts[-1])
    return tuple(parts)


PIO2_PARTS = _float32_parts(Fraction(_pi_fixed(200), 1 << 201), 3)  # 72 bits of pi/2
TWO_OVER_PI = 0.6366197466850281  # float32(2 / pi)

LN2_HI = _split_hi(math.log(2), 16)
LN2_LO = float(np.float32(math.log(2) - LN2_HI))
LOG2E = 1.4426950216293335  # float32(1 / ln 2)
ROUNDING_SHIFT = 12582912.0  # 1.5 * 2**23: adding it rounds below 2**22 to an integer
LN2 = float(np.float32(math.log(2)))
SQRT2 = 1.4142135381698608  # float32(sqrt 2), just above sqrt 2


class Math32:
    """Emits the float32 approximations at `builder`'s position (`fma`: as `Math`)."""

    def __init__(self, builder: ir.IRBuilder, fma: bool):
        self.b = builder
        self.has_fma = fma

    # ------------------------------------------------------------ primitives

    def intrinsic(self, name: str, ret, args) -> ir.Function:
        fn = self.b.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.b.module, ir.FunctionType(ret, args), name=name)
        return fn

    def unary(self, name: str, x):
        return self.b.call(self.intrinsic(f"llvm.{name}.f32", F32, [F32]), [x])

    def c(self, value: float):
        return ir.Constant(F32, value)

    def i(self, value: int):
        return ir.Constant(I32, value)

    def fma(self, x, y, z):
        if self.has_fma:
            return self.b.call(self.intrinsic("llvm.fma.f32", F32, [F32, F32, F32]), [x, y, z])
        return self.b.fadd(self.b.fmul(x, y), z)

    def horner(self, x, coefficients):
        acc = self.c(coefficients[-1])
        for coef in reversed(coefficients[:-1]):
            acc = self.fma(acc, x, self.c(coef))
        return acc

    def select(self, cond, x, y):
        return self.b.select(cond, x, y)

    def lt(self, x, limit: float):
        return self.b.fcmp_ordered("<", x, self.c(limit))

    def clamp(self, x, low: float, high: float):
        """x limited to [low, high], keeping NaN."""
        x = self.select(self.b.fcmp_ordered(">", x, self.c(high)), self.c(high), x)
        return self.select(self.lt(x, low), self.c(low), x)

    def bits(self, x):
        return self.b.bitcast(x, I32)

    def two_prod(self, x, y):
        """(p, e) with p + e == x * y exactly: FMA, or Dekker's product of halves."""
        b = self.b
        p = b.fmul(x, y)
        if self.has_fma:
            return p, self.fma(x, y, b.fneg(p))
        xh, xl = self._veltkamp(x)
        yh, yl = self._veltkamp(y)
        e = b.fadd(b.fsub(b.fmul(xh, yh), p), b.fmul(xh, yl))
        e = b.fadd(e, b.fmul(xl, yh))
        return p, b.fadd(e, b.fmul(xl, yl))

    def _veltkamp(self, x):
        """x as a 12-bit high half and the rest (products of halves are exact)."""
        t = self.b.fmul(x, self.c(4097.0))  # 2**12 + 1
        hi = self.b.fsub(t, self.b.fsub(t, x))
        return hi, self.b.fsub(x, hi)

    def two_sum(self, x, y):
        """(s, e) with s + e == x + y exactly (Knuth's, for any order)."""
        b = self.b
        s = b.fadd(x, y)
        yv = b.fsub(s, x)
        return s, b.fadd(b.fsub(x, b.fsub(s, yv)), b.fsub(y, yv))

    def with_sign_of(self, value, sign_source):
        sign = self.b.and_(self.bits(sign_source), self.i(-(1 << 31)))
        return self.b.bitcast(self.b.xor(self.bits(value), sign), F32)

    def pow2(self, k):
        """2.0**k for an i32 k in [-126, 127]."""
        return self.b.bitcast(self.b.shl(self.b.add(k, self.i(127)), self.i(23)), F32)

    def to_int(self, kf):
        """An integral float (possibly NaN) as an i32; NaN gives 0, never poison."""
        nan = self.b.fcmp_unordered("uno", kf, kf)
        return self.b.fptosi(self.select(nan, self.c(0.0), kf), I32)

    # ------------------------------------------------------------ exp, expm1

    def _reduce(self, x):
        """(k, p) with x = k ln2 + r, p = expm1(r), for |x| <= 104."""
        kf = self.unary("rint", self.b.fmul(x, self.c(LOG2E)))
        neg_k = self.b.fneg(kf)
        r = self.fma(neg_k, self.c(LN2_HI), x)  # exact
        r = self.fma(neg_k, self.c(LN2_LO), r)
        p = self.fma(self.b.fmul(r, r), self.horner(r, EXP_P), r)
        return self.to_int(kf), p

    def exp(self, x):
        k, p = self._reduce(self.clamp(x, -104.0, 89.0))
        k1 = self.b.ashr(k, self.i(1))
        k2 = self.b.sub(k, k1)
        y = self.b.fadd(self.c(1.0), p)
        return self.b.fmul(self.b.fmul(y, self.pow2(k1)), self.pow2(k2))

    # ------------------------------------------------------------ log

    def log(self, x):
        b = self.b
        tiny = self.lt(x, 2.0 ** -126)
        scaled = self.select(tiny, b.fmul(x, self.c(2.0 ** 24)), x)
        bits = self.bits(scaled)
        e = b.sub(b.lshr(bits, self.i(23)), self.i(127))
        e = b.sub(e, b.select(tiny, self.i(24), self.i(0)))
        m = b.bitcast(b.or_(b.and_(bits, self.i((1 << 23) - 1)), self.i(127 << 23)), F32)
        big = b.fcmp_ordered(">", m, self.c(SQRT2))
        m = self.select(big, b.fmul(m, self.c(0.5)), m)
        e = b.select(big, b.add(e, self.i(1)), e)
        f = b.fsub(m, self.c(1.0))
        t = self.fma(f, self.horner(f, LOG_P), self.c(-0.5))
        log_m = self.fma(b.fmul(f, f), t, f)
        ef = b.sitofp(e, F32)
        result = self.fma(ef, self.c(LN2_HI), self.fma(ef, self.c(LN2_LO), log_m))
        result = self.select(b.fcmp_ordered("==", x, self.c(math.inf)), x, result)
        result = self.select(b.fcmp_ordered("==", x, self.c(0.0)), self.c(-math.inf), result)
        invalid = b.fcmp_unordered("<", x, self.c(0.0))  # x < 0 or NaN
        return self.select(invalid, self.c(math.nan), result)

    # ------------------------------------------------------------ tanh, sigmoid

    def tanh(self, x):
        b = self.b
        a = self.unary("fabs", x)
        u = b.fmul(a, a)
        small = self.fma(b.fmul(a, u), self.horner(u, TANH_SMALL_P), a)
        value = self.select(self.lt(a, TANH_SPLIT), small, self._tanh_above(a))
        # value >= 0 (or NaN): copysign is one bit operation where and-xor is two
        return b.call(self.intrinsic("llvm.copysign.f32", F32, [F32, F32]), [value, x])

    def _tanh_above(self, a):
        """tanh a for a = |x| >= TANH_SPLIT (any value, never poison, below; NaN for
        NaN): ``h / (h + 1)``, ``h = (e**(2a) - 1) / 2 = 2**k g - 1/2`` where ``2a = k
        ln2 + 2r`` and ``g = e**(2r) / 2`` (module docstring)."""
        b = self.b
        a = self.select(b.fcmp_ordered(">", a, self.c(TANH_CLAMP)), self.c(TANH_CLAMP), a)
        # rounds 2a / ln2 + 127 to an integer k + 127, whose bits are the sum's low bits
        shift = ROUNDING_SHIFT + 127
        shifted = self.fma(a, self.c(2 * LOG2E), self.c(shift))
        neg_k = b.fsub(self.c(shift), shifted)  # exact: -k
        r = self.fma(neg_k, self.c(LN2 / 2), a)
        # the sum's bits are those of 1.5 * 2**23 plus k + 127, whose shift by 23
        # leaves (k + 127) << 23 (mod 2**32): 2**k
        scale = b.bitcast(b.shl(self.bits(shifted), self.i(23)), F32)
        if self.has_fma:  # g = e**(2r) / 2 in one Horner chain, h = 2**k g - 1/2
            h = self.fma(scale, self.horner(r, (0.5, 1.0, *TANH_EXP_P)), self.c(-0.5))
        else:
            # unfused, g's two roundings a step, times 2**k, reach h: 2 ulp at 20
            # floats. q = g - 1/2 = r + r**2 Q(r) is small, and so is its error
            q = self.fma(b.fmul(r, r), self.horner(r, TANH_EXP_P), r)
            h = self.fma(scale, q, self.fma(scale, self.c(0.5), self.c(-0.5)))
        return b.fdiv(h, b.fadd(h, self.c(1.0)))

    def sigmoid(self, x):
        e = self.exp(self.b.fneg(self.unary("fabs", x)))
        top = self.select(self.b.fcmp_ordered(">=", x, self.c(0.0)), self.c(1.0), e)
        return self.b.fdiv(top, self.b.fadd(self.c(1.0), e))

    # ------------------------------------------------------------ erf

    def erf(self, x):
        b = self.b
        a = self.unary("fabs", x)
        small = self.fma(a, self.horner(b.fmul(a, a), ERF_SMALL_P), a)
        value = self.select(self.lt(a, ERF_SPLIT), small, self._erf_tail(a))
        value = self.select(b.fcmp_ordered(">=", a, self.c(ERF_ONE)), self.c(1.0), value)
        # value >= 0 (or NaN): copysign is one bit operation where and-xor is two
        return b.call(self.intrinsic("llvm.copysign.f32", F32, [F32, F32]), [value, x])

    def _erf_tail(self, a):
        """erf a = 1 - erfc a = 1 - 2**q for ERF_SPLIT <= a < ERF_ONE, ``q = Q(a -
        ERF_CENTER)`` a fit of ``log2 erfc`` (NaN for NaN; any value, never poison,
        elsewhere: the callers' selects drop it). ``q = k + r``, ``|r| <= 1/2``, k
        rounded by adding ``1.5 * 2**23 + 127`` (the sum's low bits shifted into the
        exponent field are ``2**k``, as tanh's) and r exact; ``2**r`` by P."""
        b = self.b
        q = self.horner(b.fsub(a, self.c(ERF_CENTER)), ERF_TAIL_Q)
        shift = ROUNDING_SHIFT + 127
        shifted = b.fadd(q, self.c(shift))
        r = b.fadd(q, b.fsub(self.c(shift), shifted))  # q - k, exact
        scale = b.bitcast(b.shl(self.bits(shifted), self.i(23)), F32)
        # 1 - 2**k 2**r in one FMA: P's coefficients negated give -2**r
        return self.fma(scale, self.horner(r, [-c for c in ERF_EXP2_P]), self.c(1.0))

    # ------------------------------------------------------------ sin, cos

    def sin(self, x):
        q, sin, cos = self._sincos(x)
        # quadrants 0..3 of |x|: sin, cos, -sin, -cos
        value = self.select(self._bit(q, 1), cos, sin)
        value = self.select(self._bit(q, 2), self.b.fneg(value), value)
        return self._beyond_bound("sin", x, self.with_sign_of(value, x))

    def cos(self, x):
        q, sin, cos = self._sincos(x)
        # quadrants 0..3 of |x|: cos, -sin, -cos, sin
        value = self.select(self._bit(q, 1), sin, cos)
        negate = self.b.xor(self._bit(q, 1), self._bit(q, 2))
        value = self.select(negate, self.b.fneg(value), value)
        return self._beyond_bound("cos", x, value)

    def _bit(self, q, mask: int):
        return self.b.icmp_unsigned("!=", self.b.and_(q, self.i(mask)), self.i(0))

    def _beyond_bound(self, name: str, x, value):
        """`value` where |x| <= SINCOS_BOUND, else `Math`'s float64 result (NaN for
        inf and NaN), from a call the loop vectorizer widens (`_HugeArguments`)."""
        huge = _HugeArguments(self.b.module, name, self.has_fma)
        return self.select(huge.beyond(self.b, x), self.b.call(huge.scalar, [x]), value)

    def _sincos(self, x):
        """(quadrant, sin r, cos r) with |x| = quadrant pi/2 + r (mod 2 pi), for
        |x| <= SINCOS_BOUND (meaningless, but no poison, beyond)."""
        b = self.b
        q, hi, lo = self._reduce_pio2(self.clamp(self.unary("fabs", x), 0.0, SINCOS_BOUND))
        z, z_err = self.two_prod(hi, hi)
        # sin r = hi + (hi z S(z) + lo (1 - z/2))
        sin_tail = self.fma(b.fmul(hi, z), self.horner(z, SIN_P),
                            b.fmul(lo, self.fma(z, self.c(-0.5), self.c(1.0))))
        sin = b.fadd(hi, sin_tail)
        # cos r = w + tail, w = 1 - z/2 with its rounding error (and z's) recovered
        hz = b.fmul(z, self.c(0.5))
        w = b.fsub(self.c(1.0), hz)
        tail = b.fsub(b.fsub(b.fsub(self.c(1.0), w), hz), b.fmul(z_err, self.c(0.5)))
        tail = b.fadd(tail, self.fma(b.fmul(z, z), self.horner(z, COS_P),
                                     b.fneg(b.fmul(hi, lo))))
        return q, sin, b.fadd(w, tail)

    def _reduce_pio2(self, a):
        """(k mod 4, hi, lo) with a = k pi/2 + hi + lo, |hi + lo| <= pi/4 (about), for
        0 <= a <= SINCOS_BOUND: Cody-Waite with pi/2 in three float32 parts.
        ``t = a - k P1`` is exact: ``k P1 = p1 + e1`` exactly (two_prod), ``a - p1``
        is exact (Sterbenz: p1 is within a factor 2 of a), and so is subtracting e1
        (both are multiples of P1's ulp, 2**-23, and the difference is below 2 while
        k < 2**24). ``t - k P2`` is an exact product and two_sum; only the low part,
        ``k P3`` and the 2**-76 left of pi/2 carry rounding."""
        b = self.b
        kf = self.unary("rint", b.fmul(a, self.c(TWO_OVER_PI)))
        p1, e1 = self.two_prod(kf, self.c(PIO2_PARTS[0]))
        t = b.fsub(b.fsub(a, p1), e1)
        p2, e2 = self.two_prod(kf, self.c(PIO2_PARTS[1]))
        hi, e = self.two_sum(t, b.fneg(p2))
        lo = self.fma(b.fneg(kf), self.c(PIO2_PARTS[2]), b.fsub(e, e2))
        return b.and_(b.fptosi(kf, I32), self.i(3)), hi, lo


class _VariantAttributes(ir.values.FunctionAttributes):
    """llvmlite's function attributes, plus LLVM's string attribute that names a
    function's vector variants (which llvmlite's list of attributes lacks)."""

    def add(self, name):
        if name.startswith('"vector-function-abi-variant"='):
            return set.add(self, name)
        return super().add(name)


class _HugeArguments:
    """float32 sin or cos of |x| > SINCOS_BOUND in a module: `Math`'s float64 code
    (Payne-Hanek, right up to the largest float) rounded, in a function of its own.

    Computed in every lane, that code costs several times the float32 path (4.7
    against 0.75 ms for a million sines), so it runs only where a lane needs it: the
    scalar function (``noinline``, 0 where |x| <= SINCOS_BOUND) names vector
    variants of widths 4, 8 and 16 by LLVM's vector-function ABI, so the loop
    vectorizer calls a variant on whole vectors, and the variant compares all its
    lanes at once and, only when one is beyond the bound, runs the float64 code
    lane by lane. The variants are external, so no dead-code pass removes them
    before the vectorizer looks for them."""

    WIDTHS = (4, 8, 16)

    def __init__(self, module: ir.Module, name: str, fma: bool):
        self.module, self.name, self.fma = module, name, fma
        self.scalar_name = f"irflow_{name}f_huge"
        self.scalar = module.globals.get(self.scalar_name) or self._define()

    def _define(self) -> ir.Function:
        wide = self._define_wide()
        fn = ir.Function(self.module, ir.FunctionType(F32, [F32]), name=self.scalar_name)
        fn.linkage = "internal"
        fn.attributes = _VariantAttributes(["noinline", "nounwind", "readnone"])
        fn.attributes.add('"vector-function-abi-variant"="' + ",".join(
            f"_ZGV_LLVM_N{w}v_{self.scalar_name}({self.scalar_name}_v{w})"
            for w in self.WIDTHS) + '"')
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        (x,) = fn.args
        with b.if_then(self.beyond(b, x)):
            b.ret(b.call(wide, [x]))
        b.ret(ir.Constant(F32, 0.0))
        for width in self.WIDTHS:
            self._define_variant(wide, width)
        return fn

    def _define_wide(self) -> ir.Function:
        """The float64 code itself, in a function without vector variants (the SLP
        vectorizer would turn a variant's calls of the scalar function into a call
        of the variant itself)."""
        fn = ir.Function(self.module, ir.FunctionType(F32, [F32]),
                         name=f"{self.scalar_name}_wide")
        fn.linkage = "internal"
        for attribute in ("noinline", "nounwind", "readnone"):
            fn.attributes.add(attribute)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        wide = getattr(Math(b, self.fma), self.name)(b.fpext(fn.args[0], F64),
                                                       TOLERANCE["f32"])
        b.ret(b.fptrunc(wide, F32))
        return fn

    def beyond(self, b: ir.IRBuilder, x):
        """|x| > SINCOS_BOUND or NaN, for a float or a vector of floats."""
        kind = x.type
        width = getattr(kind, "count", None)
        suffix = f"v{width}f32" if width else "f32"
        fabs = Math32(b, self.fma).intrinsic(f"llvm.fabs.{suffix}", kind, [kind])
        bound = ir.Constant(kind, [SINCOS_BOUND] * width if width else SINCOS_BOUND)
        return b.fcmp_unordered(">", b.call(fabs, [x]), bound)

    def _define_variant(self, wide: ir.Function, width: int) -> None:
        kind = ir.VectorType(F32, width)
        fn = ir.Function(self.module, ir.FunctionType(kind, [kind]),
                         name=f"{self.scalar_name}_v{width}")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        (x,) = fn.args
        mask = ir.IntType(width)
        any_huge = b.icmp_unsigned("!=", b.bitcast(self.beyond(b, x), mask), ir.Constant(mask, 0))
        zeros = ir.Constant(kind, [0.0] * width)
        with b.if_then(any_huge, likely=False):
            y = zeros
            for lane in range(width):
                index = ir.Constant(I32, lane)
                y = b.insert_element(y, b.call(wide, [b.extract_element(x, index)]), index)
            b.ret(y)
        b.ret(zeros)
