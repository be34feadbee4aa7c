"""Tensor methods Paddle has that irflow lacked: copy_, fill_diagonal_,
fill_diagonal_tensor(_), erfinv_ (values from NumPy or the defining rule, gradients
from the rule that an overwritten element passes no gradient back)."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ArgumentError, DTypeError


def test_copy_takes_value_and_returns_self():
    x = paddle.zeros([2])
    src = paddle.to_tensor([1.0, 2.0])
    assert x.copy_(src, True) is x
    src.add_(paddle.to_tensor(1.0))  # the copy does not follow later changes of src
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_copy_takes_the_source_shape():
    x = paddle.zeros([2, 2])
    x.copy_(paddle.to_tensor([1.0, 2.0, 3.0]))
    assert x.shape == [3]
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])


def test_copy_records_no_graph_from_the_source():
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    x = paddle.zeros([2])
    x.copy_(w * 2)
    assert x.stop_gradient and x.is_leaf


def test_copy_into_intermediate_passes_gradient_at_new_value():
    # y = 2w then y := c; loss = sum(y*y): dloss/dw = 2*c * dy/dw = 4c
    w = paddle.to_tensor([1.0, 1.0, 1.0], stop_gradient=False)
    y = w * 2
    c = np.array([1.0, 2.0, 3.0], np.float32)
    y.copy_(paddle.to_tensor(c))
    (y * y).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 4 * c)


def test_copy_into_parameter_under_no_grad():
    p = paddle.create_parameter([2], "float32")
    with paddle.no_grad():
        p.copy_(paddle.to_tensor([1.0, 2.0]))
    assert not p.stop_gradient
    np.testing.assert_array_equal(p.numpy(), [1.0, 2.0])


def test_copy_refuses_other_dtype_and_non_tensor():
    x = paddle.zeros([2], dtype="int64")
    with pytest.raises(DTypeError, match="copy_"):
        x.copy_(paddle.to_tensor([1.5, 2.0]))
    with pytest.raises(ArgumentError, match="copy_"):
        x.copy_(np.array([1, 2]))


@pytest.mark.parametrize("shape,wrap", [([3, 3], False), ([4, 3], False), ([3, 4], False),
                                        ([7, 3], True), ([5, 2], True), ([7, 3], False),
                                        ([3, 3, 3], False)])
def test_fill_diagonal_matches_numpy(shape, wrap):
    x = paddle.zeros(shape)
    assert x.fill_diagonal_(1.0, wrap=wrap) is x
    want = np.zeros(shape, np.float32)
    np.fill_diagonal(want, 1.0, wrap=wrap)
    np.testing.assert_array_equal(x.numpy(), want)


@pytest.mark.parametrize("shape,offset", [([3, 4], 1), ([3, 4], -1), ([4, 3], 2), ([2, 3], 5)])
def test_fill_diagonal_offset_moves_along_rows(shape, offset):
    # element (i, i + offset) of the first square block, where that column exists
    x = paddle.zeros(shape)
    x.fill_diagonal_(1.0, offset=offset)
    rows, cols = shape
    want = np.zeros(shape, np.float32)
    for i in range(min(rows, cols)):
        if 0 <= i + offset < cols:
            want[i, i + offset] = 1.0
    np.testing.assert_array_equal(x.numpy(), want)


def test_fill_diagonal_keeps_int_dtype_and_blocks_gradient():
    x = paddle.zeros([2, 2], dtype="int64")
    x.fill_diagonal_(2.7)
    assert x.dtype == paddle.int64
    np.testing.assert_array_equal(x.numpy(), [[2, 0], [0, 2]])
    w = paddle.ones([3, 3])
    w.stop_gradient = False
    y = w * 2
    y.fill_diagonal_(5.0)
    (y * y).sum().backward()  # d/dw of sum((2w)^2) off the diagonal: 8w; diagonal: 0
    np.testing.assert_array_equal(w.grad.numpy(), 8 * (1 - np.eye(3)))


def test_fill_diagonal_tensor_writes_diagonal_and_differentiates_both():
    x = paddle.zeros([2, 3, 3])
    x.stop_gradient = False
    y = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], stop_gradient=False)
    out = x.fill_diagonal_tensor(y, dim1=1, dim2=2)
    want = np.zeros([2, 3, 3], np.float32)
    want[:, [0, 1, 2], [0, 1, 2]] = y.numpy()
    np.testing.assert_array_equal(out.numpy(), want)
    weight = np.arange(18, dtype=np.float32).reshape([2, 3, 3])
    (out * paddle.to_tensor(weight)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), weight * (1 - np.eye(3)))
    np.testing.assert_array_equal(y.grad.numpy(), weight[:, [0, 1, 2], [0, 1, 2]])


def test_fill_diagonal_tensor_in_place_with_offset():
    x = paddle.zeros([3, 4])
    assert x.fill_diagonal_tensor_(paddle.to_tensor([1.0, 2.0, 3.0]), offset=1) is x
    want = np.zeros([3, 4], np.float32)
    want[[0, 1, 2], [1, 2, 3]] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(x.numpy(), want)


def test_erfinv_in_place_inverts_erf():
    values = [0.1, -0.5, 0.9]
    x = paddle.to_tensor(values)
    assert x.erfinv_() is x
    np.testing.assert_allclose([math.erf(v) for v in x.numpy()], values, rtol=1e-5)
