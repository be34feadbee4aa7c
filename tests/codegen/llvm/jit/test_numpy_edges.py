"""Where NumPy's loops, not the ops' mathematical definitions, decide the result:
fused programs compiled by the LLVM backend against the interpreter, bit for bit."""
import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.elementwise import Unsupported, pow_attrs
from irflow.ir import parse
from irflow.passes import DEFAULT_PIPELINE, PassManager
from tests.codegen.llvm.jit.test_fused_programs import Counting

EDGES = [-np.inf, np.inf, np.nan, -0.0, 0.0, -1.0, 1.0, 0.5, 2.0, -3.5, 1e-30, 3e38, -1e-40]


def compiled(compiler, text: str):
    """The plan of `text` after the default pipeline and fusion, and how many fused
    ops it runs as compiled code."""
    module = parse(text)
    PassManager([*DEFAULT_PIPELINE, "fuse"], verify_each=True).run(module)
    lowering = Counting(compiler)
    return compile_plan(module.main, lowering), lowering.fused


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep], want[keep])
    np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(want[keep]))


def edge_values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = np.concatenate([EDGES, rng.standard_normal(64) * 10.0 ** rng.integers(-8, 8, 64)])
    return x.astype({"f32": np.float32, "f64": np.float64}[dtype]).reshape(-1, 7)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("exponent", [-1.0, 0.0, 0.5, 1.0, 2.0])
def test_pow_of_a_constant_exponent_takes_numpys_shortcuts(compiler, dtype, exponent):
    """NumPy's power with an exponent of stride 0 is 1/x, 1, sqrt(x), x or x*x for
    these exponents: sqrt(-inf) is NaN and sqrt(-0.0) is -0.0 where libm's pow gives
    inf and 0.0."""
    text = f"""
func @f(%x: {dtype}[N,7], %y: {dtype}[N,7]) -> {dtype}[N,7] {{
  %c = const {{value={exponent}}} : {dtype}
  %0 = pow %x, %c : {dtype}[N,7]
  %1 = mul %0, %y : {dtype}[N,7]
  return %1
}}"""
    plan, fused = compiled(compiler, text)
    assert fused == 1
    x = edge_values(dtype)
    y = np.ones_like(x)
    same_bits(plan(x, y)[0], run(parse(text), x, y)[0])


@pytest.mark.parametrize("shape", [[], [1, 1]])
def test_pow_of_a_size_one_exponent_takes_numpys_shortcuts(compiler, shape):
    """An exponent operand of one element (and values computed from it) has stride 0
    in NumPy's loops too."""
    text = f"""
func @f(%x: f32[N,7], %e: f32{list(shape)}) -> f32[N,7] {{
  %c = const {{value=2.0}} : f32
  %0 = mul %e, %c : f32{list(shape)}
  %1 = pow %x, %0 : f32[N,7]
  %2 = pow %x, %e : f32[N,7]
  %3 = add %1, %2 : f32[N,7]
  return %3
}}"""
    plan, fused = compiled(compiler, text)
    assert fused == 1
    x = edge_values("f32")
    for value in (0.0, 0.5, 1.0):  # e and 2e both shortcuts: the results are exact
        e = np.full(shape, value, np.float32)
        same_bits(plan(x, e)[0], run(parse(text), x, e)[0])


def test_pow_of_an_exponent_broadcast_along_the_inner_axis_is_declined():
    """NumPy takes the shortcuts in some of its inner loops of such a call only (as its
    iterator buffers or not): no code gives its result."""
    assert pow_attrs((), (5, 7)) == (("scalar_exponent", True),)
    assert pow_attrs((7,), (5, 7)) == ()
    assert pow_attrs(("N", 7), ("N", 7)) == ()
    with pytest.raises(Unsupported, match="broadcast along the innermost axis"):
        pow_attrs((5, 1), (5, 7))


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("first", [-0.0, 0.0])
def test_float16_max_and_min_keep_the_first_of_equal_zeros(compiler, kind, axis, first):
    """NumPy's float16 reductions keep the first of -0.0 and 0.0 (its float32 ones
    the last), in rows (axis 1) and in columns (axis 0), rows long enough for the
    vector accumulators."""
    text = f"""
func @f(%x: f16[N,200], %y: f16[N,200]) -> f16[N,200] {{
  %0 = {kind} %x {{axis=[{axis}], keepdim=true}} : f16{"[1,200]" if axis == 0 else "[N,1]"}
  %1 = mul %0, %y : f16[N,200]
  return %1
}}"""
    plan, fused = compiled(compiler, text)
    assert fused == 1
    x = np.full((200, 200), -first, np.float16)
    x[np.arange(200), np.arange(200)] = first  # one of the other sign, everywhere in turn
    y = np.ones_like(x)
    same_bits(plan(x, y)[0], run(parse(text), x, y)[0])
