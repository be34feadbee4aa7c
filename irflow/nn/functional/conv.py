"""Convolution and pooling over 1-D, 2-D and 3-D inputs, channels first (NCL, NCHW,
NCDHW) or last (NLC, NHWC, NDHWC).

Paddle's many spellings of ``padding`` are resolved here to one (low, high) pair per
spatial axis, the ``(top, bottom, left, right)`` form the `conv2d` and pooling ops
take; channels-last inputs are transposed to channels first around the op.

Only the 2-D forms are IR ops. A 1-D input runs as the [N, C, 1, L] view of a 2-D
one. A 3-D input runs on the 2-D ops too, with no op of its own: convolution folds
the kernel's depth taps into conv2d's channels (`conv3d`, `conv3d_transpose`), and
pooling pools H and W, then D, since every 3-D pool here factors over its axes
(`_pool3d`).
"""
from __future__ import annotations

import math

import numpy as np

from ...dispatch import apply, user_location
from ...errors import InputError, ShapeError, SymbolicShapeError
from ...tensor import (concat, put_along_axis, reshape, slice as slice_, squeeze, stack,
                      strided_slice, take_along_axis, transpose, unbind, unsqueeze, zeros,
                      zeros_like)
from ...tensor.convert import as_tensor
from ...tensor.manipulation import exact_shape
from .common import first_max

_FORMATS_2D = ("NCHW", "NHWC")
_FORMATS_3D = ("NCDHW", "NDHWC")


def ntuple(value, n: int, what: str = "value") -> tuple[int, ...]:
    """n ints, one per spatial axis, from an int or a sequence of n ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{what} must be an int or a list of {n} ints, got {list(value)}")
    return value


def pair(value, what: str = "value") -> tuple[int, int]:
    """An (h, w) pair from an int or a sequence of two ints."""
    return ntuple(value, 2, what)


def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TensorFlow's "SAME": ceil(size / stride) outputs, the padding split evenly with
    the odd cell after. The padding depends on the size, so a size known only at run
    time cannot be padded while tracing."""
    if not isinstance(size, int):
        raise SymbolicShapeError(f"padding 'SAME' needs static spatial sizes, got {size!r}: "
                                 "give them in the input_spec", user_location())
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    return total // 2, total - total // 2


def resolve_padding(padding, input_hw, kernel_hw, stride, dilation=None,
                    channels_last: bool = False) -> tuple[int, ...]:
    """One (low, high) pair per spatial axis, flat ((top, bottom, left, right) in 2-D),
    from an int, "SAME"/"VALID", one int per axis ([ph, pw]), one pair per axis
    ([top, bottom, left, right]), or one [low, high] pair per axis of the input. The
    number of spatial axes is len(input_hw)."""
    n = len(input_hw)
    dilation = dilation or (1,) * n
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0,) * (2 * n)
        if mode == "SAME":
            return tuple(p for i in range(n) for p in _same_padding(
                input_hw[i], kernel_hw[i], stride[i], dilation[i]))
        raise ValueError(f"padding must be 'SAME', 'VALID' or numbers, got {padding!r}")
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = list(padding)
    if padding and isinstance(padding[0], list | tuple):
        spatial = padding[1:1 + n] if channels_last else padding[2:2 + n]
        padding = [int(v) for pair_ in spatial for v in pair_]
    if len(padding) == n:
        return tuple(int(v) for v in padding for _ in range(2))
    if len(padding) == 2 * n:
        return tuple(int(v) for v in padding)
    raise ValueError(f"padding must be an int, 'SAME', 'VALID', {n} ints (one per spatial "
                     f"axis) or {2 * n} ints (a low and a high one per axis), got {padding}")


def _channels_last(data_format: str, formats: tuple[str, str] = _FORMATS_2D) -> bool:
    """Whether `data_format`, one of `formats` (channels first, channels last), puts
    the channels last."""
    if data_format not in formats:
        raise ValueError(f"data_format must be {formats[0]!r} or {formats[1]!r}, got "
                         f"{data_format!r}")
    return data_format == formats[1]


def _to_channels_first(x):
    """[N, *spatial, C] as [N, C, *spatial]."""
    return transpose(x, [0, x.ndim - 1, *range(1, x.ndim - 1)])


def _to_channels_last(x):
    """[N, C, *spatial] as [N, *spatial, C]."""
    return transpose(x, [0, *range(2, x.ndim), 1])


def _spatial_op(name: str, x, operands: tuple, attrs: dict, channels_last: bool):
    """Run a spatial op on NCHW data, transposing NHWC input and output."""
    if channels_last:
        x = _to_channels_first(x)
    out = apply(name, (x, *operands), attrs)
    return _to_channels_last(out) if channels_last else out


def _input_hw(x, channels_last: bool) -> tuple:
    """The spatial sizes of x."""
    shape = exact_shape(x)
    return shape[1:-1] if channels_last else shape[2:]


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCHW", name=None):
    """Cross-correlation of x [N, C, H, W] with weight [Cout, C/groups, kH, kW], plus
    bias [Cout]. With padding "SAME" the dilation is ignored (taken as 1), as Paddle
    3.3's kernels do."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
    if isinstance(padding, str) and padding.upper() == "SAME":
        dilation = (1, 1)   # Paddle's conv kernels reset the dilation under "SAME"
    padding = resolve_padding(padding, _input_hw(x, channels_last), weight.shape[2:], stride,
                              dilation, channels_last)
    out = _spatial_op("conv2d", x, (weight,), {"stride": stride, "padding": padding,
                                               "dilation": dilation, "groups": int(groups)},
                      channels_last)
    if bias is None:
        return out
    return out + reshape(bias, [1, 1, 1, -1] if channels_last else [1, -1, 1, 1])


def _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last) -> dict:
    if ceil_mode and isinstance(padding, str) and padding.upper() == "VALID":
        raise ValueError("pooling: padding 'VALID' takes ceil_mode=False (VALID windows lie "
                         "inside the input), as in Paddle; got ceil_mode=True")
    kernel = pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else pair(stride, "stride")
    padding = resolve_padding(padding, _input_hw(x, channels_last), kernel, stride,
                              channels_last=channels_last)
    return {"kernel_size": kernel, "stride": stride, "padding": padding,
            "ceil_mode": bool(ceil_mode)}


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, data_format: str = "NCHW", name=None):
    """The maximum of each window (stride defaults to kernel_size; padding is -inf),
    and with `return_mask` also where it lies (see `_max_pool_with_mask`)."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last)
    if return_mask:
        _check_mask_layout("max_pool2d", data_format, channels_last)
        return _max_pool_with_mask(x, attrs["kernel_size"], attrs["stride"], attrs["padding"],
                                   ceil_mode, "max_pool2d")
    return _spatial_op("max_pool2d", x, (), attrs, channels_last)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
               name=None):
    """The mean of each window; with `exclusive` (default) padding is not counted.
    A `divisor_override` d makes it the window's sum over d (see `_override_divisor`)."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last)
    attrs["exclusive"] = bool(exclusive) or divisor_override is not None
    out = _spatial_op("avg_pool2d", x, (), attrs, channels_last)
    if divisor_override is None:
        return out
    return _override_divisor(out, divisor_override, _input_hw(x, channels_last),
                             attrs["kernel_size"], attrs["stride"], attrs["padding"],
                             ceil_mode, channels_last, "avg_pool2d")


def _window_counts(sizes, kernel, stride, pads, ceil_mode: bool, function: str) -> np.ndarray:
    """How many input cells (padding not counted) each pooling window covers: the outer
    product over the spatial axes of each axis's counts (pads flat, (low, high) per
    axis). The spatial sizes must be static."""
    if not all(isinstance(size, int) for size in sizes):
        raise ShapeError(f"{function}: x must have static spatial sizes, got {tuple(sizes)}")
    counts = np.ones(())
    for axis, (size, k, s) in enumerate(zip(sizes, kernel, stride)):
        low, high = pads[2 * axis], pads[2 * axis + 1]
        starts = np.arange(_pool_out_size(function, size, k, s, low, high, ceil_mode)) * s - low
        counts = np.multiply.outer(counts, np.minimum(starts + k, size) - np.maximum(starts, 0))
    return counts


def _window_sum(mean, sizes, kernel, stride, pads, ceil_mode: bool, channels_last: bool,
                function: str):
    """Each window's sum, from `mean`, its exclusive mean (over the input cells only)."""
    counts = _window_counts(sizes, kernel, stride, pads, ceil_mode, function)
    counts = counts[..., None] if channels_last else counts[None]
    return mean * as_tensor(counts.astype(mean.dtype.np))


def _override_divisor(mean, divisor, sizes, kernel, stride, pads, ceil_mode: bool,
                      channels_last: bool, function: str):
    """The window sums over `divisor`, from the exclusive means: the sum over the
    divisor is what Paddle documents and PyTorch computes. Paddle 3.3 instead scales
    its mean by prod(kernel) / divisor, which is the same without padding but
    with `exclusive` and padding divides edge windows by count * divisor / prod(kernel);
    that mixes two divisors, so it is not copied."""
    if isinstance(divisor, bool) or not isinstance(divisor, int | float):
        raise InputError(f"{function}: divisor_override must be an int or a float, got "
                         f"{type(divisor).__name__}")
    return _window_sum(mean, sizes, kernel, stride, pads, ceil_mode, channels_last,
                       function) / divisor


def adaptive_avg_pool2d(x, output_size, data_format: str = "NCHW", name=None):
    """Averages over an output_size grid of bins (None keeps that input size)."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    if output_size is None:
        output_size = (None, None)
    size = output_size if isinstance(output_size, int) else tuple(output_size)
    return _spatial_op("adaptive_avg_pool2d", x, (), {"output_size": size}, channels_last)


def _conv1d_padding(padding, channels_last: bool = False):
    """conv2d's padding for the [N, C, 1, L] view of a 1-D input. Padding given as one
    pair per axis of the input names L's pair second ([N, L, C], `channels_last`) or
    last ([N, C, L])."""
    if isinstance(padding, str):
        return padding
    if isinstance(padding, int):
        return [0, 0, padding, padding]
    padding = list(padding)
    if padding and isinstance(padding[0], list | tuple):
        padding = list(padding[1 if channels_last else 2])
    if len(padding) == 1:
        return [0, 0, padding[0], padding[0]]
    if len(padding) == 2:
        return [0, 0, int(padding[0]), int(padding[1])]
    raise ValueError(f"padding of a 1-D convolution or pool must be an int, [p], [left, "
                     f"right], 'SAME' or 'VALID', got {padding}")


def _single(value, what: str) -> int:
    """An int from an int or a list of one int."""
    if isinstance(value, int):
        return value
    value = [int(v) for v in value]
    if len(value) != 1:
        raise ValueError(f"{what} must be an int or a list of one int, got {value}")
    return value[0]


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCL", name=None):
    """1-D cross-correlation of x [N, C, L] with weight [Cout, C/groups, k]: conv2d on
    the [N, C, 1, L] view."""
    x = as_tensor(x)
    if data_format not in ("NCL", "NLC"):
        raise ValueError(f"data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if data_format == "NLC":
        x = transpose(x, [0, 2, 1])
    padding = _conv1d_padding(padding, data_format == "NLC")
    out = conv2d(unsqueeze(x, [2]), unsqueeze(weight, [2]), None,
                 (1, _single(stride, "stride")), padding, (1, _single(dilation, "dilation")),
                 groups)
    out = squeeze(out, [2])
    if bias is not None:
        out = out + reshape(bias, [1, -1, 1])
    return transpose(out, [0, 2, 1]) if data_format == "NLC" else out


def _ncl(x, function: str):
    """x as a tensor, which must be 3-D [N, C, L] for the 1-D pools."""
    x = as_tensor(x)
    if x.ndim != 3:
        raise ValueError(f"{function}: x must be a 3-D [N, C, L] tensor, got shape {x.shape}")
    return x


def _pool1d(pool2d, x, kernel_size, stride, padding, squeezed: bool = True, **options):
    """A 2-D pool over the [N, C, 1, L] view of x [N, C, L], as Paddle computes it;
    with `squeezed` False the result keeps that view's shape."""
    x = _ncl(x, f"{pool2d.__name__[:-2]}1d")
    kernel = (1, _single(kernel_size, "kernel_size"))
    stride = None if stride is None else (1, _single(stride, "stride"))
    out = pool2d(unsqueeze(x, [2]), kernel, stride, _conv1d_padding(padding), **options)
    return squeeze(out, [2]) if squeezed else out


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, name=None):
    """The maximum of each window of x [N, C, L] (stride defaults to kernel_size), and
    with `return_mask` also its index along L (int32)."""
    if return_mask:
        out, mask = _pool1d(max_pool2d, x, kernel_size, stride, padding, squeezed=False,
                            return_mask=True, ceil_mode=ceil_mode)
        return squeeze(out, [2]), squeeze(mask, [2])
    return _pool1d(max_pool2d, x, kernel_size, stride, padding, ceil_mode=ceil_mode)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive: bool = True,
               ceil_mode: bool = False, name=None):
    """The mean of each window of x [N, C, L]; with `exclusive` (default) padding is
    not counted. (exclusive comes before ceil_mode here, unlike avg_pool2d: Paddle's
    order.)"""
    return _pool1d(avg_pool2d, x, kernel_size, stride, padding, ceil_mode=ceil_mode,
                   exclusive=exclusive)


def lp_pool2d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
              data_format: str = "NCHW", name=None):
    """The power-average of each window: (sum of x ** norm_type) ** (1 / norm_type)
    over its input cells (padding is skipped), the maximum for norm_type inf. As in
    Paddle the power is taken as is, not of |x|: a negative cell to a fractional power
    is NaN, as is the gradient at an all-zero window."""
    x = as_tensor(x)
    if norm_type == 0:
        raise InputError("lp_pool2d: norm_type must be nonzero, got 0")
    norm_type = float(norm_type)
    if norm_type == math.inf:
        return max_pool2d(x, kernel_size, stride, padding, ceil_mode=ceil_mode,
                          data_format=data_format)
    channels_last = _channels_last(data_format)
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last)
    attrs["exclusive"] = True
    mean = _spatial_op("avg_pool2d", x ** norm_type, (), attrs, channels_last)
    sums = _window_sum(mean, _input_hw(x, channels_last), attrs["kernel_size"],
                       attrs["stride"], attrs["padding"], ceil_mode, channels_last,
                       "lp_pool2d")
    return sums ** (1.0 / norm_type)


def lp_pool1d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
              data_format: str = "NCL", name=None):
    """The power-average of each window of x [N, C, L] (or [N, L, C] with "NLC"):
    lp_pool2d on the [N, C, 1, L] view."""
    if data_format not in ("NCL", "NLC"):
        raise ValueError(f"lp_pool1d: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    x = _ncl(x, "lp_pool1d")
    if data_format == "NLC":
        x = transpose(x, [0, 2, 1])
    out = lp_pool2d(unsqueeze(x, [2]), norm_type, (1, _single(kernel_size, "kernel_size")),
                    None if stride is None else (1, _single(stride, "stride")),
                    _conv1d_padding(padding, data_format == "NLC"), ceil_mode)
    out = squeeze(out, [2])
    return transpose(out, [0, 2, 1]) if data_format == "NLC" else out


def _adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """Paddle's adaptive pooling bins of an axis of `size` cells into `out`: bin i
    spans cells floor(i * size / out) up to ceil((i + 1) * size / out)."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def adaptive_avg_pool1d(x, output_size: int, name=None):
    """Averages over `output_size` adaptive bins of x [N, C, L] (see
    `_adaptive_bins`): adaptive_avg_pool2d on the [N, C, 1, L] view."""
    x = _ncl(x, "adaptive_avg_pool1d")
    size = _single(output_size, "output_size")
    return squeeze(adaptive_avg_pool2d(unsqueeze(x, [2]), (1, size)), [2])


def adaptive_max_pool1d(x, output_size, return_mask: bool = False, name=None):
    """The maximum over each of `output_size` adaptive bins of x [N, C, L] (see
    `_adaptive_bins`; L must be static), and with `return_mask` also its index along
    L (int32, as Paddle's). A tie gives the gradient and the index to the first of
    the tied cells, as Paddle's kernel does."""
    x = _ncl(x, "adaptive_max_pool1d")
    out = _single(output_size, "output_size")
    if out <= 0:
        raise ValueError(f"adaptive_max_pool1d: output_size must be positive, got "
                         f"{output_size!r}")
    length = exact_shape(x)[2]
    if not isinstance(length, int):
        raise ShapeError(f"adaptive_max_pool1d: x must have a static length, got shape "
                         f"{exact_shape(x)}")
    values, indices = [], []
    for start, stop in _adaptive_bins(length, out):
        value, index = first_max(slice_(x, [2], [start], [stop]), 2)
        values.append(value)
        indices.append(index + start)
    if not return_mask:
        return concat(values, 2)
    return concat(values, 2), concat(indices, 2).astype("int32")


def _adaptive_max(x, output_size, return_mask: bool, function: str, axes: str):
    """The maximum over each bin of an output_size grid on the spatial axes `axes`
    ("H, W" or "D, H, W") of x (None keeps that input size), with Paddle's adaptive
    bins (`_adaptive_bins`). The maximum over a box is the maximum over its first axis
    of the maxima over the rest, so this is slices and `first_max` reductions axis by
    axis, with no op of its own. Reducing the last axis first gives a tie's gradient
    to the first of the tied cells in row-major order, as Paddle's kernels do."""
    x = as_tensor(x)
    spatial = len(axes.split(", "))
    if x.ndim != spatial + 2:
        raise ValueError(f"{function}: x must be a {spatial + 2}-D [N, C, {axes}] tensor, "
                         f"got shape {x.shape}")
    sizes = (output_size,) * spatial if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != spatial or not all(s is None or isinstance(s, int) and s > 0
                                        for s in sizes):
        raise ValueError(f"{function}: output_size must be a positive int or {spatial} "
                         f"positive ints or None, got {output_size!r}")
    if not all(isinstance(size, int) for size in exact_shape(x)[2:]):
        raise ShapeError(f"{function}: x must have static {axes}, got shape "
                         f"{exact_shape(x)}")
    index = _plane_index(x, function) if return_mask else None
    for axis in reversed(range(2, x.ndim)):
        size, out = exact_shape(x)[axis], sizes[axis - 2]
        if out is not None:
            bins = [_bin_max(x, index, axis, start, stop)
                    for start, stop in _adaptive_bins(size, out)]
            x = concat([b[0] for b in bins], axis)
            if index is not None:
                index = concat([b[1] for b in bins], axis)
    return (x, index.astype("int32")) if return_mask else x


def _bin_max(x, index, axis: int, start: int, stop: int) -> tuple:
    """The first maximum of x over cells [start, stop) of `axis`, and the `index`
    entry at it (None without an index)."""
    value, at = first_max(slice_(x, [axis], [start], [stop]), axis)
    if index is None:
        return value, None
    return value, take_along_axis(slice_(index, [axis], [start], [stop]), at, axis)


def _plane_index(x, function: str):
    """For each cell of x [N, C, *spatial], its row-major flat index within its
    channel's spatial plane (int64): the numbering of Paddle's pooling masks and
    max_unpool's indices. The spatial sizes must be static."""
    sizes = exact_shape(x)[2:]
    if not all(isinstance(size, int) for size in sizes):
        raise ShapeError(f"{function}: x must have static spatial sizes, got shape "
                         f"{exact_shape(x)}")
    plane = np.arange(math.prod(sizes), dtype=np.int64).reshape(sizes)
    return zeros_like(x, dtype="int64") + as_tensor(plane)


def adaptive_max_pool2d(x, output_size, return_mask: bool = False, name=None):
    """The maximum over each bin of an output_size grid on x [N, C, H, W] (None keeps
    that input size), with Paddle's adaptive bins: cells floor(i*H/out) up to
    ceil((i+1)*H/out). A tie passes the gradient to the first tied cell in row-major
    order, as Paddle's kernel (see `_adaptive_max`)."""
    return _adaptive_max(x, output_size, return_mask, "adaptive_max_pool2d", "H, W")


def _transposed_sizes(function: str, in_sizes, kernel, stride, pads, dilation,
                      output_padding, output_size) -> tuple[int, ...]:
    """The output sizes of a transposed convolution: per axis the inferred (n - 1) *
    stride - low - high + dilation * (k - 1) + 1, plus `output_padding`, or
    `output_size` (its trailing entries, one per axis), which must lie in [inferred,
    inferred + stride), as in Paddle: only then is the convolution of the result as
    large as the input."""
    n = len(in_sizes)
    if not all(isinstance(size, int) for size in in_sizes):
        raise SymbolicShapeError(f"{function}: x must have static spatial sizes, got "
                                 f"{list(in_sizes)}: give them in the input_spec",
                                 user_location())
    base = [(size - 1) * s - lo - hi + d * (k - 1) + 1
            for size, s, lo, hi, d, k in zip(in_sizes, stride, pads[0::2], pads[1::2],
                                             dilation, kernel)]
    if output_size is not None:
        size = [int(v) for v in ([output_size] * n if isinstance(output_size, int)
                                 else output_size)][-n:]
        extra = [o - b for o, b in zip(size, base)]
    else:
        extra = list(ntuple(output_padding, n, "output_padding"))
    if not all(0 <= e < s for e, s in zip(extra, stride)):
        raise ValueError(f"{function}: the output size must lie in [inferred, inferred + "
                         f"stride) for stride {list(stride)}, got {extra} beyond the "
                         f"inferred {base}")
    return tuple(b + e for b, e in zip(base, extra))


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                     groups: int = 1, output_size=None, data_format: str = "NCHW", name=None):
    """The transpose of conv2d (a "deconvolution"): x [N, Cin, H, W], weight
    [Cin, Cout/groups, kH, kW]; output H_out = (H - 1) * stride - top - bottom +
    dilation * (kH - 1) + 1 + output_padding (W alike), or `output_size`. The
    arguments come in Paddle's order (dilation before groups, output_size before
    data_format), so a positional call means what it means in Paddle."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
    kernel = tuple(weight.shape[2:])
    in_hw = _input_hw(x, channels_last)
    if isinstance(padding, str) and padding.upper() == "SAME":
        # Paddle's SAME for a transposed conv: the forward conv's SAME padding for an
        # input of x's size, with the dilation reset to 1 (so the output is about
        # H * stride).
        dilation = (1, 1)
    pads = resolve_padding(padding, in_hw, kernel, stride, dilation, channels_last)
    out_hw = _transposed_sizes("conv2d_transpose", in_hw, kernel, stride, pads, dilation,
                               output_padding, output_size)
    attrs = {"input_hw": out_hw, "stride": stride, "padding": pads, "dilation": dilation,
             "groups": int(groups)}
    out = _spatial_op("conv2d_grad_input", x, (weight,), attrs, channels_last)
    if bias is None:
        return out
    return out + reshape(bias, [1, 1, 1, -1] if channels_last else [1, -1, 1, 1])


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1, output_size=None, data_format: str = "NCL",
                     name=None):
    """The transpose of conv1d: x [N, Cin, L], weight [Cin, Cout/groups, k]; output
    L_out = (L - 1) * stride - left - right + dilation * (k - 1) + 1 + output_padding,
    or `output_size`: conv2d_transpose on the [N, C, 1, L] view. (groups comes before
    dilation here, unlike conv2d_transpose: Paddle's order.)"""
    x = as_tensor(x)
    if data_format not in ("NCL", "NLC"):
        raise ValueError(f"data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if data_format == "NLC":
        x = transpose(x, [0, 2, 1])
    if output_size is not None:
        output_size = (1, _single(output_size, "output_size"))
    out = conv2d_transpose(unsqueeze(x, [2]), unsqueeze(weight, [2]), None,
                           (1, _single(stride, "stride")),
                           _conv1d_padding(padding, data_format == "NLC"),
                           (0, _single(output_padding, "output_padding")),
                           (1, _single(dilation, "dilation")), groups, output_size)
    out = squeeze(out, [2])
    if bias is not None:
        out = out + reshape(bias, [1, -1, 1])
    return transpose(out, [0, 2, 1]) if data_format == "NLC" else out


# ---------------------------------------------------------------- 3-D, on the 2-D ops

def _ncdhw(x, data_format: str, function: str):
    """(x as a 5-D channels-first tensor, whether it came channels last)."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format, _FORMATS_3D)
    if x.ndim != 5:
        raise ValueError(f"{function}: x must be a 5-D [N, C, D, H, W] tensor (or [N, D, H, "
                         f"W, C] with 'NDHWC'), got shape {x.shape}")
    return (_to_channels_first(x) if channels_last else x), channels_last


def _is_same(padding) -> bool:
    return isinstance(padding, str) and padding.upper() == "SAME"


def _pad_axis(x, axis: int, low: int, high: int, value: float = 0.0):
    """x with `low` cells of `value` (zeros by default) before and `high` after it
    along `axis`."""
    if not low and not high:
        return x
    pads = [(0, 0)] * x.ndim
    pads[axis] = (low, high)
    return apply("pad", (x,), {"pads": tuple(pads), "value": value})


def _depth_taps(x, kernel: int, stride: int, dilation: int, low: int, high: int) -> list:
    """For each of a kernel's `kernel` depth taps, the depth slices of x [N, C, D, H, W]
    (zero-padded by `low`/`high` along D) it meets at the output depths in turn:
    tap k at output depth o reads padded depth o * stride + k * dilation."""
    x = _pad_axis(x, 2, low, high)
    extent = dilation * (kernel - 1) + 1
    depth = exact_shape(x)[2]
    if not isinstance(depth, int):
        raise SymbolicShapeError(f"conv3d: x must have a static depth, got {depth!r}: give "
                                 "it in the input_spec", user_location())
    if depth < extent:
        raise ShapeError(f"conv3d: the padded input depth {depth} is smaller than the "
                         f"kernel depth {extent}")
    out = (depth - extent) // stride + 1
    return [strided_slice(x, [2], [k * dilation], [k * dilation + (out - 1) * stride + 1],
                          [stride]) for k in range(kernel)]


def _check_conv3d_channels(function: str, x, weight, channels: int, groups: int) -> None:
    if len(weight.shape) != 5:
        raise ValueError(f"{function}: weight must be 5-D, got shape {weight.shape}")
    if channels != x.shape[1]:
        raise ShapeError(f"{function}: x has {x.shape[1]} channels, the weight (shape "
                         f"{weight.shape}) with groups={groups} expects {channels}")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCDHW", name=None):
    """Cross-correlation of x [N, C, D, H, W] with weight [Cout, C/groups, kD, kH, kW],
    plus bias [Cout]. With padding "SAME" the dilation is ignored, as in conv2d.

    Composed on conv2d: the kD depth taps of x (`_depth_taps`) are stacked into the
    channels, (C, kD) in that order, of a conv2d over H and W whose batch holds every
    output depth of every sample; the filter [Cout, C/groups * kD, kH, kW] is the
    weight with its depth folded into its input channels alike, which keeps each
    group's channels together. Gradients follow from conv2d's."""
    x, channels_last = _ncdhw(x, data_format, "conv3d")
    stride, dilation = ntuple(stride, 3, "stride"), ntuple(dilation, 3, "dilation")
    if _is_same(padding):
        dilation = (1, 1, 1)   # as conv2d: Paddle's kernels reset it under "SAME"
    c_out, c_group, *kernel = weight.shape
    _check_conv3d_channels("conv3d", x, weight, c_group * int(groups), int(groups))
    batch, channels, _, height, width = exact_shape(x)
    pads = resolve_padding(padding, exact_shape(x)[2:], kernel, stride, dilation,
                           channels_last)
    taps = _depth_taps(x, kernel[0], stride[0], dilation[0], pads[0], pads[1])
    depth = exact_shape(taps[0])[2]
    images = transpose(stack(taps, 2), [0, 3, 1, 2, 4, 5])   # [N, D_out, C, kD, H, W]
    images = reshape(images, [-1, channels * kernel[0], height, width])
    filters = reshape(weight, [c_out, c_group * kernel[0], *kernel[1:]])
    out = conv2d(images, filters, None, stride[1:], pads[2:], dilation[1:], groups)
    out = transpose(reshape(out, [batch, depth, *exact_shape(out)[1:]]), [0, 2, 1, 3, 4])
    if bias is not None:
        out = out + reshape(bias, [1, -1, 1, 1, 1])
    return _to_channels_last(out) if channels_last else out


def _spread(x, axis: int, stride: int):
    """x with stride - 1 zeros between neighbours along `axis`: x[i] lands at i * stride."""
    if stride == 1:
        return x
    size = exact_shape(x)[axis]
    shape = list(exact_shape(x))
    shape[axis] = size * stride
    spaced = reshape(_pad_axis(unsqueeze(x, [axis + 1]), axis + 1, 0, stride - 1), shape)
    return slice_(spaced, [axis], [0], [(size - 1) * stride + 1])


def _depth_overlap_add(taps, stride: int, dilation: int, low: int, depth: int):
    """The transposed convolution along depth of the kD tap results `taps`, each
    [N, D_in, ...]: input depth i of tap k adds into output depth i * stride + k *
    dilation - low; the result holds output depths [0, depth)."""
    spread = [_spread(tap, 1, stride) for tap in taps]
    full = max(low + depth, exact_shape(spread[0])[1] + dilation * (len(taps) - 1))
    total = None
    for k, tap in enumerate(spread):
        shifted = _pad_axis(tap, 1, k * dilation, full - k * dilation - exact_shape(tap)[1])
        total = shifted if total is None else total + shifted
    return slice_(total, [1], [low], [low + depth])


def conv3d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1, output_size=None,
                     data_format: str = "NCDHW", name=None):
    """The transpose of conv3d: x [N, Cin, D, H, W], weight [Cin, Cout/groups, kD, kH,
    kW]; each output size is (n - 1) * stride - low - high + dilation * (k - 1) + 1 +
    output_padding, or `output_size`. (groups comes before dilation, Paddle's order.)

    Composed on conv2d_transpose: one over H and W, with every input depth an image
    of the batch and the kernel's depth taps folded into the output channels (Cout,
    kD), gives each tap's contribution; `_depth_overlap_add` then places and sums
    them along depth."""
    x, channels_last = _ncdhw(x, data_format, "conv3d_transpose")
    stride, dilation = ntuple(stride, 3, "stride"), ntuple(dilation, 3, "dilation")
    if _is_same(padding):
        dilation = (1, 1, 1)   # as conv2d_transpose
    c_in, c_group, *kernel = weight.shape
    _check_conv3d_channels("conv3d_transpose", x, weight, c_in, int(groups))
    batch, _, depth, height, width = exact_shape(x)
    in_sizes = exact_shape(x)[2:]
    pads = resolve_padding(padding, in_sizes, kernel, stride, dilation, channels_last)
    sizes = _transposed_sizes("conv3d_transpose", in_sizes, kernel, stride, pads, dilation,
                              output_padding, output_size)
    images = reshape(transpose(x, [0, 2, 1, 3, 4]), [-1, c_in, height, width])
    filters = reshape(weight, [c_in, c_group * kernel[0], *kernel[1:]])
    out = conv2d_transpose(images, filters, None, stride[1:], pads[2:], dilation=dilation[1:],
                           groups=groups, output_size=sizes[1:])
    out = reshape(out, [batch, depth, c_group * int(groups), kernel[0], *sizes[1:]])
    out = _depth_overlap_add(unbind(out, 3), stride[0], dilation[0], pads[0], sizes[0])
    out = transpose(out, [0, 2, 1, 3, 4])
    if bias is not None:
        out = out + reshape(bias, [1, -1, 1, 1, 1])
    return _to_channels_last(out) if channels_last else out


def _pool3d_window(x, kernel_size, stride, padding, ceil_mode: bool, channels_last: bool,
                   function: str) -> tuple:
    """(kernel, stride, padding) of a 3-D pool of x [N, C, D, H, W], each per axis
    (the padding as (low, high) pairs, flat)."""
    if ceil_mode and isinstance(padding, str) and padding.upper() == "VALID":
        raise ValueError(f"{function}: padding 'VALID' takes ceil_mode=False (VALID windows "
                         f"lie inside the input), as in Paddle; got ceil_mode=True")
    kernel = ntuple(kernel_size, 3, "kernel_size")
    stride = kernel if stride is None else ntuple(stride, 3, "stride")
    pads = resolve_padding(padding, exact_shape(x)[2:], kernel, stride,
                           channels_last=channels_last)
    return kernel, stride, pads


def _pool3d(pool2d, x, kernel_size, stride, padding, ceil_mode: bool, data_format: str,
            function: str, **options):
    """A 3-D pool as two 2-D ones: `pool2d` over H and W of x [N, C, D, H, W] (the
    depth slices as channels), then over D (a (kD, 1) window on [N*C, 1, D, H_out *
    W_out]). Both pools here factor so: a box's maximum is the maximum over depth of
    its slices' maxima, and an average's divisor is a product of per-axis counts (see
    avg_pool2d), so the mean of the slices' means is the box's."""
    x, channels_last = _ncdhw(x, data_format, function)
    kernel, stride, pads = _pool3d_window(x, kernel_size, stride, padding, ceil_mode,
                                          channels_last, function)
    batch, channels, depth, height, width = exact_shape(x)
    out = pool2d(reshape(x, [-1, depth, height, width]), kernel[1:], stride[1:], pads[2:],
                 ceil_mode=ceil_mode, **options)
    out_h, out_w = exact_shape(out)[2:]
    out = pool2d(reshape(out, [-1, 1, depth, out_h * out_w]), (kernel[0], 1), (stride[0], 1),
                 (*pads[:2], 0, 0), ceil_mode=ceil_mode, **options)
    out = reshape(out, [batch, channels, exact_shape(out)[2], out_h, out_w])
    return _to_channels_last(out) if channels_last else out


def max_pool3d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, data_format: str = "NCDHW", name=None):
    """The maximum of each window of x [N, C, D, H, W] (stride defaults to kernel_size;
    padding is -inf). A tie's gradient goes to the first tied cell in (D, H, W)
    order, as in Paddle: the depth pool of `_pool3d` picks the first depth, the
    H, W pool the first cell of that slice."""
    if return_mask:
        _check_mask_layout("max_pool3d", data_format, _channels_last(data_format, _FORMATS_3D))
        x, _ = _ncdhw(x, data_format, "max_pool3d")
        kernel, stride, pads = _pool3d_window(x, kernel_size, stride, padding, ceil_mode,
                                              False, "max_pool3d")
        return _max_pool_with_mask(x, kernel, stride, pads, ceil_mode, "max_pool3d")
    return _pool3d(max_pool2d, x, kernel_size, stride, padding, ceil_mode, data_format,
                   "max_pool3d")


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCDHW",
               name=None):
    """The mean of each window of x [N, C, D, H, W]; with `exclusive` (default) padding
    is not counted, else it is, up to avg_pool2d's clipping along each axis. A
    `divisor_override` d makes it the window's sum over d (see `_override_divisor`)."""
    out = _pool3d(avg_pool2d, x, kernel_size, stride, padding, ceil_mode, data_format,
                  "avg_pool3d", exclusive=bool(exclusive) or divisor_override is not None)
    if divisor_override is None:
        return out
    x, channels_last = _ncdhw(x, data_format, "avg_pool3d")
    kernel, stride, pads = _pool3d_window(x, kernel_size, stride, padding, ceil_mode,
                                          channels_last, "avg_pool3d")
    return _override_divisor(out, divisor_override, exact_shape(x)[2:], kernel, stride, pads,
                             ceil_mode, channels_last, "avg_pool3d")


def adaptive_avg_pool3d(x, output_size, data_format: str = "NCDHW", name=None):
    """Averages over an output_size grid of adaptive bins (see `_adaptive_bins`; None
    keeps that input size): adaptive_avg_pool2d over H and W, then over D, as a bin's
    mean is the mean over its depth of its slices' means."""
    x, channels_last = _ncdhw(x, data_format, "adaptive_avg_pool3d")
    sizes = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 3:
        raise ValueError(f"adaptive_avg_pool3d: output_size must be an int or 3 ints or "
                         f"None, got {output_size!r}")
    batch, channels, depth, height, width = exact_shape(x)
    out = adaptive_avg_pool2d(reshape(x, [-1, depth, height, width]), sizes[1:])
    out_h, out_w = exact_shape(out)[2:]
    out = adaptive_avg_pool2d(reshape(out, [-1, 1, depth, out_h * out_w]), (sizes[0], None))
    out = reshape(out, [batch, channels, exact_shape(out)[2], out_h, out_w])
    return _to_channels_last(out) if channels_last else out


def adaptive_max_pool3d(x, output_size, return_mask: bool = False, name=None):
    """The maximum over each bin of an output_size grid on x [N, C, D, H, W] (None keeps
    that input size), with Paddle's adaptive bins: cells floor(i*D/out) up to
    ceil((i+1)*D/out). A tie passes the gradient to the first tied cell in row-major
    order, as Paddle's kernel (see `_adaptive_max`)."""
    return _adaptive_max(x, output_size, return_mask, "adaptive_max_pool3d", "D, H, W")


# ------------------------------------------------------- max pools' masks and unpooling

def _check_mask_layout(function: str, data_format: str, channels_last: bool) -> None:
    if channels_last:
        raise ValueError(f"{function}: return_mask=True takes channels-first data, as in "
                         f"Paddle, got data_format={data_format!r}")


def _pool_out_size(function: str, size: int, kernel: int, stride: int, low: int, high: int,
                   ceil_mode: bool) -> int:
    """Paddle's pooled size of an axis: floor (or with `ceil_mode` ceil) of
    (size + low + high - kernel) / stride, plus 1."""
    span = size + low + high - kernel
    if span < 0:
        raise ShapeError(f"{function}: the padded input size {size + low + high} is smaller "
                         f"than the kernel size {kernel}")
    return (span + (stride - 1 if ceil_mode else 0)) // stride + 1


def _window_max(x, index, axis: int, kernel: int, stride: int, low: int, out: int) -> tuple:
    """The first maximum of x over each of `out` windows along `axis` (window o spans
    padded cells o * stride up to o * stride + kernel, the padding -inf so it never
    wins), and the `index` entry at it."""
    extent = (out - 1) * stride + kernel
    high = max(extent - low - exact_shape(x)[axis], 0)
    stop = (out - 1) * stride + 1

    def taps(t, fill):
        t = _pad_axis(t, axis, low, high, fill)
        return stack([strided_slice(t, [axis], [k], [k + stop], [stride])
                      for k in range(kernel)], axis + 1)

    value, at = first_max(taps(x, float("-inf")), axis + 1)
    chosen = take_along_axis(taps(index, 0.0), at, axis + 1)
    return squeeze(value, [axis + 1]), squeeze(chosen, [axis + 1])


def _max_pool_with_mask(x, kernel, stride, pads, ceil_mode: bool, function: str) -> tuple:
    """(the maxima of a max pool of x [N, C, *spatial], Paddle's int32 mask): each
    window's maximum and the row-major flat index, within its channel's spatial
    plane, of the input cell holding it. Windows are reduced one axis at a time, the
    last first, so a tie goes (index and gradient alike) to the first tied cell in
    row-major order, as Paddle's kernels choose; padding cells never win."""
    index = _plane_index(x, function)
    sizes = exact_shape(x)[2:]
    for i in reversed(range(len(sizes))):
        low, high = pads[2 * i], pads[2 * i + 1]
        out = _pool_out_size(function, sizes[i], kernel[i], stride[i], low, high, ceil_mode)
        x, index = _window_max(x, index, 2 + i, kernel[i], stride[i], low, out)
    return x, index.astype("int32")


def _unpool_sizes(function: str, x, kernel, stride, padding, output_size) -> tuple:
    """The spatial sizes of an unpooled x: Paddle's default (n - 1) * stride + kernel -
    2 * padding per axis, or `output_size` (its spatial entries), which must lie
    strictly within one stride of that default, as Paddle checks."""
    in_sizes = exact_shape(x)[2:]
    default = tuple((n - 1) * s + k - 2 * p
                    for n, k, s, p in zip(in_sizes, kernel, stride, padding))
    if output_size is None:
        return default
    sizes = [int(v) for v in output_size]
    if len(sizes) == len(default) + 2:
        sizes = sizes[2:]
    if len(sizes) != len(default):
        raise ValueError(f"{function}: output_size must have {len(default)} or "
                         f"{len(default) + 2} entries, got {list(output_size)}")
    for axis, (size, base, s) in enumerate(zip(sizes, default, stride)):
        if not base - s < size < base + s:
            raise ValueError(f"{function}: output_size {sizes} is invalid: entry {axis} must "
                             f"lie strictly between {base - s} and {base + s}")
    return tuple(sizes)


def _max_unpool(x, indices, kernel_size, stride, padding, data_format: str, output_size,
                spatial: int, function: str):
    """Zeros of the unpooled size with each entry of x written at its index (a flat
    index into its channel's spatial plane, as max pools' masks give); where indices
    repeat the last write lands, as in Paddle's kernel. The gradient to x reads the
    output's gradient back at the indices."""
    formats = {1: ("NCL",), 2: ("NCHW",), 3: ("NCDHW",)}[spatial]
    if data_format not in formats:
        raise ValueError(f"{function}: data_format must be {formats[0]!r}, as in Paddle, got "
                         f"{data_format!r}")
    x, indices = as_tensor(x), as_tensor(indices)
    if x.ndim != spatial + 2 or indices.ndim != spatial + 2:
        raise ValueError(f"{function}: x and indices must be {spatial + 2}-D, got shapes "
                         f"{x.shape} and {indices.shape}")
    kernel = ntuple(_flat_int(kernel_size), spatial, "kernel_size")
    stride = kernel if stride is None else ntuple(_flat_int(stride), spatial, "stride")
    padding = ntuple(_flat_int(padding), spatial, "padding")
    sizes = _unpool_sizes(function, x, kernel, stride, padding, output_size)
    batch, channels = exact_shape(x)[:2]
    flat_x, flat_index = reshape(x, [batch, channels, -1]), reshape(indices, [batch, channels, -1])
    plane = zeros_like(slice_(flat_x, [2], [0], [1])) + zeros([math.prod(sizes)], x.dtype)
    out = put_along_axis(plane, flat_index.astype("int64"), flat_x, 2)
    return reshape(out, [batch, channels, *sizes])


def _flat_int(value):
    """An int from a one-int list, else value as given (for `ntuple`)."""
    return int(value[0]) if isinstance(value, list | tuple) and len(value) == 1 else value


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, data_format: str = "NCL",
                 output_size=None, name=None):
    """The inverse of max_pool1d with its mask: x [N, C, L] written at `indices` along
    an output of length (L - 1) * stride + kernel_size - 2 * padding (or
    `output_size`), zeros elsewhere (see `_max_unpool`)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 1,
                       "max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format: str = "NCHW",
                 output_size=None, name=None):
    """The inverse of max_pool2d with its mask: x [N, C, H, W] written at `indices`
    (flat within each H_out * W_out plane), zeros elsewhere (see `_max_unpool`)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 2,
                       "max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format: str = "NCDHW",
                 output_size=None, name=None):
    """The inverse of max_pool3d with its mask: x [N, C, D, H, W] written at `indices`
    (flat within each output volume), zeros elsewhere (see `_max_unpool`)."""
    return _max_unpool(x, indices, kernel_size, stride, padding, data_format, output_size, 3,
                       "max_unpool3d")
