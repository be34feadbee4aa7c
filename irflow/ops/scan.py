"""Scans: the running sum `cumsum` and the running product `cumprod` along one axis.

`cumsum`'s VJP is a `cumsum` of the cotangent in the other direction (``reverse``).
`cumprod`'s is its own op, `cumprod_grad`, because the usual shortcut, dividing a
reversed running sum by x, fails where x holds a zero; the kernel instead runs the
exact recurrence along the axis (see `_cumprod_grad`).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ._rules import check_kind, defop, norm_axis, quiet, same_dtype


def _axis_canon(attrs, types):
    return {**attrs, "axis": norm_axis(attrs["axis"], types[0].rank)}


def _scan_infer(types, attrs):
    (t,) = types
    check_kind(t, "number")
    if t.rank == 0:
        raise ShapeError(f"a scan needs an operand with at least one axis, got {t}")
    return t


def _cumsum_kernel(x, axis, reverse):
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumsum_vjp(b, g, i, o, axis, reverse):
    if not i[0].type.dtype.is_float:
        return [None]
    return [b.cumsum(g[0], axis=axis, reverse=not reverse)]


defop("cumsum", _scan_infer, quiet(_cumsum_kernel), arity=1, attrs={"axis": -1, "reverse": False},
      canonicalize=_axis_canon, vjp=_cumsum_vjp,
      doc="cumsum(x) {axis, reverse}: the running sum of x along `axis` (default -1), "
          "from the end backwards if `reverse`; same type as x. The VJP is the cumsum "
          "of the cotangent in the other direction")


def _cumprod_vjp(b, g, i, o, axis):
    if not i[0].type.dtype.is_float:
        return [None]
    return [b.cumprod_grad(i[0], g[0], axis=axis)]


defop("cumprod", _scan_infer, quiet(lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype)),
      arity=1, attrs={"axis": -1}, canonicalize=_axis_canon, vjp=_cumprod_vjp,
      doc="cumprod(x) {axis}: the running product of x along `axis` (default -1); same "
          "type as x. The VJP is `cumprod_grad`, exact where x holds zeros")


def _cumprod_grad_infer(types, attrs):
    x, g = types
    check_kind(x, "float")
    same_dtype(types)
    if x.shape != g.shape:
        raise ShapeError(f"the cotangent {g} does not match the operand {x}")
    return x


def _cumprod_grad(x, g, axis):
    """dL/dx_i = E_i * S_i, with E_i = x_0 ... x_{i-1} (the exclusive running product)
    and S_i = g_i + x_{i+1} * S_{i+1} (the cotangent gathered back from the end):
    every product that contains x_i, without dividing by it."""
    x, g = np.moveaxis(x, axis, 0), np.moveaxis(g, axis, 0)
    n = x.shape[0]
    exclusive = np.empty_like(x)
    if n:
        exclusive[0] = 1
        np.cumprod(x[:-1], axis=0, out=exclusive[1:])
    gathered = np.empty_like(g)
    running = np.zeros_like(g[0]) if n else None
    for k in range(n - 1, -1, -1):
        running = g[k] + (x[k + 1] * running if k + 1 < n else 0)
        gathered[k] = running
    return np.moveaxis(exclusive * gathered, 0, axis)


defop("cumprod_grad", _cumprod_grad_infer, quiet(_cumprod_grad), arity=2, attrs={"axis": -1},
      canonicalize=_axis_canon,
      doc="cumprod_grad(x, g) {axis}: the cotangent of cumprod's operand x given the "
          "cotangent g of its result, computed by a recurrence along `axis` that is exact "
          "where x is zero. No VJP: second-order gradients through cumprod are not "
          "supported")
