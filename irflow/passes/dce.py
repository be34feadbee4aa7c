"""Dead-code elimination, through regions.

Removes every op whose results are unused and that has no IO effect anywhere inside
it, nor in a function it calls (``call`` is pure only when its callee is). An op
with regions is trimmed from its value flow (`RegionOp.flow`), whatever the op: a
region argument is needed if a needed value of its region depends on it
(a value yielded to a needed place, a value without a place such as a loop
condition, or an operand of an IO op); a result is needed if it is used. Positions
connected by flow (a ``while``'s initial value, carried arguments, yielded value and
result) go together: once none of them is needed, the operand, block arguments,
terminator operands and result are all removed. So a ``cond`` loses its unused
results and the operands neither branch reads, and a ``while`` its unused
invariants and the carried values nothing needs.
"""
from __future__ import annotations

from ..errors import IrflowError
from ..ir.core import Block, Function, Module, Operation
from ..ir.region_op import Arg, Operand, RegionOp, Result, Yield, arg_dependencies
from ..ir.registry import Effect, lookup
from ..ir.sizes import symbol_binders, symbols_read
from ..ir.symbols import CallOp
from ..ir.traits import Terminator
from .framework import Pass, register_pass


@register_pass
class DeadCodeElimination(Pass):
    """Remove ops whose results nothing needs and that have no effect; trim region ops."""

    name = "dce"

    def run(self, module: Module) -> bool:
        changed = False
        for fn in module:
            changed |= dce_block(fn.block)
        return changed


def dce(module: Module) -> bool:
    """Run dead-code elimination on `module` in place; True if it changed."""
    return DeadCodeElimination().run(module)


def dce_block(block: Block) -> bool:
    """Remove `block`'s dead ops, last to first. An op that binds a symbol (a size
    known once it has run) stays while a live op after it reads that symbol."""
    changed = False
    binders = symbol_binders(block)
    sizing: set[Operation] = set()  # binders whose symbols a live op reads
    for op in reversed(block.ops):
        opdef = lookup(op.name)
        if opdef.has(Terminator):
            continue
        if not any(r.uses for r in op.results) and not has_io(op) and op not in sizing:
            op.erase()
            changed = True
            continue
        if opdef.region_op is not None:
            changed |= _trim(op, opdef.region_op)
        if binders:
            sizing.update(binders[s] for s in symbols_read(op) if s in binders)
    return changed


def has_io(op: Operation) -> bool:
    """Whether running `op` has an IO effect: an op with one inside it, or in a
    function that a call inside it runs (directly or through further calls). So a
    call of a function that prints or asserts is neither removed, merged nor moved."""
    return _runs_io(op, set())


def _runs_io(op: Operation, seen: set[Function]) -> bool:
    for inner in op.walk():
        opdef = lookup(inner.name)
        if opdef.effect is Effect.IO:
            return True
        call = opdef.trait(CallOp)
        if call is None:
            continue
        try:
            callee = call.callee(inner)
        except IrflowError:  # not bound to a function: nothing says it is pure
            return True
        if callee not in seen:
            seen.add(callee)
            if any(_runs_io(o, seen) for o in callee.block.ops):
                return True
    return False


def _trim(op: Operation, rop: RegionOp) -> bool:
    changed = False
    while True:
        step = False
        for region in op.regions:
            step |= dce_block(region.blocks[0])
        step |= _drop_dead_flow(op, rop)
        if not step:
            return changed
        changed = True


def _drop_dead_flow(op: Operation, rop: RegionOp) -> bool:
    """Remove the groups of flow-connected positions of `op` that nothing needs."""
    edges = list(rop.flow(op))
    if not edges:
        return False
    live = _live_positions(op, edges)
    dead = [group for group in _groups(edges) if not group & live]
    if not dead:
        return False
    gone = set().union(*dead)
    for r, region in enumerate(op.regions):
        block = region.blocks[0]
        block.terminator.erase_operands(p.index for p in gone
                                        if isinstance(p, Yield) and p.region == r)
        dce_block(block)
        block.erase_args(p.index for p in gone if isinstance(p, Arg) and p.region == r)
    op.erase_operands(p.index for p in gone if isinstance(p, Operand))
    op.erase_results(p.index for p in gone if isinstance(p, Result))
    return True


def _live_positions(op: Operation, edges) -> set:
    """Results with uses and region arguments a needed value depends on (a fixpoint:
    a needed argument makes what flows into it needed)."""
    targets: dict = {}
    for source, target in edges:
        targets.setdefault(source, []).append(target)
    live: set = {Result(k) for k, r in enumerate(op.results) if r.uses}
    io_roots = [[v for inner in region.blocks[0].ops if has_io(inner) for v in inner.operands]
                for region in op.regions]
    while True:
        grew = False
        for r, region in enumerate(op.regions):
            block = region.blocks[0]
            roots = list(io_roots[r])
            for t, v in enumerate(block.terminator.operands):
                flows_to = targets.get(Yield(r, t))
                if flows_to is None or any(p in live for p in flows_to):
                    roots.append(v)
            for j in arg_dependencies(block, roots):
                if Arg(r, j) not in live:
                    live.add(Arg(r, j))
                    grew = True
        if not grew:
            return live


def _groups(edges) -> list[set]:
    """The connected components of the flow graph."""
    parent: dict = {}

    def find(p):
        while parent.setdefault(p, p) != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for source, target in edges:
        a, b = find(source), find(target)
        if a != b:
            parent[a] = b
    groups: dict = {}
    for p in list(parent):
        groups.setdefault(find(p), set()).add(p)
    return list(groups.values())
