"""``irflow report PATH [-o report.md]``: a Markdown record of compiling and running a
saved program, as one would keep of an experiment.

The report loads the program as `jit.load` does (checked, parameters read without
pickle), runs the pass pipeline on it with the `PassManager` (whose `PassReport`
gives each pass's time, op counts and statistics), compiles it into an executor
`Plan` and calls it on random inputs of the saved input spec, every symbolic dim
given the ``--batch`` size. Its sections:

- **Model**: the path and files, the saved metadata (format version, function,
  input spec, outputs) and the parameters and buffers (count and bytes);
- **Machine**: irflow, Python, NumPy and its BLAS, the CPU and cores, the date;
- **Passes**: the ops after each pass (nested ones included), the most common kinds,
  the time and the pass's statistics;
- **Fusion**: each fused op with the ops it holds by the source line they came from
  (ops keep their locations through fusion), and the ops left outside any kernel;
- **Memory plan**: the plan's naive, peak-live and arena bytes for these sizes (the
  plan the calls ran in), and the largest buffers;
- **Kernel times**: each op's median time per call over ``--repeat`` calls, measured
  by a plan compiled with a `StepTimes` timer, by op kind and per fused op, and the
  median time of a whole call of an untimed plan.

Each section is one small function of what was measured; `build` puts them together.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .. import __version__
from ..codegen.executor import compile_plan
from ..codegen.timing import StepTimes
from ..errors import Location
from ..ir.core import Function, Operation, Value
from ..ir.printer import printed_names
from ..ir.registry import lookup
from ..ir.sizes import argument_symbols
from ..ir.traits import Terminator
from ..ir.types import eval_shape
from ..jit.saved import SUFFIXES, load_program, read_state
from ..passes import DEFAULT_PIPELINE, PassManager, PassReport
from ..passes.fuse import fusion_kind
from ..passes.manager import op_kinds
from ..passes.plan_buffers import ALIGNMENT, MemoryPlan, nbytes
from .common import UsageError, add_path, check_output, parser, saved_program

SUMMARY = "write a Markdown report of a saved program's compile: passes, fusion, memory, times"
DEFAULT_BATCH = 8
DEFAULT_REPEAT = 10
TOP_KINDS = 4        # op kinds named per pass
LARGEST_BUFFERS = 5  # buffers listed in the memory plan
LISTED_STATE = 20    # parameters and buffers listed by name


def arguments() -> argparse.ArgumentParser:
    p = parser("report", "Write a Markdown report of compiling and running a saved program: "
                         "the model, the IR after each pass, the fusion groups, the memory "
                         "plan and kernel times on random inputs.")
    add_path(p)
    p.add_argument("--output", "-o", metavar="FILE",
                   help="where to write the report (default: standard output)")
    p.add_argument("--pipeline", "-p", default=",".join(DEFAULT_PIPELINE),
                   help=f"the pass pipeline (default: {','.join(DEFAULT_PIPELINE)}, what "
                        "jit.load runs)")
    p.add_argument("--batch", default=str(DEFAULT_BATCH), metavar="N",
                   help="the size of every symbolic dim of the inputs (None in the input "
                        f"spec) for the memory plan and the timed calls (default {DEFAULT_BATCH})")
    p.add_argument("--repeat", default=str(DEFAULT_REPEAT), metavar="K",
                   help=f"timed calls; times are medians over them (default {DEFAULT_REPEAT})")
    p.add_argument("--seed", default="0", help="the seed of the random inputs (default 0)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.output is not None:
        check_output(args.output)
    text = build(args.path, args.pipeline, _count("--batch", args.batch, 1),
                 _count("--repeat", args.repeat, 1), _count("--seed", args.seed, 0))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.output}")
    return 0


def _count(option: str, text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < least:
        what = "a positive integer" if least else "an integer of 0 or more"
        raise UsageError(f"{option} must be {what}, got {text!r}")
    return value


# ---------------------------------------------------------------- what is measured

@dataclass
class Saved:
    """A saved program as loaded: its path (what jit.save was given), function (IR as
    saved; the pipeline then runs on it), metadata and state entries (name, kind,
    trainable, array)."""

    prefix: str
    function: Function
    metadata: dict
    state: list[tuple]

    @property
    def n_inputs(self) -> int:
        return len(self.metadata["inputs"])


@dataclass
class Timings:
    """What the calls measured: the seconds of each untimed call; per op, its own and
    its whole step's seconds in each timed call and its runs in one call; the memory
    plan the calls ran in."""

    calls: list[float]
    own: dict[Operation, list[float]]
    total: dict[Operation, list[float]]
    runs: dict[Operation, int]
    memory: MemoryPlan | None


def load_saved(path: str) -> Saved:
    """The program saved at `path` (what jit.save was given, or one of its files),
    checked as jit.load checks it."""
    prefix = saved_program(path, "a report runs the program, so it needs the parameters "
                                 "jit.save writes beside the IR")
    fn, metadata, files = load_program(prefix)
    return Saved(prefix, fn, metadata, read_state(files["parameters"], metadata, fn))


def symbol_sizes(fn: Function, batch: int) -> dict[str, int]:
    """Every symbolic dim of `fn`'s arguments, sized `batch`."""
    return {s: batch for s in sorted(argument_symbols(fn.block))}


def random_inputs(saved: Saved, sizes: dict[str, int], seed: int) -> list[np.ndarray]:
    """An array per input of the saved spec, of its dtype and shape (symbols sized by
    `sizes`): standard normal floats, integers 0 or 1 (safe as indices and as loop
    counts), booleans true or false with even odds."""
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in saved.function.args[:saved.n_inputs]:
        t = arg.type
        shape = eval_shape(t.shape, sizes)
        if t.dtype.is_float:
            a = rng.standard_normal(shape)
        elif t.dtype.is_bool:
            a = rng.random(shape) < 0.5
        else:
            a = rng.integers(0, 2, shape)
        arrays.append(np.asarray(a, dtype=t.dtype.np))
    return arrays


def measure(fn: Function, arrays: list[np.ndarray], repeat: int) -> Timings:
    """Call `fn`'s plan on `arrays`: once to warm up (the arena is laid out, the
    kernels run once), then `repeat` times, timing each whole call; then the same
    with a plan whose steps are timed."""
    plan = compile_plan(fn)
    plan(*arrays)
    calls = []
    for _ in range(repeat):
        start = time.perf_counter()
        plan(*arrays)
        calls.append(time.perf_counter() - start)
    timer = StepTimes()
    timed = compile_plan(fn, timer=timer)
    timed(*arrays)
    own, total = defaultdict(list), defaultdict(list)
    for _ in range(repeat):
        timer.clear()
        timed(*arrays)
        for op, seconds in timer.own.items():
            own[op].append(seconds)
            total[op].append(timer.total[op])
    return Timings(calls, dict(own), dict(total), dict(timer.runs), plan.memory_plan)


def build(path: str, pipeline: str = ",".join(DEFAULT_PIPELINE), batch: int = DEFAULT_BATCH,
          repeat: int = DEFAULT_REPEAT, seed: int = 0) -> str:
    """The report (Markdown) of the program saved at `path`."""
    saved = load_saved(path)
    fn = saved.function
    before = op_kinds(fn.parent)
    manager = PassManager(pipeline)
    manager.run(fn.parent)
    sizes = symbol_sizes(fn, batch)
    arrays = random_inputs(saved, sizes, seed)
    timings = measure(fn, arrays + [array for *_, array in saved.state], repeat)
    names = printed_names(fn)
    sections = [
        _title(saved, pipeline, sizes, repeat, seed),
        _model(saved),
        _machine(),
        _passes(manager.history, before),
        _fusion(fn, names),
        _memory(fn, timings.memory, sizes, names),
        _times(timings, names, repeat, seed),
    ]
    return "\n\n".join(sections) + "\n"


# ---------------------------------------------------------------- sections

def _title(saved: Saved, pipeline: str, sizes: dict[str, int], repeat: int, seed: int) -> str:
    bound = ", ".join(f"{s}={n}" for s, n in sizes.items()) or "none (static shapes)"
    return (f"# irflow report: @{saved.function.name}\n\n"
            f"`{saved.prefix}`, compiled with the pipeline `{pipeline}`; symbolic dims: "
            f"{bound}; {repeat} timed calls on random inputs (seed {seed}).")


def _model(saved: Saved) -> str:
    meta = saved.metadata
    lines = ["## Model", "",
             f"- path: `{os.path.abspath(saved.prefix)}`",
             f"- format: `{meta['format']}` version {meta['version']}; function "
             f"`@{meta['function']}`; saved in {'train' if meta['training'] else 'eval'} mode",
             f"- outputs: {', '.join(_spec_type(e) for e in meta['outputs'])}",
             f"- {_state_total(saved.state, 'parameter')}",
             f"- {_state_total(saved.state, 'buffer')}",
             "", "| input | dtype | shape | in the IR |", "|---|---|---|---|"]
    for entry, arg in zip(meta["inputs"], saved.function.args):
        lines.append(f"| `{entry['name']}` | {entry['dtype']} | {_shape(entry['shape'])} | "
                     f"`{arg.type}` |")
    lines += ["", "| file | bytes | sha256 |", "|---|---|---|"]
    for role, suffix in SUFFIXES.items():
        recorded = meta["files"].get(role)
        size = recorded["bytes"] if recorded else os.path.getsize(saved.prefix + suffix)
        digest = f"`{recorded['sha256'][:16]}…`" if recorded else "(holds the others' checksums)"
        lines.append(f"| `{os.path.basename(saved.prefix + suffix)}` | {size} | {digest} |")
    if saved.state:
        lines += ["", "| parameter or buffer | kind | type | values | bytes |",
                  "|---|---|---|---|---|"]
        for name, kind, trainable, array in saved.state[:LISTED_STATE]:
            what = kind if kind == "buffer" or trainable else f"{kind} (frozen)"
            lines.append(f"| `{name}` | {what} | {array.dtype}{list(array.shape)} | "
                         f"{array.size} | {array.nbytes} |")
        if len(saved.state) > LISTED_STATE:
            lines.append(f"| … {len(saved.state) - LISTED_STATE} more | | | | |")
    return "\n".join(lines)


def _state_total(state: list[tuple], kind: str) -> str:
    arrays = [array for _, k, _, array in state if k == kind]
    if not arrays:
        return f"{kind}s: none"
    return (f"{kind}s: {sum(a.size for a in arrays)} values in {len(arrays)} arrays, "
            f"{_bytes(sum(a.nbytes for a in arrays))}")


def _machine() -> str:
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return "\n".join([
        "## Machine", "",
        f"- irflow {__version__}, Python {platform.python_version()}, NumPy {np.__version__} "
        f"(BLAS: {_blas()})",
        f"- CPU: {_cpu()}, {cores} cores ({usable} usable by this process)",
        f"- system: {platform.platform()}",
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
    ])


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _blas() -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (TypeError, KeyError):  # NumPy before 1.25 prints its configuration only
        return "unknown"
    return " ".join(str(blas[k]) for k in ("name", "version") if blas.get(k)) or "unknown"


def _passes(history: PassReport, before: dict[str, int]) -> str:
    lines = ["## Passes", "",
             "Ops are counted with those inside regions (a fused op's body ops count too), "
             "terminators not; times are of this run of the pass manager.", "",
             "| pass | time | ops | changed | most common ops | statistics |",
             "|---|---|---|---|---|---|",
             f"| (as saved) | | {sum(before.values())} | | {_top(before)} | |"]
    for r in history:
        stats = ", ".join(f"{k}={v}" for k, v in r.statistics.items())
        lines.append(f"| `{r.name}` | {_duration(r.seconds)} | {r.ops_before} → {r.ops_after} "
                     f"| {'yes' if r.changed else 'no'} | {_top(r.kinds_after)} | {stats} |")
    lines.append(f"| total | {_duration(history.seconds)} | | | | |")
    return "\n".join(lines)


def _top(kinds: dict[str, int]) -> str:
    shown = ", ".join(f"{name} {n}" for name, n in list(kinds.items())[:TOP_KINDS])
    return shown + (", …" if len(kinds) > TOP_KINDS else "")


def _fusion(fn: Function, names: dict[Value, str]) -> str:
    fused = _fused_ops(fn)
    lines = ["## Fusion", ""]
    if not fused:
        lines.append("No fused ops (does the pipeline run `fuse`?).")
    else:
        lines.append(f"{len(fused)} fused op{'s' if len(fused) > 1 else ''}, each one "
                     "kernel; the ops each holds, by the source line they came from (scalar "
                     "constants copied into a body not listed):")
    for op in fused:
        lines += ["", f"### `{_results(op, names)}` = fused, at {_where(op.loc)}", "",
                  f"Type {', '.join(str(t) for t in op.result_types)}"
                  + (f", reducing axes {list(op.attrs['axes'])}" if op.attrs.get("axes") else "")
                  + f"; {len(_members(op))} ops.", "",
                  "| line | source | ops |", "|---|---|---|"]
        for loc, kinds in _by_line(_members(op)):
            lines.append(f"| {_where(loc)} | {_source(loc)} | {kinds} |")
    lines += ["", "### Not fused", ""]
    rest = _unfused(fn)
    if not rest:
        lines.append("Every op is in a fused op (constants and terminators aside).")
        return "\n".join(lines)
    lines += ["| op | line | source | why |", "|---|---|---|---|"]
    for op in rest:
        lines.append(f"| `{_results(op, names)} = {op.name}` | {_where(op.loc)} | "
                     f"{_source(op.loc)} | {_why_unfused(op)} |")
    return "\n".join(lines)


def _fused_ops(fn: Function) -> list[Operation]:
    return [op for op in fn.walk() if op.name == "fused"]


def _inside_fused(op: Operation) -> bool:
    """Whether `op` is in the regions of a fused op (a scalar of its kernel's body)."""
    owner = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    while owner is not None:
        if owner.name == "fused":
            return True
        region = owner.parent.parent if owner.parent is not None else None
        owner = region.parent if region is not None else None
    return False


def _members(fused: Operation) -> list[Operation]:
    """The ops a fused op holds (its anchor's and its body's), constants aside."""
    return [op for region in fused.regions for op in region.blocks[0].ops
            if op.name != "const" and not lookup(op.name).has(Terminator)]


def _by_line(ops: list[Operation]) -> list[tuple[Location | None, str]]:
    """(location, "matmul, add ×2") for each source line of `ops`, in order."""
    lines: dict[Location | None, dict[str, int]] = {}
    for op in ops:
        kind = f"reduce {op.attrs['kind']}" if op.name == "reduce" else op.name
        counts = lines.setdefault(op.loc, {})
        counts[kind] = counts.get(kind, 0) + 1
    return [(loc, ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in counts.items()))
            for loc, counts in lines.items()]


def _unfused(fn: Function) -> list[Operation]:
    """The ops outside fused ops, constants and terminators aside, in program order."""
    found = []

    def visit(block) -> None:
        for op in block.ops:
            if op.name in ("fused", "const") or lookup(op.name).has(Terminator):
                continue
            found.append(op)
            for region in op.regions:
                visit(region.blocks[0])
    visit(fn.block)
    return found


def _why_unfused(op: Operation) -> str:
    if op.regions:
        return "has regions (their ops are fused on their own)"
    if fusion_kind(op) is None:
        return "not a kind fusion takes"
    return f"{fusion_kind(op)}, but no group of two ops or more formed with it"


def _memory(fn: Function, plan: MemoryPlan | None, sizes: dict[str, int],
            names: dict[Value, str]) -> str:
    lines = ["## Memory plan", ""]
    if plan is None:
        return "\n".join(lines + ["No memory plan: the calls did not run the planned program."])
    bound = ", ".join(f"{s}={n}" for s, n in sizes.items())
    bound = f"{bound} (each symbolic dim of the inputs takes the --batch size, default " \
            f"{DEFAULT_BATCH})" if sizes else "the program's static shapes"
    assignment = plan.assignment
    held = sum(len(b.values) for b in assignment.buffers)
    lines += [f"The plan the timed calls ran in, for {bound}. Each buffer is rounded up "
              f"to {ALIGNMENT} bytes.", "",
              "| | size |", "|---|---|",
              f"| naive (a buffer per value) | {_bytes(plan.naive_bytes)} |",
              f"| peak live (the most live at once) | {_bytes(plan.peak_live_bytes)} |",
              f"| arena (as planned) | {_bytes(plan.arena_bytes)} |", "",
              f"{len(assignment.buffers)} buffers in the arena hold {held} values "
              f"({held - len(assignment.buffers)} written in place over an operand's buffer)."
              if assignment.buffers else "The arena holds no buffer."]
    # a kernel body's scalars are not memory; constants are made when compiling
    allocated = [(v, why) for v, why in assignment.allocated.items()
                 if not _inside_fused(v.op) and v.op.name != "const"]
    if allocated:
        lines.append("Allocated by their ops instead (the planner's reason): " + ", ".join(
            f"`%{names.get(v, '?')}` ({v.op.name}: {why})" for v, why in allocated) + ".")
    planned = [r for op in _fused_ops(fn) for r in op.results if r in assignment.buffer_of]
    if planned:
        lines.append(f"Fused ops write {len(planned)} of their results into the arena "
                     f"({_bytes(sum(nbytes(r.type, sizes) for r in planned))}).")
    order = sorted(range(len(assignment.buffers)), key=lambda i: -plan.nbytes[i])
    if order:
        lines += ["", "| largest buffers | bytes | offset | type | values (op) | line |",
                  "|---|---|---|---|---|---|"]
    for i in order[:LARGEST_BUFFERS]:
        buffer = assignment.buffers[i]
        values = ", ".join(f"`%{names.get(v, '?')}` ({v.op.name})" for v in buffer.values)
        lines.append(f"| {i} | {plan.nbytes[i]} | {plan.offsets[i]} | `{buffer.type}` | "
                     f"{values} | {_where(buffer.values[0].op.loc)} |")
    return "\n".join(lines)


def _times(timings: Timings, names: dict[Value, str], repeat: int, seed: int) -> str:
    call = statistics.median(timings.calls)
    own = {op: statistics.median(s) for op, s in timings.own.items()}
    lines = ["## Kernel times", "",
             f"Measured on the NumPy executor: the plan (`compile_plan`) called on random "
             f"inputs of the spec (seed {seed}: standard normal floats, integers 0 or 1), "
             f"once to warm up, then {repeat} times; times are medians over those calls, "
             f"by `time.perf_counter`. A whole call: **{_duration(call)}** (fastest "
             f"{_duration(min(timings.calls))}, slowest {_duration(max(timings.calls))}), "
             "by a plan without timers. Per op, a second plan times each step "
             "(`irflow.codegen.timing.StepTimes`): an op's own time leaves out the steps "
             "run inside it (a `cond` without its branch), and includes the timer's "
             "overhead of well under a microsecond per step. Ops inside a branch ran only "
             "if these inputs took it; constants are computed when the plan is compiled.",
             "", "| op | ops | steps per call | time per call | of a call |",
             "|---|---|---|---|---|"]
    by_kind: dict[str, list[Operation]] = defaultdict(list)
    for op in own:
        by_kind[op.name].append(op)
    for kind, ops in sorted(by_kind.items(), key=lambda item: -sum(own[o] for o in item[1])):
        seconds = sum(own[o] for o in ops)
        lines.append(f"| `{kind}` | {len(ops)} | {sum(timings.runs.get(o, 0) for o in ops)} | "
                     f"{_duration(seconds)} | {seconds / call:.0%} |")
    fused = [op for op in timings.total if op.name == "fused"]
    if fused:
        lines += ["", "| fused op | line | ops inside | time per call |", "|---|---|---|---|"]
        for op in fused:
            lines.append(f"| `{_results(op, names)}` | {_where(op.loc)} | {len(_members(op))} "
                         f"| {_duration(statistics.median(timings.total[op]))} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- formatting

def _results(op: Operation, names: dict[Value, str]) -> str:
    return ", ".join(f"%{names.get(r, '?')}" for r in op.results) or "(no results)"


def _where(loc: Location | None) -> str:
    """`loc` as ``file:line``, the file relative to the current directory if under it."""
    if loc is None:
        return "(no location)"
    path = os.path.abspath(loc.file)
    relative = os.path.relpath(path)
    return f"{loc.file if relative.startswith('..') else relative}:{loc.line}"


def _source(loc: Location | None) -> str:
    text = loc.source_line().strip() if loc is not None else ""
    if not text:
        return "(source not found)"
    text = text.replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def _spec_type(entry: dict) -> str:
    return f"{entry['dtype']}{_shape(entry['shape'])}"


def _shape(shape: list) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in shape) + "]"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n} bytes ({n / size:.1f} {unit})"
    return f"{n} bytes"


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


__all__ = ["Saved", "Timings", "build", "load_saved", "measure", "random_inputs",
           "symbol_sizes"]
