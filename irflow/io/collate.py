"""Collation: a list of samples into one batch, and batches into Tensors.

`default_collate_fn` stacks field by field, as Paddle's does: NumPy arrays with
``np.stack``, Tensors with ``paddle.stack``, numbers into an array (int64, float64 or
bool, or the NumPy scalar's own dtype), strings into a list, and recursively through
dicts and sequences (a tuple sample gives a list of batched fields). The DataLoader
then turns every NumPy array of the result into a Tensor (`to_tensors`), also the
arrays a custom ``collate_fn`` returns.

Worker processes send batches as NumPy (`to_arrays`), so a batch crosses the process
boundary as plain arrays whatever the collate function built.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..tensor.manipulation import stack
from ..tensor.tensor import Tensor

__all__ = ["default_collate_fn", "default_convert_fn"]


def default_collate_fn(batch: list):
    """One batch from a list of samples that share one structure."""
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(batch, axis=0)
    if isinstance(sample, Tensor):
        return stack(batch, axis=0)
    if isinstance(sample, numbers.Number):
        return np.array(batch)
    if isinstance(sample, (str, bytes)):
        return batch
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([s[key] for s in batch]) for key in sample}
    if isinstance(sample, Sequence):
        if any(len(s) != len(sample) for s in batch):
            raise RuntimeError(f"the samples of a batch have different numbers of fields: "
                               f"{sorted({len(s) for s in batch})}")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(f"default_collate_fn cannot batch samples of type "
                    f"{type(sample).__name__}: a sample must be a NumPy array, a Tensor, a "
                    f"number, a string, or a dict/list/tuple of them (or give the "
                    f"DataLoader a collate_fn)")


def default_convert_fn(sample):
    """A sample for ``batch_size=None``: as it is, with its tuples made lists as
    Paddle does (the arrays become Tensors later)."""
    if isinstance(sample, Mapping):
        return {k: default_convert_fn(v) for k, v in sample.items()}
    if isinstance(sample, Sequence) and not isinstance(sample, (str, bytes)):
        return [default_convert_fn(v) for v in sample]
    return sample


def _map(structure, leaf):
    """`leaf` applied through dicts and sequences, which come back as dicts and lists
    (a tuple or a namedtuple too), as Paddle's DataLoader rebuilds a batch."""
    if isinstance(structure, Mapping):
        return {k: _map(v, leaf) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [_map(v, leaf) for v in structure]
    return leaf(structure)


def to_tensors(batch):
    """`batch` with each NumPy array made a Tensor (a Tensor is kept), and its tuples
    made lists: what a ``collate_fn`` returns reaches the loop as Paddle gives it."""
    return _map(batch, lambda x: Tensor._from_array(_owned(x)) if isinstance(x, np.ndarray)
                else x)


def _owned(array: np.ndarray) -> np.ndarray:
    """A copy of `array` (so that changing an array the dataset keeps cannot change
    the batch) with NumPy's own descriptor of its dtype: an unpickled array (from a
    worker, or a file) carries an equal but distinct dtype object, and irflow's hot
    paths compare dtypes by identity."""
    return np.array(array).view(np.dtype(array.dtype.str))


def to_arrays(batch):
    """`batch` with each Tensor made a NumPy array, to send to another process."""
    return _map(batch, lambda x: x.numpy() if isinstance(x, Tensor) else x)
