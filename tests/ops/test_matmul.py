"""`matmul` (irflow.ops.linalg): paddle.matmul's transposes, 1-D operands and batch
broadcasting in the type rule, the kernel against an einsum reference, and the VJP
for every combination."""
import re

import numpy as np
import pytest

from irflow.codegen import run
from irflow.errors import ShapeError
from irflow.ir import Builder, Function, TensorType, lookup
from tests.support.opcheck import apply_op, check_op_vjp, vjp_function

# (x, y) shapes as the product sees them, i.e. after the transposes.
CASES = [
    ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
]
TRANSPOSES = [(False, False), (True, False), (False, True), (True, True)]


def operands(x_shape, y_shape, transpose_x, transpose_y, dtype=np.float64, seed=0):
    """Random x, y stored transposed where their flag asks for it."""
    rng = np.random.default_rng(seed)

    def make(shape, transpose):
        a = rng.uniform(-2, 2, shape).astype(dtype) if dtype == np.float64 else \
            rng.integers(-50, 50, shape).astype(dtype)
        return np.ascontiguousarray(np.swapaxes(a, -1, -2)) if transpose and a.ndim > 1 else a
    return make(x_shape, transpose_x), make(y_shape, transpose_y)


def reference(x, y, transpose_x, transpose_y):
    """paddle.matmul spelled out: explicit transposes, promotion of 1-D operands to
    matrices, a broadcasting einsum, then removal of the promoted dims."""
    if transpose_x and x.ndim > 1:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    z = np.einsum("...ij,...jk->...ik", x.reshape(1, -1) if x.ndim == 1 else x,
                  y.reshape(-1, 1) if y.ndim == 1 else y)
    if x.ndim == 1:
        z = z[..., 0, :]
    if y.ndim == 1:
        z = z[..., 0]
    return z


def infer(xt, yt, **attrs):
    opdef = lookup("matmul")
    types = [TensorType(*xt), TensorType(*yt)]
    return opdef.result_types(types, opdef.complete_attrs(attrs, types))[0]


# ---------------------------------------------------------------- kernel

@pytest.mark.parametrize("x_shape, y_shape", CASES)
@pytest.mark.parametrize("transpose_x, transpose_y", TRANSPOSES)
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_kernel_matches_reference(x_shape, y_shape, transpose_x, transpose_y, dtype):
    x, y = operands(x_shape, y_shape, transpose_x, transpose_y, dtype)
    (out,) = apply_op("matmul", [x, y], transpose_x=transpose_x, transpose_y=transpose_y)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, reference(x, y, transpose_x, transpose_y), rtol=1e-12)


# ---------------------------------------------------------------- type rule

@pytest.mark.parametrize("x, y, attrs, result", [
    (("f32", ("N", 3, 4)), ("f32", (4, 5)), {}, "f32[N,3,5]"),
    (("f32", ("N", 4, 3)), ("f32", (5, 4)), {"transpose_x": True, "transpose_y": True},
     "f32[N,3,5]"),
    (("f32", (1, 3, 4)), ("f32", ("B", 4, 5)), {}, "f32[B,3,5]"),
    (("f32", ("N", "K")), ("f32", ("K", "M")), {}, "f32[N,M]"),
    (("f32", ("K",)), ("f32", ("B", "K", 5)), {"transpose_x": True}, "f32[B,5]"),
    (("f64", ("N", 4)), ("f64", (4,)), {}, "f64[N]"),
    (("i32", (4,)), ("i32", (4,)), {}, "i32"),
])
def test_result_types(x, y, attrs, result):
    assert str(infer(x, y, **attrs)) == result


@pytest.mark.parametrize("x, y, attrs, message", [
    (("f32", (2, 3)), ("f32", (4, 5)), {},
     "the contracted dims differ: x is f32[2,3] and y is f32[4,5], so x's columns (3) do "
     "not match y's rows (4)"),
    (("f32", (3, 2)), ("f32", (3, 5)), {"transpose_x": True, "transpose_y": True},
     "x is f32[3,2] transposed and y is f32[3,5] transposed, so x's columns (3) do not "
     "match y's rows (5)"),
    (("f32", ("N", "K")), ("f32", (4, 5)), {}, "x's columns (K) do not match y's rows (4)"),
    (("f32", (2, 3, 4)), ("f32", (5, 4, 6)), {},
     "the batch dims [2] of x f32[2,3,4] and [5] of y f32[5,4,6] do not broadcast"),
    (("f32", ()), ("f32", (3,)), {}, "x must have at least one dim, got the 0-d f32"),
    (("f32", (3,)), ("f64", (3,)), {}, "operand dtypes differ"),
    (("bool", (3,)), ("bool", (3,)), {}, "x must be a float or int typed, got bool[3]"),
])
def test_bad_operands_are_explained(x, y, attrs, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer(x, y, **attrs)


# ---------------------------------------------------------------- VJP

@pytest.mark.parametrize("x_shape, y_shape", CASES)
@pytest.mark.parametrize("transpose_x, transpose_y", TRANSPOSES)
def test_vjp_matches_finite_differences(x_shape, y_shape, transpose_x, transpose_y):
    x, y = operands(x_shape, y_shape, transpose_x, transpose_y)
    check_op_vjp("matmul", [x, y], {"transpose_x": transpose_x, "transpose_y": transpose_y})


@pytest.mark.parametrize("transpose_y", [False, True])
def test_vjp_with_symbolic_batch_folds_it_into_rows(transpose_y):
    """y's cotangent for x [N, 3, 4] @ y [4, 5] is one [4, N*3] @ [N*3, 5] product,
    not a batched product followed by a sum over N."""
    y_type = TensorType("f64", (5, 4) if transpose_y else (4, 5))
    fn = vjp_function("matmul", [TensorType("f64", ("N", 3, 4)), y_type], {"transpose_y": transpose_y})
    names = [op.name for op in fn.block.ops]
    assert "sum" not in names and names.count("matmul") == 3
    x, y = operands((2, 3, 4), (4, 5), False, transpose_y)
    g = np.random.default_rng(1).standard_normal((2, 3, 5))
    gx, gy = run(fn, x, y, g)
    y_plain = y.T if transpose_y else y
    np.testing.assert_allclose(gx, g @ y_plain.T)
    expected_gy = np.einsum("nmk,nmj->kj", x, g)
    np.testing.assert_allclose(gy, expected_gy.T if transpose_y else expected_gy)


@pytest.mark.parametrize("x_shape, gx_spec, gy_spec", [
    ((3, 4), "bmn,bkn->mk", "mk,bmn->bkn"),
    ((4,), "bn,bkn->k", "k,bn->bkn"),
])
def test_vjp_sums_over_symbolic_broadcast_batch_dims(x_shape, gx_spec, gy_spec):
    fn = vjp_function("matmul", [TensorType("f64", x_shape), TensorType("f64", ("B", 4, 5))], {})
    x, y = operands(x_shape, (2, 4, 5), False, False)
    g = np.random.default_rng(2).standard_normal(reference(x, y, False, False).shape)
    gx, gy = run(fn, x, y, g)
    np.testing.assert_allclose(gx, np.einsum(gx_spec, g, y))
    np.testing.assert_allclose(gy, np.einsum(gy_spec, x, g))


def test_integer_operands_get_no_cotangent():
    fn = Function("f", [TensorType("i32", (2, 3)), TensorType("i32", (3,))])
    b = Builder(fn.block)
    op = b.create("matmul", list(fn.args))
    assert lookup("matmul").vjp(b, [op.result], list(op.operands), list(op.results),
                                **op.attrs) == [None, None]
