"""scaled_dot_product_attention, one_hot's default num_classes, bilinear / Bilinear,
InstanceNorm1D, UpsamplingBilinear2D / UpsamplingNearest2D and Unflatten: values
against NumPy references written here, gradients against finite differences,
Paddle's parameter names and shapes, argument errors, and a compiled layer against
eager code."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.errors import ShapeError
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def sdpa_reference(q, k, v, mask=None, causal=False, scale=None):
    """Attention on [batch, seq, heads, dim], key/value heads shared by query groups."""
    groups = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, groups, axis=2), np.repeat(v, groups, axis=2)
    scale = scale or q.shape[-1] ** -0.5
    scores = np.einsum("bqhd,bkhd->bhqk", q * scale, k)
    if causal:
        scores = scores + np.triu(np.full(scores.shape[-2:], -1e4), 1)
    elif mask is not None:
        scores = scores + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", weights, v)


QKV = [RNG.standard_normal(s) for s in [(2, 3, 4, 5), (2, 4, 2, 5), (2, 4, 2, 5)]]


@pytest.mark.parametrize("options", [{}, {"scale": 0.3}, {"dropout_p": 0.5, "training": False}])
def test_sdpa_grouped_heads_matches_reference(options):
    out = F.scaled_dot_product_attention(*[t(a) for a in QKV], **options)
    np.testing.assert_allclose(out.numpy(), sdpa_reference(*QKV, scale=options.get("scale")),
                               rtol=1e-10)
    check_grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **options), *QKV)


def test_sdpa_masks_and_causal():
    q, k, v = (RNG.standard_normal((1, 4, 2, 3)) for _ in range(3))
    bool_mask = np.tril(np.ones((4, 4), bool))
    float_mask = RNG.standard_normal((1, 2, 4, 4))
    for mask in (bool_mask, float_mask):
        out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask))
        np.testing.assert_allclose(out.numpy(), sdpa_reference(q, k, v, mask), rtol=1e-10)
    causal = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(float_mask),
                                            is_causal=True)
    np.testing.assert_allclose(causal.numpy(), sdpa_reference(q, k, v, causal=True),
                               rtol=1e-10)
    check_grads(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                q, k, v, bool_mask)
    check_grads(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                q, k, v)


def test_sdpa_unbatched_and_head_errors():
    q, k, v = (a[0] for a in QKV)
    out = F.scaled_dot_product_attention(t(q), t(k), t(v))
    assert out.shape == [3, 4, 5]
    np.testing.assert_allclose(out.numpy(), sdpa_reference(*QKV)[0], rtol=1e-10)
    with pytest.raises(ShapeError, match="enable_gqa=False"):
        F.scaled_dot_product_attention(*[t(a) for a in QKV], enable_gqa=False)
    with pytest.raises(ShapeError, match="number of heads"):
        F.scaled_dot_product_attention(t(QKV[0]), t(QKV[0][:, :, :3]), t(QKV[0][:, :, :3]))


def test_one_hot_default_num_classes_is_max_plus_one():
    out = F.one_hot(t(np.array([[1, 4], [0, 2]])))
    assert out.dtype == paddle.float32 and out.shape == [2, 2, 5]
    np.testing.assert_array_equal(out.numpy(), np.eye(5)[[[1, 4], [0, 2]]])
    assert F.one_hot(t(np.array([1])), num_classes=3).shape == [1, 3]


def test_bilinear_layer_parameters_values_and_gradients():
    layer = nn.Bilinear(3, 4, 5)
    assert {k: v.shape for k, v in layer.state_dict().items()} == {"weight": [5, 3, 4],
                                                                   "bias": [1, 5]}
    limit = np.sqrt(6.0 / (3 * 4 + 5 * 4))  # XavierUniform over Paddle's fans
    assert np.abs(layer.weight.numpy()).max() <= limit
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros((1, 5)))
    assert nn.Bilinear(3, 4, 5, bias_attr=False).bias is None
    x1, x2 = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 4))
    w, b = RNG.standard_normal((5, 3, 4)), RNG.standard_normal((1, 5))
    out = F.bilinear(t(x1), t(x2), t(w), t(b))
    np.testing.assert_allclose(out.numpy(), np.einsum("bi,oij,bj->bo", x1, w, x2) + b,
                               rtol=1e-10)
    check_grads(F.bilinear, x1, x2, w, b)
    with pytest.raises(ShapeError, match="2-D"):
        F.bilinear(t(x1[None]), t(x2), t(w))


def test_instance_norm1d():
    layer = nn.InstanceNorm1D(3)
    assert list(layer.state_dict()) == ["scale", "bias"]
    scale, bias = RNG.standard_normal(3), RNG.standard_normal(3)
    x = RNG.standard_normal((2, 3, 6))
    norm = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    layer.set_state_dict({"scale": scale.astype(np.float32), "bias": bias.astype(np.float32)})
    np.testing.assert_allclose(layer(t(x.astype(np.float32))).numpy(),
                               norm * scale[:, None] + bias[:, None], rtol=1e-4, atol=1e-5)
    check_grads(lambda x, s, b: F.instance_norm(x, weight=s, bias=b), x, scale, bias)
    flat = nn.InstanceNorm1D(3, weight_attr=False, bias_attr=False)
    assert list(flat.state_dict()) == []
    np.testing.assert_array_equal(flat(t(RNG.standard_normal((4, 3)))).numpy(), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="2-D or 3-D"):
        layer(t(RNG.standard_normal((1, 3, 2, 2))))
    with pytest.raises(ValueError, match="at the same time"):
        nn.InstanceNorm1D(3, weight_attr=False)


def test_upsampling_layers():
    x = RNG.standard_normal((1, 2, 2, 3))
    nearest = nn.UpsamplingNearest2D(scale_factor=2)(t(x)).numpy()
    np.testing.assert_array_equal(nearest, x.repeat(2, axis=2).repeat(2, axis=3))
    bilinear = nn.UpsamplingBilinear2D(size=[3, 5])(t(x)).numpy()
    # align_corners=True: the corners stay and midpoints are means of their neighbours.
    np.testing.assert_allclose(bilinear[..., ::2, ::2], x, rtol=1e-12)
    np.testing.assert_allclose(bilinear[..., 1, ::2], (x[..., 0, :] + x[..., 1, :]) / 2,
                               rtol=1e-12)
    check_grads(nn.UpsamplingBilinear2D(size=3), x)
    assert repr(nn.UpsamplingBilinear2D(size=4)) == \
        "UpsamplingBilinear2D(size=[4, 4], data_format=NCHW)"


def test_unflatten():
    x = RNG.standard_normal((2, 6, 3))
    np.testing.assert_array_equal(nn.Unflatten(1, [2, -1])(t(x)).numpy(), x.reshape(2, 2, 3, 3))
    np.testing.assert_array_equal(nn.Unflatten(-1, (3, 1))(t(x)).numpy(), x.reshape(2, 6, 3, 1))
    check_grads(nn.Unflatten(1, [3, 2]), x)
    with pytest.raises(ValueError, match="out of range"):
        nn.Unflatten(3, [1, 3])(t(x))


class _AttentionBlock(nn.Layer):
    """Bilinear gating over causal attention: exercises the new APIs in one program."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Bilinear(8, 8, 8)
        self.split = nn.Unflatten(-1, [2, 4])

    def forward(self, x):
        heads = self.split(x)
        attended = F.scaled_dot_product_attention(heads, heads, heads, is_causal=True)
        flat = paddle.reshape(attended, [-1, 8])
        return self.gate(flat, paddle.reshape(x, [-1, 8]))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_layer_matches_eager(backend):
    block = _AttentionBlock()
    x = t(RNG.standard_normal((2, 3, 8)).astype(np.float32))
    np.testing.assert_allclose(paddle.compile(block, backend=backend)(x).numpy(),
                               block(x).numpy(), rtol=1e-5, atol=1e-6)
