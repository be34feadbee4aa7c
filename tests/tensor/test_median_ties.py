"""Order statistics against PaddlePaddle 3.3.1's documented-by-kernel rules.

Paddle's median_grad kernel shares the gradient of a median equally among all the
elements of its row that equal it (``dout / count``), and only when no element
equals it (the average of two different middle elements) sends ``dout / 2`` to
each middle element. mode 'min' over an axis (which returns indices) sends the
whole gradient to the returned index instead. Which of several equal elements
sorts to the middle is arbitrary, so an equal share is the one answer that does
not depend on the sort's order among ties.
"""
import numpy as np
import pytest

import irflow as paddle


def _grad(fn, data):
    x = paddle.to_tensor(np.array(data), stop_gradient=False)
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return out.numpy(), x.grad.numpy()


@pytest.mark.parametrize("mode", ["avg", "min"])
@pytest.mark.parametrize("op", [paddle.median, paddle.nanmedian])
def test_median_gradient_is_shared_among_tied_elements(op, mode):
    value, grad = _grad(lambda x: op(x, mode=mode), [1.0, 2.0, 2.0, 2.0, 3.0])
    assert value == 2.0
    np.testing.assert_allclose(grad, [0, 1 / 3, 1 / 3, 1 / 3, 0])


def test_median_even_count_shares_among_equal_middles_else_halves():
    # sorted 1, 2, 2, 3: both middles are 2, so every 2 shares the gradient
    _, grad = _grad(lambda x: paddle.median(x), [2.0, 2.0, 1.0, 3.0])
    np.testing.assert_allclose(grad, [0.5, 0.5, 0, 0])
    _, grad = _grad(lambda x: paddle.median(x), [2.0, 2.0, 2.0, 2.0])
    np.testing.assert_allclose(grad, [0.25] * 4)
    # middles 2 and 3 differ: the median 2.5 equals no element
    _, grad = _grad(lambda x: paddle.median(x), [4.0, 1.0, 3.0, 2.0])
    np.testing.assert_allclose(grad, [0, 0, 0.5, 0.5])


def test_median_min_shares_among_ties_unless_it_returns_an_index():
    data = [3.0, 1.0, 2.0, 1.0, 3.0, 2.0]
    _, grad = _grad(lambda x: paddle.median(x, mode="min"), data)
    np.testing.assert_allclose(grad, [0, 0, 0.5, 0, 0, 0.5])
    x = paddle.to_tensor(np.array(data), stop_gradient=False)
    value, index = paddle.median(x, axis=0, mode="min")
    value.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(6)[int(index)])


def test_median_ties_per_row_over_an_axis_and_value_exact():
    data = np.array([[1.0, 2.0, 2.0, 2.0, 3.0], [2.0, 2.0, 1.0, 3.0, 0.0]]).T.copy()
    value, grad = _grad(lambda x: paddle.median(x, axis=0), data)
    np.testing.assert_array_equal(value, [2.0, 2.0])
    np.testing.assert_allclose(grad, [[0, 0.5], [1 / 3, 0.5], [1 / 3, 0], [1 / 3, 0], [0, 0]])


def test_median_tie_share_keeps_inexact_values_exact():
    # 0.1 three times: a mean of the ties would round to 0.10000000000000002
    value, grad = _grad(lambda x: paddle.median(x), [0.1, 0.1, 0.1, 5.0, -5.0])
    assert value == 0.1
    np.testing.assert_allclose(grad, [1 / 3, 1 / 3, 1 / 3, 0, 0])


def test_nanmedian_ties_skip_nan():
    _, grad = _grad(lambda x: paddle.nanmedian(x), [2.0, np.nan, 2.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(grad, [1 / 3, 0, 1 / 3, 0, 1 / 3, 0])

