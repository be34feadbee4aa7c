"""How many threads irflow's generated kernels split their outer loop across:
`set_num_threads` and `get_num_threads` (torch's names; Paddle has no such API),
`row_ranges`, which decides the split, and `run_parts`, which runs it.

The setting is a context variable, as the state of `irflow.context` is (that module
is a layer above codegen, so this one lives here and `irflow` re-exports it): a
thread or asyncio task that sets it does not change what another one uses, and a
new thread starts at 1. It covers the LLVM backend's compiled kernels only, never
NumPy's BLAS (a matmul anchor), which keeps its own threads (``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, threadpoolctl).

A kernel's rows are split into contiguous ranges, one per thread, only when each
range gets at least `MIN_PART_ELEMENTS` elements of the domain: below that, handing
a range to another thread and waiting for it costs more than the range takes.
Each row is computed by exactly one thread with the same code, so results are
bit-identical to one thread's whatever the split.

The worker threads are one pool per process, made on first use under a lock and
replaced by a larger one when more parts are asked for than it has workers (the
old one's idle threads end when the last caller holding it lets go). That shared
state is acceptable because it holds nothing a user can observe: workers only run
kernel ranges handed to them and keep nothing between them; which thread runs a
range changes no result. A forked child (a `DataLoader` worker) starts without a
pool, since its parent's worker threads do not exist in it.
"""
from __future__ import annotations

import operator
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Callable, Sequence

# A hand-off to a worker and the wait for it cost 12-80 µs on a 2-vCPU VM; two
# threads broke even there at 2**16 elements for a fused layer norm, 2**19 for an
# elementwise erf and 2**20 for one add (2**18 elements of which take 55 µs).
# See docs/llvm.md, "Threads".
MIN_PART_ELEMENTS = 1 << 18
# The stack a thread needs to run generated code: the GEMM keeps up to 160 KiB of
# panels there (`irflow.codegen.llvm.stack`), under Python's own C frames.
ROOMY_BYTES = 512 << 10

_num_threads: ContextVar[int] = ContextVar("irflow.num_threads", default=1)
_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()


def set_num_threads(n: int) -> None:
    """Set how many threads irflow's compiled kernels (``backend="llvm"``) split large
    loops across, in the calling thread or task only: irflow's own, named as
    ``torch.set_num_threads`` (Paddle has none); NumPy's BLAS keeps its own threads.

    `n` must be a positive int: TypeError for another type, ValueError below 1. See
    `irflow.codegen.threads` for when a kernel splits."""
    if isinstance(n, bool):
        raise TypeError("set_num_threads expects a positive int, got bool")
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(f"set_num_threads expects a positive int, got "
                        f"{type(n).__name__} {n!r}") from None
    if count < 1:
        raise ValueError(f"set_num_threads expects a positive int, got {count}")
    _num_threads.set(count)


def get_num_threads() -> int:
    """How many threads irflow's compiled kernels split large loops across in the
    calling thread or task: 1 unless `set_num_threads` changed it there (irflow's own,
    named as ``torch.get_num_threads``)."""
    return _num_threads.get()


def row_ranges(rows: int, elements: int) -> list[tuple[int, int]]:
    """The ``[begin, end)`` ranges of ``rows`` rows to run in parallel, for a domain
    of `elements` elements: as many as `get_num_threads()` allows while every range
    keeps a row and `MIN_PART_ELEMENTS` elements, else the single range."""
    parts = min(_num_threads.get(), rows, elements // MIN_PART_ELEMENTS)
    if parts <= 1:
        return [(0, rows)]
    return [(k * rows // parts, (k + 1) * rows // parts) for k in range(parts)]


def least_split() -> int:
    """The fewest elements of a domain that `row_ranges` may split: a call on fewer
    runs in one part on the calling thread whatever `get_num_threads` says, so a
    caller may call the code directly (`irflow.codegen.llvm.kernel.Kernel` does)."""
    return 2 * MIN_PART_ELEMENTS


def run_parts(calls: Sequence[Callable[[], None]]) -> None:
    """Run every call, the first on the calling thread and the others on the pool,
    and return once all have ended (an exception of one is raised after all end, so
    no part still writes into arrays the caller drops). While
    ``threading.stack_size`` is set below `ROOMY_BYTES`, a worker the pool starts
    would get that stack and could not run the GEMM's code, so every part runs on the
    calling thread, one after the other."""
    if len(calls) == 1 or 0 < threading.stack_size() < ROOMY_BYTES:
        for call in calls:
            call()
        return
    pool = _workers(len(calls) - 1)
    futures = [pool.submit(call) for call in calls[1:]]
    try:
        calls[0]()
    finally:
        for future in futures:
            future.exception()  # waits for it
    for future in futures:
        future.result()


def _workers(count: int) -> ThreadPoolExecutor:
    """The process's pool, with at least `count` workers (see the module docstring)."""
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < count:
            _pool = ThreadPoolExecutor(count, thread_name_prefix="irflow-kernel")
            _pool_workers = count
        return _pool


def _forget_the_pool() -> None:
    """In a forked child: the parent's pool has no threads here, so tasks handed to it
    would wait forever; the next split makes a pool of the child's own."""
    global _pool, _pool_workers, _pool_lock
    _pool, _pool_workers, _pool_lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_the_pool)
