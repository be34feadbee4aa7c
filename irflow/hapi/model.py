"""`Model`: Paddle's high-level API (``paddle.Model``), training, evaluation and
prediction loops around a network, with callbacks and progress.

When the inputs and labels are given as `InputSpec`s, the whole training step --
forward, loss, ``loss.backward()``, ``optimizer.step()``, ``optimizer.clear_grad()``
-- is one compiled program (`irflow.jit.to_static` of the step function, see
``docs/compile.md``), and the evaluation and prediction steps are compiled too
(prediction needs only the inputs' specs); otherwise each step runs eagerly. Both
compute the same numbers. Metrics run on the host after each step (`irflow.metric`).
The loops follow Paddle's (batching, shuffling, when to evaluate, what is logged),
so a Paddle script prints what it prints under Paddle.
"""
from __future__ import annotations

import functools
import inspect
import os
import warnings
from contextlib import nullcontext

import numpy as np

from ..amp import GradScaler, auto_cast
from ..dispatch import no_grad
from ..static.mode import dynamic_mode, in_dynamic_mode
from ..errors import ConversionError
from ..frontend.input_spec import InputSpec
from ..frontend.program import CompiledFunction
from ..frontend.structure import flatten, sorted_leaf_order
from ..io.dataloader import DataLoader
from ..io.dataset import Dataset
from ..io.sampler import DistributedBatchSampler
from ..jit.saved import save as jit_save
from ..metric.metrics import Metric
from ..nn.summary import summary as nn_summary
from ..serialization import load, save
from ..tensor.creation import to_tensor
from ..tensor.math import add
from ..tensor.tensor import Tensor
from .callbacks import EarlyStopping, config_callbacks

__all__ = ["Model"]


def _as_list(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _fields(data) -> list:
    """The fields of a batch, flattened as Paddle's Model flattens them
    (``paddle.utils.flatten``: nested lists and tuples in order, dicts by sorted key),
    so that a dataset of ``((x1, x2), label)`` or of dicts feeds the network and the
    loss the fields Paddle feeds them."""
    leaves, structure = flatten(data)
    return [leaves[i] for i in sorted_leaf_order(structure)]


def _specs(specs, what: str) -> list:
    specs = _as_list(specs.values() if isinstance(specs, dict) else specs)
    for s in specs:
        if not isinstance(s, InputSpec):
            raise TypeError(f"Model {what} must be InputSpecs, got a {type(s).__name__}")
    return specs


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else to_tensor(np.asarray(x))


def _numpy(x):
    return x.numpy() if isinstance(x, Tensor) else x


def _in_dynamic_mode(method):
    """`method` run in dynamic-graph mode, also after ``paddle.enable_static()``: a
    Model's steps are compiled programs (``to_static`` of its step functions) in both
    modes, where Paddle builds static programs for them in static-graph mode."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if in_dynamic_mode():  # the common case: no context to enter per batch
            return method(self, *args, **kwargs)
        with dynamic_mode():
            return method(self, *args, **kwargs)
    return run


class Model:
    """``Model(network, inputs=None, labels=None)``: `inputs` and `labels` are
    InputSpecs (lists, or dicts by name) describing what each batch holds: the first
    ``len(inputs)`` fields of a batch go to the network, the rest to the loss. Without
    `inputs`, the network's forward parameters say how many fields are inputs."""

    def __init__(self, network, inputs=None, labels=None) -> None:
        self.network = network
        self._inputs = _specs(inputs, "inputs")
        self._labels = _specs(labels, "labels")
        self._n_inputs = len(self._inputs) or _forward_arity(network)
        self._optimizer = self._loss = None
        self._metrics: list[Metric] = []
        self._amp_level, self._amp_lists, self._amp_scaling = _amp_settings(None)
        self._scaler = None
        self._steps: dict = {}
        self._accumulated_grads = False  # gradients of update=False batches are pending
        self._iters_left = None          # fit's/evaluate's num_iters, counted down
        self.stop_training = False

    # ------------------------------------------------------------ configuration

    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None) -> None:
        """Set the optimizer, the loss (a Layer or function of ``(*outputs,
        *labels)``; several losses are summed) and the metrics. `amp_configs` (a level
        'O0', 'O1', 'O2', or a dict of it and `GradScaler` settings) is checked as Paddle
        checks it; on the CPU, as in Paddle, mixed precision then makes no effect."""
        if loss is not None and not callable(loss):
            raise TypeError(f"loss must be a Layer or a function, not {type(loss).__name__}")
        metrics = _as_list(metrics)
        for m in metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"metrics must be paddle.metric.Metric instances, got a "
                                f"{type(m).__name__}")
        self._amp_level, self._amp_lists, self._amp_scaling = _amp_settings(amp_configs)
        self._scaler = None  # made at the first training step, as Paddle makes it
        self._optimizer, self._loss, self._metrics = optimizer, loss, metrics
        self._steps = {}

    def parameters(self, *args, **kwargs):
        return self.network.parameters(*args, **kwargs)

    def _metrics_name(self) -> list[str]:
        """The logged names: ``loss`` (when there is a loss) and the metrics'."""
        return (["loss"] if self._loss is not None else []) + self._metric_names()

    def _metric_names(self) -> list[str]:
        names = []
        for m in self._metrics:
            names.extend(_as_list(m.name()))
        return names

    # ------------------------------------------------------------ one batch

    def _forward(self, data):
        """The network on the inputs of `data`, and the loss on its outputs and the
        labels: (the summed loss, each loss, the outputs). Without a loss (an
        evaluation by metrics only, which Paddle allows) there are no losses."""
        inputs, labels = data[:self._n_inputs], data[self._n_inputs:]
        outputs = _as_list(self.network(*inputs))
        if self._loss is None:
            return None, [], outputs
        losses = _as_list(self._loss(*outputs, *labels))
        total = losses[0]
        for other in losses[1:]:
            total = add(total, other)
        return total, losses, outputs

    def _train_fn(self):
        def train_step(*data):
            total, losses, outputs = self._forward(data)
            total.backward()
            self._optimizer.step()
            self._optimizer.clear_grad()
            return losses, outputs
        return train_step

    def _accumulate_fn(self):
        def accumulate_step(*data):
            total, losses, outputs = self._forward(data)
            total.backward()
            return losses, outputs
        return accumulate_step

    def _eval_fn(self):
        def eval_step(*data):
            _, losses, outputs = self._forward(data)
            return losses, outputs
        return eval_step

    def _predict_fn(self):
        def predict_step(*inputs):
            return [], _as_list(self.network(*inputs))
        return predict_step

    def _step(self, mode: str, data: list):
        """Run the `mode` step on `data`: the losses and the outputs. The step is
        compiled when the specs allow; a network whose code does not compile (it
        reads tensor values into NumPy, say) runs eagerly, with a warning, as Paddle's
        dynamic-graph Model would run it. Gradient accumulation runs eagerly (also the
        step that applies the accumulated gradients): a compiled backward sets the
        gradients rather than adding to those of earlier calls."""
        if mode == "accumulate":
            self._accumulated_grads = True
        elif mode == "train" and self._accumulated_grads:
            self._accumulated_grads = False
            mode = "apply"
        make_fn = getattr(self, f"_{'train' if mode == 'apply' else mode}_fn")
        step = self._steps.get(mode)
        if step is None:
            fn = make_fn()
            if self._inputs and (mode == "predict" or self._labels and
                                 mode in ("train", "eval")):
                specs = self._inputs if mode == "predict" else self._inputs + self._labels
                fn = CompiledFunction(fn, input_spec=specs)
            step = self._steps[mode] = fn
        training = mode in ("train", "accumulate", "apply")
        self.network.train(training)
        with self._amp_context() if training else no_grad():
            try:
                return step(*data)
            except ConversionError as e:
                if not isinstance(step, CompiledFunction):
                    raise
                reason = str(e).strip().splitlines()
                warnings.warn(f"paddle.Model: the {mode} step does not compile, so it runs "
                              f"eagerly ({reason[0]}: {reason[-1]})", stacklevel=4)
                step = self._steps[mode] = make_fn()
                return step(*data)

    def _amp_context(self):
        """The mixed-precision context of a training step, as Paddle's dygraph Model
        enters it: with a level above 'O0', `auto_cast` around the step and a
        `GradScaler` made once. Both make no effect on the CPU (they warn so, as in
        Paddle): the loss is not scaled, so the step computes what it computes
        without them."""
        if self._amp_level == "O0":
            return nullcontext()
        if self._scaler is None:
            self._scaler = GradScaler(**self._amp_scaling)
        return auto_cast(level=self._amp_level, **self._amp_lists)

    def _batch(self, mode: str, inputs, labels):
        if self._loss is None and mode in ("train", "accumulate"):
            raise RuntimeError("Model.train_batch needs a loss: call "
                               "model.prepare(optimizer, loss, metrics) first")
        if mode in ("train", "accumulate") and self._optimizer is None:
            raise RuntimeError("Model.train_batch needs an optimizer: call "
                               "model.prepare(optimizer, loss, metrics) first")
        inputs = [_tensor(x) for x in _as_list(inputs)]
        labels = [_tensor(x) for x in _as_list(labels)] if mode != "predict" else []
        losses, outputs = self._step(mode, inputs + labels)
        if mode == "predict":
            return [o.numpy() for o in outputs]
        metrics = []
        for m in self._metrics:
            computed = _as_list(m.compute(*outputs, *labels))
            metrics.append(m.update(*[_numpy(c) for c in computed]))
        if self._loss is None:  # Paddle's eval_batch without a loss: the metrics
            return metrics
        losses = [np.asarray(loss.numpy()) for loss in losses]
        return (losses, metrics) if self._metrics else losses

    @_in_dynamic_mode
    def train_batch(self, inputs, labels=None, update: bool = True):
        """One training step on one batch: ``[loss]`` (NumPy), and the metrics of the
        batch when there are metrics. With ``update=False`` the gradients are only
        accumulated, for a later ``update=True`` batch to apply."""
        return self._batch("train" if update else "accumulate", inputs, labels)

    @_in_dynamic_mode
    def eval_batch(self, inputs, labels=None):
        return self._batch("eval", inputs, labels)

    @_in_dynamic_mode
    def predict_batch(self, inputs):
        return self._batch("predict", inputs, None)

    # ------------------------------------------------------------ loops

    def _loader(self, data, batch_size, num_workers, shuffle=False, drop_last=False):
        """`data` as a DataLoader. A Dataset is batched by a `DistributedBatchSampler`
        of one rank, as Paddle does, so a shuffled epoch ``e`` has the order of NumPy's
        ``RandomState(e)``: the same batches as Paddle's."""
        if data is None or isinstance(data, DataLoader):
            return data
        if isinstance(data, Dataset):
            sampler = DistributedBatchSampler(data, batch_size=batch_size, shuffle=shuffle,
                                              drop_last=drop_last)
            return DataLoader(data, batch_sampler=sampler, num_workers=num_workers)
        raise TypeError(f"the data must be a paddle.io.Dataset or DataLoader, not "
                        f"{type(data).__name__}")

    @_in_dynamic_mode
    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs: int = 1,
            eval_freq: int = 1, log_freq: int = 10, save_dir: str | None = None,
            save_freq: int = 1, verbose: int = 2, drop_last: bool = False,
            shuffle: bool = True, num_workers: int = 0, callbacks=None,
            accumulate_grad_batches: int = 1, num_iters: int | None = None) -> None:
        """Train for `epochs` epochs on `train_data` (a Dataset, batched here, or a
        DataLoader), evaluating on `eval_data` after epochs 0, `eval_freq`, 2 *
        `eval_freq`...; `batch_size` may be ``[train, eval]``; `verbose` 0, 1 (progress
        bar) or 2 (a line every `log_freq` steps); `save_dir` saves after epochs 0,
        `save_freq`, 2 * `save_freq`... and at the end (`ModelCheckpoint`); the
        optimizer steps every `accumulate_grad_batches` batches; `num_iters` stops
        after that many steps."""
        if train_data is None:
            raise ValueError("Model.fit needs train_data")
        train_size, eval_size = (batch_size if isinstance(batch_size, (list, tuple))
                                 else (batch_size, batch_size))
        train_loader = self._loader(train_data, train_size, num_workers, shuffle, drop_last)
        eval_loader = self._loader(eval_data, eval_size, num_workers)
        steps = _length(train_loader)
        if num_iters is not None and steps is not None:
            if num_iters <= 0:
                raise ValueError(f"num_iters must be > 0, got {num_iters}")
            epochs, steps = num_iters // steps + 1, min(num_iters, steps)
        cbks = config_callbacks(callbacks, model=self, epochs=epochs, steps=steps,
                                log_freq=log_freq, verbose=verbose, save_freq=save_freq,
                                save_dir=save_dir, metrics=self._metrics_name())
        if eval_loader is None and any(isinstance(c, EarlyStopping) for c in cbks.callbacks):
            warnings.warn("EarlyStopping needs validation data (fit's eval_data)",
                          stacklevel=2)
        self.stop_training = False
        self._iters_left = num_iters
        cbks.on_train_begin()
        logs = {}
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            logs = self._run_one_epoch(train_loader, cbks, "train", accumulate_grad_batches)
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and epoch % eval_freq == 0:
                self._evaluate(eval_loader, cbks)
            if self.stop_training:
                break
        cbks.on_train_end(logs)

    @_in_dynamic_mode
    def evaluate(self, eval_data, batch_size: int = 1, log_freq: int = 10,
                 verbose: int = 2, num_workers: int = 0, callbacks=None,
                 num_iters: int | None = None) -> dict:
        """Evaluate on `eval_data`: ``{'loss': [last batch's loss], <metric>: value
        over the whole data}``, as Paddle reports it."""
        loader = self._loader(eval_data, batch_size, num_workers)
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq, verbose=verbose,
                                metrics=self._metrics_name(), mode="eval")
        self._iters_left = num_iters
        return self._evaluate(loader, cbks)

    def _evaluate(self, loader, cbks) -> dict:
        steps = _length(loader)
        if self._iters_left is not None and steps is not None:
            steps = min(steps, self._iters_left)
        cbks.on_eval_begin({"steps": steps, "metrics": self._metrics_name()})
        logs = self._run_one_epoch(loader, cbks, "eval")
        cbks.on_eval_end(logs)
        return {k: logs[k] for k in self._metrics_name() if k in logs}

    @_in_dynamic_mode
    def predict(self, test_data, batch_size: int = 1, num_workers: int = 0,
                stack_outputs: bool = False, verbose: int = 1, callbacks=None) -> list:
        """The network's outputs on `test_data`: per output, a tuple of its batches
        (NumPy), or one array of every batch with `stack_outputs`."""
        loader = self._loader(test_data, batch_size, num_workers)
        cbks = config_callbacks(callbacks, model=self, verbose=verbose, metrics=[],
                                mode="predict")
        cbks.on_predict_begin({"steps": _length(loader)})
        outputs = []
        logs = {}
        for step, data in enumerate(loader):
            cbks.on_predict_batch_begin(step, logs)
            inputs = _fields(data)[:self._n_inputs]
            outputs.append(self.predict_batch(inputs))
            logs = {"step": step, "batch_size": _batch_size(inputs)}
            cbks.on_predict_batch_end(step, logs)
        cbks.on_predict_end(logs)
        per_output = list(zip(*outputs))
        if stack_outputs:
            return [np.vstack(o) for o in per_output]
        return per_output

    def _run_one_epoch(self, loader, cbks, mode: str, accumulate: int = 1) -> dict:
        """One pass of `mode` over `loader`: the logs of its last batch (its losses,
        the metrics accumulated over the pass). The metrics are reset after it."""
        logs = {}
        steps = _length(loader)
        for step, data in enumerate(loader):
            getattr(cbks, f"on_{mode}_batch_begin")(step, logs)
            inputs, labels = self._split(data)
            if mode == "train":
                update = (step + 1) % accumulate == 0 or step + 1 == steps
                result = self.train_batch(inputs, labels, update=update)
            else:
                result = self.eval_batch(inputs, labels)
            logs = {}
            if self._loss is not None:
                losses = result[0] if self._metrics else result
                logs["loss"] = [float(loss) for loss in losses]
            logs.update(zip(self._metric_names(), self._accumulated()))
            logs["step"], logs["batch_size"] = step, _batch_size(inputs)
            getattr(cbks, f"on_{mode}_batch_end")(step, logs)
            if self._iters_left is not None:
                self._iters_left -= 1
                if self._iters_left <= 0:
                    self.stop_training = True
                    self._iters_left = None
                    break
        for m in self._metrics:
            m.reset()
        return logs

    def _accumulated(self) -> list:
        values = []
        for m in self._metrics:
            values.extend(_as_list(m.accumulate()))
        return values

    def _split(self, data) -> tuple[list, list]:
        data = _fields(data)
        return data[:self._n_inputs], data[self._n_inputs:]

    # ------------------------------------------------------------ persistence

    @_in_dynamic_mode
    def save(self, path: str, training: bool = True) -> None:
        """`training`: the parameters to ``path.pdparams`` and the optimizer state to
        ``path.pdopt``; else the inference program (`irflow.jit.save`, which needs
        the inputs' InputSpecs)."""
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        if not training:
            if not self._inputs:
                raise ValueError("Model.save(training=False) saves an inference program "
                                 "and needs Model(network, inputs=[InputSpec...])")
            jit_save(self.network, path, input_spec=self._inputs)
            return
        save(self.network.state_dict(), path + ".pdparams")
        state = self._optimizer.state_dict() if self._optimizer is not None else {}
        if state:  # as Paddle: no .pdopt for an optimizer without state (yet)
            save(self._renamed(state, to_structured=True), path + ".pdopt")

    @_in_dynamic_mode
    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False):
        """Load what `save` wrote (``path.pdparams``, and ``path.pdopt`` unless
        `reset_optimizer`). Every entry of the network's state dict must be in the
        file with its shape, else a ValueError names it, before anything is loaded
        (Paddle's check and messages); entries of the file the network lacks are
        ignored. With `skip_mismatch`, a mismatched entry is kept as it is, with a
        warning, and the optimizer state is not loaded, as Paddle does: its
        accumulators would not fit the parameters. `path` may end in ``.pdparams``,
        ``.pdopt`` or ``.pdmodel``, as in Paddle."""
        path = _strip_suffix(path)
        saved = load(path + ".pdparams")
        matched = []
        for key, target in self.network.state_dict().items():
            problem = _mismatch(key, saved, target)
            if problem is None:
                matched.append((target, saved[key]))
            elif skip_mismatch:
                warnings.warn(f"Skip loading for {key}. {problem}", stacklevel=2)
                reset_optimizer = True
            else:
                raise ValueError(problem)
        for target, value in matched:
            target.set_value(value)
        if self._optimizer is not None and not reset_optimizer \
                and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(self._renamed(load(path + ".pdopt"),
                                                         to_structured=False))

    def _renamed(self, state: dict, to_structured: bool) -> dict:
        """Optimizer state keyed by the parameters' structured names (``0.weight_...``)
        in the file, by their unique names (``linear_3.w_0_...``) in the optimizer:
        a fresh network of the same structure has other unique names."""
        pairs = [(p.name, s) for s, p in self.network.named_parameters() if p.name]
        if not to_structured:
            pairs = [(b, a) for a, b in pairs]
        pairs.sort(key=lambda ab: -len(ab[0]))  # the longest prefix first
        renamed = {}
        for key, value in state.items():
            for old, new in pairs:
                if key.startswith(old + "_"):
                    key = new + key[len(old):]
                    break
            renamed[key] = value
        return renamed

    def summary(self, input_size=None, dtype=None) -> dict:
        """`paddle.summary` of the network; `input_size` defaults to the inputs'
        InputSpecs."""
        if input_size is None:
            if not self._inputs:
                raise ValueError("Model.summary needs input_size, or Model(network, "
                                 "inputs=[InputSpec...])")
            input_size = self._inputs if len(self._inputs) > 1 else self._inputs[0]
        return nn_summary(self.network, input_size, dtypes=dtype)


_AMP_LEVELS = ("O0", "O1", "O2")
_AMP_OP_LISTS = ("custom_white_list", "custom_black_list")
_AMP_SCALING = ("init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling")


def _amp_settings(amp_configs) -> tuple[str, dict, dict]:
    """`Model.prepare`'s `amp_configs` as (level, `auto_cast`'s op lists, `GradScaler`'s
    settings), with Paddle's checks and defaults: none is 'O0', a dict without a level
    is 'O1', and under 'O0' the other keys are not looked at. ``custom_black_varnames``
    names variables of static programs only, so it is accepted and has no use here."""
    if not amp_configs:
        return "O0", {}, {}
    if isinstance(amp_configs, str):
        if amp_configs not in _AMP_LEVELS:
            raise ValueError(f"Model.prepare: the level of amp_configs should be 'O0', "
                             f"'O1' or 'O2', got {amp_configs!r}")
        return amp_configs, {}, {}
    level = amp_configs.get("level", "O1")
    if level not in _AMP_LEVELS:
        raise ValueError(f"Model.prepare: amp_configs['level'] should be 'O0', 'O1' or "
                         f"'O2', got {level!r}")
    if level == "O0":
        return level, {}, {}
    if "use_pure_fp16" in amp_configs:
        raise ValueError("Model.prepare: 'use_pure_fp16' is not an amp_configs key; the "
                         "level ('O1' or 'O2') says whether training is pure float16")
    if "use_fp16_guard" in amp_configs:
        raise ValueError("Model.prepare: amp_configs' 'use_fp16_guard' is for static-graph "
                         "mode only")
    known = {"level", "custom_black_varnames", *_AMP_OP_LISTS, *_AMP_SCALING}
    unknown = [k for k in amp_configs if k not in known]
    if unknown:
        raise ValueError(f"Model.prepare: amp_configs keys must be 'level', "
                         f"{', '.join(map(repr, sorted(known - {'level'})))}; got "
                         f"{', '.join(map(repr, unknown))}")
    return (level, {k: amp_configs[k] for k in _AMP_OP_LISTS if k in amp_configs},
            {k: amp_configs[k] for k in _AMP_SCALING if k in amp_configs})


def _strip_suffix(path: str) -> str:
    """`path` without a ``.pdparams``, ``.pdopt`` or ``.pdmodel`` ending, which
    Paddle's `Model.load` also accepts: ``model.load("ck/final.pdparams")`` loads
    ``ck/final``."""
    root, ext = os.path.splitext(path)
    return root if ext in (".pdparams", ".pdopt", ".pdmodel") else path


def _forward_arity(network) -> int:
    params = inspect.signature(network.forward).parameters.values()
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) or 1


def _mismatch(key: str, saved: dict, target: Tensor) -> str | None:
    """Why the loaded state dict `saved` cannot fill the network's entry `key` (the
    tensor `target`), in Paddle's words, or None when it can."""
    if saved.get(key) is None:
        return f"{key} is not found in the providing file."
    found, expected = list(np.shape(_numpy(saved[key]))), list(target.shape)
    if found != expected:
        return f"{key} receives a shape {found}, but the expected shape is {expected}."
    return None


def _length(loader):
    try:
        return len(loader)
    except TypeError:
        return None


def _batch_size(inputs) -> int:
    first = inputs[0] if inputs else None
    shape = getattr(first, "shape", None)
    return int(shape[0]) if shape else 1
