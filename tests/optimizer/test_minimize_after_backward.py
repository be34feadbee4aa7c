"""``loss.backward(); opt.minimize(loss)`` — the pattern of Paddle's own ``minimize``
example — takes one step with the gradient of that one backward pass: `minimize`
differentiates the loss only when no ``backward()`` ran on it. That holds when the
graph was kept (``retain_graph=True``) and inside a compiled training step, where
differentiating again added the gradient a second time (an SGD step twice as long).

The model is ``loss = w . x + b`` with x = [1, 1], so every gradient is 1 and one SGD
step of rate 0.1 takes 0.1 off each parameter."""
import numpy as np
import pytest

import irflow as paddle

RATE = 0.1


def _model():
    layer = paddle.nn.Linear(2, 1)
    layer.weight.set_value(paddle.to_tensor([[1.0], [2.0]]))
    layer.bias.set_value(paddle.to_tensor([0.0]))
    return layer


def _parameters_after(step_kind: str, compiled: bool):
    layer = _model()
    opt = paddle.optimizer.SGD(RATE, parameters=layer.parameters())

    def step(x):
        loss = layer(x).sum()
        if step_kind == "backward, then minimize":
            loss.backward()
        elif step_kind == "backward(retain_graph), then minimize":
            loss.backward(retain_graph=True)
        opt.minimize(loss)
        opt.clear_grad()
        return loss

    f = paddle.jit.to_static(step) if compiled else step
    f(paddle.to_tensor([[1.0, 1.0]]))
    return layer.weight.numpy().ravel(), layer.bias.numpy()


@pytest.mark.parametrize("step_kind, compiled", [
    ("minimize", False),
    ("minimize", True),
    ("backward, then minimize", False),
    ("backward, then minimize", True),
    ("backward(retain_graph), then minimize", False),
])
def test_minimize_steps_with_one_gradient(step_kind, compiled):
    weight, bias = _parameters_after(step_kind, compiled)
    np.testing.assert_allclose(weight, [1.0 - RATE, 2.0 - RATE], rtol=1e-6)
    np.testing.assert_allclose(bias, [-RATE], rtol=1e-6, atol=1e-7)


def test_a_second_loss_is_still_differentiated_in_a_compiled_step():
    """``backward()`` on one loss does not stop `minimize` from differentiating
    another: the parameters get both gradients (1 each), as eagerly."""
    layer = _model()
    opt = paddle.optimizer.SGD(RATE, parameters=layer.parameters())

    @paddle.jit.to_static
    def step(x):
        first = layer(x).sum()
        second = layer(x).sum()
        first.backward()
        opt.minimize(second)
        opt.clear_grad()
        return second

    step(paddle.to_tensor([[1.0, 1.0]]))
    np.testing.assert_allclose(layer.weight.numpy().ravel(),
                               [1.0 - 2 * RATE, 2.0 - 2 * RATE], rtol=1e-6)
