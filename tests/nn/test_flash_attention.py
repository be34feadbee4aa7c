"""``paddle.nn.functional.flash_attention``: language-model code written for Paddle's
fused kernel runs as scaled-dot-product attention (Paddle's CPU computation), checked
against NumPy."""
import numpy as np
import pytest

import irflow as paddle
from irflow.nn.functional.flash_attention import flash_attention


def _numpy_attention(q, k, v, causal, scale):
    """softmax(Q K^T * scale [+ -1e4 above the diagonal]) V over [B, L, H, D]."""
    q, k, v = (np.transpose(t, (0, 2, 1, 3)).astype(np.float64) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        scores = scores + np.triu(np.full(scores.shape[-2:], -1e4), 1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.transpose(weights @ v, (0, 2, 1, 3)), weights


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.1])
def test_flash_attention_is_scaled_dot_product_attention(causal, scale):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((2, 5, 2, 4), (2, 6, 2, 4), (2, 6, 2, 4)))
    out, weights = flash_attention(paddle.to_tensor(q), paddle.to_tensor(k),
                                   paddle.to_tensor(v), causal=causal, return_softmax=True,
                                   softmax_scale=scale)
    want_out, want_weights = _numpy_attention(q, k, v, causal, scale or 4 ** -0.5)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.numpy(), want_weights, rtol=1e-5, atol=1e-6)
    assert flash_attention(paddle.to_tensor(q), paddle.to_tensor(k),
                           paddle.to_tensor(v))[1] is None


def test_flash_attention_is_reached_as_paddles_submodule_and_differentiates():
    q = paddle.randn([1, 3, 2, 4])
    q.stop_gradient = False
    out, _ = paddle.nn.functional.flash_attention.flash_attention(q, q, q, causal=True)
    out.sum().backward()
    assert q.grad.shape == [1, 3, 2, 4]
    # the first query position attends to the first key only: its output is that value
    np.testing.assert_allclose(out.numpy()[:, 0], q.numpy()[:, 0], rtol=1e-6)
