"""Optimizer behaviour found wrong by running the same scripts under Paddle 3.3.1 and
irflow (eager, ``paddle.jit.to_static`` and ``paddle.compile``), now matched.

- ``opt.set_lr(...)`` inside a compiled training step took effect before the step's
  update: the update read the new rate, where eager code reads the rate from before
  the call. It is now host code each run makes (as a scheduler's ``step()``).
- Adam and AdamW (and Adamax, Lamb, which share their checks) refused ``beta1``,
  ``beta2`` and ``epsilon`` given as one-element tensors (``paddle.to_tensor([0.9])``,
  Paddle's own docstring example)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ConversionError

W0 = np.array([[1.0], [2.0]], np.float32)
X = np.array([[1.0, 1.0]], np.float32)


def _model():
    """A bias-free Linear(2, 1): the gradient of ``model(x).sum()`` at x = [1, 1] is
    [1, 1] for every weight value, so SGD moves each weight by the rate it used."""
    model = paddle.nn.Linear(2, 1, bias_attr=False)
    model.weight.set_value(paddle.to_tensor(W0))
    return model


def _train(body, compiled: bool, rates, make=paddle.optimizer.SGD):
    """The weights after each call of a step ``body(model, opt, x, rate)``."""
    model = _model()
    opt = make(learning_rate=0.1, parameters=model.parameters())

    def step(x, rate):
        body(model, opt, x, rate)

    f = paddle.jit.to_static(step) if compiled else step
    history = []
    for rate in rates:
        f(paddle.to_tensor(X), rate)
        history.append((model.weight.numpy().ravel().copy(), opt.get_lr()))
    return history


def _update(model, opt, x):
    model(x).sum().backward()
    opt.step()
    opt.clear_grad()


def _halve_after(model, opt, x, rate):
    _update(model, opt, x)
    opt.set_lr(opt.get_lr() * 0.5)


def _set_before(model, opt, x, rate):
    opt.set_lr(rate)
    _update(model, opt, x)


def _set_after(model, opt, x, rate):
    _update(model, opt, x)
    opt.set_lr(rate)


def test_set_lr_after_the_update_in_a_compiled_step():
    """Call k (from 0) trains with 0.1 * 0.5 ** k, then halves the rate."""
    history = _train(_halve_after, True, [None] * 4)
    used = 0.0
    for k, (weight, lr) in enumerate(history):
        used += 0.1 * 0.5 ** k
        np.testing.assert_allclose(weight, W0.ravel() - used, rtol=1e-6)
        assert lr == pytest.approx(0.1 * 0.5 ** (k + 1))


def _momentum_weights(rates):
    """The weights after Momentum (0.9) steps with gradient 1 at each of `rates`."""
    velocity, weight = 0.0, W0.ravel().astype(np.float64)
    for rate in rates:
        velocity = 0.9 * velocity + 1.0
        weight = weight - rate * velocity
    return weight


def test_set_lr_before_or_after_the_update_in_a_compiled_step_matches_eager():
    """Set before the update, call k trains with rates[k]; set after it, with the
    rate the previous call set (0.1 first). Momentum's velocity carries each rate
    into later updates, so every rate shows in the weights."""
    rates = [0.3, 0.2, 0.05, 0.01]
    make = paddle.optimizer.Momentum
    for body, used in [(_set_before, rates), (_set_after, [0.1] + rates[:-1])]:
        eager, compiled = _train(body, False, rates, make), _train(body, True, rates, make)
        for (w_eager, lr_eager), (w_compiled, lr_compiled) in zip(eager, compiled):
            np.testing.assert_allclose(w_compiled, w_eager, rtol=1e-6)
            assert lr_compiled == lr_eager
        np.testing.assert_allclose(compiled[-1][0], _momentum_weights(used), rtol=1e-6)


def _update_set_update(model, opt, x, rate):
    _update(model, opt, x)
    opt.set_lr(rate)
    _update(model, opt, x)


def _set_then_read(model, opt, x, rate):
    opt.set_lr(rate)
    (model(x).sum() * opt.get_lr()).backward()
    opt.step()


@pytest.mark.parametrize("body, message", [(_update_set_update, "optimizer step after"),
                                           (_set_then_read, "reading the learning rate")])
def test_set_lr_a_compiled_program_cannot_follow_is_an_error(body, message):
    """The program reads the rate once per run: an update after ``set_lr`` that
    follows an earlier update, or reading the rate back, cannot see the new rate."""
    with pytest.raises(ConversionError, match=message):
        _train(body, True, [0.2])


def _adam_weights(make, **hyper):
    model = paddle.nn.Linear(2, 2)
    model.weight.set_value(paddle.to_tensor(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)))
    model.bias.set_value(paddle.to_tensor(np.array([0.1, -0.2], np.float32)))
    opt = make(learning_rate=0.1, parameters=model.parameters(), **hyper)
    x = paddle.to_tensor(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    for _ in range(3):
        (model(x) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in model.parameters()]


@pytest.mark.parametrize("make", [paddle.optimizer.Adam, paddle.optimizer.AdamW,
                                  paddle.optimizer.Adamax, paddle.optimizer.Lamb])
def test_adam_family_hyperparameters_as_shape_1_tensors(make):
    """A tensor hyperparameter trains as its number does (Paddle starts the beta
    powers at 0.9 and 0.999 for tensors, which breaks its own bias correction
    ``1 - beta1 ** t``; irflow starts them at the tensors' values)."""
    def tensor(v):
        return paddle.to_tensor(np.full([1], v, np.float32))
    got = _adam_weights(make, beta1=tensor(0.8), beta2=tensor(0.99), epsilon=tensor(1e-3))
    want = _adam_weights(make, beta1=float(np.float32(0.8)), beta2=float(np.float32(0.99)),
                         epsilon=float(np.float32(1e-3)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_adam_hyperparameter_tensor_of_several_elements_is_an_error():
    with pytest.raises(ValueError, match="beta1 given as a tensor must have one element"):
        _adam_weights(paddle.optimizer.Adam, beta1=paddle.to_tensor([0.9, 0.8]))


def test_set_lr_after_the_update_in_a_checked_compiled_step():
    """``check=True`` runs each call eagerly too and puts back what that run changed,
    the constant rate ``set_lr`` sets included, so the program still trains with the
    rate the previous call set (0.1 first) and the weights follow Momentum's rule."""
    model = _model()
    opt = paddle.optimizer.Momentum(learning_rate=0.1, parameters=model.parameters())

    def step(x, rate):
        _set_after(model, opt, x, rate)

    f = paddle.compile(step, check=True)
    rates = [0.3, 0.2, 0.05]
    for rate in rates:
        f(paddle.to_tensor(X), rate)
    np.testing.assert_allclose(model.weight.numpy().ravel(),
                               _momentum_weights([0.1] + rates[:-1]), rtol=1e-6)
    assert opt.get_lr() == 0.05


def test_bfloat16_parameters_are_refused_with_the_way_out():
    """bfloat16 has no arithmetic in irflow (a storage type), so no optimizer can
    update it: the error says so and what to do, not only that it is not float."""
    model = paddle.nn.Linear(2, 2)
    model.to(dtype="bfloat16")
    with pytest.raises(TypeError, match="bfloat16 is a storage type.*float32"):
        paddle.optimizer.SGD(parameters=model.parameters())
