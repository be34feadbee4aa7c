"""Paddle parity of the recurrent and normalization layers: user cells subclassing
`RNNCellBase`, the built-in cells' `state_shape`, `RNN` passing extra keyword
arguments to its cell, `SyncBatchNorm` and its conversion API, and the `dtype`
(and `device`) arguments of GroupNorm and LayerNorm."""
import numpy as np
import pytest

import irflow as paddle
from irflow.nn.layer.norm import SyncBatchNorm

B, T, I, H = 3, 5, 4, 6


class ScaledTanhCell(paddle.nn.RNNCellBase):
    """A user cell as Paddle's docs write them: its own constructor, no weights of
    RNNCellBase's, a `state_shape`, and an extra forward argument."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.linear = paddle.nn.Linear(input_size + hidden_size, hidden_size)

    @property
    def state_shape(self):
        return (self.hidden_size,)

    def forward(self, inputs, states, scale=1.0):
        h = paddle.tanh(self.linear(paddle.concat([inputs, states], -1))) * scale
        return h, h


def _scaled_tanh_reference(cell, x, scale):
    """NumPy's run of `ScaledTanhCell` over [B, T, I] from zero states."""
    w, b = cell.linear.weight.numpy(), cell.linear.bias.numpy()
    h = np.zeros([x.shape[0], cell.hidden_size], np.float32)
    outputs = []
    for t in range(x.shape[1]):
        h = np.tanh(np.concatenate([x[:, t], h], -1) @ w + b) * scale
        outputs.append(h)
    return np.stack(outputs, 1), h


def test_user_cell_runs_in_rnn_with_its_keyword_arguments():
    cell = ScaledTanhCell(I, H)
    x = np.random.RandomState(0).randn(B, T, I).astype(np.float32)
    out, state = paddle.nn.RNN(cell)(paddle.to_tensor(x), scale=0.5)
    want_out, want_state = _scaled_tanh_reference(cell, x, 0.5)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.numpy(), want_state, rtol=1e-5, atol=1e-6)


def test_birnn_passes_keyword_arguments_to_both_cells():
    fw, bw = ScaledTanhCell(I, H), ScaledTanhCell(I, H)
    x = np.random.RandomState(1).randn(B, T, I).astype(np.float32)
    out, (st_fw, st_bw) = paddle.nn.BiRNN(fw, bw)(paddle.to_tensor(x), scale=2.0)
    want_fw, want_st_fw = _scaled_tanh_reference(fw, x, 2.0)
    want_bw, want_st_bw = _scaled_tanh_reference(bw, x[:, ::-1], 2.0)
    np.testing.assert_allclose(out.numpy(), np.concatenate([want_fw, want_bw[:, ::-1]], -1),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st_bw.numpy(), want_st_bw, rtol=1e-5, atol=1e-6)


def test_birnn_rejects_initial_states_that_are_not_a_pair():
    cell_fw, cell_bw = paddle.nn.GRUCell(I, H), paddle.nn.GRUCell(I, H)
    h = paddle.zeros([B, H])
    with pytest.raises(ValueError, match="pair"):
        paddle.nn.BiRNN(cell_fw, cell_bw)(paddle.zeros([B, T, I]), [h, h, h])


def test_get_initial_states_follows_state_shape_and_arguments():
    """Paddle's rule: each shape gets the batch dim prepended (a leading -1 is
    replaced by it), filled with init_value, in `dtype` when given."""
    cell = ScaledTanhCell(I, H)
    ref = paddle.zeros([B, T, I])
    states = cell.get_initial_states(ref, init_value=0.5)
    assert states.shape == [B, H]
    np.testing.assert_array_equal(states.numpy(), np.full([B, H], 0.5, np.float32))
    h, c = cell.get_initial_states(ref, shape=((-1, 2), [3, 4]), dtype="float64",
                                   batch_dim_idx=1)
    assert (h.shape, c.shape) == ([T, 2], [T, 3, 4])
    assert str(c.dtype) == "paddle.float64"


def test_user_cell_without_state_shape_says_what_is_missing():
    class NoShapeCell(paddle.nn.RNNCellBase):
        def forward(self, inputs, states):
            return inputs, states

    with pytest.raises(NotImplementedError, match="state_shape"):
        NoShapeCell().get_initial_states(paddle.zeros([B, I]))


@pytest.mark.parametrize("make, want", [
    (lambda: paddle.nn.SimpleRNNCell(I, H), (H,)),
    (lambda: paddle.nn.GRUCell(I, H), (H,)),
    (lambda: paddle.nn.LSTMCell(I, H), ((H,), (H,))),
    (lambda: paddle.nn.LSTMCell(I, H, proj_size=2), ((2,), (H,))),
])
def test_builtin_cells_state_shape(make, want):
    """(h's width,) and, for an LSTM, (c's): with a projection h is proj_size wide
    (Paddle 3.3.1 swaps the two there, contradicting its own LSTMCell docs)."""
    assert make().state_shape == want


def _batch_norm_reference(x, weight, bias, epsilon):
    """Per-channel (axis 1) normalization by the batch's mean and biased variance."""
    axes = tuple(a for a in range(x.ndim) if a != 1)
    shape = [1, -1] + [1] * (x.ndim - 2)
    mean, var = x.mean(axes), x.var(axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
    return y * weight.reshape(shape) + bias.reshape(shape), mean, var


def test_sync_batch_norm_on_one_device_is_batch_norm():
    layer = SyncBatchNorm(3, momentum=0.8, epsilon=1e-3)
    x = np.random.RandomState(2).randn(4, 3, 2, 5).astype(np.float32)
    layer.train()
    y = layer(paddle.to_tensor(x))
    want, mean, var = _batch_norm_reference(x, layer.weight.numpy(), layer.bias.numpy(), 1e-3)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer._mean.numpy(), 0.2 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer._variance.numpy(), 0.8 + 0.2 * var, rtol=1e-5)


def test_convert_sync_batchnorm_replaces_nested_batch_norms_sharing_parameters():
    bn2d = paddle.nn.BatchNorm2D(4, momentum=0.7, epsilon=1e-3)
    bn1d = paddle.nn.BatchNorm1D(4, weight_attr=False, data_format="NLC")
    model = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3), bn2d,
                                 paddle.nn.Sequential(bn1d))
    names = list(model.state_dict())
    converted = SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model
    sync2d, sync1d = converted[1], converted[2][0]
    assert type(sync2d) is SyncBatchNorm and type(sync1d) is SyncBatchNorm
    assert (sync2d._momentum, sync2d._epsilon) == (0.7, 1e-3)
    assert sync1d._data_format == "NLC" and sync1d.weight is None
    assert sync2d.weight is bn2d.weight and sync2d._mean is bn2d._mean
    assert sync1d.bias is bn1d.bias and sync1d._variance is bn1d._variance
    assert list(converted.state_dict()) == names


@pytest.mark.parametrize("make", [
    lambda dtype: paddle.nn.GroupNorm(2, 4, dtype=dtype),
    lambda dtype: paddle.nn.LayerNorm(4, dtype=dtype, device="cpu"),
])
def test_group_and_layer_norm_parameters_take_the_dtype_given(make):
    for dtype in ("float64", paddle.float64):
        assert {str(p.dtype) for p in make(dtype).parameters()} == {"paddle.float64"}


@pytest.mark.parametrize("layer, shape", [
    (paddle.nn.BatchNorm2D(3), [2, 3, 2, 2]),
    (paddle.nn.LayerNorm(2), [2, 3, 2]),
    (paddle.nn.GroupNorm(1, 3), [2, 3, 2]),
    (paddle.nn.LocalResponseNorm(3), [2, 3, 2, 2]),
])
def test_norm_layers_take_paddles_input_keyword(layer, shape):
    x = paddle.to_tensor(np.random.RandomState(3).randn(*shape).astype(np.float32))
    layer.eval()
    np.testing.assert_array_equal(layer(input=x).numpy(), layer(x).numpy())
