"""Fusion: groups of elementwise ops, reductions and a contraction become `fused` ops.

A ``fused`` op (`irflow.ops.fused`) is one kernel: a loop nest over a domain whose
scalar body computes what the group's ops computed, with no tensor between them.
This pass decides the groups, one block at a time (regions too: a loop body gets
kernels of its own, since regions are closed), in one walk in program order:

- **Members.** Elementwise ops (`Elementwise` trait), reductions (`Reduction`) and
  contractions (`Contraction`: matmul, conv2d), pure and on tensors, whose result
  the block needs, directly or through other ops (a dead op, or a chain of them, is
  dce's to remove; it still reads its operands, as any op outside a group). Scalar constants are copied into each body that reads
  them.
- **Joining.** An elementwise op or a reduction joins the groups of its operands'
  producers, merging them, when the result is one domain: the broadcast of the
  members' shapes; every reduction reads the whole domain and reduces the same axes;
  and a group with a reduction or a contraction keeps its domain. A contraction
  starts a group of its own, so its consumers become its epilogue; a group holds
  at most one. A reduction without ``keepdim`` whose result no longer lines up with
  the domain's axes (a row sum ``[N,C] -> [N]``) ends its group's use of it: later
  ops read it from outside.
- **Order.** The fused op goes where the group's last member was, so an op outside
  the group that reads one of its values must come after it. Once such a reader
  has come, a later op joins the group only if it can move up above the reader
  (its operands all computed before it; the groups computing them then keep their
  place) and it reads a value of the group that no op outside read before it (a
  loss's backward reading the forward kernel's exponentials, an optimizer's update
  reading a gradient's sum: that value then need not be stored); the fused op then
  goes just before the first reader. A value stored anyway for an earlier reader
  is as cheap to read later, and moving its reader up would keep its result alive
  longer. Once an op with an effect (a print, an assert) follows, a group holding an
  op that may fail (`Fallible`: an integer division) takes no member, and such a
  group never moves up. So fusion never makes a cycle, and what fails still fails
  before the effects after it. A value that something outside the group needs is
  a result of the fused op, computed once.
- **Never duplicated.** A reduction or a contraction belongs to one group; no
  kernel recomputes it.
- **Cost rule for recomputation.** A group that reads an elementwise value made
  elsewhere recomputes it instead, when at most ``max-recompute`` elementwise ops
  compute it from values the group reads anyway (and scalar constants), each one
  whose every implementation gives the same bits (`EXACT`: arithmetic, comparisons,
  selections; not exp or tanh, which a kernel may compute an ulp away from NumPy,
  so that a recomputed copy would not equal the value computed outside): the kernel
  then reads one array fewer from memory and no new one, for a few arithmetic ops
  per element, which a memory-bound loop does for free. Otherwise it reads it.
- **Worth a kernel.** A group becomes a fused op when it has two ops or more (a
  contraction counts) over a domain that is not a scalar, and holds at most
  ``max-ops`` ops, which bounds the time to compile one kernel.

Every op copied into a body keeps its location. The fused op goes where the group's
last member was, with that member's location; the members are erased, and so are
constants and recomputed values that nothing reads any more.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ShapeError
from ..ir.core import Block, Module, Operation, OpResult, Region, Value
from ..ir.registry import Effect, lookup
from ..ir.rewrite import constant_value
from ..ir.traits import Contraction, Elementwise, Fallible, Reduction, Terminator, View
from ..ir.types import Shape, TensorType, broadcast_shapes
from .dce import has_io
from .framework import Pass, PipelineError, register_pass

_ELEMENTWISE, _REDUCTION, _CONTRACTION = "elementwise", "reduction", "contraction"


@register_pass
class Fuse(Pass):
    """Fuse elementwise ops, reductions and contraction epilogues into fused kernels."""

    name = "fuse"
    after_autodiff = True
    max_recompute: int = 4
    max_ops: int = 256

    def __post_init__(self):
        self._counts = {"fused-ops": 0, "ops-fused": 0, "ops-recomputed": 0}

    def run(self, module: Module) -> bool:
        self._counts = dict.fromkeys(self._counts, 0)
        changed = False
        for fn in module:
            changed |= self._fuse_block(fn.block)
        return changed

    def statistics(self) -> dict[str, int]:
        return dict(self._counts)

    def _fuse_block(self, block: Block) -> bool:
        changed = False
        for op in block.ops:
            for region in op.regions:
                changed |= self._fuse_block(region.blocks[0])
        groups = [g for g in _plan(block, self.max_recompute, self.max_ops)
                  if g.worth_a_kernel()]
        for group in sorted(groups, key=lambda g: g.order[g.root], reverse=True):
            _build(block, group)  # latest first: a group recomputing another's value goes first
            self._counts["fused-ops"] += 1
            self._counts["ops-fused"] += len(group.members)
            self._counts["ops-recomputed"] += len(group.recomputed)
        _erase_unused((op for g in groups for op in (*g.recomputed, *g.constants)),
                      groups[0].order if groups else {})
        return changed or bool(groups)


# ---------------------------------------------------------------- groups

@dataclass(eq=False)
class _Group:
    order: dict              # op -> its index in the block
    kinds: dict              # op -> what it is to fusion (`fusion_kind`)
    members: list[Operation]  # in no particular order; `root` is the last
    root: Operation
    domain: Shape
    axes: tuple[int, ...] | None = None    # the reduced axes, once a reduction joined
    anchor: Operation | None = None        # the contraction, if any
    closed: bool = False                   # no op may join any more
    # the block index of the first op outside the group that reads one of its values:
    # the fused op must come before it, so a later op joins only if it can move there
    deadline: int | None = None
    sinks: set[Value] = field(default_factory=set)  # reductions that no member may read
    recomputed: list[Operation] = field(default_factory=list)
    constants: list[Operation] = field(default_factory=list)

    @property
    def fixed(self) -> bool:
        return self.anchor is not None or self.axes is not None

    def worth_a_kernel(self) -> bool:
        return len(self.members) + len(self.recomputed) >= 2 and len(self.domain) > 0

    def in_order(self) -> list[Operation]:
        return sorted(self.members, key=self.order.__getitem__)

    def computed(self) -> list[Operation]:
        """The ops its body computes: members but the anchor, and recomputed ones."""
        return sorted((op for op in (*self.members, *self.recomputed) if op is not self.anchor),
                      key=self.order.__getitem__)

    def reads(self) -> list[Value]:
        """The values its body reads but does not compute, in order of first use
        (the anchor's result and scalar constants aside: bodies copy those)."""
        inside = {r for op in (*self.members, *self.recomputed) for r in op.results}
        seen: dict[Value, None] = {}
        for op in self.computed():
            for v in op.operands:
                if v not in inside and not _is_scalar_constant(v):
                    seen.setdefault(v, None)
        return list(seen)


def fusion_kind(op: Operation) -> str | None:
    """What `op` is to fusion: ``"elementwise"``, ``"reduction"`` or ``"contraction"``
    (a kind a group takes, see the module docstring), or None (never in a group)."""
    opdef = lookup(op.name, op.loc)
    if op.regions or opdef.effect is not Effect.PURE or len(op.results) != 1 \
            or not all(isinstance(v.type, TensorType) for v in (*op.operands, op.result)):
        return None
    if opdef.has(Elementwise):
        return _ELEMENTWISE
    if opdef.has(Reduction):
        return _REDUCTION if _reduced_axes(op) else None  # reducing no axis copies
    if opdef.has(Contraction):
        return _CONTRACTION
    return None


def _needed(block: Block, effects: set[Operation]) -> set[Operation]:
    """The ops of `block` that the terminator or an op with IO (`effects`) needs,
    directly or through others; the rest are dead, dce's to remove, not a kernel's to
    compute (regions are closed, so every use of a value of `block` is an op of it)."""
    needed: set[Operation] = set()
    for op in reversed(block.ops):
        if op.opdef.has(Terminator) or op in effects or \
                any(use.op in needed for r in op.results for use in r.uses):
            needed.add(op)
    return needed


def _is_scalar_constant(v: Value) -> bool:
    value = constant_value(v)
    return value is not None and value.ndim == 0


def _reduced_axes(op: Operation) -> tuple[int, ...]:
    axis = op.attrs["axis"]
    return tuple(range(op.operand(0).type.rank)) if axis is None else tuple(axis)


def _plan(block: Block, max_recompute: int, max_ops: int) -> list[_Group]:
    """The groups of `block`'s ops (see the module docstring), singletons included."""
    order = {op: i for i, op in enumerate(block.ops)}
    effects = {op for op in block.ops if has_io(op)}
    needed = _needed(block, effects)
    kinds = {op: fusion_kind(op) if op in needed else None for op in order}
    group_of: dict[Operation, _Group] = {}
    groups: list[_Group] = []
    failing: list[Operation] = []  # the members that may fail since the last effect
    for op in block.ops:
        kind = kinds[op]
        producers = list(dict.fromkeys(group_of[v.op] for v in op.operands
                                       if isinstance(v, OpResult) and v.op in group_of))
        joined: list[_Group] = []
        fixed: set[_Group] = set()  # the groups whose values the joined ones move above
        if kind in (_ELEMENTWISE, _REDUCTION):
            size = 1
            for g in producers:
                if g.closed or any(v in g.sinks for v in op.operands) \
                        or size + len(g.members) > max_ops \
                        or _merged(joined + [g], op, kind) is None:
                    continue
                above = _movable(joined + [g], op, order, group_of)
                if above is not None:
                    joined.append(g)
                    size += len(g.members)
                    fixed |= above
        for g in fixed:
            g.closed = True
        for g in producers:
            if g not in joined and g.deadline is None:
                g.deadline = order[op]
        if op in effects:
            # the fused op goes where its last member is: a group that may fail
            # (`Fallible`) takes no member after a print or an assert, so that it still
            # fails before them
            for member in failing:
                group_of[member].closed = True
            failing.clear()
        if kind is not None:
            _merge(joined, op, kind, (order, kinds), groups, group_of)
            if _may_fail(op):
                failing.append(op)
    live = [g for g in groups if group_of[g.root] is g]
    for group in live:
        _recompute(group, group_of, max_recompute)
    return live


def _movable(groups: list[_Group], op: Operation, order: dict,
             group_of: dict) -> set[_Group] | None:
    """Whether `op` may join `groups`, given where their fused op must go: before the
    first op outside that reads one of their values (the earliest `deadline`), where
    each member's operands must then be defined. None if it may not; else the other
    groups whose values they read, which must keep their place (and so take no member
    any more).

    Moving up pays only when `op` reads a value of the groups that no op outside
    them read before `op`: that value then need not be stored for it (a loss's
    backward reading the forward kernel's exponentials, an optimizer's update
    reading a gradient's sum). A value stored anyway for an earlier reader is as
    cheap to read later, and moving `op` up to it would store `op`'s result early
    and keep it alive longer (a backward op reading a forward activation would move
    into the forward kernel). Nothing that may fail moves up, past a print it
    followed."""
    deadline = min((g.deadline for g in groups if g.deadline is not None), default=None)
    if deadline is None:
        return set()
    members = [op, *(m for g in groups for m in g.members)]
    sinks = set().union(*(g.sinks for g in groups))
    if any(_may_fail(m) for m in members) or any(
            isinstance(v, OpResult) and group_of.get(v.op) in groups
            for g in groups if g.anchor is not None for v in g.anchor.operands) \
            or any(v in sinks for m in members for v in m.operands):
        # an anchor's operands come from outside its kernel, and so does a reduction's
        # result that no longer lines up with the domain (read per row inside, a row
        # sum [N,N] -> [N] would broadcast along the wrong axis)
        return None
    inside = set(members)
    if all(any(use.op not in inside and order[use.op] < order[op] for use in v.uses)
           for v in op.operands if isinstance(v, OpResult) and group_of.get(v.op) in groups):
        return None
    above: set[_Group] = set()
    for member in members:
        for v in member.operands:
            if not isinstance(v, OpResult) or v.op.name == "const":  # (copied up)
                continue
            producer = group_of.get(v.op)
            if producer in groups:
                continue
            if order[v.op if producer is None else producer.root] >= deadline:
                return None
            if producer is not None:
                above.add(producer)
    return above


def _may_fail(op: Operation) -> bool:
    """Whether `op` may raise when it runs (an integer division by zero)."""
    return op.opdef.has(Fallible) and not op.result.type.dtype.is_float


def _merged(groups: list[_Group], op: Operation, kind: str):
    """(domain, axes) of `groups` joined by `op`, or None if they cannot be one kernel."""
    if sum(g.anchor is not None for g in groups) > 1:
        return None
    own = op.operand(0).type.shape if kind == _REDUCTION else op.result.type.shape
    domain = own
    for g in groups:
        if g.domain != domain:
            try:
                domain = broadcast_shapes(domain, g.domain)
            except ShapeError:
                return None
    if any(g.fixed and g.domain != domain for g in groups):
        return None
    axes = {g.axes for g in groups if g.axes is not None}
    if kind == _REDUCTION:
        if own != domain:
            return None
        axes.add(_reduced_axes(op))
    if len(axes) > 1:
        return None
    return domain, (axes.pop() if axes else None)


def _merge(joined: list[_Group], op: Operation, kind: str, block_info: tuple,
           groups: list[_Group], group_of: dict) -> None:
    """Add `op` to the groups `joined`, merged into the largest (so that merging costs
    O(n log n) over a block), or to a group of its own; `group_of` follows."""
    if kind == _CONTRACTION:
        joined = [_Group(*block_info, [], op, op.result.type.shape, anchor=op)]
        groups.append(joined[0])
    else:
        if not joined:
            own = op.operand(0).type.shape if kind == _REDUCTION else op.result.type.shape
            joined = [_Group(*block_info, [], op, own)]
            groups.append(joined[0])
        joined[0].domain, joined[0].axes = _merged(joined, op, kind)
    group = max(joined, key=lambda g: len(g.members))
    for other in joined:
        if other is not group:
            group.members += other.members
            group.sinks |= other.sinks
            group.anchor = group.anchor or other.anchor
            group.deadline = min((d for d in (group.deadline, other.deadline) if d is not None),
                                 default=None)
            group_of.update((member, group) for member in other.members)
    group.domain, group.axes = joined[0].domain, joined[0].axes
    group.members.append(op)
    group.root = op
    group_of[op] = group
    if kind == _REDUCTION and not _lines_up(op, group.domain, group.axes):
        group.sinks.add(op.result)


def _lines_up(op: Operation, domain: Shape, axes) -> bool:
    """Whether the reduction's result broadcasts against the domain as its keepdim
    form does (it kept its dims, or dropped only leading ones)."""
    kept = tuple(1 if i in axes else d for i, d in enumerate(domain))
    shape = op.result.type.shape
    return (1,) * (len(domain) - len(shape)) + shape == kept


# Elementwise ops whose every implementation gives the same bits (IEEE's correctly
# rounded arithmetic, comparisons, selections, exact roundings and casts). Only these
# are recomputed: a kernel's own exp or tanh may differ from NumPy's by an ulp, and a
# recomputed copy of a value that is also computed outside the kernel would then not
# equal it (``h == h.max(...)`` finding no maximum).
EXACT = frozenset({
    "abs", "add", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cast", "ceil",
    "div", "eq", "floor", "ge", "gt", "isfinite", "isinf", "isnan", "le", "logical_and",
    "logical_not", "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "ne",
    "neg", "relu", "round", "select", "sign", "sqrt", "stop_gradient", "sub"})


def _recompute(group: _Group, group_of: dict, max_recompute: int) -> None:
    """Apply the cost rule: recompute read values whose producers read only what the
    group reads anyway. Only ops of groups built after this one (those ending before
    it) qualify, so that they are still there when its body copies them, and none
    that may fail (a copy would fail where the group runs, perhaps after a print)."""
    root = group.order[group.root]
    reads = group.reads()
    remaining = set(reads)
    for v in reads:
        cone = _cone(v, remaining - {v},
                     lambda op: group.kinds.get(op) == _ELEMENTWISE and op.name in EXACT
                     and not _may_fail(op) and group_of[op] is not group
                     and group.order[group_of[op].root] < root, max_recompute)
        if cone:
            remaining.discard(v)
            group.recomputed += [op for op in cone if op not in group.recomputed]
    group.recomputed.sort(key=group.order.__getitem__)


def _cone(v: Value, leaves: set[Value], allowed, limit: int):
    """The ops (at most `limit`, each `allowed`) that compute `v` from `leaves` and
    scalar constants, or None."""
    cone: list[Operation] = []
    stack = [v]
    while stack:
        w = stack.pop()
        if w in leaves or _is_scalar_constant(w):
            continue
        if not isinstance(w, OpResult) or not allowed(w.op):
            return None
        if w.op not in cone:
            cone.append(w.op)
            if len(cone) > limit:
                return None
            stack.extend(w.op.operands)
    return cone


# ---------------------------------------------------------------- building the fused op

def _build(block: Block, group: _Group) -> None:
    """Replace `group` by one fused op. An elementwise op whose kernel may return its
    operand (`View`: stop_gradient, an identity once autodiff has run) is not copied
    into the body: its operand stands for it, so the body holds no two names for one
    array, which the evaluator, writing an op over an operand that dies at it, would
    otherwise overwrite while the other name is still read."""
    members = set(group.members)
    root, anchor = group.root, group.anchor
    results = [r for op in group.in_order() for r in op.results
               if any(use.op not in members for use in r.uses)]
    entering = ([anchor.result] if anchor is not None else []) + [
        v for v in group.reads() if anchor is None or v is not anchor.result]
    body = Block([TensorType(v.type.dtype) for v in entering], [v.name for v in entering])
    inner: dict[Value, Value] = dict(zip(entering, body.args))
    for op in group.computed():
        for v in op.operands:
            if v not in inner and _is_scalar_constant(v):
                inner[v] = _copy_constant(body, v.op)
                group.constants.append(v.op)
        operands = [inner[v] for v in op.operands]
        view = op.opdef.trait(View)
        if view is not None:  # its operand itself (see the docstring)
            inner[op.result] = operands[view.operand]
            continue
        scalar = [TensorType(op.result.type.dtype)]
        if group.kinds[op] == _REDUCTION:
            copy = Operation("reduce", operands, scalar, {"kind": op.name}, loc=op.loc,
                             result_names=[op.result.name])
        else:
            copy = Operation(op.name, operands, scalar, op.attrs, loc=op.loc,
                             result_names=[op.result.name])
        body.append(copy)
        inner[op.result] = copy.result
    body.append(Operation("yield", [inner[r] for r in results], loc=root.loc))
    _drop_unread(body)
    regions = [Region([body])]
    operands = [v for v in entering if v is not (anchor.result if anchor else None)]
    if anchor is not None:
        regions.insert(0, _anchor_region(anchor))
        operands = list(anchor.operands) + operands
    fused = Operation("fused", operands, [r.type for r in results],
                      {"axes": group.axes or ()}, regions, loc=root.loc,
                      result_names=[r.name for r in results])
    if group.deadline is None:
        block.insert_before(root, fused)
    else:
        _insert_before_readers(block, fused, root, results, members)
    for old, new in zip(results, fused.results):
        old.replace_all_uses_with(new)
    for op in reversed(group.in_order()):
        op.erase()


def _drop_unread(body: Block) -> None:
    """Erase the body's ops whose values neither the yield nor another op reads: a
    member whose every reader outside the group now recomputes it (a group built
    after this one copied it into its own body) is not yielded, and computing it
    per element would be work for nothing (as dce drops unread ops)."""
    for op in reversed(list(body.ops)):
        if op.name != "yield" and not any(r.uses for r in op.results):
            op.erase()


def _insert_before_readers(block: Block, fused: Operation, root: Operation,
                           results: list[Value], members: set[Operation]) -> None:
    """Put `fused` where the group's last member `root` is, or, if an op outside the
    group that reads one of `results` comes before it (`_Group.deadline`: members
    joined after it), just before the first such op (the members after it move up),
    with the constants it reads that come later just above it."""
    readers = {use.op for r in results for use in r.uses if use.op not in members}
    position = {op: i for i, op in enumerate(block.ops)}
    first = min(readers, key=position.__getitem__, default=root)
    at = first if position[first] < position[root] else root
    block.insert_before(at, fused)
    for v in fused.operands:  # (`at` and what follows it come after the fused op now)
        if isinstance(v, OpResult) and position[v.op] >= position[at]:
            if v.op.name != "const":
                raise PipelineError(f"fuse: the fused op of {fused.loc} would read "
                                    f"'{v.op.name}' before it is computed")
            block.insert_before(fused, v.op.detach())


def _copy_constant(body: Block, const: Operation) -> Value:
    copy = Operation("const", (), const.result_types, const.attrs, loc=const.loc,
                     result_names=[const.result.name])
    body.append(copy)
    return copy.result


def _anchor_region(anchor: Operation) -> Region:
    block = Block([v.type for v in anchor.operands], [v.name for v in anchor.operands])
    copy = Operation(anchor.name, block.args, anchor.result_types, anchor.attrs,
                     loc=anchor.loc, result_names=[anchor.result.name])
    block.append(copy)
    block.append(Operation("yield", [copy.result], loc=anchor.loc))
    return Region([block])


def _erase_unused(ops, order: dict) -> None:
    """Erase those of `ops` (recomputed values, copied constants: ops of the block
    `order` numbers) that nothing reads now, latest first so that a chain goes whole."""
    for op in sorted({op for op in ops if op.parent is not None}, key=order.__getitem__,
                     reverse=True):
        if not any(r.uses for r in op.results):
            op.erase()
