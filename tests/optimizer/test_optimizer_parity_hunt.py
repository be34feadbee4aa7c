"""Regularization of parameter groups as Paddle 3.3.1 applies it, found by running the
same scripts under Paddle and irflow and now matched. The expected values are NumPy
references of the update rules; every case was checked against real Paddle (CPU).

Paddle assigns a group's ``weight_decay`` to its parameters as their own regularizer,
and a parameter whose regularizer is None gets the optimizer's: a group with
``'weight_decay': None`` is decayed by the optimizer's ``weight_decay``. Momentum
applies L2 decay in its kernel from the group's settings and other regularizers
(L1Decay) on the gradient, so a group's L2 decay adds to the optimizer's L1Decay, and
a group with None gets the optimizer's L1Decay but not its L2 decay."""
import numpy as np
import pytest

import irflow as paddle
from irflow.regularizer import L1Decay, L2Decay

LR, MU = 0.1, 0.9
W0 = np.array([[0.5, -1.0], [2.0, -0.25]], np.float32)
X = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
STEPS = 3


def _model():
    """Two bias-free linear layers: the first in group 0, the second in group 1."""
    first = paddle.nn.Linear(2, 2, bias_attr=False)
    second = paddle.nn.Linear(2, 2, bias_attr=False)
    first.weight.set_value(paddle.to_tensor(W0))
    second.weight.set_value(paddle.to_tensor(W0.T.copy()))
    return first, second


def _loss(first, second, x):
    return (second(first(x)) ** 2).mean()


def _numpy_grads(w1, w2):
    """The gradients of `_loss` in NumPy."""
    h = X @ w1
    y = h @ w2
    dy = 2 * y / y.size
    return X.T @ (dy @ w2.T), h.T @ dy


def _reference(decays, momentum=False):
    """The weights after `STEPS` steps of SGD (or Momentum) where ``decays[i](w)`` is
    added to the gradient of group i."""
    w = [W0.astype(np.float64), W0.T.astype(np.float64)]
    velocity = [np.zeros_like(v) for v in w]
    for _ in range(STEPS):
        for i, g in enumerate(_numpy_grads(*w)):
            g = g + decays[i](w[i])
            velocity[i] = MU * velocity[i] + g if momentum else g
            w[i] = w[i] - LR * velocity[i]
    return w


def _train(make_optimizer, group1, compiled=False):
    first, second = _model()
    groups = [{"params": first.parameters(), "weight_decay": None},
              {"params": second.parameters(), **group1}]
    opt = make_optimizer(groups)

    def step(x):
        loss = _loss(first, second, x)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    run = paddle.compile(step) if compiled else step
    for _ in range(STEPS):
        run(paddle.to_tensor(X))
    return [first.weight.numpy(), second.weight.numpy()]


def _l1(coeff):
    return lambda w: coeff * np.sign(w)


def _l2(coeff):
    return lambda w: coeff * w


def _none(w):
    return 0.0


# (group 1's settings, the optimizer's weight_decay, the decay of group 0, whose
# weight_decay is None, and of group 1)
SGD_CASES = [
    # a group's None falls back to the optimizer's weight_decay (was: no decay)
    pytest.param({"weight_decay": None}, 0.5, _l2(0.5), _l2(0.5), id="None-gets-L2"),
    pytest.param({"weight_decay": None}, L1Decay(0.5), _l1(0.5), _l1(0.5), id="None-gets-L1"),
    pytest.param({}, L1Decay(0.5), _l1(0.5), _l1(0.5), id="unset-gets-L1"),
    pytest.param({"weight_decay": 0.0}, 0.5, _l2(0.5), _none, id="zero-is-none"),
    pytest.param({"weight_decay": L1Decay(0.2)}, 0.5, _l2(0.5), _l1(0.2), id="own-L1"),
]

MOMENTUM_CASES = [
    # the optimizer's L1Decay reaches a group with None (was: no decay) ...
    pytest.param({"weight_decay": None}, L1Decay(0.5), _l1(0.5), _l1(0.5), id="None-gets-L1"),
    # ... but not its L2 decay
    pytest.param({"weight_decay": None}, 0.5, _none, _none, id="None-not-L2"),
    # a group's L2 decay adds to the optimizer's L1Decay (was: the L2 decay alone)
    pytest.param({"weight_decay": 0.2}, L1Decay(0.5), _l1(0.5),
                 lambda w: 0.5 * np.sign(w) + 0.2 * w, id="float-and-L1"),
    pytest.param({"weight_decay": L2Decay(0.2)}, L1Decay(0.5), _l1(0.5),
                 lambda w: 0.5 * np.sign(w) + 0.2 * w, id="L2-and-L1"),
    pytest.param({"weight_decay": L1Decay(0.2)}, 0.5, _none, _l1(0.2), id="own-L1"),
    pytest.param({"weight_decay": 0.2}, 0.5, _none, _l2(0.2), id="own-L2"),
    pytest.param({}, L1Decay(0.5), _l1(0.5), _l1(0.5), id="unset-gets-L1"),
    pytest.param({}, 0.5, _none, _l2(0.5), id="unset-gets-L2"),
]


def _sgd(weight_decay):
    return lambda groups: paddle.optimizer.SGD(LR, parameters=groups,
                                               weight_decay=weight_decay)


def _momentum(weight_decay):
    return lambda groups: paddle.optimizer.Momentum(LR, MU, parameters=groups,
                                                    weight_decay=weight_decay)


@pytest.mark.parametrize("group1, weight_decay, decay0, decay1", SGD_CASES)
def test_sgd_group_weight_decay(group1, weight_decay, decay0, decay1):
    weights = _train(_sgd(weight_decay), group1)
    for w, expected in zip(weights, _reference([decay0, decay1])):
        np.testing.assert_allclose(w, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("group1, weight_decay, decay0, decay1", MOMENTUM_CASES)
def test_momentum_group_weight_decay(group1, weight_decay, decay0, decay1):
    weights = _train(_momentum(weight_decay), group1)
    for w, expected in zip(weights, _reference([decay0, decay1], momentum=True)):
        np.testing.assert_allclose(w, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, group1", [
    (_sgd(L1Decay(0.5)), {"weight_decay": None}),
    (_momentum(L1Decay(0.5)), {"weight_decay": 0.2}),
    (_momentum(0.5), {"weight_decay": None})], ids=["SGD-None", "Momentum-float-and-L1",
                                                    "Momentum-None"])
def test_group_weight_decay_compiled_matches_eager(make, group1):
    eager = _train(make, group1)
    compiled = _train(make, group1, compiled=True)
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
