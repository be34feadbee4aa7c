"""How a tensor's value is shown: ``Tensor(shape=[2], dtype=float32, ...)``, as Paddle 3.3
prints it.

Shared by `Tensor.__repr__` and by the ``print`` op of compiled programs, so that
``print(x)`` shows the same text eagerly and compiled. It lives with the ops, below
the Tensor class, because the ``print`` kernel may not import what is above it.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes

PLACE = "Place(cpu)"


# Paddle's default print options (paddle.set_printoptions is not provided: they stay fixed).
PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 8, 1000, 3, 80


def tensor_text(value: np.ndarray, stop_gradient: bool = True) -> str:
    """Paddle 3.3's text of a tensor (its ``to_string``), character for character:
    floats with 8 decimals, integral floats as ``3.``, columns padded to the widest
    item, and more than 1000 elements summarised to 3 at each edge."""
    prefix = "Tensor"
    indent = len(prefix) + 1
    dtype = dtypes.from_numpy(value)
    if dtype is dtypes.bfloat16:  # the values the bits stand for, as Paddle prints them
        value = dtypes.from_bfloat16_bits(value)
    summary = value.ndim > 0 and value.size > THRESHOLD
    width, signed = _max_width(_summarised(value))
    body = _format(value, summary, indent, width, signed)
    return (f"{prefix}(shape={list(value.shape)}, dtype={dtype.name}, place={PLACE}, "
            f"stop_gradient={stop_gradient},\n{' ' * indent}{body})")


def _item(v, width: int = 0, signed: bool = False) -> str:
    if v.dtype.kind == "f":
        text = f"{v:.0f}." if np.ceil(v) == v else f"{v:.{PRECISION}f}"
    else:
        text = f"{v}"
    if width <= len(text):
        return text
    if signed and not v < 0:
        return " " + text.ljust(width - 1)
    return text.ljust(width)


def _summarised(value: np.ndarray) -> np.ndarray:
    """The elements that are shown (EDGEITEMS at each edge of each long axis)."""
    if value.size == 0:
        return np.array([])
    if value.ndim == 0:
        return value
    rows = list(value)
    if len(rows) > 2 * EDGEITEMS:
        rows = rows[:EDGEITEMS] + rows[-EDGEITEMS:]
    if value.ndim == 1:
        return np.asarray(rows, dtype=value.dtype)
    return np.stack([_summarised(r) for r in rows])


def _max_width(value: np.ndarray) -> tuple[int, bool]:
    width, signed = 0, False
    for v in value.flatten():
        signed = signed or bool(v < 0)
        width = max(width, len(_item(v)))
    return width, signed


def _format(value: np.ndarray, summary: bool, indent: int, width: int, signed: bool) -> str:
    if value.ndim == 0:
        return _item(value[()], width, signed)
    n = value.shape[0]
    shown = [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)] if summary and \
        n > 2 * EDGEITEMS else list(range(n))
    if value.ndim == 1:
        items = ["..." if i is None else _item(value[i], width, signed) for i in shown]
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = ["..." if i is None else _format(value[i], summary, indent + 1, width, signed)
             for i in shown]
    return "[" + ("," + "\n" * (value.ndim - 1) + " " * (indent + 1)).join(parts) + "]"
