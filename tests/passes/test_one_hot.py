"""The one-hot pass on take/put_along_axis of every kind it rewrites: the same bits as
the gathers and scatters (NaN, inf and -0.0 among the values, negative indices), on
the interpreter, fused, and on the LLVM backend; an index out of bounds raises
IndexError, as the gather does, naming the op's line. The CHECK file one-hot.irf
shows the rewrite itself."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import irflow
from irflow.codegen import compile_plan, run
from irflow.codegen.llvm import Compiler
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.ir import Module, parse
from irflow.passes import PassManager

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0]


def random_array(rng, shape, np_dtype):
    """Normal floats, a third of them NaN, inf, -inf, -0.0 or 0.0; or small ints."""
    if np.dtype(np_dtype).kind != "f":
        return rng.integers(-50, 50, shape).astype(np_dtype)
    x = rng.standard_normal(shape)
    special = rng.random(shape) < 1 / 3
    x[special] = rng.choice(SPECIAL, int(special.sum()))
    return x.astype(np_dtype)


def type_text(dtype: str, shape) -> str:
    return f"{dtype}[{','.join(map(str, shape))}]"


@st.composite
def cases(draw):
    """(IR text of one take or put along an axis with one index per row, its inputs)."""
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    axis = draw(st.integers(0, rank - 1))
    n = shape[axis]
    # one index per row along the axis; the other dims x's or broadcast
    index_shape = [1 if d == axis or draw(st.booleans()) else s for d, s in enumerate(shape)]
    dtype = draw(st.sampled_from(["f32", "f64", "i64", "i32"]))
    index_dtype = draw(st.sampled_from(["i64", "i32"]))
    np_dtype = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}[dtype]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = random_array(rng, shape, np_dtype)
    index = rng.integers(-n, n, index_shape).astype(index_dtype.replace("i", "int"))
    kind = draw(st.sampled_from(["take", "add", "assign"]))
    t, ti = type_text(dtype, shape), type_text(index_dtype, index_shape)
    if kind == "take":
        out = type_text(dtype, [1 if d == axis else s for d, s in enumerate(shape)])
        text = (f"func @main(%x: {t}, %i: {ti}) -> {out} {{\n"
                f"  %r = take_along_axis %x, %i {{axis={axis}}} : {out}\n  return %r\n}}\n")
        return text, [x, index]
    values_shape = [1 if d == axis or draw(st.booleans()) else s for d, s in enumerate(shape)]
    values = random_array(rng, values_shape, np_dtype)
    tv = type_text(dtype, values_shape)
    text = (f"func @main(%x: {t}, %i: {ti}, %v: {tv}) -> {t} {{\n"
            f"  %r = put_along_axis %x, %i, %v {{axis={axis}, reduce=\"{kind}\"}} : {t}\n"
            f"  return %r\n}}\n")
    return text, [x, index, values]


@pytest.fixture(scope="module")
def compiler(tmp_path_factory):
    return Compiler(cache_dir=tmp_path_factory.mktemp("llvm-cache"))


def rewritten(text: str, pipeline) -> Module:
    module = parse(text)
    PassManager(pipeline, verify_each=True).run(module)
    assert not any(op.name in ("take_along_axis", "put_along_axis") for op in module.walk())
    return module


@given(cases())
def test_the_selections_give_the_gathers_bits(case):
    text, inputs = case
    with np.errstate(invalid="ignore"):  # inf + -inf scattered
        (want,) = run(parse(text), *inputs)
    for pipeline in (["one-hot"], ["one-hot", "fuse"]):
        (got,) = run(rewritten(text, pipeline), *inputs)
        np.testing.assert_array_equal(got, want, strict=True)
        assert (np.signbit(got) == np.signbit(want)).all() if got.dtype.kind == "f" else True


@given(cases())
def test_the_llvm_backend_gives_the_gathers_bits(compiler, case):
    text, inputs = case
    with np.errstate(invalid="ignore"):
        (want,) = run(parse(text), *inputs)
    module = rewritten(text, ["one-hot", "fuse"])
    (got,) = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(*inputs)
    np.testing.assert_array_equal(got, want, strict=True)
    if got.dtype.kind == "f":
        assert (np.signbit(got) == np.signbit(want)).all()


@pytest.mark.parametrize("label", [10, -11])
def test_a_label_out_of_bounds_raises_index_error_naming_the_line(label):
    def loss(logits, labels):  # (cross_entropy checks its labels itself, -1 included)
        return irflow.take_along_axis(logits, labels, 1)
    compiled = irflow.compile(loss)
    logits = irflow.randn([4, 10])
    fine = irflow.to_tensor(np.array([[1], [-1], [9], [0]]))
    np.testing.assert_allclose(compiled(logits, fine).numpy(), loss(logits, fine).numpy(),
                               rtol=1e-6)
    wrong = irflow.to_tensor(np.array([[1], [2], [label], [3]]))
    with pytest.raises(IndexError, match=r"test_one_hot.py:\d+: take_along_axis: an index is "
                                         r"out of bounds for axis 1 with size 10"):
        compiled(logits, wrong)
    with pytest.raises(IndexError):  # as eager code raises
        loss(logits, wrong)
