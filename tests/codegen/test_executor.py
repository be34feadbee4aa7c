"""The executor (compiled plans) against the interpreter, the reference semantics:
same results bit for bit, same input errors, same error locations; plus what only
the executor promises: intermediates written into the arena, the others' registers
freed after their last use (tests/codegen/test_arena.py has the arena's own tests)."""
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irflow.codegen import Interpreter, Plan, compile_plan, run
from irflow.codegen.timing import StepTimes
from irflow.errors import InputError, IrflowError, ShapeError
from irflow.ir import TensorType, function, lookup, parse, verify
from irflow.passes.autodiff import grad
from tests.support.programs import programs, seeds


def outcome(call):
    """A call's results, or the type and text of the error it raised."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the executor must fail as the interpreter does
        return type(e), str(e)


def assert_equal_results(got: list, expected: list) -> None:
    """Same number of results, each an array of the same dtype, shape and bits."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert type(g) is type(e) is np.ndarray
        np.testing.assert_array_equal(g, e, strict=True)


def assert_same_outcome(fn, *args):
    """The plan returns what the interpreter returns, or raises what it raises."""
    expected = outcome(lambda: run(fn, *args))
    got = outcome(lambda: compile_plan(fn)(*args))
    if isinstance(expected, tuple):
        assert got == expected
    else:
        assert_equal_results(got, expected)


def assert_same_results(fn, *args, interpreter=None):
    """The plan's results equal the interpreter's, on two calls of one plan."""
    expected = (interpreter or Interpreter()).run(fn, args)
    plan = compile_plan(fn)
    for _ in range(2):  # a second call starts from a clean state
        assert_equal_results(plan(*args), expected)
    return expected


NESTED = """
func @f(%x: f32[N,4], %n: i64, %seed: i64) -> (f32[N,4], i64, f32[N*4], f32[N,3], f32[2,N,4]) {
  %i0 = const {value=0} : i64
  %flat = reshape %x {shape=["N*4"]} : f32[N*4]
  %i, %h = while %n, %flat, %i0, %x : (i64, f32[N,4]) {
  ^cond(%m: i64, %fl: f32[N*4], %j: i64, %a: f32[N,4]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %fl: f32[N*4], %j: i64, %a: f32[N,4]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %s = sum %a : f32
    %zero = const {value=0.0} : f32
    %p = gt %s, %zero : bool
    %a1 = cond %p, %a, %fl, %s : f32[N,4] {
    ^then(%u: f32[N,4], %f: f32[N*4], %t: f32):
      %r = reshape %f {shape=["N", 4]} : f32[N,4]
      %half = const {value=0.5} : f32
      %rh = mul %r, %half : f32[N,4]
      %v = sub %u, %rh : f32[N,4]
      yield %v
    } {
    ^else(%u: f32[N,4], %f: f32[N*4], %t: f32):
      %lim = const {value=-100.0} : f32
      %w = while %lim, %u : f32[N,4] {
      ^cond(%l: f32, %q: f32[N,4]):
        %tot = sum %q : f32
        %go = gt %tot, %l : bool
        condition %go
      } {
      ^body(%l: f32, %q: f32[N,4]):
        %c = const {value=3.0} : f32
        %q1 = mul %q, %c : f32[N,4]
        %q2 = sub %q1, %q : f32[N,4]
        %one = const {value=1.0} : f32
        %q3 = sub %q2, %one : f32[N,4]
        yield %q3
      }
      yield %w
    }
    yield %j1, %a1
  }
  %noise = uniform %seed {shape=["N", 3]} : f32[N,3]
  %total = sum %h : f32
  %zero = const {value=0.0} : f32
  %big = gt %total, %zero : bool
  %bc = cond %big, %total : f32[2,N,4] {
  ^then(%t: f32):
    %true = const {value=true} : bool
    %b = cond %true, %t : f32[2,N,4] {
    ^then(%tt: f32):
      %r = reshape %tt {shape=[1, 1, 1]} : f32[1,1,1]
      %bb = broadcast_to %r {shape=[2, "N", 4]} : f32[2,N,4]
      yield %bb
    } {
    ^else(%tt: f32):
      %bb = const {value=0.0} : f32
      %r = reshape %bb {shape=[1, 1, 1]} : f32[1,1,1]
      %bbb = broadcast_to %r {shape=[2, "N", 4]} : f32[2,N,4]
      yield %bbb
    }
    yield %b
  } {
  ^else(%t: f32):
    %r = reshape %t {shape=[1, 1, 1]} : f32[1,1,1]
    %e = neg %r : f32[1,1,1]
    %b = broadcast_to %e {shape=[2, "N", 4]} : f32[2,N,4]
    yield %b
  }
  return %h, %i, %flat, %noise, %bc
}
"""


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("steps", [0, 1, 4])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_nested_control_flow_and_symbolic_shapes_match_the_interpreter(n, steps, sign):
    fn = parse(NESTED).main
    verify(fn)
    x = (sign * np.random.default_rng(n).random((n, 4)) - 0.1).astype(np.float32)
    h, i, *_ = assert_same_results(fn, x, np.int64(steps), np.int64(7))
    assert i == steps
    if steps == 0:  # the loop never ran
        np.testing.assert_array_equal(h, x)


def test_symbols_pass_through_regions_that_do_not_mention_them():
    plan = compile_plan(parse(NESTED).main)
    final_cond = plan.body.records[-1]
    then = final_cond.subplans[0]
    assert then.inherits == ("N",) and then.records[0].subplans[0].inherits == ("N",)


def test_inner_loop_that_never_runs():
    fn = parse(NESTED).main
    x = np.full((2, 4), -1000.0, np.float32)  # the else branch's loop condition is false
    h, *_ = assert_same_results(fn, x, np.int64(1), np.int64(0))
    np.testing.assert_array_equal(h, x)


def test_sizes_that_change_from_one_iteration_to_the_next():
    # The concat's declared type is a lie (its size doubles): only an unchecked run
    # accepts it, but it exercises symbols rebound at each region entry.
    fn = parse("""
func @f(%x: f32[M], %n: i64) -> (f32[M], f32) {
  %i0 = const {value=0} : i64
  %zero = const {value=0.0} : f32
  %i, %v, %acc = while %n, %i0, %x, %zero : (i64, f32[M], f32) {
  ^cond(%m: i64, %j: i64, %a: f32[M], %s: f32):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f32[M], %s: f32):
    %b = broadcast_to %a {shape=[2, "M"]} : f32[2,M]
    %t = sum %b : f32
    %s1 = add %s, %t : f32
    %a2 = concat %a, %a {axis=0} : f32[M]
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    yield %j1, %a2, %s1
  }
  return %v, %acc
}""").main
    x = np.arange(3, dtype=np.float32)
    v, acc = assert_same_results(fn, x, np.int64(3), interpreter=Interpreter(check=False))
    assert v.shape == (24,) and acc == 2 * 3 * (1 + 2 + 4)


def _loop_function():
    """h <- tanh(h * w + b) for n steps, loss = sum(h * h)."""
    t = TensorType("f64", (2, 3))

    def body(b, x, w, bias, n):
        def keep_going(b, w, bias, n, i, h):
            return b.lt(i, n)

        def step(b, w, bias, n, i, h):
            return [b.add(i, b.constant(1, "int64")), b.tanh(b.add(b.mul(h, w), bias))]

        _, h = b.while_loop([w, bias, n], [b.constant(0, "int64"), x], keep_going, step)
        return b.sum(b.mul(h, h))
    return function("loop", [t, t, TensorType("f64", (3,)), TensorType("i64", ())], body)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_gradient_of_a_loop_pushes_and_pops_stacks(steps):
    g = grad(_loop_function(), [0, 1, 2])
    assert {"stack_push", "stack_pop"} <= {op.name for op in g.walk()}
    rng = np.random.default_rng(steps)
    args = [rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((2, 3)),
            rng.standard_normal(3), np.int64(steps)]
    assert_same_results(g, *args)


def test_effects_run_in_order_in_each_iteration(capsys):
    fn = parse("""
func @f(%x: f32[2], %n: i64) -> f32[2] {
  %i0 = const {value=0} : i64
  %i, %v = while %n, %i0, %x : (i64, f32[2]) {
  ^cond(%m: i64, %j: i64, %a: f32[2]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f32[2]):
    print %j {fmt="step {}"}
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %a1 = add %a, %a : f32[2]
    print %a1 {fmt="gives {}"}
    yield %j1, %a1
  }
  return %v
}""").main
    args = np.ones(2, np.float32), np.int64(3)
    run(fn, *args)
    expected = capsys.readouterr().out
    assert expected.count("step") == expected.count("gives") == 3
    compile_plan(fn)(*args)
    assert capsys.readouterr().out == expected


def test_a_timer_times_every_step_its_nested_ones_apart():
    fn = parse("""
func @f(%x: f32[2], %n: i64) -> f32[2] {
  %i0 = const {value=0} : i64
  %i, %v = while %n, %i0, %x : (i64, f32[2]) {
  ^cond(%m: i64, %j: i64, %a: f32[2]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f32[2]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %a1 = mul %a, %a : f32[2]
    yield %j1, %a1
  }
  %r = neg %v : f32[2]
  return %r
}""").main
    args = np.full(2, 1.5, np.float32), np.int64(3)
    timer = StepTimes()
    plan = compile_plan(fn, timer=timer)
    np.testing.assert_array_equal(plan(*args), compile_plan(fn)(*args))
    ops = {op.name: op for op in fn.walk()}
    # a step per run: the loop's condition four times, its body three, the rest once
    assert {ops[k]: n for k, n in [("while", 1), ("lt", 4), ("add", 3), ("mul", 3),
                                   ("neg", 1)]} == timer.runs
    assert all(timer.own[op] <= timer.total[op] for op in timer.runs)
    inside = sum(timer.total[ops[k]] for k in ("lt", "add", "mul"))
    assert timer.own[ops["while"]] == pytest.approx(timer.total[ops["while"]] - inside)
    timer.clear()
    plan(*args)
    assert timer.runs[ops["mul"]] == 3  # the steps still report to the cleared timer


def test_a_call_silences_numpys_warnings_once_around_its_quiet_kernels():
    """Quiet kernels (log of 0, exp overflowing) run unsilenced inside one silencing
    per call, in regions too; the caller's setting is left as it was."""
    fn = parse("""
func @f(%x: f32[N], %p: bool) -> (f32[N], f32[N]) {
  %l = log %x : f32[N]
  %e = cond %p, %x : f32[N] {
  ^then(%u: f32[N]):
    %v = exp %u : f32[N]
    yield %v
  } {
  ^else(%u: f32[N]):
    yield %u
  }
  return %l, %e
}
""").main
    plan = compile_plan(fn)
    assert plan.body.quiet and plan.body.enter is not plan.body.run
    assert plan.body.records[0].op.name == "log"
    with np.errstate(all="raise"):
        log, exp = plan(np.array([0.0, 1000.0], np.float32), np.array(True))
        assert np.geterr()["over"] == "raise"
    assert np.isneginf(log[0]) and np.isinf(exp[1])


def test_kernel_errors_carry_the_op_location():
    fn = parse("""
func @f(%x: f32, %n: i64) -> f32 {
  %s0 = stack_new : stack<f32>
  %s1 = stack_push %s0, %x : stack<f32>
  %i0 = const {value=0} : i64
  %i, %s, %y = while %n, %i0, %s1, %x : (i64, stack<f32>, f32) {
  ^cond(%m: i64, %j: i64, %t: stack<f32>, %a: f32):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %t: stack<f32>, %a: f32):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %t1, %b = stack_pop %t : (stack<f32>, f32)
    yield %j1, %t1, %b
  }
  return %y
}""", "prog.ir").main
    x = np.float32(2.0)
    assert_same_results(fn, x, np.int64(1))
    with pytest.raises(ShapeError) as expected:
        run(fn, x, np.int64(2))
    with pytest.raises(ShapeError) as got:
        compile_plan(fn)(x, np.int64(2))
    assert got.value.loc == expected.value.loc is not None
    assert got.value.loc.line == 14
    assert str(got.value) == str(expected.value)


SIGNATURE = """
func @g(%x: f32[N,3], %y: f32[N*2], %z: i64[M,N], %w: f32[2], %q: f32[K*2,K], %r: f32[L*2]) -> f32[2] {
  return %w
}"""


def _errors_of(fn, args):
    """(interpreter's outcome, plan's outcome): the error text or "ok"."""
    outcomes = []
    for call in (lambda: run(fn, *args), lambda: compile_plan(fn)(*args)):
        try:
            call()
            outcomes.append("ok")
        except InputError as e:
            outcomes.append(str(e))
    return outcomes


def _args(n=2, m=3, k=2):
    return [np.zeros((n, 3), np.float32), np.zeros(2 * n, np.float32),
            np.zeros((m, n), np.int64), np.zeros(2, np.float32),
            np.zeros((2 * k, k), np.float32), np.zeros(8, np.float32)]


@pytest.mark.parametrize("index, value, message", [
    (None, None, "ok"),
    (0, np.zeros((2, 4), np.float32),
     r"@g: argument 0 (%x): expected shape [N, 3], got [2, 4]"),
    (0, np.zeros((2, 3)), r"@g: argument 0 (%x): expected dtype float32, got float64"),
    (1, np.zeros(5, np.float32), r"@g: argument 1 (%y): expected shape [N*2], got [5]"),
    (2, np.zeros((3, 5), np.int64), r"@g: argument 2 (%z): expected shape [M, N], got [3, 5]"),
    (2, np.zeros(3, np.int64), r"@g: argument 2 (%z): expected shape [M, N], got [3]"),
    (3, [1.0, 2.0], r"@g: argument 3 (%w): expected dtype float32, got float64"),
    (3, np.zeros(3, np.float32), r"@g: argument 3 (%w): expected shape [2], got [3]"),
    (4, np.zeros((3, 2), np.float32), r"@g: argument 4 (%q): expected shape [K*2, K], got [3, 2]"),
    (5, np.zeros(7, np.float32), r"@g: argument 5 (%r): expected shape [L*2], got [7]"),
])
def test_argument_errors_are_the_interpreters(index, value, message):
    fn = parse(SIGNATURE).main
    args = _args()
    if index is not None:
        args[index] = value
    assert _errors_of(fn, args) == [message, message]


def test_argument_count_and_unnamed_arguments():
    fn = function("h", [TensorType("f32", (2,))], lambda b, x: x)
    fn.args[0].name = None
    assert _errors_of(fn, []) == ["@h takes 1 argument(s), got 0"] * 2
    expected = "@h: argument 0: expected shape [2], got [3]"
    assert _errors_of(fn, [np.zeros(3, np.float32)]) == [expected, expected]


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 4)),
                min_size=0, max_size=3),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_argument_checks_accept_and_reject_what_the_interpreter_does(edits, n, m, k):
    """Valid arguments with random dims changed: the same verdict and message."""
    fn = parse(SIGNATURE).main
    args = _args(n, m, k)
    for index, axis, size in edits:
        shape = list(args[index].shape)
        if axis < len(shape):
            shape[axis] = size
        else:
            shape.append(size)
        args[index] = np.zeros(shape, args[index].dtype)
    interpreted, planned = _errors_of(fn, args)
    assert planned == interpreted


def test_a_symbol_no_argument_binds_is_a_compile_error():
    fn = parse("""
func @f(%s: i64) -> f32[K] {
  %u = uniform %s {shape=["K"]} : f32[K]
  return %u
}""").main
    with pytest.raises(IrflowError, match=r"'uniform' uses the symbol K in its shape, but "
                                          r"no argument of @f has a dim K"):
        Plan.compile(fn)


def test_the_last_use_table():
    fn = parse("""
func @f(%x: f32[3], %y: f32[3], %unused: f32) -> (f32, f32[3]) {
  %a = mul %x, %y : f32[3]
  %e = exp %x : f32[3]
  %b = add %a, %x : f32[3]
  %s = sum %b : f32
  %two = const {value=2.0} : f32
  %t = mul %s, %two : f32
  return %t, %a
}""").main
    plan = compile_plan(fn)
    # %t and %a are returned, so they are written into their result buffers (<-),
    # the others into the arena: registers holding memory (a buffer in the arena or
    # a result buffer) are never cleared.
    assert plan.describe() == """\
plan @f(r0, r1, r2):
  free r2
  r7 = const  ; at compile time
  r3 <- mul r0, r1  ; free r1
  _ <- exp r0
  r5 <- add r3, r0  ; free r0
  r6 <- sum r5
  r8 <- mul r6, r7
  yield r8, r3"""
    assert plan.body.frees == [(1,), (), (0,), (), ()]
    assert_same_results(fn, *(np.ones(3, np.float32),) * 2, np.float32(0))


def test_a_plan_needs_neither_the_ir_nor_the_registry_once_compiled(monkeypatch):
    fn = parse(NESTED).main
    args = (np.ones((2, 4), np.float32), np.int64(3), np.int64(1))
    expected = run(fn, *args)
    plan = compile_plan(fn)
    for op in fn.walk():
        monkeypatch.setattr(lookup(op.name), "kernel", None)
    fn.body.blocks.clear()
    assert_equal_results(plan(*args), expected)


def _spy(monkeypatch, name, before=None, after=None, form="kernel"):
    """Wrap op `name`'s kernel (or its out kernel, `form="out_kernel"`), before
    compiling, to observe its operands (and ``out=``) and result."""
    kernel = getattr(lookup(name), form)

    def spied(*args, **attrs):
        if before:
            before(*args, **{k: v for k, v in attrs.items() if k == "out"})
        out = kernel(*args, **attrs)
        if after:
            after(out)
        return out
    monkeypatch.setattr(lookup(name), form, spied)


def test_a_large_allocated_value_is_released_after_its_last_use(monkeypatch):
    # uniform has no out kernel, so its kernel allocates %big, which the plan frees
    # after the sum; the sum and the tanh run in the arena.
    refs, dead = [], []
    _spy(monkeypatch, "uniform", after=lambda out: refs.append(weakref.ref(out)))
    _spy(monkeypatch, "tanh", before=lambda x, out: dead.append(refs[-1]() is None),
         form="out_kernel")
    fn = parse("""
func @f(%seed: i64) -> f64 {
  %big = uniform %seed {shape=[100000], dtype=f64} : f64[100000]
  %s = sum %big : f64
  %t = tanh %s : f64
  %u = neg %t : f64
  return %u
}""").main
    compile_plan(fn)(np.int64(0))
    assert dead == [True]


def test_a_loop_writes_every_iteration_into_the_same_buffers(monkeypatch):
    inputs, outputs = [], []

    def seen(a, b, out):
        inputs.append(a.__array_interface__["data"][0])
        outputs.append(out.__array_interface__["data"][0])
    _spy(monkeypatch, "mul", before=seen, form="out_kernel")
    fn = parse("""
func @f(%x: f64[1000], %n: i64) -> f64[1000] {
  %x0 = exp %x : f64[1000]
  %i0 = const {value=0} : i64
  %i, %v = while %n, %i0, %x0 : (i64, f64[1000]) {
  ^cond(%m: i64, %j: i64, %a: f64[1000]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f64[1000]):
    %b = mul %a, %a : f64[1000]
    %c = tanh %b : f64[1000]
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    yield %j1, %c
  }
  return %v
}""").main
    plan = compile_plan(fn)
    calls = []
    for _ in range(2):
        np.testing.assert_array_equal(plan(np.zeros(1000), np.int64(3))[0],
                                      run(fn, np.zeros(1000), np.int64(3))[0], strict=True)
        calls.append((inputs[:], outputs[:]))
        inputs.clear(), outputs.clear()
    # %b (the mul) has one buffer; %c (the carried tanh) another, which the next
    # iteration's mul reads. The first reads %x0, which its op allocates: the loop
    # returns it if it runs no iteration. The second call runs in the same arena.
    (x0, c, c_again), (b, *bs) = calls[0]
    assert c == c_again and bs == [b, b] and len({x0, c, b}) == 3
    assert calls[1][0][1:] == calls[0][0][1:] and calls[1][1] == calls[0][1]


@given(programs(), seeds)
def test_random_programs_run_as_in_the_interpreter(program, seed):
    for n in program.sizes:
        assert_same_outcome(program.function, *program.inputs(seed, n))


@given(programs(dtype="float64", scalar_output=True), seeds)
def test_gradients_of_random_programs_run_as_in_the_interpreter(program, seed):
    g = grad(program.function, program.float_args)
    n = program.sizes[seed % len(program.sizes)]
    assert_same_outcome(g, *program.inputs(seed, n))


def _chain_then_pop(n: int) -> str:
    """`n` negations, then a pop of an empty stack (a kernel error) on line n + 3."""
    lines = ["func @f(%x: f32[2]) -> f32[2] {", "  %s = stack_new : stack<f32[2]>"]
    lines += [f"  %v{i + 1} = neg %v{i} : f32[2]".replace("%v0", "%x") for i in range(n)]
    lines += ["  %t, %b = stack_pop %s : (stack<f32[2]>, f32[2])",
              f"  %r = add %b, %v{n} : f32[2]".replace("%v0", "%x"), "  return %r", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("n", [0, 3, 40])  # one generated function; the loop over steps
def test_a_block_names_the_op_that_raised_whichever_way_it_runs(n):
    fn = parse(_chain_then_pop(n), "chain.ir").main
    plan = compile_plan(fn)
    assert (plan.body.run == plan.body._stepwise) == (len(plan.body.steps) > 32)
    with pytest.raises(ShapeError) as expected:
        run(fn, np.ones(2, np.float32))
    with pytest.raises(ShapeError) as got:
        plan(np.ones(2, np.float32))
    assert got.value.loc == expected.value.loc is not None
    assert got.value.loc.line == n + 3
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("n", [3, 40])
def test_a_timed_block_times_each_step_whichever_way_it_runs(n):
    fn = parse(_chain_then_pop(n).replace(
        "  %t, %b = stack_pop %s : (stack<f32[2]>, f32[2])\n", "").replace("%b", "%x")).main
    timer = StepTimes()
    plan = compile_plan(fn, timer=timer)
    x = np.arange(2, dtype=np.float32)
    np.testing.assert_array_equal(plan(x)[0], compile_plan(fn)(x)[0])
    assert sorted(timer.runs.values()) == [1] * (n + 1)  # n negations and the add
    assert plan.describe() == compile_plan(fn).describe()


def test_a_returned_constant_is_the_callers_to_write_into():
    """A constant's array is the module's (the interpreter) or the plan's (every
    call): a returned one, or a view of one, is a copy, so writing into it changes
    neither the module's text nor a later call."""
    module = parse("func @f() -> (f32[2], f32[2,1]) {\n"
                   "  %c = const {value=[1.0, 2.0]} : f32[2]\n"
                   "  %r = reshape %c {shape=[2, 1]} : f32[2,1]\n"
                   "  return %c, %r\n}\n")
    text = str(module)
    plan = compile_plan(module.main)
    for call in (lambda: run(module), plan):
        first = call()
        first[0][0], first[1][1, 0] = 7.0, 9.0
        again = call()
        np.testing.assert_array_equal(again[0], [1.0, 2.0])
        np.testing.assert_array_equal(again[1], [[1.0], [2.0]])
    assert str(module) == text
