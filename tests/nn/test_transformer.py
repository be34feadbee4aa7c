"""MultiHeadAttention and the Transformer encoder against a NumPy reference of
Paddle's computation; Paddle's sublayer names; masks; compiled with symbolic
batch and length."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(11)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_linear(layer, x):
    return x @ layer.weight.numpy() + layer.bias.numpy()


def np_attention(mha, q, k, v, mask=None):
    heads, dim = mha.num_heads, mha.head_dim

    def split(x):
        b, n, _ = x.shape
        return x.reshape(b, n, heads, dim).transpose(0, 2, 1, 3)
    qh, kh, vh = (split(np_linear(p, a)) for p, a in ((mha.q_proj, q), (mha.k_proj, k),
                                                      (mha.v_proj, v)))
    scores = (qh * dim ** -0.5) @ kh.transpose(0, 1, 3, 2)
    if mask is not None:
        scores = scores + (mask.astype(np.float64) - 1) * 1e9 if mask.dtype == bool else \
            scores + mask
    weights = np_softmax(scores)
    out = (weights @ vh).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return np_linear(mha.out_proj, out), weights


def np_layer_norm(norm, x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + norm._epsilon) * norm.weight.numpy() + norm.bias.numpy()


def np_encoder_layer(layer, x, mask):
    def block(x):
        return np_attention(layer.self_attn, x, x, x, mask)[0]

    def ffn(x):
        return np_linear(layer.linear2, np.maximum(np_linear(layer.linear1, x), 0))
    if layer.normalize_before:
        x = x + block(np_layer_norm(layer.norm1, x))
        return x + ffn(np_layer_norm(layer.norm2, x))
    x = np_layer_norm(layer.norm1, x + block(x))
    return np_layer_norm(layer.norm2, x + ffn(x))


def test_multi_head_attention_matches_the_reference():
    mha = nn.MultiHeadAttention(8, 2, need_weights=True)
    q = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    kv = RNG.standard_normal((2, 3, 8)).astype(np.float32)
    mask = RNG.random((2, 1, 5, 3)) > 0.3
    mask[..., 0] = True
    out, weights = mha(paddle.to_tensor(q), paddle.to_tensor(kv), paddle.to_tensor(kv),
                       attn_mask=paddle.to_tensor(mask))
    ref_out, ref_weights = np_attention(mha, q, kv, kv, mask)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.numpy(), ref_weights, rtol=1e-5, atol=1e-6)
    assert list(mha.state_dict()) == [f"{p}_proj.{w}" for p in "qkv" for w in
                                      ("weight", "bias")] + ["out_proj.weight", "out_proj.bias"]
    float_mask = np.where(mask, 0.0, -np.inf).astype(np.float32)
    out2, _ = mha(paddle.to_tensor(q), paddle.to_tensor(kv), paddle.to_tensor(kv),
                  attn_mask=paddle.to_tensor(float_mask))
    np.testing.assert_allclose(out2.numpy(), ref_out, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(8, 3)


def test_attention_gradients():
    mha = nn.MultiHeadAttention(4, 2)
    mha.to(dtype="float64")
    check_grads(lambda x: mha(x), RNG.standard_normal((1, 3, 4)), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_encoder_matches_the_reference(normalize_before):
    paddle.seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, normalize_before=normalize_before)
    encoder = nn.TransformerEncoder(layer, 2)
    assert encoder.layers[0] is layer and encoder.layers[1] is not layer
    assert not np.array_equal(encoder.layers[1].linear1.weight.numpy(),
                              layer.linear1.weight.numpy())  # built anew, as in Paddle
    keys = list(encoder.state_dict())
    assert keys[:2] == ["layers.0.self_attn.q_proj.weight", "layers.0.self_attn.q_proj.bias"]
    assert keys[8:16] == [f"layers.0.{n}.{w}" for n in ("linear1", "linear2", "norm1", "norm2")
                          for w in ("weight", "bias")]
    x = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.tril(np.ones((5, 5), bool))
    out = encoder(paddle.to_tensor(x), src_mask=paddle.to_tensor(mask))
    ref = x.astype(np.float64)
    for sub in encoder.layers:
        ref = np_encoder_layer(sub, ref, mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
    spec = [InputSpec([None, None, 8]), InputSpec([None, None], "bool")]
    static = paddle.jit.to_static(encoder, input_spec=spec)
    np.testing.assert_allclose(static(paddle.to_tensor(x), paddle.to_tensor(mask)).numpy(),
                               out.numpy(), rtol=1e-5, atol=1e-6)
    short = paddle.to_tensor(x[:1, :3])
    np.testing.assert_allclose(static(short, paddle.to_tensor(mask[:3, :3])).numpy(),
                               encoder(short, paddle.to_tensor(mask[:3, :3])).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_encoder_options():
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", weight_attr=[None, None])
    norm = nn.LayerNorm(8)
    encoder = nn.TransformerEncoder(layer, 3, norm=norm)
    assert len(encoder.layers) == 3 and encoder.norm is norm
    encoder.eval()
    out = encoder(paddle.randn([2, 4, 8]))
    np.testing.assert_allclose(out.numpy().mean(-1), 0, atol=1e-5)  # the final norm
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(8, 2, 16, activation="swishy")
