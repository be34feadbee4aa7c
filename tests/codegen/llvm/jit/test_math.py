"""The vectorizable approximations against NumPy over the whole float range, with
ulp bounds: float32 against NumPy's float64 functions rounded to float32 (so the
bound is against the correctly rounded result), float64 against NumPy's long
double functions (erf: against math.erf, itself within an ulp)."""
import math

import numpy as np
import pytest

from irflow.codegen.llvm import ElementwiseFunction
from irflow.ir import TensorType, function

from .ulp import ulp_distance

FUNCTIONS = ["exp", "log", "tanh", "sigmoid", "erf", "sin", "cos"]
# Largest error allowed, in ulps, by function and dtype (measured: see docs/llvm.md).
# float32 exp, log, tanh, sigmoid and erf are float32-native (mathlib32); sin and cos
# are computed in float64 and rounded once.
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


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_ulp_error_over_the_whole_range(compiler, name, dtype):
    fn = function("f", [TensorType(dtype, ["N"])], lambda b, x: getattr(b, name)(x))
    kernel = ElementwiseFunction(fn, compiler)
    x = samples(np.float32 if dtype == "f32" else np.float64)
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


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "erf"])
def test_float32_native_functions_over_every_4096th_float(compiler, name):
    """Dense coverage of the whole float32 range (both signs, denormals, inf and NaN
    bit patterns): every 4096th bit pattern, offset so both ends of each binade
    are hit, against the correctly rounded result."""
    fn = function("f", [TensorType("f32", ["N"])], lambda b, x: getattr(b, name)(x))
    kernel = ElementwiseFunction(fn, compiler)
    bits = np.arange(0, 1 << 32, 4096, dtype=np.uint64)
    x = np.concatenate([bits, bits + 4095]).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        want = reference(name, x)
    (got,) = kernel(x)
    errors = ulp_distance(got, want)
    worst = int(np.argmax(errors))
    assert errors[worst] <= BOUND["f32"][name], (
        f"{name}({x[worst]!r}) = {got[worst]!r}, expected {want[worst]!r}")
