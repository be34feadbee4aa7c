"""`jit.save` / `jit.load`: compiled programs on disk, loadable without their Python class.

A saved program is three files side by side:

- ``<path>.irflow``: the program's IR text as traced (before the pass pipeline,
  which loading runs again), with the source line of each op;
- ``<path>.pdiparams.npz``: its parameters and buffers, one ``.npy`` per name, as
  ``np.savez`` writes them (no pickle);
- ``<path>.json``: the metadata: the format and its version, the function's name,
  its inputs (the input spec), outputs and state (name and kind, in argument order),
  and the size and SHA-256 of each of the other two files.

Loading checks the metadata, each file against its size and checksum, parses and
verifies the IR and checks its signature against the metadata, and reads each array
against the type of the argument it fills. Anything wrong is a `LoadError` of one
line naming the file and the problem. Nothing in the files runs: the IR is parsed
(into registered ops only), JSON is data, arrays are read without pickle and never
beyond the bytes the file holds.
"""
from __future__ import annotations

import hashlib
import io
import json
import os

import numpy as np

from ..dispatch import user_location
from ..errors import IrflowError, LoadError, ParseError, VerificationError
from ..ir import dtypes
from ..ir.core import Function
from ..ir.parser import parse
from ..ir.printer import print_module, printed_names
from ..ir.types import TensorType
from ..ir.verifier import verify
from ..passes.dce import dce
from ..passes.freeze import freeze_for_inference
from ..passes.manager import INFERENCE_PIPELINE
from ..serialization import Archive, write_file
from ..tensor.tensor import Parameter, Tensor
from ..frontend.program import DEFAULT_BACKEND
from ..frontend.structure import sorted_leaf_order
from .translated import TranslatedLayer

FORMAT = "irflow.jit"
VERSION = 3  # 3: a bfloat16 constant is written as its values (2: as its bits)
READS = (2, 3)  # a version-2 program is read if it has no bfloat16 constant
SUFFIXES = {"metadata": ".json", "program": ".irflow", "parameters": ".pdiparams.npz"}
_METADATA_LIMIT = 1 << 24


def save(layer, path: str, input_spec=None, freeze: bool = False, **configs) -> None:
    """Save the program of a compiled Layer or function (or of a Layer, compiled here
    with `input_spec`) at `path` (the three files ``path.json``, ``path.irflow`` and
    ``path.pdiparams.npz``). The program is the inference one, every layer in eval
    mode whatever mode the model is in (as Paddle's: BatchNorm on the running
    statistics, no dropout), and the loaded layer starts in eval mode; one that still
    draws random numbers is refused. The layers' ``training`` flags are not changed:
    they read False only in the thread that traces (`forcing_eval`), so a model
    training in another thread meanwhile keeps its mode. A loaded `TranslatedLayer`
    is saved with its own input spec. With `freeze`, its parameters are frozen while
    the inference pipeline runs (BatchNorm folded into the Conv2D or Linear before
    it), its weights the folded ones, saved as buffers."""
    if configs:
        raise ValueError(f"jit.save does not support the options {sorted(configs)}")
    compiled = _compiled(layer, input_spec)
    fn, n_inputs, state = _saved_function(compiled, freeze)
    write_program(path, fn, n_inputs, state)


def write_program(path: str, fn: Function, n_inputs: int, state: list[tuple]) -> None:
    """Write `fn` (its first `n_inputs` arguments the inputs, named, then the state
    arguments of `state`'s (argument, tensor) pairs) as a saved program at `path`:
    the three files `load` reads. An inference program: the loaded layer starts in
    eval mode (``training``, which programs of older versions may have set)."""
    names = _state_names([a.name or t.name for a, t in state])
    files = {"program": print_module(fn.parent, locations=True).encode(),
             "parameters": _npz({n: t._value for n, (_, t) in zip(names, state)})}
    metadata = {
        "format": FORMAT, "version": VERSION, "function": fn.name,
        "inputs": [{"name": name, **_type_entry(a.type)}
                   for name, a in zip(_input_names(fn, n_inputs), fn.args)],
        "outputs": [_type_entry(t) for t in fn.result_types],
        "state": [{"name": n, "kind": "parameter" if isinstance(t, Parameter) else "buffer",
                   "trainable": not t.stop_gradient} for n, (_, t) in zip(names, state)],
        "training": False,
        "files": {role: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                  for role, data in files.items()},
    }
    files["metadata"] = json.dumps(metadata, indent=2).encode()
    for role, data in files.items():  # the metadata last: it vouches for the others
        write_file(os.fspath(path) + SUFFIXES[role], lambda f, data=data: f.write(data))


def _compiled(layer, input_spec):
    """`layer` as the compiled function whose program is saved."""
    from ..frontend.program import CompiledFunction
    if input_spec is None and isinstance(layer, TranslatedLayer):
        input_spec = layer.input_spec
    forward = getattr(type(layer), "forward", None)
    if input_spec is None and isinstance(forward, CompiledFunction):
        compiled = forward.__get__(layer)  # a forward decorated with to_static
        if compiled.input_spec is not None or compiled._last is not None:
            return compiled
    if isinstance(layer, CompiledFunction) and (input_spec is None or layer.input_spec):
        compiled = layer
    else:
        target = layer.target if isinstance(layer, CompiledFunction) else layer
        compiled = CompiledFunction(target, input_spec)
    if compiled.input_spec is None and compiled._last is None:
        raise IrflowError("jit.save needs an input_spec, or a compiled function that has "
                          "been called", user_location())
    return compiled


def _saved_function(compiled, freeze: bool = False) -> tuple[Function, int, list[tuple]]:
    """The function to save (its source IR returning only the outputs, trimmed by
    dce), its number of inputs, and its state arguments with their tensors, in the
    Layer's state_dict order; with `freeze`, the inference program and its folded
    weights."""
    program = compiled._inference_program()
    module = program.source_ir.clone()
    fn = module.main
    ret = fn.return_op
    outputs = ret.operands[:program.n_outputs - len(program.attributes)
                           - len(program.changed_inputs)]
    rank = {leaf: r for r, leaf in enumerate(sorted_leaf_order(program.pattern.structure))}
    by_key = sorted(range(len(outputs)), key=lambda k: rank[program.pattern.positions[k]])
    ret.set_operands([outputs[k] for k in by_key])  # Paddle's order: dicts by sorted key
    dce(module)
    n_inputs = program.n_inputs
    if program.number_inputs:
        layer, name = program.number_inputs[0]
        raise IrflowError(f"jit.save: forward changes the number '{name}' of "
                          f"{type(layer).__name__} on each call, which a saved program "
                          "cannot keep; keep it in a buffer (a tensor)", user_location())
    if program.grad_inputs:
        raise IrflowError("jit.save: the program reads parameters' gradients (.grad), "
                          "which a saved program does not have; save the model's forward",
                          user_location())
    if program.uses_seed and fn.args[-1].uses:
        raise IrflowError("jit.save: the program draws random numbers even with every "
                          "layer in eval mode, which a saved program cannot", user_location())
    state = [(a, t) for a, t in zip(fn.args[n_inputs:], program.state) if a.uses]
    fn.block.erase_args([a.index for a in fn.args[n_inputs:] if not a.uses])
    if freeze:
        lifted = freeze_for_inference(module, n_inputs, [t._value for _, t in state],
                                      compiled.pipeline or INFERENCE_PIPELINE)
        state = [(a, Tensor._from_array(value))
                 for a, (_, value) in zip(fn.args[n_inputs:], lifted)]
    elif compiled.layer is not None:
        order = {id(t): k for k, t in enumerate(compiled.layer.state_dict().values())}
        state.sort(key=lambda pair: order.get(id(pair[1]), len(order)))
        fn.block.permute_args([*range(n_inputs), *(a.index for a, _ in state)])
    verify(module)
    return fn, n_inputs, state


def load(path: str, backend: str = DEFAULT_BACKEND, **configs) -> TranslatedLayer:
    """Load a program saved by `save` as a `TranslatedLayer`. Raises `LoadError` if a
    file is missing, damaged, changed after saving, of another format version, or not
    what `save` writes; runs no code from the files."""
    if configs:
        raise ValueError(f"jit.load does not support the options {sorted(configs)}")
    fn, metadata, files = load_program(path)
    state = read_state(files["parameters"], metadata, fn)
    return TranslatedLayer(fn, metadata["inputs"], state, metadata["training"], backend)


def load_program(path: str) -> tuple[Function, dict, dict[str, str]]:
    """The function, metadata and files of the program saved at `path`, checked as
    `load` checks them, without reading the parameters' values."""
    path = os.fspath(path)
    files = {role: path + suffix for role, suffix in SUFFIXES.items()}
    found = {role: os.path.isfile(f) for role, f in files.items()}
    if not any(found.values()):
        raise LoadError(f"jit.load: {path}: no saved program there (jit.save writes "
                        f"{', '.join(os.path.basename(f) for f in files.values())})")
    for role, f in files.items():
        if not found[role]:
            raise LoadError(f"jit.load: {f}: missing (the other files of the program are "
                            "there)")
    metadata = _read_metadata(files["metadata"])
    for role in ("program", "parameters"):
        _check_file(files[role], metadata["files"][role], files["metadata"])
    return _read_program(files["program"], metadata), metadata, files


def _read_metadata(file: str) -> dict:
    """The metadata in `file`, checked for what loading relies on."""
    def fail(problem: str) -> LoadError:
        return LoadError(f"jit.load: {file}: {problem}")

    with open(file, "rb") as f:
        data = f.read(_METADATA_LIMIT + 1)
    if not data:
        raise fail("the file is empty")
    if len(data) > _METADATA_LIMIT:
        raise fail("too large to be the metadata of a saved program")
    try:
        metadata = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise fail("not valid JSON (damaged or truncated?)") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise fail("not the metadata of a program saved by irflow's jit.save")
    if metadata.get("version") not in READS:
        raise fail(f"saved in format version {metadata.get('version')!r}; this irflow reads "
                   f"versions {', '.join(map(str, READS))}")
    problem = _schema_problem(metadata)
    if problem:
        raise fail(f"malformed: {problem}")
    return metadata


def _read_program(file: str, metadata: dict) -> Function:
    """The function in the IR text `file`, parsed, verified and checked against the
    signature `metadata` gives."""
    def fail(problem: str) -> LoadError:
        return LoadError(f"jit.load: {file}: {problem}")

    with open(file, "rb") as f:
        data = f.read()
    try:
        module = parse(data.decode("utf-8"), file)
        verify(module)
    except UnicodeDecodeError:
        raise fail("not IR text") from None
    except (ParseError, VerificationError) as e:
        raise fail(" ".join(e.message.split())) from None
    except RecursionError:
        raise fail("the IR is nested too deeply") from None
    if metadata["version"] == 2 and any(op.name == "const" and op.result.type.dtype
                                        is dtypes.bfloat16 for op in module.walk()):
        raise fail("saved by an older irflow, which wrote bfloat16 constants as their bits: "
                   "save the program again")
    name = metadata["function"]
    if name not in module:
        raise fail(f"has no function @{name}")
    fn = module[name]
    inputs, state = metadata["inputs"], metadata["state"]
    if len(fn.args) != len(inputs) + len(state) or len(fn.result_types) != len(
            metadata["outputs"]):
        raise fail(f"@{name} takes {len(fn.args)} arguments and returns "
                   f"{len(fn.result_types)} results; the metadata says {len(inputs)} inputs, "
                   f"{len(state)} parameters and buffers, {len(metadata['outputs'])} outputs")
    entries = [*(("input", e["name"], e) for e in inputs),
               *(("result", str(k), e) for k, e in enumerate(metadata["outputs"]))]
    for (what, label, entry), t in zip(entries, [*fn.arg_types[:len(inputs)], *fn.result_types]):
        if not isinstance(t, TensorType) or _type_entry(t) != {"dtype": entry["dtype"],
                                                               "shape": entry["shape"]}:
            raise fail(f"{what} {label} is {t} in the IR; the metadata says "
                       f"{entry['dtype']}{entry['shape']}")
    for arg, entry in zip(fn.args[len(inputs):], state):
        if not isinstance(arg.type, TensorType) or not arg.type.is_static:
            raise fail(f"{entry['name']} has type {arg.type}; parameters and buffers have "
                       "static shapes")
    return fn


def read_state(file: str, metadata: dict, fn: Function) -> list[tuple]:
    """(name, kind, trainable, array) of each parameter and buffer, from the npz
    `file`, each array checked against the argument it fills."""
    entries = metadata["state"]
    types = fn.arg_types[len(metadata["inputs"]):]
    with open(file, "rb") as f, Archive(f, f"jit.load: {file}") as archive:
        state = []
        for entry, t in zip(entries, types):
            array = archive.array(f"{entry['name']}.npy")
            if array.dtype != t.dtype.np or array.shape != t.shape:
                raise archive.fail(f"{entry['name']!r} is {dtypes.from_numpy(array).name}"
                                   f"{list(array.shape)}, the program needs {t.dtype.name}"
                                   f"{list(t.shape)}"
                                   if array.dtype in [d.np for d in dtypes.ALL] else
                                   f"{entry['name']!r} has dtype {array.dtype}, the program "
                                   f"needs {t.dtype.name}")
            state.append((entry["name"], entry["kind"], entry["trainable"], array))
        # After the missing ones (`archive.array`): a renamed entry is both, and its
        # missing array says why.
        extra = sorted(set(archive.names()) - {f"{e['name']}.npy" for e in entries})
        if extra:
            raise archive.fail(f"holds arrays the program does not use: {', '.join(extra)}")
    return state


def _check_file(file: str, recorded: dict, metadata_file: str) -> None:
    size = os.path.getsize(file)
    if size != recorded["bytes"]:
        what = "empty" if not size else "truncated" if size < recorded["bytes"] else "longer"
        raise LoadError(f"jit.load: {file}: {what} ({size} bytes; {recorded['bytes']} when "
                        f"saved)")
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != recorded["sha256"]:
        raise LoadError(f"jit.load: {file}: does not match its checksum in "
                        f"{os.path.basename(metadata_file)} (changed after saving)")


def _schema_problem(metadata: dict) -> str | None:
    """What is wrong with the metadata's fields, if anything."""
    def is_type(e) -> bool:
        return isinstance(e, dict) and e.get("dtype") in {d.name for d in dtypes.ALL} and \
            isinstance(e.get("shape"), list) and all(
                d is None or (type(d) is int and d >= 0) for d in e["shape"])

    def is_name(v) -> bool:
        return isinstance(v, str) and v != "" and "/" not in v and v.isprintable()

    checks = [
        ("function", isinstance(metadata.get("function"), str)),
        ("inputs", isinstance(metadata.get("inputs"), list) and all(
            is_type(e) and is_name(e.get("name")) for e in metadata["inputs"])),
        ("outputs", isinstance(metadata.get("outputs"), list) and all(
            is_type(e) for e in metadata["outputs"])),
        ("state", isinstance(metadata.get("state"), list) and all(
            isinstance(e, dict) and is_name(e.get("name")) and e.get("kind") in (
                "parameter", "buffer") and isinstance(e.get("trainable"), bool)
            for e in metadata["state"])),
        ("training", isinstance(metadata.get("training"), bool)),
        ("files", isinstance(metadata.get("files"), dict) and all(
            isinstance(metadata["files"].get(role), dict)
            and type(metadata["files"][role].get("bytes")) is int
            and isinstance(metadata["files"][role].get("sha256"), str)
            for role in ("program", "parameters"))),
    ]
    bad = [field for field, ok in checks if not ok]
    if bad:
        return f"the field {bad[0]!r} is missing or not what jit.save writes"
    names = [e["name"] for e in metadata["state"]]
    if len(set(names)) != len(names):
        return "two parameters have one name"
    return None


def _type_entry(t: TensorType) -> dict:
    return {"dtype": t.dtype.name, "shape": [d if isinstance(d, int) else None
                                             for d in t.shape]}


def _input_names(fn: Function, n_inputs: int) -> list[str]:
    """Distinct names for `fn`'s first `n_inputs` arguments (``irflow run --input
    NAME=...`` picks them by name): each as the program's text names it (two inputs
    named ``x`` are ``x`` and ``x_1``), an unnamed one ``x<i>``."""
    printed = printed_names(fn)
    names = [printed[a] if a.name else f"x{i}" for i, a in enumerate(fn.args[:n_inputs])]
    taken = set(printed[a] for a in fn.args[:n_inputs] if a.name)
    for i, name in enumerate(names):
        if not fn.args[i].name and name in taken:
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            names[i] = f"{name}_{k}"
        taken.add(names[i])
    return names


def _state_names(names: list) -> list[str]:
    """Distinct names for the state arrays: their own, else ``state_<i>``."""
    if None not in names and len(set(names)) == len(names) and \
            all("/" not in n for n in names):
        return list(names)
    return [f"state_{i}" for i in range(len(names))]


def _npz(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


__all__ = ["FORMAT", "SUFFIXES", "VERSION", "load", "load_program", "read_state", "save",
           "write_program"]
