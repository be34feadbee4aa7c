"""Gradients of medians and quantiles whose value is inf or NaN, by Paddle 3.3.1's
rules (its median_grad kernel and its Python quantile):

- median and nanmedian share the gradient of a median equally among the elements
  of its row equal to it, inf equal to inf and NaN to NaN: a row holding NaN has
  the median NaN, and its NaNs share the gradient; a median over a single NaN is
  that element, so it gets the whole gradient, as the identity would.
- median mode='min' over an axis sends it to the returned index (a NaN row's
  first NaN).
- quantile reads a row holding NaN at its last sorted position, where NaN sorts:
  the last NaN of the row (the sort keeps equal elements in order) gets it.
"""
import numpy as np
import pytest

import irflow as paddle

NAN, INF = float("nan"), float("inf")


def _grad(fn, data):
    x = paddle.to_tensor(np.array(data, np.float32), stop_gradient=False)
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return out.numpy(), x.grad.numpy()


@pytest.mark.parametrize("mode", ["avg", "min"])
def test_median_of_a_row_holding_nan_shares_among_its_nans(mode):
    value, grad = _grad(lambda x: paddle.median(x, mode=mode), [NAN, 2.0, NAN, 4.0])
    assert np.isnan(value)
    np.testing.assert_array_equal(grad, [0.5, 0, 0.5, 0])


def test_median_over_one_nan_is_that_element():
    value, grad = _grad(lambda x: paddle.median(x, axis=1), [[NAN], [3.0]])
    np.testing.assert_array_equal(value, [NAN, 3.0])
    np.testing.assert_array_equal(grad, [[1.0], [1.0]])


def test_median_per_row_with_and_without_nan():
    # the finite rows' medians are exact: sharing only moves the gradient
    data = np.array([[NAN, 0.1, NAN], [0.1, 0.7, 0.3], [INF, 0.3, 0.3]], np.float32)
    value, grad = _grad(lambda x: paddle.median(x, axis=1), data)
    np.testing.assert_array_equal(value, [NAN, np.float32(0.3), np.float32(0.3)])
    np.testing.assert_array_equal(grad, [[0.5, 0, 0.5], [0, 0, 1], [0, 0.5, 0.5]])


@pytest.mark.parametrize("op", [paddle.median, paddle.nanmedian])
@pytest.mark.parametrize("mode", ["avg", "min"])
def test_an_infinite_median_shares_among_equal_infinities(op, mode):
    value, grad = _grad(lambda x: op(x, mode=mode), [INF, INF, 1.0])
    assert value == INF
    np.testing.assert_array_equal(grad, [0.5, 0.5, 0])
    value, grad = _grad(lambda x: op(x, mode=mode), [-INF, -INF, 1.0])
    assert value == -INF
    np.testing.assert_array_equal(grad, [0.5, 0.5, 0])


def test_an_average_that_is_infinite_goes_to_the_infinite_elements():
    # middles 2 and inf average to inf, which equals both infs (not the 2)
    value, grad = _grad(lambda x: paddle.median(x), [INF, 1.0, 2.0, INF])
    assert value == INF
    np.testing.assert_array_equal(grad, [0.5, 0, 0, 0.5])


def test_nanmedian_of_nan_alone_shares_among_its_nans():
    value, grad = _grad(lambda x: paddle.nanmedian(x, axis=1), [[NAN, NAN], [1.0, 3.0]])
    np.testing.assert_array_equal(value, [NAN, 2.0])
    np.testing.assert_array_equal(grad, [[0.5, 0.5], [0.5, 0.5]])


def test_median_min_with_index_sends_a_nan_rows_gradient_to_its_index():
    x = paddle.to_tensor(np.array([NAN, 2.0, NAN, 4.0], np.float32), stop_gradient=False)
    value, index = paddle.median(x, axis=0, mode="min")
    assert np.isnan(value.item()) and index.item() == 0
    value.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 0, 0])


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_of_a_row_holding_nan_reads_its_last_nan(interpolation):
    value, grad = _grad(lambda x: paddle.quantile(x, 0.3, axis=1, interpolation=interpolation),
                        [[NAN, 2.0, NAN, 4.0], [1.0, 2.0, 3.0, 4.0]])
    assert np.isnan(value[0]) and not np.isnan(value[1])
    np.testing.assert_array_equal(grad[0], [0, 0, 1, 0])


def test_quantile_levels_each_send_their_gradient_to_the_last_nan():
    value, grad = _grad(lambda x: paddle.quantile(x, [0.25, 0.5]), [1.0, NAN, 3.0])
    assert np.isnan(value).all()
    np.testing.assert_array_equal(grad, [0, 2, 0])

