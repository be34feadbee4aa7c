"""RMSProp, Adagrad, Adadelta, Adamax, Lamb, NAdam and RAdam against independent NumPy
implementations of Paddle's update formulas over several steps, in float64 (exact)
and float32, eagerly and as one compiled training step."""
import numpy as np
import pytest

import irflow
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.optimizer import Adadelta, Adagrad, Adamax, Lamb, NAdam, RAdam, RMSProp
from irflow.static import InputSpec

from .test_optimizers import STEPS, check, start_and_grads, train


def ref_rmsprop(w, grads, lr, rho=0.95, eps=1e-6, momentum=0.0, centered=False):
    ms, mg, mom = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        ms = rho * ms + (1 - rho) * g * g
        mg = rho * mg + (1 - rho) * g if centered else mg
        mom = momentum * mom + lr * g / np.sqrt(ms - mg * mg + eps)
        w = w - mom
    return w


def ref_adagrad(w, grads, lr, eps=1e-6, initial=0.0):
    moment = np.full_like(w, initial)
    for g in grads:
        moment = moment + g * g
        w = w - lr * g / (np.sqrt(moment) + eps)
    return w


def ref_adadelta(w, grads, lr, eps=1e-6, rho=0.95):
    sq_grad, sq_update = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        sq_grad = rho * sq_grad + (1 - rho) * g * g
        update = -np.sqrt((sq_update + eps) / (sq_grad + eps)) * g
        sq_update = rho * sq_update + (1 - rho) * update * update
        w = w + lr * update
    return w


def ref_adamax(w, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8, l2=0.0):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        g = g + l2 * w
        m = beta1 * m + (1 - beta1) * g
        u = np.maximum(beta2 * u + eps, np.abs(g))
        w = w - lr / (1 - beta1 ** t) * m / u
    return w


def ref_lamb(w, grads, lr, decay=0.01, beta1=0.9, beta2=0.999, eps=1e-6, adapt=None):
    adapt = decay != 0 if adapt is None else adapt
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        r = (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps) + decay * w
        ratio = 1.0
        if adapt and np.linalg.norm(w) > 0 and np.linalg.norm(r) > 0:
            ratio = np.linalg.norm(w) / np.linalg.norm(r)
        w = w - lr * ratio * r
    return w


def ref_nadam(w, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8, psi=0.004):
    m, v, mu_product = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(grads, start=1):
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        mu_product *= mu_t
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = mu_next * m / (1 - mu_product * mu_next) + (1 - mu_t) * g / (1 - mu_product)
        w = w - lr * m_hat / (np.sqrt(v / (1 - beta2 ** t)) + eps)
    return w


def ref_radam(w, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = np.zeros_like(w), np.zeros_like(w)
    rho_inf = 2 / (1 - beta2) - 1
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        rho_t = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
        if rho_t > 5:
            r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            w = w - lr * m_hat * r * np.sqrt(1 - beta2 ** t) / (np.sqrt(v) + eps)
        else:
            w = w - lr * m_hat
    return w


@pytest.mark.parametrize("kwargs", [{}, {"beta1": 0.7, "momentum_decay": 0.3}])
def test_nadam(kwargs):
    got, opt = train(lambda ps: NAdam(0.02, parameters=ps, **kwargs))
    check(got, ref_nadam, lr=0.02, beta1=kwargs.get("beta1", 0.9),
          psi=kwargs.get("momentum_decay", 0.004))
    # in the parameter's shape, as Paddle keeps it
    decay_pow = opt.state_dict()["w_momentum_decay_pow_0"].numpy()
    np.testing.assert_allclose(decay_pow, np.full(got["w"].shape, 0.96 ** STEPS))


@pytest.mark.parametrize("beta2", [0.999, 0.9, 0.5])  # rectified from step 6, 6, never
def test_radam(beta2):
    # rho_t <= t, so the rectified step needs t >= 6: eight steps.
    rng = np.random.default_rng(4)
    w0, grads = rng.standard_normal((3, 2)), [rng.standard_normal((3, 2)) for _ in range(8)]
    p = irflow.Parameter(w0.copy(), name="w")
    opt = RAdam(0.02, beta2=beta2, parameters=[p])
    for g in grads:
        p.grad = g
        opt.step()
    np.testing.assert_allclose(p.numpy(), ref_radam(w0, grads, 0.02, beta2=beta2), rtol=1e-12)
    np.testing.assert_allclose(opt.state_dict()["w_rho_0"].numpy(),
                               np.full((3, 2), 8 * beta2 ** 8 / (1 - beta2 ** 8)))


@pytest.mark.parametrize("kwargs", [{}, {"rho": 0.8, "epsilon": 1e-3},
                                    {"momentum": 0.5}, {"centered": True, "momentum": 0.3}])
def test_rmsprop(kwargs):
    got, _ = train(lambda ps: RMSProp(0.01, parameters=ps, **kwargs))
    ref = {"eps" if k == "epsilon" else k: v for k, v in kwargs.items()}
    check(got, ref_rmsprop, lr=0.01, **ref)


@pytest.mark.parametrize("kwargs", [{}, {"epsilon": 1e-2, "initial_accumulator_value": 0.5}])
def test_adagrad(kwargs):
    got, _ = train(lambda ps: Adagrad(0.1, parameters=ps, **kwargs))
    check(got, ref_adagrad, lr=0.1, eps=kwargs.get("epsilon", 1e-6),
          initial=kwargs.get("initial_accumulator_value", 0.0))


@pytest.mark.parametrize("kwargs", [{}, {"rho": 0.5, "epsilon": 1e-3}])
def test_adadelta(kwargs):
    got, _ = train(lambda ps: Adadelta(0.5, parameters=ps, **kwargs))
    check(got, ref_adadelta, lr=0.5, eps=kwargs.get("epsilon", 1e-6),
          rho=kwargs.get("rho", 0.95))


@pytest.mark.parametrize("kwargs", [{}, {"beta1": 0.5, "beta2": 0.8, "weight_decay": 0.1}])
def test_adamax(kwargs):
    got, _ = train(lambda ps: Adamax(0.02, parameters=ps, **kwargs))
    check(got, ref_adamax, lr=0.02, beta1=kwargs.get("beta1", 0.9),
          beta2=kwargs.get("beta2", 0.999), l2=kwargs.get("weight_decay", 0.0))


@pytest.mark.parametrize("kwargs, ref", [
    ({}, {}),
    ({"lamb_weight_decay": 0.3, "beta1": 0.8}, {"decay": 0.3, "beta1": 0.8}),
    ({"lamb_weight_decay": 0.0}, {"decay": 0.0}),                       # no adaptation
    ({"lamb_weight_decay": 0.0, "always_adapt": True}, {"decay": 0.0, "adapt": True}),
])
def test_lamb(kwargs, ref):
    got, _ = train(lambda ps: Lamb(0.01, parameters=ps, **kwargs))
    check(got, ref_lamb, lr=0.01, **ref)


def test_lamb_excluded_parameters_get_no_decay_and_no_adaptation():
    got, _ = train(lambda ps: Lamb(0.01, lamb_weight_decay=0.2, parameters=ps,
                                   exclude_from_weight_decay_fn=lambda p: p.name == "b"))
    start, grads = start_and_grads()
    np.testing.assert_allclose(got["w"], ref_lamb(start["w"], [g["w"] for g in grads], 0.01,
                                                  decay=0.2), rtol=1e-12)
    np.testing.assert_allclose(got["b"], ref_lamb(start["b"], [g["b"] for g in grads], 0.01,
                                                  decay=0.0), rtol=1e-12)


def test_lamb_zero_parameter_keeps_ratio_one():
    p = irflow.Parameter(np.zeros(3), name="p")
    p.grad = np.array([1.0, -2.0, 0.5])
    Lamb(0.1, parameters=[p]).step()
    np.testing.assert_allclose(p.numpy(), ref_lamb(np.zeros(3), [np.array([1.0, -2.0, 0.5])],
                                                   0.1), rtol=1e-12)
    assert np.all(np.isfinite(p.numpy()))


def test_state_names_follow_paddle():
    def names(opt_cls, **kw):
        p = irflow.Parameter(np.ones(2), name="w")
        opt = opt_cls(0.1, parameters=[p], **kw)
        p.grad = np.ones(2)
        opt.step()
        return sorted(opt.state_dict())
    assert names(RMSProp) == ["w_mean_grad_0", "w_mean_square_0", "w_momentum_0"]
    assert names(Adagrad) == ["w_moment_0"]
    assert names(Adadelta) == ["w__avg_squared_grad_0", "w__avg_squared_update_0"]
    assert names(Adamax) == ["w_beta1_pow_acc_0", "w_inf_norm_0", "w_moment_0"]
    assert names(Lamb) == ["w_beta1_pow_acc_0", "w_beta2_pow_acc_0", "w_moment1_0",
                           "w_moment2_0"]
    assert names(NAdam) == ["w_beta2_pow_0", "w_moment1_0", "w_moment2_0",
                            "w_momentum_decay_pow_0", "w_mu_product_0"]
    assert names(RAdam) == ["w_beta1_pow_0", "w_beta2_pow_0", "w_moment1_0", "w_moment2_0",
                            "w_rho_0"]


@pytest.mark.parametrize("make, update_op", [
    (lambda ps: RMSProp(0.01, parameters=ps, centered=True, momentum=0.5), "sqrt"),
    (lambda ps: Adagrad(0.1, parameters=ps), "sqrt"),
    (lambda ps: Adadelta(1.0, parameters=ps), "sqrt"),
    (lambda ps: Adamax(0.01, parameters=ps), "abs"),
    (lambda ps: Lamb(0.01, parameters=ps), "select"),
    (lambda ps: NAdam(0.01, parameters=ps), "pow"),
    (lambda ps: RAdam(0.01, beta2=0.9, parameters=ps), "select")])
def test_float32_compiled_step_matches_eager(make, update_op):
    irflow.seed(3)
    compiled_model, eager_model = nn.Linear(4, 3), nn.Linear(4, 3)
    eager_model.set_state_dict(compiled_model.state_dict())

    def make_step(model):
        opt = make(model.parameters())

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return train_step

    compiled = irflow.jit.to_static(make_step(compiled_model),
                                    input_spec=[InputSpec([None, 4]), InputSpec([None], "int64")])
    eager = make_step(eager_model)
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        x = irflow.to_tensor(rng.standard_normal((6, 4)).astype(np.float32))
        y = irflow.to_tensor(rng.integers(0, 3, 6))
        np.testing.assert_allclose(compiled(x, y).numpy(), eager(x, y).numpy(), rtol=1e-5)
    assert update_op in [op.name for op in compiled.ir.walk()]  # the update is compiled
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        assert p.dtype == irflow.float32
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, match", [
    (lambda ps: RMSProp(None, parameters=ps), "learning_rate"),
    (lambda ps: RMSProp(0.1, rho=-1.0, parameters=ps), "rho"),
    (lambda ps: Adamax(0.1, beta1=1.0, parameters=ps), "beta1"),
    (lambda ps: Lamb(0.1, beta2=1.5, parameters=ps), "beta2"),
    (lambda ps: Adadelta(0.1, rho=None, parameters=ps), "rho"),
])
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make([irflow.Parameter(np.ones(2), name="w")])


def test_parameters_without_gradients_have_no_state_in_the_state_dict():
    """BatchNorm's running statistics are parameters that take no gradient: as in
    Paddle, the state dict holds no accumulators of theirs, and a state dict without
    them (one Paddle saved) loads; one missing a trained parameter's state does not."""
    net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1D(4))
    opt = irflow.optimizer.Adam(parameters=net.parameters())
    net(irflow.randn([8, 4])).mean().backward()
    opt.step()
    state = opt.state_dict()
    stats = [p.name for p in net.parameters() if p.stop_gradient]
    trained = [p.name for p in net.parameters() if not p.stop_gradient]
    assert len(stats) == 2 and not any(k.startswith(tuple(stats)) for k in state)
    assert all(any(k.startswith(name + "_") for k in state) for name in trained)
    fresh = irflow.optimizer.Adam(parameters=net.parameters())
    fresh.set_state_dict(state)
    for name, t in fresh.state_dict().items():
        np.testing.assert_array_equal(t.numpy(), state[name].numpy())
    missing = dict(state)
    del missing[next(k for k in state if k.startswith(trained[0]))]
    with pytest.raises(KeyError, match="is missing from the state dict"):
        opt.set_state_dict(missing)
    fresh = irflow.optimizer.Adam(parameters=net.parameters())
    fresh.set_state_dict(missing)  # kept for the first step, as Paddle does
    net(irflow.randn([8, 4])).mean().backward()
    with pytest.raises(KeyError, match="is missing from the state dict"):
        fresh.step()
    net[0].weight.stop_gradient = True  # trained, then frozen: its state stays
    assert set(opt.state_dict()) == set(state)
