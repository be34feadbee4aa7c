"""`DataLoader`: Paddle's ``paddle.io.DataLoader`` over map-style and iterable datasets,
in the main process or in worker processes (`irflow.io.worker`)."""
from __future__ import annotations

from ..context import current_static
from .collate import default_collate_fn, default_convert_fn, to_tensors
from .dataset import IterableDataset
from .fetch import IterFetcher, MapFetcher
from .random import host_seed
from .sampler import BatchSampler, RandomSampler, SequenceSampler
from .worker import MultiprocessIterator

__all__ = ["DataLoader"]


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class DataLoader:
    """Batches of `dataset`, as Tensors: ``for x, y in DataLoader(ds, batch_size=32,
    shuffle=True)``.

    Batches come from `batch_sampler` if given, else from a `BatchSampler` over the
    dataset (`batch_size`, `shuffle`, `drop_last`); ``batch_size=None`` yields single
    samples. `collate_fn` (default: `default_collate_fn`) builds a batch from a list
    of samples; NumPy arrays in what it returns become Tensors. An `IterableDataset`
    is read in order, `batch_size` samples at a time (no shuffle, no sampler).
    With ``num_workers > 0`` batches are loaded by that many worker processes (see
    `irflow.io.worker`), in the same order. `timeout` (seconds, 0: none) bounds the
    wait for a worker's batch. In static-graph mode with ``return_list=False``, each
    batch is what ``Executor.run`` takes as its feed, as in Paddle: a list of one dict
    (one per device) from the names of `feed_list`, the ``static.data`` variables,
    to the batch's fields in order. `places`, `use_buffer_reader`,
    `use_shared_memory` and `persistent_workers` are accepted for compatibility:
    irflow runs on the CPU of one process, and workers start anew for each pass."""

    def __init__(self, dataset, feed_list=None, places=None, return_list: bool = True,
                 batch_sampler=None, batch_size: int | None = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn=None, num_workers: int = 0,
                 use_buffer_reader: bool = True, prefetch_factor: int = 2,
                 use_shared_memory: bool = True, timeout: float = 0, worker_init_fn=None,
                 persistent_workers: bool = False) -> None:
        self.dataset = dataset
        self.return_list = return_list
        self.feed_list = feed_list
        self._feed_names = _feed_names(feed_list, return_list)
        self.num_workers = _check_int("num_workers", num_workers, 0)
        self.prefetch_factor = _check_int("prefetch_factor", prefetch_factor, 1)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        self.timeout = timeout
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"collate_fn must be a function, not {type(collate_fn).__name__}")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError("worker_init_fn must be a function of the worker id")
        self.worker_init_fn = worker_init_fn
        self._is_iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError("give either batch_sampler or batch_size/shuffle/drop_last, "
                                 "not both: the batch sampler decides the batches")
            if self._is_iterable:
                raise ValueError("an IterableDataset cannot take a batch_sampler")
            batch_size = None  # as Paddle's: the batch sampler owns the batch size
        elif batch_size is not None:
            _check_int("batch_size", batch_size, 1)
        if self._is_iterable and shuffle:
            raise ValueError(f"an IterableDataset cannot be shuffled, but got "
                             f"shuffle={shuffle}")
        self.batch_size, self.drop_last = batch_size, drop_last
        self._auto_collate = batch_sampler is not None or batch_size is not None
        if self._is_iterable:
            self.batch_sampler = None
            self._index_source = None
        elif batch_sampler is not None:
            self.batch_sampler = self._index_source = batch_sampler
        elif batch_size is not None:
            self.batch_sampler = self._index_source = BatchSampler(
                dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last)
        else:
            self.batch_sampler = None
            self._index_source = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.collate_fn = collate_fn or (default_collate_fn if self._auto_collate
                                         else default_convert_fn)

    def _fetcher(self):
        """A fresh fetcher for one pass (in the main process or in a worker)."""
        if self._is_iterable:
            return IterFetcher(self.dataset, self.collate_fn, self._auto_collate,
                               self.batch_size, self.drop_last)
        return MapFetcher(self.dataset, self.collate_fn, self._auto_collate)

    def __len__(self) -> int:
        if self._is_iterable:
            raise TypeError("a DataLoader over an IterableDataset has no length")
        return len(self._index_source)

    def __iter__(self):
        # One seed per pass, used by the workers' generators: drawn with or without
        # workers, so that irflow's random stream after a pass (dropout, the next
        # shuffle) does not depend on num_workers.
        base_seed = host_seed()
        if self.num_workers > 0:
            batches = MultiprocessIterator(self, base_seed)
        else:
            batches = self._single_process()
        return batches if self._feed_names is None else self._as_feeds(batches)

    __call__ = __iter__

    def _single_process(self):
        fetcher = self._fetcher()
        if self._is_iterable:
            while True:
                try:
                    batch = fetcher.fetch()
                except StopIteration:
                    return
                yield to_tensors(batch)
        for indices in self._index_source:
            yield to_tensors(fetcher.fetch(indices))

    def _as_feeds(self, batches):
        """Each batch as an Executor's feed: ``[{name: field}]``."""
        names = self._feed_names
        for batch in batches:
            fields = list(batch) if isinstance(batch, list | tuple) else [batch]
            if len(fields) != len(names):
                raise ValueError(f"DataLoader: a batch has {len(fields)} fields, but "
                                 f"feed_list names {len(names)} variables ({', '.join(names)})")
            yield [dict(zip(names, fields))]


def _feed_names(feed_list, return_list: bool) -> list[str] | None:
    """The names batches are fed under: those of `feed_list`'s variables in
    static-graph mode with ``return_list=False``; None when batches are plain."""
    if return_list or current_static() is None:
        return None
    if feed_list is None:
        raise ValueError("DataLoader: feed_list (the static.data variables a batch feeds) "
                         "should be set when return_list=False in static-graph mode")
    names = [getattr(v, "name", None) for v in feed_list]
    if not all(isinstance(n, str) for n in names):
        raise TypeError("DataLoader: feed_list should hold named variables "
                        "(paddle.static.data), one per field of a batch")
    return names
