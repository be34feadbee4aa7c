"""What irflow is doing in the current thread: `state`.

Whether gradients are recorded (`irflow.no_grad`), the frontend's active tracer and
the observer of eager ops (``compile(..., check=True)``) are per thread, so that
``no_grad()`` in one thread, or compiling in one thread, does not change what eager
code running in another thread does. A new thread starts recording gradients, with
no tracer and no observer.

They are context variables, which every thread (and every asyncio task) sees on its
own. `state.grad_enabled`, `state.tracer` and `state.observer` read and set them. The
eager hot path (`irflow.dispatch.apply`, `Layer.__call__`, Tensor hooks) reads them
with `grad_enabled()`, `current_tracer()` and `current_observer()` instead: the
variables' bound ``get`` methods, cheaper to call than an attribute is to read.

This module is the bottom of the eager stack: the Tensor class reads it for its
tracing hooks, and `irflow.dispatch` (which makes Tensors) for every op.
"""
from __future__ import annotations

from contextvars import ContextVar

_grad_enabled: ContextVar[bool] = ContextVar("irflow.grad_enabled", default=True)
_tracer: ContextVar = ContextVar("irflow.tracer", default=None)
_observer: ContextVar = ContextVar("irflow.observer", default=None)

grad_enabled = _grad_enabled.get
current_tracer = _tracer.get
current_observer = _observer.get


def _attribute(var: ContextVar, doc: str) -> property:
    return property(lambda self: var.get(), lambda self, value: var.set(value), doc=doc)


class _ThreadState:
    __slots__ = ()
    grad_enabled = _attribute(_grad_enabled, "whether eager ops record the dynamic graph")
    tracer = _attribute(_tracer, "the frontend's active tracer, if any")
    observer = _attribute(_observer, "called as observer(name, location, results) after "
                                     "each eager op")


state = _ThreadState()
