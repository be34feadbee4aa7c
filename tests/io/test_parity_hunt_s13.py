"""Parity with PaddlePaddle 3.3.1 of how batches and loaded files come back: the
structure of a batch a custom ``collate_fn`` builds, and which saved NumPy arrays
``paddle.load`` turns into Tensors. Each expectation states the rule Paddle follows."""
import collections

import numpy as np

import irflow as paddle
from irflow.io import DataLoader, Dataset


class Pairs(Dataset):
    """Sample i: (a float32 [2] vector of i, the int i)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.full([2], i, "float32"), i


Batch = collections.namedtuple("Batch", "x y")


def _stacked_tuple(samples):
    return np.stack([s[0] for s in samples]), np.array([s[1] for s in samples])


def _stacked_namedtuple(samples):
    return Batch(*_stacked_tuple(samples))


def test_collate_fn_tuples_come_back_as_lists_of_tensors():
    """Paddle's loader flattens what ``collate_fn`` returns and rebuilds it, every
    sequence as a list and every NumPy array as a Tensor (namedtuples included)."""
    for collate in (_stacked_tuple, _stacked_namedtuple):
        x, y = batch = next(iter(DataLoader(Pairs(), batch_size=2, collate_fn=collate)))
        assert type(batch) is list
        assert isinstance(x, paddle.Tensor) and isinstance(y, paddle.Tensor)
        np.testing.assert_array_equal(x.numpy(), [[0, 0], [1, 1]])
        np.testing.assert_array_equal(y.numpy(), [0, 1])


def test_collate_fn_nested_tuples_in_dicts_become_lists():
    def collate(samples):
        return collections.OrderedDict(a=(_stacked_tuple(samples)[0], "tag"))

    batch = next(iter(DataLoader(Pairs(), batch_size=2, collate_fn=collate)))
    assert type(batch) is dict and type(batch["a"]) is list
    assert isinstance(batch["a"][0], paddle.Tensor) and batch["a"][1] == "tag"


def test_load_keeps_arrays_of_an_object_that_holds_tensors(tmp_path):
    """Paddle saves a Tensor as a (name, array) pair; when a file has such pairs, only
    they become Tensors on load and plain arrays stay arrays (a checkpoint's RNG
    state, say). Without any Tensor in the object, every array becomes a Tensor."""
    rng_state = np.arange(3)
    checkpoint = {"model": {"w": paddle.to_tensor([1.0, 2.0])}, "rng": rng_state,
                  "history": [paddle.to_tensor([3.0]), np.ones(2, "float16")]}
    paddle.save(checkpoint, tmp_path / "ck")
    back = paddle.load(tmp_path / "ck")
    assert isinstance(back["model"]["w"], paddle.Tensor)
    assert isinstance(back["history"][0], paddle.Tensor)
    assert type(back["rng"]) is np.ndarray and back["rng"].dtype == np.int64
    np.testing.assert_array_equal(back["rng"], rng_state)
    assert type(back["history"][1]) is np.ndarray and back["history"][1].dtype == np.float16

    paddle.save({"arrays": [np.arange(3)], "n": 1}, tmp_path / "plain")
    plain = paddle.load(tmp_path / "plain")
    assert isinstance(plain["arrays"][0], paddle.Tensor) and plain["n"] == 1
    np.testing.assert_array_equal(plain["arrays"][0].numpy(), np.arange(3))
    assert type(paddle.load(tmp_path / "plain", return_numpy=True)["arrays"][0]) is np.ndarray
