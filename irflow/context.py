"""What irflow is doing in the current thread: `state`.

Whether gradients are recorded (`irflow.no_grad`), the frontend's active tracer,
the observer of eager ops (``compile(..., check=True)``) and the static-graph mode
(``paddle.enable_static()``: the programs ops are added to, the scope of their
variables) are per thread, so that
``no_grad()``, compiling or building a static program in one thread does not change
what eager code running in another thread does. A new thread starts recording
gradients, in dynamic-graph mode, with no tracer and no observer.

They are context variables, which every thread (and every asyncio task) sees on its
own. `state.grad_enabled`, `state.tracer`, `state.observer`, `state.static`,
`state.default_programs` and `state.scope` read and set them. The
eager hot path (`irflow.dispatch.apply`, `Layer.__call__`, Tensor hooks) reads them
with `grad_enabled()`, `current_tracer()` and `current_observer()` instead (and
`no_grad` sets the mode with `set_grad_mode`): the variables' bound ``get`` and
``set`` methods, cheaper to call than an attribute is to read.

This module is the bottom of the eager stack: the Tensor class reads it for its
tracing hooks, and `irflow.dispatch` (which makes Tensors) for every op.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_grad_enabled: ContextVar[bool] = ContextVar("irflow.grad_enabled", default=True)
_tracer: ContextVar = ContextVar("irflow.tracer", default=None)
_observer: ContextVar = ContextVar("irflow.observer", default=None)
_static: ContextVar = ContextVar("irflow.static", default=None)
_default_programs: ContextVar = ContextVar("irflow.default_programs", default=None)
_scope: ContextVar = ContextVar("irflow.scope", default=None)

grad_enabled = _grad_enabled.get
set_grad_mode = _grad_enabled.set  # what ``with no_grad():`` sets, twice a block
current_tracer = _tracer.get
current_observer = _observer.get
current_static = _static.get


def _attribute(var: ContextVar, doc: str) -> property:
    return property(lambda self: var.get(), lambda self, value: var.set(value), doc=doc)


class _ThreadState:
    __slots__ = ()
    grad_enabled = _attribute(_grad_enabled, "whether eager ops record the dynamic graph")
    tracer = _attribute(_tracer, "the frontend's active tracer, if any")
    observer = _attribute(_observer, "called as observer(name, location, results) after "
                                     "each eager op")
    static = _attribute(_static, "the static-graph main and startup programs that ops are "
                                 "added to (irflow.static), or None in dynamic-graph mode")
    default_programs = _attribute(_default_programs, "this thread's default main and startup "
                                                     "programs, once made")
    scope = _attribute(_scope, "this thread's current static-graph scope (irflow.static."
                               "Scope: variables by name), once made")


state = _ThreadState()


@contextmanager
def tracing(tracer):
    """Make `tracer` (None: none) the thread's active tracer inside the ``with`` block:
    a static program's startup traces into its own program, and setting a variable
    from outside a program is not traced into the current one."""
    token = _tracer.set(tracer)
    try:
        yield
    finally:
        _tracer.reset(token)
