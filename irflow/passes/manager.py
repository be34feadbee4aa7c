"""The pass manager: runs a pipeline on a module, checking the IR between passes.

`PassManager(pipeline)` takes a pipeline string (``"fold{max-elements=1024},cse"``)
or a list of pass names and `Pass` objects. `run(module)` verifies the module, then
runs each pass in place; with ``verify_each`` it verifies after each pass too, as
tests and ``irflow opt`` do (a compile skips it: verifying costs about as much as
the passes). Any exception a pass raises comes out as a `PassError` naming the pass and
the passes that ran before it (the original is its ``__cause__``); IR left broken
comes out as a `VerificationError` that names them the same way. It times each pass
(`history`) and can print the IR after each.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import IrflowError, VerificationError
from ..ir.core import Module
from ..ir.verifier import verify
from .framework import Pass, parse_pipeline

# What irflow.compile and eager backward() run on every program.
DEFAULT_PIPELINE = ("fold", "cse", "dce")


class PassError(IrflowError):
    """A pass raised an exception; the message names the pass and those before it."""


@dataclass
class PassRecord:
    name: str
    changed: bool
    seconds: float


@dataclass
class PassManager:
    pipeline: str | Sequence[str | Pass]
    verify_each: bool = False
    print_after: bool = False
    printer: Callable[[str], None] = print
    history: list[PassRecord] = field(default_factory=list)

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
        for p in self.passes:
            start = time.perf_counter()
            try:
                changed = bool(p.run(module))
            except Exception as e:
                what = e.message if isinstance(e, IrflowError) else f"{type(e).__name__}: {e}"
                raise PassError(f"pass '{p}' failed ({self._ran()}): {what}",
                                getattr(e, "loc", None)) from e
            self.history.append(PassRecord(str(p), changed, time.perf_counter() - start))
            changed_any |= changed
            if self.print_after:
                self.printer(f"// -----// IR after {p}{' (changed)' if changed else ''}\n"
                             f"{module}")
            if self.verify_each:
                try:
                    verify(module)
                except VerificationError as e:
                    raise VerificationError(f"after pass '{p}' ({self._ran()}): {e.message}",
                                            e.loc) from None
        return changed_any

    def _ran(self) -> str:
        return "passes run: " + ", ".join(r.name for r in self.history) if self.history \
            else "the first pass"
