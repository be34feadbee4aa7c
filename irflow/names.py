"""Paddle's unique names: ``linear_0``, ``fc_0.w_0``, ``learning_rate_1``, numbered per
key process-wide (as Paddle's are), and the switch that numbers them from 0 again
(``paddle.utils.unique_name.guard``). Below both `irflow.nn` (layers and parameters) and
`irflow.optimizer` (a static program's learning rates), which both name with it."""
from __future__ import annotations

import itertools
from collections import defaultdict


class UniqueNameGenerator:
    """Names numbered per key, after a prefix: ``key_0``, ``key_1``, ... (Paddle's
    ``paddle.utils.unique_name.UniqueNameGenerator``)."""

    def __init__(self, prefix: str | None = None):
        self.ids: defaultdict = defaultdict(itertools.count)
        self.prefix = prefix or ""

    def __call__(self, key: str) -> str:
        return self.generate(key)

    def generate(self, key: str) -> str:
        return f"{self.prefix}{key}_{next(self.ids[key])}"


_generator = UniqueNameGenerator()


def unique_name(key: str) -> str:
    """``key_0``, ``key_1``, ...: Paddle's process-wide unique names (``linear_0``,
    ``linear_0.w_0``), which also number the rows of `irflow.summary`."""
    return _generator.generate(key)


def switch_name_generator(new: UniqueNameGenerator | None = None) -> UniqueNameGenerator:
    """Make `new` (default: a fresh one, numbering from 0 again) the generator of
    `unique_name`; returns the one it replaces (``paddle.utils.unique_name.switch``)."""
    global _generator
    old, _generator = _generator, new if new is not None else UniqueNameGenerator()
    return old


__all__ = ["UniqueNameGenerator", "switch_name_generator", "unique_name"]
