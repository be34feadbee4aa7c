"""Silent differences from PaddlePaddle 3.3.1 in irflow's linear algebra and special
math (wrong values, dtypes or gradients, without an error), found by running the
same code under real Paddle 3.3.1 (CPU). Each test compares against NumPy or small
values checked against Paddle."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError


def test_log1p_keeps_tiny_arguments():
    """log1p was log(1 + x): 1 + x rounds to 1 below float32's epsilon, so
    log1p(1e-10) was 0 and log1p(1e-7) 1.19e-7; Paddle gives 1e-10 and 1e-7."""
    x = np.array([1e-10, 1e-7, -1e-8, 1e-30, 0.5, -0.5], "float32")
    out = paddle.log1p(paddle.to_tensor(x))
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), np.log1p(x), rtol=1e-6)


def test_log1p_gradient_and_int_input():
    x = paddle.to_tensor(np.array([1e-8, 0.5, -0.5, 3.0]), stop_gradient=False)
    paddle.log1p(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + x.numpy()), rtol=1e-12)
    out = paddle.log1p(paddle.to_tensor([0, 3]))  # Paddle: float32 [0, log(4)]
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), np.log1p([0.0, 3.0]), rtol=1e-6)


def test_log1p_traced_matches_eager():
    x = paddle.to_tensor(np.array([1e-10, 2.0], "float32"))
    compiled = paddle.jit.to_static(lambda t: paddle.log1p(t))
    np.testing.assert_allclose(compiled(x).numpy(), np.log1p(x.numpy()), rtol=1e-6)


def test_logaddexp_keeps_a_small_term():
    """logaddexp(-30, 0) is log1p(e**-30) = 9.36e-14 (Paddle's value); it was 0."""
    out = paddle.logaddexp(paddle.to_tensor([-30.0]), paddle.to_tensor([0.0]))
    np.testing.assert_allclose(out.numpy(), np.logaddexp(np.float32(-30), np.float32(0)),
                               rtol=1e-6)
    assert out.numpy()[0] > 0


def test_dot_of_int32_stays_int32():
    """Paddle 3.3.1: dot of int32 [1, 2] and [3, 4] is the int32 11 (was int64)."""
    x = paddle.to_tensor([1, 2], dtype="int32")
    y = paddle.to_tensor([3, 4], dtype="int32")
    out = paddle.dot(x, y)
    assert out.dtype == paddle.int32 and out.item() == 11
    rows = paddle.dot(paddle.to_tensor([[1, 2], [3, 4]], dtype="int32"),
                      paddle.to_tensor([[5, 6], [7, 8]], dtype="int32"))
    assert rows.dtype == paddle.int32 and rows.numpy().tolist() == [17, 53]


def test_dot_refuses_bool():
    """Paddle's dot has no bool kernel; irflow summed the products to an int64."""
    t = paddle.to_tensor([True, False])
    with pytest.raises(DTypeError, match="bool"):
        paddle.dot(t, t)


@pytest.mark.parametrize("call", [
    lambda x: paddle.norm(x, p="fro", axis=[0, 1]),
    lambda x: paddle.linalg.matrix_norm(x),
])
def test_frobenius_norm_gradient_at_zero_matrix_is_zero(call):
    """Paddle's gradient of the Frobenius norm of a zero matrix is 0; irflow's
    sqrt chain rule gave NaN everywhere."""
    x = paddle.to_tensor(np.zeros((2, 3)), stop_gradient=False)
    call(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))


def test_frobenius_norm_gradient_elsewhere():
    a = np.array([[[1.0, -2.0], [0.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]])
    x = paddle.to_tensor(a, stop_gradient=False)
    out = paddle.linalg.matrix_norm(x, keepdim=True)
    np.testing.assert_allclose(out.numpy().ravel(), [3.0, 0.0])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.concatenate([a[:1] / 3, a[1:]]))
