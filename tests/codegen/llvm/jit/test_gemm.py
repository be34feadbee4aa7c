"""The generated float32 GEMM (`irflow.codegen.llvm.gemm`): every layout and edge
against the float64 product, to float32 rounding (the error of a K-term dot product
is at most about K units of roundoff of the sum of |a||b|); its checks; its split
across threads; and the matmuls of the llvm backend that run it (fused ops'
anchors, standalone matmuls)."""
import copy
import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import irflow
from irflow.codegen import compile_plan
from irflow.codegen.llvm.gemm import (MIN_ROWS, MIN_WORK, Epilogue, Gemm, GemmSpec,
                                      anchor_kernels, assembly)
from irflow.codegen.llvm.kernel import Instr
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import ShapeError
from irflow.ir import TensorType, function
from irflow.ir.registry import lookup
from tests.codegen.llvm.jit.test_fused import fused, tile_runs
from tests.codegen.llvm.jit.test_inplace import kernel_of

LAYOUTS = [(False, False), (True, False), (False, True), (True, True)]
EPS = 2.0 ** -24  # float32's unit roundoff
rng = np.random.default_rng(11)


@pytest.fixture(scope="module")
def gemms(compiler):
    return {layout: Gemm(*layout, compiler=compiler) for layout in LAYOUTS}


def operands(m, k, n, trans_a, trans_b, seed=0):
    """(a, b) as stored ([K, M] / [N, K] when transposed), and the matrices A, B."""
    r = np.random.default_rng(seed)
    a = r.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = r.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    return a, b, (a.T if trans_a else a), (b.T if trans_b else b)


def check_product(c, a, b):
    """`c` is A @ B to float32 rounding: within (K + 2) units of roundoff of
    |A| @ |B| of the float64 product (plus a float32 subnormal's worth)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = (a.shape[1] + 2) * EPS * (np.abs(a64) @ np.abs(b64)) + 1e-38
    assert c.dtype == np.float32 and c.shape == (a.shape[0], b.shape[1])
    assert (np.abs(c - a64 @ b64) <= bound).all()


@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 70), st.sampled_from(LAYOUTS),
       st.integers(0, 2 ** 16))
def test_products_of_every_small_shape_and_layout(gemms, m, k, n, layout, seed):
    a, b, A, B = operands(m, k, n, *layout, seed)
    check_product(gemms[layout](a, b), A, B)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("m, k, n", [(64, 256, 256), (300, 600, 47), (9, 513, 100),
                                     (257, 257, 33), (17, 3, 16), (40, 1100, 10),
                                     (1100, 9, 33), (33, 2049, 40)])
def test_products_across_k_and_m_blocks_and_edges(gemms, layout, m, k, n):
    """Several K blocks (of one depth, at most 256, 512 or 1024 by the layout: the
    later ones add into C; 2049 is 684 + 684 + 681), M blocks (128 or 1024 rows),
    edge tiles of rows and columns, narrow products."""
    a, b, A, B = operands(m, k, n, *layout)
    check_product(gemms[layout](a, b), A, B)


def test_empty_and_zero_depth_products(gemms):
    g = gemms[False, False]
    assert g(np.ones((0, 5), np.float32), np.ones((5, 3), np.float32)).shape == (0, 3)
    assert g(np.ones((4, 5), np.float32), np.ones((5, 0), np.float32)).shape == (4, 0)
    out = np.full((4, 3), 7.0, np.float32)
    assert (g(np.ones((4, 0), np.float32), np.ones((0, 3), np.float32), out=out) == 0).all()


def test_nan_and_inf_propagate_as_in_numpy(gemms):
    a, b, _, _ = operands(20, 40, 50, False, False)
    a[3, 7], a[5, 1], b[2, 9] = np.nan, np.inf, -np.inf
    c, expected = gemms[False, False](a, b), a.astype(np.float64) @ b
    assert np.array_equal(np.isnan(c), np.isnan(expected))
    assert np.array_equal(np.isinf(c), np.isinf(expected))


def test_a_given_buffer_is_written_and_returned(gemms):
    a, b, A, B = operands(33, 70, 47, True, False)
    out = np.empty((33, 47), np.float32)
    assert gemms[True, False](a, b, out=out) is out
    check_product(out, A, B)


def test_non_contiguous_operands_are_copied(gemms):
    a, b, A, B = operands(30, 40, 50, False, False)
    strided = np.zeros((30, 80), np.float32)
    strided[:, ::2] = a
    check_product(gemms[False, False](strided[:, ::2], b), A, B)


def test_calls_the_code_cannot_take_raise_shape_errors(gemms):
    g = gemms[False, False]
    a, b = np.ones((4, 5), np.float32), np.ones((5, 3), np.float32)
    for bad_a, bad_b in [(a.astype(np.float64), b), (a, b[:4]), (a[0], b), ([[1.0]], b)]:
        assert g.sizes(bad_a, bad_b) is None
        with pytest.raises(ShapeError):
            g(bad_a, bad_b)
    for out in [np.empty((4, 4), np.float32), np.empty((3, 4), np.float32).T,
                np.empty((4, 3), np.float64), np.broadcast_to(np.float32(0), (4, 3))]:
        assert g.sizes(a, b, out) is None
        with pytest.raises(ShapeError, match="output buffer"):
            g(a, b, out=out)
    square = np.ones((4, 4), np.float32)
    with pytest.raises(ShapeError, match="sharing no memory"):
        g(square, np.ones((4, 4), np.float32), out=square)


def test_split_across_threads_gives_the_same_bits(gemms):
    a, b, _, _ = operands(300, 200, 130, False, False)
    one = gemms[False, False](a, b)
    irflow.set_num_threads(2)
    try:
        two = gemms[False, False](a, b)
    finally:
        irflow.set_num_threads(1)
    assert np.array_equal(one, two)


def f32(*shape):
    return TensorType("f32", list(shape))


@pytest.mark.parametrize("transpose_x, transpose_y", LAYOUTS)
def test_a_fused_matmul_anchor_runs_the_gemm(compiler, transpose_x, transpose_y,
                                             monkeypatch):
    """``relu(x @ w + c)`` above the size thresholds: the generated GEMM computes
    it, the body applied by its tiles (in every layout), the result NumPy's to
    float32 rounding, given buffer or not."""
    m, k, n = 64, 256, 96
    assert m >= MIN_ROWS and m * k * n >= MIN_WORK

    def body(b, x, w, c):
        product = b.matmul(x, w, transpose_x=transpose_x, transpose_y=transpose_y)
        return b.relu(b.add(product, c))
    types = [f32(k, m) if transpose_x else f32(m, k), f32(n, k) if transpose_y else f32(k, n),
             f32(n)]
    kernel = kernel_of(compiler, body, types)
    assert kernel._fused is not None
    x, w, _, _ = operands(m, k, n, transpose_x, transpose_y)
    c = rng.standard_normal(n).astype(np.float32)
    args = [[x, w, c][i] for i in kernel.arguments]
    X, W = (x.T if transpose_x else x), (w.T if transpose_y else w)
    product = X.astype(np.float64) @ W
    bound = (k + 4) * EPS * (np.abs(X.astype(np.float64)) @ np.abs(W)) + 1e-38
    runs = tile_runs(monkeypatch)
    (result,) = kernel.evaluator()(list(args), None)
    buffer = np.empty((m, n), np.float32)
    (into,) = kernel.out_evaluator((True,))(list(args), None, [buffer])
    assert runs == [True, True] and into is buffer
    for r in (result, into):
        assert (np.abs(r - np.maximum(product + c, 0)) <= bound).all()


def test_only_float32_matmuls_of_matrices_get_the_gemm(compiler):
    def body(b, x, w):
        return b.relu(b.matmul(x, w))

    def anchor_of(types):
        _, (op,) = fused(function("f", types, body))
        inner = next(iter(op.regions[0].blocks[0].body_ops()))
        return anchor_kernels(inner, np.matmul, np.matmul, compiler)
    assert anchor_of([f32(64, 256), f32(256, 64)]) is not None
    assert anchor_of([f32("N", 32), f32(32, 16)]) is not None   # a call may be large
    assert anchor_of([f32(64, 32), f32(32, 16)]) is None        # every call is small
    assert anchor_of([f32(4, "K"), f32("K", 16)]) is None       # too few rows
    assert anchor_of([f32(2, 64, 256), f32(256, 64)]) is None   # batched
    assert anchor_of([TensorType("f64", [64, 256]), TensorType("f64", [256, 64])]) is None


@pytest.mark.parametrize("transpose_x, transpose_y", LAYOUTS)
def test_a_standalone_matmul_runs_the_gemm_in_a_plan(compiler, transpose_x, transpose_y):
    """A plan's unfused matmul (backend llvm) is the generated GEMM above the
    thresholds and NumPy's below: both NumPy's product to float32 rounding."""
    lowering = LLVMLowering(compiler, min_elements=0)
    for m, k, n in [(64, 256, 96), (4, 30, 20)]:
        types = [f32(k, "M") if transpose_x else f32("M", k),
                 f32(n, k) if transpose_y else f32(k, n)]
        fn = function("f", types, lambda b, x, w: b.matmul(
            x, w, transpose_x=transpose_x, transpose_y=transpose_y))
        (op,) = [o for o in fn.block.body_ops() if o.name == "matmul"]
        assert lowering.kernel(op) is not None
        x, w, X, W = operands(m, k, n, transpose_x, transpose_y)
        (result,) = compile_plan(fn, lowering)(x, w)
        check_product(result, X, W)


def test_a_fused_matmul_compiles_one_gemm(tmp_path):
    """``relu(x @ w + c)`` as a fused op in a plan: one GEMM module (its tiles apply
    the body), none for the anchor's region or a plain anchor (each takes 0.1-0.15 s
    to compile)."""
    from irflow.codegen.llvm.compiler import Compiler
    compiler = Compiler(cache_dir=tmp_path)

    def body(b, x, w, c):
        return b.relu(b.add(b.matmul(x, w), c))
    module, _ = fused(function("f", [f32(64, 256), f32(256, 96), f32(96)], body))
    x, w, _, _ = operands(64, 256, 96, False, False)
    c = rng.standard_normal(96).astype(np.float32)
    (result,) = compile_plan(module.main, LLVMLowering(compiler))(x, w, c)
    assert sum(isinstance(spec, GemmSpec) for spec in compiler._code) == 1
    np.testing.assert_allclose(result, np.maximum(x @ w + c, 0), rtol=1e-4, atol=1e-4)


def loops_of(asm: str) -> list[list[str]]:
    """The instructions of each basic block of `asm` that ends in a backward jump
    (a loop), as emitted for the host."""
    blocks, current, labels = [], None, []
    for line in asm.splitlines():
        if re.match(r"^\.LBB\S+:", line):
            labels.append(line.split(":")[0])
            current = []
            blocks.append((labels[-1], current))
        elif current is not None and line.startswith("\t") and not line.startswith("\t."):
            current.append(line.strip())
    return [ins for label, ins in blocks if ins and ins[-1].split()[-1] == label]


def test_the_tiles_keep_their_accumulators_in_registers():
    """Every tile loop of the widest tiles (8 x 32: 16 accumulators, 2 B vectors and a
    broadcast) has its FMAs and no vector register on the stack: no accumulator is
    spilled (a loop-invariant integer may be read from there: the count of the next
    panel's rows the loop prefetches, one compare per 64 FMAs)."""
    tile_loops = [ins for ins in loops_of(assembly(GemmSpec()))
                  if sum(i.startswith("vfmadd") for i in ins) >= 64]
    assert tile_loops
    for ins in tile_loops:
        assert not [i for i in ins if "%rsp" in i and "mm" in i]
        assert len([i for i in ins if "%rsp" in i]) <= 1


EPILOGUES = {  # name: (body over the product p and an operand e, e's shape for [M, N])
    "bias relu": (lambda b, p, e: b.relu(b.add(p, e)), lambda m, n: [n]),
    "residual": (lambda b, p, e: b.add(p, e), lambda m, n: [m, n]),
    "column tanh": (lambda b, p, e: b.tanh(b.mul(p, e)), lambda m, n: [m, 1]),
    "scalar": (lambda b, p, e: b.sub(p, e), lambda m, n: []),
    "row of one": (lambda b, p, e: b.sigmoid(b.add(p, e)), lambda m, n: [1, n]),
    "leaky relu": (lambda b, p, e: leaky_relu(b, b.add(p, e)), lambda m, n: [n]),
}


def leaky_relu(b, s):
    """A body with a comparison: a boolean value the select reads."""
    zero = b.constant(0.0, "float32")
    return b.select(b.gt(s, zero), s, b.mul(s, b.constant(0.01, "float32")))


def test_tiles_of_static_sizes_leave_the_body_no_code_of_its_own(compiler):
    """With static sizes the tiles take every call of arrays they take as they are,
    so the body compiles no kernel of its own; a call of other arrays (a read-only
    weight, a strided input) runs the anchor, then the NumPy body, with the NumPy
    evaluator's bits; a call the tiles take has those of the generated GEMM's
    product, then the body. A symbolic batch keeps the body's code, for the calls
    below the tiles' thresholds."""
    body, shape_of = EPILOGUES["bias relu"]
    k, n, m = 256, 40, 128  # 1.3M multiply-adds: above MIN_WORK
    static = kernel_of(compiler, lambda b, x, w, e: body(b, b.matmul(x, w), e),
                       [f32(m, k), f32(k, n), f32(*shape_of(m, n))])
    run = static.evaluator()
    assert static._fused is not None and static._variants == {}
    x, w, _, _ = operands(m, k, n, False, False, seed=1)
    e = rng.standard_normal(shape_of(m, n)).astype(np.float32)
    args = [[x, w, e][i] for i in static.arguments]
    numpy = lookup("fused").region_op.evaluator(static.op)
    strided = [np.asfortranarray(v) if v is x else v for v in args]
    np.testing.assert_array_equal(run(strided, None)[0], numpy(list(strided), None)[0])
    tiles = Gemm(False, False, compiler=compiler)(x, w)  # the tiles' sums, not the BLAS's
    np.testing.assert_array_equal(run(list(args), None)[0], np.maximum(tiles + e, 0))
    symbolic = kernel_of(compiler, lambda b, x, w, e: body(b, b.matmul(x, w), e),
                         [f32("M", k), f32(k, n), f32(*shape_of("M", n))])
    symbolic.evaluator()
    assert symbolic._fused is not None and symbolic._variants != {}


@pytest.mark.parametrize("epilogue", EPILOGUES)
@pytest.mark.parametrize("transpose_x", [False, True])
def test_an_elementwise_epilogue_runs_in_the_tiles(compiler, epilogue, transpose_x):
    """A one-result elementwise body over a float32 matmul runs in the GEMM's tiles
    (every kind of operand: a bias row, a residual, a column, a scalar), with the
    bits of the generated GEMM's product, then the body, given buffer or not, and at a symbolic batch
    of any size (small calls take the other path)."""
    body, shape_of = EPILOGUES[epilogue]
    k, n = 256, 40
    types = [f32(k, "M") if transpose_x else f32("M", k), f32(k, n),
             f32(*shape_of("M", n))]
    kernel = kernel_of(compiler, lambda b, x, w, e: body(
        b, b.matmul(x, w, transpose_x=transpose_x), e), types)
    assert kernel._fused is not None
    unfused = copy.copy(kernel)
    unfused._fused = None
    # the anchor by the same generated GEMM (the BLAS would sum in another order,
    # which one depends on the host's OpenBLAS kernel)
    unfused._anchor = unfused._anchor_into = anchor_kernels(
        lookup("fused").region_op.anchor_op(kernel.op), kernel._anchor, kernel._anchor_into,
        compiler)
    for m in (3, 200):
        x, w, _, _ = operands(m, k, n, transpose_x, False, seed=m)
        e = rng.standard_normal(shape_of(m, n)).astype(np.float32)
        args = [[x, w, e][i] for i in kernel.arguments]
        assert (kernel._fused(args[:2], args[2:], None) is None) == (m < MIN_ROWS)
        for into in [(), (True,)]:
            buffers = [[np.empty((m, n), np.float32)] for _ in range(2)] if into else [[], []]
            got = (kernel.out_evaluator(into)(list(args), None, buffers[0]) if into
                   else kernel.evaluator()(list(args), None))
            want = (unfused.out_evaluator(into)(list(args), None, buffers[1]) if into
                    else unfused.evaluator()(list(args), None))
            np.testing.assert_array_equal(got[0], want[0])
            if into:
                assert got[0] is buffers[0][0]


def test_an_epilogue_declines_operands_the_code_does_not_take(compiler):
    """A residual that is not C-contiguous, or a given buffer that is the residual's
    memory: the fused run declines (None), and the anchor-then-body path answers."""
    body, _ = EPILOGUES["residual"]
    m, k, n = 64, 256, 96
    kernel = kernel_of(compiler, lambda b, x, w, e: body(b, b.matmul(x, w), e),
                       [f32(m, k), f32(k, n), f32(m, n)])
    x, w, X, W = operands(m, k, n, False, False)
    residual = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float32))
    assert kernel._fused([x, w], [residual], None) is None
    (result,) = kernel.evaluator()([[x, w, residual][i] for i in kernel.arguments], None)
    check_product(result - residual, X, W)
    buffer = np.ascontiguousarray(residual)
    assert kernel._fused([x, w], [buffer], buffer) is None
    assert kernel._fused([x, w], [buffer], None) is not None


def test_a_gemm_with_an_epilogue_checks_its_operands(compiler):
    """`Gemm` with an `Epilogue` (``relu(c + bias)``) runs it, and refuses calls
    whose operands the code cannot take (missing, misshapen, another dtype, the
    output's memory) before any code runs."""
    relu_bias = Epilogue(("row",), (Instr("add", (0, 1), "f32"), Instr("relu", (2,), "f32")), 3)
    g = Gemm(compiler=compiler, epilogue=relu_bias)
    a, b, A, B = operands(20, 30, 40, False, False)
    bias = rng.standard_normal(40).astype(np.float32)
    got = g(a, b, operands=(bias,))
    want = np.maximum(A.astype(np.float64) @ B + bias, 0)
    assert (np.abs(got - want) <= (30 + 4) * EPS * (np.abs(A.astype(np.float64)) @ np.abs(B)
                                                    + np.abs(bias)) + 1e-38).all()
    out = np.empty((20, 40), np.float32)
    for bad in [(), (bias[:39],), (bias.astype(np.float64),), (out[0],)]:
        with pytest.raises(ShapeError, match="epilogue"):
            g(a, b, out=out, operands=bad)
    with pytest.raises(ShapeError, match="epilogue"):
        Gemm(compiler=compiler)(a, b, operands=(bias,))


# the converging loop's body: new = tanh(c + bias) stored over C, max(abs(new - h))
CONVERGING = Epilogue(("row", "full"),
                      (Instr("add", (0, 1), "f32"), Instr("tanh", (3,), "f32"),
                       Instr("sub", (4, 2), "f32"), Instr("abs", (5,), "f32")), 4, 6)
# a maximum of a value of any sign, C + e itself
RESIDUAL_MAX = Epilogue(("full",), (Instr("add", (0, 1), "f32"),), 2, 2)


@pytest.fixture(scope="module")
def maxima(compiler):
    """Gemms whose epilogue has a maximum: the converging body in every layout, the
    residual's in one."""
    made = {layout: Gemm(*layout, compiler=compiler, epilogue=CONVERGING)
            for layout in LAYOUTS}
    made["residual"] = Gemm(compiler=compiler, epilogue=RESIDUAL_MAX)
    return made


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def max_of(values):
    """NumPy's max (NaN if any value is NaN), as a float32 0-d array."""
    return np.asarray(np.max(values), np.float32)


def assert_same_float(got, want):
    """Equal as floats (a signed zero equal to the other), or both NaN."""
    assert got.dtype == np.float32 and got.shape == ()
    assert (np.isnan(got) and np.isnan(want)) or got == want, (got, want)


@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 70), st.sampled_from(LAYOUTS),
       st.integers(0, 2 ** 16), st.sampled_from([None, "first", "last", "inf"]))
def test_the_maximum_of_an_epilogue_value_is_numpy_s_max(maxima, m, k, n, layout, seed,
                                                          special):
    """The tiles' running maxima give NumPy's max of the values the code stored, in
    every layout and every shape up to 70 (edge tiles of rows and columns, narrow
    tiles, rows of a tile past M), NaN anywhere (an edge tile's last element too)
    giving NaN; and C is the body of the product."""
    a, b, A, B = operands(m, k, n, *layout, seed)
    r = np.random.default_rng(seed)
    bias = r.standard_normal(n).astype(np.float32)
    h = r.standard_normal((m, n)).astype(np.float32)
    if special is not None:
        h.flat[0 if special == "first" else -1] = np.inf if special == "inf" else np.nan
    c, top = maxima[layout](a, b, operands=(bias, h))
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    # tanh is 1-Lipschitz: the product's bound, and tanh's own ulp
    bound = (k + 2) * EPS * (np.abs(a64) @ np.abs(b64)) + 4 * EPS + 1e-38
    assert (np.abs(c - np.tanh(a64 @ b64 + bias)) <= bound).all()
    with np.errstate(invalid="ignore"):
        assert_same_float(top, max_of(np.abs(c - h)))
    assert np.isnan(top) == (special in ("first", "last"))


@pytest.mark.parametrize("epilogue", ["converging", "residual"])
def test_the_largest_value_or_a_nan_anywhere_is_the_maximum(maxima, epilogue):
    """At every element of a product of full and edge tiles (17 x 40: two tile rows
    and one of a single row, a panel of 32 columns and one of 8), the largest value,
    then a NaN, is what the maximum gives: every running maximum and every lane of
    their fold counts."""
    m, k, n = 17, 8, 40
    a, b, _, _ = operands(m, k, n, False, False)
    bias = rng.standard_normal(n).astype(np.float32)
    for at in range(m * n):
        for value in (1e3, np.nan):
            e = rng.standard_normal((m, n)).astype(np.float32)
            e.flat[at] = value
            if epilogue == "converging":
                c, top = maxima[False, False](a, b, operands=(bias, e))
                want = max_of(np.abs(c - e))
            else:
                c, top = maxima["residual"](a, b, operands=(e,))
                want = max_of(c)
            assert_same_float(top, want)
            assert np.isnan(top) == np.isnan(value) and (np.isnan(top) or top > 100)


@pytest.mark.parametrize("fill", ["normal", "-inf", "nan", "-0", "negative"])
def test_the_maximum_of_a_value_of_any_sign(maxima, fill):
    """A maximum of ``C + e`` (no abs: NumPy's maximum, not the magnitudes'
    integer compare): negative values, all -inf (the identity must not show), a NaN,
    signed zeros."""
    m, k, n = 37, 20, 45
    a, b, _, _ = operands(m, k, n, False, False)
    e = rng.standard_normal((m, n)).astype(np.float32)
    if fill == "-inf":
        e[:] = -np.inf
    elif fill == "nan":
        e[36, 44] = np.nan
    elif fill == "-0":
        a[:] = 0.0
        e[:] = -0.0
    elif fill == "negative":
        e -= 1000.0
    c, top = maxima["residual"](a, b, operands=(e,))
    assert_same_float(top, max_of(c))


def test_an_epilogue_with_a_maximum_stores_the_bits_of_one_without(compiler, maxima):
    """The maximum changes nothing in C: the bits of the same body's epilogue."""
    plain = Gemm(compiler=compiler, epilogue=dataclasses.replace(CONVERGING, maximum=None))
    a, b, _, _ = operands(100, 300, 70, False, False)
    bias, h = rng.standard_normal(70).astype(np.float32), normal(100, 70)
    c, _ = maxima[False, False](a, b, operands=(bias, h))
    assert c.tobytes() == plain(a, b, operands=(bias, h)).tobytes()


def test_a_gemm_with_a_maximum_checks_its_arrays(maxima):
    """An empty product has no maximum (the call is refused before any code runs);
    a buffer for the maximum that is another array's memory, or not one writable
    float32, is refused by `run` and `maximum_fits`."""
    g = maxima[False, False]
    bias, h = np.ones(3, np.float32), np.ones((0, 3), np.float32)
    with pytest.raises(ShapeError, match="not empty, for its maximum"):
        g(np.ones((0, 4), np.float32), np.ones((4, 3), np.float32), operands=(bias, h))
    a, b, _, _ = operands(8, 4, 3, False, False)
    h = normal(8, 3)
    sizes = g.sizes(a, b)
    assert g.run(a, b, None, sizes, (bias, h), h.reshape(-1)[5:6]) is None
    assert not g.maximum_fits(np.empty(1, np.float64))
    read_only = np.empty((), np.float32)
    read_only.flags.writeable = False
    assert not g.maximum_fits(read_only) and g.maximum_fits(np.empty((1, 1), np.float32))


@pytest.mark.parametrize("output, maximum", [(3, None), (2, 3), (2, -1)])
def test_an_epilogue_names_only_its_own_values(output, maximum):
    """C's element, one operand and one instruction are values 0 to 2: an output or
    a maximum beyond them is refused when the epilogue is made."""
    with pytest.raises(ValueError, match="not a float32 epilogue"):
        Epilogue(("row",), (Instr("add", (0, 1), "f32"),), output, maximum)


@pytest.mark.parametrize("output, maximum", [(2, None), (3, 2)])
def test_an_epilogue_stores_and_maximizes_only_float32_values(output, maximum):
    """A comparison (value 2) may feed a select (value 3), but it is not what the
    code stores into C, nor the value whose maximum it takes."""
    body = (Instr("gt", (0, 1), "bool"), Instr("select", (2, 0, 1), "f32"))
    Epilogue(("row",), body, 3)
    with pytest.raises(ValueError, match="not a float32 epilogue"):
        Epilogue(("row",), body, output, maximum)
