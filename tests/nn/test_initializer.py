"""irflow.nn.initializer and ParamAttr: Paddle's fans, bounds and standard
deviations, reproducibility under irflow.seed, and in-place re-initialization."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.nn import initializer as I
from irflow.nn.param_attr import ParamAttr
from irflow.nn.param_attr import create_parameter

SHAPE = (400, 300)


def sample(init, shape=SHAPE):
    paddle.seed(0)
    return init.array(shape)


@pytest.mark.parametrize("shape, fans", [
    ((), (1, 1)), ((7,), (7, 7)), ((3, 5), (3, 5)), ((8, 4, 3, 2), (24, 48)),
])
def test_compute_fans(shape, fans):
    assert I.compute_fans(shape) == fans


def test_constant_and_assign():
    np.testing.assert_array_equal(I.Constant(0.25).array((2, 3)), np.full((2, 3), 0.25))
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(I.Assign(value).array((2, 3)), value)
    np.testing.assert_array_equal(I.Assign(paddle.to_tensor(value)).array((2, 3)), value)
    with pytest.raises(ValueError, match="shape"):
        I.Assign(value).array((3, 2))


@pytest.mark.parametrize("init, low, high", [
    (I.Uniform(), -1.0, 1.0),
    (I.Uniform(2.0, 3.0), 2.0, 3.0),
    (I.XavierUniform(), -math.sqrt(6 / 700), math.sqrt(6 / 700)),
    (I.XavierUniform(fan_in=10, fan_out=20, gain=2.0), -2 * math.sqrt(0.2), 2 * math.sqrt(0.2)),
    (I.KaimingUniform(), -math.sqrt(6 / 400), math.sqrt(6 / 400)),
    (I.KaimingUniform(mode="fan_out", nonlinearity="tanh"), -5 / 3 * math.sqrt(3 / 300),
     5 / 3 * math.sqrt(3 / 300)),
])
def test_uniform_initializers_fill_their_interval(init, low, high):
    values = sample(init)
    assert values.dtype == np.float32
    assert values.min() >= low - 1e-6 and values.max() <= high + 1e-6
    span = high - low
    assert values.min() < low + 0.01 * span and values.max() > high - 0.01 * span
    assert abs(values.mean() - (low + high) / 2) < 0.01 * span


@pytest.mark.parametrize("init, mean, std", [
    (I.Normal(), 0.0, 1.0),
    (I.Normal(1.0, 0.5), 1.0, 0.5),
    (I.XavierNormal(), 0.0, math.sqrt(2 / 700)),
    (I.KaimingNormal(), 0.0, math.sqrt(2 / 400)),
    (I.KaimingNormal(nonlinearity="leaky_relu", negative_slope=0.2), 0.0,
     math.sqrt(2 / 1.04) / math.sqrt(400)),
])
def test_normal_initializers_have_their_moments(init, mean, std):
    values = sample(init)
    assert abs(values.mean() - mean) < 0.01 * std + 1e-3
    assert abs(values.std() - std) < 0.01 * std


def test_truncated_normal_stays_in_absolute_bounds():
    values = sample(I.TruncatedNormal(mean=1.0, std=10.0))
    assert values.min() >= -2 and values.max() <= 2 and values.min() < -1.95
    narrow = sample(I.TruncatedNormal(mean=1.0, std=0.1, a=0.9, b=1.2))
    assert narrow.min() >= 0.9 and narrow.max() <= 1.2
    with pytest.raises(ValueError, match="a < b"):
        I.TruncatedNormal(a=1.0, b=0.0)
    with pytest.raises(ValueError, match="almost never"):
        I.TruncatedNormal(mean=0.0, std=1.0, a=50.0, b=51.0).array((1000,))


def test_kaiming_argument_checks_and_gains():
    with pytest.raises(ValueError, match="mode"):
        I.KaimingNormal(mode="fan_avg")
    with pytest.raises(ValueError, match="fan_in"):
        I.KaimingUniform(fan_in=3, mode="fan_out")
    assert I.calculate_gain("relu") == math.sqrt(2)
    assert I.calculate_gain("leaky_relu", 1.0) == 1.0
    assert I.calculate_gain("conv2d") == 1.0
    with pytest.raises(ValueError, match="not supported"):
        I.calculate_gain("softmax")


def test_seed_makes_initialization_reproducible():
    paddle.seed(7)
    a = I.Normal().array((5,))
    b = I.Normal().array((5,))
    paddle.seed(7)
    np.testing.assert_array_equal(I.Normal().array((5,)), a)
    assert not np.array_equal(a, b)


def test_calling_an_initializer_overwrites_a_parameter_in_place():
    m = nn.Linear(3, 2)
    weight = m.weight
    I.Constant(3.0)(m.weight)
    assert m.weight is weight
    np.testing.assert_array_equal(m.weight.numpy(), 3.0)
    assert m.weight.dtype == paddle.float32
    assert "Constant(value=3.0)" == repr(I.Constant(3.0))


def test_create_parameter_defaults_and_attrs():
    w = create_parameter([3, 4], "float64")
    assert isinstance(w, paddle.Parameter) and w.dtype == paddle.float64
    assert w.name.startswith("create_parameter_") and w.name.endswith(".w_0")
    assert not w.stop_gradient and w.persistable
    b = create_parameter([4], is_bias=True)
    np.testing.assert_array_equal(b.numpy(), 0.0)
    attr = ParamAttr(name="frozen", initializer=I.Constant(1.0), trainable=False,
                        learning_rate=0.5, need_clip=False)
    p = create_parameter([2], attr=attr, default_initializer=I.Constant(9.0))
    assert p.name == "frozen" and p.stop_gradient and not p.trainable and not p.need_clip
    np.testing.assert_array_equal(p.numpy(), 1.0)
    assert create_parameter([2], attr=False) is None
    np.testing.assert_array_equal(create_parameter([2], default_initializer=I.Constant(9.0))
                                  .numpy(), 9.0)
    with pytest.raises(ValueError, match="empty"):
        ParamAttr(name="")
