"""Datasets, samplers and worker processes: what each batch holds, in order."""
import numpy as np
import paddle
from paddle.io import (BatchSampler, ComposeDataset, DataLoader, Dataset,
                       DistributedBatchSampler, IterableDataset, Subset, TensorDataset,
                       get_worker_info)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.full([2], i * i, "float32"), i % 3, {"half": i / 2, "name": f"s{i}"}

    def __len__(self):
        return self.n


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, 9, step):
            yield np.array([i, -i], "int64")


def show(name, loader):
    for k, batch in enumerate(loader):
        x, label, extra = batch
        print(name, k, list(x.shape), x.dtype, x.numpy().sum(), label.numpy().tolist(),
              extra["half"].dtype, extra["half"].numpy().tolist(), extra["name"])


show("plain", DataLoader(Squares(7), batch_size=3))
show("workers", DataLoader(Squares(7), batch_size=3, num_workers=2, drop_last=True))
show("subset", DataLoader(Subset(Squares(10), [9, 0, 4]), batch_size=2))
for rank in range(3):
    sampler = DistributedBatchSampler(Squares(10), batch_size=2, num_replicas=3, rank=rank,
                                      shuffle=True)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        print("rank", rank, "epoch", epoch, list(sampler), len(sampler))
show("dist", DataLoader(Squares(10), batch_sampler=DistributedBatchSampler(
    Squares(10), batch_size=2, num_replicas=2, rank=1), num_workers=2))
print("batches", list(BatchSampler(Squares(5), batch_size=2, drop_last=True)))
for k, b in enumerate(DataLoader(Stream(), batch_size=2, num_workers=2)):
    print("stream", k, b.numpy().tolist())
xs = paddle.to_tensor(np.arange(12, dtype="float32").reshape(6, 2))
for a, b in DataLoader(ComposeDataset([TensorDataset([xs]), TensorDataset([xs * 2])]),
                       batch_size=4):
    print("compose", a.numpy().tolist(), b.numpy().sum())
single = next(iter(DataLoader(Squares(3), batch_size=None)))
print("single", type(single).__name__, list(single[0].shape), single[1])
