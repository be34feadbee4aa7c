"""`Signature`: the one check of the arrays a caller passes against argument types.

The rules: as many arrays as types; each array's dtype is its type's; static dims
are equal; a symbol (``N``) takes the size of its first occurrence, in argument
order, and every later occurrence must equal it; a product dim (``N*16``) is checked
once all its symbols are bound. Stacks pass unchecked.

The checks are precomputed per argument when the signature is made, so a call costs
a few integer comparisons per argument: the executor checks every call with it, the
interpreter too, and the frontend words its errors from the mismatch it reports.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from .core import Function
from .types import StackType, eval_dim, shape_str, symbols_of

_BIND, _SAME, _EQUAL, _PRODUCT = range(4)


class SignatureMismatch(InputError):
    """Argument `index` does not match; `kind` is ``"count"``, ``"dtype"`` or
    ``"shape"``."""

    def __init__(self, message: str, index: int, kind: str):
        super().__init__(message)
        self.index = index
        self.kind = kind


class Signature:
    def __init__(self, types: Sequence, names: Sequence[str | None] = (), owner: str = ""):
        self.types = tuple(types)
        self.owner = owner
        names = list(names) + [None] * (len(self.types) - len(names))
        self.symbols: dict[str, int] = {}
        self._params = tuple(self._param(i, t, names[i]) for i, t in enumerate(self.types))

    @classmethod
    def of(cls, fn: Function) -> "Signature":
        return cls(fn.arg_types, [a.name for a in fn.args], f"@{fn.name}")

    def _param(self, i: int, t, name: str | None):
        """None for a stack, else ``(np dtype, shape, rank, dim checks or None, what)``.
        The dim checks replay the rules above in argument order."""
        if isinstance(t, StackType):
            return None
        index = self.symbols
        dims = None
        if not t.is_static:
            dims, products = [], []
            for axis, d in enumerate(t.shape):
                if isinstance(d, int):
                    dims.append((_EQUAL, axis, d))
                elif "*" not in d:
                    dims.append((_SAME, axis, index[d]) if d in index
                                else (_BIND, axis, index.setdefault(d, len(index))))
                else:
                    products.append((axis, d))
            for axis, d in products:
                if all(s in index for s in symbols_of(d)):
                    dims.append((_PRODUCT, axis, (coefficient(d),
                                                  tuple(index[s] for s in symbols_of(d)))))
            dims = tuple(dims)
        what = f"argument {i} (%{name})" if name else f"argument {i}"
        return t.dtype.np, t.shape, t.rank, dims, what

    def check(self, args: Sequence) -> list:
        """The arguments as arrays (stacks as they are), or a `SignatureMismatch`."""
        return self.bind(args)[0]

    def bind(self, args: Sequence) -> tuple[list, dict[str, int]]:
        """`check`, and the size each symbol took."""
        owner = f"{self.owner}: " if self.owner else ""
        if len(args) != len(self._params):
            raise SignatureMismatch(f"{self.owner or 'the function'} takes {len(self._params)} "
                                    f"argument(s), got {len(args)}",
                                    min(len(args), len(self._params)), "count")
        sizes = [0] * len(self.symbols)
        arrays = []
        for i, (arg, param) in enumerate(zip(args, self._params)):
            if param is None:
                arrays.append(arg)
                continue
            array = np.asarray(arg)
            dtype, shape, rank, dims, what = param
            t = self.types[i]
            if array.dtype is not dtype and array.dtype != dtype:
                raise SignatureMismatch(f"{owner}{what}: expected dtype {t.dtype.name}, got "
                                        f"{array.dtype}", i, "dtype")
            if not (array.shape == shape if dims is None
                    else _match(array.shape, rank, dims, sizes)):
                raise SignatureMismatch(f"{owner}{what}: expected shape {shape_str(t.shape)}, "
                                        f"got {shape_str(array.shape)}", i, "shape")
            arrays.append(array)
        return arrays, {s: sizes[k] for s, k in self.symbols.items()}


def _match(shape: tuple[int, ...], rank: int, dims, sizes: list[int]) -> bool:
    if len(shape) != rank:
        return False
    for kind, axis, x in dims:
        if kind == _BIND:
            sizes[x] = shape[axis]
        elif kind == _SAME:
            if shape[axis] != sizes[x]:
                return False
        elif kind == _EQUAL:
            if shape[axis] != x:
                return False
        else:
            size, slots = x
            for s in slots:
                size *= sizes[s]
            if shape[axis] != size:
                return False
    return True


def coefficient(d: str) -> int:
    """The integer factor of a product dim: 16 for ``N*16``."""
    return eval_dim(d, dict.fromkeys(symbols_of(d), 1))
