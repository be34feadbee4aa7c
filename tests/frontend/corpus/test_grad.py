"""Gradients: through compiled calls (inputs and parameters), paddle.grad inside and
around compiled code, no_grad / detach / stop_gradient inside compiled code."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_outputs, randn, reset_parameters, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_input_gradient_of_a_plain_function():
    def f(x):
        return paddle.tanh(x) * x

    check(f, POS_NEG, spec([None, 4]))


def test_input_gradient_through_a_branch():
    def f(x):
        if x.mean() > 0:
            return x * x
        return paddle.exp(x)

    check(f, POS_NEG, spec([None, 4]))


def test_input_gradient_through_a_while_loop():
    def f(x):
        while x.abs().sum() < 50:
            x = x * 1.5 + 0.1
        return x

    check(f, [randn(2, 3, scale=0.5), randn(2, 3, scale=10)], spec([None, 3]))


def test_input_gradient_through_max_and_where():
    def f(x):
        y = paddle.where(x > 0, x * 3, x * 0.5)
        return paddle.max(y, axis=1)

    check(f, POS_NEG, spec([None, 4]))


def test_gradients_of_two_inputs():
    def f(x, w):
        h = paddle.matmul(x, w)
        if h.sum() > 0:
            h = F.relu(h)
        return h

    w = randn(4, 2, seed=3)
    check(f, [(POS_NEG[0], w), (POS_NEG[1], w)], spec([None, 4], [4, 2]))


def test_layer_without_parameters():
    class Act(nn.Layer):
        def forward(self, x):
            if x.mean() > 0:
                return F.gelu(x)
            return F.silu(x)

    check(Act(), POS_NEG, spec([None, 4]))


def test_parameter_and_input_gradients_together():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            h = self.fc(x)
            for _ in range(2):
                if h.mean() < 0:
                    h = -h
                h = paddle.tanh(h) + 0.1
            return h

    check(Net(), POS_NEG, spec([None, 4]))


def test_compiled_activation_inside_an_eager_model():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = paddle.jit.to_static(
                lambda h: paddle.tanh(h) * 2.0,
                input_spec=[paddle.static.InputSpec([None, 4])])

        def forward(self, x):
            h = self.fc(x)
            return h + self.act(h)

    net, twin = Net(), Net()
    reset_parameters(net)
    twin.set_state_dict(net.state_dict())
    twin.act = lambda h: paddle.tanh(h) * 2.0
    x = paddle.to_tensor(randn(3, 4))
    for model in (net, twin):
        paddle.sum(model(x) ** 2).backward()
    np.testing.assert_allclose(net(x).numpy(), twin(x).numpy(), rtol=1e-5)
    for p, q in zip(net.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_no_grad_inside_forward():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            with paddle.no_grad():
                scale = paddle.max(paddle.abs(h))
            return h / scale

    check(Net(), POS_NEG, spec([None, 4]))


def test_detach_inside_forward():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            target = h.detach() * 2
            return (h - target) ** 2

    check(Net(), POS_NEG, spec([None, 4]))


def test_stop_gradient_set_inside_forward():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 4)
            self.fc2 = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc1(x)
            h.stop_gradient = True
            return self.fc2(h)

    check(Net(), POS_NEG, spec([None, 4]))


def test_detach_in_one_branch():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if x.mean() > 0:
                h = h.detach() + h * 0.5
            return h

    check(Net(), POS_NEG, spec([None, 4]))


def test_paddle_grad_inside_compiled_function():
    def f(x):
        y = paddle.sum(x ** 3)
        (g,) = paddle.grad([y], [x])
        return g

    check_outputs(f, POS_NEG, spec([None, 4]), grad_inputs=True)


def test_paddle_grad_with_create_graph_inside():
    def f(x):
        y = paddle.sum(paddle.sin(x) * x)
        (g,) = paddle.grad(y, x, create_graph=True)
        return g * g

    check(f, POS_NEG, spec([None, 4]))


def test_gradient_penalty_in_a_layer():
    class Critic(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            score = paddle.tanh(self.fc(x)).sum()
            (g,) = paddle.grad(score, x, create_graph=True)
            return score + ((g.norm(p=2) - 1.0) ** 2)

    check(Critic(), POS_NEG, spec([None, 4]))


def test_paddle_grad_of_compiled_output_outside():
    def f(x):
        if x.sum() > 0:
            return paddle.exp(x).sum()
        return (x * x).sum()

    static = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([None, 4])])
    for a in POS_NEG:
        x1, x2 = paddle.to_tensor(a), paddle.to_tensor(a)
        x1.stop_gradient = False
        x2.stop_gradient = False
        (g1,) = paddle.grad(static(x1), x1)
        (g2,) = paddle.grad(f(x2), x2)
        np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-5)


def test_gradient_through_fixed_point_loop():
    class Solver(nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([4, 4])

        def forward(self, x):
            h = paddle.zeros_like(x)
            for _ in range(30):
                hn = paddle.tanh(paddle.matmul(h, self.w * 0.3) + x)
                if paddle.max(paddle.abs(hn - h)) < 1e-5:
                    break
                h = hn
            return h

    check(Solver(), POS_NEG, spec([None, 4]))


def test_gradient_through_tensor_range_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            n = paddle.cast(x.mean() > 0, "int64") * 2 + 1
            h = x
            for _ in range(n):
                h = paddle.tanh(self.fc(h))
            return h

    check(Net(), POS_NEG, spec([None, 4]))


def test_gradient_through_early_return():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)

        def forward(self, x):
            h = self.a(x)
            if h.sum() > 0:
                return h * 2
            return self.b(h)

    check(Net(), POS_NEG, spec([None, 4]))


def test_gradient_of_a_parameter_only_used_in_one_branch():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.scale = self.create_parameter(
                [4], default_initializer=nn.initializer.Constant(2.0))

        def forward(self, x):
            if x.mean() > 0:
                x = x * self.scale
            return x

    check(Net(), POS_NEG, spec([None, 4]))


def test_backward_inside_a_tensor_branch():
    """backward() in one branch: while the parameters have no gradient, they keep none
    when the other branch runs (the program returns whether they have one); once they
    have one, the compiled call accumulates into it in the branch taken, as eager
    code does."""
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            loss = self.fc(x).mean()
            if loss > 0:
                loss.backward()
            return loss

    net = Net()
    net.fc.bias.set_value(paddle.zeros([1]))
    twin = Net()
    twin.set_state_dict(net.state_dict())
    compiled = paddle.jit.to_static(twin, input_spec=spec([None, 4]))
    x = paddle.ones([3, 4])
    with paddle.no_grad():
        positive = x if float(net.fc(x).mean()) > 0 else -x
    for inputs in (-positive, positive, -positive, positive):
        compiled(inputs)
        net(inputs)
        for p, q in zip(twin.parameters(), net.parameters()):
            assert (p.grad is None) == (q.grad is None)
            if p.grad is not None:
                np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)


def test_backward_twice_accumulates():
    net = nn.Linear(4, 2)
    reset_parameters(net)
    static = paddle.jit.to_static(net, input_spec=[paddle.static.InputSpec([None, 4])])
    x = paddle.to_tensor(POS_NEG[0])
    static(x).sum().backward()
    static(x).sum().backward()
    got = net.weight.grad.numpy().copy()
    net.clear_gradients()
    net(x).sum().backward()
    np.testing.assert_allclose(got, 2 * net.weight.grad.numpy(), rtol=1e-5)


def test_second_order_through_compiled_call():
    def f(x):
        return paddle.sum(x ** 3)

    static = paddle.jit.to_static(f, input_spec=[paddle.static.InputSpec([None, 4])])
    a = POS_NEG[0]
    out = []
    for fn in (static, f):
        x = paddle.to_tensor(a)
        x.stop_gradient = False
        (g,) = paddle.grad(fn(x), x, create_graph=True)
        (gg,) = paddle.grad(g.sum(), x)
        out.append(gg.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5)


def test_no_grad_in_another_thread_does_not_leak():
    import threading

    net = nn.Linear(4, 2)
    static = paddle.jit.to_static(net, input_spec=[paddle.static.InputSpec([None, 4])])
    inside, go_on = threading.Event(), threading.Event()

    def other():
        with paddle.no_grad():
            inside.set()
            go_on.wait(5)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(5)
    try:
        out = static(paddle.to_tensor(POS_NEG[0]))
        assert not out.stop_gradient
    finally:
        go_on.set()
        t.join()
