"""Native runs: consecutive plan steps of the LLVM backend made by one native call
(`irflow.codegen.llvm.sequence`). Every run is checked against the interpreter and
against the same plan's steps run as Python (which they are on a thread that
splits kernels), and the calls it does not take, or that fail, against the
interpreter's errors."""
import threading

import numpy as np
import pytest

import irflow
from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.blas import host_sgemm
from irflow.codegen.llvm.fused import MIN_ELEMENTS
from irflow.codegen.llvm.sequence import Float32, SequenceSpec
from irflow.codegen.native import Call
from irflow.errors import IntegerDivisionByZero
from irflow.ir import parse
from irflow.passes import DEFAULT_PIPELINE, PassManager
from tests.support.models import mlp, sgd_step
from tests.support.plans import Recording, f32, i64, recorded_plan
from tests.support.programs import random_program
from tests.support.threads import with_threads

rng = np.random.default_rng(0)


def two_layers(b, x, w1, bias, w2):
    """tanh(x @ w1 + bias) @ w2, then a softmax: two fused ops, the first product
    the generated GEMM's (64 x 256 x 256), the second below its thresholds (NumPy's
    BLAS)."""
    h = b.tanh(b.add(b.matmul(x, w1), bias))
    logits = b.matmul(h, w2)
    shifted = b.sub(logits, b.max(logits, axis=[1], keepdim=True))
    e = b.exp(shifted)
    return b.div(e, b.sum(e, axis=[1], keepdim=True))


TWO_LAYERS = [f32(64, 256), f32(256, 256), f32(256), f32(256, 16)]


def arrays(types):
    """Values of a tenth of a standard normal's (softmax amplifies its logits'
    rounding by their size)."""
    return [(rng.standard_normal(t.shape) / 10).astype(t.dtype.np) for t in types]


def test_consecutive_fused_steps_run_as_one_native_call(compiler):
    module, plan, lowering = recorded_plan(compiler, TWO_LAYERS, two_layers)
    assert "native run of 2 steps:" in plan.describe()
    inputs = arrays(TWO_LAYERS)
    got = plan(*inputs)
    assert lowering.done == [2]
    np.testing.assert_allclose(got[0], run(module, *inputs)[0], rtol=2e-5, atol=1e-6)
    # the same plan's steps as Python: on two threads the run leaves them every call
    python = with_threads(2, plan, *inputs)
    assert lowering.done == [2, 0]
    np.testing.assert_array_equal(got[0], python[0])


@pytest.mark.skipif(host_sgemm() is None, reason="NumPy's BLAS is not a scipy-openblas")
def test_a_product_below_the_gemm_thresholds_is_a_call_of_numpy_blas(compiler):
    _, plan, _ = recorded_plan(compiler, TWO_LAYERS, two_layers)
    narrow = [r for r in plan.body.records if r.op.name == "fused"][1]
    assert any(isinstance(c, Call) and c.function is host_sgemm() for c in narrow.native)


def mixed(b, x, w, v):
    """A small fused op (64 elements) between two large ones."""
    h = b.tanh(b.matmul(x, w))
    s = b.mul(b.exp(v), b.constant(2.0, "f32"))
    return h, s, b.sigmoid(b.matmul(h, w))


MIXED = [f32(64, 256), f32(256, 256), f32(8, 8)]


def test_a_small_step_between_large_ones_joins_their_run_compiled_for_size(compiler):
    """Alone, a fused op of static sizes below `MIN_ELEMENTS` is NumPy's step (a
    call of compiled code costs more); in a run a call costs no Python, so there it
    runs its code compiled for size, and so does its step when the run leaves a call
    to the steps: the same bits either way."""
    module, plan, lowering = recorded_plan(compiler, MIXED, mixed, min_elements=MIN_ELEMENTS)
    assert "native run of 3 steps:" in plan.describe()
    inputs = arrays(MIXED)
    want = run(module, *inputs)
    native, steps = plan(*inputs), with_threads(2, plan, *inputs)
    assert lowering.done == [3, 0]
    for got in (native, steps):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(native[1], steps[1])
    # the small op alone: its NumPy step, nothing compiled
    _, alone, lowering = recorded_plan(compiler, MIXED[2:], lambda b, v: b.exp(v),
                                       min_elements=MIN_ELEMENTS)
    assert "native" not in alone.describe() and lowering.runs == 0
    np.testing.assert_array_equal(alone(inputs[2])[0], run(module, *inputs)[1] / 2)


def guarded(b, x, w, limit):
    """An assert after a fused op: every value of x @ w must stay below the limit
    (the fused op computes the flag and the result)."""
    h = b.matmul(x, w)
    ok = b.all(b.lt(b.abs(h), limit))
    b.create("assert", (ok,), {"msg": "too large", "error": "AssertionError"})
    return b.mul(b.tanh(h), b.tanh(h))


GUARDED = [f32(64, 256), f32(256, 256), f32()]


def test_a_failed_check_raises_from_the_step_that_makes_it(compiler):
    module, plan, lowering = recorded_plan(compiler, GUARDED, guarded)
    assert "native run of 2 steps:" in plan.describe()
    x, w = arrays(GUARDED[:2])
    plan(x, w, np.float32(1e6))
    assert lowering.done == [2]
    with pytest.raises(AssertionError, match="too large"):
        run(module, x, w, np.float32(0.1))
    with pytest.raises(AssertionError, match="too large"):
        plan(x, w, np.float32(0.1))
    assert lowering.done == [2, 1]  # the check is the second step


def divided(b, x, w, a, d):
    """An integer floor division (its code reports a zero divisor) after a product."""
    h = b.tanh(b.matmul(x, w))
    return h, b.add(b.div(a, d), b.constant(1, "i64"))


DIVIDED = [f32(64, 256), f32(256, 256), i64(64, 64), i64(64, 64)]


def test_a_failing_call_raises_the_interpreters_error(compiler):
    module, plan, lowering = recorded_plan(compiler, DIVIDED, divided)
    assert "native run of 2 steps:" in plan.describe()
    x, w = arrays(DIVIDED[:2])
    a = rng.integers(-50, 50, (64, 64))
    d = rng.integers(1, 5, (64, 64))
    got = plan(x, w, a, d)
    np.testing.assert_array_equal(got[1], a // d + 1)
    d[5, 7] = 0
    with pytest.raises(IntegerDivisionByZero) as raised:
        plan(x, w, a, d)
    with pytest.raises(IntegerDivisionByZero) as wanted:
        run(module, x, w, a, d)
    assert str(raised.value) == str(wanted.value)
    assert lowering.done[-1] < 2


def test_arrays_a_run_does_not_take_run_the_steps(compiler):
    """A non-contiguous argument goes to the steps, which copy it; a read-only one
    is only read, so the run takes it."""
    module, plan, lowering = recorded_plan(compiler, TWO_LAYERS, two_layers)
    inputs = arrays(TWO_LAYERS)
    want = run(module, *inputs)[0]
    strided = np.asfortranarray(inputs[0])
    np.testing.assert_allclose(plan(strided, *inputs[1:])[0], want, rtol=2e-5, atol=1e-6)
    assert lowering.done == [0]
    frozen = [a.copy() for a in inputs]
    for a in frozen:
        a.flags.writeable = False
    np.testing.assert_allclose(plan(*frozen)[0], want, rtol=2e-5, atol=1e-6)
    assert lowering.done == [0, 2]


def test_threads_calling_one_plan_at_once_get_their_own_answers(compiler):
    module, plan, lowering = recorded_plan(compiler, TWO_LAYERS, two_layers)
    inputs = [arrays(TWO_LAYERS) for _ in range(4)]
    wanted = [plan(*a)[0].copy() for a in inputs]
    failures = []

    def worker(k):
        for _ in range(20):
            if not np.array_equal(plan(*inputs[k])[0], wanted[k]):
                failures.append(k)
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not failures and set(lowering.done) == {2}


def test_a_compiled_training_step_is_one_native_call():
    """An MLP's SGD step: the labels' checks (cross_entropy's range, the gather's
    bounds), the forward and backward fused ops, the loss's mean and the updates run
    natively; the parameters it leaves are the NumPy backend's, and a label out of
    range raises what it raises there."""
    def make(backend):
        irflow.seed(3)
        model = mlp(784, 256, 10)
        return model, irflow.compile(sgd_step(model, 0.1), backend=backend)
    x = irflow.to_tensor(rng.standard_normal((256, 784)).astype(np.float32))
    labels = irflow.to_tensor(rng.integers(0, 10, (256, 1)))
    (model, llvm), (reference, numpy) = make("llvm"), make("numpy")
    for _ in range(3):
        np.testing.assert_allclose(float(llvm(x, labels)), float(numpy(x, labels)), rtol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-6)
    assert "native run of 10 steps:" in llvm._last.plan.describe()
    with pytest.raises(Exception) as raised:
        llvm(x, irflow.to_tensor(np.full((256, 1), 12)))
    with pytest.raises(type(raised.value)):
        numpy(x, irflow.to_tensor(np.full((256, 1), 12)))


def test_random_programs_with_native_runs_agree_with_the_interpreter(compiler):
    """The random programs (static shapes) whose plans have native runs: about one
    in twenty."""
    found = 0
    for seed in range(160):
        program = random_program(seed, symbolic=False, max_ops=16)
        module = parse(str(program.module))
        PassManager([*DEFAULT_PIPELINE, "fuse"], verify_each=True).run(module)
        lowering = Recording(compiler)
        plan = compile_plan(module.main, lowering)
        if not lowering.runs:
            continue
        found += 1
        inputs = program.inputs(seed, None)
        if program.evaluate(*inputs).jump_margin <= 1e-4:
            continue
        for g, w in zip(plan(*inputs), run(program.module, *inputs)):
            assert g.dtype == w.dtype and g.shape == w.shape, seed
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=str(seed))
            else:
                np.testing.assert_array_equal(g, w, err_msg=str(seed))
        assert all(d > 0 for d in lowering.done), seed  # (a run in a branch not taken)
    assert found >= 4


def test_a_float_argument_and_an_int_one_are_different_runs():
    """1.0 == 1 in Python, but one is passed in a float register and the other in an
    integer one: their specs (the compiler's keys) must differ."""
    as_float = SequenceSpec((((0, (Float32(1.0),), False, False),),), 1)
    as_int = SequenceSpec((((0, (1,), False, False),),), 1)
    assert as_float != as_int
    assert "(float " in as_float.llvm_ir(True) and "(i64 1)" in as_int.llvm_ir(True)


def projected(b, x, w, v):
    """A large fused op, then a standalone product below the GEMM's thresholds."""
    h = b.tanh(b.matmul(x, w))
    return h, b.matmul(h, v)


PROJECTED = [f32(64, 256), f32(256, 256), f32(256, 16)]


@pytest.mark.skipif(host_sgemm() is None, reason="NumPy's BLAS is not a scipy-openblas")
def test_a_small_standalone_product_joins_a_run_as_numpy_blas_call(compiler):
    """A matmul the GEMM takes no call of is NumPy's step; in a run it is the call of
    cblas_sgemm that NumPy's matmul makes, bit for bit."""
    module, plan, lowering = recorded_plan(compiler, PROJECTED, projected)
    assert "native run of 2 steps:" in plan.describe()
    inputs = arrays(PROJECTED)
    native, steps = plan(*inputs), with_threads(2, plan, *inputs)
    assert lowering.done == [2, 0]
    np.testing.assert_array_equal(native[1], steps[1])
    np.testing.assert_allclose(native[1], run(module, *inputs)[1], rtol=2e-5, atol=1e-6)
