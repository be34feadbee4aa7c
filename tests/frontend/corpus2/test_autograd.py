"""paddle.grad inside compiled code (loops, branches, create_graph, several inputs),
no_grad blocks, detach and stop_gradient as people use them: targets, truncated
BPTT, straight-through estimators, EMA teachers."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import check, check_outputs, check_twins, randn, reset_parameters, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_inner_gradient_descent_loop_with_create_graph():
    def f(x):
        z = x * 1.0
        for _ in range(3):
            energy = paddle.sum((z - 1.0) ** 2 * x)
            (g,) = paddle.grad(energy, z, create_graph=True)
            z = z - 0.1 * g
        return z

    check(f, POS_NEG, spec([None, 4]))


def test_paddle_grad_with_respect_to_two_inputs():
    def f(x, y):
        out = paddle.sum(x * y * y)
        gx, gy = paddle.grad(out, [x, y])
        return gx + gy

    check_outputs(f, [(POS_NEG[0], POS_NEG[1])], spec([None, 4], [None, 4]))


def test_paddle_grad_with_grad_outputs():
    def f(x):
        y = paddle.tanh(x)
        (g,) = paddle.grad(y, x, grad_outputs=paddle.ones_like(y) * 2.0)
        return g

    check_outputs(f, POS_NEG, spec([None, 4]))


def test_paddle_grad_inside_a_tensor_branch():
    def f(x):
        y = paddle.sum(x ** 2)
        if y > 20.0:
            (g,) = paddle.grad(y, x, create_graph=True)
            out = x - 0.1 * g
        else:
            out = x * 1.0
        return out

    check(f, [randn(3, 4, scale=3), randn(3, 4, scale=0.1)], spec([None, 4]))


def test_paddle_grad_of_a_parameter_inside_forward():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            loss = self.fc(x).pow(2).mean()
            (gw,) = paddle.grad(loss, self.fc.weight, create_graph=True)
            return loss + gw.pow(2).sum()

    check(Net(), POS_NEG, spec([None, 4]))


def test_input_gradient_saliency_map():
    class Classifier(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            logits = self.fc(x)
            top = paddle.max(logits, axis=-1).sum()
            (sal,) = paddle.grad(top, x)
            return paddle.abs(sal)

    check_outputs(Classifier(), POS_NEG, spec([None, 4]))


def test_hessian_vector_product():
    def f(x, v):
        y = paddle.sum(paddle.sin(x) * x * x)
        (g,) = paddle.grad(y, x, create_graph=True)
        (hv,) = paddle.grad(paddle.sum(g * v), x)
        return hv

    check_outputs(f, [(POS_NEG[0], randn(3, 4, seed=5))], spec([None, 4], [None, 4]))


def test_paddle_grad_allow_unused():
    def f(x, y):
        out = paddle.sum(x * 3.0)
        gx, gy = paddle.grad(out, [x, y], allow_unused=True)
        if gy is None:
            return gx
        return gx + gy

    check_outputs(f, [(POS_NEG[0], POS_NEG[1])], spec([None, 4], [None, 4]), every_line=False)


def test_paddle_grad_in_a_while_loop_until_small():
    def f(x):
        z = x * 1.0
        steps = 0
        while steps < 50:
            loss = paddle.sum(z ** 2)
            (g,) = paddle.grad(loss, z)
            if paddle.max(paddle.abs(g)) < 0.01:
                break
            z = (z - 0.2 * g).detach()
            z.stop_gradient = False
            steps += 1
        return z, steps

    check_outputs(f, [randn(2, 3), randn(2, 3, scale=1e-4)], spec([None, 3]))


def test_no_grad_block_inside_a_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = x
            for _ in range(3):
                h = paddle.tanh(self.fc(h))
                with paddle.no_grad():
                    scale = h.abs().max() + 1.0
                h = h / scale
            return h

    check(Net(), POS_NEG, spec([None, 4]))


def test_truncated_bptt_detach_every_other_step():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = x
            total = paddle.zeros([])
            for t in range(4):
                h = paddle.tanh(self.fc(h))
                total = total + h.sum()
                if t % 2 == 1:
                    h = h.detach()
            return total

    check(Net(), POS_NEG, spec([None, 4]))


def test_straight_through_estimator_with_floor():
    def f(x):
        q = x + (paddle.floor(x * 2.0) / 2.0 - x).detach()
        return q * q

    check(f, POS_NEG, spec([None, 4]))


def test_stop_gradient_on_a_branch_result():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.mean() > 0:
                t = h * 2.0
                t.stop_gradient = True
            else:
                t = h * 0.5
            return h * t

    check(Net(), POS_NEG, spec([None, 4]))


def test_set_grad_enabled_false_block():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            with paddle.set_grad_enabled(False):
                m = h.mean(axis=0, keepdim=True)
            return h - m

    check(Net(), POS_NEG, spec([None, 4]))
    assert paddle.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    def f(x):
        with paddle.no_grad():
            a = x * 2.0
            with paddle.enable_grad():
                b = x * 3.0
        return a + b

    check(f, POS_NEG, spec([None, 4]))


def test_stop_gradient_read_as_python_bool():
    def f(x, y):
        if x.stop_gradient:
            return y * 2.0
        return x * y

    check(f, [(POS_NEG[0], POS_NEG[1])], spec([None, 4], [None, 4]), every_line=False)


def test_detached_target_in_a_loss_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.online = nn.Linear(4, 4)
            self.target = nn.Linear(4, 4)

        def forward(self, x):
            loss = paddle.zeros([])
            s = x
            for _ in range(2):
                q = self.online(s)
                with paddle.no_grad():
                    t = self.target(s).max(axis=-1, keepdim=True)
                loss = loss + ((q - t) ** 2).mean()
                s = paddle.tanh(q)
            return loss

    check(Net(), POS_NEG, spec([None, 4]))


class EMATeacher(nn.Layer):
    def __init__(self):
        super().__init__()
        self.student = nn.Linear(4, 4)
        self.teacher = nn.Linear(4, 4)

    def forward(self, x):
        with paddle.no_grad():
            for ps, pt in zip(self.student.parameters(), self.teacher.parameters()):
                pt.set_value(pt * 0.9 + ps * 0.1)
            target = self.teacher(x)
        return ((self.student(x) - target) ** 2).mean()


def test_ema_teacher_update_under_no_grad():
    def make():
        net = EMATeacher()
        return net, net

    check_twins(make, POS_NEG, spec([None, 4]))


def test_gradient_through_loop_with_detached_baseline():
    def f(x):
        baseline = x.mean().detach()
        total = paddle.zeros([])
        for row in x:
            adv = row.sum() - baseline
            if adv > 0:
                total = total + adv * row.sum()
            else:
                total = total - row.mean()
        return total

    check(f, POS_NEG, spec([None, 4]))


def test_gradient_of_max_over_a_grown_list():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            outs = []
            h = x
            while len(outs) < 3:
                h = paddle.tanh(self.fc(h))
                outs.append(h)
            return paddle.stack(outs).max(axis=0)

    check(Net(), POS_NEG, spec([None, 4]))


def test_clone_keeps_gradient_detach_does_not():
    def f(x):
        a = x.clone() * 2.0
        b = x.detach() * 3.0
        return a + b, b

    check(f, POS_NEG, spec([None, 4]))
