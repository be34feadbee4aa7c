"""Helpers shared by the op declarations: operand checks, axis handling, and the
`unbroadcast` step that VJP rules of broadcasting ops end with."""
from __future__ import annotations

from typing import Sequence

from ..errors import ShapeError
from ..ir.registry import OpDef, register
from ..ir.types import TensorType, shape_str

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


def check_kind(t: TensorType, kind: str, what: str = "operand") -> None:
    if t.dtype.kind not in KINDS[kind]:
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


def check_shape_equal(a: TensorType, b: TensorType, what: str) -> None:
    if a.shape != b.shape:
        raise ShapeError(f"{what}: shapes {shape_str(a.shape)} and {shape_str(b.shape)} differ")


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
