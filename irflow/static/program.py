"""`Program`: Paddle's static-graph program, which in irflow is an IR function.

While a program is current (``paddle.enable_static()`` and `program_guard`), every
op the user's code runs is traced into it by a `ProgramTracer`, as when compiling a
Layer, but one statement at a time: ``static.data`` adds an input argument, a
parameter read by a layer becomes a state argument (its values live in the
Parameter tensor, as for compiled Layers), and ``set_value`` (an optimizer's
update, BatchNorm's running statistics) records the variable's new value. The
function has no ``return`` until an `Executor` runs it: the executor copies it with
the values it fetches and the updates as results (`Program.closed`).

A startup program is a program like any other, whose updates give variables their
initial values: each parameter created in static-graph mode (``static.nn.fc``, any
``nn`` layer) is drawn again by a ``uniform``, ``normal`` or filled value its
initializer names, and an optimizer's accumulators are filled with their initial
values, so running it again restarts training.
"""
from __future__ import annotations

import warnings
import weakref
from typing import Sequence

from ..context import tracing
from ..errors import IrflowError
from ..ir.builder import Builder
from ..ir.core import Function, Module, OpResult, Operation, Value
from ..optimizer.lr import LRScheduler
from ..tensor.creation import full
from ..tensor.random import normal, uniform
from ..tensor.tensor import Parameter, Tensor
from .scope import global_scope
from .tracing import ProgramTracer


_STATE_MODES = {"all": lambda t: True,
                "param": lambda t: isinstance(t, Parameter),
                "opt": lambda t: not isinstance(t, Parameter)}


class Program:
    """A static-graph program. ``print(program)`` shows its IR (returning the new value
    of each variable it updates), `global_block()` its ops and variables."""

    def __init__(self, name: str = "main"):
        self._tracer = ProgramTracer(name)
        self._tracer.program = weakref.ref(self)  # a variable's program, from the variable
        self._aliases: dict[Value, Value] = {}  # a clone's source values -> its own
        self._executables: dict = {}            # the executor's compiled fetch lists
        # the optimizers whose updates the program runs: a scheduler refreshes their
        # learning-rate variables, which it holds weakly (`Optimizer.minimize`)
        self._optimizers: list = []

    # -- what it holds
    def global_block(self) -> "Block":
        return Block(self)

    def block(self, index: int) -> "Block":
        if index != 0:
            raise IrflowError(f"a program has one block (its nested regions belong to the "
                              f"ops that hold them), not block {index}")
        return Block(self)

    @property
    def num_blocks(self) -> int:
        return 1

    def all_parameters(self) -> list[Parameter]:
        return self._tracer.parameters()

    def list_vars(self) -> list[Tensor]:
        return list(self.global_block().vars.values())

    def state_dict(self, mode: str = "all", scope=None) -> dict[str, Tensor]:
        """The program's variables by name, with their values in `scope` (default: the
        current scope; in the global scope, the live tensors), as ``irflow.save``
        takes them. `mode`: ``"all"``, ``"param"`` (the parameters) or ``"opt"`` (the
        others: optimizer state)."""
        if mode not in _STATE_MODES:
            raise ValueError(f"Program.state_dict: mode should be one of "
                             f"{', '.join(map(repr, _STATE_MODES))}, not {mode!r}")
        scope = scope or global_scope()
        return {t.name: scope.as_tensor(t) for t in self._variables()
                if t.name and _STATE_MODES[mode](t)}

    def set_state_dict(self, state_dict: dict, scope=None) -> None:
        """Set variables by name from `state_dict` (tensors or arrays) in `scope`
        (default: the current scope); a name the program does not have is skipped with
        a warning, as in Paddle. A learning rate that a scheduler drives keeps the
        scheduler's rate, as in Paddle, whose executor writes it before every run."""
        own = {t.name: t for t in self._variables() if t.name}
        for name in state_dict:
            if name not in own:
                warnings.warn(f"Skip loading for {name!r}: the program has no variable of "
                              f"that name (its variables: {', '.join(own)})", stacklevel=2)
        scheduled = self._scheduled_rates()
        scope = scope or global_scope()
        for name, value in state_dict.items():
            if name in own and id(own[name]) not in scheduled:
                scope.assign(own[name], value)

    def _variables(self) -> list[Tensor]:
        return [*self._tracer.created, *self._tracer.state]

    def _scheduled_rates(self) -> set[int]:
        """The ids of the learning-rate variables whose rate a scheduler sets: the
        optimizer writes the scheduler's rate into them only when it changes, so a
        value loaded into one would stand until the scheduler's next step."""
        return {id(t) for opt in self._optimizers
                if isinstance(opt._learning_rate, LRScheduler)
                for t in opt._lr_tensors.values()}

    def clone(self, for_test: bool = False) -> "Program":
        """A copy of the program as built so far, sharing its variables. With
        `for_test`, the inference program: only the forward, without state updates,
        and with layers such as ``static.nn.batch_norm`` in test mode."""
        copy = Program.__new__(Program)
        copy._tracer, mapping = self._tracer.clone(for_test)
        copy._tracer.program = weakref.ref(copy)
        copy._aliases = {**{v: mapping[mine] for v, mine in self._aliases.items()}, **mapping}
        copy._executables = {}
        copy._optimizers = list(self._optimizers)
        return copy

    # -- running
    def closed(self, fetch: Sequence[Value]) -> tuple[Function, list, list[Tensor]]:
        """A copy of the program's function that returns `fetch` and then the new value
        of each variable it updates; the source of each argument (an input's name, a
        variable's Tensor, or None for the random seed); and the updated variables."""
        t = self._tracer
        mapping: dict[Value, Value] = {}
        fn = Function(t.fn.name)
        fn.body = t.fn.body.clone(mapping)
        targets = [v for v in t.state if id(v) in t.updates]
        updates = [mapping[t.updates[id(v)]._ir] for v in targets]
        for new, v in zip(updates, targets):  # printed as the variable's new value
            if isinstance(new, OpResult) and new.name is None:
                new.name = v.name
        Builder(fn.block).ret(*[mapping[v] for v in fetch], *updates)
        sources = {**{a: name for name, a in t.inputs.items()},
                   **{t.state_args[id(v)]: v for v in t.state}}
        return fn, [sources.get(a) for a in t.fn.args], targets

    def __str__(self) -> str:
        """The IR, without the arguments of variables it does not read (a startup
        program's, which it only writes)."""
        fn = self.closed(())[0]
        inputs = len(self._tracer.inputs)
        fn.block.erase_args([a.index for a in fn.args[inputs:] if not a.uses])
        return str(Module([fn]))

    __repr__ = __str__

    # -- as a startup program
    def initialize(self, tensor: Tensor, initializer=None) -> None:
        """When this program runs, give `tensor` a fresh initial value: drawn as
        `initializer` says, a fill if its current value is one, else that value."""
        if not self._tracer.fn.block.ops and not self._tracer.inputs:
            self._tracer.fn.name = "startup"
        with tracing(self._tracer):
            self._tracer.initial_value(tensor, _initial_value(tensor, initializer))


def _initial_value(t: Tensor, initializer) -> Tensor:
    shape, dtype = list(t._value.shape), t.dtype
    drawn = initializer.distribution(tuple(shape)) if initializer is not None else None
    flat = t._value.reshape(-1)
    if drawn is None and flat.size and bool((flat == flat[0]).all()):
        drawn = ("full", flat[0].item())
    if drawn is None:
        return Tensor._from_array(t._value)  # data no op draws: a constant
    kind, *args = drawn
    if kind == "uniform":
        return uniform(shape, dtype, *args)
    if kind == "normal":
        return normal(*args, shape)
    return full(shape, args[0], dtype)


class Block:
    """Paddle's ``program.global_block()``: the program's top-level ops (IR operations;
    nested regions belong to their ``cond`` and ``while`` ops) and its variables."""

    def __init__(self, program: Program):
        self.program = program
        self.idx = 0

    @property
    def ops(self) -> list[Operation]:
        return list(self.program._tracer.fn.block.ops)

    @property
    def vars(self) -> dict[str, Tensor]:
        """The inputs (``static.data``) and the variables, by name."""
        t = self.program._tracer
        inputs = {}
        for name, arg in t.inputs.items():
            inputs[name] = t.wrap(arg)
            inputs[name].name = name
        return {**inputs, **{v.name: v for v in t.state if v.name}}

    def var(self, name: str) -> Tensor:
        found = self.vars.get(name)
        if found is None:
            raise ValueError(f"the program has no variable {name!r}; it has: "
                             f"{', '.join(self.vars) or 'none'}")
        return found

    def all_parameters(self) -> list[Parameter]:
        return self.program.all_parameters()


__all__ = ["Block", "Program"]
