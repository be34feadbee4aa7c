"""The dim algebra of irflow/ir/types.py: symbolic dims are integer polynomials of
symbols in one canonical text form, which the IR text prints and parses, which
evaluates as integer arithmetic does, and from which actual sizes bind symbols."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irflow.codegen import compile_plan, run
from irflow.errors import DimMismatch, ParseError, ShapeError
from irflow.ir import Module, TensorType, function, parse
from irflow.ir.printer import print_module
from irflow.ir.types import (bind_shape, broadcast_shapes, dim_add, dim_div, dim_mul, dim_sub,
                             eval_dim, normalize_dim, solve_dim, substitute, symbols_of)

SYMBOLS = ("M", "N", "S1")

# A polynomial as {monomial (sorted symbols, repeated for powers): coefficient}.
polynomials = st.dictionaries(
    st.lists(st.sampled_from(SYMBOLS), max_size=2).map(lambda s: tuple(sorted(s))),
    st.integers(-6, 6).filter(bool), max_size=4)
bindings = st.fixed_dictionaries({s: st.integers(0, 9) for s in SYMBOLS})


def value(poly: dict, env: dict) -> int:
    return sum(c * math.prod(env[s] for s in mono) for mono, c in poly.items())


@st.composite
def spellings(draw, poly: dict) -> str:
    """`poly` written as a user might: terms and factors in any order, the factor
    anywhere (or left out when it is 1), any spacing."""
    terms = []
    for mono, coef in draw(st.permutations(list(poly.items()))):
        factors = list(mono)
        if abs(coef) != 1 or not mono or draw(st.booleans()):
            factors.insert(draw(st.integers(0, len(factors))), str(abs(coef)))
        terms.append(("-" if coef < 0 else "+", "*".join(draw(st.permutations(factors)))))
    if not terms:
        return "0"
    space = draw(st.sampled_from(["", " "]))
    text = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    return text + "".join(f"{space}{sign}{space}{term}" for sign, term in terms[1:])


@given(st.data(), polynomials, bindings)
def test_every_spelling_of_a_polynomial_has_one_canonical_form(data, poly, env):
    first, second = data.draw(spellings(poly)), data.draw(spellings(poly))
    dim = dim_add(0, first)  # arithmetic reads any spelling, and allows negative ints
    assert dim_add(0, second) == dim == dim_add(0, dim)
    assert eval_dim(dim, env) == value(poly, env)
    if isinstance(dim, str):
        assert normalize_dim(first) == dim


@given(polynomials.filter(lambda p: any(p)), bindings)
def test_canonical_dims_round_trip_through_the_ir_text(poly, env):
    dim = normalize_dim(_text(poly))
    if not isinstance(dim, str):
        return
    fn = function("f", [TensorType("f32", (dim, 2))],
                  lambda b, x: b.reshape(x, shape=(2, dim)))
    text = print_module(Module([fn]))
    assert f"f32[{dim},2]" in text
    shown = dim if dim[0] != "-" else f'"{dim}"'  # a list item starting with - is quoted
    assert f"shape=[2, {shown}]" in text
    assert print_module(parse(text)) == text


@given(polynomials, polynomials, bindings)
def test_arithmetic_agrees_with_integer_arithmetic(p, q, env):
    a, b = _dim(p), _dim(q)
    x, y = value(p, env), value(q, env)
    assert eval_dim(dim_add(a, b), env) == x + y
    assert eval_dim(dim_sub(a, b), env) == x - y
    assert eval_dim(dim_mul(a, b), env) == x * y
    assert dim_sub(a, a) == 0
    if q:
        assert dim_div(dim_mul(a, b), b) == a


def _dim(poly: dict):
    """A polynomial as a dim even where it may be negative (arithmetic allows that)."""
    return dim_add(0, _text(poly)) if poly else 0


def _text(poly: dict) -> str:
    return "0" + "".join(f" {'-' if c < 0 else '+'} {'*'.join([str(abs(c)), *m])}"
                         for m, c in poly.items())


@pytest.mark.parametrize("text, canonical", [
    ("N", "N"), ("S1 + 2", "S1+2"), ("S1 - 1", "S1-1"), ("2*N", "N*2"), ("16*N", "N*16"),
    ("N*M", "M*N"), ("N + M", "M+N"), ("1 + N*N + 2*N", "N*N+N*2+1"), ("5 - N", "-N+5"),
    ("N - N + 3", 3), ("N*0 + 4", 4),
])
def test_canonical_forms(text, canonical):
    assert normalize_dim(text) == canonical


@pytest.mark.parametrize("text", ["", "N+", "*N", "N**2", "3N", "N M", "N/2", "(N)", "N-N-1"])
def test_malformed_dims_are_rejected(text):
    with pytest.raises(ShapeError, match="malformed symbolic dim|non-negative"):
        normalize_dim(text)


def test_exact_division_of_polynomials():
    assert dim_div("N*S1+N*2", "N") == "S1+2"
    assert dim_div("N*S1+N*2", "S1+2") == "N"
    assert dim_div("M*N+M+N+1", "N+1") == "M+1"
    assert dim_div("N*16", 4) == "N*4"
    assert dim_div("N+1", "N") is None
    assert dim_div("N*3", 2) is None


def test_symbols_substitution_and_solving():
    assert symbols_of("M*N+S1-1") == ("M", "N", "S1")
    assert substitute("N*S1+1", {"S1": 3}) == "N*3+1"
    assert substitute("S1-1", {"S1": 5}) == 4
    assert solve_dim("S1+2", 6, {}) == ("S1", 4)
    assert solve_dim("N*16", 48, {}) == ("N", 3)
    assert solve_dim("M*N-1", 11, {"M": 3}) == ("N", 4)
    assert solve_dim("N*2", 7, {}) == ("N", None)  # no integer fits
    assert solve_dim("M*N", 6, {}) is None  # two unknowns
    assert solve_dim("N*N", 9, {}) is None  # not linear


@given(st.sampled_from(SYMBOLS), st.integers(1, 4), st.integers(-3, 3), st.integers(3, 9))
def test_a_linear_dim_binds_its_symbol(symbol, coef, offset, size):
    dim = dim_add(dim_mul(symbol, coef), offset)
    env: dict = {}
    assert bind_shape((dim,), (coef * size + offset,), env) and env == {symbol: size}
    assert not bind_shape((dim, symbol), (coef * size + offset, size + 1), {})


def test_binding_checks_expressions_once_their_symbols_are_bound():
    env: dict = {}
    assert bind_shape(("N", "N+M", "M"), (2, 5, 3), env) and env == {"N": 2, "M": 3}
    assert not bind_shape(("N", "N+M", "M"), (2, 6, 3), {})
    assert bind_shape(("M*N",), (6,), {})  # not determined: accepted


def test_plans_solve_linear_dims_of_arguments_as_the_interpreter_does():
    fn = parse("""
func @f(%x: f32[S1-1,2], %y: f32[N*2]) -> f32[S1,N] {
  %z = broadcast_to %x {shape=[S1-1, 2]} : f32[S1-1,2]
  %r = const {value=1.0} : f32
  %s = broadcast_to %r {shape=[S1, N]} : f32[S1,N]
  return %s
}""").main
    args = [np.zeros((3, 2), np.float32), np.zeros(10, np.float32)]
    for result in (run(fn, *args)[0], compile_plan(fn)(*args)[0]):
        assert result.shape == (4, 5)


def test_a_symbol_against_a_static_dim_is_a_dim_mismatch():
    with pytest.raises(DimMismatch, match=r"dim S1\+1 against 4") as e:
        broadcast_shapes(("N", "S1+1"), (4,))
    assert (e.value.dim, e.value.size) == ("S1+1", 4)
    assert broadcast_shapes(("N", "S1-1"), (1,), ("S1-1",)) == ("N", "S1-1")
    with pytest.raises(ShapeError, match="dim S1 against M") as e:
        broadcast_shapes(("N", "S1"), ("M",))
    assert not isinstance(e.value, DimMismatch)


def test_the_parser_reports_bad_dims():
    with pytest.raises(ParseError, match="expected a dim"):
        parse("func @f(%x: f32[N+]) -> f32[N] {\n  return %x\n}")
