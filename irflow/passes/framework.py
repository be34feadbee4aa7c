"""Passes as small named objects, and pipelines as text.

A pass is a class deriving from `Pass`: its class attribute `name` is how
pipelines call it, its annotated attributes are its options (with defaults), its
docstring's first line describes it, and `run(module)` transforms the module in
place and says whether anything changed. `@register_pass` makes it a dataclass (so
options are constructor arguments) and available by name::

    @register_pass
    class Fold(Pass):
        "Evaluate ops on constants and apply every op's canonicalization patterns."

        name = "fold"
        max_elements: int = 1 << 16

        def run(self, module): ...

A pipeline is a comma-separated list of pass names, each optionally followed by
options in braces, written with dashes: ``"fold{max-elements=1024},cse,dce"``.
"""
from __future__ import annotations

import dataclasses
import re
from typing import ClassVar, Sequence

from ..errors import IrflowError
from ..ir.core import Module


class PipelineError(IrflowError, ValueError):
    """A pipeline names an unknown pass or option, or is malformed."""


class Pass:
    """Base class of passes (see the module docstring)."""

    name: ClassVar[str] = ""
    # True for a pass that must see the program as it will run: one whose output
    # autodiff cannot differentiate (fusion), or an analysis of that program (buffer
    # planning). Pipelines differentiate what the passes before the first such pass
    # made, and run it and the passes after it on the gradient too.
    after_autodiff: ClassVar[bool] = False

    def run(self, module: Module) -> bool:
        raise NotImplementedError

    def statistics(self) -> dict[str, int]:
        """What the last `run` did, as counts with dashed names (``ops-fused``,
        ``bytes-planned``), beyond the op counts that the pass manager takes itself."""
        return {}

    @classmethod
    def description(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    def __str__(self) -> str:
        """The pass as written in a pipeline, with its non-default options."""
        shown = [f"{f.name.replace('_', '-')}={_option_text(getattr(self, f.name))}"
                 for f in dataclasses.fields(self) if getattr(self, f.name) != f.default]
        return self.name + ("{" + ",".join(shown) + "}" if shown else "")


_PASSES: dict[str, type[Pass]] = {}


def register_pass(cls: type[Pass]) -> type[Pass]:
    if not dataclasses.is_dataclass(cls):
        cls = dataclasses.dataclass(cls)
    if not cls.name:
        raise ValueError(f"pass class {cls.__name__} has no name")
    if cls.name in _PASSES:
        raise ValueError(f"pass {cls.name!r} is registered twice")
    _PASSES[cls.name] = cls
    return cls


def pass_class(name: str) -> type[Pass]:
    try:
        return _PASSES[name]
    except KeyError:
        raise PipelineError(f"unknown pass {name!r}; known passes: "
                            f"{', '.join(sorted(_PASSES))}") from None


def available() -> dict[str, str]:
    """Every registered pass name with its one-line description."""
    return {name: _PASSES[name].description() for name in sorted(_PASSES)}


# ---------------------------------------------------------------- pipelines

_ITEM = re.compile(r"\s*([A-Za-z0-9_-]+)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")


def parse_pipeline(pipeline: str | Sequence[str | Pass]) -> list[Pass]:
    """The passes of `pipeline`: a pipeline string, or a list of pass names (each
    with options allowed) and `Pass` objects."""
    if isinstance(pipeline, str):
        return _parse_text(pipeline)
    passes: list[Pass] = []
    for item in pipeline:
        passes += [item] if isinstance(item, Pass) else _parse_text(item)
    return passes


def _parse_text(text: str) -> list[Pass]:
    passes, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if m is None or m.end() == pos:
            raise PipelineError(f"cannot read the pipeline {text!r} at column {pos + 1}; "
                                "expected name or name{option=value,...}")
        passes.append(make_pass(m.group(1), _parse_options(m.group(2) or "", m.group(1))))
        pos = m.end()
    return passes


def _parse_options(text: str, pass_name: str) -> dict[str, str]:
    options = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise PipelineError(f"option {item!r} of pass {pass_name!r} needs a value "
                                "(name=value)")
        options[key.strip()] = value.strip()
    return options


def make_pass(name: str, options: dict[str, str] | None = None) -> Pass:
    """An instance of pass `name` with `options` (dashed names, text values)."""
    cls = pass_class(name)
    fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}
    values = {}
    for key, text in (options or {}).items():
        field = fields.get(key)
        if field is None:
            known = ", ".join(fields) or "none"
            raise PipelineError(f"pass {name!r} has no option {key!r}; its options: {known}")
        values[field.name] = _option_value(text, field, name)
    return cls(**values)


def _option_value(text: str, field: dataclasses.Field, pass_name: str):
    kind = field.type if isinstance(field.type, str) else field.type.__name__
    try:
        if kind == "bool":
            if text not in ("true", "false"):
                raise ValueError
            return text == "true"
        if kind in ("int", "float"):
            return {"int": int, "float": float}[kind](text)
        return text
    except ValueError:
        raise PipelineError(f"option {field.name.replace('_', '-')} of pass {pass_name!r} "
                            f"takes {'true or false' if kind == 'bool' else 'an ' + kind}, "
                            f"got {text!r}") from None


def _option_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
