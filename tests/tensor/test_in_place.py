"""Paddle's in-place methods (``x.add_(y)``, ``x.zero_()``...): the tensor takes the
result and is returned, eagerly and in compiled code, where a buffer changed in place
is a state update of the program."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ConversionError, IrflowError, ShapeError
from irflow.static import InputSpec

A = np.arange(6.0, dtype="float32").reshape(2, 3) - 2.5
B = np.array([0.5, -1.0, 2.0], dtype="float32")


@pytest.mark.parametrize("name, args, want", [
    ("add_", (B,), A + B), ("subtract_", (B,), A - B), ("multiply_", (B,), A * B),
    ("divide_", (B,), A / B), ("scale_", (2.0,), A * 2.0), ("clip_", (-1.0, 1.0), np.clip(A, -1, 1)),
    ("exp_", (), np.exp(A)), ("abs_", (), np.abs(A)), ("floor_", (), np.floor(A)),
    ("square_", (), A * A), ("zero_", (), np.zeros_like(A)), ("fill_", (1.5,), np.full_like(A, 1.5)),
])
def test_each_method_changes_the_tensor_and_returns_it(name, args, want):
    x = paddle.to_tensor(A)
    alias = x
    out = getattr(x, name)(*(paddle.to_tensor(a) if isinstance(a, np.ndarray) else a
                             for a in args))
    assert out is x and alias is x
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6)
    assert x.dtype == paddle.float32


def test_zero_clears_nan_and_inf_too():
    x = paddle.to_tensor(np.array([np.nan, np.inf, -np.inf, 2.0], "float32"))
    np.testing.assert_array_equal(x.zero_().numpy(), np.zeros(4, "float32"))


def test_shape_methods_change_the_shape_and_others_keep_it():
    x = paddle.to_tensor(A)
    assert x.reshape_([3, 2]) is x and x.shape == [3, 2]
    assert x.unsqueeze_(0).shape == [1, 3, 2] and x.squeeze_(0).shape == [3, 2]
    with pytest.raises(ShapeError, match="keeps the tensor's shape"):
        paddle.to_tensor(B).add_(paddle.to_tensor(A))


def test_gradients_flow_through_a_change_of_a_computed_tensor_not_of_a_leaf():
    a = paddle.to_tensor(A, stop_gradient=False)
    h = a * 2.0
    h.multiply_(h)                      # h = (2a)^2
    h.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 8.0 * A, rtol=1e-6)
    with pytest.raises(IrflowError, match="leaf tensor that requires a gradient"):
        a.add_(a)


class Accumulator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", paddle.zeros([3]))

    def forward(self, x):
        self.total.add_(x.sum(axis=0))
        x.scale_(0.5)
        return x + self.total


def test_compiled_in_place_changes_are_those_of_eager_code():
    """A buffer changed in place is updated on every call; an input changed in place
    is changed for the caller; the outputs follow."""
    eager, twin = Accumulator(), Accumulator()
    compiled = paddle.compile(twin, input_spec=[InputSpec([None, 3])])
    for n in (2, 3, 2):
        data = np.arange(n * 3, dtype="float32").reshape(n, 3)
        x_eager, x_compiled = paddle.to_tensor(data), paddle.to_tensor(data)
        np.testing.assert_allclose(compiled(x_compiled).numpy(), eager(x_eager).numpy())
        np.testing.assert_allclose(twin.total.numpy(), eager.total.numpy())
        np.testing.assert_allclose(x_compiled.numpy(), x_eager.numpy())


def test_int_tensor_takes_the_float_result_of_divide_and_exp():
    """As in Paddle 3.3.1: int_t.divide_(int) and int_t.exp_() make the tensor float32
    (the result was cast back to the tensor's dtype: [1, 2, 3] / 2 gave [0, 1, 1])."""
    t = paddle.to_tensor([1, 2, 3])
    assert t.divide_(paddle.to_tensor(2)) is t
    assert t.dtype == paddle.float32 and t.numpy().tolist() == [0.5, 1.0, 1.5]
    u = paddle.to_tensor([0, 1, 2], dtype="int32")
    u.exp_()
    assert u.dtype == paddle.float32
    np.testing.assert_allclose(u.numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_float_tensor_takes_the_promoted_dtype():
    t = paddle.to_tensor([1.0, 2.0])
    t.add_(paddle.to_tensor([1.0, 2.0], dtype="float64"))
    assert t.dtype == paddle.float64 and t.numpy().tolist() == [2.0, 4.0]


def test_int_tensor_keeps_its_dtype_where_paddle_computes_in_it():
    t = paddle.to_tensor([1, 2, 3])
    assert t.clip_(1.5, 2.5).numpy().tolist() == [1, 2, 2] and t.dtype == paddle.int64
    u = paddle.to_tensor([1, 2, 3], dtype="int32")
    assert u.pow_(2).numpy().tolist() == [1, 4, 9] and u.dtype == paddle.int32
    assert u.add_(1).numpy().tolist() == [2, 5, 10] and u.dtype == paddle.int32


@pytest.mark.parametrize("call", [
    lambda t: t.sqrt_(), lambda t: t.tanh_(), lambda t: t.reciprocal_(),
    lambda t: t.add_(2.5), lambda t: t.multiply_(paddle.to_tensor(2.0)),
    lambda t: t.divide_(paddle.to_tensor(2.0))])
def test_int_tensor_refuses_what_paddle_refuses(call):
    """Paddle has no int kernels for sqrt_ and the like and refuses an int tensor
    meeting a float in place: a TypeError, not a silently truncated result."""
    t = paddle.to_tensor([1, 2, 3])
    with pytest.raises(TypeError, match="does not change a int64 tensor in place"):
        call(t)
    assert t.dtype == paddle.int64 and t.numpy().tolist() == [1, 2, 3]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_int_divide_in_place_agrees_with_eager(backend):
    def fn(x):
        y = x * 1
        y.divide_(paddle.to_tensor(2, dtype="int32"))
        return y
    x = paddle.to_tensor([1, 2, 3], dtype="int32")
    got = paddle.compile(fn, backend=backend)(x)
    assert got.dtype == paddle.float32 and got.numpy().tolist() == fn(x).numpy().tolist()


def test_compiled_state_changed_in_place_into_another_dtype_is_a_conversion_error():
    """Eagerly the buffer becomes float32; a compiled program's state keeps its dtype,
    so the change is refused rather than truncated."""
    class Halving(nn.Layer):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", paddle.to_tensor([1, 2, 3]))

        def forward(self, x):
            self.count.divide_(paddle.to_tensor(2))
            return x + 1

    with pytest.raises(ConversionError, match="makes a int64 tensor float32"):
        paddle.compile(Halving())(paddle.ones([3]))


@pytest.mark.parametrize("method, args", [("fill_", (3.0,)), ("zero_", ()), ("uniform_", ())])
def test_filling_an_intermediate_in_place_keeps_it_in_the_graph(method, args):
    """As in Paddle: a tensor computed from a parameter, then filled in place with a
    value that does not depend on it, still requires a gradient and passes a zero one
    back, so the parameter gets a gradient of zeros (not None: an optimizer such as
    Adam steps it by its moments, as Paddle's does)."""
    x = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = x * 2
    getattr(y, method)(*args)
    assert not y.stop_gradient
    filled = y.numpy().copy()
    w = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    (y * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(w.grad.numpy(), filled)
