"""Pass tests as CHECK files: ``tests/passes/*.irf``.

A CHECK file is IR text with comments: a ``// RUN: irflow opt %s -p PIPELINE`` line
(read with the command's own argument parser), and ``// CHECK...`` lines that the
output must satisfy (`tests.support.filecheck`). `check_file` runs it and, beyond
the CHECK lines, asserts what every pass must keep:

- the input verifies and round-trips through print and parse, and so does the output;
- every function computes the same before and after, on the interpreter, for
  random inputs (the numeric oracle).
"""
from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np

from irflow.cli import opt, opt_arguments
from irflow.codegen import run
from irflow.ir import Function, Module, TensorType, parse, verify
from irflow.ir.types import ListType
from tests.support.filecheck import check, read_directives


def run_line(text: str, path: Path):
    """The `irflow opt` arguments of the file's RUN line."""
    runs = [line.split("RUN:", 1)[1] for line in text.splitlines()
            if line.lstrip().startswith("// RUN:")]
    assert len(runs) == 1, f"{path}: expected one '// RUN:' line, found {len(runs)}"
    words = shlex.split(runs[0].replace("%s", str(path)))
    assert words[:2] == ["irflow", "opt"], f"{path}: the RUN line must run 'irflow opt'"
    return opt_arguments().parse_args(words[2:])


def check_file(path: Path, trials: int = 3, seed: int = 0) -> str:
    """Run the CHECK file at `path` (see the module docstring); returns the output."""
    text = path.read_text(encoding="utf-8")
    args = run_line(text, path)
    before = parse(text, str(path))
    verify(before)
    round_trip(before)
    output = opt(text, args.passes, str(path), locations=args.locations)
    after = parse(output)
    round_trip(after)
    check(output, read_directives(text), str(path))
    check_same_results(before, after, trials, seed)
    return output


def round_trip(module: Module) -> None:
    text = str(module)
    assert str(parse(text)) == text, "print/parse round trip changed the text"


def random_inputs(fn: Function, rng: np.random.Generator, sizes: dict[str, int] | None = None):
    """Values matching `fn`'s argument types: arrays whose symbolic dims take `sizes`
    (default 3), and lists of three such arrays."""
    sizes = sizes or {}
    return [[_random_array(arg.type.elem, rng, sizes) for _ in range(3)]
            if isinstance(arg.type, ListType) else _random_array(arg.type, rng, sizes)
            for arg in fn.args]


def _random_array(t: TensorType, rng: np.random.Generator, sizes: dict[str, int]):
    shape = tuple(d if isinstance(d, int) else sizes.get(d, 3) for d in t.shape)
    if t.dtype.is_float:
        return rng.standard_normal(shape).astype(t.dtype.np)
    if t.dtype.is_int:
        return rng.integers(0, 4, shape).astype(t.dtype.np)
    return rng.random(shape) < 0.5


def check_same_results(reference: Module, candidate: Module, trials: int = 3, seed: int = 0,
                       rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Every function of `reference` computes what the function of the same name in
    `candidate` does."""
    rng = np.random.default_rng(seed)
    for fn in reference:
        for _ in range(trials):
            inputs = random_inputs(fn, rng)
            want = run(fn, *inputs)
            got = run(candidate[fn.name], *inputs)
            for w, g in zip(want, got):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                           err_msg=f"@{fn.name} changed its results")
