"""Folding: constant evaluation and every op's canonicalization patterns.

Both are rewrite patterns applied to a fixpoint by one driver
(`irflow.ir.rewrite.apply_patterns`), inside regions too:

- `EvaluateConstants`: an op whose operands are all constants is evaluated at
  compile time, by its own kernel, and becomes a ``const``, unless it has effects
  (a ``call`` has those of its callee), its result depends on a symbolic dim or is
  larger than ``max-elements``;
- each op's own patterns (``defop(..., patterns=...)``): identities such as ``x + 0``
  or a reshape to the same type, a reshape of a reshape, broadcasts that elementwise
  ops do anyway, a ``cond`` on a constant predicate, and so on. They are declared
  beside their ops; docs/ir.md lists them per op.

Each rewrite keeps the types of all values, so what uses them needs no change.
"""
from __future__ import annotations

import numpy as np

from ..errors import IrflowError
from ..ir.core import Module, Operation
from ..ir.registry import Effect, lookup
from ..ir.rewrite import Pattern, Rewriter, apply_patterns, constant_value
from ..ir.types import TensorType
from .dce import has_io
from .framework import Pass, register_pass


@register_pass
class Fold(Pass):
    """Evaluate ops on constants and apply every op's canonicalization patterns."""

    name = "fold"
    max_elements: int = 1 << 16

    def run(self, module: Module) -> bool:
        return apply_patterns(module, [EvaluateConstants(self.max_elements)])


class EvaluateConstants(Pattern):
    """A pure op on constants becomes the constant its kernel computes."""

    def __init__(self, max_elements: int):
        self.max_elements = max_elements

    def rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        if not op.operands or len(op.results) != 1 or op.regions:
            return False
        opdef = lookup(op.name)
        if opdef.effect is not Effect.PURE or opdef.kernel is None:
            return False
        values = [constant_value(v) for v in op.operands]
        out = op.result.type
        if any(v is None for v in values) or not isinstance(out, TensorType) \
                or not out.is_static or int(np.prod(out.shape)) > self.max_elements \
                or has_io(op):
            return False
        try:
            value = np.asarray(opdef.kernel(*values, **op.attrs), dtype=out.dtype.np)
        except (IrflowError, ArithmeticError, IndexError, ValueError):
            # it fails when it runs (an integer division by zero, an index out of
            # bounds), if it runs: it may be in a branch never taken
            return False
        const = rewriter.builder(op).constant(value, out.dtype, name=op.result.name)
        rewriter.replace(op, [const])
        return True
