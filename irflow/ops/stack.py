"""Stacks of records: what reverse-mode autodiff uses to remember the carried values
of every iteration of a ``while`` loop.

    %s0 = stack_new : stack<f32[N,4]>
    %s1 = stack_push %s0, %x : stack<f32[N,4]>
    %s2, %y = stack_pop %s1 : (stack<f32[N,4]>, f32[N,4])
    %n = stack_len %s2 : i64

Stacks are values like any other: pushing returns a new stack and leaves the old one
as it was. At run time a stack is a chain of immutable cells ``(below, record,
depth)``, so push and pop cost O(1) without copying, and a stack of T records holds
T records and nothing else.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, VerificationError
from ..ir import dtypes
from ..ir.traits import ContainerOperands
from ..ir.types import StackType, TensorType
from ._rules import defop

EMPTY = None  # the empty stack's run-time value


def _push(stack, *items):
    return (stack, items, 1 + (stack[2] if stack is not EMPTY else 0))


def _pop(stack):
    if stack is EMPTY:
        raise ShapeError("stack_pop on an empty stack")
    below, items, _ = stack
    return (below, *items) if items else below  # a one-result op returns its value alone


def _len(stack):
    return np.asarray(stack[2] if stack is not EMPTY else 0, dtype=np.int64)


def _stack_of(types, what: str) -> StackType:
    if not types or not isinstance(types[0], StackType):
        raise ShapeError(f"{what} takes a stack as its first operand, got "
                         f"{types[0] if types else 'nothing'}")
    return types[0]


def _push_infer(types, attrs):
    stack = _stack_of(types, "stack_push")
    if tuple(types[1:]) != stack.elems:
        raise ShapeError(f"pushing ({', '.join(map(str, types[1:]))}) onto a {stack}")
    return stack


def _pop_infer(types, attrs):
    stack = _stack_of(types, "stack_pop")
    return (stack, *stack.elems)


def _len_infer(types, attrs):
    _stack_of(types, "stack_len")
    return TensorType(dtypes.int64, ())


def _verify_new(op) -> None:
    if len(op.results) != 1 or not isinstance(op.results[0].type, StackType):
        raise VerificationError("stack_new must have one stack-typed result")


defop("stack_new", None, lambda: EMPTY, verify=_verify_new,
      doc="an empty stack; the result type names the record's tensor types")
defop("stack_push", _push_infer, _push, arity=(1, None), traits=(ContainerOperands(),),
      doc="stack_push(s, x...) is s with the record (x...) on top")
defop("stack_pop", _pop_infer, _pop, arity=1, traits=(ContainerOperands(),),
      doc="stack_pop(s) is (s without its top record, the top record's tensors...); "
          "popping an empty stack is a run-time error")
defop("stack_len", _len_infer, _len, arity=1, traits=(ContainerOperands(),), nondiff=True,
      doc="the number of records on the stack, as an i64 scalar")
