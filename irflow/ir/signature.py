"""`Signature`: the one check of the arrays a caller passes against argument types.

The rules: as many arrays as types; each array's dtype is its type's; static dims
are equal; a symbol (``N``) takes the size of its first occurrence, in argument
order, and every later occurrence must equal it; then, as long as that makes
progress, an expression dim (``N*16``, ``S1+2``) is checked once all its symbols are
bound, or binds its one unbound symbol if that appears linearly. Stacks pass
unchecked.

The checks are precomputed per argument when the signature is made, so a call costs
a few integer comparisons per argument: the executor checks every call with it (a
`Plan.runner`, whose caller has checked the leading arguments, only the others'
static types, by `static_matcher`), the interpreter too, and the frontend words its
errors from the mismatch it reports.
"""
from __future__ import annotations

from functools import lru_cache
from operator import attrgetter
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from .core import Function
from .types import Container, dim_terms, is_symbol, shape_str, symbols_of

_BIND, _SAME, _EQUAL, _EXPR, _SOLVE = range(5)
_dtype, _shape = attrgetter("dtype"), attrgetter("shape")


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
        """None for a stack or list, else ``(np dtype, shape, rank, dim checks or None,
        what)``. The dim checks replay the rules above in argument order."""
        if isinstance(t, Container):
            return None
        index = self.symbols
        dims = None
        if not t.is_static:
            dims, expressions = [], []
            for axis, d in enumerate(t.shape):
                if isinstance(d, int):
                    dims.append((_EQUAL, axis, d))
                elif is_symbol(d):
                    dims.append((_SAME, axis, index[d]) if d in index
                                else (_BIND, axis, index.setdefault(d, len(index))))
                else:
                    expressions.append((axis, d))
            while expressions:
                waiting = []
                for axis, d in expressions:
                    unbound = [s for s in symbols_of(d) if s not in index]
                    if not unbound:
                        dims.append((_EXPR, axis, slot_terms(d, index)))
                    elif len(unbound) == 1 and _linear_in(d, unbound[0]):
                        dims.append((_SOLVE, axis, _solver(d, unbound[0], index)))
                    else:
                        waiting.append((axis, d))
                if len(waiting) == len(expressions):
                    break
                expressions = waiting
            dims = tuple(dims)
        what = f"argument {i} (%{name})" if name else f"argument {i}"
        return t.dtype.np, t.shape, t.rank, dims, what

    def check(self, args: Sequence) -> list:
        """The arguments as arrays (stacks as they are), or a `SignatureMismatch`."""
        return self.checked(args)[0]

    def bind(self, args: Sequence) -> tuple[list, dict[str, int]]:
        """`check`, and the size each symbol took."""
        arrays, sizes = self.checked(args)
        return arrays, {s: sizes[k] for s, k in self.symbols.items()}

    def checked(self, args: Sequence) -> tuple[list, list[int]]:
        """`check`, and the sizes of the symbols in the order of `symbols`' values (the
        per-call form of `bind`, without a dict)."""
        params = self._params
        if len(args) != len(params):
            raise SignatureMismatch(f"{self.owner or 'the function'} takes {len(params)} "
                                    f"argument(s), got {len(args)}",
                                    min(len(args), len(params)), "count")
        sizes = [0] * len(self.symbols)
        arrays = []
        for i, (arg, param) in enumerate(zip(args, params)):
            if param is None:
                arrays.append(arg)
                continue
            array = arg if type(arg) is np.ndarray else np.asarray(arg)
            dtype, shape, rank, dims, what = param
            if array.dtype is not dtype and array.dtype != dtype:
                raise self._mismatch(i, array, "dtype")
            if not (array.shape == shape if dims is None
                    else _match(array.shape, rank, dims, sizes)):
                raise self._mismatch(i, array, "shape")
            arrays.append(array)
        return arrays, sizes

    def static_matcher(self, start: int) -> Callable[[Sequence], bool] | None:
        """``matches(args)``: whether the arguments from `start` on are arrays of
        exactly their types, for a caller that has checked those before it (a
        mismatch is never raised here: `checked` says what it is); None if one of
        their types has a symbolic dim or is a stack or list. It runs on every call
        of a `Plan.runner` (the state arguments), so for up to `_UNROLLED` arguments
        it is one generated function, half the cost of mapping over them."""
        params = self._params[start:]
        if any(p is None or p[3] is not None for p in params):
            return None
        dtypes = [p[0] for p in params]
        shapes = [p[1] for p in params]
        count = len(self._params)
        if len(params) <= _UNROLLED:
            typed = [v for pair in zip(dtypes, shapes) for v in pair]
            return _unrolled_matcher(start, len(params))(np.ndarray, *typed)
        arrays = [np.ndarray] * len(params)

        def matches(args: Sequence) -> bool:
            tail = args[start:]
            return (len(args) == count and list(map(type, tail)) == arrays
                    and list(map(_dtype, tail)) == dtypes and list(map(_shape, tail)) == shapes)
        return matches

    def _mismatch(self, i: int, array: np.ndarray, kind: str) -> SignatureMismatch:
        owner = f"{self.owner}: " if self.owner else ""
        t, what = self.types[i], self._params[i][4]
        if kind == "dtype":
            return SignatureMismatch(f"{owner}{what}: expected dtype {t.dtype.name}, got "
                                     f"{array.dtype}", i, kind)
        return SignatureMismatch(f"{owner}{what}: expected shape {shape_str(t.shape)}, "
                                 f"got {shape_str(array.shape)}", i, kind)


# Matchers over more arguments than this map over them: generating one for thousands of
# parameters would take a second.
_UNROLLED = 64


@lru_cache(maxsize=None)
def _unrolled_matcher(start: int, n: int) -> Callable[..., Callable[[Sequence], bool]]:
    """``make(ndarray, dtype0, shape0, dtype1, shape1, ...)`` making the `static_matcher`
    of `n` arguments from `start` on, of `start + n` in all; for one::

        def make(ndarray, d0, s0):
            def matches(args):
                if len(args) != 2:
                    return False
                x = args[1]
                if type(x) is not ndarray or x.shape != s0 or (x.dtype is not d0 and ...
                    return False

    (the dtype compared by identity first, then by equality, as a list compares)
                return True
            return matches
    """
    body = [f"if len(args) != {start + n}:", "    return False"]
    for i in range(n):
        body += [f"x = args[{start + i}]",
                 f"if type(x) is not ndarray or x.shape != s{i} or (x.dtype is not d{i}"
                 f" and x.dtype != d{i}):",
                 "    return False"]
    body.append("return True")
    params = ", ".join(["ndarray"] + [f"d{i}, s{i}" for i in range(n)])
    source = (f"def make({params}):\n    def matches(args):\n"
              + "".join(f"        {line}\n" for line in body) + "    return matches\n")
    namespace: dict = {}
    exec(compile(source, f"<irflow matcher {start}:{n}>", "exec"), namespace)
    return namespace["make"]


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
        elif kind == _EXPR:
            if shape[axis] != evaluate_terms(x, sizes):
                return False
        else:
            slot, coef_terms, rest_terms = x
            coef = evaluate_terms(coef_terms, sizes)
            rest = shape[axis] - evaluate_terms(rest_terms, sizes)
            if coef:
                if rest % coef or rest // coef < 0:
                    return False
                sizes[slot] = rest // coef
    return True


def _linear_in(d, symbol: str) -> bool:
    return all(syms.count(symbol) <= 1 for _, syms in dim_terms(d))


def _solver(d, symbol: str, index: dict[str, int]):
    """``(slot, coefficient terms, other terms)`` of a dim linear in the unbound
    `symbol`, which gets the next slot."""
    slot = index.setdefault(symbol, len(index))
    coef, rest = [], []
    for c, syms in dim_terms(d):
        if symbol in syms:
            coef.append((c, tuple(index[s] for s in syms if s != symbol)))
        else:
            rest.append((c, tuple(index[s] for s in syms)))
    return slot, tuple(coef), tuple(rest)


def slot_terms(d, slot: dict[str, int]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """A dim's terms as ``(coefficient, slots of its symbols)``, for `evaluate_terms`
    over a list of sizes (the executor's registers)."""
    return tuple((coef, tuple(slot[s] for s in syms)) for coef, syms in dim_terms(d))


def evaluate_terms(terms, sizes: list) -> int:
    total = 0
    for size, slots in terms:
        for slot in slots:
            size *= sizes[slot]
        total += size
    return total
