"""Native runs under hostile calls: arguments that alias or are laid out badly,
results the caller keeps or changes, failures in the middle of a run, runs in loop
bodies and branches, threads, thresholds of the products and training steps. Each
answer is compared with the interpreter, with the NumPy backend, or bit for bit with
the same plan built without native runs (`NoRuns`), which makes the same calls of
compiled code one step at a time."""
import threading

import numpy as np
import pytest

import irflow
import irflow.nn.functional as F
from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.fused import MIN_ELEMENTS
from irflow.errors import IntegerDivisionByZero
from irflow.ir import TensorType
from tests.support.models import mlp, train_step
from tests.support.plans import NoRuns, f32, i64, recorded_plan
from tests.support.threads import with_threads

rng = np.random.default_rng(20)


def plans_of(compiler, types, body, min_elements=0):
    """(module, the plan with native runs, its `Recording` lowering, the plan without)."""
    module, plan, lowering = recorded_plan(compiler, types, body, min_elements)
    return module, plan, lowering, compile_plan(module.main, NoRuns(compiler, min_elements))


def values(types, scale=0.1):
    return [np.asarray((rng.standard_normal(t.shape) * scale).astype(t.dtype.np))
            for t in types]


def assert_close(got, want, rtol=2e-5, atol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def assert_identical(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def broadcasting(b, x, w, col, row, s, a, d):
    """A GEMM with an epilogue of a column and a row, a product of NumPy's BLAS's
    size class scaled by a 0-d argument, an integer floor division (fallible) and a
    reduction reading x again with the second product: three steps of one run."""
    h = b.tanh(b.add(b.add(b.matmul(x, w), col), row))
    g = b.mul(b.sigmoid(b.matmul(h, w)), s)
    k = b.add(b.div(a, d), b.constant(1, "i64"))
    return g, k, b.sum(b.mul(g, x), axis=[1], keepdim=True)


BROADCASTING = [f32(64, 256), f32(256, 256), f32(64, 1), f32(1, 256), f32(), i64(64, 64),
                i64(64, 64)]


def broadcasting_inputs():
    return values(BROADCASTING[:5]) + [rng.integers(-50, 50, (64, 64)),
                                       rng.integers(1, 5, (64, 64))]


def test_aliasing_and_read_only_arguments_run_natively_and_agree(compiler):
    """The same array as two arguments, an argument that is a view of another's rows,
    read-only arguments and a 0-d argument given as a NumPy scalar: the run only
    reads them, so it takes them and answers as the interpreter and the steps."""
    module, plan, lowering, steps = plans_of(compiler, BROADCASTING, broadcasting)
    assert "native run of 3 steps:" in plan.describe()
    same = broadcasting_inputs()
    same[6] = same[5]
    same[5][same[5] == 0] = 3
    rows = broadcasting_inputs()
    rows[0] = rows[1][64:128]
    frozen = broadcasting_inputs()
    for a in frozen:
        a.flags.writeable = False
    scalar = broadcasting_inputs()
    scalar[4] = np.float32(0.7)
    for inputs in (same, rows, frozen, scalar):
        got = plan(*inputs)
        assert_close(got, run(module, *inputs))
        assert_identical(got, steps(*inputs))
    assert lowering.done == [3] * 4


def test_arguments_not_c_contiguous_go_to_the_steps(compiler):
    """Zero-strided (np.broadcast_to), Fortran-order and strided arguments: the run
    takes none of them (it completes no step) and the steps answer."""
    module, plan, lowering, _ = plans_of(compiler, BROADCASTING, broadcasting)
    cases = []
    zero = broadcasting_inputs()
    zero[2] = np.broadcast_to(np.float32(0.3), (64, 1))
    zero[0] = np.broadcast_to(zero[0][:1], (64, 256))
    cases.append(zero)
    fortran = broadcasting_inputs()
    fortran[1] = np.asfortranarray(fortran[1])
    cases.append(fortran)
    strided = broadcasting_inputs()
    wide = np.zeros((64, 512), np.float32)
    wide[:, ::2] = strided[0]
    strided[0] = wide[:, ::2]
    cases.append(strided)
    for inputs in cases:
        assert_close(plan(*inputs), run(module, *inputs))
    assert lowering.done == [0, 0, 0]


def test_a_division_by_zero_mid_run_raises_and_leaves_nothing_behind(compiler):
    """The fallible step fails in the run; its step raises the interpreter's error;
    the next good call, through the same arena and result buffers, is right."""
    module, plan, lowering, _ = plans_of(compiler, BROADCASTING, broadcasting)
    bad = broadcasting_inputs()
    bad[6][3, 3] = 0
    with pytest.raises(IntegerDivisionByZero) as raised:
        plan(*bad)
    with pytest.raises(IntegerDivisionByZero) as wanted:
        run(module, *bad)
    assert str(raised.value) == str(wanted.value)
    assert lowering.done == [1]  # the division is the run's second step
    good = broadcasting_inputs()
    assert_close(plan(*good), run(module, *good))
    assert lowering.done == [1, 3]


def views(b, x, w):
    """Results a native run writes, returned as they are, twice, and as views."""
    h = b.tanh(b.matmul(x, w))
    g = b.sigmoid(b.matmul(h, w))
    s = b.mul(g, h)
    return b.transpose(g, perm=[1, 0]), b.reshape(s, shape=[64 * 256]), s, s, b.mean(s)


VIEWS = [f32(64, 256), f32(256, 256)]


def test_results_the_caller_keeps_are_not_written_by_the_next_call(compiler):
    """Every result of a call, its views and its 0-d mean included, stays what it
    was while later calls run natively."""
    module, plan, lowering, _ = plans_of(compiler, VIEWS, views)
    assert "native run of 2 steps:" in plan.describe()
    kept, wanted = [], []
    for _ in range(3):
        inputs = values(VIEWS)
        kept.append(plan(*inputs))
        wanted.append(run(module, *inputs))
        assert kept[-1][2] is kept[-1][3]
    for got, want in zip(kept, wanted):
        assert_close(got, want)
    assert lowering.done == [2, 2, 2]


def test_result_buffers_their_holder_changed_are_replaced(compiler):
    """Results made read-only, reshaped, retyped or restrided in place by the caller,
    then dropped, or dropped while a view of them is kept: the next call's run writes
    buffers of its own, right, and the kept views do not change."""
    module, plan, lowering, _ = plans_of(compiler, VIEWS, views)
    kept = []

    def read_only(a):
        a.flags.writeable = False

    def reshaped(a):
        a.shape = (a.size,)

    def retyped(a):
        a.dtype = np.int32

    def keep_view(a):
        kept.append((a[...], a.copy()))
    for change in (read_only, reshaped, retyped, keep_view):
        for a in plan(*values(VIEWS)):
            change(a)
        inputs = values(VIEWS)
        got = plan(*inputs)
        assert_close(got, run(module, *inputs))
        assert all(g.flags.writeable for g in got)
    assert all(np.array_equal(view, copy) for view, copy in kept)
    assert set(lowering.done) == {2}


def reductions(b, x, w, y, z):
    """Reductions over columns and rows in a row, each using the run's one scratch
    after the others (column sums of [8, 65536] need 2 MiB of it)."""
    h = b.tanh(b.matmul(x, w))
    top = b.max(b.add(y, b.constant(1.0, "f32")), axis=[0])
    bottom = b.min(b.exp(y), axis=[0])
    columns = b.sum(b.mul(h, h), axis=[0], keepdim=True)
    rows = b.mean(b.sub(z, columns), axis=[1])
    product = b.prod(b.add(b.mul(y, b.constant(1e-3, "f32")), b.constant(1.0, "f32")),
                     axis=[0])
    return top, bottom, columns, rows, product, b.any(b.gt(y, b.constant(3.5, "f32")),
                                                      axis=[0])


REDUCTIONS = [f32(64, 256), f32(256, 256), f32(8, 65536), f32(64, 256)]


def test_reductions_sharing_the_scratch_are_the_steps_bit_for_bit(compiler):
    module, plan, lowering, steps = plans_of(compiler, REDUCTIONS, reductions)
    assert "native run of" in plan.describe()
    for nan in (False, True):
        inputs = values(REDUCTIONS, 1.0)
        if nan:
            inputs[2][3, 17] = np.nan
        got = plan(*inputs)
        assert_identical(got, steps(*inputs))
        for g, w in zip(got, run(module, *inputs)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)
    assert lowering.done and all(d > 1 for d in lowering.done)


def layered(tx, ty):
    """A product (transposed as asked) with a bias and tanh, a product of its result,
    and ``r.T @ h`` (the backward pass's pattern) with a mean of squares."""
    def body(b, x, w, bias, v, r):
        h = b.tanh(b.add(b.matmul(x, w, transpose_x=tx, transpose_y=ty), bias))
        z = b.sigmoid(b.matmul(h, v))
        y = b.add(b.matmul(r, h, transpose_x=True), b.constant(1.0, "f32"))
        return z, y, b.mean(b.mul(y, y))
    return body


@pytest.mark.parametrize("m,k,n", [(7, 9363, 16), (8, 8191, 16), (8, 8193, 16),
                                   (9, 6898, 17), (8, 7711, 17), (64, 256, 17)])
@pytest.mark.parametrize("tx,ty", [(False, False), (True, True)])
def test_products_around_the_gemm_thresholds_are_the_steps_bit_for_bit(compiler, m, k, n,
                                                                        tx, ty):
    """Rows 7/8/9, work just below and above 2**20 multiply-adds (the generated GEMM
    against NumPy's BLAS), 16 and 17 columns, transposed operands."""
    types = [f32(k, m) if tx else f32(m, k), f32(n, k) if ty else f32(k, n), f32(n),
             f32(n, n), f32(m, m)]
    module, plan, lowering, steps = plans_of(compiler, types, layered(tx, ty))
    inputs = [np.asarray((rng.standard_normal(t.shape) / np.sqrt(t.shape[-1]))
                         .astype(np.float32)) for t in types]
    got = plan(*inputs)
    assert lowering.done == [3]
    assert_identical(got, steps(*inputs))
    assert_close(got, run(module, *inputs), rtol=1e-4, atol=1e-5)


def small_between(op):
    def body(b, x, w, u, v, keep, other):
        h = b.tanh(b.matmul(x, w))
        small = b.select(keep, op(b, u, v), other)
        return h, small, b.sigmoid(b.matmul(h, w))
    return body


EDGES = np.resize(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 2.5, -2.5, 0.5,
                            -0.5, 1.5, 3e9, -3e9, 1e-40, 7.0], np.float32), (8, 8))
SMALL_OPS = {
    "maximum": ("f32", "f32", lambda b, u, v: b.maximum(u, v)),
    "minimum": ("f32", "f32", lambda b, u, v: b.minimum(u, v)),
    "round": ("f32", "f32", lambda b, u, v: b.round(u)),
    "mod": ("f32", "f32", lambda b, u, v: b.mod(u, v)),
    "to_i32": ("f32", "i32", lambda b, u, v: b.cast(u, dtype="i32")),
    "to_u8": ("f32", "u8", lambda b, u, v: b.cast(u, dtype="u8")),
    "to_f16": ("f32", "f16", lambda b, u, v: b.cast(u, dtype="f16")),
    "ne": ("f32", "bool", lambda b, u, v: b.ne(u, v)),
    "floor_div_i64": ("i64", "i64", lambda b, u, v: b.div(u, b.add(b.abs(v),
                                                                    b.constant(1, "i64")))),
    "mod_i64": ("i64", "i64", lambda b, u, v: b.mod(u, b.add(b.abs(v), b.constant(1, "i64")))),
    "mul_i32": ("i32", "i32", lambda b, u, v: b.mul(u, v)),
    "sub_u8": ("u8", "u8", lambda b, u, v: b.sub(u, v)),
    "neg_i8": ("i8", "i8", lambda b, u, v: b.neg(u)),
}


def edges(dtype: str) -> np.ndarray:
    np_dtype = TensorType(dtype, []).dtype.np
    if np.issubdtype(np_dtype, np.floating):
        return EDGES.astype(np_dtype)
    info = np.iinfo(np_dtype)
    return np.resize(np.array([info.min, info.max, -1, 0, 1, -7, 7, 3, -3, 2, 63, 64, -64,
                               5, info.min + 1, 100]).astype(np_dtype), (8, 8))


@pytest.mark.parametrize("name", sorted(SMALL_OPS))
def test_a_small_op_compiled_for_size_in_a_run_is_the_interpreter_bit_for_bit(compiler,
                                                                              name):
    """An op below `MIN_ELEMENTS` between two products runs code compiled for size in
    the run (NumPy's evaluator outside it): on NaN, infinities, -0.0, overflowing
    casts and the extremes of integers it answers as the interpreter does."""
    operand, result, op = SMALL_OPS[name]
    types = [f32(64, 256), f32(256, 256), TensorType(operand, [8, 8]),
             TensorType(operand, [8, 8]), TensorType("bool", [8, 8]),
             TensorType(result, [8, 8])]
    module, plan, lowering, _ = plans_of(compiler, types, small_between(op), MIN_ELEMENTS)
    assert "native run of 3 steps:" in plan.describe()
    u = edges(operand)
    v = np.roll(u, 5)
    keep = np.ones((8, 8), bool)
    keep[0, 0] = False
    inputs = [*values(types[:2]), u, v, keep, np.zeros((8, 8), types[5].dtype.np)]
    with np.errstate(all="ignore"):
        want = run(module, *inputs)[1]
    got = plan(*inputs)[1]
    assert lowering.done == [3]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_threads_splitting_kernels_and_failing_calls_beside_native_runs(compiler):
    """Six threads call one plan at once: three split their kernels (their runs step
    aside), two make calls that fail in the middle of the run. Each gets its own
    answer, bit for bit the answer of a call alone, or its error."""
    module, plan, lowering, _ = plans_of(compiler, BROADCASTING, broadcasting)
    inputs = [broadcasting_inputs() for _ in range(6)]
    for k in (1, 3):
        inputs[k][6][7, 7] = 0
    wanted = {}
    for k in (0, 2, 4, 5):
        wanted[k] = [a.copy() for a in plan(*inputs[k])]
    failures = []

    def worker(k):
        if k % 2 == 0:
            irflow.set_num_threads(2)
        for _ in range(15):
            try:
                got = plan(*inputs[k])
            except IntegerDivisionByZero:
                if k in wanted:
                    failures.append(k)
                continue
            if k not in wanted or not all(np.array_equal(g, w)
                                          for g, w in zip(got, wanted[k])):
                failures.append(k)
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not failures
    assert {0, 1, 3} <= set(lowering.done)


def test_a_thread_with_a_small_stack_leaves_the_run_to_the_steps(compiler):
    """A thread made after ``threading.stack_size(64 KiB)`` cannot hold the GEMM's
    panels: the run completes nothing and the steps answer as the interpreter."""
    module, plan, lowering, _ = plans_of(compiler, VIEWS, views)
    inputs = values(VIEWS)
    got = {}
    before = threading.stack_size(64 * 1024)
    try:
        worker = threading.Thread(target=lambda: got.update(out=plan(*inputs)))
        worker.start()
        worker.join()
    finally:
        threading.stack_size(before)
    assert lowering.done == [0]
    assert_close(got["out"], run(module, *inputs))


def converging(x, w):
    """A tensor-dependent loop whose body has a native run: products and tanh until
    the iterate stops moving."""
    i = 0
    d = irflow.to_tensor(np.float32(1.0))
    while d > 1e-5 and i < 40:
        y = irflow.tanh(x @ w + 0.5)
        z = F.sigmoid(y @ w) - 0.5
        u = irflow.tanh(z @ w + x)
        d = (u - x).abs().max()
        x = u
        i += 1
    return x, d


def carried(x, w, n):
    """A loop whose carried value is written by the last step of its body's run."""
    i = irflow.to_tensor(np.int64(0))
    while i < n:
        y = irflow.tanh(x @ w)
        x = F.sigmoid(y @ w) - 0.5
        i = i + 1
    return x


def branching(x, w):
    """A run in each branch of a tensor-dependent if."""
    if x.sum() > 0:
        y = irflow.tanh(x @ w)
        y = F.sigmoid(y @ w) * 3.0
        y = y @ w + x
    else:
        y = irflow.tanh(x @ w) * 2.0
        y = irflow.exp(y @ w - 1.0)
        y = (y @ w).abs()
    return y


@pytest.mark.parametrize("fn,calls", [
    (converging, [lambda x, w: (x, w), lambda x, w: (3 * x, w)]),
    (carried, [lambda x, w: (x, w, np.int64(5)), lambda x, w: (x, -w, np.int64(0))]),
    (branching, [lambda x, w: (np.abs(x), w), lambda x, w: (-np.abs(x), w)]),
])
def test_runs_in_loop_bodies_and_branches_agree_with_the_numpy_backend(fn, calls):
    x = (rng.standard_normal((64, 256)) / 3).astype(np.float32)
    w = (rng.standard_normal((256, 256)) / 30).astype(np.float32)
    llvm, numpy = irflow.compile(fn, backend="llvm"), irflow.compile(fn, backend="numpy")
    for args in calls:
        tensors = [irflow.to_tensor(a) for a in args(x, w)]
        got, want = llvm(*tensors), numpy(*tensors)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, v in zip(got, want):
            np.testing.assert_allclose(g.numpy(), v.numpy(), rtol=1e-5, atol=2e-6)
    assert "native run of" in llvm._last.plan.describe()


@pytest.mark.parametrize("make_optimizer", [
    lambda p: irflow.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=p,
                                        use_nesterov=True, weight_decay=0.001),
    lambda p: irflow.optimizer.AdamW(learning_rate=0.001, parameters=p,
                                     grad_clip=irflow.nn.ClipGradByGlobalNorm(0.5)),
    lambda p: irflow.optimizer.SGD(learning_rate=0.1, parameters=p,
                                   grad_clip=irflow.nn.ClipGradByNorm(0.1)),
], ids=["nesterov_weight_decay", "adamw_global_clip", "sgd_norm_clip"])
def test_training_steps_run_natively_and_agree_with_the_numpy_backend(make_optimizer):
    """Several steps of an MLP with 9 rows and 17 hidden units (products of NumPy's
    BLAS in the run): the losses of every step, the parameters after them and the
    error of a label out of range are the NumPy backend's."""
    def make(backend):
        irflow.seed(3)
        model = mlp(64, 17, 16)
        return model, irflow.compile(train_step(model, make_optimizer(model.parameters())),
                                     backend=backend)
    x = irflow.to_tensor(rng.standard_normal((9, 64)).astype(np.float32))
    labels = irflow.to_tensor(rng.integers(0, 16, (9, 1)))
    (model, llvm), (reference, numpy) = make("llvm"), make("numpy")
    losses = []
    for _ in range(4):
        losses.append(llvm(x, labels))  # kept: later calls must not change them
        np.testing.assert_allclose(float(losses[-1]), float(numpy(x, labels)), rtol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-6)
    assert "native run of" in llvm._last.plan.describe()
    assert len({float(loss) for loss in losses}) == 4
    out_of_range = irflow.to_tensor(np.full((9, 1), 16))
    with pytest.raises(IndexError) as raised:
        llvm(x, out_of_range)
    with pytest.raises(IndexError) as wanted:
        numpy(x, out_of_range)
    assert str(raised.value) == str(wanted.value)
    np.testing.assert_allclose(float(llvm(x, labels)), float(numpy(x, labels)), rtol=1e-5)


def test_a_run_stepping_aside_on_two_threads_is_bit_identical_for_large_elementwise(
        compiler):
    """Elementwise ops above `MIN_ELEMENTS` run the same compiled code in the run and
    as steps: on a thread that splits kernels the answer is bit for bit the same."""
    def body(b, x, w, u):
        h = b.tanh(b.matmul(x, w))
        return h, b.exp(b.mul(u, u)), b.sigmoid(b.matmul(h, w))
    types = [f32(64, 256), f32(256, 256), f32(64, 128)]
    module, plan, lowering, _ = plans_of(compiler, types, body, MIN_ELEMENTS)
    assert "native run of 3 steps:" in plan.describe()
    inputs = values(types)
    one = [a.copy() for a in plan(*inputs)]
    assert_identical(with_threads(2, plan, *inputs), one)
    assert lowering.done == [3, 0]
