"""The IR's data structures: use lists, replace_all_uses_with, safe erase, walk,
clone, and the builder's type inference."""
import numpy as np
import pytest

from irflow.errors import IrflowError, ShapeError
from irflow.ir import Builder, Function, Module, TensorType, dtypes, function, verify
from irflow.ir.types import broadcast_shapes, dim_div, dim_mul, numel

F32 = TensorType("f32", [4])


def test_dtype_spellings_resolve_to_one_object():
    assert dtypes.dtype("float32") is dtypes.float32
    assert dtypes.dtype("f32") is dtypes.float32
    assert dtypes.dtype(np.float32) is dtypes.float32
    assert dtypes.dtype(float) is dtypes.float64  # Paddle reads it through np.dtype
    assert dtypes.dtype("float") is dtypes.float64 and dtypes.dtype("int") is dtypes.int64
    assert dtypes.float32 == "float32" and dtypes.int64 != dtypes.int32
    with pytest.raises(TypeError, match="unknown dtype"):
        dtypes.dtype("float7")


def test_tensor_type_text_and_equality():
    assert str(TensorType("f32", ["N", 784])) == "f32[N,784]"
    assert str(TensorType("i64", [])) == "i64"
    assert TensorType("f32", [2, 3]) == TensorType(dtypes.float32, (2, 3))
    assert TensorType("f32", [2, 3]) != TensorType("f64", [2, 3])


def test_symbolic_dims_multiply_and_divide_canonically():
    assert dim_mul("N", 16) == "N*16"
    assert dim_mul(16, "N") == "N*16"
    assert dim_mul("N", "M") == "M*N"
    assert dim_div("N*16", 4) == "N*4"
    assert dim_div("N*16", "N") == 16
    assert dim_div("N", 3) is None
    assert numel(("N", 4, 4)) == "N*16"


def test_broadcasting_with_symbols():
    assert broadcast_shapes(("N", 4), (4,)) == ("N", 4)
    assert broadcast_shapes(("N", 1), (1, 5)) == ("N", 5)
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        broadcast_shapes(("N", 4), ("M", 4))
    with pytest.raises(ShapeError, match=r"dim 3 against 4"):
        broadcast_shapes((3,), (4,))


def _two_uses():
    fn = Function("f", [F32, F32], ["x", "y"])
    b = Builder(fn.block)
    s = b.add(fn.args[0], fn.args[1], name="s")
    t = b.mul(s, s, name="t")
    b.ret(t)
    return fn, s, t


def test_use_lists_track_operands():
    fn, s, t = _two_uses()
    x, y = fn.args
    assert [(u.op.name, u.index) for u in s.uses] == [("mul", 0), ("mul", 1)]
    assert [u.op for u in x.uses] == [s.op]
    assert [u.op.name for u in t.uses] == ["return"]


def test_replace_all_uses_with_moves_every_use():
    fn, s, t = _two_uses()
    x = fn.args[0]
    s.replace_all_uses_with(x)
    assert not s.uses
    assert t.op.operands == (x, x)
    assert len(x.uses) == 3  # add, and both operands of mul
    s.op.erase()
    verify(fn)


def test_erase_refuses_an_op_whose_result_is_used():
    fn, s, t = _two_uses()
    with pytest.raises(IrflowError, match="still has 2 use"):
        s.op.erase()
    assert s.op.parent is fn.block  # nothing changed


def test_erase_drops_operand_uses():
    fn, s, t = _two_uses()
    ret = fn.return_op
    ret.set_operands([s])
    t.op.erase()
    assert [u.op.name for u in s.uses] == ["return"]
    verify(fn)


def test_walk_visits_nested_regions_in_order():
    def body(b, p, x):
        return b.cond(p, [x], lambda b, a: b.exp(a), lambda b, a: b.neg(a))
    fn = function("f", [TensorType("bool", []), F32], body)
    names = [op.name for op in Module([fn]).walk()]
    assert names == ["cond", "exp", "yield", "neg", "yield", "return"]


def test_clone_is_deep_and_independent():
    fn, s, t = _two_uses()
    copy = fn.clone()
    assert str(copy) == str(fn)
    copy_s = copy.block.ops[0].result
    assert copy_s is not s and not any(u.op.parent is fn.block for u in copy_s.uses)


def test_builder_infers_types_and_reports_shape_errors():
    fn = Function("f", [TensorType("f32", ["N", 4]), TensorType("f32", [3])])
    b = Builder(fn.block)
    with pytest.raises(ShapeError, match=r"add: shapes \[N, 4\] and \[3\] cannot be broadcast"):
        b.add(*fn.args)
    with pytest.raises(ShapeError, match="dtypes differ"):
        b.add(fn.args[0], b.constant(1, "int64"))
    assert b.exp(fn.args[0]).type == TensorType("f32", ["N", 4])


def test_builder_rejects_unknown_attributes():
    fn = Function("f", [F32])
    with pytest.raises(ShapeError, match="has no attribute"):
        Builder(fn.block).exp(fn.args[0], axis=1)


def test_cond_branches_must_yield_the_same_types():
    fn = Function("f", [TensorType("bool", []), F32])
    b = Builder(fn.block)
    with pytest.raises(ShapeError, match="branches yield different types"):
        b.cond(fn.args[0], [fn.args[1]], lambda b, a: a, lambda b, a: b.isnan(a))


def test_block_argument_edits_keep_indices():
    fn = Function("f", [F32, F32], ["x", "y"])
    block = fn.block
    z = block.insert_arg(1, TensorType("i64", []), "z")
    assert [a.name for a in fn.args] == ["x", "z", "y"] and z.index == 1
    block.permute_args([2, 0, 1])
    assert [(a.name, a.index) for a in fn.args] == [("y", 0), ("x", 1), ("z", 2)]
    Builder(block).ret(fn.args[1])
    with pytest.raises(IrflowError, match="cannot erase block argument 1 still has 1 use"):
        block.erase_args([1])
    block.erase_args([0, 2])
    assert [(a.name, a.index) for a in fn.args] == [("x", 0)]
    with pytest.raises(IrflowError, match="not a permutation"):
        block.permute_args([0, 0])
    verify(fn)


def test_ops_move_and_iteration_survives_erasing():
    fn, s, t = _two_uses()
    block = fn.block
    u = Builder(block).exp(fn.args[0])  # after return: move it before the mul
    block.insert_before(t.op, u.op.detach())
    assert [op.name for op in block.ops] == ["add", "exp", "mul", "return"]
    assert block.ops[1] is u.op and block.ops[-1] is fn.return_op and len(block.ops) == 4
    for op in block.ops:  # erasing the current op does not stop the walk
        if op.name == "exp":
            op.erase()
    assert [op.name for op in reversed(block.ops)] == ["return", "mul", "add"]
    verify(fn)


def test_results_operands_and_regions_can_be_removed_and_moved():
    def body(b, p, x):
        return b.cond(p, [x, x], lambda b, a, c: [b.exp(a), c], lambda b, a, c: [a, c])[0]
    fn = function("f", [TensorType("bool", []), F32], body)
    cond = fn.block.first_op
    with pytest.raises(IrflowError, match="cannot erase result 0 of cond still has 1 use"):
        cond.erase_results([0])
    for region in cond.regions:
        region.blocks[0].terminator.erase_operands([1])
    cond.erase_results([1])
    assert cond.result_types == (F32,)
    then = cond.regions[0].detach()
    assert then.parent is None and len(cond.regions) == 1
    cond.add_region(then)
    assert [r.blocks[0].first_op.name for r in cond.regions] == ["yield", "exp"]
    with pytest.raises(IrflowError, match="already belongs to 'cond'"):
        cond.add_region(then)
