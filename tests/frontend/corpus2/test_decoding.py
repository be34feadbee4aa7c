"""seq2seq decoding as people write it: greedy until EOS with a finished mask, token
lists, `.item()` checks for batch 1, a small beam search, CTC-style collapsing."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import check, check_outputs, ints, randn, reset_parameters, spec

EOS, BOS, VOCAB, HID = 0, 1, 6, 4


class Cell(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(HID, HID)
        self.hh = nn.Linear(HID, HID)

    def forward(self, x, h):
        return paddle.tanh(self.ih(x) + self.hh(h))


class Decoder(nn.Layer):
    def __init__(self, max_len=6):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.cell = Cell()
        self.proj = nn.Linear(HID, VOCAB)
        self.max_len = max_len

    def step(self, tok, h):
        h = self.cell(self.emb(tok), h)
        return F.log_softmax(self.proj(h), axis=-1), h


def stop_on_sign(dec):
    """Parameters from the fixed stream, then an EOS logit that follows the state's
    sum: a positive encoding ends at once, a negative one runs to max_len."""
    reset_parameters(dec)
    w = np.array(dec.proj.weight.numpy())
    w[:, EOS] = 4.0
    dec.proj.weight.set_value(w)
    b = np.array(dec.proj.bias.numpy())
    b[EOS] = 0.0
    dec.proj.bias.set_value(b)
    return dec


ENC = [randn(2, HID, scale=0.1, shift=2.0), randn(3, HID, seed=1, scale=0.1, shift=-2.0)]
ENC1 = [randn(1, HID, scale=0.1, shift=2.0), randn(1, HID, seed=1, scale=0.1, shift=-2.0)]


class FinishedMaskDecoder(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        finished = paddle.zeros([enc.shape[0]], "bool")
        score = paddle.zeros([enc.shape[0]])
        step = 0
        while not paddle.all(finished) and step < self.max_len:
            logp, h = self.step(tok, h)
            best = paddle.max(logp, axis=-1)
            tok = paddle.argmax(logp, axis=-1)
            score = score + paddle.where(finished, paddle.zeros_like(best), best)
            finished = paddle.logical_or(finished, tok == EOS)
            step += 1
        return score, step


def test_greedy_with_finished_mask():
    check(stop_on_sign(FinishedMaskDecoder()), ENC, spec([None, HID]), reset=False)


class TokenListDecoder(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        tokens = []
        for _ in range(self.max_len):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            if paddle.all(tok == EOS):
                break
            tokens.append(tok)
        if len(tokens) == 0:
            return paddle.zeros([enc.shape[0], 0], "int64")
        return paddle.stack(tokens, axis=1)


def test_tokens_until_eos_excluding_it():
    check_outputs(stop_on_sign(TokenListDecoder()), ENC, spec([None, HID]), reset=False)


class ItemDecoder(Decoder):
    """Batch of one: compares the token with `.item()` as tutorials do."""

    def forward(self, enc):
        h = enc
        tok = paddle.to_tensor([BOS])
        out = []
        for _ in range(self.max_len):
            logp, h = self.step(tok, h)
            tok = logp.argmax(axis=-1)
            if tok.item() == EOS:
                break
            out.append(tok)
        return len(out), h


def test_batch_one_decoding_with_item():
    check(stop_on_sign(ItemDecoder()), ENC1, spec([1, HID]), reset=False)


class IntDecoder(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([1], BOS, "int64")
        length = 0
        while length < self.max_len:
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            length += 1
            if int(tok[0]) == EOS:
                break
        return h, length


def test_batch_one_decoding_with_int():
    check(stop_on_sign(IntDecoder()), ENC1, spec([1, HID]), reset=False)


class ScoreNormalisedDecoder(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        logps = []
        for _ in range(self.max_len):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            logps.append(paddle.max(logp, axis=-1))
            if (tok == EOS).all():
                break
        total = paddle.stack(logps, axis=1).sum(axis=1)
        return total / len(logps)


def test_length_normalised_score():
    check(stop_on_sign(ScoreNormalisedDecoder()), ENC, spec([None, HID]), reset=False)


class SrcLenDecoder(Decoder):
    """Decodes at most twice the source length (a shape of the input)."""

    def forward(self, src_emb):
        h = src_emb.mean(axis=1)
        max_len = src_emb.shape[1] * 2
        tok = paddle.full([src_emb.shape[0]], BOS, "int64")
        n = 0
        for _ in range(max_len):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            n += 1
            if paddle.all(tok == EOS):
                break
        return h, n


def test_max_length_from_source_length():
    dec = stop_on_sign(SrcLenDecoder())
    check(dec, [randn(2, 2, HID, scale=0.1, shift=2.0), randn(2, 3, HID, seed=1, scale=0.1,
                                                             shift=-2.0)],
          spec([None, None, HID]), reset=False)


class BeamSearch(Decoder):
    """A two-beam search over one sequence: keep the two best (beam, token) pairs."""

    def forward(self, enc):
        K = 2
        h = paddle.concat([enc, enc], axis=0)                 # [K, HID]
        tok = paddle.full([K], BOS, "int64")
        scores = paddle.to_tensor([0.0, -1e9])
        history = []
        for _ in range(4):
            logp, h = self.step(tok, h)                         # [K, V]
            cand = (scores.unsqueeze(1) + logp).reshape([-1])  # [K*V]
            best = paddle.argmax(cand)
            first = cand.max()
            masked = paddle.where(paddle.arange(K * VOCAB) == best,
                                  paddle.full_like(cand, -1e9), cand)
            second = paddle.argmax(masked)
            chosen = paddle.stack([best, second])
            beam = chosen // VOCAB
            tok = chosen % VOCAB
            scores = paddle.stack([first, masked.max()])
            h = paddle.gather(h, beam)
            history.append(tok)
            if tok[0] == EOS:
                break
        return scores, paddle.stack(history, axis=1)


def test_two_beam_search():
    check(stop_on_sign(BeamSearch()), ENC1, spec([1, HID]), reset=False)


class AttnGreedy(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.enc = Cell()
        self.dec = Cell()
        self.proj = nn.Linear(2 * HID, VOCAB)

    def forward(self, src):
        h = paddle.zeros([src.shape[0], HID])
        mem = []
        for t in range(src.shape[1]):
            h = self.enc(self.emb(src[:, t]), h)
            mem.append(h)
        memory = paddle.stack(mem, axis=1)
        tok = paddle.full([src.shape[0]], BOS, "int64")
        outs = []
        for _ in range(4):
            h = self.dec(self.emb(tok), h)
            a = F.softmax((memory * h.unsqueeze(1)).sum(-1), axis=-1)
            ctx = (memory * a.unsqueeze(-1)).sum(1)
            logits = self.proj(paddle.concat([h, ctx], -1))
            tok = logits.argmax(-1)
            outs.append(logits)
            if paddle.all(tok == EOS):
                break
        return paddle.stack(outs, 1)


def test_greedy_decoding_with_attention_over_encoder_list():
    srcs = [ints(2, 3, high=VOCAB), ints(3, 5, high=VOCAB, seed=1)]
    check(AttnGreedy(), srcs, spec([None, None], dtype="int64"), every_line=False)
    eager_eos = AttnGreedy()                        # EOS first: the break is taken
    reset_parameters(eager_eos)
    b = np.array(eager_eos.proj.bias.numpy())
    b[EOS] = 50.0
    eager_eos.proj.bias.set_value(b)
    check(eager_eos, srcs, spec([None, None], dtype="int64"), reset=False, every_line=False)


def ctc_collapse(ids, blank=0):
    """CTC greedy decoding of one sequence: drop repeats, then blanks."""
    out = []
    prev = -1
    for t in range(ids.shape[0]):
        c = ids[t]
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def test_ctc_collapse_appends_under_condition():
    def f(logits):
        ids = paddle.argmax(logits, axis=-1)
        out = ctc_collapse(ids)
        return len(out)

    a = np.zeros([6, 4], "float32")
    for t, c in enumerate([1, 1, 0, 2, 2, 3]):
        a[t, c] = 5.0
    b = np.zeros([3, 4], "float32")
    b[:, 0] = 5.0
    check_outputs(f, [a, b], spec([None, 4]))


class WhileLoopDecoder(Decoder):
    def forward(self, enc):
        def cond(i, tok, h, done):
            return paddle.logical_and(i < self.max_len, paddle.logical_not(done))

        def body(i, tok, h, done):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            done = paddle.all(tok == EOS)
            return [i + 1, tok, h, done]

        i = paddle.full([1], 0, "int64")
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        done = paddle.full([], False, "bool")
        i, tok, h, done = paddle.static.nn.while_loop(cond, body, [i, tok, enc, done])
        return h, i


def test_decoding_with_static_while_loop():
    check(stop_on_sign(WhileLoopDecoder()), ENC, spec([None, HID]), reset=False)


class EarlyReturnDecoder(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        for t in range(self.max_len):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            if paddle.all(tok == EOS):
                return h, t + 1
        return h, self.max_len


def test_decoder_returns_from_inside_loop():
    check(stop_on_sign(EarlyReturnDecoder()), ENC, spec([None, HID]), reset=False)


class PerSequenceLengths(Decoder):
    def forward(self, enc):
        h = enc
        tok = paddle.full([enc.shape[0]], BOS, "int64")
        lengths = paddle.zeros([enc.shape[0]], "int64")
        alive = paddle.ones([enc.shape[0]], "int64")
        for _ in range(self.max_len):
            logp, h = self.step(tok, h)
            tok = paddle.argmax(logp, axis=-1)
            lengths = lengths + alive
            alive = alive * (tok != EOS).astype("int64")
            if alive.sum() == 0:
                break
        return lengths


def test_per_sequence_lengths_with_alive_counts():
    enc = np.concatenate([ENC[0][:1], ENC[1][:1]])
    check_outputs(stop_on_sign(PerSequenceLengths()), [enc, ENC[0]], spec([None, HID]),
                  reset=False)


class TeacherForcingSwitch(Decoder):
    """Teacher forcing in train mode, own predictions in eval mode."""

    def forward(self, enc, tgt):
        h = enc
        tok = tgt[:, 0]
        loss = paddle.zeros([])
        for t in range(1, tgt.shape[1]):
            logp, h = self.step(tok, h)
            loss = loss + F.nll_loss(logp, tgt[:, t])
            if self.training:
                tok = tgt[:, t]
            else:
                tok = paddle.argmax(logp, axis=-1)
        return loss


def test_teacher_forcing_in_train_and_greedy_in_eval():
    inputs = [(randn(2, HID), ints(2, 4, high=VOCAB)), (randn(3, HID, seed=1),
                                                        ints(3, 3, high=VOCAB, seed=1))]
    specs = [paddle.static.InputSpec([None, HID]), paddle.static.InputSpec([None, None], "int64")]
    check(TeacherForcingSwitch(), inputs, specs, every_line=False)
    check(TeacherForcingSwitch(), inputs, specs, train=False, every_line=False)


class TopKBeamSearch(Decoder):
    """Beam search as tutorials write it: topk over the flattened beam x vocab scores."""

    def forward(self, enc, beam=2):
        h = paddle.concat([enc] * beam, axis=0)
        tok = paddle.full([beam], BOS, "int64")
        scores = paddle.to_tensor([0.0] + [-1e9] * (beam - 1))
        for _ in range(4):
            logp, h = self.step(tok, h)
            cand = (scores.unsqueeze(1) + logp).reshape([-1])
            scores, idx = paddle.topk(cand, beam)
            h = paddle.gather(h, idx // VOCAB)
            tok = idx % VOCAB
            if tok[0] == EOS:
                break
        return scores, tok


def test_topk_beam_search():
    check(stop_on_sign(TopKBeamSearch()), ENC1, spec([1, HID]), reset=False)
