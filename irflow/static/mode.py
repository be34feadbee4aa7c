"""Static-graph mode, per thread: which programs the ops of this thread go to.

``paddle.enable_static()`` makes this thread's default main program the current one:
its tracer becomes the thread's active tracer (`irflow.context`), so every op, from
``paddle.mean`` to a layer's forward, is traced into it instead of run.
`program_guard` makes another pair current for a ``with`` block. The default
programs, too, are the thread's own, so two threads build two programs.

Code below this layer reaches the current programs through ``state.static`` (a
`Programs`) without importing it: ``create_parameter`` shares the scope's parameter
of the name it is given or has the startup program initialize a new one, and an
optimizer made without parameters asks for those of the loss's program.
"""
from __future__ import annotations

import contextlib

from ..context import state
from ..errors import IrflowError
from ..tensor.tensor import Parameter
from .program import Program
from .scope import global_scope


class Programs:
    """The main program ops are added to, and the startup program that initializes
    the variables they create."""

    __slots__ = ("main", "startup")

    def __init__(self, main: Program, startup: Program):
        self.main, self.startup = main, startup

    def initialize(self, tensor, initializer=None) -> None:
        """Have the startup program initialize `tensor`, a variable of the scope (a
        new one, or one another program shares), unless it does already."""
        if id(tensor) not in self.startup._tracer.updates:
            self.startup.initialize(tensor, initializer)
        if isinstance(tensor, Parameter):
            self.main._tracer.note_created(tensor)
        global_scope().add(tensor)

    def shared(self, name: str):
        """The scope's variable called `name`, which a new parameter of that name is."""
        return global_scope().shared(name)

    def builds_with(self, tensor) -> bool:
        """Whether the programs being built use `tensor` already: the main program
        reads it, or the startup program initializes it."""
        return id(tensor) in self.main._tracer.state_args or \
            id(tensor) in self.startup._tracer.updates

    def parameters(self, loss) -> list:
        """The trainable parameters of the main program, which `loss` must be part of
        (``optimizer.minimize(loss)`` without `parameters`)."""
        if getattr(loss, "_tracer", None) is not self.main._tracer:
            raise IrflowError("minimize(loss): the loss must be a variable of the current "
                              "main program; call minimize inside its program_guard")
        return [p for p in self.main._tracer.parameters() if not p.stop_gradient]


def _defaults() -> Programs:
    found = state.default_programs
    if found is None:
        found = state.default_programs = Programs(Program("main"), Program("startup"))
    return found


def static_programs(api: str) -> Programs:
    """The current programs; raises for `api` (a static-graph function) in
    dynamic-graph mode."""
    found = state.static
    if found is None:
        raise IrflowError(f"{api} is only supported in static-graph mode; call "
                          "paddle.enable_static() first")
    return found


def enable_static() -> None:
    """Enter static-graph mode in this thread: ops are added to the default main
    program (or the one `program_guard` names) instead of running."""
    if state.static is not None:
        return
    if state.tracer is not None:
        raise IrflowError("enable_static() cannot be called while a program is compiled")
    programs = _defaults()
    state.static, state.tracer = programs, programs.main._tracer


def disable_static(place=None) -> None:
    """Return to dynamic-graph (eager) mode in this thread."""
    if state.static is not None:
        state.static = state.tracer = None


def in_dynamic_mode() -> bool:
    return state.static is None


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Add ops to `main_program`, and the initialization of the parameters they
    create to `startup_program` (default: the current startup program), inside the
    ``with`` block."""
    for what, p in (("main_program", main_program), ("startup_program", startup_program)):
        if p is not None and not isinstance(p, Program):
            raise TypeError(f"program_guard: {what} must be a paddle.static.Program, not "
                            f"{type(p).__name__}")
    current = static_programs("program_guard")
    saved = current, state.tracer
    state.static = Programs(main_program, startup_program or current.startup)
    state.tracer = main_program._tracer
    try:
        yield
    finally:
        state.static, state.tracer = saved


def default_main_program() -> Program:
    return (state.static or _defaults()).main


def default_startup_program() -> Program:
    return (state.static or _defaults()).startup


@contextlib.contextmanager
def dynamic_mode():
    """Run eagerly inside the ``with`` block, in static-graph mode too (what
    ``utils.run_check`` needs)."""
    saved = state.static, state.tracer
    if saved[0] is not None:
        state.static = state.tracer = None
    try:
        yield
    finally:
        if saved[0] is not None:
            state.static, state.tracer = saved


__all__ = ["Programs", "default_main_program", "default_startup_program",
           "disable_static", "dynamic_mode", "enable_static", "in_dynamic_mode",
           "program_guard", "static_programs"]
