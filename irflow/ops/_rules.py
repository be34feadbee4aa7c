"""Helpers shared by the op declarations: operand checks, axis handling, the
`unbroadcast` step that VJP rules of broadcasting ops end with, and the
canonicalization patterns several ops declare."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import IntegerDivisionByZero, ShapeError
from ..ir.registry import OpDef, lookup, register
from ..ir.rewrite import Pattern, constant_value
from ..ir.traits import Elementwise
from ..ir.types import TensorType

KINDS = {
    "float": ("float",),
    "int": ("int",),
    "number": ("float", "int"),
    "bool": ("bool",),
    "any": ("float", "int", "bool"),
    "integral": ("int", "bool"),
}


def defop(name: str, infer, kernel=None, **fields) -> OpDef:
    """Declare and register one op (see `irflow.ir.registry.OpDef` for the fields)."""
    return register(OpDef(name, infer, kernel, **fields))


def quiet(kernel):
    """`kernel` with NumPy's floating-point warnings silenced: an overflow to inf, a
    log of 0 or a 0/0 gives inf or NaN, as in Paddle, without a RuntimeWarning from
    inside irflow (errstate is thread-local, so no global setting changes). Its
    ``__wrapped__`` is `kernel`, for a caller that silences warnings once around many
    kernels (a fused kernel's body)."""
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return kernel(*args, **kwargs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    run.__doc__ = kernel.__doc__
    run.__wrapped__ = kernel  # as functools.wraps: a ufunc's wrapper is its out kernel too
    return run


def check_divisor(y: np.ndarray) -> None:
    """Integer division and remainder by zero are errors, as in Paddle (NumPy would
    give 0 with a warning)."""
    if y.dtype.kind in "iub" and not y.all():
        raise IntegerDivisionByZero("integer division by zero (// or % with a zero "
                                    "divisor); Paddle raises here too")


def check_kind(t: TensorType, kind: str, what: str = "operand") -> None:
    if t.dtype.kind not in KINDS[kind]:
        if t.dtype.kind == "bfloat16":
            raise ShapeError(f"{what} {t} is bfloat16, which irflow stores but does not "
                             "compute with; cast it to float32 first (x.astype('float32'))")
        raise ShapeError(f"{what} must be {kind.replace('number', 'a float or int')} "
                         f"typed, got {t}")


def same_dtype(types: Sequence[TensorType]) -> None:
    first = types[0].dtype
    for t in types[1:]:
        if t.dtype is not first:
            raise ShapeError("operand dtypes differ: "
                             + ", ".join(str(t) for t in types)
                             + "; insert a cast to make them equal")


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """A non-negative axis in ``[0, rank)``, from a possibly negative one."""
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"{what} {axis} is out of range for a rank-{rank} operand")
    return axis % rank if rank else 0


def norm_axes(axis, rank: int) -> tuple[int, ...] | None:
    """None (all axes) or a sorted tuple of distinct non-negative axes."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = sorted({norm_axis(a, rank) for a in axes})
    if len(out) != len(axes):
        raise ShapeError(f"axis {axis} repeats an axis")
    return tuple(out)


def unbroadcast(b, g, to: TensorType):
    """Sum the cotangent `g` of a broadcast result back to the operand type `to`."""
    if g.type.shape == to.shape:
        return g
    lead = g.type.rank - to.rank
    if lead:  # broadcasting added these axes: sum them away
        g = b.sum(g, axis=tuple(range(lead)))
    stretched = tuple(i for i, d in enumerate(to.shape) if d == 1 and g.type.shape[i] != 1)
    if stretched:  # these size-1 axes were stretched: sum, keeping them as 1
        g = b.sum(g, axis=stretched, keepdim=True)
    return g


# ---------------------------------------------------------------- canonicalization patterns

class ReturnsOperand(Pattern):
    """The op gives back its operand when the result has the operand's type and
    `when(op)` holds (a reshape or cast to the same type, the identity transpose)."""

    def __init__(self, when=None):
        self.when = when

    def rewrite(self, op, rewriter) -> bool:
        x = op.operand(0)
        if op.result.type != x.type or (self.when is not None and not self.when(op)):
            return False
        rewriter.replace(op, [x])
        return True


class Involution(Pattern):
    """``f(f(x))`` is ``x`` (``neg``)."""

    def rewrite(self, op, rewriter) -> bool:
        inner = getattr(op.operand(0), "op", None)
        if inner is None or inner.name != op.name:
            return False
        rewriter.replace(op, [inner.operand(0)])
        return True


class NeutralOperand(Pattern):
    """``x op e`` is ``x`` when operand `keep` has the result type and the other is a
    constant whose every element is `element` (``x * 1``, ``x - 0``), a float's sign
    included: ``x + 0.0`` is not ``x`` (-0.0 + 0.0 is 0.0), so add's element is -0.0
    (``x + -0.0`` is x for every float; -0.0 is 0 for integers)."""

    def __init__(self, element, keep=(0, 1)):
        self.element = element
        self.keep = keep

    def _neutral(self, value: np.ndarray) -> bool:
        if value.size == 0 or not bool(np.all(value == self.element)):
            return False
        return value.dtype.kind != "f" or bool(np.all(np.signbit(value)
                                                      == np.signbit(self.element)))

    def rewrite(self, op, rewriter) -> bool:
        for k in self.keep:
            other = constant_value(op.operand(1 - k))
            if op.operand(k).type == op.result.type and other is not None \
                    and self._neutral(other):
                rewriter.replace(op, [op.operand(k)])
                return True
        return False


class SkipInnerOfChain(Pattern):
    """``f(f(x))`` reads ``x`` directly when the outer op alone gives the same result
    (a reshape of a reshape)."""

    def rewrite(self, op, rewriter) -> bool:
        inner = getattr(op.operand(0), "op", None)
        if inner is None or inner.name != op.name:
            return False
        rewriter.set_operand(op, 0, inner.operand(0))
        return True


class BypassBroadcast(Pattern):
    """Elementwise users of a ``broadcast_to`` read its input instead, wherever their
    result type stays the same (they broadcast anyway). Autodiff makes many of
    these: a scalar cotangent broadcast to a shape, then multiplied."""

    def rewrite(self, op, rewriter) -> bool:
        source = op.operand(0)
        changed = False
        for use in list(op.result.uses):
            user = use.op
            opdef = lookup(user.name)
            if not opdef.has(Elementwise) or opdef.infer is None:
                continue
            types = [v.type for v in user.operands]
            types[use.index] = source.type
            try:
                if opdef.result_types(types, user.attrs) == user.result_types:
                    rewriter.set_operand(user, use.index, source)
                    changed = True
            except ShapeError:  # the type rule rejects it: keep the broadcast
                continue
        return changed
