"""Eager autograd cases where irflow gave a different answer from PaddlePaddle 3.3.1
without an error. The expected values were checked against Paddle 3.3.1 on the CPU
and are small enough to follow by hand."""
import numpy as np

import irflow as paddle


def leaf(values):
    return paddle.to_tensor(np.asarray(values, dtype="float32"), stop_gradient=False)


def test_gradient_taken_after_clear_grad_keeps_its_zeros():
    # Paddle zeroes .grad in place, and the next backward() makes a new gradient:
    # a Tensor read from .grad before that backward still holds zeros
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    before_clear = x.grad
    x.clear_grad()
    after_clear = x.grad
    (x * 3).sum().backward()
    np.testing.assert_array_equal(before_clear.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(after_clear.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_gradient_still_accumulates_in_place_without_clearing():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    np.testing.assert_array_equal(first.numpy(), [5.0, 7.0, 9.0])
    assert first is x.grad


def test_optimizer_clear_grad_then_backward_leaves_an_earlier_grad_at_zero():
    w = leaf([1.0, 2.0])
    opt = paddle.optimizer.SGD(0.1, parameters=[w])
    (w * 2).sum().backward()
    opt.clear_grad()
    taken = w.grad
    (w * w).sum().backward()
    np.testing.assert_array_equal(taken.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0])


def test_autograd_backward_takes_one_tensor_and_one_grad_tensor():
    x = leaf([1.0, 2.0, 3.0])
    paddle.autograd.backward((x * x).sum())
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    y = leaf([1.0, 2.0, 3.0])
    paddle.autograd.backward(y * y, paddle.to_tensor(np.array([1.0, 0.0, 2.0], "float32")))
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 0.0, 12.0])


def test_create_graph_gradient_of_a_linear_function_requires_a_gradient():
    # Paddle: stop_gradient=False, and its own gradient is None (allow_unused)
    x = leaf([1.5, 2.0, -3.0])
    (g,) = paddle.grad((x * 3).sum(), x, create_graph=True)
    assert g.stop_gradient is False
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0, 3.0])
    assert paddle.grad(g.sum(), x, allow_unused=True) == [None]


def test_create_graph_gradient_with_a_constant_part_still_differentiates():
    # d/dx of sum(3x + x^3) is 3 + 3x^2, whose gradient is 6x
    x = leaf([1.5, 2.0, -3.0])
    (g,) = paddle.grad((x * 3 + x * x * x).sum(), x, create_graph=True)
    (h,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [9.0, 12.0, -18.0])


def test_create_graph_does_not_change_a_callers_grad_outputs_tensor():
    x = leaf([1.0, 2.0])
    y = x * 1
    seed = paddle.to_tensor(np.array([4.0, 5.0], "float32"))
    (g,) = paddle.grad(y, y, grad_outputs=seed, create_graph=True)
    assert seed.stop_gradient is True
    assert g.stop_gradient is False
    np.testing.assert_array_equal(g.numpy(), [4.0, 5.0])


def test_pow_with_zero_exponent_has_zero_gradient_at_zero_base():
    # x ** 0 is 1 everywhere: Paddle's gradient is 0, not 0 * inf = NaN at x == 0
    x = leaf([0.0, 2.0, -1.0])
    paddle.pow(x, 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    base, exponent = leaf([0.0, 0.0, 3.0]), leaf([0.0, 2.0, 0.0])
    paddle.pow(base, exponent).sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), [0.0, 0.0, 0.0])


def test_pow_exponent_gradient_is_nan_for_a_negative_base():
    # d/dy x ** y = x ** y * log(x): NaN for x < 0 in Paddle, not a silent 0 that
    # hides it in a broadcast sum; 0 at x == 0
    x = leaf([0.0, -2.0, 4.0])
    y = leaf([0.5])
    paddle.pow(x, y).sum().backward()
    assert np.isnan(y.grad.numpy()).all()
    x2, y2 = leaf([0.0, 4.0]), leaf([0.5, 0.5])
    paddle.pow(x2, y2).sum().backward()
    np.testing.assert_allclose(y2.grad.numpy(), [0.0, 2.0 * np.log(4.0)], rtol=1e-6)


def test_retain_grads_keeps_an_intermediates_latest_gradient():
    """Paddle 3.3.1: y.grad after each backward is that backward's gradient of y (an
    intermediate's is replaced, not accumulated); the leaf accumulates."""
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * 3
    y.retain_grads()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    np.testing.assert_array_equal(y.grad.numpy(), [6.0, 12.0])
    z.backward()
    np.testing.assert_array_equal(y.grad.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(x.grad.numpy(), [36.0, 72.0])
    x.retain_grads()  # a leaf: nothing changes
    np.testing.assert_array_equal(x.grad.numpy(), [36.0, 72.0])
