"""Differences from PaddlePaddle 3.3.1 found by running the same code under real Paddle
(CPU) in the less-travelled corners of the tensor API: reductions' positional
parameters and dtypes, the variance of integers, and the gradient of an einsum
operand that repeats a label. Each test checks against NumPy, finite differences or
a value derived by hand from the stated rule."""
import numpy as np
import pytest

import irflow as paddle


def test_sum_third_positional_parameter_is_dtype():
    """Paddle's signature is sum(x, axis, dtype, keepdim): ``paddle.sum(x, 0,
    'float64')`` sums over axis 0 into float64. irflow read 'float64' as keepdim (a
    truthy string): shape [1, 2] and int64."""
    x = paddle.to_tensor([[1, 2], [3, 4]])
    out = paddle.sum(x, 0, "float64")
    assert out.dtype == paddle.float64 and out.shape == [2]
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    method = x.sum(1, "float32", True)
    assert method.dtype == paddle.float32 and method.shape == [2, 1]
    np.testing.assert_array_equal(method.numpy(), [[3.0], [7.0]])
    # norm, nansum and count_nonzero sum internally; their keepdim still keeps
    y = paddle.to_tensor([[3.0, 4.0], [np.nan, 1.0]])
    assert paddle.norm(paddle.to_tensor([[3.0, 4.0]]), p=2, axis=1, keepdim=True).shape == [1, 1]
    assert paddle.linalg.vector_norm(y, p=1, axis=1, keepdim=True).shape == [2, 1]
    np.testing.assert_array_equal(paddle.nansum(y, 1, None, True).numpy(), [[7.0], [1.0]])
    np.testing.assert_array_equal(paddle.count_nonzero(y, 1, True).numpy(), [[2], [2]])


def test_sum_into_bool():
    """sum(dtype='bool') is whether the sum is nonzero, as Paddle's (it crashed: the
    sum op has no bool form)."""
    x = paddle.to_tensor([[0, 2], [0, 0]])
    out = paddle.sum(x, axis=1, dtype="bool")
    assert out.dtype == paddle.bool
    np.testing.assert_array_equal(out.numpy(), [True, False])


@pytest.mark.parametrize("unbiased", [True, False])
def test_var_and_std_of_ints_center_on_the_true_mean(unbiased):
    """var of an int tensor subtracted the int mean, which is truncated ([1, 2, 4, 0]
    has mean 1.75, taken as 1), so var was 11/3 instead of 8.75/3. Paddle's own
    integer var does the same and truncates the result (3), which contradicts the
    definition; irflow gives the variance, in float32."""
    data = np.array([1, 2, 4, 0])
    for dtype in ("int32", "int64"):
        x = paddle.to_tensor(data, dtype=dtype)
        var, std = paddle.var(x, unbiased=unbiased), paddle.std(x, unbiased=unbiased)
        assert var.dtype == std.dtype == paddle.float32
        ddof = 1 if unbiased else 0
        np.testing.assert_allclose(var.numpy(), np.var(data, ddof=ddof), rtol=1e-6)
        np.testing.assert_allclose(std.numpy(), np.std(data, ddof=ddof), rtol=1e-6)


def _einsum_finite_differences(equation, arrays, weights, k, eps=1e-6):
    grad = np.zeros_like(arrays[k])
    for index in np.ndindex(arrays[k].shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[k][index] += eps
        down[k][index] -= eps
        grad[index] = ((np.einsum(equation, *up) * weights).sum()
                       - (np.einsum(equation, *down) * weights).sum()) / (2 * eps)
    return grad


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ij", [(2, 2, 3)]),
    ("iii->i", [(2, 2, 2)]),
    ("iji->j", [(2, 3, 2)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("...ii->...i", [(4, 2, 2)]),
])
def test_einsum_gradient_of_an_operand_that_repeats_a_label(equation, shapes):
    """An operand with a repeated label (a diagonal, a trace) had no gradient: a
    ShapeError on backward, where Paddle gives one. The cotangent lands on the
    diagonal, 0 off it; checked against float64 finite differences."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out = paddle.einsum(equation, *xs)
    weights = rng.standard_normal(out.shape)
    grads = paddle.grad((out * paddle.to_tensor(weights)).sum(), xs)
    for k in range(len(arrays)):
        np.testing.assert_allclose(
            grads[k].numpy(), _einsum_finite_differences(equation, arrays, weights, k),
            atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_einsum_diagonal_gradient_compiled(backend):
    """The same gradient inside a compiled program: the cotangent of ``ii->i`` is
    diag(g)."""
    compiled = paddle.compile(_diag_grad, backend=backend)
    x = paddle.to_tensor(np.arange(9.0, dtype="float32").reshape(3, 3))
    np.testing.assert_array_equal(compiled(x).numpy(), np.diag([1.0, 2.0, 3.0]))


def _diag_grad(x):
    x.stop_gradient = False
    weighted = (paddle.einsum("ii->i", x) * paddle.to_tensor([1.0, 2.0, 3.0])).sum()
    return paddle.grad(weighted, [x])[0]
