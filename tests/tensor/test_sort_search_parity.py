"""Sorting and searching at the edges Paddle 3.3.1 accepts: 0-D tensors (one element,
so sorted it is itself and its index is 0), k out of range for topk, and an axis
or k given as a one-element int tensor (Paddle reads its value)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import OutOfRangeError, ShapeError


def _scalar(value=3.0):
    return paddle.to_tensor(np.float32(value))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_of_a_0d_tensor(descending):
    x = _scalar()
    out = paddle.sort(x, descending=descending)
    assert out.shape == [] and out.item() == 3.0
    index = paddle.argsort(x, axis=0, descending=descending)
    assert index.shape == [] and index.dtype == paddle.int64 and index.item() == 0


def test_sort_of_a_0d_tensor_is_a_copy_with_its_gradient():
    x = paddle.to_tensor(np.float32(2.0), stop_gradient=False)
    out = paddle.sort(x)
    assert out is not x
    (out * 5).backward()
    assert x.grad.item() == 5.0


def test_topk_of_a_0d_tensor():
    value, index = paddle.topk(_scalar(), 1)
    assert value.shape == [] and value.item() == 3.0
    assert index.shape == [] and index.item() == 0


@pytest.mark.parametrize("fn", [paddle.sort, paddle.argsort])
def test_0d_axis_must_be_0_or_minus_1(fn):
    with pytest.raises(ShapeError, match="0-D"):
        fn(_scalar(), axis=1)


@pytest.mark.parametrize("k", [0, 4])
def test_topk_refuses_k_outside_the_axis(k):
    # Paddle: "x has only 3 element, can not find 4 top values"; irflow used to
    # return the 3 it had
    x = paddle.to_tensor(np.array([1.0, 3.0, 2.0], np.float32))
    with pytest.raises(OutOfRangeError, match="k must be in"):
        paddle.topk(x, k)


def test_topk_k_checked_against_the_chosen_axis():
    x = paddle.to_tensor(np.zeros([2, 5], np.float32))
    assert paddle.topk(x, 5)[0].shape == [2, 5]
    with pytest.raises(OutOfRangeError):
        paddle.topk(x, 3, axis=0)


def test_argmax_and_argmin_take_a_tensor_axis():
    data = np.array([[1.0, 7.0, 3.0], [9.0, 2.0, 4.0]], np.float32)
    x = paddle.to_tensor(data)
    axis = paddle.to_tensor(1)
    np.testing.assert_array_equal(paddle.argmax(x, axis=axis).numpy(), data.argmax(1))
    np.testing.assert_array_equal(paddle.argmin(x, axis=axis).numpy(), data.argmin(1))


def test_a_float_tensor_axis_is_refused():
    x = paddle.to_tensor(np.ones([2, 3], np.float32))
    with pytest.raises(ValueError, match="axis must be an int"):
        paddle.argmax(x, axis=paddle.to_tensor(1.0))
