"""`Scope`: Paddle's scopes, the values of static programs' variables by name.

In Paddle a program only describes its variables; their values live in a scope, by
name. Two programs that name the same parameter (a training program and a test
program built separately, or two layers given ``ParamAttr(name="w")``) therefore
read and write one value, a program whose startup never ran has no values to read,
and a program run under another scope (`scope_guard`, ``Executor.run(scope=...)``)
reads and updates that scope's values.

In irflow a variable's value lives in its tensor, which eager code, Layers and
``state_dict`` read: the thread's global scope is those tensors, so running a program
under it costs nothing more than passing the tensors' arrays. A scope made with
``Scope()`` holds values of its own:

- ``create_parameter`` in static-graph mode returns the current scope's parameter of
  the name it is asked for, if there is one, instead of a new parameter;
- a scope knows which variables no startup program has initialized in it yet, and
  the `Executor` refuses to run a program that reads one (instead of running on the
  values drawn eagerly when the layer was built, or on another scope's);
- a new scope is empty: running a startup program under it gives it values of the
  variables that program initializes, and programs run under it read and update
  those, leaving the tensors (the global scope's values) as they are. A variable it
  holds no value of is read from its tensor: a learning rate, which its optimizer
  writes there, and the parameters of a Layer built in dynamic-graph mode or loaded
  with ``load_inference_model``, which no startup program initializes.

A thread has one global scope (static-graph mode is per thread); `scope_guard` makes
another one current. A scope holds its variables weakly: a variable that no program
or layer uses any more leaves it, with its value.
"""
from __future__ import annotations

import contextlib
import operator
import weakref
from typing import Iterable, Sequence

import numpy as np

from ..context import state, tracing
from ..tensor.tensor import Tensor


class Scope:
    """Paddle's ``paddle.static.Scope()``: static-graph variables by name, with values
    of their own (see the module docstring)."""

    def __init__(self):
        self._vars: weakref.WeakValueDictionary[str, Tensor] = weakref.WeakValueDictionary()
        self._values: dict[int, tuple[weakref.ref, np.ndarray]] = {}

    # -- the variables programs are built with
    def add(self, tensor: Tensor) -> None:
        """Register a variable that a startup program initializes, under its name."""
        self._vars[tensor.name] = tensor

    def shared(self, name: str) -> Tensor | None:
        """The variable called `name`, which a new parameter of that name shares."""
        return self._vars.get(name)

    # -- their values
    def read(self, tensor: Tensor) -> np.ndarray:
        """The value of variable `tensor` in this scope: its own, else the tensor's."""
        held = self._values.get(id(tensor))
        return tensor._value if held is None else held[1]

    def write(self, tensors: Sequence[Tensor], arrays: Sequence[np.ndarray]) -> None:
        """Set the values of variables `tensors` (a program's updates) to `arrays`."""
        for t, array in zip(tensors, arrays):
            self._hold(t, array)

    def _hold(self, tensor: Tensor, array: np.ndarray) -> None:
        key = id(tensor)
        held = self._values.get(key)
        ref = held[0] if held is not None else \
            weakref.ref(tensor, lambda _: self._values.pop(key, None))
        self._values[key] = (ref, array)
        if tensor.name:
            self._vars[tensor.name] = tensor

    def assign(self, tensor: Tensor, value) -> None:
        """Set variable `tensor`'s value from `value` (an array or a Tensor of its
        shape), converted to its dtype as ``Tensor.set_value`` converts."""
        converted = Tensor._from_array(self.read(tensor))
        with tracing(None):  # now, not traced into the current program
            converted.set_value(value)
        self.write([tensor], [converted._value])

    def as_tensor(self, tensor: Tensor) -> Tensor:
        """Variable `tensor` with its value in this scope, named as it is."""
        held = self._values.get(id(tensor))
        if held is None:
            return tensor
        copy = Tensor._from_array(held[1])
        copy.name = tensor.name
        return copy

    def awaiting_startup(self, tensors: Iterable[Tensor],
                         created: Sequence[Tensor]) -> list[Tensor]:
        """Those of `tensors` (variables a program reads) that no startup program has
        initialized here: the parameters the program created (`created`) that this
        scope holds no value of."""
        made = {id(p) for p in created}
        return [t for t in tensors if id(t) in made and id(t) not in self._values]

    def find_var(self, name: str) -> "ScopeVariable | None":
        """The variable called `name` (``.get_tensor()`` reads and sets its value), or
        None."""
        found = self._vars.get(name)
        return None if found is None else ScopeVariable(self, found)

    def local_var_names(self) -> list[str]:
        return list(self._vars)


class _GlobalScope(Scope):
    """A thread's global scope: the values are the variables' tensors' own, so a
    program reads and updates the tensors, and it remembers which variables await
    their startup program."""

    def __init__(self):
        super().__init__()
        self._uninitialized: dict[int, weakref.ref] = {}

    read = staticmethod(operator.attrgetter("_value"))

    def add(self, tensor: Tensor) -> None:
        """Register a variable that a startup program initializes: until one runs, a
        program reading it cannot run."""
        if self._vars.get(tensor.name) is tensor:
            return
        self._vars[tensor.name] = tensor
        key = id(tensor)
        self._uninitialized[key] = weakref.ref(tensor, lambda _: self._uninitialized.pop(key, None))

    def write(self, tensors: Sequence[Tensor], arrays: Sequence[np.ndarray]) -> None:
        for t, array in zip(tensors, arrays):
            t._value = array
            self._uninitialized.pop(id(t), None)

    def assign(self, tensor: Tensor, value) -> None:
        with tracing(None):  # now, not traced into the current program
            tensor.set_value(value)
        self._uninitialized.pop(id(tensor), None)

    def as_tensor(self, tensor: Tensor) -> Tensor:
        return tensor

    def awaiting_startup(self, tensors: Iterable[Tensor],
                         created: Sequence[Tensor]) -> list[Tensor]:
        """Those of `tensors` registered for a startup program (`add`) that has not
        run since: the variables of any program, its own (`created`) or not."""
        return [t for t in tensors if id(t) in self._uninitialized]


class ScopeVariable:
    """A scope's variable, as Paddle's ``scope.find_var(name)`` returns it."""

    def __init__(self, scope: Scope, tensor: Tensor):
        self._scope, self._tensor = scope, tensor

    def get_tensor(self) -> "ScopeTensor":
        return ScopeTensor(self._scope, self._tensor)


class ScopeTensor:
    """A variable's value in a scope: ``np.array(t)`` reads it, ``t.set(array,
    place)`` sets it."""

    def __init__(self, scope: Scope, tensor: Tensor):
        self._scope, self._tensor = scope, tensor

    def __array__(self, dtype=None, copy=None):
        value = np.array(self._scope.read(self._tensor), copy=True)
        return value if dtype is None else value.astype(dtype)

    def shape(self) -> list[int]:
        return list(self._scope.read(self._tensor).shape)

    def set(self, value, place=None) -> None:
        """Set the variable's value (same shape and dtype) from an array."""
        self._scope.assign(self._tensor, value)


def global_scope() -> Scope:
    """This thread's current scope (the one `scope_guard` set, else its global one)."""
    found = state.scope
    if found is None:
        found = state.scope = _GlobalScope()
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
