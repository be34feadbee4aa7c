"""`jit.save` / `jit.load`: compiled programs on disk, loadable without their Python class.

A saved program is three files next to each other:

- ``<path>.irflow``: the program's IR text (parsed on load, never executed);
- ``<path>.pdiparams.npz``: the values of its state arguments (parameters and buffers),
  read with ``allow_pickle=False``;
- ``<path>.json``: what the loader needs besides: input names and specs, the state
  arguments' names, and how many results are outputs.

Loading parses, verifies and compiles the IR; nothing in the files is run as code.
"""
from __future__ import annotations

import json
import os

import numpy as np

from ..codegen.executor import compile_plan
from ..dispatch import user_location
from ..errors import InputError, IrflowError
from ..ir.core import Module
from ..ir.parser import parse
from ..ir.signature import Signature, SignatureMismatch
from ..ir.verifier import verify
from ..passes.dce import dce
from ..passes.freeze import freeze_for_inference
from ..passes.manager import INFERENCE_PIPELINE
from ..tensor.tensor import Tensor

FORMAT = "irflow-program"
VERSION = 1


def save(layer, path: str, input_spec=None, **configs) -> None:
    """Save the inference program of a compiled Layer or function (or of a Layer,
    compiled here with `input_spec`)."""
    from ..frontend.program import CompiledFunction
    compiled = layer if isinstance(layer, CompiledFunction) else \
        CompiledFunction(layer, input_spec)
    if compiled.input_spec is None and compiled._last is None:
        raise IrflowError("jit.save needs an input_spec, or a compiled function that has "
                          "been called", user_location())
    program = compiled._program_for_ir()
    if program.uses_seed:
        raise IrflowError("jit.save: the program draws random numbers (is the layer in "
                          "train mode? call eval() first)", user_location())
    # An eval model is saved frozen: its parameters constants while the pipeline runs
    # (BatchNorm folds into the conv before it), the resulting weights stored.
    frozen = not any(compiled._mode_key()) and not program.grad_targets
    module = (program.source_ir if frozen else program.ir).clone()
    fn = module.main
    ret = fn.return_op
    ret.set_operands(ret.operands[:program.n_outputs])  # outputs only: no state updates
    if frozen:
        state = freeze_for_inference(module, program.n_inputs,
                                     [t._value for t in program.state],
                                     compiled.pipeline or INFERENCE_PIPELINE)
    else:
        dce(module)
        state = [(t.name, t._value) for t in program.state]
    verify(module)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".irflow", "w") as f:
        f.write(str(module))
    arrays = {f"state{i}": value for i, (_, value) in enumerate(state)}
    np.savez(path + ".pdiparams.npz", **arrays)
    manifest = {
        "format": FORMAT, "version": VERSION,
        "inputs": program.input_names,
        "state": [name for name, _ in state],
        "n_outputs": program.n_outputs,
    }
    with open(path + ".json", "w") as f:
        json.dump(manifest, f, indent=2)


class TranslatedLayer:
    """A loaded program: call it like the Layer it came from."""

    def __init__(self, module: Module, manifest: dict, state: list[np.ndarray]):
        self.ir = module
        self.manifest = manifest
        self._state = [Tensor._from_array(a) for a in state]
        for t, name in zip(self._state, manifest["state"]):
            t.name = name
        fn = module.main
        self._input_types = [a.type for a in fn.args[:len(manifest["inputs"])]]
        self._plan = compile_plan(fn)
        self.training = False

    def __call__(self, *inputs):
        names = self.manifest["inputs"]
        if len(inputs) != len(names):
            raise InputError(f"the loaded program takes {len(names)} input(s), got "
                             f"{len(inputs)}", user_location())
        arrays = [x._concrete(name) if isinstance(x, Tensor) else np.asarray(x)
                  for name, x in zip(names, inputs)]
        try:
            Signature(self._input_types).check(arrays)
        except SignatureMismatch as e:
            a = arrays[e.index]
            raise InputError(f"input '{names[e.index]}' should be {self._input_types[e.index]}, "
                             f"got {a.dtype.name}{list(a.shape)}", user_location()) from None
        outs = self._plan(*arrays, *(t._value for t in self._state))
        tensors = [Tensor._from_array(o) for o in outs]
        return tensors[0] if len(tensors) == 1 else tensors

    def parameters(self) -> list[Tensor]:
        return list(self._state)

    def eval(self) -> "TranslatedLayer":
        return self

    def train(self) -> "TranslatedLayer":
        raise IrflowError("a loaded program is an inference program; it cannot train")


def load(path: str, **configs) -> TranslatedLayer:
    """Load a program saved by `save`; runs no code from the files."""
    with open(path + ".json") as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise IrflowError(f"{path}.json is not an irflow program (version {VERSION})")
    with open(path + ".irflow") as f:
        module = parse(f.read(), filename=path + ".irflow")
    verify(module)
    with np.load(path + ".pdiparams.npz", allow_pickle=False) as data:
        state = [data[f"state{i}"] for i in range(len(manifest["state"]))]
    return TranslatedLayer(module, manifest, state)
