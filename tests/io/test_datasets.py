"""Datasets and samplers: indexing, wrappers, random_split and the batch samplers
(DistributedBatchSampler against batches worked out by hand from Paddle's rule)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.io import (BatchSampler, ChainDataset, ComposeDataset, ConcatDataset, Dataset,
                       DistributedBatchSampler, IterableDataset, RandomSampler,
                       SequenceSampler, Subset, SubsetRandomSampler, TensorDataset,
                       WeightedRandomSampler, random_split)


class Range(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i

    def __len__(self):
        return self.n


class Stream(IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


def test_the_base_classes_say_what_is_missing():
    with pytest.raises(NotImplementedError, match="'__getitem__' is not implemented in "
                                                  "class Dataset"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(Dataset())
    with pytest.raises(TypeError, match="IterableDataset"):
        len(Stream([1]))


def test_tensor_dataset():
    x = paddle.to_tensor(np.arange(6.0).reshape(3, 2))
    y = paddle.to_tensor([7, 8, 9])
    ds = TensorDataset([x, y])
    assert len(ds) == 3
    a, b = ds[1]
    np.testing.assert_array_equal(a.numpy(), [2.0, 3.0])
    assert b.item() == 8 and b.shape == []
    with pytest.raises(ValueError, match="first dimension"):
        TensorDataset([x, paddle.to_tensor([1, 2])])
    with pytest.raises(TypeError, match="Tensors"):
        TensorDataset([np.ones(3)])


def test_wrappers():
    assert [Subset(Range(10), [3, 1, 4])[i] for i in range(3)] == [3, 1, 4]
    cat = ConcatDataset([Range(2), Range(3)])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 0, 1, 2] and cat[-1] == 2
    assert len(Range(2) + Range(4)) == 6
    with pytest.raises(IndexError):
        cat[5]
    assert ComposeDataset([Range(3), TensorDataset([paddle.to_tensor([5, 6, 7])])])[2][0] == 2
    with pytest.raises(ValueError, match="one length"):
        ComposeDataset([Range(3), Range(4)])
    assert list(ChainDataset([Stream([1, 2]), Stream([3])])) == [1, 2, 3]


def test_random_split_is_a_partition_and_follows_paddle_seed():
    paddle.seed(5)
    a, b = random_split(Range(10), [3, 7])
    got = [a[i] for i in range(len(a))] + [b[i] for i in range(len(b))]
    assert sorted(got) == list(range(10)) and len(a) == 3
    paddle.seed(5)
    a2, _ = random_split(Range(10), [3, 7])
    assert [a2[i] for i in range(3)] == got[:3]
    # Fractions: floor of each share, the remainder round-robin from the first.
    assert [len(s) for s in random_split(Range(10), [0.25, 0.25, 0.5])] == [3, 2, 5]
    with pytest.raises(ValueError, match="sum to 9"):
        random_split(Range(10), [4, 5])


def test_samplers():
    assert list(SequenceSampler(Range(4))) == [0, 1, 2, 3]
    paddle.seed(0)
    first = list(RandomSampler(Range(20)))
    assert sorted(first) == list(range(20)) and first != list(range(20))
    paddle.seed(0)
    assert list(RandomSampler(Range(20))) == first
    assert list(RandomSampler(Range(3), generator=iter([2, 0, 1]))) == [2, 0, 1]
    drawn = list(RandomSampler(Range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 9, 2])) == [2, 5, 9]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 40))
    assert set(weighted) <= {1, 3} and weighted.count(3) > weighted.count(1)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(Range(3), num_samples=5)


def test_batch_sampler():
    assert list(BatchSampler(Range(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    s = BatchSampler(Range(5), batch_size=2, drop_last=True)
    assert list(s) == [[0, 1], [2, 3]] and len(s) == 2
    assert len(BatchSampler(Range(5), batch_size=2)) == 3
    assert list(BatchSampler(sampler=SequenceSampler(Range(3)), batch_size=3)) == [[0, 1, 2]]
    paddle.seed(2)
    shuffled = [i for b in BatchSampler(Range(9), shuffle=True, batch_size=4) for i in b]
    assert sorted(shuffled) == list(range(9)) and shuffled != list(range(9))
    with pytest.raises(ValueError, match="exactly one"):
        BatchSampler(batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(Range(3), batch_size=0)


@pytest.mark.parametrize("rank, want", [(0, [[0, 1], [6, 7]]), (1, [[2, 3], [8, 9]]),
                                        (2, [[4, 5], [10, 0]])])
def test_distributed_batch_sampler_splits_runs_of_batches(rank, want):
    # 11 samples on 3 ranks: padded to 12 with index 0; runs of 3 * 2 indices, the
    # last run shorter than 6 would be shared out evenly (here there is none).
    s = DistributedBatchSampler(Range(11), batch_size=2, num_replicas=3, rank=rank)
    assert list(s) == want and len(s) == 2


def test_distributed_batch_sampler_shares_the_short_tail():
    # 10 samples, 2 ranks, batch 3: runs of 6, then a tail of 4 shared 2 and 2.
    got = [list(DistributedBatchSampler(Range(10), 3, num_replicas=2, rank=r))
           for r in range(2)]
    assert got == [[[0, 1, 2], [6, 7]], [[3, 4, 5], [8, 9]]]
    assert list(DistributedBatchSampler(Range(10), 3, num_replicas=2, rank=1,
                                        drop_last=True)) == [[3, 4, 5]]


def test_distributed_shuffle_is_numpy_random_state_of_the_epoch():
    s = DistributedBatchSampler(Range(8), batch_size=8, shuffle=True)
    perm = list(range(8))
    np.random.RandomState(0).shuffle(perm)
    assert list(s) == [perm]
    perm = list(range(8))
    np.random.RandomState(1).shuffle(perm)
    assert list(s) == [perm]  # the epoch advanced
    s.set_epoch(0)
    ranks = [[i for b in DistributedBatchSampler(Range(8), 2, 2, r, shuffle=True) for i in b]
             for r in range(2)]
    assert sorted(ranks[0] + ranks[1]) == list(range(8))  # every rank shuffles alike


def test_distributed_batch_sampler_checks_the_rank():
    with pytest.raises(ValueError, match=r"rank must be an integer in \[0, 2\)"):
        DistributedBatchSampler(Range(4), 2, num_replicas=2, rank=2)
