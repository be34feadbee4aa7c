"""Paddle's ``paddle.utils.unique_name``: the names layers and parameters are given
(``linear_0``, ``fc_0.w_0``), numbered per key process-wide, and how to number them
from 0 again (`guard`, `switch`), e.g. to build a second model with the first one's
parameter names. The generator itself is `irflow.names`'."""
from __future__ import annotations

import contextlib

from ..names import UniqueNameGenerator, switch_name_generator
from ..names import unique_name as generate


def switch(new_generator: UniqueNameGenerator | None = None, new_para_name_checker=None):
    """Make `new_generator` (default: a fresh one) generate the names from now on;
    returns the previous generator and, as Paddle's does, its parameter-name checker
    (irflow has none: None), so that ``switch(*old)`` puts both back."""
    if new_generator is not None and not isinstance(new_generator, UniqueNameGenerator):
        raise TypeError(f"unique_name.switch takes a UniqueNameGenerator, not "
                        f"{type(new_generator).__name__}")
    return switch_name_generator(new_generator), None


@contextlib.contextmanager
def guard(new_generator: str | bytes | UniqueNameGenerator | None = None):
    """Number names from 0 again inside the ``with`` block, after the prefix
    `new_generator` if it is a string (``guard("A")`` gives ``Afc_0``)."""
    if isinstance(new_generator, bytes):
        new_generator = new_generator.decode()
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(*old)


__all__ = ["generate", "guard", "switch"]
