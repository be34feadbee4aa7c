"""`Builder`: creates operations at an insertion point, inferring their result types.

Every registered op is available as a method: ``b.add(x, y)`` creates an ``add`` op
at the insertion point and returns its result (a tuple for multi-result ops);
keyword arguments are attributes (``b.sum(x, axis=(1,), keepdim=True)``), and
``name=`` gives the result a name hint. Structured control flow has its own methods,
`cond` and `while_loop`, which build each region from a Python callback.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Sequence

import numpy as np

from ..errors import Location, ShapeError
from . import dtypes
from .core import Block, Function, Operation, Region, Value
from .registry import lookup
from .types import ListType, TensorType, reworded


def is_list(v) -> bool:
    """Whether `v` is a list-typed value (a flag may also be a Python bool)."""
    return isinstance(v, Value) and isinstance(v.type, ListType)


class Builder:
    """Inserts at the end of `block`, or before `anchor` when it is set (`before`)."""

    def __init__(self, block: Block | None = None, loc: Location | None = None):
        self.block = block
        self.anchor: Operation | None = None
        self.loc = loc

    @classmethod
    def before(cls, op: Operation) -> "Builder":
        b = cls(op.parent, op.loc)
        b.anchor = op
        return b

    @contextmanager
    def location(self, loc: Location | None):
        saved, self.loc = self.loc, loc
        try:
            yield self
        finally:
            self.loc = saved

    # -- creating operations
    def insert(self, op: Operation) -> Operation:
        if self.block is None:
            raise ShapeError("builder has no insertion block")
        if self.anchor is None:
            return self.block.append(op)
        return self.block.insert_before(self.anchor, op)

    def create(self, name: str, operands: Sequence[Value] = (), attrs: dict | None = None,
               regions: Sequence[Region] = (), result_types=None, names=None) -> Operation:
        """Create and insert an op; result types come from the type rule unless given."""
        opdef = lookup(name, self.loc)
        operand_types = [v.type for v in operands]
        try:
            attrs = opdef.complete_attrs(attrs, operand_types)
            if result_types is None:
                result_types = opdef.result_types(operand_types, attrs)
        except ShapeError as e:
            raise reworded(e, f"{name}: {e.message}").with_loc(self.loc) from None
        op = Operation(name, operands, result_types, attrs, regions, self.loc, names)
        return self.insert(op)

    def __getattr__(self, opname: str) -> Callable:
        if opname.startswith("_"):
            raise AttributeError(opname)
        try:
            lookup(opname)
        except KeyError:
            raise AttributeError(f"Builder has no method or op named {opname!r}") from None

        def make(*operands: Value, name: str | None = None, **attrs):
            op = self.create(opname, operands, attrs, names=[name] if name else None)
            return op.results[0] if len(op.results) == 1 else tuple(op.results)

        make.__name__ = opname
        return make

    def constant(self, value, dtype=None, name: str | None = None) -> Value:
        """A ``const`` op holding `value` (a number or array) as `dtype`."""
        array = np.asarray(value, dtype=dtypes.dtype(dtype).np if dtype is not None else None)
        if dtype is None and array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype(np.float32)  # Python floats are float32, as in Paddle
        return self.create("const", (), {"value": array}, names=[name] if name else None).result

    def fill(self, t: TensorType, value) -> Value:
        """A tensor of type `t` whose every element is `value` (a broadcast scalar)."""
        scalar = self.constant(value, t.dtype)
        return scalar if t.rank == 0 else self.broadcast_to(scalar, shape=t.shape)

    def zeros(self, t: TensorType) -> Value:
        return self.fill(t, 0)

    def ones(self, t: TensorType) -> Value:
        return self.fill(t, 1)

    # -- cotangents (autodiff and the region ops' gradient rules)
    def zeros_like(self, value: Value) -> Value:
        """A zero cotangent for `value`: zeros of its type, or for a list, a list of
        zeros as long as `value` (whose length only the run knows)."""
        if isinstance(value.type, ListType):
            return self.list_zeros_like(value)
        return self.zeros(value.type)

    def accumulate(self, a: Value, b: Value) -> Value:
        """The sum of two cotangents of one value: ``a + b``, elementwise for lists."""
        if isinstance(a.type, ListType):
            return self.list_add(a, b)
        return self.add(a, b)

    # -- whether a cotangent exists: True, False, or known at run time: a bool scalar,
    # or for a list's cotangent a list of bool scalars, one per element
    def either(self, a, b):
        """`a` or `b`, for flags that are Python bools or values (two lists of bools are
        combined element by element: `list_add`, as NumPy adds bools with `or`); an op
        only when both are values."""
        if a is True or b is True:
            return True
        if a is False or b is False:
            return b if a is False else a
        return self.list_add(a, b) if isinstance(a.type, ListType) else self.logical_or(a, b)

    def both(self, a, b):
        """`a` and `b`, for flags that are Python bools or bool scalar values."""
        if a is False or b is False:
            return False
        if a is True or b is True:
            return b if a is True else a
        return self.logical_and(a, b)

    def flag(self, a, like: Value | None = None) -> Value:
        """The flag `a` as a value: a bool scalar, or where `like` is a list (a list's
        cotangent), a list of bools as long as it, one per element."""
        if is_list(like) and not is_list(a):
            return self.list_fill(like, self.flag(a))
        return self.constant(a, "bool") if isinstance(a, bool) else a

    # -- structured control flow
    def region(self, arg_types: Sequence[TensorType], body: Callable, terminator: str,
               arg_names=None) -> tuple[Region, list[TensorType]]:
        """A one-block region with arguments of `arg_types`; `body(builder, *args)`
        fills it and returns the values for the terminator."""
        block = Block(arg_types, arg_names)
        inner = Builder(block, self.loc)
        values = body(inner, *block.args)
        values = [] if values is None else ([values] if isinstance(values, Value) else list(values))
        inner.create(terminator, values)
        return Region([block]), [v.type for v in values]

    def cond(self, pred: Value, operands: Sequence[Value], then_body: Callable,
             else_body: Callable, names=None) -> list[Value]:
        """``cond``: both branches receive `operands` as block arguments."""
        types = [v.type for v in operands]
        arg_names = [v.name for v in operands]
        then_r, then_t = self.region(types, then_body, "yield", arg_names)
        else_r, else_t = self.region(types, else_body, "yield", arg_names)
        if then_t != else_t:
            raise ShapeError("cond: the branches yield different types: then "
                             f"({', '.join(map(str, then_t))}) vs else "
                             f"({', '.join(map(str, else_t))})", self.loc)
        op = self.create("cond", [pred, *operands], regions=[then_r, else_r],
                         result_types=then_t, names=names)
        return list(op.results)

    def while_loop(self, consts: Sequence[Value], inits: Sequence[Value], cond_body: Callable,
                   body: Callable, names=None, arg_names=None) -> list[Value]:
        """``while``: both regions receive ``(*consts, *carried)``; `cond_body` returns a
        bool scalar, `body` the next carried values. The block arguments are named
        `arg_names`, or after the operands."""
        types = [v.type for v in [*consts, *inits]]
        arg_names = arg_names or [v.name for v in [*consts, *inits]]
        cond_r, _ = self.region(types, cond_body, "condition", arg_names)
        body_r, body_t = self.region(types, body, "yield", arg_names)
        carried = [v.type for v in inits]
        if body_t != carried:
            raise ShapeError("while: the body yields ("
                             + ", ".join(map(str, body_t)) + ") but the loop carries ("
                             + ", ".join(map(str, carried)) + ")", self.loc)
        op = self.create("while", [*consts, *inits], regions=[cond_r, body_r],
                         result_types=carried, names=names)
        return list(op.results)

    def ret(self, *values: Value) -> Operation:
        return self.create("return", values)


def function(name: str, arg_types: Sequence[TensorType], body: Callable,
             arg_names=None) -> Function:
    """A `Function` whose body is built by ``body(builder, *args)``, which returns
    the values to return."""
    fn = Function(name, arg_types, arg_names)
    b = Builder(fn.block)
    results = body(b, *fn.args)
    results = [] if results is None else ([results] if isinstance(results, Value) else list(results))
    b.ret(*results)
    return fn
