"""Constants, structured control flow (`cond`, `while`) and the terminators.

`cond %p, %a, %b` runs its ``then`` region when the bool scalar ``%p`` is true and its
``else`` region otherwise; both regions receive ``%a, %b`` as block arguments and end
in ``yield`` with the op's result types.

`while %c1, %x0, %y0` carries as many values as it has results (here ``%x0, %y0``);
the leading operands (``%c1``) are loop invariants. Both regions receive
``(invariants..., carried...)``: the ``cond`` region ends in ``condition %bool`` and the
``body`` region yields the next carried values. The results are the carried values
when the condition first fails.

Each region op declares its whole behaviour here, in its `RegionOp` interface: region
signatures, value flow, semantics and reverse-mode rule; see `irflow.ir.region_op`.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, VerificationError
from ..ir import dtypes
from ..ir.builder import Builder
from ..ir.core import Block, BlockArg, Region
from ..ir.region_op import (Arg, Operand, RegionOp, Result, Yield, arg_dependencies,
                            check_region)
from ..ir.registry import REQUIRED, Defined, Effect, lookup
from ..ir.rewrite import Pattern, constant_value
from ..ir.traits import ContainerOperands, Terminator
from ..ir.types import ListType, StackType, TensorType, differentiable
from ._rules import defop
from .formatting import tensor_text


def _const_infer(types, attrs):
    value = attrs["value"]
    return TensorType(dtypes.from_numpy(value), value.shape)


def _const_canon(attrs, types):
    return {"value": np.asarray(attrs["value"])}


defop("const", _const_infer, lambda value: value, attrs={"value": REQUIRED},
      canonicalize=_const_canon,
      doc="const {value}: a constant tensor, no operands. The result type is the value's "
          "dtype and shape; in text the literal (a number or nested list) takes the result "
          "type's dtype")


def _no_results(types, attrs):
    return ()


for _name, _doc in [("yield", "ends a region of a `cond` or a `while` body; its operands' "
                              "types must be the enclosing op's result types"),
                    ("return", "ends a function, returning its operands, whose types are the "
                               "function's result types")]:
    defop(_name, _no_results, arity=(0, None), traits=(Terminator(), ContainerOperands()),
          doc=_doc)


def _condition_infer(types, attrs):
    if types[0].dtype is not dtypes.bool_ or types[0].rank != 0:
        raise ShapeError(f"the condition must be a bool scalar, got {types[0]}")
    return ()


defop("condition", _condition_infer, arity=1, traits=(Terminator(),),
      doc="ends the `cond` region of a `while`: continue while the bool scalar is true")


def _check_predicate(t: TensorType, what: str) -> None:
    if t.dtype is not dtypes.bool_ or t.rank != 0:
        raise VerificationError(f"{what} must be a bool scalar, got {t}")


# ---------------------------------------------------------------- cond

class Cond(RegionOp):
    """``cond %p, xs...``: both regions take ``xs``; the taken one's yield is the result."""

    regions = ("then", "else")

    def verify(self, op) -> None:
        if not op.operands:
            raise VerificationError("cond needs a predicate operand")
        _check_predicate(op.operands[0].type, "cond's predicate")
        for index, label in enumerate(self.regions):
            check_region(op, index, label, [v.type for v in op.operands[1:]], "yield",
                         op.result_types)

    def flow(self, op):
        for j in range(1, len(op.operands)):
            yield Operand(j), Arg(0, j - 1)
            yield Operand(j), Arg(1, j - 1)
        for k in range(len(op.results)):
            yield Yield(0, k), Result(k)
            yield Yield(1, k), Result(k)

    def evaluator(self, op):
        def run(args, regions):
            taken = regions[0] if args[0] else regions[1]
            del args[0]
            return taken(args)
        return run

    def backward(self, ad, b, op, ins, out_cts, residual):
        """A cond on the same predicate whose branches recompute and differentiate the
        forward branches; yields a cotangent for each active operand (zeros from a
        branch that gives it none). Where whether that cotangent exists depends on
        the branch taken (a branch that does not use the operand) or on whether the
        results' cotangents exist, it also yields that, as a bool: eager code leaves
        the gradient of a parameter that only the branch not taken uses None."""
        pred, xs = ins[0], ins[1:]
        targets = [j for j, v in enumerate(op.operands[1:]) if v in ad.active]
        if not targets:
            return [None] * len(ins)
        present = [k for k, ct in enumerate(out_cts) if ct is not None]
        given = {k: ad.defined(op.results[k]) for k in present}
        flagged = [k for k in present if not isinstance(given[k], bool)]
        operands = [*xs, *(out_cts[k] for k in present), *(given[k] for k in flagged)]
        branches = [_branch_cotangents(ad, b, op, r, operands, targets, present, given, flagged)
                    for r in (0, 1)]
        # per target: True or False when both branches agree on it, None when it is a bool
        # the cond yields
        known = [a if isinstance(a, bool) and a is c else None
                 for a, c in zip(branches[0][2], branches[1][2])]
        yielded = [i for i, k in enumerate(known) if k is None]
        for rb, cts, exists in branches:
            rb.create("yield", [*cts, *(rb.flag(exists[i], like=cts[i]) for i in yielded)])
        types = [v.type for v in branches[0][0].block.terminator.operands]
        results = b.create("cond", [pred, *operands], regions=[Region([rb.block])
                                                               for rb, _, _ in branches],
                           result_types=types).results
        flags = dict(zip(yielded, results[len(targets):]))
        in_cts = [None] * len(ins)
        for i, (j, g) in enumerate(zip(targets, results)):
            if known[i] is None:
                in_cts[1 + j] = Defined(g, flags[i])
            elif known[i]:
                in_cts[1 + j] = g
        return in_cts


def _branch_cotangents(ad, b, op, index: int, operands, targets, present, given, flagged):
    """Branch `index` of the backward ``cond`` of `op`, up to its ``yield``: a block
    taking `operands` (the primal operands, the results' cotangents that are
    `present`, and for those that exist only on some runs, `flagged`, the bool saying
    so), recomputing and differentiating the forward branch. Returns the builder at
    its end, the cotangents of the operands `targets` (zeros where it gives none) and
    whether each exists (True, False or a bool value of the block)."""
    n = len(op.operands) - 1
    rb = Builder(Block([v.type for v in operands], [v.name for v in operands]), b.loc)
    args = rb.block.args
    primal, cts, flags = args[:n], args[n:n + len(present)], args[n + len(present):]
    flag_of = dict(zip(flagged, flags))
    seeds, defined = [None] * len(op.results), [False] * len(op.results)
    for k, ct in zip(present, cts):
        seeds[k], defined[k] = ct, flag_of.get(k, given[k])
    _, arg_cts, arg_defined = ad.differentiate_block(rb, op.regions[index].blocks[0], primal,
                                                     set(targets), seeds, defined)
    return (rb, [arg_cts[j] if arg_cts[j] is not None else rb.zeros_like(primal[j])
                 for j in targets],
            [arg_defined[j] for j in targets])


class InlineConstantCond(Pattern):
    """``cond`` on a constant predicate: the taken branch, inlined."""

    def rewrite(self, op, rewriter) -> bool:
        taken = constant_value(op.operands[0])
        if taken is None:
            return False
        yielded = rewriter.inline_region(op, 0 if taken else 1, op.operands[1:])
        rewriter.replace(op, yielded)
        return True


class ForwardCapturedResult(Pattern):
    """A ``cond`` result that both branches yield straight from the same operand is
    that operand."""

    def rewrite(self, op, rewriter) -> bool:
        operand_of = {(r, j): i for i, args in lookup(op.name).region_op.captures(op)
                      for r, j in args.items()}
        changed = False
        for k, result in enumerate(op.results):
            sources = {_forwarded(region, r, k, operand_of) for r, region in enumerate(op.regions)}
            if len(sources) == 1 and None not in sources and result.uses:
                rewriter.replace_uses(result, op.operands[sources.pop()])
                changed = True
        return changed


def _forwarded(region, r: int, k: int, operand_of: dict) -> int | None:
    """The operand that region `r` yields unchanged as result k, if any."""
    block = region.blocks[0]
    v = block.terminator.operands[k]
    return operand_of.get((r, v.index)) if isinstance(v, BlockArg) and v.block is block \
        else None


defop("cond", None, arity=(1, None), traits=(Cond(), ContainerOperands()),
      patterns=(InlineConstantCond(), ForwardCapturedResult()),
      doc="cond(p, xs...): operands are a bool scalar predicate p and the values xs the "
          "branches read. Both regions ^then and ^else take (xs...) as block arguments and end "
          "in yield with the op's result types; the op's results are what the taken branch "
          "yields")


# ---------------------------------------------------------------- while

class While(RegionOp):
    """``while cs..., inits...``: both regions take ``(cs..., carried...)``."""

    regions = ("cond", "body")
    records_residuals = True

    def verify(self, op) -> None:
        n_consts = len(op.operands) - len(op.results)
        if n_consts < 0:
            raise VerificationError("while needs an initial value for each result")
        inits = op.operands[n_consts:]
        if [v.type for v in inits] != list(op.result_types):
            raise VerificationError("while carries (" + ", ".join(str(v.type) for v in inits)
                                    + ") but has results ("
                                    + ", ".join(map(str, op.result_types)) + ")")
        types = [v.type for v in op.operands]
        check_region(op, 0, "cond", types, "condition")
        check_region(op, 1, "body", types, "yield", op.result_types)

    def flow(self, op):
        n_consts = len(op.operands) - len(op.results)
        for j in range(len(op.operands)):
            yield Operand(j), Arg(0, j)
            yield Operand(j), Arg(1, j)
        for k in range(len(op.results)):
            yield Operand(n_consts + k), Result(k)
            yield Yield(1, k), Arg(0, n_consts + k)
            yield Yield(1, k), Arg(1, n_consts + k)
            yield Yield(1, k), Result(k)

    def evaluator(self, op):
        n_consts = len(op.operands) - len(op.results)

        def run(args, regions):
            cond, body = regions
            consts = args[:n_consts]
            del args[:n_consts]
            carried, args = args, None  # each iteration's values die once the body used them
            while cond(consts + carried)[0]:
                frame, carried = consts + carried, None
                carried = body(frame)
            return carried
        return run

    # -- reverse mode: the forward loop records, per iteration, the carried values its
    # body reads on a stack; the backward loop pops them in reverse order.

    def forward(self, ad, b, op, mapping):
        """Copy `op` so that it also carries a stack with one record per iteration: the
        carried values the body reads, as they were when the iteration began. Maps the
        original results to the copy's and returns the final stack."""
        n_consts = len(op.operands) - len(op.results)
        stored = _while_plan(ad, op)[2]
        stack_type = StackType([op.results[k].type for k in stored])
        empty = b.create("stack_new", result_types=[stack_type]).result
        consts = [mapping[v] for v in op.operands[:n_consts]]
        inits = [mapping[v] for v in op.operands[n_consts:]]
        cond_block, body_block = (r.blocks[0] for r in op.regions)

        def cond_region(rb, *region_args):
            inner = dict(zip(cond_block.args, region_args[:-1]))
            for inner_op in cond_block.body_ops():
                rb.insert(inner_op.clone(inner))
            return inner[cond_block.terminator.operands[0]]

        def body_region(rb, *region_args):
            carried = region_args[n_consts:-1]
            stack = rb.stack_push(region_args[-1], *(carried[k] for k in stored))
            inner = dict(zip(body_block.args, region_args[:-1]))
            for inner_op in body_block.body_ops():
                rb.insert(inner_op.clone(inner))
            return [inner[v] for v in body_block.terminator.operands] + [stack]

        results = b.while_loop(consts, [*inits, empty], cond_region, body_region,
                               names=[r.name for r in op.results] + ["stack"],
                               arg_names=[a.name for a in body_block.args] + ["stack"])
        for old, new in zip(op.results, results):
            mapping[old] = new
        return results[-1]

    def backward(self, ad, b, op, ins, out_cts, stack):
        """The backward loop: pops one record per forward iteration, recomputes that
        iteration and applies its VJP, summing the invariants' cotangents. It also
        carries, as bools (for a list, one per element), whether cotangents exist
        where only the run can tell: an invariant's exists once an iteration gave it
        one (never if the loop ran zero times, as eager code leaves the gradient of a
        parameter only the body uses None then), a carried value's where an iteration
        may not pass one on."""
        n_consts = len(op.operands) - len(op.results)
        carried_types = [r.type for r in op.results]
        act_carried, act_consts, stored = _while_plan(ad, op)
        body_block = op.regions[1].blocks[0]
        consts = ins[:n_consts]
        ct_inits = [out_cts[k] if out_cts[k] is not None else
                    b.zeros_like(ad.mapping[op.results[k]]) for k in act_carried]
        acc_inits = [b.zeros_like(consts[j]) for j in act_consts]
        n_ct, n_acc = len(ct_inits), len(acc_inits)
        starts = [ad.defined(op.results[k]) for k in act_carried]
        # Whether each carried cotangent exists in every iteration: True, False, or None
        # (a bool the loop carries); widened until the body built agrees.
        known = [d if isinstance(d, bool) else None for d in starts]
        found: dict[str, list] = {}  # what the body built last gives: see body_region

        def cond_region(rb, *region_args):
            depth = rb.stack_len(region_args[-1])
            return rb.gt(depth, rb.constant(0, "int64"))

        def body_region(rb, *region_args):
            cs = region_args[:n_consts]
            ct_x = region_args[n_consts:n_consts + n_ct]
            acc = region_args[n_consts + n_ct:n_consts + n_ct + n_acc]
            carried_flags = iter(region_args[n_consts + n_ct + n_acc:-1 - n_acc])
            acc_flags = region_args[-1 - n_acc:-1]
            popped = rb.stack_pop(region_args[-1])
            popped = list(popped) if isinstance(popped, tuple) else [popped]
            rest, records = popped[0], popped[1:]
            carried = [None] * len(carried_types)
            for k, v in zip(stored, records):
                carried[k] = v
            for k, t in enumerate(carried_types):
                if carried[k] is None:  # the body never reads it: any value of its type will do
                    carried[k] = _any_value(rb, t)
            seeds = [None] * len(carried_types)
            defined = [False] * len(carried_types)
            for k, ct, state in zip(act_carried, ct_x, known):
                seeds[k], defined[k] = ct, next(carried_flags) if state is None else state
            active_args = set(act_consts) | {n_consts + k for k in act_carried}
            _, arg_cts, arg_defined = ad.differentiate_block(
                rb, body_block, [*cs, *carried], active_args, seeds, defined)
            new_ct_x = [arg_cts[n_consts + k] if arg_cts[n_consts + k] is not None
                        else rb.zeros_like(carried[k]) for k in act_carried]
            new_acc = [a if arg_cts[j] is None else rb.accumulate(a, arg_cts[j])
                       for a, j in zip(acc, act_consts)]
            found["passed"] = [arg_defined[n_consts + k] for k in act_carried]
            found["given"] = [arg_defined[j] for j in act_consts]
            return [*new_ct_x, *new_acc,
                    *(rb.flag(p, like=ct)
                      for p, state, ct in zip(found["passed"], known, new_ct_x) if state is None),
                    *(rb.flag(rb.either(f, g), like=a)
                      for f, g, a in zip(acc_flags, found["given"], new_acc)),
                    rest]

        while True:
            flag_types = [_flag_type(v.type) for v, state in zip(ct_inits, known)
                          if state is None] + [_flag_type(v.type) for v in acc_inits]
            types = [v.type for v in [*consts, *ct_inits, *acc_inits]] + flag_types \
                + [stack.type]
            names = [v.name for v in [*consts, *ct_inits, *acc_inits]] \
                + [None] * len(flag_types) + [stack.name]
            body_r, _ = b.region(types, body_region, "yield", names)
            widened = [state if isinstance(p, bool) and p is state else None
                       for state, p in zip(known, found["passed"])]
            if widened == known:
                break
            known = widened
        cond_r, _ = b.region(types, cond_region, "condition", names)
        flag_inits = [b.flag(d, like=ct) for d, state, ct in zip(starts, known, ct_inits)
                      if state is None] + [b.flag(False, like=a) for a in acc_inits]
        results = b.create("while", [*consts, *ct_inits, *acc_inits, *flag_inits, stack],
                           regions=[cond_r, body_r],
                           result_types=types[n_consts:]).results
        carried_flags = iter(results[n_ct + n_acc:-1 - n_acc])
        in_cts = [None] * len(ins)
        for k, g, state in zip(act_carried, results[:n_ct], known):
            in_cts[n_consts + k] = g if state else \
                Defined(g, next(carried_flags)) if state is None else None
        for j, g, flag, given in zip(act_consts, results[n_ct:n_ct + n_acc],
                                     results[-1 - n_acc:-1], found["given"]):
            if given is not False:
                in_cts[j] = Defined(g, flag)
        return in_cts


def _flag_type(t):
    """The type of whether a cotangent of type `t` exists: a bool scalar, or for a
    list, a list of them (one per element, as the list ops' rules say it)."""
    flag = TensorType(dtypes.bool_, ())
    return ListType(flag) if isinstance(t, ListType) else flag


def _any_value(b, t):
    """A value of type `t` to stand for one nothing reads: an empty list or stack (a
    loop carrying the records of another loop, as a gradient of a gradient has), or
    zeros."""
    if isinstance(t, ListType):
        return b.create("list_new", result_types=[t]).result
    if isinstance(t, StackType):
        return b.create("stack_new", result_types=[t]).result
    return b.zeros(t)


def _while_plan(ad, op):
    """Which of `op`'s values the backward loop differentiates and which carried values
    each iteration must record: (active carried indices, active invariant indices,
    recorded carried indices)."""
    n_consts = len(op.operands) - len(op.results)
    any_active = any(v in ad.active for v in op.operands)
    act_carried = [k for k, r in enumerate(op.results) if differentiable(r.type) and any_active]
    act_consts = [j for j in range(n_consts) if op.operands[j] in ad.active]
    body = op.regions[1].blocks[0]
    seeded = [k in act_carried for k in range(len(op.results))]
    needed = ad.needed_ops(body, set(act_consts) | {n_consts + k for k in act_carried}, seeded)
    # A VJP reads its op's operands and results, which are computed from its operands.
    read = arg_dependencies(body, [v for inner in needed for v in inner.operands])
    recorded = [k for k in range(len(op.results)) if n_consts + k in read]
    return act_carried, act_consts, recorded


defop("while", None, arity=(0, None), traits=(While(), ContainerOperands()),
      doc="while(cs..., inits...): the last operands are initial values of the carried "
          "values (one per result), the first ones loop invariants. Both regions take "
          "(cs..., carried...); ^cond ends in `condition` with a bool scalar, ^body yields the "
          "next carried values (the result types). The results are the carried values when "
          "the condition first fails")


# ---------------------------------------------------------------- effects

def format_text(fmt: str, values, scalars=(), arrays=(), grads=()) -> str:
    """`fmt` with its fields filled by `values` shown as eager code shows what they
    stand for: a Python number for those listed in `scalars` (``.item()``,
    ``float(x)``, a counter), the NumPy array for those in `arrays` (``x.numpy()``),
    and for the others the tensor's text, which says ``stop_gradient=False`` for those
    in `grads`."""
    return fmt.format(*(_shown(np.asarray(a), i, scalars, arrays, grads)
                        for i, a in enumerate(values)))


def _shown(a: np.ndarray, i: int, scalars, arrays, grads):
    if i in scalars:
        if dtypes.from_numpy(a) is dtypes.bfloat16:  # the number its bits stand for
            return dtypes.from_bfloat16_bits(a).item()
        return a.item()
    if i in arrays:
        return a
    return tensor_text(a, stop_gradient=i not in grads)


def _print_kernel(*values, fmt, scalars, arrays, grads):
    print(format_text(fmt, values, scalars, arrays, grads))
    return ()


defop("print", _no_results, _print_kernel, arity=(0, None),
      attrs={"fmt": REQUIRED, "scalars": (), "arrays": (), "grads": ()}, effect=Effect.IO,
      doc="print `fmt` with each `{}` replaced by the next operand, shown as a Tensor "
          "(saying stop_gradient=False for the operands listed in `grads`), as a Python "
          "number for those listed in `scalars` (what eager code has as numbers: "
          "`.item()`, `float(x)`, a counter) or as a NumPy array for those in `arrays` "
          "(`x.numpy()`); runs when the program runs, in the branch or iteration that "
          "reaches it")
