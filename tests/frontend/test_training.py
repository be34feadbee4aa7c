"""Training with compiled code: a whole step (forward, backward, optimizer) compiled into
one program, and a compiled forward inside an eager training loop."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec


class LoopyNet(nn.Layer):
    """A data-dependent loop and branch inside the model being trained."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        i = 0
        while paddle.mean(paddle.abs(h)) < 0.9 and i < 4:
            h = paddle.tanh(h * 1.7 + 0.05)
            i += 1
        if paddle.mean(h) > 0:
            h = h * 0.5
        return self.fc2(h)


def twins(seed):
    paddle.seed(seed)
    a = LoopyNet()
    b = LoopyNet()
    b.set_state_dict(a.state_dict())
    return a, b


def data(seed, n=6):
    rng = np.random.default_rng(seed)
    return (paddle.to_tensor(rng.standard_normal((n, 4)).astype(np.float32)),
            paddle.to_tensor(rng.integers(0, 3, n)))


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_whole_training_step_in_one_program(optimizer):
    compiled_model, eager_model = twins(1)

    def make_step(model):
        opt = getattr(paddle.optimizer, optimizer)(learning_rate=0.05,
                                                   parameters=model.parameters())

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return train_step

    compiled = paddle.jit.to_static(make_step(compiled_model),
                                    input_spec=[InputSpec([None, 4]), InputSpec([None], "int64")])
    eager = make_step(eager_model)
    for step in range(4):
        x, y = data(step, n=3 + step)
        np.testing.assert_allclose(compiled(x, y).numpy(), eager(x, y).numpy(), rtol=1e-5)
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    names = [op.name for op in compiled.ir.walk()]
    assert names.count("while") >= 2  # the forward loop and its backward loop
    assert "stack_push" in names and "stack_pop" in names


def test_compiled_forward_inside_an_eager_training_loop():
    compiled_model, eager_model = twins(2)
    static = paddle.jit.to_static(compiled_model, input_spec=[InputSpec([None, 4])])
    opt_c = paddle.optimizer.Adam(learning_rate=0.05, parameters=compiled_model.parameters())
    opt_e = paddle.optimizer.Adam(learning_rate=0.05, parameters=eager_model.parameters())
    for step in range(4):
        x, y = data(10 + step)
        for model, opt in ((static, opt_c), (eager_model, opt_e)):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_flow_to_inputs_of_a_compiled_call():
    layer = nn.Linear(4, 2)
    static = paddle.jit.to_static(layer, input_spec=[InputSpec([None, 4])])
    x = paddle.randn([3, 4])
    x.stop_gradient = False
    paddle.sum(static(x) ** 2).backward()
    got = x.grad.numpy().copy()
    x.clear_gradient(set_to_zero=False)
    paddle.sum(layer(x) ** 2).backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5)


def test_no_grad_calls_do_not_record():
    static = paddle.jit.to_static(nn.Linear(4, 2), input_spec=[InputSpec([None, 4])])
    with paddle.no_grad():
        out = static(paddle.randn([2, 4]))
    assert out.stop_gradient and out._node is None
