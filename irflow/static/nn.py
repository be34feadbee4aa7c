"""Paddle's ``paddle.static.nn``: functional control flow (`cond`, `while_loop`), which
compiled code turns into ``cond`` and ``while`` ops and eager code runs in Python."""
from __future__ import annotations

from ..frontend import jst


def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    return jst.cond(pred, true_fn, false_fn)


def while_loop(cond, body, loop_vars, is_test=False, name=None):  # noqa: A002  (Paddle's)
    return jst.while_loop(cond, body, loop_vars)


cond.__doc__, while_loop.__doc__ = jst.cond.__doc__, jst.while_loop.__doc__

__all__ = ["cond", "while_loop"]
