"""The executor runs from the memory plan into an arena (irflow/codegen/arena.py): a
call allocates no intermediate buffer, nothing it returns is arena memory, one
arena per concrete shape and per overlapping call."""
import threading
import tracemalloc
import warnings

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.codegen import compile_plan, run
from irflow.codegen.arena import MAX_LAYOUTS
from irflow.ir import lookup, parse
from irflow.static import InputSpec

PROGRAM = """
func @f(%x: f32[256,256], %w: f32[256,256], %n: i64) -> (f32, f32[256,256]) {
  %a = matmul %x, %w : f32[256,256]
  %b = tanh %a : f32[256,256]
  %m = mean %b : f32
  %zero = const {value=0.0} : f32
  %p = gt %m, %zero : bool
  %c = cond %p, %b, %x : f32[256,256] {
  ^then(%u: f32[256,256], %v: f32[256,256]):
    %e = exp %u : f32[256,256]
    %f = mul %e, %v : f32[256,256]
    yield %f
  } {
  ^else(%u: f32[256,256], %v: f32[256,256]):
    %g = sin %u : f32[256,256]
    yield %g
  }
  %i0 = const {value=0} : i64
  %i, %h = while %n, %w, %i0, %c : (i64, f32[256,256]) {
  ^cond(%k: i64, %ww: f32[256,256], %j: i64, %q: f32[256,256]):
    %go = lt %j, %k : bool
    condition %go
  } {
  ^body(%k: i64, %ww: f32[256,256], %j: i64, %q: f32[256,256]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %r = matmul %q, %ww : f32[256,256]
    %s = sigmoid %r : f32[256,256]
    yield %j1, %s
  }
  %t = sum %h : f32
  return %t, %h
}"""


def arguments(seed=0, n=3):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((256, 256)).astype(np.float32),
            (rng.standard_normal((256, 256)) / 16).astype(np.float32), np.int64(n))


def test_a_call_allocates_no_intermediate_buffer():
    plan = compile_plan(parse(PROGRAM).main)
    args = arguments()
    plan(*args)  # the first call makes the arena
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        t, h = plan(*args)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # Each intermediate takes 256 KiB; the returned %h is copied out of the arena
    # (256 KiB) and the rest is NumPy's small scratch.
    assert h.nbytes <= peak < h.nbytes + 64 * 1024
    planned = plan.memory_plan
    assert planned.naive_bytes >= 5 * h.nbytes and planned.arena_bytes < 2.1 * h.nbytes


def test_the_interpreter_would_allocate_every_value():
    fn = parse(PROGRAM).main
    args = arguments()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        run(fn, *args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak > 4 * 256 * 256 * 4


def arena_of(plan) -> np.ndarray:
    """The byte array of a plan's (static) arena."""
    frame = (plan.layouts.static.pool or [plan.layouts.static.shared])[0]
    view = next(v for v in frame if isinstance(v, np.ndarray) and v.size)
    while view.base is not None:
        view = view.base
    return view


def test_results_are_never_arena_memory():
    plan = compile_plan(parse(PROGRAM).main)
    first = plan(*arguments(0))
    kept = [np.copy(r) for r in first]
    second = plan(*arguments(1))
    for r, k in zip(first, kept):
        np.testing.assert_array_equal(r, k)  # the second call changed nothing returned
    arena = arena_of(plan)
    assert not any(np.shares_memory(r, arena) for r in first + second)
    assert plan.assignment.copied == (1,)  # %h comes out of the loop: copied


def test_outputs_and_state_of_compiled_programs_survive_the_next_call():
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=model.parameters())

    @paddle.compile
    def step(x):
        loss = paddle.mean(model(x) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss, model(x)
    x = paddle.randn([32, 8])
    loss, out = step(x)
    values = [loss.numpy().copy(), out.numpy().copy()]
    params = [p.numpy().copy() for p in model.parameters()]
    step(paddle.randn([32, 8]))
    np.testing.assert_array_equal(loss.numpy(), values[0])
    np.testing.assert_array_equal(out.numpy(), values[1])
    assert any(not np.array_equal(p.numpy(), q) for p, q in zip(model.parameters(), params))


def test_a_compiled_function_writes_a_dropped_result_again():
    """A loop that drops each result Tensor: the next call writes the same memory
    (nothing of the program layer keeps the array it returned)."""
    compiled = paddle.compile(nn.Sequential(nn.Linear(8, 64), nn.Tanh()))
    x = paddle.randn([32, 8])
    with paddle.no_grad():
        address = np.asarray(compiled(x)).ctypes.data
        again = compiled(x)
        assert np.asarray(again).ctypes.data == address
        kept = compiled(x * 2)  # `again` is held: new memory
        assert np.asarray(kept).ctypes.data != np.asarray(again).ctypes.data
        np.testing.assert_allclose(again.numpy(), compiled(x).numpy(), rtol=1e-6)


def test_residuals_kept_by_eager_autograd_survive_later_calls():
    model = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Linear(16, 1))
    compiled = paddle.compile(model)
    xs = [paddle.randn([4, 8]) for _ in range(2)]
    for x in xs:
        x.stop_gradient = False
    first = compiled(xs[0])
    compiled(xs[1])  # runs in the same arena as the first call
    paddle.sum(first).backward()
    eager = paddle.to_tensor(xs[0].numpy(), stop_gradient=False)
    paddle.sum(model(eager)).backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), eager.grad.numpy(), rtol=1e-6)
    assert compiled.memory_plan is not None  # the forward half's


SYMBOLIC = """
func @f(%x: f32[N,4]) -> f32 {
  %a = exp %x : f32[N,4]
  %b = matmul %a, %x {transpose_y=true} : f32[N,N]
  %s = sum %b : f32
  return %s
}"""


def test_one_arena_per_concrete_shape():
    fn = parse(SYMBOLIC).main
    plan = compile_plan(fn)
    assert plan.memory_plan is None  # no shape yet
    for n in (2, 5, 2):
        x = np.ones((n, 4), np.float32)
        assert plan(x)[0] == run(fn, x)[0]
        assert plan.memory_plan.sizes == {"N": n}
    assert len(plan.layouts._layouts) == 2
    for n in range(1, MAX_LAYOUTS + 4):
        plan(np.ones((n, 4), np.float32))
    assert len(plan.layouts._layouts) == MAX_LAYOUTS


def test_compiled_programs_expose_the_plan_of_their_last_call():
    # unfused: the fused kernels of the default pipeline allocate what they make
    compiled = paddle.compile(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)),
                              input_spec=[InputSpec([None, 4])], pipeline=["fold", "cse", "dce"])
    assert compiled.memory_plan is None
    for n in (3, 7):
        compiled(paddle.randn([n, 4]))
        plan = compiled.memory_plan
        assert plan.sizes == {"N": n} and plan.arena_bytes == plan.peak_live_bytes > 0


def test_overlapping_calls_run_in_separate_arenas(monkeypatch):
    # Two threads meet inside the tanh of one plan; each must finish with its own
    # values, and the plan then holds two arenas.
    meeting = threading.Barrier(2, timeout=30)
    tanh = lookup("tanh").out_kernel

    def waiting(x, out):
        tanh(x, out=out)
        meeting.wait()
    monkeypatch.setattr(lookup("tanh"), "out_kernel", waiting)
    fn = parse(PROGRAM).main
    plan = compile_plan(fn)
    results, errors = {}, []

    def call(seed):
        try:
            results[seed] = plan(*arguments(seed, n=1))
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)
    threads = [threading.Thread(target=call, args=(seed,)) for seed in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(plan.layouts.static.pool) == 2
    monkeypatch.setattr(lookup("tanh"), "out_kernel", tanh)
    for seed in (1, 2):
        for got, want in zip(results[seed], run(fn, *arguments(seed, n=1))):
            np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_plan_without_arena_memory_shares_one_frame():
    # a view of an argument is the argument's memory: nothing to plan
    fn = parse("""
func @f(%x: f32[4]) -> f32[2,2] {
  %a = reshape %x {shape=[2,2]} : f32[2,2]
  return %a
}""").main
    plan = compile_plan(fn)
    plan(np.zeros(4, np.float32))
    assert plan.memory_plan.arena_bytes == 0 and plan.layouts.static.shared is not None


RETURNS_TWO = """
func @f(%x: f32[N,64]) -> (f32[N,64], f32[N,64]) {
  %a = exp %x : f32[N,64]
  %b = tanh %a : f32[N,64]
  %c = neg %b : f32[N,64]
  %d = mul %c, %x : f32[N,64]
  return %a, %d
}"""


def test_a_dropped_result_is_written_again_by_the_next_call():
    plan = compile_plan(parse(RETURNS_TWO).main)
    x = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    a, d = plan(x)
    addresses = (a.ctypes.data, d.ctypes.data)
    del a, d
    a, d = plan(x * 2)
    assert (a.ctypes.data, d.ctypes.data) == addresses
    np.testing.assert_allclose(a, np.exp(x * 2), rtol=1e-6)
    np.testing.assert_allclose(d, -np.tanh(np.exp(x * 2)) * x * 2, rtol=1e-6)


@pytest.mark.parametrize("change", ["read-only", "reshaped", "restrided", "retyped"])
def test_a_dropped_result_its_holder_changed_in_place_is_not_written_again(change):
    """A caller may make a returned array read-only, or give it another shape,
    strides or dtype in place, before dropping it: the next call writes a new one
    (it used to fail on the read-only one, on every later call)."""
    plan = compile_plan(parse(RETURNS_TWO).main)
    x = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    a, d = plan(x)
    if change == "read-only":
        a.flags.writeable = False
    elif change == "reshaped":
        a.shape = (64, 4)
    elif change == "restrided":
        with warnings.catch_warnings():  # deprecated since NumPy 2.4, still possible
            warnings.simplefilter("ignore", DeprecationWarning)
            a.strides = (0, 4)
    else:
        a.dtype = np.int32
    address = a.ctypes.data
    del a, d
    a, d = plan(x * 2)
    assert a.ctypes.data != address and a.flags.writeable and a.shape == (4, 64)
    np.testing.assert_allclose(a, np.exp(x * 2), rtol=1e-6)


def test_a_held_result_is_never_written_again():
    """Whatever refers to a returned array keeps it: the array, a view of it, a
    memoryview; the next call writes new memory."""
    plan = compile_plan(parse(RETURNS_TWO).main)
    x = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    for hold in (lambda r: r, lambda r: r[1:].T, memoryview):
        a, d = plan(x)
        kept, expected = hold(a), np.exp(x)
        del a, d
        again = plan(x * 3)[0]
        np.testing.assert_array_equal(np.asarray(kept), np.asarray(hold(expected)))
        assert not np.shares_memory(again, np.asarray(kept))
        del kept, again


def test_result_buffers_follow_the_call_shape():
    plan = compile_plan(parse(RETURNS_TWO).main)
    for n in (4, 3, 4, 7):
        x = np.full((n, 64), 0.5, np.float32)
        a, d = plan(x)
        assert a.shape == d.shape == (n, 64)
        np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
        del a, d


def test_calls_at_once_never_share_a_result_buffer():
    plan = compile_plan(parse(RETURNS_TWO).main)
    barrier = threading.Barrier(4)
    results, errors = {}, []

    def call(k):
        try:
            x = np.full((8, 64), k / 8, np.float32)
            barrier.wait(10)
            got = [plan(x)[0] for _ in range(50)]
            results[k] = (x, got)
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    for x, got in results.values():
        for a in got:  # each held result still holds its own call's values
            np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)


def test_a_kernel_error_leaves_the_arena_usable():
    fn = parse("""
func @f(%x: f32[4], %i: i64[2]) -> f32 {
  %a = exp %x : f32[4]
  %b = gather %a, %i : f32[2]
  %s = sum %b : f32
  return %s
}""").main
    plan = compile_plan(fn)
    x = np.zeros(4, np.float32)
    with pytest.raises(IndexError):
        plan(x, np.array([0, 9]))
    assert plan(x, np.array([0, 3]))[0] == 2.0
    assert len(plan.layouts.static.pool) == 1


def test_a_size_negative_in_a_run_is_a_shape_error_at_its_op():
    """x[1:] of an empty x has N-1 rows: the arena for that call is not made, and the
    error names the op's line (NumPy's would only say "negative dimensions")."""
    def diff(x):
        return x[1:] - x[:-1]

    compiled = paddle.compile(diff, input_spec=[InputSpec([None, 3])], backend="numpy")
    assert compiled(paddle.ones([2, 3])).shape == [1, 3]
    with pytest.raises(paddle.ShapeError, match=r"negative size \[-1, 3\] when N=0") as e:
        compiled(paddle.ones([0, 3]))
    assert e.value.loc.line == diff.__code__.co_firstlineno + 1
