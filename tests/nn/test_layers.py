"""The built-in layers: parameter shapes and default initialization (Paddle's),
forward values against NumPy, BatchNorm's running statistics over several steps,
train/eval behaviour of Dropout and BatchNorm, and gradients reaching parameters."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

RNG = np.random.default_rng(2)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def test_linear_layout_initialization_and_forward():
    paddle.seed(0)
    m = nn.Linear(300, 200)
    w = m.weight.numpy()
    assert m.weight.shape == [300, 200] and m.bias.shape == [200]
    limit = math.sqrt(6 / 500)
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    assert abs(w.std() - limit / math.sqrt(3)) < 0.01 * limit
    np.testing.assert_array_equal(m.bias.numpy(), 0.0)
    x = RNG.standard_normal((4, 300)).astype(np.float32)
    np.testing.assert_allclose(m(t(x)).numpy(), x @ w, rtol=1e-5, atol=1e-5)


def test_linear_gradients_reach_weight_and_bias():
    m = nn.Linear(3, 2)
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    paddle.sum(m(t(x))).backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), np.tile(x.sum(0)[:, None], (1, 2)),
                               rtol=1e-5)
    np.testing.assert_allclose(m.bias.grad.numpy(), [5.0, 5.0])


def test_initialization_is_reproducible_under_seed():
    paddle.seed(42)
    a = nn.Sequential(nn.Linear(4, 4), nn.Conv2D(2, 3, 3), nn.Embedding(5, 2))
    paddle.seed(42)
    b = nn.Sequential(nn.Linear(4, 4), nn.Conv2D(2, 3, 3), nn.Embedding(5, 2))
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
    c = nn.Linear(4, 4)
    assert not np.array_equal(c.weight.numpy(), a[0].weight.numpy())


def test_conv2d_layer_shapes_initialization_and_forward():
    paddle.seed(1)
    m = nn.Conv2D(16, 32, 3, groups=2)
    assert m.weight.shape == [32, 8, 3, 3] and m.bias.shape == [32]
    assert abs(m.weight.numpy().std() - math.sqrt(2 / (16 * 9))) < 0.01
    x = RNG.standard_normal((2, 16, 5, 5)).astype(np.float32)
    expected = F.conv2d(t(x), m.weight, m.bias, groups=2).numpy()
    np.testing.assert_allclose(m(t(x)).numpy(), expected)
    assert m(t(x)).shape == [2, 32, 3, 3]
    assert nn.Conv2D(2, 4, 3, bias=False).bias is None
    assert nn.Conv2D(2, 4, 3, bias_attr=False).bias is None
    with pytest.raises(ValueError, match="divisible"):
        nn.Conv2D(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2D(3, 4, 3, padding_mode="mirror")


def test_conv_bn_relu_pool_stack_trains():
    paddle.seed(3)
    model = nn.Sequential(nn.Conv2D(3, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(),
                          nn.MaxPool2D(2), nn.AvgPool2D(2), nn.AdaptiveAvgPool2D(1),
                          nn.Flatten(), nn.Linear(4, 3))
    out = model(paddle.randn([2, 3, 8, 8]))
    assert out.shape == [2, 3]
    F.cross_entropy(out, t(np.array([0, 2]))).backward()
    for name, p in model.named_parameters():
        if not p.stop_gradient:
            assert p.grad is not None and p.grad.shape == p.shape, name


class RefBatchNorm:
    """NumPy BatchNorm with Paddle 3's running update (biased batch variance)."""

    def __init__(self, c, momentum, eps):
        self.mean, self.var = np.zeros(c), np.ones(c)
        self.momentum, self.eps = momentum, eps

    def train_step(self, x, axes):
        mean, var = x.mean(axes), x.var(axes)
        self.mean = self.momentum * self.mean + (1 - self.momentum) * mean
        self.var = self.momentum * self.var + (1 - self.momentum) * var
        shape = [1, -1] + [1] * (x.ndim - 2)
        return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + self.eps)

    def eval(self, x):
        shape = [1, -1] + [1] * (x.ndim - 2)
        return (x - self.mean.reshape(shape)) / np.sqrt(self.var.reshape(shape) + self.eps)


@pytest.mark.parametrize("layer, shape, axes", [
    (lambda: nn.BatchNorm2D(3, momentum=0.8, epsilon=1e-3), (4, 3, 2, 5), (0, 2, 3)),
    (lambda: nn.BatchNorm1D(3), (6, 3), (0,)),
    (lambda: nn.BatchNorm1D(3), (4, 3, 5), (0, 2)),
])
def test_batch_norm_running_statistics_over_several_steps(layer, shape, axes):
    bn = layer()
    ref = RefBatchNorm(3, bn._momentum, bn._epsilon)
    for step in range(4):
        x = RNG.standard_normal(shape).astype(np.float32) * (step + 1) + step
        np.testing.assert_allclose(bn(t(x)).numpy(), ref.train_step(x, axes), rtol=1e-4,
                                   atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), ref.mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), ref.var, rtol=1e-5)
    bn.eval()
    x = RNG.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(bn(t(x)).numpy(), ref.eval(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), ref.mean, rtol=1e-5, atol=1e-6)
    assert list(bn.state_dict()) == ["weight", "bias", "_mean", "_variance"]


def test_batch_norm_affine_parameters_and_rank_check():
    bn = nn.BatchNorm1D(2)
    bn.weight.set_value(np.array([2.0, 3.0], np.float32))
    bn.bias.set_value(np.array([1.0, -1.0], np.float32))
    x = RNG.standard_normal((5, 2)).astype(np.float32)
    normalized = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(bn(t(x)).numpy(), normalized * [2, 3] + [1, -1], rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match="rank 2 or 3"):
        bn(paddle.ones([2, 2, 2, 2]))
    with pytest.raises(ValueError, match="rank 4"):
        nn.BatchNorm2D(2)(paddle.ones([2, 2]))
    assert nn.BatchNorm2D(2, weight_attr=False, bias_attr=False).parameters()[0].name.endswith(
        "w_0")


def test_batch_norm_use_global_stats_in_training():
    bn = nn.BatchNorm1D(2, use_global_stats=True)
    x = RNG.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose(bn(t(x)).numpy(), x / np.sqrt(1 + 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(bn._mean.numpy(), 0.0)


def test_layer_norm_layer():
    ln = nn.LayerNorm(4)
    assert ln.weight.shape == [4] and np.all(ln.weight.numpy() == 1)
    assert np.all(ln.bias.numpy() == 0)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    expected = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(t(x)).numpy(), expected, rtol=1e-4, atol=1e-5)
    plain = nn.LayerNorm([2, 3], elementwise_affine=False)
    assert plain.weight is None and plain.bias is None and plain.parameters() == []
    assert nn.LayerNorm(3, bias=False).bias is None


def test_dropout_layer_follows_training_mode():
    paddle.seed(0)
    drop = nn.Dropout(p=0.5)
    x = paddle.ones([50, 20])
    out = drop(x).numpy()
    assert 0.4 < (out == 0).mean() < 0.6 and set(np.unique(out)) == {0.0, 2.0}
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), 1.0)
    drop = nn.Dropout(0.25, mode="downscale_in_infer").eval()
    np.testing.assert_allclose(drop(x).numpy(), 0.75)


def test_embedding_layer():
    paddle.seed(0)
    emb = nn.Embedding(10, 4, padding_idx=-1)
    w = emb.weight.numpy()
    assert emb.weight.shape == [10, 4] and np.all(w[9] == 0)
    assert np.abs(w).max() <= math.sqrt(6 / 14)
    ids = np.array([[1, 9], [3, 1]])
    np.testing.assert_allclose(emb(t(ids)).numpy(), w[ids])
    paddle.sum(emb(t(ids))).backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[[1, 3, 9, 0]].sum(1), [8, 4, 0, 0])
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


@pytest.mark.parametrize("layer, fn", [
    (nn.ReLU(), F.relu), (nn.Sigmoid(), F.sigmoid), (nn.Tanh(), F.tanh), (nn.SiLU(), F.silu),
    (nn.GELU(), F.gelu), (nn.GELU(approximate=True), lambda x: F.gelu(x, True)),
    (nn.LeakyReLU(0.3), lambda x: F.leaky_relu(x, 0.3)), (nn.Softmax(0), lambda x: F.softmax(x, 0)),
    (nn.LogSoftmax(), F.log_softmax), (nn.Identity(1, a=2), lambda x: x),
    (nn.Flatten(0), lambda x: x.reshape([-1])),
])
def test_stateless_layers_match_functional(layer, fn):
    x = t(RNG.standard_normal((2, 3, 2)).astype(np.float32))
    np.testing.assert_array_equal(layer(x).numpy(), fn(x).numpy())
    assert layer.parameters() == []


def test_flatten_default_keeps_batch_axis():
    assert nn.Flatten()(paddle.ones([2, 3, 4, 5])).shape == [2, 60]


def test_flatten_inner_range_keeps_trailing_dims():
    assert nn.Flatten(1, 2)(paddle.ones([2, 3, 4, 5])).shape == [2, 12, 5]


def test_pool_layers_forward_their_options():
    x = t(RNG.standard_normal((1, 2, 5, 5)).astype(np.float32))
    np.testing.assert_array_equal(nn.MaxPool2D(3, 2, 1, ceil_mode=True)(x).numpy(),
                                  F.max_pool2d(x, 3, 2, 1, ceil_mode=True).numpy())
    np.testing.assert_array_equal(nn.AvgPool2D(2, 1, exclusive=False)(x).numpy(),
                                  F.avg_pool2d(x, 2, 1, exclusive=False).numpy())
    np.testing.assert_array_equal(nn.AdaptiveAvgPool2D([2, 3])(x).numpy(),
                                  F.adaptive_avg_pool2d(x, [2, 3]).numpy())
