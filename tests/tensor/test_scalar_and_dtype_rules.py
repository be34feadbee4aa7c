"""Dtype rules checked against Paddle 3.3: Python ints meeting small int tensors,
bitwise ops with Python numbers, true division by a number, to_tensor of a list of
tensors, half-float promotion, and assigning values with extra leading size-1 dims."""
import operator

import numpy as np
import pytest

import irflow as paddle


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def wrap(values, np_dtype):
    """Python ints as two's-complement integers of `np_dtype` hold them (mod 2**bits)."""
    return np.array([v % 256 ** np.dtype(np_dtype).itemsize for v in values],
                    np.uint64).astype(np_dtype)


@pytest.mark.parametrize("dtype, data, scalar", [
    ("uint8", [7, 200, 0], -2), ("int8", [1, -100, 0], 200), ("int8", [1, 5, 0], -129),
    ("uint8", [1, 2, 3], 300)])
def test_out_of_range_int_scalar_wraps_into_the_tensor_dtype(dtype, data, scalar):
    x = t(data, dtype=dtype)
    as_dtype = wrap([scalar], dtype)[0]
    expected_sum = (np.array(data, dtype) + as_dtype).astype(dtype)
    for result in (x + scalar, scalar + x):
        assert result.dtype == x.dtype
        np.testing.assert_array_equal(result.numpy(), expected_sum)
    np.testing.assert_array_equal((x * scalar).numpy(),
                                  (np.array(data, dtype) * as_dtype).astype(dtype))
    np.testing.assert_array_equal((x == scalar).numpy(), np.array(data, dtype) == as_dtype)
    y = x.clone()
    y[0] = scalar
    assert y.numpy()[0] == as_dtype


def test_true_division_by_a_negative_number_does_not_wrap():
    """``/`` makes floats, so the number is divided by as it is, not first wrapped into
    the uint8 tensor's dtype (where -2 would be 254)."""
    x = t([7, 200, 3], dtype="uint8")
    np.testing.assert_allclose((x / -2).numpy(), np.array([7, 200, 3]) / -2.0)
    np.testing.assert_allclose((-2 / x).numpy(), -2.0 / np.array([7, 200, 3]))
    assert (x / -2).dtype == paddle.float32


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])
@pytest.mark.parametrize("number", [2, -1, 0, True])
def test_bitwise_with_a_number_on_a_bool_tensor_reads_it_as_bool(op, number):
    """Paddle's ``2 & mask`` casts the number to the tensor's dtype: a bool tensor reads
    any nonzero int as True and stays bool (arithmetic would make it int64)."""
    mask = t([True, False, True])
    expected = op(np.array([True, False, True]), bool(number))
    for result in (op(mask, number), op(number, mask)):
        assert result.dtype == paddle.bool
        np.testing.assert_array_equal(result.numpy(), expected)


def test_bitwise_with_a_number_on_an_int_tensor_keeps_its_dtype():
    x = t([1, 6, 255], dtype="uint8")
    result = -1 ^ x
    assert result.dtype == paddle.uint8
    np.testing.assert_array_equal(result.numpy(), ~np.array([1, 6, 255], np.uint8))


def test_to_tensor_of_a_list_of_tensors_stacks_them_keeping_their_shape():
    x = paddle.to_tensor([t([1], dtype="int32"), t([2], dtype="int32")])
    assert x.shape == [2, 1] and x.dtype == paddle.int32
    np.testing.assert_array_equal(x.numpy(), [[1], [2]])
    y = paddle.to_tensor([t([1.5, 2.0]), t([3.0, 4.0])])
    assert y.shape == [2, 2] and y.dtype == paddle.float32


@pytest.mark.parametrize("items, np_items", [
    (lambda: [t(1.5, dtype="float64"), t(2.5, dtype="float64")],
     [np.float64(1.5), np.float64(2.5)]),
    (lambda: [t(1.5), 2.5], [np.array(1.5, np.float32), 2.5]),
    (lambda: [t(1, dtype="int32"), t(2, dtype="int32")], [np.int32(1), np.int32(2)]),
    (lambda: [t(1.5, dtype="float16"), t(2.5, dtype="float16")],
     [np.float16(1.5), np.float16(2.5)]),
])
def test_to_tensor_of_a_list_of_tensors_takes_numpys_dtype(items, np_items):
    """A list with a tensor at its top level is typed as NumPy types the stacked
    arrays (Paddle's rule), not with the default float dtype of Python lists."""
    x = paddle.to_tensor(items())
    assert x.dtype.name == np.array(np_items).dtype.name


def test_to_tensor_of_vectors_nested_in_python_lists():
    """A tensor below the top level is its array too (not a scalar): NumPy stacks it."""
    x = paddle.to_tensor([[t([1.5, 2.0])], [t([3.0, 4.0])]])
    assert x.shape == [2, 1, 2] and x.dtype == paddle.float32
    np.testing.assert_array_equal(x.numpy(), [[[1.5, 2.0]], [[3.0, 4.0]]])


def test_float16_meets_bfloat16_at_float32():
    """Neither half float holds all the other's values, so Paddle promotes the pair to
    float32, not to the later one in the rank."""
    a = t([2.0, 3.0], dtype="float16")
    b = t([2.0, 0.5], dtype="bfloat16")
    assert (a ** b).dtype == paddle.float32
    assert (b ** a).dtype == paddle.float32
    np.testing.assert_allclose((a ** b).numpy(), [4.0, 3.0 ** 0.5], rtol=1e-3)


@pytest.mark.parametrize("index", [lambda: (0, 2), lambda: (0, t(2)), lambda: (0, t([2])),
                                   lambda: (t([0, 1]),), lambda: (slice(0, 1), 0)])
@pytest.mark.parametrize("value_shape", [[1, 1], [1, 1, 4], [1, 1, 1, 4]])
def test_setitem_value_with_extra_leading_unit_dims(index, value_shape):
    """As in NumPy and Paddle, a value may have more leading size-1 dims than the
    indexed part: they are dropped before broadcasting."""
    value = np.arange(np.prod(value_shape), dtype=np.float32).reshape(value_shape) + 1
    x = paddle.zeros([2, 3, 4])
    x[index()] = t(value)
    expected = np.zeros([2, 3, 4], np.float32)
    np_index = tuple(np.asarray(i.numpy()) if isinstance(i, paddle.Tensor) else i
                     for i in index())
    target = expected[np_index]
    expected[np_index] = value.reshape(value.shape[value.ndim - target.ndim:]
                                       if value.ndim > target.ndim else value.shape)
    np.testing.assert_array_equal(x.numpy(), expected)


def test_scale_of_a_bfloat16_tensor_keeps_fractional_factors():
    """Only int and bool tensors truncate scale's factors; bfloat16 is a float."""
    x = t([7.0, -2.0, 0.5]).astype("bfloat16")
    y = paddle.scale(x, 2.5, 1.0)
    assert y.dtype == paddle.bfloat16
    np.testing.assert_array_equal(y.astype("float32").numpy(), [18.5, -4.0, 2.25])
