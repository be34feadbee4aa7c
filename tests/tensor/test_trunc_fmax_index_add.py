"""trunc, fmax, fmin and index_add, as Paddle 3.3.1 computes them (its numbers printed
on the same inputs), eager and compiled."""
import numpy as np
import pytest

import irflow as paddle

NAN = float("nan")


def test_trunc_rounds_toward_zero_and_keeps_integers():
    x = paddle.to_tensor([-1.7, -0.5, 0.0, 0.5, 2.9, NAN])
    # Paddle 3.3.1: [-1.0, -0.0, 0.0, 0.0, 2.0, nan]; an int64 tensor stays as it is
    out = paddle.trunc(x).numpy()
    np.testing.assert_array_equal(out, [-1.0, -0.0, 0.0, 0.0, 2.0, NAN])
    assert np.signbit(out[1])
    ints = paddle.trunc(paddle.to_tensor([3, -2]))
    assert ints.dtype == paddle.int64 and ints.numpy().tolist() == [3, -2]


def test_fmax_and_fmin_ignore_nan():
    a = paddle.to_tensor([1.0, NAN, 3.0, NAN])
    b = paddle.to_tensor([2.0, 5.0, NAN, NAN])
    # Paddle 3.3.1: fmax [2, 5, 3, nan], fmin [1, 5, 3, nan]
    np.testing.assert_array_equal(paddle.fmax(a, b).numpy(), [2.0, 5.0, 3.0, NAN])
    np.testing.assert_array_equal(a.fmin(b).numpy(), [1.0, 5.0, 3.0, NAN])


def test_fmax_gives_a_tie_and_its_gradient_to_x():
    x = paddle.to_tensor([1.0, 4.0, 3.0], stop_gradient=False)
    y = paddle.to_tensor([2.0, 4.0, 1.0], stop_gradient=False)
    paddle.fmax(x, y).sum().backward()
    # Paddle 3.3.1: x.grad [0, 1, 1], y.grad [1, 0, 0]
    assert x.grad.numpy().tolist() == [0.0, 1.0, 1.0]
    assert y.grad.numpy().tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_index_add_adds_repeated_indices_up(backend):
    def f(x, v):
        return paddle.index_add(x, paddle.to_tensor([0, 2, 0]), 0, v)
    run = f if backend is None else paddle.compile(f, backend=backend)
    x = paddle.ones([3, 4])
    v = paddle.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))
    # Paddle 3.3.1: [[9, 11, 13, 15], [1, 1, 1, 1], [5, 6, 7, 8]]
    np.testing.assert_array_equal(run(x, v).numpy(),
                                  [[9, 11, 13, 15], [1, 1, 1, 1], [5, 6, 7, 8]])


def test_index_add_along_an_inner_axis_with_alpha_and_gradients():
    x = paddle.zeros([2, 3])
    v = paddle.to_tensor(np.arange(4, dtype="float32").reshape(2, 2))
    # Paddle 3.3.1: [[1, 0, 0], [3, 0, 2]]
    np.testing.assert_array_equal(
        paddle.index_add(x, paddle.to_tensor([2, 0]), 1, v).numpy(), [[1, 0, 0], [3, 0, 2]])
    np.testing.assert_array_equal(
        x.index_add(paddle.to_tensor([2, 0]), 1, v, alpha=2).numpy(), [[2, 0, 0], [6, 0, 4]])
    xs = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    vs = paddle.to_tensor([10.0, 20.0], stop_gradient=False)
    out = paddle.index_add(xs, paddle.to_tensor([1, 1]), 0, vs)
    (out * paddle.to_tensor([1.0, 2.0, 3.0])).sum().backward()
    # Paddle 3.3.1: xs.grad [1, 2, 3], vs.grad [2, 2]
    assert xs.grad.numpy().tolist() == [1.0, 2.0, 3.0]
    assert vs.grad.numpy().tolist() == [2.0, 2.0]
