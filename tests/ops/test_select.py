"""The select kernel's fast path (one side a +0.0 scalar, as in the VJPs of relu and
max): the bits np.where gives, negative values, NaN, inf and -0.0 on either side."""
import numpy as np
import pytest

from irflow.ir.registry import lookup

VALUES = np.array([-1.5, 2.0, np.nan, np.inf, -np.inf, -0.0, 0.0, -3e-39], np.float32)


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


@pytest.mark.parametrize("zero", [0.0, -0.0])
@pytest.mark.parametrize("zero_first", [False, True])
def test_select_with_a_zero_scalar_gives_np_where_bits(zero, zero_first):
    op = lookup("select")
    rng = np.random.default_rng(0)
    x = rng.choice(VALUES, (6, 8)).astype(np.float32)
    c = rng.random((6, 8)) < 0.5
    z = np.asarray(np.float32(zero))
    args = (c, z, x) if zero_first else (c, x, z)
    want = np.where(*args)
    same_bits(op.kernel(*args), want)
    if not zero_first:  # the out kernel's in-place operand is y: a scalar here
        out = np.empty_like(x)
        op.out_kernel(*args, out=out)
        same_bits(out, want)


def test_select_with_a_zero_scalar_broadcasts_a_column():
    op = lookup("select")
    c = np.array([[True, False, True]])
    x = np.array([[-1.0], [np.nan]], np.float32)
    same_bits(op.kernel(c, x, np.asarray(np.float32(0))), np.where(c, x, np.float32(0)))
