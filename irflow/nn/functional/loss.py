"""Loss functions, composed from primitives.

Cross entropy works on log-probabilities from the stable `log_softmax` and picks the
labelled class with `take_along_axis`; ignored labels are replaced by class 0 before
picking (so every index is valid) and their loss is multiplied by zero.

The normalisation of ``reduction="mean"`` follows Paddle 3 exactly, including one
quirk: for hard labels without class weights and with a *negative* ignore_index
(the default -100), Paddle divides by the number of all samples, ignored ones
included; with ``ignore_index >= 0`` it divides by the number of samples not
ignored; with class weights, by the sum of the weights of the samples not ignored.
A second quirk is that of soft (or smoothed) labels with ``ignore_index >= 0``: Paddle
divides by the number of label entries unequal to it (see `_soft_cross_entropy`).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...tensor import (abs as absolute, arange, clip, concat, equal, exp, full_like, log,
                       logsumexp, maximum, mean as reduce_mean, minimum, pow as power, reshape,
                       sqrt, squeeze, stack, sum as reduce_sum, take_along_axis, unsqueeze)
from ...tensor.convert import as_tensor
from ...context import current_static
from ...dispatch import apply, user_location
from ...errors import ShapeError
from ...tensor.logic import logical_not, select
from ...tensor.manipulation import exact_shape, pick
from .activation import log_sigmoid, log_softmax, relu, sigmoid
from .common import pairwise_distance

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction: str) -> None:
    """Paddle's check of a loss's `reduction` (its newer loss layers run it when
    constructed)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(loss, reduction: str):
    check_reduction(reduction)
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


def _picked_labels(function: str, label, ignore_index: int, classes):
    """(labels safe to index with: ignored ones replaced by class 0, bool mask of the
    labels not ignored), after Paddle's check that each label not ignored is a class
    in [0, classes): a negative one would pick a class from the end. Checked now in
    eager code, when the program runs in compiled code (an `assert`; there a symbolic
    `classes` leaves the upper bound to the lookup's own check), not in a static-graph
    program."""
    valid = label != ignore_index
    expected = (f"{function}: label values must lie in [0, {classes}) or equal "
                f"ignore_index ({ignore_index}), as in Paddle")
    if label._value is not None:
        values = label._value[label._value != ignore_index]
        if values.size and (values.min() < 0 or values.max() >= classes):
            bad = values.min() if values.min() < 0 else values.max()
            raise IndexError(f"{expected}; got {bad}")
    elif current_static() is None:
        # (not in a static-graph program: its executor runs what the fetched values
        # need, and a check of its own would make a run that fetches only the logits
        # need the labels fed)
        bad = label < 0
        if isinstance(classes, int):
            bad = bad | (label >= classes)
        apply("assert", [logical_not((bad & valid).any())],
              {"msg": f"{user_location()}: {expected}", "error": "IndexError"})
    return select(valid, label, 0), valid


def accepts_target(function):
    """`function`, callable with its `label` passed as ``target=`` too: Paddle 3.3
    takes that torch-style name for the label of cross_entropy (and of the
    CrossEntropyLoss and SmoothL1Loss layers), so ported code passes it."""
    @functools.wraps(function)
    def with_target(*args, target=None, **kwargs):
        if target is not None:
            if "label" in kwargs:
                raise ValueError(f"{function.__name__}: got both label and its alias target")
            kwargs["label"] = target
        return function(*args, **kwargs)
    return with_target


@accepts_target
def cross_entropy(input, label, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                  label_smoothing: float = 0.0, name=None):
    """Softmax cross entropy of logits `input` (class scores along `axis`).

    Hard labels are integer class indices shaped like input without `axis` (or with
    size 1 there); soft labels (``soft_label=True``) are distributions shaped like
    input. `weight` [C] weighs each class; `label_smoothing` mixes the labels (hard
    ones as one-hot vectors) with the uniform distribution; as in Paddle, a soft label is
    smoothed over its last axis whatever `axis`, and a hard label equal to a
    non-negative ignore_index is smoothed and counted like any other (see
    `_soft_cross_entropy` for the mean). With ``use_softmax=False`` input holds
    probabilities.
    ``reduction="none"`` gives one loss per sample: shaped like a hard label, or with
    size 1 along `axis` for soft or smoothed labels."""
    check_reduction(reduction)
    if ignore_index > 0 and soft_label:
        raise ValueError("When soft_label == True, the value of 'ignore_index' should be "
                         f"'-100', but received {ignore_index}")
    input, label = as_tensor(input), as_tensor(label)
    axis = axis % input.ndim
    log_probs = log_softmax(input, axis) if use_softmax else log(input)
    classes = exact_shape(input)[axis]
    if soft_label:
        _check_soft_label_shape(input, label)
        label = _target(label)
        if label_smoothing > 0:  # Paddle's label_smooth: uniform over the last axis
            label = label_smooth(label, epsilon=label_smoothing)
        loss = _soft_label_loss(input, log_probs, label, axis, use_softmax)
        return _soft_cross_entropy(loss, label, weight, None, axis, reduction, True,
                                   ignore_index if ignore_index >= 0 else None)
    if label.dtype.is_float:
        raise TypeError(f"hard labels must be integers, got {label.dtype.name}; pass "
                        "soft_label=True for distributions")
    squeeze_out = label.ndim == input.ndim - 1
    if squeeze_out:
        label = unsqueeze(label, axis)
    safe, valid = _picked_labels("cross_entropy", label, ignore_index, classes)
    mask = valid.astype(input.dtype)
    if label_smoothing > 0:
        counted = 0 <= ignore_index < classes  # Paddle smooths that label too: none ignored
        onehot = equal(label if counted else safe, _along(arange(classes), axis, input.ndim))
        smoothed = onehot.astype(input.dtype) * (1.0 - label_smoothing) + label_smoothing / classes
        loss = _soft_label_loss(input, log_probs, smoothed, axis, use_softmax)
        if counted:
            return _soft_cross_entropy(loss, smoothed, weight, None, axis, reduction, True,
                                       ignore_index)
        return _soft_cross_entropy(loss, smoothed, weight, mask, axis, reduction,
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


def _soft_label_loss(input, log_probs, label, axis: int, use_softmax: bool):
    """-sum(label * log_probs) along `axis` (kept as size 1). With `use_softmax` it is
    differentiated as Paddle's kernel is: d loss / d input = softmax(input) - label,
    the true gradient only where the label sums to 1 along `axis` (a multi-hot label,
    or one smoothed over another axis, does not), and the label gets none. It is
    written as lse - sum(label * input) plus the rest of the value, (sum(label) - 1)
    * lse, held constant: so a gradient of it differentiates again (a gradient
    penalty through it), where a constant gradient gave no second derivative."""
    if not use_softmax:
        return -reduce_sum(label * log_probs, axis, keepdim=True)
    label = label.detach()
    lse = logsumexp(input, axis, keepdim=True)
    rest = (reduce_sum(label, axis, keepdim=True) - 1) * lse
    return lse - reduce_sum(label * input, axis, keepdim=True) + rest.detach()


def _soft_cross_entropy(loss, label, weight, mask, axis: int, reduction: str,
                        mean_over_all: bool, counted_index: int | None = None):
    """The soft-label `loss` of each sample (from `_soft_label_loss`) times the
    label-weighted class weight, reduced; `mask` zeroes ignored samples (smoothed hard
    labels).

    "mean" divides by the number of samples (`mean_over_all`, without weight) or by
    their total weight. With `counted_index` (a non-negative ignore_index), it divides
    as Paddle 3.3.1 does then: by the number of the label's entries (one per class,
    not per sample) unequal to counted_index, each counted with its sample's weight."""
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
    if counted_index is not None:
        counted = (label != counted_index).astype(loss.dtype)
        if sample_weight is not None:
            counted = counted * sample_weight
        return _safe_divide(reduce_sum(loss), reduce_sum(counted))
    if weight is None and mean_over_all:
        return reduce_mean(loss)
    return _safe_divide(reduce_sum(loss), reduce_sum(sample_weight))


def nll_loss(input, label, weight=None, ignore_index: int = -100, reduction: str = "mean",
             name=None):
    """Negative log-likelihood of log-probabilities `input` [N, C, d1...] at integer
    labels [N, d1...]. "mean" divides by the total weight of the samples not ignored
    (their count without `weight`)."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    safe, valid = _picked_labels("nll_loss", unsqueeze(label, 1), ignore_index,
                                 exact_shape(input)[1])
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
    """Sigmoid cross entropy of `logit`: w_pos * y * -log(sigmoid(x)) + (1 - y) *
    -log(1 - sigmoid(x)), the logs in the overflow-free forms log(1 + exp(-|x|)) +
    max(-x, 0) and log(1 + exp(-|x|)) + max(x, 0); w_pos = `pos_weight` (default 1). A
    term whose coefficient is 0 is 0 also where its log is infinite, so an infinite
    logit on the side of its label costs 0 and on the other side inf (Paddle's own
    form, (1 - y) * x + ..., gives NaN for +inf and a label of 1)."""
    x = as_tensor(logit)
    label = _target(label, x)
    log_term = log(exp(-absolute(x)) + 1.0)
    positive = label if pos_weight is None else label * pos_weight
    loss = (_times(positive, log_term + maximum(-x, 0.0))
            + _times(1.0 - label, log_term + maximum(x, 0.0)))
    return _reduce(_weighted(loss, weight), reduction)


def _times(coefficient, value):
    """coefficient * value, 0 where the coefficient is 0 (0 * inf would be NaN)."""
    return select(coefficient == 0.0, 0.0, coefficient * value)


def sigmoid_focal_loss(logit, label, normalizer=None, alpha: float = 0.25, gamma: float = 2.0,
                       reduction: str = "sum", name=None):
    """The focal loss of RetinaNet: alpha_t * (1 - p_t)^gamma * BCE(logit, label), where
    p = sigmoid(logit), p_t = p where the label is 1 and 1 - p where it is 0, and
    alpha_t = alpha or 1 - alpha alike; divided by `normalizer` (typically the number
    of positives) before the reduction, which is "sum" by default."""
    check_reduction(reduction)
    x = as_tensor(logit)
    label = _target(label, x)
    p = sigmoid(x)
    p_t = p * label + (1.0 - p) * (1.0 - label)
    alpha_t = alpha * label + (1.0 - alpha) * (1.0 - label)
    loss = alpha_t * power(1.0 - p_t, float(gamma)) * \
        binary_cross_entropy_with_logits(x, label, reduction="none")
    if normalizer is not None:
        loss = loss / normalizer
    return _reduce(loss, reduction)


def smooth_l1_loss(input, label, reduction: str = "mean", delta: float = 1.0,
                   is_huber: bool = True, name=None):
    """Paddle's smooth L1 loss of d = input - label: with `is_huber` (the default) the
    Huber loss, 0.5 d^2 where |d| < delta and delta (|d| - delta / 2) elsewhere;
    otherwise 0.5 d^2 / delta and |d| - delta / 2."""
    diff = absolute(as_tensor(input) - label)
    delta = float(delta)
    if is_huber:
        loss = select(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    else:
        loss = select(diff < delta, 0.5 * diff * diff / delta, diff - 0.5 * delta)
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
        loss = select(positive, label * (log(select(positive, label, 1.0)) - input), 0.0)
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


def _check_same_shape(function: str, **tensors) -> None:
    """Paddle's check that a loss's tensors have one shape (a ValueError). Shapes
    with symbolic dims, whose sizes are known only when the program runs, are not
    compared."""
    shapes = {name: tuple(exact_shape(t)) for name, t in tensors.items()}
    first = next(iter(shapes.values()))
    static = all(isinstance(d, int) for shape in shapes.values() for d in shape)
    if static and any(shape != first for shape in shapes.values()):
        listed = ", ".join(f"{name} {list(shape)}" for name, shape in shapes.items())
        raise ShapeError(f"{function}: {' and '.join(shapes)} must have the same shape, got "
                         f"{listed}")


def soft_margin_loss(input, label, reduction: str = "mean", name=None):
    """log(1 + exp(-label * input)) for labels +-1 (any numeric dtype, cast to the
    input's), computed as -log_sigmoid(label * input), so it stays finite where
    Paddle's literal formula overflows to inf (a margin of -100 in float32)."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    _check_same_shape("soft_margin_loss", input=input, label=label)
    return _reduce(-log_sigmoid(label.astype(input.dtype) * input), reduction)


def hinge_embedding_loss(input, label, margin: float = 1.0, reduction: str = "mean",
                         name=None):
    """input where label is 1, max(0, margin - input) where it is -1, and 0 for any
    other label (Paddle's selections; the gradient of the hinge is 0 at the margin)."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    loss = select(label == 1.0, input, 0.0) + select(label == -1.0, relu(margin - input), 0.0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, label, margin: float = 0, reduction: str = "mean",
                          name=None):
    """For rows of input1 and input2 ([N, D], or one [D] pair) with labels [N] of +-1:
    1 - cos where the label is 1, max(0, cos - margin) where it is -1, 0 otherwise.
    cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-11) (sum(x2^2) + 1e-11)), Paddle's guard."""
    check_reduction(reduction)
    input1, input2, label = as_tensor(input1), as_tensor(input2), as_tensor(label)
    if label.ndim != 1:
        raise ValueError(f"cosine_embedding_loss: label must be 1-D (one target per pair), "
                         f"got shape {label.shape}")
    _check_same_shape("cosine_embedding_loss", input1=input1, input2=input2)
    if input1.ndim > 2:
        raise ValueError(f"cosine_embedding_loss: the inputs must be 1-D or 2-D, got shape "
                         f"{input1.shape}")
    if not input1.dtype.is_float:
        raise TypeError(f"cosine_embedding_loss: the inputs must be float32 or float64, got "
                        f"{input1.dtype.name}")
    squares1 = reduce_sum(input1 * input1, -1) + 1e-11
    squares2 = reduce_sum(input2 * input2, -1) + 1e-11
    cos = reduce_sum(input1 * input2, -1) / sqrt(squares1 * squares2)
    loss = select(label == 1, 1.0 - cos, 0.0) + select(label == -1, clip(cos - margin, min=0.0),
                                                    0.0)
    return _reduce(loss, reduction)


def triplet_margin_loss(input, positive, negative, margin: float = 1.0, p: float = 2,
                        epsilon: float = 1e-06, swap: bool = False, reduction: str = "mean",
                        name=None):
    """max(0, d(input, positive) - d(input, negative) + margin), d the
    `pairwise_distance` along the last axis; with `swap` the negative distance is the
    smaller of d(input, negative) and d(positive, negative)."""
    check_reduction(reduction)
    if margin < 0:
        raise ValueError(f"triplet_margin_loss: margin must be non-negative, got {margin}")
    input, positive, negative = as_tensor(input), as_tensor(positive), as_tensor(negative)
    _check_same_shape("triplet_margin_loss", input=input, positive=positive,
                      negative=negative)
    positive_distance = pairwise_distance(input, positive, p, epsilon)
    negative_distance = pairwise_distance(input, negative, p, epsilon)
    if swap:
        negative_distance = minimum(negative_distance,
                                    pairwise_distance(positive, negative, p, epsilon))
    return _reduce(clip(positive_distance - negative_distance + margin, min=0.0), reduction)


def multi_label_soft_margin_loss(input, label, weight=None, reduction: str = "mean",
                                 name=None):
    """-(label log sigmoid(input) + (1 - label) log sigmoid(-input)), times `weight`,
    averaged over the last axis (the classes): one loss per sample before `reduction`."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    _check_same_shape("multi_label_soft_margin_loss", input=input, label=label)
    loss = -(label * log_sigmoid(input) + (1.0 - label) * log_sigmoid(-input))
    return _reduce(reduce_mean(_weighted(loss, weight), -1), reduction)


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def poisson_nll_loss(input, label, log_input: bool = True, full: bool = False,
                     epsilon: float = 1e-08, reduction: str = "mean", name=None):
    """The negative log-likelihood of `label` under a Poisson distribution of rate
    exp(input) (``log_input``, the default) or input: exp(input) - label * input, or
    input - label * log(input + epsilon). `full` adds Stirling's approximation of
    log(label!), label log(label) - label + log(2 pi label) / 2, where label > 1. It is
    computed on labels <= 1 replaced by 1, so a label that takes a gradient gets 0
    from the term there, where Paddle's gets NaN at a label of 0."""
    if epsilon <= 0:
        raise ValueError(f"poisson_nll_loss: epsilon must be positive, got {epsilon}")
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    _check_same_shape("poisson_nll_loss", input=input, label=label)
    if log_input:
        loss = exp(input) - label * input
    else:
        loss = input - label * log(input + epsilon)
    if full:
        counted = label > 1
        safe = select(counted, label, 1.0)
        stirling = safe * log(safe) - safe + 0.5 * log(safe) + _HALF_LOG_2PI
        loss = loss + select(counted, stirling, 0.0)
    return _reduce(loss, reduction)


def _homoscedastic(variance, input):
    """`variance` shaped to broadcast against `input`: as it is when the shapes are
    equal, with a size-1 last axis added when it lacks input's last axis (one
    variance per sample), as Paddle accepts; anything else is a ValueError."""
    shape, wanted = list(exact_shape(variance)), list(exact_shape(input))
    if shape == wanted or (shape[:-1] == wanted[:-1] and shape[-1:] == [1]):
        return variance
    if shape == wanted[:-1]:
        return unsqueeze(variance, -1)
    raise ShapeError(f"gaussian_nll_loss: variance has the shape {shape}; for an input of "
                     f"shape {wanted} it must be {wanted}, {wanted[:-1]} or "
                     f"{wanted[:-1] + [1]}")


def _check_non_negative(variance) -> None:
    """Paddle refuses a negative variance; checked where the values are known (eager
    code), not inside a compiled program."""
    if variance._value is not None and (variance._value < 0).any():
        raise ValueError("gaussian_nll_loss: variance has negative entries")


def gaussian_nll_loss(input, label, variance, full: bool = False, epsilon: float = 1e-06,
                      reduction: str = "mean", name=None):
    """The negative log-likelihood of `label` under normal distributions of mean
    `input` and `variance` (shaped like input, or one per sample: see
    `_homoscedastic`): (log(v) + (input - label)^2 / v) / 2 with v = max(variance,
    epsilon), plus log(2 pi) / 2 with `full`.

    The variance gets its gradient (zero where clamped). Paddle 3.3.1 gives it none
    (its clamp runs under ``no_grad``), so a model's predicted variance would never
    train: a bug not copied."""
    check_reduction(reduction)
    input, label, variance = as_tensor(input), as_tensor(label), as_tensor(variance)
    for what, tensor in (("input", input), ("label", label), ("variance", variance)):
        if not tensor.dtype.is_float:
            raise TypeError(f"gaussian_nll_loss: {what} must be float32 or float64, got "
                            f"{tensor.dtype.name}")
    variance = _homoscedastic(variance, input)
    _check_non_negative(variance)
    variance = clip(variance, min=epsilon)
    diff = input - label
    loss = 0.5 * (log(variance) + diff * diff / variance)
    return _reduce(loss + _HALF_LOG_2PI if full else loss, reduction)


# ---------------------------------------------------------------- CTC

_NO_PATH = -1e30  # the log-probability of no path: finite, so that gradients stay finite


def _extended_labels(labels, label_lengths, blank: int):
    """[B, 2L + 1]: each label sequence with a blank before, between and after its
    labels (CTC's states)."""
    batch, length = exact_shape(labels)
    blank_column = full_like(unsqueeze(label_lengths, 1), blank)
    pairs = stack([full_like(labels, blank), labels], 2)
    return concat([reshape(pairs, [batch, 2 * length]), blank_column], 1)


def _shifted(alpha, k: int):
    """alpha [B, S] moved k states right: state s holds state s - k's, no path below k."""
    return concat([full_like(alpha[:, :k], _NO_PATH), alpha[:, :-k]], 1)


def _ctc_log_likelihood(log_probs, states, input_lengths, label_lengths, blank: int):
    """log p(labels | input) by CTC's forward recursion over the states [B, S] of
    `_extended_labels`: a state is reached from itself, from the state before it, and
    from the one two before when that is a different label (skipping a blank). An
    input of length 0 has one alignment, the empty one: log p is 0 for an empty label
    (as torch's; Paddle's warp-ctc gives an infinite loss), no path for another."""
    steps, batch, _ = exact_shape(log_probs)
    if not isinstance(steps, int):
        raise ShapeError(f"ctc_loss: log_probs must have a static time dim, got shape "
                         f"{exact_shape(log_probs)}")
    count = exact_shape(states)[1]
    emitted = take_along_axis(log_probs, stack([states] * steps, 0), 2)  # [T, B, S]
    first = unsqueeze(arange(count) < 2, 0)
    alpha = select(first, emitted[0], full_like(emitted[0], _NO_PATH))
    skippable = None
    if count > 2:
        skippable = ((states != blank) & (states != _shifted(states, 2))
                     & unsqueeze(arange(count) >= 2, 0))
    for t in range(1, steps):
        paths = [alpha, _shifted(alpha, 1)]
        if skippable is not None:
            paths.append(select(skippable, _shifted(alpha, 2), full_like(alpha, _NO_PATH)))
        step = logsumexp(stack(paths, 0), 0) + emitted[t]
        alpha = select(unsqueeze(input_lengths > t, 1), step, alpha)
    end = unsqueeze(2 * label_lengths, 1)
    last = take_along_axis(alpha, end, 1)[:, 0]
    before = take_along_axis(alpha, maximum(end - 1, 0), 1)[:, 0]
    before = select(label_lengths > 0, before, full_like(before, _NO_PATH))
    found = logsumexp(stack([last, before], 0), 0)
    # no step at all: the empty alignment, certain for an empty label, else no path
    unaligned = select(label_lengths > 0, full_like(found, _NO_PATH), full_like(found, 0.0))
    return select(input_lengths > 0, found, unaligned)


def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank: int = 0,
             reduction: str = "mean", norm_by_times: bool = False,
             zero_infinity: bool = False, name=None):
    """Connectionist temporal classification loss, as Paddle's warp-ctc: `log_probs`
    [T, B, C] are unnormalized logits (softmax is applied here), `labels` [B, L] padded
    label sequences, `input_lengths` and `label_lengths` [B] the lengths used. The loss
    of a sequence is -log of the total probability of its alignments; "mean" divides
    each by its label length before averaging. `norm_by_times` divides the gradient
    (not the loss) of each sequence by its input length.

    A sequence that no alignment fits (more labels and repeats than steps) has an
    infinite loss and no gradient, zero with `zero_infinity`. Paddle's warp-ctc
    returns 0 for it whatever `zero_infinity` says (a case its source marks as not
    right): not copied."""
    check_reduction(reduction)
    log_probs = as_tensor(log_probs)
    if not log_probs.dtype.is_float or log_probs.ndim != 3:
        raise ShapeError(f"ctc_loss: log_probs must be a float [T, B, C] tensor, got "
                         f"{log_probs.dtype.name}{exact_shape(log_probs)}")
    labels = as_tensor(labels).astype("int64")
    input_lengths = as_tensor(input_lengths).astype("int64")
    label_lengths = as_tensor(label_lengths).astype("int64")
    states = _extended_labels(labels, label_lengths, blank)
    log_likelihood = _ctc_log_likelihood(log_softmax(log_probs, axis=-1), states,
                                         input_lengths, label_lengths, blank)
    loss = -log_likelihood
    if norm_by_times:
        scaled = loss / input_lengths.astype(loss.dtype)
        loss = loss.detach() + (scaled - scaled.detach())
    impossible = log_likelihood < _NO_PATH / 2
    loss = select(impossible, full_like(loss, 0.0 if zero_infinity else math.inf), loss)
    if reduction == "mean":
        return reduce_mean(loss / label_lengths.astype(loss.dtype))
    return _reduce(loss, reduction)
