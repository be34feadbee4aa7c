"""One index per row: ``take_along_axis`` and ``put_along_axis`` as one-hot selections.

A cross-entropy loss picks one log-probability per row, ``take_along_axis(logp,
label, axis=1)`` with a ``[N, 1]`` index, and its gradient scatters one value per
row back, ``put_along_axis(zeros, label, g, axis=1, reduce="add")``. As gathers
and scatters these are two steps no kernel fuses, each a NumPy call of fancy
indexing. With one index per row along an axis of static size ``n``, both are
elementwise selections against the positions along that axis (a ``[1, n]``
constant ``iota``), which fusion puts into the kernels around them:

- the row's position: ``hit = eq(iota, wrapped)``, where ``wrapped`` is the index
  with ``n`` added to a negative one (NumPy's and Paddle's meaning of -1);
- ``take_along_axis(x, index)`` is ``max(select(hit, x, lowest), axis, keepdim)``:
  the one element the row selects, exactly (a NaN stays a NaN, a -0.0 a -0.0),
  ``lowest`` being -inf for floats and the dtype's least integer for integers;
- ``put_along_axis(x, index, values, reduce="add")`` is ``add(x, select(hit,
  values, -0.0))``: x + -0.0 is x for every float, -0.0 and NaN included (0 for
  integers); ``reduce="assign"`` is ``select(hit, values, x)``.

An index out of ``[-n, n)`` is an error, as the gather's and the scatter's: an
``assert`` (``error="IndexError"``) of ``all(-n <= index < n)`` runs before the
first selection reads it, with the op's location in its message. One such check
and one ``hit`` serve every op of an index, axis and size.

Only static shapes with ``index.shape[axis] == 1`` and ``n <= max-width`` are
rewritten: the pick reads all ``n`` elements of a row where the gather reads one,
which is nothing next to computing the row (a softmax over it) but is when the
row is an input much wider than the index (a scatter copies x anyway). Boolean and
bfloat16 operands, unsigned indices and other index shapes keep the ops. The pass
runs after autodiff: it rewrites the ops autodiff made too.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from ..ir.builder import Builder
from ..ir.core import Module, Operation, OpResult, Value
from ..ir.rewrite import constant_value
from ..ir.types import broadcast_shapes
from .framework import Pass, register_pass

_OPS = ("take_along_axis", "put_along_axis")


@register_pass
class OneHot(Pass):
    """Rewrite take/put_along_axis of one index per row as one-hot selections."""

    name = "one-hot"
    after_autodiff = True
    max_width: int = 128

    def __post_init__(self):
        self._rewritten = 0

    def run(self, module: Module) -> bool:
        self._rewritten = 0
        # (block, index, axis, n) -> the index's one-hot mask there, checked (regions
        # are closed: a mask serves the ops of its own block)
        hits: dict[tuple, Value] = {}
        for fn in module:
            for op in list(fn.block.walk()):
                if op.name in _OPS and self._applies(op):
                    self._rewrite(op, hits)
                    self._rewritten += 1
        return bool(self._rewritten)

    def statistics(self) -> dict[str, int]:
        return {"ops-rewritten": self._rewritten}

    @staticmethod
    def _rewrite(op: Operation, hits: dict) -> None:
        axis = op.attrs["axis"]
        x, index = op.operand(0), op.operand(1)
        n = x.type.shape[axis]
        b = Builder.before(op)
        key = (op.parent, index, axis, n)
        if key not in hits:
            hits[key] = _checked_hit(b, op, index, axis, n)
        hit = hits[key]
        if op.name == "take_along_axis":
            lowest = b.constant(_lowest(x.type.dtype), x.type.dtype)
            new = b.max(b.select(hit, x, lowest), axis=(axis,), keepdim=True)
        else:
            # a constant x of one value (the zeros of a gradient) as that scalar: no
            # array for the kernel to read (the selection gives the shape)
            values = op.operand(2)
            covers = broadcast_shapes(hit.type.shape, values.type.shape) == x.type.shape
            base = _splat(b, x) if covers else x
            if op.attrs["reduce"] == "add":
                neutral = b.constant(_neutral(x.type.dtype), x.type.dtype)
                new = b.add(base, b.select(hit, values, neutral))
            else:
                new = b.select(hit, values, base)
        op.result.replace_all_uses_with(new)
        op.erase()
        if isinstance(x, OpResult) and x.op.name == "const" and not x.uses:
            x.op.erase()  # the array `_splat` replaced by its one value

    def _applies(self, op: Operation) -> bool:
        x, index = op.operand(0).type, op.operand(1).type
        axis = op.attrs["axis"]
        static = all(isinstance(d, int) for v in op.operands for d in v.type.shape)
        signed = np.issubdtype(index.dtype.np, np.signedinteger)  # (-n is an index)
        return (static and signed and x.dtype.kind in ("float", "int")
                and index.shape[axis] == 1 and x.shape[axis] <= self.max_width)


def _checked_hit(b: Builder, op: Operation, index: Value, axis: int, n: int) -> Value:
    """The bool mask of the position `index` names along `axis` (of size `n`), after
    an assert that every index is in [-n, n)."""
    dtype = index.type.dtype
    inside = b.logical_and(b.ge(index, b.constant(-n, dtype)), b.lt(index, b.constant(n, dtype)))
    where = f"{op.loc}: " if op.loc is not None else ""
    b.create("assert", [b.all(inside)],
             {"msg": f"{where}{op.name}: an index is out of bounds for axis {axis} with "
                     f"size {n} (indices must be in [{-n}, {n}))", "error": "IndexError"})
    zero = b.constant(0, dtype)
    wrapped = b.select(b.lt(index, zero), b.add(index, b.constant(n, dtype)), index)
    shape = [1] * index.type.rank
    shape[axis] = n
    iota = b.constant(np.arange(n).reshape(shape), dtype)
    return b.eq(iota, wrapped)


def _splat(b: Builder, x: Value) -> Value:
    """`x`, or the scalar constant every element of a constant `x` equals."""
    value = constant_value(x)
    if value is None or value.ndim == 0 or not value.size:
        return x
    first = value.flat[0]
    floats = value.dtype.kind == "f"
    if not np.array_equal(value, np.full_like(value, first), equal_nan=floats) \
            or floats and not (np.signbit(value) == np.signbit(first)).all():
        return x
    return b.constant(first, x.type.dtype)


def _lowest(dtype: dtypes.DType):
    """The identity of max: -inf, or the least integer of the dtype."""
    return -np.inf if dtype.kind == "float" else np.iinfo(dtype.np).min


def _neutral(dtype: dtypes.DType):
    """What adding changes nothing of: -0.0 (x + -0.0 is x, -0.0 included), or 0."""
    return -0.0 if dtype.kind == "float" else 0


__all__ = ["OneHot"]
