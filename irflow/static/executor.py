"""`Executor`: runs a static-graph `Program` on a feed and returns what it fetches.

For each fetch list a program is compiled once (and again after ops are added):
its function is copied with the fetched values and the updated variables as
results (`Program.closed`), verified, optimized by the default pipeline and
compiled into a plan. Arguments nothing reads after ``dce`` are dropped, so a run
needs only the inputs its fetches depend on (a test program fetching logits needs
no labels). A run checks the feed against the inputs, passes the variables' current
values in the scope it runs under (refusing those no startup program has initialized
there: `irflow.static.scope`), writes the updated ones back to it and returns NumPy
arrays.
"""
from __future__ import annotations

import difflib
from typing import Sequence

import numpy as np

from ..codegen.executor import compile_plan
from ..dispatch import user_location
from ..errors import InputError, IrflowError
from ..frontend.tracer import owner_block
from ..ir.core import Module, Value
from ..ir.signature import Signature, SignatureMismatch
from ..ir.types import TensorType
from ..ir.verifier import verify
from ..passes.manager import DEFAULT_PIPELINE, PassManager
from ..tensor.random import host_seed
from ..tensor.tensor import Tensor
from .mode import default_main_program
from .program import Program
from .scope import Scope, global_scope


class Executor:
    """Paddle's ``paddle.static.Executor``. irflow runs on the CPU, so `place` is
    accepted for compatibility (a `CPUPlace`)."""

    def __init__(self, place=None):
        self.place = place

    def run(self, program: Program | None = None, feed: dict | list | None = None,
            fetch_list: Sequence | None = None, feed_var_name: str = "feed",
            fetch_var_name: str = "fetch", scope=None, return_numpy: bool = True,
            use_program_cache: bool = False, use_prune: bool = False):
        """Run `program` (default: the default main program; or a `CompiledProgram` of
        one) with `feed` (input name -> array, or a list of one such dict, as Paddle
        takes one per device) and return the values of `fetch_list` (variables or
        their names): NumPy arrays, or Tensors with ``return_numpy=False``. Variables
        are read from and updated in `scope` (default: the current scope,
        `global_scope()`)."""
        program = default_main_program() if program is None else program
        if isinstance(program, CompiledProgram):
            program = program._program
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run takes a paddle.static.Program, not "
                            f"{type(program).__name__}")
        fetch = [fetched_value(program, f, i) for i, f in enumerate(fetch_list or [])]
        compiled = _compiled(program, fetch)
        outs = compiled.run(program, _feed_dict(feed), scope or global_scope())
        if return_numpy:
            return [np.array(o) for o in outs]
        return [Tensor._from_array(np.asarray(o)) for o in outs]

    def close(self) -> None:
        """Nothing to release: programs own their compiled plans."""


class BuildStrategy:
    """Paddle's ``paddle.static.BuildStrategy``: options of the graph passes Paddle runs
    on a `CompiledProgram` (``fuse_all_reduce_ops``, ``enable_inplace``, ...), set as
    attributes. irflow's executor optimizes every program with its own pipeline, so
    they change nothing."""


class CompiledProgram:
    """Paddle's ``paddle.static.CompiledProgram(program, build_strategy)``: the program,
    for an `Executor` to run as it runs any program (which it compiles itself)."""

    def __init__(self, program_or_graph: Program, build_strategy: BuildStrategy | None = None):
        if not isinstance(program_or_graph, Program):
            raise TypeError(f"CompiledProgram takes a paddle.static.Program, not "
                            f"{type(program_or_graph).__name__}")
        self._program = program_or_graph
        self._build_strategy = build_strategy


class _Compiled:
    """A program compiled for one fetch list."""

    def __init__(self, program: Program, fetch: list[Value]):
        fn, sources, self.targets = program.closed(fetch)
        self.n_fetch = len(fetch)
        module = Module([fn])
        verify(module)
        PassManager(DEFAULT_PIPELINE).run(module)
        unused = {a.index for a in fn.args if not a.uses}
        fn.block.erase_args(unused)
        self.sources = [s for i, s in enumerate(sources) if i not in unused]
        self.signature = Signature(fn.arg_types)
        self.plan = compile_plan(fn)

    def run(self, program: Program, feed: dict, scope: Scope) -> list:
        inputs = program._tracer.inputs
        unknown = [k for k in feed if k not in inputs]
        if unknown:
            raise InputError(f"Executor.run: the feed has {_near(unknown[0], inputs)}, which is "
                             f"not an input of the program; {_inputs(inputs)}", user_location())
        read = scope.read
        args = []
        for source in self.sources:
            if isinstance(source, str):  # an input, from the feed
                if source not in feed:
                    raise InputError(f"Executor.run: the feed has no {source!r}, an input the "
                                     f"fetched values need; {_inputs(inputs)}", user_location())
                args.append(_array(source, feed[source], inputs[source].type))
            elif source is None:         # the random seed: fresh for each run
                args.append(np.asarray(host_seed(), dtype=np.int64))
            else:                        # a variable: its value in the scope
                args.append(read(source))
        try:
            self.signature.check(args)
        except SignatureMismatch as e:
            fed = {k: np.shape(v) for k, v in zip(self.sources, args) if isinstance(k, str)}
            raise _feed_error(program, self.sources[e.index], args[e.index], e, fed) from None
        _check_initialized(self.sources, scope, program._tracer.created)
        outs = self.plan(*args)
        scope.write(self.targets, outs[self.n_fetch:])
        return outs[:self.n_fetch]


def _check_initialized(sources: list, scope: Scope, created: list) -> None:
    """Refuse to read variables whose startup program never ran in `scope` (Paddle has
    no value for them; irflow would read the values drawn when the layers were built,
    or the global scope's). `created`: the parameters the program created."""
    waiting = scope.awaiting_startup([s for s in sources if isinstance(s, Tensor)], created)
    if waiting:
        names = ", ".join(repr(t.name) for t in waiting[:3]) + (", ..." if len(waiting) > 3 else "")
        raise IrflowError(f"Executor.run: the program reads {names}, which no startup program "
                          "has initialized yet: run the startup program first "
                          "(exe.run(startup_program), or paddle.static.default_startup_program())",
                          user_location())


def _compiled(program: Program, fetch: list[Value]) -> _Compiled:
    """The program compiled for `fetch`, recompiled once the program has changed."""
    version = program._tracer.version()
    key = tuple(fetch)
    found = program._executables.get(key)
    if found is None or found[0] != version:
        found = program._executables[key] = (version, _Compiled(program, fetch))
    return found[1]


def fetched_value(program: Program, item, index: int,
                  what: str = "Executor.run: fetch_list") -> Value:
    """The value of `program` that fetch_list entry `item` (a variable or its name)
    stands for; a variable the program updates is fetched with its new value. `what`
    names the list for errors."""
    tracer = program._tracer
    if isinstance(item, str):
        found = {**{n: tracer.wrap(a) for n, a in tracer.inputs.items()},
                 **{t.name: t for t in tracer.state if t.name}, **tracer.named}.get(item)
        if found is None:
            raise IrflowError(f"{what}[{index}] names {item!r}, which is "
                              "not an input or variable of the program; fetch the variable "
                              "itself (e.g. the loss)", user_location())
        item = found
    if not isinstance(item, Tensor):
        raise TypeError(f"{what}[{index}] should be a variable or its "
                        f"name, not {type(item).__name__}")
    if item._value is not None:  # a parameter or other variable
        if id(item) not in tracer.state_args:
            raise IrflowError(f"{what}[{index}] ({item.name or 'a tensor'}) "
                              "is not a variable of this program", user_location())
        updated = tracer.updates.get(id(item))
        return updated._ir if updated is not None else tracer.state_args[id(item)]
    value = item._ir if item._tracer is tracer else program._aliases.get(item._ir)
    if value is None:
        raise IrflowError(f"{what}[{index}] is a variable of another "
                          "program", user_location())
    if owner_block(value) is not tracer.fn.block:
        raise IrflowError(f"{what}[{index}] was computed inside a "
                          "static.nn.cond or while_loop; fetch what it returns",
                          user_location())
    return value


def _feed_dict(feed) -> dict:
    """`feed` as one dict of input names: a dict, or a list of one (Paddle's feed of
    one device; irflow runs on one)."""
    if feed is None:
        return {}
    if isinstance(feed, list | tuple):
        if len(feed) != 1 or not isinstance(feed[0], dict):
            raise TypeError(f"Executor.run: a feed list should hold one dict (irflow runs "
                            f"on one device), got {len(feed)} items")
        feed = feed[0]
    if not isinstance(feed, dict):
        raise TypeError(f"Executor.run: feed should be a dict of input names to arrays, "
                        f"not {type(feed).__name__}")
    keys = [k for k in feed if not isinstance(k, str)]
    if keys:
        raise TypeError(f"Executor.run: the feed's keys should be input names (str), got "
                        f"a {type(keys[0]).__name__}")
    return feed


def _array(name: str, value, t: TensorType) -> np.ndarray:
    """A feed value as an array: Tensors and arrays as they are (their dtype is
    checked), lists and numbers in the input's dtype (as Paddle converts them)."""
    if isinstance(value, Tensor):
        return value._concrete(f"feed {name!r}")
    if isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(value, dtype=t.dtype.np)
    except (TypeError, ValueError) as e:
        raise InputError(f"Executor.run: feed {name!r} cannot be read as a "
                         f"{t.dtype.name} array: {e}", user_location()) from None


def _feed_error(program: Program, source, array: np.ndarray, e: SignatureMismatch,
                fed: dict[str, tuple]):
    if not isinstance(source, str):  # a variable changed behind the program's back
        raise e
    tracer = program._tracer
    arg = tracer.inputs[source]
    if e.kind == "dtype":
        return InputError(f"Executor.run: feed {source!r} should be {arg.type.dtype.name}, "
                          f"got {array.dtype}", user_location())
    shape = [d if isinstance(d, int) else -1 for d in arg.type.shape]
    return InputError(f"Executor.run: feed {source!r} should have shape {shape}, got "
                      f"{list(array.shape)}{tracer.why_fixed(arg, fed)}", user_location())


def _inputs(inputs: dict) -> str:
    listed = ", ".join(f"{n!r} ({a.type.dtype.name}"
                       f"{[d if isinstance(d, int) else -1 for d in a.type.shape]})"
                       for n, a in inputs.items())
    return f"the program's inputs are {listed}" if inputs else "the program has no inputs"


def _near(name: str, inputs: dict) -> str:
    close = difflib.get_close_matches(name, list(inputs), n=1) or \
        [n for n in inputs if n.lower() == name.lower()]
    return f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)


__all__ = ["BuildStrategy", "CompiledProgram", "Executor"]
