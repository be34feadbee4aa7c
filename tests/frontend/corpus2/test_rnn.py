"""Recurrent models written by hand, as in textbooks: LSTM/GRU cells from parameters,
stacked and bidirectional RNNs, state kept on ``self`` between calls, attention over
encoder outputs collected in a list, masking by lengths."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import (MODES, OutputMismatch, check, check_outputs, check_twins, compiled, ints,
                     randn, reset_parameters, spec)

SEQS = [randn(2, 4, 3), randn(3, 2, 3, seed=1)]
SEQ_SPEC = spec([None, None, 3])


class RawLSTMCell(nn.Layer):
    """Gates from separate parameter matrices (d2l.ai style)."""

    def __init__(self, n_in, n_hid):
        super().__init__()
        self.W_xi = self.create_parameter([n_in, n_hid])
        self.W_hi = self.create_parameter([n_hid, n_hid])
        self.b_i = self.create_parameter([n_hid], is_bias=True)
        self.W_xf = self.create_parameter([n_in, n_hid])
        self.W_hf = self.create_parameter([n_hid, n_hid])
        self.b_f = self.create_parameter([n_hid], is_bias=True)
        self.W_xo = self.create_parameter([n_in, n_hid])
        self.W_ho = self.create_parameter([n_hid, n_hid])
        self.b_o = self.create_parameter([n_hid], is_bias=True)
        self.W_xc = self.create_parameter([n_in, n_hid])
        self.W_hc = self.create_parameter([n_hid, n_hid])
        self.b_c = self.create_parameter([n_hid], is_bias=True)

    def forward(self, x, h, c):
        i = F.sigmoid(paddle.matmul(x, self.W_xi) + paddle.matmul(h, self.W_hi) + self.b_i)
        f = F.sigmoid(paddle.matmul(x, self.W_xf) + paddle.matmul(h, self.W_hf) + self.b_f)
        o = F.sigmoid(paddle.matmul(x, self.W_xo) + paddle.matmul(h, self.W_ho) + self.b_o)
        c_tilde = paddle.tanh(paddle.matmul(x, self.W_xc) + paddle.matmul(h, self.W_hc)
                              + self.b_c)
        c = f * c + i * c_tilde
        h = o * paddle.tanh(c)
        return h, c


class RawGRUCell(nn.Layer):
    def __init__(self, n_in, n_hid):
        super().__init__()
        self.Wz = nn.Linear(n_in + n_hid, n_hid)
        self.Wr = nn.Linear(n_in + n_hid, n_hid)
        self.Wh = nn.Linear(n_in + n_hid, n_hid)

    def forward(self, x, h):
        xh = paddle.concat([x, h], axis=-1)
        z = F.sigmoid(self.Wz(xh))
        r = F.sigmoid(self.Wr(xh))
        h_tilde = paddle.tanh(self.Wh(paddle.concat([x, r * h], axis=-1)))
        return (1 - z) * h + z * h_tilde


class LSTMOverTime(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = RawLSTMCell(3, 4)
        self.hidden = 4

    def forward(self, x):
        batch, steps = x.shape[0], x.shape[1]
        h = paddle.zeros([batch, self.hidden])
        c = paddle.zeros([batch, self.hidden])
        outputs = []
        for t in range(steps):
            h, c = self.cell(x[:, t, :], h, c)
            outputs.append(h)
        return paddle.stack(outputs, axis=1), (h, c)


def test_raw_lstm_returns_outputs_and_state():
    check(LSTMOverTime(), SEQS, SEQ_SPEC)


class GRUOverUnbind(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        outs = []
        for x_t in paddle.unbind(x, axis=1):
            h = self.cell(x_t, h)
            outs.append(h)
        return paddle.concat(outs, axis=-1)


def test_raw_gru_over_unbound_steps():
    check(GRUOverUnbind(), [randn(2, 3, 3), randn(3, 3, 3, seed=1)], spec([None, 3, 3]))


class BiRNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fwd = RawGRUCell(3, 4)
        self.bwd = RawGRUCell(3, 4)

    def forward(self, x):
        n, T = x.shape[0], x.shape[1]
        hf = paddle.zeros([n, 4])
        hb = paddle.zeros([n, 4])
        fwd_out, bwd_out = [], []
        for t in range(T):
            hf = self.fwd(x[:, t], hf)
            fwd_out.append(hf)
        for t in reversed(range(T)):
            hb = self.bwd(x[:, t], hb)
            bwd_out.append(hb)
        bwd_out.reverse()
        return paddle.concat([paddle.stack(fwd_out, 1), paddle.stack(bwd_out, 1)], axis=-1)


def test_bidirectional_rnn_with_reversed_range():
    check(BiRNN(), SEQS, SEQ_SPEC)


class StackedRNN(nn.Layer):
    def __init__(self, layers=2):
        super().__init__()
        self.cells = nn.LayerList([RawGRUCell(3 if i == 0 else 4, 4) for i in range(layers)])

    def forward(self, x):
        hs = [paddle.zeros([x.shape[0], 4]) for _ in self.cells]
        for t in range(x.shape[1]):
            inp = x[:, t]
            for k, cell in enumerate(self.cells):
                hs[k] = cell(inp, hs[k])
                inp = hs[k]
        return hs[-1]


def test_stacked_rnn_state_list_updated_by_index():
    check(StackedRNN(), SEQS, SEQ_SPEC)


class ClippedRNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(3, 4)
        self.hh = nn.Linear(4, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            h = F.relu(self.ih(x[:, t]) + self.hh(h))
            norm = paddle.sqrt(paddle.sum(h * h))
            if norm > 2.0:
                h = h * (2.0 / norm)
        return h


def test_rnn_with_state_norm_clipping():
    check(ClippedRNN(), [randn(2, 4, 3, scale=0.1), randn(2, 4, 3, seed=1, scale=10)], SEQ_SPEC)


class MaskedLSTM(nn.Layer):
    """Keeps the last valid state of each sequence (lengths given)."""

    def __init__(self):
        super().__init__()
        self.cell = RawLSTMCell(3, 4)

    def forward(self, x, lengths):
        h = paddle.zeros([x.shape[0], 4])
        c = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            nh, nc = self.cell(x[:, t], h, c)
            m = (lengths > t).astype("float32").unsqueeze(1)
            h = m * nh + (1.0 - m) * h
            c = m * nc + (1.0 - m) * c
        return h


def test_masked_lstm_keeps_last_valid_state():
    check(MaskedLSTM(), [(randn(3, 4, 3), np.array([4, 1, 3], "int64")),
                         (randn(2, 2, 3, seed=1), np.array([2, 2], "int64"))],
          [paddle.static.InputSpec([None, None, 3]), paddle.static.InputSpec([None], "int64")])


class LastValidByGather(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)

    def forward(self, x, lengths):
        h = paddle.zeros([x.shape[0], 4])
        outs = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            outs.append(h)
        out = paddle.stack(outs, axis=1)                       # [N, T, 4]
        idx = (lengths - 1).unsqueeze(-1).unsqueeze(-1).expand([x.shape[0], 1, 4])
        return paddle.take_along_axis(out, idx, axis=1).squeeze(1)


def test_last_valid_output_by_take_along_axis():
    check(LastValidByGather(), [(randn(3, 4, 3), np.array([4, 1, 3], "int64"))],
          [paddle.static.InputSpec([None, None, 3]), paddle.static.InputSpec([None], "int64")])


class StatefulRNN(nn.Layer):
    """Truncated BPTT over chunks: the state is kept on self between calls."""

    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)
        self.h = None

    def forward(self, x):
        h = self.h if self.h is not None else paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        self.h = h.detach()
        return h


def test_state_kept_on_self_across_calls():
    def make():
        net = StatefulRNN()
        return net, net

    check_twins(make, [randn(2, 3, 3), randn(2, 3, 3, seed=1), randn(2, 3, 3, seed=2)],
                spec([2, 3, 3]))


class StatefulCounterRNN(nn.Layer):
    """A buffer holding the state, updated each call (as in streaming inference)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("state", paddle.zeros([1, 4]))

    def forward(self, x):
        s = self.state
        for t in range(x.shape[0]):
            s = paddle.tanh(self.fc(s) + x[t])
        self.state = s
        return s


def test_recurrent_buffer_kept_across_calls():
    def make():
        net = StatefulCounterRNN()
        return net, net

    check_twins(make, [randn(3, 4), randn(2, 4, seed=1), randn(4, 4, seed=2)], spec([None, 4]))


class AttnEncoderDecoder(nn.Layer):
    """The encoder collects its states in a list; the decoder attends over them
    (Luong dot attention) at every step."""

    def __init__(self):
        super().__init__()
        self.enc = RawGRUCell(3, 4)
        self.dec = RawGRUCell(4, 4)
        self.out = nn.Linear(8, 5)

    def forward(self, src, steps=3):
        h = paddle.zeros([src.shape[0], 4])
        enc_states = []
        for t in range(src.shape[1]):
            h = self.enc(src[:, t], h)
            enc_states.append(h)
        memory = paddle.stack(enc_states, axis=1)              # [N, T, 4]
        inp = paddle.zeros([src.shape[0], 4])
        logits = []
        for _ in range(steps):
            h = self.dec(inp, h)
            score = paddle.matmul(memory, h.unsqueeze(2)).squeeze(2)   # [N, T]
            alpha = F.softmax(score, axis=1)
            ctx = paddle.matmul(alpha.unsqueeze(1), memory).squeeze(1)  # [N, 4]
            logits.append(self.out(paddle.concat([h, ctx], axis=-1)))
            inp = ctx
        return paddle.stack(logits, axis=1)


def test_attention_over_encoder_states_list():
    check(AttnEncoderDecoder(), SEQS, SEQ_SPEC)


class BahdanauAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.W = nn.Linear(4, 4, bias_attr=False)
        self.U = nn.Linear(4, 4, bias_attr=False)
        self.v = nn.Linear(4, 1, bias_attr=False)

    def forward(self, query, keys, mask):
        e = self.v(paddle.tanh(self.W(query).unsqueeze(1) + self.U(keys))).squeeze(-1)
        e = paddle.where(mask, e, paddle.full_like(e, -1e9))
        a = F.softmax(e, axis=-1)
        return paddle.sum(a.unsqueeze(-1) * keys, axis=1), a


class AdditiveAttnDecoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = BahdanauAttention()
        self.cell = RawGRUCell(4, 4)

    def forward(self, keys, lengths):
        T = keys.shape[1]
        mask = paddle.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
        h = keys[:, 0]
        weights = []
        for _ in range(3):
            ctx, a = self.attn(h, keys, mask)
            h = self.cell(ctx, h)
            weights.append(a)
        return h, paddle.stack(weights, 1)


def test_additive_attention_with_length_mask():
    check(AdditiveAttnDecoder(), [(randn(2, 5, 4), np.array([5, 2], "int64")),
                                  (randn(3, 2, 4, seed=1), np.array([1, 2, 2], "int64"))],
          [paddle.static.InputSpec([None, None, 4]), paddle.static.InputSpec([None], "int64")])


class PeepholeLSTM(nn.Layer):
    def __init__(self):
        super().__init__()
        self.x2g = nn.Linear(3, 12)
        self.h2g = nn.Linear(4, 12, bias_attr=False)
        self.p_i = self.create_parameter([4])
        self.p_f = self.create_parameter([4])

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        c = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            g = self.x2g(x[:, t]) + self.h2g(h)
            gi, gf, gc = paddle.chunk(g, 3, axis=-1)
            i = F.sigmoid(gi + self.p_i * c)
            f = F.sigmoid(gf + self.p_f * c)
            c = f * c + i * paddle.tanh(gc)
            h = paddle.tanh(c)
        return h, c


def test_peephole_lstm():
    check(PeepholeLSTM(), SEQS, SEQ_SPEC)


class CharRNN(nn.Layer):
    def __init__(self, vocab=7):
        super().__init__()
        self.emb = nn.Embedding(vocab, 4)
        self.cell = RawGRUCell(4, 4)
        self.head = nn.Linear(4, vocab)

    def forward(self, ids, targets):
        h = paddle.zeros([ids.shape[0], 4])
        loss = 0.0
        for t in range(ids.shape[1]):
            h = self.cell(self.emb(ids[:, t]), h)
            loss = loss + F.cross_entropy(self.head(h), targets[:, t])
        return loss / ids.shape[1]


def test_char_rnn_loss_accumulated_from_python_zero():
    check(CharRNN(), [(ints(2, 4, high=7), ints(2, 4, high=7, seed=1)),
                      (ints(3, 2, high=7, seed=2), ints(3, 2, high=7, seed=3))],
          spec([None, None], [None, None], dtype="int64"))


class StopAtPadding(nn.Layer):
    """Reads tokens until a column of padding (id 0) for the whole batch."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.cell = RawGRUCell(4, 4)

    def forward(self, ids):
        h = paddle.zeros([ids.shape[0], 4])
        t = 0
        while t < ids.shape[1] and ids[:, t].sum() > 0:
            h = self.cell(self.emb(ids[:, t]), h)
            t += 1
        return h, t


def test_rnn_stops_at_padding_column():
    ids = np.array([[1, 2, 3, 0, 0], [4, 5, 0, 0, 0]], "int64")
    check(StopAtPadding(), [ids, np.array([[1, 2], [3, 4]], "int64")],
          spec([None, None], dtype="int64"))


class HiddenStateHighway(nn.Layer):
    """Skips the cell on steps whose input is all zeros (a skip-RNN)."""

    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        skipped = 0
        for t in range(x.shape[1]):
            xt = x[:, t]
            if paddle.abs(xt).sum() == 0:
                skipped += 1
                continue
            h = self.cell(xt, h)
        return h, skipped


def test_skip_rnn_continue_on_zero_steps():
    a = randn(2, 4, 3)
    a[:, 1] = 0.0
    check(HiddenStateHighway(), [a, randn(2, 3, 3, seed=1)], SEQ_SPEC)


class PaddleStyleRNNLoop(nn.Layer):
    """The time loop written with Paddle's counters: paddle.shape and full([1])."""

    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)

    def forward(self, x):
        seq_len = paddle.shape(x)[1]
        i = paddle.full([1], 0, "int64")
        h = paddle.zeros([x.shape[0], 4])
        while i < seq_len:
            step = paddle.slice(x, axes=[1], starts=[i], ends=[i + 1]).squeeze(1)
            h = self.cell(step, h)
            i = i + 1
        return h


@pytest.mark.xfail(strict=True, reason="SymbolicShapeError (a ConversionError naming the line): squeeze(1) of paddle.slice(x, [1], [i], [i + 1]): the slice's length is a fresh symbol, 1 only at run time")
def test_rnn_loop_with_paddle_shape_and_slice():
    check(PaddleStyleRNNLoop(), SEQS, SEQ_SPEC)


class EncoderReturnsAll(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = RawLSTMCell(3, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        c = paddle.zeros([x.shape[0], 4])
        states = []
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], h, c)
            states.append((h, c))
        return states[-1], len(states)


def test_encoder_returns_last_pair_from_state_list():
    check(EncoderReturnsAll(), SEQS, SEQ_SPEC)


class TimeMajorRNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = RawGRUCell(3, 4)

    def forward(self, x):
        x = paddle.transpose(x, [1, 0, 2])     # [T, N, 3]
        h = paddle.zeros([x.shape[1], 4])
        for x_t in x:
            h = self.cell(x_t, h)
        return h


def test_time_major_loop_over_tensor():
    check(TimeMajorRNN(), SEQS, SEQ_SPEC)


class LazyStateRNN(nn.Layer):
    """The state is created on the first call (`if self.h is None`), then carried."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.h = None

    def forward(self, x):
        if self.h is None:
            self.h = paddle.zeros([x.shape[0], 4])
        h = paddle.tanh(self.fc(x) + self.h)
        self.h = h.detach()
        return h


def test_lazily_created_state_on_self():
    def make():
        net = LazyStateRNN()
        return net, net

    check_twins(make, [randn(2, 4), randn(2, 4, seed=1), randn(2, 4, seed=2)], spec([2, 4]))


class TensorStateRNN(nn.Layer):
    """The state is a tensor from the start, replaced by each call."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.h = paddle.zeros([2, 4])

    def forward(self, x):
        h = paddle.tanh(self.fc(x) + self.h)
        self.h = h.detach()
        return h


def test_tensor_state_on_self_from_the_start():
    def make():
        net = TensorStateRNN()
        return net, net

    check_twins(make, [randn(2, 4), randn(2, 4, seed=1), randn(2, 4, seed=2)], spec([2, 4]))


class ResettableRNN(LazyStateRNN):
    def reset(self):
        self.h = None


def test_state_reset_between_sequences():
    for mode in MODES:
        eager, comp = ResettableRNN(), ResettableRNN()
        reset_parameters(eager)
        comp.set_state_dict(eager.state_dict())
        fn = compiled(comp, spec([2, 4]), mode)
        for k in range(4):
            if k == 2:
                eager.reset()
                comp.reset()
            x = randn(2, 4, seed=k)
            want = eager(paddle.to_tensor(x)).numpy()
            got = fn(paddle.to_tensor(x)).numpy()
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                raise OutputMismatch(f"{mode}, call {k}: {got} != eager {want}")
