"""Autograd API cases from a side-by-side hunt against PaddlePaddle 3.3.1: paddle.grad
with outputs that stop gradients, its errors, what compiled code cannot honour
(no_grad_vars, retain_grads), Tensor.detach_, and paddle.autograd.jacobian/hessian,
checked against hand-derived derivatives and central finite differences in float64."""
import numpy as np
import pytest

import irflow as paddle
from irflow.autograd import GraphError, UnusedInputError
from irflow.errors import ConversionError, ShapeError


def leaf(values):
    return paddle.to_tensor(np.asarray(values, dtype="float64"), stop_gradient=False)


def finite_jacobian(f, x0, eps=1e-6):
    """d f(x)[i] / d x[j] by central differences, f mapping a float64 array to one."""
    x0 = np.asarray(x0, dtype="float64")
    columns = []
    for j in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[j] = eps
        columns.append((np.asarray(f(x0 + e)) - np.asarray(f(x0 - e))).ravel() / (2 * eps))
    return np.stack(columns, axis=-1)


# ---------------------------------------------------------------- paddle.grad

def test_grad_skips_outputs_that_stop_gradients():
    # Paddle differentiates only the outputs that require a gradient; their
    # grad_outputs keep their positions: d/dx sum(x*x * v) = 2 x v
    x = leaf([1.0, 2.0])
    constant = paddle.to_tensor([1.0, 2.0], dtype="float64") * 2
    (g,) = paddle.grad([constant, x * x], x,
                       grad_outputs=[paddle.to_tensor([5.0, 5.0], dtype="float64"),
                                     paddle.to_tensor([1.0, 3.0], dtype="float64")])
    np.testing.assert_allclose(g.numpy(), [2.0, 12.0])


def test_grad_skips_outputs_that_stop_gradients_with_create_graph():
    x = leaf([1.0, 2.0])
    constant = paddle.to_tensor([1.0, 2.0], dtype="float64") * 2
    (g,) = paddle.grad([constant, x * x], x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [2.0, 2.0])


def test_grad_of_outputs_that_all_stop_gradients_reaches_no_input():
    x = leaf([1.0, 2.0])
    constant = paddle.to_tensor([1.0, 2.0], dtype="float64") * 2
    assert paddle.grad(constant, x, allow_unused=True) == [None]
    with pytest.raises(UnusedInputError, match="no output requires a gradient"):
        paddle.grad(constant, x)


def test_grad_of_an_unused_input_is_a_value_error_as_in_paddle():
    x, unused = leaf([1.0]), leaf([2.0])
    with pytest.raises(ValueError, match="allow_unused=True"):
        paddle.grad(x * 2, [x, unused])
    with pytest.raises(GraphError):  # still the autograd error it was
        paddle.grad(x * 2, [x, unused])


# ---------------------------------------------------------------- compiled code

def _held_constant(x):
    h = x * x
    return paddle.grad((h * x).sum(), x, no_grad_vars=[h])[0]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_grad_holds_no_grad_vars_constant(backend):
    # eagerly h = x*x is held constant: d/dx sum(h * x) = h = x*x; the program's
    # gradient went through h too (3 x*x), a silent wrong answer
    x = leaf([1.0, 2.0])
    np.testing.assert_allclose(_held_constant(x).numpy(), [1.0, 4.0])
    compiled = paddle.jit.to_static(_held_constant, full_graph=True, backend=backend)
    np.testing.assert_allclose(compiled(leaf([1.0, 2.0])).numpy(), [1.0, 4.0])
    np.testing.assert_allclose(compiled(leaf([3.0, -1.0])).numpy(), [9.0, 1.0])


def _held_constant_by_branch(x):
    if x.sum() > 0:
        h = x * x
    else:
        h = x * 2
    return paddle.grad((h * x).sum(), x, no_grad_vars=[h])[0]


def test_compiled_grad_holds_a_branch_result_constant():
    """h is the result of a tensor-dependent if: held constant whichever branch ran."""
    compiled = paddle.jit.to_static(_held_constant_by_branch, full_graph=True)
    for data in ([1.0, 2.0], [-1.0, -2.0]):
        np.testing.assert_allclose(compiled(leaf(data)).numpy(),
                                   _held_constant_by_branch(leaf(data)).numpy())


def test_compiled_retain_grads_refuses_rather_than_leave_grad_none():
    def f(x):
        h = x * x
        h.retain_grads()
        (h * 3).sum().backward()
        return h.grad

    x = leaf([1.0, 2.0])
    np.testing.assert_allclose(f(x).numpy(), [3.0, 3.0])
    with pytest.raises(ConversionError, match="retain_grads"):
        paddle.jit.to_static(f, full_graph=True)(x)


# ---------------------------------------------------------------- detach_

def test_detach_inplace_makes_a_leaf_that_stops_gradients():
    x = leaf([1.0, 2.0])
    h = x * 2
    before = (h * x).sum()  # recorded before detach_: d/dx (2x * x) = 4x
    assert h.detach_() is h
    assert h.stop_gradient and h.is_leaf
    after = (h * x).sum()   # h is a constant now: d/dx (h * x) = h = 2x
    (before + after).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])
    assert h.grad is None


# ---------------------------------------------------------------- jacobian, hessian

def test_jacobian_of_a_vector_function():
    # y = x**2 * x0: dy_i/dx_j = 2 x_i x0 [i == j] + x_i**2 [j == 0]
    x0 = np.array([1.0, 2.0, 3.0])
    x = leaf(x0)
    J = paddle.autograd.jacobian(x ** 2 * x[0], x)
    expected = np.diag(2 * x0 * x0[0])
    expected[:, 0] += x0 ** 2
    assert J.shape == [3, 3]
    np.testing.assert_allclose(J[:].numpy(), expected)
    np.testing.assert_allclose(J[1].numpy(), expected[1])
    np.testing.assert_allclose(J[:, 0].numpy(), expected[:, 0])
    np.testing.assert_allclose(J.numpy(), expected)  # a Tensor attribute: the matrix's
    np.testing.assert_allclose((J * 2).numpy(), 2 * expected)


def test_jacobian_matches_finite_differences():
    x0 = np.array([0.3, -1.2, 0.7])

    def f(x):
        return paddle.stack([paddle.sin(x[0] * x[1]), paddle.exp(x[2]) * x[0], x.norm()])

    J = paddle.autograd.jacobian(f(leaf(x0)), leaf(x0))  # another leaf: unrelated, zeros
    np.testing.assert_array_equal(J[:].numpy(), np.zeros((3, 3)))
    x = leaf(x0)
    J = paddle.autograd.jacobian(f(x), x)
    np.testing.assert_allclose(J[:].numpy(),
                               finite_jacobian(lambda v: f(paddle.to_tensor(v)).numpy(), x0),
                               rtol=1e-7, atol=1e-9)


def test_jacobian_of_zero_dim_tensors_leaves_their_axis_out():
    x = leaf([1.0, 2.0, 3.0])
    J = paddle.autograd.jacobian((x ** 2).sum(), x)
    assert J.shape == [3]
    np.testing.assert_allclose(J[:].numpy(), [2.0, 4.0, 6.0])
    s = leaf(2.0)
    J = paddle.autograd.jacobian(s ** 3, s)
    assert J.shape == []
    np.testing.assert_allclose((J * 1.0).numpy(), 12.0)  # 3 s**2
    with pytest.raises(IndexError):
        J[:]


def test_batched_jacobian_differentiates_each_sample_by_its_own_inputs():
    x0 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x = leaf(x0)
    y = paddle.stack([x[:, 0] * x[:, 1], x[:, 0] ** 2, x[:, 1]], axis=1)
    J = paddle.autograd.jacobian(y, x, batch_axis=0)
    a, b = x0[:, 0], x0[:, 1]
    zero, one = np.zeros(3), np.ones(3)
    expected = np.stack([np.stack([b, a], -1), np.stack([2 * a, zero], -1),
                         np.stack([zero, one], -1)], axis=1)
    assert J.shape == [3, 3, 2]
    np.testing.assert_allclose(J[:].numpy(), expected)
    np.testing.assert_allclose(J[:, 1].numpy(), expected[:, 1])
    J = paddle.autograd.jacobian((x ** 2).sum(axis=1), x, batch_axis=0)  # one output each
    assert J.shape == [3, 2]
    np.testing.assert_allclose(J[:].numpy(), 2 * x0)


def test_jacobian_of_lists_is_nested_tuples():
    x1, x2 = leaf([1.0, 2.0]), leaf([3.0, 4.0, 5.0])
    J = paddle.autograd.jacobian([x1 * 2, x2.sum() * x1], [x1, x2])
    np.testing.assert_allclose(J[0][0][:].numpy(), 2 * np.eye(2))
    np.testing.assert_allclose(J[0][1][:].numpy(), np.zeros((2, 3)))
    np.testing.assert_allclose(J[1][0][:].numpy(), 12 * np.eye(2))      # sum(x2) I
    np.testing.assert_allclose(J[1][1][:].numpy(), [[1.0] * 3, [2.0] * 3])  # x1_i


def test_jacobian_can_be_differentiated_again():
    # J = diag(3 x**2); d/dx sum(J**2) = d/dx sum(9 x**4) = 36 x**3
    x = leaf([1.0, 2.0])
    J = paddle.autograd.jacobian(x ** 3, x)
    (J[:] ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [36.0, 288.0])


def test_jacobian_rejects_what_paddle_rejects():
    x = leaf([[1.0, 2.0]])
    with pytest.raises(ShapeError, match="xs.ndim should be 0 or 1"):
        paddle.autograd.jacobian(x * 2, x)
    with pytest.raises(ValueError, match="batch_axis"):
        paddle.autograd.jacobian(x * 2, x, batch_axis=1)


def test_hessian_of_a_scalar_function():
    # y = sum(x**3) + x0 x1: H = diag(6 x) + [[0, 1], [1, 0]] in the first two
    x = leaf([1.0, 2.0, 3.0])
    H = paddle.autograd.hessian((x ** 3).sum() + x[0] * x[1], x)
    assert isinstance(H, paddle.autograd.Hessian) and H.shape == [3, 3]
    np.testing.assert_allclose(H[:].numpy(), [[6.0, 1.0, 0.0], [1.0, 12.0, 0.0],
                                              [0.0, 0.0, 18.0]])


def test_hessian_matches_finite_differences_of_the_gradient():
    x0 = np.array([0.4, -0.3, 1.1])

    def f(x):
        return paddle.logsumexp(x * x[0]) + paddle.tanh(x[1] * x[2])

    def gradient(v):
        x = leaf(v)
        return paddle.grad(f(x), x)[0].numpy()

    x = leaf(x0)
    np.testing.assert_allclose(paddle.autograd.hessian(f(x), x)[:].numpy(),
                               finite_jacobian(gradient, x0), rtol=1e-6, atol=1e-8)


def test_batched_hessian_and_hessian_of_several_inputs():
    x0 = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = leaf(x0)
    H = paddle.autograd.hessian((x ** 3).sum(axis=1) + x[:, 0] * x[:, 1], x, batch_axis=0)
    expected = np.stack([np.diag(6 * row) + np.array([[0.0, 1.0], [1.0, 0.0]]) for row in x0])
    assert H.shape == [2, 2, 2]
    np.testing.assert_allclose(H[:].numpy(), expected)
    # y = sum(x1**2) sum(x2) + sum(x2**3): H[i][j] differentiates by x_i then x_j
    x1, x2 = leaf([1.0, 2.0]), leaf([3.0, 4.0, 5.0])
    H = paddle.autograd.hessian((x1 ** 2).sum() * x2.sum() + (x2 ** 3).sum(), [x1, x2])
    np.testing.assert_allclose(H[0][0][:].numpy(), 24 * np.eye(2))
    np.testing.assert_allclose(H[0][1][:].numpy(), [[2.0] * 3, [4.0] * 3])
    np.testing.assert_allclose(H[1][0][:].numpy(), [[2.0, 4.0]] * 3)
    np.testing.assert_allclose(H[1][1][:].numpy(), np.diag([18.0, 24.0, 30.0]))


def test_hessian_needs_one_output_per_sample():
    x = leaf([1.0, 2.0])
    with pytest.raises(ShapeError, match="one element"):
        paddle.autograd.hessian(x * 2, x)


def test_jacobian_in_compiled_code_matches_eager():
    def f(x):
        return (paddle.autograd.jacobian(x ** 3, x)[:],
                paddle.autograd.hessian((x ** 3).sum(), x)[:])

    x = leaf([1.0, 2.0, 3.0])
    compiled = paddle.jit.to_static(f, full_graph=True)(x)
    np.testing.assert_allclose(compiled[0].numpy(), np.diag([3.0, 12.0, 27.0]))
    np.testing.assert_allclose(compiled[1].numpy(), np.diag([6.0, 12.0, 18.0]))


def test_paddle_autograd_names():
    a = paddle.autograd
    assert a.Function is a.PyLayer
    assert a.set_grad_enabled is paddle.set_grad_enabled
    assert a.is_grad_enabled is paddle.is_grad_enabled
    with a.set_grad_enabled(False):
        assert not a.is_grad_enabled()
