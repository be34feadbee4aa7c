"""Float32 2-D convolution (NCHW) as generated LLVM code, for the conv2d anchors.

``y[n, o, oy, ox] = sum over c, i, j of w[o, c, i, j] * x[n, c, oy + i - top,
ox + j - left]`` (zero outside the image), for stride 1, dilation 1 and one group,
every size static but the batch: what a CNN's 3x3 (or 1x1, 5x5...) convolution
with "same" or no padding is. Other convolutions keep NumPy's packed im2col and
the BLAS (`irflow.ops.nn`).

**Direct, no im2col.** The im2col path copies every input element ``kH * kW``
times into a matrix before its product; NumPy's product of that matrix with 16
filters runs at a third of the FMA peak (M = 16 rows is small for OpenBLAS's
kernels). Here a *tile* is 8 output channels by ``16 * nv`` output columns of one
output row, held in ``8 * nv`` zmm accumulators: for each kernel row i whose input
row exists, each input channel c and each kernel column j, it loads ``nv`` vectors
of input row ``oy + i - top`` shifted by ``j - left`` (masked where the window
leaves the image: the padding is those masked-off lanes, never stored), broadcasts
the 8 filters' ``w[o, c, i, j]`` and does ``8 * nv`` FMAs, as the GEMM's tile
(`irflow.codegen.llvm.gemm`) does with a row of B. An image's rows stay in L1
between the kernel columns that read them, and its 3 x C rows between the output
rows that share them.

**Edges.** Output columns past the width and channels past ``Cout`` are computed
(reading the last filter again) and not stored, so any width and channel count
works; masks on the loads make the borders.

**Epilogue.** With an `Epilogue`, each tile, once stored, runs the elementwise body
over its elements (the GEMM's `emit_epilogue`, C being one image's ``[Cout, OH *
OW]``): a fused op's ``relu(conv(x, w) + b)``, BatchNorm folded into w and b, is one
pass. Its operands are per channel (``[Cout, 1, 1]``: the epilogue's "column"),
per pixel (``[OH, OW]``: "row"), of the output's shape (per image, or one image's
shape for every image: "full") or scalars.

The function is ``void kernel(i64 begin, i64 end, ptr x, ptr w, ptr y, ptr
operands...)`` over the images ``[begin, end)``, so `call_rows` can split the batch
across threads. `Conv` checks every argument before any code runs.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np
from llvmlite import ir

from ...errors import ShapeError
from ...ir import dtypes
from ...ir.core import Operation
from ...ir.registry import lookup
from .compiler import Compiler, default_compiler
from .gemm import (BODY_DTYPES, F32, F32_DTYPE, I32, I64, MASK, PTR, V16, WIDTH, Epilogue,
                   const, emit_epilogue, gep, splat, tile_intrinsics)
from .jit import Optimization
from .kernel import FUNCTION_NAME, address, call_rows
from .loops import carried_loop, counted_loop
from .scalar import can_fail

ROWS = 8  # output channels per tile, as the GEMM's tile rows
WORK_PER_ELEMENT = 8  # multiply-adds per unit of `call_rows`' work (the GEMM's)


@dataclass(frozen=True)
class ConvSpec:
    """One generated convolution: the static sizes (input channels, output channels,
    the image's height and width, the kernel's), the padding (top, bottom, left,
    right) and an optional epilogue (plain data, the compiler's cache key). Output
    tiles are ``16 * nv`` columns wide: one vector for images up to 16 wide."""

    channels: int
    filters: int
    height: int
    width: int
    kernel: tuple[int, int]
    padding: tuple[int, int, int, int]
    epilogue: Epilogue | None = None
    # `per_image[k]`: whether epilogue operand k holds one array per image (a "full"
    # operand with the batch dim), read at its image's offset
    per_image: tuple[bool, ...] = ()
    # the GEMM's: O1 without the unroller; the taps and the tile are unrolled by hand
    optimization: ClassVar[Optimization] = Optimization(level=1, unroll=False)

    @property
    def out_hw(self) -> tuple[int, int]:
        (kh, kw), (top, bottom, left, right) = self.kernel, self.padding
        return self.height + top + bottom - kh + 1, self.width + left + right - kw + 1

    @property
    def nv(self) -> int:
        return 1 if self.out_hw[1] <= WIDTH else 2

    @property
    def extras(self) -> int:
        return len(self.epilogue.kinds) if self.epilogue is not None else 0

    def llvm_ir(self, fma: bool) -> str:
        return _Generator(self, fma).module()


class _Generator:
    """Emits a `ConvSpec`'s module: the tile function and the driver."""

    def __init__(self, spec: ConvSpec, fma: bool):
        self.spec = spec
        self.has_fma = fma
        self.m = ir.Module(name="conv")
        self.fma, self.mload, self.mstore = tile_intrinsics(self.m)

    def module(self) -> str:
        s = self.spec
        self.epilogues = None if s.epilogue is None else (
            emit_epilogue(self.m, s.epilogue, self.has_fma, "epilogue_full", WIDTH * s.nv),
            emit_epilogue(self.m, s.epilogue, self.has_fma, "epilogue_edge"))
        self.tile_fn = self.tile()
        self.driver()
        return str(self.m)

    @staticmethod
    def lanes_mask(b: ir.IRBuilder, first, stop):
        """The mask of the lanes l with ``0 <= first + l < stop`` (i64 values)."""
        vt = ir.VectorType(I64, WIDTH)
        at = b.add(ir.Constant(vt, list(range(WIDTH))), splat(b, first, vt))
        return b.and_(b.icmp_signed(">=", at, ir.Constant(vt, [0] * WIDTH)),
                      b.icmp_signed("<", at, splat(b, stop, vt)))

    def tile(self) -> ir.Function:
        """``tile(x, w, y, oy, ox, rows)``: the output row `oy` of one image (`x`
        its input, `y` its output), columns ox.. (``16 * nv``, those inside the width
        stored), of the filters w.. (their first `rows` stored; the later rows
        read the last filter again)."""
        s, nv = self.spec, self.spec.nv
        (kh, kw), (top, _, left, _) = s.kernel, s.padding
        oh, ow = s.out_hw
        taps = s.channels * kh * kw  # floats per filter
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, I64, I64]),
                         "tile")
        fn.linkage = "internal"
        fn.attributes.add("noinline")  # a call per tile costs nothing; compiling, less
        x, w, y, oy, ox, rows = fn.args
        for arg in (x, w, y):
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        last = b.sub(rows, const(1))
        filters = [gep(b, w, b.mul(b.select(b.icmp_signed("<", const(r), rows), const(r), last),
                                   const(taps)))
                   for r in range(ROWS)]
        # per kernel column and vector: the lanes whose input column is in the image
        masks = [[self.lanes_mask(b, b.add(ox, const(j - left + WIDTH * v)), const(s.width))
                  for v in range(nv)] for j in range(kw)]
        zero = ir.Constant(V16, [0.0] * WIDTH)
        acc = [zero] * (ROWS * nv)
        for i in range(kh):
            row = b.add(oy, const(i - top))
            inside = b.and_(b.icmp_signed(">=", row, const(0)),
                            b.icmp_signed("<", row, const(s.height)))
            before = b.block
            summing = b.append_basic_block(f"row{i}")
            merged = b.append_basic_block(f"row{i}.end")
            b.cbranch(inside, summing, merged)
            b.position_at_end(summing)
            # plain geps: the window's lanes may start before the row or, past the
            # image's last column, after it (those lanes are masked off)
            start = b.gep(x, [b.add(b.mul(row, const(s.width)), ox)], source_etype=F32)
            with carried_loop(b, const(0), const(s.channels), acc, f"c{i}") as loop:
                plane = b.gep(start, [b.mul(loop.index, const(s.height * s.width))],
                              source_etype=F32)
                tap = b.mul(loop.index, const(kh * kw))
                values = loop.values
                for j in range(kw):
                    inputs = [b.call(self.mload, [
                        b.gep(plane, [const(j - left + WIDTH * v)], source_etype=F32),
                        ir.Constant(I32, 4), masks[j][v], zero]) for v in range(nv)]
                    offset = b.add(tap, const(i * kw + j))
                    out = []
                    for r in range(ROWS):
                        weight = splat(b, b.load(gep(b, filters[r], offset), typ=F32))
                        out += [b.call(self.fma, [weight, inputs[v], values[r * nv + v]])
                                for v in range(nv)]
                    values = out
                loop.next = values
            summed = b.block
            b.branch(merged)
            b.position_at_end(merged)
            phis = []
            for old, new in zip(acc, loop.values):
                phi = b.phi(V16)
                phi.add_incoming(old, before)
                phi.add_incoming(new, summed)
                phis.append(phi)
            acc = phis
        stored = [self.lanes_mask(b, b.add(ox, const(WIDTH * v)), const(ow)) for v in range(nv)]
        nothing = ir.Constant(MASK, [0] * WIDTH)
        out_row = gep(b, y, b.add(b.mul(oy, const(ow)), ox))
        for r in range(ROWS):
            inside = b.icmp_signed("<", const(r), rows)
            # plain: the rows past the last filter are never stored (an empty mask)
            channel = b.gep(out_row, [const(r * oh * ow)], source_etype=F32)
            for v in range(nv):
                b.call(self.mstore, [acc[r * nv + v],
                                     b.gep(channel, [const(WIDTH * v)], source_etype=F32),
                                     ir.Constant(I32, 4),
                                     b.select(inside, stored[v], nothing)])
        b.ret_void()
        return fn

    def driver(self) -> None:
        s = self.spec
        oh, ow = s.out_hw
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [I64, I64] + [PTR] * (3 + s.extras)),
                         FUNCTION_NAME)
        begin, end, x, w, y, *extras = fn.args
        for arg in (x, w, y, *extras):
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        columns = -(-ow // (WIDTH * s.nv))
        with counted_loop(b, begin, end, "n") as n:
            image_x = gep(b, x, b.mul(n, const(s.channels * s.height * s.width)))
            image_y = gep(b, y, b.mul(n, const(s.filters * oh * ow)))
            operands = [gep(b, e, b.mul(n, const(s.filters * oh * ow))) if per_image else e
                        for e, per_image in zip(extras, s.per_image)]
            with counted_loop(b, const(0), const(-(-s.filters // ROWS)), "o") as block:
                first = b.mul(block, const(ROWS))
                rows = b.sub(const(s.filters), first)
                rows = b.select(b.icmp_signed("<", rows, const(ROWS)), rows, const(ROWS))
                filters = gep(b, w, b.mul(first, const(s.channels * s.kernel[0] * s.kernel[1])))
                outputs = gep(b, image_y, b.mul(first, const(oh * ow)))
                with counted_loop(b, const(0), const(oh), "oy") as oy:
                    with counted_loop(b, const(0), const(columns), "ox") as t:
                        ox = b.mul(t, const(WIDTH * s.nv))
                        b.call(self.tile_fn, [image_x, filters, outputs, oy, ox, rows])
                        if self.epilogues is not None:
                            self.epilogue_call(b, image_y, first, oy, ox, rows, operands)
        b.ret_void()

    def epilogue_call(self, b: ir.IRBuilder, image_y, first, oy, ox, rows, operands) -> None:
        """The epilogue over the tile just stored: C is the image's ``[Cout, OH *
        OW]``, the tile its rows first.. and the columns of output row `oy` from
        `ox`."""
        oh, ow = self.spec.out_hw
        nr = WIDTH * self.spec.nv
        width = b.sub(const(ow), ox)
        args = [image_y, const(oh * ow), first, b.add(b.mul(oy, const(ow)), ox), rows,
                b.select(b.icmp_signed("<", width, const(nr)), width, const(nr)), *operands]
        with b.if_else(b.icmp_signed(">=", width, const(nr))) as (full, edge):
            with full:
                b.call(self.epilogues[0], args)
            with edge:
                b.call(self.epilogues[1], args)


# ---------------------------------------------------------------- calling

class Conv:
    """``conv(x, w, out=None, operands=())``: a `ConvSpec`'s convolution of float32
    arrays, into `out` when given. Everything is checked before the code runs:
    `sizes` says whether the code takes the arrays as they are (a caller with a
    fallback asks it, then calls `run`)."""

    def __init__(self, spec: ConvSpec, compiler: Compiler | None = None):
        compiler = compiler or default_compiler()
        self.spec = spec
        self._x = (spec.channels, spec.height, spec.width)
        self._w = (spec.filters, spec.channels, *spec.kernel)
        self._y = (spec.filters, *spec.out_hw)
        self._fn = compiler.code(spec).function(2 + 3 + spec.extras)

    def sizes(self, x, w, out=None) -> int | None:
        """The batch if the code takes these arrays as they are: C-contiguous float32
        x of ``[N, C, H, W]`` and w of ``[Cout, C, kH, kW]``, and `out` None or a
        writable C-contiguous float32 ``[N, Cout, OH, OW]`` sharing no memory with
        them (the code's pointers are ``noalias``); else None."""
        if not (type(x) is np.ndarray and type(w) is np.ndarray
                and x.dtype == F32_DTYPE and w.dtype == F32_DTYPE
                and x.ndim == 4 and x.shape[1:] == self._x and w.shape == self._w
                and x.flags.c_contiguous and w.flags.c_contiguous):
            return None
        n = x.shape[0]
        if out is not None and not (
                type(out) is np.ndarray and out.dtype == F32_DTYPE
                and out.shape == (n, *self._y) and out.flags.c_contiguous
                and out.flags.writeable
                and not np.may_share_memory(out, x) and not np.may_share_memory(out, w)):
            return None
        return n

    def extras_fit(self, extras, n: int, out) -> bool:
        """Whether the code takes `extras` as the epilogue's operands for a batch of
        `n` into `out`: C-contiguous float32 arrays of their kinds' sizes, none
        sharing memory with `out`."""
        epilogue = self.spec.epilogue
        kinds = () if epilogue is None else epilogue.kinds
        if len(extras) != len(kinds):
            return False
        cout, oh, ow = self._y
        for e, kind, per_image in zip(extras, kinds, self.spec.per_image):
            if not (type(e) is np.ndarray and e.dtype == F32_DTYPE and e.flags.c_contiguous
                    and (out is None or not np.may_share_memory(out, e))):
                return False
            size = {"full": (n if per_image else 1) * cout * oh * ow, "row": oh * ow,
                    "column": cout, "scalar": 1}[kind]
            if e.size != size:
                return False
        return True

    def run(self, x: np.ndarray, w: np.ndarray, out: np.ndarray | None, n: int,
            extras: tuple[np.ndarray, ...] = ()) -> np.ndarray:
        """The convolution of arrays `sizes` (and `extras_fit`) accepted, into `out`
        if not None."""
        if out is None:
            out = np.empty((n, *self._y), F32_DTYPE)
        if not n:
            return out
        arrays = (x, w, out, *extras)
        work = n * math.prod(self._y) * math.prod(self._w[1:]) // WORK_PER_ELEMENT
        call_rows(self._fn, n, work, tuple(address(a) for a in arrays), arrays)
        return out

    def __call__(self, x, w, out=None, operands: tuple = ()):
        """The checked call (ShapeError for arrays the code does not take)."""
        n = self.sizes(x, w, out)
        if n is None or not self.extras_fit(tuple(operands), n, out):
            raise ShapeError(f"conv2d: the generated code takes C-contiguous float32 "
                             f"x [N, {', '.join(map(str, self._x))}], w {list(self._w)} "
                             f"and the epilogue's operands, and an output sharing no memory "
                             f"with them")
        return self.run(x, w, out, n, tuple(operands))


# ---------------------------------------------------------------- conv2d anchors

def conv_spec(inner: Operation | None, compiler: Compiler | None = None,
              epilogue: Epilogue | None = None, per_image: tuple[bool, ...] = ()
              ) -> ConvSpec | None:
    """The `ConvSpec` of `inner` if the generated code may run it: a float32 conv2d
    of stride 1, dilation 1 and one group, on an AVX-512 host; else None."""
    compiler = compiler or default_compiler()
    if inner is None or inner.name != "conv2d" \
            or "+avx512f" not in compiler.target.features.split(","):
        return None
    x, w = (v.type for v in inner.operands)
    a = inner.attrs
    if x.dtype is not dtypes.float32 or w.dtype is not dtypes.float32 \
            or tuple(a["stride"]) != (1, 1) or tuple(a["dilation"]) != (1, 1) \
            or a["groups"] != 1 or not w.is_static or not all(isinstance(d, int)
                                                               for d in x.shape[1:]):
        return None
    spec = ConvSpec(x.shape[1], w.shape[0], x.shape[2], x.shape[3], tuple(w.shape[2:]),
                    tuple(a["padding"]), epilogue, per_image)
    return spec if _pays(spec) else None


def _pays(spec: ConvSpec) -> bool:
    """Whether the direct code beats NumPy's im2col and BLAS: when at least 3 lanes
    in 4 of its tiles hold output columns, and for a 1x1 kernel (whose im2col is the
    input itself: NumPy's path is one BLAS product) all of them. Measured on batches
    of 8 (time against NumPy's): 3x3 over 32x32 images 0.31, 28x28 0.50, 16x16
    0.74-1.00 (16 to 256 channels), 14x14 0.77, 12x12 0.89, 8x8 1.52, 7x7 1.72; 1x1
    over 32x32 0.88, over 14x14 1.21."""
    ow = spec.out_hw[1]
    lanes = WIDTH * spec.nv
    used = ow / (lanes * -(-ow // lanes))
    return used >= 0.75 and (used == 1 or spec.kernel != (1, 1))


def operand_kind(shape, spec: ConvSpec, batch) -> tuple[str, bool] | None:
    """An epilogue operand's kind (the GEMM's `EPILOGUE_KINDS`, C being one image's
    ``[Cout, OH * OW]``) and whether it holds one array per image, from its shape
    (broadcast against the output's ``[N, Cout, OH, OW]``); None for another."""
    full = (batch, spec.filters, *spec.out_hw)
    shape = (1,) * (4 - len(shape)) + tuple(shape)
    if len(shape) != 4:
        return None
    if all(d == 1 for d in shape):
        return "scalar", False
    if shape[:2] == (1, spec.filters) and shape[2:] == (1, 1):
        return "column", False
    if shape[:2] == (1, 1) and shape[2:] == full[2:]:
        return "row", False
    if shape[1:] == full[1:] and shape[0] in (1, batch):
        return "full", shape[0] != 1
    return None


def anchor_kernel(inner: Operation, kernel: Callable, out_kernel: Callable,
                  compiler: Compiler | None = None) -> Callable | None:
    """For a conv2d `inner` the code may run (`conv_spec`): ``run(x, w, out=None)``,
    the generated convolution for arrays it takes as they are, the NumPy `kernel`
    and `out_kernel` (with a buffer) for the others; None for other ops."""
    spec = conv_spec(inner, compiler)
    if spec is None:
        return None
    return _dispatching(Conv(spec, compiler), kernel, out_kernel)


def _dispatching(conv: "Conv", kernel: Callable, out_kernel: Callable,
                 filters: Callable = lambda w: w) -> Callable:
    """``run(x, w, out=None)``: `conv` of `x` and ``filters(w)`` where it takes the
    arrays as they are, else the NumPy `kernel` (`out_kernel` with a buffer) of `x`
    and `w`; its ``__wrapped__`` falls back to the kernels' own ``__wrapped__``."""
    def dispatch(numpy, numpy_out):
        def run(x, w, out=None):
            used = filters(w) if isinstance(w, np.ndarray) else w
            n = conv.sizes(x, used, out)
            if n is not None:
                return conv.run(x, used, out, n)
            return numpy(x, w) if out is None else numpy_out(x, w, out=out)
        return run
    run = dispatch(kernel, out_kernel)
    run.__wrapped__ = dispatch(getattr(kernel, "__wrapped__", kernel),
                               getattr(out_kernel, "__wrapped__", out_kernel))
    return run


def fused_kernel(inner: Operation, spec, entering, compiler: Compiler | None = None
                 ) -> Callable | None:
    """For a fused op whose anchor `inner` is a conv2d the code runs and whose
    elementwise body (`spec`, a `KernelSpec`: input 0 the anchor's result, the
    others of `entering`'s types) has one float32 result, stored in place of the
    anchor's: ``run(anchor_operands, operands, out) -> result or None``, the
    convolution with the body applied by each tile, into `out` if not None; None
    (the caller runs the anchor, then the body) for arrays the code does not take as
    they are. None instead of a run for other anchors and bodies."""
    if len(spec.outputs) != 1 or spec.outputs[0] < len(spec.inputs) or spec.inplace \
            or any(d != "f32" for d in spec.inputs) \
            or any(i.dtype not in BODY_DTYPES or can_fail(i.op, i.dtype) for i in spec.body):
        return None
    plain = conv_spec(inner, compiler)
    if plain is None:
        return None
    batch = inner.operands[0].type.shape[0]
    kinds = [operand_kind(t.shape, plain, batch) for t in entering[1:]]
    if None in kinds:
        return None
    conv = Conv(conv_spec(inner, compiler, Epilogue(tuple(k for k, _ in kinds), spec.body,
                                                      spec.outputs[0]),
                          tuple(p for _, p in kinds)), compiler)

    def run(anchor_operands, operands, out, top=None):
        x, w = anchor_operands
        n = conv.sizes(x, w, out)
        if n is None or not conv.extras_fit(operands, n, out):
            return None
        return conv.run(x, w, out, n, tuple(operands))
    return run


def grad_input_kernel(op: Operation, compiler: Compiler | None = None) -> Callable | None:
    """For a standalone ``conv2d_grad_input(g, w)`` of stride 1, dilation 1 and one
    group (the input gradient of a convolution the code runs, backward in training):
    ``run(g, w, out=None)``, the convolution of `g` with the filters transposed and
    flipped, padded by what the forward's padding leaves of the kernel (``kH - 1 -
    top``...): each input pixel sums the output pixels its windows reached. The
    generated convolution where it pays (`conv_spec`'s rules) and the padding is
    not wider than the kernel, the op's NumPy kernels otherwise; None for other
    ops."""
    compiler = compiler or default_compiler()
    a = op.attrs
    g, w = (v.type for v in op.operands)
    if op.name != "conv2d_grad_input" or g.dtype is not dtypes.float32 \
            or tuple(a["stride"]) != (1, 1) or tuple(a["dilation"]) != (1, 1) \
            or a["groups"] != 1 or not w.is_static \
            or not all(isinstance(d, int) for d in g.shape[1:]) \
            or "+avx512f" not in compiler.target.features.split(","):
        return None
    (kh, kw), (top, bottom, left, right) = w.shape[2:], a["padding"]
    padding = (kh - 1 - top, kh - 1 - bottom, kw - 1 - left, kw - 1 - right)
    spec = ConvSpec(w.shape[0], w.shape[1], g.shape[2], g.shape[3], (kh, kw), padding)
    if min(padding) < 0 or spec.out_hw != tuple(a["input_hw"]) or not _pays(spec):
        return None
    return _dispatching(Conv(spec, compiler), *_numpy_kernels(op), _transposed_flipped)


def _transposed_flipped(w: np.ndarray) -> np.ndarray:
    """Filters [out, in, kH, kW] as those of the input gradient's convolution: [in,
    out, kH, kW], each flipped in both spatial axes."""
    return np.ascontiguousarray(w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])


def _numpy_kernels(op: Operation) -> tuple[Callable, Callable]:
    """`op`'s NumPy kernel and out kernel with its attributes bound, each with a
    ``__wrapped__`` calling the unsilenced kernel (an op without an out kernel gets
    one copying its kernel's result)."""
    opdef = lookup(op.name, op.loc)
    bound = []
    for kernel in (opdef.kernel, opdef.out_kernel or _copying(opdef.kernel)):
        made = functools.partial(kernel, **op.attrs)
        made.__wrapped__ = functools.partial(getattr(kernel, "__wrapped__", kernel),
                                             **op.attrs)
        bound.append(made)
    return bound[0], bound[1]


def _copying(kernel: Callable) -> Callable:
    """An out kernel from `kernel`: its result copied into the buffer."""
    def out_kernel(*arrays, out, **attrs):
        out[...] = kernel(*arrays, **attrs)
        return out
    return out_kernel


def conv_kernel(op: Operation, compiler: Compiler | None = None) -> Callable | None:
    """For a standalone conv2d (backend ``llvm``): `anchor_kernel`'s dispatch between
    the generated convolution and the op's NumPy kernels; None for other ops."""
    return anchor_kernel(op, *_numpy_kernels(op), compiler)
