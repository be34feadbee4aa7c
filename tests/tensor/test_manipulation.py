"""Shape manipulation on eager tensors: reshape, transpose, concat, stack, squeeze,
unsqueeze, flatten, split; values against NumPy, gradients against central
differences, and shape errors that say what was expected."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import IrflowError, ShapeError
from tests.nn.gradcheck import check_grads

A = np.random.default_rng(0).standard_normal((2, 3, 4))


@pytest.mark.parametrize("shape, expected", [
    ([6, 4], (6, 4)), ([-1], (24,)), ([0, -1], (2, 12)), ([0, 3, 4], (2, 3, 4)),
    ((4, 3, 2), (4, 3, 2)), ([2, -1, 2], (2, 6, 2)), ([1, 24, 1], (1, 24, 1)),
])
def test_reshape(shape, expected):
    x = paddle.to_tensor(A)
    for out in (paddle.reshape(x, shape), x.reshape(shape)):
        assert out.shape == list(expected)
        np.testing.assert_array_equal(out.numpy(), A.reshape(expected))
    check_grads(lambda t: paddle.reshape(t, shape), A)


def test_reshape_errors_and_zero_d():
    x = paddle.to_tensor(A)
    with pytest.raises(ShapeError, match="24 elements"):
        paddle.reshape(x, [5, 5])
    with pytest.raises(ShapeError, match="-1"):
        paddle.reshape(x, [-1, -1])
    assert paddle.reshape(paddle.ones([1]), []).shape == []
    assert paddle.reshape(x, [paddle.to_tensor(4), -1]).shape == [4, 6]


@pytest.mark.parametrize("perm", [[2, 0, 1], [0, 1, 2], [1, 0, 2], [-1, 0, 1]])
def test_transpose(perm):
    x = paddle.to_tensor(A)
    expected = np.transpose(A, perm)
    for out in (paddle.transpose(x, perm), x.transpose(perm)):
        np.testing.assert_array_equal(out.numpy(), expected)
    check_grads(lambda t: paddle.transpose(t, perm), A)


def test_t_transposes_at_most_two_dims():
    m = np.arange(6.0).reshape(2, 3)
    for out in (paddle.t(paddle.to_tensor(m)), paddle.to_tensor(m).t()):
        np.testing.assert_array_equal(out.numpy(), m.T)
    np.testing.assert_array_equal(paddle.t(paddle.to_tensor([1.0, 2.0])).numpy(), [1.0, 2.0])
    check_grads(paddle.t, m)
    with pytest.raises(IrflowError, match="at most 2 dims"):
        paddle.t(paddle.to_tensor(A))


def test_transpose_errors_and_T():
    with pytest.raises(ShapeError):
        paddle.transpose(paddle.to_tensor(A), [0, 0, 1])
    with pytest.raises(ShapeError):
        paddle.transpose(paddle.to_tensor(A), [0, 1])
    np.testing.assert_array_equal(paddle.to_tensor(A).T.numpy(), A.T)
    assert paddle.ones([3]).T.shape == [3]


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat(axis):
    parts = [A, A[:, :, :1] if axis in (2, -1) else A[:1] if axis in (0, -3) else A[:, :2]]
    expected = np.concatenate(parts, axis=axis)
    out = paddle.concat([paddle.to_tensor(p) for p in parts], axis=axis)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert paddle.concat(tuple(paddle.to_tensor(p) for p in parts), axis).shape == \
        list(expected.shape)
    check_grads(lambda x, y: paddle.concat([x, y, x], axis=axis), *parts)


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_stack(axis):
    parts = [A, A * 2, A - 1]
    out = paddle.stack([paddle.to_tensor(p) for p in parts], axis=axis)
    np.testing.assert_array_equal(out.numpy(), np.stack(parts, axis=axis))
    check_grads(lambda x, y: paddle.stack([x, y], axis=axis), A, A + 1)
    scalars = paddle.stack([paddle.to_tensor(1.0), paddle.to_tensor(2.0)])
    assert scalars.shape == [2] and scalars.numpy().tolist() == [1.0, 2.0]


def test_concat_and_stack_errors():
    with pytest.raises(ShapeError):
        paddle.concat([paddle.ones([2, 3]), paddle.ones([3, 2])])
    with pytest.raises(ShapeError):
        paddle.stack([paddle.ones([2, 3]), paddle.ones([3, 2])])
    with pytest.raises(ShapeError):
        paddle.concat([paddle.to_tensor(1.0), paddle.to_tensor(2.0)])


def test_squeeze_unsqueeze_flatten_split():
    x = paddle.to_tensor(A.reshape(2, 1, 3, 4, 1))
    assert paddle.squeeze(x).shape == [2, 3, 4]
    assert paddle.squeeze(x, axis=1).shape == [2, 3, 4, 1]
    assert paddle.squeeze(x, axis=[1, -1]).shape == [2, 3, 4]
    y = paddle.to_tensor(A)
    assert paddle.unsqueeze(y, [0, -1]).shape == [1, 2, 3, 4, 1]
    assert paddle.unsqueeze(y, 1).shape == [2, 1, 3, 4]
    np.testing.assert_array_equal(paddle.flatten(y, 1).numpy(), A.reshape(2, 12))
    np.testing.assert_array_equal(paddle.flatten(y).numpy(), A.reshape(24))
    with pytest.raises(IrflowError):
        paddle.flatten(y, 2, 1)
    parts = paddle.split(y, [1, -1], axis=2)
    assert [p.shape for p in parts] == [[2, 3, 1], [2, 3, 3]]
    np.testing.assert_array_equal(parts[1].numpy(), A[:, :, 1:])
    assert [p.shape for p in paddle.split(y, 3, axis=1)] == [[2, 1, 4]] * 3
    check_grads(lambda t: paddle.split(t, [1, 3], axis=2)[1] * 2, A)
    check_grads(lambda t: paddle.unsqueeze(paddle.squeeze(paddle.unsqueeze(t, 0), 0), -1), A)


@pytest.mark.parametrize("axes, shape", [
    ([3, 1], [2, 1, 3, 4, 1]), ([1, 3], [2, 1, 3, 1, 4]), ([0, 0], [1, 1, 2, 3, 4]),
    ([-1, 0], [1, 2, 3, 4, 1]), ([-1, -1], [2, 3, 4, 1, 1]), ([2, -2], [2, 3, 1, 1, 4])])
def test_unsqueeze_inserts_axes_one_after_another(axes, shape):
    """Paddle 3.3.1's shapes: each axis is inserted into the shape the ones before it
    made ([3, 1] gave [2, 1, 3, 1, 4], [0, 0] an error)."""
    assert paddle.unsqueeze(paddle.zeros([2, 3, 4]), axes).shape == shape


def test_unsqueeze_axis_out_of_range():
    with pytest.raises(ShapeError, match="out of range"):
        paddle.unsqueeze(paddle.zeros([2, 3, 4]), [4, 4])


def test_gather_reads_an_n_by_1_index_as_n():
    """Paddle's gather takes a 0-D, 1-D or [N, 1] index ([N, 1] kept its 1: [2, 1, 4]);
    embedding's ids of any shape are still taken whole."""
    x = paddle.to_tensor(X34)
    out = paddle.gather(x, paddle.to_tensor([[0], [2]]))
    assert out.shape == [2, 4] and out.numpy().tolist() == X34[[0, 2]].tolist()
    assert paddle.gather(x, paddle.to_tensor([[0], [2]]), axis=1).shape == [3, 2]
    assert paddle.index_select(x, paddle.to_tensor([[1]]), axis=1).shape == [3, 1]
    assert paddle.gather(x, paddle.to_tensor(1)).shape == [4]
    for index in ([[0, 1], [2, 0]], [[[0]], [[2]]]):
        with pytest.raises(ShapeError, match=r"0-D, 1-D or of shape \[N, 1\]"):
            paddle.gather(x, paddle.to_tensor(index))
    with pytest.raises(ShapeError, match="must be 1-D"):
        paddle.index_select(x, paddle.to_tensor(1))
    ids = paddle.to_tensor([[0, 2], [1, 1]])
    assert paddle.nn.functional.embedding(ids, x).shape == [2, 2, 4]


@pytest.mark.parametrize("sections, message", [
    ([2, 2, 3], "add up to 7, not to the size 6"), ([2, 2, 1], "add up to 5, not to the size 6"),
    ([2, -1, -1], "at most one section may be -1"), ([6, -1], "leaves nothing"),
    ([-2, 8], "must be sizes"), (4, "does not divide into 4"), (0, "positive number")])
def test_split_sections_must_cover_the_dim(sections, message):
    """As in Paddle (a ValueError): sections adding up to more than the dim clipped the
    last part, and to less silently dropped rows."""
    x = paddle.to_tensor(np.arange(6.0).reshape(6, 1))
    with pytest.raises(ValueError, match=message):
        paddle.split(x, sections)


def test_split_axis_out_of_range_is_an_error():
    with pytest.raises(ShapeError, match="out of range"):
        paddle.split(paddle.ones([6, 1]), 3, axis=2)
    assert [p.shape for p in paddle.split(paddle.ones([6, 1]), [0, 6])] == [[0, 1], [6, 1]]


# ---------------------------------------------------------------- take/put_along_axis

X34 = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_put_along_axis_without_self_starts_the_written_positions_from_zero():
    """include_self=False (it was ignored): an add is the sum of the values alone
    (Paddle 3.3.1: [[3, 20, 3]]); assign does not read x anyway."""
    x, v = paddle.to_tensor([[10.0, 20.0, 30.0]]), paddle.to_tensor([[1.0, 2.0, 3.0]])
    index = paddle.to_tensor([[0, 0, 2]])
    added = paddle.put_along_axis(x, index, v, 1, reduce="add", include_self=False)
    assert added.numpy().tolist() == [[3.0, 20.0, 3.0]]
    assert paddle.put_along_axis(x, index, v, 1, reduce="add").numpy().tolist() == \
        [[13.0, 20.0, 33.0]]
    assert paddle.put_along_axis(x, index, v, 1, include_self=False).numpy().tolist() == \
        [[2.0, 20.0, 3.0]]
    check_grads(lambda t, u: paddle.put_along_axis(t, index, u, 1, reduce="add",
                                                   include_self=False) * 3,
                np.array([[10.0, 20.0, 30.0]]), np.array([[1.0, 2.0, 3.0]]))


def test_take_along_axis_without_broadcast_reads_the_index_block():
    """broadcast=False (it was ignored): as torch.gather, the index's other dims may be
    smaller than x's and the result has the index's shape."""
    x = paddle.to_tensor(X34)
    got = paddle.take_along_axis(x, paddle.to_tensor([[0, 1]]), axis=1, broadcast=False)
    assert got.numpy().tolist() == [[0.0, 1.0]]
    got = paddle.take_along_axis(x, paddle.to_tensor([[0], [1]]), axis=0, broadcast=False)
    assert got.numpy().tolist() == [[0.0], [4.0]]
    assert paddle.take_along_axis(x, paddle.to_tensor([[0, 1]]), axis=1).shape == [3, 2]
    with pytest.raises(ShapeError, match="may not be larger"):
        paddle.take_along_axis(x, paddle.to_tensor([[0, 1]] * 4), axis=1, broadcast=False)
    with pytest.raises(ShapeError, match="rank"):
        paddle.take_along_axis(x, paddle.to_tensor([0, 1]), axis=0, broadcast=False)


def test_put_along_axis_without_broadcast_writes_the_index_positions_only():
    """broadcast=False: as torch.scatter, only the index's positions are written, with
    the values at the same positions (values may be larger than the index)."""
    x = paddle.to_tensor(X34)
    values = paddle.to_tensor([[7.0, 8.0, 9.0], [1.0, 2.0, 3.0]])
    got = paddle.put_along_axis(x, paddle.to_tensor([[0], [1]]), values, 1, broadcast=False)
    want = X34.copy()
    want[0, 0], want[1, 1] = 7.0, 1.0
    np.testing.assert_array_equal(got.numpy(), want)
    got = paddle.put_along_axis(x, paddle.to_tensor([[0, 1]]), 5.0, 1, broadcast=False)
    want = X34.copy()
    want[0, :2] = 5.0
    np.testing.assert_array_equal(got.numpy(), want)
    got = paddle.put_along_axis(x, paddle.to_tensor([[0, 1, 2, 3, 0], [1, 1, 1, 1, 1]]), 1.0,
                                1, reduce="add", broadcast=False)
    want = X34.copy()
    want[0] += [2, 1, 1, 1]
    want[1, 1] += 5
    np.testing.assert_array_equal(got.numpy(), want)
    check_grads(lambda t, u: paddle.put_along_axis(t, paddle.to_tensor([[0], [1]]), u, 1,
                                                   broadcast=False) * 2,
                X34.astype(np.float64), values.numpy().astype(np.float64))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_along_axis_options_agree_with_eager(backend):
    def fn(x, values):
        index = paddle.to_tensor([[0], [2]])
        taken = paddle.take_along_axis(x, index, axis=1, broadcast=False)
        put = paddle.put_along_axis(x, index, values, 1, reduce="add", include_self=False,
                                    broadcast=False)
        return taken, put
    x, values = paddle.to_tensor(X34), paddle.to_tensor([[7.0, 8.0], [1.0, 2.0]])
    for got, want in zip(paddle.compile(fn, backend=backend)(x, values), fn(x, values)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---------------------------------------------------------------- symbolic and data-dependent sizes

def _agree(fn, spec, *inputs):
    """The compiled fn (`spec` a list of InputSpec) gives eager's results on `inputs`."""
    compiled = paddle.compile(fn, input_spec=spec, backend="numpy")
    for args in inputs:
        for got, want in zip(compiled(*args), fn(*args)):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    return compiled


def test_tile_of_symbolic_dims_keeps_them_symbolic():
    """The tiled dims are products of symbols and repeats (no -1 guessed per dim,
    which two symbolic dims made ambiguous), also with a repeat from x.shape."""
    from irflow.static import InputSpec

    def fn(x):
        return paddle.tile(x, [2, 1]), paddle.tile(x[:2], [x.shape[0], 3])

    _agree(fn, [InputSpec([None, None])], (paddle.randn([3, 4]),), (paddle.randn([2, 5]),))


def test_a_mask_of_another_input_makes_its_symbols_one():
    """x[y > 0] with x and y of one shape compiles: the mask's symbols unify with x's,
    as for x + y; an eager mismatch stays an IndexError."""
    from irflow.static import InputSpec

    def fn(x, y):
        z = x.clone()
        z[y < 0] = 0.0
        return x[y > 0], z

    spec = [InputSpec([None, None]), InputSpec([None, None])]
    compiled = _agree(fn, spec, (paddle.randn([3, 4]), paddle.randn([3, 4])),
                      (paddle.randn([2, 5]), paddle.randn([2, 5])))
    assert compiled.ir.main.args[0].type == compiled.ir.main.args[1].type
    with pytest.raises(IndexError, match=r"mask of shape \[3, 5\] does not match"):
        fn(paddle.randn([3, 4]), paddle.randn([3, 5]))


def test_compiled_indices_out_of_range_raise_as_eager():
    """Indices combined into one offset are range-checked when the program runs, as
    eager code checks them: wrapping a bad one would give some other element."""
    from irflow.static import InputSpec
    x = paddle.arange(12, dtype="float32").reshape([3, 4])
    bad = paddle.to_tensor([[3, 1]])

    def nd(x, index):
        picked = paddle.gather_nd(x, index)
        return picked, paddle.scatter_nd_add(x, index, picked)

    def pair(x, index):
        return (x[index[:, 0], index[:, 1]],)

    for fn in (nd, pair):
        with pytest.raises(IndexError):
            fn(x, bad)
        for spec in (None, [InputSpec([None, 4]), InputSpec([None, 2], "int64")]):
            compiled = paddle.compile(fn, input_spec=spec, backend="numpy")
            good = paddle.to_tensor([[2, 3], [-1, 0]])
            for got, want in zip(compiled(x, good), fn(x, good)):
                np.testing.assert_array_equal(got.numpy(), want.numpy())
            with pytest.raises(IndexError, match="out of range for an axis of size"):
                compiled(x, bad)


def test_gather_nd_of_an_empty_selection_of_an_empty_tensor():
    """nonzero of an empty tensor indexes nothing: gather_nd and scatter_nd_add give
    empty results (there is no size to wrap negative indices by)."""
    from irflow.static import InputSpec

    def fn(x):
        index = paddle.nonzero(x > 0)
        picked = paddle.gather_nd(x, index)
        return picked, paddle.scatter_nd_add(x, index, picked)

    _agree(fn, [InputSpec([None, 3])], (paddle.zeros([0, 3]),), (paddle.randn([4, 3]),))


def test_transpose_of_two_axes_swaps_them():
    """``paddle.transpose(x, 1, 3)`` and ``x.transpose(1, 3)``, as Paddle 3.3 takes."""
    a = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    x = paddle.to_tensor(a)
    np.testing.assert_array_equal(paddle.transpose(x, 1, 3).numpy(), a.swapaxes(1, 3))
    np.testing.assert_array_equal(x.transpose(-1, 0).numpy(), a.swapaxes(-1, 0))
    np.testing.assert_array_equal(x.transpose([0, 2, 1, 3]).numpy(), a.transpose(0, 2, 1, 3))
