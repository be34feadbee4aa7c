"""bfloat16 elementwise math where Paddle 3.3's CPU kernels compute it: the result
stays bfloat16 and is the float32 result rounded once (widening bfloat16 to float32
is exact, so float32 math on the widened inputs is the reference)."""
from __future__ import annotations

import numpy as np
import pytest

import irflow as paddle

VALUES = [-0.7, 0.2, 0.3, 2.5, 1e-3]


def _bf16(values) -> paddle.Tensor:
    return paddle.to_tensor(values, dtype="bfloat16")


def _rounded(t: paddle.Tensor) -> np.ndarray:
    """A float32 tensor rounded to bfloat16, read back as float32."""
    return t.astype("bfloat16").astype("float32").numpy()


@pytest.mark.parametrize("name", ["log1p", "log2", "log10", "deg2rad", "rad2deg"])
def test_unary_math_keeps_bfloat16(name):
    x = _bf16([0.2, 0.3, 2.5, 1e-3, 7.0])
    out = getattr(paddle, name)(x)
    assert out.dtype == paddle.bfloat16
    np.testing.assert_array_equal(out.astype("float32").numpy(),
                                  _rounded(getattr(paddle, name)(x.astype("float32"))))


@pytest.mark.parametrize("name", ["subtract", "multiply", "maximum", "minimum",
                                  "floor_divide"])
def test_two_bfloat16_tensors(name):
    x, y = _bf16(VALUES), _bf16([0.5, 1.5, -0.3, 2.0, -4.0])
    out = getattr(paddle, name)(x, y)
    assert out.dtype == paddle.bfloat16
    want = getattr(paddle, name)(x.astype("float32"), y.astype("float32"))
    np.testing.assert_array_equal(out.astype("float32").numpy(), _rounded(want))


@pytest.mark.parametrize("name, want", [("isnan", [False, True, False, False]),
                                        ("isinf", [False, False, True, True]),
                                        ("isfinite", [True, False, False, False])])
def test_nan_and_infinity_tests_of_bfloat16(name, want):
    x = _bf16([1.5, float("nan"), float("inf"), float("-inf")])
    assert getattr(paddle, name)(x).tolist() == want
