"""The ``test.*`` ops: a tiny family for pass tests, not for models.

A pass test about dead code, common subexpressions or the rewrite driver should not
break when the rules of a real op change, so it uses these: ops whose only
properties are the ones the test is about. Each has a kernel, so that the
interpreter can check a test's input and output compute the same.

- ``test.op %a, ... {tag=k}``: pure; its operands share one type, which is its
  result type (it computes ``a + ... + k``). Equal tags and operands make equal ops.
- ``test.effect %a, ...``: has an effect (IO), no results: never removed.
- ``test.neg %a``: ``-a``; its canonicalization removes a pair of them.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir.registry import Effect
from ._rules import Involution, defop


def _same_type(types, attrs):
    first = types[0]
    for t in types[1:]:
        if t != first:
            raise ShapeError("test ops take operands of one type, got "
                             + ", ".join(str(t) for t in types))
    return first


def _op_kernel(*arrays, tag):
    total = arrays[0] + tag
    for a in arrays[1:]:
        total = total + a
    return np.asarray(total, dtype=arrays[0].dtype)


defop("test.op", _same_type, _op_kernel, arity=(1, None), attrs={"tag": 0},
      doc="test.op(xs...) {tag}: pure, of its operands' common type: the sum of xs plus "
          "tag. For pass tests")
defop("test.effect", lambda types, attrs: (), lambda *arrays: (), arity=(0, None),
      effect=Effect.IO,
      doc="test.effect(xs...): an op with an effect and no results, which no pass may "
          "remove. For pass tests")
defop("test.neg", _same_type, np.negative, arity=1, patterns=(Involution(),),
      doc="test.neg(x): -x; two in a row cancel (its canonicalization). For pass tests")
