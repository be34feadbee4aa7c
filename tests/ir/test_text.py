"""The text form: what the printer writes and the parser reads back."""
import numpy as np
import pytest

from irflow.errors import ParseError
from irflow.ir import Builder, Function, Module, TensorType, dtypes, function, parse, verify
from irflow.ir.printer import format_float, printed_names

BRANCHY = """\
func @forward(%x: f32[N,4], %w: f32[4]) -> f32[N,4] {
  %h = mul %x, %w : f32[N,4]
  %zero = const {value=0.0} : f32
  %p = gt %zero, %zero : bool
  %y = cond %p, %h : f32[N,4] {
  ^then(%a: f32[N,4]):
    %r = relu %a : f32[N,4]
    yield %r
  } {
  ^else(%a: f32[N,4]):
    %r = abs %a : f32[N,4]
    yield %r
  }
  %i0 = const {value=0} : i64
  %n = const {value=3} : i64
  %steps, %z = while %n, %i0, %y : (i64, f32[N,4]) {
  ^cond(%m: i64, %i: i64, %v: f32[N,4]):
    %k = lt %i, %m : bool
    condition %k
  } {
  ^body(%m: i64, %i: i64, %v: f32[N,4]):
    %one = const {value=1} : i64
    %i1 = add %i, %one : i64
    %v1 = tanh %v : f32[N,4]
    yield %i1, %v1
  }
  return %z
}
"""


def test_text_round_trips_exactly():
    module = parse(BRANCHY)
    verify(module)
    assert str(module) == BRANCHY


def test_attributes_at_their_default_are_not_printed():
    fn = Function("f", [TensorType("f32", [2])])
    b = Builder(fn.block)
    b.ret(b.cast(fn.args[0], dtype="float64"))
    assert "cast %0 {dtype=f64} : f64[2]" in str(fn)


def test_an_attribute_equal_to_its_default_only_by_python_equality_is_printed():
    """pad's default fill is 0.0; a fill of -0.0 (== 0.0 in Python) is another value,
    and leaving it out would make the text pad with 0.0."""
    text = ("func @f(%x: f32[2]) -> f32[4] {\n"
            "  %y = pad %x {pads=[[1, 1]], value=-0.0} : f32[4]\n"
            "  return %y\n}\n")
    module = parse(text)
    assert str(module) == text
    assert np.signbit(module.main.block.first_op.attrs["value"])


def test_names_are_made_unique_and_numbers_fill_gaps():
    def body(b, x):
        a = b.exp(x, name="h")
        c = b.exp(a, name="h")
        d = b.exp(c)
        return b.add(d, b.exp(d, name="h_1"))
    text = str(Module([function("f", [TensorType("f32", [])], body, ["x"])]))
    assert "%h = exp %x" in text
    assert "%h_1 = exp %h " in text
    assert "%0 = exp %h_1" in text
    assert "%h_1_1 = exp %0" in text
    assert str(parse(text)) == text


def test_sibling_regions_reuse_names_but_never_shadow_outer_ones():
    def body(b, p, x):
        return b.cond(p, [x], lambda b, x: b.exp(x, name="t"), lambda b, x: b.neg(x, name="t"))
    text = str(Module([function("f", [TensorType("bool", []), TensorType("f32", [])], body,
                                ["p", "x"])]))
    assert text.count("^then(%x_1: f32)") == 1 and text.count("^else(%x_1: f32)") == 1
    assert "%t = exp %x_1" in text and "%t = neg %x_1" in text


def test_printed_names_are_the_names_the_text_gives():
    def body(b, p, x):
        return b.cond(p, [x], lambda b, x: b.exp(x, name="t"), lambda b, x: b.neg(x, name="t"))
    fn = function("f", [TensorType("bool", []), TensorType("f32", [])], body, ["p", "x"])
    text = str(Module([fn]))
    names = printed_names(fn)
    for op in fn.walk():
        if op.results and op.name != "cond":
            assert f"%{names[op.result]} = {op.name} %{names[op.operand(0)]}" in text
    assert {names[a] for a in fn.args} == {"p", "x"}


@pytest.mark.parametrize("value,dtype", [
    (np.float32(0.1), "f32"), (0.1, "f64"), (np.float32(1e-30), "f32"),
    (float("inf"), "f64"), (float("-inf"), "f32"), (3.0, "f64"),
])
def test_float_literals_round_trip_bit_exactly(value, dtype):
    def body(b):
        return b.constant(np.array([value, -value]), dtype)
    text = str(Module([function("f", [], body)]))
    array = parse(text).main.block.ops[0].attrs["value"]
    np.testing.assert_array_equal(array, np.array([value, -value], dtype=array.dtype))
    assert str(parse(text)) == text


def test_nan_constants_round_trip():
    text = str(Module([function("f", [], lambda b: b.constant([np.nan, 1.0], "float32"))]))
    assert "value=[nan, 1.0]" in text
    assert str(parse(text)) == text


def test_format_float_keeps_a_decimal_point():
    assert format_float(2.0) == "2.0"
    assert format_float(1e20) == "1e+20"


def test_locations_print_on_request_and_parse_back():
    text = BRANCHY.replace("%h = mul %x, %w : f32[N,4]", '%h = mul %x, %w : f32[N,4] loc("model.py":12)')
    module = parse(text)
    op = module.main.block.ops[0]
    assert (op.loc.file, op.loc.line) == ("model.py", 12)
    from irflow.ir.printer import print_module
    assert 'loc("model.py":12)' in print_module(module, locations=True)


def test_parsed_ops_remember_their_line_in_the_text():
    module = parse(BRANCHY)
    relu = next(op for op in module.walk() if op.name == "relu")
    assert (relu.loc.file, relu.loc.line) == ("<ir>", 7)


@pytest.mark.parametrize("text,message", [
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x : f32\n  return %q\n}", r"line 3, column 10: use of undefined value %q"),
    ("func @f(%x: f32) -> f32 {\n  %y = frob %x : f32\n  return %y\n}", r"line 2, column 8: unknown op 'frob'"),
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x : f33\n  return %y\n}", r"line 2, column 17: expected a dtype"),
    ("func @f(%x: f32) -> f32 {\n  %x = exp %x : f32\n  return %x\n}", r"line 2, column 3: %x is defined twice"),
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x\n  return %y\n}", r"exp names 1 result\(s\) but gives 0 type"),
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x : f32 $\n}", r"line 2, column 21: unexpected character '\$'"),
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x : f32\n", r"expected '}' to close the block"),
    ("func @f(%x: f32) -> f64 {\n  return %x\n}", r"return types \(f32\) differ from its signature \(f64\)"),
    ("func @f(%x: f32) -> f32 {\n  %y = exp %x {axis=1} : f32\n  return %y\n}", r"exp has no attribute"),
])
def test_parse_errors_give_line_and_column(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_a_negative_nan_keeps_its_sign_through_the_text():
    for dtype in ("f32", "f64", "bf16"):
        text = (f"func @f() -> {dtype}[2] {{\n  %c = const {{value=[-nan, nan]}} : {dtype}[2]\n"
                "  return %c\n}\n")
        module = parse(text)
        assert str(module) == text
        value = module.main.block.first_op.attrs["value"]
        if dtype == "bf16":
            value = dtypes.from_bfloat16_bits(value)
        np.testing.assert_array_equal(np.signbit(value), [True, False])


def test_a_bfloat16_constant_is_written_as_its_values():
    """Its array holds the bits; the text holds the values they stand for (1.5, not
    the bits' 16320), which a literal written by hand means too."""
    text = "func @f() -> bf16[2] {\n  %c = const {value=[1.5, -0.0]} : bf16[2]\n  return %c\n}\n"
    module = parse(text)
    assert str(module) == text
    np.testing.assert_array_equal(module.main.block.first_op.attrs["value"],
                                  dtypes.to_bfloat16_bits(np.array([1.5, -0.0])))


@pytest.mark.parametrize("literal, dtype", [("300", "i8"), ("[1, -1]", "u8[2]"),
                                            ("1e10", "f16")])
def test_a_literal_that_does_not_fit_its_type_is_a_parse_error(literal, dtype):
    text = f"func @f() -> {dtype} {{\n  %c = const {{value={literal}}} : {dtype}\n  return %c\n}}\n"
    with pytest.raises(ParseError, match=f"does not fit {dtype.split('[')[0]}"):
        parse(text)
