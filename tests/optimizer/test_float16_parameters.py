"""Float16 parameters as Paddle's optimizers update them (its documented GPU
behaviour; its CPU build has no float16 optimizer kernels to compare with).

- Adam, AdamW, Adamax, Lamb and NAdam keep a float16 parameter's moments and powers
  in float32 and compute its update in float32, rounding only the new parameter to
  float16. In float16, ``grad * grad`` underflows to 0 below about 2.4e-4, and Adam's
  step ``moment1 / (sqrt(moment2) + epsilon)`` would become ``grad / epsilon``.
- With ``multi_precision=True`` the update runs on a float32 master weight, which
  ``state_dict()["master_weights"]`` holds by parameter name: steps smaller than half
  a float16 spacing accumulate there instead of rounding away.

The references are NumPy float32 computations of the update rules."""
import numpy as np
import pytest

import irflow
from irflow.optimizer import SGD, Adam, AdamW, Adamax, Lamb, Momentum, NAdam


def _param(values, name="w"):
    return irflow.Parameter(np.asarray(values, np.float16), name=name)


def _steps(opt, param, grad, n):
    for _ in range(n):
        param.grad = np.asarray(grad, np.float16)
        opt.step()


def _adam_reference(w, g, lr, steps, beta1=0.9, beta2=0.999, eps=1e-8):
    """Paddle's Adam in float32, the parameter rounded to float16 after each step."""
    w, g = w.astype(np.float32), g.astype(np.float32)
    m1 = m2 = np.zeros_like(w)
    for t in range(1, steps + 1):
        m1 = beta1 * m1 + (1 - beta1) * g
        m2 = beta2 * m2 + (1 - beta2) * g * g
        b1, b2 = np.float32(beta1) ** t, np.float32(beta2) ** t
        lr_t = lr * np.sqrt(1 - b2) / (1 - b1)
        w = (w - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2))).astype(np.float16)
        w = w.astype(np.float32)
    return w.astype(np.float16)


def test_adam_small_float16_gradients_update_in_float32():
    """A gradient of 1e-4 makes Adam's first steps about lr each (m_hat / sqrt(v_hat)
    is 1); in float16 moment2 would be 0 and the step about lr * 1e4."""
    w0, g = np.array([1.0, -2.0], np.float16), np.array([1e-4, -1e-4], np.float16)
    w = _param(w0)
    opt = Adam(0.01, parameters=[w])
    _steps(opt, w, g, 3)
    np.testing.assert_allclose(w.numpy().astype(np.float32),
                               _adam_reference(w0, g, 0.01, 3).astype(np.float32),
                               rtol=1e-3)
    assert w.dtype.name == "float16"
    state = opt.state_dict()
    assert {t.dtype.name for t in state.values()} == {"float32"}


@pytest.mark.parametrize("make", [
    lambda ps: AdamW(0.01, parameters=ps, weight_decay=0.0),
    lambda ps: Adamax(0.01, parameters=ps),
    lambda ps: Lamb(0.01, parameters=ps, lamb_weight_decay=0.0),
    lambda ps: NAdam(0.01, parameters=ps),
])
def test_adam_family_keeps_float16_state_in_float32(make):
    """The Adam family's state for a float16 parameter is float32 and its first step
    on a tiny gradient is of the order of lr (not lr / epsilon * grad)."""
    w = _param([1.0, -2.0])
    opt = make([w])
    _steps(opt, w, [1e-4, -1e-4], 1)
    assert {t.dtype.name for t in opt.state_dict().values()} == {"float32"}
    step = np.abs(w.numpy().astype(np.float32) - np.array([1.0, -2.0], np.float32))
    assert np.all(step < 0.05), step


def test_sgd_multi_precision_accumulates_below_float16_spacing():
    """1 - 1e-4 rounds back to 1 in float16 (its spacing there is 2**-10), so without
    master weights SGD never moves; with them ten steps reach 1 - 1e-3."""
    plain, master = _param([1.0, -1.0], "a"), _param([1.0, -1.0], "b")
    plain_opt = SGD(1e-4, parameters=[plain])
    master_opt = SGD(1e-4, parameters=[master], multi_precision=True)
    for _ in range(10):
        _steps(plain_opt, plain, [1.0, 1.0], 1)
        _steps(master_opt, master, [1.0, 1.0], 1)
    np.testing.assert_array_equal(plain.numpy(), np.array([1.0, -1.0], np.float16))
    expected = np.array([1.0, -1.0], np.float32)
    for _ in range(10):
        expected = expected - np.float32(1e-4)
    np.testing.assert_array_equal(master.numpy(), expected.astype(np.float16))
    weights = master_opt.state_dict()["master_weights"]
    np.testing.assert_array_equal(weights["b"].numpy(), expected)
    assert "master_weights" not in plain_opt.state_dict()


def test_momentum_master_weights_round_trip_through_state_dict():
    """A new optimizer loaded from a state dict (master weights and velocity copied
    out) continues exactly as the original."""
    w = _param([0.5, -0.25], "w")
    opt = Momentum(1e-3, momentum=0.9, parameters=[w], multi_precision=True)
    _steps(opt, w, [0.3, -0.1], 3)
    saved = {k: v.numpy().copy() for k, v in opt.state_dict().items()
             if k != "master_weights"}
    saved["master_weights"] = {k: v.numpy().copy()
                               for k, v in opt.state_dict()["master_weights"].items()}
    assert saved["w_velocity_0"].dtype == np.float32
    copy = _param(w.numpy(), "w")
    opt2 = Momentum(1e-3, momentum=0.9, parameters=[copy], multi_precision=True)
    opt2.set_state_dict(saved)
    _steps(opt, w, [0.3, -0.1], 3)
    _steps(opt2, copy, [0.3, -0.1], 3)
    np.testing.assert_array_equal(copy.numpy(), w.numpy())
    np.testing.assert_array_equal(opt2.state_dict()["master_weights"]["w"].numpy(),
                                  opt.state_dict()["master_weights"]["w"].numpy())
