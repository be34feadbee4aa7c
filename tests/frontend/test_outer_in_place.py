"""In-place changes under an `if` or a loop to objects that are not variables of the
compiled function: functions of a module that change their arguments in place
(``nn.utils.clip_grad_norm_``), tensors a function captures from its module or from
an enclosing function. The module is not a variable the statement changes (it stays
the global it is), and a change to a captured tensor either reaches it as eager code
makes it or is a ConversionError naming the line; it is never lost."""
import inspect
import os

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ConversionError
from irflow.nn.utils import clip_grad_norm_

BACKENDS = ["numpy", "llvm"]
THIS_FILE = os.path.abspath(__file__)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def batch(k: int):
    """Inputs whose losses alternate around 1, so both branches of ``loss > 1`` run."""
    scale = (3.0, 0.1, 2.0, 0.2)[k % 4]
    rng = np.random.default_rng(k)
    return paddle.to_tensor((rng.standard_normal((4, 3)) * scale).astype("float32"))


def train(step_of, compiled: bool, backend: str, steps: int = 4):
    """The parameters after `steps` steps of ``step_of(model, opt)``, eager or compiled."""
    paddle.seed(0)
    model = nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    step = step_of(model, opt)
    run = paddle.compile(step, backend=backend) if compiled else step
    losses = [float(run(batch(k))) for k in range(steps)]
    return losses, [p.numpy().copy() for p in model.parameters()]


def assert_trains_alike(step_of, backend: str):
    got_losses, got = train(step_of, True, backend)
    want_losses, want = train(step_of, False, backend)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


USE_CLIP = True


def clip_under_python_flag(model, opt):
    def step(x):
        loss = (model(x) ** 2).mean()
        loss.backward()
        if USE_CLIP:
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.clear_grad()
        return loss
    return step


def clip_under_tensor_condition(model, opt):
    def step(x):
        loss = (model(x) ** 2).mean()
        loss.backward()
        if loss > 1.0:
            paddle.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        else:
            nn.utils.clip_grad_value_(model.parameters(), 0.01)
        opt.step()
        opt.clear_grad()
        return loss
    return step


def clip_a_local_list_under_tensor_condition(model, opt):
    def step(x):
        loss = (model(x) ** 2).mean()
        loss.backward()
        params = list(model.parameters())
        if loss > 1.0:
            clip_grad_norm_(params, 0.5)
        opt.step()
        opt.clear_grad()
        return loss
    return step


def clip_in_a_loop(model, opt):
    def step(x):
        loss = (model(x) ** 2).mean()
        loss.backward()
        for norm in (1.0, 0.5):
            nn.utils.clip_grad_norm_(model.parameters(), norm)
        opt.step()
        opt.clear_grad()
        return loss
    return step


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("step_of", [clip_under_python_flag, clip_under_tensor_condition,
                                     clip_a_local_list_under_tensor_condition, clip_in_a_loop])
def test_clipping_gradients_through_a_module_inside_control_flow(step_of, backend):
    """``nn.utils.clip_grad_norm_`` ends in ``_`` but changes the gradients of its
    arguments, not the module ``nn``: ``nn`` stays the global module."""
    assert_trains_alike(step_of, backend)


TOTAL = paddle.zeros([3])


def accumulate_global(x):
    if x.sum() > 0:
        TOTAL.add_(x)
    else:
        TOTAL.scale_(0.5)
    return x * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_tensor_changed_in_place_in_a_tensor_if_changes_as_eagerly(backend):
    calls = [paddle.to_tensor([1.0, 2.0, 3.0]), paddle.to_tensor([-4.0, 0.0, 1.0]),
             paddle.to_tensor([0.5, 0.5, 0.5])]
    TOTAL.set_value(paddle.zeros([3]))
    for x in calls:
        accumulate_global(x)
    want = TOTAL.numpy().copy()
    TOTAL.set_value(paddle.zeros([3]))
    compiled = paddle.compile(accumulate_global, backend=backend)
    for x in calls:
        compiled(x)
    np.testing.assert_allclose(TOTAL.numpy(), want, rtol=1e-6)


def shift_in_a_closure(x):
    y = x * 2

    def shift():
        if y.sum() > 0:
            y.add_(x)
        else:
            y.scale_(-1.0)

    shift()
    return y + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_captured_tensor_changed_in_place_in_a_tensor_if_is_changed_as_eagerly(backend):
    compiled = paddle.compile(shift_in_a_closure, backend=backend)
    for x in (paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([-3.0, 1.0])):
        np.testing.assert_allclose(compiled(x).numpy(), shift_in_a_closure(x).numpy(),
                                   rtol=1e-6)


def grow_in_a_closure(x):
    y = x * 1

    def grow():
        while y.sum() < 10:
            y.add_(x)

    grow()
    return y


def test_a_captured_tensor_changed_in_place_in_a_tensor_loop_is_refused():
    with pytest.raises(ConversionError, match="`y` is changed in place inside a "
                                              "tensor-dependent loop") as info:
        paddle.compile(grow_in_a_closure)(paddle.to_tensor([1.0, 2.0]))
    assert f"{THIS_FILE}:{line_of(grow_in_a_closure, 'y.add_(x)')}" in str(info.value)


SEEN = []


def remember_large(x):
    if x.sum() > 0:
        SEEN.append(x * 2)
    return x


def test_a_tensor_put_into_a_global_list_in_a_tensor_if_is_refused():
    """The program cannot put a tensor into a Python list on each call; the list is
    left as it was."""
    SEEN.clear()
    with pytest.raises(ConversionError, match="`SEEN` is a Python list") as info:
        paddle.compile(remember_large)(paddle.to_tensor([1.0, 2.0]))
    assert f"{THIS_FILE}:{line_of(remember_large, 'if x.sum()')}" in str(info.value)
    assert SEEN == []


class Rescale(nn.Layer):
    """A tensor forward computes and stores on the layer, then changes in place under
    a tensor condition (followed like the captured tensor above)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        self.h = self.fc(x)
        if x.sum() > 0:
            self.h.add_(x)
        else:
            self.h.scale_(-1.0)
        return self.h * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stored_tensor_changed_in_place_in_a_tensor_if_is_changed_as_eagerly(backend):
    paddle.seed(0)
    model = Rescale()
    compiled = paddle.compile(model, backend=backend)
    for x in (paddle.to_tensor([[1.0, 2.0]]), paddle.to_tensor([[-3.0, 1.0]])):
        got = compiled(x).numpy()
        got_h = model.h.numpy()
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-6)
        np.testing.assert_allclose(got_h, model.h.numpy(), rtol=1e-6)
