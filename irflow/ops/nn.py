"""Convolution and pooling over NCHW tensors, with Paddle's semantics and defaults.

All these ops slide a window over the two spatial axes of an ``[N, C, H, W]`` input.
Their attributes share one canonical form: ``stride``, ``dilation`` and
``kernel_size`` are ``(h, w)`` pairs and ``padding`` is ``(top, bottom, left, right)``;
an int ``p`` means ``(p, p, p, p)`` and a pair ``(ph, pw)`` means ``(ph, ph, pw, pw)``.
Along one axis of size ``S``, with padding ``lo``/``hi``, a kernel of ``k`` taps
``d`` apart (extent ``e = d*(k-1) + 1``) and stride ``s``, there are
``(S + lo + hi - e) // s + 1`` windows, or ``(S + lo + hi - e + s - 1) // s + 1``
with ``ceil_mode`` (Paddle's formula: the last window may hang past the padding).
Window ``o`` covers padded rows ``o*s, o*s + d, ..., o*s + (k-1)*d``.

N (and C, for pooling) may be symbolic; the spatial sizes, and for convolution the
channels and the filter, must be static, since the result sizes depend on them.

Each differentiable op has a gradient primitive that its VJP emits
(`conv2d_grad_input`, `conv2d_grad_filter`, `max_pool2d_grad`, `avg_pool2d_grad`,
`adaptive_avg_pool2d_grad`). Those of pooling and `conv2d_grad_input` are linear in
the cotangent they spread, so their own VJPs transpose that spreading back (a pool
of the cotangent, or for max pooling a read at each window's first maximum) and
gradients of second order flow through them; `conv2d_grad_filter` has no VJP.

Convolution runs as packed im2col and BLAS (`_Windows.taps`): for a chunk of the
batch, every kernel tap copies its shifted, strided slice of the input once into a
contiguous, zero-bordered matrix ``[n, C, kH, kW, out_h, out_w]`` (no padded copy
of the input is made; the padding is the matrix's zeros, written once), and one
batched matrix product per chunk, ``w[g] @ cols[n, g]``, writes the result in NCHW
order directly. The chunk holds as many images as fit in `_SCRATCH_BYTES` (at least
one), so the matrix stays in cache between its copy and its product and the scratch
is allocated once per call, not once per image. The input gradient is the same
product transposed followed by col2im, one strided addition per tap; the filter
gradient sums ``g[n, g] @ cols[n, g].T`` over the chunks. Measured on the shapes of
``benchmarks/conv2d.py``, this layout beats the ``[N*out_h*out_w, C*kH*kW]`` layout
(whose copy moves runs of kW elements, and whose result needs a transpose) and
accumulating one matrix product per tap (small products, and a strided temporary
per tap). A contraction of length one (a depthwise gradient, a 1x1 output) is a
broadcast multiplication, which NumPy runs much faster than a matmul of inner size 1.
`conv2d` and `conv2d_grad_input` have out kernels: they write into the given buffer
and allocate only the chunk's scratch.

Pooling runs tap by tap: each kernel tap sees a strided view of the (padded) input
of the output's shape (`_Windows.tap_slices`), and a max or sum folds them in one
NumPy pass per tap, as the gradients scatter back per tap (`_Windows.scatter`); no
Python loop runs over pixels. (One reduction over a 6-D view of every window was
15 times slower for a 2x2 max pool of [32, 32, 32, 32]: 15 ms against 1.)
Results are row-major, as every kernel's are (an elementwise op's result takes its
operand's layout in NumPy, and a reduction's rounding follows the layout).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import ShapeError
from ..ir.registry import REQUIRED
from ..ir.traits import Contraction
from ..ir.types import TensorType, mismatch
from ._rules import check_kind, defop, same_dtype

_AXES = ("height", "width")


# ---------------------------------------------------------------- attributes

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _pair(value, what: str, minimum: int) -> tuple[int, int]:
    """An ``(h, w)`` pair of ints >= `minimum`, from an int or a pair."""
    pair = (value, value) if _is_int(value) else value
    if not (isinstance(pair, tuple) and len(pair) == 2 and all(_is_int(v) for v in pair)):
        raise ShapeError(f"{what} must be an int or a pair of ints, got {value!r}")
    if min(pair) < minimum:
        raise ShapeError(f"{what} must be at least {minimum}, got {value!r}")
    return pair


def _padding(value) -> tuple[int, int, int, int]:
    """``(top, bottom, left, right)`` from an int, an ``(h, w)`` pair or a 4-tuple."""
    if _is_int(value):
        value = (value,) * 4
    elif isinstance(value, tuple) and len(value) == 2:
        value = (value[0], value[0], value[1], value[1])
    if not (isinstance(value, tuple) and len(value) == 4 and all(_is_int(v) for v in value)):
        raise ShapeError(f"padding must be an int, a pair (h, w) or a 4-tuple (top, bottom, "
                         f"left, right) of ints, got {value!r}")
    if min(value) < 0:
        raise ShapeError(f"padding must be non-negative, got {value!r}")
    return value


def _groups(value) -> int:
    if not _is_int(value) or value < 1:
        raise ShapeError(f"groups must be a positive int, got {value!r}")
    return value


def _conv_canon(attrs, types):
    out = dict(attrs, stride=_pair(attrs["stride"], "stride", 1),
               padding=_padding(attrs["padding"]),
               dilation=_pair(attrs["dilation"], "dilation", 1),
               groups=_groups(attrs["groups"]))
    if "input_hw" in attrs:
        out["input_hw"] = _pair(attrs["input_hw"], "input_hw", 0)
    if "kernel_hw" in attrs:
        out["kernel_hw"] = _pair(attrs["kernel_hw"], "kernel_hw", 1)
    return out


def _pool_canon(attrs, types):
    kernel = _pair(attrs["kernel_size"], "kernel_size", 1)
    stride = kernel if attrs["stride"] is None else _pair(attrs["stride"], "stride", 1)
    out = dict(attrs, kernel_size=kernel, stride=stride, padding=_padding(attrs["padding"]),
               ceil_mode=bool(attrs["ceil_mode"]))
    if "exclusive" in attrs:
        out["exclusive"] = bool(attrs["exclusive"])
    if "input_hw" in attrs:
        out["input_hw"] = _pair(attrs["input_hw"], "input_hw", 0)
    return out


# ---------------------------------------------------------------- type rules

def _check_nchw(t: TensorType, what: str) -> None:
    if t.rank != 4:
        raise ShapeError(f"{what} must be a rank-4 [N, C, H, W] tensor, got {t}")
    check_kind(t, "float", what)


def _check_static(t: TensorType, axes, names: str, what: str) -> None:
    if not all(isinstance(t.shape[a], int) for a in axes):
        raise ShapeError(f"{what} must have static {names}, got {t}")


def _window_count(size: int, kernel: int, stride: int, lo: int, hi: int, dilation: int,
                  ceil_mode: bool, axis: str) -> int:
    extent = dilation * (kernel - 1) + 1
    span = size + lo + hi - extent
    if span < 0:
        raise ShapeError(f"the padded input {axis} {size + lo + hi} is smaller than the "
                         f"kernel {axis} {extent}")
    return (span + (stride - 1 if ceil_mode else 0)) // stride + 1


def _out_hw(input_hw, kernel_hw, stride, padding, dilation=(1, 1), ceil_mode=False):
    return tuple(_window_count(input_hw[i], kernel_hw[i], stride[i], padding[2 * i],
                               padding[2 * i + 1], dilation[i], ceil_mode, _AXES[i])
                 for i in range(2))


def _conv_result(x: TensorType, w_shape, stride, padding, dilation, groups) -> TensorType:
    """The type of ``conv2d(x, w)`` for a filter of `w_shape`, checking both."""
    _check_static(x, (2, 3), "H and W", "input")
    c_out, c_group = w_shape[:2]
    channels = x.shape[1]
    if isinstance(channels, int) and channels % groups:
        raise ShapeError(f"input channels {channels} are not divisible by groups={groups}")
    if c_group * groups != channels:
        raise mismatch(channels, c_group * groups,
                       f"the filter [{', '.join(map(str, w_shape))}] takes {c_group} channels "
                       f"per group, so {c_group * groups} input channels with groups={groups}, "
                       f"but the input {x} has {channels}")
    if c_out % groups:
        raise ShapeError(f"filter output channels {c_out} are not divisible by groups={groups}")
    out_hw = _out_hw(x.shape[2:], w_shape[2:], stride, padding, dilation)
    return TensorType(x.dtype, (x.shape[0], c_out, *out_hw))


def _check_filter(w: TensorType) -> None:
    if w.rank != 4:
        raise ShapeError(f"filter must be a rank-4 [Cout, C/groups, kH, kW] tensor, got {w}")
    check_kind(w, "float", "filter")
    _check_static(w, range(4), "dims", "filter")
    if 0 in w.shape[2:]:
        raise ShapeError(f"filter must have a non-empty kernel, got {w}")


def _check_cotangent(g: TensorType, expected: TensorType) -> None:
    if g != expected:
        raise ShapeError(f"the cotangent {g} does not match the forward result {expected}")


def _conv2d_infer(types, attrs):
    x, w = types
    _check_nchw(x, "input")
    _check_filter(w)
    same_dtype(types)
    return _conv_result(x, w.shape, attrs["stride"], attrs["padding"], attrs["dilation"],
                        attrs["groups"])


def _conv2d_grad_input_infer(types, attrs):
    g, w = types
    _check_nchw(g, "cotangent")
    _check_filter(w)
    same_dtype(types)
    x = TensorType(g.dtype, (g.shape[0], w.shape[1] * attrs["groups"], *attrs["input_hw"]))
    _check_cotangent(g, _conv_result(x, w.shape, attrs["stride"], attrs["padding"],
                                     attrs["dilation"], attrs["groups"]))
    return x


def _conv2d_grad_filter_infer(types, attrs):
    x, g = types
    _check_nchw(x, "input")
    _check_nchw(g, "cotangent")
    same_dtype(types)
    _check_static(x, (1,), "C", "input")
    _check_static(g, (1,), "C", "cotangent")
    groups = attrs["groups"]
    w_shape = (g.shape[1], x.shape[1] // groups, *attrs["kernel_hw"])
    _check_cotangent(g, _conv_result(x, w_shape, attrs["stride"], attrs["padding"],
                                     attrs["dilation"], groups))
    return TensorType(x.dtype, w_shape)


def _pool_result(x: TensorType, kernel_size, stride, padding, ceil_mode, **_) -> TensorType:
    """The type of pooling `x`; rejects windows that would hold only padding, where Paddle
    returns -FLT_MAX (max) or divides by zero (exclusive average)."""
    _check_nchw(x, "input")
    _check_static(x, (2, 3), "H and W", "input")
    out_hw = _out_hw(x.shape[2:], kernel_size, stride, padding, ceil_mode=ceil_mode)
    for i in range(2):
        size, lo = x.shape[2 + i], padding[2 * i]
        if lo >= kernel_size[i] or (out_hw[i] - 1) * stride[i] - lo >= size:
            raise ShapeError(f"a pooling window would cover only padding along the {_AXES[i]} "
                             f"(input {_AXES[i]} {size}, kernel {kernel_size[i]}, stride "
                             f"{stride[i]}, padding {padding[2 * i]}/{padding[2 * i + 1]}, "
                             f"ceil_mode={ceil_mode}); use less padding"
                             + (" or ceil_mode=False" if ceil_mode else ""))
    return TensorType(x.dtype, (*x.shape[:2], *out_hw))


def _pool_infer(types, attrs):
    return _pool_result(types[0], **attrs)


def _max_pool2d_grad_infer(types, attrs):
    x, g = types
    _check_nchw(g, "cotangent")
    _check_cotangent(g, _pool_result(x, **attrs))
    return x


def _avg_pool2d_grad_infer(types, attrs):
    (g,) = types
    _check_nchw(g, "cotangent")
    x = TensorType(g.dtype, (*g.shape[:2], *attrs["input_hw"]))
    _check_cotangent(g, _pool_result(x, **attrs))
    return x


def _adaptive_canon(attrs, types):
    size = attrs["output_size"]
    pair = (size, size) if _is_int(size) else size
    if not (isinstance(pair, tuple) and len(pair) == 2
            and all(v is None or (_is_int(v) and v > 0) for v in pair)):
        raise ShapeError(f"output_size must be a positive int or a pair of positive ints or "
                         f"None, got {size!r}")
    if None in pair:
        x = types[0]
        _check_nchw(x, "input")
        _check_static(x, (2, 3), "H and W", "input")
        pair = tuple(x.shape[2 + i] if v is None else v for i, v in enumerate(pair))
    return {"output_size": pair}


def _adaptive_infer(types, attrs):
    (x,) = types
    _check_nchw(x, "input")
    _check_static(x, (2, 3), "H and W", "input")
    if 0 in x.shape[2:]:
        raise ShapeError(f"input must have a non-empty H and W, got {x}")
    return TensorType(x.dtype, (*x.shape[:2], *attrs["output_size"]))


def _adaptive_grad_canon(attrs, types):
    return {"input_hw": _pair(attrs["input_hw"], "input_hw", 1)}


def _adaptive_grad_infer(types, attrs):
    (g,) = types
    _check_nchw(g, "cotangent")
    _check_static(g, (2, 3), "H and W", "cotangent")
    return TensorType(g.dtype, (*g.shape[:2], *attrs["input_hw"]))


# ---------------------------------------------------------------- kernels

@dataclass(frozen=True)
class _Windows:
    """The windows of a convolution or pooling over inputs of spatial size `input_hw`.

    The input sits in a frame padded by ``padding`` and, with ``ceil_mode``, by as
    many more rows and columns at the bottom and right as the last window needs."""
    input_hw: tuple[int, int]
    kernel_hw: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    @cached_property
    def out_hw(self) -> tuple[int, int]:
        return _out_hw(self.input_hw, self.kernel_hw, self.stride, self.padding,
                       self.dilation, self.ceil_mode)

    @cached_property
    def frame_pads(self) -> list[tuple[int, int]]:
        pads = []
        for i in range(2):
            lo, hi = self.padding[2 * i], self.padding[2 * i + 1]
            extent = self.dilation[i] * (self.kernel_hw[i] - 1) + 1
            needed = (self.out_hw[i] - 1) * self.stride[i] + extent - lo - self.input_hw[i]
            pads.append((lo, max(hi, needed)))
        return pads

    @cached_property
    def taps(self) -> list[tuple]:
        """Per kernel tap ``(i, j)`` whose windows meet the input: ``(i, j, (rows,
        cols) of the windows that see the input there, (rows, cols) of the input they
        see)``, as slices; window cells outside those slices see only padding."""
        axes = []
        for a in range(2):
            size, lo, s, d, out = (self.input_hw[a], self.padding[2 * a], self.stride[a],
                                   self.dilation[a], self.out_hw[a])
            spans = []
            for t in range(self.kernel_hw[a]):
                offset = t * d - lo  # window o sees input cell o*s + offset
                first, stop = max(0, -(offset // s)), min(out, (size - 1 - offset) // s + 1)
                if first < stop:
                    spans.append((t, slice(first, stop),
                                  slice(first * s + offset, (stop - 1) * s + offset + 1, s)))
            axes.append(spans)
        return [(i, j, (oi, oj), (xi, xj)) for i, oi, xi in axes[0] for j, oj, xj in axes[1]]

    def gather_taps(self, x: np.ndarray, cols: np.ndarray) -> None:
        """Copies the windows of `x` [n, C, H, W] into `cols` [n, C, kH, kW, out_h,
        out_w], leaving the cells that see padding as they are (zero)."""
        for i, j, (oi, oj), (xi, xj) in self.taps:
            cols[:, :, i, j, oi, oj] = x[:, :, xi, xj]

    def scatter_taps(self, cols: np.ndarray, x: np.ndarray) -> None:
        """The adjoint of `gather_taps`: adds `cols` into `x` where they were gathered."""
        for i, j, (oi, oj), (xi, xj) in self.taps:
            x[:, :, xi, xj] += cols[:, :, i, j, oi, oj]

    def tap_slices(self) -> list[tuple[int, int, tuple[slice, slice]]]:
        """Per kernel tap ``(i, j)``, the (rows, cols) slices of the framed input
        (`framed`) that tap sees in each window, in row-major tap order: a view of
        the output's shape."""
        (sh, sw), (dh, dw), (oh, ow) = self.stride, self.dilation, self.out_hw
        return [(i, j, (slice(i * dh, i * dh + (oh - 1) * sh + 1, sh),
                        slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)))
                for i in range(self.kernel_hw[0]) for j in range(self.kernel_hw[1])]

    def framed(self, x: np.ndarray, fill) -> np.ndarray:
        """`x` with its padding (and the ceil_mode overhang) as `fill`: `x` itself
        where there is none, a copy otherwise."""
        if not any(lo or hi for lo, hi in self.frame_pads):
            return x
        return np.pad(x, [(0, 0), (0, 0), *self.frame_pads], constant_values=fill)

    def unframed(self, framed: np.ndarray) -> np.ndarray:
        """The input's part of a framed array (the padding dropped)."""
        (top, _), (left, _) = self.frame_pads
        h, w = self.input_hw
        return np.ascontiguousarray(framed[:, :, top:top + h, left:left + w])

    def scatter(self, parts: np.ndarray) -> np.ndarray:
        """The adjoint of the taps' views: sums window-shaped `parts` ``[N, C, out_h,
        out_w, kH, kW]`` into the positions they were read from, dropping the
        padding."""
        (top, bottom), (left, right) = self.frame_pads
        h, w = self.input_hw
        frame = np.zeros((*parts.shape[:2], top + h + bottom, left + w + right), parts.dtype)
        for i, j, (rows, cols) in self.tap_slices():
            frame[:, :, rows, cols] += parts[:, :, :, :, i, j]
        return self.unframed(frame)


def _conv_windows(input_hw, kernel_hw, stride, padding, dilation) -> _Windows:
    return _Windows(tuple(input_hw), tuple(kernel_hw), stride, padding, dilation)


# The most scratch memory a convolution kernel takes for its im2col matrix (more when
# one image needs more): about an L2 cache, measured best on benchmarks/conv2d.py.
_SCRATCH_BYTES = 1 << 20


def _is_pointwise(windows: _Windows) -> bool:
    """A 1x1 kernel at stride 1 without padding: the input is its own im2col matrix."""
    return (windows.kernel_hw == (1, 1) and windows.stride == (1, 1)
            and not any(windows.padding))


def _chunks(n: int, image_bytes: int):
    """The chunk size and the (start, stop) of each chunk of a batch of `n` images."""
    size = max(1, min(n, _SCRATCH_BYTES // max(1, image_bytes)))
    return size, [(start, min(n, start + size)) for start in range(0, n, size)]


def _product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` (broadcast over leading axes), into `out` if given; a broadcast
    multiplication when the contraction has length one."""
    if a.shape[-1] == 1:
        return np.multiply(a, b, out=out)
    return np.matmul(a, b, out=out)


def _contiguous_out(kernel):
    """The out kernel of `kernel(*arrays, out=..., **attrs)`, which needs a row-major
    `out` (it writes through reshaped views): another buffer is written by a copy."""
    def out_kernel(*arrays, out, **attrs):
        if out.flags.c_contiguous:
            return kernel(*arrays, out=out, **attrs)
        out[...] = kernel(*arrays, out=np.empty(out.shape, out.dtype), **attrs)
        return out
    return out_kernel


def _conv2d_into(x, w, out, stride, padding, dilation, groups):
    windows = _conv_windows(x.shape[2:], w.shape[2:], stride, padding, dilation)
    n, c = x.shape[:2]
    c_out, c_group, kh, kw = w.shape
    (oh, ow), k = windows.out_hw, c_group * kh * kw
    filters = w.reshape(groups, c_out // groups, k)
    rows = out.reshape(n, groups, c_out // groups, oh * ow)
    if _is_pointwise(windows):
        _product(filters, x.reshape(n, groups, c_group, oh * ow), rows)
        return out
    size, chunks = _chunks(n, c * kh * kw * oh * ow * x.itemsize)
    cols = np.zeros((size, c, kh, kw, oh, ow), x.dtype)  # the borders stay zero
    for start, stop in chunks:
        part = cols[:stop - start]
        windows.gather_taps(x[start:stop], part)
        _product(filters, part.reshape(stop - start, groups, k, oh * ow), rows[start:stop])
    return out


def _conv2d(x, w, stride, padding, dilation, groups, out=None):
    if out is None:
        out_hw = _out_hw(x.shape[2:], w.shape[2:], stride, padding, dilation)
        out = np.empty((x.shape[0], w.shape[0], *out_hw), x.dtype)
    return _conv2d_into(x, w, out, stride, padding, dilation, groups)


def _conv2d_grad_input(g, w, input_hw, stride, padding, dilation, groups, out=None):
    windows = _conv_windows(input_hw, w.shape[2:], stride, padding, dilation)
    c_out, c_group, kh, kw = w.shape
    n, _, oh, ow = g.shape
    c, k = c_group * groups, c_group * kh * kw
    if out is None:
        out = np.zeros((n, c, *input_hw), g.dtype)
    else:
        out[...] = 0
    filters = w.reshape(groups, c_out // groups, k).transpose(0, 2, 1)
    rows = g.reshape(n, groups, c_out // groups, oh * ow)
    if _is_pointwise(windows):
        _product(filters, rows, out.reshape(n, groups, c_group, oh * ow))
        return out
    size, chunks = _chunks(n, c * kh * kw * oh * ow * g.itemsize)
    cols = np.empty((size, c, kh, kw, oh, ow), g.dtype)
    for start, stop in chunks:
        part = cols[:stop - start]
        _product(filters, rows[start:stop], part.reshape(stop - start, groups, k, oh * ow))
        windows.scatter_taps(part, out[start:stop])
    return out


def _conv2d_grad_filter(x, g, kernel_hw, stride, padding, dilation, groups):
    windows = _conv_windows(x.shape[2:], kernel_hw, stride, padding, dilation)
    n, c = x.shape[:2]
    c_out, (oh, ow) = g.shape[1], windows.out_hw
    c_group = c // groups
    k = c_group * kernel_hw[0] * kernel_hw[1]
    rows = g.reshape(n, groups, c_out // groups, oh * ow)
    grads = np.zeros((groups, c_out // groups, k), x.dtype)
    if _is_pointwise(windows):
        chunks, cols = [(0, n)], x.reshape(n, groups, c_group, oh * ow)
    else:
        size, chunks = _chunks(n, c * kernel_hw[0] * kernel_hw[1] * oh * ow * x.itemsize)
        cols = np.zeros((size, c, *kernel_hw, oh, ow), x.dtype)
    for start, stop in chunks:
        if _is_pointwise(windows):
            part = cols
        else:
            windows.gather_taps(x[start:stop], cols[:stop - start])
            part = cols[:stop - start].reshape(stop - start, groups, k, oh * ow)
        grads += _product(rows[start:stop], part.transpose(0, 1, 3, 2)).sum(axis=0)
    return grads.reshape(c_out, c_group, *kernel_hw)


def _conv2d_vjp(b, cts, ins, outs, **attrs):
    x, w = ins
    return [b.conv2d_grad_input(cts[0], w, input_hw=x.type.shape[2:], **attrs),
            b.conv2d_grad_filter(x, cts[0], kernel_hw=w.type.shape[2:], **attrs)]


def _conv2d_grad_input_vjp(b, cts, ins, outs, input_hw, **attrs):
    """The transposed convolution is linear in g and in w: its cotangents are a
    convolution of the result's cotangent, and conv2d's filter gradient of it."""
    g, w = ins
    return [b.conv2d(cts[0], w, **attrs),
            b.conv2d_grad_filter(cts[0], g, kernel_hw=w.type.shape[2:], **attrs)]


def _pool_windows(input_hw, kernel_size, stride, padding, ceil_mode) -> _Windows:
    return _Windows(tuple(input_hw), kernel_size, stride, padding, ceil_mode=ceil_mode)


def _max_pool2d(x, kernel_size, stride, padding, ceil_mode):
    """The maximum of the windows, tap by tap: one ``np.maximum`` of strided views
    per kernel tap (a 2x2 pool of [32, 32, 32, 32] took 15 ms as one reduction of a
    6-D window view, 1 ms so). NaN propagates, as NumPy's max."""
    windows = _pool_windows(x.shape[2:], kernel_size, stride, padding, ceil_mode)
    framed = windows.framed(x, -np.inf)
    out = None
    for _, _, (rows, cols) in windows.tap_slices():
        tap = framed[:, :, rows, cols]
        out = tap.copy() if out is None else np.maximum(out, tap, out=out)
    return out


def _max_pool2d_grad(x, g, kernel_size, stride, padding, ceil_mode):
    """Each cotangent goes to its window's maximum; on ties, to the first in row-major
    window order (``argmax``: a NaN is the maximum), as in Paddle and PyTorch: tap by
    tap, each window's first tap equal to its maximum takes it."""
    windows = _pool_windows(x.shape[2:], kernel_size, stride, padding, ceil_mode)
    framed = windows.framed(x, -np.inf)
    top = _max_pool2d(x, kernel_size, stride, padding, ceil_mode)
    undecided = np.ones(top.shape, bool)
    nan = np.isnan(top)
    nan = nan if nan.any() else None
    frame = np.zeros(framed.shape, g.dtype)
    for _, _, (rows, cols) in windows.tap_slices():
        tap = framed[:, :, rows, cols]
        takes = np.equal(tap, top)
        if nan is not None:
            takes |= nan & np.isnan(tap)
        takes &= undecided
        np.logical_xor(undecided, takes, out=undecided)  # takes is within undecided
        view = frame[:, :, rows, cols]
        np.add(view, g, out=view, where=takes)
    return windows.unframed(frame)


def _axis_counts(size, kernel, stride, lo, hi, out, exclusive) -> np.ndarray:
    """How many cells each window counts along one axis: the input cells only
    (`exclusive`), or also the padding, but never the ceil_mode overhang. As Paddle's
    kernel, a window's end is clipped at the input's end plus the padding *before*
    the axis (`lo`), also where the padding after it (`hi`) differs: with padding
    [0, 1], the last window of size 2 counts one cell, not two ("SAME" padding of an
    even kernel is such a padding)."""
    starts = np.arange(out) * stride - lo
    ends = starts + kernel
    if exclusive:
        return np.minimum(ends, size) - np.maximum(starts, 0)
    return np.minimum(ends, size + lo) - starts


def _avg_divisor(windows: _Windows, exclusive: bool, dtype) -> np.ndarray:
    h, w = (_axis_counts(windows.input_hw[i], windows.kernel_hw[i], windows.stride[i],
                         windows.padding[2 * i], windows.padding[2 * i + 1],
                         windows.out_hw[i], exclusive) for i in range(2))
    return np.outer(h, w).astype(dtype)


def _avg_pool2d(x, kernel_size, stride, padding, ceil_mode, exclusive):
    windows = _pool_windows(x.shape[2:], kernel_size, stride, padding, ceil_mode)
    framed = windows.framed(x, 0)
    sums = None
    for _, _, (rows, cols) in windows.tap_slices():
        tap = framed[:, :, rows, cols]
        sums = tap.copy() if sums is None else np.add(sums, tap, out=sums)
    return sums / _avg_divisor(windows, exclusive, x.dtype)


def _avg_pool2d_grad(g, input_hw, kernel_size, stride, padding, ceil_mode, exclusive):
    windows = _pool_windows(input_hw, kernel_size, stride, padding, ceil_mode)
    share = g / _avg_divisor(windows, exclusive, g.dtype)
    return windows.scatter(np.broadcast_to(share[..., None, None], (*g.shape, *kernel_size)))


def _max_pool2d_vjp(b, cts, ins, outs, **attrs):
    return [b.max_pool2d_grad(ins[0], cts[0], **attrs)]


def _max_pool2d_grad_vjp(b, cts, ins, outs, **attrs):
    """max_pool2d_grad is constant in x between ties (x gets no cotangent) and linear
    in g, adding each g to its window's first maximum: its transpose reads the
    cotangent there. The taps of each window are stacked and the first maximum found
    by argmax, which picks as `_max_pool2d_grad` does (the first tap equal to the
    maximum, a NaN being the maximum; padding is -inf)."""
    x, _ = ins
    windows = _pool_windows(x.type.shape[2:], **attrs)
    pads = ((0, 0), (0, 0), *windows.frame_pads)

    def taps(v, fill):
        framed = b.pad(v, pads=pads, value=fill)
        return b.stack(*[b.slice(framed, axes=(2, 3), starts=(rows.start, cols.start),
                                 stops=(rows.stop, cols.stop), steps=(rows.step, cols.step))
                         for _, _, (rows, cols) in windows.tap_slices()], axis=4)

    first = b.argmax(taps(x, -np.inf), axis=4, keepdim=True)
    return [None, b.squeeze(b.take_along_axis(taps(cts[0], 0.0), first, axis=4), axis=4)]


def _avg_pool2d_vjp(b, cts, ins, outs, **attrs):
    return [b.avg_pool2d_grad(cts[0], input_hw=ins[0].type.shape[2:], **attrs)]


def _avg_pool2d_grad_vjp(b, cts, ins, outs, input_hw, **attrs):
    """avg_pool2d_grad is linear in g, spreading g[o] / divisor[o] over window o: its
    transpose sums the cotangent over each window and divides by the same divisor,
    which is avg_pool2d with the same attributes."""
    return [b.avg_pool2d(cts[0], **attrs)]


def _bin_matrix(size: int, out: int, dtype) -> np.ndarray:
    """``[out, size]``: row ``i`` averages cells ``floor(i*size/out)`` up to
    ``ceil((i+1)*size/out)`` (exclusive), Paddle's and PyTorch's adaptive bins."""
    i = np.arange(out)
    starts = i * size // out
    ends = -(-(i + 1) * size // out)
    cells = np.arange(size)
    inside = (cells >= starts[:, None]) & (cells < ends[:, None])
    return (inside / (ends - starts)[:, None]).astype(dtype)


def _apply_bins(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``rows @ x @ cols.T`` over the last two axes, as two single matrix products."""
    y = np.tensordot(x, rows, axes=(2, 1))      # [N, C, W, out_h]
    return np.tensordot(y, cols, axes=(2, 1))   # [N, C, out_h, out_w]


def _adaptive_avg_pool2d(x, output_size):
    (h, w), (oh, ow) = x.shape[2:], output_size
    return _apply_bins(x, _bin_matrix(h, oh, x.dtype), _bin_matrix(w, ow, x.dtype))


def _adaptive_avg_pool2d_grad(g, input_hw):
    (h, w), (oh, ow) = input_hw, g.shape[2:]
    return _apply_bins(g, _bin_matrix(h, oh, g.dtype).T, _bin_matrix(w, ow, g.dtype).T)


def _adaptive_vjp(b, cts, ins, outs, output_size):
    return [b.adaptive_avg_pool2d_grad(cts[0], input_hw=ins[0].type.shape[2:])]


def _adaptive_grad_vjp(b, cts, ins, outs, input_hw):
    """adaptive_avg_pool2d_grad is ``rows.T @ g @ cols`` with adaptive_avg_pool2d's
    bin matrices: its transpose ``rows @ ct @ cols.T`` is adaptive_avg_pool2d onto
    g's grid."""
    return [b.adaptive_avg_pool2d(cts[0], output_size=ins[0].type.shape[2:])]


# ---------------------------------------------------------------- declarations

_CONV_ATTRS = {"stride": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1}
_CONV_ATTRS_DOC = (
    "`stride` and `dilation` (int or (h, w) pair, default 1), `padding` (int, (h, w) or "
    "(top, bottom, left, right), default 0; zeros), `groups` (default 1; C and Cout "
    "divisible by it; groups=C is depthwise)")
_SECOND_ORDER = "No VJP: second-order gradients through conv2d are not supported."

defop("conv2d", _conv2d_infer, _conv2d, out_kernel=_contiguous_out(_conv2d), arity=2, attrs=dict(_CONV_ATTRS),
      canonicalize=_conv_canon, vjp=_conv2d_vjp,
      # output channel o is linear in filter o alone
      traits=(Contraction(weight=1, channels=lambda op: (1, 0)),),
      doc="conv2d(x, w): 2-D cross-correlation, Paddle's conv2d without bias (add it "
          "separately). x: float [N, C, H, W], w: [Cout, C/groups, kH, kW] of x's dtype; "
          "result [N, Cout, H_out, W_out] with H_out = (H + top + bottom - (dilation*(kH-1) "
          "+ 1)) // stride + 1 (W alike). Output channel o of group g = o // (Cout/groups) "
          "sees input channels g*C/groups ... (g+1)*C/groups - 1. Attributes: "
          + _CONV_ATTRS_DOC + ". N may be symbolic; C, H, W and w must be static.")
defop("conv2d_grad_input", _conv2d_grad_input_infer, _conv2d_grad_input,
      out_kernel=_contiguous_out(_conv2d_grad_input), arity=2,
      attrs={"input_hw": REQUIRED, **_CONV_ATTRS}, canonicalize=_conv_canon,
      vjp=_conv2d_grad_input_vjp,
      doc="conv2d_grad_input(g, w): the cotangent of conv2d's input x, which is also "
          "Paddle's conv2d_transpose of g. g: the cotangent [N, Cout, H_out, W_out] of "
          "conv2d(x, w), w: the filter; `input_hw` (required): x's (H, W); the other "
          "attributes are conv2d's. Result [N, C, H, W] with C = w.shape[1] * groups. Its "
          "VJP is conv2d of the cotangent (for g) and conv2d_grad_filter (for w)")
defop("conv2d_grad_filter", _conv2d_grad_filter_infer, _conv2d_grad_filter, arity=2,
      attrs={"kernel_hw": REQUIRED, **_CONV_ATTRS}, canonicalize=_conv_canon,
      doc="conv2d_grad_filter(x, g): the cotangent of conv2d's filter, summed over the "
          "batch. x: conv2d's input, g: the cotangent [N, Cout, H_out, W_out] of its "
          "result; `kernel_hw` (required): the filter's (kH, kW); the other attributes "
          "are conv2d's. Result [Cout, C/groups, kH, kW]. " + _SECOND_ORDER)

_POOL_ATTRS = {"kernel_size": REQUIRED, "stride": None, "padding": (0, 0, 0, 0),
               "ceil_mode": False}
_POOL_ATTRS_DOC = (
    "`kernel_size` (required; int or (h, w)), `stride` (int or (h, w); None, the "
    "default, means kernel_size), `padding` (int, (h, w) or (top, bottom, left, right); "
    "default 0), `ceil_mode` (default false: count windows with floor, else ceil)")
_POOL_TYPE_DOC = (
    "x: float [N, C, H, W] with static H, W; result [N, C, H_out, W_out] with H_out = "
    "(H + top + bottom - kH (+ stride - 1 with ceil_mode)) // stride + 1 (W alike). A "
    "window holding only padding is a type error.")

defop("max_pool2d", _pool_infer, _max_pool2d, arity=1, attrs=dict(_POOL_ATTRS),
      canonicalize=_pool_canon, vjp=_max_pool2d_vjp,
      doc="max_pool2d(x): the maximum of each window; padding counts as -inf. "
          + _POOL_TYPE_DOC + " Attributes: " + _POOL_ATTRS_DOC + ". The gradient goes to "
          "the first maximum of each window in row-major order.")
defop("max_pool2d_grad", _max_pool2d_grad_infer, _max_pool2d_grad, arity=2,
      attrs=dict(_POOL_ATTRS), canonicalize=_pool_canon, vjp=_max_pool2d_grad_vjp,
      doc="max_pool2d_grad(x, g): the cotangent of max_pool2d's input: each element of "
          "g (max_pool2d(x)'s cotangent) is added at the position of its window's first "
          "maximum (row-major window order, as Paddle and PyTorch). Attributes are "
          "max_pool2d's; result x's type. Its VJP reads the cotangent at each window's "
          "first maximum (for g); x gets none.")
defop("avg_pool2d", _pool_infer, _avg_pool2d, arity=1,
      attrs={**_POOL_ATTRS, "exclusive": True}, canonicalize=_pool_canon,
      vjp=_avg_pool2d_vjp,
      doc="avg_pool2d(x): the mean of each window. With `exclusive` (default true, as "
          "Paddle) padding is not counted in the divisor; otherwise it is, but cells "
          "past the bottom/right padding (ceil_mode) never are. " + _POOL_TYPE_DOC
          + " Attributes: " + _POOL_ATTRS_DOC + ", `exclusive`.")
defop("avg_pool2d_grad", _avg_pool2d_grad_infer, _avg_pool2d_grad, arity=1,
      attrs={"input_hw": REQUIRED, **_POOL_ATTRS, "exclusive": True},
      canonicalize=_pool_canon, vjp=_avg_pool2d_grad_vjp,
      doc="avg_pool2d_grad(g): the cotangent of avg_pool2d's input: each element of g "
          "(the result's cotangent) is spread evenly over its window's counted cells. "
          "`input_hw` (required): the input's (H, W); the other attributes are "
          "avg_pool2d's. Result [N, C, H, W]. Its VJP is avg_pool2d of the cotangent.")
defop("adaptive_avg_pool2d", _adaptive_infer, _adaptive_avg_pool2d, arity=1,
      attrs={"output_size": REQUIRED}, canonicalize=_adaptive_canon, vjp=_adaptive_vjp,
      doc="adaptive_avg_pool2d(x): averages x: float [N, C, H, W] (static H, W > 0) over "
          "an `output_size` grid (int or (h, w); None keeps that input size): output row "
          "i averages input rows floor(i*H/h) to ceil((i+1)*H/h) - 1 (columns alike), as "
          "Paddle and PyTorch. Result [N, C, h, w].")
defop("adaptive_avg_pool2d_grad", _adaptive_grad_infer, _adaptive_avg_pool2d_grad, arity=1,
      attrs={"input_hw": REQUIRED}, canonicalize=_adaptive_grad_canon,
      vjp=_adaptive_grad_vjp,
      doc="adaptive_avg_pool2d_grad(g): the cotangent of adaptive_avg_pool2d's input: "
          "each element of g [N, C, h, w] is spread evenly over its bin. `input_hw` "
          "(required): the input's (H, W). Result [N, C, H, W]. Its VJP is "
          "adaptive_avg_pool2d of the cotangent onto g's grid.")
