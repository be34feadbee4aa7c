"""The verifier rejects each kind of malformed IR with a message that names the op,
its location and what was expected."""
import pytest

from irflow.errors import Location, VerificationError
from irflow.ir import Builder, Function, Module, Operation, TensorType, parse, verify

F32 = TensorType("f32", [4])
BOOL = TensorType("bool", [])


def _fn(*types):
    fn = Function("f", types)
    return fn, Builder(fn.block, Location("model.py", 7))


def test_a_well_formed_function_passes():
    fn, b = _fn(F32)
    b.ret(b.exp(fn.args[0]))
    verify(fn)


def test_use_before_definition():
    fn, b = _fn(F32)
    later = b.exp(fn.args[0])
    early = Operation("neg", [later], [F32], loc=Location("model.py", 3))
    fn.block.prepend(early)
    b.ret(early.result)
    with pytest.raises(VerificationError) as info:
        verify(fn)
    message = str(info.value)
    assert message.startswith("model.py:3")
    assert "op 'neg'" in message and "is used before its definition" in message


def test_region_using_an_outer_value_is_rejected():
    fn, b = _fn(BOOL, F32)
    p, x = fn.args
    outer = b.exp(x)
    # The then-branch reads `outer` directly instead of through a block argument.
    result = b.cond(p, [x], lambda b, a: b.add(a, outer), lambda b, a: a)[0]
    b.ret(result)
    with pytest.raises(VerificationError, match=r"op 'add'.*defined outside the region.*"
                                                r"regions are closed"):
        verify(fn)


def test_block_without_terminator():
    fn, b = _fn(F32)
    b.exp(fn.args[0])
    with pytest.raises(VerificationError, match=r"op 'exp'.*does not end with a terminator"):
        verify(fn)


def test_function_must_end_in_return():
    fn, b = _fn(F32)
    b.create("yield", [fn.args[0]])
    with pytest.raises(VerificationError, match=r"must end with 'return', found 'yield'"):
        verify(fn)


def test_terminator_in_the_middle_of_a_block():
    fn, b = _fn(F32)
    b.ret(fn.args[0])
    b.ret(fn.args[0])
    with pytest.raises(VerificationError, match="terminator must be the last op"):
        verify(fn)


def test_wrong_terminator_in_a_region():
    text = """
func @f(%p: bool, %x: f32) -> f32 {
  %y = cond %p, %x : f32 {
  ^then(%a: f32):
    return %a
  } {
  ^else(%a: f32):
    yield %a
  }
  return %y
}"""
    with pytest.raises(VerificationError, match=r"(?s)<ir>:3:3.*op 'cond' defining %y: then region "
                                                r"must end with 'yield', found return"):
        verify(parse(text))


def test_cond_branches_yielding_different_types():
    text = """
func @f(%p: bool, %x: f32[4]) -> f32[4] {
  %y = cond %p, %x : f32[4] {
  ^then(%a: f32[4]):
    yield %a
  } {
  ^else(%a: f32[4]):
    %s = isnan %a : bool[4]
    yield %s
  }
  return %y
}"""
    with pytest.raises(VerificationError, match=r"else region yields \(bool\[4\]\) but cond "
                                                r"has results \(f32\[4\]\)"):
        verify(parse(text))


def test_while_body_yielding_other_types_than_it_carries():
    text = """
func @f(%x: f32[4], %n: i64) -> f32[4] {
  %y = while %n, %x : f32[4] {
  ^cond(%m: i64, %v: f32[4]):
    %z = const {value=0} : i64
    %k = lt %z, %m : bool
    condition %k
  } {
  ^body(%m: i64, %v: f32[4]):
    yield %m
  }
  return %y
}"""
    with pytest.raises(VerificationError, match=r"(?s)<ir>:3:3.*body region yields \(i64\) but "
                                                r"while has results \(f32\[4\]\)"):
        verify(parse(text))


def test_while_condition_must_be_a_bool_scalar():
    text = """
func @f(%x: f32[4]) -> f32[4] {
  %y = while %x : f32[4] {
  ^cond(%v: f32[4]):
    %k = isnan %v : bool[4]
    condition %k
  } {
  ^body(%v: f32[4]):
    yield %v
  }
  return %y
}"""
    with pytest.raises(VerificationError, match=r"op 'condition'.*bool scalar, got bool\[4\]"):
        verify(parse(text))


def test_operand_types_that_break_the_type_rule():
    text = """
func @f(%x: f32[4], %y: f32[3]) -> f32[4] {
  %z = add %x, %y : f32[4]
  return %z
}"""
    with pytest.raises(VerificationError, match=r"(?s)<ir>:3:3.*op 'add' defining %z: shapes \[4\] "
                                                r"and \[3\] cannot be broadcast"):
        verify(parse(text))


def test_result_type_that_differs_from_the_type_rule():
    text = """
func @f(%x: f32[4]) -> f64[4] {
  %z = exp %x : f64[4]
  return %z
}"""
    with pytest.raises(VerificationError, match=r"type rule gives \(f32\[4\]\) for operands "
                                                r"\(f32\[4\]\) but the op has \(f64\[4\]\)"):
        verify(parse(text))


def test_unknown_op():
    fn, b = _fn(F32)
    op = b.insert(Operation("frobnicate", [fn.args[0]], [F32], loc=Location("model.py", 9)))
    b.ret(op.result)
    with pytest.raises(VerificationError, match=r"^model.py:9[\s\S]*unknown op 'frobnicate'"):
        verify(Module([fn]))


def test_wrong_operand_count():
    fn, b = _fn(F32)
    op = b.insert(Operation("exp", [fn.args[0], fn.args[0]], [F32]))
    b.ret(op.result)
    with pytest.raises(VerificationError, match="exp takes 1 operand"):
        verify(fn)


SIZED_BY_A_LIST = """
func @f(%l: list<f32[4]>, %c: f32[4]) -> f32[4] {
  {first}
  {second}
  %r = sum %b {axis=[0]} : f32[4]
  return %r
}
"""
STACK = '%s = list_stack %l {size="D1", elem_shape=[4]} : f32[D1,4]'
BROADCAST = "%b = broadcast_to %c {shape=[D1, 4]} : f32[D1,4]"


def test_a_size_read_before_anything_binds_it():
    """A shape attribute's symbol must be bound by an argument's dim or an earlier
    result: a pass that drops the op binding a size (a backward that only needs
    the length of a list the forward stacked) leaves it unbound."""
    verify(parse(SIZED_BY_A_LIST.replace("{first}", STACK).replace("{second}", BROADCAST)))
    with pytest.raises(VerificationError, match=r"op 'broadcast_to' defining %b: its shape "
                                                r"reads the size D1, which nothing before"):
        verify(parse(SIZED_BY_A_LIST.replace("{first}", BROADCAST).replace("{second}", STACK)))
