"""paddle.where's dtype rule for Python scalars, and irflow's own code keeping its dtypes.

Paddle 3.3.1's ``where`` (checked side by side) makes a scalar operand the tensor
``paddle.to_tensor`` makes of it (a float one of the default float dtype, an int int64,
a bool bool) and then promotes x and y as two tensors, whatever their ranks: only two
float dtypes meet (at the wider, float16 with bfloat16 at float32); any other mix is a
TypeError. So ``where(c, float16_x, 1.5)`` is float32, unlike ``float16_x * 1.5``.
irflow's functions built on a selection (activations, losses, ...) keep their input's
dtype, as Paddle's kernels do.
"""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F

COND = [True, False, True]


def operand(spec):
    """A [3] tensor of dtype `spec[0]`, a 0-D one for ``(dtype, [])``, or `spec` itself."""
    if isinstance(spec, tuple):
        dtype, shape = spec
        values = np.array([1, 0, 2] if shape else 1)
        return paddle.to_tensor(values).astype(dtype)
    return spec


# (x, y, dtype Paddle 3.3.1 gives, or None where it raises TypeError)
TABLE = [
    (("float16", [3]), 1.5, "float32"),
    (1.5, ("float16", [3]), "float32"),
    (("bfloat16", [3]), 1.5, "float32"),
    (("float32", [3]), 1.5, "float32"),
    (("float64", [3]), 1.5, "float64"),
    (1.5, ("float64", [3]), "float64"),
    (("int64", [3]), 2, "int64"),
    (2, ("int64", [3]), "int64"),
    (("bool", [3]), True, "bool"),
    (1.5, 2.5, "float32"),
    (2, 3, "int64"),
    (True, False, "bool"),
    (("float16", [3]), ("float32", []), "float32"),  # a 0-D tensor is no weaker
    (("float32", [3]), ("float64", []), "float64"),
    (("float16", [3]), ("bfloat16", [3]), "float32"),
    (("float16", [3]), np.float64(1.5), "float64"),  # NumPy scalars keep their dtype
    (("float16", [3]), np.float32(1.5), "float32"),
    (("float32", [3]), 2, None),
    (("float32", [3]), 0, None),
    (("float16", [3]), True, None),
    (("int32", [3]), 2, None),
    (("int64", [3]), 1.5, None),
    (("int32", [3]), 1.5, None),
    (("bool", [3]), 2, None),
    (("bool", [3]), 1.5, None),
    (1.5, 2, None),
    (2, True, None),
    (("float32", [3]), ("int64", []), None),
    (("int32", [3]), ("int64", []), None),
]


@pytest.mark.parametrize("x, y, dtype", TABLE)
def test_where_promotes_as_paddle(x, y, dtype):
    condition = paddle.to_tensor(COND)
    if dtype is None:
        with pytest.raises(TypeError, match="where: x is .* do not mix"):
            paddle.where(condition, operand(x), operand(y))
        return
    for out in (paddle.where(condition, operand(x), operand(y)),
                condition.where(operand(x), operand(y))):
        assert out.dtype == getattr(paddle, dtype)
        assert out.shape == [3]


@pytest.mark.parametrize("cond_shape, x, y, shape", [
    ([], 1.5, 2.5, []),
    ([2, 3], 1.5, 2.5, [2, 3]),
    ([], ("float16", [3]), 1.5, [3]),
    ([2, 1], ("float32", [3]), 1.5, [2, 3]),
    ([3], ("float32", []), 1.5, [3]),
])
def test_where_shape_is_the_broadcast_of_all_three(cond_shape, x, y, shape):
    condition = paddle.to_tensor(np.ones(cond_shape, bool))
    assert paddle.where(condition, operand(x), operand(y)).shape == shape


def test_a_float_scalar_takes_the_default_float_dtype():
    before = paddle.get_default_dtype()
    paddle.set_default_dtype("float64")
    try:
        out = paddle.where(paddle.to_tensor(COND), paddle.to_tensor([1.0, 2.0, 3.0],
                                                                    dtype="float32"), 1.5)
        assert out.dtype == paddle.float64
        assert paddle.where(paddle.to_tensor(COND), 1.5, 2.5).dtype == paddle.float64
    finally:
        paddle.set_default_dtype(before)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_where_values_follow_numpy(dtype):
    """The Python number rounded once, to the result's dtype: Paddle 3.3.1 rounds it
    to float32 first also for a float64 result (1.100000023841858 for 1.1), which
    irflow does not copy."""
    rng = np.random.default_rng(3)
    condition = rng.random((4, 5)) < 0.5
    x = paddle.to_tensor(rng.standard_normal((4, 5)).astype(np.float32)).astype(dtype)
    x_values = x.astype("float64").numpy()
    want_dtype = np.float64 if dtype == "float64" else np.float32
    got = paddle.where(paddle.to_tensor(condition), x, 1.1)
    np.testing.assert_array_equal(got.numpy(), np.where(condition, x_values.astype(want_dtype),
                                                         want_dtype(1.1)))
    got = paddle.where(paddle.to_tensor(condition), -0.3, x)
    np.testing.assert_array_equal(got.numpy(), np.where(condition, want_dtype(-0.3),
                                                         x_values.astype(want_dtype)))


def test_where_needs_both_x_and_y():
    condition = paddle.to_tensor(COND)
    with pytest.raises(ValueError, match="give both x and y or neither.*got only x"):
        paddle.where(condition, paddle.to_tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="got only y"):
        paddle.where(condition, y=paddle.to_tensor([1.0, 2.0, 3.0]))


def test_gradient_through_a_scalar_operand_matches_finite_differences():
    rng = np.random.default_rng(5)
    condition = paddle.to_tensor(rng.random((3, 4)) < 0.5)
    x0 = rng.standard_normal((3, 4))

    def loss(values):
        x = paddle.to_tensor(values, dtype="float64", stop_gradient=False)
        return paddle.sum(paddle.sin(paddle.where(condition, x, 0.7)) * x), x
    out, x = loss(x0)
    out.backward()
    eps, numeric = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[i] = eps
        numeric[i] = (loss(x0 + step)[0].item() - loss(x0 - step)[0].item()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-7, atol=1e-9)


def test_gradient_of_a_float16_operand_promoted_by_a_scalar_is_float16():
    condition = paddle.to_tensor(COND)
    x = paddle.to_tensor([1.0, 2.0, 3.0], dtype="float16", stop_gradient=False)
    weights = paddle.to_tensor([2.0, 3.0, 5.0])
    out = paddle.where(condition, x, 1.5)
    assert out.dtype == paddle.float32
    paddle.sum(out * weights).backward()
    assert x.grad.dtype == paddle.float16
    np.testing.assert_array_equal(x.grad.numpy(), np.array([2.0, 0.0, 5.0], np.float16))


def selections(condition, half, scale):
    """where with scalars on either side, the method, a 0-D condition and Python
    numbers that exist only when a compiled program runs (``.item()``)."""
    double = half.astype("float64")
    return (paddle.where(condition, half, 1.5), paddle.where(condition, 2.5, half),
            condition.where(half, -0.5), paddle.where(condition[0], 1.5, 2.5),
            paddle.where(condition, half, scale.item()),
            paddle.where(condition, 3, paddle.to_tensor([4, 5, 6])),
            paddle.where(condition, double, 1.1),
            paddle.where(condition, double, scale.astype("float64").item() * 3.3))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_where_equals_eager(backend):
    args = (paddle.to_tensor(COND), paddle.to_tensor([1.0, 2.0, 3.0], dtype="float16"),
            paddle.to_tensor(1 / 3, dtype="float16"))
    eager = selections(*args)
    compiled = paddle.compile(selections, backend=backend)(*args)
    assert [t.dtype for t in eager] == ([paddle.float32] * 5 + [paddle.int64]
                                        + [paddle.float64] * 2)
    for want, got in zip(eager, compiled):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(eager[4].numpy(),
                                  np.array([1.0, np.float16(1 / 3), 3.0], np.float32))
    assert eager[6].numpy()[1] == 1.1
    assert eager[7].numpy()[1] == float(np.float16(1 / 3)) * 3.3


@pytest.mark.parametrize("activation, reference", [
    (F.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    (F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (F.softplus, lambda x: np.log1p(np.exp(x))),
    (F.hardtanh, lambda x: np.clip(x, -1, 1)),
    (F.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (F.softshrink, lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
])
@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_float16_activations_stay_float16(activation, reference, backend):
    """Activations select with Python numbers internally; as Paddle's kernels, they
    keep a float16 input float16 (values within float16's rounding of float64's)."""
    x = np.linspace(-7, 7, 57).astype(np.float16)
    fn = activation if backend is None else paddle.compile(activation, backend=backend)
    out = fn(paddle.to_tensor(x))
    assert out.dtype == paddle.float16
    np.testing.assert_allclose(out.numpy().astype(np.float64), reference(x.astype(np.float64)),
                               rtol=2e-3, atol=1e-3)
