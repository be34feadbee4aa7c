"""paddle.linalg's inv, det, slogdet, solve, matrix_power, cholesky, triangular_solve
and multi_dot, and the special functions expm1, logit, lgamma, digamma and erfinv:
values against NumPy and math references, gradients against finite differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError
from irflow.errors import SingularMatrixError
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)


def _well_conditioned(*shape):
    n = shape[-1]
    return RNG.standard_normal(shape) + 3 * np.eye(n)


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inv_det_slogdet_values(dtype):
    a = _well_conditioned(3, 4, 4).astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    x = paddle.to_tensor(a)
    inv = paddle.linalg.inv(x)
    assert inv.dtype == x.dtype and inv.shape == [3, 4, 4]
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(paddle.inverse(x).numpy(), inv.numpy())
    np.testing.assert_allclose(paddle.linalg.det(x).numpy(), np.linalg.det(a), rtol=tol)
    sld = paddle.linalg.slogdet(x)
    assert sld.shape == [2, 3]
    sign, logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(sld.numpy(), np.stack([sign, logabs]), rtol=tol, atol=tol)


def test_singular_matrices():
    s = paddle.to_tensor([[1.0, 2.0], [2.0, 4.0]])
    assert paddle.linalg.det(s).item() == 0
    np.testing.assert_array_equal(paddle.linalg.slogdet(s).numpy(), [0, -np.inf])
    with pytest.raises(SingularMatrixError, match="inverse"):
        paddle.linalg.inv(s)
    with pytest.raises(ValueError, match="solve"):
        paddle.linalg.solve(s, paddle.ones([2, 1]))
    with pytest.raises(ValueError, match="cholesky"):
        paddle.linalg.cholesky(paddle.to_tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(DTypeError, match="float32 or float64"):
        paddle.linalg.det(paddle.to_tensor([[1, 2], [3, 4]]))


def test_solve_broadcasts_and_sides():
    a, b = _well_conditioned(2, 1, 3, 3), RNG.standard_normal((4, 3, 2))
    out = paddle.linalg.solve(paddle.to_tensor(a), paddle.to_tensor(b))
    assert out.shape == [2, 4, 3, 2]
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(a, b[None]), rtol=1e-10)
    vec = paddle.linalg.solve(paddle.to_tensor(a[0, 0]), paddle.to_tensor(b[0, :, 0]))
    np.testing.assert_allclose(vec.numpy(), np.linalg.solve(a[0, 0], b[0, :, 0]), rtol=1e-10)
    c = RNG.standard_normal((2, 3))
    right = paddle.linalg.solve(paddle.to_tensor(a[0, 0]), paddle.to_tensor(c), left=False)
    np.testing.assert_allclose(right.numpy() @ a[0, 0], c, rtol=1e-10, atol=1e-12)


def test_matrix_power_cholesky_triangular_multi_dot():
    a = _well_conditioned(2, 3, 3)
    x = paddle.to_tensor(a)
    for n in (0, 1, 2, 5, -1, -3):
        np.testing.assert_allclose(paddle.linalg.matrix_power(x, n).numpy(),
                                   np.linalg.matrix_power(a, n), rtol=1e-9, atol=1e-12)
    s = _spd(2, 3, 3)
    low = paddle.linalg.cholesky(paddle.to_tensor(s))
    np.testing.assert_allclose(low.numpy(), np.linalg.cholesky(s), rtol=1e-12)
    up = paddle.linalg.cholesky(paddle.to_tensor(s), upper=True)
    np.testing.assert_allclose(up.numpy(), np.swapaxes(np.linalg.cholesky(s), -1, -2))
    y = RNG.standard_normal((3, 2))
    for upper in (True, False):
        for transpose in (True, False):
            for unit in (True, False):
                m = np.triu(a) if upper else np.tril(a)
                if unit:
                    m = m - m * np.eye(3) + np.eye(3)
                m = np.swapaxes(m, -1, -2) if transpose else m
                out = paddle.linalg.triangular_solve(x, paddle.to_tensor(y), upper=upper,
                                                     transpose=transpose, unitriangular=unit)
                np.testing.assert_allclose(out.numpy(), np.linalg.solve(m, y[None]),
                                           rtol=1e-9, atol=1e-12)
    mats = [RNG.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    out = paddle.linalg.multi_dot([paddle.to_tensor(m) for m in mats])
    np.testing.assert_allclose(out.numpy(), np.linalg.multi_dot(mats), rtol=1e-12)


def test_linalg_gradients():
    a, s = _well_conditioned(2, 3, 3), _spd(3, 3)
    check_grads(paddle.linalg.inv, a)
    check_grads(paddle.linalg.det, a)
    check_grads(lambda t: paddle.linalg.slogdet(t), a * np.array([1, -1])[:, None, None])
    check_grads(paddle.linalg.solve, a, RNG.standard_normal((3, 2)))
    check_grads(lambda t: paddle.linalg.matrix_power(t, -2), a[0])
    # cholesky reads x's lower triangle: differentiate through a symmetric x
    check_grads(lambda t: paddle.linalg.cholesky(t + t.t(), upper=True), s / 2)
    check_grads(lambda t, y: paddle.linalg.triangular_solve(t, y, upper=False, transpose=True),
                a[0], RNG.standard_normal((3, 2)))


_lgamma = np.vectorize(math.lgamma)


def _digamma_reference(x, h=1e-5):
    return (_lgamma(x + h) - _lgamma(x - h)) / (2 * h)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values(dtype):
    tol = 1e-5 if dtype == "float32" else 1e-12
    x = np.array([-2.5, -0.3, 0.2, 1.0, 3.7, 40.0], dtype)
    t = paddle.to_tensor(x)
    assert paddle.lgamma(t).dtype == t.dtype
    np.testing.assert_allclose(paddle.expm1(t).numpy(), np.expm1(x), rtol=tol)
    np.testing.assert_allclose(paddle.lgamma(t).numpy(), _lgamma(x.astype(float)), rtol=tol)
    np.testing.assert_allclose(paddle.digamma(t).numpy(), _digamma_reference(x.astype(float)),
                               rtol=max(tol, 1e-8), atol=1e-8)
    u = np.array([-0.999, -0.5, 0.0, 1e-6, 0.3, 0.99], dtype)
    back = np.vectorize(math.erf)(paddle.erfinv(paddle.to_tensor(u)).numpy().astype(float))
    np.testing.assert_allclose(back, u, rtol=tol, atol=tol)
    p = np.array([0.05, 0.5, 0.97], dtype)
    np.testing.assert_allclose(paddle.logit(paddle.to_tensor(p)).numpy(), np.log(p / (1 - p)),
                               rtol=tol)
    np.testing.assert_allclose(paddle.logit(paddle.to_tensor(p), eps=0.1).numpy(),
                               np.log(np.clip(p, 0.1, 0.9) / (1 - np.clip(p, 0.1, 0.9))),
                               rtol=tol)


def test_lgamma_of_nan_and_infinities():
    """NaN gives NaN and +-inf give +inf, as math.lgamma and Paddle (floor(NaN) in the
    pole test raised a ValueError)."""
    x = paddle.to_tensor([math.nan, -math.inf, math.inf, 0.0])
    out = paddle.lgamma(x).numpy()
    assert math.isnan(out[0]) and list(out[1:]) == [math.inf] * 3


def test_special_edges_and_int_inputs():
    assert paddle.expm1(paddle.to_tensor([1, 2])).dtype == paddle.float32
    np.testing.assert_array_equal(paddle.lgamma(paddle.to_tensor([0.0, -1.0])).numpy(),
                                  [np.inf, np.inf])
    digamma = paddle.digamma(paddle.to_tensor([0.0, -1.0])).numpy()
    assert digamma[0] == -np.inf and np.isnan(digamma[1])
    erfinv = paddle.erfinv(paddle.to_tensor([-1.0, 1.0, 1.5])).numpy()
    assert erfinv[0] == -np.inf and erfinv[1] == np.inf and np.isnan(erfinv[2])


def test_special_gradients():
    check_grads(paddle.expm1, np.array([-1.0, 0.0, 2.0]))
    check_grads(paddle.lgamma, np.array([-2.5, 0.4, 3.0]))
    check_grads(paddle.digamma, np.array([-0.5, 0.4, 7.0]), rtol=1e-4)
    check_grads(paddle.erfinv, np.array([-0.9, 0.0, 0.6]))
    check_grads(lambda t: paddle.logit(t, eps=0.1), np.array([0.05, 0.5, 0.7]))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_agrees_with_eager(backend):
    def f(a, y, u):
        return (paddle.linalg.solve(a, y).sum() + paddle.linalg.det(a).sum()
                + paddle.linalg.inv(a).mean() + paddle.lgamma(u).sum()
                + paddle.erfinv(u * 0.5).sum() + paddle.expm1(u).sum())

    args = [paddle.to_tensor(_well_conditioned(2, 3, 3)), paddle.to_tensor(np.ones((3, 2))),
            paddle.to_tensor(np.array([0.3, 1.5, 2.0]))]
    compiled = paddle.compile(f, backend=backend)
    np.testing.assert_allclose(compiled(*args).numpy(), f(*args).numpy(), rtol=1e-10)
