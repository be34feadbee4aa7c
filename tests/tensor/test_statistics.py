"""Medians, quantiles and the NaN-skipping reductions (irflow/tensor/stat.py): values
from NumPy, or from PaddlePaddle 3.3.1 where its choice is not NumPy's (quoted as
such), gradients against finite differences, compiled programs against eager."""
import numpy as np
import pytest

import irflow as paddle
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

NAN = float("nan")
X = np.array([[3., 1., 2., 7.], [0., 5., 5., -1.]], np.float32)
WITH_NAN = np.array([[1., NAN, 3., 4.], [NAN, NAN, 3., 5.], [NAN] * 4], np.float32)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- median

def test_median_avg_matches_numpy():
    rng = np.random.default_rng(0)
    for shape, axis in [((5,), None), ((4, 6), 1), ((4, 6), 0), ((3, 4, 5), -2)]:
        x = rng.standard_normal(shape).astype(np.float32)
        out = paddle.median(t(x), axis=axis)
        np.testing.assert_allclose(out.numpy(), np.median(x, axis=axis), rtol=1e-6)
        assert out.dtype is paddle.float32
    kept = paddle.median(t(X), axis=1, keepdim=True)
    assert kept.shape == [2, 1]
    assert paddle.median(t(X), keepdim=True).shape == [1, 1]


def test_median_avg_dtypes():
    """Paddle 3.3.1: float64 stays float64; an int (or bool) median is float32."""
    assert paddle.median(t(X).astype("float64")).dtype is paddle.float64
    ints = paddle.median(t([[3, 1, 2, 4]]))
    assert ints.dtype is paddle.float32 and ints.item() == 2.5
    assert paddle.median(t([[3, 1, 2, 4]], dtype="int32"), axis=1).dtype is paddle.float32
    assert paddle.median(t(3.), axis=0).item() == 3.0  # a 0-D x over axis 0, as Paddle


def test_median_min_returns_values_and_indices():
    values, indices = paddle.median(t(X), axis=1, mode="min")
    np.testing.assert_array_equal(values.numpy(), [2., 0.])  # Paddle 3.3.1
    np.testing.assert_array_equal(indices.numpy(), [2, 0])  # Paddle 3.3.1
    assert indices.dtype is paddle.int64
    values, indices = paddle.median(t(X), axis=0, mode="min", keepdim=True)
    np.testing.assert_array_equal(values.numpy(), [[0., 1., 2., -1.]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 0, 0, 1]])
    single = paddle.median(t(X), mode="min")  # over all of x: the value alone
    assert isinstance(single, paddle.Tensor) and single.item() == 2.0
    ints, _ = paddle.median(t([[3, 1, 2, 4]], dtype="int32"), axis=1, mode="min")
    assert ints.dtype is paddle.int32 and ints.tolist() == [2]


def test_median_with_nan():
    """Paddle 3.3.1: a row holding NaN has median NaN, and in mode 'min' the index of
    its first NaN."""
    rows = t([[1., NAN, NAN, 4.], [1., 2., 3., 5.], [NAN, 1., 5., NAN]])
    np.testing.assert_array_equal(paddle.median(rows, axis=1).numpy(), [NAN, 2.5, NAN])
    values, indices = paddle.median(rows, axis=1, mode="min")
    np.testing.assert_array_equal(values.numpy(), [NAN, 2., NAN])
    np.testing.assert_array_equal(indices.numpy(), [1, 1, 0])


def test_nanmedian():
    # Paddle 3.3.1's values
    np.testing.assert_array_equal(paddle.nanmedian(t(WITH_NAN), axis=1).numpy(), [3., 4., NAN])
    assert paddle.nanmedian(t(WITH_NAN)).item() == 3.0
    values, indices = paddle.nanmedian(t(WITH_NAN), axis=1, mode="min")
    np.testing.assert_array_equal(values.numpy(), [3., 3., NAN])
    np.testing.assert_array_equal(indices.numpy(), [2, 2, -1])
    cube = np.arange(24.).reshape(2, 3, 4)
    over_two = paddle.nanmedian(t(cube), axis=[0, 2])
    np.testing.assert_array_equal(over_two.numpy(), np.median(cube, axis=(0, 2)))
    lower = paddle.nanmedian(t(cube), axis=[0, 2], mode="min")  # a list of axes: values
    np.testing.assert_array_equal(lower.numpy(), [3., 7., 11.])
    ints = paddle.nanmedian(t([[-3, -1, -2, -4], [1, 2, 3, 4]], dtype="int32"), axis=1)
    assert ints.dtype is paddle.int32 and ints.tolist() == [-2, 2]  # truncated, as Paddle


def test_median_errors():
    with pytest.raises(ValueError, match="mode"):
        paddle.median(t(X), mode="max")
    with pytest.raises(ValueError, match="axis"):
        paddle.median(t(X), axis=2)
    with pytest.raises(ValueError, match="axis"):
        paddle.median(t(X), axis=[0, 1])
    with pytest.raises(ValueError, match="repeats"):
        paddle.nanmedian(t(X), axis=[1, 1])


# ---------------------------------------------------------------- quantile

def test_quantile_interpolations_match_paddle():
    """PaddlePaddle 3.3.1's results for q = [0.1, 0.3, 0.5, 0.625, 0.9] over axis 1."""
    paddle_results = {
        "linear": [[1.2999999523162842, -0.699999988079071],
                   [1.9000000953674316, -0.09999996423721313], [2.5, 2.5], [2.875, 4.375],
                   [5.799999237060547, 5.0]],
        "lower": [[1., -1.], [1., -1.], [2., 0.], [2., 0.], [3., 5.]],
        "higher": [[2., 0.], [2., 0.], [3., 5.], [3., 5.], [7., 5.]],
        "nearest": [[1., -1.], [2., 0.], [3., 5.], [3., 5.], [7., 5.]],
        "midpoint": [[1.5, -0.5], [1.5, -0.5], [2.5, 2.5], [2.5, 2.5], [5., 5.]],
    }
    for interpolation, expected in paddle_results.items():
        out = paddle.quantile(t(X), [0.1, 0.3, 0.5, 0.625, 0.9], axis=1,
                              interpolation=interpolation)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, err_msg=interpolation)


def test_quantile_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5))
    for axis in [None, 0, -1, [0, 2]]:
        numpy_axis = tuple(axis) if isinstance(axis, list) else axis
        for keepdim in (False, True):
            out = paddle.quantile(t(x), [0.2, 0.75], axis=axis, keepdim=keepdim)
            want = np.quantile(x, [0.2, 0.75], axis=numpy_axis, keepdims=keepdim)
            assert out.shape == list(want.shape)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    scalar_q = paddle.quantile(t(x), t(0.4, dtype="float64"), axis=1)
    np.testing.assert_allclose(scalar_q.numpy(), np.quantile(x, 0.4, axis=1), rtol=1e-12)
    assert paddle.quantile(t(x), 0.4).shape == []


def test_quantile_nearest_rounds_halves_to_even():
    # Paddle 3.3.1: positions 0.5, 1.5, 2.5, 3.5, 4.5 read elements 0, 2, 2, 4, 4
    out = paddle.quantile(t([0., 1., 2., 3., 4., 5.]), [0.1, 0.3, 0.5, 0.7, 0.9],
                          interpolation="nearest")
    np.testing.assert_array_equal(out.numpy(), [0., 2., 2., 4., 4.])


@pytest.mark.filterwarnings("ignore:All-NaN slice")
def test_quantile_dtypes_and_nan():
    assert paddle.quantile(t(X).astype("float64"), 0.5).dtype is paddle.float64
    lower = paddle.quantile(t([[3, 1, 2, 4]]), 0.5, interpolation="lower")
    assert lower.dtype is paddle.int64 and lower.item() == 2  # sorted [1, 2, 3, 4]
    with_nan = paddle.quantile(t([[1., NAN, 3.], [1., 2., 3.]]), 0.5, axis=1)
    np.testing.assert_array_equal(with_nan.numpy(), [NAN, 2.])
    skipped = paddle.nanquantile(t(WITH_NAN), [0.25, 0.5], axis=1)
    np.testing.assert_allclose(skipped.numpy(), np.nanquantile(WITH_NAN, [0.25, 0.5], axis=1))


def test_quantile_errors():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        paddle.quantile(t(X), 1.3)
    with pytest.raises(ValueError, match="empty"):
        paddle.quantile(t(X), [])
    with pytest.raises(ValueError, match="interpolation"):
        paddle.quantile(t(X), 0.5, interpolation="foo")
    with pytest.raises(ValueError, match="out of range"):
        paddle.quantile(t(X), 0.5, axis=2)
    with pytest.raises(ValueError, match="0-D or 1-D"):
        paddle.quantile(t(X), t([[0.5]]))
    with pytest.raises(TypeError, match="float"):  # Paddle: lerp has no int kernel
        paddle.quantile(t([1, 2, 3]), 0.5)


@pytest.mark.filterwarnings("ignore:All-NaN slice")
def test_tensor_methods():
    x = t(X)
    np.testing.assert_array_equal(x.median(axis=1).numpy(), np.median(X, axis=1))
    np.testing.assert_allclose(x.quantile(0.3).numpy(), np.quantile(X, 0.3), rtol=1e-6)
    np.testing.assert_array_equal(t(WITH_NAN).nanmedian(axis=1).numpy(), [3., 4., NAN])
    np.testing.assert_allclose(t(WITH_NAN).nanquantile(0.5, axis=1).numpy(),
                               np.nanquantile(WITH_NAN, 0.5, axis=1))


# ---------------------------------------------------------------- gradients

def test_median_and_quantile_gradients():
    x = np.random.default_rng(2).standard_normal((3, 6))  # distinct values: no ties
    check_grads(lambda a: paddle.median(a, axis=1), x)
    check_grads(lambda a: paddle.median(a), x)
    check_grads(lambda a: paddle.median(a, axis=0, mode="min")[0], x)
    check_grads(lambda a: paddle.quantile(a, [0.3, 0.8], axis=1), x)
    check_grads(lambda a: paddle.quantile(a, 0.45, axis=0, interpolation="midpoint"), x)
    x[0, 2] = NAN
    check_grads(lambda a: paddle.nanmedian(a, axis=1), x)
    check_grads(lambda a: paddle.nanquantile(a, 0.7, axis=1), x)


def test_median_gradient_splits_between_middles():
    """As Paddle 3.3.1's: 0.5 to each of the two middle elements of an even count."""
    x = t([[3., 1., 2., 7.], [0., 6., 5., -1.]], stop_gradient=False)
    paddle.median(x, axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[.5, 0, .5, 0], [.5, 0, .5, 0]])


# ---------------------------------------------------------------- compiled

def _statistics(x):
    values, indices = paddle.median(x, axis=1, mode="min")
    return (paddle.median(x, axis=0), values, indices, paddle.nanmedian(x),
            paddle.quantile(x, [0.25, 0.6], axis=1), paddle.nanquantile(x, 0.3),
            paddle.nansum(x, axis=1), paddle.nanmean(x), paddle.count_nonzero(x, axis=0))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_statistics_agree_with_eager(backend):
    x = t(np.array([[3., NAN, 2., 7.], [0., 5., 5., -1.], [4., 0., 1., 2.]], np.float32))
    for got, want in zip(paddle.compile(_statistics, backend=backend)(x), _statistics(x)):
        assert got.dtype is want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_compiled_statistics_with_a_symbolic_batch():
    compiled = paddle.compile(_statistics, input_spec=[InputSpec([None, 4])], backend="numpy")
    for rows in (3, 5):
        x = t(np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32))
        for got, want in zip(compiled(x), _statistics(x)):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---------------------------------------------------------------- skipping NaN, counting

@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_nansum_nanmean_count_nonzero():
    np.testing.assert_array_equal(paddle.nansum(t(WITH_NAN), axis=1).numpy(),
                                  np.nansum(WITH_NAN, axis=1))
    assert paddle.nansum(t([1, 2], dtype="int32")).dtype is paddle.int64  # as Paddle
    assert paddle.nansum(t(WITH_NAN), dtype="float64").dtype is paddle.float64
    np.testing.assert_allclose(paddle.nanmean(t(WITH_NAN), axis=1).numpy(),
                               np.nanmean(WITH_NAN, axis=1))  # NaN for the row of NaN alone
    int_mean = paddle.nanmean(t([1, 2]))
    assert int_mean.dtype is paddle.float32 and int_mean.item() == 1.5  # Paddle 3.3.1
    counted = paddle.count_nonzero(t([[0., 1., NAN], [0, 0, 2]]), axis=1, keepdim=True)
    assert counted.dtype is paddle.int64 and counted.tolist() == [[2], [1]]
    with pytest.raises(TypeError, match="bool"):
        paddle.nansum(t([True, False]))
    check_grads(lambda a: paddle.nanmean(a, axis=1), np.where(np.isnan(WITH_NAN[:2]), NAN,
                                                              WITH_NAN[:2] + 0.5))
