"""Gradients through compiled calls inside eager autograd: a compiled call's outputs
require a gradient exactly when an input or captured tensor that requires one reaches
them, as in eager mode, and backward() through them gives eager's gradients."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from tests.nn.gradcheck import check_grads


def rand(*shape, seed=0, requires_grad=False):
    x = paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    x.stop_gradient = not requires_grad
    return x


def act(h):
    return F.relu(h) * 2.0 + paddle.tanh(h)


class Swish(nn.Layer):
    """A layer without parameters."""

    def forward(self, x):
        return x * F.sigmoid(x)


def test_plain_function_gives_its_input_a_gradient():
    compiled = paddle.jit.to_static(act)
    x = rand(3, 4, requires_grad=True)
    out = compiled(x)
    assert not out.stop_gradient
    paddle.sum(out * out).backward()
    got = x.grad.numpy()
    x.clear_gradient(set_to_zero=False)
    paddle.sum(act(x) * act(x)).backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_plain_function_gradients_match_finite_differences():
    def f(x, y):
        return paddle.tanh(x) * y + paddle.exp(-x * x)

    check_grads(paddle.jit.to_static(f), np.linspace(-1, 1, 6).reshape(2, 3),
                np.linspace(0.5, 2, 6).reshape(2, 3))


def test_layer_without_parameters_trains_the_layer_before_it():
    paddle.seed(0)
    fc = nn.Linear(4, 3)
    swish, compiled = Swish(), paddle.jit.to_static(Swish())
    x = rand(5, 4)
    grads = []
    for layer in (compiled, swish):
        loss = paddle.mean(layer(fc(x)) ** 2)
        loss.backward()
        grads.append((fc.weight.grad.numpy().copy(), fc.bias.grad.numpy().copy()))
        fc.clear_gradients(set_to_zero=False)
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_compiled_sub_function_inside_an_eager_model():
    paddle.seed(1)
    fc = nn.Linear(4, 4)
    compiled = paddle.jit.to_static(act)
    x = rand(3, 4, seed=2)
    grads = []
    for f in (compiled, act):
        h = fc(x)
        paddle.sum(h + f(h)).backward()
        grads.append(fc.weight.grad.numpy().copy())
        fc.clear_gradients(set_to_zero=False)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_inputs_and_parameters_both_get_gradients():
    paddle.seed(3)
    layer = nn.Linear(4, 2)
    compiled = paddle.jit.to_static(layer)
    x = rand(3, 4, requires_grad=True)
    grads = []
    for model in (compiled, layer):
        paddle.sum(F.gelu(model(x)) ** 2).backward()
        grads.append([x.grad.numpy().copy(), layer.weight.grad.numpy().copy(),
                      layer.bias.grad.numpy().copy()])
        x.clear_gradient(set_to_zero=False)
        layer.clear_gradients(set_to_zero=False)
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def several(x, y):
    return x * 2.0, y + 1.0, paddle.argmax(x, axis=1), x.detach() * y


def test_only_outputs_reached_by_a_gradient_require_one():
    compiled = paddle.jit.to_static(several)
    x, y = rand(2, 3, requires_grad=True), rand(2, 3, seed=1)
    eager = several(x, y)
    outs = compiled(x, y)
    assert [o.stop_gradient for o in outs] == [o.stop_gradient for o in eager] \
        == [False, True, True, True]
    assert outs[2].dtype == paddle.int64
    y.stop_gradient = False
    assert [o.stop_gradient for o in compiled(x, y)] == [False, False, True, False]


def test_backward_from_an_output_no_gradient_reaches_warns_as_in_eager():
    """As eagerly (docs/eager.md), backward() of a tensor needing no gradient warns
    and leaves every gradient as it was."""
    compiled = paddle.jit.to_static(several)
    x, y = rand(2, 3, requires_grad=True), rand(2, 3, seed=1)
    for run in (several, compiled):
        with pytest.warns(RuntimeWarning, match="stop_gradient=True"):
            paddle.sum(run(x, y)[1]).backward()
        assert x.grad is None


def test_paddle_grad_through_a_compiled_call():
    compiled = paddle.jit.to_static(act)
    x = rand(3, 4, requires_grad=True)
    h = x * 3.0
    (got,) = paddle.grad(paddle.sum(compiled(h) ** 2), h, retain_graph=True)
    (want,) = paddle.grad(paddle.sum(act(h) ** 2), h)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert x.grad is None


def test_no_grad_around_a_compiled_call_records_nothing():
    paddle.seed(4)
    layer = nn.Linear(4, 2)
    compiled = paddle.jit.to_static(layer)
    x = rand(3, 4, requires_grad=True)
    with paddle.no_grad():
        out = compiled(x)
    assert out.stop_gradient and out._node is None
    assert not compiled(x).stop_gradient


def test_same_compiled_function_with_and_without_gradients():
    compiled = paddle.jit.to_static(act)
    x = rand(3, 4)
    assert compiled(x).stop_gradient
    x.stop_gradient = False
    paddle.sum(compiled(x)).backward()
    want = np.where(x.numpy() > 0, 2.0, 0.0) + 1 - np.tanh(x.numpy()) ** 2
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)
    x.stop_gradient = True
    assert compiled(x).stop_gradient


def test_each_input_alone_then_both():
    def f(x, y):
        return x * y + x

    compiled = paddle.jit.to_static(f)
    for which in ((True, False), (False, True), (True, True)):
        x, y = rand(2, 2, requires_grad=which[0]), rand(2, 2, seed=1, requires_grad=which[1])
        paddle.sum(compiled(x, y)).backward()
        if which[0]:
            np.testing.assert_allclose(x.grad.numpy(), y.numpy() + 1, rtol=1e-6)
        else:
            assert x.grad is None
        if which[1]:
            np.testing.assert_allclose(y.grad.numpy(), x.numpy(), rtol=1e-6)
        else:
            assert y.grad is None


def test_captured_tensor_that_requires_a_gradient_gets_it():
    w = rand(4, seed=5, requires_grad=True)

    def scaled(x):
        return paddle.tanh(x * w)

    compiled = paddle.jit.to_static(scaled)
    x = rand(3, 4)
    paddle.sum(compiled(x)).backward()
    got = w.grad.numpy()
    w.clear_gradient(set_to_zero=False)
    paddle.sum(scaled(x)).backward()
    np.testing.assert_allclose(got, w.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_checked_compiled_call_records_gradients_too():
    compiled = paddle.jit.to_static(act, check=True)
    x = rand(3, 4, requires_grad=True)
    paddle.sum(compiled(x) * x).backward()
    got = x.grad.numpy()
    x.clear_gradient(set_to_zero=False)
    paddle.sum(act(x) * x).backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_first_call_under_no_grad_then_training():
    paddle.seed(5)
    layer = nn.Linear(4, 2)
    compiled = paddle.jit.to_static(layer)
    x = rand(3, 4)
    with paddle.no_grad():
        compiled(x)
    paddle.sum(compiled(x) ** 2).backward()
    got = layer.weight.grad.numpy()
    layer.clear_gradients(set_to_zero=False)
    paddle.sum(layer(x) ** 2).backward()
    np.testing.assert_allclose(got, layer.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def stopped_square(x):
    h = x * 2.0
    h.stop_gradient = True
    return h * x


def test_stop_gradient_set_inside_on_a_value_of_an_input():
    compiled = paddle.jit.to_static(stopped_square)
    for first_requires in (False, True):
        x = rand(2, 3, requires_grad=first_requires)
        compiled(x)
        x = rand(2, 3, requires_grad=True)
        paddle.sum(compiled(x)).backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(), rtol=1e-6)
