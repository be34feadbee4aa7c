"""An independent check of a memory plan: no value is overwritten while it will
still be read.

It shares nothing with the planner's liveness analysis. The function runs on the
interpreter, whose every value has its own memory (views share their source's),
and every op it executes, in the branch taken and in each iteration, is recorded:
an op with regions reads, from when it begins until it ends, the operands it does
not pass on to its regions (a predicate, a fused kernel's operands) and writes its
results when it ends, a block's terminator reads what it yields or returns, and
any other op reads its operands while it writes its results. The plan is then replayed on that trace. Each write of a value the plan
puts in the arena covers its byte range; every read checks, for each arena value
whose memory the array read shares (``np.shares_memory``), that no other write has
covered its range since that value was written; and an op's results may not cover
what it reads, except exactly: a result over an operand of its shape and dtype
that is that arena value itself (not a view of it), where the op's declaration
allows writing over that operand (`OpDef.overwrites`) and no other operand reads
it (an elementwise op may read it twice). Reusing the memory of a value nothing
reads again is fine.

``check_plan(fn, args, plan)`` raises `Overlap` naming both values and the op at
which the clobbered one was read. It also checks what the planner takes on trust:
a kernel returns memory of its own, row-major as an arena buffer is, unless its op
is a view, a call or reads a stack or list (whose items are what was put there);
so does an op with regions that declares it writes its results (a fused kernel).
"""
from __future__ import annotations

import numpy as np

from irflow.codegen import Interpreter
from irflow.ir import CallOp, ContainerOperands, Elementwise, Function, View, lookup
from irflow.ir.printer import Printer


class Overlap(AssertionError):
    """Two values the plan puts in the arena were live at once in one range."""


class _Instance:
    """One write of an arena value: its range, its array in the interpreter, and the
    write that covered it since, if any."""

    def __init__(self, value, start: int, stop: int, array: np.ndarray, index: int):
        self.value, self.start, self.stop, self.array, self.index = value, start, stop, array, index
        self.clobbered_by: _Instance | None = None


class _Recorder(Interpreter):
    """The interpreter, recording ("read", op, arrays) for terminators and ops with
    regions when they begin, ("kernel", op, arrays, results) for the others and for
    ops with regions when they end."""

    def __init__(self):
        super().__init__(check=True)
        self.events: list[tuple] = []
        self.passed: list[list] = []  # per running region op: what it gave its regions

    def op(self, op, args, bindings):
        opdef = lookup(op.name)
        if op.regions:
            read = list(args)
            self.events.append(("read", op, read))
            self.passed.append([])
            results = super().op(op, args, bindings)
            passed = self.passed.pop()
            read[:] = [a for a in read if not any(a is p for p in passed)]
            if opdef.region_op.writes_results:
                self._own_memory(op, args, results)
            # what it did not pass on is read until it ends, when it writes its results
            self.events.append(("kernel", op, list(read), results))
            return results
        results = super().op(op, args, bindings)
        if not (opdef.has(View) or opdef.has(CallOp) or opdef.has(ContainerOperands)):
            self._own_memory(op, args, results)
        self.events.append(("kernel", op, list(args), results))
        return results

    @staticmethod
    def _own_memory(op, args, results) -> None:
        for r in results:
            if not isinstance(r, np.ndarray):
                continue
            if any(isinstance(a, np.ndarray) and np.shares_memory(r, a) for a in args):
                raise AssertionError(f"the kernel of '{op.name}' returned an operand's "
                                     "memory; only views and calls may")
            if not r.flags.c_contiguous:
                raise AssertionError(f"the kernel of '{op.name}' returned an array that "
                                     "is not row-major, unlike an arena buffer")

    def region(self, op, index, args, bindings):
        self.passed[-1].extend(args)
        return super().region(op, index, args, bindings)

    def block(self, block, args, bindings):
        results = super().block(block, args, bindings)
        self.events.append(("read", block.terminator, list(results)))
        return results


def check_plan(fn: Function, args, plan) -> None:
    """Replay `plan` (a `MemoryPlan` of `fn` for the sizes of `args`) on a run of
    `fn`; raise `Overlap` if an arena value is read after another covered it."""
    recorder = _Recorder()
    recorder.run(fn, list(args))
    names = Printer()
    names.function(fn)
    names = names.namer.names
    live: list[_Instance] = []
    for kind, op, arrays, *results in recorder.events:
        reads = [(k, a, _read(a, live, op, names)) for k, a in enumerate(arrays)
                 if isinstance(a, np.ndarray)]
        for r, array in zip(op.results, results[0] if results else ()):
            offset = plan.offset(r)
            if offset is None:
                continue
            written = _Instance(r, offset, offset + np.asarray(array).nbytes, array, len(live))
            _check_write(op, written, reads, names)
            for other in live:
                if other.clobbered_by is None and _overlap(other, written):
                    other.clobbered_by = written
            live.append(written)


def _overlap(a: _Instance, b: _Instance) -> bool:
    return a.start < b.stop and b.start < a.stop


def _read(array: np.ndarray, live: list[_Instance], op, names) -> list[_Instance]:
    """The arena values `array` is (part of); raises if one was written over."""
    found = [i for i in live if i.stop > i.start and np.shares_memory(array, i.array)]
    for instance in found:
        by = instance.clobbered_by
        if by is not None:
            raise Overlap(
                f"%{names.get(instance.value)} (bytes {instance.start}-{instance.stop}) is "
                f"read by '{op.name}' after %{names.get(by.value)} was written over it "
                f"(bytes {by.start}-{by.stop})")
    return found


def _check_write(op, written: _Instance, reads, names) -> None:
    """`op`'s result `written` covers none of what `op` reads, but exactly (see the
    module docstring)."""
    opdef = lookup(op.name)
    for k, array, instances in reads:
        for read in instances:
            if not _overlap(read, written):
                continue
            others = [a for j, a, found in reads if j != k and read in found
                      and not (opdef.has(Elementwise) and a is array)]
            if not ((read.start, read.stop) == (written.start, written.stop)
                    and array is read.array and opdef.overwrites(k) and not others
                    and array.shape == written.array.shape
                    and array.dtype == written.array.dtype):
                raise Overlap(f"'{op.name}' writes %{names.get(written.value)} (bytes "
                              f"{written.start}-{written.stop}) over its operand "
                              f"%{names.get(read.value)} (bytes {read.start}-{read.stop})")
