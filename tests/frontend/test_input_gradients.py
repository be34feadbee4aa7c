"""``backward()`` inside a compiled function gives its inputs that require a gradient
what eager code gives them: the program returns each input's gradient and the call
adds it to the caller's tensor's ``.grad`` (before, such an input kept its old
gradient: a silent wrong answer)."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ConversionError

BACKENDS = ["numpy", "llvm"]


def leaf(values, grad=None):
    t = paddle.to_tensor(np.asarray(values, np.float32), stop_gradient=False)
    if grad is not None:
        (t * paddle.to_tensor(np.asarray(grad, np.float32))).sum().backward()
    return t


def grads_after(fn, calls, make_inputs):
    """The inputs' gradients after `calls` calls of `fn` on the same inputs."""
    inputs = make_inputs()
    for _ in range(calls):
        fn(*inputs)
    return [None if t.grad is None else t.grad.numpy() for t in inputs]


def agree(fn, make_inputs, backend, calls=2):
    compiled = paddle.jit.to_static(fn, backend=backend)
    want = grads_after(fn, calls, make_inputs)
    got = grads_after(compiled, calls, make_inputs)
    for w, g in zip(want, got):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backward_reaches_an_input_and_accumulates_across_calls(backend):
    def f(w):
        (w * w).sum().backward()
        return w * 1.0
    agree(f, lambda: [leaf([1.0, -2.0, 3.0])], backend, calls=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_value_computed_without_gradient_weights_the_input(backend):
    def f(w):
        with paddle.no_grad():
            z = w * 3
        (z * w).sum().backward()
        return z
    agree(f, lambda: [leaf([1.0, 2.0])], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_backwards_add_up_and_add_to_the_gradient_the_input_had(backend):
    def f(w, x):
        (w * x).sum().backward()
        (w * w * 3.0).sum().backward()
        return x
    agree(f, lambda: [leaf([1.0, 2.0], grad=[5.0, 7.0]), leaf([0.5, -1.0])], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_and_parameters_both_get_their_gradients(backend):
    paddle.seed(0)
    model = nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    start = {k: v.numpy().copy() for k, v in model.state_dict().items()}

    def step(x):
        loss = (model(x * x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    results = []
    for fn in (step, paddle.jit.to_static(step, backend=backend)):
        model.set_state_dict({k: paddle.to_tensor(v) for k, v in start.items()})
        x = leaf([[1.0, -1.0, 0.5], [2.0, 0.0, -3.0]])
        losses = [float(fn(x)) for _ in range(2)]
        results.append((losses, x.grad.numpy(), model.weight.numpy()))
    (l1, g1, w1), (l2, g2, w2) = results
    np.testing.assert_allclose(l2, l1, rtol=1e-6)
    np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w2, w1, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_that_exists_on_some_runs_only(backend):
    """The input is used in one branch of a tensor-dependent `if`: on the runs that
    take the other branch, its gradient stays as it was (None here)."""
    def f(w, x):
        if x.sum() > 0:
            y = w * x
        else:
            y = x * 2.0
        y.sum().backward()
        return y
    for sign in (1.0, -1.0):
        agree(f, lambda: [leaf([1.0, 2.0]), leaf([sign, 3.0 * sign])], backend)


def test_reading_an_inputs_gradient_inside_is_refused():
    def f(w):
        (w * w).sum().backward()
        return w.grad * 1.0
    with pytest.raises(ConversionError, match="gradient of one of its inputs"):
        paddle.jit.to_static(f)(leaf([1.0, 2.0]))


def test_backward_reaching_an_input_inside_an_if_is_refused():
    def f(w, x):
        loss = (w * x).sum()
        if x.sum() > 0:
            loss.backward()
        return x
    with pytest.raises(ConversionError, match="inside a tensor-dependent `if`"):
        paddle.jit.to_static(f)(leaf([1.0, 2.0]), leaf([1.0, 1.0]))
