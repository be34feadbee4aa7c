"""Reverse-mode automatic differentiation as an IR-to-IR transform.

`grad(fn, wrt, output)` returns a new function that computes `fn`'s results and the
gradients of one of them with respect to the arguments `wrt`. Eager
``loss.backward()`` and compiled training use this same transform.

How it works, for one block (`differentiate_block`; functions and regions alike):

1. **Activity.** A value is *active* if it is float-typed and depends on an argument
   being differentiated; it is *useful* if the output's cotangent reaches it. Only
   ops with an active and useful result get a VJP, so work that cannot reach a
   requested gradient is never emitted.
2. **Forward sweep.** The block's ops are copied. A ``while`` whose gradient is needed
   is copied *augmented*: it also carries a stack onto which each iteration pushes the
   carried values it starts from.
3. **Reverse sweep.** Ops are visited last to first; each calls its registered VJP
   rule, and cotangents of values used several times are summed.

Control flow:

- ``cond``: the cotangent is a ``cond`` on the same predicate. Each branch receives
  the primal operands and the result cotangents, recomputes its forward branch and
  differentiates it, yielding cotangents for every active operand (captured values
  included).
- ``while`` with a data-dependent trip count: the backward loop runs while the stack
  is not empty. Each iteration pops the carried values of one forward iteration,
  recomputes that iteration's body and applies its VJP; loop invariants' cotangents
  are summed across iterations. Memory: one record of carried values per forward
  iteration, linear in the trip count; compute: each body runs twice forward and once
  backward. (`lax.while_loop` in JAX has no reverse mode; irflow's does.)

The result runs `dce` and is verified.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import IrflowError
from ..ir.builder import Builder
from ..ir.core import Block, Function, Module, Operation, Value
from ..ir.registry import lookup
from ..ir.types import StackType, TensorType, is_symbol
from ..ir.verifier import verify
from .dce import arg_dependencies, dce


def grad(fn: Function, wrt: Sequence[int], output: int = 0, cotangent: bool = False,
         name: str | None = None) -> Function:
    """``name(*fn.args[, ct]) -> (*fn.results, *gradients)``.

    The gradient is of result `output` with respect to the arguments at indices `wrt`.
    With ``cotangent=False`` the output's cotangent is ones (a scalar loss gets 1.0);
    with ``cotangent=True`` it is an extra last argument of the output's type.
    """
    results = fn.result_types
    if not 0 <= output < len(results):
        raise IrflowError(f"@{fn.name} has {len(results)} result(s); cannot differentiate "
                          f"result {output}")
    out_type = results[output]
    if not _is_float(out_type):
        raise IrflowError(f"result {output} of @{fn.name} is {out_type}; only float results "
                          "can be differentiated")
    for i in wrt:
        if not 0 <= i < len(fn.args) or not _is_float(fn.args[i].type):
            what = fn.args[i].type if 0 <= i < len(fn.args) else "missing"
            raise IrflowError(f"cannot differentiate with respect to argument {i} of "
                              f"@{fn.name} ({what}): only float arguments have gradients")
    arg_types = list(fn.arg_types) + ([out_type] if cotangent else [])
    arg_names = [a.name for a in fn.args] + (["ct"] if cotangent else [])
    g = Function(name or f"{fn.name}_grad", arg_types, arg_names)
    b = Builder(g.block)
    args = g.args[:len(fn.args)]
    sweep = forward_sweep(b, fn.block, args, set(wrt), [k == output for k in range(len(results))])
    seed = g.args[-1] if cotangent else ones(b, out_type)
    cts = reverse_sweep(b, sweep, [(fn.return_op.operands[output], seed)])
    grads = [cts.get(a) for a in fn.args]
    outs = [sweep.mapping[v] for v in fn.return_op.operands]
    b.ret(*outs, *(grads[i] if grads[i] is not None else zeros(b, args[i].type) for i in wrt))
    dce(Module([g]))
    verify(g)
    return g


def backward_function(fn: Function, wrt: Sequence[int | Value], outputs: Sequence[int],
                      name: str | None = None) -> tuple[Function, list[Value]]:
    """The reverse sweep of `fn` alone, for callers that already hold `fn`'s values
    (eager ``backward()``): ``name(*cotangents, *residuals) -> gradients``.

    The cotangents are those of `fn`'s results at `outputs`; the gradients are those
    of the values `wrt`: argument indices, or values of `fn` (an intermediate's
    gradient counts every path from it to the outputs), zeros where none flows.
    The residuals are the values
    of `fn` (arguments or op results) that the VJP rules read; they are returned, in
    argument order, so that the caller can pass their values. `fn` must not need a
    ``while`` loop differentiated: loops record their iterations in the forward sweep.
    """
    results = fn.result_types
    b_fn = Function(name or f"{fn.name}_backward",
                    [results[k] for k in outputs], [f"ct{k}" for k in outputs])
    b = Builder(b_fn.block)
    ret = fn.return_op.operands
    targets = [fn.args[v] if isinstance(v, int) else v for v in wrt]
    active, needed = _activity(body_ops(fn.block), set(targets), {ret[k] for k in outputs})
    loops = [op for op in needed if op.name == "while"]
    if loops:
        raise IrflowError("backward_function cannot differentiate a while loop without "
                          "its forward sweep; use grad()", loops[0].loc)
    sweep = Sweep(body_ops(fn.block), active, needed)
    sweep.mapping = _ResidualArgs(b_fn)
    cts = reverse_sweep(b, sweep, [(ret[k], arg) for k, arg in zip(outputs, b_fn.args)])
    b.ret(*(cts.get(v) if cts.get(v) is not None else zeros(b, v.type) for v in targets))
    dce(Module([b_fn]))
    verify(b_fn)
    used = [v for v, arg in sweep.mapping.items() if arg.uses]
    for index in reversed([i for i, a in enumerate(b_fn.args) if not a.uses
                           and i >= len(outputs)]):
        b_fn.block.erase_arg(index)
    return b_fn, used


def vjp_split(fn: Function, wrt: Sequence[int], outputs: Sequence[int]):
    """Split differentiation into two functions, for callers that run the forward now
    and the backward later (a compiled call inside eager autograd):

    - ``forward(*fn.args) -> (*fn.results, *residuals)``: `fn` plus the values the
      backward will read (including the stacks of augmented while loops);
    - ``backward(*cotangents of fn.results[outputs], *residuals) -> gradients`` of
      the arguments `wrt` (zeros where none flows). The residuals include, for each
      symbolic dim of `fn`'s arguments, a value with that dim, so that the backward
      knows every size its gradients have.

    Returns (forward, backward)."""
    fwd = Function(f"{fn.name}_forward", fn.arg_types, [a.name for a in fn.args])
    seeded = [k in outputs for k in range(len(fn.result_types))]
    sweep = forward_sweep(Builder(fwd.block), fn.block, fwd.args, set(wrt), seeded)
    results = fn.return_op.operands
    bwd = Function(f"{fn.name}_backward", [results[k].type for k in outputs],
                   [f"ct{k}" for k in outputs])
    back = Sweep(sweep.ops, sweep.active, sweep.needed)
    back.mapping = _ResidualArgs(bwd)
    source: dict[Value, Value] = {}  # backward argument -> the forward value it receives
    for op, stack in sweep.stacks.items():
        back.stacks[op] = bwd.block.add_arg(stack.type, "stack")
        source[back.stacks[op]] = stack
    bb = Builder(bwd.block)
    cts = reverse_sweep(bb, back, [(results[k], ct) for k, ct in zip(outputs, bwd.args)])
    bb.ret(*(cts.get(fn.args[i]) if cts.get(fn.args[i]) is not None
             else zeros(bb, fn.args[i].type) for i in wrt))
    dce(Module([bwd]))
    for original, arg in back.mapping.items():
        source[arg] = sweep.mapping[original]
    residuals = []
    for index in reversed(range(len(outputs), len(bwd.args))):
        arg = bwd.args[index]
        if arg.uses:
            residuals.append(source[arg])
        else:
            bwd.block.erase_arg(index)
    residuals.reverse()
    bound = _whole_dim_symbols(bwd.args)
    for original, arg in zip(fn.args, fwd.args):
        missing = _whole_dim_symbols([original]) - bound
        if missing:  # a size (N) no cotangent or residual has: a gradient may need it
            bwd.block.add_arg(original.type, original.name)
            residuals.append(arg)
            bound |= missing
    Builder(fwd.block).ret(*(sweep.mapping[v] for v in results), *residuals)
    dce(Module([fwd]))
    verify(fwd)
    verify(bwd)
    return fwd, bwd


def _whole_dim_symbols(values) -> set[str]:
    """The symbols that the values' types have as whole dims: what binds them."""
    return {d for v in values if isinstance(v.type, TensorType)
            for d in v.type.shape if is_symbol(d)}


def append_gradients(b: Builder, ops: Sequence[Operation], sources: Sequence[Value],
                     seeds) -> "_Cotangents":
    """Differentiate ops already emitted, in place: the frontend uses this when traced
    code calls ``loss.backward()``. Appends the reverse sweep at `b` from `seeds`
    (pairs of a value of `ops` and its cotangent), differentiating with respect to
    `sources`; while loops whose gradient is needed are replaced by augmented copies.
    Returns the cotangents by value (those of `sources` among them)."""
    active, needed = _activity(ops, set(sources), {v for v, _ in seeds})
    sweep = Sweep(ops, active, needed)
    sweep.mapping = _Identity()
    loops = [op for op in ops if op.name == "while" and op in needed]
    for op in loops:
        with b.location(op.loc):
            sweep.stacks[op] = _augmented_while(Builder.before(op), op, sweep.mapping, active)
    cts = reverse_sweep(b, sweep, seeds)
    for op in loops:  # the augmented copies take over; the originals are now dead
        for old in op.results:
            old.replace_all_uses_with(sweep.mapping[old])
        op.erase()
    return cts


class _Identity(dict):
    """The forward values of an in-place sweep are themselves."""

    def __missing__(self, value: Value) -> Value:
        return value


class _ResidualArgs(dict):
    """Maps values of the differentiated function to arguments of the backward
    function, adding an argument the first time a value is asked for."""

    def __init__(self, fn: Function):
        super().__init__()
        self.fn = fn

    def __missing__(self, value: Value) -> Value:
        arg = self.fn.block.add_arg(value.type, value.name)
        self[value] = arg
        return arg


# ---------------------------------------------------------------- helpers

def _is_float(t) -> bool:
    return isinstance(t, TensorType) and t.dtype.is_float


def zeros(b: Builder, t: TensorType) -> Value:
    return _fill(b, t, 0)


def ones(b: Builder, t: TensorType) -> Value:
    return _fill(b, t, 1)


def _fill(b: Builder, t: TensorType, value) -> Value:
    scalar = b.constant(value, t.dtype)
    return scalar if t.rank == 0 else b.broadcast_to(scalar, shape=t.shape)


class _Cotangents:
    """Cotangents of the values of one block, summed as they arrive."""

    def __init__(self, b: Builder):
        self.b = b
        self.cts: dict[Value, Value] = {}

    def add(self, value: Value, ct: Value | None, op: Operation | None = None) -> None:
        if ct is None or not _is_float(value.type):
            return
        if ct.type != value.type:
            where = f"the VJP of '{op.name}'" if op is not None else "a cotangent"
            raise IrflowError(f"{where} gives {ct.type} for a value of type {value.type}",
                              op.loc if op is not None else None)
        old = self.cts.get(value)
        self.cts[value] = ct if old is None else self.b.add(old, ct)

    def get(self, value: Value) -> Value | None:
        return self.cts.get(value)


def body_ops(block: Block) -> list[Operation]:
    """The block's ops without its terminator (a block being built may have none)."""
    ops = block.ops
    return ops[:-1] if ops and lookup(ops[-1].name).terminator else list(ops)


def _activity(ops: Sequence[Operation], sources: set[Value], seeds: set[Value]):
    """(active values, ops whose VJP is needed): a value is active if it is a float
    depending on `sources`; an op is needed if an active result of it reaches `seeds`."""
    active: set[Value] = {v for v in sources if _is_float(v.type)}
    for op in ops:
        if any(v in active for v in op.operands) and not lookup(op.name).nondiff:
            active.update(r for r in op.results if _is_float(r.type))
    useful = {v for v in seeds if v in active}
    needed: list[Operation] = []
    for op in reversed(ops):
        # An op producing a source but reading nothing active is where a gradient stops.
        if any(r in useful for r in op.results) and any(v in active for v in op.operands):
            needed.append(op)
            useful.update(v for v in op.operands if v in active)
    return active, set(needed)


def _block_activity(block: Block, active_args: set[int], seeded: Sequence[bool]):
    """`_activity` of a block whose arguments `active_args` are differentiated and
    whose terminator operands marked in `seeded` get cotangents."""
    sources = {a for i, a in enumerate(block.args) if i in active_args}
    seeds = {v for v, seed in zip(block.terminator.operands, seeded) if seed}
    return _activity(body_ops(block), sources, seeds)


def active_results(fn: Function, wrt: Sequence[int]) -> list[bool]:
    """Per result of `fn`: is it active, a float that depends on the arguments `wrt`
    through ops that carry gradients (what eager mode marks ``stop_gradient=False``)?"""
    active, _ = _block_activity(fn.block, set(wrt), ())
    return [v in active for v in fn.return_op.operands]


# ---------------------------------------------------------------- the transform

class Sweep:
    """The forward copy of some ops: where their values went, and what the reverse
    sweep needs to know about them."""

    def __init__(self, ops: Sequence[Operation], active: set[Value], needed: set[Operation]):
        self.ops = list(ops)
        self.active = active
        self.needed = needed
        self.mapping: dict[Value, Value] = {}
        self.stacks: dict[Operation, Value] = {}  # augmented while -> its final stack


def forward_sweep(b: Builder, block: Block, args: Sequence[Value], active_args: set[int],
                  seeded: Sequence[bool]) -> Sweep:
    """Emit at `b` the forward computation of `block` on `args`, augmenting the loops
    whose gradient will be needed. `seeded[k]`: the terminator's operand k will get a
    cotangent."""
    active, needed = _block_activity(block, active_args, seeded)
    sweep = Sweep(body_ops(block), active, needed)
    sweep.mapping.update(zip(block.args, args))
    for op in sweep.ops:
        with b.location(op.loc):
            if op.name == "while" and op in needed:
                sweep.stacks[op] = _augmented_while(b, op, sweep.mapping, active)
            else:
                b.insert(op.clone(sweep.mapping))
    return sweep


def reverse_sweep(b: Builder, sweep: Sweep, seeds) -> "_Cotangents":
    """Emit at `b` the reverse sweep from `seeds`, pairs (value of the swept ops, its
    cotangent or None for zero); a value seeded twice gets the sum. Returns every
    cotangent it found, by original value."""
    mapping, active = sweep.mapping, sweep.active
    cts = _Cotangents(b)
    for v, ct in seeds:
        cts.add(v, ct)
    for op in reversed(sweep.ops):
        if op not in sweep.needed:
            continue
        out_cts = [cts.get(r) for r in op.results]
        if all(ct is None for ct in out_cts):
            continue
        with b.location(op.loc):
            ins = [mapping[v] for v in op.operands]
            outs = [mapping[r] for r in op.results]
            if op.name == "cond":
                in_cts = _cond_vjp(b, op, ins, out_cts, active)
            elif op.name == "while":
                in_cts = _while_vjp(b, op, ins, out_cts, active, sweep.stacks[op])
            else:
                in_cts = _op_vjp(b, op, ins, outs, out_cts)
        for v, ct in zip(op.operands, in_cts):
            if v in active:
                cts.add(v, ct, op)
    return cts


def differentiate_block(b: Builder, block: Block, args: Sequence[Value], active_args: set[int],
                        cts_out: Sequence[Value | None]):
    """Both sweeps: returns the forward values of the terminator's operands and a
    cotangent (or None) per block argument."""
    sweep = forward_sweep(b, block, args, active_args, [ct is not None for ct in cts_out])
    cts = reverse_sweep(b, sweep, list(zip(block.terminator.operands, cts_out)))
    return ([sweep.mapping[v] for v in block.terminator.operands],
            [cts.get(a) for a in block.args])


def _op_vjp(b: Builder, op: Operation, ins, outs, out_cts):
    opdef = lookup(op.name)
    if opdef.vjp is None:
        raise IrflowError(f"op '{op.name}' has no VJP rule, so it cannot be differentiated",
                          op.loc)
    if len(outs) > 1:
        out_cts = [ct if ct is not None else zeros(b, r.type) if _is_float(r.type) else None
                   for ct, r in zip(out_cts, outs)]
    in_cts = opdef.vjp(b, out_cts, ins, outs, **op.attrs)
    if len(in_cts) != len(ins):
        raise IrflowError(f"the VJP of '{op.name}' returned {len(in_cts)} cotangents for "
                          f"{len(ins)} operands", op.loc)
    return in_cts


def _cond_vjp(b: Builder, op: Operation, ins, out_cts, active: set[Value]):
    """A cond on the same predicate whose branches recompute and differentiate the
    forward branches; yields a cotangent for each active operand."""
    pred, xs = ins[0], ins[1:]
    targets = [j for j, v in enumerate(op.operands[1:]) if v in active]
    if not targets:
        return [None] * len(ins)
    present = [k for k, ct in enumerate(out_cts) if ct is not None]

    def branch(region_index):
        def body(rb: Builder, *region_args):
            primal, given = region_args[:len(xs)], region_args[len(xs):]
            seeds: list[Value | None] = [None] * len(out_cts)
            for k, ct in zip(present, given):
                seeds[k] = ct
            _, arg_cts = differentiate_block(rb, op.regions[region_index].blocks[0], primal,
                                             set(targets), seeds)
            return [arg_cts[j] if arg_cts[j] is not None else zeros(rb, primal[j].type)
                    for j in targets]
        return body

    results = b.cond(pred, [*xs, *(out_cts[k] for k in present)], branch(0), branch(1))
    in_cts: list[Value | None] = [None] * len(ins)
    for j, g in zip(targets, results):
        in_cts[1 + j] = g
    return in_cts


def _while_plan(op: Operation, active: set[Value]):
    """Which of `op`'s values the backward loop differentiates and which carried values
    each iteration must record: (active carried indices, active invariant indices,
    recorded carried indices)."""
    n_consts = len(op.operands) - len(op.results)
    any_active = any(v in active for v in op.operands)
    act_carried = [k for k, r in enumerate(op.results) if _is_float(r.type) and any_active]
    act_consts = [j for j in range(n_consts) if op.operands[j] in active]
    body = op.regions[1].blocks[0]
    seeded = [k in act_carried for k in range(len(op.results))]
    _, needed = _block_activity(body, set(act_consts) | {n_consts + k for k in act_carried},
                                seeded)
    # A VJP reads its op's operands and results, which are computed from its operands.
    read = set()
    for inner in needed:
        for v in inner.operands:
            read |= arg_dependencies(body, v)
    recorded = [k for k in range(len(op.results)) if n_consts + k in read]
    return act_carried, act_consts, recorded


def _augmented_while(b: Builder, op: Operation, mapping: dict[Value, Value],
                     active: set[Value]) -> Value:
    """Copy `op` so that it also carries a stack with one record per iteration: the
    carried values the body reads, as they were when the iteration began. Maps the
    original results to the copy's and returns the final stack."""
    n_consts = len(op.operands) - len(op.results)
    stored = _while_plan(op, active)[2]
    stack_type = StackType([op.results[k].type for k in stored])
    empty = b.create("stack_new", result_types=[stack_type]).result
    consts = [mapping[v] for v in op.operands[:n_consts]]
    inits = [mapping[v] for v in op.operands[n_consts:]]
    cond_block, body_block = (r.blocks[0] for r in op.regions)

    def cond_region(rb: Builder, *region_args):
        inner = dict(zip(cond_block.args, region_args[:-1]))
        for inner_op in cond_block.ops[:-1]:
            rb.insert(inner_op.clone(inner))
        return inner[cond_block.terminator.operands[0]]

    def body_region(rb: Builder, *region_args):
        carried = region_args[n_consts:-1]
        stack = rb.stack_push(region_args[-1], *(carried[k] for k in stored))
        inner = dict(zip(body_block.args, region_args[:-1]))
        for inner_op in body_block.ops[:-1]:
            rb.insert(inner_op.clone(inner))
        return [inner[v] for v in body_block.terminator.operands] + [stack]

    results = b.while_loop(consts, [*inits, empty], cond_region, body_region,
                           names=[r.name for r in op.results] + ["stack"],
                           arg_names=[a.name for a in body_block.args] + ["stack"])
    for old, new in zip(op.results, results):
        mapping[old] = new
    return results[-1]


def _while_vjp(b: Builder, op: Operation, ins, out_cts, active: set[Value], stack: Value):
    """The backward loop: pops one record per forward iteration, recomputes that
    iteration and applies its VJP, summing the invariants' cotangents."""
    n_consts = len(op.operands) - len(op.results)
    carried_types = [r.type for r in op.results]
    act_carried, act_consts, stored = _while_plan(op, active)
    body_block = op.regions[1].blocks[0]
    consts = ins[:n_consts]
    ct_inits = [out_cts[k] if out_cts[k] is not None else zeros(b, carried_types[k])
                for k in act_carried]
    acc_inits = [zeros(b, consts[j].type) for j in act_consts]
    n_ct, n_acc = len(ct_inits), len(acc_inits)

    def cond_region(rb: Builder, *region_args):
        depth = rb.stack_len(region_args[-1])
        return rb.gt(depth, rb.constant(0, "int64"))

    def body_region(rb: Builder, *region_args):
        cs = region_args[:n_consts]
        ct_x = region_args[n_consts:n_consts + n_ct]
        acc = region_args[n_consts + n_ct:n_consts + n_ct + n_acc]
        popped = rb.stack_pop(region_args[-1])
        popped = [popped] if isinstance(popped, Value) else list(popped)
        rest, records = popped[0], popped[1:]
        carried: list[Value] = [None] * len(carried_types)
        for k, v in zip(stored, records):
            carried[k] = v
        for k, t in enumerate(carried_types):
            if carried[k] is None:  # the body never reads it: any value of its type will do
                carried[k] = zeros(rb, t)
        seeds: list[Value | None] = [None] * len(carried_types)
        for k, ct in zip(act_carried, ct_x):
            seeds[k] = ct
        active_args = set(act_consts) | {n_consts + k for k in act_carried}
        _, arg_cts = differentiate_block(rb, body_block, [*cs, *carried], active_args, seeds)
        new_ct_x = [arg_cts[n_consts + k] if arg_cts[n_consts + k] is not None
                    else zeros(rb, carried_types[k]) for k in act_carried]
        new_acc = [a if arg_cts[j] is None else rb.add(a, arg_cts[j])
                   for a, j in zip(acc, act_consts)]
        return [*new_ct_x, *new_acc, rest]

    results = b.while_loop(consts, [*ct_inits, *acc_inits, stack], cond_region, body_region)
    in_cts: list[Value | None] = [None] * len(ins)
    for k, g in zip(act_carried, results[:n_ct]):
        in_cts[n_consts + k] = g
    for j, g in zip(act_consts, results[n_ct:n_ct + n_acc]):
        in_cts[j] = g
    return in_cts
