"""Fused kernels: `fused`, the op that the ``fuse`` pass makes of a group of ops, and
`reduce`, the reductions inside one.

A fused op computes, in one loop nest over its *domain*, what a group of
elementwise ops, reductions along one set of axes and at most one contraction
(matmul, conv2d) computed with a tensor between each pair::

    %y, %m = fused %x, %w, %b {axes=[1]} : (f32[N,C], f32[N,1]) {
    ^body(%x: f32, %w: f32, %b: f32):
      %h = mul %x, %w : f32
      %s = add %h, %b : f32
      %m = reduce %s {kind="mean"} : f32
      %d = sub %s, %m : f32
      yield %d, %m
    }

- **Body.** The ``^body`` region is the scalar computation of one element: its
  arguments are one element of each operand, of the operand's dtype, and its ops
  are elementwise ops on scalars, scalar constants and `reduce`. Operands enter
  with NumPy broadcasting: the domain is the broadcast of their shapes
  (``[N,C]`` here), and an operand of shape ``[C]`` gives element ``c`` at every
  index ``(n, c)``.
- **Reductions.** ``axes`` names the reduced axes of the domain. ``reduce %v
  {kind=K}`` is reduction K (``sum``, ``mean``, ``max``... the ops with the
  `Reduction` trait) of ``%v`` over those axes, a value that varies only along the
  other axes (a *row* value); a body value that depends on no varying element is a
  row value too. Each `reduce` reads a value that spans the whole domain.
- **Anchor.** An optional first region, ``^anchor``, holds one contraction (or any
  op) on the leading operands, at tensor level; its result enters the body as its
  first argument, element by element: the body is the op's *epilogue*.
- **Results.** Result k is the k-th yielded value over the domain: its shape is the
  one the value spans (the broadcast of what it depends on, with size 1 along the
  reduced axes for a row value), or that shape without some of its size-1 axes:
  leading ones, or for a row value the reduced axes (a reduction without
  ``keepdim``).

Every op keeps its source location, so an error inside the kernel names the user's
line. `layout` derives what a backend needs (domain, axes, the shape of every body
value); the LLVM backend emits, per index of the unreduced axes, one loop over the
reduced axes per `reduce` (computing the element values it reads), then one loop
storing the element results, with the anchor computed first into a buffer the
epilogue reads while it is in cache. The interpreter and the executor run the same
evaluator: the body's ops on whole arrays, as NumPy broadcasting makes them; their
results are bit for bit those of the ops unfused.

Fusion runs after autodiff in every pipeline (as XLA's and TorchInductor's do:
the backward gets fused on its own terms and no matmul is recomputed in it), so
`fused` has no reverse-mode rule and says so.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import IrflowError, ShapeError, VerificationError
from ..ir.core import Block, Operation, Value
from ..ir.region_op import Arg, Operand, RegionOp, Result, Yield, check_region
from ..ir.registry import REQUIRED, is_registered, lookup
from ..ir.traits import Elementwise, Reduction
from ..ir.types import Shape, TensorType, broadcast_shapes, shape_str
from ._rules import defop
from .fused_numpy import body_evaluator as numpy_body_evaluator
from .fused_numpy import evaluator as numpy_evaluator, located_kernel, plain_anchor
from .fused_numpy import anchor_result, fresh_anchor, out_evaluator as numpy_out_evaluator


# ---------------------------------------------------------------- layout

@dataclass
class FusedLayout:
    """What a fused op computes, as a backend needs it.

    `n_anchor` operands feed the ``^anchor`` region (0 without one); the others, after
    the anchor's result, enter the body. `shapes` holds the shape every body value
    spans in the domain, so a backend knows which are row values (size 1 along every
    reduced axis) and which results drop the reduced axes."""

    body: Block
    n_anchor: int
    anchored: bool
    domain: Shape
    axes: tuple[int, ...]
    shapes: dict[Value, Shape]
    reductions: frozenset[Operation]   # the body's `reduce` ops

    def is_row(self, value: Value) -> bool:
        """Whether `value` is the same along every reduced axis."""
        shape = self.shapes[value]
        lead = len(self.domain) - len(shape)
        return all(a < lead or shape[a - lead] == 1 for a in self.axes)

    def dropped_axes(self, value: Value, shape: Shape) -> tuple[int, ...] | None:
        """The size-1 axes of what `value` spans that a result of `shape` drops: none,
        leading ones (a value computed from a reduction that dropped leading axes) or
        the reduced axes (a reduction without ``keepdim``); None if `shape` is none
        of those."""
        spans = self.shapes[value]
        lead = len(spans) - len(shape)
        if lead >= 0 and spans[lead:] == shape and all(d == 1 for d in spans[:lead]):
            return tuple(range(lead))
        if len(spans) == len(self.domain) and self.is_row(value) \
                and tuple(d for i, d in enumerate(spans) if i not in self.axes) == shape:
            return self.axes
        return None


def layout(op: Operation) -> FusedLayout:
    """The layout of fused op `op`; raises `VerificationError` where it is malformed."""
    anchored = len(op.regions) == 2
    entering: list[TensorType] = []
    n_anchor = 0
    if anchored:
        n_anchor = len(op.regions[0].blocks[0].args)
        if n_anchor > len(op.operands):
            raise VerificationError(f"the anchor region takes {n_anchor} argument(s) but "
                                    f"fused has {len(op.operands)} operand(s)")
        check_region(op, 0, "anchor", [v.type for v in op.operands[:n_anchor]], "yield")
        yielded = op.regions[0].blocks[0].terminator.operands
        if len(yielded) != 1:
            raise VerificationError(f"the anchor region yields {len(yielded)} values, "
                                    "expected one tensor")
        entering.append(yielded[0].type)
    entering += [v.type for v in op.operands[n_anchor:]]
    if not all(isinstance(t, TensorType) for t in entering):
        raise VerificationError("fused operands must be tensors")
    check_region(op, len(op.regions) - 1, "body", [TensorType(t.dtype) for t in entering],
                 "yield")
    try:
        domain = broadcast_shapes(*(t.shape for t in entering))
    except ShapeError as e:
        raise VerificationError(f"the operands of fused do not broadcast: {e.message}") from None
    axes = op.attrs["axes"]
    if any(not 0 <= a < len(domain) for a in axes):
        raise VerificationError(f"axes {list(axes)} are not axes of the domain "
                                f"{shape_str(domain)}")
    body = op.regions[-1].blocks[0]
    shapes: dict[Value, Shape] = {arg: t.shape for arg, t in zip(body.args, entering)}
    for inner in body.body_ops():
        shapes[inner.result] = _body_shape(inner, shapes, domain, axes)
    reductions = frozenset(inner for inner in body.body_ops() if lookup(inner.name) is REDUCE)
    result = FusedLayout(body, n_anchor, anchored, domain, axes, shapes, reductions)
    _check_results(op, result)
    return result


def _body_shape(inner: Operation, shapes: dict, domain: Shape, axes) -> Shape:
    """The shape a body op's value spans, checking the op may be in a body."""
    opdef = lookup(inner.name, inner.loc)
    if inner.regions or len(inner.results) != 1 or inner.result.type.rank != 0:
        raise VerificationError(f"'{inner.name}' in a fused body must give one scalar")
    if inner.name == "const":
        return ()
    if opdef is REDUCE:
        if not axes:
            raise VerificationError("reduce in a fused body with no reduced axes")
        if shapes[inner.operand(0)] != domain:
            raise VerificationError(f"reduce reads a value of shape "
                                    f"{shape_str(shapes[inner.operand(0)])}, not the whole "
                                    f"domain {shape_str(domain)}")
        return tuple(1 if i in axes else d for i, d in enumerate(domain))
    if not opdef.has(Elementwise):
        raise VerificationError(f"a fused body holds elementwise ops, scalar constants and "
                                f"reduce, not '{inner.name}'")
    return broadcast_shapes(*(shapes[v] for v in inner.operands))


def _check_results(op: Operation, lay: FusedLayout) -> None:
    yielded = lay.body.terminator.operands
    if len(yielded) != len(op.results):
        raise VerificationError(f"the body yields {len(yielded)} values for "
                                f"{len(op.results)} results")
    for k, (v, r) in enumerate(zip(yielded, op.results)):
        if v.type.dtype is not r.type.dtype or lay.dropped_axes(v, r.type.shape) is None:
            raise VerificationError(f"result {k} is {r.type} but the body yields a "
                                    f"{v.type.dtype.name} spanning {shape_str(lay.shapes[v])}")


# ---------------------------------------------------------------- the region op

class Fused(RegionOp):
    """``fused xs...``: an optional ``^anchor`` region on the leading operands, then a
    scalar ``^body`` (see the module docstring)."""

    regions = ("anchor", "body")
    differentiable = False
    writes_results = True

    def region_labels(self, op):
        return self.regions if len(op.regions) == 2 else self.regions[1:]

    def verify(self, op) -> None:
        layout(op)

    def flow(self, op):
        # The anchor's result entering the body is the op's own business: no edge, so
        # dce keeps it.
        anchored = len(op.regions) == 2
        n_anchor = len(op.regions[0].blocks[0].args) if anchored else 0
        body = len(op.regions) - 1
        for i in range(n_anchor):
            yield Operand(i), Arg(0, i)
        for i in range(n_anchor, len(op.operands)):
            yield Operand(i), Arg(body, i - n_anchor + anchored)
        for k in range(len(op.results)):
            yield Yield(body, k), Result(k)

    def evaluator(self, op):
        return numpy_evaluator(op, layout(op))

    def out_evaluator(self, op, into):
        return numpy_out_evaluator(op, layout(op), into)

    def written_over(self, op, into):
        k = anchor_result(op, layout(op), into)
        return [] if k is None else [(op.regions[0].blocks[0].terminator.operand(0), k)]

    def layout(self, op) -> FusedLayout:
        """`layout(op)`, for backends (which see ops through the registry)."""
        return layout(op)

    def body_evaluator(self, op, into=None):
        """For backends: the NumPy evaluator of the body alone, on the values entering
        it (the anchor's result first); with `into`, its out evaluator."""
        return numpy_body_evaluator(op, layout(op), into)

    def anchor_kernel(self, op):
        """For backends: the anchor as a function of the anchor's operands (its op's
        kernel, errors located at that op) when it is one op on them, else None."""
        anchor = plain_anchor(op) if len(op.regions) == 2 else None
        return None if anchor is None else located_kernel(anchor)

    def anchor_op(self, op):
        """For backends: the anchor's op when it is one op on the anchor's arguments
        (the op `anchor_kernel` runs), else None; a backend with code of its own for
        that op (a float32 matmul) reads its types and attributes."""
        return plain_anchor(op) if len(op.regions) == 2 else None

    def anchor_out_kernel(self, op):
        """For backends: the anchor's out kernel (``kernel(*operands, out=buffer)``,
        errors located at its op) when the anchor is one op on the anchor's arguments
        and has one, else None."""
        anchor = plain_anchor(op) if len(op.regions) == 2 else None
        if anchor is None or lookup(anchor.name).out_kernel is None:
            return None
        return located_kernel(anchor, out=True)

    def anchor_is_new(self, op) -> bool:
        """For backends: whether the anchor's result is always a new array nobody else
        holds (its one op is a contraction), which the body may be written over."""
        anchor = plain_anchor(op) if len(op.regions) == 2 else None
        return fresh_anchor(anchor)

    def backward(self, ad, b, op, ins, out_cts, residual):
        raise IrflowError("a 'fused' op cannot be differentiated: fusion runs after "
                          "autodiff, so differentiate the program before the 'fuse' pass "
                          "(irflow.compile does)", op.loc)


def _canon_axes(attrs, types):
    axes = attrs["axes"]
    if not isinstance(axes, tuple) or not all(isinstance(a, int) and a >= 0 for a in axes):
        raise ShapeError(f"axes must be a list of non-negative ints, got {axes!r}")
    return {**attrs, "axes": tuple(sorted(set(axes)))}


FUSED = Fused()
defop("fused", None, arity=(0, None), attrs={"axes": ()}, canonicalize=_canon_axes,
      traits=(FUSED,),
      doc="fused(xs...): one kernel made by the `fuse` pass. The region ^body (after an "
          "optional ^anchor) takes one scalar per operand, of its dtype, and computes one "
          "element with elementwise ops, scalar constants and `reduce`; operands broadcast "
          "to the domain, the broadcast of their shapes. Attribute `axes` (default none): "
          "the domain's axes that `reduce` reduces. ^anchor, if present, takes the leading "
          "operands as tensors and yields one tensor (a matmul or conv2d), which enters "
          "^body as its first argument, so the body is its epilogue. Result k is the k-th "
          "yielded value over the domain: the shape it spans, or that shape without leading "
          "size-1 axes, or for a value that does not vary along the reduced axes, without "
          "them. Fusion runs after autodiff, so fused is not differentiable")


# ---------------------------------------------------------------- reduce

def _reduce_infer(types, attrs):
    (t,) = types
    name = attrs["kind"]
    kind = lookup(name) if isinstance(name, str) and is_registered(name) else None
    if kind is None or not kind.has(Reduction):
        raise ShapeError(f"reduce's kind must name a reduction (sum, mean, max, ...), got "
                         f"{attrs['kind']!r}")
    if t.rank != 0:
        raise ShapeError(f"reduce takes the scalar of a fused body, got {t}")
    return kind.result_types([t], {"axis": None, "keepdim": False})


def _reduce_verify(op) -> None:
    owner = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    if owner is None or lookup(owner.name).region_op is not FUSED \
            or op.parent is not owner.regions[-1].blocks[0]:
        raise VerificationError("reduce may only appear in the body of a fused op")


REDUCE = defop("reduce", _reduce_infer, None, arity=1, attrs={"kind": REQUIRED},
               verify=_reduce_verify,
               doc="reduce(v) {kind}: in the body of a fused op, reduction `kind` (the name "
                   "of a reduction op: sum, prod, mean, max, min, any, all) of the scalar v "
                   "over the fused op's reduced axes; the result varies only along the other "
                   "axes. Its dtype is v's")


__all__ = ["FUSED", "FusedLayout", "REDUCE", "layout"]
