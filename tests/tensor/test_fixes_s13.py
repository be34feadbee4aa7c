"""Fixes: bfloat16 with Python scalars, symbolic sizes in take, index_fill,
searchsorted and linspace, an empty compiled bincount, and compiled reductions over
an axis that is empty when the program runs."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from irflow.static import InputSpec


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def bf16(values) -> np.ndarray:
    """The float32 values of round-to-nearest-even bfloat16 of float32 `values`, by
    integer arithmetic on the bits (independent of irflow's conversion)."""
    bits = np.asarray(values, np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    upper = bits >> 16
    lower = bits & 0xFFFF
    upper = upper + ((lower > 0x8000) | ((lower == 0x8000) & (upper & 1 == 1)))
    return (upper.astype(np.uint32) << 16).view(np.float32)


X = [1.5, -2.0, 3.0, 0.3]


# Each case: the irflow expression and, by the documented rule (the scalar takes the
# tensor's dtype, bfloat16; the op runs in float32; the result is rounded back), the
# same computation in NumPy float32 on the bfloat16 values.
@pytest.mark.parametrize("op, numpy_op", [
    (lambda x: x * 2, lambda v: v * 2),
    (lambda x: x + 1, lambda v: v + 1),
    (lambda x: x - 1, lambda v: v - 1),
    (lambda x: x / 2, lambda v: v / 2),
    (lambda x: x / 3, lambda v: v / 3),
    (lambda x: x // 2, lambda v: np.floor_divide(v, 2)),
    (lambda x: -x, lambda v: -v),
    (lambda x: 2 ** x, lambda v: np.power(np.float32(2), v)),
    (lambda x: x * 0.1, lambda v: v * bf16([0.1])[0]),
    (lambda x: 2 - x, lambda v: 2 - v),
    (lambda x: paddle.floor(x), np.floor),
])
def test_bfloat16_with_a_python_scalar_computes_by_value(op, numpy_op):
    x = t(X).astype("bfloat16")
    values = bf16(X)
    got = op(x)
    assert got.dtype is paddle.bfloat16
    np.testing.assert_array_equal(got.astype("float32").numpy(), bf16(numpy_op(values)))


def test_bfloat16_scalar_is_its_value_not_its_bits():
    """2 stored as bfloat16 is 2.0 (bits 0x4000), not the bits 2 (a tiny subnormal)."""
    x = t(X).astype("bfloat16")
    np.testing.assert_array_equal((x / 2).astype("float32").numpy(), bf16(X) / 2)


def test_bfloat16_promotes_with_a_float32_tensor():
    x, f = t(X).astype("bfloat16"), t([1.0, 2.0, 3.0, 4.0])
    for got in (x + f, f * x):
        assert got.dtype is paddle.float32
    np.testing.assert_array_equal((x + f).numpy(), bf16(X) + np.float32([1, 2, 3, 4]))


def test_compiled_bfloat16_scalar_arithmetic_agrees_with_eager():
    def fn(x):
        return x * 2 + 1, x / 2, 2 ** x
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([None], "bfloat16")])
    x = t(X).astype("bfloat16")
    for got, want in zip(static(x), fn(x)):
        assert got.dtype is paddle.bfloat16
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_with_a_symbolic_size(mode):
    x = t(np.arange(12, dtype=np.float32).reshape(4, 3))
    index = t([[0, -1], [5, 13 if mode != "raise" else 11]])
    static = paddle.jit.to_static(lambda a, i: paddle.take(a, i, mode=mode),
                                  input_spec=[InputSpec([None, 3]), InputSpec([2, 2], "int64")])
    flat = np.arange(12)
    want = np.take(flat, index.numpy(), mode="wrap" if mode == "raise" else mode)
    np.testing.assert_array_equal(static(x, index).numpy(), want)


def test_take_out_of_range_with_a_symbolic_size_raises_when_run():
    static = paddle.jit.to_static(lambda a, i: paddle.take(a, i),
                                  input_spec=[InputSpec([None, 3]), InputSpec([1], "int64")])
    with pytest.raises(IndexError, match="N\\*3"):
        static(paddle.ones([2, 3]), t([6]))


def test_index_fill_with_a_symbolic_size():
    fn = lambda a, i: paddle.index_fill(a, i, 0, -1.0)  # noqa: E731
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([None, 3]),
                                                   InputSpec([2], "int64")])
    x, index = t(np.arange(12, dtype=np.float32).reshape(4, 3)), t([0, -1])
    want = x.numpy().copy()
    want[[0, 3]] = -1
    np.testing.assert_array_equal(static(x, index).numpy(), want)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_with_a_symbolic_sequence_length(right):
    seq, values = t([1.0, 3.0, np.nan]), t([0.0, 3.0, np.nan, 9.0])
    static = paddle.jit.to_static(lambda s, v: paddle.searchsorted(s, v, right=right),
                                  input_spec=[InputSpec([None]), InputSpec([None])])
    np.testing.assert_array_equal(static(seq, values).numpy(),
                                  paddle.searchsorted(seq, values, right=right).numpy())


@pytest.mark.parametrize("minlength, want", [(0, []), (3, [0, 0, 0])])
def test_compiled_bincount_of_an_empty_input(minlength, want):
    static = paddle.jit.to_static(lambda a: paddle.bincount(a, minlength=minlength),
                                  input_spec=[InputSpec([None], "int64")])
    assert static(t(np.zeros(0, np.int64))).numpy().tolist() == want
    assert static(t([1, 3, 1])).numpy().tolist() == [0, 2, 0, 1]


@pytest.mark.parametrize("fn", [
    lambda x: paddle.max(x, axis=0),
    lambda x: paddle.argmin(x, axis=0),
    lambda x: paddle.argmax(x),
])
def test_compiled_reduction_over_an_empty_symbolic_axis_raises_as_eager(fn):
    """NumPy's ValueError named no op and no line; the compiled program raises the
    ShapeError eager code raises, at the user's line."""
    empty = paddle.zeros([0, 4])
    with pytest.raises(ShapeError) as eager:
        fn(empty)
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([None, 4])])
    with pytest.raises(ShapeError) as compiled:
        static(empty)
    assert str(compiled.value) == str(eager.value)
    assert "test_fixes_s13.py" in str(compiled.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_linspace_with_a_symbolic_count(dtype):
    static = paddle.jit.to_static(lambda x: paddle.linspace(-1.5, 10, x.shape[0], dtype=dtype),
                                  input_spec=[InputSpec([None])])
    for n in (0, 1, 2, 5, 8):
        want = paddle.linspace(-1.5, 10, n, dtype=dtype)
        got = static(paddle.ones([n]))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_take_of_a_constant_index_with_a_symbolic_size():
    """A constant index was checked against the size while tracing, which a traced
    size cannot answer (ConversionError); the check now runs with the program."""
    from irflow.static import InputSpec

    def pick(x):
        return paddle.take(x, paddle.to_tensor([1, -2]))

    compiled = paddle.jit.to_static(pick, input_spec=[InputSpec([None, 3])])
    x = paddle.arange(6, dtype="float32").reshape([2, 3])
    np.testing.assert_array_equal(compiled(x).numpy(), pick(x).numpy())
