"""Fused kernels storing a result in place of their anchor's result: the same bits as
out of place, the anchor's memory reused (the given buffer, or the anchor's new
array as the result), safe from several threads and at every size of a symbolic
batch, and never where a phase reads the anchor's result after the store, the
result is yielded twice, broadcast, an operand, or the code can fail."""
import copy
import dataclasses
import threading
import tracemalloc
import warnings

import numpy as np
import pytest

from irflow.codegen import compile_plan
from irflow.codegen.llvm import KernelSpec
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.kernel import Instr
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import ShapeError
from irflow.ir import TensorType, function, parse, verify
from tests.codegen.llvm.jit.test_fused import fused

rng = np.random.default_rng(7)


def f32(*shape):
    return TensorType("f32", list(shape))


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def linear_relu(b, x, w, c):
    return b.relu(b.add(b.matmul(x, w), c))


def tanh_step(b, h, w, c):  # the converging loop's body: a full reduction
    new = b.tanh(b.add(b.matmul(h, w), c))
    return new, b.max(b.abs(b.sub(new, h)), axis=None)


def column_grad(b, g, w, h):  # an element result stored by a phase in columns
    d = b.mul(b.matmul(g, w), h)
    return d, b.sum(d, axis=(0,))


CASES = {
    "elementwise": (linear_relu, lambda n: [f32(n, 48), f32(48, 40), f32(40)]),
    "full reduction": (tanh_step, lambda n: [f32(n, 40), f32(40, 40), f32(40)]),
    "columns": (column_grad, lambda n: [f32(n, 48), f32(48, 40), f32(n, 40)]),
}


def kernel_of(compiler, body, types) -> FusedKernel:
    module, (op,) = fused(function("f", types, body))
    kernel = FusedKernel(op, compiler, min_elements=0)
    kernel.arguments = [list(module.main.args).index(v) for v in op.operands]
    return kernel


def arrays_for(types, n):
    return [normal(*[n if d == "N" else d for d in t.shape]) for t in types]


def operands(kernel, arrays):
    """The fused op's operands for the function's arguments `arrays`."""
    return [arrays[i] for i in kernel.arguments]


def out_of_place(kernel, into):
    """The kernel's run with nothing in place (what the backend did before)."""
    plain = copy.copy(kernel)
    plain.in_place_result = lambda into=(): None
    return plain._compiled(into)


def buffers(op, n):
    return [np.empty([n if d == "N" else d for d in r.type.shape], r.type.dtype.np)
            for r in op.results]


def same_bits(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n", [64, "N"])
def test_in_place_results_are_the_out_of_place_ones_bit_for_bit(compiler, case, n):
    body, types_of = CASES[case]
    types = types_of(n)
    kernel = kernel_of(compiler, body, types)
    into = (True,) * len(kernel.op.results)
    assert kernel.in_place_result(into) == (0, True)
    assert kernel.in_place_result(()) == (0, False)
    for size in ([64] if n == 64 else [1, 3, 64, 257]):
        arrays = arrays_for(types, size)
        arrays[0][0, 0] = np.nan
        args = operands(kernel, arrays)
        want = out_of_place(kernel, into)(list(args), None, buffers(kernel.op, size))
        outs = buffers(kernel.op, size)
        got = kernel._compiled(into)(list(args), None, outs)
        same_bits(got, want)
        assert all(g is o for g, o in zip(got, outs))  # in the given buffers
        same_bits(kernel._compiled(())(list(args), None), want)


@pytest.mark.parametrize("case", CASES)
def test_the_epilogue_allocates_nothing_of_the_anchor_s_size(compiler, case):
    """Into a given buffer: the anchor computes there and the epilogue runs over it,
    so a call allocates one array of the anchor's size less than out of place (the
    anchor's); without one, the anchor's new array is the result (one less: the
    result's)."""
    body, types_of = CASES[case]
    types = types_of(512)
    kernel = kernel_of(compiler, body, types)
    arrays = operands(kernel, arrays_for(types, 512))
    into = (True,) * len(kernel.op.results)
    size = arrays[0].shape[0] * 40 * 4

    def peak(run, *outs) -> int:
        run(list(arrays), None, *outs)
        tracemalloc.start()
        run(list(arrays), None, *outs)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top
    outs = buffers(kernel.op, 512)
    # less a kilobyte: tracemalloc also counts the small Python objects of a call,
    # which can differ by a few bytes between the two (seen: 24, after other tests)
    saved = size - 1024
    assert peak(out_of_place(kernel, into), outs) - peak(kernel._compiled(into), outs) >= saved
    assert peak(out_of_place(kernel, ())) - peak(kernel._compiled(())) >= saved


def test_four_threads_call_one_in_place_plan_at_once(compiler):
    body, types_of = CASES["full reduction"]
    types = types_of("N")
    module, _ = fused(function("f", types, body))
    plan = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))
    inputs = [arrays_for(types, 32 + 16 * k) for k in range(4)]
    kernel = kernel_of(compiler, body, types)
    want = [out_of_place(kernel, ())(operands(kernel, a), None) for a in inputs]
    errors = []

    def work(k):
        try:
            for _ in range(50):
                same_bits(plan(*inputs[k]), want[k])
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def _layer_norm_of_matmul(b, x, w):  # rows: the mean's phase and the variance's read it
    a = b.matmul(x, w)
    d = b.sub(a, b.mean(a, axis=(1,), keepdim=True))
    return b.mul(d, b.rsqrt(b.add(b.mean(b.mul(d, d), axis=(1,), keepdim=True),
                                  b.constant(1e-5))))


def _scaled_by_column_sum(b, g, w):  # columns: the sum's phase and the last read it
    a = b.matmul(g, w)
    return b.mul(a, b.sum(a, axis=(0,), keepdim=True))


NOT_IN_PLACE = {
    "read again after, in rows": (_layer_norm_of_matmul, [f32(8, 16), f32(16, 24)]),
    "read again after, in columns": (_scaled_by_column_sum, [f32(8, 16), f32(16, 24)]),
    "another dtype": (lambda b, x, w: b.gt(b.matmul(x, w), b.constant(0.0)),
                      [f32(8, 16), f32(16, 24)]),
    "code that can fail": (lambda b, x, w: b.div(b.matmul(x, w), b.constant(3, "i32")),
                           [TensorType("i32", [8, 16]), TensorType("i32", [16, 24])]),
}


@pytest.mark.parametrize("case", NOT_IN_PLACE)
def test_no_result_is_stored_in_place_where_that_is_unsafe(compiler, case):
    body, types = NOT_IN_PLACE[case]
    kernel = kernel_of(compiler, body, types)
    into = (True,) * len(kernel.op.results)
    assert kernel.in_place_result(into) is None and kernel.in_place_result(()) is None


YIELDED_TWICE = """
func @f(%x: f32[8,16], %w: f32[16,24], %c: f32[24]) -> (f32[8,24], f32[8,24]) {
  %y, %z = fused %x, %w, %c : (f32[8,24], f32[8,24]) {
  ^anchor(%x1: f32[8,16], %w1: f32[16,24]):
    %a = matmul %x1, %w1 : f32[8,24]
    yield %a
  } {
  ^body(%a1: f32, %c1: f32):
    %s = add %a1, %c1 : f32
    yield %s, %s
  }
  return %y, %z
}
"""


BROADCAST = """
func @f(%x: f32[1,16], %w: f32[16,24], %c: f32[8,24]) -> f32[8,24] {
  %y = fused %x, %w, %c : f32[8,24] {
  ^anchor(%x1: f32[1,16], %w1: f32[16,24]):
    %a = matmul %x1, %w1 : f32[1,24]
    yield %a
  } {
  ^body(%a1: f32, %c1: f32):
    %s = add %a1, %c1 : f32
    yield %s
  }
  return %y
}
"""


@pytest.mark.parametrize("text", [YIELDED_TWICE, BROADCAST], ids=["yielded twice", "broadcast"])
def test_a_value_yielded_twice_or_a_broadcast_anchor_is_not_stored_in_place(compiler, text):
    module = parse(text)
    verify(module)
    (op,) = [op for op in module.walk() if op.name == "fused"]
    kernel = FusedKernel(op, compiler, min_elements=0)
    into = (True,) * len(op.results)
    assert kernel.in_place_result(into) is None and kernel.in_place_result(()) is None
    x, w, c = (normal(*v.type.shape) for v in op.operands)
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, w, c)
    for y in got:
        np.testing.assert_array_equal(y, x @ w + c)


def test_specs_refuse_unsafe_in_place_pairs(compiler):
    spec = KernelSpec(("f32", "f32"), ((False,), (True,)), (Instr("add", (0, 1), "f32"),),
                      (2,), 1)
    dataclasses.replace(spec, inplace=((0, 0),))
    with pytest.raises(ValueError, match="in place"):
        dataclasses.replace(spec, inplace=((0, 1),))  # input 1 is broadcast
    fused_spec = kernel_of(compiler, _layer_norm_of_matmul, [f32(8, 16), f32(16, 24)]).spec
    with pytest.raises(ValueError, match="reads the input after"):
        dataclasses.replace(fused_spec, inplace=((0, 0),))


def test_an_in_place_kernel_refuses_overlapping_or_read_only_anchors(compiler):
    body, types_of = CASES["elementwise"]
    kernel = kernel_of(compiler, body, types_of(64))
    code = kernel._variant(0)
    x = normal(64, 40)
    with pytest.raises(ShapeError, match="writable"):
        code(np.broadcast_to(x, x.shape), normal(40))
    with pytest.raises(ShapeError, match="overlaps"):
        code(x, x[0])


def test_the_anchor_is_quiet_and_its_wrapped_run_leaves_warnings_to_the_caller(compiler):
    """An overflow in the matmul warns nowhere: the run silences it, its
    ``__wrapped__`` (what a plan runs inside its one silencing) does not."""
    body, types_of = CASES["elementwise"]
    kernel = kernel_of(compiler, body, types_of(64))
    big = [np.full((64, 48), 1e30, np.float32), np.full((48, 40), 1e30, np.float32),
           normal(40)]
    run = kernel.evaluator()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (quiet,) = run(list(big), None)
        with np.errstate(all="ignore"):
            (unsilenced,) = run.__wrapped__(list(big), None)
        with pytest.raises(RuntimeWarning, match="overflow"):
            run.__wrapped__(list(big), None)
    assert np.isinf(quiet).all() and np.array_equal(quiet, unsilenced)


@pytest.mark.parametrize("n", [64, "N"])
def test_a_body_with_reductions_refuses_given_buffers_that_overlap(compiler, n):
    """Only the arrays made for the call are left out of the overlap checks: a given
    buffer that is an input's memory, or another given buffer's, is refused, whether
    the anchor computes into it or not."""
    body, types_of = CASES["full reduction"]
    kernel = kernel_of(compiler, body, types_of(n))
    h, w, c = arrays_for(types_of(n), 64)
    args = operands(kernel, [h, w, c])
    for into in [(True, True), (False, True)]:
        run = kernel.out_evaluator(into)
        new, diff = buffers(kernel.op, 64)
        given = [new, diff] if into[0] else [diff]
        run(list(args), [], given)  # disjoint buffers pass
        if into[0]:
            with pytest.raises(ShapeError, match="overlaps"):
                run(list(args), [], [h, diff])  # the anchor computes into an input
        with pytest.raises(ShapeError, match="overlaps"):
            run(list(args), [], [*given[:-1], h.reshape(-1)[:1].reshape(())])
        if into[0]:
            with pytest.raises(ShapeError, match="overlaps"):
                run(list(args), [], [new, new.reshape(-1)[5:6].reshape(())])


@pytest.mark.parametrize("n", [64, "N"])
def test_a_body_with_reductions_refuses_wrong_operands_and_buffers(compiler, n):
    """The static shapes' one comparison per operand still refuses another dtype,
    rank or size, and takes non-contiguous operands (copied), and so does the
    general path of symbolic shapes."""
    body, types_of = CASES["full reduction"]
    kernel = kernel_of(compiler, body, types_of(n))
    h, w, c = arrays_for(types_of(n), 64)
    run = kernel.out_evaluator((True, True))
    body_run = kernel._compiled((True, True))  # past the small-call test: the code's
    for bad in ([h.astype(np.float64), w, c], [h, w, c[:39]], [h, w, c[None]]):
        with pytest.raises(ShapeError):
            body_run(operands(kernel, bad), [], buffers(kernel.op, 64))
    with pytest.raises(ShapeError, match="buffer given"):
        body_run(operands(kernel, [h, w, c]), [],
                 [buffers(kernel.op, 64)[0], np.empty((), np.float64)])
    strided = np.asfortranarray(h)
    got = run(operands(kernel, [strided, w, c]), [], buffers(kernel.op, 64))
    want = run(operands(kernel, [h, w, c]), [], buffers(kernel.op, 64))
    for g, v in zip(got, want):  # the BLAS may add a Fortran-order operand otherwise
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-6)
