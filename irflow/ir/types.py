"""Tensor types: a dtype and a shape whose dims are integers or symbols.

A symbolic dim stands for a size known only at run time, such as the batch size of an
``InputSpec([None, 784])``. It is spelled as a string: a symbol (``"N"``) or a product
of symbols and an integer factor in canonical form (``"N*16"``, ``"M*N"``), which is
what flattening a ``[N, 4, 4]`` tensor produces. Sums and differences of symbols are
not expressible; type rules that would need them raise a `ShapeError`.
"""
from __future__ import annotations

import math
import re

from ..errors import ShapeError
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

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(dtype, self.shape)

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


Type = TensorType | StackType


# ---------------------------------------------------------------- symbolic dims

def normalize_dim(d) -> Dim:
    """Canonical form of a dim: a non-negative int, or a canonical monomial string."""
    if isinstance(d, str):
        coef, syms = _monomial(d)
        return _format_monomial(coef, syms)
    if isinstance(d, bool) or not isinstance(d, int):
        try:
            d = int(d)  # numpy integers
        except (TypeError, ValueError):
            raise ShapeError(f"a dim must be an int or a symbol name, got {d!r}") from None
    if d < 0:
        raise ShapeError(f"a dim must be non-negative, got {d}")
    return d


def _monomial(d: Dim) -> tuple[int, tuple[str, ...]]:
    if isinstance(d, int):
        return d, ()
    coef, syms = 1, []
    for part in d.replace(" ", "").split("*"):
        if part.isdigit():
            coef *= int(part)
        elif _SYMBOL.match(part):
            syms.append(part)
        else:
            raise ShapeError(f"malformed symbolic dim {d!r}: expected symbols and integers "
                             f"joined by '*', such as 'N' or 'N*16'")
    return coef, tuple(sorted(syms))


def _format_monomial(coef: int, syms: tuple[str, ...]) -> Dim:
    if not syms or coef == 0:
        return coef
    text = "*".join(syms)
    return text if coef == 1 else f"{text}*{coef}"


def is_symbolic(d: Dim) -> bool:
    return isinstance(d, str)


def symbols_of(d: Dim) -> tuple[str, ...]:
    return _monomial(d)[1] if isinstance(d, str) else ()


def dim_mul(a: Dim, b: Dim) -> Dim:
    ca, sa = _monomial(a)
    cb, sb = _monomial(b)
    return _format_monomial(ca * cb, tuple(sorted(sa + sb)))


def dim_div(a: Dim, b: Dim) -> Dim | None:
    """``a / b`` when it is exact and expressible, else None."""
    ca, sa = _monomial(a)
    cb, sb = _monomial(b)
    if cb == 0 or ca % cb:
        return None
    rest = list(sa)
    for s in sb:
        if s not in rest:
            return None
        rest.remove(s)
    return _format_monomial(ca // cb, tuple(rest))


def numel(shape: Shape) -> Dim:
    n: Dim = 1
    for d in shape:
        n = dim_mul(n, d)
    return n


def eval_dim(d: Dim, bindings: dict[str, int]) -> int:
    """The integer value of a dim once its symbols are bound."""
    if isinstance(d, int):
        return d
    coef, syms = _monomial(d)
    return coef * math.prod(bindings[s] for s in syms)


def eval_shape(shape: Shape, bindings: dict[str, int]) -> tuple[int, ...]:
    return tuple(eval_dim(d, bindings) for d in shape)


def bind_shape(shape: Shape, actual: tuple[int, ...], bindings: dict[str, int]) -> bool:
    """Match a concrete shape against a (possibly symbolic) one, recording symbol
    values in `bindings`. Returns False on a mismatch. A product dim (``N*16``) is
    checked once all its symbols are bound, and otherwise accepted."""
    if len(shape) != len(actual):
        return False
    deferred = []
    for d, a in zip(shape, actual):
        if isinstance(d, int):
            if d != a:
                return False
        elif _SYMBOL.match(d):
            if bindings.setdefault(d, a) != a:
                return False
        else:
            deferred.append((d, a))
    for d, a in deferred:
        if all(s in bindings for s in symbols_of(d)) and eval_dim(d, bindings) != a:
            return False
    return True


# ---------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of possibly symbolic shapes. Two dims combine when equal or
    when one is 1; a symbol against a different symbol or integer is an error."""
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
                raise ShapeError(
                    "shapes " + " and ".join(_shape_str(s) for s in shapes)
                    + f" cannot be broadcast: dim {dim} against {d} at axis {i - rank}")
        out.append(dim)
    return tuple(out)


def _shape_str(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


shape_str = _shape_str
