"""x[index] and x[index] = value on eager tensors, against NumPy: basic indexing
(ints, slices with negative steps, None, Ellipsis), integer tensor (and list)
indices, assignment with broadcasting, through bool masks and tensor indices, and
the gradients of all of them. Where Paddle departs from NumPy (ints next to tensor
indices are basic indices, applied first) the tests encode Paddle's rule."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import irflow as paddle
from irflow.errors import IrflowError
from tests.nn.gradcheck import check_grads

A = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


def idx(values):
    return paddle.to_tensor(np.asarray(values, dtype=np.int64))


@st.composite
def basic_indices(draw, shape=A.shape):
    """Index tuples of ints, slices (any steps), None and at most one Ellipsis."""
    items, axis = [], 0
    ellipsis = draw(st.booleans())
    while axis < len(shape) and draw(st.integers(0, 4)):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none"]))
        if kind == "none":
            items.append(None)
            continue
        n = shape[axis]
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
            items.append(slice(draw(bound), draw(bound), step))
        axis += 1
    if ellipsis:
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


@given(basic_indices())
def test_basic_indexing_matches_numpy(index):
    x = paddle.to_tensor(A)
    out = x[index]
    expected = A[index]
    assert out.shape == list(expected.shape) and out.dtype == paddle.float32
    np.testing.assert_array_equal(out.numpy(), expected)


@given(basic_indices(), st.booleans())
def test_basic_assignment_matches_numpy(index, scalar):
    x = paddle.to_tensor(A)
    target = A.copy()
    region = target[index]
    if scalar:
        value = 7.5
    elif region.ndim:
        value = np.arange(region.shape[-1], dtype=np.float32) - 100   # broadcast over rows
    else:
        value = np.float32(-100)
    target[index] = value
    x[index] = value if scalar else paddle.to_tensor(value)
    np.testing.assert_array_equal(x.numpy(), target)


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (1, -1, 3), (slice(None), 1), (Ellipsis, 2), (0, Ellipsis),
    (slice(None, None, -1),), (slice(None), slice(None, None, -2)), (slice(-1, 0, -1),),
    (None,), (slice(None), None, 1), (Ellipsis, None), (None, Ellipsis, None),
    (slice(1, 100),), (slice(2, 1),), (slice(5, None),), Ellipsis, (),
])
def test_listed_basic_indices(index):
    out = paddle.to_tensor(A)[index]
    np.testing.assert_array_equal(out.numpy(), A[index])
    assert out.shape == list(A[index].shape)


@pytest.mark.parametrize("make_index", [
    lambda: idx([1, 0, 1]), lambda: idx([-1]), lambda: idx([[1, 0], [0, 0]]),
    lambda: (slice(None), idx([2, 0])), lambda: (slice(None), idx([[2, 0], [1, 1]])),
    lambda: (Ellipsis, idx([3, 0])), lambda: (slice(None), slice(None), idx([3, -4])),
    lambda: (idx([1, 0]), idx([2, 0])), lambda: (slice(None), idx([1, 0]), idx([2, 0])),
    lambda: (idx([1, 0]), slice(None), idx([2, 0])),            # apart: indexed dims first
    lambda: (idx([[1], [0]]), idx([2, 0, 1])),                   # indices broadcast
    lambda: (idx([1, 0]), idx([2, 0]), idx([3, 1])), lambda: [1, 0],
    lambda: ([1, 0], [2, 0]), lambda: np.array([1, 0]), lambda: (slice(1, None), idx([2, 0])),
    lambda: (idx([1, 0]), None), lambda: (None, idx([1, 0])),
    lambda: paddle.to_tensor(1), lambda: paddle.to_tensor([0, 1], dtype="int32"),
])
def test_tensor_indices_match_numpy(make_index):
    index = make_index()
    as_numpy = tuple(np.asarray(i) if isinstance(i, paddle.Tensor) else i for i in
                     (index if isinstance(index, tuple) else (index,)))
    expected = A[as_numpy]
    out = paddle.to_tensor(A)[index]
    assert out.shape == list(expected.shape)
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("index, basic, rest", [
    ((0, slice(None), idx([3, 0])), 0, (slice(None), [3, 0])),
    ((idx([1, 0]), slice(None), 0), (slice(None), slice(None), 0), ([1, 0],)),
    ((idx([1, 0]), slice(1, None), 0), (slice(None), slice(1, None), 0), ([1, 0],)),
    ((0, idx([1, 0]), idx([2, 0])), 0, ([1, 0], [2, 0])),
])
def test_ints_beside_tensor_indices_apply_first_as_in_paddle(index, basic, rest):
    """Paddle removes an int's axis before the tensor indices apply; NumPy would treat
    the int as one more advanced index (x[0, :, idx] has shape [2, 3] there)."""
    expected = A[basic][tuple(np.asarray(r) if isinstance(r, list) else r for r in rest)]
    out = paddle.to_tensor(A)[index]
    assert out.shape == list(expected.shape)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_indexing_errors():
    x = paddle.to_tensor(A)
    with pytest.raises(IndexError, match="out of range"):
        x[2]
    with pytest.raises(IndexError, match="out of range"):
        x[:, -4]
    with pytest.raises(IndexError, match="too many"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError):
        x[1.0]
    with pytest.raises(IndexError):
        x[idx([0, 5])]
    with pytest.raises(IndexError, match="out of range"):
        x[idx([0, 1]), idx([0, 3])]
    with pytest.raises(IndexError, match="Ellipsis"):
        x[..., 0, ...]
    with pytest.raises(ValueError):
        x[::0]
    with pytest.raises(IndexError, match="bool mask of shape"):
        x[paddle.to_tensor([True, False, True])]  # 3 entries for a dim of 2
    with pytest.raises(IndexError):
        x[paddle.to_tensor([0.0])]


def test_indexing_through_a_python_loop_and_iteration():
    x = paddle.to_tensor(A)
    rows = [x[i] for i in range(len(x))]
    np.testing.assert_array_equal(paddle.stack(rows).numpy(), A)
    np.testing.assert_array_equal(paddle.stack(list(x)).numpy(), A)


# ---------------------------------------------------------------- assignment

def _assigned(index, value):
    x = paddle.to_tensor(A)
    x[index] = value
    return x.numpy()


def _numpy_assigned(index, value):
    out = A.copy()
    out[index] = value
    return out


@pytest.mark.parametrize("index, value", [
    (0, 1.0), ((slice(None), 1), np.array([1.0, 2.0, 3.0, 4.0])),
    ((Ellipsis, 0), np.array([[7.0], [8.0]])),                # broadcast [2,1] to [2,3]
    ((slice(None, None, -1), 0), np.array([9.0, 8.0, 7.0, 6.0])),
    ((0, 0, 0), 5), ((1,), np.ones((3, 4))), (Ellipsis, 2.0), ((slice(None), -1, 2), -1.0),
    ((slice(1, None), slice(None, None, 2)), np.array([[1.0], [2.0]])),
])
def test_assignment_broadcasts_like_numpy(index, value):
    np.testing.assert_array_equal(_assigned(index, value), _numpy_assigned(index, value))
    tensor_value = paddle.to_tensor(np.asarray(value, dtype=np.float32))
    np.testing.assert_array_equal(_assigned(index, tensor_value), _numpy_assigned(index, value))


@pytest.mark.parametrize("index, value", [
    ((slice(None), idx([2, 0])), 0.0),
    ((slice(None), idx([2, 0])), np.full((2, 2, 4), 5.0)),
    ((slice(None), idx([2, 0])), np.array([1.0, 2.0, 3.0, 4.0])),
    ((Ellipsis, idx([3])), -1.0), (idx([1]), np.arange(12.0).reshape(3, 4)),
    ((idx([1, 0]), idx([2, 0])), np.array([[10.0], [20.0]])),
    ((idx([1, 0]), slice(None), idx([2, 0])), -1.0),
    ((slice(None), idx([-1, 0]), idx([[0], [3]])), 9.0),
])
def test_assignment_through_tensor_indices(index, value):
    as_numpy = tuple(np.asarray(i) if isinstance(i, paddle.Tensor) else i for i in index) \
        if isinstance(index, tuple) else np.asarray(index)
    np.testing.assert_array_equal(_assigned(index, value), _numpy_assigned(as_numpy, value))


def test_assignment_with_repeated_indices_keeps_the_last_write():
    values = np.stack([np.ones((3, 4)), 2 * np.ones((3, 4))])
    np.testing.assert_array_equal(_assigned(idx([0, 0]), values)[0], 2 * np.ones((3, 4)))


def test_assignment_with_ints_beside_tensor_indices_as_in_paddle():
    expected = A.copy()
    expected[1][:, [2, 0]] = np.array([[1.0, 2.0]])
    np.testing.assert_array_equal(_assigned((1, slice(None), idx([2, 0])), np.array([1.0, 2.0])),
                                  expected)


@pytest.mark.parametrize("mask, value", [
    (A % 5 == 0, -1.0), (A > 10, np.float32(3.0)),
    (np.array([[True, False, True], [False, False, True]]), -1.0),
    (np.array([[True, False, True], [False, False, True]]), np.array([1.0, 2.0, 3.0, 4.0])),
    (np.array([True, False]), np.ones((1, 3, 4))), (np.array([False, False]), 1.0),
])
def test_assignment_through_bool_masks(mask, value):
    for index in (paddle.to_tensor(mask), mask):
        np.testing.assert_array_equal(_assigned(index, value), _numpy_assigned(mask, value))
    x = paddle.to_tensor(A)
    x[x > 10] = 0.0                               # the common clamp idiom
    np.testing.assert_array_equal(x.numpy(), np.where(A > 10, 0, A))


def test_assignment_through_a_mask_after_a_slice():
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(_assigned((slice(None), mask), -1.0),
                                  _numpy_assigned((slice(None), mask), -1.0))


def test_assignment_converts_the_value_to_the_tensors_dtype():
    x = paddle.to_tensor([1, 2, 3])
    x[0] = 2.7
    x[1:] = paddle.to_tensor([5.0, 6.0], dtype="float64")
    assert x.dtype == paddle.int64 and x.numpy().tolist() == [2, 5, 6]


def test_assignment_errors():
    with pytest.raises(IrflowError, match="leaf"):
        leaf = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        leaf[0] = 1.0                            # as in Paddle
    with pytest.raises(ValueError):
        _assigned(1, np.ones((2, 4)))
    with pytest.raises(IrflowError, match="selects 20 elements"):  # one value each: 20
        _assigned(paddle.to_tensor(A > 3), np.arange(19.0))


def test_assignment_to_a_zero_d_tensor_and_a_view_of_none():
    x = paddle.to_tensor(3.0)
    x[...] = 5.0
    assert x.shape == [] and x.item() == 5.0
    np.testing.assert_array_equal(_assigned((slice(None), None), 1.0), np.ones_like(A))


# ---------------------------------------------------------------- gradients

B = np.random.default_rng(0).standard_normal((3, 4, 2))
TENSOR_INDEX = idx([2, 0, 2])


@pytest.mark.parametrize("fn", [
    lambda x: x[1:, ::-1, None, 0], lambda x: x[..., -1], lambda x: x[-1, 1:3],
    lambda x: x[TENSOR_INDEX], lambda x: x[:, TENSOR_INDEX],
    lambda x: x[TENSOR_INDEX, :, idx([1, 0, 1])], lambda x: x[idx([[0], [1]]), idx([3, 2])],
])
def test_gradients_of_indexing(fn):
    check_grads(fn, B)


def _set(index):
    def fn(x, v):
        y = x * 1.0
        y[index] = v
        return y * y
    return fn


@pytest.mark.parametrize("index, value_shape", [
    ((0, slice(1, None)), (3, 2)), ((slice(None), 1), (2,)), ((Ellipsis, 0), ()),
    ((slice(None, None, -2),), (4, 2)), ((slice(None), idx([3, 0])), (3, 2, 2)),
    ((idx([1, 0]), idx([0, 3])), (2,)), (paddle.to_tensor(B > 0.5), ()),
])
def test_gradients_of_assignment_reach_both_tensors(index, value_shape):
    check_grads(_set(index), B, np.random.default_rng(1).standard_normal(value_shape))
