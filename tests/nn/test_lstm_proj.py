"""`nn.LSTM` and `nn.LSTMCell` with `proj_size`: Paddle's numbers, state dict and
shapes, the cell against NumPy, sequence lengths, gradients and compilation."""
import numpy as np
import pytest

import irflow as paddle
from irflow import nn

from .gradcheck import check_grads

# From Paddle 3.3.1: nn.LSTM(3, 4, num_layers=2, direction="bidirect", proj_size=2),
# state_dict() as [(key, shape)].
PADDLE_STATE = (
    [("weight_ih_l0", [16, 3]), ("weight_hh_l0", [16, 2]), ("bias_ih_l0", [16]),
     ("bias_hh_l0", [16]), ("weight_ih_l0_reverse", [4, 2]),
     ("weight_hh_l0_reverse", [16, 3]), ("bias_ih_l0_reverse", [16, 2]),
     ("bias_hh_l0_reverse", [16]), ("weight_ih_l1", [16]), ("weight_hh_l1", [4, 2]),
     ("bias_ih_l1", [16, 4]), ("bias_hh_l1", [16, 2]), ("weight_ih_l1_reverse", [16]),
     ("weight_hh_l1_reverse", [16]), ("bias_ih_l1_reverse", [4, 2]),
     ("bias_hh_l1_reverse", [16, 4])]
    + [(f"{layer}.cell_{d}.{kind}", shape)
       for layer, size in ((0, 3), (1, 4)) for d in ("fw", "bw")
       for kind, shape in (("weight_ih", [16, size]), ("weight_hh", [16, 2]),
                           ("bias_ih", [16]), ("bias_hh", [16]), ("weight_ho", [4, 2]))])


def deterministic_lstm():
    """The LSTM of PADDLE_STATE, each parameter (in named_parameters order) set to
    0.5 sin(0.7 k + i), as in the Paddle run the numbers below come from."""
    lstm = nn.LSTM(3, 4, num_layers=2, direction="bidirect", proj_size=2)
    for i, (_, p) in enumerate(lstm.named_parameters()):
        size = int(np.prod(p.shape))
        p.set_value((np.sin(np.arange(size) * 0.7 + i) * 0.5).reshape(p.shape)
                    .astype(np.float32))
    return lstm


X = np.cos(np.arange(18) * 0.9).reshape(2, 3, 3).astype(np.float32)


def test_state_dict_as_paddle():
    lstm = nn.LSTM(3, 4, num_layers=2, direction="bidirect", proj_size=2)
    assert [(k, list(v.shape)) for k, v in lstm.state_dict().items()] == PADDLE_STATE


def test_matches_paddle_numbers():
    # From Paddle 3.3.1, deterministic_lstm() on X: y[:, -1], h[:, 0], c[3, 1].
    y, (h, c) = deterministic_lstm()(paddle.to_tensor(X))
    assert (y.shape, h.shape, c.shape) == ([2, 3, 4], [4, 2, 2], [4, 2, 4])
    np.testing.assert_allclose(y.numpy()[:, -1], [[-0.26921073, -0.25991684, -0.0990786,
                                                   -0.07338167],
                                                  [-0.27529988, -0.25751784, -0.11165107,
                                                   -0.08017585]], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h.numpy()[:, 0], [[-0.24968176, -0.14144823],
                                                 [-0.0619439, -0.05516598],
                                                 [-0.26921073, -0.25991684],
                                                 [-0.21274263, -0.17762284]], rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(c.numpy()[3, 1], [-0.47393394, -0.5851766, -0.34998202,
                                                 -0.01877617], rtol=1e-5, atol=1e-7)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_cell_against_numpy_and_initial_states():
    cell = nn.LSTMCell(3, 5, proj_size=2)
    assert (cell.weight_hh.shape, cell.weight_ho.shape) == ([20, 2], [5, 2])
    x = X[0]
    h, (h2, c) = cell(paddle.to_tensor(x))  # zero states: h [3, 2], c [3, 5]
    gates = x @ cell.weight_ih.numpy().T + cell.bias_ih.numpy() + cell.bias_hh.numpy()
    i, f, g, o = np.split(gates, 4, axis=-1)
    c_ref = sigmoid(i) * np.tanh(g)
    h_ref = (sigmoid(o) * np.tanh(c_ref)) @ cell.weight_ho.numpy()
    np.testing.assert_allclose(c.numpy(), c_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), h_ref, rtol=1e-5, atol=1e-6)
    assert h2 is h


def test_sequence_length_keeps_cell_outputs_as_paddle():
    """Paddle runs a projected LSTM step by step, so the outputs beyond a sequence's
    length are the cell's (not zeros, as its fused op gives without a projection)."""
    lstm = nn.LSTM(3, 4, proj_size=2)
    x = paddle.to_tensor(X)
    full, _ = lstm(x)
    cut, (h, _) = lstm(x, sequence_length=paddle.to_tensor([3, 2]))
    np.testing.assert_allclose(cut.numpy()[1, :2], full.numpy()[1, :2], rtol=1e-6)
    assert np.abs(cut.numpy()[1, 2]).max() > 0
    np.testing.assert_allclose(h.numpy()[0, 1], full.numpy()[1, 1], rtol=1e-6)


def test_checks():
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="negative"):
        nn.LSTMCell(3, 4, proj_size=-1)


def test_gradients():
    lstm = nn.LSTM(2, 3, direction="bidirect", proj_size=1).to(dtype="float64")
    check_grads(lambda a: lstm(a)[0], np.cos(np.arange(12) * 0.5).reshape(2, 3, 2),
                rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_matches_eager(backend):
    lstm = deterministic_lstm()
    x = paddle.to_tensor(X)
    eager, (h, c) = lstm(x)
    got, (h_got, c_got) = paddle.compile(lstm, backend=backend)(x)
    for a, b in ((got, eager), (h_got, h), (c_got, c)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
