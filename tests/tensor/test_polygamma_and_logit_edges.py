"""polygamma left of 1/2 (its reflection formula) and logit's gradient at 0 and 1.

polygamma's references come from closed forms: psi^(n)(1/2) = (-1)**(n+1) n!
(2**(n+1) - 1) zeta(n + 1), carried down to negative half-integers by the recurrence
psi^(n)(x) = psi^(n)(x + 1) - (-1)**n n! / x**(n+1).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import irflow as paddle

ZETA = {3: 1.2020569031595942, 5: 1.0369277551433699}


def _polygamma_at_half_integer(x: float, n: int) -> float:
    """psi^(n)(x) for x = 1/2 - k (k >= 0) from the closed form at 1/2."""
    value = (-1) ** (n + 1) * math.factorial(n) * (2 ** (n + 1) - 1) * ZETA[n + 1]
    point = 0.5
    while point > x:
        point -= 1
        value -= (-1) ** n * math.factorial(n) / point ** (n + 1)
    return value


@pytest.mark.parametrize("n", [2, 4])
def test_polygamma_at_negative_half_integers(n):
    # there cot(pi x), in the reflection, is 0: pi x rounded made it the rounding error
    # times pi**(n+1), which swamped the result (float32: 2e-4 off at n=2, x=-2.5).
    # (The recurrence cancels digits: the reference is good to 1e-11 at these points.)
    points = [-0.5, -2.5, -3.5]
    want = [_polygamma_at_half_integer(x, n) for x in points]
    got = paddle.polygamma(paddle.to_tensor(points, dtype="float32"), n).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_even_polygamma_is_symmetric_about_half_integers(n):
    # psi^(n)(1 - x) + (-1)**(n+1) psi^(n)(x) = (-1)**n pi d^n/dx^n cot(pi x), and the
    # even derivatives of cot(pi x) vanish at half-integers: psi^(n)(x) = psi^(n)(1 - x)
    # there, 1 - x >= 1/2 needing no reflection (float32 polygamma(-100.5, 2) was off
    # sevenfold)
    points = np.array([-10.5, -30.5, -100.5])
    mirrored = paddle.polygamma(paddle.to_tensor(1 - points), n).numpy()
    got = paddle.polygamma(paddle.to_tensor(points, dtype="float32"), n).numpy()
    np.testing.assert_allclose(got, mirrored, rtol=2e-5)


def test_polygamma_gradient_at_a_negative_half_integer():
    # d/dx psi^(1)(x) = psi^(2)(x)
    x = paddle.to_tensor([-2.5, -3.5], stop_gradient=False)
    (grad,) = paddle.grad(paddle.polygamma(x, 1).sum(), x)
    want = [_polygamma_at_half_integer(v, 2) for v in (-2.5, -3.5)]
    np.testing.assert_allclose(grad.numpy(), want, rtol=2e-5)


@pytest.mark.parametrize("eps", [None, 0.0])
def test_logit_gradient_is_infinite_at_zero_and_one(eps):
    # d/dx log(x / (1 - x)) = 1 / (x (1 - x)): +inf at both ends, as Paddle's
    inside = np.float32([1e-6, 0.25, 0.4999, 0.5001, 1 - 1e-6])
    x = paddle.to_tensor(np.concatenate([[0.0, 1.0], inside]).astype("float32"),
                         stop_gradient=False)
    out = paddle.logit(x, eps=eps)
    np.testing.assert_array_equal(out.numpy()[:2], [-np.inf, np.inf])
    # inside, the quotient formula in float32, as before and as Paddle's kernel
    np.testing.assert_allclose(out.numpy()[2:], np.log(inside / (1 - inside)), rtol=1e-6)
    (grad,) = paddle.grad(out.sum(), x)
    np.testing.assert_allclose(grad.numpy(),
                               np.concatenate([[np.inf, np.inf], 1 / (inside * (1 - inside))]),
                               rtol=1e-5)
