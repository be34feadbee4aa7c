"""A learning-rate scheduler stepped inside a compiled training step (Paddle's
``to_static`` runs ``loss.backward(); opt.step(); opt.clear_grad(); sched.step()``):
every call steps the scheduler as eager code does, so the rate each call trains with,
the scheduler's state and the parameters match eager training call for call."""
import warnings

import numpy as np
import pytest

import irflow as paddle
from irflow import nn
from irflow.optimizer import lr as L

CALLS = 5


def _schedulers():
    """name -> a function making a fresh scheduler."""
    return {
        "StepDecay": lambda: L.StepDecay(0.1, step_size=2, gamma=0.5),
        "CosineAnnealingDecay": lambda: L.CosineAnnealingDecay(0.1, T_max=3),
        "LinearWarmup": lambda: L.LinearWarmup(L.StepDecay(0.1, 1, 0.5), 2, 0.0, 0.1),
        "CosineAnnealingWarmRestarts": lambda: L.CosineAnnealingWarmRestarts(0.1, T_0=2),
    }


def _train(make_scheduler, compiled: bool, order: str = "after", optimizer: str = "SGD"):
    """The rate each call trained with, the scheduler's state after it, and the
    parameters after it, over `CALLS` calls of one training step."""
    model = nn.Linear(2, 1)
    model.weight.set_value(paddle.to_tensor([[1.0], [2.0]]))
    model.bias.set_value(paddle.to_tensor([0.0]))
    sched = make_scheduler()
    opt = getattr(paddle.optimizer, optimizer)(learning_rate=sched,
                                               parameters=model.parameters())

    def step(x, y):
        if order == "before":
            sched.step()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        if order == "after":
            sched.step()
        return loss

    f = paddle.jit.to_static(step) if compiled else step
    x, y = paddle.to_tensor([[1.0, 1.0]]), paddle.to_tensor([[0.0]])
    history = []
    for _ in range(CALLS):
        rate = sched()  # the rate the call trains with when the step comes after
        f(x, y)
        history.append((rate, sched.last_epoch, sched(), model.weight.numpy().copy(),
                        model.bias.numpy().copy()))
    return history


@pytest.mark.parametrize("name", list(_schedulers()))
@pytest.mark.parametrize("order", ["after", "before"])
def test_a_scheduler_steps_on_every_call_of_a_compiled_step(name, order):
    make = _schedulers()[name]
    compiled, eager = _train(make, True, order), _train(make, False, order)
    for got, want in zip(compiled, eager):
        assert got[:3] == pytest.approx(want[:3], rel=1e-12)
        np.testing.assert_allclose(got[3], want[3], rtol=1e-6)
        np.testing.assert_allclose(got[4], want[4], rtol=1e-6)
    # and the scheduler did move: the rate after the last call is the formula's
    assert compiled[-1][1] == CALLS


def test_the_rate_follows_the_step_decay_formula_in_compiled_sgd():
    """SGD on loss = (w.x + b - y)^2 with x = [1, 1]: the bias's gradient is
    2 (w.x + b - y), and each call's update uses 0.1 * 0.5 ** (call // 2)."""
    history = _train(_schedulers()["StepDecay"], True)
    w, b = np.array([1.0, 2.0]), 0.0
    for call, (rate, epoch, _, weight, bias) in enumerate(history):
        assert rate == pytest.approx(0.1 * 0.5 ** (call // 2)) and epoch == call + 1
        grad = 2 * (w.sum() + b)
        w, b = w - rate * grad, b - rate * grad
        np.testing.assert_allclose(weight.ravel(), w, rtol=1e-6)
        np.testing.assert_allclose(bias, [b], rtol=1e-6)


def test_adam_with_a_scheduler_stepped_inside_the_compiled_step():
    make = _schedulers()["CosineAnnealingDecay"]
    compiled, eager = _train(make, True, optimizer="Adam"), _train(make, False,
                                                                    optimizer="Adam")
    for got, want in zip(compiled, eager):
        np.testing.assert_allclose(got[3], want[3], rtol=1e-6)


def _model_and_optimizer(sched):
    model = nn.Linear(2, 1)
    return model, paddle.optimizer.SGD(learning_rate=sched, parameters=model.parameters())


def test_reduce_on_plateau_given_a_loss_the_program_computes_is_an_error():
    """Its step needs the loss's value, which exists only after the program ran."""
    sched = L.ReduceOnPlateau(0.1, patience=0)
    model, opt = _model_and_optimizer(sched)

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step(loss)
        return loss
    with pytest.raises(paddle.ConversionError, match="needs the metric.s value"):
        paddle.jit.to_static(step)(paddle.ones([3, 2]))
    assert sched.last_epoch == 0 and sched() == 0.1


def test_an_update_after_a_scheduler_step_that_followed_another_update_is_an_error():
    """The program reads the rate once per run: a second update after the step
    would train with the old rate."""
    sched = L.StepDecay(1.0, step_size=1, gamma=0.5)
    model, opt = _model_and_optimizer(sched)

    def step(x):
        model(x).sum().backward()
        opt.step()
        sched.step()
        opt.step()
        opt.clear_grad()
    with pytest.raises(paddle.ConversionError, match="reads the learning rate once"):
        paddle.jit.to_static(step)(paddle.ones([3, 2]))
    assert sched.last_epoch == 0


def test_a_scheduler_step_inside_tensor_dependent_control_flow_is_an_error():
    sched = L.StepDecay(1.0, step_size=1, gamma=0.5)
    model, opt = _model_and_optimizer(sched)

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        if loss > 0:
            sched.step()
        return loss
    with pytest.raises(paddle.ConversionError, match="tensor-dependent control flow"):
        paddle.jit.to_static(step)(paddle.ones([3, 2]))
    assert sched.last_epoch == 0


def test_a_scheduler_step_to_a_traced_epoch_is_an_error():
    sched = L.StepDecay(1.0, step_size=1, gamma=0.5)

    def step(epoch):
        sched.step(epoch)
        return epoch * 2
    with pytest.raises(paddle.ConversionError, match="takes a Python number"):
        paddle.jit.to_static(step)(paddle.to_tensor(3))


def test_a_scheduler_made_inside_a_compiled_function_takes_its_first_step_at_once():
    """Construction's step is the scheduler's own setup, not a step of the program:
    the new scheduler's rate is its base rate already while traced."""
    def f(x):
        return x * L.StepDecay(0.5, step_size=1)()
    np.testing.assert_allclose(paddle.jit.to_static(f)(paddle.ones([2])).numpy(), [0.5, 0.5])


def _rates_read(compiled: bool, read_after_step: bool = False):
    """The loss (scaled by the rate read in the step) and the rates ``opt.get_lr()``
    and ``sched()`` give inside it, per call."""
    model = nn.Linear(2, 1)
    model.weight.set_value(paddle.to_tensor([[1.0], [2.0]]))
    sched = L.StepDecay(1.0, step_size=1, gamma=0.5)
    opt = paddle.optimizer.SGD(sched, parameters=model.parameters())

    def step(x):
        rate = opt.get_lr()
        loss = model(x).sum() * sched()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        if read_after_step:
            rate = opt.get_lr()
        return loss, rate

    fn = paddle.jit.to_static(step) if compiled else step
    return [(float(loss), float(rate)) for loss, rate in
            (fn(paddle.ones([3, 2])) for _ in range(4))]


def test_a_rate_read_in_a_compiled_step_is_the_current_one():
    """``opt.get_lr()`` and ``sched()`` read in compiled code are guards of the
    program: after the scheduler stepped, the next call reads the new rate (it kept
    the first one, a constant of the program)."""
    eager = _rates_read(compiled=False)
    assert [rate for _, rate in eager] == [1.0, 0.5, 0.25, 0.125]
    np.testing.assert_allclose(_rates_read(compiled=True), eager, rtol=1e-6)


def test_reading_the_rate_after_a_scheduler_step_inside_is_an_error():
    with pytest.raises(paddle.ConversionError, match="reading the learning rate after"):
        _rates_read(compiled=True, read_after_step=True)


def test_check_mode_steps_the_scheduler_once_per_call():
    """``compile(check=True)`` runs the eager code beside the program: the scheduler's
    step the eager run makes is undone, so each call steps it once, as eagerly."""
    model = nn.Linear(2, 1)
    sched = L.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = paddle.optimizer.SGD(sched, parameters=model.parameters())

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        return loss

    checked = paddle.compile(step, check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the eager run's backward() does not warn
        for _ in range(3):
            checked(paddle.ones([3, 2]))
    assert sched.last_epoch == 3 and sched() == pytest.approx(0.1 * 0.5 ** 3)
