"""Common-subexpression elimination, per block.

Two ops of one block with the same name, operands, attributes and result types
compute the same values unless they have IO effects (random ops are deterministic
given their seed operand, so equal seeds give equal values): the later one is
replaced by the earlier. Regions are closed, so nothing is shared between a region
and the code around it; each region is handled as a block of its own. Ops with
regions are left alone.
"""
from __future__ import annotations

import numpy as np

from ..ir.core import Block, Module, Operation
from ..ir.registry import Effect, lookup
from ..ir.traits import Terminator
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
    if op.regions or opdef.has(Terminator) or opdef.effect is Effect.IO or not op.results:
        return None
    return (op.name, tuple(id(v) for v in op.operands),
            tuple((k, _hashable(v)) for k, v in op.attrs.items()),
            tuple(r.type for r in op.results))


def _hashable(value):
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value
