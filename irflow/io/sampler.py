"""Samplers: which sample indices a DataLoader reads, and in what order.

`Sampler`s yield single indices; `BatchSampler` and `DistributedBatchSampler` yield
lists of indices, one list per batch. Random orders come from irflow's generator
(see `irflow.io.random`), freshly each epoch, except `DistributedBatchSampler`'s,
which is NumPy's ``RandomState(epoch)`` as in Paddle, so every rank shuffles alike
without sharing a generator.
"""
from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from ..tensor.tensor import Tensor
from .dataset import IterableDataset
from .random import host_rng

__all__ = ["Sampler", "SequenceSampler", "RandomSampler", "WeightedRandomSampler",
           "SubsetRandomSampler", "BatchSampler", "DistributedBatchSampler"]


class Sampler:
    """The base of index samplers: subclasses define ``__iter__`` (and ``__len__``)."""

    def __init__(self, data_source=None) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (with `replacement`: `num_samples` draws
    with replacement), new each time it is iterated. `generator` may be an iterator
    of indices (as in Paddle), a ``numpy.random.Generator`` or an int seed."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be a bool, got {replacement!r}")
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples must be a positive integer, got {self.num_samples}")
        if not replacement and self.num_samples > len(data_source):
            raise ValueError(f"num_samples ({self.num_samples}) is larger than the dataset "
                             f"({len(data_source)}) without replacement")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        if self.generator is not None and hasattr(self.generator, "__next__"):
            for _, index in zip(range(self.num_samples), self.generator):
                yield index
            return
        rng = host_rng(self.generator)
        n = len(self.data_source)
        if self.replacement:
            yield from rng.integers(0, n, self.num_samples).tolist()
        else:
            yield from rng.permutation(n)[:self.num_samples].tolist()

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`. With
    2-D weights, as in Paddle, each row is a distribution of its own: `num_samples`
    indices (into the row) are drawn from each row in turn, so the sampler yields
    ``rows * num_samples`` indices."""

    def __init__(self, weights, num_samples: int, replacement: bool = True) -> None:
        super().__init__()
        if isinstance(weights, Tensor):
            weights = weights.numpy()
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim not in (1, 2) or np.any(weights < 0) \
                or not np.all(weights.sum(axis=-1) > 0):
            raise ValueError(f"WeightedRandomSampler: weights must be a 1-D or 2-D array of "
                             f"non-negative numbers, not all zero in a row, got shape "
                             f"{list(weights.shape)}")
        if not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples}")
        nonzero = int(np.min(np.count_nonzero(weights, axis=-1)))
        if not replacement and num_samples > nonzero:
            raise ValueError(f"cannot draw {num_samples} distinct indices from "
                             f"{nonzero} with non-zero weight")
        self.weights, self.num_samples, self.replacement = weights, num_samples, replacement

    def __iter__(self):
        rng = host_rng()
        for row in self.weights.reshape(-1, self.weights.shape[-1]):
            p = row / row.sum()
            yield from rng.choice(len(p), self.num_samples, self.replacement, p).tolist()

    def __len__(self) -> int:
        rows = self.weights.shape[0] if self.weights.ndim == 2 else 1
        return self.num_samples * rows


class SubsetRandomSampler(Sampler):
    """The given `indices` in a random order, new each epoch."""

    def __init__(self, indices: Sequence[int]) -> None:
        super().__init__()
        if len(indices) == 0:
            raise ValueError("SubsetRandomSampler needs at least one index")
        self.indices = indices

    def __iter__(self):
        for i in host_rng().permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _batches(indices, batch_size: int, drop_last: bool):
    batch = []
    for i in indices:
        batch.append(i)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class BatchSampler(Sampler):
    """Lists of `batch_size` indices, from `sampler` or else from `dataset` (in order,
    or shuffled with `shuffle`); `drop_last` drops a short last batch."""

    def __init__(self, dataset=None, sampler=None, shuffle: bool = False,
                 batch_size: int = 1, drop_last: bool = False) -> None:
        super().__init__()
        if (dataset is None) == (sampler is None):
            raise ValueError("BatchSampler takes exactly one of dataset and sampler")
        if sampler is not None:
            if shuffle:
                raise ValueError("shuffle is for a dataset; a sampler decides its own order")
            self.sampler = sampler
        else:
            if isinstance(dataset, IterableDataset):
                raise ValueError("an IterableDataset has no indices to batch: give it to "
                                 "DataLoader directly")
            if not isinstance(shuffle, bool):
                raise TypeError(f"shuffle must be a bool, got {shuffle!r}")
            self.sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.shuffle = shuffle
        self.batch_size = _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise TypeError(f"drop_last must be a bool, got {drop_last!r}")
        self.drop_last = drop_last

    def __iter__(self):
        return _batches(self.sampler, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """The batches of one rank (`rank` of `num_replicas`, given explicitly: irflow runs
    in one process). The indices are padded by repeating the first ones to a multiple
    of `num_replicas` and, with `shuffle`, permuted by NumPy's ``RandomState(epoch)``
    (the epoch advances after each pass, or is set by `set_epoch`). Each rank then
    takes every `num_replicas`-th run of `batch_size` indices, and its share of the
    shorter runs at the end, as Paddle does, so ranks see disjoint batches."""

    def __init__(self, dataset, batch_size: int, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = False,
                 drop_last: bool = False) -> None:
        Sampler.__init__(self)
        self.dataset = dataset
        self.batch_size = _positive_int("batch_size", batch_size)
        if not isinstance(shuffle, bool):
            raise TypeError(f"shuffle must be a bool, got {shuffle!r}")
        if not isinstance(drop_last, bool):
            raise TypeError(f"drop_last must be a bool, got {drop_last!r}")
        self.nranks = 1 if num_replicas is None else _positive_int("num_replicas", num_replicas)
        self.local_rank = 0 if rank is None else rank
        if isinstance(self.local_rank, bool) or not isinstance(self.local_rank, int) \
                or not 0 <= self.local_rank < self.nranks:
            raise ValueError(f"rank must be an integer in [0, {self.nranks}), got {rank!r}")
        self.shuffle, self.drop_last = shuffle, drop_last
        self.epoch = 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)
        self.total_size = self.num_samples * self.nranks

    def _rank_indices(self) -> list[int]:
        n = len(self.dataset)
        indices = list(range(n))
        padding = self.total_size - n
        indices += (indices * math.ceil(padding / max(n, 1)))[:padding]
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        if self.nranks == 1:
            return indices
        stride = self.batch_size * self.nranks
        tail = self.total_size % stride  # the last, shorter runs, shared out evenly
        mine = []
        for start in range(self.local_rank * self.batch_size, self.total_size - tail, stride):
            mine.extend(indices[start:start + self.batch_size])
        share = tail // self.nranks
        rest = indices[self.total_size - tail:]
        mine.extend(rest[self.local_rank * share:(self.local_rank + 1) * share])
        return mine

    def __iter__(self):
        return _batches(self._rank_indices(), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_samples // self.batch_size
        return math.ceil(self.num_samples / self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch that seeds the next shuffle (call it before each epoch so that
        every rank shuffles alike)."""
        self.epoch = epoch
