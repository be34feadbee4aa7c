"""Loss functions, composed from primitives.

Cross entropy works on log-probabilities from the stable `log_softmax` and picks the
labelled class with `take_along_axis`; ignored labels are replaced by class 0 before
picking (so every index is valid) and their loss is multiplied by zero.

The normalisation of ``reduction="mean"`` follows Paddle 3 exactly, including one
quirk: for hard labels without class weights and with a *negative* ignore_index
(the default -100), Paddle divides by the number of all samples, ignored ones
included; with ``ignore_index >= 0`` it divides by the number of samples not
ignored; with class weights, by the sum of the weights of the samples not ignored.
"""
from __future__ import annotations

import numpy as np

from ...tensor import (abs as absolute, arange, equal, exp, log, maximum,
                       mean as reduce_mean, reshape, squeeze, sum as reduce_sum,
                       take_along_axis, unsqueeze, where)
from ...tensor.convert import as_tensor
from ...errors import ShapeError
from ...tensor.manipulation import exact_shape, pick
from .activation import log_softmax, relu

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(loss, reduction: str):
    _check_reduction(reduction)
    if reduction == "mean":
        return reduce_mean(loss)
    if reduction == "sum":
        return reduce_sum(loss)
    return loss


def _safe_divide(total, denominator):
    """total / denominator, or total / 1 where the denominator is 0 (Paddle's guard)."""
    return total / (denominator + (denominator == 0).astype(denominator.dtype))


def _along(vector, axis: int, ndim: int):
    """A [C] vector reshaped to broadcast along `axis` of a rank-`ndim` tensor."""
    shape = [1] * ndim
    shape[axis] = -1
    return reshape(vector, shape)


def _picked_labels(label, ignore_index: int):
    """(labels safe to index with: ignored ones replaced by class 0, bool mask of the
    labels not ignored)."""
    valid = label != ignore_index
    return where(valid, label, 0), valid


def cross_entropy(input, label, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                  label_smoothing: float = 0.0, name=None):
    """Softmax cross entropy of logits `input` (class scores along `axis`).

    Hard labels are integer class indices shaped like input without `axis` (or with
    size 1 there); soft labels (``soft_label=True``) are distributions shaped like
    input. `weight` [C] weighs each class; `label_smoothing` mixes the labels (hard
    ones as one-hot vectors) with the uniform distribution. With ``use_softmax=False`` input holds probabilities.
    ``reduction="none"`` gives one loss per sample: shaped like a hard label, or with
    size 1 along `axis` for soft or smoothed labels."""
    _check_reduction(reduction)
    if ignore_index > 0 and soft_label:
        raise ValueError("When soft_label == True, the value of 'ignore_index' should be "
                         f"'-100', but received {ignore_index}")
    input, label = as_tensor(input), as_tensor(label)
    axis = axis % input.ndim
    log_probs = log_softmax(input, axis) if use_softmax else log(input)
    classes = input.shape[axis]
    if soft_label:
        _check_soft_label_shape(input, label)
        label = _target(label)
        if label_smoothing > 0:
            label = label * (1.0 - label_smoothing) + label_smoothing / classes
        return _soft_cross_entropy(log_probs, label, weight, None, axis, reduction, True)
    if label.dtype.is_float:
        raise TypeError(f"hard labels must be integers, got {label.dtype.name}; pass "
                        "soft_label=True for distributions")
    squeeze_out = label.ndim == input.ndim - 1
    if squeeze_out:
        label = unsqueeze(label, axis)
    safe, valid = _picked_labels(label, ignore_index)
    mask = valid.astype(input.dtype)
    if label_smoothing > 0:
        onehot = equal(safe, _along(arange(classes), axis, input.ndim)).astype(input.dtype)
        smoothed = onehot * (1.0 - label_smoothing) + label_smoothing / classes
        return _soft_cross_entropy(log_probs, smoothed, weight, mask, axis, reduction,
                                   ignore_index < 0)
    loss = -take_along_axis(log_probs, safe, axis) * mask
    if weight is not None:
        sample_weight = pick(weight, safe, axis=0) * mask
        loss = loss * sample_weight
        denominator = reduce_sum(sample_weight)
    elif ignore_index >= 0:
        denominator = reduce_sum(mask)
    else:
        denominator = None
    if reduction == "none":
        return squeeze(loss, axis) if squeeze_out else loss
    if reduction == "sum":
        return reduce_sum(loss)
    return reduce_mean(loss) if denominator is None else _safe_divide(reduce_sum(loss), denominator)


def _soft_cross_entropy(log_probs, label, weight, mask, axis: int, reduction: str,
                        mean_over_all: bool):
    """-sum(label * log_probs) along `axis` (kept as size 1), times the label-weighted
    class weight; `mask` zeroes ignored samples (smoothed hard labels)."""
    loss = -reduce_sum(label * log_probs, axis, keepdim=True)
    sample_weight = None
    if weight is not None:
        sample_weight = reduce_sum(label * _along(weight, axis, label.ndim), axis, keepdim=True)
    if mask is not None:
        loss = loss * mask
        sample_weight = mask if sample_weight is None else sample_weight * mask
    if weight is not None:
        loss = loss * sample_weight
    if reduction != "mean":
        return _reduce(loss, reduction)
    if weight is None and mean_over_all:
        return reduce_mean(loss)
    return _safe_divide(reduce_sum(loss), reduce_sum(sample_weight))


def nll_loss(input, label, weight=None, ignore_index: int = -100, reduction: str = "mean",
             name=None):
    """Negative log-likelihood of log-probabilities `input` [N, C, d1...] at integer
    labels [N, d1...]. "mean" divides by the total weight of the samples not ignored
    (their count without `weight`)."""
    _check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    safe, valid = _picked_labels(unsqueeze(label, 1), ignore_index)
    sample_weight = valid.astype(input.dtype)
    if weight is not None:
        sample_weight = pick(weight, safe, axis=0) * sample_weight
    loss = squeeze(-take_along_axis(input, safe, 1) * sample_weight, 1)
    if reduction == "mean":
        return _safe_divide(reduce_sum(loss), reduce_sum(sample_weight))
    return _reduce(loss, reduction)


def mse_loss(input, label, reduction: str = "mean", name=None):
    diff = as_tensor(input) - label
    return _reduce(diff * diff, reduction)


def square_error_cost(input, label):  # noqa: A002  (Paddle's name)
    """(input - label) ** 2 elementwise: mse_loss without the reduction."""
    diff = as_tensor(input) - label
    return diff * diff


def l1_loss(input, label, reduction: str = "mean", name=None):
    return _reduce(absolute(as_tensor(input) - label), reduction)


def _weighted(loss, weight):
    return loss if weight is None else loss * weight


def binary_cross_entropy(input, label, weight=None, reduction: str = "mean", name=None):
    """-(label * log(p) + (1 - label) * log(1 - p)) for probabilities p = `input`, each
    log clamped at -100 as in Paddle (so p = 0 or 1 gives a finite loss). Its gradient
    is Paddle's kernel's, (p - label) / max(p (1 - p), 1e-12): a prediction saturated
    at the wrong end (p = 1 for label 0) gets a large gradient, where the clamp's
    derivative would give it none."""
    p = as_tensor(input)
    label = _target(label, p)
    loss = -(label * _clamped_log(p) + (1.0 - label) * _clamped_log(1.0 - p))
    grad = (p - label) / maximum(p * (1.0 - p), 1e-12)
    return _reduce(_weighted(_with_gradient(loss, p, grad), weight), reduction)


def _with_gradient(value, x, grad):
    """`value` (elementwise in `x`), differentiated as if d value / d x were `grad`: the
    value itself, plus (x - x), whose gradient is one, times `grad`, held constant."""
    return value.detach() + (x - x.detach()) * grad.detach()


def _target(label, like=None):
    """`label` as a tensor that takes no gradient: Paddle's kernels of these losses
    (cross entropy of soft labels, binary cross entropy, KL divergence) differentiate
    the input only, so a teacher's distribution that is not detached is not trained
    through the loss."""
    return as_tensor(label, like=like).detach()


def _clamped_log(p):
    tiny = float(np.finfo(p.dtype.np).smallest_subnormal)
    return maximum(log(maximum(p, tiny)), -100.0)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction: str = "mean",
                                     pos_weight=None, name=None):
    """Sigmoid cross entropy of `logit`, in the overflow-free form
    (1 - y) * x + w_pos * (log(1 + exp(-|x|)) + max(-x, 0)), where
    w_pos = 1 + (pos_weight - 1) * y weighs the positive term."""
    x = as_tensor(logit)
    label = _target(label, x)
    log_sigmoid_neg = log(exp(-absolute(x)) + 1.0) + maximum(-x, 0.0)
    if pos_weight is not None:
        log_sigmoid_neg = log_sigmoid_neg * ((pos_weight - 1.0) * label + 1.0)
    loss = (1.0 - label) * x + log_sigmoid_neg
    return _reduce(_weighted(loss, weight), reduction)


def smooth_l1_loss(input, label, reduction: str = "mean", delta: float = 1.0,
                   is_huber: bool = True, name=None):
    """Paddle's smooth L1 loss of d = input - label: with `is_huber` (the default) the
    Huber loss, 0.5 d^2 where |d| < delta and delta (|d| - delta / 2) elsewhere;
    otherwise 0.5 d^2 / delta and |d| - delta / 2."""
    diff = absolute(as_tensor(input) - label)
    delta = float(delta)
    if is_huber:
        loss = where(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    else:
        loss = where(diff < delta, 0.5 * diff * diff / delta, diff - 0.5 * delta)
    return _reduce(loss, reduction)


def kl_div(input, label, reduction: str = "mean", log_target: bool = False, name=None):
    """The Kullback-Leibler divergence of the distribution `label` from log-probabilities
    `input`, label (log label - input) elementwise (0 where label <= 0, as in Paddle), or
    exp(label) (label - input) with `log_target`. ``reduction="batchmean"`` divides the
    sum by the batch size (the size of axis 0)."""
    input = as_tensor(input)
    label = _target(label, input)
    if log_target:
        loss = exp(label) * (label - input)
    else:
        positive = label > 0
        loss = where(positive, label * (log(where(positive, label, 1.0)) - input), 0.0)
    if reduction == "batchmean":
        # (the size as it is: a Python int, or while tracing with a symbolic batch
        # the size the program reads when it runs)
        return reduce_sum(loss) / input.shape[0] if input.ndim else reduce_sum(loss)
    return _reduce(loss, reduction)


def margin_ranking_loss(input, other, label, margin: float = 0.0, reduction: str = "mean",
                        name=None):
    """max(0, -label (input - other) + margin): label 1 asks input to rank above other
    by `margin`, label -1 below."""
    loss = relu(-as_tensor(label) * (as_tensor(input) - other) + float(margin))
    return _reduce(loss, reduction)  # relu: no gradient at a tie, as Paddle


def label_smooth(label, prior_dist=None, epsilon: float = 0.1, name=None):
    """(1 - epsilon) label + epsilon prior, the prior uniform over the last axis when
    not given."""
    label = as_tensor(label)
    prior = 1.0 / label.shape[-1] if prior_dist is None else prior_dist
    return (1.0 - float(epsilon)) * label + float(epsilon) * prior


def _check_soft_label_shape(input, label) -> None:
    """Soft labels are distributions shaped like the input, as Paddle requires (a
    [N, 1] label broadcast against [N, C] logits and gave a number)."""
    shapes = tuple(exact_shape(input)), tuple(exact_shape(label))
    if shapes[0] != shapes[1] and all(isinstance(d, int) for d in shapes[0] + shapes[1]):
        raise ShapeError(f"cross_entropy(soft_label=True): the label has the shape "
                         f"{list(shapes[1])}, but soft labels must have the input's shape "
                         f"{list(shapes[0])}, as in Paddle")


def softmax_with_cross_entropy(logits, label, soft_label: bool = False,
                               ignore_index: int = -100, numeric_stable_mode: bool = True,
                               return_softmax: bool = False, axis: int = -1):
    """Paddle's older form of `cross_entropy` without reduction: one loss per sample
    with size 1 along `axis` (hard labels come with size 1 there too), and the softmax
    as well with `return_softmax`."""
    from .activation import softmax
    logits = as_tensor(logits)
    loss = cross_entropy(logits, label, ignore_index=ignore_index, reduction="none",
                         soft_label=soft_label, axis=axis)
    if loss.ndim < logits.ndim:
        loss = unsqueeze(loss, axis % logits.ndim)
    return (loss, softmax(logits, axis)) if return_softmax else loss
