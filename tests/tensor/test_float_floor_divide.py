"""Float floor division and integer division toward zero, against NumPy's rules.

Paddle's float ``//`` (floor_divide, divide(rounding_mode='floor')) follows Python's
and NumPy's divmod: x less fmod(x, y) over y, so that ``x == (x // y) * y + x % y``.
That is not floor(x / y): 1.0 / 0.1 rounds to 10.0, but 0.1 is a little more than a
tenth, so 1.0 // 0.1 is 9.0. np.floor_divide is the reference, bit for bit.
Integer division toward zero (rounding_mode='trunc') is checked against Python's
``int(a / b)`` on exact fractions.
"""
from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import irflow as paddle

INF, NAN = float("inf"), float("nan")


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NaN, and the same sign of every zero."""
    assert got.dtype == want.dtype
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


def _numpy_floor_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.floor_divide(x, y)


def _operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs over six decades, and every pair of edge values (zeros of both
    signs, infinities, NaN, the smallest subnormal, tenths)."""
    rng = np.random.default_rng(7)
    scale = rng.choice([1e-3, 1.0, 1e3], 4000)
    x = (rng.standard_normal(4000) * scale).astype(dtype)
    y = (rng.standard_normal(4000) * scale).astype(dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    edges = np.array([0.0, -0.0, INF, -INF, NAN, tiny, 1.0, -1.0, 0.1, -0.1, 7.3, 3.0], dtype)
    return (np.concatenate([x, np.repeat(edges, edges.size)]),
            np.concatenate([y, np.tile(edges, edges.size)]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_floor_divide_is_numpys_divmod(dtype):
    x, y = _operands(dtype)
    got = (paddle.to_tensor(x) // paddle.to_tensor(y)).numpy()
    _same_bits(got, _numpy_floor_divide(x, y))


def test_a_tenth_goes_into_one_nine_times():
    x = paddle.to_tensor([1.0, 0.7, -1.0, 7.3, -7.3], dtype="float64")
    # Python: 1.0 // 0.1 == 9.0 (and 1.0 % 0.1 == 0.0999...), 0.7 // 0.1 == 6.0
    want = [1.0 // 0.1, 0.7 // 0.1, -1.0 // 0.1, 7.3 // 0.1, -7.3 // 0.1]
    assert want == [9.0, 6.0, -10.0, 72.0, -73.0]
    assert paddle.floor_divide(x, paddle.to_tensor([0.1] * 5, dtype="float64")).tolist() == want
    assert paddle.divide(x, paddle.full([5], 0.1, dtype="float64"),
                         rounding_mode="floor").tolist() == want
    quotient, remainder = x // 0.1, x % 0.1
    np.testing.assert_allclose((quotient * 0.1 + remainder).numpy(), x.numpy(), rtol=1e-15)


def test_a_finite_number_over_an_infinity():
    x = paddle.to_tensor([5.0, -5.0, 5.0, -5.0])
    y = paddle.to_tensor([INF, INF, -INF, -INF])
    # Python: 5.0 // inf == 0.0, -5.0 // inf == -1.0 (as -5.0 % inf == inf)
    out = (x // y).numpy()
    np.testing.assert_array_equal(out, [5.0 // INF, -5.0 // INF, 5.0 // -INF, -5.0 // -INF])
    assert out.tolist() == [0.0, -1.0, -1.0, 0.0]


def test_python_numbers_on_either_side():
    ints = paddle.to_tensor([1, 7, -7])
    np.testing.assert_array_equal((ints // 0.1).numpy(),
                                  _numpy_floor_divide(np.float32([1, 7, -7]), np.float32(0.1)))
    tenths = np.float32([0.1, 0.7, -0.1])
    np.testing.assert_array_equal((0.7 // paddle.to_tensor(tenths)).numpy(),
                                  _numpy_floor_divide(np.float32(0.7), tenths))


def test_bfloat16_floor_divide_rounds_the_float32_quotient():
    x = np.float32([7.3, -7.3, 1.0, 0.7])
    y = np.float32([0.1, 0.1, 0.1, -0.1])
    a = paddle.to_tensor(x, dtype="bfloat16")
    b = paddle.to_tensor(y, dtype="bfloat16")
    got = (a // b).astype("float32").numpy()
    want = _numpy_floor_divide(a.astype("float32").numpy(), b.astype("float32").numpy())
    np.testing.assert_array_equal(got, want)  # whole numbers below 256: exact in bfloat16


def test_in_place_floor_divide_and_no_gradient():
    x = paddle.to_tensor([1.0, 0.3])
    x.floor_divide_(paddle.to_tensor([0.1, 0.1]))
    np.testing.assert_array_equal(x.numpy(), _numpy_floor_divide(np.float32([1.0, 0.3]),
                                                                 np.float32(0.1)))
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    assert (w // 0.3).stop_gradient


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_float_floor_divide(backend):
    x, y = _operands("float32")
    run = paddle.compile(lambda a, b: a // b, backend=backend)
    got = run(paddle.to_tensor(x), paddle.to_tensor(y)).numpy()
    _same_bits(got, _numpy_floor_divide(x, y))


def _toward_zero(a: int, b: int) -> int:
    return int(Fraction(a, b))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_int_division_toward_zero_at_the_dtype_minimum(dtype):
    low = int(np.iinfo(dtype).min)
    a = [low, low, low + 1, -7, 7, -6, 0]
    b = [3, -3, 2, 2, -2, 3, -5]
    out = paddle.divide(paddle.to_tensor(a, dtype=dtype), paddle.to_tensor(b, dtype=dtype),
                        rounding_mode="trunc")
    assert out.dtype == getattr(paddle, dtype)
    assert out.tolist() == [_toward_zero(p, q) for p, q in zip(a, b)]


def test_float_division_toward_zero_never_requires_a_gradient():
    x = paddle.to_tensor([7.0, -7.0], stop_gradient=False)
    out = paddle.divide(x, paddle.to_tensor([2.0, 2.0]), rounding_mode="trunc")
    assert out.tolist() == [3.0, -3.0]
    assert out.stop_gradient
