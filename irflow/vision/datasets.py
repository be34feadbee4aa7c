"""Paddle's ``paddle.vision.datasets`` download their data, which irflow does not do:
each class here raises `NotImplementedError` naming the dataset and the way to use
local data instead (an `irflow.io.Dataset` subclass)."""
from __future__ import annotations


class _Downloaded:
    """A dataset Paddle downloads: constructing it explains what to do instead."""

    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        raise NotImplementedError(
            f"paddle.vision.datasets.{name} downloads its data, which irflow cannot do. "
            f"Put the {name} files on disk and read them with a subclass of "
            "paddle.io.Dataset (defining __getitem__ and __len__), or wrap arrays already "
            "in memory with paddle.io.TensorDataset.")


class MNIST(_Downloaded):
    """The MNIST digits (not available: see the module's doc)."""


class FashionMNIST(_Downloaded):
    """Fashion-MNIST (not available: see the module's doc)."""


class Cifar10(_Downloaded):
    """CIFAR-10 (not available: see the module's doc)."""


class Cifar100(_Downloaded):
    """CIFAR-100 (not available: see the module's doc)."""


class Flowers(_Downloaded):
    """Oxford 102 Flowers (not available: see the module's doc)."""


class VOC2012(_Downloaded):
    """Pascal VOC 2012 (not available: see the module's doc)."""


__all__ = ["Cifar10", "Cifar100", "FashionMNIST", "Flowers", "MNIST", "VOC2012"]
