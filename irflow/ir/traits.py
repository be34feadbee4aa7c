"""Traits: properties that several ops share, declared in their `defop`.

An op lists trait instances in ``traits=(...)``; subsystems ask ``opdef.has(Trait)``
or ``opdef.trait(Trait)`` rather than test op names, so a new op with the right
traits is handled everywhere at once. A trait may check the ops that carry it
(`Trait.verify`, run by the verifier) and may carry data (`View.operand`).

Interfaces with behaviour are traits too: `irflow.ir.region_op.RegionOp` (an op with
regions brings its own semantics, value flow and autodiff rules) and
`irflow.ir.symbols.CallOp` (an op that calls a function by symbol).
"""
from __future__ import annotations


class Trait:
    """Base class of traits. `label` is how the op reference (docs/ir.md) names it."""

    label = ""

    def verify(self, op) -> None:
        """Raise an `IrflowError` if `op` breaks what this trait promises."""

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class Terminator(Trait):
    """Ends a block (``return``, ``yield``, ``condition``); the verifier requires one,
    last, in every block."""

    label = "terminator"


class Elementwise(Trait):
    """Result element i depends only on element i of each operand (after NumPy
    broadcasting). Lets rewrites move broadcasts into the op and lets fusion merge
    chains of such ops into one loop."""

    label = "elementwise"


class View(Trait):
    """The kernel may return a view of operand `operand` instead of a new array
    (reshape, transpose, squeeze...): a buffer planner lets the result alias it."""

    label = "view of its operand"

    def __init__(self, operand: int = 0):
        self.operand = operand

    def __repr__(self) -> str:
        return f"View(operand={self.operand})"


class Fallible(Trait):
    """The kernel raises for some values of integer operands (a zero divisor of an
    integer ``div`` or ``mod``): code generators give its kernels a status, and
    fusion keeps it before an op with an effect that follows it, so that it still
    fails before a print or an assert runs."""

    label = "may fail on integers"


class SparseCotangents(Trait):
    """The op's VJP rule takes None for a result without a cotangent (autodiff gives
    other multi-result ops zeros there). A compiled ``call`` needs to know which of its
    results have none: its residuals have a cotangent only in a gradient of a
    gradient."""

    label = "VJP takes missing cotangents"


class TracksDefined(Trait):
    """The op's VJP rule also takes ``defined``, whether each result's cotangent exists
    (see `irflow.passes.autodiff`), and returns each operand's cotangent as `Defined`,
    which autodiff takes as it is. The list ops: whether a list's cotangent exists is
    said per element (a list of bools), because reading one element gives the whole
    list a cotangent, zeros elsewhere, while eager code gives the other elements none."""

    label = "VJP says which cotangents exist"


class ContainerOperands(Trait):
    """Operands may be stacks or lists (`StackType`, `ListType`: values that are not
    arrays): the stack and list ops, terminators, and region ops that carry them;
    other ops take tensors only."""

    label = "operands may be stacks or lists"


class Reduction(Trait):
    """Combines the elements of its one operand along the axes of its ``axis``
    attribute (``keepdim`` keeps them as size-1 dims): ``sum``, ``mean``, ``max``...
    Fusion computes such an op inside a fused kernel, as a ``reduce`` of the op's
    kind, from the elementwise values that feed it."""

    label = "reduction"


class Contraction(Trait):
    """A product that sums over operand axes (``matmul``, ``conv2d``): the costly op
    of a kernel, which fusion never duplicates and whose elementwise consumers it
    runs as the op's epilogue. Its kernel returns a new array (never a view of an
    operand), which an epilogue may overwrite.

    `channels(op)`, if given, says how the result depends on operand `weight`: it
    returns ``(result_axis, weight_axis)`` when result channel c (index c along
    ``result_axis``) is linear in slice c of the weight along ``weight_axis`` and
    depends on no other slice, or None when the op has no such axis (a matmul with a
    vector or batched weight). Scaling weight slice c then scales result channel c,
    which is how an inference BatchNorm folds into a Conv2D or Linear."""

    label = "contraction"

    def __init__(self, weight: int = 1, channels=None):
        self.weight = weight
        self._channels = channels

    def channel_axes(self, op) -> tuple[int, int] | None:
        return self._channels(op) if self._channels is not None else None

    def __repr__(self) -> str:
        return f"Contraction(weight={self.weight})"


class Affine(Trait):
    """An elementwise op that is affine in each operand while the others are fixed:
    ``rule(k, others)`` gives ``(scale, shift)`` with ``result = scale * operand_k +
    shift`` for the arrays `others` (the other operands' values, in order), or None
    where it is not affine in operand k (a constant divided by x). Lets a pass
    compose chains of such ops on constants into one scale and shift."""

    label = "affine in each operand"

    def __init__(self, rule):
        self.rule = rule

    def scale_and_shift(self, k: int, others: list):
        return self.rule(k, others)
