"""Paddle's less common losses: margin losses over classes (`multi_margin_loss`,
`multi_label_margin_loss`), `dice_loss`, `log_loss`, `npair_loss`,
`triplet_margin_with_distance_loss` and the hierarchical sigmoid `hsigmoid_loss`.

All are composed from tensor operations, dense over the classes (no data-dependent
shapes), so they run eagerly and trace alike; Paddle's checks of label values run
where the values are known (eager code).
"""
from __future__ import annotations

import numpy as np

from ...errors import InputError, ShapeError
from ...tensor import (clip, cumprod, exp, log, log1p, matmul, maximum, mean as reduce_mean,
                       minimum, reshape, sum as reduce_sum, take_along_axis, unsqueeze)
from ...tensor.convert import as_tensor
from ...tensor.logic import select
from ...tensor.manipulation import _assert_size_is_not, exact_shape, pick
from .common import one_hot, pairwise_distance
from .loss import _check_same_shape, _reduce, check_reduction, cross_entropy


def _check_rank(function: str, what: str, t, rank: int) -> None:
    if t.ndim != rank:
        raise ShapeError(f"{function}: {what} must be {rank}-D, got shape {list(t.shape)}")


def multi_margin_loss(input, label, p: int = 1, margin: float = 1.0, weight=None,
                      reduction: str = "mean", name=None):
    """The mean over classes j of max(0, margin - x[y] + x[j]) ** p, less the j = y
    term (margin ** p / C) as Paddle computes it, times weight[y] if given: one loss
    per sample of input [N, C], label [N] before `reduction`."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    _check_rank("multi_margin_loss", "input", input, 2)
    batch, classes = exact_shape(input)
    if exact_shape(label)[0] != batch:
        raise ShapeError(f"multi_margin_loss: label must have input's batch size {batch}, "
                         f"got shape {list(label.shape)}")
    label = reshape(label, [-1, 1])
    target = take_along_axis(input, label, 1)
    loss = reduce_mean(clip(margin - target + input, min=0.0) ** p, 1) - margin ** p / classes
    if weight is None:
        return _reduce(loss, reduction)
    weight = as_tensor(weight)
    if exact_shape(weight)[0] != classes:
        raise ShapeError(f"multi_margin_loss: weight must have one entry per class ({classes}),"
                         f" got shape {list(weight.shape)}")
    return _reduce(pick(weight, reshape(label, [-1]), 0) * loss, reduction)


def _check_label_range(function: str, label, low: int, high: int) -> None:
    """Paddle's eager check that label values lie in [low, high)."""
    values = label._value
    if values is None or not values.size:
        return
    if values.min() < low or values.max() >= high:
        raise InputError(f"{function}: label values must lie in [{low}, {high}), got values "
                         f"from {values.min()} to {values.max()}")


def multi_label_margin_loss(input, label, reduction: str = "mean", name=None):
    """For input [N, C] and label [N, K] (each row's target classes, ended by the first
    -1): the sum over targets j and non-targets k of max(0, 1 - (x[j] - x[k])), over C;
    one loss per sample before `reduction`."""
    check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    _check_rank("multi_label_margin_loss", "input", input, 2)
    _check_rank("multi_label_margin_loss", "label", label, 2)
    classes = exact_shape(input)[1]
    _check_label_range("multi_label_margin_loss", label, -1, classes)
    listed = cumprod((label != -1).astype(input.dtype), dim=1)  # 1 up to the first -1
    targets = select(label >= 0, label, 0)
    is_target = reduce_sum(one_hot(targets, classes) * unsqueeze(listed, -1), 1) > 0
    target_scores = unsqueeze(take_along_axis(input, targets, 1), -1)           # [N, K, 1]
    hinge = maximum(1.0 - target_scores + unsqueeze(input, 1), 0.0)             # [N, K, C]
    hinge = select(unsqueeze(is_target, 1), 0.0, hinge) * unsqueeze(listed, -1)
    return _reduce(reduce_sum(hinge, [1, 2]) / classes, reduction)


def dice_loss(input, label, epsilon: float = 1e-05, name=None):
    """1 - 2 |X n Y| / (|X| + |Y| + epsilon) per sample, averaged: input [N, ..., C]
    holds class probabilities, label [N, ..., 1] the class ids (one-hot encoded)."""
    input, label = as_tensor(input), as_tensor(label)
    if input.ndim < 2 or label.ndim != input.ndim or exact_shape(label)[-1] != 1 \
            or exact_shape(label)[:-1] != exact_shape(input)[:-1]:
        raise ShapeError(f"dice_loss: label must be input's shape with a last axis of 1 "
                         f"(input at least 2-D), got input {list(input.shape)} and label "
                         f"{list(label.shape)}")
    label = one_hot(reshape(label, exact_shape(label)[:-1]), exact_shape(input)[-1])
    label = label.astype(input.dtype)
    axes = list(range(1, input.ndim))
    overlap = reduce_sum(input * label, axes)
    total = reduce_sum(input, axes) + reduce_sum(label, axes)
    return reduce_mean(1 - overlap * 2 / (total + epsilon))


def log_loss(input, label, epsilon: float = 0.0001, name=None):
    """-label log(input + epsilon) - (1 - label) log(1 - input + epsilon) for
    probabilities input [N, 1], without reduction."""
    input, label = as_tensor(input), as_tensor(label)
    if input.ndim != 2 or exact_shape(input)[1] != 1:
        raise ShapeError(f"log_loss: input must be [N, 1] probabilities, got shape "
                         f"{list(input.shape)}")
    _check_same_shape("log_loss", input=input, label=label)
    return -label * log(input + epsilon) - (1 - label) * log(1 - input + epsilon)


def _check_not_empty(function: str, **tensors) -> None:
    """Paddle's check that `tensors` have elements: now for their static dims, when
    the program runs for a symbolic one (an `assert`)."""
    for what, t in tensors.items():
        for axis, size in enumerate(exact_shape(t)):
            message = f"{function}: {what} must not be empty, got shape {list(t.shape)}"
            if size == 0:
                raise ShapeError(message)
            if not isinstance(size, int):
                _assert_size_is_not(t, axis, 0, message)


def npair_loss(anchor, positive, labels, l2_reg: float = 0.002):
    """Cross entropy of the anchor-positive similarities (anchor @ positive.T) against
    the targets "same label", each row normalised to sum 1, plus l2_reg / 4 times the
    mean squared norms of anchor and positive. Paddle casts its targets to float32 and
    then fails on float64 inputs; here they take the input's dtype."""
    anchor, positive, labels = as_tensor(anchor), as_tensor(positive), as_tensor(labels)
    _check_not_empty("npair_loss", anchor=anchor, positive=positive)
    labels = reshape(labels, [-1, 1])
    same = (labels == reshape(labels, [1, -1])).astype(anchor.dtype)
    targets = same / reduce_sum(same, 1, keepdim=True)
    l2 = (reduce_mean(reduce_sum(anchor * anchor, 1))
          + reduce_mean(reduce_sum(positive * positive, 1)))
    similarity = matmul(anchor, positive, transpose_y=True)
    soft_ce = cross_entropy(similarity, targets, soft_label=True, reduction="none")
    return l2 * 0.25 * l2_reg + reduce_mean(reduce_sum(targets * soft_ce, 0))


def _check_distances(*distances) -> None:
    """Paddle's eager check that the distance function gave no negative distance."""
    if any(d._value is not None and (d._value < 0).any() for d in distances):
        raise InputError("triplet_margin_with_distance_loss: the distance function gave a "
                         "negative distance; distances must be at least 0")


def triplet_margin_with_distance_loss(input, positive, negative, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean", name=None):
    """max(0, d(input, positive) - d(input, negative) + margin), d the given distance
    function (default: the 2-norm `pairwise_distance`); with `swap` the negative
    distance is the smaller of d(input, negative) and d(positive, negative)."""
    check_reduction(reduction)
    if margin < 0:
        raise InputError(f"triplet_margin_with_distance_loss: margin must be at least 0, got "
                         f"{margin}")
    input, positive, negative = as_tensor(input), as_tensor(positive), as_tensor(negative)
    _check_same_shape("triplet_margin_with_distance_loss", input=input, positive=positive,
                      negative=negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    positive_distance = distance(input, positive)
    negative_distance = distance(input, negative)
    if swap:
        negative_distance = minimum(negative_distance, distance(positive, negative))
    _check_distances(positive_distance, negative_distance)
    return _reduce(clip(positive_distance - negative_distance + margin, min=0.0), reduction)


def _default_tree(num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Paddle's default hierarchical-sigmoid tree as (path_table, path_code), one row
    per class, padded with -1: class c is coded as c + num_classes, whose bits below
    the leading one, lowest first, are the branches taken, at the nodes numbered by
    that code shifted right past each bit, less 1."""
    length = (num_classes - 1).bit_length()
    table = np.full((num_classes, length), -1, dtype=np.int64)
    code = np.full((num_classes, length), -1, dtype=np.int64)
    for c in range(num_classes):
        node = c + num_classes
        for j in range(node.bit_length() - 1):
            table[c, j] = (node >> (j + 1)) - 1
            code[c, j] = (node >> j) & 1
    return table, code


def hsigmoid_loss(input, label, num_classes: int, weight, bias=None, path_table=None,
                  path_code=None, is_sparse: bool = False, name=None):
    """The hierarchical sigmoid loss [N, 1]: along each sample's path of tree nodes,
    the binary cross entropy of the node's logit, x dot weight[node] plus
    bias[node] clipped to [-40, 40], against the branch taken (path_code). The default tree is
    `_default_tree`; a custom one comes as path_table and path_code, [N, L] padded with
    -1. As Paddle's kernel (and its reference test) does, each padded step adds
    log(2), the loss of a zero logit: a constant that leaves the gradients alone.
    `is_sparse` only picks Paddle's gradient storage and is ignored."""
    if num_classes < 2:
        raise InputError(f"hsigmoid_loss: num_classes must be at least 2, got {num_classes}")
    input, label, weight = as_tensor(input), as_tensor(label), as_tensor(weight)
    if (path_table is None) != (path_code is None):
        raise InputError("hsigmoid_loss: path_table and path_code come together (a custom "
                         "tree) or not at all (the default tree)")
    if path_table is None:
        _check_label_range("hsigmoid_loss", label, 0, num_classes)
        table, code = _default_tree(num_classes)
        label = reshape(label, [-1])
        path_table, path_code = pick(as_tensor(table), label, 0), pick(as_tensor(code), label, 0)
    path_table, path_code = as_tensor(path_table), as_tensor(path_code)
    on_path = path_table >= 0
    nodes = select(on_path, path_table, 0)
    logits = reduce_sum(pick(weight, nodes, 0) * unsqueeze(input, 1), -1)   # [N, L]
    if bias is not None:
        logits = logits + pick(reshape(as_tensor(bias), [-1]), nodes, 0)
    logits = select(on_path, clip(logits, -40.0, 40.0), 0.0)
    taken = select(on_path, path_code, 0).astype(input.dtype)
    return reduce_sum(log1p(exp(logits)) - taken * logits, -1, keepdim=True)
