"""Liveness of memory across nested regions: which memory each value may be, and
from when to when that memory must stay untouched.

**Timeline.** The ops of a function, regions included, are numbered along one
timeline in program order: an op with regions takes a tick when it begins, then its
regions' ops take theirs (region after region), then it takes a tick when it ends.
An op reads its operands when it begins, except that an op with regions reads them
until it ends: a value a region receives lives as long as the op that runs the
region. Results are defined when their op ends.

**Roots and references.** A *root* is a result whose op gives it memory of its own
(any op but views, calls and ops with regions, and the results of an op with regions
that `writes_results`: a fused kernel's). Every value *refers to* a set of roots,
each reference exact or not: a root to itself (exactly); a view (the `View` trait)
to what its operand refers to (not exactly: another layout of it); a call's results
to everything its operands refer to (the callee may return an argument); a region
argument or result to everything that flows into it (`RegionOp.flow`), to a
fixpoint around loops. The regions of an op that writes its results are its
kernel's business (a fused body computes on scalars; the anchor's result enters it
by the op itself): their arguments may be any of its operands and nothing inside is
planned. Any other op's flow must keep types. Arguments and constants refer to
nothing: they are not planned memory.

**Loops.** A region op is a loop when a yielded value flows into a region argument
(``while``: the body's yield becomes the next iteration's arguments); its regions
are assumed to run in their order in each iteration (``cond`` then ``body``). A
root defined inside a loop that flows into the loop's arguments is *carried*: it is
live for the whole loop, since the next iteration reads it. Its memory holds two
instances at once if the previous iteration's value is still read when the new one
is written; so each argument of a loop is also a *token* in the references of the
values derived from it inside the loop, and `Liveness.conflicts` finds the carried
roots whose previous instance is read (through a token) after the root is defined
again, or at the same op unless that op may write its result over that very operand
(`OpDef.overwrites`). A root that reaches a loop through an argument that is the
same every iteration (an invariant) and is redefined inside it conflicts too.

A root's live interval runs from its definition to the last use of any value that
refers to it (the loop's whole extent for a carried root). Two roots whose intervals
are disjoint never hold values at the same time, wherever they are in the nesting:
a region's temporaries reuse what the enclosing function no longer needs.
"""
from __future__ import annotations

from typing import Iterator

from ..errors import IrflowError
from ..ir.core import Block, BlockArg, Function, Operation, OpResult, Value
from ..ir.region_op import Arg, Operand, RegionOp, Result, Yield
from ..ir.registry import lookup
from ..ir.symbols import CallOp
from ..ir.traits import Terminator, View
from ..ir.types import TensorType

Refs = dict[Value, bool]  # root (or loop token) -> whether the reference is exact


class Liveness:
    """The timeline, the references and the live intervals of a function's roots.

    `begin[op]`, `end[op]`: the op's ticks. `refs[v]`: what value v may be (roots and
    loop tokens). `roots`: the roots in order of definition. `start[r]`, `stop[r]`:
    the live interval of root r (inclusive). `loops_around[r]`: the loops whose
    regions hold r's definition, innermost last. `carried`: the roots carried by a
    loop. `unplanned`: roots inside an op that writes its results (its kernel's own)."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.begin: dict[Operation, int] = {}
        self.end: dict[Operation, int] = {}
        self.refs: dict[Value, Refs] = {}
        self.roots: list[OpResult] = []
        self.loops_around: dict[OpResult, tuple[Operation, ...]] = {}
        self.unplanned: set[OpResult] = set()
        self._loop_args: dict[Operation, list[tuple[BlockArg, bool]]] = {}
        self._flowing: dict[Operation, frozenset[int]] = {}  # operands that enter regions
        self._tick = 0
        self._number(fn.block, (), False)
        self.start: dict[OpResult, int] = {}
        self.stop: dict[OpResult, int] = {}
        self.carried: set[OpResult] = set()
        self._intervals()

    # ------------------------------------------------------------ timeline and roots
    def _number(self, block: Block, loops: tuple[Operation, ...], unplanned: bool) -> None:
        """Number `block`'s ops and compute the references of their results."""
        for op in block.ops:
            self.begin[op] = self._tick
            self._tick += 1
            opdef = lookup(op.name, op.loc)
            if opdef.region_op is not None:
                self._region_op(op, opdef.region_op, loops, unplanned)
                self.end[op] = self._tick
                self._tick += 1
                continue
            self.end[op] = self.begin[op]
            if opdef.has(Terminator):
                continue
            view = opdef.trait(View)
            if view is not None:
                inexact = _inexact(self.refs_of(op.operands[view.operand]))
                self.refs.update((r, inexact) for r in op.results)
            elif opdef.has(CallOp):
                inexact = _inexact(_merge(self.refs_of(v) for v in op.operands))
                self.refs.update((r, inexact) for r in op.results)
            else:
                for r in op.results:
                    self._root(r, loops, unplanned)

    def _root(self, r: OpResult, loops: tuple[Operation, ...], unplanned: bool) -> None:
        """`r`, if a tensor, is a root: memory its op makes."""
        if isinstance(r.type, TensorType):
            self.refs[r] = {r: True}
            self.roots.append(r)
            self.loops_around[r] = loops
            if unplanned:
                self.unplanned.add(r)

    def refs_of(self, v: Value) -> Refs:
        return self.refs.get(v, _NOTHING)

    def _region_op(self, op: Operation, rop: RegionOp, loops, unplanned: bool) -> None:
        blocks = [region.blocks[0] for region in op.regions]
        edges = list(rop.flow(op))
        inside_unplanned = unplanned
        if rop.writes_results:
            # Its results are memory it makes, defined when it ends; its regions are
            # its kernel's business (a fused body holds scalars, its anchor's result
            # enters the body by the op itself): their arguments may be any operand,
            # and nothing inside is planned.
            operands = [Operand(i) for i in range(len(op.operands))]
            edges = [(s, Arg(r, i)) for s in operands
                     for r, b in enumerate(blocks) for i in range(len(b.args))]
            unplanned = True
        elif not all(_value_at(op, blocks, s).type == _value_at(op, blocks, t).type
                     for s, t in edges):
            raise IrflowError(f"internal error: the flow of '{op.name}' changes types, so "
                              "it does not describe memory; an op whose regions compute "
                              "on other types must declare `writes_results`", op.loc)
        sources: dict[Value, list] = {}
        for s, t in edges:
            sources.setdefault(_value_at(op, blocks, t), []).append(s)
        self._flowing[op] = frozenset(s.index for s, t in edges
                                      if isinstance(s, Operand) and not rop.writes_results)
        is_loop = any(isinstance(s, Yield) and isinstance(t, Arg) for s, t in edges)
        inner = loops + (op,) if is_loop else loops
        args = [a for b in blocks for a in b.args]
        if is_loop:  # the tokens, and which arguments are refreshed by a yield
            self._loop_args[op] = [(a, any(isinstance(s, Yield) for s in sources.get(a, ())))
                                   for a in args]
        first, mark = self._tick, len(self.roots)
        while True:
            changed = False
            for a in args:
                refs = _merge(self.refs_of(_value_at(op, blocks, s)) for s in sources.get(a, ()))
                if is_loop:
                    refs[a] = True
                if refs != self.refs.get(a):
                    self.refs[a] = refs
                    changed = True
            if not changed and self._tick != first:
                break
            self._tick = first  # (re)number the regions: the same ticks every round
            del self.roots[mark:]
            for b in blocks:
                self._number(b, inner, unplanned)
            if not is_loop:
                break
        for r in op.results:
            if rop.writes_results:
                self._root(r, loops, inside_unplanned)
            else:
                self.refs[r] = _merge(self.refs_of(_value_at(op, blocks, s))
                                      for s in sources.get(r, ()))

    # ------------------------------------------------------------ intervals
    def last_use(self, v: Value) -> int:
        """The tick of `v`'s last read (an op with regions reads until it ends)."""
        return max((self.end[u.op] for u in v.uses), default=-1)

    def _intervals(self) -> None:
        for r in self.roots:
            self.start[r] = self.stop[r] = self.end[r.op]
        for v, refs in self.refs.items():
            last = self.last_use(v)
            for r in refs:
                if r in self.stop and last > self.stop[r]:
                    self.stop[r] = last
        for loop, args in self._loop_args.items():
            for a, _ in args:
                for r in self.carried_from(loop, a):
                    self.carried.add(r)
                    self.start[r] = min(self.start[r], self.begin[loop])
                    self.stop[r] = max(self.stop[r], self.end[loop])

    def carried_from(self, loop: Operation, arg: BlockArg) -> list[OpResult]:
        """The roots defined inside `loop` that its argument `arg` may be."""
        inside = self.begin[loop], self.end[loop]
        return [r for r in self.refs[arg] if isinstance(r, OpResult) and r in self.start
                and inside[0] < self.end[r.op] < inside[1]]

    # ------------------------------------------------------------ loops
    def conflicts(self) -> set[OpResult]:
        """The carried roots whose previous instance may be read after the loop
        defines them again (see the module docstring): they cannot have one buffer."""
        found: set[OpResult] = set()
        for loop, args in self._loop_args.items():
            holders: dict[BlockArg, list[OpResult]] = {}
            for a, refreshed in args:
                carried = self.carried_from(loop, a)
                if carried and not refreshed:
                    found.update(carried)  # an invariant that is an older instance
                elif carried:
                    holders[a] = carried
            if not holders:
                continue
            for v in _values_inside(loop):
                for a in holders.keys() & self.refs_of(v).keys():
                    for r in holders[a]:
                        if r not in found and not self._reads_before(v, r):
                            found.add(r)
        return found

    def _reads_before(self, v: Value, r: OpResult) -> bool:
        """Whether every read of `v` (inside the loop) comes before `r` is defined, or
        is `r`'s own op writing over exactly this operand. An op with regions reads an
        operand that flows into them through its region arguments and results (which
        are checked as values of their own), others itself, at any time it runs."""
        d = self.begin[r.op]
        for use in v.uses:
            op = use.op
            if op.regions:
                if use.index in self._flowing[op]:
                    continue
                if self.begin[op] < d < self.end[op]:
                    return False
            t = self.begin[op]
            if t < d:
                continue
            if (t == d and op is r.op and v.type == r.type and self.refs_of(v).get(r)
                    and lookup(op.name).overwrites(use.index)):
                continue
            return False
        return True


_NOTHING: Refs = {}


def _merge(refs_list) -> Refs:
    """The union of references; a reference is exact if it is exact in each."""
    out: Refs = {}
    for refs in refs_list:
        for r, exact in refs.items():
            out[r] = out.get(r, True) and exact
    return out


def _inexact(refs: Refs) -> Refs:
    return dict.fromkeys(refs, False)


def _value_at(op: Operation, blocks: list[Block], where) -> Value:
    """The value at a flow position of `op`."""
    if isinstance(where, Operand):
        return op.operands[where.index]
    if isinstance(where, Result):
        return op.results[where.index]
    if isinstance(where, Arg):
        return blocks[where.region].args[where.index]
    return blocks[where.region].terminator.operands[where.index]


def _values_inside(op: Operation) -> Iterator[Value]:
    """Every value defined in `op`'s regions (block arguments and results)."""
    for region in op.regions:
        block = region.blocks[0]
        yield from block.args
        for inner in block.ops:
            yield from inner.results
            if inner.regions:
                yield from _values_inside(inner)
