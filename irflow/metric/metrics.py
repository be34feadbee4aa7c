"""Metrics, as in Paddle's ``paddle.metric``.

A metric has two halves: `compute` runs on the model's outputs and labels (Tensors)
and returns what `update` needs; `update` accumulates it on the host (NumPy) and
returns the value for this batch; `accumulate` gives the value over every update
since `reset`. `paddle.Model` calls them in that order for each batch. The counts
are plain host numbers, so a metric never enters a compiled program.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from ..tensor.attribute import numel
from ..tensor.convert import as_tensor, cast
from ..tensor.logic import equal
from ..tensor.manipulation import reshape
from ..tensor.math import any as any_
from ..tensor.math import divide, maximum
from ..tensor.math import sum as sum_
from ..tensor.search import argmax, topk
from ..tensor.tensor import Tensor

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]


def _numpy(x) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _top_k_hits(pred, label, k: int) -> Tensor:
    """[..., k] bools: whether the j-th highest score of each row is its label (a
    class index, of shape [...] or [..., 1], or a one-hot row). Ties rank the lower
    class index first, a NaN score above every number (`topk`'s order). Tensor ops,
    so that it is traced into a compiled or static program as it runs eagerly."""
    pred, label = as_tensor(pred), as_tensor(label)
    _, top = topk(pred, k)
    if label.ndim == pred.ndim and label.shape[-1] != 1:
        label = argmax(label, axis=-1, keepdim=True)      # one-hot labels
    elif label.ndim != pred.ndim:
        label = reshape(label, [*top.shape[:-1], 1])
    return equal(top, cast(label, top.dtype))


class Metric:
    """The base class: subclasses define `reset`, `update`, `accumulate` and `name`,
    and may define `compute` (default: pass the outputs and labels through)."""

    def reset(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define reset()")

    def update(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define update()")

    def accumulate(self):
        raise NotImplementedError(f"{type(self).__name__} must define accumulate()")

    def name(self):
        raise NotImplementedError(f"{type(self).__name__} must define name()")

    def compute(self, *args):
        return args


class Accuracy(Metric):
    """Top-k accuracy for each k of `topk`. `compute(pred, label)` gives the float32
    [batch, max(topk)] hits; `update` and `accumulate` give one float per k (a bare
    float for a single k). Names: ``acc``, or ``acc_top1``, ``acc_top5``... when
    some k is above 1."""

    def __init__(self, topk=(1,), name: str | None = None, *args, **kwargs) -> None:
        self.topk = tuple(topk)
        if not self.topk or any(not isinstance(k, int) or k < 1 for k in self.topk):
            raise ValueError(f"topk must be positive integers, got {topk!r}")
        self.maxk = max(self.topk)
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in self.topk] if self.maxk != 1 else [name]
        self.reset()

    def compute(self, pred, label, *args) -> Tensor:
        return cast(_top_k_hits(pred, label, self.maxk), dtypes.float32)

    def update(self, correct, *args):
        correct = _numpy(correct)
        samples = np.prod(np.array(correct.shape[:-1]))  # a NumPy int, as Paddle's
        accs = []
        for i, k in enumerate(self.topk):
            hits = float(correct[..., :k].sum())
            self.total[i] += hits
            self.count[i] += samples
            accs.append(hits / samples if samples else np.float64(0.0))
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        # as Paddle's: NumPy floats once updated (the counts are NumPy ints), a Python
        # 0.0 before (they print differently, np.float64(0.5) and 0.0)
        res = [t / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self) -> list[str]:
        return self._name


def _binary(preds, labels, rounded) -> tuple[np.ndarray, np.ndarray]:
    """The predictions rounded to 0 or 1 by `rounded`, in their own dtype, and the
    labels, as flat int arrays. Paddle's Precision rounds with ``floor(p + 0.5)`` and
    its Recall with ``rint`` (half to even): a probability of exactly 0.5 (a sigmoid
    of 0) is positive to the one and negative to the other, and a float32 0.49999997
    plus 0.5 rounds to 1.0."""
    preds = rounded(_numpy(preds)).astype(np.int64).reshape(-1)
    labels = _numpy(labels).astype(np.int64).reshape(-1)
    if preds.shape != labels.shape:
        raise ValueError(f"preds and labels must have the same number of samples, got "
                         f"{preds.size} and {labels.size}")
    return preds, labels


class Precision(Metric):
    """Binary precision, tp / (tp + fp): a prediction is positive when
    ``floor(p + 0.5)``, in the predictions' dtype, is 1 (p >= 0.5)."""

    def __init__(self, name: str = "precision", *args, **kwargs) -> None:
        self._name = name
        self.reset()

    def update(self, preds, labels) -> None:
        preds, labels = _binary(preds, labels, lambda p: np.floor(p + 0.5))
        self.tp += int(np.sum((preds == 1) & (labels == 1)))
        self.fp += int(np.sum((preds == 1) & (labels != 1)))

    def reset(self) -> None:
        self.tp = self.fp = 0

    def accumulate(self) -> float:
        positives = self.tp + self.fp
        return self.tp / positives if positives else 0.0

    def name(self) -> str:
        return self._name


class Recall(Metric):
    """Binary recall, tp / (tp + fn): a prediction is positive when it rounds to 1
    half to even (``rint``, as Paddle's: p > 0.5, so a sigmoid of 0 is negative)."""

    def __init__(self, name: str = "recall", *args, **kwargs) -> None:
        self._name = name
        self.reset()

    def update(self, preds, labels) -> None:
        preds, labels = _binary(preds, labels, np.rint)
        self.tp += int(np.sum((preds == 1) & (labels == 1)))
        self.fn += int(np.sum((preds != 1) & (labels == 1)))

    def reset(self) -> None:
        self.tp = self.fn = 0

    def accumulate(self) -> float:
        actual = self.tp + self.fn
        return self.tp / actual if actual else 0.0

    def name(self) -> str:
        return self._name


class Auc(Metric):
    """Area under the ROC curve, from histograms of the positive-class probability
    over `num_thresholds` + 1 buckets (as Paddle computes it). `update(preds,
    labels)` takes [N, 2] class probabilities (column 1: positive) and [N] or [N, 1]
    labels. ``curve='PR'`` is accepted and computes the ROC area too, as Paddle
    3.3.1's does."""

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc",
                 *args, **kwargs) -> None:
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Auc: curve must be 'ROC' or 'PR', got {curve!r}")
        self._curve, self._num_thresholds, self._name = curve, num_thresholds, name
        self.reset()

    def update(self, preds, labels) -> None:
        preds, labels = _numpy(preds), _numpy(labels).reshape(-1)
        if preds.ndim != 2 or preds.shape[1] != 2 or preds.shape[0] != labels.size:
            raise ValueError(f"Auc.update takes [N, 2] probabilities and N labels, got "
                             f"shapes {list(preds.shape)} and {list(labels.shape)}")
        buckets = (preds[:, 1] * self._num_thresholds).astype(np.int64)
        positive = labels.astype(bool)
        np.add.at(self._stat_pos, buckets[positive], 1)
        np.add.at(self._stat_neg, buckets[~positive], 1)

    def reset(self) -> None:
        self._stat_pos = np.zeros(self._num_thresholds + 1, np.int64)
        self._stat_neg = np.zeros(self._num_thresholds + 1, np.int64)

    def accumulate(self) -> float:
        # Sweep the thresholds from the highest bucket down, adding trapezoids in
        # that order (cumsum adds one after another; np.sum would pair them) and
        # dividing by each total in turn, as Paddle does: its last bit
        pos = np.cumsum(self._stat_pos[::-1].astype(np.float64))
        neg = np.cumsum(self._stat_neg[::-1].astype(np.float64))
        prev_pos = np.concatenate([[0.0], pos[:-1]])
        prev_neg = np.concatenate([[0.0], neg[:-1]])
        area = np.cumsum(np.abs(neg - prev_neg) * (pos + prev_pos) / 2.0)[-1]
        return area / pos[-1] / neg[-1] if pos[-1] > 0 and neg[-1] > 0 else 0.0

    def name(self) -> str:
        return self._name


def accuracy(input, label, k: int = 1, correct=None, total=None, name=None) -> Tensor:  # noqa: A002
    """The fraction of rows whose top-`k` scores include the label, as a float32 0-d
    Tensor (0 without rows). Tensor ops, as Paddle's accuracy op, so it works eagerly,
    compiled and in a static program. `correct` and `total`, if given, are Tensors
    of one element set to the int32 counts (keeping their shape, ``[]`` or ``[1]``;
    Paddle makes them ``[]``)."""
    hits = any_(_top_k_hits(input, label, k), axis=-1)
    n_correct = cast(sum_(hits), dtypes.int32)
    n_total = cast(numel(hits), dtypes.int32)
    for target, count in ((correct, n_correct), (total, n_total)):
        if target is not None:
            target.set_value(reshape(count, target.shape))
    return divide(cast(n_correct, dtypes.float32),
                  cast(maximum(n_total, 1), dtypes.float32))
