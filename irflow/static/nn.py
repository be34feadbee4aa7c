"""Paddle's ``paddle.static.nn``: layers as functions that create their parameters in
the current program (`fc`, `conv2d`, `batch_norm`, `embedding`, `layer_norm`), and
functional control flow (`cond`, `while_loop`, and `case` and `switch_case` made of
conds), which compiled code and static programs turn into ``cond`` and ``while`` ops
and eager code runs in Python.

A layer function computes with ``irflow.nn.functional``, as the Layer of the same
name does; its parameters are made by ``create_parameter`` (named as Paddle names
them, ``fc_0.w_0``), so the startup program initializes them.
"""
from __future__ import annotations

import math
from functools import partial

from ..errors import IrflowError
from ..frontend import jst
from ..nn import functional as F
from ..nn.initializer import Constant, Normal
from ..nn.param_attr import ParamAttr, create_parameter, unique_name
from ..tensor.manipulation import flatten, reshape
from ..tensor.math import add_n
from .mode import static_programs


def fc(x, size: int, num_flatten_dims: int = 1, weight_attr=None, bias_attr=None,
       activation: str | None = None, name: str | None = None):
    """A fully connected layer: ``x`` (or each tensor of a list, each with its own
    weight) flattened from axis `num_flatten_dims` on, times a weight
    ``[features, size]``, plus a bias, then `activation` (``"relu"``, ...). For a
    list, `weight_attr` may be a list too: one attribute per input's weight."""
    static_programs("static.nn.fc")
    prefix = name or unique_name("fc")
    inputs = list(x) if isinstance(x, list | tuple) else [x]
    products = []
    for t, attr in zip(inputs, _per_input(weight_attr, len(inputs))):
        features = _static_size(t.shape[num_flatten_dims:], "fc", "the flattened features")
        w = create_parameter([features, size], t.dtype, attr=attr, prefix=prefix)
        if t.ndim != num_flatten_dims + 1:
            t = flatten(t, start_axis=num_flatten_dims)
        products.append(F.linear(t, w))
    out = products[0] if len(products) == 1 else add_n(products)
    bias = create_parameter([size], out.dtype, attr=bias_attr, is_bias=True, prefix=prefix)
    if bias is not None:
        out = out + bias
    return _activated(out, activation)


def _per_input(weight_attr, n: int) -> list:
    """`weight_attr` for each of `n` inputs: one attribute for all, or a list of one
    per input, as Paddle's fc takes it."""
    if not isinstance(weight_attr, list | tuple):
        return [weight_attr] * n
    if len(weight_attr) != n:
        raise ValueError(f"static.nn.fc: weight_attr is a list of {len(weight_attr)} "
                         f"attributes for {n} inputs; give one per input")
    return list(weight_attr)


def conv2d(input, num_filters: int, filter_size, stride=1, padding=0, dilation=1,  # noqa: A002
           groups=None, param_attr=None, bias_attr=None, use_cudnn: bool = True,
           act: str | None = None, name: str | None = None, data_format: str = "NCHW"):
    """A 2-D convolution with a filter ``[num_filters, channels / groups, kH, kW]``
    (initialized as Paddle's, normal with std ``sqrt(2 / (kH * kW * channels))``)
    and a bias, then `act`."""
    static_programs("static.nn.conv2d")
    groups = groups or 1
    channels = _static_size([input.shape[-1 if data_format == "NHWC" else 1]], "conv2d",
                            "the input channels")
    kernel = [filter_size] * 2 if isinstance(filter_size, int) else list(filter_size)
    prefix = name or unique_name("conv2d")
    std = math.sqrt(2.0 / (kernel[0] * kernel[1] * channels))
    weight = create_parameter([num_filters, channels // groups, *kernel], input.dtype,
                              attr=param_attr, default_initializer=Normal(0.0, std),
                              prefix=prefix)
    bias = create_parameter([num_filters], input.dtype, attr=bias_attr, is_bias=True,
                            prefix=prefix)
    out = F.conv2d(input, weight, bias, stride, padding, dilation, groups, data_format)
    return _activated(out, act)


def batch_norm(input, act: str | None = None, is_test: bool = False,  # noqa: A002
               momentum: float = 0.9, epsilon: float = 1e-05, param_attr=None,
               bias_attr=None, data_layout: str = "NCHW", in_place: bool = False,
               name: str | None = None, moving_mean_name: str | None = None,
               moving_variance_name: str | None = None,
               do_model_average_for_mean_and_var: bool = True,
               use_global_stats: bool = False):
    """Batch normalization over the channel axis: by the batch's statistics, which
    update the moving ones, unless `is_test` or `use_global_stats`; in a
    ``clone(for_test=True)`` of the program, by the moving statistics."""
    static_programs("static.nn.batch_norm")
    channels = _static_size([input.shape[1 if data_layout.startswith("NC") else -1]],
                            "batch_norm", "the channels")
    prefix = name or unique_name("batch_norm")

    def param(attr, initial: float, is_bias: bool = False, trainable: bool = True):
        if not trainable:
            attr = ParamAttr(name=attr, initializer=Constant(initial), trainable=False)
        return create_parameter([channels], input.dtype, attr=attr, is_bias=is_bias,
                                default_initializer=Constant(initial), prefix=prefix)

    scale, bias = param(param_attr, 1.0), param(bias_attr, 0.0, is_bias=True)
    mean = param(moving_mean_name, 0.0, trainable=False)
    variance = param(moving_variance_name, 1.0, trainable=False)

    out = F.batch_norm(input, mean, variance, scale, bias, not (is_test or use_global_stats),
                       momentum, epsilon, data_layout)
    return _activated(out, act)


def embedding(input, size, is_sparse: bool = False, is_distributed: bool = False,  # noqa: A002
              padding_idx=None, param_attr=None, dtype="float32"):
    """A lookup table of `size` ``[vocab, dim]`` (XavierUniform unless `param_attr`
    says otherwise, named ``embedding_<k>.w_0``) indexed by the int64 ids `input`:
    the output has `input`'s shape plus ``[dim]``, zeros for `padding_idx` (which
    gets no gradient). The table's padding row is drawn like the others, as in
    Paddle's static graph; only the lookup zeroes it."""
    static_programs("static.nn.embedding")
    table = create_parameter(list(size), dtype, attr=param_attr, prefix=unique_name("embedding"))
    if padding_idx is not None and padding_idx < 0:
        padding_idx += size[0]
    return F.embedding(input, table, padding_idx, sparse=is_sparse)


def layer_norm(input, scale: bool = True, shift: bool = True,  # noqa: A002
               begin_norm_axis: int = 1, epsilon: float = 1e-05, param_attr=None,
               bias_attr=None, act: str | None = None, name: str | None = None):
    """Layer normalization over the axes from `begin_norm_axis` on, with a scale (ones)
    and a shift (zeros) of their flattened size ``layer_norm_<k>.w_0`` / ``.b_0``
    (unless `scale` / `shift` is False), then `act`."""
    static_programs("static.nn.layer_norm")
    normalized = list(input.shape[begin_norm_axis:])
    features = _static_size(normalized, "layer_norm", "the normalized axes")
    prefix = name or unique_name("layer_norm")
    weight = bias = None
    if scale:
        weight = create_parameter([features], input.dtype, attr=param_attr,
                                  default_initializer=Constant(1.0), prefix=prefix)
        weight = reshape(weight, normalized)
    if shift:
        bias = create_parameter([features], input.dtype, attr=bias_attr, is_bias=True,
                                prefix=prefix)
        bias = reshape(bias, normalized)
    return _activated(F.layer_norm(input, normalized, weight, bias, epsilon), act)


def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    return jst.cond(pred, true_fn, false_fn)


def while_loop(cond, body, loop_vars, is_test=False, name=None):  # noqa: A002  (Paddle's)
    return jst.while_loop(cond, body, loop_vars)


cond.__doc__, while_loop.__doc__ = jst.cond.__doc__, jst.while_loop.__doc__


def case(pred_fn_pairs, default=None, name=None):
    """The result of the function of the first ``(pred, fn)`` pair whose `pred` is
    true, else of `default`; without `default`, the last pair's function is the
    default (its `pred` is not looked at), as in Paddle. Nested `cond` ops."""
    pairs = _pairs(pred_fn_pairs, "case", "pred_fn_pairs", "(pred, fn)")
    if default is None:
        *pairs, (_, default) = pairs
    return _chained(pairs, default, "case")


def switch_case(branch_index, branch_fns, default=None, name=None):
    """The result of the function of `branch_fns` (a dict ``{index: fn}``, a list of
    ``(index, fn)`` pairs, or a list of functions, indexed by position) whose index
    equals `branch_index` (an int tensor of one value), else of `default`; without
    `default`, the function of the largest index is the default, as in Paddle."""
    if isinstance(branch_fns, dict):
        branch_fns = list(branch_fns.items())
    elif isinstance(branch_fns, list | tuple) and all(callable(f) for f in branch_fns):
        branch_fns = list(enumerate(branch_fns))
    pairs = sorted(_pairs(branch_fns, "switch_case", "branch_fns", "(index, fn)"),
                   key=lambda pair: pair[0])
    indices = [index for index, _ in pairs]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in indices) or \
            len(set(indices)) != len(indices):
        raise TypeError(f"static.nn.switch_case: the branch indices should be distinct "
                        f"ints, got {indices}")
    if default is None:
        *pairs, (_, default) = pairs
    return _chained([(branch_index == index, fn) for index, fn in pairs], default,
                    "switch_case")


def _pairs(pairs, api: str, what: str, form: str) -> list[tuple]:
    """`pairs` as a non-empty list of pairs whose second item is a function."""
    if not isinstance(pairs, list | tuple) or not pairs or not all(
            isinstance(p, list | tuple) and len(p) == 2 and callable(p[1]) for p in pairs):
        raise TypeError(f"static.nn.{api}: {what} should be a non-empty list of {form} "
                        f"pairs")
    return [tuple(p) for p in pairs]


def _chained(pairs: list[tuple], default, api: str):
    """``cond(pred_0, fn_0, cond(pred_1, fn_1, ... default))`` of the (pred, fn) `pairs`:
    the first true pred's function, else `default`."""
    if not callable(default):
        raise TypeError(f"static.nn.{api}: default should be a function, not "
                        f"{type(default).__name__}")
    otherwise = default
    for pred, fn in reversed(pairs):
        otherwise = partial(jst.cond, pred, fn, otherwise)
    return otherwise()


def _static_size(dims, layer: str, what: str) -> int:
    if any(d < 0 for d in dims):
        raise IrflowError(f"static.nn.{layer}: {what} must be known when the layer is "
                          f"built, but the input's shape has -1 there ({list(dims)})")
    return math.prod(dims)


def _activated(x, activation: str | None):
    if activation is None:
        return x
    fn = getattr(F, activation, None)
    if fn is None:
        raise ValueError(f"unknown activation {activation!r}")
    return fn(x)


__all__ = ["batch_norm", "case", "cond", "conv2d", "embedding", "fc", "layer_norm",
           "switch_case", "while_loop"]
