"""Saving and loading static programs: Paddle's ``paddle.static.save_inference_model``
/ ``load_inference_model`` (the program for deployment) and ``save`` / ``load`` (the
variables of a training program, to resume it).

An inference program is written as `irflow.jit.save` writes one (the IR as traced,
the parameters as ``.npz``, JSON metadata with checksums; nothing in the files runs
when loaded): the test-mode clone of the program (`Program.clone`), cut down to what
the fetched variables need, with the fed variables as its inputs. Loading it makes a
new static program that calls the loaded function on its inputs, as a static program
may call any loaded Layer, so the `Executor` runs it like the program it came from.

``save`` writes the program's parameters to ``<path>.pdparams`` and its other
variables (optimizer state) to ``<path>.pdopt``, in irflow's checkpoint format
(`irflow.save`); ``load`` sets them again by name.
"""
from __future__ import annotations

import os
from typing import Sequence

from ..dispatch import user_location
from ..errors import IrflowError
from ..ir.core import Module
from ..ir.verifier import verify
from ..jit.saved import load as load_saved, write_program
from ..passes.dce import dce
from ..serialization import load as load_file, save as save_file
from ..tensor.tensor import Tensor
from .executor import fetched_value
from .mode import program_guard, static_programs
from .program import Program


def save_inference_model(path_prefix: str, feed_vars, fetch_vars, executor=None,
                         program: Program | None = None, **kwargs) -> None:
    """Save the part of `program` (default: the current main program) that computes
    `fetch_vars` from `feed_vars`, in test mode (dropout off, batch norm on its moving
    statistics), with the current values of its parameters, at `path_prefix` (the
    files ``.json``, ``.irflow``, ``.pdiparams.npz``)."""
    feeds = _listed(feed_vars, "feed_vars")
    fetches = _listed(fetch_vars, "fetch_vars")
    if not path_prefix or os.path.basename(path_prefix) == "" or os.path.isdir(path_prefix):
        raise ValueError(f"save_inference_model: path_prefix should be a directory and a "
                         f"file name prefix ('dir/model'), got {path_prefix!r}")
    program = program or _program_of(fetches[0]) or static_programs("save_inference_model").main
    test = program.clone(for_test=True)
    fetch = [fetched_value(test, v, i, "save_inference_model: fetch_vars") for i, v in
             enumerate(fetches)]
    fn, sources, _ = test.closed(fetch)
    module = Module([fn])
    dce(module)
    names = [_feed_name(program, v, i) for i, v in enumerate(feeds)]
    position = {name: k for k, name in enumerate(names)}
    needed = [s for a, s in zip(fn.args, sources) if a.uses and isinstance(s, str)]
    missing = [s for s in needed if s not in position]
    if missing:
        raise IrflowError(f"save_inference_model: the fetched variables need the input "
                          f"{missing[0]!r}, which is not among feed_vars ({', '.join(names)})",
                          user_location())
    if any(a.uses for a, s in zip(fn.args, sources) if s is None):
        raise IrflowError("save_inference_model: the inference program draws random numbers, "
                          "which a saved program cannot", user_location())
    inputs = sorted((a for a, s in zip(fn.args, sources) if isinstance(s, str)
                     and s in position), key=lambda a: position[sources[a.index]])
    state = [(a, s) for a, s in zip(fn.args, sources) if isinstance(s, Tensor) and a.uses]
    kept = [*inputs, *(a for a, _ in state)]
    fn.block.permute_args([a.index for a in kept] +
                          [a.index for a in fn.args if all(a is not k for k in kept)])
    fn.block.erase_args(list(range(len(kept), len(fn.args))))  # unread state, the seed
    verify(module)
    write_program(path_prefix, fn, len(inputs), state)


def load_inference_model(path_prefix: str, executor=None, **kwargs) -> list:
    """A program saved by `save_inference_model`, as ``[program, feed_target_names,
    fetch_targets]``: run it with ``executor.run(program, feed={name: array},
    fetch_list=fetch_targets)``."""
    layer = load_saved(path_prefix)
    program = Program()
    with program_guard(program, Program()):
        inputs = [program._tracer.data(s.name, s.shape, s.dtype) for s in layer.input_spec]
        outs = program._tracer.resolving(lambda: layer(*inputs))
    fetch_targets = list(outs) if isinstance(outs, list | tuple) else [outs]
    return [program, [s.name for s in layer.input_spec], fetch_targets]


def save(program: Program, model_path: str, protocol: int = 4, **configs) -> None:
    """Save `program`'s parameters to ``model_path.pdparams`` and its other variables
    (optimizer state) to ``model_path.pdopt``, by name."""
    if not os.path.basename(model_path):
        raise ValueError(f"static.save: model_path must be 'dirname/filename', got "
                         f"{model_path!r}")
    directory = os.path.dirname(model_path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    save_file(program.state_dict("param"), model_path + ".pdparams")
    save_file(program.state_dict("opt"), model_path + ".pdopt")


def load(program: Program, model_path: str, executor=None,
         var_list: Sequence[Tensor] | None = None) -> None:
    """Set `program`'s variables (or those of `var_list`) from what `save` wrote at
    `model_path`: the parameters, and the optimizer state if there is a ``.pdopt``; a
    variable the files do not have is an error, as in Paddle."""
    state = load_program_state(model_path)
    if var_list is not None:
        wanted = [v.name for v in var_list]
    else:
        with_optimizer = os.path.exists(model_path + ".pdopt")
        wanted = list(program.state_dict("all" if with_optimizer else "param"))
    missing = [n for n in wanted if n not in state]
    if missing:
        raise ValueError(f"static.load: {model_path} has no variable {missing[0]!r} of the "
                         "program")
    program.set_state_dict({n: state[n] for n in wanted})


def load_program_state(model_path: str, var_list: Sequence[Tensor] | None = None) -> dict:
    """The variables `save` wrote at `model_path`, as NumPy arrays by name."""
    state = load_file(model_path + ".pdparams", return_numpy=True)
    if os.path.exists(model_path + ".pdopt"):
        state.update(load_file(model_path + ".pdopt", return_numpy=True))
    if var_list is not None:
        state = {v.name: state[v.name] for v in var_list if v.name in state}
    return state


def set_program_state(program: Program, state_dict: dict) -> None:
    """Set `program`'s variables by name from `state_dict`; names it does not have
    are skipped with a warning."""
    program.set_state_dict(state_dict)


def _listed(value, what: str) -> list:
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not items or not all(isinstance(v, Tensor) for v in items):
        raise TypeError(f"save_inference_model: {what} should be a variable or a list of "
                        f"variables of the program")
    return items


def _program_of(variable: Tensor) -> Program | None:
    """The program `variable` belongs to (Paddle finds it through the variable's block)."""
    owner = getattr(variable._tracer, "program", None)  # a static program's tracer has one
    return owner() if owner is not None else None


def _feed_name(program: Program, v: Tensor, index: int) -> str:
    """The input name of feed variable `v`: an input of `program`, or of the program it
    was cloned from (a test program saved with the training program's ``static.data``)."""
    value = v._ir if v._tracer is program._tracer else program._aliases.get(v._ir)
    name = next((n for n, a in program._tracer.inputs.items() if value is a), None)
    if name is None:
        raise IrflowError(f"save_inference_model: feed_vars[{index}] is not an input of the "
                          "program (a paddle.static.data variable)", user_location())
    return name


__all__ = ["load", "load_inference_model", "load_program_state", "save",
           "save_inference_model", "set_program_state"]
