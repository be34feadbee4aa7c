"""Parity with PaddlePaddle 3.3.1: paddle.Model always passes a hook its `logs`
argument (None when there are none), so callbacks written without defaults work."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
from irflow.io import Dataset


class Rows(Dataset):
    def __init__(self, n):
        self.x = np.arange(n * 2, dtype="float32").reshape(n, 2) / n
        self.y = (np.arange(n) % 2).astype("int64")[:, None]

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class NoDefaults(paddle.callbacks.Callback):
    """Every hook it overrides takes logs positionally, without a default."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs):
        self.calls.append(("train_begin", logs))

    def on_epoch_begin(self, epoch, logs):
        self.calls.append(("epoch_begin", epoch, logs))

    def on_train_batch_begin(self, step, logs):
        self.calls.append(("batch_begin", step))

    def on_epoch_end(self, epoch, logs):
        self.calls.append(("epoch_end", epoch, logs["step"]))


def test_fit_passes_logs_to_callbacks_without_defaults():
    model = paddle.Model(nn.Linear(2, 2))
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    recorder = NoDefaults()
    model.fit(Rows(5), batch_size=3, epochs=2, verbose=0, shuffle=False,
              callbacks=[recorder])
    assert recorder.calls == [
        ("train_begin", None),
        ("epoch_begin", 0, None), ("batch_begin", 0), ("batch_begin", 1), ("epoch_end", 0, 1),
        ("epoch_begin", 1, None), ("batch_begin", 0), ("batch_begin", 1), ("epoch_end", 1, 1),
    ]
