"""Nested Python structures (tuples, lists, dicts) as a flat list of leaves and a
`Structure` that rebuilds them, as JAX's pytrees.

A converted ``if`` whose branches give a variable the value ``(h, [c, n])`` yields the
leaves ``h, c, n`` from the ``cond`` and rebuilds the tuple afterwards; a loop carries
the leaves of its state the same way. Two values merge only if their structures are
equal. Leaves are everything else: tensors, numbers, strings, None, any object. A
compiled call's arguments are flattened with ``constants=True``: a None, bool, number
or string among them is part of the structure (`Constant`), not a leaf.
"""
from __future__ import annotations

from itertools import accumulate
from typing import Any, Callable

from ..ir.registry import attr_key


class ReturnValue:
    """What a converted ``return e`` stores in the function's return variable: the
    value and the line of the ``return``, so that branches returning different
    structures can be named in the error."""

    __slots__ = ("value", "line")

    def __init__(self, value, line: int):
        self.value, self.line = value, line


class Structure:
    """The shape of a nested value: a container kind with child structures, or a
    leaf (`LEAF`)."""

    __slots__ = ("kind", "keys", "children", "n_leaves", "_hash")

    def __init__(self, kind, keys=(), children=()):
        self.kind, self.keys, self.children = kind, tuple(keys), tuple(children)
        self.n_leaves = 1 if kind is None else sum(c.n_leaves for c in children)
        self._hash = None  # made on first use: a compiled call's key holds structures

    def __eq__(self, other) -> bool:
        """Equal shapes; the line a `ReturnValue` records does not count."""
        return (isinstance(other, Structure) and self.kind is other.kind
                and (self.kind is ReturnValue or self.keys == other.keys)
                and self.children == other.children)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.kind, self.keys if self.kind is not ReturnValue else (),
                               self.children))
        return self._hash


LEAF = Structure(None)


class Constant(Structure):
    """The structure of a Python constant among a compiled call's arguments
    (``m(x, None, lens)``), its own kind. Equal only for the same value of the same
    type (`attr_key`: -0.0 is not 0.0, True not 1), so a call with another value
    there (or with a tensor, a leaf) has another structure, which picks another
    program; it has no leaf, so it is no input of the program."""

    __slots__ = ("value",)

    def __init__(self, value):
        super().__init__(Constant, (attr_key(value),))
        self.value = value


CONSTANTS = (type(None), bool, int, float, str)


class Container:
    """A container kind of irflow's own (a list of tuples a loop grows is a tuple of
    lists): `fields` gives its keys and children, `rebuild` makes one from them."""

    def fields(self) -> tuple[tuple, list]:
        raise NotImplementedError

    @classmethod
    def rebuild(cls, keys: tuple, children: list):
        raise NotImplementedError


def describe(value) -> str:
    """How a value's structure reads to a user: ``tuple(tensor, list(tensor, int))``."""
    if value is None:
        return "None"
    if isinstance(value, ReturnValue):
        return describe(value.value)
    if type(value) is dict:
        return "dict(" + ", ".join(f"{_key(k)}: {describe(v)}" for k, v in value.items()) + ")"
    if type(value) is list or isinstance(value, tuple):
        return type(value).__name__ + "(" + ", ".join(describe(v) for v in value) + ")"
    return type(value).__name__.lower()


def _key(k) -> str:
    return repr(k) if isinstance(k, str | int | float | bool | type(None)) else describe(k)


def flatten(value, constants: bool = False) -> tuple[list, Structure]:
    """The leaves of `value` and its structure; with `constants`, the `CONSTANTS` in it
    are parts of the structure instead of leaves."""
    leaves: list = []
    return leaves, _flatten(value, leaves, constants)


def _flatten(value, leaves: list, constants: bool) -> Structure:
    kind = type(value)
    if kind is ReturnValue:
        return Structure(ReturnValue, (value.line,),
                         (_flatten(value.value, leaves, constants),))
    if kind is dict:
        keys = list(value)
        return Structure(dict, keys, [_flatten(value[k], leaves, constants) for k in keys])
    if isinstance(value, Container):
        keys, children = value.fields()
        return Structure(kind, keys, [_flatten(c, leaves, constants) for c in children])
    if isinstance(value, list | tuple):
        return Structure(kind, (), [_flatten(v, leaves, constants) for v in value])
    if constants and isinstance(value, CONSTANTS):
        return Constant(value)
    leaves.append(value)
    return LEAF


def sorted_leaf_order(structure: Structure) -> list[int]:
    """The indices of `structure`'s leaves in the order Paddle's ``paddle.utils.
    flatten`` visits them (as ``tf.nest``): each dict's values by sorted key (in their
    own order when the keys do not sort). A saved program's outputs follow it, so a
    forward returning ``{"sum": a, "prod": b}`` loads as ``[b, a]``, as in Paddle."""
    order: list[int] = []
    _visit_sorted(structure, 0, order)
    return order


def _visit_sorted(s: Structure, first: int, order: list[int]) -> None:
    if s.kind is None:
        order.append(first)
        return
    starts = list(accumulate((c.n_leaves for c in s.children), initial=first))
    visit = range(len(s.children))
    if s.kind is dict:
        try:
            visit = sorted(visit, key=lambda k: s.keys[k])
        except TypeError:  # keys of kinds that do not compare
            pass
    for k in visit:
        _visit_sorted(s.children[k], starts[k], order)


def unflatten(structure: Structure, leaves) -> Any:
    it = iter(leaves)
    return _build(structure, it)


def _build(s: Structure, it):
    if s.kind is None:
        return next(it)
    if s.kind is Constant:
        return s.value
    children = [_build(c, it) for c in s.children]
    if s.kind is ReturnValue:
        return ReturnValue(children[0], s.keys[0])
    if s.kind is dict:
        return dict(zip(s.keys, children))
    if issubclass(s.kind, Container):
        return s.kind.rebuild(s.keys, children)
    if issubclass(s.kind, list) or s.kind is tuple:
        return s.kind(children)
    return s.kind(*children)  # a namedtuple


class Pattern:
    """A nested value with some of its leaves taken out (`kept`): `fill` puts others in
    their places and rebuilds the value, every other leaf as it was. A compiled
    program's outputs are the tensors of what the function returned; the rest of
    the returned structure (None, ints, strings) is a pattern around them."""

    def __init__(self, structure: Structure, leaves: list, positions: list[int]):
        self.structure, self.leaves, self.positions = structure, leaves, positions

    @classmethod
    def split(cls, value, take: Callable[[Any], bool]) -> tuple[list, "Pattern"]:
        """The leaves of `value` that `take` accepts, and the pattern around them."""
        leaves, structure = flatten(value)
        positions = [i for i, leaf in enumerate(leaves) if take(leaf)]
        taken = [leaves[i] for i in positions]
        for i in positions:
            leaves[i] = None
        return taken, cls(structure, leaves, positions)

    def fill(self, values) -> Any:
        if self.structure.kind is None:  # one leaf: itself, or what fills it
            return values[0] if self.positions else self.leaves[0]
        leaves = list(self.leaves)
        for i, v in zip(self.positions, values):
            leaves[i] = v
        return unflatten(self.structure, leaves)


__all__ = ["CONSTANTS", "LEAF", "Constant", "Container", "Pattern", "ReturnValue", "Structure", "describe", "flatten", "unflatten"]
