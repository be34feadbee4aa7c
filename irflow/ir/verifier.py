"""`verify(module)`: checks the IR's structural rules and raises `VerificationError`.

What is checked, in one walk over each function:

- every op is registered, has the operand count its op takes and complete attributes;
- SSA: each operand is defined before its use, in the same block (regions are
  closed: a value from an enclosing scope must enter a region as a block argument);
- each block ends in exactly one terminator, and the function body in ``return``;
- each op's result types are what its type rule gives for its operand types;
- region ops (``cond``, ``while``) pass their region hooks: argument types, the
  right terminator, yielded types equal to the results;
- use lists agree with operands (a guard against bugs in passes).

Messages name the function, the op as printed, its source location and what was
expected versus found.
"""
from __future__ import annotations

from ..errors import IrflowError, ShapeError, VerificationError
from .core import Block, Function, Module, Operation, Value
from .printer import Namer
from .registry import is_registered, lookup


class _Verifier:
    def __init__(self, fn: Function):
        self.fn = fn
        self.namer = Namer()
        for op in fn.walk():  # name values in print order, for the messages
            for r in op.results:
                self.namer.name(r)
        self.defined_somewhere = _all_values(fn)

    def fail(self, op: Operation | None, message: str):
        where = f"in @{self.fn.name}"
        if op is not None:
            where += f", op '{op.name}'"
            if op.results:
                where += " defining " + ", ".join(self.namer.ref(r) for r in op.results)
        raise VerificationError(f"{where}: {message}", op.loc if op is not None else None)

    def block(self, block: Block, terminator: str | None, visible: set[Value]) -> None:
        """`terminator`: the name the block must end with (None: the region hook checks)."""
        scope = set(block.args)
        if not block.ops:
            self.fail(block.parent.parent if block.parent else None,
                      "a block is empty; it must end with a terminator")
        last = block.ops[-1]
        for op in block.ops:
            self.op(op, scope, visible)
            is_term = lookup(op.name).terminator
            if is_term and op is not last:
                self.fail(op, "a terminator must be the last op of its block")
            scope.update(op.results)
        if not lookup(last.name).terminator:
            self.fail(last, "the block does not end with a terminator "
                      f"(expected '{terminator or 'yield'}')")
        if terminator is not None and last.name != terminator:
            self.fail(last, f"the block must end with '{terminator}', found '{last.name}'")

    def op(self, op: Operation, scope: set[Value], outer: set[Value]) -> None:
        if not is_registered(op.name):
            self.fail(op, f"unknown op '{op.name}'")
        opdef = lookup(op.name)
        for i, v in enumerate(op.operands):
            if v not in scope:
                self.fail(op, f"operand {i} ({self.namer.ref(v)}) "
                          + self.why_not_visible(v, op, outer))
            if not any(u.op is op and u.index == i for u in v.uses):
                self.fail(op, f"operand {i} is missing from its value's use list")
        for r in op.results:
            if r.op is not op:
                self.fail(op, f"result {r.index} does not point back to its op")
        try:
            opdef.check_arity(len(op.operands))
            attrs = opdef.complete_attrs(op.attrs, [v.type for v in op.operands])
            if set(attrs) != set(op.attrs):
                missing = sorted(set(attrs) - set(op.attrs))
                raise ShapeError(f"attribute(s) {', '.join(missing)} missing")
            if opdef.infer is not None:
                expected = opdef.result_types([v.type for v in op.operands], attrs)
                if list(expected) != list(op.result_types):
                    raise ShapeError(
                        "the type rule gives (" + ", ".join(map(str, expected))
                        + ") for operands (" + ", ".join(str(v.type) for v in op.operands)
                        + ") but the op has (" + ", ".join(map(str, op.result_types)) + ")")
        except ShapeError as e:
            self.fail(op, e.message)
        if len(op.regions) != len(opdef.regions):
            self.fail(op, f"expected {len(opdef.regions)} region(s), found {len(op.regions)}")
        for region in op.regions:
            if len(region.blocks) != 1:
                self.fail(op, f"each region holds one block, found {len(region.blocks)}")
            if region.parent is not op or region.blocks[0].parent is not region:
                self.fail(op, "a region's parent links are broken")
        if opdef.verify is not None:
            try:
                opdef.verify(op)
            except IrflowError as e:
                self.fail(op, e.message)
        for region in op.regions:
            self.block(region.blocks[0], None, outer | scope)

    def why_not_visible(self, v: Value, op: Operation, outer: set[Value]) -> str:
        if v in outer:
            return ("is defined outside the region that uses it; regions are closed, "
                    "so pass it in as a block argument")
        if v in self.defined_somewhere:
            return "is used before its definition"
        return "is not defined in this function"


def _all_values(fn: Function) -> set[Value]:
    values: set[Value] = set(fn.args)
    for op in fn.walk():
        values.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.update(block.args)
    return values


def verify(ir: Module | Function) -> None:
    """Raise `VerificationError` on the first broken rule; return None if all hold."""
    functions = list(ir) if isinstance(ir, Module) else [ir]
    for fn in functions:
        if len(fn.body.blocks) != 1:
            raise VerificationError(f"in @{fn.name}: the body must be one block")
        _Verifier(fn).block(fn.block, "return", set())
