"""RNN cells built with a weight or bias attribute of False (Paddle makes a frozen
constant parameter: ones for a weight, zeros for a bias), and
`paddle.nn.utils.spectral_norm` against a NumPy power iteration and finite
differences."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn

RNG = np.random.default_rng(14)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """Paddle's GRUCell: r, z gates, candidate tanh(x_c + r * h_c), h' = z h + (1-z) c."""
    x_r, x_z, x_c = np.split(x @ w_ih.T + b_ih, 3, axis=-1)
    h_r, h_z, h_c = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    c = np.tanh(x_c + r * h_c)
    return z * h + (1 - z) * c


def test_cell_attr_false_makes_frozen_constant_parameters():
    cell = nn.GRUCell(3, 4, weight_hh_attr=False, bias_ih_attr=False)
    names = [name for name, _ in cell.named_parameters()]
    assert names == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    np.testing.assert_array_equal(cell.weight_hh.numpy(), np.ones([12, 4], np.float32))
    np.testing.assert_array_equal(cell.bias_ih.numpy(), np.zeros([12], np.float32))
    assert cell.weight_hh.stop_gradient and cell.bias_ih.stop_gradient
    assert not cell.weight_ih.stop_gradient and not cell.bias_hh.stop_gradient
    x = RNG.standard_normal([2, 3]).astype(np.float32)
    h = RNG.standard_normal([2, 4]).astype(np.float32)
    out, _ = cell(paddle.to_tensor(x), paddle.to_tensor(h))
    expected = np_gru_cell(x, h, cell.weight_ih.numpy(), np.ones([12, 4]), np.zeros(12),
                           cell.bias_hh.numpy())
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_network_with_frozen_hidden_weights_runs_its_cells():
    """An LSTM with weight_hh_attr=False (which Paddle runs) equals its cells run
    step by step, and its frozen weights get no gradient."""
    lstm = nn.LSTM(3, 4, num_layers=2, weight_hh_attr=False)
    x = paddle.to_tensor(RNG.standard_normal([2, 5, 3]).astype(np.float32))
    out, (h, c) = lstm(x)
    steps = x
    for layer in lstm:
        steps, _ = layer(steps)
    np.testing.assert_allclose(out.numpy(), steps.numpy(), rtol=1e-6)
    out.sum().backward()
    assert lstm.weight_hh_l0.grad is None and lstm.weight_ih_l0.grad is not None


def np_normalize(t, eps=1e-12):
    return t / max(np.linalg.norm(t), eps)


def spectral_linear(n_power_iterations=1, dtype="float32"):
    """A Linear(4, 3) under spectral_norm, with fixed weight, bias, u and v."""
    layer = nn.Linear(4, 3)
    layer.weight.set_value(RNG.standard_normal([4, 3]).astype(dtype))
    layer.bias.set_value(RNG.standard_normal([3]).astype(dtype))
    layer = nn.utils.spectral_norm(layer, n_power_iterations=n_power_iterations)
    layer.weight_u.set_value(RNG.standard_normal([3]).astype(dtype))
    layer.weight_v.set_value(RNG.standard_normal([4]).astype(dtype))
    return layer


def test_spectral_norm_matches_numpy_power_iteration():
    """In training, each forward runs the power iteration on W (a Linear's weight
    [in, out] transposed: dim 1 first) from the stored u, v and stores them back."""
    layer = spectral_linear(n_power_iterations=2)
    w = layer.weight_orig.numpy().T
    u, v = layer.weight_u.numpy(), layer.weight_v.numpy()
    x = RNG.standard_normal([2, 4]).astype(np.float32)
    for _ in range(2):  # two forwards: the second starts from the stored vectors
        out = layer(paddle.to_tensor(x))
        for _ in range(2):
            v = np_normalize(w.T @ u)
            u = np_normalize(w @ v)
        sigma = u @ w @ v
        np.testing.assert_allclose(out.numpy(), x @ (w / sigma).T + layer.bias.numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(layer.weight_u.numpy(), u, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(layer.weight_v.numpy(), v, rtol=1e-5, atol=1e-6)


def test_spectral_norm_gradient_of_two_forwards_keeps_each_ones_vectors():
    """Two training forwards, then one backward: each forward's sigma = u^T W v
    keeps the u, v of its own power iteration (the second forward's iteration does
    not change the first's), and with u, v constant
    d/dW sum(G * W / sigma) = G / sigma - sum(G * W) / sigma^2 * u v^T."""
    layer = spectral_linear()
    w = layer.weight_orig.numpy().T
    u, v = layer.weight_u.numpy(), layer.weight_v.numpy()
    xs = [RNG.standard_normal([2, 4]).astype(np.float32) for _ in range(2)]
    cotangents = [RNG.standard_normal([2, 3]).astype(np.float32) for _ in range(2)]
    loss, expected = 0.0, np.zeros_like(w)
    for x, c in zip(xs, cotangents):
        loss = loss + (layer(paddle.to_tensor(x)) * paddle.to_tensor(c)).sum()
        v = np_normalize(w.T @ u)
        u = np_normalize(w @ v)
        sigma = u @ w @ v
        g = c.T @ x
        expected += g / sigma - (g * w).sum() / sigma ** 2 * np.outer(u, v)
    loss.backward()
    np.testing.assert_allclose(layer.weight_orig.grad.numpy(), expected.T, rtol=1e-4,
                               atol=1e-5)


def test_spectral_norm_compiled_matches_eager():
    layer = spectral_linear()
    u, v = layer.weight_u.numpy(), layer.weight_v.numpy()
    x = paddle.to_tensor(RNG.standard_normal([2, 4]).astype(np.float32))
    eager, eager_u = layer(x).numpy(), layer.weight_u.numpy()
    layer.weight_u.set_value(u)
    layer.weight_v.set_value(v)
    compiled = paddle.jit.to_static(layer)(x)
    np.testing.assert_allclose(compiled.numpy(), eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.weight_u.numpy(), eager_u, rtol=1e-5, atol=1e-6)


def test_spectral_norm_eval_uses_stored_vectors():
    layer = spectral_linear()
    layer.eval()
    u, v = layer.weight_u.numpy(), layer.weight_v.numpy()
    w = layer.weight_orig.numpy().T
    out = layer(paddle.ones([1, 4]))
    np.testing.assert_allclose(out.numpy(), np.ones([1, 4]) @ (w / (u @ w @ v)).T +
                               layer.bias.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(layer.weight_u.numpy(), u)


def test_spectral_norm_gradient_holds_u_and_v_constant():
    """In eval the vectors are fixed, so the forward is W / (u^T W v) exactly and its
    gradient must match central differences of the forward."""
    paddle.set_default_dtype("float64")
    try:
        layer = spectral_linear(dtype="float64")
    finally:
        paddle.set_default_dtype("float32")
    layer.eval()
    x = paddle.to_tensor(RNG.standard_normal([2, 4]))
    cotangent = RNG.standard_normal([2, 3])
    (layer(x) * paddle.to_tensor(cotangent)).sum().backward()
    weight = layer.weight_orig.numpy().copy()
    numeric = np.zeros_like(weight)
    for index in np.ndindex(weight.shape):
        values = []
        for step in (1e-6, -1e-6):
            moved = weight.copy()
            moved[index] += step
            layer.weight_orig.set_value(moved)
            values.append(float((layer(x).numpy() * cotangent).sum()))
        numeric[index] = (values[0] - values[1]) / 2e-6
    np.testing.assert_allclose(layer.weight_orig.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_spectral_norm_state_and_default_dim():
    """The weight becomes weight_orig plus buffers weight_u [rows], weight_v
    [columns]: rows are a Linear's outputs (dim 1) but a Conv2D's first axis (dim 0)."""
    linear = nn.utils.spectral_norm(nn.Linear(4, 3))
    assert list(linear.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [name for name, _ in linear.named_parameters()] == ["bias", "weight_orig"]
    assert (linear.weight_u.shape, linear.weight_v.shape) == ([3], [4])
    np.testing.assert_allclose(np.linalg.norm(linear.weight_u.numpy()), 1.0, rtol=1e-6)
    conv = nn.utils.spectral_norm(nn.Conv2D(2, 5, 3))
    assert (conv.weight_u.shape, conv.weight_v.shape) == ([5], [18])


def test_spectral_norm_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_power_iterations"):
        nn.utils.spectral_norm(nn.Linear(4, 3), n_power_iterations=0)
    layer = nn.utils.spectral_norm(nn.Linear(4, 3))
    with pytest.raises(RuntimeError, match="already"):
        nn.utils.spectral_norm(layer)
