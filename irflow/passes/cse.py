"""Common-subexpression elimination.

Two ops compute the same value when they have the same name, the same operands and
the same attributes and are pure (or random, which is deterministic given the seed
operand: two draws with the same seed are the same draw). The later one is replaced
by the earlier. Each block has its own table, since regions are closed: a region
never sees its parent's values, so nothing can be shared across the boundary. Ops
with regions are left alone.
"""
from __future__ import annotations

import numpy as np

from ..ir.core import Block, Operation
from ..ir.registry import Effect, lookup
from .manager import register_pass


@register_pass("cse")
def cse(module) -> bool:
    changed = False
    for fn in module:
        changed |= cse_block(fn.block)
    return changed


def cse_block(block: Block) -> bool:
    changed = False
    seen: dict[tuple, Operation] = {}
    for op in list(block.ops):
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
    if op.regions or opdef.terminator or opdef.effect is Effect.IO or not op.results:
        return None
    return (op.name, tuple(id(v) for v in op.operands),
            tuple((k, _hashable(v)) for k, v in op.attrs.items()),
            tuple(r.type for r in op.results))


def _hashable(value):
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value
