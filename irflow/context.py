"""What irflow is doing in the current thread: `state`.

Whether gradients are recorded (`irflow.no_grad`), the frontend's active tracer and
the observer of eager ops (``compile(..., check=True)``) are per thread, so that
``no_grad()`` in one thread, or compiling in one thread, does not change what eager
code running in another thread does. A new thread starts recording gradients, with
no tracer and no observer.

This module is the bottom of the eager stack: the Tensor class reads it for its
tracing hooks, and `irflow.dispatch` (which makes Tensors) for every op.
"""
from __future__ import annotations

import threading


class _ThreadState(threading.local):
    grad_enabled = True
    tracer = None    # the frontend's active tracer, if any
    observer = None  # called as observer(name, location, results) after each eager op


state = _ThreadState()
