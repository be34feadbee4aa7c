"""`paddle.set_default_dtype` reaches layers' parameters, static inputs and compiled
programs, as in Paddle 3.3.1 (where ``set_default_dtype('float64')`` makes
``nn.Linear``, ``nn.Conv2D``, ``nn.BatchNorm1D`` and ``nn.Embedding`` float64 and
``static.data`` float64 by default)."""
import contextlib

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn


@contextlib.contextmanager
def default_dtype(name):
    before = paddle.get_default_dtype()
    paddle.set_default_dtype(name)
    try:
        yield
    finally:
        paddle.set_default_dtype(before)


@pytest.mark.parametrize("make", [lambda: nn.Linear(2, 3), lambda: nn.Conv2D(1, 2, 3),
                                  lambda: nn.BatchNorm1D(3), lambda: nn.Embedding(4, 2)])
def test_parameters_take_the_default_dtype_when_the_layer_is_made(make):
    with default_dtype("float64"):
        layer = make()
    assert {str(t.dtype) for t in layer.state_dict().values()} == {"paddle.float64"}
    assert {str(t.dtype) for t in make().state_dict().values()} == {"paddle.float32"}


def test_a_float64_layer_trains_in_float64():
    with default_dtype("float64"):
        layer = nn.Linear(3, 1)
        x = paddle.to_tensor(np.arange(6.0).reshape(2, 3))
    loss = layer(x).sum()
    loss.backward()
    assert loss.dtype == paddle.float64 and layer.weight.grad.dtype == paddle.float64
    np.testing.assert_allclose(layer.weight.grad.numpy(), x.numpy().sum(0, keepdims=True).T)


def test_static_data_takes_the_default_dtype():
    paddle.enable_static()
    try:
        with default_dtype("float64"):
            assert paddle.static.data("x64", [2, 3]).dtype == paddle.float64
        assert paddle.static.data("x32", [2, 3]).dtype == paddle.float32
    finally:
        paddle.disable_static()


def test_a_compiled_function_is_traced_again_when_the_default_dtype_changes():
    f = paddle.compile(lambda x: x + paddle.zeros([3]))
    x = paddle.ones([3], dtype="float32")
    assert f(x).dtype == paddle.float32
    with default_dtype("float64"):
        assert f(x).dtype == paddle.float64  # as eagerly: float32 + float64 zeros
    assert f(x).dtype == paddle.float32
