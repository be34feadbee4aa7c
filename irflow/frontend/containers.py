"""Python containers a traced call changes: said, never silently frozen.

A compiled program runs the Python code of its function only while it is traced. A
list, dict or set that code changes (``self.seen.append(x)``, ``self.stats["calls"]
+= 1``, ``xs.append(y)`` on an argument) changes once, at the trace; eager code
changes it on every call. So:

- a container of the call's arguments the code changes is an error: the program
  gets copies of them, and the caller's never change;
- tensors put into any other container at the trace are traced values, meaningless
  once tracing ends: an error too (the containers are put back as they were);
- other changes (a count, a cache filled once) are a warning at the user's call,
  since code that fills a cache on its first call behaves the same compiled.

`ContainerSnapshot` records the containers a call can reach without running code:
the public attributes of the Layers involved, the objects the function names (its
globals and closure) and the containers among the call's arguments; `check`
compares them after the trace, element by element (by identity).
"""
from __future__ import annotations

import warnings
from typing import Iterable

from ..errors import ConversionError, Location
from ..tensor.tensor import Tensor

CONTAINERS = (list, dict, set)  # and their subclasses (OrderedDict, defaultdict)


def _contents(container) -> list:
    if isinstance(container, dict):
        return list(container.items())
    return list(container)


def _same(before: list, after: list) -> bool:
    if len(before) != len(after):
        return False
    for a, b in zip(before, after):
        if isinstance(a, tuple):  # a dict's (key, value)
            if a[0] != b[0] or a[1] is not b[1]:
                return False
        elif a is not b:
            return False
    return True


def _new_traced(container, before: list) -> bool:
    """Whether `container` holds a traced tensor it did not hold before."""
    old = {id(v[1] if isinstance(v, tuple) else v) for v in before}
    values = container.values() if isinstance(container, dict) else container
    return any(isinstance(v, Tensor) and v._value is None and id(v) not in old
               for v in values)


def _restore(container, contents: list) -> None:
    container.clear()
    if isinstance(container, list):
        container.extend(contents)
    else:
        container.update(contents)


class ContainerSnapshot:
    """The reachable containers' contents before a trace (see the module docstring)."""

    def __init__(self, labelled: Iterable[tuple[str, object, bool]]):
        seen = set()
        self.entries = []  # (label, container, its contents, any change an error)
        for label, container, strict in labelled:
            if isinstance(container, CONTAINERS) and id(container) not in seen:
                seen.add(id(container))
                self.entries.append((label, container, _contents(container), strict))

    @classmethod
    def of(cls, layers: Iterable, named: Iterable, arguments: Iterable) -> "ContainerSnapshot":
        """The public attributes of `layers` (and of their sublayers; a Layer's own
        start with an underscore), the objects a function names (`named`) and the
        call's `arguments` as the traced code gets them (containers among them, and
        one level inside)."""
        from ..nn.layer.layers import Layer
        labelled = []
        for root in layers:
            if isinstance(root, Layer):
                for layer in root.sublayers(include_self=True):
                    labelled += [(f"{type(layer).__name__}.{name}", value, False)
                                 for name, value in layer.__dict__.items()
                                 if not name.startswith("_")]
        labelled += [("an object the function names", obj, False) for obj in named]
        for k, arg in enumerate(arguments):
            inner = list(arg.values() if isinstance(arg, dict) else arg) \
                if isinstance(arg, (list, tuple, dict)) else []
            labelled += [(f"argument {k}", arg, True)]
            labelled += [(f"an element of argument {k}", v, True) for v in inner]
        return cls(labelled)

    def check(self, location: Location | None) -> None:
        """After the trace: put back and refuse the containers whose change the
        program cannot make (ConversionError at `location`); warn of the others."""
        changed = [(label, c, before, strict) for label, c, before, strict in self.entries
                   if not _same(before, _contents(c))]
        broken = [(label, c, before) for label, c, before, strict in changed
                  if strict or _new_traced(c, before)]
        for _, container, before in broken:
            _restore(container, before)
        if broken:
            labels = ", ".join(dict.fromkeys(label for label, _, _ in broken))
            raise ConversionError(
                f"the compiled code changes a Python list, dict or set ({labels}) that "
                "the program cannot change when it runs: it runs Python code only when "
                "traced, and gets copies of its arguments. Keep such state in tensors "
                "(register_buffer, or return it)", location)
        for label, container, _, _ in changed:
            message = (f"the compiled code changed a Python {type(container).__name__} "
                       f"({label}) while it was traced; it runs Python code only then, so "
                       "later calls will not change it as eager code does on every call")
            if location is None:
                warnings.warn(message, RuntimeWarning, stacklevel=2)
            else:
                warnings.warn_explicit(message, RuntimeWarning, location.file, location.line)
