"""Every elementwise op of the registry, for every dtype it accepts, as a kernel
against the op's NumPy kernel, on values that include the edge cases (NaN, inf,
signed zeros, integer extremes, division by zero)."""
import numpy as np
import pytest

from irflow.codegen.llvm import ElementwiseFunction
from irflow.errors import IntegerDivisionByZero, IrflowError, ShapeError
from irflow.codegen.llvm.elementwise import Unsupported
from irflow.codegen.llvm.scalar import EMITTERS, LLVM_TYPES, NUMPY_OWN_HALF
from irflow.ir import TensorType, dtypes, function
from irflow.ir.registry import all_ops, lookup
from irflow.ir.traits import Elementwise
from tests.codegen.llvm.jit.test_dtypes import compared

BACKEND_DTYPES = [d for d in dtypes.ALL if d.short in LLVM_TYPES]
APPROXIMATED = {"exp", "log", "tanh", "sigmoid", "erf", "sin", "cos", "pow"}
FLOATS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 3.0, -7.0, 1e30, -1e30, 1e-40, 3e9, -3e9,
          np.inf, -np.inf, np.nan]


def values(dtype, n=4):
    """A grid of interesting values of `dtype`, shape [len(grid)]."""
    np_dtype = dtype.np
    if dtype.is_bool:
        return np.array([True, False, True, False], np.bool_)
    if dtype.is_int:  # negative values wrap for uint8: 255, 249
        info = np.iinfo(np_dtype)
        return np.array([0, 1, -1, 2, -7, 5, 13, info.min, info.max, info.min + 1,
                         info.max - 1]).astype(np_dtype)
    floats = FLOATS + ([65504.0, -65504.0, 6e-8, 1e-5, 0.1, 300.0, 70000.0]
                       if dtype is dtypes.float16 else [])
    return dtypes.astype(np.array(floats), dtype)  # bfloat16: its bits


def accepted(opdef, arity, dtype):
    try:
        types = [TensorType(dtype, (3,))] * arity
        opdef.result_types(types, opdef.complete_attrs({}, types))
        return True
    except ShapeError:
        return False


def cases():
    for opdef in all_ops():
        if not opdef.has(Elementwise) or opdef.name in ("select", "cast"):
            continue
        arity = opdef.arity if isinstance(opdef.arity, int) else opdef.arity[0]
        for dtype in BACKEND_DTYPES:
            if accepted(opdef, arity, dtype) and not (
                    dtype is dtypes.float16 and opdef.name in NUMPY_OWN_HALF):
                yield pytest.param(opdef.name, arity, dtype, id=f"{opdef.name}-{dtype.short}")


def test_every_dtype_has_kernels():
    assert set(BACKEND_DTYPES) == set(dtypes.ALL)


@pytest.mark.parametrize("name", sorted(NUMPY_OWN_HALF))
def test_float16_ops_numpy_approximates_its_own_way_are_refused(compiler, name):
    arity = lookup(name).arity
    fn = function("f", [TensorType("f16", ["N"])] * arity,
                  lambda b, *xs: getattr(b, name)(*xs))
    with pytest.raises(Unsupported, match=f"float16 {name} is an approximation"):
        ElementwiseFunction(fn, compiler)


def test_every_elementwise_op_has_an_emitter():
    names = {o.name for o in all_ops() if o.has(Elementwise)}
    assert names <= set(EMITTERS)


def check(got, want, approximate):
    assert got.dtype == want.dtype and got.shape == want.shape
    if approximate:
        finite = np.isfinite(want)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
        # NumPy's sigmoid, (tanh(x/2) + 1) / 2, loses relative accuracy for x < 0: the
        # ulp bounds against exact references are in test_math
        eps = np.finfo(want.dtype).eps
        np.testing.assert_allclose(got[finite], want[finite], rtol=4 * eps, atol=4 * eps)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, arity, dtype", list(cases()))
def test_op_matches_numpy(compiler, name, arity, dtype):
    grid = values(dtype)
    # every pair of grid values, by broadcasting a column against a row
    shapes = [["N", 1], [len(grid)]] if arity == 2 else [["N"]]
    fn = function("f", [TensorType(dtype, s) for s in shapes],
                  lambda b, *xs: getattr(b, name)(*xs))
    args = [grid[:, None], grid] if arity == 2 else [grid]
    kernel = ElementwiseFunction(fn, compiler)
    with np.errstate(all="ignore"):
        try:
            want = np.asarray(lookup(name).kernel(*args))
        except IrflowError as e:  # the reference refuses these inputs: so must the kernel
            with pytest.raises(type(e)):
                kernel(*args)
            return
        (got,) = kernel(*args)
    check(got, want, name in APPROXIMATED and dtype is not dtypes.float16)


@pytest.mark.parametrize("name", ["div", "mod"])
@pytest.mark.parametrize("dtype", [d for d in BACKEND_DTYPES if d.is_int], ids=lambda d: d.short)
def test_integer_division_raises_only_for_a_zero_divisor(compiler, name, dtype):
    """The status byte: set by a zero divisor anywhere (not only in the first vector),
    clear otherwise, and per call (a failed call does not poison the next)."""
    fn = function("f", [TensorType(dtype, ["N"]), TensorType(dtype, ["N"])],
                  lambda b, x, y: getattr(b, name)(x, y))
    kernel = ElementwiseFunction(fn, compiler)
    x = np.arange(-500, 500).astype(dtype.np)  # wrapping into int8's range
    y = np.where(x % 7 == 0, 3, x % 5 - 2).astype(dtype.np)
    y[y == 0] = 1
    (got,) = kernel(x, y)
    with np.errstate(over="ignore"):  # int8's -128 // -1
        np.testing.assert_array_equal(got, lookup(name).kernel(x, y))
    y[777] = 0
    with pytest.raises(IntegerDivisionByZero, match="division by zero"):
        kernel(x, y)
    y[777] = 1
    kernel(x, y)


@pytest.mark.parametrize("source", BACKEND_DTYPES, ids=lambda d: d.short)
@pytest.mark.parametrize("target", BACKEND_DTYPES, ids=lambda d: d.short)
def test_cast(compiler, source, target):
    fn = function("f", [TensorType(source, ["N"])], lambda b, x: b.cast(x, dtype=target))
    grid = values(source)
    want = lookup("cast").kernel(grid, dtype=target)
    (got,) = ElementwiseFunction(fn, compiler)(grid)
    keep = compared(grid, source, target)
    np.testing.assert_array_equal(got[keep], want[keep])


def test_select_broadcasts_its_three_operands(compiler):
    fn = function("f", [TensorType("bool", ["N", 1]), TensorType("f64", [3]),
                        TensorType("f64", [])], lambda b, c, x, y: b.select(c, x, y))
    c = np.array([[True], [False]])
    x, y = np.array([1.0, np.nan, -0.0]), np.asarray(7.0)
    (got,) = ElementwiseFunction(fn, compiler)(c, x, y)
    np.testing.assert_array_equal(got, np.where(c, x, y))
