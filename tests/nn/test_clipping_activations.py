"""relu6, hardtanh, log_sigmoid and prelu (functional and layers): values against
NumPy references from their definitions, gradients against finite differences and
at the kinks, compiled programs against eager code, and argument errors."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)) * 4
BACKENDS = ["numpy", "llvm"]


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


@pytest.mark.parametrize("fn, ref", [
    (F.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    (F.hardtanh, lambda x: np.clip(x, -1, 1)),
    (lambda x: F.hardtanh(x, -2.5, 0.5), lambda x: np.clip(x, -2.5, 0.5)),
    (F.log_sigmoid, np_log_sigmoid),
], ids=["relu6", "hardtanh", "hardtanh_bounds", "log_sigmoid"])
def test_values_and_gradients(fn, ref):
    np.testing.assert_allclose(fn(t(X)).numpy(), ref(X), rtol=1e-12, atol=1e-12)
    check_grads(fn, X)


@pytest.mark.parametrize("fn, points, grads", [
    (F.relu6, [0.0, 6.0, 3.0, -1.0, 7.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    (F.hardtanh, [-1.0, 1.0, 0.0, -2.0, 2.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    (F.log_sigmoid, [0.0], [0.5]),
    (lambda x: F.prelu(x, t(np.array([0.25]))), [0.0, -1.0, 1.0], [0.25, 0.25, 1.0]),
], ids=["relu6", "hardtanh", "log_sigmoid", "prelu"])
def test_gradients_at_the_kinks_are_paddles(fn, points, grads):
    """relu6 and hardtanh pass the gradient strictly inside their range only (0 at
    the bounds, unlike clip); prelu's gradient at 0 is the slope (Paddle 3.3.1)."""
    x = t(np.array(points), stop_gradient=False)
    paddle.sum(fn(x)).backward()
    np.testing.assert_allclose(x.grad.numpy(), grads, rtol=1e-12)


def test_hardtanh_with_min_above_max_gives_max_everywhere():
    x = t(X, stop_gradient=False)
    out = F.hardtanh(x, 1.0, -1.0)
    np.testing.assert_array_equal(out.numpy(), np.minimum(np.maximum(X, 1.0), -1.0))
    paddle.sum(out).backward()
    assert not x.grad.numpy().any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_sigmoid_is_stable_for_huge_inputs(dtype):
    x = np.array([-1000.0, -100.0, -30.0, 0.0, 30.0, 100.0, 1000.0], dtype)
    xt = t(x, stop_gradient=False)
    out = F.log_sigmoid(xt)
    paddle.sum(out).backward()
    assert out.dtype == xt.dtype
    wide = x.astype(np.float64)
    np.testing.assert_allclose(out.numpy(), np_log_sigmoid(wide), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), np.exp(-np.logaddexp(0.0, wide)), rtol=1e-5,
                               atol=1e-30)


def np_prelu(x, w, axis):
    shape = [1] * x.ndim
    if w.size > 1:
        shape[axis] = -1
    return np.where(x > 0, x, x * w.reshape(shape))


@pytest.mark.parametrize("wshape, fmt, axis", [
    ((1,), "NCHW", 1), ((), "NCHW", 1), ((4,), "NCL", 1), ((5,), "NLC", 2), ((4,), "NC", 1),
])
def test_prelu_values_and_gradients(wshape, fmt, axis):
    w = RNG.uniform(0.0, 0.5, wshape)
    np.testing.assert_allclose(F.prelu(t(X), t(w), fmt).numpy(), np_prelu(X, w, axis),
                               rtol=1e-12)
    check_grads(lambda x, w: F.prelu(x, w, fmt), X, w)


def test_prelu_argument_errors():
    with pytest.raises(ValueError, match="one per channel"):
        F.prelu(t(X), t(np.ones(5)))
    with pytest.raises(ValueError, match="data_format must be one of"):
        F.prelu(t(X), t(np.ones(4)), data_format="XYZ")
    with pytest.raises(ValueError, match=r"shape \[\], \[1\] or \[C\]"):
        F.prelu(t(X), t(np.ones((1, 4))))


def test_prelu_layer_has_paddles_parameter_and_repr():
    layer = nn.PReLU(4, 0.1, data_format="NCL")
    assert list(layer.state_dict()) == ["_weight"]
    assert layer._weight.shape == [4] and layer._weight.dtype == paddle.float32
    np.testing.assert_allclose(layer._weight.numpy(), 0.1)
    assert repr(layer) == "PReLU(num_parameters=4, data_format=NCL, init=0.1, dtype=float32)"
    x = X.astype(np.float32)
    out = layer(t(x))
    np.testing.assert_allclose(out.numpy(), np_prelu(x, np.full(4, 0.1, np.float32), 1),
                               rtol=1e-6)
    paddle.sum(out).backward()
    np.testing.assert_allclose(layer._weight.grad.numpy(), np.minimum(x, 0).sum((0, 2)),
                               rtol=1e-5)


def test_activation_layers_forward_their_options():
    x = t(X)
    np.testing.assert_array_equal(nn.ReLU6()(x).numpy(), F.relu6(x).numpy())
    np.testing.assert_array_equal(nn.Hardtanh(-2.0, 3.0)(x).numpy(),
                                  F.hardtanh(x, -2.0, 3.0).numpy())
    np.testing.assert_array_equal(nn.LogSigmoid()(x).numpy(), F.log_sigmoid(x).numpy())
    assert repr(nn.Hardtanh()) == "Hardtanh(min=-1.0, max=1.0)"
    assert repr(nn.ReLU6()) == "ReLU6()"


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_matches_eager(backend):
    prelu = nn.PReLU(4)
    model = nn.Sequential(nn.Hardtanh(-3.0, 2.0), nn.ReLU6(), prelu)
    x = t((X - 1).astype(np.float32))

    def fn(x):
        return F.log_sigmoid(x * 30) + F.relu6(x * 3) + F.hardtanh(x, -0.5, 0.5)

    np.testing.assert_allclose(paddle.compile(fn, backend=backend)(x).numpy(), fn(x).numpy(),
                               rtol=1e-6, atol=1e-6)
    eager = model(x).numpy()
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(), eager,
                               rtol=1e-6)
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 4, 5])],
                                  backend=backend)
    np.testing.assert_allclose(static(x).numpy(), eager, rtol=1e-6)
    np.testing.assert_allclose(static(x[:1]).numpy(), eager[:1], rtol=1e-6)


# NaN in, NaN out, as Paddle 3.3.1's kernels give for every one of these (printed on
# [nan, -1, 1]); elu, selu, softplus (20.0), softshrink, hardshrink and
# thresholded_relu turned NaN into a constant.
NAN_PROPAGATING = ["elu", "selu", "celu", "gelu", "leaky_relu", "hardswish", "mish",
                   "softplus", "silu", "relu6", "hardtanh", "softsign", "tanhshrink",
                   "softshrink", "hardshrink", "log_sigmoid", "sigmoid", "hardsigmoid",
                   "thresholded_relu", "swish"]


@pytest.mark.parametrize("name", NAN_PROPAGATING)
@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_a_nan_input_gives_nan(name, backend):
    fn = getattr(F, name)
    x = paddle.to_tensor(np.array([np.nan, -1.0, 1.0, 0.25], "float32"))
    run = fn if backend is None else paddle.compile(lambda t: fn(t), backend=backend)
    out = run(x).numpy()
    assert np.isnan(out[0]) and np.isfinite(out[1:]).all(), out
