"""The IR's text form. `irflow.ir.parser` reads exactly what this module writes.

    func @forward(%x: f32[N,4], %w: f32[4,4]) -> f32[N,4] {
      %h = matmul %x, %w : f32[N,4]
      %zero = const {value=0.0} : f32
      %p = gt %zero, %zero : bool
      %y = cond %p, %h : f32[N,4] {
      ^then(%h_1: f32[N,4]):
        %r = relu %h_1 : f32[N,4]
        yield %r
      } {
      ^else(%h_1: f32[N,4]):
        yield %h_1
      }
      return %y
    }

One syntax for every op: ``results = name operands {attrs} : result-types``, then
the op's regions, each a block whose label is the region's registered name.
Attributes equal to their registered default are left out. Value names come from
the user's variable names where known (made unique with ``_1``, ``_2``...), numbers
otherwise. Sibling regions may reuse names; a region never reuses a name of the
enclosing scope, so a reader never sees one name for two values in view.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np

from . import dtypes
from .core import Block, Function, Module, Operation, Value
from .registry import attr_key, is_registered, lookup
from .symbols import FuncRef
from .types import is_dim_text

_INDENT = "  "
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.]")


class Namer:
    """Gives each value a unique printed name, following the printer's scope rules:
    a name is taken for the rest of its block and of every enclosing block, except
    that sibling regions of one op may reuse each other's names.

    Linear time: each hint remembers the lowest suffix that may be free, and leaving
    a region undoes the names it took (from a log) instead of copying sets."""

    def __init__(self):
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.counter = 0
        self._next_suffix: dict[str, int] = {}  # hint -> every hint_k below it is taken
        self._log: list[tuple[str, str | None, int | None]] = []  # (name, hint, old suffix)

    def name(self, value: Value) -> str:
        found = self.names.get(value)
        if found is not None:
            return found
        hint = _NAME_CHARS.sub("_", value.name) if value.name else ""
        if not hint or hint[0].isdigit():
            while str(self.counter) in self.used:
                self.counter += 1
            name = str(self.counter)
            self._take(name)
        elif hint not in self.used:
            name = hint
            self._take(name)
        else:
            k = self._next_suffix.get(hint, 1)
            while f"{hint}_{k}" in self.used:
                k += 1
            name = f"{hint}_{k}"
            self._take(name, hint, k + 1)
        self.names[value] = name
        return name

    def _take(self, name: str, hint: str | None = None, next_suffix: int = 0) -> None:
        self.used.add(name)
        if hint is None:
            self._log.append((name, None, None))
        else:
            self._log.append((name, hint, self._next_suffix.get(hint)))
            self._next_suffix[hint] = next_suffix

    def ref(self, value: Value) -> str:
        """``%name`` of a value, naming it now if it was not named before."""
        return "%" + self.name(value)

    def mark(self) -> int:
        """A point to return to with `release` (before printing a region)."""
        return len(self._log)

    def release(self, mark: int) -> list[str]:
        """Free the names taken since `mark` (after printing a region), so that a
        sibling region may take them; returns them for `reserve`."""
        taken = []
        while len(self._log) > mark:
            name, hint, old = self._log.pop()
            self.used.discard(name)
            if hint is not None:
                if old is None:
                    del self._next_suffix[hint]
                else:
                    self._next_suffix[hint] = old
            taken.append(name)
        return taken

    def reserve(self, names: list[str]) -> None:
        """Take `names` again (those of all regions of an op, once they are printed),
        so that no later value in the enclosing scope reuses them."""
        for name in names:
            if name not in self.used:
                self._take(name)


def format_float(value: float, dtype=None) -> str:
    if math.isnan(value):  # its sign bit kept (signbit, copysign, bfloat16 bits read it)
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = str(np.float32(value)) if dtype is dtypes.float32 else repr(float(value))
    if not any(c in text for c in ".en"):
        text += ".0"
    return text


def format_array(array: np.ndarray) -> str:
    dt = dtypes.from_numpy(array)
    if dt.is_bool:
        scalar = lambda v: "true" if v else "false"  # noqa: E731
    elif dt.is_int:
        scalar = lambda v: str(int(v))  # noqa: E731
    else:
        scalar = lambda v: format_float(v, dt)  # noqa: E731

    def nested(a):
        if a.ndim == 0:
            return scalar(a.item() if dt is not dtypes.float32 else a[()])
        return "[" + ", ".join(nested(x) for x in a) + "]"
    if dt is dtypes.bfloat16:  # the values its bits stand for, exact in float32
        array, dt = dtypes.from_bfloat16_bits(array), dtypes.float32
    return nested(np.asarray(array))


def format_attr(value) -> str:
    if value is None:
        return "None"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dtypes.DType):
        return value.short
    if isinstance(value, FuncRef):
        return f"@{value.name}"
    if isinstance(value, np.ndarray):
        return format_array(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(v if _is_dim_text(v) else format_attr(v) for v in value) + "]"
    raise TypeError(f"cannot print attribute value {value!r}")


_RESERVED = {"true", "false", "None", *(n for d in dtypes.ALL for n in (d.name, d.short))}


def _is_dim_text(value) -> bool:
    """A symbolic dim inside a list attribute (a shape) prints bare, as in types:
    ``shape=[N, 4]``."""
    return isinstance(value, str) and value not in _RESERVED and is_dim_text(value)


def _attrs_text(op: Operation) -> str:
    defaults = lookup(op.name).attrs if is_registered(op.name) else {}
    shown = []
    for key, value in op.attrs.items():
        if key in defaults and attr_key(value) == attr_key(defaults[key]):
            continue
        shown.append(f"{key}={format_attr(value)}")
    shown += [f"{key}={format_attr(value)}" for key, value in (op.annotations or {}).items()]
    return " {" + ", ".join(shown) + "}" if shown else ""


def _types_text(types) -> str:
    if len(types) == 1:
        return str(types[0])
    return "(" + ", ".join(str(t) for t in types) + ")"


class Printer:
    def __init__(self, locations: bool = False):
        self.namer = Namer()
        self.locations = locations
        self.lines: list[str] = []

    def function(self, fn: Function) -> None:
        args = ", ".join(f"{self.namer.ref(a)}: {a.type}" for a in fn.args)
        self.lines.append(f"func @{fn.name}({args}) -> {_types_text(fn.result_types)} {{")
        self.block_ops(fn.block, 1)
        self.lines.append("}")

    def block_ops(self, block: Block, depth: int) -> None:
        for op in block.ops:
            self.op(op, depth)

    def op(self, op: Operation, depth: int) -> None:
        pad = _INDENT * depth
        text = ""
        if op.results:
            text = ", ".join(self.namer.ref(r) for r in op.results) + " = "
        text += op.name
        if op.operands:
            text += " " + ", ".join(self.namer.ref(v) for v in op.operands)
        text += _attrs_text(op)
        if op.results:
            text += " : " + _types_text(op.result_types)
        elif op.regions:
            text += " : ()"
        if self.locations and op.loc is not None:
            text += f" loc({json.dumps(op.loc.file)}:{op.loc.line})"
        if not op.regions:
            self.lines.append(pad + text)
            return
        rop = lookup(op.name).region_op if is_registered(op.name) else None
        labels = rop.region_labels(op) if rop is not None else ()
        mark = self.namer.mark()
        taken: list[str] = []
        for i, region in enumerate(op.regions):
            self.lines.append(pad + (text + " {" if i == 0 else "} {"))
            for block in region.blocks:
                label = labels[i] if i < len(labels) else f"region{i}"
                args = ", ".join(f"{self.namer.ref(a)}: {a.type}" for a in block.args)
                self.lines.append(f"{pad}^{label}({args}):")
                self.block_ops(block, depth + 1)
            taken += self.namer.release(mark)
        self.namer.reserve(taken)
        self.lines.append(pad + "}")


def print_module(module: Module, locations: bool = False) -> str:
    chunks = []
    for fn in module:
        p = Printer(locations)
        p.function(fn)
        chunks.append("\n".join(p.lines))
    return "\n\n".join(chunks) + "\n"


def print_function(fn: Function, locations: bool = False) -> str:
    p = Printer(locations)
    p.function(fn)
    return "\n".join(p.lines) + "\n"


def printed_names(fn: Function) -> dict[Value, str]:
    """The name (without ``%``) of each value of `fn` as `print_function` prints it."""
    p = Printer()
    p.function(fn)
    return dict(p.namer.names)


def print_op(op: Operation) -> str:
    """One op (with its regions) on its own, named as if it were alone."""
    p = Printer()
    p.op(op, 0)
    return "\n".join(p.lines)
