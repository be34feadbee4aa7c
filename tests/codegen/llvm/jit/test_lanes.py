"""Rows in lanes (`FusedSpec.lanes`): fused kernels reducing short rows run a block of
rows at once, a row in each lane. Each kernel is checked to be one that runs rows in
lanes (`spec.lanes`; the training step's by its IR's gathers too), then its results
are compared bit for bit with the code running one row at a time (the same body
compiled for rows of one: scalar code reducing in index order, as each lane does)
and with the NumPy evaluator: the bodies of a softmax, a log-softmax, a
cross-entropy's masked max and a layer norm, every reduction kind on every dtype,
NaN and infinities, row counts below, at and beyond a block of 16 (symbolic, so one
kernel serves them all), row lengths 2 to 64, blocks split across threads, and what
stays a row at a time."""
import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.fused import MIN_ELEMENTS, FusedKernel
from irflow.codegen.llvm.kernel import NUMPY_DTYPES
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.ir import Module, TensorType, function
from irflow.passes import PassManager
from tests.support.threads import with_threads

ROW_COUNTS = (1, 3, 15, 16, 17, 40, 256)
FLOATS = {"rtol": 2e-6, "atol": 1e-6}  # exp and log are not NumPy's own, sums not its order
rng = np.random.default_rng(0)


def fused_program(compiler, types, body, least=0):
    """(the plan of the fused function, its one fused op's kernel), calls below `least`
    elements running NumPy (0: the code runs every call; with `MIN_ELEMENTS`, static
    sizes below it are compiled for size)."""
    module = Module([function("f", types, body)])
    PassManager(["fuse"], verify_each=True).run(module)
    (op,) = [op for op in module.walk() if op.name == "fused"]
    plan = compile_plan(module.main, LLVMLowering(compiler, min_elements=least))
    return plan, FusedKernel(op, compiler, min_elements=least)


def in_lanes(compiler, types, body, lanes=16, least=0):
    """The plan of `body` on `types`, asserted to run its rows in `lanes` lanes."""
    plan, kernel = fused_program(compiler, types, body, least)
    assert kernel.spec.lanes == lanes, kernel.spec.text()
    return plan


def row_axes(types, axis=0):
    """Each operand's axis along the domain's `axis` (the rows), None for an operand
    broadcast along it."""
    rank = max(t.rank for t in types)
    return [a if a >= 0 and t.shape[a] != 1 else None
            for t, a in ((t, axis - rank + t.rank) for t in types)]


def one_row_at_a_time(compiler, types, body, axes, axis):
    """A function running `body` on one row of `types` (along each operand's `axes`,
    the results' `axis`, before the reduced axes) per call, its results concatenated:
    the code a row at a time compiled for size, which reduces in index order (the
    vectorized rows code sums in another order)."""
    row_types = [t if a is None else TensorType(t.dtype, [*t.shape[:a], 1, *t.shape[a + 1:]])
                 for t, a in zip(types, axes)]
    plan, kernel = fused_program(compiler, row_types, body, MIN_ELEMENTS)
    assert kernel.spec.small and kernel.spec.lanes == 0

    def rows(*arrays):
        n = next(x.shape[a] for x, a in zip(arrays, axes) if a is not None)
        each = [plan(*[x if a is None else x.take([i], a) for x, a in zip(arrays, axes)])
                for i in range(n)]
        return [np.concatenate(results, axis=axis) for results in zip(*each)]
    return rows


def check(compiler, types, body, arrays, axis=0, tolerance=FLOATS, lanes=16, least=0,
          plan=None, axes=None):
    """`body` in lanes on `arrays` (`in_lanes`' plan, or `plan`): bit for bit the code
    a row at a time (along `axis`; along `axes` of the operands, if not as broadcast),
    and NumPy's results (exactly, but for floats within `tolerance`)."""
    plan = plan or in_lanes(compiler, types, body, lanes, least)
    got = plan(*arrays)
    rows = one_row_at_a_time(compiler, types, body, axes or row_axes(types, axis), axis)
    for g, w in zip(got, rows(*arrays)):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()
    with np.errstate(all="ignore"):
        want = run(function("f", types, body), *arrays)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, **tolerance)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def softmax(b, x):
    m = b.max(x, axis=(1,), keepdim=True)
    e = b.exp(b.sub(x, m))
    return b.div(e, b.sum(e, axis=(1,), keepdim=True))


def log_softmax(b, x):
    s = b.sub(x, b.max(x, axis=(1,), keepdim=True))
    return b.sub(s, b.log(b.sum(b.exp(s), axis=(1,), keepdim=True)))


def cross_entropy(b, x, bias, labels, classes):
    """The training step's loss: log-softmax of ``x + bias``, the label's entry picked
    by a max over the row masked with -inf, and the gradient's softmax."""
    h = b.add(x, bias)
    s = b.sub(h, b.max(h, axis=(1,), keepdim=True))
    e = b.exp(s)
    total = b.sum(e, axis=(1,), keepdim=True)
    picked = b.select(b.eq(labels, classes), b.sub(s, b.log(total)), b.constant(-np.inf))
    return b.neg(b.max(picked, axis=(1,), keepdim=True)), b.div(e, total)


def layer_norm(b, x):
    mu = b.mean(x, axis=(1,), keepdim=True)
    d = b.sub(x, mu)
    var = b.mean(b.mul(d, d), axis=(1,), keepdim=True)
    return b.mul(d, b.rsqrt(b.add(var, b.constant(1e-5)))), mu


def logits(rows, width, dtype=np.float32):
    """Normal values times 3, NaN in row 2, +inf in row 5, a row of -inf (row 7) and
    a row of +inf (row 11), where there are such rows."""
    x = (rng.standard_normal((rows, width)) * 3).astype(dtype)
    for row, column, value in ((2, width // 2, np.nan), (5, 0, np.inf),
                               (7, slice(None), -np.inf), (11, slice(None), np.inf)):
        if row < rows:
            x[row, column] = value
    return x


@pytest.mark.parametrize("width", [2, 7, 10, 16, 31])
@pytest.mark.parametrize("body", [softmax, log_softmax, layer_norm])
def test_bodies_of_two_reductions(compiler, body, width):
    types = [TensorType("f32", ["N", width])]
    plan = in_lanes(compiler, types, body)
    for rows in ROW_COUNTS:
        check(compiler, types, body, [logits(rows, width)], plan=plan)


@pytest.mark.parametrize("width", [3, 10, 32])
def test_the_cross_entropy_of_the_training_step(compiler, width):
    types = [TensorType("f32", ["N", width]), TensorType("f32", [width]),
             TensorType("i64", ["N", 1]), TensorType("i64", [width])]
    plan = in_lanes(compiler, types, cross_entropy)
    for rows in ROW_COUNTS:
        labels = rng.integers(0, width, (rows, 1))
        check(compiler, types, cross_entropy,
              [logits(rows, width), logits(1, width)[0] / 3, labels, np.arange(width)],
              plan=plan)


def test_the_training_step_s_static_shapes(compiler):
    """[256, 10], compiled for size: the kernel of the MLP's training step."""
    types = [TensorType("f32", [256, 10]), TensorType("f32", [10]),
             TensorType("i64", [256, 1]), TensorType("i64", [10])]
    plan, kernel = fused_program(compiler, types, cross_entropy, MIN_ELEMENTS)
    assert kernel.spec.small and kernel.spec.lanes == 16
    assert "llvm.masked.gather.v16f32" in compiler.llvm_ir(kernel.spec)
    check(compiler, types, cross_entropy,
          [logits(256, 10), logits(1, 10)[0], rng.integers(0, 10, (256, 1)), np.arange(10)],
          plan=plan)


def test_float64_rows_take_8_lanes(compiler):
    types = [TensorType("f64", ["N", 12])]
    plan = in_lanes(compiler, types, softmax, lanes=8)
    for rows in (1, 7, 8, 9, 40):
        check(compiler, types, softmax, [logits(rows, 12, np.float64)], plan=plan)


def _numbers(dtype: str, shape) -> np.ndarray:
    """Random values of `dtype`: integers in [-100, 100] (where the dtype holds them),
    floats near 1 (their products stay finite) with NaN, +inf and -inf planted."""
    kind = np.dtype(NUMPY_DTYPES[dtype])
    if kind == np.bool_:
        return rng.random(shape) < 0.5
    if kind.kind in "iu":
        info = np.iinfo(kind)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape,
                            endpoint=True).astype(kind)
    x = (rng.standard_normal(shape) * 0.3 + 1).astype(kind)
    x[1, 3] = np.nan
    x[4, :] = np.inf
    x[6, 0] = -np.inf
    return x


REDUCTIONS = [(kind, dtype) for dtype in ("f32", "f64", "i8", "u8", "i16", "i32", "i64")
              for kind in ("sum", "mean", "prod", "max", "min")
              if not (kind == "mean" and dtype[0] in "iu")] + \
    [("max", "f16"), ("min", "f16"), ("any", "bool"), ("all", "bool")]


@pytest.mark.parametrize("width", [5, 40, 64])
@pytest.mark.parametrize("kind, dtype", REDUCTIONS)
def test_every_reduction_kind_and_dtype(compiler, kind, dtype, width):
    """Each kind of `dtype` (integers wrap as NumPy's, NaN propagates through max and
    min) over rows of static sizes compiled for size, beside a result spanning the
    rows: one reduction, so rows of up to 64 elements (`MAX_LANE_ELEMENTS_SMALL`)."""
    def body(b, x):
        if dtype == "bool":
            r = getattr(b, kind)(x, axis=(1,), keepdim=True)
            return r, b.logical_xor(x, r)
        y = b.add(b.mul(x, x), x)
        r = getattr(b, kind)(y, axis=(1,), keepdim=True)
        return r, b.sub(y, r)
    types = [TensorType(dtype, [37, width])]
    lanes = 8 if dtype == "f64" else 16
    tolerance = {"rtol": 2e-3} if dtype == "f16" else FLOATS
    check(compiler, types, body, [_numbers(dtype, (37, width))], tolerance=tolerance,
          lanes=lanes, least=MIN_ELEMENTS)


@pytest.mark.parametrize("case", ["pow", "mod", "bfloat16", "rounding"])
def test_ops_calling_libm_and_casts(compiler, case):
    """pow and float mod (vector forms of libm calls), bfloat16's bits, roundings."""
    def body(b, x, y):
        if case == "pow":
            value = b.pow(b.abs(x), y)
        elif case == "mod":
            value = b.mod(x, y)
        elif case == "bfloat16":
            value = b.cast(b.cast(b.mul(x, y), dtype="bf16"), dtype="f32")
        else:
            value = b.add(b.round(b.mul(x, y)), b.floor(b.sqrt(b.abs(x))))
        return b.max(value, axis=(1,), keepdim=True), b.sum(value, axis=(1,), keepdim=True)
    types = [TensorType("f32", ["N", 9]), TensorType("f32", ["N", 9])]
    plan = in_lanes(compiler, types, body)
    for rows in (3, 20):
        check(compiler, types, body, [logits(rows, 9), logits(rows, 9) / 3], plan=plan)


def test_blocks_inside_outer_rows(compiler):
    """[3, N, 10] reduced along its last axis: the lanes hold rows along N, a block
    loop in each of the 3 outer rows; a [N, 1] row value and a [10] broadcast
    operand; a row value and an element value as results."""
    def body(b, x, scale, shift):
        h = b.add(b.mul(x, scale), shift)
        m = b.max(h, axis=(2,), keepdim=True)
        return b.exp(b.sub(h, m)), b.sum(b.tanh(h), axis=(2,), keepdim=True)
    types = [TensorType("f32", [3, "N", 10]), TensorType("f32", ["N", 1]),
             TensorType("f32", [10])]
    plan = in_lanes(compiler, types, body)
    for rows in (1, 16, 21):
        check(compiler, types, body,
              [logits(3 * rows, 10).reshape(3, rows, 10), logits(rows, 1), logits(1, 10)[0]],
              axis=1, plan=plan)


def test_several_reduced_axes(compiler):
    """[N, 4, 5] reduced over its last two axes: 20 elements a row, in loop order."""
    def body(b, x):
        e = b.exp(b.sub(x, b.max(x, axis=(1, 2), keepdim=True)))
        return e, b.sum(e, axis=(1, 2), keepdim=False)
    types = [TensorType("f32", ["N", 4, 5])]
    plan = in_lanes(compiler, types, body)
    for rows in (2, 16, 35):
        check(compiler, types, body, [logits(rows, 20).reshape(rows, 4, 5)], plan=plan)


def test_a_result_stored_in_place_of_a_matmul(compiler):
    """``t = tanh(x @ w + c)`` beside its rows' max: t is stored over the product's
    result, the phase of the max storing it, each lane's element loaded before. The
    bits are those of the body, a row at a time, on NumPy's product (the plan's
    anchor at these sizes; a product of one row at a time would sum in another
    order)."""
    def epilogue(b, h, c):
        t = b.tanh(b.add(h, c))
        return t, b.max(b.abs(t), axis=(1,), keepdim=True)
    types = [TensorType("f32", ["N", 24]), TensorType("f32", [24, 12]),
             TensorType("f32", [12])]
    plan, kernel = fused_program(compiler, types,
                                 lambda b, x, w, c: epilogue(b, b.matmul(x, w), c))
    assert kernel.spec.lanes == 16 and kernel.in_place_result() == (0, False)
    for rows in (5, 33):
        x, w, c = (rng.standard_normal(shape).astype(np.float32)
                   for shape in ((rows, 24), (24, 12), (12,)))
        check(compiler, [TensorType("f32", ["N", 12]), types[2]], epilogue, [x @ w, c],
              plan=lambda h, c: plan(x, w, c))


@pytest.mark.parametrize("rows", [5, 40, 61])
def test_blocks_split_across_threads(compiler, parts, rows):
    """Each part of the rows starts its own blocks (its last one masked): the bits of
    one thread's."""
    types = [TensorType("f32", ["N", 10])]
    plan = in_lanes(compiler, types, softmax)
    x = logits(rows, 10)
    reference = with_threads(1, plan, x)
    for n in (2, 3, 7):
        parts.clear()
        results = with_threads(n, plan, x)
        assert parts == [min(n, rows)]
        assert all(g.tobytes() == w.tobytes() for g, w in zip(results, reference))


@pytest.mark.parametrize("types, body", [
    # rows too long for the vectorized rows code it replaces (`lane_width`)
    ([TensorType("f32", ["N", 33])], softmax),
    ([TensorType("f32", ["N", 16])], lambda b, x: b.sum(b.mul(x, x), axis=(1,))),
    # too long even for the scalar code, or too few rows, static
    ([TensorType("f32", [30, 65])], softmax),
    ([TensorType("f32", [7, 10])], softmax),
    # rows of one: the innermost dim spanned is kept (in columns)
    ([TensorType("f32", ["N", 1])], softmax),
    # a symbolic row length
    ([TensorType("f32", [64, "M"])], softmax),
    # code with no vector form: sin, an integer division's status byte
    ([TensorType("f32", ["N", 10])], lambda b, x: b.sum(b.sin(x), axis=(1,))),
    ([TensorType("i32", ["N", 10])], lambda b, x: b.sum(b.div(x, x), axis=(1,))),
])
def test_what_runs_a_row_at_a_time(compiler, types, body):
    _, kernel = fused_program(compiler, types, body, MIN_ELEMENTS)
    assert kernel.spec.lanes == 0
