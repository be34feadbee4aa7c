"""DataLoader worker processes (``num_workers > 0``).

Each worker is a forked process with its own index queue; all share one result
queue. The main process hands out batches round-robin (the batch sampler's index
lists; for an iterable dataset, requests for the worker's next batch), keeps
``prefetch_factor`` per worker in flight, and yields results in the order it handed
them out, so the batches are the same, in the same order, as with ``num_workers=0``.

A batch travels pickled by the worker itself (Tensors as NumPy arrays), so anything
that cannot be sent fails in the worker with its own traceback. Failures never hang
the main process: an exception in a worker comes back as a `WorkerError` with the
worker's traceback; a worker that dies is noticed within `POLL` seconds, and with a
``timeout`` a batch that takes longer raises. Either way the workers are shut down
and the next ``iter(loader)`` starts fresh ones.

Seeds: the DataLoader draws a base seed from irflow's generator per pass, and worker
``i`` seeds its own (copied) irflow, NumPy and `random` generators with
``base_seed + i``, so workers do not repeat each other's random draws and a run is
reproducible under ``paddle.seed``.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import random
import time
import traceback
import weakref
from dataclasses import dataclass

import numpy as np

from ..tensor.random import seed as seed_irflow
from .collate import to_arrays, to_tensors
from .fetch import IterFetcher, MapFetcher

__all__ = ["WorkerInfo", "get_worker_info", "WorkerError"]

POLL = 0.2  # seconds between checks that workers (or, in a worker, its parent) live


class WorkerError(RuntimeError):
    """A DataLoader worker failed: its message holds the worker's traceback."""


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info` tells the dataset code running in a worker."""
    id: int
    num_workers: int
    seed: int
    dataset: object


# Set once, in a worker process, before any dataset code runs there: never in the
# main process, whose value stays None.
_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker, its `WorkerInfo` (id, num_workers, seed, dataset); in the
    main process, None. An IterableDataset uses it to split its stream."""
    return _worker_info


_STOPPED = "stopped"  # a worker's answer once its iterable dataset is drained


def _worker_loop(config: dict, worker_id: int, index_queue, result_queue, parent: int):
    global _worker_info
    seed = config["base_seed"] + worker_id
    seed_irflow(seed)
    np.random.seed(seed % 2 ** 32)
    random.seed(seed)
    _worker_info = WorkerInfo(worker_id, config["num_workers"], seed, config["dataset"])
    failure = None
    try:
        if config["worker_init_fn"] is not None:
            config["worker_init_fn"](worker_id)
        fetcher = config["make_fetcher"]()
    except Exception:  # noqa: BLE001  (reported with the first batch asked for)
        failure = traceback.format_exc()
    while True:
        try:
            item = index_queue.get(timeout=POLL)
        except queue.Empty:
            if os.getppid() != parent:  # the main process died: stop
                return
            continue
        if item is None:
            return
        idx, indices = item
        if failure is not None:
            result_queue.put((idx, worker_id, None, failure))
            continue
        try:
            payload = pickle.dumps(to_arrays(fetcher.fetch(indices)))
        except StopIteration:
            result_queue.put((idx, worker_id, None, _STOPPED))
        except Exception:  # noqa: BLE001  (sent to the main process, which raises it)
            result_queue.put((idx, worker_id, None, traceback.format_exc()))
        else:
            result_queue.put((idx, worker_id, payload, None))


def _context():
    """Fork where the platform has it: workers inherit the dataset and the modules as
    they are (also the `paddle` name of ``python -m irflow.paddle``) without pickling."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _shutdown(workers, index_queues, result_queue) -> None:
    for q in index_queues:
        try:
            q.put(None)
        except (OSError, ValueError):  # already closed
            pass
    deadline = time.monotonic() + 1.0
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
        if w.is_alive():
            w.terminate()
            w.join(1.0)
    for q in [*index_queues, result_queue]:
        q.cancel_join_thread()
        q.close()


_SKIP = object()  # a request answered by a drained worker: no batch at that position


class _Failed:
    """A worker's traceback, raised when its batch's turn comes."""

    def __init__(self, message: str) -> None:
        self.message = message


class MultiprocessIterator:
    """One pass over a DataLoader with worker processes."""

    def __init__(self, loader, base_seed: int) -> None:
        self._loader = loader
        n = loader.num_workers
        ctx = _context()
        self._iterable = loader._index_source is None
        self._indices = None if self._iterable else iter(loader._index_source)
        config = {"base_seed": base_seed, "num_workers": n, "dataset": loader.dataset,
                  "worker_init_fn": loader.worker_init_fn, "make_fetcher": loader._fetcher}
        self._result_queue = ctx.Queue()
        self._index_queues = [ctx.Queue() for _ in range(n)]
        self._workers = [ctx.Process(target=_worker_loop, daemon=True,
                                     args=(config, i, self._index_queues[i],
                                           self._result_queue, os.getpid()))
                         for i in range(n)]
        for w in self._workers:
            w.start()
        self._close = weakref.finalize(self, _shutdown, self._workers, self._index_queues,
                                       self._result_queue)
        self._active = set(range(n))   # workers that may still give batches
        self._sent, self._received = 0, 0
        self._pending: dict[int, object] = {}  # batch number -> its sample indices
        self._ready: dict[int, object] = {}
        self._turn = 0
        for _ in range(loader.prefetch_factor * n):
            if not self._send():
                break

    def __iter__(self):
        return self

    def _send(self) -> bool:
        """Hand out the next batch to the next worker; False when there is none."""
        if self._iterable:
            if not self._active:
                return False
            order = sorted(self._active)
            worker = next((w for w in order if w >= self._turn), order[0])
            indices = None
        else:
            indices = next(self._indices, None)
            if indices is None:
                return False
            worker = self._turn
        self._turn = (worker + 1) % len(self._workers)
        self._index_queues[worker].put((self._sent, indices))
        self._pending[self._sent] = indices
        self._sent += 1
        return True

    def __next__(self):
        while self._close.alive:  # until drained, or shut down by an error
            if self._received in self._ready:
                batch = self._ready.pop(self._received)
                self._received += 1
                self._send()
                if batch is _SKIP:
                    continue
                if isinstance(batch, _Failed):
                    self._close()
                    raise WorkerError(batch.message)
                return to_tensors(pickle.loads(batch))
            if not self._pending:
                self._close()
                break
            self._receive()
        raise StopIteration

    def _receive(self) -> None:
        idx, worker, payload, error = self._get()
        indices = self._pending.pop(idx)
        if error == _STOPPED:
            self._active.discard(worker)
            self._ready[idx] = _SKIP
        elif error is not None:
            where = "" if indices is None else f" (sample indices {indices})"
            self._ready[idx] = _Failed(f"DataLoader worker {worker} failed while loading "
                                       f"batch {idx}{where}; its traceback:\n"
                                       f"{error.rstrip()}")
        else:
            self._ready[idx] = payload

    def _get(self):
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            try:
                return self._result_queue.get(timeout=POLL)
            except queue.Empty:
                pass
            for i, w in enumerate(self._workers):
                if not w.is_alive():
                    self._close()
                    raise WorkerError(f"DataLoader worker {i} (pid {w.pid}) exited "
                                      f"unexpectedly with exit code {w.exitcode} while "
                                      f"the main process waited for a batch")
            if timeout and time.monotonic() - start > timeout:
                self._close()
                raise WorkerError(f"DataLoader timed out: no batch from its "
                                  f"{len(self._workers)} workers within {timeout} s "
                                  f"(the DataLoader's timeout)")
