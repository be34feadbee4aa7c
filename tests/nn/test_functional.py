"""irflow.nn.functional (activations, linear, dropout, embedding, pad, one_hot,
normalize, conv/pool argument handling, batch/layer norm): forward values against
independent NumPy references and gradients against finite differences."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.nn.functional.common import _pad_pairs
from irflow.nn.functional.conv import resolve_padding
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 5)) * 3


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_erf(x):
    return np.vectorize(math.erf)(x)


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("name, fn, ref", [
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", F.tanh, np.tanh),
    ("silu", F.silu, lambda x: x / (1 + np.exp(-x))),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("gelu", F.gelu, lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate=True),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("softmax", F.softmax, lambda x: np_softmax(x, -1)),
    ("softmax_axis0", lambda x: F.softmax(x, axis=0), lambda x: np_softmax(x, 0)),
    ("log_softmax", F.log_softmax, lambda x: np.log(np_softmax(x, -1))),
])
def test_activation_values_and_gradients(name, fn, ref):
    np.testing.assert_allclose(fn(t(X)).numpy(), ref(X), rtol=1e-10, atol=1e-12)
    check_grads(fn, X)


def test_gelu_tanh_string_and_bad_value():
    np.testing.assert_allclose(F.gelu(t(X), approximate="tanh").numpy(),
                               F.gelu(t(X), approximate=True).numpy())
    np.testing.assert_allclose(F.gelu(t(X), approximate="none").numpy(), F.gelu(t(X)).numpy())
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(t(X), approximate="erf")


def test_softmax_is_stable_for_huge_logits():
    x = np.array([[1000.0, 1001.0, -1000.0]], np.float32)
    np.testing.assert_allclose(F.softmax(t(x)).numpy(), np_softmax(x.astype(np.float64), -1),
                               rtol=1e-6)
    assert np.isfinite(F.log_softmax(t(x)).numpy()).all()


def test_softmax_dtype_argument_casts_first():
    assert F.softmax(t(X.astype(np.float32)), dtype="float64").dtype == paddle.float64


@pytest.mark.parametrize("fn, points, grads", [
    (lambda x: F.leaky_relu(x, 0.3), [0.0, -1.0, 2.0], [1.0, 0.3, 1.0]),
    (F.elu, [0.0], [1.0]),
    (F.selu, [0.0], [1.0507009873554805 * 1.6732632423543772]),
    (F.hardswish, [3.0, -3.0, 0.0], [1.0, 0.0, 0.5]),
    (F.hardsigmoid, [3.0000003, -3.0000003, 0.0], [0.0, 0.0, 0.1666667]),
    (lambda x: paddle.clip(x, 0.0, 1.0), [0.0, 1.0, 2.0, -1.0], [1.0, 1.0, 0.0, 0.0]),
    (lambda x: F.softplus(x, 1.0, 2.0), [2.0], [1 / (1 + np.exp(-2.0))]),
], ids=["leaky_relu", "elu", "selu", "hardswish", "hardsigmoid", "clip", "softplus"])
def test_gradients_at_the_kinks_are_paddles(fn, points, grads):
    """At a kink or a bound the gradient is the one Paddle's kernel gives (checked
    against Paddle 3.3.1): leaky_relu's 1 at 0, elu's and selu's negative side at 0,
    hardswish 1 at 3 and 0 at -3, hardsigmoid and clip's closed range (clip 1 at its
    bounds; maximum and minimum split a tie in two), softplus's smooth side at its
    threshold."""
    x = t(np.array(points), stop_gradient=False)
    paddle.sum(fn(x)).backward()
    np.testing.assert_allclose(x.grad.numpy(), grads, rtol=1e-6)


def test_margin_ranking_loss_at_a_tie_has_no_gradient():
    x = t(np.array([1.0]), stop_gradient=False)
    F.margin_ranking_loss(x, t(np.array([1.0])), t(np.array([1.0]))).backward()
    assert x.grad.numpy().tolist() == [0.0]


# ---------------------------------------------------------------- linear, embedding

def test_linear_matches_numpy_and_differentiates():
    w, b = RNG.standard_normal((5, 4)), RNG.standard_normal(4)
    np.testing.assert_allclose(F.linear(t(X), t(w), t(b)).numpy(), X @ w + b, rtol=1e-12)
    np.testing.assert_allclose(F.linear(t(X), t(w)).numpy(), X @ w, rtol=1e-12)
    check_grads(F.linear, X, w, b)


def test_embedding_gathers_rows_and_masks_padding_idx():
    table = RNG.standard_normal((4, 3))
    ids = np.array([[0, 2], [3, 2]])
    out = F.embedding(t(ids), t(table), padding_idx=2).numpy()
    expected = table[ids] * (ids != 2)[..., None]
    np.testing.assert_allclose(out, expected)
    np.testing.assert_allclose(F.embedding(t(ids), t(table), padding_idx=-2).numpy(), expected)
    check_grads(lambda w: F.embedding(t(ids), w, padding_idx=2), table)
    w = t(table, stop_gradient=False)
    paddle.sum(F.embedding(t(ids), w, padding_idx=2)).backward()
    np.testing.assert_allclose(w.grad.numpy()[2], 0.0)
    np.testing.assert_allclose(w.grad.numpy()[3], 1.0)


# ---------------------------------------------------------------- dropout

def test_dropout_train_drops_and_rescales():
    paddle.seed(5)
    x = np.ones((200, 50), np.float32)
    out = F.dropout(t(x), p=0.3).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)


def test_dropout_downscale_mode_and_eval():
    x = RNG.standard_normal((20, 10))
    out = F.dropout(t(x), p=0.4, mode="downscale_in_infer").numpy()
    assert set(np.unique(out == 0)) == {True, False}
    np.testing.assert_allclose(out[out != 0], x[out != 0])
    np.testing.assert_allclose(F.dropout(t(x), 0.4, training=False,
                                         mode="downscale_in_infer").numpy(), x * 0.6)
    np.testing.assert_allclose(F.dropout(t(x), 0.4, training=False).numpy(), x)


def test_dropout_extreme_probabilities_and_errors():
    x = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(F.dropout(t(x), p=0.0).numpy(), x)
    np.testing.assert_allclose(F.dropout(t(x), p=1.0).numpy(), 0.0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(t(x), p=1.5)
    with pytest.raises(ValueError, match="mode"):
        F.dropout(t(x), mode="sometimes")


def test_dropout_axis_shares_the_mask_along_other_axes():
    paddle.seed(1)
    out = F.dropout(t(np.ones((6, 40))), p=0.5, axis=1).numpy()
    assert (out == out[0]).all() and 0 < (out[0] == 0).sum() < 40


def test_dropout_gradient_uses_the_same_mask():
    paddle.seed(3)
    x = t(np.ones((10, 10)), stop_gradient=False)
    out = F.dropout(x, p=0.5)
    paddle.sum(out).backward()
    np.testing.assert_allclose(x.grad.numpy(), out.numpy())


def test_dropout_is_reproducible_under_seed():
    paddle.seed(11)
    a = F.dropout(t(np.ones((5, 5))), 0.5).numpy()
    paddle.seed(11)
    np.testing.assert_array_equal(F.dropout(t(np.ones((5, 5))), 0.5).numpy(), a)


# ---------------------------------------------------------------- pad, one_hot, normalize

@pytest.mark.parametrize("ndim, pad, fmt, from_left, expected", [
    (4, [1, 0, 2, 1], None, True, ((0, 0), (0, 0), (2, 1), (1, 0))),
    (4, [1, 0, 2, 1], "NHWC", True, ((0, 0), (2, 1), (1, 0), (0, 0))),
    (3, [2, 3], None, True, ((0, 0), (0, 0), (2, 3))),
    (2, [1, 0, 2, 1], None, True, ((1, 0), (2, 1))),
    (2, [1, 0, 2, 1], None, False, ((2, 1), (1, 0))),
    (2, [1, 2], None, True, ((0, 0), (1, 2))),
    (4, [1] * 8, None, True, ((1, 1),) * 4),
])
def test_pad_reads_paddles_layouts(ndim, pad, fmt, from_left, expected):
    assert _pad_pairs(ndim, pad, fmt, from_left) == expected


def test_pad_values_and_gradient():
    x = RNG.standard_normal((1, 2, 3, 2))
    out = F.pad(t(x), [1, 0, 2, 1], value=7.0).numpy()
    np.testing.assert_allclose(out, np.pad(x, [(0, 0), (0, 0), (2, 1), (1, 0)],
                                           constant_values=7.0))
    check_grads(lambda v: F.pad(v, [1, 0, 2, 1]), x)
    with pytest.raises(ValueError, match="mode should be one of"):
        F.pad(t(x), [1, 1], mode="symmetric")
    with pytest.raises(ValueError, match="even"):
        F.pad(t(x), [1, 1, 1])


def test_one_hot():
    out = F.one_hot(t(np.array([[0], [2]])), 3)
    assert out.dtype == paddle.float32 and out.shape == [2, 1, 3]
    np.testing.assert_array_equal(out.numpy()[:, 0], [[1, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("p, axis", [(2, 1), (1, 0), (3, 1)])
def test_normalize(p, axis):
    norm = np.sum(np.abs(X) ** p, axis, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(F.normalize(t(X), p=p, axis=axis).numpy(),
                               X / np.maximum(norm, 1e-12), rtol=1e-10)
    check_grads(lambda v: F.normalize(v, p=p, axis=axis), X)


def test_normalize_into_out():
    out = paddle.zeros(list(X.shape), X.dtype)
    assert F.normalize(t(X), out=out) is out
    np.testing.assert_allclose(out.numpy(), F.normalize(t(X)).numpy())


@pytest.mark.parametrize("p, axis, norm", [
    (np.inf, 1, lambda a, axis: np.abs(a).max(axis, keepdims=True)),
    (-np.inf, 0, lambda a, axis: np.abs(a).min(axis, keepdims=True)),
    (0, 1, lambda a, axis: (a != 0).sum(axis, keepdims=True))])
def test_normalize_by_infinite_and_zero_norms(p, axis, norm):
    """p=inf divides by max |x| (x came back unchanged: the sum of |x|**inf, rooted,
    is 1), -inf by min |x|, 0 by the count of nonzeros (a ZeroDivisionError)."""
    np.testing.assert_allclose(F.normalize(t(X), p=p, axis=axis).numpy(),
                               X / np.maximum(norm(X, axis), 1e-12), rtol=1e-10)
    if p:
        check_grads(lambda v: F.normalize(v, p=p, axis=axis), X)
    x = np.array([[1.0, -4.0, 2.0], [0.5, 0.25, -1.0]], np.float32)  # Paddle 3.3.1's values
    assert F.normalize(t(x), p=float("inf")).numpy().tolist() == \
        [[0.25, -1.0, 0.5], [0.5, 0.25, -1.0]]


def test_normalize_of_zero_rows_has_finite_gradient():
    x = t(np.zeros((2, 3)), stop_gradient=False)
    out = F.normalize(x)
    paddle.sum(out).backward()
    assert np.all(out.numpy() == 0) and np.all(np.isfinite(x.grad.numpy()))


# ---------------------------------------------------------------- conv and pooling arguments

@pytest.mark.parametrize("padding, expected", [
    (1, (1, 1, 1, 1)), ([1, 2], (1, 1, 2, 2)), ([1, 2, 3, 4], (1, 2, 3, 4)),
    ([[0, 0], [0, 0], [1, 2], [3, 4]], (1, 2, 3, 4)), ("VALID", (0, 0, 0, 0)),
    ("same", (1, 1, 0, 1)),
])
def test_resolve_padding(padding, expected):
    assert resolve_padding(padding, (5, 6), (3, 2), (1, 1)) == expected


def test_same_padding_keeps_ceil_of_size_over_stride():
    x = RNG.standard_normal((1, 2, 7, 6))
    w = RNG.standard_normal((3, 2, 3, 3))
    assert F.conv2d(t(x), t(w), stride=2, padding="SAME").shape == [1, 3, 4, 3]
    assert F.max_pool2d(t(x), 3, 2, padding="SAME").shape == [1, 2, 4, 3]


def test_same_padding_ignores_the_dilation_as_paddle_does():
    """Paddle 3.3's conv kernels set the dilation to 1 under padding "SAME" (its
    UpdatePaddingAndDilation), so a dilated "same" conv is the undilated one: padding 1
    for a 3-tap kernel, not 2. "VALID" and numeric padding keep the dilation."""
    x = RNG.standard_normal((1, 2, 6, 6))
    w = RNG.standard_normal((3, 2, 3, 3))
    same = F.conv2d(t(x), t(w), padding="SAME", dilation=2).numpy()
    np.testing.assert_allclose(same, ref_conv2d_nchw(x, w, 1), rtol=1e-12)
    np.testing.assert_allclose(F.conv2d(t(x), t(w), padding="same", dilation=(1, 3)).numpy(),
                               ref_conv2d_nchw(x, w, 1), rtol=1e-12)
    dilated = np.zeros((3, 2, 5, 5))
    dilated[:, :, ::2, ::2] = w
    np.testing.assert_allclose(F.conv2d(t(x), t(w), padding="VALID", dilation=2).numpy(),
                               ref_conv2d_nchw(x, dilated, 0), rtol=1e-12)
    w1 = RNG.standard_normal((3, 2, 3))
    out = F.conv1d(t(x[:, :, 0]), t(w1), padding="same", dilation=2).numpy()
    np.testing.assert_allclose(out, ref_conv2d_nchw(x[:, :, :1], w1[:, :, None], 1)[:, :, 1],
                               rtol=1e-12)


def ref_conv2d_nchw(x, w, pad):
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    out = np.zeros((n, co, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + kh, j:j + kw], w)
    return out


def test_conv2d_bias_and_nhwc_layout():
    x = RNG.standard_normal((2, 3, 5, 4))
    w, b = RNG.standard_normal((4, 3, 3, 3)), RNG.standard_normal(4)
    expected = ref_conv2d_nchw(x, w, 1) + b[None, :, None, None]
    np.testing.assert_allclose(F.conv2d(t(x), t(w), t(b), padding=1).numpy(), expected,
                               rtol=1e-10)
    nhwc = F.conv2d(t(x.transpose(0, 2, 3, 1)), t(w), t(b), padding=1, data_format="NHWC")
    np.testing.assert_allclose(nhwc.numpy(), expected.transpose(0, 2, 3, 1), rtol=1e-10)
    check_grads(lambda a, f, c: F.conv2d(a, f, c, padding=1), x[:1, :, :3, :3], w[:2], b[:2])


def test_pooling_wrappers():
    x = RNG.standard_normal((1, 2, 4, 6))
    windows = x.reshape(1, 2, 2, 2, 3, 2)
    np.testing.assert_allclose(F.max_pool2d(t(x), [2, 2]).numpy(),
                               x.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(t(x), 2).numpy(), windows.mean(axis=(3, 5)))
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t(x), 1).numpy(),
                               x.mean(axis=(2, 3), keepdims=True))
    assert F.adaptive_avg_pool2d(t(x), [None, 3]).shape == [1, 2, 4, 3]
    nhwc = F.max_pool2d(t(x.transpose(0, 2, 3, 1)), 2, data_format="NHWC")
    np.testing.assert_allclose(nhwc.numpy(), windows.max(axis=(3, 5)).transpose(0, 2, 3, 1))
    with pytest.raises(ValueError, match="data_format"):
        F.avg_pool2d(t(x), 2, data_format="NCWH")


# ---------------------------------------------------------------- normalization

def test_layer_norm_matches_numpy():
    x = RNG.standard_normal((2, 3, 4))
    w, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(F.layer_norm(t(x), [3, 4], t(w), t(b)).numpy(), expected,
                               rtol=1e-10)
    check_grads(lambda a, c, d: F.layer_norm(a, [3, 4], c, d), x, w, b)
    check_grads(lambda a: F.layer_norm(a, 4), x)


def test_batch_norm_training_uses_batch_statistics_and_updates_running_ones():
    x = RNG.standard_normal((6, 3, 2, 2)) * 2 + 1
    mean, var = t(np.zeros(3)), t(np.ones(3))
    out = F.batch_norm(t(x), mean, var, training=True, momentum=0.8, epsilon=1e-3)
    batch_mean, batch_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    expected = (x - batch_mean[:, None, None]) / np.sqrt(batch_var[:, None, None] + 1e-3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(mean.numpy(), 0.2 * batch_mean, rtol=1e-10)
    np.testing.assert_allclose(var.numpy(), 0.8 + 0.2 * batch_var, rtol=1e-10)
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    check_grads(lambda a, c, d: F.batch_norm(a, t(np.zeros(3)), t(np.ones(3)), c, d,
                                             training=True), x[:3, :, :1], w, b)


def test_batch_norm_eval_and_global_stats_use_running_statistics():
    x = RNG.standard_normal((4, 3))
    mean, var = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    expected = (x - mean) / np.sqrt(var + 1e-5)
    for kwargs in ({}, {"training": True, "use_global_stats": True}):
        running = t(mean)
        out = F.batch_norm(t(x), running, t(var), **kwargs)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
        np.testing.assert_array_equal(running.numpy(), mean)


def test_batch_norm_channels_last():
    x = RNG.standard_normal((5, 2, 3))
    out = F.batch_norm(t(x), t(np.zeros(3)), t(np.ones(3)), training=True, data_format="NLC")
    m, v = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    np.testing.assert_allclose(out.numpy(), (x - m) / np.sqrt(v + 1e-5), rtol=1e-10)


def test_batch_norm_running_update_is_not_recorded():
    x = t(RNG.standard_normal((4, 3)), stop_gradient=False)
    mean = t(np.zeros(3))
    F.batch_norm(x, mean, t(np.ones(3)), training=True)
    assert mean.stop_gradient and mean.is_leaf


def test_layer_norm_takes_paddles_flat_weight_and_bias():
    """Paddle's nn.LayerNorm([3, 4]) holds a weight of 12: F.layer_norm reads a 1-D
    weight and bias as the normalized dims (it failed to broadcast [12])."""
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    w, b = np.arange(12.0) / 12, np.arange(12.0) - 6
    flat = F.layer_norm(t(x), [3, 4], t(w), t(b)).numpy()
    shaped = F.layer_norm(t(x), [3, 4], t(w.reshape(3, 4)), t(b.reshape(3, 4))).numpy()
    np.testing.assert_allclose(flat, shaped, rtol=1e-12)


def test_pooling_valid_padding_refuses_ceil_mode():
    for pool in (F.max_pool2d, F.avg_pool2d):
        with pytest.raises(ValueError, match="'VALID' takes ceil_mode=False"):
            pool(paddle.ones([1, 1, 7, 6]), 3, 2, "valid", ceil_mode=True)
    assert F.max_pool2d(paddle.ones([1, 1, 7, 6]), 3, 2, "SAME", ceil_mode=True).shape == \
        [1, 1, 4, 3]
