"""`assert`: a run-time check of a bool scalar, as Python's ``assert`` on a tensor in
compiled code.

The frontend turns ``assert paddle.all(x > 0), "x must be positive"`` into
``assert %p {msg="model.py:12: x must be positive"}``: the message already names the
user's line, because the kernel raises long after tracing, from the executor.
"""
from __future__ import annotations

from ..errors import ShapeError
from ..ir import dtypes
from ..ir.registry import REQUIRED, Effect
from ._rules import defop


def _assert_infer(types, attrs):
    if types[0].dtype is not dtypes.bool_ or types[0].rank != 0:
        raise ShapeError(f"assert takes a bool scalar, got {types[0]}")
    return ()


def _assert_kernel(pred, msg):
    if not pred:
        raise AssertionError(msg)
    return ()


defop("assert", _assert_infer, _assert_kernel, arity=1, attrs={"msg": REQUIRED},
      effect=Effect.IO, nondiff=True,
      doc="raise AssertionError(`msg`) when the bool scalar operand is false; runs when "
          "the program runs, in the branch or iteration that reaches it")
