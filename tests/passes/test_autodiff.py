"""Reverse-mode autodiff (irflow.passes.autodiff.grad): IR in, gradient IR out, checked
against hand-derived gradients and central finite differences in float64."""
import numpy as np
import pytest

from irflow.codegen import run
from irflow.errors import IrflowError
from irflow.ir import Module, TensorType, function, parse, verify
from irflow.passes.autodiff import grad, vjp_split


def f64(*shape):
    return TensorType("f64", shape)


def finite_differences(fn, args, index, eps=1e-6, output=0):
    """d result[output] / d args[index] by central differences (result must be scalar)."""
    x = np.array(args[index], dtype=np.float64)
    out = np.zeros_like(x)
    for k in range(x.size):
        for sign in (1, -1):
            shifted = x.copy()
            shifted.reshape(-1)[k] += sign * eps
            call = list(args)
            call[index] = shifted
            out.reshape(-1)[k] += sign * float(run(fn, *call)[output])
    return out / (2 * eps)


def check_against_fd(fn, args, wrt, rtol=1e-6, atol=1e-9):
    g = grad(fn, wrt)
    results = run(g, *args)
    n_out = len(fn.result_types)
    np.testing.assert_allclose(results[0], run(fn, *args)[0], rtol=1e-12)
    for i, gi in zip(wrt, results[n_out:]):
        np.testing.assert_allclose(gi, finite_differences(fn, args, i), rtol=rtol, atol=atol,
                                   err_msg=f"gradient w.r.t. argument {i}")
    return g


def test_gradient_ir_of_a_small_function():
    fn = parse("""
func @f(%x: f64[3], %w: f64[3]) -> f64 {
  %y = mul %x, %w : f64[3]
  %t = tanh %y : f64[3]
  %l = sum %t : f64
  return %l
}""").main
    g = grad(fn, [1])
    assert str(g) == str(parse("""
func @f_grad(%x: f64[3], %w: f64[3]) -> (f64, f64[3]) {
  %y = mul %x, %w : f64[3]
  %t = tanh %y : f64[3]
  %l = sum %t : f64
  %0 = const {value=1.0} : f64
  %1 = reshape %0 {shape=[1]} : f64[1]
  %2 = broadcast_to %1 {shape=[3]} : f64[3]
  %3 = const {value=1.0} : f64
  %4 = mul %t, %t : f64[3]
  %5 = sub %3, %4 : f64[3]
  %6 = mul %2, %5 : f64[3]
  %7 = mul %6, %x : f64[3]
  return %l, %7
}""").main)


def test_values_used_several_times_accumulate():
    fn = function("f", [f64(4)], lambda b, x: b.sum(b.add(b.mul(x, x), x)))
    x = np.array([1.0, -2.0, 0.5, 3.0])
    _, gx = run(grad(fn, [0]), x)
    np.testing.assert_allclose(gx, 2 * x + 1)


def test_work_that_reaches_no_requested_gradient_is_not_emitted():
    def body(b, x, y):
        return b.add(b.sum(b.exp(x)), b.sum(b.tanh(y)))
    g = grad(function("f", [f64(3), f64(3)], body), [0])
    # tanh's VJP (1 - t*t) would need a sub; only exp's VJP (a mul) is there.
    assert [op.name for op in g.walk()].count("sub") == 0
    assert check_against_fd(function("f", [f64(3), f64(3)], body),
                            [np.ones(3), np.ones(3)], [0])


def test_softmax_cross_entropy_matches_the_hand_derived_gradient():
    n, c = 5, 4

    def body(b, logits, onehot):
        m = b.max(logits, axis=1, keepdim=True)
        shifted = b.sub(logits, m)
        logsumexp = b.log(b.sum(b.exp(shifted), axis=1, keepdim=True))
        log_probs = b.sub(shifted, logsumexp)
        per_row = b.neg(b.sum(b.mul(onehot, log_probs), axis=1))
        return b.mean(per_row)
    fn = function("xent", [f64(n, c), f64(n, c)], body)
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((n, c))
    onehot = np.eye(c)[rng.integers(0, c, n)]
    _, g = run(grad(fn, [0]), logits, onehot)
    softmax = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(g, (softmax - onehot) / n, rtol=1e-12, atol=1e-15)


def test_layer_norm_matches_the_hand_derived_gradient():
    n, d, eps = 3, 6, 1e-5

    def body(b, x, gamma, beta, w):
        mu = b.mean(x, axis=1, keepdim=True)
        xc = b.sub(x, mu)
        var = b.mean(b.mul(xc, xc), axis=1, keepdim=True)
        xhat = b.mul(xc, b.rsqrt(b.add(var, b.constant(eps, "float64"))))
        y = b.add(b.mul(xhat, gamma), beta)
        return b.sum(b.mul(y, w))
    fn = function("ln", [f64(n, d), f64(d), f64(d), f64(n, d)], body)
    rng = np.random.default_rng(1)
    x, gamma, beta, w = (rng.standard_normal(s) for s in [(n, d), (d,), (d,), (n, d)])
    _, gx, ggamma, gbeta = run(grad(fn, [0, 1, 2]), x, gamma, beta, w)
    sigma = np.sqrt(x.var(1, keepdims=True) + eps)
    xhat = (x - x.mean(1, keepdims=True)) / sigma
    dxhat = w * gamma
    expected_dx = (dxhat - dxhat.mean(1, keepdims=True)
                   - xhat * (dxhat * xhat).mean(1, keepdims=True)) / sigma
    np.testing.assert_allclose(gx, expected_dx, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ggamma, (w * xhat).sum(0), rtol=1e-12)
    np.testing.assert_allclose(gbeta, w.sum(0), rtol=1e-12)


def test_matmul_mlp_against_finite_differences():
    def body(b, x, w1, b1, w2):
        h = b.tanh(b.add(b.matmul(x, w1), b1))
        return b.mean(b.mul(b.matmul(h, w2), b.matmul(h, w2)))
    fn = function("mlp", [f64(4, 3), f64(3, 5), f64(5), f64(5, 2)], body)
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s) for s in [(4, 3), (3, 5), (5,), (5, 2)]]
    check_against_fd(fn, args, [0, 1, 2, 3])


COND_CAPTURE = """
func @f(%x: f64[3], %w: f64[3]) -> f64 {
  %s = sum %x : f64
  %zero = const {value=0.0} : f64
  %p = gt %s, %zero : bool
  %y = cond %p, %x, %w : f64[3] {
  ^then(%a: f64[3], %v: f64[3]):
    %e = mul %a, %v : f64[3]
    %t = tanh %e : f64[3]
    yield %t
  } {
  ^else(%a: f64[3], %v: f64[3]):
    %e = exp %a : f64[3]
    yield %e
  }
  %l = sum %y : f64
  return %l
}"""


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_gradients_include_captured_values(sign):
    fn = parse(COND_CAPTURE).main
    rng = np.random.default_rng(3)
    x = sign * (np.abs(rng.standard_normal(3)) + 0.1)
    w = rng.standard_normal(3)
    g = check_against_fd(fn, [x, w], [0, 1])
    backward = [op for op in g.walk() if op.name == "cond"][-1]
    assert backward.operands[0] is next(op for op in g.walk() if op.name == "gt").result
    _, gx, gw = run(g, x, w)
    if sign < 0:  # the else branch does not read w: its gradient is exactly zero
        np.testing.assert_array_equal(gw, 0)


def split_gradients(fn, wrt, args):
    """The gradients of result 0 by `vjp_split` (run forward, then backward with a
    cotangent of ones), and the bools it returns for those that exist on some runs
    only, by position in `wrt`."""
    forward, backward, defined = vjp_split(fn, wrt, [0])
    values = run(forward, *args)
    n = len(fn.result_types)
    results = run(backward, np.ones_like(values[0]), *values[n:])
    return results[:len(wrt)], dict(zip(defined, results[len(wrt):]))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_cotangent_only_one_branch_gives_exists_when_that_branch_runs(sign):
    """Eager code leaves the gradient of a value only the branch not taken uses None;
    the backward says which branch gave one: %w only where the then branch ran, %x
    always (both branches use it)."""
    x = sign * np.array([0.5, 1.0, 2.0])
    (gx, gw), defined = split_gradients(parse(COND_CAPTURE).main, [0, 1],
                                        [x, np.array([0.3, -0.2, 0.1])])
    assert list(defined) == [1] and defined[1] == (sign > 0)
    assert np.any(gw) == (sign > 0) and np.all(gx != 0)


LOOP_INVARIANT = """
func @f(%x: f64[3], %w: f64[3], %n: i64) -> f64 {
  %i0 = const {value=0} : i64
  %i, %h = while %w, %n, %i0, %x : (i64, f64[3]) {
  ^cond(%ww: f64[3], %m: i64, %j: i64, %a: f64[3]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%ww: f64[3], %m: i64, %j: i64, %a: f64[3]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %t = mul %a, %ww : f64[3]
    %a1 = tanh %t : f64[3]
    yield %j1, %a1
  }
  %l = sum %h : f64
  return %l
}"""


@pytest.mark.parametrize("trips", [0, 2])
def test_a_cotangent_only_a_loop_body_gives_exists_once_the_body_ran(trips):
    x, w = np.array([0.5, -1.0, 2.0]), np.array([0.9, 1.1, -0.3])
    (gx, gw), defined = split_gradients(parse(LOOP_INVARIANT).main, [0, 1],
                                        [x, w, np.int64(trips)])
    assert list(defined) == [1] and defined[1] == (trips > 0)  # %x's always exists
    if trips == 0:
        np.testing.assert_array_equal(gx, np.ones(3))
        np.testing.assert_array_equal(gw, 0)


def test_an_argument_no_path_reaches_has_no_gradient():
    """A compiled call has every parameter as an operand; one that no path from the
    outputs reaches (its result stopped) has no gradient, as eagerly."""
    fn = function("f", [f64(3), f64(3)],
                  lambda b, x, w: b.sum(b.mul(x, b.stop_gradient(b.exp(w)))))
    (gx, gw), defined = split_gradients(fn, [0, 1], [np.ones(3), np.ones(3)])
    assert defined == {1: False}
    np.testing.assert_allclose(gx, np.exp(1.0) * np.ones(3))


def test_gradients_the_sweep_always_gives_carry_no_flag():
    """Where no cotangent's existence depends on the run (a cond whose branches both
    read %w), the backward returns no flag."""
    both = COND_CAPTURE.replace("%e = exp %a : f64[3]", "%e = mul %v, %a : f64[3]")
    forward, backward, defined = vjp_split(parse(both).main, [0, 1], [0])
    assert defined == ()
    assert "bool" not in " ".join(str(t) for t in backward.result_types)


def _fixpoint_module(dim):
    """h <- tanh(h @ W + b) until no element moves by more than tol (at most 50 steps)."""
    def body(b, x, w, bias, tol):
        limit = b.constant(50, "int64")

        def keep_going(b, w, bias, tol, limit, i, h, delta):
            return b.logical_and(b.lt(i, limit), b.gt(delta, tol))

        def step(b, w, bias, tol, limit, i, h, delta):
            new = b.tanh(b.add(b.matmul(h, w), bias))
            moved = b.max(b.abs(b.sub(new, h)))
            return [b.add(i, b.constant(1, "int64")), new, moved]

        big = b.constant(np.inf, "float64")
        i0 = b.constant(0, "int64")
        steps, h, _ = b.while_loop([w, bias, tol, limit], [i0, x, big], keep_going, step)
        return [b.sum(b.mul(h, h)), steps]
    return function("fixpoint", [f64(2, dim), f64(dim, dim), f64(dim), f64()], body)


def test_while_with_data_dependent_trip_count_gets_exact_gradients():
    dim = 4
    fn = _fixpoint_module(dim)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, dim))
    w = 0.4 * rng.standard_normal((dim, dim))
    bias = 0.1 * rng.standard_normal(dim)
    tol = np.float64(1e-4)
    steps = run(fn, x, w, bias, tol)[1]
    assert 3 < steps < 50  # the tolerance, not the cap, ends the loop
    for i, arg in enumerate([x, w, bias]):  # a perturbation must not change the trip count
        for sign in (1, -1):
            call = [x, w, bias, tol]
            call[i] = arg + sign * 1e-6
            assert run(fn, *call)[1] == steps
    g = check_against_fd(fn, [x, w, bias, tol], [0, 1, 2], rtol=1e-6)
    verify(g)


def test_each_iteration_records_only_what_the_body_gradient_reads():
    g = grad(_fixpoint_module(3), [1])
    stacks = {str(op.result.type) for op in g.walk() if op.name == "stack_new"}
    # The carried h; not the counter, not the movement (no VJP reads them).
    assert stacks == {"stack<f64[2,3]>"}


def test_nested_while_inside_cond_inside_while():
    text = """
func @f(%x: f64[2], %n: i64) -> f64 {
  %i0 = const {value=0} : i64
  %i, %h = while %n, %i0, %x : (i64, f64[2]) {
  ^cond(%m: i64, %j: i64, %a: f64[2]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f64[2]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %s = sum %a : f64
    %zero = const {value=0.0} : f64
    %p = gt %s, %zero : bool
    %a1 = cond %p, %a : f64[2] {
    ^then(%u: f64[2]):
      %c = const {value=0.5} : f64
      %lim = const {value=3.0} : f64
      %v = while %c, %lim, %u : f64[2] {
      ^cond(%cc: f64, %ll: f64, %q: f64[2]):
        %sq = mul %q, %q : f64[2]
        %tot = sum %sq : f64
        %go = lt %tot, %ll : bool
        condition %go
      } {
      ^body(%cc: f64, %ll: f64, %q: f64[2]):
        %q1 = sin %q : f64[2]
        %q2 = add %q1, %q : f64[2]
        %q3 = add %q2, %cc : f64[2]
        yield %q3
      }
      yield %v
    } {
    ^else(%u: f64[2]):
      %v = sigmoid %u : f64[2]
      yield %v
    }
    yield %j1, %a1
  }
  %sq = mul %h, %h : f64[2]
  %l = sum %sq : f64
  return %l
}"""
    fn = parse(text).main
    for x in ([0.3, 0.2], [-0.4, 0.1], [0.05, -0.01]):
        check_against_fd(fn, [np.array(x), np.int64(3)], [0], rtol=1e-6)


def test_non_differentiable_ops_pass_no_gradient():
    def body(b, x):
        idx = b.argmax(x)
        mask = b.cast(b.gt(x, b.constant(0.0, "float64")), dtype="float64")
        return b.add(b.sum(b.mul(mask, x)), b.cast(idx, dtype="float64"))
    x = np.array([1.0, -2.0, 3.0])
    _, gx = run(grad(function("f", [f64(3)], body), [0]), x)
    np.testing.assert_allclose(gx, [1.0, 0.0, 1.0])


def test_provided_cotangent_and_non_scalar_output():
    fn = function("f", [f64(3)], lambda b, x: b.exp(x))
    g = grad(fn, [0], cotangent=True)
    assert [str(a.type) for a in g.args] == ["f64[3]", "f64[3]"]
    x, ct = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    _, gx = run(g, x, ct)
    np.testing.assert_allclose(gx, ct * np.exp(x))


def test_errors_name_what_cannot_be_differentiated():
    fn = function("f", [TensorType("i64", [3]), f64(3)],
                  lambda b, i, x: [b.sum(i), b.sum(x)])
    with pytest.raises(IrflowError, match=r"result 0 of @f is i64; only float results"):
        grad(fn, [1], output=0)
    with pytest.raises(IrflowError, match=r"argument 0 of @f \(i64\[3\]\)"):
        grad(fn, [0], output=1)
    with pytest.raises(IrflowError, match="has 2 result"):
        grad(fn, [1], output=5)


def test_gradient_function_round_trips_through_text():
    g = grad(_fixpoint_module(3), [0, 1, 2])
    text = str(Module([g]))
    assert str(parse(text)) == text
    verify(parse(text))


def test_conv2d_matches_the_hand_derived_gradient():
    """d sum(w_out * conv(x, k)) by direct correlation sums (stride 2, padding 1)."""
    n, c, h, w, co, kh, kw, stride, pad = 2, 3, 5, 6, 4, 3, 2, 2, 1

    def body(b, x, k, weights):
        y = b.conv2d(x, k, stride=stride, padding=pad)
        return b.sum(b.mul(y, weights))
    out_h = (h + 2 * pad - kh) // stride + 1
    out_w = (w + 2 * pad - kw) // stride + 1
    fn = function("conv", [f64(n, c, h, w), f64(co, c, kh, kw), f64(n, co, out_h, out_w)], body)
    rng = np.random.default_rng(7)
    x, k = rng.standard_normal((n, c, h, w)), rng.standard_normal((co, c, kh, kw))
    g = rng.standard_normal((n, co, out_h, out_w))
    _, dx, dk = run(grad(fn, [0, 1]), x, k, g)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    expected_dk = np.zeros_like(k)
    expected_dxp = np.zeros_like(xp)
    for i in range(out_h):
        for j in range(out_w):
            window = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            expected_dk += np.einsum("no,nckl->ockl", g[:, :, i, j], window)
            expected_dxp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += \
                np.einsum("no,ockl->nckl", g[:, :, i, j], k)
    np.testing.assert_allclose(dk, expected_dk, rtol=1e-12)
    np.testing.assert_allclose(dx, expected_dxp[:, :, pad:pad + h, pad:pad + w], rtol=1e-12)


LOCATED = """
func @f(%x: f64[3], %w: f64[3], %n: i64) -> f64 {
  %a = mul %x, %w : f64[3]
  %b = mul %a, %x : f64[3]
  %p = const {value=0.0} : f64
  %s = sum %b : f64
  %c = gt %s, %p : bool
  %y = cond %c, %b : f64[3] {
  ^then(%v: f64[3]):
    %t = tanh %v : f64[3]
    yield %t
  } {
  ^else(%v: f64[3]):
    %e = exp %v : f64[3]
    yield %e
  }
  %i0 = const {value=0} : i64
  %k, %z = while %n, %i0, %y : (i64, f64[3]) {
  ^cond(%m: i64, %i: i64, %h: f64[3]):
    %go = lt %i, %m : bool
    condition %go
  } {
  ^body(%m: i64, %i: i64, %h: f64[3]):
    %one = const {value=1} : i64
    %i1 = add %i, %one : i64
    %h1 = sin %h : f64[3]
    yield %i1, %h1
  }
  %r = sum %z : f64
  return %r
}
"""


def test_every_op_of_a_gradient_carries_a_location_of_the_source():
    fn = parse(LOCATED, "model.irf").main
    source = {op.loc for op in fn.walk()}
    g = grad(fn, [0, 1])
    missing = [op.name for op in g.walk() if op.loc not in source]
    assert missing == []
    # the x * w products of the backward sit at the line of the forward product
    assert {op.loc.line for op in g.walk() if op.name == "mul"} >= {3, 4}
