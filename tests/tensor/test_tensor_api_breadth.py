"""searchsorted, bucketize, bincount, cummax/cummin and kthvalue against NumPy
references, their gradients against finite differences, and compiled code against
eager."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, InputError, OutOfRangeError, ShapeError
from tests.nn.gradcheck import check_grads


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def running_extremum(x, axis, pick):
    """NumPy reference of cummax/cummin: the latest index of the running extremum
    (and of the latest NaN once one is seen)."""
    x = np.moveaxis(x, axis, -1)
    values, index = np.empty_like(x), np.empty(x.shape, np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        best = 0
        for i, v in enumerate(x[pos]):
            b = x[pos][best]
            if np.isnan(v) or (not np.isnan(b) and (v == b or pick(v, b) == v)):
                best = i
            values[pos][i], index[pos][i] = x[pos][best], best
    return np.moveaxis(values, -1, axis), np.moveaxis(index, -1, axis)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_1d_sequence(right):
    seq = np.array([1, 3, 3, 5, 7])
    values = np.array([[3, 6], [0, 9]])
    side = "right" if right else "left"
    got = paddle.searchsorted(t(seq), t(values), right=right)
    assert got.dtype is paddle.int64
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, values, side=side))
    as_int32 = paddle.searchsorted(t(seq), t(values), out_int32=True, side=side)
    assert as_int32.dtype is paddle.int32
    np.testing.assert_array_equal(as_int32.numpy(), np.searchsorted(seq, values, side=side))


def test_searchsorted_nd_sequence_and_sorter():
    seq = np.array([[1.0, 3, 5], [2, 4, 6]])
    values = np.array([[3.0, 6], [0, 4]])
    want = np.stack([np.searchsorted(s, v) for s, v in zip(seq, values)])
    np.testing.assert_array_equal(paddle.searchsorted(t(seq), t(values)).numpy(), want)
    unsorted = np.array([5.0, 1, 3])
    got = paddle.searchsorted(t(unsorted), t([2.0, 3.0]), sorter=t([1, 2, 0]))
    np.testing.assert_array_equal(got.numpy(), [1, 1])
    with pytest.raises(ShapeError):
        paddle.searchsorted(t(seq), t([[1.0], [2], [3]]))


def test_bucketize():
    seq = np.array([1, 3, 5, 7])
    x = np.array([[1, 4], [7, 2]])
    np.testing.assert_array_equal(paddle.bucketize(t(x), t(seq)).numpy(),
                                  np.searchsorted(seq, x))
    np.testing.assert_array_equal(t(x).bucketize(t(seq), right=True).numpy(),
                                  np.searchsorted(seq, x, side="right"))
    with pytest.raises(ShapeError):
        paddle.bucketize(t(x), t([[1, 2]]))


def test_bincount():
    x = np.array([1, 1, 4, 0])
    got = paddle.bincount(t(x))
    assert got.dtype is paddle.int64
    np.testing.assert_array_equal(got.numpy(), np.bincount(x))
    np.testing.assert_array_equal(paddle.bincount(t(x), minlength=8).numpy(),
                                  np.bincount(x, minlength=8))
    weights = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    weighted = paddle.bincount(t(x), weights=t(weights))
    assert weighted.dtype is paddle.float32
    np.testing.assert_allclose(weighted.numpy(), np.bincount(x, weights))
    assert paddle.bincount(t(x), weights=t([1, 2, 3, 4], dtype="int32")).dtype is paddle.float64
    assert paddle.bincount(t(np.array([], np.int64)), minlength=3).numpy().tolist() == [0, 0, 0]


def test_bincount_refuses_what_paddle_refuses():
    with pytest.raises(InputError):
        paddle.bincount(t([-1, 2]))
    with pytest.raises(DTypeError):
        paddle.bincount(t([1.0, 2.0]))
    with pytest.raises(ShapeError):
        paddle.bincount(t([[1, 2]]))


@pytest.mark.parametrize("name, pick", [("cummax", np.maximum), ("cummin", np.minimum)])
@pytest.mark.parametrize("x, axis", [
    (np.array([1.0, 3, 3, 2, 5, 5, 0]), 0),
    (np.array([[3, 1, 1], [2, 2, 0]], np.int32), 1),
    (np.array([[3, 1, 1], [2, 2, 0]]), 0),
    (np.array([1.0, np.nan, 2.0, np.nan]), -1),
    (np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32), 1),
])
def test_running_extrema(name, pick, x, axis):
    values, index = getattr(paddle, name)(t(x), axis=axis)
    want_values, want_index = running_extremum(x, axis, pick)
    assert values.dtype.np == x.dtype and index.dtype is paddle.int64
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(index.numpy(), want_index)


def test_running_extrema_flatten_by_default_and_index_dtype():
    x = np.array([[3, 1], [4, 0]])
    values, index = t(x).cummax(dtype="int32")
    assert values.shape == [4] and index.dtype is paddle.int32
    np.testing.assert_array_equal(index.numpy(), [0, 0, 2, 2])
    assert paddle.cummin(t(2.5))[0].shape == [1]  # flattened, as Paddle
    values, index = paddle.cummin(t(2.5), axis=0)
    assert values.shape == [] and index.numpy().tolist() == 0


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extrema_gradient_goes_to_the_chosen_index(name):
    x = np.array([[1.0, 3.0, 2.5, 0.5], [5.0, 4.0, 6.0, 7.0]])
    check_grads(lambda a: getattr(paddle, name)(a, axis=1)[0], x)


@pytest.mark.parametrize("k, axis, keepdim", [(1, None, False), (2, 0, True), (3, -1, False)])
def test_kthvalue(k, axis, keepdim):
    x = np.random.default_rng(1).standard_normal((3, 4))
    values, index = paddle.kthvalue(t(x), k, axis=axis, keepdim=keepdim)
    along = -1 if axis is None else axis
    want_index = np.take(np.argsort(x, axis=along, kind="stable"), [k - 1], axis=along)
    want_values = np.take_along_axis(x, want_index, along)
    if not keepdim:
        want_index, want_values = want_index.squeeze(along), want_values.squeeze(along)
    assert index.dtype is paddle.int64
    np.testing.assert_array_equal(index.numpy(), want_index)
    np.testing.assert_array_equal(values.numpy(), want_values)
    check_grads(lambda a: paddle.kthvalue(a, k, axis=axis, keepdim=keepdim)[0], x)


def test_kthvalue_refuses_k_out_of_range():
    with pytest.raises(OutOfRangeError):
        paddle.kthvalue(t([1.0, 2.0]), 3)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_agrees_with_eager(backend):
    def fn(seq, x, ids):
        running, where_ = paddle.cummax(x, axis=1)
        kth, _ = paddle.kthvalue(x, 2, axis=1)
        return (paddle.searchsorted(seq, x), paddle.bucketize(x, seq, right=True), running,
                where_, kth, paddle.bincount(ids, minlength=3))
    seq = t([-1.0, 0.0, 0.5, 1.0])
    x = t(np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32))
    ids = t([4, 0, 1, 1])
    for got, want in zip(paddle.compile(fn, backend=backend)(seq, x, ids), fn(seq, x, ids)):
        assert got.dtype is want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_searchsorted_puts_nans_last_as_paddle():
    """Paddle's binary searches sort NaN after every number: a NaN value goes to the
    end, and with `right` so does a value no number of the sequence exceeds (values
    Paddle 3.3.1 gave)."""
    seq = paddle.to_tensor([1.0, 2.0, 3.0, np.nan])
    values = paddle.to_tensor([np.nan, 2.0, 0.5, 5.0])
    assert paddle.searchsorted(seq, values).numpy().tolist() == [4, 1, 0, 3]
    assert paddle.searchsorted(seq, values, right=True).numpy().tolist() == [4, 2, 0, 4]
    rows = paddle.to_tensor([[1.0, 2.0, 2.0, np.nan], [0.0, 1.0, 5.0, 6.0]])
    asked = paddle.to_tensor([[2.0, 9.0], [5.0, np.nan]])
    assert paddle.searchsorted(rows, asked).numpy().tolist() == [[1, 3], [2, 4]]
    assert paddle.searchsorted(rows, asked, right=True).numpy().tolist() == [[4, 4], [3, 4]]


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90_matches_numpy(k):
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(paddle.rot90(paddle.to_tensor(x), k, [1, 2]).numpy(),
                                  np.rot90(x, k, (1, 2)))
    check_grads(lambda t: paddle.rot90(t, k, [2, 0]), x)


def test_diag_places_a_vector_on_a_diagonal_and_reads_one_back():
    np.testing.assert_array_equal(paddle.diag(paddle.to_tensor([1, 2, 3]), 1, 9).numpy(),
                                  [[9, 1, 9, 9], [9, 9, 2, 9], [9, 9, 9, 3], [9, 9, 9, 9]])
    np.testing.assert_array_equal(paddle.diag(paddle.to_tensor([1.0, 2.0]), -1).numpy(),
                                  np.diag([1.0, 2.0], -1))
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(paddle.diag(paddle.to_tensor(m), -1).numpy(), np.diag(m, -1))
    np.testing.assert_array_equal(paddle.diagflat(paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]]), 1)
                                  .numpy(), np.diagflat([[1.0, 2.0], [3.0, 4.0]], 1))
    check_grads(lambda t: paddle.diag(t, 2) * paddle.to_tensor(np.arange(25.0).reshape(5, 5)),
                np.array([1.0, -2.0, 0.5]))


def test_mv_unflatten_and_unstack():
    m, v = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(paddle.mv(paddle.to_tensor(m), paddle.to_tensor(v)).numpy(), m @ v)
    x = paddle.to_tensor(np.arange(24.0).reshape(2, 3, 4))
    assert paddle.unflatten(x, -1, [2, -1]).shape == [2, 3, 2, 2]
    parts = paddle.unstack(x, axis=1)
    assert len(parts) == 3 and parts[1].shape == [2, 4]
    np.testing.assert_array_equal(parts[2].numpy(), x.numpy()[:, 2])
    with pytest.raises(ValueError, match="num is 2"):
        paddle.unstack(x, axis=1, num=2)
