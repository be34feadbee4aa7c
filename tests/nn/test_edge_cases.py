"""Eager edge cases that Paddle handles and irflow once got silently wrong (issue 13
item 7): empty batches in BatchNorm, integer division by zero, one_hot out of range,
mixed float dtypes into a layer, RuntimeWarnings from kernels, and compiled calls
with keyword tensors or too many arguments."""
import warnings

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.errors import ArgumentError, DTypeError, IntegerDivisionByZero, OutOfRangeError
from irflow.static import InputSpec


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


@pytest.mark.parametrize("layer, shape", [(nn.BatchNorm1D(3), [0, 3]),
                                          (nn.BatchNorm2D(3), [0, 3, 2, 2])])
def test_batch_norm_keeps_running_stats_on_an_empty_batch(layer, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layer(paddle.zeros(shape))
    assert out.shape == shape
    assert layer._mean.numpy().tolist() == [0, 0, 0]
    assert layer._variance.numpy().tolist() == [1, 1, 1]
    layer(paddle.ones(shape[:1] and [2] + shape[1:]))  # a real batch still updates
    np.testing.assert_allclose(layer._mean.numpy(), [0.1, 0.1, 0.1], rtol=1e-6)


def test_batch_norm_compiled_with_a_symbolic_batch_skips_empty_ones():
    layer = nn.BatchNorm1D(2)
    static = paddle.jit.to_static(layer, input_spec=[InputSpec([None, 2])])
    static(paddle.zeros([0, 2]))
    assert layer._variance.numpy().tolist() == [1, 1]
    static(paddle.ones([4, 2]) * 2)
    np.testing.assert_allclose(layer._mean.numpy(), [0.2, 0.2], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_by_zero_raises(dtype):
    a, b = t(np.array([3, 4], dtype)), t(np.array([0, 2], dtype))
    with pytest.raises(IntegerDivisionByZero, match="division by zero") as info:
        a // b
    assert isinstance(info.value, ZeroDivisionError)
    assert "test_edge_cases.py" in str(info.value)  # the user's line
    with pytest.raises(ZeroDivisionError):
        a % b
    with pytest.raises(ZeroDivisionError):
        paddle.floor_divide(a, 0)
    assert (a // t(np.array([2, 3], dtype))).numpy().tolist() == [1, 1]
    assert (t([3.0]) // 0).numpy().tolist() == [float("inf")]  # floats: inf, as Paddle


def test_integer_division_by_zero_in_a_compiled_program():
    static = paddle.jit.to_static(lambda a, b: a // b)
    assert static(t([7]), t([2])).numpy().tolist() == [3]
    with pytest.raises(ZeroDivisionError):
        static(t([7]), t([0]))


def test_one_hot_out_of_range_raises():
    with pytest.raises(OutOfRangeError, match="index 5 is out of range") as info:
        F.one_hot(t([0, 5]), 3)
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError, match="index -1"):
        F.one_hot(t([0, -1]), 3)
    assert F.one_hot(t([2, 0]), 3).numpy().tolist() == [[0, 0, 1], [1, 0, 0]]


def test_float64_into_a_float32_layer_raises():
    layer = nn.Linear(3, 2)
    with pytest.raises(DTypeError, match="x is float64 and y is float32") as info:
        layer(paddle.randn([4, 3]).astype("float64"))
    assert isinstance(info.value, ValueError)  # Paddle raises a ValueError too
    with pytest.raises(ValueError, match="dtypes differ"):
        nn.Conv2D(1, 1, 3)(paddle.randn([1, 1, 4, 4]).astype("float64"))
    assert (t([1.0]) + t(np.array([1.0]))).dtype is paddle.float64  # elementwise promotes


def test_kernels_emit_no_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = paddle.log(t([0.0, -1.0]))
        assert np.isneginf(out.numpy()[0]) and np.isnan(out.numpy()[1])
        assert np.isinf(paddle.exp(t([1000.0])).numpy()).all()
        assert np.isnan((t([0.0]) / t([0.0])).numpy()).all()
        assert np.isnan(paddle.sqrt(t([-1.0])).numpy()).all()
        assert np.isnan(paddle.mean(paddle.zeros([0])).numpy())
        big = paddle.full([2, 2], 1e30)
        assert np.isinf((big * big).numpy()).all() and np.isinf((big @ big).numpy()).all()
        assert np.isnan((paddle.full([1], np.inf) - paddle.full([1], np.inf)).numpy()).all()
        assert t([1e30]).astype("int32").shape == [1]
        x = t([0.0, 1.0], stop_gradient=False)
        paddle.log(x).sum().backward()  # 1 / 0 in the backward program
        assert np.isinf(x.grad.numpy()[0])


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x, y=None, scale=1.0):
        out = self.fc(x) * scale
        if y is not None:
            out = out + y
        return out


def test_compiled_calls_take_keyword_tensors():
    net = Net()
    static = paddle.jit.to_static(net)
    x, y = paddle.randn([4, 3]), paddle.randn([4, 2])
    np.testing.assert_allclose(static(x, y=y).numpy(), net(x, y=y).numpy(), rtol=1e-6)
    np.testing.assert_allclose(static(x=x).numpy(), net(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(static(x, scale=2.0).numpy(), net(x, scale=2.0).numpy(),
                               rtol=1e-6)
    spec = paddle.jit.to_static(Net(), input_spec=[InputSpec([None, 3]), InputSpec([None, 2])])
    assert spec(x, y=y).shape == [4, 2]


def test_a_compiled_call_with_too_many_arguments_names_the_model():
    static = paddle.jit.to_static(Net())
    x = paddle.randn([4, 3])
    with pytest.raises(ArgumentError, match=r"Net\(x, y=None, scale=1.0\) takes at most 3") \
            as info:
        static(x, x, 1.0, x)
    assert "__jst_factory" not in str(info.value) and isinstance(info.value, TypeError)
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'z'"):
        static(x, z=x)
