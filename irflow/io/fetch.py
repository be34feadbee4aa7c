"""Fetchers: one batch from a dataset, the same in the main process and in workers."""
from __future__ import annotations

import itertools


class MapFetcher:
    """Batches of a map-style dataset: ``collate_fn([dataset[i] for i in indices])``,
    or ``collate_fn(dataset[index])`` without automatic batching."""

    def __init__(self, dataset, collate_fn, auto_collate: bool) -> None:
        self.dataset, self.collate_fn, self.auto_collate = dataset, collate_fn, auto_collate

    def fetch(self, indices):
        if self.auto_collate:
            return self.collate_fn([self.dataset[i] for i in indices])
        return self.collate_fn(self.dataset[indices])


class IterFetcher:
    """Batches of an iterable dataset, read from its iterator `batch_size` samples at
    a time; raises StopIteration when it is drained (or only a short batch is left
    with `drop_last`)."""

    def __init__(self, dataset, collate_fn, auto_collate: bool, batch_size, drop_last: bool):
        self.iterator = iter(dataset)
        self.collate_fn, self.auto_collate = collate_fn, auto_collate
        self.batch_size, self.drop_last = batch_size, drop_last

    def fetch(self, indices=None):
        if not self.auto_collate:
            return self.collate_fn(next(self.iterator))
        batch = list(itertools.islice(self.iterator, self.batch_size))
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)
