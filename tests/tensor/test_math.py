"""Elementwise math, comparisons, logic, reductions, argmax and matmul on eager
tensors: values against NumPy (with broadcasting, 0-d and empty tensors), dtypes as
in Paddle, and gradients against central differences in float64."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from tests.nn.gradcheck import check_grads

BROADCAST_SHAPES = [((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((), (2, 2)), ((4,), ()),
                    ((0, 3), (3,)), ((1,), (2, 1))]


def _rand(shape, seed, low=-2.0, high=2.0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


BINARY = {
    "add": (lambda x, y: x + y, np.add),
    "subtract": (lambda x, y: x - y, np.subtract),
    "multiply": (lambda x, y: x * y, np.multiply),
    "divide": (lambda x, y: x / y, np.divide),
    "pow": (lambda x, y: x ** y, np.power),
    "maximum": (paddle.maximum, np.maximum),
    "minimum": (paddle.minimum, np.minimum),
    "paddle.add": (paddle.add, np.add),
    "paddle.subtract": (paddle.subtract, np.subtract),
    "paddle.multiply": (paddle.multiply, np.multiply),
    "paddle.divide": (paddle.divide, np.divide),
    "paddle.pow": (paddle.pow, np.power),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_values_broadcast_like_numpy(name, dtype):
    fn, reference = BINARY[name]
    for i, (sa, sb) in enumerate(BROADCAST_SHAPES):
        low = 0.5 if name.endswith("pow") or name.endswith("divide") else -2.0
        a, b = _rand(sa, i, low, 2.0, dtype), _rand(sb, i + 10, low, 2.0, dtype)
        out = fn(paddle.to_tensor(a), paddle.to_tensor(b))
        expected = reference(a, b)
        assert out.dtype == dtype and out.shape == list(expected.shape)
        np.testing.assert_allclose(out.numpy(), expected, rtol=2e-6)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum"])
def test_binary_gradients_with_broadcasting(name):
    fn = BINARY[name][0]
    for i, (sa, sb) in enumerate(BROADCAST_SHAPES[:4]):
        check_grads(fn, _rand(sa, i, 0.5, 2.0), _rand(sb, i + 20, 0.5, 2.0))


@pytest.mark.parametrize("fn", [lambda x: x * 2, lambda x: 2 - x, lambda x: 3 / x,
                                lambda x: x ** 3, lambda x: 2 ** x, lambda x: -x,
                                lambda x: x - 1.5, lambda x: (x + 1) * (x - 1) / (x * x)])
def test_gradients_with_python_scalars(fn):
    check_grads(fn, _rand((2, 3), 0, 0.5, 2.0))


UNARY = {  # paddle function, NumPy reference, domain
    "abs": (paddle.abs, np.abs, (-2, 2)),
    "exp": (paddle.exp, np.exp, (-2, 2)),
    "log": (paddle.log, np.log, (0.1, 3)),
    "tanh": (paddle.tanh, np.tanh, (-3, 3)),
    "sqrt": (paddle.sqrt, np.sqrt, (0.1, 3)),
    "neg": (paddle.neg, np.negative, (-2, 2)),
    "sigmoid": (paddle.sigmoid, lambda a: 1 / (1 + np.exp(-a)), (-4, 4)),
    "sin": (paddle.sin, np.sin, (-3, 3)),
    "cos": (paddle.cos, np.cos, (-3, 3)),
    "square": (paddle.square, np.square, (-2, 2)),
    "reciprocal": (paddle.reciprocal, np.reciprocal, (0.5, 2)),
    "rsqrt": (paddle.rsqrt, lambda a: 1 / np.sqrt(a), (0.5, 2)),
    "log1p": (paddle.log1p, np.log1p, (0.1, 2)),
    "erf": (paddle.erf, np.vectorize(math.erf, otypes=[np.float64]), (-2, 2)),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_gradients_and_methods(name):
    fn, reference, (low, high) = UNARY[name]
    for dtype in (np.float32, np.float64):
        for shape in [(2, 3), (), (0,)]:
            a = _rand(shape, 3, low, high, dtype)
            out = fn(paddle.to_tensor(a))
            assert out.dtype == dtype and out.shape == list(shape)
            np.testing.assert_allclose(out.numpy(), reference(a), rtol=2e-6, atol=1e-7)
    method = getattr(paddle.Tensor, name, None)
    if method is not None:
        a = _rand((3,), 4, low, high)
        np.testing.assert_allclose(method(paddle.to_tensor(a)).numpy(), reference(a))
    check_grads(fn, _rand((2, 3), 5, low, high))


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_sigmoid_keeps_its_tails(backend):
    """sigmoid is 1 / (1 + e**-x), Paddle's formula: its tiny results for negative x
    (to the float32 subnormals) relative to float64's within a few ulp, 1.0 once
    e**-x is below half an ulp of 1 (Paddle's 1.0 at 16.9, so a BCE of it is Paddle's
    100, not log(1 - (1 - 2**-24))), and 0 where e**-x overflows; eager, on the NumPy
    backend and compiled (arrays of 8192: the LLVM kernel runs)."""
    x = np.repeat(np.array([-103.0, -88.0, -30.0, -16.9, -1.0, 0.0, 1.0, 16.9, 30.0],
                           np.float32), 1024)
    def fn(t):  # x * 0 (NaN where x is inf, so not folded) makes a fused body
        return paddle.sigmoid(t) + t * 0.0
    if backend is not None:
        fn = paddle.compile(fn, backend=backend)
    got = fn(paddle.to_tensor(x)).numpy()
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    normal = want > np.finfo(np.float32).tiny
    np.testing.assert_allclose(got[normal], want[normal], rtol=3e-7)
    np.testing.assert_allclose(got[~normal], want[~normal], rtol=0, atol=2e-45)
    assert (got[x == 16.9] == 1.0).all()


@pytest.mark.parametrize("fn", [paddle.exp, paddle.log, paddle.sqrt, paddle.tanh])
def test_float_functions_of_integers_compute_in_float32(fn):
    x = paddle.to_tensor([1, 2, 3], dtype="int32")
    out = fn(x)
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), UNARY[fn.__name__][1](np.array([1.0, 2.0, 3.0])),
                               rtol=1e-6)


def test_abs_and_neg_keep_integer_dtypes():
    x = paddle.to_tensor([-3, 0, 2], dtype="int32")
    assert paddle.abs(x).dtype == paddle.int32 and paddle.abs(x).numpy().tolist() == [3, 0, 2]
    assert (-x).numpy().tolist() == [3, 0, -2] and abs(x).numpy().tolist() == [3, 0, 2]


def test_nan_and_inf_tests():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    for dtype in (np.float32, np.float64):
        x = paddle.to_tensor(a.astype(dtype))
        for fn, reference in [(paddle.isnan, np.isnan), (paddle.isinf, np.isinf),
                              (paddle.isfinite, np.isfinite)]:
            out = fn(x)
            assert out.dtype == paddle.bool
            np.testing.assert_array_equal(out.numpy(), reference(a))
        assert x.isnan().numpy().tolist() == np.isnan(a).tolist()
    ints = paddle.to_tensor([1, 2])
    assert paddle.isnan(ints).numpy().tolist() == [False, False]
    assert paddle.isinf(ints).numpy().tolist() == [False, False]
    assert paddle.isfinite(ints).numpy().tolist() == [True, True]


COMPARE = {"==": (lambda x, y: x == y, np.equal), "!=": (lambda x, y: x != y, np.not_equal),
           "<": (lambda x, y: x < y, np.less), "<=": (lambda x, y: x <= y, np.less_equal),
           ">": (lambda x, y: x > y, np.greater), ">=": (lambda x, y: x >= y, np.greater_equal),
           "equal": (paddle.equal, np.equal), "less_than": (paddle.less_than, np.less),
           "greater_equal": (paddle.greater_equal, np.greater_equal)}


@pytest.mark.parametrize("name", COMPARE)
def test_comparisons(name):
    fn, reference = COMPARE[name]
    for i, (sa, sb) in enumerate(BROADCAST_SHAPES):
        a = np.random.default_rng(i).integers(0, 3, sa).astype(np.float32)
        b = np.random.default_rng(i + 1).integers(0, 3, sb).astype(np.float32)
        out = fn(paddle.to_tensor(a), paddle.to_tensor(b))
        assert out.dtype == paddle.bool and out.stop_gradient
        np.testing.assert_array_equal(out.numpy(), reference(a, b))
    x = paddle.to_tensor([1, 2, 3])
    np.testing.assert_array_equal(fn(x, 2).numpy(), reference(np.array([1, 2, 3]), 2))
    np.testing.assert_array_equal(fn(x, 1.5).numpy(), reference(np.array([1, 2, 3]), 1.5))


def test_logical_ops():
    a = np.array([[True, False], [True, True]])
    b = np.array([True, False])
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for out, expected in [(x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (~x, ~a),
                          (paddle.logical_and(x, y), a & b), (paddle.logical_or(x, y), a | b),
                          (paddle.logical_xor(x, y), a ^ b), (paddle.logical_not(x), ~a)]:
        assert out.dtype == paddle.bool
        np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_bitwise_operators_on_integers_keep_the_dtype(dtype):
    """&, |, ^ and ~ on int tensors are Paddle's bitwise_and/or/xor/not (they were
    logical, giving bools); a Python int on either side meets the tensor's dtype."""
    a, b = np.array([5, 6, 12, 0]).astype(dtype), np.array([3, 3, 10, 9]).astype(dtype)
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for out, expected in [(x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (~x, ~a),
                          (paddle.bitwise_and(x, y), a & b), (paddle.bitwise_or(x, y), a | b),
                          (paddle.bitwise_xor(x, y), a ^ b), (paddle.bitwise_not(x), ~a),
                          (x.bitwise_and(y), a & b), (6 & x, a & 6), (x | 1, a | 1),
                          (3 ^ x, a ^ 3)]:
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.numpy(), expected)


def test_bitwise_ops_refuse_floats_and_mixed_dtypes():
    f, i = paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([1, 2])
    for call in (lambda: f & f, lambda: ~f, lambda: i & 2.5, lambda: paddle.bitwise_not(f)):
        with pytest.raises(TypeError, match="int or bool tensors"):
            call()
    with pytest.raises(TypeError, match="do not mix"):
        i & paddle.to_tensor([1, 2], dtype="int32")


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_bitwise_ops_agree_with_eager(backend):
    """Arrays of 8192, so the LLVM backend runs its compiled kernel, not NumPy's."""
    def fn(x, y):
        return ((x & y) | ~x) ^ (y & 7), (x > 0) ^ (y > 9)
    x = paddle.to_tensor(np.arange(-4096, 4096, dtype=np.int32))
    y = paddle.to_tensor(np.arange(8192, dtype=np.int32)[::-1].copy())
    for got, want in zip(paddle.compile(fn, backend=backend)(x, y), fn(x, y)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("fn, reference", [(paddle.any, np.any), (paddle.all, np.all)])
def test_any_all(fn, reference):
    a = np.array([[True, False, False], [False, False, False]])
    x = paddle.to_tensor(a)
    for axis in (None, 0, 1, -1, [0, 1], (1,)):
        for keepdim in (False, True):
            out = fn(x, axis=axis, keepdim=keepdim)
            np_axis = tuple(axis) if isinstance(axis, list) else axis
            expected = reference(a, axis=np_axis, keepdims=keepdim)
            assert out.dtype == paddle.bool and out.shape == list(np.shape(expected))
            np.testing.assert_array_equal(out.numpy(), expected)
    numbers = np.array([[0.0, 2.0], [0.0, 0.0]])            # non-zero counts as true
    np.testing.assert_array_equal(fn(paddle.to_tensor(numbers), axis=1).numpy(),
                                  reference(numbers != 0, axis=1))
    assert fn(x).shape == []


def test_where():
    cond = np.array([[True], [False]])
    a, b = _rand((2, 3), 0), _rand((3,), 1)
    out = paddle.where(paddle.to_tensor(cond), paddle.to_tensor(a), paddle.to_tensor(b))
    np.testing.assert_array_equal(out.numpy(), np.where(cond, a, b))
    scalars = paddle.where(paddle.to_tensor([True, False]), 1.0, 0.0)
    assert scalars.dtype == paddle.float32 and scalars.numpy().tolist() == [1.0, 0.0]
    mixed = paddle.where(paddle.to_tensor([True, False]), paddle.to_tensor([5, 6]), -1)
    assert mixed.dtype == paddle.int64 and mixed.numpy().tolist() == [5, -1]
    with pytest.raises(TypeError, match="bool"):
        paddle.where(paddle.to_tensor([1, 0]), 1.0, 0.0)   # Paddle wants a bool condition
    cond_t = paddle.to_tensor(cond)
    check_grads(lambda x, y: paddle.where(cond_t, x, y), a, b)


# ---------------------------------------------------------------- reductions

AXES = [None, 0, 1, -1, [0, 2], (1, 2), [-1, 0], [0, 1, 2]]
REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
              "amax": np.max, "amin": np.min}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_over_axes(name):
    fn, reference = getattr(paddle, name), REDUCTIONS[name]
    a = _rand((2, 3, 4), 7, 0.5, 1.5)
    x = paddle.to_tensor(a)
    for axis in AXES:
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        for keepdim in (False, True):
            expected = reference(a, axis=np_axis, keepdims=keepdim)
            for out in (fn(x, axis=axis, keepdim=keepdim),
                        getattr(x, name)(axis=axis, keepdim=keepdim)):
                assert out.dtype == paddle.float64 and out.shape == list(np.shape(expected))
                np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    full = fn(x)
    assert full.shape == [] and full.ndim == 0          # a full reduction is 0-d
    assert fn(x, axis=[]).shape == []                     # as in Paddle, [] means all axes
    with pytest.raises(ShapeError, match="axis"):
        fn(x, axis=3)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reduction_gradients(name):
    fn = getattr(paddle, name)
    a = _rand((2, 3, 4), 8, 0.5, 1.5)
    for axis, keepdim in [(None, False), (1, False), (-1, True), ([0, 2], False),
                          ([0, 1], True)]:
        check_grads(lambda x: fn(x, axis=axis, keepdim=keepdim), a)


def test_reduction_dtypes_follow_paddle():
    i32 = paddle.to_tensor([[1, 2], [3, 4]], dtype="int32")
    flags = paddle.to_tensor([True, True, False])
    assert paddle.sum(i32).dtype == paddle.int64 and paddle.sum(i32).item() == 10
    assert paddle.sum(i32, axis=0).dtype == paddle.int64
    assert i32.sum().dtype == paddle.int64
    assert paddle.sum(i32, dtype="int32").dtype == paddle.int32
    assert paddle.sum(flags).dtype == paddle.int64 and paddle.sum(flags).item() == 2
    assert paddle.prod(i32).dtype == paddle.int32 and paddle.prod(i32).item() == 24
    assert paddle.max(i32).dtype == paddle.int32 and paddle.min(i32, axis=0).dtype == paddle.int32
    assert paddle.sum(paddle.ones([2])).dtype == paddle.float32


def test_mean_of_integers_and_bools_keeps_the_dtype_as_paddle():
    """Paddle 3.3.1 keeps an int or bool tensor's dtype, truncating toward zero (it was
    a float32 mean here: ported accuracy code mean(pred == label) changed value)."""
    out = paddle.mean(paddle.to_tensor([1, 2]))
    assert out.dtype == paddle.int64 and out.item() == 1
    assert paddle.mean(paddle.to_tensor([-1, -4])).item() == -2
    grid = paddle.to_tensor([[1, 2], [4, 7]], dtype="int32")
    assert paddle.mean(grid, axis=0).numpy().tolist() == [2, 4]
    assert paddle.mean(grid, axis=1).dtype == paddle.int32
    flags = paddle.mean(paddle.to_tensor([True, False, False]))
    assert flags.dtype == paddle.bool and flags.item() is True


def test_float16_mean_accumulates_in_float32():
    x = paddle.full([100], 1000.0).astype("float16")
    out = paddle.mean(x)
    assert out.dtype == paddle.float16 and out.astype("float32").item() == 1000.0


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_float16_and_int_means_agree_with_eager(backend):
    def fn(h, i):
        return paddle.mean(h * 1.0, axis=1), paddle.mean(i, axis=0)
    h = paddle.full([4, 5000], 1000.0).astype("float16")
    i = paddle.to_tensor(np.arange(-6, 6).reshape(4, 3))
    for got, want in zip(paddle.compile(fn, backend=backend)(h, i), fn(h, i)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_rounding_and_scale_keep_integer_dtypes_as_paddle():
    """round, floor, ceil of ints are the ints (they gave float32); scale of an int
    tensor computes in its dtype with the factors truncated toward zero."""
    x = paddle.to_tensor([1, -2, 3, 7], dtype="int32")
    for fn in (paddle.round, paddle.floor, paddle.ceil):
        out = fn(x)
        assert out.dtype == paddle.int32 and out.numpy().tolist() == [1, -2, 3, 7]
    assert paddle.scale(x, 2.0, 1.0).numpy().tolist() == [3, -3, 7, 15]
    assert paddle.scale(x, 1.5, 0.5).numpy().tolist() == [1, -2, 3, 7]
    assert paddle.scale(x, -1.5).numpy().tolist() == [-1, 2, -3, -7]
    assert paddle.scale(x, 2.0).dtype == paddle.int32
    t = paddle.to_tensor([1, 2])
    assert t.floor_() is t and t.dtype == paddle.int64 and t.round_().numpy().tolist() == [1, 2]


def test_max_gradient_splits_ties_evenly_as_paddle():
    x = paddle.to_tensor([1.0, 3.0, 3.0], stop_gradient=False)
    paddle.max(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5])


def test_floor_division_is_not_differentiable_as_in_paddle():
    x = paddle.to_tensor([2.5, -1.3], stop_gradient=False)
    assert (x // 0.7).stop_gradient and paddle.floor_divide(x, x).stop_gradient


def test_remainder_gradients_as_in_paddle():
    check_grads(lambda x, y: x % y, np.array([2.5, -1.3, 4.0]), np.array([0.7, 0.6, 1.5]))


def test_maximum_gradient_splits_ties_evenly_as_paddle():
    x = paddle.to_tensor([1.0, 3.0], stop_gradient=False)
    y = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    paddle.sum(paddle.maximum(x, y)).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 1.0])
    np.testing.assert_allclose(y.grad.numpy(), [0.5, 0.0])


@pytest.mark.parametrize("fn, reference", [(paddle.argmax, np.argmax), (paddle.argmin, np.argmin)])
def test_argmax_argmin(fn, reference):
    a = np.array([[1.0, 5.0, 5.0], [4.0, 2.0, -1.0]])     # a tie: the first index wins
    x = paddle.to_tensor(a)
    out = fn(x)
    assert out.dtype == paddle.int64 and out.shape == [] and out.item() == reference(a)
    for axis in (0, 1, -1):
        for keepdim in (False, True):
            out = fn(x, axis=axis, keepdim=keepdim)
            expected = reference(a, axis=axis, keepdims=keepdim)
            assert out.dtype == paddle.int64 and out.shape == list(expected.shape)
            np.testing.assert_array_equal(out.numpy(), expected)
    assert fn(x, keepdim=True).shape == [1, 1]
    assert fn(x, axis=0, dtype="int32").dtype == paddle.int32
    assert getattr(x, fn.__name__)(axis=1).numpy().tolist() == reference(a, axis=1).tolist()
    ints = paddle.to_tensor([3, 9, 1], dtype="int32")
    assert fn(ints).item() == reference([3, 9, 1])
    needs_grad = paddle.to_tensor(a, stop_gradient=False)
    assert fn(needs_grad).stop_gradient            # an index has no gradient
    with pytest.raises(ShapeError):
        fn(x, axis=2)


# ---------------------------------------------------------------- matmul

MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)),
                 ((4, 2, 3), (3, 5)), ((3, 1, 2, 3), (5, 3, 2)), ((5, 2, 3), (3,)),
                 ((2,), (4, 2, 3)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_matches_numpy(sa, sb):
    a, b = _rand(sa, 1, dtype=np.float32), _rand(sb, 2, dtype=np.float32)
    expected = np.matmul(a, b)
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for out in (paddle.matmul(x, y), x @ y, x.matmul(y)):
        assert out.dtype == paddle.float32 and out.shape == list(expected.shape)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    if min(len(sa), len(sb)) >= 1 and 0 not in sa:
        check_grads(paddle.matmul, a, b)


def test_matmul_transposes_mm_and_integers():
    a, b = _rand((3, 2), 1), _rand((4, 3), 2)
    out = paddle.matmul(paddle.to_tensor(a), paddle.to_tensor(b), transpose_x=True,
                        transpose_y=True)
    np.testing.assert_allclose(out.numpy(), a.T @ b.T)
    check_grads(lambda x, y: paddle.matmul(x, y, transpose_x=True, transpose_y=True), a, b)
    np.testing.assert_allclose(paddle.mm(paddle.to_tensor(a.T), paddle.to_tensor(a)).numpy(),
                               a.T @ a)
    ints = paddle.to_tensor([[1, 2], [3, 4]])
    assert (ints @ ints).dtype == paddle.int64 and (ints @ ints).numpy().tolist() == [[7, 10],
                                                                                       [15, 22]]


def test_matmul_shape_errors_say_what_mismatched():
    with pytest.raises(ShapeError, match=r"3.*2|2.*3"):
        paddle.matmul(paddle.ones([2, 3]), paddle.ones([2, 3]))
    with pytest.raises(ShapeError):
        paddle.matmul(paddle.to_tensor(1.0), paddle.ones([4]))
    with pytest.raises(ShapeError, match=r"\[2, 3\].*\[4\]"):
        paddle.ones([2, 3]) + paddle.ones([4])


def test_clip_scale_and_var():
    a = np.array([-1.0, 0.5, 3.0])
    np.testing.assert_allclose(paddle.clip(paddle.to_tensor(a), 0.0, 1.0).numpy(),
                               np.clip(a, 0, 1))
    assert paddle.clip(paddle.to_tensor([-1, 0, 3]), 0, 1).numpy().tolist() == [0, 0, 1]
    b = _rand((3, 4), 0)
    np.testing.assert_allclose(paddle.var(paddle.to_tensor(b), axis=1).numpy(),
                               np.var(b, axis=1, ddof=1))
    np.testing.assert_allclose(paddle.std(paddle.to_tensor(b)).numpy(), np.std(b, ddof=1))
    np.testing.assert_allclose(paddle.scale(paddle.to_tensor(b), 2.0, 1.0).numpy(), b * 2 + 1)


def test_zero_d_and_empty_axis_reductions_have_paddles_shapes():
    """logsumexp(axis=[]) reduces every axis to [] (it kept [1, 1, 1]); a scan of a
    0-d tensor along an axis stays 0-d (it became [1]); axis 0 or -1 of a 0-d
    tensor reduces nothing (-1 was an error)."""
    out = paddle.logsumexp(paddle.ones([2, 3, 4]), axis=[])
    assert out.shape == [] and out.item() == pytest.approx(1 + math.log(24))
    assert paddle.logsumexp(paddle.ones([2, 3]), axis=[], keepdim=True).shape == [1, 1]
    assert paddle.logsumexp(paddle.to_tensor(2.0), axis=0).item() == 2.0
    scalar = paddle.to_tensor(2.5)
    for fn in (lambda: paddle.cumsum(scalar, axis=0), lambda: paddle.cumsum(scalar, axis=-1),
               lambda: paddle.cumprod(scalar, dim=0)):
        assert fn().shape == [] and fn().item() == 2.5
    assert paddle.cumsum(scalar).shape == [1]
    with pytest.raises(ShapeError, match="out of range for a 0-d tensor"):
        paddle.cumsum(scalar, axis=1)
    for fn in (paddle.sum, paddle.max, paddle.argmax, paddle.mean):
        assert fn(scalar, axis=-1).shape == []


def test_variance_of_nothing_is_nan():
    assert math.isnan(paddle.var(paddle.to_tensor([], dtype="float32")).item())
    assert np.isnan(paddle.var(paddle.ones([2, 0]), axis=1).numpy()).all()
    assert paddle.var(paddle.to_tensor([1.0, 3.0]), axis=[]).item() == 2.0


def test_integer_zero_to_a_negative_power_is_zero():
    """Paddle's integer pow; 0 ** -3 was the int64 minimum (inf cast)."""
    assert (0 ** paddle.to_tensor([-3, -1, 0, 2])).numpy().tolist() == [0, 0, 1, 0]
    got = paddle.to_tensor([0, 1, -1, 2]) ** paddle.to_tensor([-2, -2, -3, -1])
    assert got.dtype == paddle.int64 and got.numpy().tolist() == [0, 1, -1, 0]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_zero_d_reductions_and_integer_powers_agree_with_eager(backend):
    def fn(s, base, power):
        return paddle.sum(s, axis=-1), paddle.argmax(s, axis=-1), paddle.cumsum(s, axis=0), \
            base ** power
    args = (paddle.to_tensor(2.5), paddle.to_tensor([0, 1, -1, 2]),
            paddle.to_tensor([-2, -2, -3, -1]))
    for got, want in zip(paddle.compile(fn, backend=backend)(*args), fn(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_var_and_std_over_a_symbolic_axis_compile():
    """The count they divide by is a size known when the program runs: unbiased they
    divide by count - 1, and an empty axis gives NaN, as in eager code."""
    from irflow.static import InputSpec

    def fn(x):
        return x.var(0), x.std(), x.var(1, unbiased=False), x[x > 0].var()

    compiled = paddle.compile(fn, input_spec=[InputSpec([None, 3])], backend="numpy")
    for n in (4, 1, 0):
        x = paddle.randn([n, 3])
        for got, want in zip(compiled(x), fn(x)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("p", [2, "fro", 3.0])
def test_norm_gradient_is_zero_at_an_all_zero_vector(p):
    """As Paddle's p_norm gradient (the chain rule there gives NaN: an infinite slope
    times zero); elsewhere it is the norm's gradient, by central differences."""
    a = np.array([[0.0, 0.0], [1.0, -2.0]])
    x = paddle.to_tensor(a, stop_gradient=False)
    paddle.linalg.vector_norm(x, p, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], np.zeros(2))
    check_grads(lambda t: paddle.linalg.vector_norm(t, p, axis=1), a[1:])


def test_matmul_of_an_unpickled_array():
    """An unpickled array's dtype equals float32 but is another object: matmul (and
    Linear) must not call it a mix of dtypes (weights loaded from a pickle)."""
    import pickle
    a = pickle.loads(pickle.dumps(np.arange(4, dtype=np.float32).reshape(2, 2)))
    assert a.dtype == np.float32 and a.dtype is not np.dtype(np.float32)
    x = paddle.to_tensor(a)
    np.testing.assert_allclose(paddle.matmul(x, x).numpy(), a @ a)
    assert paddle.nn.Linear(2, 3)(x).shape == [2, 3]


def test_divide_rounding_mode_and_subtract_alpha():
    """Paddle 3.3's keywords: divide rounds toward zero ('trunc') or down ('floor') in
    the inputs' dtype; subtract scales y by alpha."""
    a, b = np.array([7, -7, 6]), np.array([2, 2, -4])
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    trunc = paddle.divide(x, y, rounding_mode="trunc")
    assert trunc.dtype == paddle.int64
    np.testing.assert_array_equal(trunc.numpy(), np.trunc(a / b).astype(np.int64))
    np.testing.assert_array_equal(x.divide(y, rounding_mode="floor").numpy(), a // b)
    np.testing.assert_allclose(paddle.divide(x * 1.0, 2.0, rounding_mode="trunc").numpy(),
                               np.trunc(a / 2.0))
    np.testing.assert_array_equal(paddle.subtract(x, y, alpha=3).numpy(), a - 3 * b)
    with pytest.raises(ValueError, match="rounding_mode"):
        paddle.divide(x, y, rounding_mode="round")
