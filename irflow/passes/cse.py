"""Common-subexpression elimination, per block.

Two ops of one block with the same name, operands, attributes and result types
compute the same values unless they have IO effects, their own or a called
function's (random ops are deterministic given their seed operand, so equal seeds
give equal values): the later one is replaced by the earlier. Attributes are equal
when they are the same value of the same type (`attr_key`): a fill of -0.0 is not
a fill of 0.0, though Python's ``==`` says they are. Regions are closed, so
nothing is shared between a region and the code around it; each region is handled
as a block of its own. Ops with regions are left alone.
"""
from __future__ import annotations

from ..ir.core import Block, Module, Operation
from ..ir.registry import attr_key, lookup
from ..ir.traits import Terminator
from .dce import has_io
from .framework import Pass, register_pass


@register_pass
class CommonSubexpressions(Pass):
    """Merge equal ops without effects within each block."""

    name = "cse"

    def run(self, module: Module) -> bool:
        changed = False
        for fn in module:
            changed |= cse_block(fn.block)
        return changed


def cse_block(block: Block) -> bool:
    changed = False
    seen: dict[tuple, Operation] = {}
    for op in block.ops:
        for region in op.regions:
            changed |= cse_block(region.blocks[0])
        key = _key(op)
        if key is None:
            continue
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = op
            continue
        for old, new in zip(op.results, earlier.results):
            old.replace_all_uses_with(new)
        op.erase()
        changed = True
    return changed


def _key(op: Operation) -> tuple | None:
    opdef = lookup(op.name)
    if op.regions or opdef.has(Terminator) or not op.results or has_io(op):
        return None
    return (op.name, tuple(id(v) for v in op.operands),
            tuple((k, attr_key(v)) for k, v in op.attrs.items()),
            tuple(r.type for r in op.results))
