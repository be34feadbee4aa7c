"""2-D convolution and pooling over NCHW (or NHWC) tensors.

Paddle's many spellings of ``padding`` are resolved here to the ``(top, bottom,
left, right)`` form the `conv2d` and pooling ops take; NHWC inputs are transposed to
NCHW around the op.
"""
from __future__ import annotations

import math

from ...dispatch import apply
from ...tensor import reshape, transpose
from ...tensor.convert import as_tensor
from ...tensor.manipulation import exact_shape

_TO_NCHW = (0, 3, 1, 2)
_TO_NHWC = (0, 2, 3, 1)


def pair(value, what: str = "value") -> tuple[int, int]:
    """An (h, w) pair from an int or a sequence of two ints."""
    if isinstance(value, int):
        return value, value
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a list of two ints, got {list(value)}")
    return value


def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TensorFlow's "SAME": ceil(size / stride) outputs, the padding split evenly with
    the odd cell after."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    return total // 2, total - total // 2


def resolve_padding(padding, input_hw, kernel_hw, stride, dilation=(1, 1),
                    channels_last: bool = False) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, "SAME"/"VALID", [ph, pw],
    [top, bottom, left, right], or one [low, high] pair per axis of the input."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return 0, 0, 0, 0
        if mode == "SAME":
            return tuple(p for i in range(2) for p in _same_padding(
                input_hw[i], kernel_hw[i], stride[i], dilation[i]))
        raise ValueError(f"padding must be 'SAME', 'VALID' or numbers, got {padding!r}")
    if isinstance(padding, int):
        return (padding,) * 4
    padding = list(padding)
    if padding and isinstance(padding[0], list | tuple):
        spatial = padding[1:3] if channels_last else padding[2:4]
        padding = [int(v) for pair_ in spatial for v in pair_]
    if len(padding) == 2:
        return padding[0], padding[0], padding[1], padding[1]
    if len(padding) == 4:
        return tuple(int(v) for v in padding)
    raise ValueError(f"padding must be an int, 'SAME', 'VALID', [ph, pw] or [top, bottom, "
                     f"left, right], got {padding}")


def _channels_last(data_format: str) -> bool:
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    return data_format == "NHWC"


def _spatial_op(name: str, x, operands: tuple, attrs: dict, channels_last: bool):
    """Run a spatial op on NCHW data, transposing NHWC input and output."""
    if channels_last:
        x = transpose(x, _TO_NCHW)
    out = apply(name, (x, *operands), attrs)
    return transpose(out, _TO_NHWC) if channels_last else out


def _input_hw(x, channels_last: bool) -> tuple:
    shape = exact_shape(x)
    return shape[1:3] if channels_last else shape[2:4]


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
    """The maximum of each window (stride defaults to kernel_size; padding is -inf)."""
    if return_mask:
        raise NotImplementedError("max_pool2d: return_mask is not supported by irflow")
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last)
    return _spatial_op("max_pool2d", x, (), attrs, channels_last)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
               name=None):
    """The mean of each window; with `exclusive` (default) padding is not counted."""
    if divisor_override is not None:
        raise NotImplementedError("avg_pool2d: divisor_override is not supported by irflow")
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, channels_last)
    attrs["exclusive"] = bool(exclusive)
    return _spatial_op("avg_pool2d", x, (), attrs, channels_last)


def adaptive_avg_pool2d(x, output_size, data_format: str = "NCHW", name=None):
    """Averages over an output_size grid of bins (None keeps that input size)."""
    x = as_tensor(x)
    channels_last = _channels_last(data_format)
    if output_size is None:
        output_size = (None, None)
    size = output_size if isinstance(output_size, int) else tuple(output_size)
    return _spatial_op("adaptive_avg_pool2d", x, (), {"output_size": size}, channels_last)


def _conv1d_padding(padding):
    """conv2d's padding for the [N, C, 1, L] view of a 1-D input."""
    if isinstance(padding, str):
        return padding
    if isinstance(padding, int):
        return [0, 0, padding, padding]
    padding = list(padding)
    if padding and isinstance(padding[0], list | tuple):  # one pair per axis of [N, C, L]
        padding = list(padding[-1])
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
    from ...tensor import squeeze, unsqueeze
    x = as_tensor(x)
    if data_format not in ("NCL", "NLC"):
        raise ValueError(f"data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if data_format == "NLC":
        x = transpose(x, [0, 2, 1])
    out = conv2d(unsqueeze(x, [2]), unsqueeze(weight, [2]), None,
                 (1, _single(stride, "stride")), _conv1d_padding(padding),
                 (1, _single(dilation, "dilation")), groups)
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


def _pool1d(pool2d, x, kernel_size, stride, padding, **options):
    """A 2-D pool over the [N, C, 1, L] view of x [N, C, L], as Paddle computes it."""
    from ...tensor import squeeze, unsqueeze
    x = _ncl(x, f"{pool2d.__name__[:-2]}1d")
    kernel = (1, _single(kernel_size, "kernel_size"))
    stride = None if stride is None else (1, _single(stride, "stride"))
    out = pool2d(unsqueeze(x, [2]), kernel, stride, _conv1d_padding(padding), **options)
    return squeeze(out, [2])


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask: bool = False,
               ceil_mode: bool = False, name=None):
    """The maximum of each window of x [N, C, L] (stride defaults to kernel_size)."""
    if return_mask:
        raise NotImplementedError("max_pool1d: return_mask is not supported by irflow")
    return _pool1d(max_pool2d, x, kernel_size, stride, padding, ceil_mode=ceil_mode)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive: bool = True,
               ceil_mode: bool = False, name=None):
    """The mean of each window of x [N, C, L]; with `exclusive` (default) padding is
    not counted. (exclusive comes before ceil_mode here, unlike avg_pool2d: Paddle's
    order.)"""
    return _pool1d(avg_pool2d, x, kernel_size, stride, padding, ceil_mode=ceil_mode,
                   exclusive=exclusive)


def _adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """Paddle's adaptive pooling bins of an axis of `size` cells into `out`: bin i
    spans cells floor(i * size / out) up to ceil((i + 1) * size / out)."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def adaptive_avg_pool1d(x, output_size: int, name=None):
    """Averages over `output_size` adaptive bins of x [N, C, L] (see
    `_adaptive_bins`): adaptive_avg_pool2d on the [N, C, 1, L] view."""
    from ...tensor import squeeze, unsqueeze
    x = _ncl(x, "adaptive_avg_pool1d")
    size = _single(output_size, "output_size")
    return squeeze(adaptive_avg_pool2d(unsqueeze(x, [2]), (1, size)), [2])


def adaptive_max_pool1d(x, output_size, return_mask: bool = False, name=None):
    """The maximum over each of `output_size` adaptive bins of x [N, C, L] (see
    `_adaptive_bins`; L must be static), and with `return_mask` also its index along
    L (int32, as Paddle's). A tie gives the gradient and the index to the first of
    the tied cells, as Paddle's kernel does."""
    from ...errors import ShapeError
    from ...tensor import concat, slice as slice_
    from .common import first_max
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


def adaptive_max_pool2d(x, output_size, return_mask: bool = False, name=None):
    """The maximum over each bin of an output_size grid on x [N, C, H, W] (None keeps
    that input size), with Paddle's adaptive bins: cells floor(i*H/out) up to
    ceil((i+1)*H/out). The maximum over a rectangle is the maximum of its rows'
    maxima, so this is slices and max reductions along H, then along W, with no op
    of its own. Tied maxima share the gradient (irflow's max), where Paddle's kernel
    gives it to the first."""
    from ...errors import ShapeError
    from ...tensor import concat, max as reduce_max, slice as slice_
    if return_mask:
        raise NotImplementedError("adaptive_max_pool2d: return_mask is not supported by irflow")
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"adaptive_max_pool2d: x must be a 4-D [N, C, H, W] tensor, got "
                         f"shape {x.shape}")
    sizes = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2 or not all(s is None or isinstance(s, int) and s > 0 for s in sizes):
        raise ValueError(f"adaptive_max_pool2d: output_size must be a positive int or a "
                         f"pair of positive ints or None, got {output_size!r}")
    for axis, out in zip((2, 3), sizes):
        size = exact_shape(x)[axis]
        if not isinstance(size, int):
            raise ShapeError(f"adaptive_max_pool2d: x must have static H and W, got shape "
                             f"{exact_shape(x)}")
        if out is not None:
            bins = [reduce_max(slice_(x, [axis], [start], [stop]), axis, keepdim=True)
                    for start, stop in _adaptive_bins(size, out)]
            x = concat(bins, axis)
    return x


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
    base = [(n - 1) * s - lo - hi + d * (k - 1) + 1
            for n, s, lo, hi, d, k in zip(in_hw, stride, pads[0::2], pads[1::2], dilation,
                                          kernel)]
    if output_size is not None:
        size = [int(v) for v in ([output_size] * 2 if isinstance(output_size, int)
                                 else output_size)][-2:]
        extra = [o - b for o, b in zip(size, base)]
    else:
        extra = list(pair(output_padding, "output_padding"))
    for e, s, d in zip(extra, stride, dilation):
        if not 0 <= e < max(s, d):
            raise ValueError(f"conv2d_transpose: the output size must lie in [inferred, "
                             f"inferred + stride), got {extra} beyond {base}")
    attrs = {"input_hw": tuple(b + e for b, e in zip(base, extra)), "stride": stride,
             "padding": pads, "dilation": dilation, "groups": int(groups)}
    out = _spatial_op("conv2d_grad_input", x, (weight,), attrs, channels_last)
    if bias is None:
        return out
    return out + reshape(bias, [1, 1, 1, -1] if channels_last else [1, -1, 1, 1])
