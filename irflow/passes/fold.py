"""Folding: constant evaluation and algebraic simplification.

- An op whose operands are all constants is evaluated at compile time (by its own
  kernel) and becomes a ``const``, unless its result is large (`MAX_FOLD_ELEMENTS`)
  or depends on a symbolic dim.
- Identities that leave a value unchanged are removed: ``reshape``, ``broadcast_to``
  or ``cast`` to the type the value already has, the identity ``transpose``,
  ``neg(neg(x))``, ``x + 0``, ``x - 0``, ``x * 1``, ``x / 1``, and a ``reshape`` of a
  ``reshape``.
- A ``broadcast_to`` that only feeds elementwise ops which broadcast anyway is
  bypassed where the op's result type stays the same (autodiff makes many of these:
  a scalar cotangent broadcast to a shape, then multiplied).

Each rewrite keeps the types of all values, so what uses them needs no change.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir.builder import Builder
from ..ir.core import Block, Operation, Value
from ..ir.registry import Effect, lookup
from ..ir.types import TensorType
from .manager import register_pass

MAX_FOLD_ELEMENTS = 1 << 16


@register_pass("fold")
def fold(module) -> bool:
    changed = False
    for fn in module:
        changed |= fold_block(fn.block)
    return changed


def fold_block(block: Block) -> bool:
    changed = False
    for op in list(block.ops):
        if op.parent is None:  # erased by an earlier rewrite in this sweep
            continue
        for region in op.regions:
            changed |= fold_block(region.blocks[0])
        changed |= _rewrite(op)
    return changed


def _rewrite(op: Operation) -> bool:
    opdef = lookup(op.name)
    if op.regions or opdef.terminator or opdef.effect is not Effect.PURE or \
            len(op.results) != 1:
        return False
    same = _identity(op)
    if same is not None:
        op.result.replace_all_uses_with(same)
        op.erase()
        return True
    if op.name == "reshape" and _defining(op.operands[0], "reshape"):
        op.set_operand(0, op.operands[0].op.operands[0])
        return True
    if op.name == "broadcast_to" and _bypass_broadcast(op):
        return True
    return _evaluate(op)


def _defining(v: Value, name: str) -> bool:
    return hasattr(v, "op") and v.op.name == name


def _const_value(v: Value):
    return v.op.attrs["value"] if _defining(v, "const") else None


def _is_splat(v: Value, number) -> bool:
    value = _const_value(v)
    return value is not None and value.size > 0 and bool(np.all(value == number))


def _identity(op: Operation) -> Value | None:
    """The operand `op` returns unchanged, if it is one."""
    out = op.result.type
    args = op.operands
    if op.name in ("reshape", "broadcast_to", "cast") and args[0].type == out:
        return args[0]
    if op.name == "transpose" and op.attrs["perm"] == tuple(range(len(op.attrs["perm"]))):
        return args[0]
    if op.name == "neg" and _defining(args[0], "neg"):
        return args[0].op.operands[0]
    neutral = {"add": (0, (0, 1)), "sub": (0, (0,)), "mul": (1, (0, 1)), "div": (1, (0,))}
    if op.name in neutral:
        number, positions = neutral[op.name]
        for keep in positions:
            other = args[1 - keep]
            if args[keep].type == out and _is_splat(other, number):
                return args[keep]
    return None


def _bypass_broadcast(op: Operation) -> bool:
    """Let elementwise users read the broadcast's input directly where their result
    type does not change."""
    source = op.operands[0]
    changed = False
    for use in list(op.result.uses):
        user = use.op
        opdef = lookup(user.name)
        if not opdef.elementwise or opdef.infer is None:
            continue
        types = [v.type for v in user.operands]
        types[use.index] = source.type
        try:
            if opdef.result_types(types, user.attrs) == user.result_types:
                user.set_operand(use.index, source)
                changed = True
        except ShapeError:  # the type rule rejects it: keep the broadcast
            continue
    if changed and not op.result.uses:
        op.erase()
    return changed


def _evaluate(op: Operation) -> bool:
    if not op.operands or not all(_defining(v, "const") for v in op.operands):
        return False
    out = op.result.type if len(op.results) == 1 else None
    if out is None or not isinstance(out, TensorType) or not out.is_static:
        return False
    if int(np.prod(out.shape)) > MAX_FOLD_ELEMENTS:
        return False
    opdef = lookup(op.name)
    value = np.asarray(opdef.kernel(*(v.op.attrs["value"] for v in op.operands), **op.attrs),
                       dtype=out.dtype.np)
    with Builder.before(op).location(op.loc) as b:
        const = b.constant(value, out.dtype, name=op.result.name)
    op.result.replace_all_uses_with(const)
    op.erase()
    return True
