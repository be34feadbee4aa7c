"""Tensor math, creation and manipulation calls where irflow differed from Paddle 3.3.1
(a wrong length or dtype, or an error where Paddle computes). References are NumPy,
finite differences, or the rule Paddle documents, stated in each test."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from tests.nn.gradcheck import check_grads


def _arange_length(start, stop, step, dtype: str) -> int:
    """Paddle's arange length rule: ceil((stop - start) / step) with the bounds and the
    arithmetic in the result dtype."""
    f = np.dtype(dtype).type
    return int(np.ceil((f(stop) - f(start)) / f(step)))


@pytest.mark.parametrize("bounds, dtype", [((1, 2.2, 0.3), "float32"), ((0, 1, 0.1), "float32"),
                                           ((-3, 3.3, 0.7), "float32"),
                                           ((10, 0, -0.3), "float32"),
                                           ((1, 2.2, 0.3), "float64")])
def test_float_arange_length_is_computed_in_its_dtype(bounds, dtype):
    # arange(1, 2.2, 0.3) has 4 elements in float32: in float64 the quotient is
    # 4.000000000000001, which gave a 5th element equal to the excluded stop
    out = paddle.arange(*bounds, dtype=dtype)
    assert out.dtype == dtype
    assert out.shape == [_arange_length(*bounds, dtype)]
    start, _, step = (np.dtype(dtype).type(v) for v in bounds)
    np.testing.assert_allclose(out.numpy(), start + step * np.arange(out.shape[0]),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("bounds, dtype", [((0, 5, 1.5), "int64"), ((-2.5, 3, 1), "int32"),
                                           ((0.5, 3), "int32"), ((7.9, -1.2, -2.7), "int64")])
def test_int_arange_truncates_its_bounds_first(bounds, dtype):
    """With an int dtype each bound is converted to it (toward zero) before counting:
    arange(0, 5, 1.5, dtype='int64') is range(0, 5, 1)."""
    out = paddle.arange(*bounds, dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), np.arange(*(int(v) for v in bounds)))


def test_int_arange_with_a_step_truncated_to_zero_is_refused():
    with pytest.raises(ShapeError, match="step must not be 0"):
        paddle.arange(0, 3, 0.5, dtype="int64")


@pytest.mark.parametrize("dtype, summed", [("int8", "int8"), ("int16", "int16"),
                                           ("uint8", "uint8"), ("int32", "int64"),
                                           ("bool", "int64")])
def test_sum_dtype_follows_paddles_documented_rule(dtype, summed):
    """Paddle documents sum's dtype as x's, but int64 for bool and int32 inputs: an
    int8 sum wraps around, as int8 addition does."""
    v = np.array([100, 100, 1]).astype(dtype)
    x = paddle.to_tensor(v)
    want = v.sum(dtype=summed)
    for out in (paddle.sum(x), x.sum(axis=0), paddle.sum(x, keepdim=True)):
        assert out.dtype == summed
        assert out.numpy().reshape(()) == want


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("decimals", [2, 1, -1, 3])
def test_round_with_decimals_matches_numpy(dtype, decimals):
    v = np.array([1.2345, 2.5, 0.125, -1.005, 12345.678, 0.375, 15, 25, 35], dtype)
    out = paddle.round(paddle.to_tensor(v), decimals=decimals)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), np.round(v, decimals))
    np.testing.assert_array_equal(paddle.to_tensor(v).round(decimals).numpy(),
                                  np.round(v, decimals))


def test_round_with_decimals_has_zero_gradient_and_keeps_ints():
    x = paddle.to_tensor([0.123, 4.567], stop_gradient=False)
    paddle.round(x, decimals=2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0])
    ints = paddle.to_tensor([15, 25], dtype="int64")
    np.testing.assert_array_equal(paddle.round(ints, decimals=-1).numpy(), [15, 25])


@pytest.mark.parametrize("source, destination", [([0, 1], [-1, 0]), ([0, 2], [2, 0]),
                                                 ((1,), (0,)), (-1, 0), ([2, 0, 1], [0, 1, 2])])
def test_moveaxis_takes_lists_of_axes(source, destination):
    a = np.arange(24.0).reshape(2, 3, 4)
    out = paddle.moveaxis(paddle.to_tensor(a), source, destination)
    np.testing.assert_array_equal(out.numpy(), np.moveaxis(a, source, destination))


def test_moveaxis_gradient_and_mismatched_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    check_grads(lambda x: paddle.moveaxis(x, [0, 1], [-1, 0]), a)
    with pytest.raises(ShapeError, match="moveaxis"):
        paddle.moveaxis(paddle.to_tensor(a), [0, 1], [0])


@pytest.mark.parametrize("x_shape, y_shape", [([2], [1]), ([2], [3]), ([1, 2], [2])])
def test_equal_all_of_different_shapes_is_false(x_shape, y_shape):
    """Paddle's equal_all is true only for one shape and equal elements; it does not
    broadcast (ones [2] and ones [1] are not equal) nor raise."""
    out = paddle.equal_all(paddle.ones(x_shape), paddle.ones(y_shape))
    assert out.dtype == paddle.bool
    assert out.shape == []
    assert not out.item()
    assert paddle.equal_all(paddle.ones([2]), paddle.ones([2])).item()


MASK_WITH_INTS = [
    lambda m, i: (m([True, False]), i([2])),
    lambda m, i: (i([1]), m([True, False, True])),
    lambda m, i: (slice(None), m([True, False, True]), slice(None), i([0, 4])),
    lambda m, i: (m([[True, False, False], [False, True, False]]), i([1, 3])),
    lambda m, i: (1, m([True, False, True]), i([0, 1])),
]


@pytest.mark.parametrize("make", MASK_WITH_INTS)
def test_bool_mask_beside_int_tensor_indices_reads_as_numpy(make):
    """A bool mask combined with int tensors indexes as its nonzero positions, as in
    NumPy and Paddle (irflow refused it)."""
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    index = make(lambda v: paddle.to_tensor(v), lambda v: paddle.to_tensor(v, dtype="int64"))
    want = a[make(np.array, np.array)]
    np.testing.assert_array_equal(paddle.to_tensor(a)[index].numpy(), want)


def test_bool_mask_beside_int_tensor_gradient_and_assignment():
    a = np.arange(24.0).reshape(2, 3, 4)
    mask, idx = paddle.to_tensor([True, False, True]), paddle.to_tensor([1, 3])
    check_grads(lambda x: x[:, mask, idx], a)
    x = paddle.to_tensor(a)
    x[:, mask, idx] = -1.0
    want = a.copy()
    want[:, np.array([True, False, True]), np.array([1, 3])] = -1.0
    np.testing.assert_array_equal(x.numpy(), want)


def test_bool_mask_beside_int_tensor_of_wrong_length_is_an_index_error():
    x = paddle.to_tensor(np.arange(24.0).reshape(2, 3, 4))
    with pytest.raises(IndexError, match="does not match"):
        x[paddle.to_tensor([True, False, True]), paddle.to_tensor([1])]
