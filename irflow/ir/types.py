"""Tensor types: a dtype and a shape whose dims are integers or symbolic expressions.

A symbolic dim stands for a size known only at run time, such as the batch size of an
``InputSpec([None, 784])``. It is an integer polynomial of symbols, spelled as a
string in one canonical form: terms by falling degree, each a product of sorted
symbols with the integer factor last, the constant last (``"N"``, ``"S1+2"``,
``"S1-1"``, ``"N*2"``, ``"N*16"``, ``"M+N"``). So two dims are equal exactly when
their strings are, a dim with no symbols left is an int (``S1 - S1`` is 0), and
flattening ``[N, 4, 4]`` then reshaping back gives ``[N, 4, 4]``. `dim_add`,
`dim_sub`, `dim_mul` and `dim_div` compute with dims; `eval_dim` evaluates one once
its symbols are bound, and `bind_shape` binds symbols from actual sizes.

Where a type rule needs a symbolic dim to equal a static one (``S1`` against 784), or
two different symbols to be equal, it raises `DimMismatch`; see
`irflow.frontend.program` for how compiling resolves it.
"""
from __future__ import annotations

import math
import re

from ..errors import DimMismatch, ShapeError
from . import dtypes as _dt
from .dtypes import DType

Dim = int | str
Shape = tuple[Dim, ...]

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class TensorType:
    """The type of a value: ``f32[N,784]``; a 0-d tensor prints as just ``f32``."""

    __slots__ = ("dtype", "shape", "_hash")

    def __init__(self, dtype, shape=()):
        self.dtype: DType = _dt.dtype(dtype)
        self.shape: Shape = tuple(normalize_dim(d) for d in shape)
        self._hash = hash((self.dtype.name, self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def with_shape(self, shape) -> "TensorType":
        return TensorType(self.dtype, shape)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorType) and self.dtype is other.dtype
                and self.shape == other.shape)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        if not self.shape:
            return self.dtype.short
        return f"{self.dtype.short}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"TensorType({self})"


class StackType:
    """``stack<f32[N,4], i64>``: a last-in first-out stack of records, each holding one
    tensor of every listed type. Stack values are functional (pushing gives a new
    stack), never enter arithmetic, and exist so that reverse-mode autodiff can record
    the carried values of each iteration of a ``while`` loop."""

    __slots__ = ("elems", "_hash")

    def __init__(self, elems=()):
        self.elems: tuple[TensorType, ...] = tuple(elems)
        self._hash = hash(("stack", self.elems))

    def __eq__(self, other) -> bool:
        return isinstance(other, StackType) and self.elems == other.elems

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return "stack<" + ", ".join(str(t) for t in self.elems) + ">"

    def __repr__(self) -> str:
        return f"StackType({self})"


class ListType:
    """``list<f32[N,4]>``: a list of tensors of one type, whose length is known only
    when the program runs: what a Python list appended to in a tensor-dependent loop
    becomes (``outs.append(h)``), and Paddle's tensor arrays. List values are
    functional (appending gives a new list); a list of float tensors carries
    gradients (a list of their cotangents)."""

    __slots__ = ("elem", "_hash")

    def __init__(self, elem: TensorType):
        self.elem = elem
        self._hash = hash(("list", elem))

    def __eq__(self, other) -> bool:
        return isinstance(other, ListType) and self.elem == other.elem

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"list<{self.elem}>"

    def __repr__(self) -> str:
        return f"ListType({self})"


Type = TensorType | StackType | ListType
Container = StackType | ListType  # types whose values are not arrays


def differentiable(t) -> bool:
    """Whether values of type `t` carry gradients: float tensors, lists of them."""
    if isinstance(t, ListType):
        t = t.elem
    return isinstance(t, TensorType) and t.dtype.is_float


# ---------------------------------------------------------------- symbolic dims
#
# A symbolic dim is its canonical text. Internally it is a polynomial: a dict from
# monomials (sorted tuples of symbol names, repeated for powers; () for the constant)
# to non-zero integer coefficients.

_Poly = dict[tuple[str, ...], int]
_TOKEN = r"\d+|[A-Za-z_][A-Za-z0-9_]*|[-+*]"
_DIM_TOKEN = re.compile(_TOKEN)
_DIM_TEXT = re.compile(rf"(\s*({_TOKEN}))*\s*")


def normalize_dim(d) -> Dim:
    """Canonical form of a dim: a non-negative int, or the canonical text of a
    polynomial with symbols (``"2*N + 1"`` becomes ``"N*2+1"``)."""
    if isinstance(d, str):
        d = _format(_parse(d))
        if isinstance(d, str):
            return d
    if isinstance(d, bool) or not isinstance(d, int):
        try:
            d = int(d)  # numpy integers
        except (TypeError, ValueError):
            raise ShapeError(f"a dim must be an int or a symbolic expression, got {d!r}") \
                from None
    if d < 0:
        raise ShapeError(f"a dim must be non-negative, got {d}")
    return d


def _parse(text: str) -> _Poly:
    """The polynomial of ``['-'] term (('+'|'-') term)*``, a term being factors
    (integers and symbols) joined by '*'."""
    if not _DIM_TEXT.fullmatch(text):
        raise _malformed(text)
    tokens = _DIM_TOKEN.findall(text)
    poly: _Poly = {}
    sign, i = (-1, 1) if tokens[:1] == ["-"] else (1, 0)
    while True:
        coef, syms = sign, []
        while True:
            if i == len(tokens) or tokens[i] in "+-*":
                raise _malformed(text)
            if tokens[i].isdigit():
                coef *= int(tokens[i])
            else:
                syms.append(tokens[i])
            i += 1
            if i == len(tokens) or tokens[i] != "*":
                break
            i += 1
        _add_term(poly, tuple(sorted(syms)), coef)
        if i == len(tokens):
            return poly
        if tokens[i] not in "+-":
            raise _malformed(text)
        sign = 1 if tokens[i] == "+" else -1
        i += 1


def _malformed(text: str) -> ShapeError:
    return ShapeError(f"malformed symbolic dim {text!r}: expected a sum of products of "
                      f"symbols and integers, such as 'N', 'N*16' or 'S1+2'")


def _add_term(poly: _Poly, mono: tuple[str, ...], coef: int) -> None:
    total = poly.get(mono, 0) + coef
    if total:
        poly[mono] = total
    else:
        poly.pop(mono, None)


def _poly(d: Dim) -> _Poly:
    if isinstance(d, str):
        return _parse(d)
    return {(): d} if d else {}


def _format(poly: _Poly) -> Dim:
    """The canonical text: terms by falling degree, then by their symbols; the
    constant last. A polynomial without symbols is a plain int."""
    if all(not mono for mono in poly):
        return poly.get((), 0)
    text = ""
    for mono in sorted(poly, key=_term_order):
        coef = poly[mono]
        factors = [*mono, str(abs(coef))] if abs(coef) != 1 or not mono else list(mono)
        text += ("-" if coef < 0 else "+" if text else "") + "*".join(factors)
    return text


def is_symbol(d: Dim) -> bool:
    """Whether `d` is a single symbol (``N``), which an actual size binds directly."""
    return isinstance(d, str) and bool(_SYMBOL.match(d))


def is_dim_text(value) -> bool:
    """Whether a string is a symbolic dim in canonical form starting with a symbol
    (how a dim prints bare in list attributes: ``shape=[N, S1+2]``)."""
    if not (isinstance(value, str) and (value[:1].isalpha() or value[:1] == "_")):
        return False
    try:
        return normalize_dim(value) == value
    except ShapeError:
        return False


def symbols_of(d: Dim) -> tuple[str, ...]:
    """The distinct symbols of a dim, sorted."""
    if not isinstance(d, str):
        return ()
    return tuple(sorted({s for mono in _parse(d) for s in mono}))


def dim_terms(d: Dim) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """``(coefficient, symbols)`` per term of a dim (symbols repeat for powers)."""
    return tuple((coef, mono) for mono, coef in _poly(d).items())


def _combine(a: Dim, b: Dim, sign: int) -> Dim:
    poly = _poly(a)
    for mono, coef in _poly(b).items():
        _add_term(poly, mono, sign * coef)
    return _format(poly)


def dim_add(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:
        return a + b
    return _combine(a, b, 1)


def dim_sub(a: Dim, b: Dim) -> Dim:
    """``a - b``; it may be a negative int (callers check sizes)."""
    if type(a) is int and type(b) is int:
        return a - b
    return _combine(a, b, -1)


def _mul(pa: _Poly, pb: _Poly) -> _Poly:
    out: _Poly = {}
    for ma, ca in pa.items():
        for mb, cb in pb.items():
            _add_term(out, tuple(sorted(ma + mb)), ca * cb)
    return out


def dim_mul(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:
        return a * b
    return _format(_mul(_poly(a), _poly(b)))


def _term_order(mono: tuple[str, ...]) -> tuple:
    """Graded order: higher degree first, then by symbols (a monomial order, so the
    leading term of a product is the product of the leading terms)."""
    return -len(mono), mono


def _leading(poly: _Poly) -> tuple[str, ...]:
    return min(poly, key=_term_order)


def dim_div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when it is a polynomial (exact division), else None."""
    if type(a) is int and type(b) is int:
        return a // b if b and not a % b else None
    rest, divisor = _poly(a), _poly(b)
    if not divisor:
        return None
    lead = _leading(divisor)
    quotient: _Poly = {}
    while rest:
        top = _leading(rest)
        left = list(top)
        for s in lead:
            if s not in left:
                return None
            left.remove(s)
        if rest[top] % divisor[lead]:
            return None
        mono, coef = tuple(left), rest[top] // divisor[lead]
        _add_term(quotient, mono, coef)
        for m, c in _mul({mono: coef}, divisor).items():
            _add_term(rest, m, -c)
    return _format(quotient)


def numel(shape: Shape) -> Dim:
    n: Dim = 1
    for d in shape:
        n = dim_mul(n, d)
    return n


def eval_dim(d: Dim, bindings: dict[str, int]) -> int:
    """The integer value of a dim once its symbols are bound."""
    if isinstance(d, int):
        return d
    if d in bindings:
        return bindings[d]
    return sum(coef * math.prod(bindings[s] for s in mono) for mono, coef in _parse(d).items())


def eval_shape(shape: Shape, bindings: dict[str, int]) -> tuple[int, ...]:
    """A shape (or a tuple of slice bounds, whose Nones stay) with its dims evaluated."""
    return tuple(d if d is None else eval_dim(d, bindings) for d in shape)


def substitute(d: Dim, values: dict[str, Dim]) -> Dim:
    """`d` with the symbols in `values` replaced by their values (sizes, or dims)."""
    if not isinstance(d, str):
        return d
    out: Dim = 0
    for mono, coef in _parse(d).items():
        term: Dim = coef
        for s in mono:
            term = dim_mul(term, values.get(s, s))
        out = dim_add(out, term)
    return out


def substitute_type(t, values: dict[str, Dim]):
    """Type `t` with the symbols in `values` replaced in its dims (and its elements')."""
    if isinstance(t, TensorType):
        return t.with_shape([substitute(d, values) for d in t.shape])
    if isinstance(t, ListType):
        return ListType(substitute_type(t.elem, values))
    return StackType(substitute_type(e, values) for e in t.elems)


def solve_dim(d: Dim, size: int, bindings: dict[str, int]) -> tuple[str, int | None] | None:
    """``(symbol, value)`` making `d` equal `size`, when `d` has one symbol not in
    `bindings` and that symbol appears linearly (``S1 + 2``, ``N*16``, ``M*N - 1``
    with M bound); the value is None when no non-negative integer fits. None when `d`
    is not of that form."""
    poly = _poly(d)
    unbound = {s for mono in poly for s in mono if s not in bindings}
    if len(unbound) != 1:
        return None
    (symbol,) = unbound
    coef, rest = 0, size
    for mono, c in poly.items():
        power = mono.count(symbol)
        if power > 1:
            return None
        value = c * math.prod(bindings[s] for s in mono if s != symbol)
        if power:
            coef += value
        else:
            rest -= value
    if not coef:
        return None
    if rest % coef or rest // coef < 0:
        return symbol, None
    return symbol, rest // coef


def bind_shape(shape: Shape, actual: tuple[int, ...], bindings: dict[str, int]) -> bool:
    """Match a concrete shape against a (possibly symbolic) one, recording symbol
    values in `bindings`. Returns False on a mismatch. A single symbol binds from its
    size; an expression is checked once all its symbols are bound, binds its one
    unbound symbol when that appears linearly (``S1 - 1`` binds S1), and is otherwise
    accepted."""
    if len(shape) != len(actual):
        return False
    pending = []
    for d, a in zip(shape, actual):
        if isinstance(d, int):
            if d != a:
                return False
        elif _SYMBOL.match(d):
            if bindings.setdefault(d, a) != a:
                return False
        else:
            pending.append((d, a))
    while pending:
        waiting = []
        for d, a in pending:
            if all(s in bindings for s in symbols_of(d)):
                if eval_dim(d, bindings) != a:
                    return False
                continue
            solved = solve_dim(d, a, bindings)
            if solved is None:
                waiting.append((d, a))
            elif solved[1] is None:
                return False
            else:
                bindings[solved[0]] = solved[1]
        if len(waiting) == len(pending):
            return True
        pending = waiting
    return True


def mismatch(a: Dim, b: Dim, message: str) -> ShapeError:
    """The error for dims `a` and `b` that a rule needs equal: a `DimMismatch` when one
    is static and the other symbolic, or both are plain symbols (the frontend can fix
    a symbol), else a `ShapeError`."""
    if _fixable(a, b):
        dim, size = (b, a) if isinstance(a, int) else (a, b)
        return DimMismatch(message, dim, size)
    return ShapeError(message)


def _fixable(a: Dim, b: Dim) -> bool:
    if isinstance(a, int) != isinstance(b, int):
        return True
    return isinstance(a, str) and bool(_SYMBOL.match(a)) and bool(_SYMBOL.match(b))


def reworded(e: ShapeError, message: str) -> ShapeError:
    """`e` with another message, keeping what a `DimMismatch` says about its dims."""
    if isinstance(e, DimMismatch):
        return DimMismatch(message, e.dim, e.size)
    return ShapeError(message)


def check_same_shape(a: Shape, b: Shape, message: str) -> None:
    """Raise unless shapes `a` and `b` are equal: a `DimMismatch` for their first
    differing dims when every difference could be fixed (a static dim against a
    symbolic one, or two plain symbols), else a `ShapeError`."""
    if a == b:
        return
    pairs = [(x, y) for x, y in zip(a, b) if x != y]
    if len(a) != len(b) or not all(_fixable(x, y) for x, y in pairs):
        raise ShapeError(message)
    raise mismatch(*pairs[0], message)


# ---------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of possibly symbolic shapes. Two dims combine when equal or
    when one is 1. A symbolic dim against a static one other than 1, or two different
    plain symbols, is a `DimMismatch`; other differences are a `ShapeError`."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dim: Dim = 1
        for s in shapes:
            j = len(s) - rank + i
            if j < 0:
                continue
            d = s[j]
            if d == 1:
                continue
            if dim == 1:
                dim = d
            elif dim != d:
                raise mismatch(dim, d, "shapes " + " and ".join(_shape_str(s) for s in shapes)
                               + f" cannot be broadcast: dim {dim} against {d} at axis "
                               f"{i - rank}")
        out.append(dim)
    return tuple(out)


def _shape_str(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


shape_str = _shape_str
