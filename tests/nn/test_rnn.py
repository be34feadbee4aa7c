"""SimpleRNN, LSTM, GRU and their cells against a NumPy reference written from
Paddle's equations; Paddle's parameter layout and names; sequence_length; compiled
with a static and a symbolic time dim; gradients against finite differences."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(7)
B, T, I, H = 2, 4, 3, 5


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_cell(kind, x, state, w):
    """One step of Paddle's cells; w = (weight_ih, weight_hh, bias_ih, bias_hh)."""
    w_ih, w_hh, b_ih, b_hh = w
    h = state[0] if kind == "LSTM" else state
    xi, hh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if kind == "SimpleRNN":
        h = np.tanh(xi + hh)
        return h, h
    if kind == "LSTM":
        i, f, g, o = np.split(xi + hh, 4, axis=-1)
        c = sigmoid(f) * state[1] + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return h, (h, c)
    x_r, x_z, x_c = np.split(xi, 3, axis=-1)
    h_r, h_z, h_c = np.split(hh, 3, axis=-1)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    c = np.tanh(x_c + r * h_c)
    h = z * state + (1 - z) * c
    return h, h


def np_direction(kind, x, state, w, lengths, reverse):
    """x [B, T, I] batch-major; each sequence b runs over its first lengths[b] steps
    (backwards if reverse); outputs beyond are zero, states stop there."""
    out = np.zeros(x.shape[:2] + (H,))
    finals = []
    for b in range(x.shape[0]):
        s = state if not isinstance(state, tuple) else tuple(p[b:b + 1] for p in state)
        s = s[b:b + 1] if not isinstance(state, tuple) else s
        steps = range(lengths[b])
        for step in (reversed(steps) if reverse else steps):
            o, s = np_cell(kind, x[b:b + 1, step], s, w)
            out[b, step] = o[0]
        finals.append(s)
    if kind == "LSTM":
        return out, tuple(np.concatenate([f[k] for f in finals]) for k in range(2))
    return out, np.concatenate(finals)


def np_network(kind, model, x, lengths):
    """The multi-layer network computed from the model's own parameters."""
    params = {k: v.numpy().astype(np.float64) for k, v in model.named_parameters()}
    directions = model.num_directions
    zeros = np.zeros((x.shape[0], H))
    finals = []
    for layer in range(model.num_layers):
        outs = []
        for d in range(directions):
            suffix = "_reverse" if d else ""
            w = [params[f"{n}_l{layer}{suffix}"] for n in ("weight_ih", "weight_hh",
                                                           "bias_ih", "bias_hh")]
            state = (zeros, zeros) if kind == "LSTM" else zeros
            o, f = np_direction(kind, x, state, w, lengths, reverse=bool(d))
            outs.append(o)
            finals.append(f)
        x = np.concatenate(outs, axis=-1)
    if kind == "LSTM":
        return x, tuple(np.stack([f[k] for f in finals]) for k in range(2))
    return x, np.stack(finals)


def flat(states):
    return list(states) if isinstance(states, tuple) else [states]


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("direction, layers", [("forward", 1), ("bidirect", 2)])
def test_networks_match_the_reference(kind, direction, layers):
    model = getattr(nn, kind)(I, H, num_layers=layers, direction=direction)
    x = RNG.standard_normal((B, T, I)).astype(np.float32)
    for lengths in (None, [T, 2]):
        seq = None if lengths is None else paddle.to_tensor(lengths)
        out, states = model(paddle.to_tensor(x), sequence_length=seq)
        ref_out, ref_states = np_network(kind, model, x.astype(np.float64),
                                         lengths or [T] * B)
        assert out.shape == [B, T, H * model.num_directions]
        np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-5, atol=1e-6)
        for got, want in zip(flat(states), flat(ref_states)):
            assert got.shape == [layers * model.num_directions, B, H]
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind, gates", [("SimpleRNN", 1), ("LSTM", 4), ("GRU", 3)])
def test_paddle_parameter_layout_and_names(kind, gates):
    model = getattr(nn, kind)(I, H, num_layers=2, direction="bidirect")
    names = [n for n, _ in model.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_ih_l0_reverse"]
    assert len(names) == 16
    state = model.state_dict()  # Paddle lists both spellings: 32 entries
    assert len(state) == 32 and "1.cell_bw.bias_hh" in state
    assert state["weight_ih_l1"] is state["1.cell_fw.weight_ih"]
    assert state["weight_ih_l0"].shape == [gates * H, I]
    assert state["weight_ih_l1"].shape == [gates * H, 2 * H]
    assert state["weight_hh_l1_reverse"].shape == [gates * H, H]
    bound = 1 / np.sqrt(H)
    assert all(np.abs(p.numpy()).max() <= bound for p in model.parameters())
    single = getattr(nn, kind)(I, H)
    assert list(single.state_dict())[4:] == ["0.cell.weight_ih", "0.cell.weight_hh",
                                             "0.cell.bias_ih", "0.cell.bias_hh"]


def test_cells_and_initial_states():
    x = RNG.standard_normal((B, I)).astype(np.float32)
    h0 = RNG.standard_normal((B, H)).astype(np.float32)
    c0 = RNG.standard_normal((B, H)).astype(np.float32)
    cell = nn.LSTMCell(I, H)
    w = [p.numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    out, (h, c) = cell(paddle.to_tensor(x), (paddle.to_tensor(h0), paddle.to_tensor(c0)))
    ref, (rh, rc) = np_cell("LSTM", x, (h0, c0), w)
    # float32 against float64: an absolute floor for the elements near 0
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(c.numpy(), rc, rtol=1e-5, atol=1e-7)
    gru = nn.GRUCell(I, H)
    out, h = gru(paddle.to_tensor(x))  # zero initial state
    w = [p.numpy() for p in (gru.weight_ih, gru.weight_hh, gru.bias_ih, gru.bias_hh)]
    np.testing.assert_allclose(h.numpy(), np_cell("GRU", x, np.zeros((B, H)), w)[1], rtol=1e-5,
                               atol=1e-7)
    relu = nn.SimpleRNNCell(I, H, activation="relu")
    assert (relu(paddle.to_tensor(x))[0].numpy() >= 0).all()
    with pytest.raises(ValueError, match="tanh or relu"):
        nn.SimpleRNNCell(I, H, activation="gelu")
    lstm = nn.LSTM(I, H, num_layers=2)
    h0 = paddle.randn([2, B, H])
    out, (h, c) = lstm(paddle.randn([B, T, I]), (h0, paddle.zeros([2, B, H])))
    assert h.shape == c.shape == [2, B, H]


def test_time_major_and_rnn_wrapper():
    cell = nn.GRUCell(I, H)
    x = RNG.standard_normal((T, B, I)).astype(np.float32)
    out_tm, h_tm = nn.RNN(cell, time_major=True)(paddle.to_tensor(x))
    out_bm, h_bm = nn.RNN(cell)(paddle.to_tensor(x.transpose(1, 0, 2)))
    np.testing.assert_allclose(out_tm.numpy().transpose(1, 0, 2), out_bm.numpy(), rtol=1e-6)
    np.testing.assert_allclose(h_tm.numpy(), h_bm.numpy(), rtol=1e-6)
    out, (fw, bw) = nn.BiRNN(nn.SimpleRNNCell(I, H), nn.SimpleRNNCell(I, H))(
        paddle.to_tensor(x.transpose(1, 0, 2)))
    assert out.shape == [B, T, 2 * H] and fw.shape == bw.shape == [B, H]


def np_stepwise(kind, x, w, lengths, reverse):
    """Paddle's `RNN` over x [B, T, I] from zero states: every step runs the cell,
    steps beyond a sequence's length keep its state (backwards those come first);
    the outputs there are the cell's."""
    out = np.zeros(x.shape[:2] + (H,))
    finals = []
    for b in range(x.shape[0]):
        zeros = np.zeros((1, H))
        state = (zeros, zeros) if kind == "LSTM" else zeros
        for t in (reversed(range(T)) if reverse else range(T)):
            o, new = np_cell(kind, x[b:b + 1, t], state, w)
            out[b, t] = o[0]
            state = new if t < lengths[b] else state
        finals.append(state[0] if kind == "LSTM" else state)
    return out, np.concatenate(finals)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn_wrappers_give_the_cells_outputs_beyond_each_length(kind):
    """Paddle's RNN and BiRNN run the cell step by step and keep its outputs on the
    padding (only the fused SimpleRNN/LSTM/GRU zero them): unmasked pooling after
    them would otherwise differ."""
    cells = [getattr(nn, f"{kind}Cell")(I, H) for _ in range(2)]
    weights = [[getattr(c, n).numpy().astype(np.float64)
                for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")] for c in cells]
    x = RNG.standard_normal((B, T, I)).astype(np.float32)
    lengths = [T - 1, 2]
    seq = paddle.to_tensor(lengths)
    for reverse in (False, True):
        out, state = nn.RNN(cells[0], is_reverse=reverse)(paddle.to_tensor(x), sequence_length=seq)
        want_out, want_state = np_stepwise(kind, x.astype(np.float64), weights[0], lengths, reverse)
        np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(flat(state)[0].numpy(), want_state, rtol=1e-5, atol=1e-6)
    out, _ = nn.BiRNN(*cells)(paddle.to_tensor(x), sequence_length=seq)
    want = [np_stepwise(kind, x.astype(np.float64), w, lengths, r)[0]
            for w, r in zip(weights, (False, True))]
    np.testing.assert_allclose(out.numpy(), np.concatenate(want, axis=-1), rtol=1e-5, atol=1e-6)


class WithLengths(nn.Layer):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, lengths):
        return self.rnn(x, sequence_length=lengths)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_compiled_with_static_and_symbolic_time(kind):
    model = WithLengths(getattr(nn, kind)(I, H, direction="bidirect"))
    x = paddle.to_tensor(RNG.standard_normal((B, T, I)).astype(np.float32))
    lengths = paddle.to_tensor([T, 1])
    eager_out, eager_states = model(x, lengths)
    for spec in ([InputSpec([None, T, I]), InputSpec([None], "int64")],
                 [InputSpec([None, None, I]), InputSpec([None], "int64")]):
        static = paddle.jit.to_static(model, input_spec=spec)
        out, states = static(x, lengths)
        np.testing.assert_allclose(out.numpy(), eager_out.numpy(), rtol=1e-5, atol=1e-6)
        for got, want in zip(flat(states), flat(eager_states)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    longer = paddle.to_tensor(RNG.standard_normal((3, T + 2, I)).astype(np.float32))
    lengths = paddle.to_tensor([6, 2, 3])
    np.testing.assert_allclose(static(longer, lengths)[0].numpy(),
                               model(longer, lengths)[0].numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_through_time():
    paddle.seed(1)
    model = nn.GRU(2, 3, direction="bidirect")
    weights = model.weight_hh_l0_reverse
    x = RNG.standard_normal((2, 3, 2))
    check_grads(lambda a: model(a.astype("float32"))[0].astype("float64"), x,
                rtol=2e-2, atol=2e-4, eps=1e-3)
    x_t = paddle.to_tensor(x.astype(np.float32), stop_gradient=False)
    out, _ = model(x_t, sequence_length=paddle.to_tensor([3, 1]))
    out.sum().backward()
    # padding steps get no gradient into the input beyond each sequence's length
    assert np.all(x_t.grad.numpy()[1, 1:] == 0) and np.any(x_t.grad.numpy()[1, 0] != 0)
    assert weights.grad is not None


def test_a_compiled_training_step_updates_like_the_eager_one():
    data = RNG.standard_normal((B, T, I)).astype(np.float32)

    def train(compiled: bool):
        paddle.seed(3)
        model = nn.LSTM(I, H, num_layers=2)
        head = nn.Linear(H, 1)
        params = model.parameters() + head.parameters()
        opt = paddle.optimizer.SGD(0.1, parameters=params)

        def step(x, y):
            out, _ = model(x)
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        if compiled:
            step = paddle.jit.to_static(step)
        x, y = paddle.to_tensor(data), paddle.ones([B, 1])
        return [float(step(x, y)) for _ in range(3)]
    np.testing.assert_allclose(train(True), train(False), rtol=1e-5)
