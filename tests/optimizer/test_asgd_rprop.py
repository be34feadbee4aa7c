"""ASGD and Rprop against independent NumPy implementations of Paddle 3.3.1's kernels
(phi's asgd and rprop), against Paddle's own numbers, and compiled against eager."""
import numpy as np
import pytest

import irflow
import irflow.nn as nn
from irflow.optimizer import ASGD, Rprop

from .test_optimizers import STEPS, check, train


def ref_asgd(w, grads, lr, batch_num, l2=0.0):
    d, y, m = np.zeros_like(w), np.zeros((batch_num, *w.shape)), 0
    for g in grads:
        g = g + l2 * w
        i = m % batch_num
        d = d - y[i] + g
        y[i] = g
        m += 1
        w = w - lr / min(m, batch_num) * d
    return w


def ref_rprop(w, grads, lr, learning_rate_range=(1e-5, 50), etas=(0.5, 1.2)):
    prev, rates = np.zeros_like(w), np.full_like(w, lr)
    for g in grads:
        product = g * prev
        eta = np.where(product > 0, etas[1], np.where(product < 0, etas[0], 1.0))
        g = np.where(product < 0, 0.0, g)
        rates = np.clip(rates * eta, *learning_rate_range)
        w = w - np.sign(g) * rates
        prev = g
    return w


@pytest.mark.parametrize("batch_num", [1, 2, 3, 7])
def test_asgd(batch_num):
    got, opt = train(lambda ps: ASGD(0.1, batch_num=batch_num, parameters=ps))
    check(got, ref_asgd, lr=0.1, batch_num=batch_num)
    state = opt.state_dict()
    assert list(state) == ["w_d_0", "b_d_0", "w_y_0", "b_y_0", "w_m_0", "b_m_0"]
    assert state["w_y_0"].shape == [batch_num, 4, 3]
    assert state["w_m_0"].dtype == irflow.int64 and state["w_m_0"].numpy().tolist() == [STEPS]


def test_asgd_with_weight_decay():
    got, _ = train(lambda ps: ASGD(0.05, batch_num=2, weight_decay=0.3, parameters=ps))
    check(got, ref_asgd, lr=0.05, batch_num=2, l2=0.3)


@pytest.mark.parametrize("kwargs", [{}, {"learning_rate_range": (0.05, 0.2),
                                         "etas": (0.3, 1.5)}])
def test_rprop(kwargs):
    got, opt = train(lambda ps: Rprop(0.1, parameters=ps, **kwargs))
    check(got, ref_rprop, lr=0.1, **kwargs)
    assert list(opt.state_dict()) == ["w_prevs_0", "b_prevs_0", "w_learning_rates_0",
                                      "b_learning_rates_0"]


def _paddle_setup(make, steps=3):
    """The hunt's setup: a [3] parameter, loss p.g + 0.1 |p|^2 for three fixed g."""
    p = irflow.create_parameter([3], "float32")
    p.set_value(irflow.to_tensor(np.array([1.0, -2.0, 0.5], "float32")))
    opt = make([p])
    grads = [np.array([0.3, -0.2, 0.1], "float32"), np.array([0.2, 0.4, -0.3], "float32"),
             np.array([0.5, 0.1, 0.2], "float32"), np.array([-0.5, 0.3, 0.2], "float32")]
    for g in grads[:steps]:
        ((p * irflow.to_tensor(g)).sum() + (p * p).sum() * 0.1).backward()
        opt.step()
        opt.clear_grad()
    return p, opt


def test_asgd_state_as_paddle():
    p, opt = _paddle_setup(lambda ps: ASGD(0.1, batch_num=2, parameters=ps), steps=4)
    state = {k[len(p.name) + 1:]: v.numpy() for k, v in opt.state_dict().items()}
    # Paddle 3.3.1, after the fourth step
    np.testing.assert_allclose(p.numpy(), [0.8343705534934998, -1.8790171146392822,
                                           0.44604000449180603], rtol=1e-6)
    np.testing.assert_allclose(state["d_0"], [0.35148900747299194, -0.3615388572216034,
                                              0.5911595821380615], rtol=1e-5)
    np.testing.assert_allclose(state["y_0"], [
        [0.6811000108718872, -0.282120019197464, 0.29603999853134155],
        [-0.32961100339889526, -0.07941880822181702, 0.29511958360671997]], rtol=1e-5)
    assert state["m_0"].dtype == np.int64 and state["m_0"].tolist() == [4]


def test_rprop_state_as_paddle():
    p, opt = _paddle_setup(lambda ps: Rprop(0.1, parameters=ps))
    state = {k[len(p.name) + 1:]: v.numpy() for k, v in opt.state_dict().items()}
    # Paddle 3.3.1, after the third step
    np.testing.assert_allclose(state["prevs_0"], [0.656000018119812, -0.2800000011920929,
                                                  0.2800000011920929], rtol=1e-6)
    np.testing.assert_allclose(state["learning_rates_0"], [0.14400000870227814,
                                                           0.05000000074505806,
                                                           0.05000000074505806], rtol=1e-6)


def test_zero_dimensional_parameter():
    for make, ref, kwargs in [(lambda ps: ASGD(0.1, batch_num=2, parameters=ps), ref_asgd,
                               {"lr": 0.1, "batch_num": 2}),
                              (lambda ps: Rprop(0.1, parameters=ps), ref_rprop, {"lr": 0.1})]:
        p = irflow.Parameter(np.asarray(1.5), name="s")
        opt = make([p])
        grads = [np.asarray(g) for g in (0.5, -0.25, 0.75)]
        for g in grads:
            p.grad = g
            opt.step()
        assert p.shape == []
        np.testing.assert_allclose(p.numpy(), ref(np.asarray(1.5), grads, **kwargs),
                                   rtol=1e-12)


class Branches(nn.Layer):
    """`a` is used only when the input's mean is positive: its gradient exists on
    some runs only."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        h = self.b(x)
        if x.mean() > 0:
            h = h + self.a(x)
        return h


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("make", [lambda ps: ASGD(0.05, batch_num=3, parameters=ps),
                                  lambda ps: Rprop(0.01, parameters=ps)],
                         ids=["ASGD", "Rprop"])
def test_compiled_step_matches_eager(make, backend):
    """Whole training steps compiled into one program give eager's parameters and
    state after every step, a parameter whose gradient exists on some runs only
    included (its state appears once it has been updated, as eagerly)."""
    inputs = [[[-1.0, -2.0]], [[1.0, 2.0]], [[0.5, 0.4]], [[-0.3, 0.1]], [[2.0, 3.0]]]

    def trajectory(compiled):
        irflow.seed(0)
        net = Branches().astype("float64")
        opt = make(net.parameters())

        def step(x):
            loss = (net(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        run = irflow.compile(step, backend=backend) if compiled else step
        names = [p.name for p in net.parameters()]

        def positional(key):  # the two runs' parameters have other unique names
            i = next(i for i, name in enumerate(names) if key.startswith(name + "_"))
            return f"param{i}{key[len(names[i]):]}"
        states = []
        for x in inputs:
            run(irflow.to_tensor(np.array(x)))
            state = {positional(k): t.numpy() for k, t in opt.state_dict().items()}
            states.append(([p.numpy() for p in net.parameters()], state))
        return states

    for k, ((params, state), (want_params, want_state)) in enumerate(
            zip(trajectory(True), trajectory(False))):
        assert list(state) == list(want_state), f"step {k}"
        for got, want in zip([*params, *state.values()], [*want_params, *want_state.values()]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"step {k}")


@pytest.mark.parametrize("make, error, match", [
    (lambda ps: ASGD(0.1, batch_num=0, parameters=ps), ValueError, "batch_num"),
    (lambda ps: ASGD(0.1, batch_num=2.0, parameters=ps), TypeError, "batch_num"),
    (lambda ps: ASGD(None, parameters=ps), ValueError, "learning_rate"),
    (lambda ps: Rprop(1e-6, parameters=ps), ValueError, "learning_rate_range"),
    (lambda ps: Rprop(0.1, etas=(1.2, 0.5), parameters=ps), ValueError, "etas"),
    (lambda ps: Rprop(irflow.optimizer.lr.StepDecay(0.1, 2), parameters=ps), TypeError,
     "learning_rate"),
])
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make([irflow.Parameter(np.ones(2), name="w")])
