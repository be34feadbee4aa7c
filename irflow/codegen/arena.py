"""The memory a plan's calls run in: one arena per concrete shape, pooled per call.

A plan's values are planned once (`irflow.passes.plan_buffers.BufferAssignment`);
the offsets depend on the sizes of the symbolic dims, so a `Layouts` cache keeps one
`Layout` per binding of the symbols the buffers depend on (a plan of static shapes
has exactly one).

A `Layout` is the `MemoryPlan` for one binding and a pool of *frames*. A frame is an
arena (one byte array, `ALIGNMENT`-aligned) and, for every block plan of the
function, the tail of its register list with each planned value's register holding
its view into the arena and each region op's register holding its sub-plans bound
to this frame. A call takes a frame from the pool, or makes one, and puts it back
when it returns; so calls running at the same time (from several threads, or a
plan reached again through a ``call`` while it runs) never share an arena, and the
views of a frame are made once, not per call. The pool holds as many frames as
calls have overlapped. The arena stays allocated between calls; that is the point.

Nothing a call returns is arena memory (returned values are allocated by their op,
written into result buffers or copied out), so the next call overwriting the arena
changes nothing anyone holds.

**Result buffers.** A frame also holds the arrays its last call returned through
result buffers (`BufferAssignment.results`). A call reuses such an array as the
op's out buffer when nothing but the frame refers to it any more (the caller has
dropped it, and every view of it, whose base refers to it), and allocates a new
one otherwise; so a loop that calls a compiled function and drops each result
writes into the same memory, instead of making the operating system map and zero
fresh pages for every large result (+1.5 ms for a 16 MB result after other code
freed its memory, measured). The reference count is exact: any Python object that
can reach the memory (an array, a view, a memoryview, a ctypes buffer) holds one;
what the count of an array nobody else holds reads is measured once (`ALONE`), not
assumed, since Python versions differ in the references the call itself counts.
"""
from __future__ import annotations

import sys
import threading
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ShapeError
from ..ir.types import TensorType, eval_shape
from ..passes.plan_buffers import ALIGNMENT, BufferAssignment, MemoryPlan

if TYPE_CHECKING:
    from .executor import BlockPlan

MAX_LAYOUTS = 8  # concrete shapes kept per plan; the oldest goes first


def _count_alone() -> int:
    """What ``sys.getrefcount`` says of a list's item that nothing else holds,
    asked as `Layout._pooled` asks (2 on CPython 3.11: the list's reference and the
    argument's; a version that borrows the argument would say 1)."""
    items = [object()]
    return sys.getrefcount(items[0])


ALONE = _count_alone()


class Layout:
    """The frames of one concrete shape (see the module docstring)."""

    __slots__ = ("plan", "body", "pool", "shared", "results", "run")

    def __init__(self, body: "BlockPlan", plan: MemoryPlan):
        self.plan = plan
        self.body = body
        self.pool: list[list] = []
        self.shared: list | None = None
        # (frame index, shape, dtype) of each register holding a result buffer
        self.results = tuple((slot - body.base, tuple(plan.result_shapes[k]),
                              plan.assignment.result_types[k].dtype.np)
                             for slot, k in body.result_slots)
        # `run(args)`: the function's block on `args` in a frame of this layout.
        if plan.arena_bytes or self.results:
            self.run = self._pooled
        else:  # without arena memory a frame holds nothing a call writes: one serves all
            self.shared = self._frame()
            self.run = partial(body.enter, self.shared)

    def _pooled(self, args: list) -> list:
        pool = self.pool
        try:
            frame = pool.pop()
        except IndexError:
            frame = self._frame()
        for index, shape, dtype in self.results:
            # held by someone else (or a new frame's None, which everything holds), or
            # changed by its last holder (made read-only, reshaped, restrided, retyped
            # in place): a new one
            buffer = frame[index]
            if sys.getrefcount(buffer) > ALONE + 1 or not (
                    buffer.flags.writeable and buffer.flags.c_contiguous
                    and buffer.shape == shape and buffer.dtype == dtype):
                frame[index] = np.empty(shape, dtype)
        try:
            return self.body.enter(frame, args)
        finally:
            pool.append(frame)

    def _frame(self) -> list:
        """A new arena and the top block's register tail bound to it."""
        raw = np.empty(self.plan.arena_bytes + ALIGNMENT, np.uint8)
        start = -raw.ctypes.data % ALIGNMENT
        memory = raw[start:start + self.plan.arena_bytes]
        return _bind(self.body, _Views(memory, self.plan))


def _bind(block: "BlockPlan", views: "_Views") -> list:
    tail = list(block.tail)
    for slot, buffer, t in block.arena_slots:
        tail[slot - block.base] = views.get(buffer, t)
    for slot, subplans in block.region_slots:
        tail[slot - block.base] = tuple(partial(sub.run, _bind(sub, views)) for sub in subplans)
    return tail


class _Views:
    """The arrays over one arena: one per buffer and type (the values written over
    a buffer in place share it)."""

    def __init__(self, memory: np.ndarray, plan: MemoryPlan):
        self.memory, self.plan = memory, plan
        self.made: dict[tuple[int, TensorType], np.ndarray] = {}

    def get(self, buffer: int, t: TensorType) -> np.ndarray:
        view = self.made.get((buffer, t))
        if view is None:
            shape = t.shape if t.is_static else tuple(  # (negative: a branch not taken)
                max(d, 0) for d in eval_shape(t.shape, self.plan.sizes))
            view = self.made[buffer, t] = np.ndarray(shape, t.dtype.np, self.memory,
                                                     self.plan.offsets[buffer])
        return view


def _check_sizes(plan: MemoryPlan) -> None:
    """Raise a `ShapeError` at the op whose planned value has a negative size for the
    symbols' sizes of this call: a symbolic size such as ``S1-1`` (``x[1:]``) below
    zero, because a slice reached outside an axis (the slice's own check runs only
    after the arena is made, where NumPy would only say "negative dimensions"). Values
    of a region are left to it: a branch this call does not take may be sized for
    calls that take it (``x[1:-1]`` under ``if x.shape[0] > 2``), and one it takes
    reaches its slice's check; their buffers are planned empty (`nbytes`)."""
    assignment = plan.assignment
    for value, t in [(b.values[0], b.type) for b in assignment.buffers
                     if not all(map(_in_region, b.values))] + \
            [(r, r.type) for r in assignment.results]:
        if _in_region(value):
            continue
        shape = eval_shape(t.shape, plan.sizes)
        if min(shape, default=0) < 0:
            sizes = ", ".join(f"{s}={n}" for s, n in plan.sizes.items())
            raise ShapeError(f"{value.op.name} gives {t}, which has the negative size "
                             f"{list(shape)} when {sizes}; a slice of an axis with a "
                             f"symbolic size must lie within it", value.op.loc)


def _in_region(value) -> bool:
    """Whether `value` is defined in a region of an op (not in a function's body)."""
    block = value.op.parent
    return block is not None and block.parent is not None and block.parent.parent is not None


class Layouts:
    """A plan's layouts by the sizes of `assignment.symbols`; at most `MAX_LAYOUTS`."""

    __slots__ = ("body", "assignment", "_layouts", "_lock", "static", "last", "_index")

    def __init__(self, body: "BlockPlan", assignment: BufferAssignment,
                 symbols: dict[str, int] | None = None):
        """`symbols`: each symbol's position in the size lists `get` is given (a
        `Signature`'s ``symbols``)."""
        self.body = body
        self.assignment = assignment
        self._layouts: dict[tuple, Layout] = {}
        self._lock = threading.Lock()
        self.static: Layout | None = None  # a plan whose buffers have no symbolic dims
        self.last: Layout | None = None    # the layout of the last call, if symbolic
        symbols = symbols or {}
        self._index = tuple(symbols.get(s) for s in assignment.symbols)

    def get(self, sizes: list[int]) -> Layout:
        """The layout for the symbol sizes `sizes` (by the positions given to the
        constructor)."""
        try:
            key = tuple([sizes[k] for k in self._index])
        except TypeError:  # a symbol no size is given for: the assignment says which
            key = None
        layout = self._layouts.get(key)
        if layout is None:
            given = {s: sizes[k] for s, k in zip(self.assignment.symbols, self._index)
                     if k is not None}
            plan = self.assignment.plan(given)
            _check_sizes(plan)
            layout = Layout(self.body, plan)
            with self._lock:
                if len(self._layouts) >= MAX_LAYOUTS:
                    del self._layouts[next(iter(self._layouts))]
                layout = self._layouts.setdefault(key, layout)
        self.last = layout
        return layout

    def get_static(self) -> Layout:
        """The one layout of a plan whose buffers have static shapes."""
        if self.static is None:
            self.static = Layout(self.body, self.assignment.plan())
        return self.static
