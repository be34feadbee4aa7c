"""Paddle's ``paddle.io``: datasets, samplers and the DataLoader."""
from .collate import default_collate_fn, default_convert_fn
from .dataloader import DataLoader
from .dataset import (ChainDataset, ComposeDataset, ConcatDataset, Dataset, IterableDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, DistributedBatchSampler, RandomSampler, Sampler,
                      SequenceSampler, SubsetRandomSampler, WeightedRandomSampler)
from .worker import WorkerError, WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "ConcatDataset", "Subset", "random_split", "Sampler", "SequenceSampler",
           "RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler", "BatchSampler",
           "DistributedBatchSampler", "DataLoader", "get_worker_info", "WorkerInfo",
           "WorkerError", "default_collate_fn", "default_convert_fn"]
