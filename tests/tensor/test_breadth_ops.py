"""Paddle's tensor API of issue 13 (sorting, selection with data-dependent sizes,
scans, einsum, gathers and scatters, norms, closeness, hooks), eagerly and compiled.
Values are NumPy's or worked out by hand (the Paddle 3.3 results they match are
quoted where Paddle's choice is not NumPy's); gradients against finite differences."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ConversionError, IrflowError
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

X = np.array([[3., 1., 2., 1.], [0., 5., 5., -1.]], np.float32)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def compiled(fn, shape=(None, 4), dtype="float32"):
    return paddle.jit.to_static(fn, input_spec=[InputSpec(list(shape), dtype)])


def both(fn, x=X, shape=(None, 4)):
    """fn's results eagerly and compiled with a symbolic batch dim (as NumPy lists)."""
    results = []
    for f in (fn, compiled(fn, shape, str(np.asarray(x).dtype))):
        out = f(t(x))
        outs = out if isinstance(out, tuple | list) else (out,)
        results.append([o.numpy() for o in outs])
    for eager, static in zip(*results):
        np.testing.assert_array_equal(eager, static)
    return results[0]


# ---------------------------------------------------------------- sorting

def test_sort_argsort_topk():
    (values,) = both(lambda x: paddle.sort(x, descending=True))
    np.testing.assert_array_equal(values, -np.sort(-X))
    (order,) = both(lambda x: paddle.argsort(x, axis=0))
    np.testing.assert_array_equal(order, np.argsort(X, axis=0, kind="stable"))
    values, indices = both(lambda x: paddle.topk(x, 2))
    np.testing.assert_array_equal(values, [[3, 2], [5, 5]])
    np.testing.assert_array_equal(indices, [[0, 2], [1, 2]])  # Paddle's, ties in order
    values, indices = paddle.topk(t(X), 1, axis=0, largest=False)
    np.testing.assert_array_equal(values.numpy(), [[0, 1, 2, -1]])
    assert indices.dtype == paddle.int64
    values, _ = paddle.topk(t(X), t(2))  # k as a tensor
    assert values.shape == [2, 2]


def test_sort_and_topk_gradients():
    x = np.random.default_rng(0).standard_normal((3, 5))  # distinct values: no ties
    check_grads(lambda a: paddle.sort(a, axis=1, descending=True), x)
    check_grads(lambda a: paddle.topk(a, 2, axis=0)[0], x)


# ---------------------------------------------------------------- data-dependent sizes

def test_nonzero_and_where_with_one_argument():
    (coords,) = both(lambda x: paddle.nonzero(x))
    np.testing.assert_array_equal(coords, np.argwhere(X))
    rows, cols = both(lambda x: paddle.where(x > 1))
    np.testing.assert_array_equal(rows, [0, 0, 1, 1])
    np.testing.assert_array_equal(cols, [0, 2, 1, 2])
    assert [a.shape for a in paddle.nonzero(t(X), as_tuple=True)] == [[7], [7]]


def test_masked_select_and_bool_mask_reads():
    (selected,) = both(lambda x: paddle.masked_select(x, x > 1) * 2)
    np.testing.assert_array_equal(selected, X[X > 1] * 2)
    (read,) = both(lambda x: x[x > 1])
    np.testing.assert_array_equal(read, X[X > 1])
    rows = t(X)[t(np.array([True, False]))]
    np.testing.assert_array_equal(rows.numpy(), X[:1])  # Paddle: shape [1, 4]
    col_mask = t(np.array([True, False, True, False]))
    np.testing.assert_array_equal(t(X)[:, col_mask].numpy(), X[:, [0, 2]])
    broadcast = paddle.masked_select(t(X), col_mask)
    np.testing.assert_array_equal(broadcast.numpy(), [3, 2, 0, 5])
    check_grads(lambda a: paddle.masked_select(a, a > 1.5), X)  # no element near 1.5
    check_grads(lambda a: a[a > 0.5] * 3, X)
    with pytest.raises(IndexError, match="does not match"):
        t(X)[t(np.array([True, False, True]))]


def test_unique():
    values, counts = both(lambda x: paddle.unique(x, return_counts=True))
    np.testing.assert_array_equal(values, [-1, 0, 1, 2, 3, 5])
    np.testing.assert_array_equal(counts, [1, 1, 2, 1, 1, 2])
    out, index, inverse = paddle.unique(t(X), return_index=True, return_inverse=True)
    np.testing.assert_array_equal(index.numpy(), [7, 4, 1, 2, 0, 5])  # Paddle's
    np.testing.assert_array_equal(out.numpy()[inverse.numpy()], X.reshape(-1))
    rows, inverse = paddle.unique(t(np.array([[1, 2], [1, 2], [0, 3]])), return_inverse=True,
                                  axis=0)
    np.testing.assert_array_equal(rows.numpy(), [[0, 3], [1, 2]])
    np.testing.assert_array_equal(inverse.numpy(), [1, 1, 0])
    assert paddle.unique(t([3, 1, 3]), return_counts=True, dtype="int32")[1].dtype == \
        paddle.int32


def test_data_dependent_sizes_flow_on_in_compiled_code():
    """The fresh size symbol of a selection meets the input's dims downstream."""
    def f(x):
        picked = x[x > 0]
        return picked.sum() + paddle.nonzero(x).astype("float32").sum() + picked.shape[0]
    static = compiled(f)
    for a in (X, -X, np.zeros((3, 4), np.float32)):
        np.testing.assert_allclose(static(t(a)).numpy(), f(t(a)).numpy())


# ---------------------------------------------------------------- scans, triangles, einsum

def test_cumsum_cumprod():
    (c,) = both(lambda x: paddle.cumsum(x))
    np.testing.assert_array_equal(c, np.cumsum(X))  # axis None: flattened
    (c,) = both(lambda x: paddle.cumprod(x, dim=1))
    np.testing.assert_array_equal(c, np.cumprod(X, 1))
    ints = paddle.cumsum(t(np.array([1, 2, 3], np.int32)))
    assert ints.dtype == paddle.int64 and ints.numpy().tolist() == [1, 3, 6]
    assert paddle.cumsum(t([1, 2, 3]), dtype="float64").dtype == paddle.float64
    assert t(X).cumsum(axis=0).shape == [2, 4]


def test_tril_triu_einsum_compiled():
    (low,) = both(lambda x: paddle.tril(x, 1))
    np.testing.assert_array_equal(low, np.tril(X, 1))
    (up,) = both(lambda x: x.triu(-1))
    np.testing.assert_array_equal(up, np.triu(X, -1))
    (e,) = both(lambda x: paddle.einsum("ij,kj->ik", x, x))
    np.testing.assert_allclose(e, X @ X.T)


# ---------------------------------------------------------------- manipulation

def test_roll_flip_meshgrid():
    (r,) = both(lambda x: paddle.roll(x, [1, -1], [0, 1]))
    np.testing.assert_array_equal(r, np.roll(X, (1, -1), (0, 1)))
    (r,) = both(lambda x: x.roll(1))
    np.testing.assert_array_equal(r, np.roll(X.reshape(-1), 1).reshape(2, 4))
    (f,) = both(lambda x: paddle.flip(x, [0, 1]))
    np.testing.assert_array_equal(f, X[::-1, ::-1])
    a, b = paddle.meshgrid(paddle.arange(3), paddle.arange(2))
    ea, eb = np.meshgrid(np.arange(3), np.arange(2), indexing="ij")
    np.testing.assert_array_equal(a.numpy(), ea)
    np.testing.assert_array_equal(b.numpy(), eb)
    assert [g.shape for g in paddle.meshgrid([paddle.arange(3), paddle.arange(2)])] == \
        [[3, 2], [3, 2]]


def test_repeat_interleave():
    (r,) = both(lambda x: paddle.repeat_interleave(x, 2, axis=0))
    np.testing.assert_array_equal(r, np.repeat(X, 2, axis=0))
    np.testing.assert_array_equal(paddle.repeat_interleave(t([[1, 2], [3, 4]]), 2).numpy(),
                                  [1, 1, 2, 2, 3, 3, 4, 4])
    np.testing.assert_array_equal(
        paddle.repeat_interleave(t([1, 2, 3]), t([1, 0, 2])).numpy(), [1, 3, 3])
    check_grads(lambda a: paddle.repeat_interleave(a, 3, axis=1), X)
    with pytest.raises(IrflowError, match="data-dependent length"):
        compiled(lambda x: paddle.repeat_interleave(x, x[0].astype("int64")), (4,), "int64")(
            t(np.array([1, 1, 1, 1])))


def test_gather_nd_scatter_index_select():
    index = np.array([[0, 1], [1, 2]])
    (g,) = both(lambda x: paddle.gather_nd(x, t(index)))
    np.testing.assert_array_equal(g, X[index[:, 0], index[:, 1]])
    np.testing.assert_array_equal(paddle.gather_nd(t(X), t([[1], [0]])).numpy(), X[[1, 0]])
    np.testing.assert_array_equal(paddle.gather_nd(t(X), t([[[-1, -1]]])).numpy(), [[-1.]])
    check_grads(lambda a: paddle.gather_nd(a, t(index)), X)
    updates = np.array([[1., 1, 1, 1], [2, 2, 2, 2]], np.float32)
    (s,) = both(lambda x: paddle.scatter(x, t([1, 1]), t(updates)))
    np.testing.assert_array_equal(s, [X[0], updates[1]])  # the last write wins
    added = paddle.scatter(t(X), t([1, 1]), t(updates), overwrite=False)
    np.testing.assert_array_equal(added.numpy(), [X[0], [3, 3, 3, 3]])  # Paddle's
    check_grads(lambda a, u: paddle.scatter(a, t([1, 0]), u), X, updates)
    check_grads(lambda a, u: paddle.scatter(a, t([1, 1]), u, overwrite=False), X, updates)
    (s,) = both(lambda x: paddle.index_select(x, t([3, 0]), axis=1))
    np.testing.assert_array_equal(s, X[:, [3, 0]])


def test_masked_fill_clip_where():
    (m,) = both(lambda x: paddle.masked_fill(x, x > 1, 9.0))
    np.testing.assert_array_equal(m, np.where(X > 1, 9, X))
    m = paddle.masked_fill(t(X), t(X) > 1, t(np.float32(-1)))
    np.testing.assert_array_equal(m.numpy(), np.where(X > 1, -1, X))
    check_grads(lambda a: paddle.masked_fill(a, a > 1.5, 0.5), X)
    clipped = paddle.clip(t([1, 5, 9]), 2, 6)
    assert clipped.dtype == paddle.int64 and clipped.numpy().tolist() == [2, 5, 6]


def test_split_chunk_tile():
    assert [p.shape for p in paddle.split(paddle.arange(6), [1, -1, 2])] == [[1], [3], [2]]
    assert [p.shape for p in paddle.chunk(paddle.arange(6), 3)] == [[2], [2], [2]]
    with pytest.raises(IrflowError, match="equal parts"):
        paddle.chunk(paddle.arange(5), 2)  # Paddle refuses uneven chunks too
    np.testing.assert_array_equal(paddle.tile(t([1, 2]), [2, 2]).numpy(),
                                  np.tile([1, 2], (2, 2)))


# ---------------------------------------------------------------- math

def test_norms():
    x = t(X)
    np.testing.assert_allclose(paddle.norm(x).numpy(), np.linalg.norm(X), rtol=1e-6)
    np.testing.assert_allclose(paddle.norm(x, p=1, axis=1).numpy(), [7, 11])
    np.testing.assert_array_equal(paddle.norm(x, p=0, axis=1).numpy(), [4, 3])
    np.testing.assert_array_equal(paddle.norm(x, p=float("inf")).numpy(), 5)
    np.testing.assert_array_equal(paddle.norm(x, p=-float("inf"), axis=1).numpy(), [1, 0])
    np.testing.assert_allclose(paddle.norm(x, p=3, axis=-1, keepdim=True).numpy(),
                               (np.abs(X) ** 3).sum(-1, keepdims=True) ** (1 / 3), rtol=1e-6)
    np.testing.assert_allclose(paddle.norm(x, p="fro", axis=[0, 1]).numpy(),
                               np.linalg.norm(X), rtol=1e-6)
    np.testing.assert_allclose(paddle.norm(x, p="nuc", axis=[0, 1]).numpy(),
                               np.linalg.norm(X, "nuc"), rtol=1e-6)


def test_norm_over_two_axes_is_a_matrix_norm():
    """As in Paddle 3, p=1 / inf over a pair of axes are the column / row sum norms
    (NumPy's ord=1 / inf), not the vector norms of the flattened entries; p None there
    is Paddle's p=2, the spectral norm (not NumPy's Frobenius)."""
    B = np.random.RandomState(0).standard_normal((2, 3, 4))
    for p in (1, -1, float("inf"), float("-inf")):
        (got,) = both(lambda x: paddle.norm(x, p=p, axis=[0, 1]))
        np.testing.assert_allclose(got, np.linalg.norm(X, ord=p), rtol=1e-6)
        got = paddle.norm(t(B), p=p, axis=[1, 2]).numpy()
        np.testing.assert_allclose(got, [np.linalg.norm(b, ord=p) for b in B], rtol=1e-12)
        got = paddle.norm(t(B), p=p, axis=(-1, 0), keepdim=True).numpy()
        want = np.linalg.norm(np.moveaxis(B, [2, 0], [0, 1]), ord=p, axis=(0, 1))
        np.testing.assert_allclose(got, want.reshape(1, 3, 1), rtol=1e-12)
    np.testing.assert_allclose(paddle.norm(t(B), p=1, axis=[1]).numpy(),
                               np.abs(B).sum(1), rtol=1e-12)        # one axis: a vector norm
    check_grads(lambda x: paddle.norm(x, p=1, axis=[0, 1]), X + 0.25)
    for p in (None, 2, -2, "nuc"):
        np.testing.assert_allclose(paddle.norm(t(X), p=p, axis=[0, 1]).numpy(),
                                   np.linalg.norm(X, ord=2 if p is None else p), rtol=1e-6)
    with pytest.raises(ValueError, match="must be"):
        paddle.norm(t(X), p=3, axis=[0, 1])
    assert paddle.linalg.norm is paddle.norm
    np.testing.assert_allclose(paddle.linalg.matrix_norm(t(B), p=1).numpy(),
                               np.linalg.norm(B, ord=1, axis=(-2, -1)), rtol=1e-12)
    np.testing.assert_allclose(paddle.linalg.vector_norm(t(X), p=2, axis=[0, 1]).numpy(),
                               np.linalg.norm(X), rtol=1e-6)     # vector: all entries


def test_logsumexp_std_var_bmm_outer():
    np.testing.assert_allclose(paddle.logsumexp(t(X), axis=1, keepdim=True).numpy(),
                               np.log(np.exp(X).sum(1, keepdims=True)), rtol=1e-6)
    np.testing.assert_allclose(paddle.std(t(X)).numpy(), X.std(ddof=1), rtol=1e-6)
    np.testing.assert_allclose(paddle.var(t(X), axis=1, unbiased=False).numpy(), X.var(1),
                               rtol=1e-6)
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    assert paddle.bmm(t(a), t(b)).shape == [2, 3, 5]
    with pytest.raises(ValueError, match="3-D"):
        paddle.bmm(t(a[0]), t(b[0]))
    np.testing.assert_array_equal(paddle.outer(t([1., 2]), t([[1., 2, 3]])).numpy(),
                                  np.outer([1, 2], [1, 2, 3]))


def test_isclose_allclose():
    a = np.array([1.0, np.inf, np.nan, 1.0], np.float32)
    b = np.array([1.0 + 1e-7, np.inf, np.nan, 1.1], np.float32)
    np.testing.assert_array_equal(paddle.isclose(t(a), t(b)).numpy(), np.isclose(a, b))
    np.testing.assert_array_equal(paddle.isclose(t(a), t(b), equal_nan=True).numpy(),
                                  np.isclose(a, b, equal_nan=True))
    assert not bool(paddle.allclose(t(a), t(b)))
    assert bool(paddle.allclose(t([1, 2]), t([1, 2])))  # ints, as Paddle allows
    with pytest.raises(TypeError, match="float"):
        paddle.isclose(t([1, 2]), t([1, 2]))


# ---------------------------------------------------------------- Tensor methods

def test_cpu_is_the_tensor_itself():
    x = t(X)
    assert x.cpu() is x and str(x.cpu().place) == "Place(cpu)"


def test_register_hook_on_a_leaf_and_an_intermediate():
    y = t([1., 2.], stop_gradient=False)
    seen = []
    handle = y.register_hook(lambda g: (seen.append(g.numpy().tolist()), g * 2)[1])
    (y * y).sum().backward()
    assert seen == [[2.0, 4.0]]
    np.testing.assert_array_equal(y.grad.numpy(), [4, 8])  # Paddle: [4., 8.]
    assert handle.remove() and not handle.remove()
    y.clear_grad()
    w = y * 3
    w.register_hook(lambda g: g * 10)        # replaces what flows on to y
    u = w * w
    u.register_hook(lambda g: None)           # None keeps the gradient
    (u.sum() + y.sum()).backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * 3 * np.array([1, 2]) * 3 * 10 + 1)
    frozen = t([1.0])
    with pytest.raises(IrflowError, match="stops gradients"):
        frozen.register_hook(lambda g: g)


def test_register_hook_in_compiled_code_is_refused():
    def f(x):
        x.register_hook(lambda g: g)
        return x
    with pytest.raises(ConversionError, match="register_hook"):
        compiled(f)(t(X))


def test_round_halves_to_even_as_paddle():
    halves = np.array([[0.5, 1.5, 2.5, -0.5], [-1.5, -2.5, 1.7, -1.2]], np.float32)
    (got,) = both(lambda x: paddle.round(x), halves)
    np.testing.assert_array_equal(got, [[0, 2, 2, -0.0], [-2, -2, 2, -1]])
    x = t(halves, stop_gradient=False)
    x.round().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(halves))


def test_scatter_nd_add_adds_at_gather_nd_slices():
    index = np.array([[0, 1], [1, 3], [0, 1]])          # (0, 1) twice: both add
    updates = np.array([10.0, 20.0, 30.0], np.float32)
    want = X.copy()
    np.add.at(want, (index[:, 0], index[:, 1]), updates)
    assert want[0, 1] == 1 + 10 + 30
    (got,) = both(lambda x: paddle.scatter_nd_add(x, t(index), t(updates)))
    np.testing.assert_array_equal(got, want)
    rows = paddle.scatter_nd_add(t(X), t(np.array([[1], [1]])), paddle.ones([2, 4])).numpy()
    np.testing.assert_array_equal(rows, X + [[0], [2]])
    check_grads(lambda x, u: paddle.scatter_nd_add(x, t(index), u), X, updates)
