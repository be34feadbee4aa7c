"""The fluid-style `nn.BatchNorm`: Paddle's numbers, its activation, `is_test`,
`use_global_stats`, `trainable_statistics`, ranks 2 to 5 and both layouts, the
parameters a Paddle checkpoint holds, gradients and compilation."""
import numpy as np
import pytest

import irflow as paddle
from irflow import nn

from .gradcheck import check_grads

RNG = np.random.default_rng(0)
BACKENDS = ["numpy", "llvm"]


def t(a):
    return paddle.to_tensor(a)


def normalized(x, axes, mean=None, var=None, eps=1e-5):
    mean = x.mean(axes, keepdims=True) if mean is None else mean
    var = x.var(axes, keepdims=True) if var is None else var
    return (x - mean) / np.sqrt(var + eps)


def test_matches_paddle_numbers_with_sigmoid():
    # From Paddle 3.3.1: nn.BatchNorm(3, act="sigmoid", momentum=0.8) on this x, one
    # training step (running statistics, y[0, :, 0, 0]), then eval (y[1, :, 1, 1]).
    x = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 2, 2) ** 2
    bn = nn.BatchNorm(3, act="sigmoid", momentum=0.8)
    y = bn(t(x)).numpy()
    np.testing.assert_allclose(bn._mean.numpy(), [0.37939507, 0.40207937, 0.72722113],
                               rtol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), [1.0731953, 1.2329289, 3.5224433],
                               rtol=1e-6)
    np.testing.assert_allclose(y[0, :, 0, 0], [0.8580725, 0.3780398, 0.27546096], rtol=1e-5)
    bn.eval()
    np.testing.assert_allclose(bn(t(x)).numpy()[1, :, 1, 1],
                               [0.7628532, 0.9764654, 0.9879655], rtol=1e-5)


@pytest.mark.parametrize("shape, layout, axes", [
    ((6, 3), "NCHW", (0,)),
    ((4, 3, 5), "NCHW", (0, 2)),
    ((2, 3, 2, 2, 2), "NCHW", (0, 2, 3, 4)),
    ((4, 2, 2, 3), "NHWC", (0, 1, 2)),
    ((6, 3), "NHWC", (0,)),
])
def test_ranks_and_layouts(shape, layout, axes):
    x = RNG.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(nn.BatchNorm(3, data_layout=layout)(t(x)).numpy(),
                               normalized(x, axes), rtol=1e-4, atol=1e-5)


def test_activation_by_name():
    x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    expected = np.maximum(normalized(x, (0, 2, 3)), 0)
    np.testing.assert_allclose(nn.BatchNorm(3, act="relu")(t(x)).numpy(), expected,
                               rtol=1e-4, atol=1e-5)
    hard_swish = nn.BatchNorm(3, act="hard_swish")(t(x)).numpy()
    np.testing.assert_allclose(hard_swish, paddle.nn.functional.hardswish(
        t(normalized(x, (0, 2, 3)))).numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="act='bogus'.*one of"):
        nn.BatchNorm(3, act="bogus")


def test_is_test_and_global_statistics_use_the_running_ones():
    x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    for bn in (nn.BatchNorm(3, is_test=True), nn.BatchNorm(3, use_global_stats=True)):
        np.testing.assert_allclose(bn(t(x)).numpy(), x / np.sqrt(1 + 1e-5), rtol=1e-6)
        np.testing.assert_array_equal(bn._mean.numpy(), np.zeros(3))
    bn = nn.BatchNorm(3, is_test=True)
    assert not bn.training
    bn.train()
    bn(t(x))
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * x.mean((0, 2, 3)), rtol=1e-5,
                               atol=1e-7)


def test_trainable_statistics_use_and_update_batch_statistics_in_eval():
    x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    bn = nn.BatchNorm(3, trainable_statistics=True)
    bn.eval()
    np.testing.assert_allclose(bn(t(x)).numpy(), normalized(x, (0, 2, 3)), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(bn._variance.numpy(), 0.9 + 0.1 * x.var((0, 2, 3)),
                               rtol=1e-5)


def test_parameters_as_paddle():
    bn = nn.BatchNorm(4, moving_mean_name="bn_mean", moving_variance_name="bn_var",
                      dtype="float64")
    assert list(bn.state_dict()) == ["weight", "bias", "_mean", "_variance"]
    assert [p.trainable for p in bn.parameters()] == [True, True, False, False]
    assert (bn._mean.name, bn._variance.name) == ("bn_mean", "bn_var")
    assert bn.weight.dtype == paddle.float64
    assert nn.BatchNorm(4, dtype="float16").weight.dtype == paddle.float32
    bare = nn.BatchNorm(4, param_attr=False, bias_attr=False)
    assert bare.weight is None and bare.bias is None
    with pytest.raises(ValueError, match="data_layout"):
        nn.BatchNorm(4, data_layout="NCL")
    with pytest.raises(ValueError, match="rank 2 to 5"):
        nn.BatchNorm(4)(paddle.ones([4]))


def test_gradients():
    x = RNG.standard_normal((3, 2, 2, 2))

    def fn(a):
        bn = nn.BatchNorm(2, act="tanh", dtype="float64")
        bn.weight.set_value(np.array([1.5, -0.5]))
        return bn(a)

    check_grads(fn, x, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_matches_eager(backend):
    x = t(RNG.standard_normal((4, 3, 5, 5)).astype(np.float32))
    model = nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm(4, act="relu"))
    model.eval()
    eager = model(x).numpy()
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(), eager,
                               rtol=1e-5, atol=1e-6)
