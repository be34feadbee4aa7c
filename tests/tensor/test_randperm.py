"""paddle.randperm: a permutation of 0 .. n-1 in Paddle's dtypes, drawn from irflow's
seeded generator, eagerly and in compiled programs (symbolic n too)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.static import InputSpec


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_randperm_is_a_permutation_of_the_given_dtype(dtype):
    out = paddle.randperm(50, dtype)
    assert out.dtype == getattr(paddle, dtype) and out.shape == [50] and out.stop_gradient
    np.testing.assert_array_equal(np.sort(out.numpy()), np.arange(50))
    assert paddle.randperm(7).dtype == paddle.int64


def test_randperm_edge_sizes_and_tensor_n():
    assert paddle.randperm(0).shape == [0]
    assert paddle.randperm(1).numpy().tolist() == [0]
    np.testing.assert_array_equal(np.sort(paddle.randperm(paddle.to_tensor(6)).numpy()),
                                  np.arange(6))


def test_randperm_follows_the_seed_and_is_uniform():
    paddle.seed(7)
    first = paddle.randperm(20).numpy()
    paddle.seed(7)
    np.testing.assert_array_equal(paddle.randperm(20).numpy(), first)
    assert not np.array_equal(paddle.randperm(20).numpy(), first)
    # every value lands in every position about equally often (chi-square, 3 x 3 cells)
    counts = np.zeros((3, 3))
    for _ in range(1800):
        counts[np.arange(3), paddle.randperm(3).numpy()] += 1
    assert ((counts - 600) ** 2 / 600).sum() < 30


def test_randperm_argument_errors():
    with pytest.raises(TypeError, match="dtype must be int32, int64, float32 or float64"):
        paddle.randperm(3, "float16")
    with pytest.raises(TypeError, match="dtype must be"):
        paddle.randperm(3, "bool")
    with pytest.raises(TypeError, match="n must be an int, got float"):
        paddle.randperm(3.0)
    with pytest.raises(ValueError, match="n must be at least 0, got -1"):
        paddle.randperm(-1)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_randperm(backend):
    compiled = paddle.compile(lambda: paddle.randperm(9, "int32"), backend=backend)
    paddle.seed(3)
    out = compiled()
    assert out.dtype == paddle.int32
    np.testing.assert_array_equal(np.sort(out.numpy()), np.arange(9))
    paddle.seed(3)
    np.testing.assert_array_equal(compiled().numpy(), out.numpy())
    static = paddle.jit.to_static(lambda x: x[paddle.randperm(x.shape[0])],
                                  input_spec=[InputSpec([None, 2])], backend=backend)
    rows = paddle.to_tensor(np.arange(10.0, dtype=np.float32).reshape(5, 2))
    np.testing.assert_array_equal(np.sort(static(rows).numpy(), axis=0), rows.numpy())
