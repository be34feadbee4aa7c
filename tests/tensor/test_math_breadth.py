"""Paddle's tensor math that realistic scripts call (diff, kron, trace, diagonal,
cross, inner, tensordot, dist, lerp, logaddexp, rad2deg, deg2rad, nan_to_num), the
default float dtype, and small Tensor methods. Values from NumPy, or from
PaddlePaddle 3.3.1 where quoted; gradients against finite differences; compiled
programs against eager."""
import contextvars
import threading

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, IrflowError, ShapeError
from tests.nn.gradcheck import check_grads

NAN, INF = float("nan"), float("inf")
M = np.arange(12.).reshape(3, 4)
CUBE = np.arange(24.).reshape(2, 3, 4)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- diff

def test_diff_matches_numpy():
    x = np.array([[1., 4., 9., 16.], [2., 3., 5., 7.]], np.float32)
    for n, axis in [(1, -1), (2, 1), (1, 0), (5, -1)]:
        np.testing.assert_array_equal(paddle.diff(t(x), n=n, axis=axis).numpy(),
                                      np.diff(x, n=n, axis=axis))
    edges = paddle.diff(t(x), prepend=t([[0.], [0.]]), append=t([[100.], [100.]]))
    np.testing.assert_array_equal(edges.numpy(), np.diff(x, prepend=0, append=100))
    flips = paddle.diff(t([True, False, False, True]))  # Paddle 3.3.1: xor of neighbours
    assert flips.dtype is paddle.bool and flips.tolist() == [True, False, True]
    assert t([1, 5, 2], dtype="int32").diff().dtype is paddle.int32
    with pytest.raises(ValueError, match="n must be"):
        paddle.diff(t(x), n=0)
    with pytest.raises(ShapeError, match="0-D"):
        paddle.diff(t(1.))


# ---------------------------------------------------------------- products

def test_kron_matches_numpy():
    a, b = np.array([[1, 2], [3, 4]]), np.array([[0, 5], [6, 7]])
    assert paddle.kron(t(a), t(b)).tolist() == np.kron(a, b).tolist()
    row, square = np.array([1., 2.]), np.array([[1., 10.], [100., 1000.]])
    np.testing.assert_array_equal(paddle.kron(t(row), t(square)).numpy(), np.kron(row, square))
    ones, column = np.ones((2, 1, 2)), np.arange(3.).reshape(3, 1)
    np.testing.assert_array_equal(t(ones).kron(t(column)).numpy(), np.kron(ones, column))
    with pytest.raises(DTypeError, match="kron"):
        paddle.kron(t([1., 2.]), t([1., 2.], dtype="float64"))


def test_inner_and_tensordot_match_numpy():
    a, b = np.arange(6.).reshape(2, 3), np.array([[1., 0., 1.], [2., 1., 0.]])
    np.testing.assert_array_equal(paddle.inner(t(a), t(b)).numpy(), np.inner(a, b))
    np.testing.assert_array_equal(paddle.inner(t(CUBE), t(M)).numpy(), np.inner(CUBE, M))
    assert paddle.inner(t([1., 2.]), t([3., 4.])).shape == []
    np.testing.assert_array_equal(paddle.inner(t(2.), t([3., 4.])).numpy(), [6., 8.])
    with pytest.raises(ShapeError, match="last axes"):
        paddle.inner(t([1., 2.]), t([3., 4., 5.]))
    y = np.arange(8.).reshape(4, 2)
    for other, axes, numpy_axes in [(M, 2, 2), (y, 0, 0), (y, [[2], [0]], ([2], [0])),
                                    (y, t([[2], [0]]), ([2], [0]))]:
        np.testing.assert_array_equal(paddle.tensordot(t(CUBE), t(other), axes).numpy(),
                                      np.tensordot(CUBE, other, numpy_axes))
    # Paddle 3.3.1: the shorter list of axes is completed from the longer
    z = np.arange(24.).reshape(4, 3, 2)
    np.testing.assert_array_equal(paddle.tensordot(t(CUBE), t(z), [[2, 1], [0]]).numpy(),
                                  [[880., 946.], [2464., 2674.]])
    with pytest.raises(ValueError, match="negative"):
        paddle.tensordot(t(CUBE), t(y), -1)
    with pytest.raises(ShapeError, match="one size"):
        paddle.tensordot(t(CUBE), t(y), [[1], [0]])


def test_cross_matches_numpy():
    a, b = np.array([[1., 2., 3.], [4., 5., 6.]]), np.array([[0., 1., 0.], [7., 8., 10.]])
    np.testing.assert_array_equal(paddle.cross(t(a), t(b)).numpy(), np.cross(a, b))
    columns = np.arange(6.).reshape(3, 2)
    np.testing.assert_array_equal(paddle.cross(t(columns), t(np.ones((3, 2))), axis=0).numpy(),
                                  np.cross(columns, np.ones((3, 2)), axis=0))
    assert t([1, 2, 3]).cross(t([4, 5, 6])).tolist() == [-3, 6, -3]
    with pytest.raises(ShapeError, match="size 3"):
        paddle.cross(t(np.ones((2, 2))), t(np.ones((2, 2))))
    with pytest.raises(ShapeError, match="one shape"):
        paddle.cross(t([[1., 2., 3.]]), t(np.ones((2, 3))))


def test_diagonal_and_trace_match_numpy():
    for offset in (0, 1, -1, -2, 7):
        np.testing.assert_array_equal(paddle.diagonal(t(M), offset).numpy(),
                                      np.diagonal(M, offset))
        np.testing.assert_array_equal(paddle.trace(t(M), offset).numpy(), np.trace(M, offset))
    for offset, axis1, axis2 in [(0, 0, 2), (1, 2, 1), (-1, -1, 0)]:
        np.testing.assert_array_equal(
            t(CUBE).diagonal(offset, axis1, axis2).numpy(),
            np.diagonal(CUBE, offset, axis1, axis2))
        np.testing.assert_array_equal(t(CUBE).trace(offset, axis1, axis2).numpy(),
                                      np.trace(CUBE, offset, axis1, axis2))
    assert paddle.trace(t([[1, 2], [3, 4]], dtype="int32")).dtype is paddle.int32  # Paddle
    assert paddle.diagonal(t([[True, False], [True, True]])).tolist() == [True, True]
    with pytest.raises(ShapeError, match="different"):
        paddle.trace(t(M), axis1=1, axis2=1)
    with pytest.raises(ShapeError, match="at least 2"):
        paddle.trace(t([1., 2.]))
    with pytest.raises(TypeError, match="bool"):
        paddle.trace(t([[True]]))


def test_dist():
    x, y = t([[3., 1., 2., 7.], [0., 5., 5., -1.]]), t([[1., 2., 3., 4.]])
    # PaddlePaddle 3.3.1's values
    for p, expected in [(2, 7.348469257354736), (1, 18.), (0, 8.), (INF, 5.), (-INF, 1.),
                        (3, 5.828476905822754), (0.5, 132.90853881835938)]:
        np.testing.assert_allclose(paddle.dist(x, y, p).item(), expected, rtol=1e-6)
    assert x.dist(x).item() == 0.0
    with pytest.raises(DTypeError, match="dist"):
        paddle.dist(x.astype("float64"), y)
    with pytest.raises(TypeError, match="float32 or float64"):
        paddle.dist(t([1, 2]), t([3, 5]))
    z = t([[3., 1.]], stop_gradient=False)
    paddle.dist(z, z.detach()).backward()
    assert z.grad.tolist() == [[0., 0.]]  # Paddle 3.3.1: zero at a zero distance, not NaN


# ---------------------------------------------------------------- elementwise

def test_lerp():
    np.testing.assert_array_equal(paddle.lerp(t([1., 2.]), t([10., 20.]), 0.5).numpy(),
                                  [5.5, 11.])
    a, b, w = np.array([[1.], [2.]]), np.array([10., 20.]), np.array([0.25, 2.])
    np.testing.assert_array_equal(paddle.lerp(t(a), t(b), t(w)).numpy(), a + w * (b - a))
    x = t([1., 2.])
    assert x.lerp_(t([10., 20.]), 0.5) is x and x.tolist() == [5.5, 11.]
    with pytest.raises(TypeError, match="float"):
        paddle.lerp(t([1, 2]), t([10, 20]), 0.5)


def test_logaddexp():
    a, b = np.array([1., -3., 1000., -INF], np.float32), np.array([2., 4., 1000., 0.], np.float32)
    np.testing.assert_allclose(paddle.logaddexp(t(a), t(b)).numpy(), np.logaddexp(a, b),
                               rtol=1e-6)
    # PaddlePaddle 3.3.1: ints give float32; equal infinities give NaN by its formula
    assert paddle.logaddexp(t([1, 2]), t([2, 3])).dtype is paddle.float32
    assert np.isnan(paddle.logaddexp(t([INF]), t([INF])).item())


def test_angles():
    np.testing.assert_allclose(paddle.rad2deg(t([np.pi, 1.])).numpy(), [180., 57.29578],
                               rtol=1e-6)
    degrees = paddle.rad2deg(t([1, 2], dtype="int32"))
    assert degrees.dtype is paddle.float32  # Paddle 3.3.1
    radians = t([180., 1.], dtype="float64").deg2rad()
    np.testing.assert_allclose(radians.numpy(), np.deg2rad([180., 1.]), rtol=1e-15)


def test_nan_to_num():
    x = np.array([NAN, INF, -INF, 1.], np.float32)
    np.testing.assert_array_equal(paddle.nan_to_num(t(x)).numpy(), np.nan_to_num(x))
    np.testing.assert_array_equal(paddle.nan_to_num(t(x), 1., 2., -3.).numpy(), [1, 2, -3, 1])
    doubles = t(x.astype(np.float64)).nan_to_num()
    np.testing.assert_array_equal(doubles.numpy(), np.nan_to_num(x.astype(np.float64)))
    y = t(x)
    assert y.nan_to_num_(nan=5.) is y and y.numpy()[0] == 5.
    with pytest.raises(TypeError, match="float32 or float64"):
        paddle.nan_to_num(t([1, 2]))


# ---------------------------------------------------------------- gradients and compiling

def test_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check_grads(lambda x: paddle.diff(x, n=2, axis=1), a)
    check_grads(lambda x, y: paddle.kron(x, y), a[:2, :2], b[:2, :3])
    check_grads(lambda x: paddle.trace(x, 1), a)
    check_grads(lambda x: paddle.diagonal(x, -1), a)
    check_grads(lambda x, y: paddle.cross(x, y, axis=0), a[:, :2], b[:, :2])
    check_grads(lambda x, y: paddle.inner(x, y), a, b)
    check_grads(lambda x, y: paddle.tensordot(x, y, [[1], [1]]), a, b)
    check_grads(lambda x, y: paddle.dist(x, y, 3), a, b)
    check_grads(lambda x, y, w: paddle.lerp(x, y, w), a, b, rng.random((3, 4)))
    check_grads(lambda x, y: paddle.logaddexp(x, y), a, b)
    check_grads(lambda x: paddle.rad2deg(x) + paddle.deg2rad(x), a)
    check_grads(lambda x: paddle.nan_to_num(x / 0.5), a)


def _math(x, y):
    return (paddle.diff(x, prepend=y[:, :1]), paddle.kron(x[:2, :2], y[:2]),
            paddle.trace(x), paddle.diagonal(x, 1), paddle.cross(x[:, :3], y[:, :3]),
            paddle.inner(x, y), paddle.tensordot(x, y, [[0], [0]]), paddle.dist(x, y),
            paddle.lerp(x, y, 0.3), paddle.logaddexp(x, y), paddle.rad2deg(x),
            paddle.deg2rad(y), paddle.nan_to_num(paddle.log(x)))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_math_agrees_with_eager(backend):
    rng = np.random.default_rng(1)
    x, y = (t(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(2))
    for got, want in zip(paddle.compile(_math, backend=backend)(x, y), _math(x, y)):
        assert got.shape == want.shape and got.dtype is want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- the default dtype

def test_default_dtype_types_what_nothing_else_types():
    context = contextvars.copy_context()  # the setting stays inside this test
    context.run(_check_default_float64)
    assert paddle.get_default_dtype() == "float32"


def _check_default_float64():
    paddle.set_default_dtype("float64")
    assert paddle.get_default_dtype() == "float64"
    # each of these is float64 in PaddlePaddle 3.3.1 after set_default_dtype('float64')
    made = [paddle.to_tensor(1.5), paddle.to_tensor([1.5, 2]), paddle.zeros([2]),
            paddle.ones([2]), paddle.full([2], 1), paddle.empty([2]), paddle.eye(2),
            paddle.arange(0, 1, 0.5), paddle.linspace(0, 1, 3), paddle.randn([2]),
            paddle.rand([2]), paddle.uniform([2]), paddle.normal(shape=[2]),
            paddle.standard_normal([2])]
    assert [m.dtype for m in made] == [paddle.float64] * len(made)
    # ... and these are not (PaddlePaddle 3.3.1)
    assert paddle.to_tensor([1]).dtype is paddle.int64
    assert paddle.to_tensor(np.float32(1)).dtype is paddle.float32
    assert (paddle.to_tensor([1]) * 1.5).dtype is paddle.float32
    assert paddle.sqrt(paddle.to_tensor([4])).dtype is paddle.float32
    paddle.set_default_dtype(paddle.bfloat16)
    assert paddle.to_tensor([1.5]).dtype is paddle.bfloat16
    assert paddle.to_tensor([1.5]).item() == 1.5


def test_default_dtype_is_per_thread():
    seen = {}
    started, changed = threading.Event(), threading.Event()

    def other_thread():
        started.set()
        changed.wait()
        seen["dtype"] = paddle.zeros([1]).dtype

    worker = threading.Thread(target=other_thread)
    worker.start()
    started.wait()
    context = contextvars.copy_context()
    context.run(paddle.set_default_dtype, "float16")
    changed.set()
    worker.join()
    assert seen["dtype"] is paddle.float32
    assert context.run(paddle.get_default_dtype) == "float16"


def test_set_default_dtype_refuses_non_floats():
    for bad in ("int32", "complex64", "foo", None):
        with pytest.raises(TypeError, match="float16, float32, float64 or bfloat16"):
            paddle.set_default_dtype(bad)


# ---------------------------------------------------------------- Tensor methods

def test_small_tensor_methods():
    x = t([[1., -2.], [3., -4.]])
    np.testing.assert_array_equal((x > 0).where(x, t(0.)).numpy(), [[1., 0.], [3., 0.]])
    assert t([1, 2]).type_as(t([1.], dtype="float64")).dtype is paddle.float64
    assert t([1.5, 2.7]).type_as(t([1])).tolist() == [1, 2]  # truncated, as Paddle
    assert x.ndimension() == 2 and t(1.).ndimension() == 0
    sizes = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int32": 4,
             "int64": 8, "bool": 1, "uint8": 1, "int8": 1, "int16": 2}  # Paddle 3.3.1
    for dtype, size in sizes.items():
        assert paddle.zeros([2], dtype=dtype).element_size() == size
    assert x.T.is_contiguous() and x.contiguous() is x


def test_uniform_and_normal_in_place():
    paddle.seed(3)
    x = paddle.zeros([2, 3])
    assert x.uniform_() is x
    assert x.numpy().min() >= 0 and x.numpy().max() < 1
    y = paddle.zeros([2, 3], dtype="float64").uniform_(min=5, max=6)
    assert y.dtype is paddle.float64 and y.numpy().min() >= 5 and y.numpy().max() < 6
    z = paddle.zeros([4000]).normal_(mean=2., std=3.)
    assert abs(z.numpy().mean() - 2.) < 0.2 and abs(z.numpy().std() - 3.) < 0.2
    with pytest.raises(TypeError, match="float dtype"):
        paddle.zeros([2], dtype="int64").uniform_()
    leaf = paddle.zeros([2])
    leaf.stop_gradient = False
    with pytest.raises(IrflowError, match="in place"):
        leaf.normal_()
