"""Reverse-mode autodiff on generated programs (tests/support/programs.py): `grad`
gives verified IR that returns the original results unchanged and gradients equal
to central finite differences of the NumPy reference, in float64.

Finite differences are only meaningful where the program is smooth around the
input: the reference lists every discrete decision it makes (branches, trip counts,
relu/abs/compare masks, positions of maxima, integer casts), and an example whose
perturbed inputs change any of them is skipped. Each gradient entry must be within
1e-6 of its finite difference, relative to the largest finite difference (or to 1
when all are smaller). A symbolic N takes one of its sizes per example.
"""
import numpy as np
from hypothesis import assume, given

from irflow.codegen import run
from irflow.ir import Module, all_ops, is_registered, parse, verify
from irflow.passes.autodiff import grad, vjp_split
from tests.support.programs import programs, random_program, seeds

EPS = 1e-6
RTOL = 1e-6

# Every differentiable op the generator must keep emitting. Smooth programs use all
# but the kinks; programs with kinks use every one.
SMOOTH_DIFFERENTIABLE = {
    "neg", "exp", "tanh", "sigmoid", "sin", "cos", "erf", "sqrt", "log", "rsqrt",
    "stop_gradient", "add", "sub", "mul", "div", "pow", "sum", "mean", "prod", "matmul",
    "reshape", "transpose", "broadcast_to", "unsqueeze", "squeeze", "slice", "set_slice",
    "concat", "stack", "gather", "scatter_add", "take_along_axis", "put_along_axis", "pad",
    "cond", "while",
}
DIFFERENTIABLE = SMOOTH_DIFFERENTIABLE | {
    "abs", "relu", "maximum", "minimum", "select", "max", "min", "cast", "floor", "ceil",
    "round", "sign",
}
# Ops with a VJP that the generator does not emit, and why.
NOT_GENERATED = {
    "conv2d": "4-D NCHW ops need their own inputs; tests/ops/test_conv_pool.py checks them",
    "max_pool2d": "4-D NCHW, see conv2d",
    "avg_pool2d": "4-D NCHW, see conv2d",
    "adaptive_avg_pool2d": "4-D NCHW, see conv2d",
    **{name: "4-D NCHW, see conv2d; tests/ops/test_pool_double_backward_s13.py checks its "
             "gradient (a second derivative through the pool) against finite differences"
       for name in ("max_pool2d_grad", "avg_pool2d_grad", "adaptive_avg_pool2d_grad")},
    "conv2d_grad_input": "4-D NCHW, see conv2d (Conv2DTranspose's op); tests/nn checks it",
    "call": "runs a compiled program from a process-local table; only the frontend builds it",
    "mod": "jumps wherever x / y crosses an integer, which finite differences cannot "
           "straddle; tests/tensor/test_math.py checks its gradient away from the jumps",
    "as_shape": "an identity that only a cond whose branches give different sizes needs; "
                "tests/frontend/test_conversion.py checks gradients through it",
    "match_shape": "an identity checked at run time, which only a trace that combines "
                   "sizes known at run time makes; tests/frontend/test_shapes.py checks "
                   "gradients through it",
    **{name: "takes or gives lists, which the generator's programs do not carry; "
             "tests/ops/test_list.py checks its gradient against finite differences"
       for name in ("list_append", "list_get", "list_stack", "list_set", "list_write",
                    "list_pop", "list_unstack", "list_add", "list_slice", "list_unslice",
                    "list_concat")},
    **{name: "added with the Paddle tensor ops of issue 13; tests/ops/test_scan_matrix.py "
             "checks its gradient against finite differences"
       for name in ("cumsum", "cumprod", "tril", "triu", "einsum", "roll")},
    **{name: "defined on part of the line (asin, acos and atanh on [-1, 1], acosh from 1, "
             "tan between its poles), which the generator's operands do not keep to; "
             "tests/tensor/test_trig.py checks its gradient against finite differences"
       for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                    "atanh", "atan2")},
    **{name: "takes square (or positive definite) matrices, which the generator's operands "
             "are not; tests/tensor/test_linalg_special.py checks its gradient against "
             "finite differences"
       for name in ("inverse", "det", "slogdet", "solve", "cholesky")},
    **{name: "a factorization whose gradient needs distinct eigen or singular values "
             "(and, for qr, a full-rank matrix), which the generator's operands do not "
             "keep to; tests/tensor/test_linalg_decompositions.py checks its gradient "
             "against finite differences"
       for name in ("qr", "eigh", "svd")},
    "lu": "a factorization whose pivots change where two candidates tie, and whose "
          "gradient needs nonzero pivots, which the generator's operands do not keep to; "
          "tests/tensor/test_breadth_s13.py checks its gradient against finite differences",
    **{name: "defined on part of the line (lgamma and digamma have poles, erfinv lives on "
             "[-1, 1]), which the generator's operands do not keep to; "
             "tests/tensor/test_linalg_special.py checks its gradient against finite "
             "differences"
       for name in ("lgamma", "digamma", "erfinv")},
    "expm1": "added with the special functions after the generator's op table; "
             "tests/tensor/test_linalg_special.py checks its gradient against finite "
             "differences",
}


def coverage(**options) -> set[str]:
    ops: set[str] = set()
    for seed in range(300):
        ops |= random_program(seed, **options).ops
    return ops


def test_the_generator_emits_every_differentiable_op():
    smooth = coverage(dtype="float64", smooth_only=True, scalar_output=True)
    assert SMOOTH_DIFFERENTIABLE - smooth == set()
    assert smooth & (DIFFERENTIABLE - SMOOTH_DIFFERENTIABLE) == set(), "kinks in smooth programs"
    assert DIFFERENTIABLE - coverage(dtype="float64", scalar_output=True) == set()


def test_every_op_with_a_vjp_is_generated_or_excused():
    with_vjp = {op.name for op in all_ops() if op.vjp is not None}
    assert with_vjp - DIFFERENTIABLE - set(NOT_GENERATED) == set(), (
        "add these ops to tests/support/programs.py (or to NOT_GENERATED, with a reason)")
    registered = {name for name in NOT_GENERATED if is_registered(name)}
    assert registered <= with_vjp, "NOT_GENERATED names ops without a VJP"


def finite_differences(program, inputs, wrt, expected):
    """Central differences of the reference's scalar output, element by element, with
    stop_gradient results held constant; skips the example if a perturbation changes
    a discrete decision."""
    def loss(arrays):
        evaluation = program.evaluate(*arrays, frozen=expected.frozen)
        assume(evaluation.events == expected.events)
        return float(evaluation.outputs[0])

    grads = []
    for i in wrt:
        fd = np.zeros(inputs[i].shape)
        for k in range(inputs[i].size):
            arrays = [a.copy() for a in inputs]
            arrays[i].reshape(-1)[k] += EPS
            up = loss(arrays)
            arrays[i].reshape(-1)[k] -= 2 * EPS
            fd.reshape(-1)[k] = (up - loss(arrays)) / (2 * EPS)
        grads.append(fd)
    return grads


def check_grad(program, seed):
    fn = program.function
    wrt = program.float_args
    g = grad(fn, wrt)
    text = str(Module([g]))
    assert str(parse(text)) == text
    verify(parse(text))
    n = program.sizes[seed % len(program.sizes)]
    inputs = program.inputs(seed, n)
    expected = program.evaluate(*inputs)
    results = run(g, *inputs)
    forward = run(fn, *inputs)
    assert len(results) == len(forward) + len(wrt)
    for got, want in zip(results, forward):
        np.testing.assert_array_equal(got, want, strict=True,
                                      err_msg="grad changed the function's results")
    # a decision between two values equal but for rounding (the means of x and of its
    # transpose, summed in other orders) may go another way in the interpreter than in
    # the reference, whose finite differences then measure the other branch; the
    # forward results agreeing says the two took one smooth piece (the forward
    # semantics themselves are the other property tests')
    assume(all(np.allclose(f, e, rtol=1e-9, atol=1e-12)
               for f, e in zip(forward, expected.outputs)))
    grads = results[len(forward):]
    fds = finite_differences(program, inputs, wrt, expected)
    scale = max([1.0] + [float(np.max(np.abs(fd), initial=0)) for fd in fds])
    for i, got, fd in zip(wrt, grads, fds):
        assert got.dtype == inputs[i].dtype and got.shape == inputs[i].shape
        np.testing.assert_allclose(got, fd, rtol=0, atol=RTOL * scale,
                                   err_msg=f"gradient of argument {i}, N={n}")


@given(programs(dtype="float64", smooth_only=True, scalar_output=True), seeds)
def test_grad_of_smooth_programs_matches_finite_differences(program, seed):
    check_grad(program, seed)


@given(programs(dtype="float64", scalar_output=True), seeds)
def test_grad_through_kinks_matches_finite_differences(program, seed):
    check_grad(program, seed)


@given(programs(dtype="float64", scalar_output=True), seeds)
def test_a_gradient_that_does_not_exist_is_zero(program, seed):
    """`vjp_split`'s backward says which gradients exist on the run (a branch not
    taken, a loop that did not run, may use an argument alone); one that does not
    must be zeros, or a flag would drop a real gradient."""
    fn, wrt = program.function, program.float_args
    forward, backward, defined = vjp_split(fn, wrt, [0])
    inputs = program.inputs(seed, program.sizes[seed % len(program.sizes)])
    values = run(forward, *inputs)
    results = run(backward, np.ones_like(values[0]), *values[len(fn.result_types):])
    for k, exists in zip(defined, results[len(wrt):]):
        if not exists:
            np.testing.assert_array_equal(results[k], 0, err_msg=f"argument {wrt[k]}")


def test_generated_programs_have_gradients_that_exist_on_some_runs_only():
    flagged = sum(bool(vjp_split(p.function, p.float_args, [0])[2]) for p in (
        random_program(seed, dtype="float64", scalar_output=True) for seed in range(40)))
    assert flagged >= 10


def test_grad_of_a_loop_whose_body_reads_no_carried_value():
    """The loop records nothing per iteration: its stack holds records of no
    values (found by the generator; stack_pop once returned a 1-tuple here)."""
    module = parse("""
func @f(%x: f64, %n: i64) -> f64 {
  %i0 = const {value=0} : i64
  %k, %y = while %x, %n, %i0, %x : (i64, f64) {
  ^cond(%c: f64, %m: i64, %i: i64, %v: f64):
    %p = lt %i, %m : bool
    condition %p
  } {
  ^body(%c: f64, %m: i64, %i: i64, %v: f64):
    %one = const {value=1} : i64
    %i1 = add %i, %one : i64
    %t = tanh %c : f64
    yield %i1, %t
  }
  return %y
}""")
    g = grad(module.main, [0])
    y, dx = run(g, np.float64(0.5), np.int64(2))
    assert y == np.tanh(0.5)
    np.testing.assert_allclose(dx, 1 - np.tanh(0.5) ** 2, rtol=1e-12)
