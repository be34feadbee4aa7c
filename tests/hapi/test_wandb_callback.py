"""`paddle.callbacks.WandbCallback`: importable, an ImportError naming the package when
`wandb` is not installed (Paddle's message), and with it what Paddle's logs: each
training step's values against ``train/step``, each evaluation's against ``epoch``."""
import sys
import types

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.callbacks import WandbCallback
from irflow.io import TensorDataset


class FakeRun:
    def __init__(self, args):
        self.args, self.defined, self.logged, self.finished = args, [], [], 0

    def define_metric(self, name, step_metric=None):
        self.defined.append((name, step_metric))

    def log(self, record):
        self.logged.append(record)

    def finish(self):
        self.finished += 1


@pytest.fixture
def fake_wandb(monkeypatch):
    module = types.ModuleType("wandb")
    module.run = None
    module.init = lambda **args: FakeRun(args)
    monkeypatch.setitem(sys.modules, "wandb", module)
    return module


def test_without_wandb_it_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb raises ImportError
    with pytest.raises(ImportError, match="pip install wandb"):
        WandbCallback(project="p")


def _model():
    x = paddle.to_tensor(np.ones((4, 3), "float32"))
    y = paddle.to_tensor(np.zeros((4, 1), "int64"))
    model = paddle.Model(nn.Linear(3, 2))
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model, TensorDataset([x, y])


def test_fit_logs_steps_and_evaluations(fake_wandb):
    callback = WandbCallback(project="p", mode="offline", tags=["t"])
    run = callback.run
    assert run.args == {"project": "p", "name": None, "entity": None, "dir": None,
                        "mode": "offline", "job_type": None, "tags": ["t"]}
    model, data = _model()
    model.fit(data, data, batch_size=2, epochs=2, verbose=0, callbacks=[callback])
    assert run.defined == [("train/step", None), ("train/*", "train/step"),
                           ("epoch", None), ("eval/*", "epoch")]
    train = [r for r in run.logged if "train/step" in r]
    evals = [r for r in run.logged if "epoch" in r]
    assert [r["train/step"] for r in train] == [1, 2, 3, 4]  # 2 batches x 2 epochs
    assert [r["epoch"] for r in evals] == [0, 1]
    assert all(set(r) == {"train/step", "train/loss", "train/acc"} for r in train)
    assert all(isinstance(r["eval/loss"], float) for r in evals)  # a list's first value
    assert run.finished == 1


def test_a_run_in_progress_is_reused_with_a_warning(fake_wandb):
    fake_wandb.run = FakeRun({})
    with pytest.warns(UserWarning, match="already in progress"):
        assert WandbCallback().run is fake_wandb.run
