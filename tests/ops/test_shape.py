"""Tests of the shape and indexing ops (irflow/ops/shape.py): type rules with static
and symbolic dims, canonical attributes, kernels against NumPy references, and VJPs
against finite differences."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irflow.codegen import run
from irflow.errors import DimMismatch, ShapeError
from irflow.ir import Module, TensorType, dtypes, function, lookup, parse, verify
from irflow.ir.printer import print_module
from tests.support.opcheck import apply_op, check_op_vjp, types_of, vjp_function

rng = np.random.default_rng(0)


def T(spec: str) -> TensorType:
    """'f32[N,4]' -> TensorType; 'i64' -> a scalar."""
    dtype, _, dims = spec.partition("[")
    shape = [int(d) if d.isdigit() else d for d in dims.rstrip("]").split(",") if d]
    return TensorType(dtype, shape)


def canon(name, *types, **attrs) -> dict:
    return lookup(name).complete_attrs(attrs, types)


def infer(name, *types, **attrs) -> str:
    """The result type of op `name`, as text ('f32[N,16]')."""
    opdef = lookup(name)
    out = opdef.result_types(types, opdef.complete_attrs(attrs, types))
    return ", ".join(str(t) for t in out)


def bad(name, *types, match, **attrs):
    with pytest.raises(ShapeError, match=match):
        infer(name, *types, **attrs)


def run_symbolic(name, arg_types, arrays, **attrs):
    """Build a one-op function over possibly symbolic `arg_types`, check that it
    verifies and round-trips through the text form, and interpret it on `arrays`."""
    fn = function(name, arg_types, lambda b, *args: b.create(name, args, attrs).results)
    module = Module([fn])
    verify(module)
    text = print_module(module)
    assert print_module(parse(text)) == text
    return run(fn, *arrays)


def f64(*shape):
    return rng.standard_normal(shape)


def symbolic_vjp_matches(name, arg_types, arrays, **attrs):
    """The VJP rule builds and verifies over the symbolic `arg_types` (vjp_function
    checks each cotangent's type) and computes what it computes on static types."""
    cts = [rng.standard_normal(o.shape) for o in apply_op(name, arrays, **attrs)]
    symbolic = run(vjp_function(name, arg_types, attrs), *arrays, *cts)
    static = run(vjp_function(name, types_of(arrays), attrs), *arrays, *cts)
    for got, want in zip(symbolic, static):
        np.testing.assert_allclose(got, want)


# ---------------------------------------------------------------- reshape

@pytest.mark.parametrize("src, shape, want", [
    ("f32[2,3,4]", (6, 4), "f32[6,4]"),
    ("f32[2,3,4]", (-1,), "f32[24]"),
    ("f32[2,3,4]", (0, -1), "f32[2,12]"),
    ("f32[2,3,4]", (4, 0, 2), "f32[4,3,2]"),
    ("f32[N,4,4]", (-1, 16), "f32[N,16]"),
    ("f32[N,4,4]", (-1,), "f32[N*16]"),
    ("f32[N,4,4]", (0, 2, -1), "f32[N,2,8]"),
    ("f32[N*16]", ("N", 4, -1), "f32[N,4,4]"),
    ("f32[N,M,3]", (-1, 3), "f32[M*N,3]"),
    ("f32[N,M]", ("M", "N"), "f32[M,N]"),
    ("f32[N,3]", (3, "N"), "f32[3,N]"),
    ("f32", (1, 1), "f32[1,1]"),
    ("f32[1,1]", (), "f32"),
    ("f32[2,0]", (-1,), "f32[0]"),
    ("f32[3,0]", (0, 0), "f32[3,0]"),
    ("f32[2,0]", (0, 5), "f32[0,5]"),
    ("i64[6]", 6, "i64[6]"),
])
def test_reshape_type(src, shape, want):
    assert infer("reshape", T(src), shape=shape) == want


@st.composite
def reshape_cases(draw):
    """A shape and a target made by merging runs of its dims, then writing one
    target dim as -1 and some as 0 (copy) where that is what they stand for.
    (Empty dims, where a 0 may also be literal, are tested by test_reshape_type.)"""
    shape = draw(st.lists(st.integers(1, 4), max_size=4))
    cuts = sorted(draw(st.sets(st.integers(1, max(len(shape) - 1, 1)))))
    groups = [shape[a:b] for a, b in zip([0] + cuts, cuts + [len(shape)]) if b > a]
    target = [int(np.prod(g)) for g in groups] or draw(st.sampled_from([[], [1]]))
    for i, d in enumerate(target):
        if i < len(shape) and d == shape[i] and draw(st.booleans()):
            target[i] = 0
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return tuple(shape), tuple(target)


@given(reshape_cases())
def test_reshape_matches_numpy(case):
    shape, target = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    want = x.reshape([shape[i] if d == 0 else d for i, d in enumerate(target)])
    (y,) = apply_op("reshape", [x], shape=target)
    np.testing.assert_array_equal(y, want)
    t = TensorType("f32", shape)
    attrs = canon("reshape", t, shape=target)
    assert attrs == {"shape": want.shape}
    assert canon("reshape", t, **attrs) == attrs


def test_reshape_canonical_shape_is_resolved_and_idempotent():
    x = T("f32[N,4,4]")
    attrs = canon("reshape", x, shape=[0, -1])
    assert attrs == {"shape": ("N", 16)}
    assert canon("reshape", x, **attrs) == attrs
    empty = T("f32[2,0]")
    attrs = canon("reshape", empty, shape=[-1])
    assert attrs == {"shape": (0,)}
    assert canon("reshape", empty, **attrs) == attrs


@pytest.mark.parametrize("src, shape, match", [
    ("f32[2,3]", (4, 2), r"cannot reshape \[2, 3\] \(6 elements\) to \[4, 2\] \(8 elements\)"),
    ("f32[2,3]", (4, -1), r"the -1 would be 6 / 4"),
    ("f32[N,3]", (2, -1), r"the -1 would be N\*3 / 2"),
    ("f32[N,3]", ("M", -1), r"the -1 would be N\*3 / M"),
    ("f32[N,3]", (2, "N"), r"\(N\*3 elements\) to \[2, N\] \(N\*2 elements\)"),
    ("f32[2,3]", (-1, -1), r"more than one -1"),
    ("f32[6]", (2, 0), r"0 \(copy the input dim\) at position 1.*rank 1"),
    ("f32[6]", (-2, -3), r"expected dims that are non-negative ints, -1 or symbol names"),
    ("f32[6]", ("2N",), r"malformed symbolic dim"),
])
def test_reshape_errors(src, shape, match):
    bad("reshape", T(src), shape=shape, match=match)


def test_reshape_error_names_the_op_through_the_builder():
    with pytest.raises(ShapeError, match=r"^reshape: cannot reshape \[2, 3\]"):
        function("f", [T("f32[2,3]")], lambda b, x: b.reshape(x, shape=(5,)))


def test_reshape_kernel():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = apply_op("reshape", [x], shape=(0, -1))
    np.testing.assert_array_equal(y, np.arange(24, dtype=np.float32).reshape(2, 12))


def test_reshape_symbolic_run():
    x = np.arange(48, dtype=np.float32).reshape(3, 4, 4)
    (y,) = run_symbolic("reshape", [T("f32[N,4,4]")], [x], shape=(-1,))
    np.testing.assert_array_equal(y, x.ravel())
    (y,) = run_symbolic("reshape", [T("f32[N,16]")], [x.reshape(3, 16)], shape=("N", 2, -1))
    np.testing.assert_array_equal(y, x.reshape(3, 2, 8))


@pytest.mark.parametrize("shape, new", [((2, 3, 4), (0, -1)), ((6,), (3, 2)), ((), (1,)),
                                        ((2, 1, 3), (3, 2))])
def test_reshape_vjp(shape, new):
    check_op_vjp("reshape", [f64(*shape)], {"shape": new})


# ---------------------------------------------------------------- broadcast_to

@pytest.mark.parametrize("src, shape, want", [
    ("f32[3]", (2, 3), "f32[2,3]"),
    ("f32[3,1]", (3, 4), "f32[3,4]"),
    ("f32", (2, 2), "f32[2,2]"),
    ("f32[1,4]", ("N", 4), "f32[N,4]"),
    ("f32[N,1]", ("N", 5), "f32[N,5]"),
    ("f32[N,1]", (2, -1, 3), "f32[2,N,3]"),
    ("i32[2,1]", (-1, 0), "i32[2,0]"),
])
def test_broadcast_to_type(src, shape, want):
    assert infer("broadcast_to", T(src), shape=shape) == want


@pytest.mark.parametrize("src, shape, match", [
    ("f32[3]", (2, 4),
     r"cannot broadcast f32\[3\] to \[2, 4\]: dim 3 at axis 0 is neither 1 nor 4"),
    ("f32[N]", (5,), r"dim N at axis 0 is neither 1 nor 5"),
    ("f32[N]", ("M",), r"dim N at axis 0 is neither 1 nor M"),
    ("f32[3]", (1,), r"dim 3 at axis 0 is neither 1 nor 1"),
    ("f32[2,3]", (3,), r"lower-rank shape \[3\]"),
    ("f32[3]", (-1, 3), r"-1 \(keep x's dim\) at position 0"),
])
def test_broadcast_to_errors(src, shape, match):
    bad("broadcast_to", T(src), shape=shape, match=match)


def test_broadcast_to_kernel_and_symbolic_run():
    x = np.array([[1.0], [2.0]], dtype=np.float32)
    (y,) = apply_op("broadcast_to", [x], shape=(3, 2, 4))
    np.testing.assert_array_equal(y, np.tile(x[None], (3, 1, 4)))
    (y,) = run_symbolic("broadcast_to", [T("f32[N,1]")], [x], shape=(3, -1, 5))
    np.testing.assert_array_equal(y, np.tile(x, (3, 1, 5)))


@pytest.mark.parametrize("shape, to", [((3,), (2, 3)), ((3, 1), (2, 3, 4)), ((), (2, 2)),
                                       ((1, 1), (1, 5)), ((2, 3), (2, 3))])
def test_broadcast_to_vjp(shape, to):
    check_op_vjp("broadcast_to", [f64(*shape)], {"shape": to})


def test_broadcast_to_symbolic_vjp():
    symbolic_vjp_matches("broadcast_to", [T("f64[N,1]")], [f64(3, 1)], shape=(2, -1, 4))


# ---------------------------------------------------------------- transpose

@pytest.mark.parametrize("src, perm, want", [
    ("f32[2,3,4]", (2, 0, 1), "f32[4,2,3]"),
    ("f32[N,3,M]", (-1, 0, 1), "f32[M,N,3]"),
    ("f32", (), "f32"),
])
def test_transpose_type(src, perm, want):
    assert infer("transpose", T(src), perm=perm) == want


def test_transpose_canonical_perm():
    assert canon("transpose", T("f32[2,3,4]"), perm=[-1, 0, -2]) == {"perm": (2, 0, 1)}


@pytest.mark.parametrize("perm, match", [
    ((0, 1), r"perm \[0, 1\] is not a permutation of the 3 axes of f32\[2,3,4\]"),
    ((0, 0, 1), r"perm \[0, 0, 1\] is not a permutation"),
    ((0, 1, 3), r"perm entry 3 is out of range for a rank-3 operand"),
])
def test_transpose_errors(perm, match):
    bad("transpose", T("f32[2,3,4]"), perm=perm, match=match)


def test_transpose_kernel_symbolic_and_vjp():
    x = f64(3, 2, 4)
    (y,) = run_symbolic("transpose", [T("f64[N,2,4]")], [x], perm=(1, 2, 0))
    np.testing.assert_array_equal(y, np.einsum("abc->bca", x))
    check_op_vjp("transpose", [x], {"perm": (1, 2, 0)})
    check_op_vjp("transpose", [f64(2, 3, 4, 5)], {"perm": (3, 1, 0, 2)})


# ---------------------------------------------------------------- unsqueeze, squeeze

@pytest.mark.parametrize("src, axis, want", [
    ("f32[N,4]", 0, "f32[1,N,4]"),
    ("f32[N,4]", -1, "f32[N,4,1]"),
    ("f32[N,4]", (0, 3), "f32[1,N,4,1]"),
    ("f32[N,4]", (1, 2), "f32[N,1,1,4]"),
    ("f32[N,4]", (-1, 0), "f32[1,N,4,1]"),
    ("f32", (0, 1), "f32[1,1]"),
])
def test_unsqueeze_type(src, axis, want):
    assert infer("unsqueeze", T(src), axis=axis) == want


def test_unsqueeze_canonical_axis():
    assert canon("unsqueeze", T("f32[2,3]"), axis=[-1, 0]) == {"axis": (0, 3)}
    assert canon("unsqueeze", T("f32[2,3]"), axis=1) == {"axis": (1,)}


@pytest.mark.parametrize("axis, match", [
    (3, r"axis 3 is out of range: inserting 1 dim\(s\) into f32\[2,3\] gives rank 3"),
    ((0, -5), r"axis -5 is out of range"),
    ((1, -3), r"axis \[1, -3\] names a result position twice"),
])
def test_unsqueeze_errors(axis, match):
    bad("unsqueeze", T("f32[2,3]"), axis=axis, match=match)


@pytest.mark.parametrize("src, axis, want", [
    ("f32[1,N,1,3]", None, "f32[N,3]"),
    ("f32[1,N,1,3]", (0, 2), "f32[N,3]"),
    ("f32[1,N,1,3]", -2, "f32[1,N,3]"),
    ("f32[1,N,1,3]", 3, "f32[1,N,1,3]"),  # not 1: left alone, as in Paddle
    ("f32[N]", None, "f32[N]"),  # a symbolic dim is never squeezed implicitly
    ("f32[1]", None, "f32"),
])
def test_squeeze_type(src, axis, want):
    assert infer("squeeze", T(src), axis=axis) == want


def test_squeeze_canonical_axis_lists_the_removed_dims():
    x = T("f32[1,N,1,3]")
    assert canon("squeeze", x) == {"axis": (0, 2)}
    assert canon("squeeze", x, axis=[3, -4]) == {"axis": (0,)}
    assert canon("squeeze", x, axis=(0, 2)) == {"axis": (0, 2)}


@pytest.mark.parametrize("axis, match", [
    (1, r"cannot squeeze axis 1 of f32\[1,N,1,3\]: its size N is not known to be 1"),
    (4, r"axis 4 is out of range for a rank-4 operand"),
])
def test_squeeze_errors(axis, match):
    bad("squeeze", T("f32[1,N,1,3]"), axis=axis, match=match)


def test_unsqueeze_squeeze_kernels_symbolic():
    x = f64(3, 4)
    (y,) = run_symbolic("unsqueeze", [T("f64[N,4]")], [x], axis=(0, -1))
    np.testing.assert_array_equal(y, x[None, :, :, None])
    (z,) = run_symbolic("squeeze", [T("f64[1,N,1,4]")], [y.reshape(1, 3, 1, 4)])
    np.testing.assert_array_equal(z, x)
    # N is 1 at run time, but the type says N, so it stays
    (z,) = run_symbolic("squeeze", [T("f64[N,1]")], [np.ones((1, 1))])
    assert z.shape == (1,)


def test_unsqueeze_squeeze_vjps():
    check_op_vjp("unsqueeze", [f64(2, 3)], {"axis": (0, 2)})
    check_op_vjp("squeeze", [f64(1, 3, 1)])
    check_op_vjp("squeeze", [f64(1, 3, 1)], {"axis": 2})
    symbolic_vjp_matches("unsqueeze", [T("f64[N,3]")], [f64(2, 3)], axis=1)
    symbolic_vjp_matches("squeeze", [T("f64[N,1]")], [f64(2, 1)])


# ---------------------------------------------------------------- concat, stack

def test_concat_type():
    assert infer("concat", T("f32[2,3]"), T("f32[4,3]")) == "f32[6,3]"
    assert infer("concat", T("f32[N,2]"), T("f32[N,3]"), T("f32[N,1]"), axis=-1) == "f32[N,6]"
    assert infer("concat", T("f32[N,2]"), axis=0) == "f32[N,2]"
    assert infer("concat", T("f32[N,2]"), T("f32[M,2]"), T("f32[3,2]")) == "f32[M+N+3,2]"
    assert infer("concat", T("f32[N,2]"), T("f32[N,2]")) == "f32[N*2,2]"
    assert canon("concat", T("f32[N,2]"), T("f32[N,3]"), axis=-1) == {"axis": 1}


def test_a_symbolic_dim_against_a_static_one_is_a_dim_mismatch():
    with pytest.raises(DimMismatch, match=r"operand 1 \(f32\[N,S1\]\) does not match") as e:
        infer("concat", T("f32[N,4]"), T("f32[N,S1]"))
    assert (e.value.dim, e.value.size) == ("S1", 4)
    bad("concat", T("f32[N,4]"), T("f32[N,M]"), match="does not match")  # not a DimMismatch


@pytest.mark.parametrize("types, axis, match", [
    (("f32[2,3]", "f32[2,4]"), 0, r"operand 1 \(f32\[2,4\]\) does not match operand 0 "
                                  r"\(f32\[2,3\]\) outside axis 0"),
    (("f32[2,3]", "f32[2,3,1]"), 0, r"operand 1 \(f32\[2,3,1\]\) does not match"),
    (("f32[2,3]", "f64[2,3]"), 0, r"operand dtypes differ"),
    (("f32", "f32"), 0, r"axis 0 is out of range for a rank-0 result"),
    (("f32[2]",), 1, r"axis 1 is out of range for a rank-1 result"),
])
def test_concat_errors(types, axis, match):
    bad("concat", *map(T, types), axis=axis, match=match)


def test_concat_takes_at_least_one_operand():
    with pytest.raises(ShapeError, match=r"concat takes at least 1 operand\(s\), got 0"):
        function("f", [], lambda b: b.concat())


def test_concat_kernel_symbolic_and_vjps():
    xs = [f64(3, 2), f64(3, 1), f64(3, 4)]
    (y,) = run_symbolic("concat", [T("f64[N,2]"), T("f64[N,1]"), T("f64[N,4]")], xs, axis=1)
    np.testing.assert_array_equal(y, np.hstack(xs))
    check_op_vjp("concat", xs, {"axis": -1})
    check_op_vjp("concat", [f64(2, 3), f64(1, 3)])
    check_op_vjp("concat", [f64(2, 3)], {"axis": 1})
    symbolic_vjp_matches("concat", [T("f64[N,2]"), T("f64[N,1]")], xs[:2], axis=1)
    symbolic_vjp_matches("concat", [T("f64[N,2]")], xs[:1], axis=0)


def test_stack_type_and_errors():
    assert infer("stack", T("f32[N,3]"), T("f32[N,3]")) == "f32[2,N,3]"
    assert infer("stack", T("f32[N,3]"), T("f32[N,3]"), axis=-1) == "f32[N,3,2]"
    assert infer("stack", T("f32"), T("f32"), T("f32")) == "f32[3]"
    assert canon("stack", T("f32[N,3]"), axis=-1) == {"axis": 2}
    bad("stack", T("f32[2,3]"), T("f32[3,2]"),
        match=r"operand 1 \(f32\[3,2\]\) differs from operand 0 \(f32\[2,3\]\)")
    bad("stack", T("f32[2]"), axis=2, match=r"axis 2 is out of range for a rank-2 result")


def test_stack_kernel_symbolic_and_vjps():
    xs = [f64(3, 2) for _ in range(3)]
    (y,) = run_symbolic("stack", [T("f64[N,2]")] * 3, xs, axis=1)
    np.testing.assert_array_equal(y, np.stack(xs, axis=1))
    check_op_vjp("stack", xs, {"axis": 1})
    check_op_vjp("stack", xs[:2], {"axis": -1})
    check_op_vjp("stack", [f64()], {"axis": 0})
    symbolic_vjp_matches("stack", [T("f64[N,2]")] * 2, xs[:2], axis=1)


# ---------------------------------------------------------------- slice, set_slice

def python_slices(rank, axes, starts, stops, steps):
    index = [slice(None)] * rank
    for axis, start, stop, step in zip(axes, starts, stops, steps):
        index[axis] = slice(start, stop, step)
    return tuple(index)


bound = st.none() | st.integers(-7, 7)


@st.composite
def slice_cases(draw):
    shape = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape),
                         unique_by=lambda a: a % len(shape)))
    starts = [draw(bound) for _ in axes]
    stops = [draw(bound) for _ in axes]
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2, -3])) for _ in axes]
    return shape, tuple(axes), tuple(starts), tuple(stops), tuple(steps)


@given(slice_cases())
def test_slice_matches_python_slicing(case):
    shape, axes, starts, stops, steps = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    attrs = dict(axes=axes, starts=starts, stops=stops, steps=steps)
    (y,) = apply_op("slice", [x], **attrs)
    np.testing.assert_array_equal(y, x[python_slices(x.ndim, axes, starts, stops, steps)])
    canonical = canon("slice", T(f"i64[{','.join(map(str, shape))}]"), **attrs)
    assert canon("slice", T(f"i64[{','.join(map(str, shape))}]"), **canonical) == canonical
    assert all(s >= 0 and (e is None or e >= 0)
               for s, e in zip(canonical["starts"], canonical["stops"]))


@pytest.mark.parametrize("attrs, want", [
    (dict(axes=1, starts=1, stops=3), dict(axes=(1,), starts=(1,), stops=(3,), steps=(1,))),
    (dict(axes=(0,), starts=(None,), stops=(None,), steps=(-1,)),
     dict(axes=(0,), starts=(4,), stops=(None,), steps=(-1,))),
    (dict(axes=(0,), starts=(-1,), stops=(-10,), steps=(-2,)),
     dict(axes=(0,), starts=(4,), stops=(None,), steps=(-2,))),
    (dict(axes=(0,), starts=(3,), stops=(0,), steps=(-2,)),
     dict(axes=(0,), starts=(3,), stops=(0,), steps=(-2,))),
    (dict(axes=(0,), starts=(0,), stops=(100,), steps=(2,)),
     dict(axes=(0,), starts=(0,), stops=(5,), steps=(2,))),
    (dict(axes=(0,), starts=(2,), stops=(0,), steps=(1,)),  # empty
     dict(axes=(0,), starts=(0,), stops=(0,), steps=(1,))),
    (dict(axes=(0,), starts=(3,), stops=(2,), steps=(-5,)),  # one element
     dict(axes=(0,), starts=(3,), stops=(4,), steps=(1,))),
    (dict(axes=(-1, 0), starts=(0, 0), stops=(None, 2**31 - 1)),  # both whole: dropped
     dict(axes=(), starts=(), stops=(), steps=())),
])
def test_slice_canonical_form(attrs, want):
    assert canon("slice", T("f32[5,3]"), **attrs) == want


@pytest.mark.parametrize("src, attrs, want", [
    ("f32[N,4]", dict(axes=(0, 1), starts=(0, 0), stops=(None, 1)), "f32[N,1]"),
    ("f32[N,4]", dict(axes=(1,), starts=(-1,), stops=(None,), steps=(-2,)), "f32[N,2]"),
    ("f32[N,4]", dict(axes=(0,), starts=(0,), stops=("N",)), "f32[N,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(None,), stops=(None,), steps=(-1,)), "f32[N,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(-1,), stops=(-2**31 + 1,), steps=(-1,)), "f32[N,4]"),
    ("f32[5,3]", dict(axes=(0,), starts=(1,), stops=(-1,), steps=(2,)), "f32[2,3]"),
    ("f32[5,3]", dict(axes=(0,), starts=(2,), stops=(0,)), "f32[0,3]"),
    ("f32[N,4]", dict(axes=(0,), starts=(1,), stops=(None,)), "f32[N-1,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(0,), stops=(1,)), "f32[1,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(-1,), stops=(None,)), "f32[1,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(1,), stops=(-1,)), "f32[N-2,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(-3,), stops=(-1,)), "f32[2,4]"),
    ("f32[N,4]", dict(axes=(0,), starts=(2,), stops=(1,)), "f32[0,4]"),
    ("f32[M+N,4]", dict(axes=(0,), starts=("N",), stops=(None,)), "f32[M,4]"),
    ("f32[M+N,4]", dict(axes=(0,), starts=(0,), stops=("N",)), "f32[N,4]"),
])
def test_slice_type(src, attrs, want):
    assert infer("slice", T(src), **attrs) == want


@pytest.mark.parametrize("attrs, match", [
    (dict(axes=(0,), starts=(None,), stops=(None,), steps=(2,)),
     r"axis 0 has the symbolic size N: a slice of it with step 2 has a size that is not a "
     r"polynomial of N"),
    (dict(axes=(0,), starts=(0,), stops=(-1,), steps=(-1,)), r"symbolic size N"),
    (dict(axes=(1,), starts=(0,), stops=("N",)), r"axis 1 has the static size 4, so its "
                                                 r"bounds must be ints, got start 0, stop N"),
    (dict(axes=(1,), starts=(0,), stops=(2,), steps=(0,)), r"the step for axis 1 is 0"),
    (dict(axes=(1, -1), starts=(0, 0), stops=(2, 2)), r"axes \[1, -1\] name an axis twice"),
    (dict(axes=(2,), starts=(0,), stops=(2,)), r"axis 2 is out of range for a rank-2 operand"),
    (dict(axes=(0, 1), starts=(0,), stops=(2, 2)),
     r"one entry per sliced axis, got 2, 1, 2 and 2"),
    (dict(axes=(1,), starts=(0.5,), stops=(2,)), r"starts must hold ints or None"),
])
def test_slice_errors(attrs, match):
    bad("slice", T("f32[N,4]"), **attrs, match=match)


def test_slice_symbolic_run():
    x = f64(3, 4)
    (y,) = run_symbolic("slice", [T("f64[N,4]")], [x], axes=(0, 1), starts=(None, 0),
                        stops=(None, 1), steps=(-1, 1))
    np.testing.assert_array_equal(y, x[::-1, 0:1])
    for start, stop in ((1, None), (0, 1), (-1, None), (1, -1), ("N-2", None)):
        (y,) = run_symbolic("slice", [T("f64[N,4]")], [x], axes=(0,), starts=(start,),
                            stops=(stop,))
        np.testing.assert_array_equal(y, x[{"N-2": 1}.get(start, start):stop])


def test_symbolic_slice_bounds_come_from_other_dims():
    x, y = f64(2, 3), f64(4, 3)
    fn = function("f", [T("f64[M+N,3]"), T("f64[M,3]")],
                  lambda b, xy, x: b.slice(xy, axes=(0,), starts=("M",), stops=(None,)))
    assert str(fn.result_types[0]) == "f64[N,3]"
    (z,) = run(parse(print_module(Module([fn]))).main, np.vstack([x, y]), x)
    np.testing.assert_array_equal(z, y)


def test_a_symbolic_bound_must_be_a_position():
    bad("slice", T("f32[M+N,4]"), axes=(0,), starts=("M-N",), stops=(None,),
        match=r"the bound M-N of axis 0 \(size M\+N\) may be negative")


@pytest.mark.parametrize("start, stop", [(5, None), (0, 5), (-5, None), (2, -3)])
def test_a_slice_outside_a_symbolic_axis_fails_when_it_runs(start, stop):
    with pytest.raises(ShapeError, match=rf"the slice {start}:{stop or ''} of axis 0 reaches "
                                         r"outside the axis, which has 4 elements"):
        run_symbolic("slice", [T("f64[N]")], [f64(4)], axes=(0,), starts=(start,),
                     stops=(stop,))


@pytest.mark.parametrize("shape, attrs", [
    ((5, 3), dict(axes=(0,), starts=(1,), stops=(4,))),
    ((5, 3), dict(axes=(0, 1), starts=(None, 2), stops=(None, None), steps=(-2, -1))),
    ((6,), dict(axes=(0,), starts=(-1,), stops=(None,), steps=(-3,))),
    ((4, 5), dict(axes=(1,), starts=(0,), stops=(5,), steps=(2,))),
    ((4, 2), dict(axes=(0,), starts=(3,), stops=(1,))),  # empty
])
def test_slice_vjp(shape, attrs):
    check_op_vjp("slice", [f64(*shape)], attrs)


def test_slice_symbolic_vjp():
    symbolic_vjp_matches("slice", [T("f64[N,4]")], [f64(3, 4)], axes=(0, 1),
                         starts=(None, 3), stops=(None, 0), steps=(-1, -2))
    symbolic_vjp_matches("slice", [T("f64[N,S1]")], [f64(3, 4)], axes=(0, 1),
                         starts=(1, 0), stops=(None, -1))


def test_set_slice_kernel_does_not_mutate_x():
    x = f64(5, 4)
    before = x.copy()
    update = f64(2, 4)
    (y,) = apply_op("set_slice", [x, update], axes=(0,), starts=(-1,), stops=(None,),
                    steps=(-3,))
    want = before.copy()
    want[4], want[1] = update[0], update[1]
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(x, before)


def test_set_slice_type_and_errors():
    x = T("f32[N,4]")
    assert infer("set_slice", x, T("f32[N,2]"), axes=(1,), starts=(0,), stops=(4,),
                 steps=(2,)) == "f32[N,4]"
    bad("set_slice", x, T("f32[N,3]"), axes=(1,), starts=(0,), stops=(2,),
        match=r"update has the shape \[N, 3\], but the slice of f32\[N,4\] has the shape "
              r"\[N, 2\]")
    bad("set_slice", x, T("f64[N,2]"), axes=(1,), starts=(0,), stops=(2,),
        match=r"operand dtypes differ")


@pytest.mark.parametrize("shape, attrs", [
    ((5, 3), dict(axes=(0,), starts=(1,), stops=(4,))),
    ((5, 3), dict(axes=(0, 1), starts=(None, 2), stops=(None, None), steps=(-2, -1))),
    ((6, 2), dict(axes=(0,), starts=(-1,), stops=(None,), steps=(-3,))),
])
def test_set_slice_vjp(shape, attrs):
    x = f64(*shape)
    update_shape = x[python_slices(x.ndim, **{k: attrs.get(k, (1,) * len(attrs["axes"]))
                                               for k in ("axes", "starts", "stops", "steps")})
                     ].shape
    check_op_vjp("set_slice", [x, f64(*update_shape)], attrs)


def test_set_slice_symbolic_run_and_vjp():
    x, update = f64(3, 4), f64(3, 2)
    attrs = dict(axes=(1,), starts=(3,), stops=(None,), steps=(-2,))
    (y,) = run_symbolic("set_slice", [T("f64[N,4]"), T("f64[N,2]")], [x, update], **attrs)
    want = x.copy()
    want[:, 3::-2] = update
    np.testing.assert_array_equal(y, want)
    symbolic_vjp_matches("set_slice", [T("f64[N,4]"), T("f64[N,2]")], [x, update], **attrs)


# ---------------------------------------------------------------- gather, scatter_add

@pytest.mark.parametrize("x, index, axis, want", [
    ("f32[5,3]", "i64[2]", 0, "f32[2,3]"),
    ("f32[5,3]", "i32[2,4]", 1, "f32[5,2,4]"),
    ("f32[N,3]", "i64[K]", -1, "f32[N,K]"),
    ("f32[5,3]", "i64", 0, "f32[3]"),
    ("i64[N]", "i64[M,2]", 0, "i64[M,2]"),
])
def test_gather_type(x, index, axis, want):
    assert infer("gather", T(x), T(index), axis=axis) == want


def test_gather_errors():
    bad("gather", T("f32[5,3]"), T("f32[2]"), match=r"index must be int typed, got f32\[2\]")
    bad("gather", T("f32"), T("i64[2]"), match=r"x must have at least one dim, got f32")
    bad("gather", T("f32[5,3]"), T("i64[2]"), axis=2, match=r"axis 2 is out of range")


def test_gather_kernel():
    x = f64(5, 3)
    index = np.array([[4, 0], [-1, 4]], dtype=np.int32)
    (y,) = apply_op("gather", [x, index], axis=0)
    want = np.array([[x[4], x[0]], [x[4], x[4]]])
    np.testing.assert_array_equal(y, want)
    (y,) = run_symbolic("gather", [T("f64[N,3]"), T("i32[2,2]")], [x, index % 3], axis=-1)
    np.testing.assert_array_equal(y, x[:, index % 3])


@pytest.mark.parametrize("shape, index, axis", [
    ((5, 3), [1, 1, 4, 0, 1], 0),
    ((2, 4, 3), [[3, 3], [0, 3]], 1),
    ((4,), 2, 0),
])
def test_gather_vjp_with_duplicates(shape, index, axis):
    check_op_vjp("gather", [f64(*shape), np.array(index, dtype=np.int64)], {"axis": axis})


def scatter_add_reference(x, index, updates, axis):
    """A loop over the index positions, independent of np.add.at."""
    out = np.moveaxis(x.copy(), axis, 0)
    moved = np.moveaxis(updates, list(range(axis, axis + index.ndim)),
                        list(range(index.ndim)))
    for pos in np.ndindex(index.shape):
        out[index[pos]] += moved[pos]
    return np.moveaxis(out, 0, axis)


def test_scatter_add_kernel_accumulates_duplicates():
    x = f64(3, 5)
    before = x.copy()
    index = np.array([[4, 4], [0, -1]], dtype=np.int64)
    updates = f64(3, 2, 2)
    (y,) = apply_op("scatter_add", [x, index, updates], axis=1)
    np.testing.assert_allclose(y, scatter_add_reference(before, index % 5, updates, 1))
    np.testing.assert_array_equal(x, before)


def test_scatter_add_type_and_errors():
    assert infer("scatter_add", T("f32[N,5]"), T("i64[K]"), T("f32[N,K]"), axis=1) == "f32[N,5]"
    bad("scatter_add", T("f32[4,5]"), T("i64[2]"), T("f32[4,3]"), axis=1,
        match=r"updates must have the shape \[4, 2\] \(x's dims with the index's dims in place "
              r"of axis 1\), got f32\[4,3\]")
    bad("scatter_add", T("bool[4]"), T("i64[2]"), T("bool[2]"),
        match=r"x must be a float or int typed")
    bad("scatter_add", T("f32[4]"), T("i64[2]"), T("f64[2]"), match=r"operand dtypes differ")


@pytest.mark.parametrize("shape, index, axis", [
    ((5, 3), [1, 1, 4, 1], 0),
    ((2, 4, 3), [[3, 3], [0, 3]], 1),
])
def test_scatter_add_vjp_with_duplicates(shape, index, axis):
    index = np.array(index, dtype=np.int64)
    x = f64(*shape)
    updates = f64(*(shape[:axis] + index.shape + shape[axis + 1:]))
    check_op_vjp("scatter_add", [x, index, updates], {"axis": axis})


def test_gather_scatter_symbolic_vjps():
    x, index = f64(3, 4), np.array([3, 3, 0], dtype=np.int64)
    symbolic_vjp_matches("gather", [T("f64[N,4]"), T("i64[K]")], [x, index], axis=1)
    symbolic_vjp_matches("scatter_add", [T("f64[N,4]"), T("i64[K]"), T("f64[N,K]")],
                         [x, index, f64(3, 3)], axis=1)


# ---------------------------------------------------------------- take/put_along_axis

def test_take_along_axis_type_and_errors():
    assert infer("take_along_axis", T("f32[N,5]"), T("i64[N,2]"), axis=1) == "f32[N,2]"
    assert infer("take_along_axis", T("f32[N,5]"), T("i64[1,2]"), axis=-1) == "f32[N,2]"
    assert infer("take_along_axis", T("f32[4,5]"), T("i32[7,5]"), axis=0) == "f32[7,5]"
    bad("take_along_axis", T("f32[4,5]"), T("i64[3,2]"), axis=1,
        match=r"index dim 3 at axis 0 must be 1 or x's dim 4 \(x is f32\[4,5\], index i64\[3,2\]\)")
    bad("take_along_axis", T("f32[N,5]"), T("i64[M,2]"), axis=1,
        match=r"index dim M at axis 0 must be 1 or x's dim N")
    bad("take_along_axis", T("f32[4,5]"), T("i64[2]"), axis=1,
        match=r"index must have the rank of x \(f32\[4,5\]\), got i64\[2\]")
    bad("take_along_axis", T("f32[4,5]"), T("f32[4,2]"), axis=1, match=r"index must be int")


def take_along_axis_reference(x, index, axis):
    shape = x.shape[:axis] + (index.shape[axis],) + x.shape[axis + 1:]
    index = np.broadcast_to(index, shape)
    out = np.empty(shape, x.dtype)
    for pos in np.ndindex(shape):
        src = list(pos)
        src[axis] = index[pos]
        out[pos] = x[tuple(src)]
    return out


def test_take_along_axis_kernel():
    x = f64(3, 4)
    index = np.array([[3], [0], [3]], dtype=np.int64)  # one position per row
    (y,) = apply_op("take_along_axis", [x, index], axis=1)
    np.testing.assert_array_equal(y, take_along_axis_reference(x, index, 1))
    index = np.array([[2, 2, 0, 1]], dtype=np.int32)  # [1,4] along axis 0
    (y,) = run_symbolic("take_along_axis", [T("f64[N,4]"), T("i32[1,4]")], [x, index], axis=0)
    np.testing.assert_array_equal(y, take_along_axis_reference(x, index, 0))


@pytest.mark.parametrize("shape, index, axis", [
    ((3, 4), [[1, 1, 3], [0, 0, 0], [2, 3, 2]], 1),
    ((3, 4), [[1, 1, 3]], 1),  # broadcast index
    ((3, 4), [[2], [2], [0], [2], [1]], 0),
])
def test_take_along_axis_vjp_with_duplicates(shape, index, axis):
    check_op_vjp("take_along_axis", [f64(*shape), np.array(index, dtype=np.int64)],
                 {"axis": axis})


def put_along_axis_reference(x, index, values, axis, reduce):
    shape = x.shape[:axis] + (index.shape[axis],) + x.shape[axis + 1:]
    index, values = np.broadcast_to(index, shape), np.broadcast_to(values, shape)
    out = x.copy()
    for pos in np.ndindex(shape):
        dst = list(pos)
        dst[axis] = index[pos]
        if reduce == "add":
            out[tuple(dst)] += values[pos]
        else:
            out[tuple(dst)] = values[pos]
    return out


@pytest.mark.parametrize("reduce", ["assign", "add"])
def test_put_along_axis_kernel(reduce):
    x = f64(3, 4)
    before = x.copy()
    index = np.array([[3, 0], [1, 1], [2, 0]], dtype=np.int64)
    values = f64(3, 2) if reduce == "add" else f64(3, 1)
    if reduce == "assign":
        index[1, 1] = 2  # distinct positions: which duplicate wins is unspecified
    (y,) = apply_op("put_along_axis", [x, index, values], axis=1, reduce=reduce)
    np.testing.assert_array_equal(y, put_along_axis_reference(before, index, values, 1, reduce))
    np.testing.assert_array_equal(x, before)


def test_put_along_axis_type_and_errors():
    assert infer("put_along_axis", T("f32[N,5]"), T("i64[1,2]"), T("f32"), axis=1) == "f32[N,5]"
    assert infer("put_along_axis", T("f32[N,5]"), T("i64[N,2]"), T("f32[N,2]"), axis=1,
                 reduce="add") == "f32[N,5]"
    bad("put_along_axis", T("f32[4,5]"), T("i64[4,2]"), T("f32[4,3]"), axis=1,
        match=r"cannot broadcast values f32\[4,3\] to \[4, 2\]: dim 3 at axis 1 is neither 1 "
              r"nor 2")
    bad("put_along_axis", T("f32[4,5]"), T("i64[4,2]"), T("f32[4,2]"), axis=1, reduce="mul",
        match=r"reduce must be 'assign' or 'add', got 'mul'")
    bad("put_along_axis", T("f32[4,5]"), T("i64[4,2]"), T("f64[4,2]"), axis=1,
        match=r"operand dtypes differ")


@pytest.mark.parametrize("index, values_shape, axis", [
    ([[3, 0], [1, 2], [2, 0]], (3, 2), 1),
    ([[3, 0], [1, 2], [2, 0]], (3, 1), 1),  # values broadcast
    ([[1, 2]], (), 1),                       # index and values broadcast
    ([[0, 1, 2, 0], [2, 0, 1, 1]], (2, 4), 0),
])
def test_put_along_axis_assign_vjp(index, values_shape, axis):
    check_op_vjp("put_along_axis", [f64(3, 4), np.array(index, dtype=np.int64),
                                    f64(*values_shape)], {"axis": axis})


@pytest.mark.parametrize("index, values_shape, axis", [
    ([[3, 3], [1, 1], [0, 3]], (3, 2), 1),
    ([[1, 1]], (1,), 1),
    ([[0, 0, 2, 2], [0, 0, 0, 2], [1, 1, 1, 1]], (3, 4), 0),
])
def test_put_along_axis_add_vjp_with_duplicates(index, values_shape, axis):
    check_op_vjp("put_along_axis", [f64(3, 4), np.array(index, dtype=np.int64),
                                    f64(*values_shape)], {"axis": axis, "reduce": "add"})


def test_along_axis_symbolic_vjps():
    x, index = f64(3, 4), np.array([[1, 1]], dtype=np.int64)
    symbolic_vjp_matches("take_along_axis", [T("f64[N,4]"), T("i64[1,2]")], [x, index], axis=1)
    for reduce in ("assign", "add"):
        symbolic_vjp_matches("put_along_axis", [T("f64[N,4]"), T("i64[1,2]"), T("f64[2]")],
                             [x, np.array([[0, 3]]), f64(2)], axis=1, reduce=reduce)


# ---------------------------------------------------------------- pad

def test_pad_type_canonical_and_errors():
    assert infer("pad", T("f32[N,3]"), pads=[(0, 0), (1, 2)]) == "f32[N,6]"
    assert infer("pad", T("f32[N,S1]"), pads=[(1, 0), (1, 1)]) == "f32[N+1,S1+2]"
    assert infer("pad", T("f32"), pads=()) == "f32"
    assert canon("pad", T("f32[2]"), pads=[[1, 0]], value=1) == {"pads": ((1, 0),), "value": 1.0}
    bad("pad", T("f32[2,3]"), pads=((1, 0),), match=r"one \(low, high\) pair of non-negative "
                                                    r"ints per axis of f32\[2,3\]")
    bad("pad", T("f32[2]"), pads=((1, -1),), match=r"non-negative ints")
    bad("pad", T("f32[2]"), pads=(1, 1), match=r"one \(low, high\) pair")
    bad("pad", T("f32[2]"), pads=((1, 1),), value="x", match=r"value must be a number")


def test_pad_kernel():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    (y,) = apply_op("pad", [x], pads=((1, 0), (2, 1)), value=-1.0)
    np.testing.assert_array_equal(y, np.pad(x, ((1, 0), (2, 1)), constant_values=-1))
    (y,) = apply_op("pad", [np.float32(2.0)], pads=())
    assert y == np.float32(2.0) and y.dtype == np.float32
    x = f64(3, 2)
    (y,) = run_symbolic("pad", [T("f64[N,2]")], [x], pads=((0, 0), (0, 3)), value=0.5)
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (0, 3)), constant_values=0.5))
    (y,) = run_symbolic("pad", [T("f64[N,S1]")], [x], pads=((2, 1), (0, 3)))
    np.testing.assert_array_equal(y, np.pad(x, ((2, 1), (0, 3))))


def test_pad_vjp():
    check_op_vjp("pad", [f64(2, 3)], {"pads": ((1, 0), (2, 1)), "value": 3.0})
    check_op_vjp("pad", [f64(2, 3)], {"pads": ((0, 0), (0, 2))})
    symbolic_vjp_matches("pad", [T("f64[N,3]")], [f64(2, 3)], pads=((0, 0), (1, 1)))
    symbolic_vjp_matches("pad", [T("f64[N,S1]")], [f64(2, 3)], pads=((2, 0), (1, 3)))


# ---------------------------------------------------------------- arange

@pytest.mark.parametrize("attrs", [
    dict(stop=5), dict(start=2, stop=11, step=3), dict(start=5, stop=-4, step=-2),
    dict(start=3, stop=3), dict(start=4, stop=1), dict(start=0.0, stop=1.0, step=0.1),
    dict(start=1, stop=2.5, step=0.5), dict(start=-1.0, stop=-2.0, step=-0.3),
    dict(stop=4, dtype="float64"), dict(start=0.5, stop=4, dtype="int32"),
])
def test_arange_matches_numpy(attrs):
    fn = function("f", [], lambda b: b.arange(**attrs))
    (y,) = run(fn)
    want = np.arange(attrs.get("start", 0), attrs["stop"], attrs.get("step", 1))
    dtype = attrs.get("dtype") or ("int64" if want.dtype.kind == "i" else "float32")
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y, want.astype(dtype), rtol=1e-6)
    text = print_module(Module([fn]))
    assert print_module(parse(text)) == text


def test_arange_canonical_and_errors():
    assert canon("arange", stop=3) == {"start": 0, "stop": 3, "step": 1, "dtype": dtypes.int64}
    assert canon("arange", stop=3, step=0.5)["dtype"] is dtypes.float32
    assert infer("arange", stop=3) == "i64[3]"
    assert infer("arange", start=0, stop=1.5, step=0.5) == "f32[3]"
    bad("arange", stop=3, step=0, match=r"step must not be 0")
    bad("arange", stop=True, match=r"stop must be a number, got True")
    bad("arange", stop=3, dtype="float8", match=r"unknown dtype 'float8'")
    assert lookup("arange").nondiff
