"""Paddle APIs irflow lacked: crop, as_strided, shard_index. Expected values come
from NumPy slicing and stride arithmetic, and from Paddle's documented rule for
shard_index (shard size ``ceil(index_num / nshards)``)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from irflow.tensor.manipulation import as_strided, crop, shard_index


def _x(dtype="float64"):
    return paddle.to_tensor(np.arange(12.0).reshape(3, 4), dtype=dtype, stop_gradient=False)


@pytest.mark.parametrize("shape,offsets,expected", [
    ([2, 2], [1, 1], np.s_[1:3, 1:3]),
    ([-1, 2], [0, 2], np.s_[0:3, 2:4]),
    ([2, 3], None, np.s_[0:2, 0:3]),
    ([-1, -1], [1, 1], np.s_[1:3, 1:4]),
])
def test_crop_is_a_slice(shape, offsets, expected):
    x = _x()
    out = crop(x, shape=shape, offsets=offsets)
    np.testing.assert_array_equal(out.numpy(), np.arange(12.0).reshape(3, 4)[expected])
    out.sum().backward()
    grad = np.zeros((3, 4))
    grad[expected] = 1
    np.testing.assert_array_equal(x.grad.numpy(), grad)


def test_crop_takes_tensors_and_refuses_overreach():
    out = crop(_x(), shape=paddle.to_tensor([2, 3]), offsets=paddle.to_tensor([1, 0]))
    np.testing.assert_array_equal(out.numpy(), np.arange(12.0).reshape(3, 4)[1:3, 0:3])
    with pytest.raises(ShapeError, match="reaches past"):
        crop(_x(), shape=[2, 2], offsets=[2, 0])


def test_as_strided_reads_by_element_strides_and_byte_offset():
    x = _x()
    out = as_strided(x, [3, 3], [1, 2], offset=8)  # 8 bytes: one float64
    expected = np.lib.stride_tricks.as_strided(np.arange(1.0, 12.0), (3, 3), (8, 16))
    np.testing.assert_array_equal(out.numpy(), expected)
    out.sum().backward()
    reads = np.bincount((1 + np.arange(3)[:, None] + 2 * np.arange(3)).ravel(), minlength=12)
    np.testing.assert_array_equal(x.grad.numpy().ravel(), reads)  # summed over overlaps


def test_as_strided_float32_and_bounds():
    out = as_strided(_x("float32"), [2, 2], [1, 3], offset=4)
    np.testing.assert_array_equal(out.numpy(), [[1, 4], [2, 5]])
    with pytest.raises(ShapeError):
        as_strided(_x(), [2, 2], [4, 8])
    with pytest.raises(ValueError, match="bytes"):
        as_strided(_x(), [2], [1], offset=3)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_shard_index(dtype):
    ids = np.array([[0], [6], [7], [13], [14], [20]])
    out = shard_index(paddle.to_tensor(ids, dtype=dtype), index_num=21, nshards=3, shard_id=1,
                      ignore_value=-5)
    size = 7  # ceil(21 / 3): shard 1 holds ids 7..13
    expected = np.where((ids >= size) & (ids < 2 * size), ids - size, -5)
    assert str(out.dtype).endswith(dtype)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_scatter_overwrite_gradient_reaches_only_the_landed_duplicate():
    """Rows 0 and 2 of updates both target x's row 1; the last lands, so by finite
    differences row 0 changes nothing and its gradient is 0 (Paddle 3.3.1 gives it
    the gradient too, contradicting that)."""
    x = paddle.to_tensor(np.zeros((4, 2)), stop_gradient=False)
    u = paddle.to_tensor(np.arange(6.0).reshape(3, 2), stop_gradient=False)
    w = np.arange(8.0).reshape(4, 2)
    out = paddle.scatter(x, paddle.to_tensor([1, 3, 1]), u)
    (out * paddle.to_tensor(w)).sum().backward()
    np.testing.assert_array_equal(out.numpy()[1], [4.0, 5.0])
    np.testing.assert_array_equal(u.grad.numpy(), [[0, 0], w[3], w[1]])
    np.testing.assert_array_equal(x.grad.numpy(), [w[0], [0, 0], w[2], [0, 0]])
