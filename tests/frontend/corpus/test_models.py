"""Small models as in Paddle's tutorials: MLPs and CNNs with control flow, recurrent
cells written by hand, MNIST-style classifiers and seq2seq-style greedy decoding."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_outputs, ints, randn, reset_parameters, spec


class LSTMCell(nn.Layer):
    """The cell users write before they find nn.LSTMCell."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x, state):
        h, c = state
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = paddle.split(gates, 4, axis=-1)
        c = F.sigmoid(f) * c + F.sigmoid(i) * paddle.tanh(g)
        h = F.sigmoid(o) * paddle.tanh(c)
        return h, (h, c)


class GRUCell(nn.Layer):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.x2h = nn.Linear(input_size, 3 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, x, h):
        xr, xz, xn = paddle.split(self.x2h(x), 3, axis=-1)
        hr, hz, hn = paddle.split(self.h2h(h), 3, axis=-1)
        r = F.sigmoid(xr + hr)
        z = F.sigmoid(xz + hz)
        n = paddle.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class LSTMEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = LSTMCell(3, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        c = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            _, (h, c) = self.cell(x[:, t, :], (h, c))
        return self.out(h)


def test_lstm_encoder_over_static_length():
    check(LSTMEncoder(), [randn(2, 5, 3), randn(3, 5, 3, seed=1)], spec([None, 5, 3]))


def test_lstm_encoder_over_symbolic_length():
    check(LSTMEncoder(), [randn(2, 5, 3), randn(3, 2, 3, seed=1)], spec([None, None, 3]))


class GRUClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = GRUCell(3, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        for step in paddle.unbind(x, axis=1):
            h = self.cell(step, h)
        return F.log_softmax(self.fc(h), axis=-1)


def test_gru_classifier_unbinds_time():
    check(GRUClassifier(), [randn(2, 4, 3), randn(3, 4, 3, seed=1)], spec([None, 4, 3]))


class RNNWithEarlyStop(nn.Layer):
    """Stops reading the sequence once the state saturates."""

    def __init__(self):
        super().__init__()
        self.cell = GRUCell(3, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            if paddle.max(paddle.abs(h)) > 0.9:
                break
        return h


def test_rnn_with_early_stop():
    check(RNNWithEarlyStop(), [randn(2, 6, 3, scale=0.1), randn(2, 6, 3, seed=1, scale=30)],
          spec([None, 6, 3]))


class MaskedRNN(nn.Layer):
    """Keeps the state where the step is padding (lengths given as input)."""

    def __init__(self):
        super().__init__()
        self.cell = GRUCell(3, 4)

    def forward(self, x, lengths):
        h = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            new_h = self.cell(x[:, t], h)
            keep = paddle.cast(lengths > t, "float32").unsqueeze(-1)
            h = keep * new_h + (1 - keep) * h
        return h


def test_masked_rnn_with_lengths():
    check(MaskedRNN(), [(randn(3, 4, 3), np.array([4, 2, 1], "int64"))],
          [paddle.static.InputSpec([None, 4, 3]), paddle.static.InputSpec([None], "int64")])


class MNISTMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 10)

    def forward(self, img):
        x = paddle.reshape(img, [-1, 16])
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def test_mnist_mlp():
    check(MNISTMLP(), [randn(2, 1, 4, 4), randn(5, 1, 4, 4, seed=1)], spec([None, 1, 4, 4]))


class MNISTCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 2, 3, padding=1)
        self.pool = nn.MaxPool2D(2, 2)
        self.fc = nn.Linear(2 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        x = paddle.flatten(x, 1)
        logits = self.fc(x)
        if paddle.mean(logits) > 0:
            logits = logits - paddle.mean(logits)
        return logits


def test_mnist_cnn_with_branch():
    check(MNISTCNN(), [randn(2, 1, 8, 8, shift=3), randn(3, 1, 8, 8, seed=1, shift=-3)],
          spec([None, 1, 8, 8]))


class MNISTPredict(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = MNISTMLP()

    def forward(self, img):
        probs = F.softmax(self.net(img), axis=-1)
        label = paddle.argmax(probs, axis=-1)
        confident = paddle.max(probs, axis=-1) > 0.5
        return label, confident


def test_mnist_predict_labels():
    check_outputs(MNISTPredict(), [randn(4, 1, 4, 4, scale=5), randn(2, 1, 4, 4, seed=1)],
                  spec([None, 1, 4, 4]))


class MNISTWithLoss(nn.Layer):
    def __init__(self):
        super().__init__()
        self.net = MNISTMLP()

    def forward(self, img, label):
        logits = self.net(img)
        loss = F.cross_entropy(logits, label)
        acc = paddle.mean(paddle.cast(paddle.argmax(logits, axis=-1) == label, "float32"))
        return loss, acc


def test_mnist_loss_and_accuracy():
    check(MNISTWithLoss(), [(randn(4, 1, 4, 4), ints(4, high=10))],
          [paddle.static.InputSpec([None, 1, 4, 4]), paddle.static.InputSpec([None], "int64")])


class BatchNormNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1D(6)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.fc(x))))
        if h.sum() > 0:
            h = h * 2
        return self.out(h)


def test_batchnorm_dropout_in_eval():
    check(BatchNormNet(), [randn(4, 4), randn(3, 4, seed=1, shift=-5)], spec([None, 4]),
          train=False)


class ResidualStack(nn.Layer):
    def __init__(self, depth=3):
        super().__init__()
        self.blocks = nn.LayerList([nn.Sequential(nn.Linear(4, 4), nn.Tanh())
                                    for _ in range(depth)])
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return self.norm(x)


def test_residual_stack_with_layernorm():
    check(ResidualStack(), [randn(2, 4), randn(3, 4, seed=1)], spec([None, 4]))


class DotAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)

    def forward(self, query, keys):
        scores = paddle.matmul(self.q(query).unsqueeze(1), self.k(keys), transpose_y=True)
        weights = F.softmax(scores / 2.0, axis=-1)
        return paddle.matmul(weights, keys).squeeze(1)


def test_dot_attention():
    check(DotAttention(), [(randn(2, 4), randn(2, 5, 4, seed=1))], spec([None, 4], [None, 5, 4]))


class GreedyDecoder(nn.Layer):
    """seq2seq-style decoding: embed the last token, step a cell, take the argmax;
    stop when every sequence has produced the end token or at max_len."""

    def __init__(self, vocab=6, hidden=4, max_len=5, eos=0):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.cell = GRUCell(hidden, hidden)
        self.proj = nn.Linear(hidden, vocab)
        self.max_len = max_len
        self.eos = eos

    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], 1, "int64")
        scores = paddle.zeros([enc.shape[0]])
        step = 0
        while step < self.max_len:
            h = self.cell(self.emb(tok), h)
            logp = F.log_softmax(self.proj(h), axis=-1)
            tok = paddle.argmax(logp, axis=-1)
            scores = scores + paddle.max(logp, axis=-1)
            step += 1
            if paddle.all(tok == self.eos):
                break
        return scores, tok


def favour_eos(decoder):
    """Parameters from the fixed stream, then an end-token logit that follows the
    state's sum, so that a positive encoding stops early and a negative one never."""
    reset_parameters(decoder)
    w = np.array(decoder.proj.weight.numpy())
    w[:, decoder.eos] = 4.0
    decoder.proj.weight.set_value(w)
    return decoder


ENCODINGS = [randn(2, 4, scale=0.1, shift=3.0), randn(3, 4, seed=1, scale=0.1, shift=-3.0)]


def test_greedy_decoder():
    check(favour_eos(GreedyDecoder()), ENCODINGS, spec([None, 4]), reset=False)


class TokenCollectingDecoder(GreedyDecoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], 1, "int64")
        tokens = []
        for _ in range(self.max_len):
            h = self.cell(self.emb(tok), h)
            tok = paddle.argmax(self.proj(h), axis=-1)
            tokens.append(tok)
            if paddle.all(tok == self.eos):
                break
        return paddle.stack(tokens, axis=1)


def test_decoder_collects_tokens_until_eos():
    check_outputs(favour_eos(TokenCollectingDecoder()), ENCODINGS, spec([None, 4]),
                  reset=False)


class Seq2Seq(nn.Layer):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(7, 4)
        self.encoder = GRUCell(4, 4)
        self.decoder = GreedyDecoder(vocab=7)

    def forward(self, src):
        h = paddle.zeros([src.shape[0], 4])
        for t in range(src.shape[1]):
            h = self.encoder(self.src_emb(src[:, t]), h)
        return self.decoder(h)


def test_seq2seq_encode_then_decode():
    check(Seq2Seq(), [ints(2, 3, high=7), ints(3, 3, high=7, seed=1)],
          spec([None, 3], dtype="int64"))


class TeacherForcedDecoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.cell = LSTMCell(4, 4)
        self.proj = nn.Linear(4, 6)

    def forward(self, tgt):
        h = paddle.zeros([tgt.shape[0], 4])
        c = paddle.zeros([tgt.shape[0], 4])
        loss = paddle.zeros([])
        for t in range(tgt.shape[1] - 1):
            out, (h, c) = self.cell(self.emb(tgt[:, t]), (h, c))
            loss = loss + F.cross_entropy(self.proj(out), tgt[:, t + 1])
        return loss / (tgt.shape[1] - 1)


def test_teacher_forced_decoder_loss():
    check(TeacherForcedDecoder(), [ints(2, 4, high=6), ints(3, 4, high=6, seed=1)],
          spec([None, 4], dtype="int64"))


class PaddleLSTMCellModel(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 4)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 4])
        c = paddle.zeros([x.shape[0], 4])
        for t in range(x.shape[1]):
            _, (h, c) = self.cell(x[:, t], (h, c))
        return h


def test_paddle_lstm_cell():
    check(PaddleLSTMCellModel(), [randn(2, 3, 3)], spec([None, 3, 3]))


class PaddleGRUModel(nn.Layer):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4)

    def forward(self, x):
        out, h = self.rnn(x)
        return out[:, -1]


def test_paddle_gru_layer():
    check(PaddleGRUModel(), [randn(2, 3, 3)], spec([None, 3, 3]))


class AdaptiveDepth(nn.Layer):
    """Runs blocks until a halting score is reached (ACT-style)."""

    def __init__(self):
        super().__init__()
        self.block = nn.Linear(4, 4)
        self.halt = nn.Linear(4, 1)

    def forward(self, x):
        total = paddle.zeros([])
        steps = 0
        while total < 1.0 and steps < 6:
            x = paddle.tanh(self.block(x))
            total = total + F.sigmoid(self.halt(x)).mean()
            steps += 1
        return x


def test_adaptive_depth():
    check(AdaptiveDepth(), [randn(2, 4), randn(3, 4, seed=1, scale=4)], spec([None, 4]))


class MoEGate(nn.Layer):
    """Picks an expert for the whole batch from the gate's mean score."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 2)
        self.experts = nn.LayerList([nn.Linear(4, 4), nn.Linear(4, 4)])

    def forward(self, x):
        score = F.softmax(self.gate(x), axis=-1).mean(axis=0)
        if score[0] > score[1]:
            return self.experts[0](x)
        return self.experts[1](x)


def test_mixture_of_two_experts():
    x = randn(3, 4, scale=5.0, shift=2.0)
    check(MoEGate(), [x, -x], spec([None, 4]))


class Embedder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, ids):
        e = self.emb(ids)
        mask = paddle.cast(ids != 0, "float32").unsqueeze(-1)
        pooled = (e * mask).sum(axis=1) / paddle.clip(mask.sum(axis=1), min=1.0)
        return self.fc(pooled)


def test_bag_of_embeddings_with_padding_mask():
    ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0], [4, 5, 6, 7]], "int64")
    check(Embedder(), [ids, np.zeros([2, 4], "int64")], spec([None, 4], dtype="int64"))


def test_whole_training_step_compiled():
    paddle.seed(0)
    net = MNISTMLP()
    reset_parameters(net)
    twin = MNISTMLP()
    twin.set_state_dict(net.state_dict())
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    twin_opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=twin.parameters())

    def make_step(model, optimizer):
        def train_step(img, label):
            loss = F.cross_entropy(model(img), label)
            if loss > 100.0:
                loss = loss * 0.0
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            return loss
        return train_step

    step = paddle.jit.to_static(make_step(net, opt), input_spec=[
        paddle.static.InputSpec([None, 1, 4, 4]), paddle.static.InputSpec([None], "int64")])
    eager_step = make_step(twin, twin_opt)
    for k in range(3):
        img, label = paddle.to_tensor(randn(4, 1, 4, 4, seed=k)), paddle.to_tensor(ints(4, seed=k))
        np.testing.assert_allclose(step(img, label).numpy(), eager_step(img, label).numpy(),
                                   rtol=1e-5)
    for p, q in zip(net.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_forward_trained_eagerly():
    net, twin = MNISTMLP(), MNISTMLP()
    reset_parameters(net)
    twin.set_state_dict(net.state_dict())
    static = paddle.jit.to_static(net, input_spec=[paddle.static.InputSpec([None, 1, 4, 4])])
    opts = [paddle.optimizer.Adam(learning_rate=0.01, parameters=m.parameters())
            for m in (net, twin)]
    for k in range(3):
        img, label = paddle.to_tensor(randn(4, 1, 4, 4, seed=k)), paddle.to_tensor(ints(4, seed=k))
        for model, opt in zip((static, twin), opts):
            loss = F.cross_entropy(model(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
    for p, q in zip(net.parameters(), twin.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5)


def test_replacing_a_sublayer_after_compiling():
    net = MNISTMLP()
    static = paddle.jit.to_static(net, input_spec=[paddle.static.InputSpec([None, 1, 4, 4])])
    x = paddle.to_tensor(randn(2, 1, 4, 4))
    static(x)
    net.fc2 = nn.Linear(8, 10)
    np.testing.assert_allclose(static(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)


def test_replacing_a_parameter_after_compiling():
    class Scale(nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = paddle.create_parameter([4], "float32")

        def forward(self, x):
            return x * self.w

    net = Scale()
    static = paddle.jit.to_static(net, input_spec=[paddle.static.InputSpec([None, 4])])
    x = paddle.to_tensor(randn(2, 4))
    static(x)
    net.w = paddle.create_parameter([4], "float32",
                                    default_initializer=nn.initializer.Constant(3.0))
    np.testing.assert_allclose(static(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)
