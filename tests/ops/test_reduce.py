"""Reductions (irflow.ops.reduce): type rules with symbolic dims, canonical axes,
kernels against NumPy references that do their own axis bookkeeping, and VJPs."""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irflow.codegen import run
from irflow.errors import ShapeError
from irflow.ir import (Builder, Function, Module, TensorType, function, lookup, parse,
                       print_module)
from tests.support.opcheck import apply_op, check_op_vjp, vjp_function

FLOAT_REDUCTIONS = ["sum", "prod", "mean", "max", "min"]
REFERENCE = {"sum": np.add.reduce, "prod": np.multiply.reduce, "max": np.maximum.reduce,
             "min": np.minimum.reduce, "any": np.logical_or.reduce,
             "all": np.logical_and.reduce, "mean": lambda v, axis: v.mean(axis=axis)}


def infer(name, types, **attrs):
    """(result type, canonical attrs) of `name` on operands of `types`."""
    opdef = lookup(name)
    full = opdef.complete_attrs(attrs, types)
    return opdef.result_types(types, full)[0], full


def reference(name, x, axis, keepdim):
    """Reduce by moving the reduced axes last and flattening them into one."""
    axes = range(x.ndim) if axis is None else sorted(
        a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    kept = [a for a in range(x.ndim) if a not in axes]
    flat = np.transpose(x, kept + list(axes)).reshape([x.shape[a] for a in kept] + [-1])
    out = np.asarray(REFERENCE[name](flat.astype(np.float64) if name == "mean" else flat,
                                     axis=-1)).astype(x.dtype)
    if keepdim:
        out = out.reshape([1 if a in axes else d for a, d in enumerate(x.shape)])
    return out


@st.composite
def array_and_axis(draw, dtype=np.float64, elements=None):
    x = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
                        elements=st.floats(-2, 2) if elements is None else elements))
    axes = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim,
                         max_size=x.ndim)) if x.ndim else []
    axis = draw(st.sampled_from([None, tuple(axes)] + ([axes[0]] if len(axes) == 1 else [])))
    return x, axis, draw(st.booleans())


# ---------------------------------------------------------------- type rules

def test_symbolic_dims_pass_through():
    t = TensorType("f32", ("N", 3, "M"))
    assert str(infer("sum", [t], axis=1)[0]) == "f32[N,M]"
    assert str(infer("mean", [t], axis=(0, 2), keepdim=True)[0]) == "f32[1,3,1]"
    assert str(infer("max", [t], axis=-1)[0]) == "f32[N,3]"
    assert str(infer("sum", [t])[0]) == "f32"
    assert str(infer("prod", [t], axis=())[0]) == "f32[N,3,M]"


@pytest.mark.parametrize("axis, canonical", [
    (-1, (2,)), ((2, -3), (0, 2)), ([1], (1,)), ((0, 1, 2), None), ((), ()), (None, None)])
def test_axis_canonical_form(axis, canonical):
    t = TensorType("f32", (2, 3, 4))
    _, attrs = infer("sum", [t], axis=axis)
    assert attrs == {"axis": canonical, "keepdim": False}
    assert infer("sum", [t], **attrs)[1] == attrs


def test_zero_d_operand_has_no_axis_to_keep():
    t = TensorType("f64", ())
    for axis in (None, (), 0):
        result, attrs = infer("sum", [t], axis=axis, keepdim=True)
        assert (result, attrs["axis"]) == (t, None)


@pytest.mark.parametrize("name, operand, attrs, message", [
    ("sum", ("f32", (2, 3)), {"axis": (1, -1)}, "repeats an axis"),
    ("sum", ("f32", (2, 3)), {"axis": 2}, "axis 2 is out of range for a rank-2 operand"),
    ("sum", ("f32", (2, 3)), {"axis": 1.0}, "axis must be None, an int or a tuple of ints"),
    ("mean", ("i32", (2, 3)), {}, "must be float typed, got i32[2,3]"),
    ("sum", ("bool", (2,)), {}, "must be a float or int typed, got bool[2]"),
    ("any", ("f32", (2,)), {}, "must be bool typed, got f32[2]"),
    ("max", ("f32", ("N", 0)), {"axis": 1}, "axis 1 of f32[N,0] has size 0"),
    ("sum", ("f32", (2,)), {"dims": 0}, "has no attribute(s) dims"),
])
def test_bad_operands_are_explained(name, operand, attrs, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer(name, [TensorType(*operand)], **attrs)


def test_canonical_attrs_print_and_parse_back():
    def body(b, x):
        return [b.sum(x, axis=-1, keepdim=True), b.max(x, axis=(0, 1)),
                b.argmin(x, axis=-1), b.mean(x, axis=()), b.numel(x, axis=[0])]
    text = print_module(Module([function("f", [TensorType("f32", ("N", 4))], body)]))
    for line in ["sum %0 {axis=[1], keepdim=true} : f32[N,1]", "max %0 : f32",
                 "argmin %0 {axis=1} : i64[N]", "mean %0 {axis=[]} : f32[N,4]",
                 "numel %0 {axis=[0]} : i64"]:
        assert line in text
    assert print_module(parse(text)) == text


# ---------------------------------------------------------------- kernels

@pytest.mark.parametrize("name", FLOAT_REDUCTIONS)
@given(case=array_and_axis())
def test_float_kernels_match_reference(name, case):
    x, axis, keepdim = case
    (out,) = apply_op(name, [x], axis=axis, keepdim=keepdim)
    np.testing.assert_allclose(out, reference(name, x, axis, keepdim), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@given(case=array_and_axis(np.int32, st.integers(-2**31, 2**31 - 1)))
def test_int32_kernels_keep_int32_and_wrap(name, case):
    x, axis, keepdim = case
    (out,) = apply_op(name, [x], axis=axis, keepdim=keepdim)
    wide = reference(name, x.astype(np.int64), axis, keepdim)
    np.testing.assert_array_equal(out, wide.astype(np.int32))


@pytest.mark.parametrize("name", ["any", "all"])
@given(case=array_and_axis(np.bool_, st.booleans()))
def test_bool_kernels_match_reference(name, case):
    x, axis, keepdim = case
    (out,) = apply_op(name, [x], axis=axis, keepdim=keepdim)
    np.testing.assert_array_equal(out, reference(name, x, axis, keepdim))


def test_float32_mean_stays_float32_and_full_reduction_is_0d():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = apply_op("mean", [x])
    assert out.dtype == np.float32 and out.shape == ()
    assert out == pytest.approx(5.5)


def test_reducing_no_axis_is_the_identity():
    x = np.random.default_rng(1).standard_normal((2, 3))
    for name in FLOAT_REDUCTIONS:
        np.testing.assert_array_equal(apply_op(name, [x], axis=())[0], x)


# ---------------------------------------------------------------- numel

def test_numel_static():
    x = np.zeros((2, 3, 4), np.float32)
    for axis, expected in [(None, 24), ((0, 2), 8), (-2, 3), ((), 1)]:
        (out,) = apply_op("numel", [x], axis=axis)
        assert out.dtype == np.int64 and out.shape == () and out == expected


def test_numel_of_symbolic_dims_is_known_at_run_time():
    fn = Function("f", [TensorType("bool", ("N", 3, "M"))])
    b = Builder(fn.block)
    b.ret(b.numel(fn.args[0], axis=(0, 2)), b.numel(fn.args[0]))
    assert [r.type for r in fn.block.ops[0].results] == [TensorType("i64", ())]
    assert lookup("numel").nondiff
    assert run(fn, np.zeros((5, 3, 2), bool)) == [10, 30]


# ---------------------------------------------------------------- VJPs

@pytest.mark.parametrize("name", FLOAT_REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vjp_matches_finite_differences(name, axis, keepdim):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3, 4))
    check_op_vjp(name, [x], {"axis": axis, "keepdim": keepdim})


def test_vjp_of_a_0d_operand():
    for name in FLOAT_REDUCTIONS:
        check_op_vjp(name, [np.float64(1.5)])


@pytest.mark.parametrize("axis", [None, 1])
def test_prod_vjp_is_exact_at_zeros(axis):
    # Row 0 holds one zero (its gradient is the product of the others), row 1 two
    # zeros (every gradient 0), row 2 none.
    x = np.array([[2.0, 0.0, 3.0], [0.0, 5.0, 0.0], [1.5, -2.0, 0.5]])
    check_op_vjp("prod", [x], {"axis": axis})


def test_max_vjp_splits_the_cotangent_among_ties():
    x = np.array([[1.0, 3.0, 3.0, 3.0], [2.0, 0.0, 2.0, -1.0]])
    for name, sign in (("max", 1), ("min", -1)):
        fn = vjp_function(name, [TensorType("f64", (2, 4))], {"axis": 1, "keepdim": False})
        (grad,) = run(fn, sign * x, np.array([6.0, 4.0]))
        np.testing.assert_allclose(grad, [[0, 2, 2, 2], [2, 0, 2, 0]])
    # A pair of ties is where central differences agree with the even split.
    check_op_vjp("max", [np.array([[1.0, 2.0, 2.0], [4.0, 0.0, 4.0]])], {"axis": 1})


def test_mean_vjp_counts_symbolic_dims_at_run_time():
    fn = vjp_function("mean", [TensorType("f64", ("N", 3))], {"axis": 0})
    assert "numel" in [op.name for op in fn.block.ops]
    x, g = np.zeros((4, 3)), np.array([1.0, 2.0, 4.0])
    (grad,) = run(fn, x, g)
    np.testing.assert_allclose(grad, np.broadcast_to(g / 4, (4, 3)))


def test_mean_vjp_counts_static_dims_at_compile_time():
    fn = vjp_function("mean", [TensorType("f64", ("N", 3))], {"axis": 1, "keepdim": True})
    assert "numel" not in [op.name for op in fn.block.ops]
    (grad,) = run(fn, np.zeros((2, 3)), np.array([[3.0], [6.0]]))
    np.testing.assert_allclose(grad, [[1, 1, 1], [2, 2, 2]])


def test_sum_vjp_broadcasts_over_symbolic_dims():
    fn = vjp_function("sum", [TensorType("f32", ("N", 3, "M"))], {"axis": (0, 2)})
    (grad,) = run(fn, np.zeros((2, 3, 5), np.float32), np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(grad, np.broadcast_to(np.array([1, 2, 3.0])[:, None],
                                                        (2, 3, 5)))


def test_integer_operands_get_no_cotangent():
    fn = Function("f", [TensorType("i32", (2, 3))])
    b = Builder(fn.block)
    for name in ["sum", "prod", "max"]:
        op = b.create(name, list(fn.args), {"axis": (1,)})
        assert lookup(name).vjp(b, [op.result], list(op.operands), list(op.results),
                                **op.attrs) == [None]


# ---------------------------------------------------------------- argmax, argmin

def first_index(x, axis, keepdim, pick):
    """Index of the first extremum, by masking rather than by NumPy's argmax."""
    if axis is None:
        flat = x.reshape(-1)
        out = np.asarray(np.flatnonzero(flat == pick(flat))[0])
        return out.reshape((1,) * x.ndim) if keepdim else out
    axis %= x.ndim
    index = np.arange(x.shape[axis]).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    hits = x == pick(x, axis=axis, keepdims=True)
    return np.where(hits, index, x.shape[axis]).min(axis=axis, keepdims=keepdim)


@pytest.mark.parametrize("name, pick", [("argmax", np.max), ("argmin", np.min)])
@given(x=hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=st.integers(0, 2)),
       data=st.data())
def test_arg_kernels_pick_the_first_tie(name, pick, x, data):
    axis = data.draw(st.sampled_from([None, *range(-x.ndim, x.ndim)]))
    keepdim = data.draw(st.booleans())
    (out,) = apply_op(name, [x], axis=axis, keepdim=keepdim)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, first_index(x, axis, keepdim, pick))


def test_arg_type_rules():
    t = TensorType("f32", ("N", 3, 4))
    result, attrs = infer("argmax", [t], axis=-2)
    assert (str(result), attrs["axis"]) == ("i64[N,4]", 1)
    assert str(infer("argmin", [t], axis=0, keepdim=True)[0]) == "i64[1,3,4]"
    assert str(infer("argmax", [t], keepdim=True)[0]) == "i64[1,1,1]"
    assert str(infer("argmax", [t])[0]) == "i64"
    # On a vector, the axis and the flattened tensor coincide: one canonical form.
    assert infer("argmax", [TensorType("f32", (5,))], axis=-1)[1]["axis"] is None
    assert lookup("argmax").nondiff and lookup("argmax").vjp is None


@pytest.mark.parametrize("operand, attrs, message", [
    (("bool", (3,)), {}, "must be a float or int typed"),
    (("f32", (2, 3)), {"axis": (0,)}, "axis must be None or an int"),
    (("f32", (2, 3)), {"axis": -3}, "out of range"),
    (("f32", (2, 0)), {"axis": 1}, "size 0"),
    (("f32", (2, 0)), {}, "has no elements"),
])
def test_arg_bad_operands(operand, attrs, message):
    with pytest.raises(ShapeError, match=message):
        infer("argmax", [TensorType(*operand)], **attrs)
