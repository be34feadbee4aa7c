"""Parity with PaddlePaddle 3.3.1 in paddle.io found by the s14 hunt: the index a
ConcatDataset hands its datasets, a DataLoader's batch_size beside a batch sampler,
and WeightedRandomSampler's 2-D weights (one distribution per row)."""
import numpy as np

import irflow as paddle
from irflow.io import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                       WeightedRandomSampler)


class Indices(Dataset):
    """Sample i is the index the dataset was asked for, as it was given."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def test_concat_dataset_indexes_its_datasets_with_python_ints():
    # Paddle's offsets are Python ints, so a dataset receives an int: code such as
    # isinstance(i, int) or json.dumps(i) in __getitem__ must see one
    data = ConcatDataset([Indices(3), Indices(2)])
    got = [data[i] for i in range(5)] + [data[-1]]
    assert got == [0, 1, 2, 0, 1, 1]
    assert all(type(v) is int for v in got)


def test_dataloader_batch_size_is_none_with_a_batch_sampler():
    # Paddle: the batch sampler decides the batches, the loader's batch_size is None
    sampler = BatchSampler(Indices(5), batch_size=2)
    loader = DataLoader(Indices(5), batch_sampler=sampler)
    assert loader.batch_size is None
    assert [b.numpy().tolist() for b in loader] == [[0, 1], [2, 3], [4]]


def test_weighted_sampler_draws_each_row_of_2d_weights_in_turn():
    # each row is its own distribution: row r's num_samples indices come before row
    # r + 1's, and only where row r has weight
    weights = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    sampler = WeightedRandomSampler(weights, 4)
    assert len(sampler) == 8
    assert list(sampler) == [1, 1, 1, 1, 2, 2, 2, 2]
    paddle.seed(3)
    distinct = list(WeightedRandomSampler(np.array([[1.0, 1.0, 0.0], [0.0, 3.0, 2.0]]), 2,
                                          replacement=False))
    assert sorted(distinct[:2]) == [0, 1] and sorted(distinct[2:]) == [1, 2]

