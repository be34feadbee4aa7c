"""searchsorted and bucketize across dtypes, against NumPy.

Paddle 3.3.1's kernel compares a sequence and values of different dtypes element
by element (an int converted to the other side's float type, two int types as
int64), so ``searchsorted(int_seq, float_values)`` works there; irflow's promotion
rule, which refuses to mix an int and a float dtype, made it raise.
"""
import numpy as np
import pytest

import irflow as paddle


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("seq_dtype,value_dtype", [("int64", "float32"), ("float64", "int64"),
                                                   ("int32", "int64"), ("int64", "int32"),
                                                   ("float32", "int32")])
def test_searchsorted_mixes_dtypes(seq_dtype, value_dtype, right):
    seq = np.array([1, 3, 3, 5])
    values = np.array([0.5, 2.5, 3.0, 5.0, 7.0]) if value_dtype.startswith("float") \
        else np.array([0, 3, 4, 5, 9])
    out = paddle.searchsorted(paddle.to_tensor(seq, dtype=seq_dtype),
                              paddle.to_tensor(values, dtype=value_dtype), right=right)
    expected = np.searchsorted(seq, values, side="right" if right else "left")
    assert str(out.dtype).endswith("int64")
    np.testing.assert_array_equal(out.numpy(), expected)


def test_bucketize_float_values_in_int_boundaries():
    out = paddle.bucketize(paddle.to_tensor([[2.5, 3.0], [5.0, 0.0]]),
                           paddle.to_tensor([1, 3, 5]), right=True)
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [3, 0]])
