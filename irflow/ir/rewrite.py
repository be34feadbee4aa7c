"""Rewrite patterns and the greedy driver that applies them to a fixpoint.

A `Pattern` looks at one op and, if it matches, rewrites it through a `Rewriter`
and returns True. An op's canonicalization patterns are declared beside it
(``defop(..., patterns=(...))``); passes may add patterns that apply to any op
(constant evaluation in ``fold``). `apply_patterns` keeps a worklist: it starts with
every op (regions included, in program order), tries the patterns on each, and
when a rewrite changes something it revisits exactly the ops that may now match:
the new ops, the users of replaced values and the producers of the operands that
lost a use. So a pass built on it is linear in the program plus the rewrites.

Patterns must edit the IR only through the `Rewriter` (or a builder it gives), so
that the driver sees every change.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..errors import IrflowError
from .builder import Builder
from .core import Block, Function, Module, Operation, OpResult, Value
from .region_op import inline_region
from .registry import lookup


class Pattern:
    """Matches one op; `rewrite` returns whether it changed the IR."""

    def rewrite(self, op: Operation, rewriter: "Rewriter") -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__


class Rewriter:
    """The edits a pattern may make; each tells the driver which ops to revisit."""

    def __init__(self, driver: "_Driver"):
        self._driver = driver

    def builder(self, before: Operation) -> Builder:
        """A builder that inserts before `before` (at its location) and reports the
        ops it creates."""
        return _ReportingBuilder(self._driver, before)

    def replace(self, op: Operation, values: Sequence[Value]) -> None:
        """Replace the results of `op` by `values` and erase `op`."""
        if len(values) != len(op.results):
            raise IrflowError(f"replacing '{op.name}' needs {len(op.results)} value(s), "
                              f"got {len(values)}")
        for result, value in zip(op.results, values):
            self.replace_uses(result, value)
        self.erase(op)

    def replace_uses(self, value: Value, new: Value) -> None:
        for use in list(value.uses):
            self._driver.push(use.op)
        value.replace_all_uses_with(new)
        self._driver.push_producer(new)

    def set_operand(self, op: Operation, index: int, value: Value) -> None:
        old = op.operand(index)
        op.set_operand(index, value)
        self._driver.push(op)
        self._driver.push_producer(old)
        self._driver.push_producer(value)

    def erase(self, op: Operation) -> None:
        operands = op.operands
        op.erase()
        for v in operands:
            self._driver.push_producer(v)

    def inline_region(self, op: Operation, index: int, args: Sequence[Value]) -> list[Value]:
        """Move the body of region `index` of `op` before `op`, its arguments replaced
        by `args`; returns what its terminator yielded (see `region_op.inline_region`)."""
        moved = list(op.regions[index].blocks[0].body_ops())
        yielded = inline_region(op, index, args)
        for inner in moved:
            for nested in inner.walk():
                self._driver.push(nested)
        return yielded



class _ReportingBuilder(Builder):
    def __init__(self, driver: "_Driver", before: Operation):
        super().__init__(before.parent, before.loc)
        self.anchor = before
        self._driver = driver

    def insert(self, op: Operation) -> Operation:
        super().insert(op)
        for inner in op.walk():
            self._driver.push(inner)
        return op


class _Driver:
    def __init__(self, patterns: Sequence[Pattern], with_op_patterns: bool):
        self.patterns = list(patterns)
        self.with_op_patterns = with_op_patterns
        self.stack: list[Operation] = []
        self.queued: set[Operation] = set()

    def push(self, op: Operation) -> None:
        if op not in self.queued:
            self.queued.add(op)
            self.stack.append(op)

    def push_producer(self, v: Value) -> None:
        if isinstance(v, OpResult):
            self.push(v.op)

    def run(self, blocks: Iterable[Block]) -> bool:
        ops = [op for block in blocks for op in block.walk()]
        for op in reversed(ops):  # a stack: the first op comes off first
            self.push(op)
        rewriter = Rewriter(self)
        budget = 10 * len(ops) + 1000
        changed = False
        while self.stack:
            op = self.stack.pop()
            self.queued.discard(op)
            if op.parent is None:  # erased, or inside an erased op
                continue
            own = lookup(op.name, op.loc).patterns if self.with_op_patterns else ()
            for pattern in (*own, *self.patterns):
                if pattern.rewrite(op, rewriter):
                    changed = True
                    budget -= 1
                    if budget < 0:
                        raise IrflowError(f"rewrite patterns do not converge (last: "
                                          f"{pattern!r} on '{op.name}')", op.loc)
                    if op.parent is not None:
                        self.push(op)
                    break
        return changed


def constant_value(v: Value):
    """The array a ``const`` op gives `v`, or None if `v` is not a constant."""
    op = v.op if isinstance(v, OpResult) else None
    return op.attrs["value"] if op is not None and op.name == "const" else None


def apply_patterns(ir: Module | Function | Block, patterns: Sequence[Pattern] = (),
                   with_op_patterns: bool = True) -> bool:
    """Apply `patterns` (tried on every op) and, with `with_op_patterns`, each op's
    own canonicalization patterns, inside regions too, until none applies. Returns
    whether anything changed."""
    if isinstance(ir, Module):
        blocks = [fn.block for fn in ir]
    elif isinstance(ir, Function):
        blocks = [ir.block]
    else:
        blocks = [ir]
    return _Driver(patterns, with_op_patterns).run(blocks)
