"""Paddle 3.3's in-place forms (``paddle.sin_``, ``x.equal_``), torch-style aliases
(``paddle.cat``, ``clamp``, ``eq``...) and Tensor's dtype and device methods
(``x.float()``, ``x.to``, ``x.requires_grad``): values against NumPy, gradients
against finite differences, and compiled code against eager."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import IrflowError, ShapeError
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

X = np.array([[0.5, -0.2, 0.3], [0.9, -0.7, 0.1]], dtype="float32")
_erf, _lgamma = np.vectorize(math.erf), np.vectorize(math.lgamma)


def _digamma(a):
    """digamma's reference: the out-of-place function (checked against its series in
    tests/tensor/test_linalg_special.py)."""
    return paddle.digamma(paddle.to_tensor(a)).numpy()


def _logit(p):
    return np.log(p / (1 - p))

POS = np.abs(X) + 0.05
INTS = np.array([[5, -3, 0], [7, 2, -8]], dtype="int32")
DIVISORS = np.array([[2, 2, 3], [-2, 3, 3]], dtype="int32")

UNARY = {
    "abs_": np.abs, "acos_": np.arccos, "asin_": np.arcsin, "asinh_": np.arcsinh,
    "atan_": np.arctan, "atanh_": np.arctanh, "cos_": np.cos, "cosh_": np.cosh,
    "sin_": np.sin, "sinh_": np.sinh, "tan_": np.tan, "tanh_": np.tanh,
    "erf_": _erf, "expm1_": np.expm1, "neg_": np.negative, "trunc_": np.trunc,
    "square_": np.square, "log1p_": np.log1p,
}
POSITIVE_ONLY = {"acosh_": (np.arccosh, 1.0), "digamma_": (_digamma, 0.0),
                 "lgamma_": (_lgamma, 0.0), "log_": (np.log, 0.0),
                 "log2_": (np.log2, 0.0), "log10_": (np.log10, 0.0),
                 "logit_": (_logit, -0.04)}
"""Functions of positive inputs, with the shift that brings POS into their domain."""
NOT_TENSOR_METHODS = {"abs_", "tanh_", "erf_", "expm1_", "square_"}
"""Top-level only here: Paddle's Tensor lacks erf_ and expm1_, and irflow's had the rest."""


def _cases():
    for name, fn in UNARY.items():
        yield name, X, fn
    for name, (fn, shift) in POSITIVE_ONLY.items():
        yield name, (POS + shift).astype("float32"), fn


@pytest.mark.parametrize("name, data, fn", list(_cases()))
def test_unary_in_place_changes_the_tensor_and_returns_it(name, data, fn):
    forms = [getattr(paddle, name)]
    if name not in NOT_TENSOR_METHODS:
        forms.append(lambda t: getattr(t, name)())
    for form in forms:
        x = paddle.to_tensor(data)
        assert form(x) is x
        assert x.dtype == paddle.float32
        np.testing.assert_allclose(x.numpy(), fn(data.astype("float64")), rtol=2e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("name", ["sin_", "log_", "equal_", "cast_", "transpose_"])
def test_a_leaf_that_requires_a_gradient_is_not_changed_in_place(name):
    x = paddle.to_tensor(POS, stop_gradient=False)
    args = {"equal_": (x,), "cast_": ("float64",), "transpose_": ([1, 0],)}.get(name, ())
    with pytest.raises(IrflowError, match="leaf tensor that requires a gradient"):
        getattr(paddle, name)(x, *args)


@pytest.mark.parametrize("fn", [
    lambda a: paddle.sin_(a * 1.0), lambda a: paddle.log1p_(a * 1.0),
    lambda a: (a * 1.0).lgamma_(), lambda a: paddle.cumprod_(a * 1.0, dim=1),
    lambda a: paddle.cumsum_(a * 1.0), lambda a: (a * 1.0).t_(),
    lambda a: paddle.tril_(a * 1.0, 1), lambda a: (a * 1.0).clamp_(0.1, 0.6),
    lambda a: paddle.pow_(a * 1.0, 3), lambda a: (a * 1.0).sub_(a * a, alpha=2),
    lambda a: paddle.div_(a * 1.0, a + 1.0),
    lambda a: paddle.masked_fill_(a * 1.0, a > 0.5, 0.0),
])
def test_gradients_flow_through_an_in_place_change_of_a_computed_tensor(fn):
    check_grads(fn, POS, atol=1e-6)


def test_gradient_flows_through_cast_in_place():
    a = paddle.to_tensor(X, stop_gradient=False)
    h = a * 1.0
    h.cast_("float64")
    (h * h).sum().backward()
    assert h.dtype == paddle.float64 and a.grad.dtype == paddle.float32
    np.testing.assert_allclose(a.grad.numpy(), 2 * X, rtol=1e-6)


def test_log_family_makes_an_int_tensor_float32_and_sin_refuses_it_as_paddle():
    x = paddle.to_tensor(np.array([1, 4, 8], "int32"))
    assert paddle.log2_(x) is x and x.dtype == paddle.float32
    np.testing.assert_allclose(x.numpy(), [0.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="int32 tensor in place into float32"):
        paddle.sin_(paddle.to_tensor(INTS))


@pytest.mark.parametrize("name, np_fn", [
    ("equal_", np.equal), ("not_equal_", np.not_equal), ("less_than_", np.less),
    ("less_", np.less), ("less_equal_", np.less_equal), ("greater_than_", np.greater),
    ("greater_equal_", np.greater_equal), ("logical_and_", np.logical_and),
    ("logical_or_", np.logical_or), ("logical_xor_", np.logical_xor),
])
def test_comparisons_in_place_make_the_tensor_bool_as_paddle(name, np_fn):
    for data, other in [(X, np.flip(X, 1).copy()), (INTS, DIVISORS)]:
        for form in (getattr(paddle, name), lambda a, b: getattr(a, name)(b)):
            x = paddle.to_tensor(data)
            assert form(x, paddle.to_tensor(other)) is x
            assert x.dtype == paddle.bool
            np.testing.assert_array_equal(x.numpy(), np_fn(data, other))
    x = paddle.to_tensor(INTS)
    assert paddle.logical_not_(x) is x and x.dtype == paddle.bool
    np.testing.assert_array_equal(x.numpy(), INTS == 0)


@pytest.mark.parametrize("name, np_fn", [
    ("bitwise_and_", np.bitwise_and), ("bitwise_or_", np.bitwise_or),
    ("bitwise_xor_", np.bitwise_xor)])
def test_bitwise_in_place(name, np_fn):
    x = paddle.to_tensor(INTS)
    assert getattr(x, name)(paddle.to_tensor(DIVISORS)) is x
    np.testing.assert_array_equal(x.numpy(), np_fn(INTS, DIVISORS))
    for name in ("bitwise_not_", "bitwise_invert_"):
        y = paddle.to_tensor(INTS)
        assert getattr(paddle, name)(y) is y
        np.testing.assert_array_equal(y.numpy(), ~INTS)


def test_binary_in_place_forms_and_their_paddle_arguments():
    for name in ("mod_", "remainder_", "floor_mod_"):
        x = paddle.to_tensor(INTS)
        assert getattr(paddle, name)(x, paddle.to_tensor(DIVISORS)) is x
        np.testing.assert_array_equal(x.numpy(), np.mod(INTS, DIVISORS))   # floor modulo
    x = paddle.to_tensor(INTS)
    assert x.mul_(paddle.to_tensor(DIVISORS)) is x and x.dtype == paddle.int32
    np.testing.assert_array_equal(x.numpy(), INTS * DIVISORS)
    x = paddle.to_tensor(INTS)
    paddle.sub_(x, paddle.to_tensor(DIVISORS), alpha=3)
    np.testing.assert_array_equal(x.numpy(), INTS - 3 * DIVISORS)
    x = paddle.to_tensor(INTS)
    assert paddle.divide_(x, paddle.to_tensor(DIVISORS)) is x and x.dtype == paddle.float32
    np.testing.assert_allclose(x.numpy(), INTS / DIVISORS, rtol=1e-6)
    x = paddle.to_tensor(INTS)
    x.div_(paddle.to_tensor(DIVISORS), rounding_mode="floor")
    np.testing.assert_array_equal(x.numpy(), INTS // DIVISORS)
    with pytest.raises(ShapeError, match="keeps the tensor's shape"):
        paddle.mod_(paddle.to_tensor([7.0]), paddle.to_tensor([2.0, 3.0]))


@pytest.mark.parametrize("data, divisor", [(INTS, DIVISORS),
                                           (X, np.full_like(X, 0.3))])
def test_div_rounding_modes_follow_their_rule(data, divisor):
    x, y = paddle.to_tensor(data), paddle.to_tensor(divisor)
    true = data.astype("float64") / divisor
    trunc = paddle.div(x, y, rounding_mode="trunc")
    floor = paddle.div(x, y, rounding_mode="floor")
    assert trunc.dtype == x.dtype and floor.dtype == x.dtype
    np.testing.assert_allclose(trunc.numpy(), np.trunc(true), atol=1e-6)
    np.testing.assert_allclose(floor.numpy(), np.floor(true), atol=1e-6)
    np.testing.assert_allclose(paddle.div(x, y).numpy(), true, rtol=1e-6)
    with pytest.raises(ValueError, match="rounding_mode"):
        paddle.div(x, y, rounding_mode="round")


def test_shape_and_dtype_changing_in_place_forms():
    x = paddle.to_tensor(X)
    assert paddle.cast_(x, "float64") is x and x.dtype == paddle.float64
    x = paddle.to_tensor(X)
    assert paddle.transpose_(x, [1, 0]) is x and x.shape == [3, 2]
    np.testing.assert_array_equal(x.numpy(), X.T)
    assert x.t_() is x and x.shape == [2, 3]
    assert paddle.reshape_(x, [6]) is x and x.shape == [6]
    assert paddle.unsqueeze_(x, 0) is x and x.shape == [1, 6]
    assert paddle.squeeze_(x, 0) is x and paddle.flatten_(x) is x and x.shape == [6]
    x = paddle.to_tensor(X)
    assert paddle.triu_(x, 1) is x
    np.testing.assert_array_equal(x.numpy(), np.triu(X, 1))
    x = paddle.to_tensor(INTS)
    assert paddle.cumsum_(x) is x          # no axis: the 1-D running total, still int32
    assert x.dtype == paddle.int32 and x.shape == [6]
    np.testing.assert_array_equal(x.numpy(), np.cumsum(INTS))
    x = paddle.to_tensor(X)
    paddle.cumsum_(x, axis=1, dtype="float64")
    assert x.dtype == paddle.float64
    np.testing.assert_allclose(x.numpy(), np.cumsum(X, 1), rtol=1e-6)


def test_masked_fill_index_put_and_nan_to_num_in_place():
    x = paddle.to_tensor(X)
    assert x.masked_fill_(paddle.to_tensor(X > 0.4), 7.0) is x
    np.testing.assert_array_equal(x.numpy(), np.where(X > 0.4, 7.0, X).astype("float32"))
    x = paddle.to_tensor(X)
    assert paddle.index_put_(x, (paddle.to_tensor([1]),), paddle.to_tensor(3.0)) is x
    np.testing.assert_array_equal(x.numpy()[1], [3.0, 3.0, 3.0])
    x = paddle.to_tensor(np.array([np.nan, np.inf, -np.inf, 1.0], "float32"))
    assert paddle.nan_to_num_(x, 1.0, 2.0, -2.0) is x
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, -2.0, 1.0])


def test_cat_clamp_and_comparison_aliases():
    a, b = paddle.to_tensor(X), paddle.to_tensor(-X)
    for cat in (paddle.cat, paddle.concatenate):
        np.testing.assert_array_equal(cat([a, b], axis=1).numpy(), np.concatenate([X, -X], 1))
    np.testing.assert_array_equal(paddle.cat([a, b], axis=paddle.to_tensor(0)).numpy(),
                                  np.concatenate([X, -X]))
    np.testing.assert_array_equal(paddle.clamp(a, -0.1, 0.4).numpy(), np.clip(X, -0.1, 0.4))
    np.testing.assert_array_equal(a.clamp(max=0.0).numpy(), np.minimum(X, 0.0))
    x = paddle.to_tensor(INTS)
    assert x.clamp_(0.5, 3.5) is x and x.dtype == paddle.int32   # computed in x's dtype
    np.testing.assert_array_equal(x.numpy(), np.clip(INTS, 0.5, 3.5).astype("int32"))
    pairs = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
             "lt": np.less, "le": np.less_equal, "less": np.less, "greater": np.greater}
    i, j = paddle.to_tensor(INTS), paddle.to_tensor(DIVISORS)
    for name, np_fn in pairs.items():
        np.testing.assert_array_equal(getattr(paddle, name)(i, j).numpy(), np_fn(INTS, DIVISORS))
        np.testing.assert_array_equal(getattr(i, name)(j).numpy(), np_fn(INTS, DIVISORS))


def test_arithmetic_and_shape_aliases():
    i, j, a = paddle.to_tensor(INTS), paddle.to_tensor(DIVISORS), paddle.to_tensor(X)
    np.testing.assert_array_equal(paddle.mul(i, j).numpy(), INTS * DIVISORS)
    np.testing.assert_array_equal(i.sub(j, alpha=2).numpy(), INTS - 2 * DIVISORS)
    assert paddle.true_divide(i, j).dtype == paddle.float32
    np.testing.assert_array_equal(paddle.floor_mod(i, j).numpy(), np.mod(INTS, DIVISORS))
    np.testing.assert_array_equal(paddle.negative(i).numpy(), -INTS)
    assert paddle.positive(a) is a
    with pytest.raises(TypeError, match="bool"):
        paddle.positive(paddle.to_tensor([True]))
    np.testing.assert_array_equal(paddle.sgn(a).numpy(), np.sign(X))
    with pytest.raises(TypeError, match="float tensor"):
        paddle.sgn(i)
    np.testing.assert_array_equal(paddle.reverse(a, [0, 1]).numpy(), X[::-1, ::-1])
    batch = np.arange(12.0).reshape(2, 2, 3)
    np.testing.assert_array_equal(paddle.matrix_transpose(paddle.to_tensor(batch)).numpy(),
                                  batch.transpose(0, 2, 1))
    with pytest.raises(ValueError, match="at least 2 dims"):
        paddle.matrix_transpose(paddle.to_tensor([1.0]))
    np.testing.assert_allclose(paddle.vecdot(a, a, axis=0).numpy(), (X * X).sum(0), rtol=1e-6)
    assert paddle.vecdot(i, j).dtype == paddle.int64         # sums as paddle.sum does
    np.testing.assert_array_equal(paddle.ger(paddle.to_tensor([1.0, 2.0]),
                                             paddle.to_tensor([3.0, 4.0, 5.0])).numpy(),
                                  np.outer([1, 2], [3, 4, 5]))
    index = np.array([[0], [2]])
    np.testing.assert_array_equal(
        paddle.take_along_dim(a, paddle.to_tensor(index), axis=1).numpy(),
        np.take_along_axis(X, index, 1))


def test_alias_gradients():
    check_grads(lambda a, b: paddle.vecdot(a, b), X, -2 * X)
    check_grads(lambda a: paddle.clamp(a, -0.25, 0.4), X)
    check_grads(lambda a, b: paddle.cat([a, b], axis=1), X, POS)
    check_grads(lambda a: paddle.matrix_transpose(a).double(), X)


@pytest.mark.parametrize("args, want", [
    ((5,), [0, 1, 2, 3, 4, 5]), ((1, 4), [1, 2, 3, 4]), ((0, 1, 0.25), [0, 0.25, 0.5, 0.75, 1]),
    ((4, 1, -1), [4, 3, 2, 1]), ((1, 4, 2), [1, 3]), ((3, 1), []),
])
def test_range_includes_its_end_in_the_default_float_dtype(args, want):
    out = paddle.range(*args)
    assert out.dtype == paddle.float32 and out.stop_gradient
    np.testing.assert_array_equal(out.numpy(), np.array(want, "float32"))


def test_range_dtype_tensor_bounds_and_requires_grad():
    out = paddle.range(paddle.to_tensor(1), paddle.to_tensor(3), dtype="int64",
                       requires_grad=True)
    assert out.dtype == paddle.int64 and not out.stop_gradient
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3])


def test_asarray_as_tensor_and_from_numpy():
    array = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = paddle.from_numpy(array)
    array[0, 0] = 9.0                                  # a copy, as Paddle's
    assert out.dtype == paddle.float64 and out.numpy()[0, 0] == 1.0
    with pytest.raises(TypeError, match="numpy.ndarray"):
        paddle.from_numpy([1, 2])
    assert paddle.asarray([1, 2]).dtype == paddle.int64
    assert paddle.asarray([1.0, 2.0]).dtype == paddle.float32
    made = paddle.asarray([1, 2], dtype="float32", requires_grad=True)
    assert made.dtype == paddle.float32 and not made.stop_gradient
    assert paddle.as_tensor(array.astype("float32")).dtype == paddle.float32
    with pytest.raises(ValueError, match="CPU only"):
        paddle.as_tensor([1.0], device="gpu")


@pytest.mark.parametrize("method, dtype", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
    ("int", "int32"), ("long", "int64"), ("short", "int16"), ("bool", "bool"),
    ("byte", "uint8"), ("char", "int8"),
])
def test_dtype_conversion_methods(method, dtype):
    out = getattr(paddle.to_tensor(INTS), method)()
    assert out.dtype == getattr(paddle, dtype)
    assert out.itemsize == out.element_size() == np.dtype(
        "uint16" if dtype == "bfloat16" else dtype).itemsize
    np.testing.assert_array_equal(out.astype("float64").numpy(),
                                  INTS.astype(dtype if dtype != "bfloat16" else "float32"))


def test_conversion_to_the_same_dtype_is_the_tensor_itself():
    a = paddle.to_tensor(X)
    assert a.float() is a and a.to("cpu") is a and a.to(paddle.float32) is a
    assert a.to("float32", copy=True) is not a


def test_to_takes_a_device_a_dtype_or_a_tensor():
    a = paddle.to_tensor(X)
    assert a.to("float64").dtype == paddle.float64
    assert a.to("cpu", "float64").dtype == paddle.float64
    assert a.to(dtype="int32").dtype == paddle.int32
    assert a.to(paddle.to_tensor(INTS)).dtype == paddle.int32
    assert a.to("cpu", blocking=True) is a
    for device in ("gpu", "gpu:0", "cuda"):
        with pytest.raises(ValueError, match="CPU only"):
            a.to(device)
    with pytest.raises(ValueError, match="no GPU"):
        a.cuda()
    assert a.get_device() == -1


def test_requires_grad_mirrors_stop_gradient():
    a = paddle.to_tensor(X)
    assert a.requires_grad is False
    a.requires_grad = True
    assert a.stop_gradient is False and a.requires_grad
    assert a.requires_grad_(False) is a and a.stop_gradient
    assert a.requires_grad_() is a and not a.stop_gradient
    (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * X)


def test_stride_is_c_contiguous_in_elements_and_data_ptr_is_the_storage():
    t = paddle.ones([2, 3, 4])
    assert t.stride() == [12, 4, 1] and t.stride(1) == 4 and t.stride(-1) == 1
    assert paddle.to_tensor(1.0).stride() == []
    with pytest.raises(IndexError, match="out of range"):
        t.stride(3)
    assert t.data_ptr() == t._value.ctypes.data  # the storage (np.asarray(t) is a copy)


def _in_place_program(x):
    h = x * 2.0
    paddle.sin_(h)
    h.clamp_(-0.5, 0.5)
    h.sub_(x, alpha=2)
    h.cumsum_(axis=1)
    mask = (x * 1.0).greater_than_(paddle.zeros_like(x))
    return h, mask, paddle.vecdot(h, x), paddle.cat([h, x.double().float()])


def _alias_program(x):
    y = x.reshape([3, 2]) * 1.0
    paddle.t_(y)
    return y, x.to("float64"), paddle.div(x, 0.7, rounding_mode="trunc"), paddle.ge(x, 0.0)


@pytest.mark.parametrize("program", [_in_place_program, _alias_program])
def test_compiled_code_computes_what_eager_code_does(program):
    x = paddle.to_tensor(X)
    static = paddle.jit.to_static(program, input_spec=[InputSpec([2, 3], "float32")])
    for eager, compiled in zip(program(x), static(x)):
        assert eager.dtype == compiled.dtype and eager.shape == compiled.shape
        np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-6)


def test_where_index_add_scatter_and_floor_divide_in_place():
    """Paddle's where_ changes its second argument; index_add_, scatter_ and
    floor_divide_ their first; each returns the tensor it changed."""
    cond = paddle.to_tensor([True, False, True])
    x, y = paddle.to_tensor([1.0, 2.0, 3.0]), paddle.to_tensor([9.0, 9.0, 9.0])
    assert paddle.where_(cond, x, y) is x
    np.testing.assert_array_equal(x.numpy(), [1.0, 9.0, 3.0])
    ones = np.ones((3, 2), np.float32)
    t = paddle.to_tensor(ones)
    assert t.index_add_(paddle.to_tensor([0, 2]), 0, paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])) is t
    np.testing.assert_array_equal(t.numpy(), [[2.0, 3.0], [1.0, 1.0], [4.0, 5.0]])
    s = paddle.to_tensor(ones * [[1.0], [2.0], [3.0]])
    assert paddle.scatter_(s, paddle.to_tensor([2, 1]), paddle.to_tensor([[5.0, 5.0], [6.0, 6.0]])) is s
    np.testing.assert_array_equal(s.numpy(), [[1.0, 1.0], [6.0, 6.0], [5.0, 5.0]])
    q = paddle.to_tensor([7, -7])
    assert q.floor_divide_(paddle.to_tensor([2, 2])) is q
    np.testing.assert_array_equal(q.numpy(), [3, -4])


def test_scatter_add_in_place_adds_src_at_the_index_along_dim():
    x = paddle.zeros([2, 3])
    index = paddle.to_tensor([[0, 0, 2], [1, 1, 1]])
    assert x.scatter_add_(1, index, paddle.ones([2, 3])) is x
    np.testing.assert_array_equal(x.numpy(), [[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]])
