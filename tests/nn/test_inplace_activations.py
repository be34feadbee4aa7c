"""Paddle's in-place activations (``F.relu_``, ``F.softmax_``, ...): the tensor takes
the activation's result and is returned; gradients flow as through the out-of-place
activation; a leaf that requires a gradient cannot be changed in place."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F

X = np.array([[-1.0, 0.25], [2.0, 0.75]], dtype=np.float32)
WEIGHTS = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)

# name -> (extra arguments, the activation in NumPy)
CASES = {
    "relu": ((), lambda x: np.maximum(x, 0)),
    "tanh": ((), np.tanh),
    "elu": ((0.5,), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "leaky_relu": ((0.2,), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hardtanh": ((-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    "thresholded_relu": ((0.5, 2.0), lambda x: np.where(x > 0.5, x, 2.0)),
    "softmax": ((0,), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
}


def _weighted_grad(fn, in_place: bool):
    """fn applied to h = x * 1 (in place or not): its value and d/dx sum(W * fn(h))."""
    x = paddle.to_tensor(X, stop_gradient=False)
    h = x * 1
    out = fn(h)
    if in_place:
        assert out is h
    (out * paddle.to_tensor(WEIGHTS)).sum().backward()
    return out.numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_an_in_place_activation_matches_its_out_of_place_form(name):
    args, numpy_fn = CASES[name]
    value, grad = _weighted_grad(lambda h: getattr(F, f"{name}_")(h, *args), True)
    want_value, want_grad = _weighted_grad(lambda h: getattr(F, name)(h, *args), False)
    np.testing.assert_allclose(value, numpy_fn(X.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_an_in_place_activation_of_a_leaf_requiring_a_gradient_is_an_error(name):
    args, _ = CASES[name]
    leaf = paddle.to_tensor(X, stop_gradient=False)
    with pytest.raises(paddle.IrflowError, match="leaf tensor"):
        getattr(F, f"{name}_")(leaf, *args)
    np.testing.assert_array_equal(leaf.numpy(), X)


def test_softmax_in_place_with_a_dtype_leaves_x_unchanged():
    """As Paddle's: it works in place on x cast to the dtype, a new tensor."""
    x = paddle.to_tensor([1.0, 2.0])
    for dtype in ("float64", "float32"):
        out = F.softmax_(x, dtype=dtype)
        assert out is not x and out.dtype == getattr(paddle, dtype)
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
        np.testing.assert_allclose(out.numpy(), np.exp([1, 2]) / np.exp([1, 2]).sum(),
                                   rtol=1e-6)


def test_elu_in_place_needs_a_non_negative_alpha():
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        F.elu_(paddle.to_tensor([1.0, -2.0]), -0.5)


def test_in_place_activations_in_compiled_code_as_eagerly():
    def f(x):
        h = x * 2
        F.relu_(h)
        F.softmax_(h, axis=-1)
        return h * 3
    x = paddle.to_tensor(X)
    np.testing.assert_allclose(paddle.jit.to_static(f)(x).numpy(), f(x).numpy(), rtol=1e-6)
