"""Per-op times of a plan's calls: `StepTimes`, given to `compile_plan(fn, timer=...)`.

A plan compiled with a timer runs each of its steps (those of its regions' sub-plans
too) inside a wrapper that reads `time.perf_counter` before and after, and adds
the time to the step's op: `total[op]`, the whole step, and `own[op]`, the step
without the steps that ran inside it (a ``cond`` without its branch, a loop
without its body), so that the own times of a call add up to the time its steps
took. `runs[op]` counts the step's runs (a step in a loop body runs once per
iteration). Ops computed at compile time (``const``) have no step.

Without a timer a plan's steps are not wrapped: timing costs nothing unless asked
for. The wrapper adds its own overhead (a few tenths of a microsecond per step) to
every time it measures. A timer belongs to its plans' calls in one thread at a
time: calls running at once would mix their nesting.
"""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable

from ..ir.core import Operation

Step = Callable[[list], None]


class StepTimes:
    """Seconds and runs of each op's step, summed over calls since `clear`."""

    def __init__(self):
        self.total: dict[Operation, float] = defaultdict(float)
        self.own: dict[Operation, float] = defaultdict(float)
        self.runs: dict[Operation, int] = defaultdict(int)
        self._nested = [0.0]  # per step running: the time of the steps run inside it

    def clear(self) -> None:
        """Forget what was measured (the wrapped steps keep this timer)."""
        self.total.clear()
        self.own.clear()
        self.runs.clear()
        self._nested[:] = [0.0]

    def wrap(self, op: Operation, step: Step) -> Step:
        """`step` (the step of `op`), timed."""
        total, own, runs, nested = self.total, self.own, self.runs, self._nested
        clock = time.perf_counter

        def timed(regs: list) -> None:
            nested.append(0.0)
            start = clock()
            try:
                step(regs)
            finally:
                took = clock() - start
                inside = nested.pop()
                nested[-1] += took
                total[op] += took
                own[op] += took - inside
                runs[op] += 1
        return timed


__all__ = ["StepTimes"]
