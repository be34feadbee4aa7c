"""The op registry: every primitive is declared here once, as an `OpDef`.

An `OpDef` gathers everything irflow knows about an op, so that eager execution,
tracing, the verifier, the interpreter, autodiff, fusion and codegen all read the same
declaration:

- ``attrs``: attribute names with their defaults (`REQUIRED` when there is none);
  ``shape_attrs`` names those that hold a shape, whose symbolic dims the
  interpreter replaces by their run-time values before calling the kernel;
- ``canonicalize``: puts attributes in one canonical form (negative axes made
  positive, lists made tuples), so equal ops print equally;
- ``infer``: the type rule, from operand types and attributes to result types,
  raising `ShapeError` on operands it does not accept;
- ``kernel``: the NumPy implementation, ``kernel(*arrays, **attrs)``, which returns
  new arrays (or, for ops with the `View` trait, a view of an operand);
- ``out_kernel``: the kernel's form that writes its one result into a given buffer,
  ``out_kernel(*arrays, out=buffer, **attrs)``, allocating nothing of that size, so that
  the executor can run the op into a planned arena. A NumPy ufunc kernel is its own
  out kernel (so is a wrapper of one that passes ``out`` on and names it in
  ``__wrapped__``, as `functools.wraps` does); an op without one allocates its result;
- ``in_place``: the operands whose memory `out_kernel` may be given as ``out`` when
  they have the result's type and die at the op (None: every operand of an
  `Elementwise` op, none of another op's);
- ``vjp``: the reverse-mode rule, written with irflow ops through a `Builder`:
  ``vjp(b, cts, ins, outs, **attrs)`` gets the cotangents of the results, the
  operands and the results, and returns one cotangent (or None for zero) per
  operand, or a `Defined` for a cotangent that exists only on some runs;
- ``nondiff``: the results carry no gradient (comparisons, argmax...);
- ``effect``: PURE, RANDOM (pure given its explicit seed operand) or IO;
- ``traits``: shared properties and interfaces (`irflow.ir.traits`): terminator,
  elementwise, view, and for an op with regions its `RegionOp` interface, which
  names the regions and brings their semantics, value flow and autodiff rules;
- ``verify``: a hook for checks the type rule cannot express;
- ``patterns``: the op's canonicalization patterns (`irflow.ir.rewrite`), which the
  ``fold`` pass applies;
- ``doc``: the op's entry in the generated reference, ``docs/ir.md``.

The op declarations themselves live in `irflow.ops`, one module per op family.
"""
from __future__ import annotations

import enum
import inspect
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..errors import Location, ShapeError, UnknownOpError
from .traits import ContainerOperands, Elementwise, Trait
from .types import Container, TensorType


class Effect(enum.Enum):
    PURE = "pure"
    RANDOM = "random"  # deterministic given the seed operand; never merged across seeds
    IO = "io"          # observable (print): never removed, never reordered


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


class Defined(NamedTuple):
    """What a VJP rule returns for an operand whose cotangent exists only on the runs
    where the bool scalar `defined` is true (and is zeros on the others): eager code
    leaves a gradient None where no op that used the value ran, and optimizers skip
    such a parameter, so autodiff keeps where it would (`irflow.passes.autodiff`).
    A region op's rule makes them (a branch that does not use an operand), and so
    does the VJP of a compiled call whose backward half returns them; the list ops'
    rules (`TracksDefined`) say it for each element of a list: `defined` is then a
    list of bools."""

    cotangent: Any   # a Value
    defined: Any     # a bool scalar Value, or for a list's cotangent a list of them


@dataclass(eq=False)
class OpDef:
    name: str
    infer: Callable[[Sequence[TensorType], dict], Sequence[TensorType]] | None
    kernel: Callable | None = None
    out_kernel: Callable | None = None
    in_place: tuple[int, ...] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    shape_attrs: tuple[str, ...] = ()  # attrs holding shapes whose dims may be symbols
    canonicalize: Callable[[dict, Sequence[TensorType]], dict] | None = None
    arity: int | tuple[int, int | None] = 0  # exact count, or (min, max or None)
    vjp: Callable | None = None
    nondiff: bool = False     # results carry no gradient (comparisons, argmax, ...)
    effect: Effect = Effect.PURE
    traits: tuple[Trait, ...] = ()
    verify: Callable | None = None
    patterns: tuple = ()      # canonicalization patterns (irflow.ir.rewrite.Pattern)
    doc: str = ""

    def __post_init__(self):
        self._traits: dict[type, Trait] = {}
        for trait in self.traits:
            for cls in type(trait).__mro__:
                if issubclass(cls, Trait) and cls is not Trait:
                    self._traits.setdefault(cls, trait)
        from .region_op import RegionOp
        self.region_op: RegionOp | None = self.trait(RegionOp)
        base = inspect.unwrap(self.kernel) if self.kernel is not None else None
        if self.out_kernel is None and isinstance(base, np.ufunc) and base.nout == 1:
            self.out_kernel = self.kernel  # ufunc(*arrays, out=buffer), or its wrapper

    def overwrites(self, index: int) -> bool:
        """Whether `out_kernel` may write its result over operand `index` (see
        ``in_place``)."""
        return self.has(Elementwise) if self.in_place is None else index in self.in_place

    def has(self, trait: type[Trait]) -> bool:
        return trait in self._traits

    def trait(self, trait: type[Trait]):
        """The op's instance of `trait` (or of a subclass), or None."""
        return self._traits.get(trait)

    @property
    def regions(self) -> tuple[str, ...]:
        """The labels of the op's regions (from its `RegionOp` interface)."""
        return self.region_op.regions if self.region_op is not None else ()

    def check_arity(self, n: int) -> None:
        lo, hi = (self.arity, self.arity) if isinstance(self.arity, int) else self.arity
        if n < lo or (hi is not None and n > hi):
            want = str(lo) if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise ShapeError(f"{self.name} takes {want} operand(s), got {n}")

    def check_operands(self, operand_types: Sequence[TensorType]) -> None:
        self.check_arity(len(operand_types))
        if not self.has(ContainerOperands) and any(isinstance(t, Container)
                                                   for t in operand_types):
            raise ShapeError("operands must be tensors, got "
                             + ", ".join(str(t) for t in operand_types))

    def complete_attrs(self, attrs: dict | None, operand_types: Sequence[TensorType]) -> dict:
        """Attributes with defaults filled in, unknown names rejected, canonicalized
        (after the operand count and kinds are checked, which canonicalize relies on)."""
        self.check_operands(operand_types)
        attrs = dict(attrs or {})
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            raise ShapeError(f"{self.name} has no attribute(s) {', '.join(sorted(unknown))}; "
                             f"it takes {', '.join(self.attrs) or 'none'}")
        for key, default in self.attrs.items():
            if key not in attrs:
                if default is REQUIRED:
                    raise ShapeError(f"{self.name} requires the attribute '{key}'")
                attrs[key] = default
        attrs = {k: canonical_attr(v) for k, v in attrs.items()}
        if self.canonicalize is not None:
            attrs = self.canonicalize(attrs, operand_types)
        return attrs

    def result_types(self, operand_types: Sequence[TensorType], attrs: dict) -> tuple[TensorType, ...]:
        """Apply the type rule; `attrs` must be complete (see `complete_attrs`)."""
        self.check_operands(operand_types)
        if self.infer is None:
            raise ShapeError(f"{self.name}'s result types come from its regions")
        out = self.infer(operand_types, attrs)
        return (out,) if isinstance(out, TensorType | Container) else tuple(out)


def canonical_attr(value):
    """Attribute values are ints, floats, bools, strings, None, dtypes, NumPy arrays
    and tuples of those; lists become tuples and NumPy scalars Python numbers."""
    if isinstance(value, list | tuple):
        return tuple(canonical_attr(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def attr_key(value):
    """A hashable key of an attribute value, equal for two values exactly when they
    are the same value of the same type. Python's ``==`` is not that: 0.0 == -0.0 and
    1 == 1.0 == True, so `pad {value=-0.0}` would pass for `pad {value=0.0}`, which
    fills with a different value (cse would merge them; the printer would leave the
    -0.0 out as the default 0.0). Floats compare by their bits, arrays by dtype,
    shape and bytes."""
    if isinstance(value, tuple):
        return tuple, tuple(attr_key(v) for v in value)
    if isinstance(value, np.ndarray):
        return np.ndarray, value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, float):
        return float, struct.pack("<d", value)
    return type(value), value


_REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in _REGISTRY:
        raise ValueError(f"op {opdef.name!r} is registered twice")
    _REGISTRY[opdef.name] = opdef
    return opdef


def lookup(name: str, loc: Location | None = None) -> OpDef:
    opdef = _REGISTRY.get(name)
    if opdef is None:
        raise UnknownOpError(f"unknown op '{name}'", loc)
    return opdef


def is_registered(name: str) -> bool:
    return name in _REGISTRY


def all_ops() -> list[OpDef]:
    return list(_REGISTRY.values())
