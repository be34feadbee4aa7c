"""Matrix functions of Paddle's tensor API: einsum and the triangles tril/triu."""
from __future__ import annotations

from ..dispatch import apply
from .convert import as_tensor
from .manipulation import _same_dtype
from .tensor import Tensor


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation over `operands` (which may also come as one list)."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return apply("einsum", _same_dtype([as_tensor(t) for t in operands]),
                 {"equation": equation})


def tril(x, diagonal=0, name=None) -> Tensor:
    """x's lower triangle (last two axes): zeros above the `diagonal`-th diagonal."""
    return apply("tril", (as_tensor(x),), {"diagonal": int(diagonal)})


def triu(x, diagonal=0, name=None) -> Tensor:
    """x's upper triangle (last two axes): zeros below the `diagonal`-th diagonal."""
    return apply("triu", (as_tensor(x),), {"diagonal": int(diagonal)})
