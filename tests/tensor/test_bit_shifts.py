"""paddle.bitwise_left_shift / bitwise_right_shift and << / >>, against NumPy's shifts
with Paddle's rule for counts outside [0, width): 0, or for an arithmetic right shift
the sign copied into every bit (-1 or 0)."""
import numpy as np
import pytest

import irflow as paddle

DTYPES = ["int8", "int16", "int32", "int64", "uint8"]


def reference(x: np.ndarray, y: np.ndarray, left: bool, arithmetic: bool) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    inside = (y >= 0) & (y < bits)
    count = np.where(inside, y, 0).astype(x.dtype)
    if left:
        return np.where(inside, np.left_shift(x, count), 0).astype(x.dtype)
    if arithmetic or x.dtype.kind == "u":
        fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
        return np.where(inside, np.right_shift(x, count), fill).astype(x.dtype)
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    shifted = np.right_shift(unsigned, count.view(unsigned.dtype))
    return np.where(inside, shifted, 0).astype(unsigned.dtype).view(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left, arithmetic", [(True, True), (False, True), (False, False)])
def test_shifts_follow_numpy_and_paddles_out_of_range_rule(dtype, left, arithmetic):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 200, endpoint=True).astype(dtype)
    x[:4] = [info.min, info.max, 0, info.min + 1 if info.min else 1]
    bits = np.dtype(dtype).itemsize * 8
    low = -2 if info.min < 0 else 0
    y = rng.integers(low, bits + 3, 200).astype(dtype)
    fn = paddle.bitwise_left_shift if left else paddle.bitwise_right_shift
    got = fn(paddle.to_tensor(x), paddle.to_tensor(y), is_arithmetic=arithmetic)
    assert got.dtype == paddle.to_tensor(x).dtype
    np.testing.assert_array_equal(got.numpy(), reference(x, y, left, arithmetic))


def test_operators_take_python_ints_on_either_side():
    x = paddle.to_tensor([-128, -1, 5, 127], dtype="int8")
    np.testing.assert_array_equal((x << 1).numpy(), [0, -2, 10, -2])
    np.testing.assert_array_equal((x >> 1).numpy(), [-64, -1, 2, 63])
    np.testing.assert_array_equal((2 << paddle.to_tensor([1, 2])).numpy(), [4, 8])
    np.testing.assert_array_equal((64 >> paddle.to_tensor([1, 2])).numpy(), [32, 16])


@pytest.mark.parametrize("x, y", [([True], [True]), ([1.0], [1.0])])
def test_shifts_take_int_tensors_only(x, y):
    with pytest.raises(TypeError, match="takes int tensors"):
        paddle.bitwise_left_shift(paddle.to_tensor(x), paddle.to_tensor(y))


def test_shifts_take_one_dtype():
    with pytest.raises(TypeError, match="of one dtype"):
        paddle.bitwise_right_shift(paddle.to_tensor([3], dtype="int16"), paddle.to_tensor([2]))


def test_compiled_shifts_are_the_eager_ones():
    x, y = paddle.to_tensor([-8, 5, -1, 7]), paddle.to_tensor([1, 2, 70, 0])
    compiled = paddle.jit.to_static(lambda x, y: (x << y, x >> y))
    for got, want in zip(compiled(x, y), (x << y, x >> y)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
