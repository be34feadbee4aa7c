"""Batch, layer, group and instance normalization, composed from primitives.

Both normalize with the biased variance (the mean of squared deviations), as Paddle.
In training, `batch_norm` also updates the running statistics in place, with
``running = momentum * running + (1 - momentum) * batch`` and the batch's biased
variance (Paddle 3's behaviour). The update is written with tensor ops under
`no_grad` and stored with `Tensor.set_value`, the one way irflow expresses a state
update, which the tracer intercepts when a Layer is compiled.
"""
from __future__ import annotations

import math

from ...dispatch import no_grad
from ...errors import ShapeError
from ...tensor import (concat, mean as reduce_mean, numel, reshape, rsqrt, slice as slice_axes,
                      transpose, zeros)
from ...tensor.convert import as_tensor
from ...tensor.logic import select
from ...tensor.manipulation import exact_shape
from .common import test_twins


def _channel_axis(ndim: int, data_format: str) -> int:
    """Axis 1 for channel-first layouts (NC, NCL, NCHW, NCDHW), else the last axis."""
    if ndim < 2:
        raise ValueError(f"batch_norm needs an input of rank >= 2, got rank {ndim}")
    return 1 if data_format.upper().startswith("NC") else ndim - 1


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.9, epsilon: float = 1e-05, data_format: str = "NCHW",
               use_global_stats=None, name=None):
    """Normalize each channel of x: by the batch's statistics while training (and
    update the running ones), by the running statistics otherwise or when
    `use_global_stats` is True."""
    x = as_tensor(x)
    channel = _channel_axis(x.ndim, data_format)
    axes = [a for a in range(x.ndim) if a != channel]
    per_channel = [1] * x.ndim
    per_channel[channel] = -1
    use_batch = training if use_global_stats is None else not use_global_stats
    twins = test_twins() if use_batch else None
    if twins is not None:  # before the update, so that it reads the running statistics
        test = batch_norm(x, running_mean, running_var, weight, bias, False, momentum,
                          epsilon, data_format)
    several = _several_per_channel(x, channel) if use_batch else True
    if several is False:  # one value per channel (a batch of one): Paddle passes x on
        y = _passed_on(x, weight, bias, per_channel)
    else:
        if use_batch:
            mean = reduce_mean(x, axes, keepdim=True)
            centered = x - mean
            var = reduce_mean(centered * centered, axes, keepdim=True)
            _update_running(running_mean, mean, momentum, several)
            _update_running(running_var, var, momentum, several)
        else:
            mean = reshape(running_mean, per_channel)
            var = reshape(running_var, per_channel)
            centered = x - mean
        y = centered * rsqrt(var + epsilon)
        if weight is not None:
            y = y * reshape(weight, per_channel)
        if bias is not None:
            y = y + reshape(bias, per_channel)
        if several is not True:  # decided when the program runs
            y = select(several, y, _passed_on(x, weight, bias, per_channel))
    if twins is not None:
        twins[y._ir] = test._ir
    return y


def _several_per_channel(x, channel: int):
    """Whether a training batch has at least two values per channel: True, False, or
    for sizes known only when the program runs, a traced bool. With one, Paddle's
    kernel passes x on unchanged (its gradient the identity, none for weight and
    bias) and keeps the running statistics, which the batch's (a variance of 0) would
    otherwise pull toward it: the last batch of one sample of an epoch. An empty
    batch keeps them too (its statistics are NaN)."""
    shape = exact_shape(x)
    sizes = [d for a, d in enumerate(shape) if a != channel]
    if all(isinstance(d, int) for d in sizes):
        return math.prod(sizes) > 1
    channels = shape[channel]  # (an unknown channel count: only an empty batch is told)
    return numel(x) > (channels if isinstance(channels, int) else 0)


def _passed_on(x, weight, bias, per_channel):
    """x unchanged, as Paddle's batch norm of one value per channel gives it; weight
    and bias in it with a zero gradient (Paddle's), so optimizers still step them."""
    y = x
    for p in (weight, bias):
        if p is not None:
            y = y + reshape(p, per_channel) * 0.0
    return y


def _update_running(running, batch_stat, momentum: float, several) -> None:
    """Move `running` toward the batch's statistic unless `several` is False (one
    value per channel, or none): a traced `several` decides when the program runs."""
    if several is False:
        return
    with no_grad():
        updated = running * momentum + reshape(batch_stat, [-1]) * (1.0 - momentum)
        if several is not True:
            updated = select(several, updated, running)
        running.set_value(updated)


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon: float = 1e-05, name=None):
    """Normalize over the trailing dims `normalized_shape`, then scale by weight and
    shift by bias (both of that shape)."""
    x = as_tensor(x)
    normalized_shape = ([normalized_shape] if isinstance(normalized_shape, int)
                        else [int(d) for d in normalized_shape])
    _check_normalized_shape(x, normalized_shape)
    count = len(normalized_shape)
    axes = list(range(x.ndim - count, x.ndim))
    mean = reduce_mean(x, axes, keepdim=True)
    centered = x - mean
    var = reduce_mean(centered * centered, axes, keepdim=True)
    y = centered * rsqrt(var + epsilon)
    if weight is not None:
        y = y * _over_normalized_dims(weight, x, count)
    if bias is not None:
        y = y + _over_normalized_dims(bias, x, count)
    return y


def _check_normalized_shape(x, normalized_shape: list[int]) -> None:
    """Paddle requires x's trailing dims to be `normalized_shape`; without this check a
    mismatched one (an int other than x's last size) would silently normalize over as
    many trailing dims whatever their sizes."""
    count = len(normalized_shape)
    trailing = list(exact_shape(x)[x.ndim - count:]) if count <= x.ndim else None
    if trailing is None or any(isinstance(d, int) and d != n
                               for d, n in zip(trailing, normalized_shape)):
        raise ShapeError(f"layer_norm: normalized_shape is {normalized_shape}, expected x of "
                         f"shape [*, {', '.join(map(str, normalized_shape))}], got "
                         f"{list(exact_shape(x))}")


def _over_normalized_dims(param, x, count: int):
    """A layer norm weight or bias in the shape of x's last `count` dims: Paddle's are
    1-D of their product (nn.LayerNorm([3, 4]) has a weight of 12), irflow's layer
    keeps that shape itself."""
    param = as_tensor(param)
    if param.ndim == 1 and count > 1:
        return reshape(param, exact_shape(x)[x.ndim - count:])
    return param


def _normalize_groups(x, groups_shape, epsilon):
    """x normalized over every axis after the first two of its view `groups_shape`."""
    view = reshape(x, groups_shape)
    axes = list(range(2, len(groups_shape)))
    mean = reduce_mean(view, axes, keepdim=True)
    centered = view - mean
    var = reduce_mean(centered * centered, axes, keepdim=True)
    return reshape(centered * rsqrt(var + epsilon), exact_shape(x))


def _affine(y, weight, bias, channel_axis: int):
    shape = [1] * y.ndim
    shape[channel_axis] = -1
    if weight is not None:
        y = y * reshape(weight, shape)
    if bias is not None:
        y = y + reshape(bias, shape)
    return y


def group_norm(x, num_groups: int, epsilon: float = 1e-05, weight=None, bias=None,
               data_format: str = "NCHW", name=None):
    """Normalize each group of num_groups channel groups over its channels and
    spatial positions (biased variance), then scale and shift per channel."""
    x = as_tensor(x)
    channels_last = not data_format.upper().startswith("NC")
    if channels_last:
        x = transpose(x, [0, x.ndim - 1, *range(1, x.ndim - 1)])
    shape = exact_shape(x)
    channels = shape[1]
    if channels % num_groups:
        raise ValueError(f"group_norm: the channels ({channels}) must be divisible by "
                         f"num_groups ({num_groups})")
    y = _affine(_normalize_groups(x, [shape[0], num_groups, -1], epsilon), weight, bias, 1)
    return transpose(y, [0, *range(2, y.ndim), 1]) if channels_last else y


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.9, eps: float = 1e-05,
                  data_format: str = "NCHW", name=None):
    """Normalize each channel of each sample over its spatial positions, then scale
    and shift per channel."""
    x = as_tensor(x)
    shape = exact_shape(x)
    y = _normalize_groups(x, [shape[0], shape[1], -1], eps)
    return _affine(y, weight, bias, 1)


_LRN_FORMATS = ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC")


def local_response_norm(x, size: int, alpha: float = 0.0001, beta: float = 0.75,
                        k: float = 1.0, data_format: str = "NCHW", name=None):
    """AlexNet's normalization across channels: x / (k + alpha / size * S)^beta, where S
    sums x^2 over the `size` channels from c - size // 2 to c + (size - 1) // 2 (the
    channels past either end counting as zero)."""
    x = as_tensor(x)
    if data_format not in _LRN_FORMATS:
        raise ValueError(f"local_response_norm: data_format must be one of {_LRN_FORMATS}, "
                         f"got {data_format!r}")
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected an input of rank >= 3, got rank "
                         f"{x.ndim}")
    axis = _channel_axis(x.ndim, data_format)
    shape = exact_shape(x)
    channels = shape[axis]
    squares = x * x

    def zero_channels(count: int):
        return zeros([*shape[:axis], count, *shape[axis + 1:]], dtype=x.dtype)

    padded = concat([zero_channels(size // 2), squares, zero_channels((size - 1) // 2)], axis)
    window = slice_axes(padded, [axis], [0], [channels])
    for offset in range(1, size):
        window = window + slice_axes(padded, [axis], [offset], [offset + channels])
    return x / (window * (alpha / size) + k) ** beta
