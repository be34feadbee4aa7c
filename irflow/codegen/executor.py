"""The executor: a function compiled once into a `Plan`, then called many times.

The interpreter walks the IR on every call; a plan does that walk once. Calling a plan
runs exactly the interpreter's semantics (same kernels, same results, same input
errors) with none of its per-call bookkeeping: no IR walking, no dict lookups by
`Value`, no registry lookups.

**Registers.** Each block is compiled into a `BlockPlan` whose values live in a flat
list, indexed by integer slots fixed at compile time::

    [ block arguments | inherited symbols | symbols bound here | op results ... ]

**Steps.** Each op becomes one step, a closure ``step(regs)`` that reads its operand
slots and calls the op's kernel with the attributes pre-bound: the out kernel, into
the result's register, which already holds its buffer in the arena (``r3 <- add r0,
r1`` in `describe`), or the kernel, whose result it stores (``r3 = add r0, r1``).
The closures are made by small generated functions, one per step signature
(operand count, results, frees, attribute names; see `_step_maker`), so a step does
only what its op needs. An op with regions (``cond``, ``while``...) becomes a step
that calls its `RegionOp` evaluator with a sub-plan per region, bound to the call's
arena (a register of the enclosing block holds them), generated in the same way
when its regions inherit no symbols (`_region_step_maker`); a sub-plan runs on a
fresh register list that starts with the region's block arguments. An op that writes its
results (a fused kernel) whose results the plan puts in the arena runs its
`RegionOp.out_evaluator` instead, given those results' registers, which hold their
arena buffers (``r3 <- fused r0, r1``).
Pure ops without operands (``const``, ``arange``, ``stack_new``) run at compile
time; their values sit in the plan and every call starts from them (so such a value
returned as a result is the same array on every call, as a ``const`` value is in the
interpreter).

**Blocks.** A block of up to 32 steps runs as one generated function
(`_block_maker`): the generated steps' lines inlined one after another, their
closure values its parameters, the other steps (wide, binding a result's symbols,
timed) called; so a block costs one frame, not one per step and a loop. A step
counter says which step raised; longer blocks loop over their steps (their
function would take long to compile).

**Symbols.** A symbolic dim's size is a register too. A block binds the symbols its
shape attributes need from its own arguments (``regs[slot] = regs[arg].shape[axis]``,
precomputed per symbol, solving a linear dim such as ``S1-1``), so loop-varying sizes
are rebound on every region entry as in the interpreter; a symbol that first appears
in an op's result (a data-dependent size) is bound from that result after the op's
step; other symbols are inherited from the enclosing block. Only ops whose
`OpDef.shape_attrs` hold symbols evaluate them, from these registers, at call time.

**Memory.** The function's intermediates live in one arena, planned across all its
regions (`irflow.passes.plan_buffers`); `irflow.codegen.arena` keeps one arena per
concrete shape and per overlapping call, so a call allocates no intermediate buffer.
A returned array of the top block is written into its *result buffer*, memory the
call's frame keeps and reuses once the caller has dropped what it returned (see
`irflow.codegen.arena`). What the plan leaves to its op (other returned values,
values kept in stacks or lists, sizes known only at run time, ops without an out
kernel) is allocated by the kernel (or the region op's evaluator) as before, and
its register is cleared right after its last use in its block, so that memory
follows liveness. Returned values computed in a loop live in the arena
and are copied out by the return. Results that nothing reads are never stored.

**Timing.** A plan compiled with a `StepTimes` timer (`irflow.codegen.timing`) runs
each step, sub-plans' steps included, inside a wrapper that adds its time to the
step's op; without one, steps are not wrapped. `irflow report` measures with it.

**Errors.** A kernel's `IrflowError` gets the op's location attached; arguments are
checked against the function's `Signature` (the interpreter's check, precomputed),
or, by a `Plan.runner`, the ones its caller has not checked already.

**Warnings.** Steps run quiet kernels (and fused bodies) unsilenced, their
``__wrapped__``, and a call silences NumPy's floating-point warnings once around
its top block (`BlockPlan.enter`), instead of once per kernel.

**Lowerings.** A plan may be given a `Lowering`, a backend's choice of other kernels
for some ops (the LLVM backend's compiled kernels for ``fused`` ops and some
elementwise ops): for each op it offers one or declines, and the op's own kernel or
`RegionOp` evaluator runs where it declines. Sub-plans and the plans of called
functions get the same lowering. Buffer planning does not depend on it: a lowered
kernel writes into its result's arena buffer as the out kernel would, and a lowered
evaluator returns what the op's region results may be, as the op's own does.
"""
from __future__ import annotations

import dataclasses
import keyword
from functools import lru_cache
from operator import itemgetter
from typing import Callable, Sequence

import numpy as np

from ..errors import IrflowError
from ..ir.core import Block, Function, Operation, Value
from ..ir.registry import Effect, OpDef, lookup
from ..ir.signature import Signature, SignatureMismatch, evaluate_terms, slot_terms
from ..ir.sizes import (argument_symbols, attr_symbols, has_symbols, symbols_needed,
                        symbols_used, unbound_use)
from ..ir.symbols import CallOp
from ..ir.types import TensorType, is_symbol
from ..passes.plan_buffers import BufferAssignment, MemoryPlan
from .arena import Layouts
from .native import Array, Check, Temporary
from .timing import StepTimes

Step = Callable[[list], None]


class Lowering:
    """Kernels a backend substitutes for ops' own (see the module docstring). This
    one declines everything: the plan runs the registry's NumPy kernels."""

    def kernel(self, op: Operation) -> Callable | None:
        """A function of the op's operand arrays (its attributes bound) returning
        its result, or None for the op's own kernel. When the plan gives the result
        arena memory it is called with ``out=`` that buffer (C-contiguous, of the
        result's type, perhaps an operand's memory where the op may overwrite it),
        which it writes into instead, as an out kernel does."""
        return None

    def evaluator(self, op: Operation) -> Callable | None:
        """For an op with regions, a `RegionOp.evaluator` replacement
        (``run(operands, regions) -> results``), or None for the op's own."""
        return None

    def out_evaluator(self, op: Operation, into: tuple[bool, ...]) -> Callable | None:
        """For an op that writes its results, a `RegionOp.out_evaluator` replacement
        (``run(operands, regions, outs) -> results``, writing result k into the next
        buffer of `outs` where ``into[k]``), or None for the op's own."""
        return None

    def function(self, fn: Function) -> Callable | None:
        """A run of some calls of the whole function: ``whole(args, None)`` returns
        the results, as the plan would, or None for a call it does not take (the
        plan's steps run it); None if it has none for `fn`."""
        return None

    def sequence(self, steps: Sequence[tuple], types: Sequence[TensorType],
                 owned: Sequence[bool], temporaries: Sequence[int]
                 ) -> Callable[[list], int] | None:
        """One native call making the calls of consecutive steps (per step, the
        ``native`` description of what this lowering gave it, `irflow.codegen.native`,
        but its `Temporary` declarations), their `Array` numbers those of the run's
        arrays: first the ones ``run(arrays)`` is given, of `types` (`owned` says
        which the plan made: its arena's buffers, result buffers), then the
        temporaries, of `temporaries` bytes, which the run provides. ``run``
        returns how many steps it completed (the plan runs the others); None if
        this lowering has none."""
        return None


NUMPY = Lowering()


class BlockPlan:
    """One block compiled into steps over a register list.

    `run` (one generated function, or the loop over the steps of a long block) takes
    the register tail of a frame (see `irflow.codegen.arena`) and a list holding the
    block's arguments followed by the values of `inherits` (the enclosing block's
    symbols this block needs), takes ownership of the list as its register list and
    returns the values of the block's terminator.
    """

    __slots__ = ("steps", "tail", "binds", "entry_frees", "outputs", "collect", "inherits",
                 "n_args", "locs", "records", "prefilled", "base", "arena_slots",
                 "result_slots", "region_slots", "quiet", "run", "enter", "native_runs")

    def __init__(self, steps, fragments, tail, binds, entry_frees, outputs, inherits, n_args,
                 locs, records, prefilled, arena_slots, result_slots, region_slots, copied=(),
                 quiet=False, top=False, native_runs=()):
        self.steps: tuple[Step, ...] = steps
        self.tail: list = tail                      # registers after args and inherited symbols
        self.base = n_args + len(inherits)          # the slot of tail[0]
        # (slot, buffer, type): registers that hold their value's buffer in the arena
        self.arena_slots: tuple[tuple[int, int, TensorType], ...] = arena_slots
        # (slot, result buffer): registers of the top block that hold a returned
        # value's result buffer, which the frame keeps between calls
        self.result_slots: tuple[tuple[int, int], ...] = result_slots
        # (slot, sub-plans): registers that hold a region op's sub-plans
        self.region_slots: tuple[tuple[int, tuple["BlockPlan", ...]], ...] = region_slots
        # (symbol slot, arg slot, axis, coefficient, offset): the arg's dim there is
        # coefficient * symbol + offset
        self.binds: tuple[tuple[int, int, int, int, int], ...] = binds
        self.entry_frees: tuple[int, ...] = entry_frees       # arguments nothing reads
        self.outputs: tuple[int, ...] = outputs
        self.collect: Callable[[list], list] = _collector(outputs, copied)
        self.inherits: tuple[str, ...] = inherits
        self.n_args = n_args
        self.locs: tuple = locs     # per step, its op's location (None: a region op's)
        self.records: list[_Record] = records       # what each step does, for `describe`
        # [start, end) of the records whose steps run as one native call
        self.native_runs: tuple[tuple[int, int], ...] = native_runs
        self.prefilled: tuple[tuple[int, str], ...] = prefilled  # (slot, op) run at compile time
        # Its steps, or its regions', run quiet kernels unsilenced (`unsilenced`); a
        # call of the function (`enter`) silences NumPy's floating-point warnings once
        # around them, as each kernel would (errstate is thread-local, and as a
        # decorator it costs half what a `with` does).
        self.quiet = quiet
        # `run(tail, regs)`: one generated function (`_block_maker`), or for a long block
        # (whose function would take long to compile) the loop over its steps
        self.run: Callable[[list, list], list] = self._stepwise
        if len(steps) <= _INLINED_STEPS:
            self.run = _block_function(self, fragments, copied)
        self.enter: Callable[[list, list], list] = \
            np.errstate(all="ignore")(self.run) if quiet and top else self.run

    def _stepwise(self, tail: list, regs: list) -> list:
        regs += tail
        if self.binds:
            for slot, arg, axis, coef, offset in self.binds:
                regs[slot] = (regs[arg].shape[axis] - offset) // coef
        if self.entry_frees:
            for slot in self.entry_frees:
                regs[slot] = None
        k = 0
        try:
            for k, step in enumerate(self.steps):
                step(regs)
        except IrflowError as e:
            raise e.with_loc(self.locs[k])
        return self.collect(regs)

    @property
    def frees(self) -> list[tuple[int, ...]]:
        """The registers each step clears: those whose last use it is."""
        return [r.frees for r in self.records]

    def describe(self, indent: str = "") -> str:
        """The plan as text: one line per step, in registers ``r0, r1, ...``."""
        k = self.n_args
        head = ", ".join(f"r{i}" for i in range(k))
        head += "".join(f", r{k + i}={s}" for i, s in enumerate(self.inherits))
        lines = [f"{indent}({head}):"]
        lines += [f"{indent}  r{slot} = dim {axis} of r{arg}"
                  for slot, arg, axis, _, _ in self.binds]
        if self.entry_frees:
            lines.append(f"{indent}  free {_regs(self.entry_frees)}")
        lines += [f"{indent}  r{slot} = {name}  ; at compile time" for slot, name in self.prefilled]
        starts = dict(self.native_runs)
        inner = ""
        for j, record in enumerate(self.records):
            if j in starts:
                lines.append(f"{indent}  native run of {starts[j] - j} steps:")
                inner, end = "  ", starts[j]
            elif inner and j == end:
                inner = ""
            lines.append(indent + inner + "  " + record.text())
            lines += [sub.describe(indent + inner + "    ") for sub in record.subplans]
        lines.append(f"{indent}  yield {_regs(self.outputs)}")
        return "\n".join(lines)


def _collector(slots: tuple[int, ...], copied=()) -> Callable[[list], list]:
    """``regs -> [regs[i] for i in slots]``, without a comprehension's call overhead;
    the outputs at positions `copied` (which may be arena memory) are copies."""
    if copied:
        return lambda regs: [regs[s].copy() if i in copied else regs[s]
                             for i, s in enumerate(slots)]
    if len(slots) == 1:
        (slot,) = slots
        return lambda regs: [regs[slot]]
    if not slots:
        return lambda regs: []
    get = itemgetter(*slots)
    return lambda regs: list(get(regs))


# Blocks of more steps than this loop over them instead of being one generated function.
_INLINED_STEPS = 32

# Fewer consecutive steps described as native calls than this stay steps of their own:
# a native run of one step saves nothing.
_LEAST_RUN = 2

# What a block function inlines of a generated step: the function giving its lines
# (`_kernel_lines`, `_region_lines`), the signature they are given and the values
# their parameters take.
_Fragment = tuple[Callable, tuple, tuple]


def _block_function(plan: BlockPlan, fragments: tuple["_Fragment | None", ...],
                    copied=()) -> Callable[[list, list], list]:
    """`plan`'s ``run(tail, regs)`` as one generated function: each generated step's
    lines inlined (its `_Fragment`), the others (wide, binding, timed steps) called,
    so a block costs one frame rather than one per step. A counter says which step
    raised, so a kernel's `IrflowError` still gets its op's location."""
    make = _block_maker(tuple(None if f is None else f[:2] for f in fragments), plan.binds,
                        plan.entry_frees, plan.outputs, tuple(copied))
    values = [v for step, f in zip(plan.steps, fragments)
              for v in ((step,) if f is None else f[2])]
    return make(IrflowError, plan.locs, *values)


@lru_cache(maxsize=256)
def _block_maker(shapes: tuple, binds: tuple, entry_frees: tuple[int, ...],
                 outputs: tuple[int, ...], copied: tuple[int, ...]) -> Callable:
    """``make(IrflowError, locs, *values)`` making a block function (`_block_function`)
    of steps of `shapes` (per step, a `_Fragment`'s lines and signature, or None for
    a step called as it is, its one value). For a block binding a symbol, a fused op
    writing into the arena, then a matmul whose result it returns::

        def make(IrflowError, locs, s0_run, s0_regions, s0_a0, s0_w0, s1_kernel, ...):
            def run(tail, regs):
                regs += tail
                regs[3] = regs[0].shape[0]
                k = 0
                try:
                    s0_values = [regs[s0_a0]]
                    s0_run(s0_values, regs[s0_regions], [regs[s0_w0]])
                    del s0_values
                    k = 1
                    regs[s1_o0] = s1_kernel(regs[s1_a0], regs[s1_a1])
                except IrflowError as e:
                    raise e.with_loc(locs[k])
                return [regs[6]]
            return run
    """
    params, steps = ["IrflowError", "locs"], []
    for j, shape in enumerate(shapes):
        if j:
            steps.append(f"k = {j}")
        if shape is None:
            params.append(f"s{j}")
            steps.append(f"s{j}(regs)")
        else:
            lines, signature = shape
            names, body = lines(*signature, f"s{j}_")
            params += names
            steps += body
    body = ["regs += tail"]
    for slot, arg, axis, coef, offset in binds:
        dim = f"regs[{arg}].shape[{axis}]"
        body.append(f"regs[{slot}] = " + (dim if (coef, offset) == (1, 0)
                                          else f"({dim} - {offset}) // {coef}"))
    body += [f"regs[{slot}] = None" for slot in entry_frees]
    if steps:
        body += ["k = 0", "try:", *(f"    {line}" for line in steps),
                 "except IrflowError as e:", "    raise e.with_loc(locs[k])"]
    body.append("return [" + ", ".join(f"regs[{s}].copy()" if i in copied else f"regs[{s}]"
                                       for i, s in enumerate(outputs)) + "]")
    return generated(params, "run(tail, regs)", body, f"<irflow block of {len(shapes)}>")


class Plan:
    """A function compiled for repeated calls: ``Plan.compile(fn)(*arrays)`` returns
    the list of results, as `irflow.codegen.run(fn, *arrays)` does. `memory_plan` is
    the `MemoryPlan` of the last call's shapes."""

    __slots__ = ("name", "body", "signature", "assignment", "layouts", "_bind", "_run",
                 "whole")

    def __init__(self, fn: Function, callees: dict | None = None, lowering: Lowering = NUMPY,
                 timer: StepTimes | None = None):
        """`callees`: the plans of functions compiled so far for `call` ops (shared by
        the plans of one compilation, so each function is compiled once);
        `lowering`: the kernels a backend substitutes (none by default); `timer`:
        times every step of this function, its regions' included (a callee's plan
        is its own and untimed; the ``call`` step is timed whole)."""
        unbound = symbols_needed(fn.block)
        if unbound:
            symbol = min(unbound)
            op = unbound_use(fn.block, symbol)
            raise IrflowError(f"@{fn.name}: '{op.name}' uses the symbol {symbol} in its "
                              f"shape, but no argument of @{fn.name} has a dim {symbol}",
                              op.loc)
        self.name = fn.name
        callees = {} if callees is None else callees
        callees[fn] = None  # being compiled: a call of it from inside is recursion
        self.assignment = BufferAssignment(fn)
        self.body = _BlockCompiler(fn.block, (), callees, self.assignment, lowering,
                                   timer).compile()
        callees[fn] = self
        self.signature = Signature.of(fn)
        self.layouts = Layouts(self.body, self.assignment, self.signature.symbols)
        self._bind = self.signature.checked if self.assignment.symbols else None
        self._run = self._first_run  # then the static layout's run
        # the backend's run of the whole calls it takes, ``whole(args, None) -> results
        # or None`` (`Lowering.function`); None without (untimed: a timer times steps)
        self.whole = lowering.function(fn) if timer is None else None

    @classmethod
    def compile(cls, fn: Function, lowering: Lowering = NUMPY) -> "Plan":
        return cls(fn, lowering=lowering)

    def __call__(self, *args) -> list:
        if self.whole is not None:
            outs = self.whole(args, None)
            if outs is not None:
                return outs
        if self._bind is None:
            return self._run(self.signature.check(args))
        arrays, sizes = self._bind(args)
        return self.layouts.get(sizes).run(arrays)

    def run_trusted(self, args: list) -> list:
        """Run on NumPy arrays known to match the signature, skipping the checks: for
        callers that built the plan for exactly these types (eager backward, whose
        cache key includes every argument's type)."""
        if self._bind is None:
            return self._run(args)
        return self(*args)

    def runner(self, args: Sequence, trusted: int) -> Callable[[list], list] | None:
        """``run(arrays)`` for calls whose first `trusted` arguments have the dtypes
        and shapes of those of `args`, which the caller has made sure of (a cache
        keyed by them): `args` are checked here, once; each run checks only the
        others (the full check of a call raises where they do not match) and runs in
        the layout of these sizes. None if `args` do not match or the others' types
        are not static."""
        matches = self.signature.static_matcher(trusted)
        if matches is None:
            return None
        try:
            sizes = self.signature.checked(args)[1]
        except SignatureMismatch:
            return None
        layout = self.layouts.get(sizes) if self._bind else self.layouts.get_static()
        layouts, run, whole = self.layouts, layout.run, self.whole

        def run_checked(arrays: list) -> list:
            if whole is not None:
                outs = whole(arrays, None)
                if outs is not None:
                    return outs
            if not matches(arrays):  # a state tensor changed type: the full check
                return self(*arrays)
            layouts.last = layout
            return run(arrays)
        return run_checked

    def _first_run(self, args: list) -> list:
        self._run = self.layouts.get_static().run
        return self._run(args)

    @property
    def memory_plan(self) -> MemoryPlan | None:
        """The memory plan of the last call that ran the steps (the plan for the one
        shape of a static function, even before a call; None if symbolic and none
        has run): a call the lowering's whole run takes uses no arena."""
        if self._bind is None:
            return self.layouts.get_static().plan
        return None if self.layouts.last is None else self.layouts.last.plan

    def describe(self) -> str:
        return f"plan @{self.name}" + self.body.describe()

    def __str__(self) -> str:
        return self.describe()


def compile_plan(fn: Function, lowering: Lowering = NUMPY,
                 timer: StepTimes | None = None) -> Plan:
    """Compile `fn` into a `Plan` (see the module docstring), with the kernels
    `lowering` substitutes; with `timer`, one whose steps add their times to it."""
    return Plan(fn, lowering=lowering, timer=timer)


# ---------------------------------------------------------------- symbols

def _shape_evaluator(shape: tuple, symbol_slot: dict[str, int]) -> Callable[[list], tuple]:
    """``regs -> concrete shape`` for a shape (or slice bounds, whose Nones stay) with
    symbolic dims."""
    dims = tuple(d if d is None or isinstance(d, int) else slot_terms(d, symbol_slot)
                 for d in shape)

    def evaluate(regs: list) -> tuple:
        return tuple(d if d is None or isinstance(d, int) else evaluate_terms(d, regs)
                     for d in dims)

    return evaluate


# ---------------------------------------------------------------- compiling a block

class _Record:
    """What one step does, in registers: for `BlockPlan.describe` and for building the
    step once liveness is known."""

    __slots__ = ("op", "ins", "outs", "read", "frees", "subplans", "build", "into", "native")

    def __init__(self, op: Operation, ins: tuple[int, ...], outs: tuple[int, ...],
                 subplans: tuple[BlockPlan, ...], build: Callable, into: bool = False,
                 native: tuple | None = None):
        self.op = op
        self.ins = ins
        self.outs = outs
        self.into = into  # its out kernel writes into the result's buffer
        # the calls of compiled code the step makes, as data (`irflow.codegen.native`),
        # when it makes nothing else: it may join a native run. A callable makes
        # that description (or None) when a run of described steps would have it
        self.native = native
        self.read: tuple[bool, ...] = ()   # per result: does anything read it?
        self.frees: tuple[int, ...] = ()
        self.subplans = subplans
        self.build = build  # (frees, which outs are read) -> Step

    def text(self) -> str:
        outs = ", ".join(f"r{o}" if read else "_" for o, read in zip(self.outs, self.read))
        line = f"{outs} {'<-' if self.into else '='} " if outs else ""
        line += f"{self.op.name} {_regs(self.ins)}".rstrip()
        return line + (f"  ; free {_regs(self.frees)}" if self.frees else "")


def _regs(slots) -> str:
    return ", ".join(f"r{s}" for s in slots)


class _BlockCompiler:
    """Compiles one block: slots first, then one record per op, then liveness, then
    the steps (whose frees are baked in)."""

    def __init__(self, block: Block, inherits: tuple[str, ...], callees: dict,
                 assignment: BufferAssignment, lowering: Lowering,
                 timer: StepTimes | None = None):
        self.block = block
        self.timer = timer
        self.inherits = inherits
        self.callees = callees
        self.assignment = assignment
        self.lowering = lowering
        self.arena_slots: list[tuple[int, int, TensorType]] = []
        self.result_slots: list[tuple[int, int]] = []
        self.region_slots: list[tuple[int, tuple[BlockPlan, ...]]] = []
        self.slot: dict[Value, int] = {arg: i for i, arg in enumerate(block.args)}
        n = len(block.args)
        self.symbol_slot = {s: n + i for i, s in enumerate(inherits)}
        self.used = symbols_used(block)
        self.binds = []
        for s, where in sorted(argument_symbols(block).items()):
            if s in self.used:
                self.symbol_slot[s] = len(self.symbol_slot) + n
                self.binds.append((self.symbol_slot[s], *where))
        self.base = n + len(inherits)
        self.tail: list = [None] * len(self.binds)
        self.prefilled: list[tuple[int, str]] = []
        self.bound_outs: set[int] = set()  # results whose shapes bind symbols
        self.quiet = False  # a step runs a quiet kernel unsilenced (`unsilenced`)
        self.inlined: dict[Step, _Fragment] = {}  # generated steps a block function inlines
        self.native_runs: list[tuple[int, int]] = []  # records [start, end) run natively

    def unsilenced(self, kernel: Callable | None) -> Callable | None:
        """A quiet kernel's own function (its ``__wrapped__``, see
        `irflow.ops._rules.quiet`), which runs inside the call's one silencing;
        other kernels as they are."""
        inner = getattr(kernel, "__wrapped__", None)
        if inner is None:
            return kernel
        self.quiet = True
        return inner

    def given_memory(self, r: Value, slot: int) -> bool:
        """Whether result `r` (in register `slot`) is written into memory its register
        holds when the step runs: its arena buffer, or its result buffer."""
        buffer = self.assignment.buffer_of.get(r)
        if buffer is not None:
            self.arena_slots.append((slot, buffer, r.type))
            return True
        result = self.assignment.result_of.get(r)
        if result is not None:
            self.result_slots.append((slot, result))
            return True
        return False

    def new_slots(self, op: Operation) -> tuple[int, ...]:
        slots = []
        for r in op.results:
            self.slot[r] = self.base + len(self.tail)
            self.tail.append(None)
            slots.append(self.slot[r])
        return tuple(slots)

    def compile(self) -> BlockPlan:
        records = []
        for op in self.block.body_ops():
            record = self.record(op)
            if record is not None:
                self.bind_results(record)
                records.append(record)
        outputs = tuple(self.slot[v] for v in self.block.terminator.operands)
        steps, locs, fragments = self.steps(records, outputs)
        read = {s for r in records for s in r.ins} | set(outputs)
        entry_frees = tuple(i for i in range(len(self.block.args)) if i not in read)
        top = self.block.parent.parent is None
        copied = self.assignment.copied if top else ()
        quiet = self.quiet or any(sub.quiet for r in records for sub in r.subplans)
        return BlockPlan(tuple(steps), fragments, self.tail, tuple(self.binds), entry_frees,
                         outputs, self.inherits, len(self.block.args), locs, records,
                         tuple(self.prefilled), tuple(self.arena_slots),
                         tuple(self.result_slots), tuple(self.region_slots), copied, quiet,
                         top, tuple(self.native_runs))

    def steps(self, records: list[_Record], outputs: tuple[int, ...]):
        last_use = {}
        for j, record in enumerate(records):
            for s in record.ins:
                last_use[s] = j
        # The arena (and the frame) holds its buffers whatever the registers do.
        keep = set(outputs) | {slot for slot, _ in self.prefilled} | {
            slot for slot, _, _ in self.arena_slots} | {slot for slot, _ in self.result_slots}
        for s, j in last_use.items():
            if s not in keep:
                records[j].frees += (s,)
        read = set(last_use) | set(outputs) | self.bound_outs
        steps, locs, fragments = [], [], []
        for record in records:
            record.frees = tuple(sorted(record.frees))
            record.read = tuple(o in read for o in record.outs)
            step = record.build(record.frees, record.read)
            record.build = None  # it holds the compiler, no longer needed
            if self.timer is not None:
                step = self.timer.wrap(record.op, step)
            steps.append(step)
            locs.append(None if record.subplans else record.op.loc)
            fragments.append(self.inlined.get(step))  # a wrapped step is called as it is
        if self.timer is None:
            self.join_native_runs(records, steps, locs, fragments)
        return steps, tuple(locs), tuple(fragments)

    def join_native_runs(self, records: list[_Record], steps: list, locs: list,
                         fragments: list) -> None:
        """Replace each run of at least `_LEAST_RUN` consecutive steps that the lowering
        describes as native calls (`_Record.native`) by one step calling the
        lowering's native run of them (`Lowering.sequence`), where it makes one;
        `native_runs` gets their records' ranges."""
        for start, end in _runs(records):
            # descriptions made on demand, for steps beside others described as they
            # are (a run of such steps alone stays Python's)
            on_demand = [r for r in records[start:end] if callable(r.native)]
            beside = len(on_demand) < end - start
            for record in on_demand:
                record.native = record.native() if beside else None
        owned = {slot for slot, _, _ in self.arena_slots} | {
            slot for slot, _ in self.result_slots}
        for start, end in reversed(_runs(records)):  # later runs first: the indices hold
            step = self.native_run(records[start:end], steps[start:end], locs[start:end],
                                   owned)
            if step is not None:
                steps[start:end], locs[start:end], fragments[start:end] = [step], [None], [None]
                self.native_runs.insert(0, (start, end))

    def native_run(self, records: list[_Record], steps: list, locs: list,
                   owned: set[int]) -> Step | None:
        """The step running `records`' native calls in one call, or None if the
        lowering makes no native run of them."""
        slots: dict[int, int] = {}  # register -> the run's array number
        types, numbers = [], []
        for record in records:
            registers = (*record.ins, *record.outs)
            number = {}
            for k, (slot, value) in enumerate(zip(registers, (*record.op.operands,
                                                              *record.op.results))):
                if slot not in slots:
                    slots[slot] = len(types)
                    types.append(value.type)
                number[k] = slots[slot]
            numbers.append(number)
        temporaries, calls = [], []  # numbered after the registers' arrays
        for record, number in zip(records, numbers):
            declared = [c.nbytes for c in record.native if isinstance(c, Temporary)]
            first = len(record.ins) + len(record.outs)
            for t, nbytes in enumerate(declared):
                number[first + t] = len(types) + len(temporaries)
                temporaries.append(nbytes)
            calls.append(tuple(_renumbered(call, number) for call in record.native
                               if not isinstance(call, Temporary)))
        native = self.lowering.sequence(calls, types, [s in owned for s in slots],
                                        temporaries)
        if native is None:
            return None
        frees = tuple(sorted({f for record in records for f in record.frees}))
        return _native_run_step(native, tuple(slots), tuple(steps), tuple(locs), frees)

    def record(self, op: Operation) -> _Record | None:
        ins = tuple(self.slot[v] for v in op.operands)
        opdef = lookup(op.name, op.loc)
        if opdef.region_op is not None:
            return self.region_op(op, opdef, ins)
        call = opdef.trait(CallOp)
        native = None
        if call is not None:
            kernel, attrs, shape_attrs = self.callee_kernel(op, call), {}, ()
        else:
            kernel, attrs, shape_attrs = opdef.kernel, op.attrs, opdef.shape_attrs
            out_kernel = opdef.out_kernel
            lowered = self.lowering.kernel(op) if op.operands else None
            native = getattr(lowered, "native", None)
            if lowered is not None:  # it writes into a buffer given as out= too
                kernel = out_kernel = lowered
                attrs, shape_attrs = {}, ()
            kernel, out_kernel = self.unsilenced(kernel), self.unsilenced(out_kernel)
        buffer = self.assignment.buffer_of.get(op.results[0]) if op.results else None
        if (buffer is None and call is None and opdef.effect is Effect.PURE
                and not op.operands and not attr_symbols(op, opdef)):
            self.precompute(op, opdef)
            return None
        outs = self.new_slots(op)
        if op.results and self.given_memory(op.results[0], outs[0]):
            return _Record(op, ins, outs, (), lambda frees, read: self.kernel_step(
                op, out_kernel, attrs, shape_attrs, ins, outs, frees, ("out",)),
                into=True, native=native if len(outs) == 1 else None)
        return _Record(op, ins, outs, (), lambda frees, read: self.kernel_step(
            op, kernel, attrs, shape_attrs, ins, outs, frees, read),
            native=None if op.results else native)

    def callee_kernel(self, op: Operation, call: CallOp) -> Callable:
        """A kernel running the plan of the function `op` calls: the one its symbol
        carries (a compiled program's), or one compiled here, once per function."""
        ref = call.ref(op)
        plan = ref.run
        if plan is None:
            fn = call.callee(op)
            if fn not in self.callees:
                Plan(fn, self.callees, self.lowering)
            plan = self.callees[fn]
            if plan is None:
                raise IrflowError(f"@{fn.name} is called while it is being compiled: "
                                  "recursive calls are not supported", op.loc)
        if len(op.results) == 1:
            return lambda *args: plan(*args)[0]
        return lambda *args: tuple(plan(*args))

    def bind_results(self, record: _Record) -> None:
        """Bind, after its step, the symbols the record's results have as dims that
        this block uses and nothing bound before (a data-dependent size)."""
        binds = []
        for r, out in zip(record.op.results, record.outs):
            for axis, d in enumerate(r.type.shape if isinstance(r.type, TensorType) else ()):
                if is_symbol(d) and d in self.used and d not in self.symbol_slot:
                    self.symbol_slot[d] = self.base + len(self.tail)
                    self.tail.append(None)
                    binds.append((self.symbol_slot[d], out, axis))
        if binds:
            self.bound_outs.update(out for _, out, _ in binds)
            build = record.build
            record.build = lambda frees, read: _binding(build(frees, read), tuple(binds))

    def precompute(self, op: Operation, opdef: OpDef) -> None:
        try:
            out = opdef.kernel(**op.attrs)
        except IrflowError as e:
            raise e.with_loc(op.loc)
        values = [out] if len(op.results) == 1 else list(out)
        for r, value, slot in zip(op.results, values, self.new_slots(op)):
            self.tail[slot - self.base] = _wrap_0d(r, value)
            self.prefilled.append((slot, op.name))

    def kernel_step(self, op: Operation, kernel: Callable, attrs: dict, shape_attrs, ins, outs,
                    frees, read) -> Step:
        static, symbolic = [], []
        for key, value in attrs.items():
            if key in shape_attrs and has_symbols(value):
                symbolic.append((key, _shape_evaluator(value, self.symbol_slot)))
            else:
                static.append((key, value))
        if read == ("out",):  # written into its buffer, which its register holds
            modes, kept = read, list(outs)
        else:
            modes = tuple(("wrap" if _is_0d(r) else "keep") if used else "drop"
                          for r, used in zip(op.results, read))
            kept = [o for o, used in zip(outs, read) if used]
        if len(ins) + len(kept) + len(frees) > _WIDE:
            return _wide_step(kernel, ins, modes, kept, frees, dict(static), symbolic)
        signature = (len(ins), modes, len(frees), tuple(k for k, _ in static),
                     tuple(k for k, _ in symbolic))
        values = (kernel, np.asarray, *ins, *kept, *frees, *(v for _, v in static),
                  *(f for _, f in symbolic))
        step = _step_maker(*signature)(*values)
        self.inlined[step] = (_kernel_lines, signature, values)
        return step

    def subplan(self, op: Operation, index: int) -> tuple[BlockPlan, tuple[int, ...]]:
        """The plan of region `index` and the slots of the symbols it inherits."""
        block = op.regions[index].blocks[0]
        inherits = tuple(sorted(symbols_needed(block)))
        plan = _BlockCompiler(block, inherits, self.callees, self.assignment,
                              self.lowering, self.timer).compile()
        return plan, tuple(self.symbol_slot[s] for s in inherits)

    def region_op(self, op: Operation, opdef: OpDef, ins) -> _Record:
        subplans = tuple(self.subplan(op, i) for i in range(len(op.regions)))
        outs = self.new_slots(op)
        into = tuple(self.given_memory(r, slot) for r, slot in zip(op.results, outs))
        native = None
        if any(into):  # it writes those results into their buffers
            lowered = self.lowering.out_evaluator(op, into)
            native = getattr(lowered, "native", None) if all(into) else None
            run = self.unsilenced(lowered or opdef.region_op.out_evaluator(op, into))
        else:
            run = self.unsilenced(self.lowering.evaluator(op) or opdef.region_op.evaluator(op))
        regions = self.base + len(self.tail)  # the register of the bound sub-plans
        self.tail.append(None)
        self.region_slots.append((regions, tuple(plan for plan, _ in subplans)))
        symbols = tuple(slots for _, slots in subplans)

        written = tuple(o for o, i in zip(outs, into) if i)

        def build(frees, read):
            stored = tuple((i, o) for i, o in _stored(outs, read) if not into[i])
            step, fragment = _region_step(run, ins, frees, regions, symbols, stored, written)
            if fragment is not None:
                self.inlined[step] = fragment
            return step
        return _Record(op, ins, outs, tuple(plan for plan, _ in subplans), build,
                       into=any(into), native=native)


def _is_0d(v: Value) -> bool:
    return isinstance(v.type, TensorType) and not v.type.shape


def _wrap_0d(v: Value, value):
    """NumPy returns scalars, not 0-d arrays, from operations on 0-d arrays; results
    are arrays, as in the interpreter."""
    return np.asarray(value) if _is_0d(v) else value


def _stored(outs: tuple[int, ...], read: tuple[bool, ...]) -> tuple[tuple[int, int], ...]:
    """(result index, slot) of the results something reads."""
    return tuple((i, o) for i, (o, used) in enumerate(zip(outs, read)) if used)


# ---------------------------------------------------------------- steps

def _runs(records: list[_Record]) -> list[tuple[int, int]]:
    """The [start, end) of each run of at least `_LEAST_RUN` consecutive records
    described as native calls."""
    runs, start = [], None
    for j, record in enumerate([*records, None]):
        if record is not None and record.native is not None:
            start = j if start is None else start
            continue
        if start is not None and j - start >= _LEAST_RUN:
            runs.append((start, j))
        start = None
    return runs


def _renumbered(call, number: dict[int, int]):
    """A step's `Call` or `Check` with its arrays numbered by `number` (a run's)."""
    if isinstance(call, Check):
        return Check(Array(number[call.array.index]))
    return dataclasses.replace(call, args=tuple(
        Array(number[a.index]) if isinstance(a, Array) else a for a in call.args))


def _native_run_step(native: Callable[[list], int], slots: tuple[int, ...],
                     steps: tuple[Step, ...], locs: tuple, frees: tuple[int, ...]) -> Step:
    """The step of a native run (`_BlockCompiler.join_native_runs`): ``native`` on the
    arrays of registers `slots`, then, from the first step it did not complete (a
    fallible call failed, a check failed, or it took none), the steps as Python,
    which raise the error; then the registers `frees` cleared."""
    arrays = itemgetter(*slots) if len(slots) > 1 else lambda regs: (regs[slots[0]],)
    count = len(steps)

    def run(regs: list) -> None:
        done = native(arrays(regs))
        for k in range(done, count):
            try:
                steps[k](regs)
            except IrflowError as e:
                raise e.with_loc(locs[k])
        for slot in frees:
            regs[slot] = None
    return run


@lru_cache(maxsize=None)
def _step_maker(n_in: int, modes: tuple[str, ...], n_free: int, attrs: tuple[str, ...],
                shape_attrs: tuple[str, ...]) -> Callable[..., Step]:
    """A function making kernel steps of one signature:
    ``make(kernel, asarray, *in_slots, *out_slots, *free_slots, *attr_values,
    *shape_evaluators)``. `modes` says per result whether it is stored (``keep``),
    stored as an array (``wrap``, for 0-d results) or dropped (``drop``), or is
    ``("out",)`` for an out kernel writing into the buffer in the result's register.
    For ``add`` with a dying first operand it generates::

        def make(kernel, asarray, a0, a1, o0, f0):
            def step(regs):
                regs[o0] = kernel(regs[a0], regs[a1])
                regs[f0] = None
            return step

    and with ``modes=("out",)`` the line ``kernel(regs[a0], regs[a1], out=regs[o0])``.

    Slots and attribute values are closure variables and the attributes are passed
    as keywords, which costs less per call than `functools.partial` or ``**attrs``.
    A block function (`_block_maker`) inlines the same lines.
    """
    params, body = _kernel_lines(n_in, modes, n_free, attrs, shape_attrs)
    return generated(params, "step(regs)", body, f"<irflow step {n_in}:{','.join(modes)}>")


def _kernel_lines(n_in: int, modes: tuple[str, ...], n_free: int, attrs: tuple[str, ...],
                  shape_attrs: tuple[str, ...], p: str = "") -> tuple[list[str], list[str]]:
    """The parameters and body lines of `_step_maker`'s step, each name starting with
    `p` (a block function holds several steps)."""
    for name in attrs + shape_attrs:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise IrflowError(f"internal error: attribute {name!r} is not a Python name")
    n_out = sum(m != "drop" for m in modes)
    params = ([f"{p}kernel", f"{p}asarray"] + [f"{p}a{i}" for i in range(n_in)]
              + [f"{p}o{i}" for i in range(n_out)] + [f"{p}f{i}" for i in range(n_free)]
              + [f"{p}c{i}" for i in range(len(attrs))]
              + [f"{p}e{i}" for i in range(len(shape_attrs))])
    call = f"{p}kernel(" + ", ".join([f"regs[{p}a{i}]" for i in range(n_in)]
                                     + [f"{k}={p}c{i}" for i, k in enumerate(attrs)]
                                     + [f"{k}={p}e{i}(regs)" for i, k in enumerate(shape_attrs)]
                                     ) + ")"
    if modes == ("out",):
        body = [call[:-1] + (", " if n_in or attrs or shape_attrs else "") + f"out=regs[{p}o0])"]
    elif len(modes) <= 1:
        body = [_store(modes[0] if modes else "drop", 0, call, p)]
    else:
        results = ", ".join(f"{p}x{i}" for i in range(len(modes)))
        body = [f"{results}, = {call}"]
        stored = 0
        for i, mode in enumerate(modes):
            if mode != "drop":
                body.append(_store(mode, stored, f"{p}x{i}", p))
                stored += 1
        body.append(f"del {results}")  # in a block function, nothing else drops them
    body += [f"regs[{p}f{i}] = None" for i in range(n_free)]
    return params, body


def generated(params: list[str], inner: str, body: list[str], filename: str) -> Callable:
    """``make(*params)``, returning the function `inner` (its name and parameters)
    whose body is `body`, compiled from source as `filename`."""
    name = inner[:inner.index("(")]
    source = (f"def make({', '.join(params)}):\n    def {inner}:\n"
              + "".join(f"        {line}\n" for line in body) + f"    return {name}\n")
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["make"]


# Steps touching more registers than this are not generated (compiling a function of
# thousands of parameters takes seconds): a loop over slot tuples does their work.
_WIDE = 64


def _wide_step(kernel, ins, modes, kept, frees, static: dict, symbolic) -> Step:
    """The step of an op with very many operands or results (a ``call`` of a
    program with thousands of residuals, a concat of hundreds of tensors)."""
    if modes == ("out",):
        (out_slot,) = kept

        def into(regs: list) -> None:
            attrs = dict(static)
            for key, evaluate in symbolic:
                attrs[key] = evaluate(regs)
            kernel(*[regs[i] for i in ins], out=regs[out_slot], **attrs)
            for f in frees:
                regs[f] = None
        return into
    stored = [i for i, mode in enumerate(modes) if mode != "drop"]
    stores = [(i, slot, modes[i] == "wrap") for i, slot in zip(stored, kept)]
    single = len(modes) == 1

    def step(regs: list) -> None:
        attrs = dict(static)
        for key, evaluate in symbolic:
            attrs[key] = evaluate(regs)
        out = kernel(*[regs[i] for i in ins], **attrs)
        results = (out,) if single else out
        for i, slot, wrap in stores:
            regs[slot] = np.asarray(results[i]) if wrap else results[i]
        for f in frees:
            regs[f] = None
    return step


def _store(mode: str, index: int, expr: str, p: str) -> str:
    if mode == "drop":
        return expr
    return f"regs[{p}o{index}] = " + (f"{p}asarray({expr})" if mode == "wrap" else expr)


def _binding(step: Step, binds: tuple[tuple[int, int, int], ...]) -> Step:
    """`step`, then ``regs[slot] = regs[out].shape[axis]`` for each bind."""
    def run(regs: list) -> None:
        step(regs)
        for slot, out, axis in binds:
            regs[slot] = regs[out].shape[axis]
    return run


def _region_step(run, ins: tuple[int, ...], frees: tuple[int, ...], regions: int,
                 symbols: tuple[tuple[int, ...], ...], outs: tuple[tuple[int, int], ...],
                 written: tuple[int, ...] = ()) -> tuple[Step, "_Fragment | None"]:
    """A region op's step: its evaluator `run` on the operand values, with each region
    a sub-plan bound to the call's frame (register `regions` holds them), given the
    sizes in registers `symbols[k]` if region k inherits symbols. Dying operands are
    cleared before the regions run, and the evaluator owns the operand list, so a
    loop can drop each iteration's values. With `written` (the registers holding the
    arena buffers of the results it writes), `run` is an out evaluator, given those
    buffers; `outs` stores the other results something reads. Its regions given
    their symbols (or it is very wide), it is a closure of this function's; else a
    generated one (`_region_step_maker`), returned with its `_Fragment`."""
    if not any(symbols) and len(ins) + len(frees) + len(written) + len(outs) <= _WIDE:
        signature = (len(ins), len(frees), len(written), tuple(i for i, _ in outs))
        values = (run, regions, *ins, *frees, *written, *(o for _, o in outs))
        return _region_step_maker(*signature)(*values), (_region_lines, signature, values)
    if written:

        def into(regs: list) -> None:
            bound = [_with_symbols(plan, [regs[s] for s in slots])
                     for plan, slots in zip(regs[regions], symbols)]
            results = run(_operands(regs, ins, frees), bound, [regs[o] for o in written])
            for i, o in outs:
                regs[o] = results[i]
        return into, None

    def step(regs: list) -> None:
        bound = [_with_symbols(plan, [regs[s] for s in slots])
                 for plan, slots in zip(regs[regions], symbols)]
        results = run(_operands(regs, ins, frees), bound)
        for i, o in outs:
            regs[o] = results[i]
    return step, None


@lru_cache(maxsize=None)
def _region_step_maker(n_in: int, n_free: int, n_written: int,
                       stored: tuple[int, ...]) -> Callable[..., Step]:
    """A function making the steps of region ops whose regions inherit no symbols, of
    one signature: ``make(run, regions, *in_slots, *free_slots, *written_slots,
    *stored_slots)``, where result ``stored[k]`` goes to the k-th stored slot. As
    `_step_maker`'s, the step is one generated function; for a fused op writing its
    one result and storing none::

        def make(run, regions, a0, a1, f0, f1, w0):
            def step(regs):
                values = [regs[a0], regs[a1]]
                regs[f0] = None
                regs[f1] = None
                run(values, regs[regions], [regs[w0]])
                del values
            return step
    """
    params, body = _region_lines(n_in, n_free, n_written, stored)
    return generated(params, "step(regs)", body, f"<irflow region step {n_in}:{n_written}>")


def _region_lines(n_in: int, n_free: int, n_written: int, stored: tuple[int, ...],
                  p: str = "") -> tuple[list[str], list[str]]:
    """The parameters and body lines of `_region_step_maker`'s step, each name starting
    with `p`."""
    params = ([f"{p}run", f"{p}regions"] + [f"{p}a{i}" for i in range(n_in)]
              + [f"{p}f{i}" for i in range(n_free)] + [f"{p}w{i}" for i in range(n_written)]
              + [f"{p}o{k}" for k in range(len(stored))])
    given = (", [" + ", ".join(f"regs[{p}w{i}]" for i in range(n_written)) + "]"
             if n_written else "")
    call = f"{p}run({p}values, regs[{p}regions]{given})"
    body = [f"{p}values = [" + ", ".join(f"regs[{p}a{i}]" for i in range(n_in)) + "]"]
    body += [f"regs[{p}f{i}] = None" for i in range(n_free)]
    body.append(f"{p}results = {call}" if stored else call)
    body += [f"regs[{p}o{k}] = {p}results[{i}]" for k, i in enumerate(stored)]
    # in a block function, nothing else drops the operands (the evaluator owns the
    # list) or the results nothing reads
    body.append(f"del {p}values" + (f", {p}results" if stored else ""))
    return params, body


def _operands(regs: list, ins: tuple[int, ...], frees: tuple[int, ...]) -> list:
    values = [regs[i] for i in ins]
    for f in frees:
        regs[f] = None
    return values


def _with_symbols(region: Callable[[list], list], sizes: list) -> Callable[[list], list]:
    """A bound sub-plan run on block arguments followed by the sizes it inherits."""
    return lambda values: region(values + sizes)
