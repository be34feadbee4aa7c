"""``compile(..., check=True)``: run the eager code and the compiled program side by side
and fail on the first op whose results differ, naming the op and the user's line.

Both runs record every op with its source location: eager ops through the dispatch
observer, program ops through the interpreter. Ops are matched by (name, file, line,
occurrence), which pairs an eager op with the IR op traced from the same call.
State updates (BatchNorm statistics, a scheduler's steps) are made once, by the
compiled run; random
ops differ between the two runs, so check deterministic code (e.g. in eval mode).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..codegen.interpreter import Interpreter
from ..dispatch import no_grad, state
from ..errors import IrflowError
from ..tensor.tensor import Tensor
from .structure import Pattern, flatten


class CheckError(IrflowError):
    """The compiled program and the eager code disagree."""


def _key(name, loc):
    return (name, loc.file if loc else None, loc.line if loc else None)


def checked_call(compiled, program, args):
    eager_records = defaultdict(list)
    saved = [t._value for t in program.state]
    # the objects the program's runs step on the host (schedulers), stepped by the
    # eager run too: put back, so that only the compiled run's steps count
    hosts = [(owner, owner.state_dict()) for owner in program.host_owners]

    def observe_eager(name, loc, results):
        eager_records[_key(name, loc)].append(results)

    state.observer = observe_eager
    try:
        with no_grad():
            eager = compiled._eager_call(args)
    finally:
        state.observer = None
    for t, v in zip(program.state, saved):  # the compiled run makes the state updates
        t._value = v
    for owner, host_state in hosts:
        owner.set_state_dict(host_state)
    inputs = [leaf for a in args
              for leaf in flatten(a, constants=True)[0]][:program.n_inputs]
    arrays = [a._value if isinstance(a, Tensor) else np.asarray(a) for a in inputs]
    results = program.call(inputs, arrays)
    outs = [t._value for t in results]
    eager_tensors = _flat_tensors(eager)
    mismatch = [i for i, (e, c) in enumerate(zip(eager_tensors, outs)) if not _close(e, c)]
    if mismatch:
        _locate(program, arrays, eager_records, mismatch[0])
    return program.returned(results)


def _close(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(a, b))


def _flat_tensors(out) -> list:
    return [t._value for t in Pattern.split(out, lambda v: isinstance(v, Tensor))[0]]


def _locate(program, arrays, eager_records, output_index) -> None:
    seen = defaultdict(int)
    found = []

    def observe(op, results):
        key = _key(op.name, op.loc)
        k = seen[key]
        seen[key] += 1
        records = eager_records.get(key, [])
        if found or k >= len(records):
            return
        for i, (e, c) in enumerate(zip(records[k], results)):
            if isinstance(c, np.ndarray) and not _close(e, c):
                found.append((op, i, e, c))
                return

    fn = program.ir.main
    state_arrays = [t._value for t in program.state]
    extra = [np.asarray(0, np.int64)] if program.uses_seed else []
    Interpreter(check=False, observe=observe).run(fn, [*arrays, *state_arrays, *extra])
    if found:
        op, i, e, c = found[0]
        diff = _describe_difference(np.asarray(e), np.asarray(c))
        raise CheckError(f"compiled and eager results differ first at op '{op.name}' "
                         f"(result {i}): {diff}", op.loc)
    raise CheckError(f"compiled and eager results differ at output {output_index}, but no "
                     "single op could be matched to the eager run")


def _describe_difference(e: np.ndarray, c: np.ndarray) -> str:
    if e.shape != c.shape:
        return f"eager shape {list(e.shape)}, compiled shape {list(c.shape)}"
    if e.dtype.kind in "fc":
        diff = np.abs(e.astype(np.float64) - c.astype(np.float64))
        return f"max abs difference {float(np.nanmax(diff)):.3g}"
    return f"{int(np.sum(e != c))} of {e.size} elements differ"
