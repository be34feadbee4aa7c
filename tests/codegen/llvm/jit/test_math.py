"""The vectorizable approximations against NumPy over the whole float range, with
ulp bounds: float32 against NumPy's float64 functions rounded to float32 (so the
bound is against the correctly rounded result), float64 against NumPy's long
double functions (erf: against math.erf, itself within an ulp)."""
import math

import numpy as np
import pytest

from irflow.codegen.llvm import Compiler, ElementwiseFunction
from irflow.codegen.llvm.jit import HostTarget
from irflow.codegen.llvm.mathlib32 import (ERF_ONE, ERF_SPLIT, SINCOS_BOUND, TANH_CLAMP,
                                          TANH_SPLIT)
from irflow.ir import TensorType, function

from .ulp import ulp_distance

FUNCTIONS = ["exp", "log", "tanh", "sigmoid", "erf", "sin", "cos"]
# Largest error allowed, in ulps, by function and dtype (measured: see docs/llvm.md).
# Every float32 function is float32-native (mathlib32; sin and cos beyond
# SINCOS_BOUND are computed in float64 and rounded once).
BOUND = {"f32": {**dict.fromkeys(FUNCTIONS, 1), "sigmoid": 2},
         "f64": {"exp": 1, "log": 1, "tanh": 2, "sigmoid": 2, "erf": 8, "sin": 1, "cos": 1}}
_erf = np.frompyfunc(math.erf, 1, 1)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(name, x):
    if x.dtype == np.float32:
        wide = x.astype(np.float64)
        values = _erf(wide).astype(np.float64) if name == "erf" else \
            (sigmoid if name == "sigmoid" else getattr(np, name))(wide)
        return values.astype(np.float32)
    if name == "erf":
        return _erf(x).astype(np.float64)
    wide = x.astype(np.longdouble)
    return (sigmoid if name == "sigmoid" else getattr(np, name))(wide).astype(np.float64)


def edges(dtype):
    info = np.finfo(dtype)
    special = [0.0, -0.0, info.smallest_subnormal, info.smallest_normal, info.max, info.eps,
               1.0, 1 + info.eps, 1 - info.epsneg, np.pi / 2, np.pi, 1e4 * np.pi, 88.72, 88.73,
               -87.33, -103.97, -104.0, 88.7228, 88.7229, 9.01, 0.625, 0.921875,
               3.9192059, 1e-30, 1e-40, 709.78, 709.79, -745.13, -746.0, 3.83, 3.92, 5.9,
               2.5, 0.55, 20.0, 40.0, np.inf, np.nan]
    with np.errstate(over="ignore"):
        values = np.array(special + [-v for v in special], dtype=dtype)
        return np.concatenate([values, np.nextafter(values, np.inf).astype(dtype),
                               np.nextafter(values, -np.inf).astype(dtype)])


def samples(dtype, n=40000, seed=0):
    rng = np.random.default_rng(seed)
    ints = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(np.iinfo(ints).min, np.iinfo(ints).max, n, dtype=ints).view(dtype)
    return np.concatenate([bits, rng.uniform(-12, 12, n).astype(dtype),
                           rng.uniform(-1, 1, n // 4).astype(dtype), edges(dtype)])


def unary_kernel(compiler, name, dtype="f32"):
    fn = function("f", [TensorType(dtype, ["N"])], lambda b, x: getattr(b, name)(x))
    return ElementwiseFunction(fn, compiler)


def assert_within_bound(kernel, name, x):
    """The kernel's results on `x` within BOUND of the correctly rounded ones, and
    the odd functions' signed zeros kept."""
    dtype = "f32" if x.dtype == np.float32 else "f64"
    with np.errstate(all="ignore"):
        want = reference(name, x)
    (got,) = kernel(x)
    errors = ulp_distance(got, want)
    worst = int(np.argmax(errors))
    assert errors[worst] <= BOUND[dtype][name], (
        f"{name}({x[worst]!r}) = {got[worst]!r}, expected {want[worst]!r}: "
        f"{errors[worst]} ulps")
    zeros = x == 0
    if name in ("tanh", "erf", "sin"):  # odd: signed zeros are kept
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(x[zeros]))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_ulp_error_over_the_whole_range(compiler, name, dtype):
    x = samples(np.float32 if dtype == "f32" else np.float64)
    assert_within_bound(unary_kernel(compiler, name, dtype), name, x)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_native_functions_over_every_4096th_float(compiler, name):
    """Dense coverage of the whole float32 range (both signs, denormals, inf and NaN
    bit patterns): every 4096th bit pattern, offset so both ends of each binade
    are hit, against the correctly rounded result."""
    bits = np.arange(0, 1 << 32, 4096, dtype=np.uint64)
    x = np.concatenate([bits, bits + 4095]).astype(np.uint32).view(np.float32)
    assert_within_bound(unary_kernel(compiler, name), name, x)


def nearest_multiples_of_pio2(count=400):
    """The float32 values nearest to k pi/2 for k up to twice the float32 reduction's
    bound, the `count` closest of them (the reduction's hardest arguments: sin or
    cos is tiny there), and both neighbours of each."""
    k = np.arange(1, int(2 * SINCOS_BOUND / (np.pi / 2)), dtype=np.float64)
    x = (k * (np.pi / 2)).astype(np.float32)
    gap = np.abs(x.astype(np.float64) - k * (np.pi / 2)) / x
    x = x[np.argsort(gap)[:count]]
    return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


def sincos_edges():
    """Around where the float32 sin and cos change paths or lose accuracy: powers of
    2 (denormals to the largest), near multiples of pi/2, the reduction's bound, the
    largest float, zeros, infinities and NaN; both signs."""
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    bound = np.float32(SINCOS_BOUND)
    bound_ulps = np.nextafter(bound, np.inf) - bound
    special = np.array([bound, 2 * bound, np.finfo(np.float32).max, np.pi / 4, np.pi / 2,
                        0.0, -0.0, np.inf, np.nan], dtype=np.float32)
    x = np.concatenate([powers, nearest_multiples_of_pio2(), special,
                        bound + bound_ulps * np.arange(-3, 4, dtype=np.float32)])
    with np.errstate(over="ignore"):
        x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_edges(compiler, name):
    assert_within_bound(unary_kernel(compiler, name), name, sincos_edges())


def tanh_edges():
    """Where the float32 tanh's reduction changes k (``2|x| / ln 2`` near a half
    integer, rounded by adding 1.5 * 2**23 + 127), its split, where it rounds to 1,
    its clamp, zeros, infinities and NaN, with both neighbours; both signs."""
    ties = (np.arange(0, 29) + 0.5) * (np.log(2) / 2)
    special = [TANH_SPLIT, 9.0109, TANH_CLAMP, 20.0, 0.0, np.inf, np.nan]
    x = np.concatenate([ties, special]).astype(np.float32)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    return np.concatenate([x, -x])


def test_float32_tanh_edges(compiler):
    assert_within_bound(unary_kernel(compiler, "tanh"), "tanh", tanh_edges())


def erf_edges():
    """Where the float32 erf's tail changes k (``log2 erfc a`` a half integer, where
    ``2**q`` is split into ``2**k 2**r``), its split, where it rounds to 1, tiny and
    denormal arguments, zeros, infinities and NaN, with both neighbours; both signs."""
    ties = []
    for n in range(2, 26):  # erfc(a) = 2**-(n + 1/2), by bisection (erfc decreases)
        lo, hi = 0.5, 4.5
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erfc(mid) > 2.0 ** -(n + 0.5) else (lo, mid)
        ties.append(lo)
    special = [ERF_SPLIT, ERF_ONE, 4.0, 1e-20, 1e-40, 1e-45, 0.0, np.inf, np.nan]
    x = np.array(ties + special, dtype=np.float32)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    return np.concatenate([x, -x])


def test_float32_erf_edges(compiler):
    assert_within_bound(unary_kernel(compiler, "erf"), "erf", erf_edges())


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "erf"])
def test_float32_without_fma(name):
    """Without FMA the float32 sin and cos reduction's products are Dekker's, exact
    as the FMA ones, tanh's rounding of k adds after a rounded product, and erf's
    ``1 - 2**k P(r)`` rounds its product first (an error of erfc's size): the same
    bounds. (The host's ``+fma`` is replaced, not followed by ``-fma``: with both,
    the math library still emitted its FMA forms.)"""
    target = HostTarget()
    target.features = target.features.replace("+fma", "-fma")
    assert not target.has_fma
    kernel = unary_kernel(Compiler(cache_dir=None, target=target), name)
    edges = {"tanh": tanh_edges, "erf": erf_edges}.get(name, sincos_edges)()
    assert_within_bound(kernel, name, np.concatenate([samples(np.float32), edges]))


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_beyond_the_bound_in_some_lanes(compiler, name):
    """Arguments beyond SINCOS_BOUND scattered among ordinary ones (the float64 path
    runs for the vectors that hold one) and arrays shorter than a vector (the
    scalar loop calls the scalar function)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, 1000).astype(np.float32)
    x[::37] = rng.uniform(1e7, 1e30, len(x[::37])).astype(np.float32)
    kernel = unary_kernel(compiler, name)
    for part in (x, x[:3], x[37:40]):
        assert_within_bound(kernel, name, part)


def test_float32_sin_vectorizes_with_the_fallback_a_call_on_vectors(compiler):
    spec = unary_kernel(compiler, "sin").kernel.spec
    optimized = compiler.target.optimized_ir(compiler.llvm_ir(spec))
    assert "x float> @irflow_sinf_huge_v" in optimized


def test_float32_sin_and_cos_twice_in_one_kernel(compiler):
    """One module holds each function's float64 fallback once, whoever emits it."""
    fn = function("f", [TensorType("f32", ["N"])],
                  lambda b, x: b.add(b.add(b.sin(x), b.sin(b.mul(x, x))), b.cos(x)))
    x = np.array([1.0, 3e6, 5e3, -7e12, 0.5] * 7, dtype=np.float32)
    (got,) = ElementwiseFunction(fn, compiler)(x)
    with np.errstate(over="ignore"):
        want = reference("sin", x) + reference("sin", x * x) + reference("cos", x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
