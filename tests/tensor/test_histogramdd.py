"""histogramdd against NumPy's histogramdd, whose bins follow the same rule as
Paddle's: each dimension's bins are half-open [e_i, e_i+1) except the last, which
also holds its right edge; points outside the edges are dropped."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, ShapeError
from irflow.tensor.histogram import histogramdd


def _points(seed=0, shape=(60, 3), dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("density", [False, True])
def test_bins_and_ranges_as_numpy(density):
    data = _points()
    weights = np.random.default_rng(1).random(60)
    hist, edges = histogramdd(paddle.to_tensor(data), bins=[2, 3, 4],
                              ranges=[-1, 1, -2, 2, -0.5, 0.5], density=density,
                              weights=paddle.to_tensor(weights))
    want, want_edges = np.histogramdd(data, bins=[2, 3, 4],
                                      range=[(-1, 1), (-2, 2), (-0.5, 0.5)],
                                      density=density, weights=weights)
    np.testing.assert_allclose(hist.numpy(), want, rtol=1e-12)
    for edge, want_edge in zip(edges, want_edges):
        np.testing.assert_allclose(edge.numpy(), want_edge, rtol=1e-12)


def test_default_ranges_are_each_dimensions_min_and_max():
    data = _points(2, (4, 5, 2), np.float32)
    hist, edges = histogramdd(paddle.to_tensor(data), bins=3)
    want, want_edges = np.histogramdd(data.reshape(-1, 2), bins=3)
    assert hist.dtype == paddle.float32 and hist.shape == [3, 3]
    np.testing.assert_array_equal(hist.numpy(), want)
    np.testing.assert_allclose(edges[1].numpy(), want_edges[1], rtol=1e-6)


def test_given_edges_and_a_point_on_the_last_edge():
    data = np.array([[0.0, 1.0], [1.0, 0.0], [3.0, 2.0], [3.5, 0.5]], np.float32)
    bins = (paddle.to_tensor(np.array([0.0, 1.0, 3.0], np.float32)),
            paddle.to_tensor(np.array([0.0, 0.5, 2.0], np.float32)))
    hist, _ = histogramdd(paddle.to_tensor(data), bins=bins)
    want, _ = np.histogramdd(data, bins=[[0.0, 1.0, 3.0], [0.0, 0.5, 2.0]])
    np.testing.assert_array_equal(hist.numpy(), want)  # (3, 2) counted, (3.5, .5) dropped


def test_a_nan_coordinate_drops_the_point():
    data = np.array([[0.2, 0.2], [np.nan, 0.7], [0.8, 0.9]])
    hist, _ = histogramdd(paddle.to_tensor(data), bins=2, ranges=[0, 1, 0, 1])
    np.testing.assert_array_equal(hist.numpy(), [[1, 0], [0, 1]])


def test_compiles_to_the_same_counts():
    data = paddle.to_tensor(_points(3, (30, 2), np.float32))
    fn = paddle.jit.to_static(lambda x: histogramdd(x, bins=[2, 3])[0])
    np.testing.assert_array_equal(fn(data).numpy(), histogramdd(data, bins=[2, 3])[0].numpy())


def test_refuses_what_paddle_refuses():
    with pytest.raises(ShapeError):
        histogramdd(paddle.to_tensor(np.zeros(3, np.float32)))
    with pytest.raises(DTypeError):
        histogramdd(paddle.to_tensor(np.zeros([3, 2], np.int64)))
    with pytest.raises(ShapeError):
        histogramdd(paddle.to_tensor(np.zeros([3, 2], np.float32)),
                    weights=paddle.to_tensor(np.ones(2, np.float32)))
