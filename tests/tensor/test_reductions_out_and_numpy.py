"""Paddle 3's reductions take ``out=`` (and mean ``dtype=``), so NumPy's functions,
which call the method with those keywords, give Tensors as in Paddle."""
import numpy as np
import pytest

import irflow as paddle

X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.prod, np.any, np.all, np.cumsum])
def test_numpy_functions_of_a_tensor_give_tensors(fn):
    got = fn(paddle.to_tensor(X))
    assert isinstance(got, paddle.Tensor)
    np.testing.assert_allclose(got.numpy(), fn(X))


def test_out_takes_the_result():
    x = paddle.to_tensor(X)
    for reduce, want in ((paddle.sum, X.sum()), (paddle.mean, X.mean()), (paddle.prod, X.prod())):
        out = paddle.zeros([])
        assert reduce(x, out=out) is out
        np.testing.assert_allclose(out.numpy(), want)
    out = paddle.zeros([4])
    paddle.cumsum(x, out=out)
    np.testing.assert_allclose(out.numpy(), np.cumsum(X))


def test_mean_of_ints_in_a_float_dtype():
    np.testing.assert_allclose(paddle.mean(paddle.to_tensor([1, 2]), dtype="float32").numpy(), 1.5)
    np.testing.assert_array_equal(np.mean(paddle.to_tensor(X), axis=0).numpy(), X.mean(0))
