"""Buffer planning: every intermediate of a function gets an offset in one arena.

Planning has two halves. `BufferAssignment` (once per function, shape-independent)
decides, from `Liveness`, which values the executor writes into the arena and which
values share memory; `BufferAssignment.plan(sizes)` (once per concrete size of the
symbolic dims, cached by the executor) gives each buffer its offset, in a
`MemoryPlan`.

**Who gets arena memory.** Every root (a result whose op gives it memory of its own;
see `irflow.passes.liveness`) whose op has an out kernel, or is an op with regions
that writes its results into given buffers (`RegionOp.writes_results`: a fused
kernel, each of whose results gets a buffer), unless its op allocates it because
it:

- is returned: the caller keeps it, and the next call would overwrite the arena. A
  returned value computed inside a loop is planned all the same (the loop would
  allocate one per iteration) and `return` copies it out (`copied`). A returned
  array computed by an op of the function's own block (not in a region) gets a
  *result buffer* instead (`results`): memory of its own outside the arena, which
  the executor gives the op as its out buffer and reuses on a later call once the
  caller has let go of the array it returned (`irflow.codegen.arena`), so a call
  returning a large array does not make the operating system hand out, and zero,
  fresh pages every time;
- is kept in a stack or a list (autodiff's record of a loop keeps every iteration's);
- has a size known only once its op has run (a symbol no argument binds);
- is redefined by its loop while the previous iteration's value is still read
  (`Liveness.conflicts`);
- is one of several results of an op without regions, or inside the regions of an
  op that writes its results (a fused kernel's scalar body and its anchor's
  contraction are the kernel's own), or its op has no out kernel (convolution,
  pooling, random draws).

A fused kernel's operands are read until it ends, when its results are defined, so
its results never share memory with its operands (no in-place fused kernels).

Views (reshape, transpose, squeeze, ...), region arguments and results, and call
results have no memory of their own: they refer to their sources', which stay live
as long as they do.

**In place.** A root is written over an operand's buffer when the operand is
exactly one root (not a view), dies at this op, has the result's type, no other
operand refers to it, the op may overwrite it (`OpDef.overwrites`: elementwise ops,
`set_slice`, `scatter_add`...) and neither is carried by a loop: the two share one
buffer, whose interval is the union of theirs.

**Offsets.** Two placements are made and the smaller arena kept, as XLA's heap
simulator does. The sweep goes over the timeline in order of the buffers' first
ticks (larger first at the same tick): the buffers whose intervals ended are
released into a free list (coalescing neighbours), and each new buffer takes the
smallest free block it fits (best fit), else the free block at the top of the arena
or fresh space above it. By size, the largest buffers are placed first, each in the
smallest gap between the buffers placed so far whose intervals overlap its own
(quadratic, so only up to `BY_SIZE_LIMIT` buffers). Sizes are rounded up to
`ALIGNMENT` bytes, the alignment of every offset, and so are the totals:
`naive_bytes` (every planned value its own buffer), `peak_live_bytes` (the most
bytes of buffers live at one tick, the lower bound of any placement of these
intervals) and `arena_bytes`.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort

from ..ir.core import Function, Module, OpResult, Value
from ..ir.registry import lookup
from ..ir.sizes import argument_symbols
from ..ir.traits import Elementwise
from ..ir.types import Container, TensorType, eval_shape, symbols_of
from .framework import Pass, PipelineError, register_pass
from .liveness import Liveness

ALIGNMENT = 64  # bytes: a cache line, and the widest vector register
BY_SIZE_LIMIT = 2048  # buffers placed by size too


class Buffer:
    """Memory that one root takes, then each result written over it in place."""

    __slots__ = ("values", "type", "start", "stop")

    def __init__(self, root: OpResult, start: int, stop: int):
        self.values: list[OpResult] = [root]
        self.type: TensorType = root.type
        self.start, self.stop = start, stop


class BufferAssignment:
    """Which values of `fn` the arena holds and which buffer each takes, for any
    sizes: `buffers`, `buffer_of[value]` (an index into `buffers`), `allocated[value]`
    (why its op allocates it instead), `copied` (the indices of the returned values
    that may be arena memory or a constant's array, which `return` copies out), `results` (the returned
    values given result buffers, `result_of[value]` an index into it) and `symbols`
    (those the sizes of buffers and result buffers depend on). Once built it reads nothing from the IR (values are
    only its keys), so a compiled plan needs no IR to place buffers for a new shape."""

    def __init__(self, fn: Function):
        live = Liveness(fn)
        self.function = fn.name
        self.buffers: list[Buffer] = []
        self.buffer_of: dict[OpResult, int] = {}
        self.allocated: dict[OpResult, str] = {}
        bound = set(argument_symbols(fn.block))
        returned = fn.block.terminator.operands
        escaping = _roots_of(live, returned)
        captured = _roots_of(live, (v for op in fn.walk() if _stores(op) for v in op.operands))
        conflicts = live.conflicts()
        for r in live.roots:
            why = _why_allocated(r, live, bound, escaping, captured, conflicts)
            if why is None:
                self._place(r, live)
            else:
                self.allocated[r] = why
        for op in fn.walk():
            self._written_over(op, live)
        # (a constant's array is the plan's, the same on every call: the caller's
        # writes into a returned one would change later calls)
        self.copied = tuple(i for i, v in enumerate(returned)
                            if any(r in self.buffer_of or isinstance(r, OpResult)
                                   and r.op.name == "const" for r in live.refs_of(v)))
        self.results: list[OpResult] = [
            r for r, why in self.allocated.items()
            if why == "returned" and r.op.parent is fn.block]
        self.result_of: dict[OpResult, int] = {r: k for k, r in enumerate(self.results)}
        self.result_types: list[TensorType] = [r.type for r in self.results]
        types = [b.type for b in self.buffers] + self.result_types
        self.symbols = tuple(sorted({s for t in types for d in t.shape
                                     for s in symbols_of(d)}))

    def _place(self, r: OpResult, live: Liveness) -> None:
        """Put root `r` over a dying operand's buffer, or in a buffer of its own."""
        op = r.op
        opdef = lookup(op.name)
        t = live.begin[op]
        for k, a in enumerate(op.operands):
            refs = live.refs_of(a)
            if len(refs) != 1 or not opdef.overwrites(k):
                continue
            ((root, exact),) = refs.items()
            index = self.buffer_of.get(root)
            if (index is None or not exact or a.type != r.type or live.stop[root] != t
                    or r in live.carried or root in live.carried
                    or _shared(op, k, root, live, opdef)):
                continue
            buffer = self.buffers[index]
            buffer.values.append(r)
            buffer.stop = live.stop[r]
            self.buffer_of[r] = index
            return
        self.buffer_of[r] = len(self.buffers)
        self.buffers.append(Buffer(r, live.start[r], live.stop[r]))

    def _written_over(self, op, live: Liveness) -> None:
        """Count the values an op that writes its results computes into a result's
        buffer (`RegionOp.written_over`) in that buffer, live from the op's start."""
        rop = lookup(op.name).region_op
        if rop is None or not rop.writes_results:
            return
        into = tuple(r in self.buffer_of for r in op.results)
        if not any(into):
            return
        for v, k in rop.written_over(op, into):
            index = self.buffer_of[v] = self.buffer_of[op.results[k]]
            self.allocated.pop(v, None)
            buffer = self.buffers[index]
            buffer.values.insert(0, v)
            buffer.start = min(buffer.start, live.begin[op])

    def plan(self, sizes: dict[str, int] | None = None) -> "MemoryPlan":
        """Offsets for these sizes of the symbolic dims (see the module docstring)."""
        sizes = sizes or {}
        missing = [s for s in self.symbols if s not in sizes]
        if missing:
            raise PipelineError(f"@{self.function}: the buffer sizes depend on "
                                f"{', '.join(missing)}; give their sizes")
        return MemoryPlan(self, {s: sizes[s] for s in self.symbols})


def _roots_of(live: Liveness, values) -> set[Value]:
    return {r for v in values for r in live.refs_of(v)}


def _stores(op) -> bool:
    """Whether `op` puts its operands into a stack or a list (which keeps them)."""
    return not op.regions and any(isinstance(r.type, Container) for r in op.results)


def _why_allocated(r: OpResult, live: Liveness, bound: set[str], escaping, captured,
                   conflicts) -> str | None:
    """Why root `r`'s op allocates it (None: the arena holds it)."""
    opdef = lookup(r.op.name)
    if r in live.unplanned:
        return "inside a kernel's regions"
    writes = opdef.region_op is not None and opdef.region_op.writes_results
    if len(r.op.results) != 1 and not writes:
        return "one of several results"
    if opdef.out_kernel is None and not writes:
        return "no out kernel"
    if not all(s in bound for d in r.type.shape for s in symbols_of(d)):
        return "size known at run time"
    if r in captured:
        return "kept in a stack or list"
    if r in escaping and not live.loops_around[r]:
        return "returned"
    if r in conflicts:
        return "read after its loop redefines it"
    return None


def _shared(op, k: int, root, live: Liveness, opdef) -> bool:
    """Whether an operand of `op` other than operand `k` may be `root`'s memory (an
    elementwise op may read the very same value twice, ``mul %a, %a``, if it may
    write over it at both places)."""
    a = op.operands[k]
    twice = opdef.has(Elementwise)
    return any(root in live.refs_of(v) for j, v in enumerate(op.operands)
               if j != k and not (twice and v is a and opdef.overwrites(j)))


# ---------------------------------------------------------------- offsets

def nbytes(t: TensorType, sizes: dict[str, int]) -> int:
    """The bytes a buffer of type `t` takes, rounded up to `ALIGNMENT`; none for a
    negative size (of a region's value in a branch the sizes rule out: see
    `irflow.codegen.arena`)."""
    shape = t.shape if t.is_static else eval_shape(t.shape, sizes)
    return -(-math.prod(max(d, 0) for d in shape) * t.dtype.np.itemsize // ALIGNMENT) * ALIGNMENT


class MemoryPlan:
    """Offsets of an assignment's buffers for concrete sizes (`sizes`): `offsets[i]`
    for buffer i, `offset(value)`, the totals `naive_bytes`, `peak_live_bytes`
    and `arena_bytes` (see the module docstring), and `result_shapes[k]`, the
    shape of result buffer k."""

    def __init__(self, assignment: BufferAssignment, sizes: dict[str, int]):
        self.assignment = assignment
        self.sizes = sizes
        self.result_shapes = [t.shape if t.is_static else eval_shape(t.shape, sizes)
                              for t in assignment.result_types]
        buffers = assignment.buffers
        sized: dict[TensorType, int] = {}
        self.nbytes = [sized[b.type] if b.type in sized else sized.setdefault(
            b.type, nbytes(b.type, sizes)) for b in buffers]
        self.naive_bytes = sum(n * len(b.values) for n, b in zip(self.nbytes, buffers))
        self.offsets, self.arena_bytes, self.peak_live_bytes = _sweep(buffers, self.nbytes)
        if len(buffers) <= BY_SIZE_LIMIT:
            offsets, arena_bytes = _by_size(buffers, self.nbytes)
            if arena_bytes < self.arena_bytes:
                self.offsets, self.arena_bytes = offsets, arena_bytes

    def offset(self, value: Value) -> int | None:
        """The arena offset of `value`'s memory, None if it has no buffer."""
        index = self.assignment.buffer_of.get(value)
        return None if index is None else self.offsets[index]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{s}={n}" for s, n in self.sizes.items())
        return (f"<MemoryPlan @{self.assignment.function}{' for ' + sizes if sizes else ''}: "
                f"{len(self.offsets)} buffers, arena {self.arena_bytes} bytes, peak live "
                f"{self.peak_live_bytes}, naive {self.naive_bytes}>")


def _sweep(buffers: list[Buffer], sizes: list[int]) -> tuple[list[int], int, int]:
    """(offsets, arena bytes, peak live bytes) of the sweep over the timeline."""
    offsets = [0] * len(buffers)
    arena = _Arena()
    active: list[tuple[int, int]] = []  # (last tick, buffer) of the live buffers
    for i in sorted(range(len(buffers)), key=lambda i: (buffers[i].start, -sizes[i])):
        while active and active[0][0] < buffers[i].start:
            _, j = heapq.heappop(active)
            arena.release(offsets[j], sizes[j])
        offsets[i] = arena.take(sizes[i])
        heapq.heappush(active, (buffers[i].stop, i))
    return offsets, arena.top, arena.peak


def _by_size(buffers: list[Buffer], sizes: list[int]) -> tuple[list[int], int]:
    """(offsets, arena bytes) of placing the largest buffers first, each in the
    smallest gap it fits between the placed buffers live at the same time."""
    offsets = [0] * len(buffers)
    placed: list[int] = []
    top = 0
    for i in sorted(range(len(buffers)), key=lambda i: (-sizes[i], buffers[i].start)):
        size, start, stop = sizes[i], buffers[i].start, buffers[i].stop
        if not size:
            continue
        taken = sorted((offsets[j], offsets[j] + sizes[j]) for j in placed
                       if buffers[j].start <= stop and start <= buffers[j].stop)
        best, cursor = None, 0
        for low, high in taken:
            gap = low - cursor
            if gap >= size and (best is None or gap < best[0]):
                best = (gap, cursor)
            cursor = max(cursor, high)
        offsets[i] = best[1] if best is not None else cursor
        top = max(top, offsets[i] + size)
        placed.append(i)
    return offsets, top


class _Arena:
    """Offsets handed out and given back: free blocks sorted by offset (to coalesce
    neighbours) and by size (to find the best fit by bisection); `top` is the arena's
    size so far and `peak` the most bytes taken at once."""

    def __init__(self):
        self.by_offset: list[tuple[int, int]] = []  # (offset, size)
        self.by_size: list[tuple[int, int]] = []    # (size, offset)
        self.top = self.live = self.peak = 0

    def take(self, size: int) -> int:
        if size == 0:
            return 0
        self.live += size
        self.peak = max(self.peak, self.live)
        i = bisect_left(self.by_size, (size, -1))
        if i < len(self.by_size):  # the smallest block it fits, the lowest of those
            block, offset = self.by_size[i]
            self._remove(offset, block)
            if block > size:
                self._add(offset + size, block - size)
            return offset
        if self.by_offset and sum(self.by_offset[-1]) == self.top:  # grow the top block
            offset, block = self.by_offset[-1]
            self._remove(offset, block)
        else:
            offset = self.top
        self.top = offset + size
        return offset

    def release(self, offset: int, size: int) -> None:
        if size == 0:
            return
        self.live -= size
        i = bisect_left(self.by_offset, (offset, 0))
        if i < len(self.by_offset) and self.by_offset[i][0] == offset + size:
            size += self.by_offset[i][1]
            self._remove(*self.by_offset[i])
        if i > 0 and sum(self.by_offset[i - 1]) == offset:
            before, before_size = self.by_offset[i - 1]
            self._remove(before, before_size)
            offset, size = before, before_size + size
        self._add(offset, size)

    def _add(self, offset: int, size: int) -> None:
        insort(self.by_offset, (offset, size))
        insort(self.by_size, (size, offset))

    def _remove(self, offset: int, size: int) -> None:
        del self.by_offset[bisect_left(self.by_offset, (offset, size))]
        del self.by_size[bisect_left(self.by_size, (size, offset))]


# ---------------------------------------------------------------- the pass

@register_pass
class PlanBuffers(Pass):
    """Plan every intermediate's arena offset and annotate the IR with it (an analysis).

    Each op whose result the arena holds gets ``plan.offset`` (bytes), each whose op
    allocates it ``plan.allocated`` (why); the return gets the totals
    ``plan.arena_bytes``, ``plan.peak_live_bytes``, ``plan.naive_bytes`` and, if any,
    ``plan.copied`` (the results copied out of the arena). Symbolic dims need sizes,
    ``plan-buffers{sizes=N=4;M=2}``; without them the return names the missing ones
    (``plan.unsized``). `plans` holds each function's `MemoryPlan` and `statistics()`
    the bytes planned."""

    name = "plan-buffers"
    after_autodiff = True  # it plans the program as it runs: fused, differentiated
    sizes: str = ""

    def __post_init__(self):
        self._sizes = _parse_sizes(self.sizes)
        self.plans: dict[str, MemoryPlan] = {}

    def run(self, module: Module) -> bool:
        sizes = self._sizes
        self.plans = {}
        for fn in module:
            assignment = BufferAssignment(fn)
            missing = [s for s in assignment.symbols if s not in sizes]
            plan = None if missing else assignment.plan(sizes)
            if plan is not None:
                self.plans[fn.name] = plan
            annotate(fn, assignment, plan, missing)
        return False

    def statistics(self) -> dict[str, int]:
        """The bytes of the arenas planned by the last run, their peaks and the naive
        bytes, summed over the module's functions (dashed names, for a pass report)."""
        plans = self.plans.values()
        return {"bytes-planned": sum(p.arena_bytes for p in plans),
                "peak-live-bytes": sum(p.peak_live_bytes for p in plans),
                "naive-bytes": sum(p.naive_bytes for p in plans)}


def _parse_sizes(text: str) -> dict[str, int]:
    sizes = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        symbol, eq, size = item.partition("=")
        if not eq or not size.strip().isdigit():
            raise PipelineError(f"plan-buffers: sizes are written N=4;M=2, got {text!r}")
        sizes[symbol.strip()] = int(size)
    return sizes


def annotate(fn: Function, assignment: BufferAssignment, plan: MemoryPlan | None,
             missing=()) -> None:
    """Write `plan` (or, without one, what the assignment decided) on `fn`'s ops."""
    for op in fn.walk():
        if op.annotations:
            op.annotations = {k: v for k, v in op.annotations.items()
                              if not k.startswith("plan.")} or None
        notes = {}
        for r in op.results:
            if r in assignment.allocated:
                notes["plan.allocated"] = assignment.allocated[r]
            elif plan is not None and r in assignment.buffer_of:
                notes["plan.offset"] = plan.offset(r)
        if op is fn.return_op:
            if plan is not None:
                notes.update({"plan.arena_bytes": plan.arena_bytes,
                              "plan.peak_live_bytes": plan.peak_live_bytes,
                              "plan.naive_bytes": plan.naive_bytes})
            else:
                notes["plan.unsized"] = tuple(missing)
            if assignment.copied:
                notes["plan.copied"] = assignment.copied
        if notes:
            op.annotations = {**(op.annotations or {}), **notes}
