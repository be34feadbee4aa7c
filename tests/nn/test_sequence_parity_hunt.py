"""Guards where irflow's sequence layers are deliberately right where Paddle 3.3.1 is
not, so that matching Paddle's numbers does not later bring its errors in.

- A bidirectional multi-layer GRU/LSTM/SimpleRNN with both `sequence_length` and
  `initial_states`: Paddle's forward values are matched exactly, but its fused rnn
  op's backward gives wrong gradients for the reverse direction (off by up to 0.3
  against finite differences of its own forward). irflow's must match finite
  differences.
- `Embedding(sparse=True, padding_idx=p)`: Paddle's sparse gradient keeps a row for
  the padding index, against its documentation ("the weight at padding_idx is not
  updated"); irflow's gradient is zero there, as with sparse=False.
"""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(11)
B, T, I, H = 3, 4, 2, 3
LENGTHS = [4, 1, 2]


@pytest.mark.parametrize("kind", ["GRU", "LSTM", "SimpleRNN"])
def test_bidirectional_gradients_with_lengths_and_initial_states(kind):
    paddle.seed(3)
    model = getattr(nn, kind)(I, H, num_layers=2, direction="bidirect")
    lengths = paddle.to_tensor(LENGTHS)
    x = RNG.standard_normal((B, T, I))
    h0 = RNG.standard_normal((4, B, H))

    def run(a, h):
        h = h.astype("float32")
        states = (h, h * 0.5) if kind == "LSTM" else h
        out, final = model(a.astype("float32"), states, lengths)
        final = final[0] if kind == "LSTM" else final
        return paddle.concat([out.flatten(), final.flatten()]).astype("float64")

    check_grads(run, x, h0, rtol=2e-2, atol=5e-4, eps=1e-3)


@pytest.mark.parametrize("padding_idx", [0, 2, -1])
def test_sparse_embedding_gives_no_gradient_to_the_padding_row(padding_idx):
    emb = nn.Embedding(5, 3, padding_idx=padding_idx, sparse=True)
    ids = np.array([[0, 2, 3, 2], [1, 0, 0, 4]])
    cotangent = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    (emb(paddle.to_tensor(ids)) * paddle.to_tensor(cotangent)).sum().backward()
    want = np.zeros((5, 3), np.float32)
    np.add.at(want, ids, cotangent)
    want[padding_idx] = 0
    np.testing.assert_allclose(emb.weight.grad.numpy(), want, rtol=1e-6, atol=1e-6)
