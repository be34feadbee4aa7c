"""Reads the IR text written by `irflow.ir.printer` back into a `Module`.

A hand-written lexer and recursive-descent parser; errors are `ParseError`s that give
the line and column. Names resolve lexically (a region sees the names of enclosing
scopes), so that IR whose region uses an outer value parses and the verifier can
explain that regions are closed. ``//`` starts a comment that runs to the end of
the line, which lets pass tests keep ``// CHECK:`` lines beside their input.

Grammar (``x?`` optional, ``x*`` repeated, ``,*`` comma-separated):

    module   := function*
    function := 'func' '@'NAME '(' (VALUE ':' type),* ')' '->' types '{' op* '}'
    op       := (VALUE,* '=')? OPNAME VALUE,* attrs? (':' types)? loc? region*
    attrs    := '{' (NAME '=' attr),* '}'     (a NAME with a dot is an annotation)
    attr     := NUMBER | STRING | 'true' | 'false' | 'None' | dtype | '@'NAME
              | '[' (attr | dim),* ']'
    types    := type | '(' type,* ')'
    type     := tensor | 'stack' '<' tensor,* '>'
    tensor   := dtype ('[' dim,* ']')?        dim := '-'? factor (('+'|'-'|'*') factor)*
    factor   := INT | SYMBOL
    region   := '{' '^'NAME '(' (VALUE ':' type),* ')' ':' op* '}'
    loc      := 'loc' '(' STRING ':' INT ')'
"""
from __future__ import annotations

import json
import re
from typing import Iterator

import numpy as np

from ..errors import IrflowError, Location, ParseError
from . import dtypes
from .core import Block, Function, Module, Operation, Region, Value
from .registry import is_registered, lookup
from .symbols import FuncRef, bind_symbols
from .types import ListType, StackType, TensorType, Type, normalize_dim

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|//[^\n]*)
  | (?P<nl>\n)
  | (?P<value>%[A-Za-z0-9_.]+)
  | (?P<func>@[A-Za-z0-9_.]+)
  | (?P<label>\^[A-Za-z0-9_.]+)
  | (?P<number>-?(?:inf|nan)\b|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<arrow>->)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[()\[\]{},:=*+\-<>])
""", re.VERBOSE)


class Token:
    __slots__ = ("kind", "text", "line", "col")

    def __init__(self, kind, text, line, col):
        self.kind, self.text, self.line, self.col = kind, text, line, col

    def __repr__(self) -> str:
        return f"{self.kind}:{self.text!r}@{self.line}:{self.col}"


def tokenize(text: str) -> Iterator[Token]:
    """The tokens of `text`, made as the parser asks for them (so that a large text
    never holds all its tokens at once), ending with an ``eof`` token."""
    line, line_start, pos = 1, 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(f"line {line}, column {pos - line_start + 1}: unexpected "
                             f"character {text[pos]!r}")
        kind = m.lastgroup
        if kind == "nl":
            line, line_start = line + 1, m.end()
        elif kind != "ws":
            yield Token(kind, m.group(), line, pos - line_start + 1)
        pos = m.end()
    yield Token("eof", "", line, pos - line_start + 1)


class Parser:
    def __init__(self, text: str, filename: str = "<ir>"):
        self.filename = filename
        self._tokens = tokenize(text)
        self.tok: Token = next(self._tokens)
        self.scopes: list[dict[str, Value]] = []
        self.last_op: Token = self.tok

    # -- token helpers
    def advance(self) -> Token:
        """Move to the next token; returns the one moved past."""
        tok = self.tok
        if tok.kind != "eof":
            self.tok = next(self._tokens)
        return tok

    def error(self, message: str, tok: Token | None = None) -> ParseError:
        tok = tok or self.tok
        found = repr(tok.text) if tok.kind != "eof" else "end of input"
        return ParseError(f"line {tok.line}, column {tok.col}: {message} (found {found})")

    def at(self, text: str) -> bool:
        return self.tok.text == text and self.tok.kind in ("punct", "arrow", "ident")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.advance()
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.error(f"expected '{text}'")
        return self.advance()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what}")
        return self.advance()

    def comma_list(self, item, close: str) -> list:
        items = []
        if self.accept(close):
            return items
        while True:
            items.append(item())
            if self.accept(close):
                return items
            self.expect(",")

    # -- names
    def define(self, tok: Token, value: Value) -> None:
        name = tok.text[1:]
        if name in self.scopes[-1]:
            raise self.error(f"%{name} is defined twice", tok)
        self.scopes[-1][name] = value
        value.name = None if name.isdigit() else name

    def use(self) -> Value:
        tok = self.expect_kind("value", "a %value")
        name = tok.text[1:]
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise self.error(f"use of undefined value %{name}", tok)

    # -- types
    def type(self) -> Type:
        if self.accept("stack"):
            self.expect("<")
            return StackType(self.comma_list(self.tensor_type, ">"))
        if self.accept("list"):
            self.expect("<")
            elem = self.tensor_type()
            self.expect(">")
            return ListType(elem)
        return self.tensor_type()

    def tensor_type(self) -> TensorType:
        tok = self.expect_kind("ident", "a type such as f32[4,8]")
        try:
            dt = dtypes.dtype(tok.text)
        except TypeError:
            raise self.error("expected a dtype (f32, f64, i32, i64, bool)", tok) from None
        dims = []
        if self.accept("["):
            dims = self.comma_list(self.dim, "]")
        try:
            return TensorType(dt, dims)
        except IrflowError as e:
            raise self.error(e.message, tok) from None

    def dim(self):
        """An integer or a symbolic expression (``N``, ``N*16``, ``S1+2``, ``M-N``):
        operands (integers, symbols) and the operators + - * in turn. A number token
        with a sign (``-1`` in ``S1-1``) is an operator and an operand."""
        start, text, operand = self.tok, "", True
        while True:
            tok = self.tok
            if operand and (tok.kind == "ident" or tok.kind == "number" and tok.text.isdigit()):
                operand = False
            elif operand and tok.text == "-" and not text:
                pass
            elif not operand and tok.text in ("*", "+", "-"):
                operand = True
            elif not operand and tok.kind == "number" and tok.text[:1] == "-" \
                    and tok.text[1:].isdigit():
                pass
            else:
                break
            text += tok.text
            self.advance()
        if operand:
            raise self.error("expected a dim (an integer or a symbolic expression)")
        try:
            return normalize_dim(text)
        except IrflowError as e:
            raise self.error(e.message, start) from None

    def types(self) -> list[TensorType]:
        if self.accept("("):
            return self.comma_list(self.type, ")")
        return [self.type()]

    # -- attributes
    def attr(self):
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            text = tok.text
            if text.lstrip("-").isdigit():
                return int(text)
            return float(text)
        if tok.kind == "string":
            self.advance()
            return json.loads(tok.text)
        if tok.kind == "func":
            self.advance()
            return FuncRef(tok.text[1:])
        if self.accept("["):
            return tuple(self.comma_list(self.list_item, "]"))
        if tok.kind == "ident":
            self.advance()
            if tok.text in ("true", "false"):
                return tok.text == "true"
            if tok.text == "None":
                return None
            try:
                return dtypes.dtype(tok.text)
            except TypeError:
                pass
        raise self.error("expected an attribute value")

    def list_item(self):
        """An element of a list attribute: an attribute, or a symbolic dim (``N``,
        ``N*16``, ``S1+2``) as in ``shape=[N, 4]``."""
        tok = self.tok
        if tok.kind == "ident" and tok.text not in ("true", "false", "None"):
            try:
                dtypes.dtype(tok.text)
            except TypeError:
                return self.dim()
        return self.attr()

    def attrs(self) -> dict:
        out = {}

        def item():
            key = self.expect_kind("ident", "an attribute name")
            self.expect("=")
            if key.text in out:
                raise self.error(f"attribute '{key.text}' is given twice", key)
            out[key.text] = self.attr()
        self.comma_list(item, "}")
        return out

    # -- structure
    def module(self) -> Module:
        module = Module()
        while self.tok.kind != "eof":
            start = self.tok
            fn = self.function()
            if fn.name in module.functions:
                raise self.error(f"function @{fn.name} is defined twice", start)
            module.add(fn)
        bind_symbols(module)
        return module

    def block_args(self, block: Block) -> None:
        self.expect("(")

        def arg():
            tok = self.expect_kind("value", "a %argument")
            self.expect(":")
            self.define(tok, block.add_arg(self.type()))
        self.comma_list(arg, ")")

    def function(self) -> Function:
        self.expect("func")
        name = self.expect_kind("func", "a function name such as @forward").text[1:]
        fn = Function(name)
        self.scopes.append({})
        self.block_args(fn.block)
        self.expect("->")
        declared = self.types()
        self.expect("{")
        self.ops_until_close(fn.block)
        self.scopes.pop()
        if fn.return_op is not None and list(fn.result_types) != declared:
            raise self.error("the function's return types ("
                             + ", ".join(map(str, fn.result_types))
                             + ") differ from its signature ("
                             + ", ".join(map(str, declared)) + ")", self.last_op)
        return fn

    def ops_until_close(self, block: Block) -> None:
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}' to close the block")
            block.append(self.op())
        self.expect("}")

    def region(self) -> Region:
        self.expect("{")
        self.expect_kind("label", "a block label such as ^then")
        block = Block()
        self.scopes.append({})
        self.block_args(block)
        self.expect(":")
        self.ops_until_close(block)
        self.scopes.pop()
        return Region([block])

    def op(self) -> Operation:
        start = self.last_op = self.tok  # the last op's start: where `return` was read
        result_toks = []
        if self.tok.kind == "value":
            result_toks = self.comma_list_until("=")
        name_tok = self.expect_kind("ident", "an op name")
        if not is_registered(name_tok.text):
            raise self.error(f"unknown op '{name_tok.text}'", name_tok)
        opdef = lookup(name_tok.text)
        operands = []
        if self.tok.kind == "value":
            operands.append(self.use())
            while self.accept(","):
                operands.append(self.use())
        attrs = self.attrs() if self.accept("{") else {}
        annotations = {k: attrs.pop(k) for k in [k for k in attrs if "." in k]}
        result_types = []
        if self.accept(":"):
            result_types = self.types()
        if len(result_types) != len(result_toks):
            raise self.error(f"{name_tok.text} names {len(result_toks)} result(s) but "
                             f"gives {len(result_types)} type(s)", start)
        loc = self.loc() if self.at("loc") else Location(self.filename, start.line, start.col)
        regions = []
        while self.at("{"):
            regions.append(self.region())
        if opdef.name == "const" and "value" in attrs and result_types:
            # The literal's dtype is the result type's: 1.0 may be f32 or f64.
            dtype = result_types[0].dtype
            try:
                with np.errstate(over="raise"):
                    attrs["value"] = _literal(attrs["value"], dtype)
            except (OverflowError, FloatingPointError):
                raise self.error(f"const: a literal of the value does not fit {dtype.short}",
                                 name_tok) from None
            except (ValueError, TypeError):
                raise self.error(f"const: the value is not a {dtype.short} literal or a "
                                 "rectangular list of them", name_tok) from None
        try:
            attrs = opdef.complete_attrs(attrs, [v.type for v in operands])
        except IrflowError as e:
            raise self.error(f"{name_tok.text}: {e.message}", name_tok) from None
        op = Operation(name_tok.text, operands, result_types, attrs, regions, loc,
                       annotations=annotations)
        for tok, result in zip(result_toks, op.results):
            self.define(tok, result)
        return op

    def comma_list_until(self, end: str) -> list[Token]:
        toks = [self.expect_kind("value", "a %result")]
        while self.accept(","):
            toks.append(self.expect_kind("value", "a %result"))
        self.expect(end)
        return toks

    def loc(self) -> Location:
        self.expect("loc")
        self.expect("(")
        file = json.loads(self.expect_kind("string", "a file name").text)
        self.expect(":")
        line = self.expect_kind("number", "a line number")
        self.expect(")")
        return Location(file, int(line.text))


def _literal(value, dtype: dtypes.DType) -> np.ndarray:
    """A const's literal as an array of `dtype`; a bfloat16 one is written as the
    values (the printer's form), stored as their bits, a NaN's sign kept."""
    if dtype is not dtypes.bfloat16:
        return np.asarray(value, dtype=dtype.np)
    values = np.asarray(value, dtype=np.float32)
    signs = (np.signbit(values) & np.isnan(values)).astype(np.uint16) << np.uint16(15)
    return np.asarray(dtypes.to_bfloat16_bits(values) | signs, dtype=np.uint16)


def parse(text: str, filename: str = "<ir>") -> Module:
    """The `Module` that `text` (as printed by `str(module)`) describes. Each op's
    location is its ``loc(...)`` if it has one, else its line and column in `text`
    (under `filename`), so that verifier errors point into the text."""
    return Parser(text, filename).module()
