"""The dtypes float16, bfloat16 (storage and casts), uint8, int8 and int16."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from irflow.ir import dtypes
from irflow.static import InputSpec


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def bf16_reference(values):
    """Round-to-nearest-even bfloat16 of float32 values, by integer arithmetic on the
    bits (independent of irflow's conversion)."""
    out = []
    for v in np.asarray(values, np.float32):
        bits = int(np.float32(v).view(np.uint32))
        lower, upper = bits & 0xFFFF, bits >> 16
        if lower > 0x8000 or (lower == 0x8000 and upper & 1):
            upper += 1
        out.append(upper)
    return np.array(out, np.uint16)


@pytest.mark.parametrize("name, np_dtype", [("float16", np.float16), ("uint8", np.uint8),
                                            ("int8", np.int8), ("int16", np.int16)])
def test_numpy_backed_dtypes_compute(name, np_dtype):
    d = getattr(paddle, name)
    assert d is dtypes.dtype(name) and d.np == np_dtype
    x = t(np.array([1, 2, 3], np_dtype))
    assert x.dtype is d  # to_tensor keeps the NumPy dtype, as Paddle does
    y = x + x
    assert y.dtype is d and y.numpy().tolist() == [2, 4, 6]
    assert t([1.0, 2.0]).astype(name).dtype is d
    static = paddle.jit.to_static(lambda a: a * 2, input_spec=[InputSpec([None], name)])
    assert static(x).numpy().tolist() == [2, 4, 6]


def test_float_to_small_int_casts_wrap_like_paddle():
    assert t([3.7, -3.7]).astype("uint8").numpy().tolist() == [3, 253]  # Paddle's values
    assert t([300, -1]).astype("uint8").numpy().tolist() == [44, 255]


def test_float16_gradients():
    h = t(np.array([1., 2.], np.float16), stop_gradient=False)
    (h * h).sum().backward()
    assert h.grad.dtype is paddle.float16 and h.grad.numpy().tolist() == [2, 4]


def test_bfloat16_is_stored_as_rounded_bits():
    values = np.array([1.0001, 3.3, -2.5, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 65504.0, 0.0],
                      np.float32)
    b = t(values).astype("bfloat16")
    assert b.dtype is paddle.bfloat16
    np.testing.assert_array_equal(b.numpy(), bf16_reference(values))  # uint16, as Paddle
    back = b.astype("float32").numpy()
    np.testing.assert_array_equal(back, (bf16_reference(values).astype(np.uint32) << 16)
                                  .view(np.float32))
    assert t([1.5, 2.5], dtype="bfloat16").numpy().tolist() == [16320, 16416]
    assert t(np.array([16320], np.uint16)).dtype is paddle.bfloat16  # uint16 reads as bf16
    assert np.isnan(t([np.nan]).astype("bfloat16").astype("float32").numpy()).all()
    assert repr(t([1.5]).astype("bfloat16")).endswith("[1.50000000])")  # as values, as Paddle


def test_bfloat16_fills_and_stores_values_not_bits():
    assert paddle.full([2], 2.5, "bfloat16").numpy().tolist() == [16416, 16416]
    assert paddle.ones([2], "bfloat16").astype("float32").numpy().tolist() == [1, 1]
    b = paddle.zeros([2], "bfloat16")
    b.set_value(np.array([3.0, -4.0], np.float32))
    assert b.astype("float32").numpy().tolist() == [3, -4]
    layer = paddle.nn.Linear(2, 2)
    w = layer.weight.numpy()
    layer.astype("bfloat16")
    np.testing.assert_allclose(layer.weight.astype("float32").numpy(), w, rtol=2 ** -8)


def test_bfloat16_sums_compute_in_float32_and_give_bfloat16():
    """They cast bfloat16 to int64, truncating every element (sum gave 2, not 3;
    Paddle 3.3.1 gives bfloat16 3.0 and [0, 3] by rows)."""
    b = t([1.0, -1.0, 0.3, 2.7]).astype("bfloat16")
    total = paddle.sum(b)
    assert total.dtype is paddle.bfloat16 and total.shape == []
    assert total.astype("float32").item() == 3.0
    assert paddle.sum(b.reshape([2, 2]), axis=1).astype("float32").numpy().tolist() == [0, 3]
    running = paddle.cumsum(b)
    assert running.dtype is paddle.bfloat16
    assert running.astype("float32").numpy().tolist() == [1.0, 0.0, 0.30078125, 3.0]
    assert paddle.sum(b, dtype="float32").item() == pytest.approx(3.00390625)


def test_bfloat16_item_is_its_value_and_a_scalar_keeps_its_shape():
    """item() gave the raw bits (16429); a 0-d bfloat16 tensor became 1-d."""
    b = t([2.7]).astype("bfloat16")
    assert b.item() == 2.703125 and isinstance(b.item(), float)
    assert float(t(2.7).astype("bfloat16")) == 2.703125
    assert t(1.5, dtype="bfloat16").shape == []
    assert t(2.7).astype("bfloat16").shape == []
    assert paddle.full([], 2.7, dtype="bfloat16").shape == []


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_bfloat16_sum_agrees_with_eager(backend):
    def fn(x):
        return paddle.sum(x.astype("bfloat16"), axis=1)
    x = t(np.linspace(-3, 3, 8 * 1024, dtype=np.float32).reshape(8, 1024))
    got, want = paddle.compile(fn, backend=backend)(x), fn(x)
    assert got.dtype is paddle.bfloat16
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_bfloat16_is_storage_only():
    b = t([1.0, 2.0, 3.0, 4.0]).astype("bfloat16")
    assert b.reshape([2, 2]).shape == [2, 2]
    assert paddle.concat([b, b]).shape == [8]
    assert b[1:3].astype("float32").numpy().tolist() == [2, 3]
    with pytest.raises(ShapeError, match="cast it to float32 first"):
        b + b
    static = paddle.jit.to_static(lambda a: a.astype("bfloat16").astype("float32") * 2)
    assert static(t([1.5])).numpy().tolist() == [3.0]


def test_zero_d_promotion_orders_the_new_dtypes():
    scalar = t(np.int8(3))
    assert (scalar + t(np.int16(4))).dtype is paddle.int16
    assert (t(np.float16(1)) + t(np.float32(1))).dtype is paddle.float32
    with pytest.raises(TypeError, match="do not mix"):
        t(np.array([1], np.int8)) + t(np.array([1], np.int16))  # as in Paddle


def test_python_float_and_numpy_names_mean_float64_as_paddle():
    """Paddle reads dtype=float and 'float' through np.dtype: float64 (it was float32)."""
    assert t([1]).astype(float).dtype == paddle.float64
    assert paddle.cast(t([1]), "float").dtype == paddle.float64
    assert paddle.zeros([1], dtype=float).dtype == paddle.float64
    assert t([1.0]).astype(int).dtype == paddle.int64
