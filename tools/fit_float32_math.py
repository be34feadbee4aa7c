"""Fit the float32 polynomial coefficients of `irflow.codegen.llvm.mathlib32`.

Run by hand (NumPy and mpmath; prints the tables that mathlib32 holds):

    python tools/fit_float32_math.py

Each polynomial is a weighted minimax fit on a dense grid (4001 Chebyshev-spaced
points of the interval), computed by Lawson's algorithm: iteratively reweighted
least squares whose weights converge to the minimax solution. The weight makes the
fitted error the one that matters in the final float32 result (relative error of
the function, or, for erf's tail, the error in units of erf's own ulp). Then the
coefficients are rounded to float32 one at a time, lowest order first, refitting the
ones not yet rounded after each rounding (so the later coefficients absorb the
rounding of the earlier ones). References are mpmath at 60 digits.

The fits (x the argument of the function, all other names as in mathlib32):

- exp:    e**r = 1 + r + r**2 P(r) on |r| <= ln2/2 (relative error);
- log:    log(1 + f) = f - f**2/2 + f**3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1];
- tanh, |x| < TANH_SPLIT: tanh(a) = a + a**3 P(a**2) (relative error);
- tanh, above: e**(2r) / 2 = 1/2 + r + r**2 P(r) on |r| <= ln2/4, the reduced
  argument of 2|x| = k ln2 + 2r (relative error of e**(2r));
- erf, |x| < ERF_SPLIT:   erf(a) = a + a P(a**2) (relative error);
- erf, ERF_SPLIT <= |x| < ERF_ONE: erfc(a) = 2**Q(a - ERF_CENTER), weighted by
  ln2 erfc(a) / erf(a) so the error is measured relative to erf (what float32
  rounds), and 2**r = P(r) on |r| <= 1/2 (relative error);
- sin:    sin(r) = r + r**3 S(r**2) on |r| <= pi/4 (relative error of sin);
- cos:    cos(r) = 1 - r**2/2 + r**4 C(r**2) on |r| <= pi/4 (relative error of cos).

sin and cos are fitted a little beyond pi/4 (by SINCOS_MARGIN): the float32
reduction's r may exceed pi/4 by rounding.
"""
import mpmath
import numpy as np

mpmath.mp.dps = 60

ERF_SPLIT = 1.0625     # below: the odd series form; above: 1 - 2**Q
ERF_ONE = 3.9192059    # erfc(a) <= 2**-25 from here: erf rounds to 1 in float32
ERF_CENTER = 1.25      # Q is evaluated at t = a - ERF_CENTER (less cancellation)
TANH_SPLIT = 0.3       # tanh below: the odd series form; above: h / (h + 1)
SINCOS_MARGIN = 1.001  # the reduced argument's interval, relative to pi/4


def grid(lo, hi, n=4001):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)[::-1]


def lawson(basis, target, weight, iterations=400):
    """Coefficients c minimizing max |weight (basis c - target)|."""
    a = basis * weight[:, None]
    b = target * weight
    w = np.full(len(b), 1.0 / len(b))
    c = None
    for _ in range(iterations):
        s = np.sqrt(w)
        c = np.linalg.lstsq(a * s[:, None], b * s, rcond=None)[0]
        e = np.abs(a @ c - b)
        w = w * e
        w /= w.sum()
    return c, np.max(np.abs(a @ c - b))


def fit_rounded(powers_of, degree, target, weight):
    """Minimax coefficients of sum c_k v**k, k < degree, rounded to float32 one at
    a time with refitting; returns (coefficients, max weighted error after)."""
    basis = np.stack([powers_of ** k for k in range(degree)], axis=1)
    fixed: list[float] = []
    for k in range(degree):
        rest = target - (basis[:, :k] @ np.array(fixed) if fixed else 0.0)
        c, _ = lawson(basis[:, k:], rest, weight)
        fixed.append(float(np.float32(c[0])))
    c = np.array(fixed)
    return fixed, np.max(np.abs((basis @ c - target) * weight))


def mp_vec(fn, xs):
    return np.array([float(fn(mpmath.mpf(float(x)))) for x in xs])


def fit_exp(degree=5):
    half = float(mpmath.log(2) / 2) * 1.001
    r = grid(-half, half)
    r = r[np.abs(r) > 1e-6]
    exact = mp_vec(lambda v: (mpmath.exp(v) - 1 - v) / v ** 2, r)
    weight = r ** 2 / np.exp(r)
    return fit_rounded(r, degree, exact, weight)


def fit_log(degree=8):
    lo, hi = float(mpmath.sqrt(0.5) - 1) * 1.001, float(mpmath.sqrt(2) - 1) * 1.001
    f = grid(lo, hi)
    f = f[np.abs(f) > 1e-4]
    exact = mp_vec(lambda v: (mpmath.log1p(v) - v + v ** 2 / 2) / v ** 3, f)
    weight = np.abs(f ** 3 / np.log1p(f))
    return fit_rounded(f, degree, exact, weight)


def fit_tanh_small(degree=3):
    a = grid(1e-4, TANH_SPLIT * 1.001)
    exact = mp_vec(lambda v: (mpmath.tanh(v) / v - 1) / v ** 2, a)
    weight = a ** 3 / mp_vec(mpmath.tanh, a)
    return fit_rounded(a * a, degree, exact, weight)


def fit_tanh_exp(degree=5):
    quarter = float(mpmath.log(2) / 4) * 1.001
    r = grid(-quarter, quarter)
    r = r[np.abs(r) > 1e-6]
    exact = mp_vec(lambda v: (mpmath.exp(2 * v) / 2 - mpmath.mpf(0.5) - v) / v ** 2, r)
    weight = 2 * r ** 2 / np.exp(2 * r)
    return fit_rounded(r, degree, exact, weight)


def fit_erf_small(degree=7):
    a = grid(1e-4, ERF_SPLIT * 1.001)
    exact = mp_vec(lambda v: mpmath.erf(v) / v - 1, a)
    weight = a / mp_vec(mpmath.erf, a)
    return fit_rounded(a * a, degree, exact, weight)


def fit_erf_tail(degree=7):
    a = grid(ERF_SPLIT * 0.999, ERF_ONE * 1.001)
    exact = mp_vec(lambda v: mpmath.log(mpmath.erfc(v), 2), a)
    weight = mp_vec(lambda v: mpmath.erfc(v) / mpmath.erf(v), a) * np.log(2)
    return fit_rounded(a - ERF_CENTER, degree, exact, weight)


def fit_erf_exp2(degree=6):
    r = grid(-0.5005, 0.5005)
    exact = mp_vec(lambda v: mpmath.power(2, v), r)
    return fit_rounded(r, degree, exact, 1 / exact)


def fit_sin(degree=4):
    r = grid(1e-4, float(mpmath.pi / 4) * SINCOS_MARGIN)
    exact = mp_vec(lambda v: (mpmath.sin(v) - v) / v ** 3, r)
    weight = r ** 3 / mp_vec(mpmath.sin, r)
    return fit_rounded(r * r, degree, exact, weight)


def fit_cos(degree=3):
    r = grid(1e-4, float(mpmath.pi / 4) * SINCOS_MARGIN)
    exact = mp_vec(lambda v: (mpmath.cos(v) - 1 + v ** 2 / 2) / v ** 4, r)
    weight = r ** 4 / mp_vec(mpmath.cos, r)
    return fit_rounded(r * r, degree, exact, weight)


def main():
    for name, fit in (("EXP_P", fit_exp), ("LOG_P", fit_log),
                      ("TANH_SMALL_P", fit_tanh_small), ("TANH_EXP_P", fit_tanh_exp),
                      ("ERF_SMALL_P", fit_erf_small), ("ERF_TAIL_Q", fit_erf_tail),
                      ("ERF_EXP2_P", fit_erf_exp2),
                      ("SIN_P", fit_sin), ("COS_P", fit_cos)):
        coefficients, error = fit()
        print(f"# max weighted error {error:.3g} (2**{np.log2(error):.1f})")
        print(f"{name} = (" + ", ".join(repr(c) for c in coefficients) + ")")


if __name__ == "__main__":
    main()
