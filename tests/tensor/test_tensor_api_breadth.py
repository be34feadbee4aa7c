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


# ---------------------------------------------------------------- matrix norms from the SVD

B = np.random.default_rng(3).standard_normal((2, 3, 4))


@pytest.mark.parametrize("p", [2, -2, "nuc"])
def test_singular_value_matrix_norms_match_numpy(p):
    """The spectral norms (largest / smallest singular value) and the nuclear norm
    (their sum), over any pair of axes, with keepdim putting size-1 dims back at both."""
    np.testing.assert_allclose(paddle.norm(t(B), p=p, axis=[1, 2]).numpy(),
                               np.linalg.norm(B, ord=p, axis=(1, 2)), rtol=1e-12)
    got = paddle.linalg.matrix_norm(t(B), p=p, axis=[2, 0], keepdim=True)
    want = np.linalg.norm(B, ord=p, axis=(2, 0), keepdims=True)
    assert got.shape == [1, 3, 1]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(lambda x: paddle.linalg.matrix_norm(x, p=p), B)
    check_grads(lambda x: paddle.norm(x, p=p, axis=(0, 2)), B)


def test_norm_dispatches_as_paddle():
    """Paddle's rules: p None over two axes is p=2 (the spectral norm, not NumPy's
    Frobenius); a string p other than 'fro' with axis None is a matrix norm over all
    axes (so of a 2-D tensor only); 'fro' with axis None is the 2-norm of every entry;
    `dtype` casts first and `out` takes the result."""
    m = B[0]
    np.testing.assert_allclose(paddle.norm(t(B), axis=[1, 2]).numpy(),
                               np.linalg.norm(B, ord=2, axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(paddle.norm(t(m), p="nuc").numpy(), np.linalg.norm(m, "nuc"),
                               rtol=1e-12)
    np.testing.assert_allclose(paddle.norm(t(B), p="fro").numpy(), np.sqrt((B ** 2).sum()),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="two axes"):
        paddle.norm(t(B), p="nuc")
    with pytest.raises(ValueError, match="got None"):
        paddle.linalg.matrix_norm(t(B), p=None)
    as_64 = paddle.norm(t(B.astype(np.float32)), p=2, axis=[1, 2], dtype="float64")
    assert as_64.dtype is paddle.float64
    out = paddle.zeros([2], "float64")
    paddle.norm(t(B), p=-2, axis=[1, 2], out=out)
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(B, ord=-2, axis=(1, 2)), rtol=1e-12)
    assert paddle.linalg.vector_norm(t([3, 4]), dtype="float32").item() == 5.0


# ---------------------------------------------------------------- elementwise

def test_isin_matches_numpy():
    x, tests = np.array([[1, 2], [3, 4]]), np.array([[4], [9], [2]])
    got = paddle.isin(t(x), t(tests))
    assert got.dtype is paddle.bool and got.shape == [2, 2]
    np.testing.assert_array_equal(got.numpy(), np.isin(x, tests))
    np.testing.assert_array_equal(t(x).isin(t(tests), invert=True).numpy(),
                                  np.isin(x, tests, invert=True))
    # NaN equals nothing, NaN included; a 0-d x gives a 0-d answer
    np.testing.assert_array_equal(paddle.isin(t([1.0, np.nan, 2.5]), t([np.nan, 2.5])).numpy(),
                                  [False, False, True])
    assert paddle.isin(t(3), t([3]), assume_unique=True).shape == []


def test_heaviside_steps_and_takes_y_at_zero():
    x = np.array([-1.5, -0.0, 0.0, 2.0, np.inf, -np.inf])
    y = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    np.testing.assert_array_equal(paddle.heaviside(t(x), t(y)).numpy(), np.heaviside(x, y))
    # NaN is not above 0: Paddle's kernel computes x > 0
    assert paddle.heaviside(t([np.nan]), t([0.5])).numpy().tolist() == [0.0]
    assert paddle.heaviside(t([-2, 0, 3]), t([7, 7, 7])).numpy().tolist() == [0, 7, 1]
    xs, ys = t(x, stop_gradient=False), t(y, stop_gradient=False)
    gx, gy = paddle.grad(paddle.heaviside(xs, ys).sum(), [xs, ys])
    np.testing.assert_array_equal(gx.numpy(), np.zeros(6))      # a step: slope 0
    np.testing.assert_array_equal(gy.numpy(), x == 0)           # y is the value at 0


def test_frac_and_stanh():
    x = np.array([-2.5, -0.5, 0.0, 1.75, 3.0])
    np.testing.assert_array_equal(paddle.frac(t(x)).numpy(), x - np.trunc(x))
    assert paddle.frac(t([-3, 4])).numpy().tolist() == [0, 0]
    check_grads(paddle.frac, x + 0.125)
    np.testing.assert_allclose(paddle.stanh(t(x)).numpy(), 1.7159 * np.tanh(0.67 * x),
                               rtol=1e-12)
    np.testing.assert_allclose(t(x).stanh(scale_a=2.0, scale_b=0.5).numpy(),
                               0.5 * np.tanh(2.0 * x), rtol=1e-12)
    assert paddle.stanh(t([1, 2])).dtype is paddle.float32
    check_grads(lambda v: paddle.stanh(v, 1.3, 0.7), x)


def test_logcumsumexp_is_stable_and_matches_numpy():
    x = np.array([[1.0, 2.0, 3.0, -4.0, 0.5], [100.0, -100.0, 1000.0, 999.0, -np.inf]])
    for axis in (0, 1, -1):
        np.testing.assert_allclose(paddle.logcumsumexp(t(x), axis=axis).numpy(),
                                   np.logaddexp.accumulate(x, axis=axis), rtol=1e-12)
    flat = paddle.logcumsumexp(t(x))
    np.testing.assert_allclose(flat.numpy(), np.logaddexp.accumulate(x.ravel()), rtol=1e-12)
    assert paddle.logcumsumexp(t(2.0)).shape == [1]
    assert paddle.logcumsumexp(t(2.0), axis=0).shape == []
    assert paddle.logcumsumexp(t([1, 2])).dtype is paddle.float32
    assert t([1.0]).logcumsumexp(dtype="float64").dtype is paddle.float64
    # a prefix of only -inf sums to exp(-inf) = 0, whose log is -inf; NaN propagates
    got = paddle.logcumsumexp(t([-np.inf, -np.inf, 0.0, np.inf, 1.0])).numpy()
    np.testing.assert_array_equal(got, [-np.inf, -np.inf, 0.0, np.inf, np.inf])
    assert np.isnan(paddle.logcumsumexp(t([1.0, np.nan, 0.0])).numpy()[1:]).all()
    check_grads(lambda v: paddle.logcumsumexp(v, axis=1),
                np.random.default_rng(4).standard_normal((3, 6)))
    v = t(np.array([-np.inf, -np.inf, 0.0, 1.0]), stop_gradient=False)
    (g,) = paddle.grad(paddle.logcumsumexp(v).sum(), v)
    # d/dx_j sum_i out_i = sum_{i >= j} exp(x_j - out_i): 0 for -inf, softmax weights else
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 1 + 1 / (1 + np.e), np.e / (1 + np.e)],
                               rtol=1e-12)


# ---------------------------------------------------------------- mode, unique_consecutive

def np_mode(x, axis):
    """The rule of `paddle.mode`: the smallest of the most frequent values, at its
    last position; each NaN counts once and sorts after every number."""
    x = np.moveaxis(x, axis, -1)
    values, index = np.empty(x.shape[:-1], x.dtype), np.empty(x.shape[:-1], np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        row = x[pos]
        numbers = row[~np.isnan(row)] if row.dtype.kind == "f" else row
        if numbers.size == 0:
            values[pos], index[pos] = row[0], 0
            continue
        distinct, counts = np.unique(numbers, return_counts=True)
        best = distinct[counts == counts.max()].min()
        values[pos], index[pos] = best, np.nonzero(row == best)[0][-1]
    return values, index


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_mode_matches_the_rule(axis):
    x = np.random.default_rng(5).integers(0, 4, size=(5, 7, 6))
    values, index = paddle.mode(t(x), axis=axis)
    want_values, want_index = np_mode(x, axis)
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(index.numpy(), want_index)
    kept, kept_index = t(x).mode(axis, keepdim=True)
    assert kept.shape == list(np.expand_dims(want_values, axis).shape)
    assert kept_index.dtype is paddle.int64


def test_mode_nan_and_gradient():
    n = np.nan
    x = np.array([[n, 1.0, 1.0, 5.0], [n, 3.0, n, 2.0], [n, n, n, n]])
    values, index = paddle.mode(t(x))
    want_values, want_index = np_mode(x, -1)
    np.testing.assert_array_equal(values.numpy(), want_values)
    np.testing.assert_array_equal(index.numpy(), want_index)
    assert paddle.mode(t(4.0))[1].shape == []
    xs = t([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 0.0, 4.0]], stop_gradient=False)
    (g,) = paddle.grad(paddle.mode(xs)[0].sum(), xs)
    np.testing.assert_array_equal(g.numpy(), [[0, 0, 1, 0], [0, 0, 0, 1]])  # to the index


def np_unique_consecutive(x):
    """Runs of equal neighbours (NaN equal to nothing): values, inverse, counts."""
    starts = [i for i in range(len(x)) if i == 0 or not x[i] == x[i - 1]]
    counts = np.diff(starts + [len(x)])
    return x[starts], np.repeat(np.arange(len(starts)), counts), counts


def test_unique_consecutive_flat():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2, 5])
    out, inverse, counts = paddle.unique_consecutive(t(x), True, True, dtype="int32")
    for got, want in zip((out, inverse, counts), np_unique_consecutive(x)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert inverse.dtype is paddle.int32 and counts.dtype is paddle.int32
    m = np.array([[2, 2, 3], [3, 0, 0]])
    np.testing.assert_array_equal(t(m).unique_consecutive().numpy(),
                                  np_unique_consecutive(m.ravel())[0])
    f = np.array([1.0, np.nan, np.nan, 2.0, 2.0])
    np.testing.assert_array_equal(paddle.unique_consecutive(t(f), return_counts=True)[1]
                                  .numpy(), [1, 1, 1, 2])
    for got in paddle.unique_consecutive(t(5), True, True):
        assert got.shape == [1]
    for got in paddle.unique_consecutive(t(np.zeros([0], np.int64)), True, True):
        assert got.shape == [0]


def test_unique_consecutive_along_an_axis():
    m = np.array([[2, 1, 3], [2, 1, 3], [3, 0, 1], [2, 1, 3]])
    out, inverse, counts = paddle.unique_consecutive(t(m), True, True, axis=0)
    np.testing.assert_array_equal(out.numpy(), m[[0, 2, 3]])
    np.testing.assert_array_equal(inverse.numpy(), [0, 0, 1, 2])
    np.testing.assert_array_equal(counts.numpy(), [2, 1, 1])
    out, inverse, counts = paddle.unique_consecutive(t(m.T), True, True, axis=1)
    np.testing.assert_array_equal(out.numpy(), m[[0, 2, 3]].T)
    np.testing.assert_array_equal(counts.numpy(), [2, 1, 1])


def test_unique_takes_sorted():
    x = t([3, 1, 3, 2, 1])
    for got, want in zip(paddle.unique(x, True, True, True, sorted=False),
                         np.unique(x.numpy(), True, True, True)):
        np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------- index_put, put_along_axis

X = np.arange(12.0).reshape(3, 4) + 1


def test_index_put_matches_numpy():
    rows, cols = np.array([0, 2, 2]), np.array([1, 3, -1])
    want = X.copy()
    want[rows, cols] = [10.0, 20.0, 30.0]
    got = paddle.index_put(t(X), (t(rows), t(cols)), t([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(got.numpy(), want)
    want = X.copy()
    np.add.at(want, (rows, cols), [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(t(X).index_put((t(rows), t(cols)), t([10.0, 20.0, 30.0]),
                                                 accumulate=True).numpy(), want)
    want = X.copy()
    want[[2, 0]] = 7.0                                          # one index: whole rows
    np.testing.assert_array_equal(paddle.index_put(t(X), (t([2, 0]),), t([7.0])).numpy(), want)
    want = X.copy()
    want[X > 9] = [1.0, 2.0, 3.0]                               # a mask, one value each
    np.testing.assert_array_equal(paddle.index_put(t(X), (t(X > 9),), t([1.0, 2.0, 3.0]))
                                  .numpy(), want)
    want = X.copy()
    want[X > 9] += 1.0
    np.testing.assert_array_equal(paddle.index_put(t(X), (t(X > 9),), t(1.0), True).numpy(),
                                  want)
    y = t(X)
    assert y.index_put_((t([0]), t([0])), t([0.5])) is y and y.numpy()[0, 0] == 0.5


def test_index_put_gradients():
    rows, cols = t([0, 2, 0]), t([1, 3, 1])
    check_grads(lambda x, v: paddle.index_put(x, (rows, cols), v, accumulate=True),
                X, np.array([1.0, 2.0, 3.0]))
    check_grads(lambda x, v: paddle.index_put(x, (t([0, 2]), t([1, 3])), v),
                X, np.array([1.0, 2.0]))
    # a repeated position keeps the last value, which alone gets its gradient (Paddle
    # gives it to both); the same for x[index] = value
    x, v = t(X, stop_gradient=False), t([10.0, 20.0], stop_gradient=False)
    out = paddle.index_put(x, (rows[::2], cols[::2]), v)
    assert out.numpy()[0, 1] == 20.0
    gx, gv = paddle.grad(out.sum(), [x, v])
    assert gv.numpy().tolist() == [0.0, 1.0] and gx.numpy()[0, 1] == 0.0
    y = x * 1
    y[t([1, 1])] = t([[1.0] * 4, [2.0] * 4])
    (gy,) = paddle.grad(y.sum(), [x])
    assert gy.numpy()[1].tolist() == [0.0] * 4


def np_put_along(arr, index, values, axis, reduce, include_self):
    """NumPy reference of put_along_axis's reductions, one value at a time: without
    include_self the first value to reach a position replaces arr's entry."""
    combine = {"mul": np.multiply, "amax": np.maximum, "amin": np.minimum,
               "mean": np.add}[reduce]
    arr = np.moveaxis(arr.astype(np.float64), axis, -1)
    index, values = np.moveaxis(index, axis, -1), np.moveaxis(values, axis, -1)
    out, counts, seen = arr.copy(), np.ones(arr.shape), np.zeros(arr.shape, bool)
    for pos in np.ndindex(index.shape):
        target = pos[:-1] + (index[pos],)
        if seen[target] or include_self:
            out[target] = combine(out[target], values[pos])
            counts[target] += 1
        else:
            out[target], counts[target] = values[pos], 1
        seen[target] = True
    if reduce == "mean":
        out = np.where(seen, out / counts, out)
    return np.moveaxis(out, -1, axis)


A = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
INDEX = np.array([[0, 0, 1], [2, 2, 2]])
VALUES = np.array([[10.0, -20.0, 30.0], [2.0, 3.0, -4.0]])
INDEX0 = np.array([[0, 1, 1], [1, 1, 0], [1, 0, 0]])      # along axis 0: 3 values a column
VALUES0 = np.array([[7.5, -1.5, 0.25], [2.5, 8.0, -3.5], [-7.0, 6.5, 9.5]])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["mul", "mean", "amax", "amin"])
def test_put_along_axis_reductions_match_numpy(reduce, include_self):
    for axis, index, values in ((1, INDEX, VALUES), (0, INDEX0, VALUES0)):
        got = paddle.put_along_axis(t(A), t(index), t(values), axis, reduce=reduce,
                                    include_self=include_self)
        np.testing.assert_allclose(got.numpy(),
                                   np_put_along(A, index, values, axis, reduce, include_self),
                                   rtol=1e-12)
        check_grads(lambda a, v: paddle.put_along_axis(a, t(index), v, axis, reduce=reduce,
                                                       include_self=include_self),
                    A, values)
    assert paddle.put_along_axis(t(A), t(INDEX), t(VALUES), 1, reduce="multiply").numpy()[0, 0] \
        == 1.0 * 10.0 * -20.0


def test_put_along_axis_reductions_edge_rules():
    # an int mean truncates toward zero: (2 + 3) / 2 = 2.5 -> 2
    got = paddle.put_along_axis(t([[1, 2, 3]]), t([[0, 0]]), t([[2, 3]]), 1, reduce="mean",
                                include_self=False)
    assert got.numpy().tolist() == [[2, 2, 3]]
    # equal winners share the gradient: max(1, 1, 1, 0.5) is won three times
    a, v = t([[1.0, 2.0]], stop_gradient=False), t([[1.0, 1.0, 0.5]], stop_gradient=False)
    out = paddle.put_along_axis(a, t([[0, 0, 0]]), v, 1, reduce="amax")
    ga, gv = paddle.grad(out.sum(), [a, v])
    np.testing.assert_allclose(ga.numpy(), [[1 / 3, 1.0]])
    np.testing.assert_allclose(gv.numpy(), [[1 / 3, 1 / 3, 0.0]])
    with pytest.raises(ValueError, match="reduce must be one of"):
        paddle.put_along_axis(t(A), t(INDEX), t(VALUES), 1, reduce="max")
    z = paddle.ones([2, 3])
    assert z.put_along_axis_(t([[0], [2]]), 4.0, 1, reduce="mul") is z
    assert z.numpy().tolist() == [[4.0, 1.0, 1.0], [1.0, 1.0, 4.0]]


def test_mT_swaps_the_last_two_dims():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(t(x).mT.numpy(), np.swapaxes(x, -1, -2))
    check_grads(lambda v: v.mT, x)
    with pytest.raises(ShapeError, match="at least 2 dims"):
        t([1.0, 2.0]).mT


def test_new_apis_are_exposed_where_paddle_has_them():
    for name in ("isin", "heaviside", "frac", "stanh", "logcumsumexp", "mode",
                 "unique_consecutive", "index_put", "frac_", "index_put_", "put_along_axis_"):
        assert hasattr(paddle.Tensor, name), name
    for name in ("isin", "heaviside", "frac", "stanh", "logcumsumexp", "mode",
                 "unique_consecutive", "index_put"):
        assert getattr(paddle, name) is getattr(paddle.tensor, name)
    assert paddle.linalg.norm is paddle.norm


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_new_apis_compiled_agree_with_eager(backend):
    def fn(x, ids):
        m = x[0]
        return (paddle.linalg.matrix_norm(x, p="nuc"), paddle.norm(x, p=-2, axis=[2, 0]),
                paddle.logcumsumexp(x, axis=2), paddle.heaviside(x, paddle.ones_like(x)),
                paddle.frac(x * 3), paddle.isin(ids, t([1, 3])),
                *paddle.mode(ids, axis=1),
                *paddle.unique_consecutive(ids, return_inverse=True, return_counts=True),
                paddle.index_put(m, (t([0, 2, 2]), t([1, 3, 3])), t([1.0, 2.0, 3.0]), True),
                paddle.put_along_axis(m[:2], t([[0, 0, 2], [1, 1, 1]]), m[:2, :3], 1,
                                      reduce="amin"), x.mT)
    x = t(np.random.default_rng(6).standard_normal((2, 3, 4)))
    ids = t([[1, 1, 2, 2], [3, 3, 1, 2], [3, 3, 1, 2]])
    for got, want in zip(paddle.compile(fn, backend=backend)(x, ids), fn(x, ids)):
        assert got.dtype is want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
