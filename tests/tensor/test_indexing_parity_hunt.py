"""Indexing, scatter and search ops where irflow gave another answer than Paddle 3.3.1
without an error. Each test states Paddle's numbers; references are NumPy."""
import numpy as np
import pytest

import irflow as paddle

NAN = float("nan")


def test_unique_counts_every_nan_as_distinct():
    v = np.array([3.0, 1.0, NAN, 2.0, 1.0, -np.inf, NAN, 3.0], np.float32)
    # Paddle 3.3.1: [-inf, 1, 2, 3, nan, nan] (NumPy's default merged the NaNs: 5 values)
    out, index, inverse, counts = paddle.unique(
        paddle.to_tensor(v), return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(v, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=False)
    np.testing.assert_array_equal(out.numpy(), want[0])
    assert out.shape == [6]
    for got, expected in zip((index, inverse, counts), want[1:]):
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_unique_of_nans_compiled(backend):
    run = paddle.unique if backend is None else paddle.compile(paddle.unique, backend=backend)
    out = run(paddle.to_tensor([NAN, 1.0, NAN]))
    np.testing.assert_array_equal(out.numpy(), [1.0, NAN, NAN])


def _landed_gradient(index, weights, axis):
    """NumPy reference: put_along_axis's value gradient with repeated indices, which
    goes to the write that lands (the last one along the axis) alone."""
    grad = np.zeros(index.shape, weights.dtype)
    for pos in np.ndindex(*index.shape):
        later = (pos[:axis] + (j,) + pos[axis + 1:] for j in range(pos[axis] + 1,
                                                                   index.shape[axis]))
        if all(index[p] != index[pos] for p in later):
            target = pos[:axis] + (index[pos],) + pos[axis + 1:]
            grad[pos] = weights[target]
    return grad


@pytest.mark.parametrize("axis, x_shape, index", [
    (1, (2, 3), [[0, 0, 1], [2, 2, 2]]),
    (0, (3, 3), [[1, 0, 2], [1, 1, 2]]),
])
def test_put_along_axis_gives_a_repeated_index_gradient_to_the_write_that_lands(
        axis, x_shape, index):
    rng = np.random.default_rng(0)
    index = np.array(index, np.int64)
    x0 = rng.standard_normal(x_shape).astype(np.float32)
    v0 = rng.standard_normal(index.shape).astype(np.float32)
    w = rng.standard_normal(x_shape).astype(np.float32)
    x = paddle.to_tensor(x0, stop_gradient=False)
    v = paddle.to_tensor(v0, stop_gradient=False)
    out = paddle.put_along_axis(x, paddle.to_tensor(index), v, axis)
    (out * paddle.to_tensor(w)).sum().backward()
    want = x0.copy()
    np.put_along_axis(want, index, v0, axis)
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_allclose(v.grad.numpy(), _landed_gradient(index, w, axis))
    cleared = w.copy()
    np.put_along_axis(cleared, index, 0.0, axis)
    np.testing.assert_allclose(x.grad.numpy(), cleared)


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_put_along_axis_repeated_index_gradient_compiled(backend):
    def f(x, v):
        return paddle.put_along_axis(x, paddle.to_tensor([[0, 0, 1]]), v, 1)
    run = f if backend is None else paddle.compile(f, backend=backend)
    x = paddle.to_tensor([[1.0, 2.0, 3.0]], stop_gradient=False)
    v = paddle.to_tensor([[5.0, 6.0, 7.0]], stop_gradient=False)
    out = run(x, v)
    (out * paddle.to_tensor([[1.0, 2.0, 3.0]])).sum().backward()
    # Paddle 3.3.1: out [[6, 7, 3]], x.grad [[0, 0, 3]], v.grad [[0, 1, 2]] (it was
    # [[1, 1, 2]]: both writes to slot 0 took its gradient)
    np.testing.assert_array_equal(out.numpy(), [[6.0, 7.0, 3.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0, 3.0]])
    np.testing.assert_array_equal(v.grad.numpy(), [[0.0, 1.0, 2.0]])


def test_put_along_axis_broadcast_value_gradient_counts_landed_writes():
    x = paddle.to_tensor(np.zeros((2, 3), np.float32), stop_gradient=False)
    v = paddle.to_tensor(2.0, stop_gradient=False)
    out = paddle.put_along_axis(x, paddle.to_tensor([[1, 1]]), v, 1)
    (out * paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))).sum().backward()
    # Paddle 3.3.1: v.grad 5 (one landed write per row: 1 + 4), not 10
    assert float(v.grad) == 5.0


def test_take_along_axis_broadcasts_arr_to_the_index():
    arr = np.array([[1.0, 2.0, 3.0]], np.float32)
    index = np.array([[0, 0], [2, 0]], np.int64)
    x = paddle.to_tensor(arr, stop_gradient=False)
    out = paddle.take_along_axis(x, paddle.to_tensor(index), 1)
    # Paddle 3.3.1: [[1, 1], [3, 1]] (irflow raised a ShapeError)
    np.testing.assert_array_equal(out.numpy(),
                                  np.take_along_axis(np.broadcast_to(arr, (2, 3)), index, 1))
    (out * paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    # Paddle 3.3.1: x.grad [[7, 0, 3]]
    np.testing.assert_array_equal(x.grad.numpy(), [[7.0, 0.0, 3.0]])
