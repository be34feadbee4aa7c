"""`verify(module)`: checks the IR's structural rules and raises `VerificationError`.

What is checked, in one walk over each function (linear in its size):

- every op is registered, has the operand count its op takes and complete attributes;
- SSA: each operand is defined before its use, in the same block (regions are
  closed: a value from an enclosing scope must enter a region as a block argument);
- each block ends in exactly one terminator, and the function body in ``return``;
- each op's result types are what its type rule gives for its operand types;
- the op's own ``verify`` hook, and each of its traits' checks (a region op checks
  its regions' signatures: argument types, terminators, yielded types);
- use lists and parent links agree with operands (a guard against bugs in passes);
- every symbolic size an op's shape attributes read is bound before it: by an
  argument's dim, an earlier op's result (a size known once that op has run) or an
  enclosing block (a pass that removes the op binding a size breaks this).

Messages name the function, the op as printed (with the printer's value names),
its source location and what was expected versus found.
"""
from __future__ import annotations

from ..errors import IrflowError, ShapeError, VerificationError
from .core import Block, BlockArg, Function, Module, Operation, Value
from .registry import is_registered, lookup
from .sizes import symbols_needed, unbound_use
from .traits import Terminator


class _Verifier:
    def __init__(self, fn: Function, checked: dict):
        self.fn = fn
        self._names: dict[Value, str] | None = None
        # (op name, operand types, attributes) already found well-typed: programs
        # repeat a few signatures many times, and the type rule is the costly check.
        self.checked = checked

    def ref(self, v: Value) -> str:
        """``%name`` as the printer shows it (named on the first failure only)."""
        if self._names is None:
            from .printer import Printer
            printer = Printer()
            printer.function(self.fn)
            self._names = printer.namer.names
        name = self._names.get(v)
        return f"%{name}" if name is not None else "a value of another function"

    def fail(self, op: Operation | None, message: str):
        where = f"in @{self.fn.name}"
        if op is not None:
            where += f", op '{op.name}'"
            if op.results:
                where += " defining " + ", ".join(self.ref(r) for r in op.results)
        raise VerificationError(f"{where}: {message}", op.loc if op is not None else None)

    def block(self, block: Block, terminator: str | None) -> None:
        """`terminator`: the name the block must end with (None: the region op checks)."""
        owner = block.parent.parent if block.parent is not None else None
        last = block.terminator
        if last is None:
            self.fail(owner, "a block is empty; it must end with a terminator")
        scope: set[Value] = set(block.args)
        for op in block.ops:
            if op.parent is not block:
                self.fail(op, "the op's parent link does not point to its block")
            self.op(op, scope)
            if op is not last and lookup(op.name).has(Terminator):
                self.fail(op, "a terminator must be the last op of its block")
            scope.update(op.results)
        if not lookup(last.name).has(Terminator):
            self.fail(last, "the block does not end with a terminator "
                      f"(expected '{terminator or 'yield'}')")
        if terminator is not None and last.name != terminator:
            self.fail(last, f"the block must end with '{terminator}', found '{last.name}'")

    def op(self, op: Operation, scope: set[Value]) -> None:
        if not is_registered(op.name):
            self.fail(op, f"unknown op '{op.name}'")
        opdef = lookup(op.name)
        for i, use in enumerate(op.operand_uses):
            v = use.value
            if v not in scope:
                self.fail(op, f"operand {i} ({self.ref(v)}) " + self.why_not_visible(v, op))
            if use.op is not op or use.index != i or not v.has_use(use):
                self.fail(op, f"operand {i} is missing from its value's use list")
        for i, r in enumerate(op.results):
            if r.op is not op or r.index != i:
                self.fail(op, f"result {i} does not point back to its op")
        self.types(op, opdef, tuple(use.value.type for use in op.operand_uses))
        labels = opdef.region_op.region_labels(op) if opdef.region_op is not None else ()
        if len(op.regions) != len(labels):
            self.fail(op, f"expected {len(labels)} region(s), found {len(op.regions)}")
        for region in op.regions:
            if len(region.blocks) != 1:
                self.fail(op, f"each region holds one block, found {len(region.blocks)}")
            if region.parent is not op or region.blocks[0].parent is not region:
                self.fail(op, "a region's parent links are broken")
        try:
            if opdef.verify is not None:
                opdef.verify(op)
            for trait in opdef.traits:
                trait.verify(op)
        except IrflowError as e:
            self.fail(op, e.message)
        for region in op.regions:
            self.block(region.blocks[0], None)

    def types(self, op: Operation, opdef, operand_types: tuple) -> None:
        """Complete attributes, and result types equal to what the type rule gives."""
        try:
            key = (op.name, operand_types, tuple(op.attrs.items()), op.result_types)
            if key in self.checked:
                return
        except TypeError:  # an array attribute: check without remembering
            key = None
        try:
            attrs = opdef.complete_attrs(op.attrs, operand_types)
            if set(attrs) != set(op.attrs):
                missing = sorted(set(attrs) - set(op.attrs))
                raise ShapeError(f"attribute(s) {', '.join(missing)} missing")
            if opdef.infer is not None:
                expected = opdef.result_types(operand_types, attrs)
                if list(expected) != list(op.result_types):
                    raise ShapeError(
                        "the type rule gives (" + ", ".join(map(str, expected))
                        + ") for operands (" + ", ".join(map(str, operand_types))
                        + ") but the op has (" + ", ".join(map(str, op.result_types)) + ")")
        except ShapeError as e:
            self.fail(op, e.message)
        if key is not None:
            self.checked[key] = True

    def why_not_visible(self, v: Value, op: Operation) -> str:
        home = v.block if isinstance(v, BlockArg) else v.op.parent
        if home is None or _enclosing_blocks(home)[-1] is not self.fn.block:
            return "is not defined in this function"
        if home is op.parent:
            return "is used before its definition"
        if home in _enclosing_blocks(op.parent):
            return ("is defined outside the region that uses it; regions are closed, "
                    "so pass it in as a block argument")
        return "is defined in another region, which this op cannot see"


def _enclosing_blocks(block: Block) -> list[Block]:
    """`block`, the block holding the op that owns it, and so on outwards."""
    chain = [block]
    while block.parent is not None and block.parent.parent is not None:
        block = block.parent.parent.parent
        if block is None:
            break
        chain.append(block)
    return chain


def verify(ir: Module | Function) -> None:
    """Raise `VerificationError` on the first broken rule; return None if all hold."""
    functions = list(ir) if isinstance(ir, Module) else [ir]
    checked: dict = {}
    for fn in functions:
        if len(fn.body.blocks) != 1:
            raise VerificationError(f"in @{fn.name}: the body must be one block")
        verifier = _Verifier(fn, checked)
        verifier.block(fn.block, "return")
        unbound = symbols_needed(fn.block)
        if unbound:
            symbol = min(unbound)
            verifier.fail(unbound_use(fn.block, symbol),
                          f"its shape reads the size {symbol}, which nothing before it "
                          "binds (no argument's dim nor earlier result has it)")
