"""`RegionOp`: the interface an op with regions implements, beside its `defop`.

An op with regions (``cond``, ``while``, a fused kernel, a test's counted loop) is a
trait instance in its ``traits=``; every subsystem reads it instead of testing the
op's name:

- ``regions``: the labels of its regions, as printed (``^then``, ``^else``);
  `region_labels` gives them per op when a region is optional;
- `verify`: the regions' signatures (argument types, terminators, yielded types);
- `flow`: where values go: which operands enter which region arguments, which
  terminator operands become results or the next iteration's arguments. DCE trims
  any region op from this alone, and `captures` (operands a region receives
  unchanged) follows from it;
- `evaluator`: its semantics, as a function of its operand values and of callables
  that run its regions; the interpreter and the executor both run it;
- `writes_results` and `out_evaluator`: an op whose results are memory of its own
  (a fused kernel's, not region results passed through as ``cond``'s and
  ``while``'s are) declares so, and gives an evaluator that writes them into buffers
  the caller passes: the executor's arena buffers. Liveness then treats the results
  as new memory, defined when the op ends, and the op's operands as read until it
  ends;
- `forward` and `backward`: its reverse-mode rule, written against an autodiff
  context `ad` that the transform passes in (see `forward`), so that this layer
  needs nothing from the passes.

Flow positions name the four places a value can be: `Operand(i)` and `Result(i)` of
the op, `Arg(r, i)` (argument i of region r's block) and `Yield(r, i)` (operand i of
region r's terminator). A position that no flow edge leaves or enters is the op's
own business (a predicate, a loop condition, an induction variable) and is never
removed; the rest is trimmed in whole groups of connected positions, which keeps
positional layouts (``while``'s "invariants, then carried values") consistent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from ..errors import IrflowError, VerificationError
from .core import Block, BlockArg, Operation, Value
from .sizes import symbol_binders, symbols_read
from .traits import Trait

RegionFn = Callable[[list], list]
Evaluator = Callable[[list, Sequence[RegionFn]], Sequence]
OutEvaluator = Callable[[list, Sequence[RegionFn], list], Sequence]


@dataclass(frozen=True)
class Operand:
    index: int


@dataclass(frozen=True)
class Result:
    index: int


@dataclass(frozen=True)
class Arg:
    region: int
    index: int


@dataclass(frozen=True)
class Yield:
    region: int
    index: int


Source = Operand | Yield
Target = Arg | Result


class RegionOp(Trait):
    """Base class of region-op interfaces; subclass it once per op (or op kind)."""

    label = "region op"
    regions: tuple[str, ...] = ()
    # True when `forward` records something `backward` reads (a loop's iterations),
    # so the op cannot be differentiated by a reverse sweep alone.
    records_residuals = False
    # False when `backward` refuses (and says why): the op is not differentiable.
    differentiable = True
    # True when the op's results are memory it makes (not values its regions pass
    # through) and `out_evaluator` can write them into given buffers.
    writes_results = False

    def region_labels(self, op: Operation) -> tuple[str, ...]:
        """The labels of `op`'s regions: `regions`, unless some are optional (a fused
        kernel's anchor), when the op says which it has."""
        return self.regions

    def flow(self, op: Operation) -> Iterable[tuple[Source, Target]]:
        """Every (source, target) pair: the value at `source` becomes the value at
        `target` (on some entry or exit)."""
        raise NotImplementedError(f"{type(self).__name__} does not describe its flow")

    def evaluator(self, op: Operation) -> Evaluator:
        """``run(args, regions) -> results``: the op on operand values `args` (a fresh
        list the evaluator owns), where ``regions[i](values)`` runs region i on block
        arguments `values` (a list it takes over) and returns what its terminator
        yields. Called once per op by the executor, so that per-call work is only
        what the returned function does."""
        raise NotImplementedError(f"{type(self).__name__} has no evaluator")

    def out_evaluator(self, op: Operation, into: tuple[bool, ...]) -> OutEvaluator:
        """For an op that `writes_results`: ``run(args, regions, outs) -> results``,
        `evaluator`'s run that writes each result k with ``into[k]`` into the next
        buffer of `outs` (C-contiguous, of the result's type, sharing no memory with
        the operands) and returns every result (those buffers for the results
        written into them, new arrays for the others)."""
        raise NotImplementedError(f"{type(self).__name__} has no out evaluator")

    def written_over(self, op: Operation, into: tuple[bool, ...]) -> list[tuple[Value, int]]:
        """For an op that `writes_results`: the values inside its regions that
        `out_evaluator(op, into)` computes into the buffer of result k, as pairs
        (value, k), before the result is written over them there (a fused kernel's
        anchor, in place under its epilogue). The planner counts them in that
        buffer."""
        return []

    def forward(self, ad, b, op: Operation, mapping: dict[Value, Value]):
        """Emit the forward copy of `op` at builder `b` (operands through `mapping`;
        record its results' copies in `mapping`) and return what `backward` will
        need (None by default: a plain copy).

        `ad`, the autodiff context, offers: ``ad.active`` (the values being
        differentiated), ``ad.needed_ops(block, active_args, seeded)`` (the ops of a
        block whose VJP a seed reaches), ``ad.differentiate_block(b, block, args,
        active_args, cotangents, defined=None)`` (both sweeps of a block at `b`: the
        forward values of its terminator operands, a cotangent or None per block
        argument and whether each exists, given whether each of `cotangents` does)
        and ``ad.defined(result)`` (whether the cotangent of one of the op's results
        exists: True, False or a bool scalar value known at run time)."""
        b.insert(op.clone(mapping))
        return None

    def backward(self, ad, b, op: Operation, ins: Sequence[Value],
                 out_cts: Sequence[Value | None], residual) -> list[Value | None]:
        """Emit the cotangents of `op`'s operands (None for zero) given those of its
        results, at builder `b`; `ins` are the forward copies of its operands. A
        cotangent that exists only on some runs (a branch that does not use the
        operand) is a `Defined`, whose flag accounts for whether the results'
        cotangents exist (``ad.defined``); a plain one exists where any of theirs
        does."""
        raise IrflowError(f"'{op.name}' has no reverse-mode rule", op.loc)

    # -- derived from `flow`
    def captures(self, op: Operation) -> list[tuple[int, dict[int, int]]]:
        """Operands that regions receive unchanged on every entry: pairs (operand
        index, {region: argument index}), for arguments fed by that operand alone."""
        sources: dict[Arg, list[Source]] = {}
        for source, target in self.flow(op):
            if isinstance(target, Arg):
                sources.setdefault(target, []).append(source)
        found: dict[int, dict[int, int]] = {}
        for arg, srcs in sources.items():
            if len(srcs) == 1 and isinstance(srcs[0], Operand):
                found.setdefault(srcs[0].index, {})[arg.region] = arg.index
        return sorted(found.items())


# ---------------------------------------------------------------- helpers for region ops

def check_region(op: Operation, index: int, label: str, arg_types, terminator: str,
                 yielded_types=None) -> None:
    """Region `index` of `op` takes arguments of `arg_types` and ends in `terminator`,
    whose operands have `yielded_types` (None: not checked here)."""
    if index >= len(op.regions):
        raise VerificationError(f"{op.name} needs a {label} region")
    block = op.regions[index].blocks[0]
    if [a.type for a in block.args] != list(arg_types):
        raise VerificationError(f"{label} region takes {_types(a.type for a in block.args)} "
                                f"but {op.name} passes it {_types(arg_types)}")
    term = block.terminator
    if term is None or term.name != terminator:
        found = term.name if term is not None else "nothing"
        raise VerificationError(f"{label} region must end with '{terminator}', found {found}")
    if yielded_types is not None and [v.type for v in term.operands] != list(yielded_types):
        raise VerificationError(f"{label} region yields {_types(v.type for v in term.operands)} "
                                f"but {op.name} has results {_types(yielded_types)}")


def _types(types) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def arg_dependencies(block: Block, values: Iterable[Value]) -> set[int]:
    """Indices of `block`'s arguments that any of `values` (of `block`) depends on:
    through operands, and through the symbols an op reads (the operands of the op
    that binds each, see `symbol_binders`)."""
    deps: set[int] = set()
    seen: set[Value] = set()
    binders = symbol_binders(block)
    stack = list(values)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArg):
            if v.block is block:
                deps.add(v.index)
            continue
        stack.extend(v.op.operands)
        if binders:
            stack.extend(operand for s in symbols_read(v.op) if s in binders
                         for operand in binders[s].operands)
    return deps


def inline_region(op: Operation, index: int, args: Sequence[Value]) -> list[Value]:
    """Move the body of region `index` of `op` in front of `op`, with its block
    arguments replaced by `args`; returns the values its terminator yielded. The
    region is left empty but for its terminator; `op` stays where it was."""
    block = op.regions[index].blocks[0]
    for arg, value in zip(block.args, args):
        arg.replace_all_uses_with(value)
    for inner in list(block.body_ops()):
        op.parent.insert_before(op, inner.detach())
    return list(block.terminator.operands)
