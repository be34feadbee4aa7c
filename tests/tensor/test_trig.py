"""The trigonometric and hyperbolic functions Paddle has beside sin and cos: values
against NumPy (NaN outside a function's domain, as NumPy and Paddle give), integer
inputs computed in float32 (atan2's in float64, as in Paddle), gradients against
finite differences, and compiled code against eager on both backends."""
import numpy as np
import pytest

import irflow as paddle
from tests.nn.gradcheck import check_grads

UNARY = {"tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
         "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
         "atanh": np.arctanh}
# points inside each function's domain, away from its edges (for finite differences)
INSIDE = {"acosh": np.array([1.5, 2.0, 3.25])}
DEFAULT = np.array([-0.7, -0.2, 0.1, 0.45, 0.8])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_match_numpy_including_outside_the_domain(name):
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan], np.float32)
    got = getattr(paddle, name)(paddle.to_tensor(x))
    with np.errstate(all="ignore"):
        want = UNARY[name](x)
    assert got.dtype == paddle.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-7, equal_nan=True)
    np.testing.assert_allclose(getattr(paddle.to_tensor(x), name)().numpy(), want,
                               rtol=2e-7, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_integer_inputs_compute_in_float32(name):
    out = getattr(paddle, name)(paddle.to_tensor([1, 2]))
    assert out.dtype == paddle.float32


@pytest.mark.parametrize("name", sorted(UNARY))
def test_gradients_match_finite_differences(name):
    check_grads(getattr(paddle, name), INSIDE.get(name, DEFAULT))


def test_atan2_takes_the_quadrant_of_the_point():
    y = np.array([1.0, 1.0, -1.0, -1.0, 0.0, 0.0])
    x = np.array([1.0, -1.0, -1.0, 1.0, -1.0, 1.0])
    got = paddle.atan2(paddle.to_tensor(y), paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(got, np.arctan2(y, x))
    assert paddle.atan2(paddle.to_tensor([1, 2]), paddle.to_tensor([3, 4])).dtype == \
        paddle.float64
    check_grads(lambda a, b: paddle.atan2(a, b), np.array([0.3, -1.2]), np.array([0.9, -0.4]))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_code_agrees_with_eager(backend):
    def f(x, y):
        return paddle.tan(x) * paddle.cosh(y) + paddle.atan2(x, y) - paddle.asinh(x * y)
    compiled = paddle.compile(f, backend=backend)
    x = paddle.to_tensor(np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8))
    y = paddle.to_tensor(np.linspace(0.5, 2, 64, dtype=np.float32).reshape(8, 8))
    np.testing.assert_allclose(compiled(x, y).numpy(), f(x, y).numpy(), rtol=1e-6, atol=1e-6)
