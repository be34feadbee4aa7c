"""Callbacks of `paddle.Model`: Paddle's ``paddle.callbacks``.

`Model.fit`, `evaluate` and `predict` call every callback's hooks at the begin and
end of training, of each epoch, of each batch, and of evaluation and prediction,
with a ``logs`` dict (``loss``, the metrics by name, ``step``, ``batch_size``).
`config_callbacks` adds a `ProgBarLogger`, a `ModelCheckpoint` and an `LRScheduler`
unless the user gave their own, as Paddle does.
"""
from __future__ import annotations

import importlib
import json
import numbers
import os
import warnings

import numpy as np

from ..optimizer.lr import LRScheduler as _Scheduler
from ..optimizer.lr import ReduceOnPlateau
from .progressbar import ProgressBar

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "LRScheduler", "EarlyStopping",
           "ReduceLROnPlateau", "VisualDL", "WandbCallback"]


class Callback:
    """The base class: override the hooks you need. ``self.model`` is the `Model`,
    ``self.params`` holds Paddle's keys: ``batch_size`` (None: Paddle's `Model` never
    sets it), ``epochs``, ``steps``, ``verbose`` and ``metrics`` (the logged names:
    ``loss`` and the metrics')."""

    def __init__(self) -> None:
        self.model = None
        self.params = {}

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_eval_begin(self, logs=None): pass
    def on_eval_end(self, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, step, logs=None): pass
    def on_train_batch_end(self, step, logs=None): pass
    def on_eval_batch_begin(self, step, logs=None): pass
    def on_eval_batch_end(self, step, logs=None): pass
    def on_predict_batch_begin(self, step, logs=None): pass
    def on_predict_batch_end(self, step, logs=None): pass


class CallbackList:
    """Calls a hook on every callback, in order, always with its `logs` argument (None
    when the caller has none), as Paddle's does: a callback may define
    ``on_epoch_begin(self, epoch, logs)`` without a default."""

    def __init__(self, callbacks) -> None:
        self.callbacks = list(callbacks)

    def __getattr__(self, hook: str):
        if not hook.startswith("on_"):
            raise AttributeError(hook)
        arity = 2 if hook.startswith("on_epoch_") or "_batch_" in hook else 1

        def call(*args):
            args = args + (None,) * (arity - len(args))
            for c in self.callbacks:
                getattr(c, hook)(*args)
        return call


def config_callbacks(callbacks=None, model=None, batch_size=None, epochs=None, steps=None,
                     log_freq=2, verbose=2, save_freq=1, save_dir=None, metrics=None,
                     mode="train") -> CallbackList:
    callbacks = list(callbacks if isinstance(callbacks, list | tuple) else
                     [callbacks] if callbacks is not None else [])
    if not any(isinstance(c, ProgBarLogger) for c in callbacks):
        callbacks.insert(0, ProgBarLogger(log_freq, verbose=verbose))
    if mode == "train":
        if not any(isinstance(c, ModelCheckpoint) for c in callbacks):
            callbacks.append(ModelCheckpoint(save_freq, save_dir))
        if not any(isinstance(c, LRScheduler) for c in callbacks):
            callbacks.append(LRScheduler())
    params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
              "metrics": metrics or []}
    for c in callbacks:
        if isinstance(c, EarlyStopping):
            c.save_dir = save_dir  # where it saves the best model, as Paddle sets it
        c.set_model(model)
        c.set_params(params)
    return CallbackList(callbacks)


class ProgBarLogger(Callback):
    """Progress per epoch: ``verbose=0`` silent, 1 a progress bar on a terminal, 2
    (or 1 when the output is not a terminal) one line every `log_freq` steps and one
    at the end of the epoch. Each shows step/total, the current loss, the metrics
    averaged so far and the time per step (a bar also the ETA). When lines are
    written is Paddle's, so logs read the same."""

    def __init__(self, log_freq: int = 1, verbose: int = 2) -> None:
        super().__init__()
        self.log_freq, self.verbose = log_freq, verbose

    def _values(self, logs) -> list:
        return [(k, logs[k]) for k in self.params.get("metrics", []) if k in logs]

    def _begin(self, steps) -> None:
        self._bar = ProgressBar(steps, verbose=self.verbose)
        self._steps, self._seen, self._drawn = steps, 0, 0

    def _draw(self, logs) -> None:
        self._bar.update(self._seen, self._values(logs))
        self._drawn = self._seen

    def _batch_end(self, logs) -> None:
        """A line every `log_freq` steps but the last (the end of the pass draws
        that); a terminal's bar at every step."""
        self._seen += 1
        live_bar = self._bar._terminal and self.verbose == 1
        if self.verbose and (live_bar or self._seen % self.log_freq == 0
                             and (self._steps is None or self._seen < self._steps)):
            self._draw(logs)

    def _end(self, logs) -> bool:
        """The last step's line, when the number of steps is known; whether drawn."""
        if not self.verbose or self._steps is None:
            return False
        if self._drawn != self._seen or not self._seen:
            self._draw(logs)
        return True

    def on_train_begin(self, logs=None):
        if self.verbose:
            print("The loss value printed in the log is the current step, and the metric "
                  "is the average value of previous steps.")

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose and self.params.get("epochs"):
            print(f"Epoch {epoch + 1}/{self.params['epochs']}")
        self._begin(self.params.get("steps"))

    def on_train_batch_end(self, step, logs=None):
        self._batch_end(logs or {})

    def on_epoch_end(self, epoch, logs=None):
        self._end(logs or {})
        if self.verbose:
            self._bar.finish()

    def on_eval_begin(self, logs=None):
        self._samples = 0
        if self.verbose:
            print("Eval begin...")
        self._begin((logs or {}).get("steps"))

    def on_eval_batch_end(self, step, logs=None):
        self._samples += (logs or {}).get("batch_size", 0)
        self._batch_end(logs or {})

    def on_eval_end(self, logs=None):
        if self._end(logs or {}):
            print(f"Eval samples: {self._samples}")
        if self.verbose:
            self._bar.finish()

    def on_predict_begin(self, logs=None):
        self._samples = 0
        if self.verbose:
            print("Predict begin...")
        self._begin((logs or {}).get("steps"))

    def on_predict_batch_end(self, step, logs=None):
        self._samples += (logs or {}).get("batch_size", 0)
        self._batch_end(logs or {})

    def on_predict_end(self, logs=None):
        if self.verbose:
            if self._seen % self.log_freq or self.verbose == 1:
                if self._drawn != self._seen:
                    self._draw(logs or {})
            print(f"Predict samples: {self._samples}")
            self._bar.finish()


class ModelCheckpoint(Callback):
    """Save the model (`Model.save`) to ``save_dir/<epoch>`` after each epoch that is
    a multiple of `save_freq` (epoch 0 included) and to ``save_dir/final`` at the end
    of training; nothing without a `save_dir`. Each save prints ``save checkpoint at
    <path>`` whatever the verbosity: Paddle's epochs and lines, so a script that
    loads ``save_dir/0`` finds the file it finds under Paddle."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None) -> None:
        super().__init__()
        self.save_freq, self.save_dir = save_freq, save_dir

    def _save(self, name: str) -> None:
        path = os.path.join(self.save_dir, name)
        print(f"save checkpoint at {os.path.abspath(path)}")
        self.model.save(path)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_dir and epoch % self.save_freq == 0:
            self._save(str(epoch))

    def on_train_end(self, logs=None):
        if self.save_dir:
            self._save("final")


class LRScheduler(Callback):
    """Step the optimizer's learning-rate scheduler after every batch (`by_step`) or
    every epoch (`by_epoch`); with neither, never (the user steps it), as in Paddle.
    A `ReduceOnPlateau` scheduler needs a metric: it is stepped with the epoch's loss
    (or the metric it was told to `monitor`)."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False,
                 monitor: str = "loss") -> None:
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("LRScheduler: by_step and by_epoch are mutually exclusive, "
                             "got both True")
        self.by_step, self.by_epoch, self.monitor = by_step, by_epoch, monitor

    def _step(self, logs) -> None:
        optimizer = getattr(self.model, "_optimizer", None)
        scheduler = getattr(optimizer, "_learning_rate", None)
        if isinstance(scheduler, ReduceOnPlateau):
            if logs and self.monitor in logs:
                scheduler.step(_scalar(logs[self.monitor]))
        elif isinstance(scheduler, _Scheduler):
            scheduler.step()

    def on_train_batch_end(self, step, logs=None):
        if self.by_step:
            self._step(logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.by_epoch:
            self._step(logs)


def _scalar(value) -> float:
    while isinstance(value, (list, tuple)):
        value = value[0]
    return float(np.asarray(value))


class EarlyStopping(Callback):
    """Stop training once the evaluated `monitor` has gone `patience` evaluations in a
    row without improving by `min_delta` (mode 'min', 'max', or 'auto': 'max' for
    accuracy-like names; an unknown mode warns and is 'auto', as in Paddle). The test
    is Paddle's ``wait >= patience``, checked after every evaluation, so the default
    ``patience=0`` stops after the first evaluation whatever its value. With
    `save_best_model` and a `save_dir`, the best model is saved to
    ``save_dir/best_model``, and the stop message (with `verbose`) says where."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0,
                 verbose: int = 1, min_delta: float = 0, baseline: float | None = None,
                 save_best_model: bool = True) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode!r} is unknown (expected 'auto', 'min' "
                          "or 'max'); it uses 'auto'", stacklevel=2)
            mode = "auto"
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.monitor, self.mode, self.patience, self.verbose = monitor, mode, patience, verbose
        self.min_delta = abs(min_delta) if mode == "max" else -abs(min_delta)
        self.baseline, self.save_best_model = baseline, save_best_model
        self.wait_epoch, self.stopped_epoch, self.best_value = 0, 0, None
        self.save_dir = None  # set by `config_callbacks`

    def _better(self, current: float, reference: float) -> bool:
        shifted = current - self.min_delta
        return shifted > reference if self.mode == "max" else shifted < reference

    def on_train_begin(self, logs=None):
        self.wait_epoch, self.stopped_epoch = 0, 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = -np.inf if self.mode == "max" else np.inf

    def on_eval_end(self, logs=None):
        if not logs or self.monitor not in logs:  # Paddle warns and goes on training
            warnings.warn(f"EarlyStopping monitors '{self.monitor}', which the evaluation "
                          f"did not log (it logged {sorted(logs or {})}): it does not stop "
                          "training", stacklevel=2)
            return
        current = _scalar(logs[self.monitor])
        if self._better(current, self.best_value):
            self.best_value, self.wait_epoch = current, 0
            if self.save_best_model and self.save_dir:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and self.save_dir:
                    best = os.path.abspath(os.path.join(self.save_dir, "best_model"))
                    print(f"Best checkpoint has been saved at {best}")
        self.stopped_epoch += 1


class ReduceLROnPlateau(Callback):
    """Multiply the optimizer's learning rate by `factor` (not below `min_lr`) once
    the evaluated `monitor` has gone `patience` evaluations without improving by
    `min_delta`, then wait `cooldown` evaluations. Paddle's rules, checked after every
    evaluation: mode 'auto' is 'max' for accuracy-like names ('acc' in `monitor`) and
    'min' otherwise (an unknown mode warns and is 'auto'); a list logged for the
    monitor counts by its first value; only a rate that is a float changes (with a
    scheduler it warns and does nothing), and only while it is above `min_lr`
    compared in float32. `verbose` prints each reduction.

    The reduced rate is set with `Optimizer.set_lr`, so the next update uses it.
    Paddle 3.3.1's callback assigns ``optimizer._learning_rate`` instead, which in
    dygraph changes what ``get_lr()`` reports but not the rate its kernels read (the
    rate tensor made at the first step): training goes on at the old rate. That is
    not copied."""

    def __init__(self, monitor: str = "loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 1, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau's factor must be < 1.0 so that the rate "
                             f"decreases, got {factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.mode, self.min_delta, self.cooldown, self.min_lr = mode, min_delta, cooldown, min_lr
        self.epoch = 0  # evaluations seen
        self._reset()

    def _reset(self) -> None:
        if self.mode not in ("auto", "min", "max"):
            warnings.warn(f"ReduceLROnPlateau's mode {self.mode!r} is unknown; it uses "
                          "'auto'", stacklevel=3)
            self.mode = "auto"
        self._maximize = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        self.best = -np.inf if self._maximize else np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def _improved(self, current) -> bool:
        if self._maximize:
            return bool(np.greater(current, self.best + self.min_delta))
        return bool(np.less(current, self.best - self.min_delta))

    def on_train_begin(self, logs=None):
        self._reset()

    def on_eval_end(self, logs=None):
        if not logs or self.monitor not in logs:
            warnings.warn(f"ReduceLROnPlateau monitors '{self.monitor}', which the "
                          f"evaluation did not log (it logged {sorted(logs or {})}): the "
                          "learning rate stays", stacklevel=2)
            return
        optimizer = getattr(self.model, "_optimizer", None)
        rate = getattr(optimizer, "_learning_rate", None)
        if not isinstance(rate, float):
            warnings.warn(f"ReduceLROnPlateau changes a learning rate that is a float; the "
                          f"model's optimizer has {type(rate).__name__}: the learning rate "
                          "stays", stacklevel=2)
            return
        current = logs[self.monitor]
        if isinstance(current, (list, tuple)):
            current = current[0]
        elif not isinstance(current, numbers.Number):
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(current):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                self._reduce(optimizer)
        self.epoch += 1

    def _reduce(self, optimizer) -> None:
        old_lr = optimizer.get_lr()
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            optimizer.set_lr(new_lr)
            if self.verbose > 0:
                print(f"\nEpoch {self.epoch + 1}: ReduceLROnPlateau reducing learning rate "
                      f"to {new_lr}.")
            self.cooldown_counter, self.wait = self.cooldown, 0


class VisualDL(Callback):
    """Log the training and evaluation values to ``log_dir/scalars.jsonl``, one JSON
    object per line (``{"mode": "train", "step": 12, "epoch": 0, "loss": 0.51,
    "acc": 0.8}``), without the visualdl package; one line per training step
    and one per evaluation."""

    def __init__(self, log_dir: str) -> None:
        super().__init__()
        self.log_dir = log_dir
        self._epoch, self._step = 0, 0

    def _write(self, record: dict) -> None:
        os.makedirs(self.log_dir, exist_ok=True)
        with open(os.path.join(self.log_dir, "scalars.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def _values(self, logs) -> dict:
        return {k: _json_number(logs[k]) for k in self.params.get("metrics", [])
                if k in (logs or {})}

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, step, logs=None):
        self._step += 1
        self._write({"mode": "train", "step": self._step, "epoch": self._epoch,
                     **self._values(logs)})

    def on_eval_end(self, logs=None):
        self._write({"mode": "eval", "step": self._step, "epoch": self._epoch,
                     **self._values(logs)})


class WandbCallback(Callback):
    """Log each training step's values (``train/<name>`` against ``train/step``) and
    each evaluation's (``eval/<name>`` against ``epoch``) to a Weights & Biases run,
    as Paddle's does. The run is ``wandb.init(project=...,
    entity=..., name=..., dir=..., mode=..., job_type=..., **kwargs)``, or the run in
    progress (with a warning); the `wandb` package must be installed (an ImportError
    with Paddle's message says so). A list value logs its first element; a value that
    is not a number is left out."""

    def __init__(self, project: str | None = None, entity: str | None = None,
                 name: str | None = None, dir: str | None = None,  # noqa: A002
                 mode: str | None = None, job_type: str | None = None, **kwargs) -> None:
        super().__init__()
        try:
            self.wandb = importlib.import_module("wandb")
        except ImportError:
            raise ImportError("You want to use `wandb` which is not installed yet install "
                              "it with `pip install wandb`") from None
        self.wandb_args = {"project": project, "name": name, "entity": entity, "dir": dir,
                           "mode": mode, "job_type": job_type, **kwargs}
        self._fitting = False
        self.epoch = self.train_step = 0
        self._run = self._start_run()  # when the callback is made, as in Paddle

    def _start_run(self):
        """The wandb run in progress (with a warning), else a new one."""
        if self.wandb.run is not None:
            warnings.warn("There is a wandb run already in progress: WandbCallback logs "
                          "to it; call wandb.finish() before making the callback for a "
                          "run of its own", stacklevel=3)
            return self.wandb.run
        return self.wandb.init(**self.wandb_args)

    @property
    def run(self):
        """The run logged to: a new one once a bare `evaluate` has finished the last."""
        if self._run is None:
            self._run = self._start_run()
        return self._run

    def _log(self, logs, mode: str, step: dict) -> None:
        record = dict(step)
        for k in self.params.get("metrics", []):
            value = (logs or {}).get(k)
            if isinstance(value, (list, tuple)):
                value = value[0]
            if isinstance(value, numbers.Number):
                record[f"{mode}/{k}"] = value
        self.run.log(record)

    def on_train_begin(self, logs=None):
        self._fitting, self.train_step = True, 0
        self.run.define_metric("train/step")
        self.run.define_metric("train/*", step_metric="train/step")
        self.run.define_metric("epoch")
        self.run.define_metric("eval/*", step_metric="epoch")

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        self._log(logs, "train", {"train/step": self.train_step})

    def on_eval_end(self, logs=None):
        self._log(logs, "eval", {"epoch": self.epoch})
        if not self._fitting:  # a bare `evaluate` ends the run
            self.run.finish()
            self._run = None

    def on_train_end(self, logs=None):
        self.run.finish()


def _json_number(value):
    if isinstance(value, (list, tuple)):
        return [_json_number(v) for v in value] if len(value) != 1 else _json_number(value[0])
    value = np.asarray(value).item() if not isinstance(value, numbers.Number) else value
    return float(value)
