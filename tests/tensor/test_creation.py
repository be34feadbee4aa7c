"""Creating eager tensors: to_tensor, filled tensors, ranges, the *_like forms and the
random ones, with Paddle's default dtypes (checked against PaddlePaddle 3.3)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import IrflowError


@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, paddle.float32, []),             # Python floats: float32
    (3, paddle.int64, []),                 # Python ints: int64
    (True, paddle.bool, []),
    ([1, 2.5], paddle.float32, [2]),       # a mix of ints and floats is float
    ([[1, 2], [3, 4]], paddle.int64, [2, 2]),
    ([[True], [False]], paddle.bool, [2, 1]),
    (np.ones((2, 3)), paddle.float64, [2, 3]),           # NumPy arrays keep their dtype
    (np.ones(3, np.int32), paddle.int32, [3]),
    (np.float64(2.0), paddle.float64, []),
    ([], paddle.float32, [0]),
])
def test_to_tensor_dtype_and_shape(data, dtype, shape):
    t = paddle.to_tensor(data)
    assert t.dtype == dtype and t.shape == shape and isinstance(t.shape, paddle.Size)
    np.testing.assert_array_equal(t.numpy(), np.asarray(data))
    assert t.stop_gradient is True and t.grad is None and t.is_leaf


def test_to_tensor_copies_and_converts():
    source = np.array([1.0, 2.0])
    t = paddle.to_tensor(source, dtype="float32", stop_gradient=False)
    source[0] = 9.0
    assert t.dtype == paddle.float32 and t.numpy().tolist() == [1.0, 2.0]
    assert t.stop_gradient is False
    assert paddle.to_tensor(1.7, dtype="int64").item() == 1    # truncates, as a cast
    assert paddle.to_tensor([1, 2], dtype=paddle.float64).dtype == paddle.float64
    nested = paddle.to_tensor([paddle.to_tensor(1.0), paddle.to_tensor(2.0)])
    assert nested.shape == [2] and nested.numpy().tolist() == [1.0, 2.0]
    again = paddle.to_tensor(t)
    assert again is not t and again.stop_gradient is True
    np.testing.assert_array_equal(again.numpy(), t.numpy())


def test_to_tensor_rejects_ragged_and_text():
    with pytest.raises((ValueError, TypeError)):
        paddle.to_tensor([[1, 2], [3]])
    with pytest.raises((ValueError, TypeError, IrflowError)):
        paddle.to_tensor("abc")


@pytest.mark.parametrize("fn, fill", [(paddle.zeros, 0.0), (paddle.ones, 1.0)])
def test_zeros_and_ones(fn, fill):
    for shape in ([2, 3], (4,), 3, [], [0, 2]):
        t = fn(shape)
        expected_shape = [shape] if isinstance(shape, int) else list(shape)
        assert t.dtype == paddle.float32 and t.shape == expected_shape
        assert np.all(t.numpy() == fill)
    assert fn([2], dtype="int32").dtype == paddle.int32
    assert fn(paddle.to_tensor([2, 3])).shape == [2, 3]      # a shape given as a tensor


def test_full_dtypes_follow_paddle():
    """paddle.full is float32 unless told otherwise, even for an int fill value;
    a bool fill value gives bool."""
    assert paddle.full([2], 3).dtype == paddle.float32
    assert paddle.full([2], 3.5).dtype == paddle.float32
    assert paddle.full([2], True).dtype == paddle.bool
    t = paddle.full([2, 2], 3.7, dtype="int64")
    assert t.dtype == paddle.int64 and np.all(t.numpy() == 3)
    assert paddle.full([3], paddle.to_tensor(2.5)).numpy().tolist() == [2.5] * 3


def test_like_forms_take_shape_and_dtype():
    x = paddle.to_tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    for fn, value in [(paddle.zeros_like, 0), (paddle.ones_like, 1)]:
        t = fn(x)
        assert t.dtype == paddle.int32 and t.shape == [2, 3] and np.all(t.numpy() == value)
        assert fn(x, dtype="float64").dtype == paddle.float64
    t = paddle.full_like(x, 7)
    assert t.dtype == paddle.int32 and np.all(t.numpy() == 7)
    assert paddle.full_like(paddle.ones([2]), 2.5, dtype="int64").numpy().tolist() == [2, 2]
    assert paddle.full_like(paddle.to_tensor([True, False]), 1).dtype == paddle.bool
    assert paddle.empty_like(x).shape == [2, 3]


@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((2, 7), {}), ((5, 0, -2), {}), ((0, 1, 0.25), {}), ((5.0,), {}),
    ((0, 3, 1), {"dtype": "float64"}), ((-1.5, 2.0, 0.5), {}), ((3, 3), {}),
])
def test_arange_matches_numpy(args, kwargs):
    t = paddle.arange(*args, **kwargs)
    all_ints = all(isinstance(a, int) for a in args)
    dtype = kwargs.get("dtype", "int64" if all_ints else "float32")
    expected = np.arange(*args).astype(dtype)
    assert t.dtype == dtype
    np.testing.assert_allclose(t.numpy(), expected)
    assert t.shape == list(expected.shape)


def test_arange_takes_tensors():
    assert paddle.arange(paddle.to_tensor(3)).numpy().tolist() == [0, 1, 2]


def test_arange_of_int_tensors_is_int64_as_paddle():
    """Tensor bounds gave float32 whatever their dtype."""
    for args in [(paddle.to_tensor(1), paddle.to_tensor(5)),
                 (paddle.to_tensor(1, dtype="int32"), 5)]:
        out = paddle.arange(*args)
        assert out.dtype == paddle.int64 and out.numpy().tolist() == [1, 2, 3, 4]
    assert paddle.arange(paddle.to_tensor(1.0), 3).dtype == paddle.float32
    assert paddle.arange(paddle.to_tensor(1.0, dtype="float64"), 3).dtype == paddle.float32


@pytest.mark.parametrize("args, want", [
    ((0, 10, 5), [0, 2, 5, 7, 10]), ((0, -10, 4), [0, -3, -6, -10]),
    ((0.5, 9.7, 3), [0, 4, 9]), ((1, 2, 4), [1, 1, 1, 2]), ((3.7, 10, 1), [3])])
def test_integer_linspace_truncates_as_paddle(args, want):
    """The bounds are converted to the dtype first, the values truncated toward zero
    (values of Paddle 3.3.1); it was a float32 tensor with the fractions."""
    out = paddle.linspace(*args, dtype="int32")
    assert out.dtype == paddle.int32 and out.numpy().tolist() == want


def test_float_linspace_counts_up_then_down_as_paddle():
    """Paddle's kernel: a float32 step, the first half from start, the rest from stop
    (the values of Paddle 3.3.1, to the bit)."""
    out = paddle.linspace(1e8, 1e8 + 7, 8)
    assert out.numpy().tolist() == [1e8] * 4 + [100000008.0] * 4
    out = paddle.linspace(0.1, 0.7, 7).numpy()
    assert out[1] == np.float32(0.19999998807907104) and out[-1] == np.float32(0.7)
    third = paddle.linspace(1 / 3, 7.1, 9, dtype="float64").numpy()
    assert third[0] == 1 / 3 and third[-1] == 7.1


def test_linspace_errors():
    with pytest.raises(ValueError, match="num must be at least 0"):
        paddle.linspace(0, 1, -1)
    assert paddle.linspace(0, 1, 0).shape == [0]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_linspace_of_tensor_bounds_agrees_with_eager(backend):
    def fn(lo, hi):
        return paddle.linspace(lo, hi, 7, dtype="int64"), paddle.linspace(lo, hi, 6)
    lo, hi = paddle.to_tensor(-3.5), paddle.to_tensor(9.25)
    for got, want in zip(paddle.compile(fn, backend=backend)(lo, hi), fn(lo, hi)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_linspace_and_eye():
    np.testing.assert_allclose(paddle.linspace(-1, 1, 5).numpy(), np.linspace(-1, 1, 5),
                               rtol=1e-6)
    np.testing.assert_array_equal(paddle.eye(3, 4).numpy(), np.eye(3, 4))


def test_random_dtypes_shapes_and_ranges():
    paddle.seed(0)
    for shape in ([2, 3], (4,), []):
        for fn in (paddle.randn, paddle.rand):
            t = fn(shape)
            assert t.dtype == paddle.float32 and t.shape == list(shape)
    assert paddle.randn([2], dtype="float64").dtype == paddle.float64
    u = paddle.rand([10_000]).numpy()
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.02
    n = paddle.randn([10_000]).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1.0) < 0.05
    u = paddle.uniform([10_000], min=2.0, max=3.0).numpy()
    assert u.min() >= 2.0 and u.max() <= 3.0
    r = paddle.randint(0, 4, [1000]).numpy()
    assert r.dtype == np.int64 and set(r.tolist()) == {0, 1, 2, 3}
    with pytest.raises(TypeError):
        paddle.rand([2], dtype="int64")


def test_seed_makes_draws_repeatable():
    paddle.seed(2026)
    first = [paddle.randn([3]).numpy(), paddle.rand([2, 2]).numpy()]
    paddle.seed(2026)
    second = [paddle.randn([3]).numpy(), paddle.rand([2, 2]).numpy()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(paddle.randn([3]).numpy(), first[0])   # the stream moves on
    paddle.seed(2027)
    assert not np.array_equal(paddle.randn([3]).numpy(), first[0])


def test_full_takes_a_one_element_tensor_as_its_fill_value_in_compiled_code():
    """As in Paddle: full and full_like fill with a one-element tensor's value (cast
    to the result's dtype, no gradient through it), also one the program computes (a
    loop's counter), and refuse a tensor of more elements."""
    def grow(x):
        rows, i = [], paddle.to_tensor(0)
        while i < 3:
            rows.append(paddle.full([2], i) + x)
            i = i + 1
        return paddle.stack(rows)

    x = paddle.ones([2])
    want = [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert grow(x).numpy().tolist() == want
    assert paddle.jit.to_static(grow)(x).numpy().tolist() == want
    like = paddle.jit.to_static(lambda t: paddle.full_like(t, t.sum(), dtype="int32"))
    out = like(paddle.to_tensor([1.5, 1.5]))
    assert out.dtype == paddle.int32 and out.numpy().tolist() == [3, 3]
    with pytest.raises(ValueError, match="one element"):
        paddle.full([2], paddle.to_tensor([1.0, 2.0]))
