"""`Scope`: Paddle's ``global_scope()``, the variables of static programs by name.

In Paddle a program only describes its variables; their values live in a scope, by
name. Two programs that name the same parameter (a training program and a test
program built separately, or two layers given ``ParamAttr(name="w")``) therefore
read and write one value, and a program whose startup never ran has no values to
read. In irflow a variable's value lives in its tensor, and a scope maps names to
those tensors:

- ``create_parameter`` in static-graph mode returns the scope's parameter of the
  name it is asked for, if there is one, instead of a new parameter;
- the scope remembers which variables no startup program has initialized yet, and
  the `Executor` refuses to run a program that reads one (instead of running on the
  values drawn eagerly when the layer was built).

A thread has one global scope (static-graph mode is per thread); `scope_guard` makes
another one current. A scope holds its tensors weakly: a variable that no program
or layer uses any more leaves it.
"""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ..context import state, tracing
from ..tensor.tensor import Tensor


class Scope:
    """Static-graph variables by name, and which of them await their startup."""

    def __init__(self):
        self._vars: weakref.WeakValueDictionary[str, Tensor] = weakref.WeakValueDictionary()
        self._uninitialized: dict[int, weakref.ref] = {}

    def add(self, tensor: Tensor) -> None:
        """Register a variable that a startup program initializes: until one runs, a
        program reading it cannot run."""
        if self._vars.get(tensor.name) is tensor:
            return
        self._vars[tensor.name] = tensor
        key = id(tensor)
        self._uninitialized[key] = weakref.ref(tensor, lambda _: self._uninitialized.pop(key, None))

    def shared(self, name: str) -> Tensor | None:
        """The variable called `name`, which a new parameter of that name shares."""
        return self._vars.get(name)

    def initialized(self, tensors) -> None:
        """Note that `tensors` now hold values (a startup program ran, or they were set)."""
        for t in tensors:
            self._uninitialized.pop(id(t), None)

    def awaiting_startup(self, tensors) -> list[Tensor]:
        """Those of `tensors` that no startup program has initialized yet."""
        return [t for t in tensors if id(t) in self._uninitialized]

    def find_var(self, name: str) -> "ScopeVariable | None":
        """The variable called `name` (``.get_tensor()`` reads and sets its value), or
        None."""
        found = self._vars.get(name)
        return None if found is None else ScopeVariable(self, found)

    def local_var_names(self) -> list[str]:
        return list(self._vars)


class ScopeVariable:
    """A scope's variable, as Paddle's ``scope.find_var(name)`` returns it."""

    def __init__(self, scope: Scope, tensor: Tensor):
        self._scope, self._tensor = scope, tensor

    def get_tensor(self) -> "ScopeTensor":
        return ScopeTensor(self._scope, self._tensor)


class ScopeTensor:
    """A variable's value: ``np.array(t)`` reads it, ``t.set(array, place)`` sets it."""

    def __init__(self, scope: Scope, tensor: Tensor):
        self._scope, self._tensor = scope, tensor

    def __array__(self, dtype=None, copy=None):
        value = np.array(self._tensor._value, copy=True)
        return value if dtype is None else value.astype(dtype)

    def shape(self) -> list[int]:
        return list(self._tensor._value.shape)

    def set(self, value, place=None) -> None:
        """Set the variable's value (same shape and dtype) from an array."""
        with tracing(None):  # now, not traced into the current program
            self._tensor.set_value(value)
        self._scope.initialized([self._tensor])


def global_scope() -> Scope:
    """This thread's current scope (the one `scope_guard` set, else its global one)."""
    found = state.scope
    if found is None:
        found = state.scope = Scope()
    return found


@contextlib.contextmanager
def scope_guard(scope: Scope):
    """Make `scope` this thread's current scope inside the ``with`` block."""
    if not isinstance(scope, Scope):
        raise TypeError(f"scope_guard takes a paddle.static.Scope, not {type(scope).__name__}")
    saved, state.scope = state.scope, scope
    try:
        yield
    finally:
        state.scope = saved


__all__ = ["Scope", "ScopeTensor", "ScopeVariable", "global_scope", "scope_guard"]
