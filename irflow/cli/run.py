"""``irflow run PATH --input NAME=FILE.npy ...``: run a saved program on arrays."""
from __future__ import annotations

import argparse

import numpy as np

from ..dispatch import no_grad
from ..errors import InputError
from ..frontend.program import BACKENDS, DEFAULT_BACKEND
from ..jit.saved import load
from ..serialization import load_npy
from .common import add_path, check_output, parser, saved_program, write_output

SUMMARY = "run a saved program on inputs from .npy files"


def arguments() -> argparse.ArgumentParser:
    p = parser("run", "Run a saved program (jit.save) on inputs from .npy files.")
    add_path(p)
    p.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE",
                   help="the .npy file of one input, by the input's name (repeat for each)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write the outputs to this .npz file (output_0, output_1, ...) "
                        "instead of printing them")
    p.add_argument("--backend", default=DEFAULT_BACKEND,
                   help=f"the backend to run on: {', '.join(BACKENDS)} (default {DEFAULT_BACKEND})")
    return p


def run(args: argparse.Namespace) -> int:
    if args.output:
        check_output(args.output)
    layer = load(saved_program(args.path, "run needs the input spec and parameters jit.save "
                                          "writes beside the IR"), backend=args.backend)
    files = _input_files(args.input, layer.input_spec)
    inputs = [load_npy(files[spec.name]) for spec in layer.input_spec]
    with no_grad():  # nothing differentiates the outputs: a loop keeps no per-step records
        outs = layer(*inputs)
    arrays = {f"output_{k}": t.numpy() for k, t in enumerate(
        outs if isinstance(outs, list | tuple) else [outs])}
    if args.output:
        write_output(args.output, lambda f: np.savez(f, **arrays))
        print(f"wrote {args.output}: " + ", ".join(f"{k} {_type(a)}" for k, a in arrays.items()))
        return 0
    for name, a in arrays.items():
        print(f"{name}: {_type(a)}\n{np.array2string(a)}")
    return 0


def _input_files(pairs: list[str], specs) -> dict[str, str]:
    """Input name -> file, from ``NAME=FILE`` arguments, checked against the program's
    inputs."""
    expected = ", ".join(f"{s.name} ({s.dtype.name}{list(s.shape)})" for s in specs)
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:  # NAME=FILE would feed one file to each input of the name
        raise InputError(f"the program has two inputs named {repeated[0]!r}, which --input "
                         f"cannot tell apart; its inputs: {expected}")
    files: dict[str, str] = {}
    for pair in pairs:
        name, eq, file = pair.partition("=")
        if not eq or not name or not file:
            raise InputError(f"--input {pair!r}: write NAME=FILE.npy; the program's inputs: "
                              f"{expected}")
        if name not in {s.name for s in specs}:
            raise InputError(f"--input {name}: the program has no input {name!r}; its inputs: "
                              f"{expected}")
        if name in files:
            raise InputError(f"--input {name} is given twice")
        files[name] = file
    missing = [s.name for s in specs if s.name not in files]
    if missing:
        raise InputError(f"no --input for {', '.join(repr(n) for n in missing)}; the "
                          f"program's inputs: {expected}")
    return files


def _type(a: np.ndarray) -> str:
    return f"{a.dtype}{list(a.shape)}"
