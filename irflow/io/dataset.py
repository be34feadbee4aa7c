"""Datasets: Paddle's ``paddle.io.Dataset`` family.

A map-style `Dataset` gives samples by index (``__getitem__``, ``__len__``); an
`IterableDataset` gives them as a stream (``__iter__``). The wrappers here
(`TensorDataset`, `Subset`, `ComposeDataset`, `ChainDataset`, `ConcatDataset`) and
`random_split` build datasets from others without copying samples.
"""
from __future__ import annotations

import bisect
import itertools
import math
from typing import Sequence

from ..tensor.tensor import Tensor
from .random import host_rng

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "ConcatDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"'__getitem__' is not implemented in class "
                                  f"{type(self).__name__}")

    def __len__(self) -> int:
        raise NotImplementedError(f"'__len__' is not implemented in class "
                                  f"{type(self).__name__}")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``. With ``num_workers > 0``
    every worker iterates its own copy; split the work with `get_worker_info`."""

    def __iter__(self):
        raise NotImplementedError(f"'__iter__' is not implemented in class "
                                  f"{type(self).__name__}")

    def __getitem__(self, index):
        raise RuntimeError(f"{type(self).__name__} is an IterableDataset: it has no "
                           f"'__getitem__'; iterate it instead")

    def __len__(self) -> int:
        # TypeError, as for any object without a length, so that list(dataset) works.
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it has no "
                        f"'__len__'")


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; the tensors share their first
    dimension."""

    def __init__(self, tensors: Sequence[Tensor]) -> None:
        tensors = list(tensors)
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes a list of Tensors, got a "
                                f"{type(t).__name__}")
        sizes = [t.shape[0] if t.shape else None for t in tensors]
        if None in sizes or len(set(sizes)) != 1:
            raise ValueError(f"the tensors of a TensorDataset must have the same first "
                             f"dimension, got shapes {[t.shape for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def _fields(sample) -> tuple:
    return tuple(sample) if isinstance(sample, (list, tuple)) else (sample,)


def _map_style(datasets, wrapper: str) -> list:
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"{wrapper} needs at least one dataset")
    for d in datasets:
        if isinstance(d, IterableDataset):
            raise TypeError(f"{wrapper} takes map-style datasets, not IterableDatasets")
    return datasets


class ComposeDataset(Dataset):
    """Sample ``i`` joins the fields of sample ``i`` of each dataset into one tuple."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = _map_style(datasets, "ComposeDataset")
        lengths = [len(d) for d in self.datasets]
        if len(set(lengths)) != 1:
            raise ValueError(f"the datasets of a ComposeDataset must have one length, "
                             f"got {lengths}")

    def __len__(self) -> int:
        return len(self.datasets[0])

    def __getitem__(self, index):
        return tuple(f for d in self.datasets for f in _fields(d[index]))


class ChainDataset(IterableDataset):
    """The samples of each iterable dataset in turn."""

    def __init__(self, datasets: Sequence[IterableDataset]) -> None:
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset takes IterableDatasets, got a "
                                f"{type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            yield from d


class ConcatDataset(Dataset):
    """The samples of each map-style dataset in turn, indexed as one dataset."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = _map_style(datasets, "ConcatDataset")
        # Python ints, so that a dataset of it gets a Python int index, as in Paddle
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise IndexError(f"index {index} is out of range for a dataset of "
                                 f"{len(self)} samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which == len(self.datasets):
            raise IndexError(f"index {index} is out of range for a dataset of "
                             f"{len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[float], generator=None) -> list[Subset]:
    """Split `dataset` at random into `Subset`s of the given `lengths` (counts summing
    to its length, or fractions summing to 1: the remainder goes round-robin to the
    first subsets). The permutation comes from irflow's generator, so it is the same
    after the same ``paddle.seed``."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"the lengths given to random_split sum to {sum(lengths)}, but "
                         f"the dataset has {n} samples")
    order = host_rng(generator).permutation(n).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets
