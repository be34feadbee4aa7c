"""Paddle code that ran eagerly but differed, or that Paddle's ``to_static`` runs and
compiled code refused: ``paddle.assign`` into an output of another dtype, and
``paddle.jit.enable_to_static``."""
import threading

import numpy as np
import pytest

import irflow as paddle
from irflow import nn

# ---------------------------------------------------------------- paddle.assign


@pytest.mark.parametrize("x_dtype, out_dtype", [
    ("float32", "int32"), ("int32", "float32"), ("float64", "float32"),
    ("float32", "float64"), ("bool", "float32"), ("int64", "int32")])
def test_assign_gives_the_output_x_dtype_and_value(x_dtype, out_dtype):
    """Paddle's rule: the output becomes a copy of x (``assign_out_``), in x's dtype;
    it stays the same Python object."""
    x = np.array([1.5, 2.5, -1.0]).astype(x_dtype)
    out = paddle.zeros([3], dtype=out_dtype)
    assert paddle.assign(paddle.to_tensor(x), output=out) is out
    assert out.dtype == paddle.to_tensor(x).dtype
    np.testing.assert_array_equal(out.numpy(), x)


def test_assign_into_a_parameter_keeps_it_a_trainable_leaf_of_x_dtype():
    weight = nn.Linear(2, 2).weight
    paddle.assign(paddle.ones([2, 2], dtype="float64"), output=weight)
    assert weight.dtype == paddle.float64 and not weight.stop_gradient and weight.is_leaf
    paddle.matmul(paddle.ones([1, 2], dtype="float64"), weight).sum().backward()
    # d/dW sum(1 @ W) = 1 everywhere, in the weight's new dtype
    assert weight.grad.dtype == paddle.float64
    np.testing.assert_array_equal(weight.grad.numpy(), np.ones((2, 2)))


def test_assign_of_another_dtype_into_an_intermediate_keeps_its_gradient_path():
    """a = 2x takes the value c (float64) as set_value gives it: gradients reaching a
    flow on to x as through 2x, at the new value: d/dx sum(a * a) = 2 * 2c."""
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    a = x * 2
    c = np.array([5.0, 7.0])
    paddle.assign(paddle.to_tensor(c), output=a)
    assert a.dtype == paddle.float64 and not a.stop_gradient
    (a * a).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * c)
    assert x.grad.dtype == paddle.float32


def test_assign_of_a_value_requiring_a_gradient_into_another_dtype():
    """out becomes the copy of 3x, float32: d/dx sum(out^2) = 2 * 3x * 3."""
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    out = paddle.zeros([2], dtype="float64")
    paddle.assign(x * 3, output=out)
    assert out.dtype == paddle.float32
    (out * out).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 18 * np.array([1.0, 2.0]))


@pytest.mark.parametrize("value, dtype, shape", [
    (3.5, "float64", [1]), (3, "int64", [1]), (True, "bool", [1]),
    ([1.5, 2.5], "float64", [2]), ((1, 2), "int64", [2]), (np.float32(2.0), "float32", [1])])
def test_assign_takes_python_values_as_numpy_arrays(value, dtype, shape):
    """Paddle's rule: a scalar becomes ``np.array([value])``, a list or tuple
    ``np.array(value)``: NumPy's dtype (float64 for Python floats), unlike to_tensor."""
    got = paddle.assign(value)
    assert got.dtype == getattr(paddle, dtype) and list(got.shape) == shape
    np.testing.assert_array_equal(got.numpy(), np.array(value).reshape(shape))
    out = paddle.zeros(shape, dtype="int32")
    paddle.assign(value, output=out)
    assert out.dtype == getattr(paddle, dtype)


def _assign_of_other_dtypes(x, w):
    y = x * 1
    paddle.assign(paddle.cast(x, "int32"), y)    # no gradient: y takes int32
    z = w * 2
    paddle.assign(paddle.cast(x, "float64"), z)  # z float64, its gradient path kept
    u = paddle.zeros([2], dtype="int64")
    paddle.assign(w * 3, u)                      # u becomes 3w, float32
    return y, z, u


def test_assign_of_other_dtypes_in_compiled_code_as_eagerly():
    """z's path: d/dw sum(z) = 2; u = 3w: 3; so w's gradient is 5."""
    for run in (paddle.jit.to_static(_assign_of_other_dtypes), _assign_of_other_dtypes):
        w = paddle.to_tensor([1.0, 1.0], stop_gradient=False)
        y, z, u = run(paddle.to_tensor([1.5, 2.5]), w)
        assert (y.dtype, z.dtype, u.dtype) == (paddle.int32, paddle.float64, paddle.float32)
        np.testing.assert_array_equal(y.numpy(), [1, 2])
        np.testing.assert_array_equal(z.numpy(), [1.5, 2.5])
        (z.sum() + u.sum()).backward()
        np.testing.assert_allclose(w.grad.numpy(), [5.0, 5.0])


def test_assign_of_another_dtype_into_program_state_is_an_error():
    """A compiled program's state (a buffer here) keeps its dtype across calls."""
    layer = nn.Layer()
    layer.register_buffer("count", paddle.zeros([2], dtype="int64"))

    def f(x):
        paddle.assign(x * 2, layer.count)
        return x
    with pytest.raises(paddle.ConversionError, match="keeps its dtype"):
        paddle.jit.to_static(f)(paddle.ones([2]))
    assert layer.count.dtype == paddle.int64

# ---------------------------------------------------------------- enable_to_static


def _counting(calls: list):
    def f(x):
        calls.append(1)  # Python code: eagerly on every call, compiled only when traced
        return x * 2
    return f


def test_enable_to_static_false_runs_compiled_functions_eagerly():
    calls = []
    f = paddle.jit.to_static(_counting(calls))  # compiled before the switch, as Paddle's
    x = paddle.ones([2])
    try:
        paddle.jit.enable_to_static(False)
        for _ in range(3):
            np.testing.assert_array_equal(f(x).numpy(), [2.0, 2.0])
        assert len(calls) == 3
    finally:
        paddle.jit.enable_to_static(True)
    with pytest.warns(RuntimeWarning, match="changed a Python list"):
        f(x)
    f(x)
    assert len(calls) == 4  # compiled again: the Python code ran once, when traced


class _CountingLinear(nn.Linear):
    def __init__(self):
        super().__init__(2, 2)
        self.calls = []

    def forward(self, x):
        self.calls.append(1)
        return super().forward(x)


def test_enable_to_static_false_runs_a_compiled_layer_eagerly():
    model = _CountingLinear()
    static = paddle.jit.to_static(model)
    x = paddle.ones([1, 2])
    try:
        paddle.jit.enable_to_static(False)
        outs = [static(x) for _ in range(2)]
    finally:
        paddle.jit.enable_to_static(True)
    assert len(model.calls) == 2
    np.testing.assert_allclose(outs[1].numpy(), x.numpy() @ model.weight.numpy()
                               + model.bias.numpy(), rtol=1e-6)


def test_enable_to_static_is_per_thread():
    calls = []
    f = paddle.jit.to_static(_counting(calls))
    x = paddle.ones([2])

    def eager_in_a_thread():
        paddle.jit.enable_to_static(False)
        f(x)
        f(x)
    thread = threading.Thread(target=eager_in_a_thread)
    thread.start()
    thread.join()
    assert len(calls) == 2
    with pytest.warns(RuntimeWarning):
        f(x)
    f(x)
    assert len(calls) == 3  # this thread still compiles


def test_enable_to_static_takes_a_bool():
    with pytest.raises(TypeError, match="takes a bool"):
        paddle.jit.enable_to_static(0)
