"""The `fused` op (irflow.ops.fused): what its verifier accepts and rejects, its
evaluator against the ops it replaces (bit for bit, in blocks and whole, with an
anchor, on the interpreter and the executor), errors that name the absorbed op's
line, floating-point warnings silenced once around a body, dce through it, and its
refusal to be differentiated."""
import itertools
import warnings

import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.errors import IntegerDivisionByZero, IrflowError, VerificationError
from irflow.ir import Module, lookup, parse, verify
from irflow.ops.fused import layout
from irflow.ops.fused_numpy import BLOCK_ELEMENTS
from irflow.passes import PassManager
from irflow.passes.autodiff import grad


def fused(text: str) -> Module:
    """`text`, a module of unfused ops, after the fuse pass (verified after it)."""
    module = parse(text)
    PassManager("fuse", verify_each=True).run(module)
    assert any(op.name == "fused" for op in module.walk()), f"nothing fused:\n{module}"
    return module


def assert_same(reference: Module, candidate: Module, *arrays):
    """Bit-identical results, on the interpreter and on a plan of each."""
    want = run(reference, *arrays)
    for got in (run(candidate, *arrays), compile_plan(candidate.main)(*arrays)):
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w, strict=True)


ROWS = """
func @f(%x: f32[N,C], %w: f32[C]) -> (f32[N,C], f32[N], f32[N,1]) {
  %a = mul %x, %w : f32[N,C]
  %t = tanh %a : f32[N,C]
  %m = mean %t {axis=[1], keepdim=true} : f32[N,1]
  %d = sub %t, %m : f32[N,C]
  %e = exp %d : f32[N,C]
  %s = sum %e {axis=[1]} : f32[N]
  %q = mul %d, %d : f32[N,C]
  %v = max %q {axis=[1], keepdim=true} : f32[N,1]
  %y = div %e, %v : f32[N,C]
  return %y, %s, %v
}
"""


@pytest.mark.parametrize("n, c", [(3, 5), (1, 7), (2 * BLOCK_ELEMENTS // 100 + 7, 100)])
def test_a_row_kernel_computes_what_its_ops_did_in_blocks_and_whole(n, c):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c)).astype(np.float32)
    w = rng.standard_normal(c).astype(np.float32)
    module = fused(ROWS)
    (op,) = [op for op in module.walk() if op.name == "fused"]
    assert op.attrs["axes"] == (1,) and len(op.results) == 3
    assert_same(parse(ROWS), module, x, w)


def test_blocks_along_the_first_axis_no_reduction_reduces():
    text = """
func @f(%x: f32[512,300]) -> (f32[1,300], f32[512,300]) {
  %e = exp %x : f32[512,300]
  %t = tanh %e : f32[512,300]
  %c = sum %t {axis=[0], keepdim=true} : f32[1,300]
  %d = sub %t, %c : f32[512,300]
  %y = mul %d, %e : f32[512,300]
  return %c, %y
}
"""
    x = np.random.default_rng(1).standard_normal((512, 300)).astype(np.float32)
    assert_same(parse(text), fused(text), x)


def test_a_matmul_epilogue_in_blocks_and_a_result_without_leading_axes():
    text = EPILOGUE
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((300, 64), (64, 1024), (1024,))]
    module = fused(text)
    assert [len(op.regions) for op in module.walk() if op.name == "fused"] == [2]
    assert_same(parse(text), module, *args)


EPILOGUE = """
func @f(%x: f32[N,64], %w: f32[64,1024], %b: f32[1024]) -> (f32[N,1024], f32, f32[N,1024]) {
  %h = matmul %x, %w : f32[N,1024]
  %s = add %h, %b : f32[N,1024]
  %r = relu %s : f32[N,1024]
  %t = tanh %r : f32[N,1024]
  %u = mul %t, %t : f32[N,1024]
  %k = sum %u : f32
  %z = mul %u, %k : f32[N,1024]
  return %t, %k, %z
}
"""
EPILOGUE_IN_PLACE = """
func @f(%x: f32[N,64], %w: f32[64,1024], %b: f32[1024]) -> f32[N,1024] {
  %h = matmul %x, %w : f32[N,1024]
  %s = add %h, %b : f32[N,1024]
  %r = relu %s : f32[N,1024]
  return %r
}
"""

EPILOGUE_SELECT = """
func @f(%x: f32[N,64], %w: f32[64,1024], %b: f32[N,1024]) -> f32[N,1024] {
  %h = matmul %x, %w : f32[N,1024]
  %z = const {value=0.0} : f32
  %p = gt %b, %z : bool[N,1024]
  %y = select %p, %h, %b : f32[N,1024]
  return %y
}
"""


@pytest.mark.parametrize("text, shapes", [
    (EPILOGUE_SELECT, [(3, 64), (64, 1024), (3, 1024)]),
    (ROWS, [(3, 5), (5,)]), (ROWS, [(2 * BLOCK_ELEMENTS // 100 + 7, 100), (100,)]),
    (EPILOGUE, [(3, 64), (64, 1024), (1024,)]), (EPILOGUE, [(300, 64), (64, 1024), (1024,)]),
    (EPILOGUE_IN_PLACE, [(3, 64), (64, 1024), (1024,)]),
    (EPILOGUE_IN_PLACE, [(300, 64), (64, 1024), (1024,)]),
])
def test_the_out_evaluator_writes_what_the_evaluator_returns_into_given_buffers(text, shapes):
    # whole and in blocks, with an anchor computed into a result's buffer or not, a
    # row value copied in, results that drop axes: every subset of results given
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    (op,) = [op for op in fused(text).walk() if op.name == "fused"]
    fused_op = lookup("fused").region_op
    module_args = list(op.parent.args)
    operands = [args[module_args.index(v)] for v in op.operands]
    want = fused_op.evaluator(op)(list(operands), [])
    n = len(op.results)
    for into in itertools.product((False, True), repeat=n):
        if not any(into):
            continue
        buffers = [np.full(w.shape, np.nan, w.dtype) for w, i in zip(want, into) if i]
        got = fused_op.out_evaluator(op, into)(list(operands), [], list(buffers))
        given = iter(buffers)
        for g, w, i in zip(got, want, into):
            if i:
                assert g is next(given)
            np.testing.assert_array_equal(g, w, strict=True)
    into = (True,) * n
    anchored = fused_op.written_over(op, into)
    # the matmul computes into result 0's buffer, but where select would write over it
    # (select writes its last operand first)
    assert bool(anchored) == (text not in (ROWS, EPILOGUE_SELECT))


BODY = """
func @f(%x: f32[N,4]) -> f32[N,4] {
  %y = fused %x {axes=[1]} : f32[N,4] {
  ^body(%x: f32):
    %m = reduce %x {kind="max"} : f32
    %y = sub %x, %m : f32
    yield %y
  }
  return %y
}
"""


@pytest.mark.parametrize("old, new, message", [
    ('%m = reduce %x {kind="max"} : f32', '%m = matmul %x, %x : f32',
     "a fused body holds elementwise ops, scalar constants and reduce, not 'matmul'"),
    ("{axes=[1]}", "{axes=[2]}", r"axes \[2\] are not axes of the domain \[N, 4\]"),
    ("{axes=[1]}", "", "reduce in a fused body with no reduced axes"),
    ("^body(%x: f32)", "^body(%x: f64)", r"body region takes \(f64\) but fused passes it"),
    ("%y = sub %x, %m : f32\n    yield %y", "%y = sub %x, %m : f32\n    yield %m",
     r"result 0 is f32\[N,4\] but the body yields a float32 spanning \[N, 1\]"),
    ('{kind="max"}', '{kind="argmax"}', "reduce's kind must name a reduction"),
])
def test_the_verifier_says_what_a_fused_op_gets_wrong(old, new, message):
    assert old in BODY
    verify(parse(BODY))
    with pytest.raises(VerificationError, match=message):
        verify(parse(BODY.replace(old, new)))


def test_reduce_belongs_in_a_fused_body():
    with pytest.raises(VerificationError, match="reduce may only appear in the body of a fused"):
        verify(parse("""
func @f(%x: f32) -> f32 {
  %m = reduce %x {kind="sum"} : f32
  return %m
}
"""))


def test_the_layout_tells_row_values_from_element_values():
    module = fused(ROWS)
    lay = layout(next(op for op in module.walk() if op.name == "fused"))
    assert lay.domain == ("N", "C") and lay.axes == (1,)
    rows = {v.name for v in lay.shapes if lay.is_row(v)}
    assert {"m", "s", "v"} <= rows and not {"a", "t", "d", "e", "y"} & rows


def test_an_error_inside_a_kernel_names_the_line_of_the_op_it_came_from():
    module = fused("""
func @f(%x: i64[N,4], %y: i64[N,4]) -> i64[N,4] {
  %a = add %x, %x : i64[N,4]
  %b = sub %y, %y : i64[N,4]
  %c = div %a, %b : i64[N,4]
  %d = mul %c, %c : i64[N,4]
  return %d
}
""")
    x = np.ones((2, 4), np.int64)
    for call in (lambda: run(module, x, x), lambda: compile_plan(module.main)(x, x)):
        with pytest.raises(IntegerDivisionByZero) as e:
            call()
        assert e.value.loc is not None and e.value.loc.line == 5


def test_a_body_of_quiet_kernels_gives_inf_and_nan_without_warnings():
    text = """
func @f(%x: f32[N,4]) -> f32[N,4] {
  %a = exp %x : f32[N,4]
  %b = mul %a, %a : f32[N,4]
  %c = log %x : f32[N,4]
  %d = add %b, %c : f32[N,4]
  return %d
}
"""
    x = np.array([[1000.0, 0.0, -1.0, 1.0]] * 3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(parse(text), fused(text), x)
        (y,) = run(fused(text), x)
    assert np.isposinf(y[0, 0]) and np.isneginf(y[0, 1]) and np.isnan(y[0, 2])


def test_dce_trims_results_and_operands_nothing_needs():
    module = fused("""
func @f(%x: f32[N,4], %z: f32[4]) -> (f32[N,4], f32[N,4]) {
  %a = exp %x : f32[N,4]
  %b = mul %a, %z : f32[N,4]
  return %a, %b
}
""")
    ret = module.main.return_op
    ret.set_operands([ret.operands[0], ret.operands[0]])
    PassManager("dce", verify_each=True).run(module)
    (op,) = [op for op in module.walk() if op.name == "fused"]
    assert len(op.results) == 1 and [v.name for v in op.operands] == ["x"]


def test_fused_programs_refuse_to_be_differentiated_with_a_reason():
    module = fused("""
func @f(%x: f64[3]) -> f64 {
  %a = exp %x : f64[3]
  %b = tanh %a : f64[3]
  %s = sum %b : f64
  return %s
}
""")
    with pytest.raises(IrflowError, match="cannot be differentiated: fusion runs after autodiff"):
        grad(module.main, [0])


def test_a_fused_module_round_trips_through_its_text():
    module = fused(ROWS)
    text = str(module)
    assert str(parse(text)) == text
    verify(parse(text))


def test_operands_of_lower_rank_broadcast_over_the_domain():
    text = """
func @f(%x: f32[N,3], %b: f32[3], %s: f32) -> f32[N,3] {
  %a = add %x, %b : f32[N,3]
  %y = mul %a, %s : f32[N,3]
  return %y
}
"""
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in ((4, 3), (3,), ())]
    assert_same(parse(text), fused(text), *args)


def test_a_result_passed_through_from_an_operand_is_memory_of_its_own():
    """A branch's fused op yields its argument through stop_gradient: its result must
    not be the operand's array, whose arena memory the planner hands to the tanh chain
    after the cond (the returned value came back overwritten). Found by a deep run."""
    text = """
    func @f(%x: f32[N,2]) -> f32[N,2] {
      %0 = tanh %x : f32[N,2]
      %1 = sum %0 : f32
      %2 = const {value=0.125} : f32
      %3 = gt %1, %2 : bool
      %4, %5 = cond %3, %0 : (f32[N,2], f32[N,2]) {
      ^then(%6: f32[N,2]):
        %7 = const {value=-0.5} : f32
        %8 = add %6, %7 : f32[N,2]
        yield %8, %8
      } {
      ^else(%9: f32[N,2]):
        %10 = stop_gradient %9 : f32[N,2]
        %11 = const {value=-1.5} : f32
        %12 = add %10, %11 : f32[N,2]
        yield %10, %12
      }
      %13 = tanh %5 : f32[N,2]
      %14 = tanh %13 : f32[N,2]
      return %4
    }
    """
    module = parse(text)
    PassManager(["fuse"], verify_each=True).run(module)
    plan = compile_plan(module.main)
    for x in (np.array([[0.5, -0.9]], np.float32), np.array([[0.5, 0.9]], np.float32)):
        (want,) = run(parse(text), x)
        (got,) = plan(x)
        np.testing.assert_array_equal(got, want)


def test_a_view_in_a_body_keeps_its_operand_alive():
    """stop_gradient's kernel returns its operand's array, so that array lives while
    either name is read: `%n` may not be written over `%m` (whose last use it is) while
    `%k`, the same array, is still to be yielded."""
    text = """
func @f(%x: f32[2], %s: f32[2]) -> (f32[2], f32[2]) {
  %a, %b = fused %x, %s : (f32[2], f32[2]) {
  ^body(%u: f32, %v: f32):
    %m = mul %u, %v : f32
    %k = stop_gradient %m : f32
    %n = mul %v, %m : f32
    yield %k, %n
  }
  return %a, %b
}
"""
    x, s = np.array([2.0, 3.0], np.float32), np.array([5.0, 7.0], np.float32)
    module = parse(text)
    for got in (run(module, x, s), compile_plan(module.main)(x, s)):
        np.testing.assert_array_equal(got[0], x * s)
        np.testing.assert_array_equal(got[1], s * (x * s))
