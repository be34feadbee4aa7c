"""Paddle's arrangement API (irflow/tensor/arrangement.py): stacking and splitting,
block and diagonal layouts, index reads and writes, sliding windows and torch-style
aliases. Values against NumPy (or itertools / a loop stating the rule), gradients
against finite differences, compiled code against eager."""
import itertools

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, OutOfRangeError, ShapeError
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

X = np.arange(12.0).reshape(3, 4)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- stacking

@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
@pytest.mark.parametrize("arrays", [
    [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    [np.array(5.0), np.array(6.0)],
    [np.arange(4.0).reshape(2, 2), np.arange(4.0, 10.0).reshape(2, 3)[:, :2]],
    [np.arange(8.0).reshape(2, 2, 2), np.arange(8.0).reshape(2, 2, 2)],
])
def test_stacks_match_numpy(name, arrays):
    want = getattr(np, "vstack" if name == "row_stack" else name)(arrays)
    got = getattr(paddle, name)([t(a) for a in arrays])
    np.testing.assert_array_equal(got.numpy(), want)


def test_stacks_need_one_dtype_and_differentiate():
    with pytest.raises(DTypeError):
        paddle.hstack([t([1.0]), t([1])])
    check_grads(lambda a, b: paddle.column_stack([a, b]), X[:, 0], X)
    check_grads(lambda a, b: paddle.dstack([a, b]), X, X + 1)


def test_atleast():
    assert paddle.atleast_1d(t(5.0)).shape == [1]
    assert paddle.atleast_1d(3).dtype is paddle.int64
    assert [o.shape for o in paddle.atleast_2d(t(5.0), t([1.0, 2.0]))] == [[1, 1], [1, 2]]
    assert [o.shape for o in paddle.atleast_3d([t([1.0, 2.0]), t(X)])] == [[1, 2, 1],
                                                                          [3, 4, 1]]
    assert t(X).atleast_3d().shape == [3, 4, 1]


# ---------------------------------------------------------------- splitting

@pytest.mark.parametrize("spec", [3, 8, [2, 5], [5, 2], [2, 9], [-2], (1, 1)])
def test_tensor_split_follows_array_split(spec):
    x = np.arange(7.0)
    got = paddle.tensor_split(t(x), spec)
    want = np.array_split(x, spec if isinstance(spec, int) else list(spec))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_hsplit_vsplit_dsplit():
    y = np.arange(24.0).reshape(2, 3, 4)
    for name, axis in (("hsplit", 1), ("vsplit", 0), ("dsplit", 2)):
        for g, w in zip(getattr(paddle, name)(t(y), [1]), np.array_split(y, [1], axis)):
            np.testing.assert_array_equal(g.numpy(), w)
    # as Paddle's, an uneven count splits as tensor_split does (NumPy's hsplit refuses)
    assert [p.shape for p in paddle.hsplit(t(y), 2)] == [[2, 2, 4], [2, 1, 4]]
    assert [p.shape for p in t(np.arange(6.0)).hsplit(3)] == [[2], [2], [2]]
    with pytest.raises(ShapeError):
        paddle.dsplit(t(X), 2)
    check_grads(lambda a: paddle.tensor_split(a, [1, 3], axis=1)[1], X)


# ---------------------------------------------------------------- layouts

def test_block_diag():
    a, c = np.array([[1.0, 2], [3, 4]]), np.array([6.0, 7])
    got = paddle.block_diag([t(a), t(c), t(np.array(8.0))]).numpy()
    want = np.zeros((4, 5))
    want[:2, :2], want[2, 2:4], want[3, 4] = a, c, 8.0
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ShapeError):
        paddle.block_diag([t(np.zeros((1, 1, 1)))])
    check_grads(lambda p, q: paddle.block_diag([p, q]), a, c)


def test_cartesian_prod_and_combinations_follow_itertools():
    a, b = [1, 2], [3, 4, 5]
    np.testing.assert_array_equal(paddle.cartesian_prod([t(a), t(b)]).numpy(),
                                  list(itertools.product(a, b)))
    x = [1.0, 2.0, 3.0, 4.0]
    for r, repl in ((2, False), (3, False), (2, True), (1, False)):
        choose = itertools.combinations_with_replacement if repl else itertools.combinations
        got = paddle.combinations(t(x), r, repl)
        np.testing.assert_array_equal(got.numpy(), np.array(list(choose(x, r))).reshape(-1, r))
    assert paddle.combinations(t(x), 0).shape == [0]
    assert paddle.combinations(t(x), 5).shape == [0, 5]
    check_grads(lambda p, q: paddle.cartesian_prod([p, q]), np.array(a, float),
                np.array(b, float))
    check_grads(lambda p: paddle.combinations(p, 2, True), np.array(x))


def diag_embed_reference(x, offset, dim1, dim2):
    """out[..., i, i + offset] = x[..., i] in the plane (dim1, dim2) of the result."""
    n = x.shape[-1] + abs(offset)
    planes = np.zeros(x.shape[:-1] + (n, n))
    for i in range(x.shape[-1]):
        planes[..., i + max(-offset, 0), i + max(offset, 0)] = x[..., i]
    return np.moveaxis(planes, [-2, -1], [dim1, dim2])


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, -2, -1), (-1, 0, 2),
                                              (1, 2, 0), (0, 0, 1)])
def test_diag_embed(offset, dim1, dim2):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    got = paddle.diag_embed(t(x), offset, dim1, dim2)
    np.testing.assert_array_equal(got.numpy(), diag_embed_reference(x, offset, dim1, dim2))
    check_grads(lambda a: paddle.diag_embed(a, offset, dim1, dim2), x)


def test_diag_embed_keeps_inf_off_the_diagonal_clean():
    got = paddle.diag_embed(t([np.inf, 1.0])).numpy()
    np.testing.assert_array_equal(got, [[np.inf, 0.0], [0.0, 1.0]])


def test_broadcast_shape_and_tensors():
    assert paddle.broadcast_shape([2, 1, 3], [4, 1]) == [2, 4, 3]
    with pytest.raises(ShapeError):
        paddle.broadcast_shape([2], [3])
    a, b = np.array([[1.0], [2.0]]), np.array([1.0, 2.0, 3.0])
    got = paddle.broadcast_tensors([t(a), t(b)])
    for g, w in zip(got, np.broadcast_arrays(a, b)):
        np.testing.assert_array_equal(g.numpy(), w)
    check_grads(lambda p, q: paddle.multiply(*paddle.broadcast_tensors([p, q])), a, b)


# ---------------------------------------------------------------- index reads and writes

def test_take_modes_follow_numpy():
    index = np.array([[0, 5], [-1, 11]])
    np.testing.assert_array_equal(paddle.take(t(X), t(index)).numpy(), np.take(X, index))
    wild = np.array([12, -13, 25, -1])
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(paddle.take(t(X), t(wild), mode).numpy(),
                                      np.take(X, wild, mode=mode))
    with pytest.raises(IndexError):
        paddle.take(t(X), t([12]))
    with pytest.raises(DTypeError):
        paddle.take(t(X), t([1.0]))
    check_grads(lambda a: paddle.take(a, t([[0, 5], [5, -1]])), X)


def test_index_sample():
    index = np.array([[0, 3], [1, 1], [2, 0]])
    got = paddle.index_sample(t(X), t(index))
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(X, index, 1))
    with pytest.raises(OutOfRangeError):
        paddle.index_sample(t(X), t([[-1], [0], [0]]))
    check_grads(lambda a: paddle.index_sample(a, t(index)), X)


def test_index_fill_and_in_place():
    want = X.copy()
    want[:, [0, 3]] = -1.0
    np.testing.assert_array_equal(paddle.index_fill(t(X), t([0, -1]), 1, -1.0).numpy(), want)
    as_int = paddle.index_fill(t([[1, 2], [3, 4]]), t([0]), 1, 2.7)
    assert as_int.dtype is paddle.int64 and as_int.numpy().tolist() == [[2, 2], [2, 4]]
    y = t(X)
    assert y.index_fill_(t([1]), 0, 0.0) is y
    want = X.copy()
    want[1] = 0.0
    np.testing.assert_array_equal(y.numpy(), want)
    check_grads(lambda a: paddle.index_fill(a, t([0, 2]), 1, 3.0), X)


def test_scatter_nd_adds_repeated_indices():
    got = paddle.scatter_nd(t([[1], [3], [1]]), t([1.0, 2.0, 3.0]), [5])
    np.testing.assert_array_equal(got.numpy(), [0.0, 4.0, 0.0, 2.0, 0.0])
    check_grads(lambda u: paddle.scatter_nd(t([[1, 1], [0, 2]]), u, [2, 3, 2]),
                np.arange(4.0).reshape(2, 2))


def scatter_reference(base, dim, index, src, combine):
    """torch.scatter's loop over the index's own positions (along dim 1 here)."""
    out = base.copy()
    for i, j in np.ndindex(index.shape):
        out[i, index[i, j]] = combine(out[i, index[i, j]], src[i, j])
    return out


def test_scatter_add_and_reduce():
    base, index = np.ones((2, 3)), np.array([[0, 0], [2, 1]])
    src = np.array([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]])  # wider than the index: col 2 unread
    np.testing.assert_array_equal(paddle.scatter_add(t(base), 1, t(index), t(src)).numpy(),
                                  scatter_reference(base, 1, index, src, np.add))
    got = paddle.scatter_reduce(t(base), 1, t(index), t(src), "prod")
    np.testing.assert_array_equal(got.numpy(), scatter_reference(base, 1, index, src,
                                                                 np.multiply))
    mean = paddle.scatter_reduce(t(base), 1, t(index), t(src), "mean", include_self=False)
    np.testing.assert_array_equal(mean.numpy(), [[1.5, 1.0, 1.0], [1.0, 4.0, 3.0]])
    with pytest.raises(ValueError):
        paddle.scatter_reduce(t(base), 1, t(index), t(src), "add")
    check_grads(lambda a, s: paddle.scatter_add(a, 1, t(index), s), base, src)


def test_select_slice_and_diagonal_scatter():
    want = X.copy()
    want[:, -1] = [1.0, 2.0, 3.0]
    got = paddle.select_scatter(t(X), t([1.0, 2.0, 3.0]), 1, -1)
    np.testing.assert_array_equal(got.numpy(), want)
    want = X.copy()
    want[:, -4::2] = 7.0  # broadcast from [1, 2]; a negative axis works (Paddle's fails)
    got = paddle.slice_scatter(t(X), t([[7.0, 7.0]]), [-1], [-4], [4], [2])
    np.testing.assert_array_equal(got.numpy(), want)
    want = X.copy()
    want[[0, 1, 2], [1, 2, 3]] = [-1.0, -2.0, -3.0]
    got = paddle.diagonal_scatter(t(X), t([-1.0, -2.0, -3.0]), 1)
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ShapeError):
        paddle.diagonal_scatter(t(X), t([1.0, 2.0]))
    y = np.array([1.0, 2.0, 3.0])
    check_grads(lambda a, v: paddle.select_scatter(a, v, 1, -1), X, y)
    check_grads(lambda a, v: paddle.slice_scatter(a, v, [1], [0], [4], [2]), X, np.ones((3, 2)))
    check_grads(lambda a, v: paddle.diagonal_scatter(a, v, 1), X, y)
    cube = np.arange(18.0).reshape(2, 3, 3)
    check_grads(lambda a, v: paddle.diagonal_scatter(a, v, 0, 1, 2), cube, np.ones((2, 3)))


def test_masked_scatter_reads_value_in_order():
    mask = np.array([[True, False], [False, True]])
    got = paddle.masked_scatter(t(np.zeros((2, 2))), t(mask), t([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(got.numpy(), [[5.0, 0.0], [0.0, 6.0]])
    row_mask = paddle.masked_scatter(t(np.zeros((2, 2))), t([True, False]), t([5.0, 6.0]))
    np.testing.assert_array_equal(row_mask.numpy(), [[5.0, 0.0], [6.0, 0.0]])
    with pytest.raises(ShapeError):  # Paddle reads past value's end here
        paddle.masked_scatter(t(np.zeros((2, 2))), t(mask), t([5.0]))
    y = t(np.zeros((2, 2)))
    assert y.masked_scatter_(t(mask), t([1.0, 2.0])) is y
    np.testing.assert_array_equal(y.numpy(), [[1.0, 0.0], [0.0, 2.0]])
    check_grads(lambda a, v: paddle.masked_scatter(a, t([[True, False, True, False]]), v),
                X, np.arange(8.0))


# ---------------------------------------------------------------- windows and aliases

def test_unfold_windows_and_overlapping_gradient():
    x = np.arange(10.0)
    want = np.lib.stride_tricks.sliding_window_view(x, 3)[::2]
    np.testing.assert_array_equal(t(x).unfold(0, 3, 2).numpy(), want)
    cube = np.arange(24.0).reshape(2, 3, 4)
    want = np.moveaxis(np.lib.stride_tricks.sliding_window_view(cube, 2, axis=2), 2, 2)
    np.testing.assert_array_equal(paddle.unfold(t(cube), 2, 2, 1).numpy(), want)
    assert t(5.0).unfold(0, 1, 1).shape == [1]
    with pytest.raises(ShapeError):
        t(cube).unfold(2, 5, 1)
    # an element in two windows gets both cotangents (Paddle 3.3's gradient keeps one)
    check_grads(lambda a: a.unfold(1, 2, 1), X)


def test_torch_style_aliases():
    x4 = np.arange(120.0).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(paddle.swapaxes(t(x4), 1, 3).numpy(), np.swapaxes(x4, 1, 3))
    np.testing.assert_array_equal(t(x4).swapdims([0, 3, 2, 1]).numpy(),
                                  x4.transpose(0, 3, 2, 1))
    np.testing.assert_array_equal(t(x4).permute(3, 0, 1, 2).numpy(), x4.transpose(3, 0, 1, 2))
    np.testing.assert_array_equal(paddle.permute(t(x4), [3, 0, 1, 2]).numpy(),
                                  x4.transpose(3, 0, 1, 2))
    assert t(X).view(2, 6).shape == [2, 6] and t(X).view([6, 2]).shape == [6, 2]
    assert t(X).view_as(t(np.zeros((6, 2)))).shape == [6, 2]
    with pytest.raises(DTypeError):
        t(X).view("int64")
    np.testing.assert_array_equal(paddle.narrow(t(X), -1, -2, 2).numpy(), X[:, -2:])
    np.testing.assert_array_equal(t(X).narrow(0, t(1), 2).numpy(), X[1:3])
    with pytest.raises(OutOfRangeError):
        paddle.narrow(t(X), 0, 2, 2)
    np.testing.assert_array_equal(paddle.ravel(t(X)).numpy(), X.ravel())
    assert paddle.ravel(t(3.0)).shape == [1]
    m = np.array([[3, 1], [1, 2], [2, 0]])
    np.testing.assert_array_equal(paddle.msort(t(m)).numpy(), np.sort(m, axis=0))
    assert paddle.tolist(t([[1, 2]])) == [[1, 2]]
    check_grads(lambda a: paddle.narrow(a.permute(1, 0), 0, 1, 2), X)


def test_questions():
    assert paddle.rank(t(X)).dtype is paddle.int32 and paddle.rank(t(X)).item() == 2
    assert t(X).rank().item() == 2
    assert paddle.is_floating_point(t(X)) and not paddle.is_integer(t(X))
    assert paddle.is_integer(t([1], dtype="uint8")) and not paddle.is_integer(t([True]))
    assert not paddle.is_complex(t(X))
    empty = paddle.is_empty(t(np.zeros((0, 3))))
    assert empty.dtype is paddle.bool and empty.shape == [] and bool(empty)
    assert not bool(t(X).is_empty())


# ---------------------------------------------------------------- compiled

def test_compiled_matches_eager():
    def program(x):
        top, rest = paddle.tensor_split(x, [1], axis=1)
        stacked = paddle.hstack([top, rest * 2])
        windows = stacked.unfold(1, 2, 1).sum(-1)
        filled = paddle.index_fill(windows, t([0]), 1, -1.0)
        picked = paddle.take(filled, t([0, 5, -1]), mode="wrap")
        scattered = paddle.diagonal_scatter(x, paddle.diagonal(x) * 10)
        return paddle.concat([picked, paddle.ravel(paddle.masked_scatter(
            scattered, x > 5, paddle.arange(12, dtype="float32")))])
    x = X.astype(np.float32)
    static = paddle.jit.to_static(program, input_spec=[InputSpec([3, 4], "float32")])
    np.testing.assert_array_equal(static(t(x)).numpy(), program(t(x)).numpy())
