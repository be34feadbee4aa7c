"""The Python values a trace read, checked on every call: a changed one traces again.

A program runs its function's Python code only while it is traced, and every Python
value that code read is built into it: as a constant (``y * self.scale``), as the
branch or the number of iterations taken (``if self.use_extra``, ``range(self.steps)``),
as a shape (``reshape(self.shape)``). Eager code reads them again on every call, so
a program that kept them after the user changed one (``model.scale = 3.0``, a global
``SCALE``, ``cfg["alpha"] = 0.1``) would return the old model's answer. A trace
therefore records what it read (`Reads`): converted code reads attributes through
`irflow.frontend.jst.attr`, and each converted function's globals and enclosing
variables are recorded as it starts. The program's `Guards` compare each with the
value read; a program whose guards fail is stale, and the call traces again (as
Paddle's SOT does with its guards).

Guarded: *plain data*, compared by value and exact type (``1``, ``1.0`` and ``True``
differ, as the constants they make do; a NaN equals a NaN; ``-0.0`` is not ``0.0``):
None, bools, numbers, strings, bytes, NumPy scalars and numeric arrays (by dtype,
shape and bytes: ``paddle.to_tensor(self.table)`` makes a constant of the contents),
and tuples, lists, dicts, sets and frozensets, and their subclasses (``OrderedDict``,
``defaultdict``, a namedtuple: each compared as its own type), at most `MAX_ITEMS`
items each, `MAX_DEPTH` deep, of plain data and of other objects, which they must
hold themselves (a plain list of Layers one appends to, a tensor replaced in a dict);
``functools.partial`` objects by their function, arguments and keywords (``self.act =
partial(F.leaky_relu, negative_slope=0.1)``). Any
other object read is guarded by identity (``self.act = F.gelu``, ``self.cfg =
Config()``; its own attributes are guarded where the code reads them), and an
attribute the code found missing (``hasattr``, ``getattr`` with a default) stays
missing; a tensor a global, an enclosing variable or a plain object holds, by
identity too. A module's attribute is guarded as a global when it holds plain data
or a tensor (``config.SCALE``), unless the module is irflow's. Not guarded: Layers
and their tensors (a Layer's structure has its own versions), traced tensors,
modules, a module's functions and classes, and bound methods (made anew on each
access).
"""
from __future__ import annotations

import dis
import functools
import types
from typing import Callable

import numpy as np

from ..tensor.tensor import Tensor

MAX_ITEMS = 1024  # items of one container that a guard compares; a longer one is not plain
MAX_DEPTH = 8     # containers within containers
_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CONTAINERS = (tuple, list, dict, set, frozenset)  # and their subclasses
_MUTABLE = (list, dict, set, np.ndarray, functools.partial)  # and their subclasses
_UNGUARDED = (types.ModuleType, types.MethodType, types.BuiltinMethodType,
              types.MethodWrapperType)
_MISSING = object()  # what a guard reads where the name no longer exists


class _Same:
    """An object held by a container that a guard compares, equal to another only if
    it is the same object (its own ``==`` may be elementwise, or any)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj  # held, so that no other object takes its id while compared

    def __eq__(self, other) -> bool:
        return type(other) is _Same and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def frozen(value, depth: int = 0):
    """A hashable form of plain data (a container's other objects by identity) that
    equals another's exactly when the two build the same program, or None if `value`
    is not plain data."""
    kind = type(value)
    if kind in _SCALARS:
        if kind is float:
            return kind, value.hex()  # exact, NaN == NaN, -0.0 != 0.0
        if kind is complex:
            return kind, value.real.hex(), value.imag.hex()
        return kind, value
    if isinstance(value, np.generic):
        return (kind, value.tobytes()) if value.dtype.kind in "biufc" else None
    if kind is np.ndarray:  # its bytes: a copy per call, so a large table costs time
        return (kind, value.dtype.str, value.shape, value.tobytes()) \
            if value.dtype.kind in "biufc" else None
    if isinstance(value, _CONTAINERS):
        if depth >= MAX_DEPTH or len(value) > MAX_ITEMS:
            return None
        if isinstance(value, dict):
            parts = [(_held(k, depth), _held(v, depth)) for k, v in value.items()]
        else:
            parts = [_held(item, depth) for item in value]
        return kind, frozenset(parts) if isinstance(value, (set, frozenset)) else tuple(parts)
    if kind is functools.partial:  # its keywords are a dict, changed in place at times
        return kind, _held(value.func, depth), frozen(value.args, depth + 1), \
            frozen(value.keywords, depth + 1)
    return None


def _held(item, depth: int):
    """The form of a container's item: its `frozen` form, or the item by identity."""
    form = frozen(item, depth + 1)
    return _Same(item) if form is None else form


class Guard:
    """One value read: the object `value` that `owner`'s `name` held, by `kind`
    ("attribute": ``getattr(owner, name)``; "entry": ``owner.get(name)``, of a
    module's globals or a Layer's ``__dict__``; "cell": a closure cell's contents).
    It holds while that place holds the same object and nothing inside it can change
    (`same_object_enough`), or, for plain data, while what it holds equals it
    (`form`, its `frozen` form; None for any other object, held by identity)."""

    __slots__ = ("kind", "owner", "name", "value", "form", "same_object_enough")

    def __init__(self, kind: str, owner, name: str, value, form):
        self.kind, self.owner, self.name, self.value, self.form = kind, owner, name, value, form
        self.same_object_enough = form is None or _immutable(value)

    def read(self):
        """What the place holds now (`_MISSING` if nothing)."""
        return _read(self.kind, self.owner, self.name)

    def holds(self) -> bool:
        """The guard's test (`Guards` writes it out inline for every call)."""
        now = self.read()
        if now is self.value and self.same_object_enough:
            return True
        return self.form is not None and frozen(now) == self.form


def _immutable(value) -> bool:
    """Whether plain data `value` cannot change in place: no list, dict or set in it."""
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(item) for item in value)
    return not isinstance(value, _MUTABLE)


def guard(kind: str, owner, name: str) -> Guard | None:
    """A guard of what `owner`'s `name` holds now, or None if that is not guarded."""
    value = _read(kind, owner, name)
    form = frozen(value)
    if form is None and _unguarded(value, owner):
        return None
    return Guard(kind, owner, name, value, form)


def _unguarded(value, owner) -> bool:
    """Whether a value read is left to other checks or made anew on each read: a
    Layer (its structure has versions), a Layer's tensors (its registered parameters
    and buffers: replacing one changes its structure) and traced ones (the program's
    own values), modules and bound methods. A tensor a global, an enclosing variable
    or another object holds is guarded by identity (``MASK = paddle.zeros(...)``
    rebinds the name to another tensor; a change in place is seen by `Program.stale`)."""
    from ..nn.layer.layers import Layer
    if isinstance(value, Tensor):
        return isinstance(owner, Layer) or value._value is None
    return isinstance(value, (*_UNGUARDED, Layer))


_CHUNK = 64  # guards per generated check (a function of thousands of parameters
             # takes long to compile)


class Guards:
    """A program's guards; `hold()`, on every call, is one generated function per
    `_CHUNK` guards, each read written out (``d0.get(n0, MISSING) is not v0``):
    a loop calling a method per guard cost a batch-1 call a few tenths of a
    microsecond per guard."""

    __slots__ = ("items", "_checks", "hold")

    def __init__(self, items: tuple[Guard, ...] = ()):
        self.items = items
        self._checks = tuple(_check(items[k:k + _CHUNK]) for k in range(0, len(items), _CHUNK))
        # `hold()`: whether every guard holds (a program's one check, called directly)
        self.hold = self._checks[0] if len(self._checks) == 1 else self._all

    def __bool__(self) -> bool:
        return bool(self.items)

    def _all(self) -> bool:
        for check in self._checks:
            if not check():
                return False
        return True

    def changed(self) -> str | None:
        """The first value that changed, described for a message (``scale``, ``SCALE``),
        or None if all hold."""
        for g in self.items:
            if not g.holds():
                return g.name
        return None


_READS = {"attribute": "read_attribute(o{i}, n{i})", "entry": "o{i}.get(n{i}, MISSING)",
          "cell": "read_cell(o{i}, n{i})"}


def _check(items: tuple[Guard, ...]) -> Callable[[], bool]:
    """``hold()`` of `items`: False as soon as one fails."""
    from ..codegen.executor import generated
    body = []
    for i, g in enumerate(items):
        body.append("now = " + _READS[g.kind].format(i=i))
        if g.form is None:
            body.append(f"if now is not v{i}:")
        elif g.same_object_enough:
            body.append(f"if now is not v{i} and frozen(now) != f{i}:")
        else:
            body.append(f"if frozen(now) != f{i}:")
        body.append("    return False")
    body.append("return True")
    n = len(items)
    params = ["MISSING", "frozen", "read_attribute", "read_cell", *[f"{c}{i}" for c in "onvf"
                                                                   for i in range(n)]]
    make = generated(params, "hold()", body, f"<irflow guards of {n}>")
    return make(_MISSING, frozen, _read_attribute, _read_cell,
                *[g.owner for g in items], *[g.name for g in items],
                *[g.value for g in items], *[g.form for g in items])


class Reads:
    """What one trace read, each place once (its first read is the value guarded)."""

    def __init__(self):
        self._guards: dict[tuple, Guard | None] = {}
        self._owners: list = []  # held for the trace, so that each id stays its own

    def note(self, kind: str, owner, name: str) -> None:
        key = (id(owner), name)
        if key not in self._guards:
            self._guards[key] = guard(kind, owner, name)
            self._owners.append(owner)

    def attribute(self, owner, name: str) -> None:
        """``owner.name`` was read (by converted code)."""
        if isinstance(owner, types.ModuleType):
            self._module_attribute(owner, name)
        elif not isinstance(owner, Tensor):
            self.note("attribute", owner, name)

    def _module_attribute(self, module: types.ModuleType, name: str) -> None:
        """``module.name`` of plain data or a tensor (``config.SCALE`` after ``import
        config``, where a training script sets ``config.SCALE = 2.0``): guarded as
        the module's own code reads it, a global. Its functions, classes and
        submodules, and anything of irflow's, are not: they stay what they are."""
        if module.__name__.partition(".")[0] == "irflow":
            return
        space = vars(module)
        value = space.get(name, _MISSING)
        if isinstance(value, Tensor) or frozen(value) is not None:
            self.note("entry", space, name)

    def function(self, fn: types.FunctionType) -> None:
        """Converted `fn` is about to run: the globals its code names, the variables of
        enclosing functions it reads, and its defaults (``def f(x, cfg={"a": 1.0})``:
        a default changed in place is what a later call gets)."""
        for name in ("__defaults__", "__kwdefaults__"):
            if getattr(fn, name):
                self.note("attribute", fn, name)
        names: set = set()
        _names_in(fn.__code__, names)
        space = fn.__globals__
        for name in sorted(names):
            if name in space:
                self.note("entry", space, name)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            self.note("cell", cell, name)

    def configuration(self, layer) -> None:
        """`layer`, whose forward is irflow's own (not converted, so its reads are not
        seen), was called: its settings, by the count of their changes
        (`Layer._configured`: one comparison per layer, where a guard per setting
        cost a transformer encoder's call 8%)."""
        self.note("entry", vars(layer), "_config_version")

    def guards(self, skip: set[tuple]) -> Guards:
        """The guards, but those of the attributes ``(id(owner), name)`` in `skip`
        (the ones the program carries or stores itself). A list, dict or set still
        in its place is guarded as the trace left it: one the code changed (a cache
        filled, a count appended) changes only at the trace, which says so
        (`irflow.frontend.containers`), and is no reason to trace on every call."""
        kept = []
        for key, g in self._guards.items():
            if g is None or key in skip:
                continue
            if isinstance(g.value, _MUTABLE) and g.read() is g.value:
                g = guard(g.kind, g.owner, g.name)
            if g is not None:
                kept.append(g)
        return Guards(tuple(kept))


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"})


def _names_in(code: types.CodeType, names: set) -> None:
    """The global names `code` and the code nested in it (lambdas, comprehensions,
    inner functions) load or store: by its instructions, since ``co_names`` holds
    attribute names too, and a global named like one (a training loop's ``step``
    beside ``opt.step()``) made every call a new trace."""
    names.update(i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _names_in(const, names)


def _read(kind: str, owner, name: str):
    """What `owner`'s `name` holds now, read as a guard of `kind` reads it."""
    if kind == "entry":
        return owner.get(name, _MISSING)
    return (_read_attribute if kind == "attribute" else _read_cell)(owner, name)


def _read_attribute(owner, name: str):
    try:
        return getattr(owner, name)
    except Exception:  # a property that raises now: changed (the trace raises it again)
        return _MISSING


def _read_cell(cell, name: str):
    try:
        return cell.cell_contents
    except ValueError:  # emptied since
        return _MISSING
