"""Named passes and the pass manager that runs a pipeline of them.

A pass is a function ``module -> bool`` (did it change anything?) registered under a
name with `@register_pass("name")`. A pipeline is a list of names. The manager can
verify the IR after every pass (tests always do), time each pass, count changes and
print the IR after each pass; when a pass leaves broken IR, the error says which
pass did it and which passes ran before.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import IrflowError, VerificationError
from ..ir.core import Module
from ..ir.verifier import verify

PassFn = Callable[[Module], bool]
_PASSES: dict[str, PassFn] = {}


def register_pass(name: str) -> Callable[[PassFn], PassFn]:
    def register(fn: PassFn) -> PassFn:
        if name in _PASSES:
            raise ValueError(f"pass {name!r} is registered twice")
        fn.pass_name = name
        _PASSES[name] = fn
        return fn
    return register


def get_pass(name: str) -> PassFn:
    try:
        return _PASSES[name]
    except KeyError:
        raise IrflowError(f"unknown pass {name!r}; known passes: "
                          f"{', '.join(sorted(_PASSES))}") from None


def registered_passes() -> list[str]:
    return sorted(_PASSES)


@dataclass
class PassRecord:
    name: str
    changed: bool
    seconds: float


@dataclass
class PassManager:
    pipeline: Sequence[str]
    verify_each: bool = True
    print_after: bool = False
    printer: Callable[[str], None] = print
    history: list[PassRecord] = field(default_factory=list)

    def run(self, module: Module) -> bool:
        """Run the pipeline on `module` in place; True if any pass changed it."""
        passes = [(name, get_pass(name)) for name in self.pipeline]
        changed_any = False
        for name, fn in passes:
            start = time.perf_counter()
            changed = bool(fn(module))
            self.history.append(PassRecord(name, changed, time.perf_counter() - start))
            changed_any |= changed
            if self.print_after:
                self.printer(f"// -----// IR after {name} {'(changed)' if changed else ''}\n"
                             f"{module}")
            if self.verify_each:
                try:
                    verify(module)
                except VerificationError as e:
                    ran = ", ".join(r.name for r in self.history)
                    raise VerificationError(f"after pass '{name}' (passes run: {ran}): "
                                            f"{e.message}", e.loc) from None
        return changed_any

    def report(self) -> str:
        """One line per pass run: name, whether it changed the IR, milliseconds."""
        return "\n".join(f"{r.name:<24} {'changed' if r.changed else 'unchanged':<10} "
                         f"{r.seconds * 1e3:8.2f} ms" for r in self.history)


def run_passes(module: Module, pipeline: Sequence[str], verify_each: bool = True) -> bool:
    return PassManager(pipeline, verify_each).run(module)
