"""Dead-code elimination, through regions.

Removes every op whose results are unused and that has no IO effect anywhere inside
it. Structured control flow is trimmed too:

- a ``cond`` result nobody uses is dropped, with the values both branches yield
  for it; an operand neither branch reads is dropped with its block arguments;
- a ``while`` loop-invariant operand neither region reads is dropped; a carried
  value is dropped when nothing needs it: not the code after the loop, not the loop
  condition, and not the body's computation of any other carried value that is
  needed (a fixpoint over the body's dependencies).
"""
from __future__ import annotations

from ..ir.core import Block, BlockArg, Operation, Value
from ..ir.registry import Effect, lookup
from ..ops.control import captured_operands
from .manager import register_pass


@register_pass("dce")
def dce(module) -> bool:
    changed = False
    for fn in module:
        changed |= dce_block(fn.block)
    return changed


def dce_block(block: Block) -> bool:
    changed = False
    for op in reversed(list(block.ops)):
        if lookup(op.name).terminator:
            continue
        if not any(r.uses for r in op.results) and not has_io(op):
            op.erase()
            changed = True
            continue
        if op.regions:
            changed |= _trim_region_op(op)
    return changed


def has_io(op: Operation) -> bool:
    return any(lookup(o.name).effect is Effect.IO for o in op.walk())


def _trim_region_op(op: Operation) -> bool:
    changed = False
    while True:
        trim = {"cond": _drop_cond_results, "while": _drop_dead_carried}.get(op.name)
        new = trim(op) if trim is not None else None
        step = new is not None
        op = new or op
        for region in op.regions:
            step |= dce_block(region.blocks[0])
        step |= _drop_unused_operands(op)
        if not step:
            return changed
        changed = True


# ---------------------------------------------------------------- cond

def _drop_cond_results(op: Operation) -> Operation | None:
    """The cond rebuilt without its unused results, or None if all are used."""
    keep = [i for i, r in enumerate(op.results) if r.uses]
    if len(keep) == len(op.results):
        return None
    for region in op.regions:
        term = region.blocks[0].terminator
        term.set_operands([term.operands[i] for i in keep])
    return _rebuild(op, list(op.operands), keep)


def _drop_unused_operands(op: Operation) -> bool:
    """Operands that enter every region as an unused block argument (cond: all but the
    predicate; while: loop invariants only, carried values are `_drop_dead_carried`'s)."""
    if op.name not in ("cond", "while"):
        return False
    blocks = [r.blocks[0] for r in op.regions]
    captured = captured_operands(op)
    dead = [j for j in range(len(captured)) if not any(b.args[j].uses for b in blocks)]
    if not dead:
        return False
    for j in reversed(dead):
        for b in blocks:
            b.erase_arg(j)
    dead_operands = {captured[j] for j in dead}
    op.set_operands([v for i, v in enumerate(op.operands) if i not in dead_operands])
    return True


# ---------------------------------------------------------------- while

def _drop_dead_carried(op: Operation) -> Operation | None:
    """The while rebuilt without the carried values nothing needs, or None."""
    n_consts = len(op.operands) - len(op.results)
    cond_block, body_block = (r.blocks[0] for r in op.regions)
    body_yield = body_block.terminator
    live = {k for k, r in enumerate(op.results)
            if r.uses or cond_block.args[n_consts + k].uses}
    for inner in body_block.ops:  # what an IO op in the body reads stays alive
        if has_io(inner):
            live |= {j - n_consts for v in inner.operands
                     for j in arg_dependencies(body_block, v) if j >= n_consts}
    frontier = list(live)
    while frontier:
        k = frontier.pop()
        for j in arg_dependencies(body_block, body_yield.operands[k]):
            if j >= n_consts and j - n_consts not in live:
                live.add(j - n_consts)
                frontier.append(j - n_consts)
    if len(live) == len(op.results):
        return None
    keep = sorted(live)
    body_yield.set_operands([body_yield.operands[k] for k in keep])
    dce_block(body_block)
    dead_args = [n_consts + k for k in range(len(op.results)) if k not in live]
    for j in reversed(dead_args):
        cond_block.erase_arg(j)
        body_block.erase_arg(j)
    operands = list(op.operands[:n_consts]) + [op.operands[n_consts + k] for k in keep]
    return _rebuild(op, operands, keep)


def arg_dependencies(block: Block, value: Value) -> set[int]:
    """Indices of `block`'s arguments that `value` (defined in `block`) depends on."""
    deps: set[int] = set()
    seen: set[Value] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArg):
            if v.block is block:
                deps.add(v.index)
        else:
            stack.extend(v.op.operands)
    return deps


# ---------------------------------------------------------------- shared

def _rebuild(op: Operation, operands, keep: list[int]) -> Operation:
    """Replace `op` by a copy with `operands` and only the results in `keep`, moving
    its regions over."""
    regions = list(op.regions)
    op.regions = []
    for region in regions:
        region.parent = None
    new = Operation(op.name, operands, [op.results[i].type for i in keep], op.attrs, regions,
                    op.loc, [op.results[i].name for i in keep])
    op.parent.insert_before(op, new)
    for new_result, i in zip(new.results, keep):
        op.results[i].replace_all_uses_with(new_result)
    op.erase()
    return new
