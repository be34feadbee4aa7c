"""Paddle nn APIs added for breadth: incremental decoding caches of the Transformer
layers, F.gumbel_softmax, F.channel_shuffle / nn.ChannelShuffle, Embedding's
max_norm / scale_grad_by_freq / _weight / _freeze / dtype, and nn.SpectralNorm.
Values against NumPy references of the documented rules, gradients against finite
differences or the documented gradient rule."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from tests.nn.gradcheck import check_grads
from tests.nn.test_transformer import np_attention

RNG = np.random.default_rng(2024)
B, T, S, D, H, FF = 2, 5, 4, 8, 2, 16


def tensor(a, **kwargs):
    return paddle.to_tensor(np.asarray(a), **kwargs)


def causal_mask(n):
    """Paddle's float causal mask: 0 on and below the diagonal, -inf above."""
    return tensor(np.triu(np.full((n, n), -np.inf, np.float32), 1))


# ---------------------------------------------------------------- attention caches

def test_attention_cache_appends_keys_and_matches_numpy_attention():
    mha = nn.MultiHeadAttention(D, H)
    x = RNG.standard_normal((B, T, D)).astype(np.float32)
    cache = mha.gen_cache(tensor(x))
    assert type(cache) is nn.MultiHeadAttention.Cache
    assert cache.k.shape == [B, H, 0, D // H] and cache.v.shape == [B, H, 0, D // H]
    for t in range(T):
        out, cache = mha(tensor(x[:, t:t + 1]), cache=cache)
        assert cache.k.shape == [B, H, t + 1, D // H]
        # step t attends to the keys of steps 0..t: attention of the prefix, last row
        ref = np_attention(mha, x[:, t:t + 1], x[:, :t + 1], x[:, :t + 1])[0]
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_attention_output_structure_with_caches():
    mha = nn.MultiHeadAttention(D, H, need_weights=True)
    q = tensor(RNG.standard_normal((B, T, D)).astype(np.float32))
    memory = tensor(RNG.standard_normal((B, S, D)).astype(np.float32))
    out, weights, cache = mha(q, cache=mha.gen_cache(q))
    assert out.shape == [B, T, D] and weights.shape == [B, H, T, T]
    assert type(cache) is nn.MultiHeadAttention.Cache and cache.k.shape == [B, H, T, D // H]
    static = mha.gen_cache(memory, memory, type=nn.MultiHeadAttention.StaticCache)
    assert type(static) is nn.MultiHeadAttention.StaticCache
    out, weights, returned = mha(q, memory, memory, cache=static)
    assert returned is static and weights.shape == [B, H, T, S]
    # a StaticCache replaces key and value: the arguments are not read
    mha.need_weights = False
    again, _ = mha(q, q, q, cache=static)
    np.testing.assert_array_equal(again.numpy(), out.numpy())
    given = mha.gen_cache(static.k, static.v)
    assert type(given) is nn.MultiHeadAttention.Cache and given.k is static.k


def decoder_model(normalize_before):
    paddle.seed(5)
    layer = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0,
                                       normalize_before=normalize_before)
    decoder = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(D))
    decoder.eval()
    return decoder


@pytest.mark.parametrize("normalize_before", [False, True])
def test_cached_decoding_equals_full_decoding_with_causal_mask(normalize_before):
    decoder = decoder_model(normalize_before)
    tgt = tensor(RNG.standard_normal((B, T, D)).astype(np.float32))
    memory = tensor(RNG.standard_normal((B, S, D)).astype(np.float32))
    full = decoder(tgt, memory, tgt_mask=causal_mask(T)).numpy()
    cache = decoder.gen_cache(memory)
    assert len(cache) == 2 and all(len(c) == 2 for c in cache)
    assert cache[0][1].k.shape == [B, H, S, D // H]  # the memory's keys, computed once
    steps = []
    for t in range(T):
        out, cache = decoder(tgt[:, t:t + 1], memory, cache=cache)
        steps.append(out.numpy())
    assert cache[1][0].k.shape == [B, H, T, D // H]
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-5, atol=1e-5)


def test_greedy_decode_with_caches_equals_full_sequence_decode():
    """A greedy decoder feeding back its argmax token step by step (with caches)
    gives, at every step, the logits of one full causal pass over its output."""
    decoder = decoder_model(False)
    vocab = 7
    paddle.seed(6)
    embed, project = nn.Embedding(vocab, D), nn.Linear(D, vocab)
    memory = tensor(RNG.standard_normal((B, S, D)).astype(np.float32))
    tokens = np.zeros((B, 1), np.int64)
    cache, step_logits = decoder.gen_cache(memory), []
    for _ in range(T):
        out, cache = decoder(embed(tensor(tokens[:, -1:])), memory, cache=cache)
        logits = project(out).numpy()[:, 0]
        step_logits.append(logits)
        tokens = np.concatenate([tokens, logits.argmax(-1)[:, None]], 1)
    inputs = embed(tensor(tokens[:, :-1]))
    full_logits = project(decoder(inputs, memory, tgt_mask=causal_mask(T))).numpy()
    np.testing.assert_allclose(np.stack(step_logits, 1), full_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(full_logits.argmax(-1), tokens[:, 1:])


def test_decoder_gen_cache_do_zip_groups_by_kind():
    decoder = decoder_model(False)
    memory = tensor(RNG.standard_normal((B, S, D)).astype(np.float32))
    incremental, static = decoder.gen_cache(memory, do_zip=True)
    assert [type(c).__name__ for c in incremental] == ["Cache", "Cache"]
    assert [type(c).__name__ for c in static] == ["StaticCache", "StaticCache"]


def test_encoder_cache_equals_causal_encoding():
    paddle.seed(8)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, FF, dropout=0.0), 2)
    src = tensor(RNG.standard_normal((B, T, D)).astype(np.float32))
    full = encoder(src, src_mask=causal_mask(T)).numpy()
    cache, steps = encoder.gen_cache(src), []
    for t in range(T):
        out, cache = encoder(src[:, t:t + 1], cache=cache)
        steps.append(out.numpy())
    assert [type(c).__name__ for c in cache] == ["Cache", "Cache"]
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- gumbel_softmax

def test_gumbel_softmax_soft_sample_is_a_distribution_with_the_softmax_gradient():
    x = RNG.standard_normal((4, 6))
    logits = tensor(x, stop_gradient=False)
    y = F.gumbel_softmax(logits, temperature=0.5)
    assert y.dtype == paddle.float64 and y.shape == [4, 6]
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    assert (y.numpy() > 0).all()
    cotangent = RNG.standard_normal((4, 6))
    paddle.sum(y * tensor(cotangent)).backward()
    # y = softmax((x + g) / t) with g constant: dy/dx = J_softmax(y) / t
    yv = y.numpy()
    expected = yv * (cotangent - (cotangent * yv).sum(-1, keepdims=True)) / 0.5
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_gumbel_softmax_hard_is_one_hot_with_straight_through_gradient():
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    cotangent = tensor(RNG.standard_normal((5, 4)).astype(np.float32))
    results = {}
    for hard in (False, True):
        paddle.seed(11)  # the same noise for both samples
        logits = tensor(x, stop_gradient=False)
        y = F.gumbel_softmax(logits, temperature=2.0, hard=hard)
        paddle.sum(y * cotangent).backward()
        results[hard] = (y.numpy(), logits.grad.numpy())
    (soft, soft_grad), (one_hot, hard_grad) = results[False], results[True]
    np.testing.assert_array_equal(one_hot, np.eye(4, dtype=np.float32)[soft.argmax(-1)])
    np.testing.assert_allclose(hard_grad, soft_grad, rtol=1e-6, atol=1e-7)
    assert np.abs(hard_grad).max() > 0


def test_gumbel_softmax_axis_and_argmax_frequencies_follow_softmax():
    """Gumbel-max: the argmax of x + g is distributed as softmax(x)."""
    x = np.log(np.array([0.6, 0.3, 0.1]))
    paddle.seed(3)
    samples = F.gumbel_softmax(tensor(np.tile(x[:, None], (1, 20000))), hard=True, axis=0)
    np.testing.assert_array_equal(samples.numpy().sum(0), 1.0)
    np.testing.assert_allclose(samples.numpy().mean(1), [0.6, 0.3, 0.1], atol=0.015)


def test_gumbel_softmax_rejects_a_non_positive_temperature():
    with pytest.raises(ValueError, match="temperature"):
        F.gumbel_softmax(tensor(np.zeros((2, 3), np.float32)), temperature=0.0)


# ---------------------------------------------------------------- channel_shuffle

def np_channel_shuffle(x, groups):
    n, c, h, w = x.shape
    return x.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(x.shape)


def test_channel_shuffle_interleaves_groups():
    x = RNG.standard_normal((2, 6, 3, 2)).astype(np.float32)
    out = F.channel_shuffle(tensor(x), 3)
    np.testing.assert_array_equal(out.numpy(), np_channel_shuffle(x, 3))
    # output channel j is input channel (j % groups) * (C / groups) + j // groups
    np.testing.assert_array_equal(out.numpy()[:, 1], x[:, 2])
    nhwc = F.channel_shuffle(tensor(x.transpose(0, 2, 3, 1)), 2, "NHWC")
    np.testing.assert_array_equal(nhwc.numpy(),
                                  np_channel_shuffle(x, 2).transpose(0, 2, 3, 1))
    layer = nn.ChannelShuffle(3)
    np.testing.assert_array_equal(layer(tensor(x)).numpy(), out.numpy())
    assert repr(layer) == "ChannelShuffle(groups=3)"


def test_channel_shuffle_gradient():
    check_grads(lambda x: F.channel_shuffle(x, 2), RNG.standard_normal((1, 4, 2, 2)))


@pytest.mark.parametrize("args, error", [((4,), ValueError), ((0,), ValueError),
                                         ((2.0,), TypeError), ((2, "NCWH"), ValueError)])
def test_channel_shuffle_rejects_bad_arguments(args, error):
    with pytest.raises(error):
        F.channel_shuffle(tensor(np.zeros((1, 6, 2, 2), np.float32)), *args)


# ---------------------------------------------------------------- embedding

WEIGHT = (np.arange(15, dtype=np.float32).reshape(5, 3) / 3 - 2)
IDS = np.array([[1, 3, 1], [4, 0, 1]])


def np_renorm(weight, ids, max_norm, p):
    """Paddle's embedding_renorm_: rows looked up whose p-norm exceeds max_norm are
    scaled by max_norm / (norm + 1e-7)."""
    out = weight.astype(np.float64).copy()
    for i in np.unique(ids):
        norm = np.linalg.norm(out[i], p)
        if norm > max_norm:
            out[i] *= max_norm / (norm + 1e-7)
    return out


def lookup_gradient(ids, cotangent, rows):
    grad = np.zeros((rows, cotangent.shape[-1]))
    np.add.at(grad, ids.ravel(), cotangent.reshape(-1, cotangent.shape[-1]))
    return grad


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_embedding_max_norm_renormalizes_rows_in_the_weight(norm_type):
    weight = tensor(WEIGHT, stop_gradient=False)
    out = F.embedding(tensor(IDS), weight, max_norm=1.5, norm_type=norm_type)
    renormed = np_renorm(WEIGHT, IDS, 1.5, norm_type)
    np.testing.assert_allclose(out.numpy(), renormed[IDS], rtol=1e-6)
    np.testing.assert_allclose(weight.numpy(), renormed, rtol=1e-6)  # written in place
    np.testing.assert_array_equal(weight.numpy()[2], WEIGHT[2])  # not looked up: kept
    cotangent = RNG.standard_normal(out.shape)
    paddle.sum(out * tensor(cotangent)).backward()
    # the renormalization is not differentiated: a plain lookup's gradient
    np.testing.assert_allclose(weight.grad.numpy(), lookup_gradient(IDS, cotangent, 5),
                               rtol=1e-6)


def test_embedding_layer_max_norm_updates_its_parameter_eagerly_and_compiled():
    for compiled in (False, True):
        layer = nn.Embedding(5, 3, max_norm=1.0)
        layer.weight.set_value(WEIGHT)
        forward = paddle.jit.to_static(layer.forward) if compiled else layer
        out = forward(tensor(IDS))
        renormed = np_renorm(WEIGHT, IDS, 1.0, 2.0)
        np.testing.assert_allclose(out.numpy(), renormed[IDS], rtol=1e-6)
        np.testing.assert_allclose(layer.weight.numpy(), renormed, rtol=1e-6)


def test_embedding_scale_grad_by_freq_divides_by_the_id_count():
    weight = tensor(WEIGHT, stop_gradient=False)
    out = F.embedding(tensor(IDS), weight, scale_grad_by_freq=True)
    np.testing.assert_array_equal(out.numpy(), WEIGHT[IDS])
    cotangent = RNG.standard_normal(out.shape)
    paddle.sum(out * tensor(cotangent)).backward()
    counts = np.bincount(IDS.ravel(), minlength=5)[:, None]
    expected = lookup_gradient(IDS, cotangent, 5) / np.maximum(counts, 1)
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="sparse"):
        F.embedding(tensor(IDS), weight, sparse=True, scale_grad_by_freq=True)


def test_embedding_padding_rows_are_positive_zero():
    """A padding id reads +0.0 whatever the table holds there (Paddle's kernel writes
    zeros; multiplying a negative or NaN row by 0 would give -0.0 or NaN)."""
    weight = WEIGHT.copy()
    weight[1] = [-1.0, np.nan, -3.0]
    out = F.embedding(tensor(IDS), tensor(weight), padding_idx=1).numpy()
    assert (out[IDS == 1] == 0).all() and not np.signbit(out[IDS == 1]).any()


def test_embedding_layer_weight_freeze_and_dtype():
    given = tensor(WEIGHT)
    layer = nn.Embedding(5, 3, _weight=given, _freeze=True)
    assert layer.weight is given and layer.weight.stop_gradient
    np.testing.assert_array_equal(layer(tensor(IDS)).numpy(), WEIGHT[IDS])
    assert nn.Embedding(5, 3, dtype="float64").weight.dtype == paddle.float64
    assert nn.Embedding(5, 3, _freeze=True).weight.stop_gradient


# ---------------------------------------------------------------- SpectralNorm

def np_spectral(weight, u, v, dim, iters, eps=1e-12):
    """(weight / sigma, the final u, v, sigma) by the documented power iteration."""
    perm = [dim] + [i for i in range(weight.ndim) if i != dim]
    matrix = weight.transpose(perm).reshape(weight.shape[dim], -1)
    for _ in range(iters):
        v = matrix.T @ u
        v = v / (np.linalg.norm(v) + eps)
        u = matrix @ v
        u = u / (np.linalg.norm(u) + eps)
    sigma = u @ matrix @ v
    return weight / sigma, u, v, sigma


@pytest.mark.parametrize("shape, dim, iters", [((5, 3), 0, 1), ((2, 3, 4), 1, 2),
                                               ((3, 4), 1, 0)])
def test_spectral_norm_value_and_gradient(shape, dim, iters):
    layer = nn.SpectralNorm(shape, dim=dim, power_iters=iters, dtype="float64")
    u0, v0 = layer.weight_u.numpy().copy(), layer.weight_v.numpy().copy()
    assert sorted(layer.state_dict()) == ["weight_u", "weight_v"]
    assert layer.weight_u.stop_gradient and layer.weight_v.stop_gradient
    weight = RNG.standard_normal(shape)
    x = tensor(weight, stop_gradient=False)
    out = layer(x)
    expected, u, v, sigma = np_spectral(weight, u0, v0, dim, iters)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_array_equal(layer.weight_u.numpy(), u0)  # not written back
    # with u and v held constant, d sigma / dW = u v^T (on the [rows, rest] matrix)
    cotangent = RNG.standard_normal(shape)
    paddle.sum(out * tensor(cotangent)).backward()
    perm = [dim] + [i for i in range(len(shape)) if i != dim]
    c = cotangent.transpose(perm).reshape(shape[dim], -1)
    w = weight.transpose(perm).reshape(shape[dim], -1)
    grad = c / sigma - (c * w).sum() / sigma ** 2 * np.outer(u, v)
    grad = grad.reshape([shape[p] for p in perm]).transpose(np.argsort(perm))
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-8, atol=1e-10)


def test_spectral_norm_gradient_without_iterations_matches_finite_differences():
    """With power_iters=0, u and v do not depend on the weight: sigma = u^T W v."""
    layer = nn.SpectralNorm([3, 4], power_iters=0, dtype="float64")
    check_grads(layer, RNG.standard_normal((3, 4)))


def test_spectral_norm_normalizes_the_largest_singular_value():
    layer = nn.SpectralNorm([6, 4], power_iters=50, dtype="float64")
    out = layer(tensor(RNG.standard_normal((6, 4)))).numpy()
    np.testing.assert_allclose(np.linalg.svd(out, compute_uv=False)[0], 1.0, rtol=1e-8)


def test_spectral_norm_rejects_bad_dims():
    with pytest.raises(ValueError, match="dim"):
        nn.SpectralNorm([2, 3, 4], dim=2)
    with pytest.raises(ValueError, match="positive"):
        nn.SpectralNorm([0, 3])
