"""Functions by symbol: `FuncRef` attribute values and the `CallOp` interface.

A ``call`` names the function it runs as an attribute, ``{callee=@f}``. The value is
a `FuncRef`: the symbol and the `Module` it resolves in. IR text names functions of
the module being read, so the parser binds every ``@f`` to that module, and
`Module.clone` rebinds references to the original so that they name the copy's
functions. A compiled program that enters eager autograd owns a module with its
forward and backward halves, and its ``call`` ops are bound to that module: the
module lives as long as something refers to it, and no table keeps it.

A reference bound by a compiled program may also carry `run`, the compiled plan of
its function, which eager execution calls and the executor reuses instead of
compiling the function again, and `derive`, which makes the attributes of a
differentiable call of the function on demand (a compiled backward differentiated
again, for gradients of gradients). Equality and hashing ignore both.
"""
from __future__ import annotations

from typing import Callable

from ..errors import IrflowError
from .core import Function, Module
from .traits import Trait


class FuncRef:
    """``@name``: the function `name` of `module` (None until the parser binds it)."""

    __slots__ = ("name", "module", "run", "derive")

    def __init__(self, name: str, module: Module | None = None, run: Callable | None = None,
                 derive: Callable | None = None):
        self.name = name
        self.module = module
        self.run = run
        self.derive = derive

    @classmethod
    def to(cls, fn: Function, run: Callable | None = None) -> "FuncRef":
        """A reference to `fn`, which must belong to a module."""
        if fn.parent is None:
            raise IrflowError(f"@{fn.name} belongs to no module, so nothing can call it")
        return cls(fn.name, fn.parent, run)

    def resolve(self) -> Function:
        if self.module is None:
            raise IrflowError(f"@{self.name} is not bound to a module")
        found = self.module.functions.get(self.name)
        if found is None:
            raise IrflowError(f"there is no function @{self.name} in the module")
        return found

    def __eq__(self, other) -> bool:
        return (isinstance(other, FuncRef) and self.name == other.name
                and self.module is other.module)

    def __hash__(self) -> int:
        return hash((self.name, id(self.module)))

    def __repr__(self) -> str:
        return f"@{self.name}"


class CallOp(Trait):
    """An op that runs a function named by its attribute `attr` on its operands and
    returns the function's results (``call``)."""

    label = "calls a function"

    def __init__(self, attr: str = "callee"):
        self.attr = attr

    def ref(self, op) -> FuncRef:
        return op.attrs[self.attr]

    def callee(self, op) -> Function:
        return op.attrs[self.attr].resolve()


def bind_symbols(module: Module, previous: Module | None = None) -> None:
    """Bind the `FuncRef` attributes of `module`'s ops to `module`: the unbound ones
    (just parsed), and with `previous` those bound to it (`module` is its copy)."""
    for op in module.walk():
        for key, value in op.attrs.items():
            if isinstance(value, FuncRef) and value.module is previous:
                op.attrs[key] = FuncRef(value.name, module)
