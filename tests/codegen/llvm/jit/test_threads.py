"""``irflow.set_num_threads``: compiled kernels split their rows across threads with
results bit-identical to one thread's (elementwise kernels, fused kernels reducing
along trailing axes, symbolic batch sizes, row counts not divisible by the thread
count, fewer rows than threads); an error in one part is the one-thread error; the
setting is per thread and checked. Splitting is forced at these small sizes by
setting `MIN_PART_ELEMENTS` to 1, and each test asserts how many parts ran."""
import contextvars
import os
import signal
import threading
import time

import numpy as np
import pytest

import irflow
from irflow.codegen import compile_plan, threads
from irflow.codegen.llvm import ElementwiseFunction
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import IntegerDivisionByZero
from irflow.ir import Module, TensorType, function
from irflow.passes import PassManager
from irflow.codegen.llvm.gemm import Gemm
from tests.support.threads import with_threads
from tests.codegen.llvm.jit.test_fused import converging
from tests.codegen.llvm.jit.test_gemm import CONVERGING
from tests.support.models import LayerNormGelu

THREADS = (1, 2, 3, 7)
rng = np.random.default_rng(0)


def plan_of(compiler, types, body):
    module = Module([function("f", types, body)])
    PassManager(["fuse"], verify_each=True).run(module)
    assert any(op.name == "fused" for op in module.walk())
    return compile_plan(module.main, LLVMLowering(compiler, min_elements=0))


def assert_bit_identical(results, reference):
    for got, want in zip(results, reference):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def f32(*shape):
    return TensorType("f32", list(shape))


def gelu_bias(b, x, w):
    h = b.add(x, w)
    return b.mul(h, b.erf(b.mul(h, b.constant(0.7071067811865476, "f32")))), b.tanh(h)


@pytest.mark.parametrize("rows", [1, 2, 5, 13])
@pytest.mark.parametrize("flat", [False, True])
def test_elementwise_kernels(compiler, parts, rows, flat):
    """[N,37] + [37] splits the N rows; [N,37] + [] is one flat loop, split by element."""
    bias = f32() if flat else f32(37)
    kernel = ElementwiseFunction(function("f", [f32("N", 37), bias], gelu_bias), compiler)
    x = rng.standard_normal((rows, 37)).astype(np.float32)
    w = rng.standard_normal(bias.shape).astype(np.float32)
    reference = with_threads(1, kernel, x, w)
    outer = rows * 37 if flat else rows
    for n in THREADS:
        parts.clear()
        assert_bit_identical(with_threads(n, kernel, x, w), reference)
        assert parts == [min(n, outer)]


def layer_norm(b, x, gamma):
    h = b.add(x, b.mul(x, b.erf(x)))
    mu = b.mean(h, axis=(1,), keepdim=True)
    d = b.sub(h, mu)
    var = b.mean(b.mul(d, d), axis=(1,), keepdim=True)
    return b.mul(b.mul(d, b.rsqrt(b.add(var, b.constant(1e-5)))), gamma), b.max(h, axis=(1,))


def softmax(b, x):
    e = b.exp(b.sub(x, b.max(x, axis=(2,), keepdim=True)))
    return b.div(e, b.sum(e, axis=(2,), keepdim=True))


@pytest.mark.parametrize("rows", [1, 2, 5, 13])
@pytest.mark.parametrize("case", ["layer_norm", "softmax"])
def test_fused_kernels_with_reductions_along_trailing_axes(compiler, parts, rows, case):
    if case == "layer_norm":
        plan = plan_of(compiler, [f32("N", 300), f32(300)], layer_norm)
        arrays = [rng.standard_normal((rows, 300)).astype(np.float32),
                  rng.standard_normal(300).astype(np.float32)]
    else:  # [N, 3, 40] reduced along its last axis: the N rows are split
        plan = plan_of(compiler, [f32("N", 3, 40)], softmax)
        arrays = [rng.standard_normal((rows, 3, 40)).astype(np.float32)]
    reference = with_threads(1, plan, *arrays)
    for n in THREADS:
        parts.clear()
        assert_bit_identical(with_threads(n, plan, *arrays), reference)
        assert parts == [min(n, rows)]


def test_a_reduction_along_the_first_axis_splits_the_columns(compiler, parts):
    plan = plan_of(compiler, [f32("N", 50)], lambda b, x: b.sum(b.exp(x), axis=(0,)))
    x = rng.standard_normal((9, 50)).astype(np.float32)
    reference = with_threads(1, plan, x)
    parts.clear()
    assert_bit_identical(with_threads(3, plan, x), reference)
    assert parts == [3]


def test_a_full_reduction_is_one_part(compiler, parts):
    plan = plan_of(compiler, [f32("N", 50)], lambda b, x: b.sum(b.exp(x), axis=None))
    x = rng.standard_normal((9, 50)).astype(np.float32)
    reference = with_threads(1, plan, x)
    parts.clear()
    assert_bit_identical(with_threads(7, plan, x), reference)
    assert parts == [1]


def test_a_compiled_program(parts):
    irflow.seed(0)
    model = LayerNormGelu(256)
    model.eval()
    compiled = irflow.compile(model, backend="llvm")
    x = irflow.randn([40, 256])
    reference = with_threads(1, lambda: compiled(x).numpy())
    for n in (2, 3):
        parts.clear()
        assert with_threads(n, lambda: compiled(x).numpy()).tobytes() == reference.tobytes()
        assert parts == [n]


@pytest.mark.parametrize("nan_row", [None, 0, 95])
def test_a_gemm_s_maximum_is_kept_per_part(compiler, parts, nan_row):
    """The tiles' maximum (the converging loop's body in a GEMM's epilogue, called
    as a plan runs it and as a `Gemm`) split into parts of contiguous tile rows:
    each part's running maxima of its own, combined after, with one thread's bits,
    a NaN in the first or the last part's rows giving NaN."""
    plan = plan_of(compiler, [f32("N", 128), f32(128, 128), f32(128)], converging)
    gemm = Gemm(compiler=compiler, epilogue=CONVERGING)
    h = rng.standard_normal((96, 128)).astype(np.float32)  # 12 tile rows of 8
    w = (rng.standard_normal((128, 128)) * 0.1).astype(np.float32)
    c = rng.standard_normal(128).astype(np.float32)
    if nan_row is not None:
        h[nan_row, 3] = np.nan
    for run in (lambda: plan(h, w, c), lambda: gemm(h, w, operands=(c, h))):
        reference = with_threads(1, run)
        assert np.isnan(reference[1]) == (nan_row is not None)
        for n in THREADS[1:]:
            parts.clear()
            assert_bit_identical(with_threads(n, run), reference)
            assert parts == [min(n, 12)]


def error_of(n, fn, *args):
    with pytest.raises(IntegerDivisionByZero) as error:
        with_threads(n, fn, *args)
    return str(error.value)


@pytest.mark.parametrize("fused", [False, True])
def test_a_division_by_zero_in_one_part_is_the_one_thread_error(compiler, parts, fused):
    types = [TensorType("i32", ["N", 20])] * 2
    if fused:  # a reduction kernel: the failing call runs NumPy, which raises at the op
        run = plan_of(compiler, types, lambda b, x, y: b.sum(b.div(x, y), axis=(1,)))
    else:
        run = ElementwiseFunction(function("f", types, lambda b, x, y: b.div(x, y)), compiler)
    x = rng.integers(-50, 50, (13, 20)).astype(np.int32)
    y = rng.integers(1, 5, (13, 20)).astype(np.int32)
    y[11, 4] = 0  # in the last part for 2, 3 and 7 threads
    want = error_of(1, run, x, y)
    for n in THREADS[1:]:
        parts.clear()
        assert error_of(n, run, x, y) == want
        assert parts == [min(n, 13)]


def test_small_domains_run_on_the_calling_thread(compiler):
    kernel = ElementwiseFunction(function("f", [f32("N", 37), f32(37)], gelu_bias), compiler)
    assert with_threads(4, threads.row_ranges, 1000, threads.MIN_PART_ELEMENTS - 1) == [(0, 1000)]
    x, w = np.ones((1000, 37), np.float32), np.ones(37, np.float32)
    assert_bit_identical(with_threads(4, kernel, x, w), with_threads(1, kernel, x, w))


def test_rows_are_split_into_contiguous_ranges():
    assert with_threads(3, threads.row_ranges, 10, 1 << 30) == [(0, 3), (3, 6), (6, 10)]
    assert with_threads(7, threads.row_ranges, 2, 1 << 30) == [(0, 1), (1, 2)]
    assert with_threads(4, threads.row_ranges, 8, 2 * threads.MIN_PART_ELEMENTS) == \
        [(0, 4), (4, 8)]  # each part keeps MIN_PART_ELEMENTS elements


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_splits_on_a_pool_of_its_own(compiler, parts):
    kernel = ElementwiseFunction(function("f", [f32("N", 37), f32(37)], gelu_bias), compiler)
    x, w = np.ones((9, 37), np.float32), np.ones(37, np.float32)
    reference = with_threads(1, kernel, x, w)
    with_threads(2, kernel, x, w)  # the parent's pool exists
    child = os.fork()
    if child == 0:  # the child: exit 0 if its split call gives the parent's result
        same = with_threads(2, kernel, x, w)[0].tobytes() == reference[0].tobytes()
        os._exit(0 if same else 1)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the forked child's split call did not finish in 60 s")
    assert os.waitstatus_to_exitcode(done[1]) == 0


def test_the_setting_is_per_thread():
    seen = {}

    def other():
        seen["start"] = irflow.get_num_threads()
        irflow.set_num_threads(5)
        seen["set"] = irflow.get_num_threads()

    def main():
        irflow.set_num_threads(3)
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        return irflow.get_num_threads()
    assert contextvars.copy_context().run(main) == 3
    assert seen == {"start": 1, "set": 5}
    assert irflow.get_num_threads() == 1


@pytest.mark.parametrize("value, error", [(0, ValueError), (-2, ValueError),
                                          (2.0, TypeError), ("2", TypeError),
                                          (True, TypeError), (None, TypeError)])
def test_invalid_values_raise(value, error):
    with pytest.raises(error, match="set_num_threads expects a positive int"):
        with_threads(1, irflow.set_num_threads, value)


def test_any_integer_type_is_accepted():
    def set_and_get(n):
        irflow.set_num_threads(n)
        return irflow.get_num_threads()
    assert contextvars.copy_context().run(set_and_get, np.int64(4)) == 4
