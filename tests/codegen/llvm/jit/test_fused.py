"""Kernels of fused ops against the interpreter: reductions along every kind of axis
set, row values used by element ops after them (layer norm, softmax), matmul
epilogues, every reduction kind and dtype, NaN and empty reductions, errors and
checks. Each function is fused by the `fuse` pass, then run by a plan with the LLVM
lowering; each test asserts the fused op was compiled (not run by NumPy)."""
import re

import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import IntegerDivisionByZero, ShapeError
from irflow.ir import Module, TensorType, function, lookup, parse, verify
from irflow.passes import PassManager

F32_SUM = {"rtol": 1e-5, "atol": 1e-6}  # float32 sums in another order than NumPy's


def fused(fn):
    module = Module([fn])
    PassManager(["fuse"], verify_each=True).run(module)
    ops = [op for op in module.walk() if op.name == "fused"]
    assert ops, f"nothing fused:\n{module}"
    return module, ops


def compare(compiler, types, body, arrays, tolerance=None, kernels=1):
    want_fn = function("f", types, body)
    fn = function("f", types, body)
    module, ops = fused(fn)
    assert len(ops) == kernels
    for op in ops:
        FusedKernel(op, compiler)  # compiles: raises Unsupported otherwise
    want = run(want_fn, *arrays)
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(*arrays)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if tolerance is None or g.dtype.kind != "f":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, **tolerance)
    return got


def f32(*shape):
    return TensorType("f32", list(shape))


rng = np.random.default_rng(0)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def layer_norm(b, x, w, bias, gamma, beta):
    h = b.add(b.mul(x, w), bias)
    g = b.mul(b.mul(h, b.constant(0.5)),
              b.add(b.erf(b.mul(h, b.constant(0.7071067811865476))), b.constant(1.0)))
    s = b.add(x, g)
    mu = b.mean(s, axis=(1,), keepdim=True)
    d = b.sub(s, mu)
    var = b.mean(b.mul(d, d), axis=(1,), keepdim=True)
    return b.add(b.mul(b.mul(d, b.rsqrt(b.add(var, b.constant(1e-5)))), gamma), beta)


@pytest.mark.parametrize("rows, width", [(1, 1), (3, 7), (5, 1024), (2, 1031), ("N", 33)])
def test_layer_norm_of_gelu_is_one_kernel(compiler, rows, width):
    n = 4 if rows == "N" else rows
    types = [f32(rows, width)] + [f32(width)] * 4
    arrays = [normal(n, width)] + [normal(width) for _ in range(4)]
    compare(compiler, types, layer_norm, arrays, F32_SUM)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax(compiler, axis):
    def softmax(b, x):
        m = b.max(x, axis=(axis,), keepdim=True)
        e = b.exp(b.sub(x, m))
        return b.div(e, b.sum(e, axis=(axis,), keepdim=True))
    x = normal(9, 300) * 30
    x[3, 5] = np.inf
    x[4, :] = -np.inf
    x[6, 7] = np.nan
    with np.errstate(all="ignore"):
        compare(compiler, [f32(9, 300)], softmax, [x], F32_SUM)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis, keepdim", [((1,), True), ((1,), False), ((0,), True),
                                           ((0,), False), ((0, 2), True), ((1, 2), False),
                                           (None, False), (None, True)])
@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64"])
def test_reductions_of_an_elementwise_value(compiler, kind, axis, keepdim, dtype):
    if kind == "mean" and dtype[0] == "i":
        pytest.skip("mean is for floats")
    shape = (3, 70, 5)
    if dtype[0] == "f":
        x = (normal(*shape) * (0.3 if kind == "prod" else 1)).astype(dtype.replace("f", "float"))
        x += 1 if kind == "prod" else 0
    else:
        x = rng.integers(-3, 4, shape).astype(dtype.replace("i", "int"))

    def body(b, x):
        return getattr(b, kind)(b.add(b.mul(x, x), x), axis=axis, keepdim=keepdim)
    tolerance = F32_SUM if dtype == "f32" else {"rtol": 1e-12, "atol": 1e-12}
    compare(compiler, [TensorType(dtype, list(shape))], body, [x], tolerance)


@pytest.mark.parametrize("kind", ["any", "all"])
def test_boolean_reductions(compiler, kind):
    x = normal(6, 50)
    x[2] = 1.0   # every element positive
    x[3] = -1.0  # none

    def body(b, x):
        return getattr(b, kind)(b.gt(b.add(x, x), b.constant(0.0)), axis=(1,))
    compare(compiler, [f32(6, 50)], body, [x])


def test_max_and_min_propagate_nan_and_inf(compiler):
    x = normal(4, 100)
    x[0, 17] = np.nan
    x[1, 99] = np.nan
    x[2, :] = np.inf
    x[3, 50] = -np.inf

    def body(b, x):
        y = b.add(x, b.constant(1.0))
        return b.max(y, axis=(1,)), b.min(y, axis=(1,)), b.sum(y, axis=(1,))
    compare(compiler, [f32(4, 100)], body, [x], F32_SUM)


def test_empty_reductions_are_numpy_s(compiler):
    def sums(b, x):
        y = b.mul(x, x)
        return b.sum(y, axis=(1,)), b.mean(y, axis=(1,)), b.prod(y, axis=(1,))
    with np.errstate(all="ignore"):
        compare(compiler, [f32("N", "M")], sums, [np.zeros((3, 0), np.float32)], F32_SUM)
        compare(compiler, [f32("N", "M")], sums, [np.zeros((0, 4), np.float32)], F32_SUM)

    def extremum(b, x):
        return b.max(b.mul(x, x), axis=(1,))
    fn = function("f", [f32("N", "M")], extremum)
    module, _ = fused(fn)
    plan = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))
    x = np.zeros((3, 0), np.float32)
    with pytest.raises(ValueError) as want:  # the interpreter's error (the op's, named)
        run(function("f", [f32("N", "M")], extremum), x)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        plan(x)


def test_the_shift_of_a_softmax_over_a_symbolic_axis_is_compiled_and_neg_inf_over_nothing(
        compiler):
    def softmax(b, x):
        shift = b.max_or_neg_inf(x, axis=(1,), keepdim=True)
        e = b.exp(b.sub(x, shift))
        return b.div(e, b.sum(e, axis=(1,), keepdim=True)), shift
    x = normal(5, 300) * 30
    x[1, :] = -np.inf
    x[2, 7] = np.nan
    x[3, 9] = np.inf
    with np.errstate(all="ignore"):
        compare(compiler, [f32("N", "M")], softmax, [x], F32_SUM)
        empty = compare(compiler, [f32("N", "M")], softmax, [np.zeros((3, 0), np.float32)])
    assert empty[0].shape == (3, 0)
    np.testing.assert_array_equal(empty[1], np.full((3, 1), -np.inf, np.float32))


def test_row_values_are_results_too(compiler):
    """A fused op yields the mean (a row value) and the centred values."""
    def body(b, x):
        mu = b.mean(b.exp(x), axis=(1,), keepdim=True)
        return b.sub(b.exp(x), mu), mu, b.mul(mu, b.constant(2.0))
    compare(compiler, [f32("N", 40)], body, [normal(3, 40)], F32_SUM)


def test_broadcast_operands_of_a_reduction(compiler):
    """[N,1,C] against [K,1]: the domain is [N,K,C], reduced along its last axis."""
    def body(b, x, y):
        return b.sum(b.tanh(b.mul(x, y)), axis=(2,), keepdim=False)
    compare(compiler, [f32("N", 1, 20), f32(6, 1)], body, [normal(3, 1, 20), normal(6, 1)],
            F32_SUM)


def test_matmul_epilogue(compiler):
    def body(b, x, w, bias):
        return b.relu(b.add(b.matmul(x, w), bias))
    got = compare(compiler, [f32("N", 30), f32(30, 20), f32(20)], body,
                  [normal(7, 30), normal(30, 20), normal(20)], {"rtol": 1e-6, "atol": 1e-6})
    assert got[0].shape == (7, 20)


def test_matmul_epilogue_with_a_reduction(compiler):
    def body(b, x, w):
        h = b.matmul(x, w)
        m = b.max(h, axis=(1,), keepdim=True)
        return b.sub(h, m)
    compare(compiler, [f32(5, 8), f32(8, 16)], body, [normal(5, 8), normal(8, 16)],
            {"rtol": 1e-6, "atol": 1e-6})


def test_integer_division_by_zero_raises_at_the_op(compiler):
    def body(b, x, y):
        return b.add(b.div(b.mul(x, x), y), x)
    types = [TensorType("i32", ["N"]), TensorType("i32", ["N"])]
    x = np.arange(1, 2000, dtype=np.int32)
    y = np.ones_like(x)
    compare(compiler, types, body, [x, y])
    y[1500] = 0
    fn = function("f", types, body)
    module, _ = fused(fn)
    plan = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))
    with pytest.raises(IntegerDivisionByZero):
        plan(x, y)


def test_integer_division_by_zero_in_a_reduction_kernel(compiler):
    def body(b, x, y):
        return b.sum(b.mod(x, y), axis=(1,))
    types = [TensorType("i64", [4, 9]), TensorType("i64", [4, 9])]
    x = rng.integers(-50, 50, (4, 9))
    y = rng.integers(1, 5, (4, 9))
    compare(compiler, types, body, [x, y])
    y[2, 3] = 0
    module, _ = fused(function("f", types, body))
    with pytest.raises(IntegerDivisionByZero):
        compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, y)


def test_arguments_are_checked_before_the_code_runs(compiler):
    def body(b, x, w):
        return b.sub(b.mul(x, w), b.mean(b.mul(x, w), axis=(1,), keepdim=True))
    fn = function("f", [f32("N", 16), f32(16)], body)
    _, (op,) = fused(fn)
    run_kernel = FusedKernel(op, compiler, min_elements=0).evaluator()
    good = [normal(3, 16), normal(16)]
    run_kernel(good, None)
    for bad in ([normal(3, 17), normal(16)], [normal(3, 16), normal(17)],
                [normal(3, 16).astype(np.float64), normal(16)], [normal(16), normal(16)],
                [[1.0] * 16, normal(16)]):
        with pytest.raises(ShapeError):
            run_kernel(bad, None)
    strided = normal(3, 32)[:, ::2]
    np.testing.assert_allclose(run_kernel([strided, good[1]], None)[0],
                               run_kernel([np.ascontiguousarray(strided), good[1]], None)[0])


@pytest.mark.parametrize("rows", [16, "N"])
@pytest.mark.parametrize("into", [(), (True, True), (False, True)])
def test_calls_off_the_fast_path_give_the_same_results(compiler, monkeypatch, rows, into):
    """The generated call of a reduction body takes exact, contiguous, writable
    ndarrays and buffers; any other call goes to `FusedKernel._run`, with the same
    results."""
    general, run_general = [], FusedKernel._run

    def counted(self, *args):
        general.append(1)
        return run_general(self, *args)
    monkeypatch.setattr(FusedKernel, "_run", counted)
    _, (op,) = fused(function("f", [f32(rows, 40)], _centred))
    kernel = FusedKernel(op, compiler, min_elements=0)
    run_kernel = kernel.out_evaluator(into) if into else kernel.evaluator()

    shapes = [tuple(16 if d == "N" else d for d in r.type.shape) for r in op.results]

    def results(x, wrong=False):
        buffers = [np.empty(shape[:-1] + (shape[-1] + wrong,), np.float32)
                   for shape, given in zip(shapes, into) if given]
        return run_kernel([x], [], buffers) if into else run_kernel([x], [])
    x = normal(16, 40)
    want = results(x)
    assert not general
    read_only = x.copy()
    read_only.flags.writeable = False
    for odd in (read_only, np.repeat(x[..., None], 2, axis=-1)[..., 0],
                x.astype(np.dtype("f4", metadata={"m": 1}))):
        assert all(g.tobytes() == w.tobytes() for g, w in zip(results(odd), want))
    assert len(general) == 3
    if into:  # buffers of other shapes go the general way, which refuses them
        with pytest.raises(ShapeError, match="buffer given for result"):
            results(x, wrong=True)


class Spying(LLVMLowering):
    """The lowering, noting for each call of a one-op kernel whether it got a buffer
    and whether that buffer was an operand's memory."""

    def __init__(self, compiler):
        super().__init__(compiler, min_elements=0)
        self.calls = []

    def kernel(self, op):
        run = super().kernel(op)
        if run is None:
            return None

        def spied(*arrays, out=None):
            self.calls.append(None if out is None else
                              any(np.may_share_memory(out, a) for a in arrays))
            return run(*arrays, out=out) if out is not None else run(*arrays)
        return spied


@pytest.mark.parametrize("in_place", [False, True])
def test_a_lowered_kernel_writes_into_its_arena_buffer(compiler, in_place):
    # erf of a value read again later gets a buffer of its own, which the compiled
    # kernel writes; erf of a dying value is planned over it, which NumPy writes
    # (the compiled kernel's pointers are noalias)
    def body(b, x):
        t = b.mul(x, b.constant(0.75))
        e = b.erf(t)
        return b.add(e, b.constant(1.0)) if in_place else b.add(e, t)

    fn = function("f", [f32(64, 128)], body)
    lowering = Spying(compiler)
    plan = compile_plan(fn, lowering)
    (erf,) = [op for op in fn.walk() if op.name == "erf"]
    assert plan.memory_plan.offset(erf.result) is not None
    assert "<- erf" in plan.describe()
    x = normal(64, 128) * 3
    got = plan(x)[0]
    np.testing.assert_allclose(got, run(fn, x)[0], rtol=2e-7, atol=1e-7)
    assert lowering.calls == [in_place]
    assert np.array_equal(plan(x)[0], got)  # the arena again, the same answer


def _centred(b, x):
    mu = b.mean(b.exp(x), axis=(1,), keepdim=True)
    return b.sub(b.exp(x), mu), mu


@pytest.mark.parametrize("case, into", [
    ("elementwise", (True,)),                   # a flat compiled loop
    ("epilogue", (True,)),                      # a matmul epilogue (the anchor: NumPy's)
    ("reductions", (True, True)),               # rows: a spanning result and a row value
    ("reductions", (False, True)),              # one result given a buffer, one made
])
def test_the_out_evaluator_writes_its_results_into_the_given_buffers(compiler, case, into):
    types, body, arrays = {
        "elementwise": ([f32(64, 80)], lambda b, x: b.tanh(b.mul(b.exp(x), x)),
                        [normal(64, 80)]),
        "epilogue": ([f32(64, 30), f32(30, 20), f32(20)],
                     lambda b, x, w, c: b.relu(b.add(b.matmul(x, w), c)),
                     [normal(64, 30), normal(30, 20), normal(20)]),
        "reductions": ([f32(16, 40)], _centred, [normal(16, 40)]),
    }[case]
    module, (op,) = fused(function("f", types, body))
    assert len(op.results) == len(into)
    operands = [arrays[list(module.main.args).index(v)] for v in op.operands]
    want = lookup("fused").region_op.evaluator(op)(list(operands), [])  # NumPy's
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel.elementwise is not None or case == "reductions"  # compiled, not NumPy
    buffers = [np.full(r.type.shape, np.nan, r.type.dtype.np)
               for r, given in zip(op.results, into) if given]
    got = kernel.out_evaluator(into)(list(operands), [], list(buffers))
    given = iter(buffers)
    for g, w, written in zip(got, want, into):
        if written:
            assert g is next(given)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
        assert g.shape == w.shape and g.dtype == w.dtype


def test_fused_results_live_in_the_arena_on_the_llvm_backend(compiler):
    def body(b, x, w, c):
        h = b.relu(b.add(b.matmul(x, w), c))  # an epilogue whose result is read by...
        return b.matmul(h, w)                  # ...a matmul outside any kernel
    fn = function("f", [f32(64, 32), f32(32, 32), f32(32)], body)
    module, (op,) = fused(fn)
    plan = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))
    assert plan.memory_plan.offset(op.result) is not None
    assert "<- fused" in plan.describe()
    arrays = [normal(64, 32), normal(32, 32), normal(32)]
    want = run(module, *arrays)[0]
    np.testing.assert_allclose(plan(*arrays)[0], want, rtol=1e-5)
    np.testing.assert_allclose(plan(*arrays)[0], want, rtol=1e-5)  # the arena again


def _column_kernel(compiler, types, body, columns=True):
    """The fused op of `body` compiled in columns (its kept axis innermost), or in
    rows if not `columns`."""
    _, (op,) = fused(function("f", types, body))
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel.elementwise is None and kernel.spec.columns == columns
    return kernel


def _masked_sum(b, h, m):
    """The backward of relu into a bias gradient: select, then its sum over the batch."""
    s = b.select(b.gt(h, b.constant(0.0)), m, b.constant(0.0))
    return s, b.sum(s, axis=(0,)), b.max(s, axis=(0,), keepdim=True)


@pytest.mark.parametrize("n, width", [(1, 1), (7, 33), (256, 256), (0, 5), (5, 0), (1, 17)])
def test_leading_axis_reductions_run_in_columns(compiler, n, width):
    types = [f32("N", width), f32("N", width)]
    _column_kernel(compiler, types, _masked_sum, columns=width != 1)  # [.., 1]: rows
    h, m = normal(n, width), normal(n, width)
    if n * width:
        m.flat[::7] = np.inf
        m.flat[3::11] = np.nan
        m.flat[5::13] = -np.inf
    with np.errstate(all="ignore"):
        if n == 0:  # max over nothing: the interpreter's error, which the NumPy evaluator raises
            with pytest.raises(ValueError, match="max: axis 0 .* has size 0"):
                compare(compiler, types, _masked_sum, [h, m], F32_SUM)
            return
        compare(compiler, types, _masked_sum, [h, m], F32_SUM)


@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_integer_column_sums_wrap_exactly(compiler, dtype):
    types = [TensorType(dtype, ["N", 3, 40])]
    big = np.iinfo(dtype.replace("i", "int")).max // 3

    def body(b, x):
        return b.sum(b.add(x, x), axis=(0, 1)), b.prod(x, axis=(1,))
    _column_kernel(compiler, types, body)
    x = rng.integers(-big, big, (6, 3, 40)).astype(dtype.replace("i", "int"))
    compare(compiler, types, body, [x])


def test_column_phases_read_earlier_reductions_and_broadcast_inputs(compiler):
    """Batch norm over the leading axis of [N,C] with a [C] scale: the mean's phase,
    the variance's reading it, results that vary (normalized) and rows (mean, var)."""
    def body(b, x, g):
        mu = b.mean(x, axis=(0,), keepdim=True)
        d = b.sub(x, mu)
        var = b.mean(b.mul(d, d), axis=(0,), keepdim=True)
        return b.mul(b.mul(d, b.rsqrt(b.add(var, b.constant(1e-5)))), g), mu, var
    types = [f32("N", 70), f32(70)]
    _column_kernel(compiler, types, body)
    compare(compiler, types, body, [normal(33, 70), normal(70)], F32_SUM)


def test_boolean_column_reductions(compiler):
    def body(b, x):
        positive = b.gt(x, b.constant(0.0))
        return b.any(positive, axis=(0,)), b.all(positive, axis=(0,))
    x = normal(20, 40)
    x[:, 3] = 1.0
    x[:, 4] = -1.0
    _column_kernel(compiler, [f32(20, 40)], body)
    compare(compiler, [f32(20, 40)], body, [x])


def test_a_full_reduction_stores_its_element_result_in_the_reduction_s_phase(compiler):
    """`new = tanh(h @ w + b)` and `max(abs(new - h))`: `new` is stored by the phase
    that computes it for the max, so only the max's row buffer is in the scratch."""
    def body(b, h, w, c):
        new = b.tanh(b.add(b.matmul(h, w), c))
        return new, b.max(b.abs(b.sub(new, h)), axis=None)
    types = [f32(64, 32), f32(32, 32), f32(32)]
    _, (op,) = fused(function("f", types, body))
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel.spec.phases().early == {0: 0} and kernel.spec.buffers() == 1
    h = normal(64, 32)
    h[5, 7] = np.nan
    compare(compiler, types, body, [h, normal(32, 32) * 0.1, normal(32)],
            {"rtol": 1e-6, "atol": 1e-6})


@pytest.mark.parametrize("axis", [1, 0])  # in rows, in columns
def test_a_float_sum_of_negative_zeros_is_positive_zero_as_numpy_s(compiler, axis):
    def body(b, x):
        return b.sum(b.mul(x, b.constant(1.0)), axis=(axis,))
    got = compare(compiler, [f32(5, 70)], body, [-np.zeros((5, 70), np.float32)])
    assert not np.signbit(got[0]).any()


def tile_runs(monkeypatch) -> list[bool]:
    """Whether each call of a fused op's tiles (`FusedKernel._tiles_run`'s, generated
    or its general path) was answered by them, from the variants made after this."""
    runs, make = [], FusedKernel._tiles_run

    def spied(self, *args):
        tiles = make(self, *args)
        if tiles is None:
            return None

        def counted(arrays, out):
            results = tiles(arrays, out)
            runs.append(results is not None)
            return results
        return counted
    monkeypatch.setattr(FusedKernel, "_tiles_run", spied)
    return runs


def converging(b, h, w, c):
    """The converging loop's body: ``new = tanh(h @ w + c)`` and ``max(abs(new - h))``."""
    new = b.tanh(b.add(b.matmul(h, w), c))
    return new, b.max(b.abs(b.sub(new, h)), axis=None)


CONVERGING_TYPES = [f32("N", 128), f32(128, 128), f32(128)]  # 64 rows: 2**20 multiply-adds


def assert_maximum_of(top, values):
    """`top` is NumPy's max of `values` (NaN if any is NaN)."""
    with np.errstate(invalid="ignore"):
        want = np.max(values)
    assert top.dtype == np.float32 and (np.isnan(want) and np.isnan(top) or top == want)


@pytest.mark.parametrize("rows", [3, 64, 100])
@pytest.mark.parametrize("special", [None, np.nan, np.inf])
def test_the_converging_loop_s_body_runs_in_the_gemm_tiles(compiler, monkeypatch, rows,
                                                            special):
    """The body of ``while h = tanh(h @ w + b)`` converges, over a product the GEMM
    takes, runs in its tiles, new stored over C and the max folded there: the
    interpreter's results (new to float32 rounding of a product summed in another
    order, the max exactly NumPy's max of the new computed), NaN and inf in h
    included, at a symbolic batch of every size (3 rows: below the GEMM's
    thresholds, the anchor then the body)."""
    runs = tile_runs(monkeypatch)
    h, w, c = normal(rows, 128), normal(128, 128) * 0.1, normal(128)
    if special is not None:
        h[rows // 2, 77] = special
    with np.errstate(invalid="ignore"):
        new, top = compare(compiler, CONVERGING_TYPES, converging, [h, w, c],
                           {"rtol": 1e-5, "atol": 1e-5})
    assert_maximum_of(top, np.abs(new - h))
    assert runs == [rows >= 8]


@pytest.mark.parametrize("into", [(), (True, True), (False, True), (True, False)])
@pytest.mark.parametrize("order", ["new first", "max first"])
def test_the_tiles_write_the_given_buffers(compiler, monkeypatch, into, order):
    """Given buffers for new (the anchor computing into it) and the max, either or
    both, in either order of the results: the tiles write those and return them,
    with the anchor-then-body path's values."""
    module, (op,) = fused(function("f", [f32(64, 128), f32(128, 128), f32(128)],
                                   converging))
    if order == "max first":  # the fuse pass yields in body order: the same op, swapped
        text = str(module).replace("yield %11, %14", "yield %14, %11").replace(
            ": (f32[64,128], f32) {", ": (f32, f32[64,128]) {").replace(
            "return %3, %4", "return %4, %3")
        module = parse(text)
        verify(module)
        (op,) = [o for o in module.walk() if o.name == "fused"]
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel._tiled == ((0, 1) if order == "new first" else (1, 0))
    arrays = [normal(64, 128), normal(128, 128) * 0.1, normal(128)]
    operands = [arrays[list(module.main.args).index(v)] for v in op.operands]
    runs = tile_runs(monkeypatch)
    buffers = [np.full(r.type.shape, np.nan, np.float32) for r, given in zip(op.results, into)
               if given]
    got = kernel.out_evaluator(into)(list(operands), [], list(buffers)) if into else \
        kernel.evaluator()(list(operands), [])
    assert runs == [True]
    given = iter(buffers)
    for g, written in zip(got, into):
        if written:
            assert g is next(given)
    want = lookup("fused").region_op.evaluator(op)(list(operands), [])  # NumPy's
    new, top = (0, 1) if order == "new first" else (1, 0)
    np.testing.assert_allclose(got[new], want[new], rtol=1e-5, atol=1e-5)
    assert_maximum_of(got[top], np.abs(got[new] - arrays[0]))
    assert got[top].shape == ()


def test_a_kept_maximum_and_one_of_any_sign(compiler, monkeypatch):
    """A max kept as [1, 1], of a value that is not an abs (NumPy's maximum, not the
    magnitudes' compare), runs in the tiles too."""
    runs = tile_runs(monkeypatch)

    def body(b, h, w, c):
        new = b.tanh(b.add(b.matmul(h, w), c))
        return new, b.max(b.sub(new, h), axis=None, keepdim=True)
    h = np.abs(normal(64, 128)) + 2.5  # new - h below zero everywhere
    w, c = normal(128, 128), normal(128)
    new, top = compare(compiler, CONVERGING_TYPES, body, [h, w, c], {"rtol": 0, "atol": 1})
    # the products' terms reach 10, so an element near 0 is only known to float32
    # rounding of the sum of their magnitudes (tanh is 1-Lipschitz)
    h64, w64, c64 = (a.astype(np.float64) for a in (h, w, c))
    bound = 130 * 2.0 ** -24 * (np.abs(h64) @ np.abs(w64) + np.abs(c64)) + 1e-6
    assert (np.abs(new - np.tanh(h64 @ w64 + c64)) <= bound).all()
    assert top.shape == (1, 1) and top[0, 0] < 0
    assert_maximum_of(top[0, 0], new - h)
    assert runs == [True]


@pytest.mark.parametrize("case", ["along an axis", "min", "sum", "two maxima",
                                  "a value of the max", "three results"])
def test_other_reductions_beside_a_product_are_not_the_tiles(compiler, case):
    """Only one element result beside the max over everything of one value runs in
    the tiles (`FusedSpec.elementwise_and_maximum`); the others run the anchor,
    then the body, as before, with the interpreter's results."""
    def body(b, h, w, c):
        new = b.tanh(b.add(b.matmul(h, w), c))
        d = b.abs(b.sub(new, h))
        return {"along an axis": lambda: (new, b.max(d, axis=(1,))),
                "min": lambda: (new, b.min(d, axis=None)),
                "sum": lambda: (new, b.sum(d, axis=None)),
                "two maxima": lambda: (new, b.max(d, axis=None), b.max(new, axis=None)),
                "a value of the max": lambda: (b.sub(new, b.max(d, axis=None)),),
                "three results": lambda: (new, b.max(d, axis=None), b.exp(new))}[case]()
    types = [f32(64, 128), f32(128, 128), f32(128)]
    _, (op,) = fused(function("f", types, body))
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel.spec.elementwise_and_maximum() is None and kernel._fused is None
    compare(compiler, types, body, [normal(64, 128), normal(128, 128) * 0.1, normal(128)],
            {"rtol": 1e-5, "atol": 1e-5})


def test_arrays_the_generated_tiles_call_does_not_take(compiler, monkeypatch):
    """A read-only weight (no ctypes view) goes the Python path, which the tiles
    still answer, with the same values; a maximum's buffer that is the operand h's
    memory is refused by both, and the anchor-then-body path raises the
    reduction kernel's error."""
    module, (op,) = fused(function("f", [f32(64, 128), f32(128, 128), f32(128)], converging))
    kernel = FusedKernel(op, compiler, min_elements=0)
    h, w, c = normal(64, 128), normal(128, 128) * 0.1, normal(128)
    operands = [[h, w, c][list(module.main.args).index(v)] for v in op.operands]
    runs = tile_runs(monkeypatch)
    run = kernel.out_evaluator((False, True))
    want = run(list(operands), [], [np.empty((), np.float32)])
    frozen = w.copy()
    frozen.flags.writeable = False
    got = run([frozen if a is w else a for a in operands], [], [np.empty((), np.float32)])
    assert runs == [True, True]
    assert got[0].tobytes() == want[0].tobytes() and got[1] == want[1]
    with pytest.raises(ShapeError, match="overlaps"):
        run(list(operands), [], [h.reshape(-1)[7:8].reshape(())])
    assert runs[2:] == [False]
