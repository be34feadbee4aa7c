"""SGD, Momentum, Adam and AdamW against independent NumPy implementations of
Paddle's update formulas, over several steps; parameter groups, per-parameter
settings, state dicts, gradients and learning-rate handling."""
import numpy as np
import pytest

import irflow
from irflow.optimizer import SGD, Adam, AdamW, Momentum, Optimizer
from irflow.optimizer import lr as L
from irflow.optimizer.regularizer import L1Decay, L2Decay

STEPS = 5
SHAPES = {"w": (4, 3), "b": (3,)}


def start_and_grads(seed=0, dtype="float64"):
    rng = np.random.default_rng(seed)
    start = {k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}
    grads = [{k: rng.standard_normal(s).astype(dtype) for k, s in SHAPES.items()}
             for _ in range(STEPS)]
    return start, grads


def train(make, seed=0, dtype="float64", scheduler=None):
    """Parameters after STEPS steps of the optimizer `make(params)` on fixed gradients,
    and the optimizer."""
    start, grads = start_and_grads(seed, dtype)
    params = {k: irflow.Parameter(v.copy(), name=k) for k, v in start.items()}
    opt = make(list(params.values()))
    for g in grads:
        for k, p in params.items():
            p.grad = g[k]
        opt.step()
        if scheduler is not None:
            scheduler.step()
    return {k: p.numpy() for k, p in params.items()}, opt


# ---------------------------------------------------------------- NumPy references

def ref_sgd(w, grads, lrs, decay=0.0):
    for g, lr in zip(grads, lrs):
        w = w - lr * (g + decay * w)
    return w


def ref_momentum(w, grads, lrs, mu, nesterov=False, decay=0.0, rescale=1.0):
    v = np.zeros_like(w)
    for g, lr in zip(grads, lrs):
        g = g * rescale + decay * w
        v = mu * v + g
        w = w - lr * (g + mu * v) if nesterov else w - lr * v
    return w


def ref_adam(w, grads, lrs, beta1=0.9, beta2=0.999, eps=1e-8, l2=0.0, decoupled=0.0,
             amsgrad=False):
    m, v, v_max = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, (g, lr) in enumerate(zip(grads, lrs), start=1):
        w = w - lr * decoupled * w
        g = g + l2 * w
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = np.maximum(v_max, v)
        # Paddle's form of bias correction: the powers start at beta (t = 1).
        lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        w = w - lr_t * m / (np.sqrt(v_max if amsgrad else v) + eps * np.sqrt(1 - beta2 ** t))
    return w


def check(got: dict, ref, rtol=1e-12, **kwargs):
    start, grads = start_and_grads(kwargs.pop("seed", 0), kwargs.pop("dtype", "float64"))
    for k in SHAPES:
        want = ref(start[k], [g[k] for g in grads], **kwargs)
        np.testing.assert_allclose(got[k], want, rtol=rtol, atol=rtol)


# ---------------------------------------------------------------- update rules

@pytest.mark.parametrize("decay", [None, 0.1])
def test_sgd(decay):
    got, _ = train(lambda ps: SGD(0.1, parameters=ps, weight_decay=decay))
    check(got, ref_sgd, lrs=[0.1] * STEPS, decay=decay or 0.0)


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("decay, rescale", [(None, 1.0), (0.05, 1.0), (0.05, 0.5)])
def test_momentum(nesterov, decay, rescale):
    got, _ = train(lambda ps: Momentum(0.05, momentum=0.8, parameters=ps,
                                       use_nesterov=nesterov, weight_decay=decay,
                                       rescale_grad=rescale))
    check(got, ref_momentum, lrs=[0.05] * STEPS, mu=0.8, nesterov=nesterov,
          decay=decay or 0.0, rescale=rescale)


@pytest.mark.parametrize("kwargs", [
    {},
    {"beta1": 0.5, "beta2": 0.9, "epsilon": 1e-2},
    {"weight_decay": 0.1},
    {"amsgrad": True, "beta2": 0.5},
])
def test_adam(kwargs):
    got, _ = train(lambda ps: Adam(0.02, parameters=ps, **kwargs))
    ref_kwargs = {k: v for k, v in kwargs.items() if k != "weight_decay" and k != "epsilon"}
    check(got, ref_adam, lrs=[0.02] * STEPS, l2=kwargs.get("weight_decay", 0.0),
          eps=kwargs.get("epsilon", 1e-8), **ref_kwargs)


@pytest.mark.parametrize("decay", [0.01, 0.3])
def test_adamw_decouples_weight_decay(decay):
    got, _ = train(lambda ps: AdamW(0.02, parameters=ps, weight_decay=decay))
    check(got, ref_adam, lrs=[0.02] * STEPS, decoupled=decay)


def test_adamw_defaults_to_paddle_decay():
    got, opt = train(lambda ps: AdamW(0.02, parameters=ps))
    check(got, ref_adam, lrs=[0.02] * STEPS, decoupled=0.01)


def test_adamw_apply_decay_param_fun_and_lr_ratio():
    got, _ = train(lambda ps: AdamW(0.02, parameters=ps, weight_decay=0.3,
                                    apply_decay_param_fun=lambda name: name != "b",
                                    lr_ratio=lambda p: 0.5 if p.name == "w" else 1.0))
    start, grads = start_and_grads()
    np.testing.assert_allclose(got["w"], ref_adam(start["w"], [g["w"] for g in grads],
                                                  [0.01] * STEPS, decoupled=0.3), rtol=1e-12)
    np.testing.assert_allclose(got["b"], ref_adam(start["b"], [g["b"] for g in grads],
                                                  [0.02] * STEPS), rtol=1e-12)


def test_float32_parameters_stay_float32():
    for make in [lambda ps: SGD(0.1, parameters=ps), lambda ps: Adam(0.01, parameters=ps)]:
        got, opt = train(make, dtype="float32")
        assert all(v.dtype == np.float32 for v in got.values())
        assert all(t.dtype == irflow.float32 for t in opt.state_dict().values())
    got, _ = train(lambda ps: Adam(0.01, parameters=ps, weight_decay=0.1), dtype="float32")
    check(got, ref_adam, rtol=1e-5, dtype="float32", lrs=[0.01] * STEPS, l2=0.1)


def test_gradient_assigned_in_another_dtype_is_cast():
    p = irflow.Parameter(np.ones(3, "float32"), name="p")
    p.grad = np.full(3, 0.5)  # float64
    SGD(0.1, parameters=[p]).step()
    assert p.dtype == irflow.float32
    np.testing.assert_allclose(p.numpy(), np.float32(0.95))


# ---------------------------------------------------------------- learning rate

def test_scheduler_drives_the_learning_rate():
    sched = L.StepDecay(0.1, step_size=2, gamma=0.5)
    got, _ = train(lambda ps: Adam(sched, parameters=ps), scheduler=sched)
    check(got, ref_adam, lrs=[0.1, 0.1, 0.05, 0.05, 0.025])


def test_warmup_cosine_with_momentum():
    sched = L.LinearWarmup(L.CosineAnnealingDecay(0.1, T_max=2), 2, 0.0, 0.1)
    lrs = []
    probe = L.LinearWarmup(L.CosineAnnealingDecay(0.1, T_max=2), 2, 0.0, 0.1)
    for _ in range(STEPS):
        lrs.append(probe())
        probe.step()
    got, _ = train(lambda ps: Momentum(sched, parameters=ps, use_nesterov=True), scheduler=sched)
    check(got, ref_momentum, lrs=lrs, mu=0.9, nesterov=True)


def test_learning_rate_tensor_follows_the_scheduler_at_once():
    sched = L.ExponentialDecay(0.5, 0.5)
    p = irflow.Parameter(np.ones(2), name="p")
    opt = SGD(sched, parameters=[p])
    (lr,) = opt._lr_tensors.values()
    assert lr.persistable and lr.shape == [] and lr.dtype == irflow.float64
    assert lr.item() == 0.5
    sched.step()  # no optimizer step in between: a compiled step reads the tensor
    assert lr.item() == 0.25 and opt.get_lr() == 0.25
    sched.set_state_dict({"last_epoch": 4, "last_lr": 0.03125})
    assert lr.item() == 0.03125


def test_get_lr_and_set_lr():
    p = irflow.Parameter(np.ones(2), name="p")
    opt = SGD(0.5, parameters=[p])
    assert opt.get_lr() == 0.5
    opt.set_lr(0.25)
    assert opt.get_lr() == 0.25
    p.grad = np.ones(2)
    opt.step()
    np.testing.assert_allclose(p.numpy(), 0.75)
    with pytest.raises(TypeError, match="float"):
        opt.set_lr("0.1")
    opt.set_lr_scheduler(L.StepDecay(0.1, 1))
    assert opt.get_lr() == 0.1
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.1)
    with pytest.raises(TypeError, match="LRScheduler"):
        opt.set_lr_scheduler(0.1)


def test_replaced_scheduler_no_longer_drives_the_optimizer():
    old, new = L.StepDecay(0.1, 1), L.StepDecay(0.2, 1)
    opt = SGD(old, parameters=[irflow.Parameter(np.ones(2), name="p")])
    opt.set_lr_scheduler(new)
    old.step()
    (lr,) = opt._lr_tensors.values()
    assert lr.item() == pytest.approx(0.2)


# ---------------------------------------------------------------- groups and attributes

def test_parameter_groups():
    start, grads = start_and_grads()
    w, b = (irflow.Parameter(start[k].copy(), name=k) for k in "wb")
    opt = Adam(0.02, parameters=[{"params": [w]},
                                 {"params": b, "learning_rate": 0.5, "beta1": 0.7,
                                  "weight_decay": 0.1}], weight_decay=0.01)
    for g in grads:
        w.grad, b.grad = g["w"], g["b"]
        opt.step()
    np.testing.assert_allclose(w.numpy(), ref_adam(start["w"], [g["w"] for g in grads],
                                                   [0.02] * STEPS, l2=0.01), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), ref_adam(start["b"], [g["b"] for g in grads],
                                                   [0.01] * STEPS, beta1=0.7, l2=0.1),
                               rtol=1e-12)
    assert opt._param_groups[1]["params"] == [b] and opt._param_groups[0]["beta1"] == 0.9


def test_momentum_groups_override_momentum_and_nesterov():
    start, grads = start_and_grads()
    w, b = (irflow.Parameter(start[k].copy(), name=k) for k in "wb")
    opt = Momentum(0.05, parameters=[{"params": [w], "momentum": 0.5, "use_nesterov": True},
                                     {"params": [b]}])
    for g in grads:
        w.grad, b.grad = g["w"], g["b"]
        opt.step()
    np.testing.assert_allclose(w.numpy(), ref_momentum(start["w"], [g["w"] for g in grads],
                                                       [0.05] * STEPS, 0.5, True), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), ref_momentum(start["b"], [g["b"] for g in grads],
                                                       [0.05] * STEPS, 0.9), rtol=1e-12)


def test_adamw_group_weight_decay():
    start, grads = start_and_grads()
    w, b = (irflow.Parameter(start[k].copy(), name=k) for k in "wb")
    opt = AdamW(0.02, parameters=[{"params": [w], "weight_decay": 0.2}, {"params": [b]}])
    for g in grads:
        w.grad, b.grad = g["w"], g["b"]
        opt.step()
    np.testing.assert_allclose(w.numpy(), ref_adam(start["w"], [g["w"] for g in grads],
                                                   [0.02] * STEPS, decoupled=0.2), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), ref_adam(start["b"], [g["b"] for g in grads],
                                                   [0.02] * STEPS, decoupled=0.01), rtol=1e-12)


def test_parameter_learning_rate_and_regularizer():
    start, grads = start_and_grads()
    w, b = (irflow.Parameter(start[k].copy(), name=k) for k in "wb")
    w.optimize_attr = {"learning_rate": 0.5}  # as ParamAttr(learning_rate=0.5) sets it
    b.regularizer = L1Decay(0.2)              # wins over the optimizer's weight_decay
    opt = SGD(0.1, parameters=[w, b], weight_decay=0.05)
    for g in grads:
        w.grad, b.grad = g["w"], g["b"]
        opt.step()
    np.testing.assert_allclose(w.numpy(), ref_sgd(start["w"], [g["w"] for g in grads],
                                                  [0.05] * STEPS, 0.05), rtol=1e-12)
    want = start["b"]
    for g in grads:
        want = want - 0.1 * (g["b"] + 0.2 * np.sign(want))
    np.testing.assert_allclose(b.numpy(), want, rtol=1e-12)


def test_group_weight_decay_replaces_the_parameter_regularizer():
    p = irflow.Parameter(np.ones(2), name="p")
    p.regularizer = L2Decay(10.0)
    p.grad = np.zeros(2)
    SGD(0.1, parameters=[{"params": [p], "weight_decay": 0.5}]).step()
    np.testing.assert_allclose(p.numpy(), 1 - 0.1 * 0.5)


def bad_parameters(case):
    p = irflow.Parameter(np.ones(2), name="p")
    return {"none": None, "tensor": p, "dict": {"params": [p]}, "empty": [],
            "array": [np.ones(2)], "int": [irflow.to_tensor([1, 2])], "twice": [p, p],
            "two groups": [{"params": [p]}, {"params": [p]}],
            "set": [{"params": {p}}], "no params": [{"lr": 0.1}]}[case]


@pytest.mark.parametrize("case, error, match", [
    ("none", irflow.IrflowError, "parameters"),
    ("tensor", TypeError, "single tensor"),
    ("dict", TypeError, "list of dicts"),
    ("empty", ValueError, "empty"),
    ("array", TypeError, "ndarray"),
    ("int", TypeError, "float tensors"),
    ("twice", ValueError, "more than once"),
    ("two groups", ValueError, "more than once"),
    ("set", TypeError, "set"),
    ("no params", TypeError, "'params'"),
])
def test_bad_parameters(case, error, match):
    with pytest.raises(error, match=match):
        SGD(0.1, parameters=bad_parameters(case))


@pytest.mark.parametrize("make, error, match", [
    (lambda ps: SGD("0.1", parameters=ps), TypeError, "learning_rate"),
    (lambda ps: SGD(0.1, parameters=ps, weight_decay="x"), TypeError, "weight_decay"),
    (lambda ps: Adam(0.1, beta1=1.0, parameters=ps), ValueError, "beta1"),
    (lambda ps: Adam(0.1, beta2=-0.1, parameters=ps), ValueError, "beta2"),
    (lambda ps: Adam(0.1, epsilon=-1.0, parameters=ps), ValueError, "epsilon"),
    (lambda ps: AdamW(0.1, weight_decay=None, parameters=ps), TypeError, "weight_decay"),
    (lambda ps: Momentum(0.1, momentum=None, parameters=ps), ValueError, "momentum"),
    (lambda ps: SGD(0.1, parameters=[{"params": ps, "grad_clip": 1.0}]), TypeError,
     "grad_clip"),
])
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make([irflow.Parameter(np.ones(2), name="p")])


# ---------------------------------------------------------------- gradients

def test_parameters_without_gradient_or_frozen_are_skipped():
    w, b, f = (irflow.Parameter(np.ones(3), name=n) for n in ("w", "b", "f"))
    f.stop_gradient = True
    opt = Adam(0.1, parameters=[w, b, f])
    w.grad = f.grad = np.ones(3)
    opt.step()
    state = opt.state_dict()
    assert not np.allclose(w.numpy(), 1)
    np.testing.assert_array_equal(b.numpy(), 1)
    np.testing.assert_array_equal(f.numpy(), 1)
    assert state["w_beta1_pow_acc_0"].item() == pytest.approx(0.81)
    assert not any(k.startswith(("b_", "f_")) for k in state)  # never updated: no state


def test_clear_grad():
    w, f = irflow.Parameter(np.ones(3), name="w"), irflow.Parameter(np.ones(3), name="f")
    f.stop_gradient = True
    opt = SGD(0.1, parameters=[w, f])
    w.grad, f.grad = np.ones(3), np.ones(3)
    opt.clear_grad()  # Paddle 3: zero-filled by default
    np.testing.assert_array_equal(w.grad.numpy(), 0)
    np.testing.assert_array_equal(f.grad.numpy(), 1)  # frozen parameters are left alone
    opt.clear_grad(set_to_zero=False)
    assert w.grad is None
    w.grad = np.ones(3)
    opt.zero_grad()  # set_to_none=True by default
    assert w.grad is None
    w.grad = np.ones(3)
    opt.clear_gradients()
    np.testing.assert_array_equal(w.grad.numpy(), 0)


def quadratic_problem():
    rng = np.random.default_rng(3)
    x = irflow.to_tensor(rng.standard_normal((8, 3)))
    y = irflow.to_tensor(rng.standard_normal((8, 1)))
    w = irflow.Parameter(rng.standard_normal((3, 1)), name="w")
    b = irflow.Parameter(np.zeros(1), name="b")

    def loss_fn():
        return irflow.mean((irflow.matmul(x, w) + b - y) ** 2)
    return w, b, loss_fn


def test_training_with_backward_reduces_the_loss():
    for make in [lambda ps: SGD(0.1, parameters=ps), lambda ps: Adam(0.1, parameters=ps),
                 lambda ps: Momentum(0.05, parameters=ps, use_nesterov=True),
                 lambda ps: AdamW(0.1, parameters=ps)]:
        w, b, loss_fn = quadratic_problem()
        opt = make([w, b])
        first = loss_fn().item()
        for _ in range(30):
            loss = loss_fn()
            loss.backward()
            opt.step()
            opt.clear_grad()
        assert loss_fn().item() < 0.5 * first


def test_minimize_differentiates_unless_backward_ran():
    runs = []
    for how in ["minimize", "backward, then minimize", "backward, then step"]:
        w, b, loss_fn = quadratic_problem()
        opt = SGD(0.1, parameters=[w, b])
        loss = loss_fn()
        if how != "minimize":
            loss.backward()
        if how.endswith("step"):
            opt.step()
        else:
            ops, params_grads = opt.minimize(loss)
            assert ops == [] and [p for p, _ in params_grads] == [w, b]
        runs.append(w.numpy())
    np.testing.assert_array_equal(runs[0], runs[2])
    np.testing.assert_array_equal(runs[1], runs[2])


def test_minimize_on_some_parameters():
    w, b, loss_fn = quadratic_problem()
    opt = SGD(0.1, parameters=[w, b])
    b0 = b.numpy()
    _, params_grads = opt.minimize(loss_fn(), parameters=[w])
    assert [p for p, _ in params_grads] == [w]
    np.testing.assert_array_equal(b.numpy(), b0)
    w0 = w.numpy()
    opt.clear_grad()
    opt.minimize(loss_fn(), no_grad_set={"w"})
    np.testing.assert_array_equal(w.numpy(), w0)
    assert not np.array_equal(b.numpy(), b0)


# ---------------------------------------------------------------- state

def step_once(opt, *params):
    """One step with gradient ones, which makes the parameters' state (Paddle makes
    it at the first update)."""
    for p in params:
        p.grad = np.ones(p.shape)
    opt.step()
    return opt


def test_state_dict_names_follow_paddle():
    w, b = irflow.Parameter(np.ones((2, 2)), name="fc.w_0"), irflow.Parameter(np.ones(2),
                                                                            name="fc.b_0")
    assert list(Adam(0.1, parameters=[w, b]).state_dict()) == []  # made at the first step
    assert list(step_once(Adam(0.1, parameters=[w, b]), w, b).state_dict()) == [
        "fc.w_0_moment1_0", "fc.b_0_moment1_0", "fc.w_0_moment2_0", "fc.b_0_moment2_0",
        "fc.w_0_beta1_pow_acc_0", "fc.b_0_beta1_pow_acc_0", "fc.w_0_beta2_pow_acc_0",
        "fc.b_0_beta2_pow_acc_0"]
    assert list(step_once(Momentum(0.1, parameters=[w], name="opt"), w).state_dict()) == \
        ["fc.w_0_opt_velocity_0"]
    unnamed = [irflow.Parameter(np.ones(2)), irflow.Parameter(np.ones(2))]
    assert list(step_once(SGD(0.1, parameters=unnamed), *unnamed).state_dict()) == []
    assert list(step_once(Momentum(0.1, parameters=unnamed), *unnamed).state_dict()) == \
        ["param_0_velocity_0", "param_1_velocity_0"]


def test_optimizer_state_is_persistable():
    w = irflow.Parameter(np.ones((2, 2)), name="w")
    opt = step_once(AdamW(0.1, parameters=[w], amsgrad=True), w)
    state = opt.state_dict()
    assert set(state) == {"w_moment1_0", "w_moment2_0", "w_moment2_max_0",
                          "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"}
    assert all(t.persistable and t.stop_gradient for t in state.values())
    # Paddle 3.3.1 keeps the powers as [1]
    assert state["w_beta1_pow_acc_0"].shape == [1]
    assert state["w_beta1_pow_acc_0"].item() == pytest.approx(0.81)
    assert all(t.persistable for t in opt._lr_tensors.values())


def more_steps(opt, params: dict, steps=2) -> dict:
    _, grads = start_and_grads(seed=1)
    for g in grads[:steps]:
        for k, p in params.items():
            p.grad = g[k]
        opt.step()
    return {k: p.numpy() for k, p in params.items()}


@pytest.mark.parametrize("make", [
    lambda ps: Momentum(0.05, parameters=ps),
    lambda ps: Adam(L.StepDecay(0.05, 1, 0.5), parameters=ps),
    lambda ps: AdamW(0.05, parameters=ps, amsgrad=True),
])
def test_state_dict_round_trip(make):
    trained, opt = train(make)
    saved = {k: (v.numpy() if isinstance(v, irflow.Tensor) else dict(v))
             for k, v in opt.state_dict().items()}
    fresh = {k: irflow.Parameter(trained[k].copy(), name=k) for k in SHAPES}
    resumed = make(list(fresh.values()))
    resumed.set_state_dict(saved)
    restarted = {k: irflow.Parameter(trained[k].copy(), name=k) for k in SHAPES}
    without_state = more_steps(make(list(restarted.values())), restarted)
    got = more_steps(resumed, fresh)
    want = more_steps(opt, {p.name: p for p in opt._parameter_list})
    for k in SHAPES:
        np.testing.assert_array_equal(got[k], want[k])
    assert not np.array_equal(got["w"], without_state["w"])


def test_set_state_dict_accepts_0d_powers_and_copies_arrays():
    """irflow's checkpoints kept the beta powers 0-d; Paddle's keep them [1]."""
    w = irflow.Parameter(np.ones(2), name="w")
    opt = step_once(Adam(0.1, parameters=[w]), w)
    moment = np.array([0.5, 0.25])
    state = {k: v.numpy() for k, v in opt.state_dict().items()}
    state.update({"w_moment1_0": moment, "w_beta1_pow_acc_0": np.array(0.729, "float32")})
    opt.set_state_dict(state)
    moment[0] = 9.0  # the optimizer holds its own copy
    loaded = opt.state_dict()
    np.testing.assert_array_equal(loaded["w_moment1_0"].numpy(), [0.5, 0.25])
    assert loaded["w_beta1_pow_acc_0"].shape == [1]
    assert loaded["w_beta1_pow_acc_0"].dtype == irflow.float64
    assert loaded["w_beta1_pow_acc_0"].item() == pytest.approx(0.729)


def test_set_state_dict_errors():
    w = irflow.Parameter(np.ones(2), name="w")
    opt = step_once(Adam(0.1, parameters=[w]), w)
    state = {k: v.numpy() for k, v in opt.state_dict().items()}
    with pytest.raises(KeyError, match="w_moment2_0"):
        opt.set_state_dict({k: v for k, v in state.items() if k != "w_moment2_0"})
    with pytest.raises(ValueError, match=r"shape \[2\].*\[3\]"):
        opt.set_state_dict({**state, "w_moment1_0": np.ones(3)})
    sched_opt = Adam(L.StepDecay(0.1, 1), parameters=[w])
    with pytest.raises(KeyError, match="LR_Scheduler"):
        sched_opt.set_state_dict(state)


def test_set_state_dict_restores_the_scheduler_and_learning_rate():
    sched = L.StepDecay(0.1, 1, 0.5)
    opt = SGD(sched, parameters=[irflow.Parameter(np.ones(2), name="w")])
    opt.set_state_dict({"LR_Scheduler": {"last_epoch": 3, "last_lr": 0.0125}})
    assert sched.last_epoch == 3 and opt.get_lr() == 0.0125
    (lr,) = opt._lr_tensors.values()
    assert lr.item() == 0.0125


def test_base_class_is_abstract():
    opt = Optimizer(0.1, [irflow.Parameter(np.ones(2), name="w")])
    opt._parameter_list[0].grad = np.ones(2)
    with pytest.raises(NotImplementedError):
        opt.step()


# ---------------------------------------------------------------- compiled steps

def clip():
    from irflow.optimizer.clip import ClipGradByGlobalNorm
    return ClipGradByGlobalNorm(1.0)


@pytest.mark.parametrize("make", [
    lambda ps, s: SGD(s, parameters=ps, weight_decay=0.01, grad_clip=clip()),
    lambda ps, s: Momentum(s, parameters=ps, use_nesterov=True, grad_clip=clip()),
    lambda ps, s: Adam(s, parameters=ps, amsgrad=True, grad_clip=clip()),
    lambda ps, s: AdamW(s, parameters=ps, grad_clip=clip()),
])
def test_compiled_training_step_matches_eager(make):
    """The whole step (forward, backward, optimizer update) traced into one program
    gives the eager results, and the scheduler's learning rate reaches the compiled
    program without recompiling it (a traced constant would freeze it)."""
    def run(compiled):
        w, b, loss_fn = quadratic_problem()
        sched = L.StepDecay(0.1, step_size=2, gamma=0.5)
        opt = make([w, b], sched)

        def train_step():
            loss = loss_fn()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        step = irflow.compile(train_step) if compiled else train_step
        losses = []
        for _ in range(5):
            losses.append(step().item())
            sched.step()
        state = {k: v.numpy() for k, v in opt.state_dict().items() if k != "LR_Scheduler"}
        return [losses, w.numpy(), b.numpy(), *state.values()]

    for got, want in zip(run(True), run(False)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
