"""The small dtypes (float16, int8, int16, uint8, bfloat16's casts) against the
registry's kernels, the interpreter, bit for bit: every float16 value through each
unary op, every pair of int8 and uint8 values through each binary op, every value of
the 16- and 8-bit dtypes through each cast; float16 chains rounded op by op, and
reductions in fused kernels."""
import platform

import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.codegen.llvm import Compiler, ElementwiseFunction
from irflow.codegen.llvm.elementwise import Unsupported
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.jit import HostTarget
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.codegen.llvm.scalar import NUMPY_OWN_HALF
from irflow.errors import IntegerDivisionByZero, IrflowError, ShapeError
from irflow.ir import Module, TensorType, dtypes, function
from irflow.ir.registry import all_ops, lookup
from irflow.ir.traits import Elementwise
from irflow.passes import PassManager

HALVES = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # every float16
SMALL_INTS = [dtypes.int8, dtypes.uint8]
X86 = platform.machine() in ("x86_64", "AMD64")
rng = np.random.default_rng(11)


def every_value(dtype) -> np.ndarray:
    """Every value of a dtype of at most 16 bits (bfloat16: every bit pattern)."""
    if dtype is dtypes.float16:
        return HALVES
    if dtype is dtypes.bool_:
        return np.array([False, True])
    info = np.iinfo(dtype.np)
    return np.arange(info.min, info.max + 1).astype(dtype.np)


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal dtypes, shapes and bits, but that a NaN may be any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bits = f"u{got.dtype.itemsize}"
    wrong = np.flatnonzero(got[~nan].view(bits) != want[~nan].view(bits))
    assert not wrong.size, f"{wrong.size} differ, e.g. {got[~nan][wrong[:5]]} for " \
                           f"{want[~nan][wrong[:5]]}"


def reference(name, *arrays, **attrs) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(lookup(name).kernel(*arrays, **attrs))


def ops_accepting(dtype, arity):
    """The elementwise ops of the registry of `arity` that accept `dtype`."""
    names = []
    for opdef in all_ops():
        if not opdef.has(Elementwise) or opdef.name in ("select", "cast") \
                or opdef.arity != arity:
            continue
        types = [TensorType(dtype, (3,))] * arity
        try:
            opdef.result_types(types, opdef.complete_attrs({}, types))
        except ShapeError:
            continue
        names.append(opdef.name)
    return names


def compiled(compiler, name, shapes, dtype):
    fn = function("f", [TensorType(dtype, s) for s in shapes],
                  lambda b, *xs: getattr(b, name)(*xs))
    return ElementwiseFunction(fn, compiler)


# ---------------------------------------------------------------- float16


@pytest.mark.parametrize("name", [n for n in ops_accepting(dtypes.float16, 1)
                                  if n not in NUMPY_OWN_HALF])
def test_float16_unary_op_of_every_value(compiler, name):
    (got,) = compiled(compiler, name, [["N"]], "f16")(HALVES)
    same_bits(got, reference(name, HALVES))


@pytest.mark.parametrize("name", [n for n in ops_accepting(dtypes.float16, 2)
                                  if n not in NUMPY_OWN_HALF])
def test_float16_binary_op(compiler, name):
    """Random bit patterns (any sign, denormals, inf, NaN), and the broadcast grid of
    a row of them against a column."""
    x, y = rng.choice(HALVES, 1 << 16), rng.choice(HALVES, 1 << 16)
    (got,) = compiled(compiler, name, [["N"], ["N"]], "f16")(x, y)
    same_bits(got, reference(name, x, y))
    column, row = rng.choice(HALVES, (128, 1)), rng.choice(HALVES, 256)
    (got,) = compiled(compiler, name, [["N", 1], [256]], "f16")(column, row)
    same_bits(got, reference(name, column, row))


def fused_plan(compiler, types, body):
    """The plan of `body` after the fuse pass, on the LLVM lowering, with its fused
    ops compiled (raising Unsupported if one is not)."""
    module = Module([function("f", types, body)])
    PassManager(["fuse"], verify_each=True).run(module)
    ops = [op for op in module.walk() if op.name == "fused"]
    assert ops, f"nothing fused:\n{module}"
    for op in ops:
        FusedKernel(op, compiler)
    return compile_plan(module.main, LLVMLowering(compiler, min_elements=0))


def test_a_float16_chain_rounds_after_every_op(compiler):
    """x * y + z, x / y - x and tanh(x) * x round to float16 after each op, as the
    unfused interpreter: in float32 throughout they would differ (asserted)."""
    types = [TensorType("f16", ["N"])] * 3

    def body(b, x, y, z):
        return (b.add(b.mul(x, y), z), b.sub(b.div(x, y), x), b.mul(b.tanh(x), x))

    x, y, z = (rng.uniform(-4, 4, 1 << 14).astype(np.float16) for _ in range(3))
    got = fused_plan(compiler, types, body)(x, y, z)
    want = run(function("f", types, body), x, y, z)
    for g, w in zip(got, want):
        same_bits(g, w)
    single = x.astype(np.float32) * y.astype(np.float32) + z.astype(np.float32)
    assert (single.astype(np.float16) != want[0]).any()


# ---------------------------------------------------------------- integers


@pytest.mark.parametrize("dtype", SMALL_INTS, ids=lambda d: d.short)
@pytest.mark.parametrize("name", ops_accepting(dtypes.int8, 2))
def test_small_integer_binary_op_of_every_pair(compiler, name, dtype):
    """Every pair: a column of all values against a row (no zero divisor for div
    and mod, whose error test_ops checks)."""
    column = every_value(dtype)[:, None]
    row = every_value(dtype)
    if name in ("div", "mod"):
        row = row[row != 0]
    (got,) = compiled(compiler, name, [["N", 1], ["M"]], dtype)(column, row)
    same_bits(got, reference(name, column, row))


@pytest.mark.parametrize("name", ops_accepting(dtypes.int16, 2))
def test_int16_binary_op(compiler, name):
    info = np.iinfo(np.int16)
    x = np.concatenate([rng.integers(info.min, info.max + 1, 1 << 15),
                        [info.min, info.min, info.max, -1, info.min]]).astype(np.int16)
    y = np.concatenate([rng.integers(info.min, info.max + 1, 1 << 15),
                        [-1, 1, -1, info.min, info.max]]).astype(np.int16)
    if name in ("div", "mod"):
        y[y == 0] = 7
    (got,) = compiled(compiler, name, [["N"], ["N"]], "i16")(x, y)
    same_bits(got, reference(name, x, y))


@pytest.mark.parametrize("dtype", [*SMALL_INTS, dtypes.int16], ids=lambda d: d.short)
@pytest.mark.parametrize("name", ops_accepting(dtypes.int8, 1))
def test_small_integer_unary_op_of_every_value(compiler, name, dtype):
    values = every_value(dtype)
    (got,) = compiled(compiler, name, [["N"]], dtype)(values)
    same_bits(got, reference(name, values))


# ---------------------------------------------------------------- casts


def compared(values: np.ndarray, source, target) -> np.ndarray:
    """Where a cast of `values` from `source` to `target` is compared with NumPy's:
    everywhere on x86 (NumPy converts out-of-range floats to int32 and keeps the
    low bits, and so does the code), elsewhere where C defines the cast (a float
    truncated into the integer's range)."""
    if X86 or not (source.is_float or source is dtypes.bfloat16) or not target.is_int:
        return np.ones(values.shape, bool)
    info = np.iinfo(target.np)
    with np.errstate(invalid="ignore"):
        whole = np.trunc(dtypes.astype(values, dtypes.float64))
        return (whole >= info.min) & (whole <= info.max)


@pytest.mark.parametrize("source", [dtypes.float16, dtypes.bfloat16, dtypes.int16,
                                    *SMALL_INTS, dtypes.bool_], ids=lambda d: d.short)
@pytest.mark.parametrize("target", dtypes.ALL, ids=lambda d: d.short)
def test_cast_of_every_value(compiler, source, target):
    values = every_value(source)
    fn = function("f", [TensorType(source, ["N"])], lambda b, x: b.cast(x, dtype=target))
    (got,) = ElementwiseFunction(fn, compiler)(values)
    keep = compared(values, source, target)
    same_bits(got[keep], reference("cast", values, dtype=target)[keep])


def near_half_midpoints(dtype) -> np.ndarray:
    """Values of `dtype` at, just below and just above the midpoints between
    adjacent float16 values, and around float16's overflow: where rounding once
    and rounding twice differ."""
    finite = HALVES[np.isfinite(HALVES)].astype(np.float64)
    finite = np.unique(finite)
    mid = (finite[:-1] + finite[1:]) / 2
    values = [mid, 65504.0 + np.array([15.0, 16.0, 16.5, 17.0])]
    if dtype is dtypes.float64:
        values += [np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
    else:
        single = mid.astype(np.float32)
        values += [np.nextafter(single, np.float32(np.inf)),
                   np.nextafter(single, np.float32(-np.inf))]
    return np.concatenate(values).astype(dtype.np)


@pytest.mark.parametrize("source", [dtypes.float32, dtypes.float64], ids=lambda d: d.short)
def test_casts_to_float16_round_once(compiler, source):
    values = near_half_midpoints(source)
    fn = function("f", [TensorType(source, ["N"])], lambda b, x: b.cast(x, dtype="f16"))
    (got,) = ElementwiseFunction(fn, compiler)(values)
    same_bits(got, reference("cast", values, dtype=dtypes.float16))


@pytest.mark.parametrize("source", [dtypes.int32, dtypes.int64], ids=lambda d: d.short)
def test_wide_integers_to_float16(compiler, source):
    values = np.concatenate([np.arange(-70000, 70000, 7), [2**31 - 1, -2**31],
                             rng.integers(-2**31, 2**31, 1000)]).astype(source.np)
    fn = function("f", [TensorType(source, ["N"])], lambda b, x: b.cast(x, dtype="f16"))
    (got,) = ElementwiseFunction(fn, compiler)(values)
    same_bits(got, reference("cast", values, dtype=dtypes.float16))


def test_float_to_bfloat16_rounds_halves_to_even(compiler):
    bits = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([bits.view(np.float32),
                             np.array([np.nan, -np.inf, 3.4028235e38], np.float32)])
    fn = function("f", [TensorType("f32", ["N"])], lambda b, x: b.cast(x, dtype="bf16"))
    (got,) = ElementwiseFunction(fn, compiler)(values)
    same_bits(got, reference("cast", values, dtype=dtypes.bfloat16))


@pytest.mark.parametrize("dtype", dtypes.ALL, ids=lambda d: d.short)
def test_select_of_every_dtype_broadcasts(compiler, dtype):
    fn = function("f", [TensorType("bool", ["N", 1]), TensorType(dtype, [4]),
                        TensorType(dtype, [])], lambda b, c, x, y: b.select(c, x, y))
    c = np.array([[True], [False], [True]])
    x = dtypes.astype(np.array([1.0, -2.0, 0.0, 3.0]), dtype)
    y = dtypes.astype(np.asarray(7.0), dtype).reshape(())
    (got,) = ElementwiseFunction(fn, compiler)(c, x, y)
    same_bits(got, reference("select", c, x, y))


def test_float16_without_native_float16_arithmetic():
    """On a CPU without AVX-512 FP16, LLVM promotes float16 ops to float32 through
    F16C and would call compiler-rt, which the JIT cannot link, for a double-to-half
    conversion: the code makes none, and its results stay NumPy's."""
    target = HostTarget()
    target.features += ",-avx512fp16"
    compiler = Compiler(cache_dir=None, target=target)
    for name in ("add", "tanh", "erf", "maximum"):
        arity = lookup(name).arity
        args = [HALVES] + [HALVES[::-1].copy()] * (arity - 1)
        (got,) = compiled(compiler, name, [["N"]] * arity, "f16")(*args)
        same_bits(got, reference(name, *args))
    for source in (dtypes.float64, dtypes.int64, dtypes.uint8):
        values = (near_half_midpoints(source) if source.is_float
                  else np.arange(-300, 70000, 3).astype(source.np))
        fn = function("f", [TensorType(source, ["N"])], lambda b, x: b.cast(x, dtype="f16"))
        (got,) = ElementwiseFunction(fn, compiler)(values)
        same_bits(got, reference("cast", values, dtype=dtypes.float16))


# ---------------------------------------------------------------- reductions


@pytest.mark.parametrize("dtype", [*SMALL_INTS, dtypes.int16], ids=lambda d: d.short)
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("axis", [(1,), None])
def test_small_integer_reductions_wrap_as_numpy(compiler, dtype, kind, axis):
    """sum(x * y + x) over rows of 1031 (vectors and a tail) and over everything:
    sums and products wrap in the dtype, as the interpreter's (np.sum with the
    operand's dtype); uint8's max and min are unsigned."""
    types = [TensorType(dtype, [5, 1031]), TensorType(dtype, [1031])]

    def body(b, x, y):
        return getattr(b, kind)(b.add(b.mul(x, y), x), axis=axis)

    info = np.iinfo(dtype.np)
    x = rng.integers(info.min, info.max + 1, (5, 1031)).astype(dtype.np)
    y = rng.integers(info.min, info.max + 1, 1031).astype(dtype.np)
    (got,) = fused_plan(compiler, types, body)(x, y)
    same_bits(got, run(function("f", types, body), x, y)[0])


@pytest.mark.parametrize("kind", ["max", "min"])
def test_float16_max_and_min_reductions(compiler, kind):
    types = [TensorType("f16", [4, 1000])]
    x = rng.standard_normal((4, 1000)).astype(np.float16)
    x[2, 17] = np.nan

    def body(b, x):
        return getattr(b, kind)(b.mul(x, x), axis=(1,))

    (got,) = fused_plan(compiler, types, body)(x)
    same_bits(got, run(function("f", types, body), x)[0])


@pytest.mark.parametrize("kind", ["sum", "mean", "prod"])
def test_float16_sums_are_left_to_numpy(compiler, kind):
    """NumPy sums float16 in float32 and rounds to float16 where its inner loop ends,
    which depends on the layout: no kernel, and the plan runs NumPy's."""
    types = [TensorType("f16", [4, 1000])]

    def body(b, x):
        return getattr(b, kind)(b.mul(x, x), axis=(1,))

    module = Module([function("f", types, body)])
    PassManager(["fuse"], verify_each=True).run(module)
    (op,) = [op for op in module.walk() if op.name == "fused"]
    with pytest.raises(Unsupported, match=f"float16 {kind}"):
        FusedKernel(op, compiler)
    x = rng.standard_normal((4, 1000)).astype(np.float16)
    (got,) = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x)
    same_bits(got, run(function("f", types, body), x)[0])


@pytest.mark.parametrize("dtype", SMALL_INTS, ids=lambda d: d.short)
def test_integer_division_by_zero_in_a_fused_reduction(compiler, dtype):
    types = [TensorType(dtype, [4, 1000]), TensorType(dtype, [1000])]

    def body(b, x, y):
        return b.sum(b.mod(x, y), axis=(1,))

    x = rng.integers(1, 100, (4, 1000)).astype(dtype.np)
    y = rng.integers(1, 100, 1000).astype(dtype.np)
    plan = fused_plan(compiler, types, body)
    same_bits(plan(x, y)[0], run(function("f", types, body), x, y)[0])
    y[999] = 0
    with pytest.raises(IntegerDivisionByZero):
        plan(x, y)
    with pytest.raises(IrflowError):
        run(function("f", types, body), x, y)
