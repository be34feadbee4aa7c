"""Dropping gradient stops once the gradient exists.

``stop_gradient`` and ``list_stop_gradient`` tell autodiff where no gradient flows;
to a run they are the identity. Pipelines differentiate what the passes before the
first `after_autodiff` pass made, so by the time this pass runs every gradient the
program needs has been derived: each stop's uses take its operand and the stop goes,
saving a step per stop on every call (and, inside a fused body, a line).
"""
from __future__ import annotations

from ..ir.core import Module
from .framework import Pass, register_pass

_STOPS = ("stop_gradient", "list_stop_gradient")


@register_pass
class StripStops(Pass):
    """Drop stop_gradient ops (identities to a run) after autodiff."""

    name = "strip-stops"
    after_autodiff = True

    def __post_init__(self):
        self._stripped = 0

    def run(self, module: Module) -> bool:
        stops = [op for op in module.walk() if op.name in _STOPS]
        for op in stops:
            op.result.replace_all_uses_with(op.operand(0))
            op.erase()
        self._stripped = len(stops)
        return bool(stops)

    def statistics(self) -> dict[str, int]:
        return {"stops-stripped": self._stripped}
