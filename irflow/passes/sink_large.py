"""Running large ops as late as their first use.

An op that streams more memory than a core's cache holds (a big matmul with its
epilogue, the weight update fused into it) evicts what the ops after it would have
found there: their arrays, and on the executors the Python, NumPy and ctypes code
each step runs. When ops that do not need its result follow it, running them first,
back to back while they are warm, and the large op last, just before the first op
that reads it, costs each of them nothing but the cache it already had.

That is the training step's shape: the first layer's weight gradient (a [784,256]
matmul and the SGD update over it) is only returned, yet autodiff emits it before
the updates of the other parameters, each of which then starts from a cold cache.

**The rule.** In every block (inside regions too), an op of static shapes whose
operands and results take at least `min_bytes` moves down to just before the first
op that uses one of its results (anywhere inside that op's regions) or the block's
terminator. It never moves past an op with an IO effect, nor does an op with one
move: what a program prints, and when it fails relative to its prints, stays.
Moves are kept only if the function's buffer plan (`plan_buffers`) needs no more
arena, nor more bytes live at once, than before them: the operands of a moved op
live longer, which a gradient's many weight products moved to the return would pile
up (their results, returned, are not in the arena, so nothing shrinks to make up for
it). Every move is made and the plan checked once; if it grew, the moves are undone
and the first `TRIALS` tried one at a time, each kept if the plan does not grow (so
the pass makes at most `TRIALS` + 2 plans). A function whose buffer sizes depend on
symbolic dims is left as it is. Blocks are visited bottom up, so the large producer
of a large op that moved follows it down.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from fractions import Fraction

from ..ir.core import Block, Function, Module, Operation
from ..ir.types import TensorType
from .dce import has_io
from .framework import Pass, register_pass
from .plan_buffers import BufferAssignment

TRIALS = 8  # moves tried one by one when making them all grows the arena


@register_pass
class SinkLarge(Pass):
    """Move each op that streams more than a cache down to just before its first use."""

    name = "sink-large"
    after_autodiff = True
    min_bytes: int = 1 << 20

    def __post_init__(self):
        self._sunk = 0

    def run(self, module: Module) -> bool:
        self._sunk = sum(sink_function(fn, self.min_bytes) for fn in module)
        return self._sunk > 0

    def statistics(self) -> dict[str, int]:
        return {"ops-sunk": self._sunk}


def sink_function(fn: Function, min_bytes: int) -> int:
    """Sink the large ops of `fn`'s blocks where its arena does not grow; how many
    moved. Every move is made, then the arena checked once (a buffer plan of a
    3000-op training step takes 44 ms); if it grew, all are undone and the first
    `TRIALS` are tried one by one."""
    blocks = [fn.block] + [block for op in fn.block.walk() for region in op.regions
                           for block in region.blocks]
    candidates = [(block, op) for block in blocks for op in reversed(list(block.body_ops()))
                  if _sinkable(op, min_bytes)]
    order = _Order(blocks)
    # the first op to move is one whose first reader is not next to it already (ops
    # move only once one after them did), so this says whether any will
    if not any(order.first_reader(block, op) is not op.next for block, op in candidates):
        return 0
    cost = _arena(fn)
    if cost is None:
        return 0
    moves = [move for block, op in candidates if (move := order.sink(block, op)) is not None]
    if _fits(_arena(fn), cost):
        return len(moves)
    for block, op, home in reversed(moves):
        order.move(block, op, home)
    kept = 0
    for block, op, _ in moves[:TRIALS]:
        move = order.sink(block, op)
        if move is None:
            continue
        after = _arena(fn)
        if _fits(after, cost):
            cost, kept = after, kept + 1
        else:
            order.move(*move)
    return kept


class _Order:
    """The ops of some blocks with their positions (fractions, so an op moved between
    two others gets one between theirs), to find an op's first reader from its
    results' uses rather than by walking the block."""

    def __init__(self, blocks: list[Block]):
        self.position: dict[Operation, Fraction] = {}
        self.io: dict[Block, list[Operation]] = {}  # the IO ops, which stay where they are
        for block in blocks:
            for i, op in enumerate(block.ops):
                self.position[op] = Fraction(i)
            self.io[block] = [op for op in block.body_ops() if has_io(op)]

    def sink(self, block: Block, op: Operation) -> tuple[Block, Operation, Operation] | None:
        """Move `op` to just before its first reader: (its block, it, the op it was
        before) to undo the move, or None if it was there already."""
        stop = self.first_reader(block, op)
        if stop is op.next:
            return None
        home = op.next
        self.move(block, op, stop)
        return block, op, home

    def move(self, block: Block, op: Operation, before: Operation) -> None:
        op.detach()
        previous = before.prev
        block.insert_before(before, op)
        low = self.position[previous] if previous is not None else self.position[before] - 1
        self.position[op] = (low + self.position[before]) / 2

    def first_reader(self, block: Block, op: Operation) -> Operation:
        """The first op after `op` in `block` that uses a result of `op` (in its
        regions too) or has an IO effect; else the block's terminator."""
        first = block.terminator
        for result in op.results:
            for use in result.uses:
                reader = self.in_block(use.op, block)
                if self.position[reader] < self.position[first]:
                    first = reader
        io = self.io[block]
        after = bisect_right(io, self.position[op], key=self.position.__getitem__)
        if after < len(io) and self.position[io[after]] < self.position[first]:
            first = io[after]
        return first

    @staticmethod
    def in_block(op: Operation, block: Block) -> Operation:
        """`op`, or the op of `block` whose regions hold it."""
        while op.parent is not block:
            op = op.parent.parent.parent
        return op


def _fits(after: tuple[int, int], before: tuple[int, int]) -> bool:
    return after[0] <= before[0] and after[1] <= before[1]


def _arena(fn: Function) -> tuple[int, int] | None:
    """(arena bytes, peak live bytes) of `fn`'s buffer plan, or None when they depend
    on symbolic dims."""
    assignment = BufferAssignment(fn)
    if assignment.symbols:
        return None
    plan = assignment.plan()
    return plan.arena_bytes, plan.peak_live_bytes


def _sinkable(op: Operation, min_bytes: int) -> bool:
    types = [v.type for v in (*dict.fromkeys(op.operands), *op.results)]
    if not types or not all(isinstance(t, TensorType) and t.is_static for t in types):
        return False
    if has_io(op):
        return False
    return sum(math.prod(t.shape) * t.dtype.np.itemsize for t in types) >= min_bytes
