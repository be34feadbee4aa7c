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

Ops with regions bring their own rule, declared beside them in their `RegionOp`
interface (`forward` for the forward sweep, `backward` for the reverse one), written
against the context this module passes in (`Sweep`): how to differentiate a block,
which of its ops a seed reaches, which values are active. So ``cond`` recomputes
and differentiates its taken branch inside a backward ``cond``, and ``while``
records its iterations on a stack and pops them in a backward loop (see
`irflow.ops.control` and `docs/autodiff.md`), with no case for them here.

**Which cotangents exist.** Eager code gives a value a gradient only when an op
that used it ran on the way to the loss; elsewhere the gradient stays None, and an
optimizer skips a parameter whose gradient is None (no weight decay, no moment
update). A compiled program decides at run time which branch of a ``cond`` runs and
whether a ``while`` body runs at all, so each cotangent carries whether it exists:
True (whenever the sweep runs), False, or a bool scalar of the IR computed as the
program runs (`_Cotangents.defined_of`); for a list, a list of bools, one per
element. Only region ops' rules make run-time flags (a branch that does not use an
operand yields False for it, the backward loop carries whether an iteration gave an
invariant a cotangent), and the list ops' (`TracksDefined`: reading one element
gives the list a cotangent, zeros elsewhere, and only that element's exists); every
other op passes on whether any of its results' cotangents exists. Consumers that
can leave a gradient None read the flags (`append_gradients`' caller;
`backward_function` and `vjp_split` return them); where nothing reads them, `dce`
removes them, so a program whose values are used outside regions is differentiated
as before.

Every op the transform emits carries the location of the forward op it copies or
differentiates (the sums of cotangents too); what belongs to no op (the seed, zero
gradients, the return) carries the location of the differentiated function's
``return``, so errors in a gradient name the user's line.

The result runs `dce` and is verified.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import IrflowError
from ..ir.builder import Builder, is_list
from ..ir.core import Block, Function, Module, Operation, Value
from ..ir.registry import Defined, lookup
from ..ir.traits import SparseCotangents, TracksDefined
from ..ir.sizes import symbols_needed
from ..ir.types import ListType, TensorType, differentiable, is_symbol
from ..ir.verifier import verify
from .dce import dce


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
    if not differentiable(out_type):
        raise IrflowError(f"result {output} of @{fn.name} is {out_type}; only float results "
                          "can be differentiated")
    for i in wrt:
        if not 0 <= i < len(fn.args) or not differentiable(fn.args[i].type):
            what = fn.args[i].type if 0 <= i < len(fn.args) else "missing"
            raise IrflowError(f"cannot differentiate with respect to argument {i} of "
                              f"@{fn.name} ({what}): only float arguments have gradients")
    arg_types = list(fn.arg_types) + ([out_type] if cotangent else [])
    arg_names = [a.name for a in fn.args] + (["ct"] if cotangent else [])
    g = Function(name or f"{fn.name}_grad", arg_types, arg_names)
    b = Builder(g.block, fn.return_op.loc)
    args = g.args[:len(fn.args)]
    sweep = forward_sweep(b, fn.block, args, set(wrt), [k == output for k in range(len(results))])
    seed = g.args[-1] if cotangent else b.ones(out_type)
    cts = reverse_sweep(b, sweep, [(fn.return_op.operands[output], seed)])
    grads = [cts.get(a) for a in fn.args]
    outs = [sweep.mapping[v] for v in fn.return_op.operands]
    b.ret(*outs, *(grads[i] if grads[i] is not None else b.zeros(args[i].type) for i in wrt))
    dce(Module([g]))
    verify(g)
    return g


def backward_function(fn: Function, wrt: Sequence[int | Value], outputs: Sequence[int],
                      name: str | None = None) -> tuple[Function, list[Value], tuple[int, ...]]:
    """The reverse sweep of `fn` alone, for callers that already hold `fn`'s values
    (eager ``backward()``): ``name(*cotangents, *residuals) -> (*gradients, *defined)``.

    The cotangents are those of `fn`'s results at `outputs`; the gradients are those
    of the values `wrt`: argument indices, or values of `fn` (an intermediate's
    gradient counts every path from it to the outputs), zeros where none flows.
    The residuals are the values
    of `fn` (arguments or op results) that the VJP rules read; they are returned, in
    argument order, so that the caller can pass their values. `fn` must not need a
    ``while`` loop differentiated: loops record their iterations in the forward sweep.
    Returns (the function, the residuals, the positions in `wrt` of the gradients
    that exist only on some runs), the function returning a bool scalar for each of
    those after the gradients, true where it exists (a compiled call's backward
    half says so).
    """
    results = fn.result_types
    b_fn = Function(name or f"{fn.name}_backward",
                    [results[k] for k in outputs], [f"ct{k}" for k in outputs])
    b = Builder(b_fn.block, fn.return_op.loc)
    ret = fn.return_op.operands
    targets = [fn.args[v] if isinstance(v, int) else v for v in wrt]
    ops = list(fn.block.body_ops())
    active, needed = _activity(ops, set(targets), {ret[k] for k in outputs})
    recording = _recording(op for op in ops if op in needed)
    if recording:
        raise IrflowError(f"backward_function cannot differentiate '{recording[0].name}' "
                          "without its forward sweep, which records what its reverse rule "
                          "reads; use grad()", recording[0].loc)
    sweep = Sweep(ops, active, needed)
    sweep.mapping = _ResidualArgs(b_fn)
    cts = reverse_sweep(b, sweep, [(ret[k], arg) for k, arg in zip(outputs, b_fn.args)])
    defined = _run_time_flags(cts, targets)
    b.ret(*(cts.get(v) if cts.get(v) is not None else b.zeros(v.type) for v in targets),
          *defined.values())
    dce(Module([b_fn]))
    verify(b_fn)
    used = [v for v, arg in sweep.mapping.items() if arg.uses]
    b_fn.block.erase_args(i for i, a in enumerate(b_fn.args) if not a.uses and i >= len(outputs))
    return b_fn, used, tuple(defined)


def _run_time_flags(cts: "_Cotangents", targets: Sequence[Value]) -> dict[int, Value]:
    """Position in `targets` -> the bool scalar that says whether its cotangent
    exists, for those known only at run time."""
    flags = ((k, cts.defined_of(v)) for k, v in enumerate(targets) if cts.get(v) is not None)
    return {k: flag for k, flag in flags if isinstance(flag, Value)}


def vjp_split(fn: Function, wrt: Sequence[int], outputs: Sequence[int]):
    """Split differentiation into two functions, for callers that run the forward now
    and the backward later (a compiled call inside eager autograd):

    - ``forward(*fn.args) -> (*fn.results, *residuals)``: `fn` plus the values the
      backward will read (including what region ops record, such as the stacks of
      while loops);
    - ``backward(*cotangents of fn.results[outputs], [*their flags], *residuals) ->
      (*gradients, *defined)`` of the arguments `wrt` (zeros where none flows), then
      for each gradient that exists only on some runs, or never (no path from the
      argument reaches the outputs: eager code would leave it None, while the call
      has the argument as an operand), a bool scalar, true where it exists. With
      several outputs, a bool scalar per output says whether its cotangent exists
      (a compiled call's loss may read some of its results only: the others' zeros
      then give no argument a gradient, as in eager code). The residuals include,
      for each symbolic dim of `fn`'s arguments, a value with that dim, so that the
      backward knows every size its gradients have.

    Returns (forward, backward, the positions in `wrt` of the gradients that have a
    flag)."""
    fwd = Function(f"{fn.name}_forward", fn.arg_types, [a.name for a in fn.args])
    seeded = [k in outputs for k in range(len(fn.result_types))]
    sweep = forward_sweep(Builder(fwd.block), fn.block, fwd.args, set(wrt), seeded)
    results = fn.return_op.operands
    flagged = len(outputs) > 1  # see the docstring: a flag per output's cotangent
    bwd = Function(f"{fn.name}_backward",
                   [results[k].type for k in outputs]
                   + [TensorType("bool", ())] * (len(outputs) if flagged else 0),
                   [f"ct{k}" for k in outputs] + [f"ct{k}_defined" for k in outputs
                                                  if flagged])
    seeds = len(bwd.args)  # the arguments before the residuals
    back = Sweep(sweep.ops, sweep.active, sweep.needed)
    back.mapping = _ResidualArgs(bwd)
    source: dict[Value, Value] = {}  # backward argument -> the forward value it receives
    for op, residual in sweep.residuals.items():
        if residual is not None:
            back.residuals[op] = bwd.block.add_arg(residual.type, residual.name)
            source[back.residuals[op]] = residual
    bb = Builder(bwd.block, fn.return_op.loc)
    cts = reverse_sweep(bb, back, [(results[k], ct) for k, ct in zip(outputs, bwd.args)],
                        bwd.args[len(outputs):seeds] if flagged else None)
    defined = _run_time_flags(cts, [fn.args[i] for i in wrt])
    defined.update((k, bb.constant(False, "bool")) for k, i in enumerate(wrt)
                   if cts.get(fn.args[i]) is None)
    defined = dict(sorted(defined.items()))
    bb.ret(*(cts.get(fn.args[i]) if cts.get(fn.args[i]) is not None
             else bb.zeros(fn.args[i].type) for i in wrt), *defined.values())
    dce(Module([bwd]))
    for original, arg in back.mapping.items():
        source[arg] = sweep.mapping[original]
    residuals = [source[a] for a in bwd.args[seeds:] if a.uses]
    bwd.block.erase_args(i for i, a in enumerate(bwd.args) if i >= seeds and not a.uses)
    bound = _whole_dim_symbols(bwd.args)
    for original, arg in zip(fn.args, fwd.args):
        missing = _whole_dim_symbols([original]) - bound
        if missing:  # a size (N) no cotangent or residual has: a gradient may need it
            bwd.block.add_arg(original.type, original.name)
            residuals.append(arg)
            bound |= missing
    fb = Builder(fwd.block, fn.return_op.loc)
    for symbol in sorted(symbols_needed(bwd.block) - bound):
        # a size the forward computed (a list's length): passed as a bool tensor of
        # that length (a broadcast scalar: no memory)
        marker = fb.zeros(TensorType("bool", (symbol,)))
        bwd.block.add_arg(marker.type, f"size_{symbol}")
        residuals.append(marker)
    fb.ret(*(sweep.mapping[v] for v in results), *residuals)
    dce(Module([fwd]))
    verify(fwd)
    verify(bwd)
    return fwd, bwd, tuple(defined)


def _whole_dim_symbols(values) -> set[str]:
    """The symbols that the values' types have as whole dims: what binds them."""
    return {d for v in values if isinstance(v.type, TensorType)
            for d in v.type.shape if is_symbol(d)}


def append_gradients(b: Builder, ops: Sequence[Operation], sources: Sequence[Value],
                     seeds, blocked: frozenset[Value] = frozenset()) -> "_Cotangents":
    """Differentiate ops already emitted, in place: the frontend uses this when traced
    code calls ``loss.backward()``. Appends the reverse sweep at `b` from `seeds`
    (pairs of a value of `ops` and its cotangent), differentiating with respect to
    `sources`; region ops whose reverse rule reads what their forward copy records
    (while loops) are replaced by those copies, which take over their result values.
    Values in `blocked` pass no gradient (``paddle.grad``'s ``no_grad_vars``): they
    count as constants. Returns the cotangents by value (those of `sources` among
    them), with whether each exists on a run (`_Cotangents.defined_of`)."""
    active, needed = _activity(ops, set(sources), {v for v, _ in seeds}, blocked)
    sweep = Sweep(ops, active, needed)
    sweep.mapping = _Identity()
    recording = _recording(op for op in ops if op in needed)
    for op in recording:
        with b.location(op.loc):
            sweep.residuals[op] = lookup(op.name).region_op.forward(sweep, Builder.before(op),
                                                                    op, sweep.mapping)
    cts = reverse_sweep(b, sweep, seeds)
    for op in recording:
        _take_over(op, sweep.mapping)
    return cts


def _take_over(op: Operation, mapping: dict[Value, Value]) -> None:
    """Make the recording copy of `op` (which defines ``mapping[r]`` for each result r
    of `op`) define `op`'s result values themselves, and erase `op`. The values, not
    only their uses, move: the frontend's tensors for a loop's results, handed out
    before ``backward()``, hold them and are used (fetched, returned, computed on)
    after it."""
    for old in list(op.results):
        new = mapping[old]
        new.replace_all_uses_with(old)  # the reverse sweep's reads of the copy's result
        new.op.swap_result(new.index, op, old.index)  # old, with every use, is the copy's
    op.erase()


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

def _recording(ops) -> list[Operation]:
    """The region ops among `ops` whose forward copy records what their reverse rule
    reads."""
    found = []
    for op in ops:
        rop = lookup(op.name).region_op
        if rop is not None and rop.records_residuals:
            found.append(op)
    return found


class _Cotangents:
    """Cotangents of the values of one block, summed as they arrive, and whether each
    exists (see the module's docstring)."""

    def __init__(self, b: Builder):
        self.b = b
        self.cts: dict[Value, Value] = {}
        self.defined: dict[Value, bool | Value] = {}
        self.zeros: dict[TensorType, Value] = {}

    def zero_like(self, value: Value) -> Value:
        """A zero cotangent for `value`; for a tensor, one per type for the whole block
        (a program's call op may have thousands of results without a cotangent)."""
        t = value.type
        if not isinstance(t, TensorType):
            return self.b.zeros_like(value)
        found = self.zeros.get(t)
        if found is None:
            found = self.zeros[t] = self.b.zeros(t)
        return found

    def add(self, value: Value, ct: Value | None, op: Operation | None = None,
            defined: bool | Value = True) -> None:
        """Add `ct` to the cotangent of `value`; `defined`: whether `ct` exists."""
        if ct is None or not differentiable(value.type):
            return
        if isinstance(value.type, ListType) and not isinstance(defined, bool):
            defined = self.b.flag(defined, like=ct)  # a list's is said per element
        if ct.type != value.type:
            where = f"the VJP of '{op.name}'" if op is not None else "a cotangent"
            raise IrflowError(f"{where} gives {ct.type} for a value of type {value.type}",
                              op.loc if op is not None else None)
        old = self.cts.get(value)
        if old is None:
            self.cts[value], self.defined[value] = ct, defined
        else:
            self.cts[value] = self.b.accumulate(old, ct)
            self.defined[value] = self.b.either(self.defined[value], defined)

    def get(self, value: Value) -> Value | None:
        return self.cts.get(value)

    def defined_of(self, value: Value) -> bool | Value:
        """Whether the cotangent of `value` exists when the sweep runs: True, False
        (none, or zeros that no existing cotangent reached) or a value saying it at
        run time: a bool scalar, or for a list a list of them, one per element (the
        rules of the list ops say which elements' cotangents exist)."""
        return self.defined.get(value, False)

    def any_defined(self, values: Sequence[Value]) -> bool | Value:
        """Whether the cotangent of any of `values` exists: an op's VJP gives its
        operands cotangents that exist exactly then, as eager code runs an op's VJP
        when any of its results has a gradient."""
        flag = False
        for v in values:
            if v in self.cts:
                defined = self.defined[v]
                flag = self.b.either(flag, self.b.list_any(defined) if is_list(defined)
                                     else defined)
        return flag


def _activity(ops: Sequence[Operation], sources: set[Value], seeds: set[Value],
              blocked: frozenset[Value] = frozenset()):
    """(active values, ops whose VJP is needed): a value is active if it is a float
    depending on `sources` other than through `blocked`; an op is needed if an active
    result of it reaches `seeds`."""
    active: set[Value] = {v for v in sources if differentiable(v.type) and v not in blocked}
    for op in ops:
        if any(v in active for v in op.operands) and not lookup(op.name).nondiff:
            active.update(r for r in op.results if differentiable(r.type) and r not in blocked)
    useful = {v for v in seeds if v in active}
    needed: list[Operation] = []
    for op in reversed(ops):
        # An op producing a source but reading nothing active is where a gradient stops,
        # and so is one no gradient goes through (a stop_gradient whose result is a
        # source: a parameter's value after an update).
        if any(r in useful for r in op.results) and any(v in active for v in op.operands) \
                and not lookup(op.name).nondiff:
            needed.append(op)
            useful.update(v for v in op.operands if v in active)
    return active, set(needed)


def _block_activity(block: Block, active_args: set[int], seeded: Sequence[bool]):
    """`_activity` of a block whose arguments `active_args` are differentiated and
    whose terminator operands marked in `seeded` get cotangents."""
    sources = {a for i, a in enumerate(block.args) if i in active_args}
    seeds = {v for v, seed in zip(block.terminator.operands, seeded) if seed}
    return _activity(list(block.body_ops()), sources, seeds)


def active_results(fn: Function, wrt: Sequence[int]) -> list[bool]:
    """Per result of `fn`: is it active, a float that depends on the arguments `wrt`
    through ops that carry gradients (what eager mode marks ``stop_gradient=False``)?"""
    active, _ = _block_activity(fn.block, set(wrt), ())
    return [v in active for v in fn.return_op.operands]


# ---------------------------------------------------------------- the transform

class Sweep:
    """The forward copy of some ops: where their values went, and what the reverse
    sweep needs to know about them. It is also the context region-op rules get
    (see `RegionOp.forward`)."""

    def __init__(self, ops: Sequence[Operation], active: set[Value], needed: set[Operation]):
        self.ops = list(ops)
        self.active = active
        self.needed = needed
        self.mapping: dict[Value, Value] = {}
        self.residuals: dict[Operation, Value | None] = {}  # what each region op recorded
        self.cotangents: _Cotangents | None = None  # the reverse sweep's, while it runs

    def defined(self, value: Value) -> bool | Value:
        """Whether the cotangent of `value` (a result of the op whose reverse rule
        runs) exists (`_Cotangents.defined_of`): a rule that recomputes its regions
        passes it on to them, so that its operands' cotangents exist exactly where
        eager code would give them a gradient."""
        return self.cotangents.defined_of(value)

    @staticmethod
    def needed_ops(block: Block, active_args: set[int], seeded: Sequence[bool]) -> set[Operation]:
        """The ops of `block` whose VJP is needed when its arguments `active_args` are
        differentiated and its terminator operands marked in `seeded` get cotangents."""
        return _block_activity(block, active_args, seeded)[1]

    @staticmethod
    def differentiate_block(b: Builder, block: Block, args: Sequence[Value],
                            active_args: set[int], cts_out: Sequence[Value | None],
                            defined_out: Sequence[bool | Value] | None = None):
        return differentiate_block(b, block, args, active_args, cts_out, defined_out)


def forward_sweep(b: Builder, block: Block, args: Sequence[Value], active_args: set[int],
                  seeded: Sequence[bool]) -> Sweep:
    """Emit at `b` the forward computation of `block` on `args`, augmenting the loops
    whose gradient will be needed. `seeded[k]`: the terminator's operand k will get a
    cotangent."""
    active, needed = _block_activity(block, active_args, seeded)
    sweep = Sweep(list(block.body_ops()), active, needed)
    sweep.mapping.update(zip(block.args, args))
    for op in sweep.ops:
        rop = lookup(op.name).region_op
        with b.location(op.loc):
            if rop is not None and op in needed:
                sweep.residuals[op] = rop.forward(sweep, b, op, sweep.mapping)
            else:
                b.insert(op.clone(sweep.mapping))
    return sweep


def reverse_sweep(b: Builder, sweep: Sweep, seeds,
                  defined: Sequence[bool | Value] | None = None) -> "_Cotangents":
    """Emit at `b` the reverse sweep from `seeds`, pairs (value of the swept ops, its
    cotangent or None for zero); a value seeded twice gets the sum. `defined`: per
    seed, whether its cotangent exists (True for all by default). Returns every
    cotangent it found, by original value."""
    mapping, active = sweep.mapping, sweep.active
    cts = sweep.cotangents = _Cotangents(b)
    for k, (v, ct) in enumerate(seeds):
        cts.add(v, ct, defined=True if defined is None else defined[k])
    for op in reversed(sweep.ops):
        if op not in sweep.needed:
            continue
        out_cts = [cts.get(r) for r in op.results]
        if all(ct is None for ct in out_cts):
            continue
        with b.location(op.loc):
            ins = [mapping[v] for v in op.operands]
            outs = [mapping[r] for r in op.results]
            opdef = lookup(op.name)
            rop = opdef.region_op
            if rop is not None:
                in_cts = rop.backward(sweep, b, op, ins, out_cts, sweep.residuals.get(op))
            else:
                in_cts = _op_vjp(b, op, ins, outs, out_cts, cts)
            # whether its rule saw whether its results' cotangents exist
            exact = rop is not None or opdef.has(TracksDefined)
            fired = cts.any_defined(op.results)
            for v, ct in zip(op.operands, in_cts):
                if v not in active:
                    continue
                if not isinstance(ct, Defined):
                    cts.add(v, ct, op, fired)
                elif exact:
                    cts.add(v, ct.cotangent, op, ct.defined)
                else:
                    cts.add(v, ct.cotangent, op, b.both(fired, ct.defined))
    return cts


def differentiate_block(b: Builder, block: Block, args: Sequence[Value], active_args: set[int],
                        cts_out: Sequence[Value | None],
                        defined_out: Sequence[bool | Value] | None = None):
    """Both sweeps: returns the forward values of the terminator's operands, a
    cotangent (or None) per block argument and whether each exists
    (`_Cotangents.defined_of`). `defined_out`: whether each of `cts_out` exists
    (True for all by default)."""
    sweep = forward_sweep(b, block, args, active_args, [ct is not None for ct in cts_out])
    cts = reverse_sweep(b, sweep, list(zip(block.terminator.operands, cts_out)), defined_out)
    return ([sweep.mapping[v] for v in block.terminator.operands],
            [cts.get(a) for a in block.args], [cts.defined_of(a) for a in block.args])


def _op_vjp(b: Builder, op: Operation, ins, outs, out_cts, cts: "_Cotangents"):
    opdef = lookup(op.name)
    if opdef.vjp is None:
        raise IrflowError(f"op '{op.name}' has no VJP rule, so it cannot be differentiated",
                          op.loc)
    if len(outs) > 1 and not opdef.has(SparseCotangents):
        out_cts = [ct if ct is not None else cts.zero_like(r) if differentiable(r.type) else None
                   for ct, r in zip(out_cts, outs)]
    if opdef.has(TracksDefined):
        in_cts = opdef.vjp(b, out_cts, ins, outs, [cts.defined_of(r) for r in op.results],
                           **op.attrs)
    else:
        in_cts = opdef.vjp(b, out_cts, ins, outs, **op.attrs)
    if len(in_cts) != len(ins):
        raise IrflowError(f"the VJP of '{op.name}' returned {len(in_cts)} cotangents for "
                          f"{len(ins)} operands", op.loc)
    return in_cts
