"""The pass manager: runs a pipeline on a module, checking the IR between passes.

`PassManager(pipeline)` takes a pipeline string (``"fold{max-elements=1024},cse"``)
or a list of pass names and `Pass` objects. `run(module)` verifies the module, then
runs each pass in place; with ``verify_each`` it verifies after each pass too, as
tests and ``irflow opt`` do (a compile skips it: verifying costs about as much as
the passes). Any exception a pass raises comes out as a `PassError` naming the pass and
the passes that ran before it (the original is its ``__cause__``); IR left broken
comes out as a `VerificationError` that names them the same way. It records what
each pass did (`history`, a `PassReport`: time, ops before and after, the pass's
own statistics) and can print the IR after every pass or after the passes named.

`run(module, pipeline)` is the same for callers who want the module back.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Collection, Iterator, Sequence

from ..errors import IrflowError, VerificationError
from ..ir.core import Module
from ..ir.registry import lookup
from ..ir.traits import Terminator
from ..ir.verifier import verify
from .framework import Pass, parse_pipeline

# What irflow.compile and eager backward() run on every program.
DEFAULT_PIPELINE = ("fold", "cse", "dce", "strip-stops", "one-hot", "fuse", "sink-large")
# What irflow.compile runs on a program whose parameters it froze into constants:
# the default passes with BatchNorm folded into the Conv2D or Linear before it.
INFERENCE_PIPELINE = ("fold", "fold-affine", "cse", "dce", "strip-stops", "one-hot", "fuse",
                      "sink-large")


class PassError(IrflowError):
    """A pass raised an exception; the message names the pass and those before it."""


@dataclass
class PassRecord:
    """What one pass did: its name as written in the pipeline, whether it changed the
    module, how long it took, the ops (nested ones included, terminators not) before
    and after it, its own `Pass.statistics`, and the ops after it by kind
    (`op_kinds`: op name -> count, most common first)."""

    name: str
    changed: bool
    seconds: float
    ops_before: int = 0
    ops_after: int = 0
    statistics: dict[str, int] = field(default_factory=dict)
    kinds_after: dict[str, int] = field(default_factory=dict)

    @property
    def ops_removed(self) -> int:
        """Ops gone (negative when the pass added some)."""
        return self.ops_before - self.ops_after


class PassReport:
    """The records of a pipeline's passes, in order; ``str()`` is a table.
    ``report["dce"]`` is the record of the first pass of that name."""

    def __init__(self, records: Sequence[PassRecord] = ()):
        self.records: list[PassRecord] = list(records)

    def __iter__(self) -> Iterator[PassRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, key: int | str) -> PassRecord:
        if isinstance(key, int):
            return self.records[key]
        for record in self.records:
            if record.name.partition("{")[0] == key:
                return record
        raise KeyError(f"no pass {key!r} ran; the pipeline ran "
                       f"{', '.join(r.name for r in self.records) or 'nothing'}")

    def append(self, record: PassRecord) -> None:
        self.records.append(record)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.records)

    def __str__(self) -> str:
        rows = [("pass", "time", "ops", "changed", "statistics")]
        for r in self.records:
            stats = " ".join(f"{k}={v}" for k, v in r.statistics.items())
            rows.append((r.name, f"{r.seconds * 1e3:.2f} ms", f"{r.ops_before} -> {r.ops_after}",
                         "yes" if r.changed else "no", stats))
        rows.append(("total", f"{self.seconds * 1e3:.2f} ms", "", "", ""))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n"
                       for row in rows)

    def __repr__(self) -> str:
        return f"<PassReport {', '.join(r.name for r in self.records)}>"


@dataclass
class PassManager:
    """`print_after`: True for every pass, or the names of the passes after which to
    print the IR (through `printer`)."""

    pipeline: str | Sequence[str | Pass]
    verify_each: bool = False
    print_after: bool | Collection[str] = False
    printer: Callable[[str], None] = print
    history: PassReport = field(default_factory=PassReport)

    def __post_init__(self):
        self.passes: list[Pass] = parse_pipeline(self.pipeline)

    def run(self, module: Module) -> bool:
        """Run the pipeline on `module` in place; True if any pass changed it."""
        try:
            verify(module)
        except VerificationError as e:
            raise VerificationError(f"the input of the pipeline is invalid: {e.message}",
                                    e.loc) from None
        changed_any = False
        kinds = op_kinds(module)
        for p in self.passes:
            start = time.perf_counter()
            try:
                changed = bool(p.run(module))
            except Exception as e:
                what = e.message if isinstance(e, IrflowError) else f"{type(e).__name__}: {e}"
                raise PassError(f"pass '{p}' failed ({self._ran()}): {what}",
                                getattr(e, "loc", None)) from e
            seconds = time.perf_counter() - start
            after = op_kinds(module) if changed else kinds
            self.history.append(PassRecord(str(p), changed, seconds, sum(kinds.values()),
                                           sum(after.values()), p.statistics(), after))
            kinds = after
            changed_any |= changed
            if self._prints_after(p):
                self.printer(f"// -----// IR after {p}{' (changed)' if changed else ''}\n"
                             f"{module}")
            if self.verify_each:
                try:
                    verify(module)
                except VerificationError as e:
                    raise VerificationError(f"after pass '{p}' ({self._ran()}): {e.message}",
                                            e.loc) from None
        return changed_any

    def _prints_after(self, p: Pass) -> bool:
        if isinstance(self.print_after, bool):
            return self.print_after
        return p.name in self.print_after

    def _ran(self) -> str:
        return "passes run: " + ", ".join(r.name for r in self.history) if self.history \
            else "the first pass"


def split_at_autodiff(pipeline: str | Sequence[str | Pass]) -> tuple[list[Pass], list[Pass]]:
    """The passes of `pipeline` before the first that must run after autodiff
    (`Pass.after_autodiff`: fusion, buffer planning), and the rest."""
    passes = parse_pipeline(pipeline)
    cut = next((i for i, p in enumerate(passes) if p.after_autodiff), len(passes))
    return passes[:cut], passes[cut:]


def count_ops(module: Module) -> int:
    """The ops of `module`, those in regions included, terminators not."""
    return sum(op_kinds(module).values())


def op_kinds(module: Module) -> dict[str, int]:
    """The ops `count_ops` counts, by op name, most common first."""
    kinds = Counter(op.name for op in module.walk() if not lookup(op.name).has(Terminator))
    return dict(kinds.most_common())


def run(module: Module, pipeline: str | Sequence[str | Pass] = DEFAULT_PIPELINE, *,
        verify_each: bool = True, print_after: bool | Collection[str] = False,
        report: bool = False, printer: Callable[[str], None] = print) -> Module:
    """Run `pipeline` on `module` in place, verifying its input and the IR after each
    pass, and return the module. `print_after`: True, or pass names, to print the IR
    after those passes; `report`: print what each pass did (a `PassReport` table)."""
    manager = PassManager(pipeline, verify_each, print_after, printer)
    manager.run(module)
    if report:
        printer(str(manager.history))
    return module
