"""Dtype promotion of binary operators, as in Paddle 3 (checked against PaddlePaddle
3.3; irflow supports bool, int32, int64, float32 and float64):

- A Python scalar takes the tensor's dtype, except that a float scalar with an int or
  bool tensor gives float32 and an int scalar with a bool tensor int64.
- A 0-d tensor meeting a tensor of higher rank acts as a scalar: the other tensor's
  dtype wins unless the 0-d one is of a higher kind (bool < int < float).
- Two 0-d tensors meet at the wider dtype (bool < int32 < int64 < float32 < float64).
- Two tensors of rank >= 1 promote only between floats; other mixes raise TypeError.
- ``/`` of integers is float32; ``+`` and ``*`` of two bool tensors are logical or/and.
Values are compared with NumPy computed in the expected dtype."""
import itertools
import operator

import numpy as np
import pytest

import irflow as paddle

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
KIND = {"bool": 0, "int32": 1, "int64": 1, "float32": 2, "float64": 2}


def expected_dtype(dx: str, x_0d: bool, dy: str, y_0d: bool) -> str | None:
    """Paddle's common dtype of two tensors, None where Paddle raises a TypeError."""
    if dx == dy:
        return dx
    if x_0d != y_0d:
        tensor, scalar = (dy, dx) if x_0d else (dx, dy)
        return tensor if KIND[tensor] >= KIND[scalar] else scalar
    if x_0d or (KIND[dx] == 2 and KIND[dy] == 2):
        return max(dx, dy, key=DTYPES.index)
    return None


def _tensor(dtype: str, zero_d: bool, seed: int):
    rng = np.random.default_rng(seed)
    shape = () if zero_d else (2, 3)
    values = rng.integers(1, 5, shape) if dtype != "bool" else np.ones(shape)  # no 0 divisor
    if dtype.startswith("float"):
        values = values + rng.uniform(0.1, 0.9, shape)
    array = np.asarray(values).astype(dtype)
    return paddle.to_tensor(array), array


OPS = {"+": operator.add, "*": operator.mul, "<": operator.lt, "==": operator.eq,
       "/": operator.truediv}
RANKS = [(False, True), (True, False), (True, True), (False, False)]


@pytest.mark.parametrize("dx, dy", [p for p in itertools.product(DTYPES, DTYPES)
                                    if p[0] != p[1]])
@pytest.mark.parametrize("x_0d, y_0d", RANKS)
def test_tensor_tensor_promotion(dx, dy, x_0d, y_0d):
    x, a = _tensor(dx, x_0d, 1)
    y, b = _tensor(dy, y_0d, 2)
    common = expected_dtype(dx, x_0d, dy, y_0d)
    for symbol, op in OPS.items():
        if common is None:
            with pytest.raises(TypeError, match=f"{dx}|{dy}"):
                op(x, y)
            continue
        result = op(x, y)
        ca, cb = a.astype(common), b.astype(common)
        if symbol in ("<", "=="):
            dtype = "bool"
        elif symbol == "/":
            dtype = common if KIND[common] == 2 else "float32"
            ca, cb = ca.astype(dtype), cb.astype(dtype)
        else:
            dtype = common
        assert result.dtype == dtype, (symbol, result.dtype)
        expected = op(ca, cb)
        assert result.shape == list(np.shape(expected))
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_bool_tensors_add_as_or_and_multiply_as_and():
    x = paddle.to_tensor([True, True, False, False])
    y = paddle.to_tensor([True, False, True, False])
    assert (x + y).dtype == paddle.bool and (x + y).numpy().tolist() == [True, True, True, False]
    assert (x * y).numpy().tolist() == [True, False, False, False]
    assert (x + True).numpy().tolist() == [True] * 4
    assert (x * paddle.to_tensor(False)).numpy().tolist() == [False] * 4


SCALAR_CASES = [  # (tensor dtype, scalar, expected dtype)
    *[(d, 2, d if d != "bool" else "int64") for d in DTYPES],
    *[(d, 2.5, d if KIND[d] == 2 else "float32") for d in DTYPES],
    *[(d, True, d) for d in DTYPES],
]


@pytest.mark.parametrize("dtype, scalar, result", SCALAR_CASES)
def test_python_scalars(dtype, scalar, result):
    x, a = _tensor(dtype, False, 3)
    ops = [operator.add, operator.mul, operator.sub]
    if dtype == "bool" and isinstance(scalar, bool):
        ops = ops[:2]  # bool - bool has no meaning (Paddle has no kernel for it)
    for op in ops:
        for out, expected in [(op(x, scalar), op(a.astype(result), np.asarray(scalar, result))),
                              (op(scalar, x), op(np.asarray(scalar, result), a.astype(result)))]:
            assert out.dtype == result, (op, out.dtype)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert (x < scalar).dtype == paddle.bool
    np.testing.assert_array_equal((x < scalar).numpy(), a.astype(result) < scalar)


def test_numpy_scalars_count_as_python_scalars():
    i = paddle.to_tensor([1, 2])
    f = paddle.to_tensor([1.5, 2.5])
    assert (i * np.int32(2)).dtype == paddle.int64
    assert (f * np.float64(2)).dtype == paddle.float32
    assert (i * np.float64(2.5)).dtype == paddle.float32   # np.float64 is a Python float


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_division_of_integers_is_true_division_in_float32(dtype):
    x = paddle.to_tensor(np.array([-7, 7, 1, 3], dtype))
    y = paddle.to_tensor(np.array([2, -2, 3, 3], dtype))
    for out, expected in [(x / y, np.array([-3.5, -3.5, 1 / 3, 1.0])),
                          (x / 2, np.array([-3.5, 3.5, 0.5, 1.5])),
                          (14 / y, np.array([7.0, -7.0, 14 / 3, 14 / 3]))]:
        assert out.dtype == paddle.float32
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_floor_division_and_remainder_follow_python(dtype):
    a = np.array([-7, 7, -8, 3, -7.5, 7.5]).astype(dtype)
    b = np.array([2, -3, -3, 3, 2, -2]).astype(dtype)
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for out, expected in [(x // y, a // b), (x % y, a % b), (x // 2, a // np.asarray(2, dtype)),
                          (x % 3, a % np.asarray(3, dtype)), (paddle.floor_divide(x, y), a // b),
                          (paddle.remainder(x, y), a % b), (paddle.mod(x, y), a % b)]:
        assert out.dtype == dtype
        np.testing.assert_allclose(out.numpy(), expected)


def test_power_dtypes():
    """Integers to integer powers stay integers; a float power gives float32."""
    i = paddle.to_tensor([1, 2, 3])
    cases = [(i ** 2, "int64", [1, 4, 9]), (i ** 3.0, "float32", [1, 8, 27]),
             (i ** 0.5, "float32", np.sqrt([1, 2, 3])), (2 ** i, "int64", [2, 4, 8]),
             (2.5 ** i, "float32", 2.5 ** np.array([1, 2, 3])),
             (i ** i, "int64", [1, 4, 27]),
             (paddle.to_tensor([3, 7], dtype="int32") ** 5, "int32", [243, 16807]),
             (paddle.to_tensor([1.5, 2.0]) ** 2, "float32", [2.25, 4.0]),
             (paddle.pow(paddle.to_tensor([2.0], dtype="float64"), 10), "float64", [1024.0])]
    for out, dtype, expected in cases:
        assert out.dtype == dtype
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    big = paddle.to_tensor([3, 7, -5]) ** paddle.to_tensor([30, 18, 21])   # below 2**53
    assert big.numpy().tolist() == [3 ** 30, 7 ** 18, (-5) ** 21]


def test_mixed_dtype_tensors_raise_a_type_error_naming_both():
    with pytest.raises(TypeError, match="int64 and float32"):
        paddle.to_tensor([1, 2]) + paddle.to_tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="int32 and int64"):
        paddle.to_tensor([1, 2], dtype="int32") * paddle.to_tensor([1, 2])
    with pytest.raises(ValueError, match="float32, int64"):  # Paddle's kind for concat
        paddle.concat([paddle.to_tensor([1]), paddle.to_tensor([1.0])])
    with pytest.raises(TypeError):
        paddle.where(paddle.to_tensor([True]), paddle.to_tensor([1]), paddle.to_tensor([1.0]))
    float_mix = paddle.to_tensor([1.0]) + paddle.to_tensor([2.0], dtype="float64")
    assert float_mix.dtype == paddle.float64
