"""How tutorials apply the compiler: `@paddle.jit.to_static` on `forward` or on a
function, with and without an input_spec, compiled models saved and loaded."""
import os
import tempfile

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import OutputMismatch, PADDLE, randn, reset_parameters

X = [randn(2, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def same(got, want, what):
    if not np.allclose(np.array(got.numpy()), np.array(want.numpy()), rtol=1e-5, atol=1e-6):
        raise OutputMismatch(f"{what}: {got} != eager {want}")


class Plain(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = F.relu(h)
        else:
            h = h * 0.5
        return h


class Decorated(Plain):
    @paddle.jit.to_static(input_spec=[paddle.static.InputSpec([None, 4], "float32")])
    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = F.relu(h)
        else:
            h = h * 0.5
        return h


class DecoratedNoSpec(Plain):
    @paddle.jit.to_static
    def forward(self, x):
        h = self.fc(x)
        while h.abs().sum() < 10.0:
            h = h * 2.0
        return h


class PlainLoop(Plain):
    def forward(self, x):
        h = self.fc(x)
        while h.abs().sum() < 10.0:
            h = h * 2.0
        return h


def twins(cls_eager, cls_compiled):
    a, b = cls_eager(), cls_compiled()
    reset_parameters(a)
    b.set_state_dict(a.state_dict())
    return a, b


def test_decorated_forward_with_input_spec():
    eager, comp = twins(Plain, Decorated)
    for x in X:
        xe, xc = paddle.to_tensor(x), paddle.to_tensor(x)
        same(comp(xc), eager(xe), "output")
        eager.fc.weight.clear_gradient()
    for x in X:
        for net in (eager, comp):
            net.clear_gradients()
        paddle.sum(eager(paddle.to_tensor(x)) ** 2).backward()
        paddle.sum(comp(paddle.to_tensor(x)) ** 2).backward()
        same(comp.fc.weight.grad, eager.fc.weight.grad, "weight gradient")


def test_decorated_forward_without_input_spec():
    eager, comp = twins(PlainLoop, DecoratedNoSpec)
    for x in X + [randn(5, 4, seed=3, scale=0.01)]:
        same(comp(paddle.to_tensor(x)), eager(paddle.to_tensor(x)), "output")


def test_decorated_function():
    @paddle.jit.to_static
    def swish_clip(x):
        y = x * F.sigmoid(x)
        if y.max() > 1.0:
            y = y / y.max()
        return y

    def eager(x):
        y = x * F.sigmoid(x)
        if y.max() > 1.0:
            y = y / y.max()
        return y

    for x in X:
        same(swish_clip(paddle.to_tensor(x)), eager(paddle.to_tensor(x)), "output")


def test_save_and_load_a_model_with_control_flow():
    eager, comp = twins(Plain, Decorated)
    comp.eval()
    eager.eval()
    path = os.path.join(tempfile.mkdtemp(), "model")
    paddle.jit.save(comp, path)
    loaded = paddle.jit.load(path)
    for x in X:
        same(loaded(paddle.to_tensor(x)), eager(paddle.to_tensor(x)), "loaded output")


def test_to_static_of_a_bound_method():
    class Net(Plain):
        def score(self, x):
            s = self.fc(x).sum(axis=-1)
            if s.mean() > 0:
                s = s * 2.0
            return s

    eager, comp = twins(Net, Net)
    fn = paddle.jit.to_static(comp.score,
                              input_spec=[paddle.static.InputSpec([None, 4], "float32")])
    for x in X:
        same(fn(paddle.to_tensor(x)), eager.score(paddle.to_tensor(x)), "output")
