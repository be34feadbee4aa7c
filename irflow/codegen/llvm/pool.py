"""Max pooling and its gradient as generated LLVM code.

NumPy has no pooling of its own: `irflow.ops.nn` folds one strided view per kernel
tap into the result (an ``np.maximum`` per tap), and the gradient chooses each
window's first maximum tap by tap, several array passes each (7-9 ms for the
gradient of a 2x2 pool of [32, 32, 32, 32] float32). Here one loop visits each
window once: the forward folds its taps with NumPy's maximum (a NaN wins), the
gradient finds the first maximum in row-major window order (``argmax``: the first
NaN, else the first of equal values; padding counts as -inf, and a window of no
valid cell never occurs: the type rule refuses it) and adds the window's cotangent
there.

The function is ``void kernel(i64 begin, i64 end, ptr x, ptr y)`` (the forward:
``y`` the pooled planes) or ``void kernel(i64 begin, i64 end, ptr x, ptr g, ptr
dx)`` (the gradient) over the planes ``[begin, end)`` (a plane is one image's
channel), so `call_rows` can split the planes across threads; every size but the
number of planes is static (`PoolSpec`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np
from llvmlite import ir

from ...ir import dtypes
from ...ir.core import Operation
from .compiler import Compiler, default_compiler
from .conv import _numpy_kernels
from .jit import Optimization
from .kernel import FUNCTION_NAME, address, call_rows
from .loops import counted_loop
from .mathlib import Math
from .scalar import ScalarEmitter

I64 = ir.IntType(64)
PTR = ir.PointerType()
TYPES = {"f32": ir.FloatType(), "f64": ir.DoubleType()}
WORK_PER_ELEMENT = 16  # taps of `call_rows`' work units


@dataclass(frozen=True)
class PoolSpec:
    """One generated max pooling (or its gradient, `grad`): the plane's static
    height and width, the kernel, stride and padding (top, bottom, left, right), the
    output plane's size and the dtype (plain data, the compiler's cache key)."""

    dtype: str
    height: int
    width: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    out_hw: tuple[int, int]
    grad: bool = False
    optimization: ClassVar[Optimization] = Optimization(level=2, unroll=True)

    def llvm_ir(self, fma: bool) -> str:
        return _Generator(self, fma).module()


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


class _Generator:
    def __init__(self, spec: PoolSpec, fma: bool):
        self.spec = spec
        self.m = ir.Module(name="pool")
        self.has_fma = fma
        self.t = TYPES[spec.dtype]

    def module(self) -> str:
        s = self.spec
        arrays = 3 if s.grad else 2
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [I64, I64] + [PTR] * arrays),
                         FUNCTION_NAME)
        begin, end, *pointers = fn.args
        for p in pointers:
            p.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        emitter = ScalarEmitter(b, Math(b, self.has_fma))
        emitter.ins, emitter.out = (s.dtype, s.dtype), s.dtype
        plane, out_plane = s.height * s.width, s.out_hw[0] * s.out_hw[1]
        with counted_loop(b, begin, end, "p") as p:
            x = self.at(b, pointers[0], b.mul(p, i64(plane)))
            if s.grad:
                g = self.at(b, pointers[1], b.mul(p, i64(out_plane)))
                dx = self.at(b, pointers[2], b.mul(p, i64(plane)))
                with counted_loop(b, i64(0), i64(plane), "z") as k:
                    b.store(ir.Constant(self.t, 0.0), self.at(b, dx, k))
            else:
                y = self.at(b, pointers[1], b.mul(p, i64(out_plane)))
            with counted_loop(b, i64(0), i64(s.out_hw[0]), "oy") as oy:
                with counted_loop(b, i64(0), i64(s.out_hw[1]), "ox") as ox:
                    cell = b.add(b.mul(oy, i64(s.out_hw[1])), ox)
                    if s.grad:
                        self.first_maximum(b, x, oy, ox, self.at(b, g, cell), dx)
                    else:
                        b.store(self.maximum(b, emitter, x, oy, ox), self.at(b, y, cell))
        b.ret_void()
        return str(self.m)

    def at(self, b: ir.IRBuilder, pointer, index):
        return b.gep(pointer, [index], inbounds=True, source_etype=self.t)

    def taps(self, b: ir.IRBuilder, oy, ox):
        """Per kernel tap, in row-major order: (whether it is inside the plane, its
        index in the plane, clamped to 0 outside)."""
        s = self.spec
        (kh, kw), (sh, sw), (top, _, left, _) = s.kernel, s.stride, s.padding
        out = []
        for i in range(kh):
            row = b.add(b.mul(oy, i64(sh)), i64(i - top))
            row_in = b.and_(b.icmp_signed(">=", row, i64(0)),
                            b.icmp_signed("<", row, i64(s.height)))
            for j in range(kw):
                col = b.add(b.mul(ox, i64(sw)), i64(j - left))
                inside = b.and_(row_in, b.and_(b.icmp_signed(">=", col, i64(0)),
                                               b.icmp_signed("<", col, i64(s.width))))
                index = b.add(b.mul(row, i64(s.width)), col)
                out.append((inside, b.select(inside, index, i64(0))))
        return out

    def value(self, b: ir.IRBuilder, x, inside, index):
        """The tap's value, -inf outside the plane."""
        return b.select(inside, b.load(self.at(b, x, index), typ=self.t),
                        ir.Constant(self.t, -math.inf))

    def maximum(self, b: ir.IRBuilder, emitter: ScalarEmitter, x, oy, ox):
        top = ir.Constant(self.t, -math.inf)
        for inside, index in self.taps(b, oy, ox):
            top = emitter.emit("maximum", [top, self.value(b, x, inside, index)],
                               [self.spec.dtype] * 2, self.spec.dtype, {})
        return top

    def first_maximum(self, b: ir.IRBuilder, x, oy, ox, cotangent, dx) -> None:
        """Add the window's cotangent at its first maximum (the first NaN, else the
        first of the largest values; a padding position drops it)."""
        taps = self.taps(b, oy, ox)
        best, best_inside, best_index = None, None, None
        for inside, index in taps:
            v = self.value(b, x, inside, index)
            if best is None:
                best, best_inside, best_index = v, inside, index
                continue
            takes = b.or_(b.fcmp_ordered(">", v, best),
                          b.and_(b.fcmp_unordered("uno", v, v),
                                 b.fcmp_ordered("ord", best, best)))
            best = b.select(takes, v, best)
            best_inside = b.select(takes, inside, best_inside)
            best_index = b.select(takes, index, best_index)
        with b.if_then(best_inside):
            at = self.at(b, dx, best_index)
            b.store(b.fadd(b.load(at, typ=self.t), b.load(cotangent, typ=self.t)), at)


def _spec(op: Operation, grad: bool, compiler: Compiler) -> PoolSpec | None:
    x = op.operands[0].type
    if x.dtype not in (dtypes.float32, dtypes.float64) or x.rank != 4 \
            or not all(isinstance(d, int) for d in x.shape[2:]):
        return None
    a = op.attrs
    out = op.result.type.shape if not grad else op.operands[1].type.shape
    if not all(isinstance(d, int) for d in out[2:]):
        return None
    return PoolSpec(x.dtype.short, x.shape[2], x.shape[3], tuple(a["kernel_size"]),
                    tuple(a["stride"]), tuple(a["padding"]), tuple(out[2:]), grad)


class Pool:
    """The checked call of a `PoolSpec`'s code: ``pool(x[, g], out=None)`` for
    C-contiguous arrays of the spec's dtype and plane sizes (None where the code
    does not take them: the caller's NumPy kernel answers)."""

    def __init__(self, spec: PoolSpec, compiler: Compiler):
        self.spec = spec
        self.dtype = np.dtype({"f32": np.float32, "f64": np.float64}[spec.dtype])
        self._fn = compiler.code(spec).function(2 + (3 if spec.grad else 2))

    def _fits(self, a, hw) -> bool:
        return (type(a) is np.ndarray and a.dtype == self.dtype and a.ndim == 4
                and a.shape[2:] == hw and a.flags.c_contiguous)

    def run(self, arrays: list, out):
        s = self.spec
        x = arrays[0]
        hw = (s.height, s.width)
        if not self._fits(x, hw):
            return None
        planes = x.shape[0] * x.shape[1]
        if s.grad and not (self._fits(arrays[1], s.out_hw)
                           and arrays[1].shape[:2] == x.shape[:2]):
            return None
        shape = x.shape if s.grad else (*x.shape[:2], *s.out_hw)
        if out is None:
            out = np.empty(shape, self.dtype)
        elif not (type(out) is np.ndarray and out.dtype == self.dtype and out.shape == shape
                  and out.flags.c_contiguous and out.flags.writeable
                  and not any(np.may_share_memory(out, a) for a in arrays)):
            return None
        if planes:
            work = planes * s.out_hw[0] * s.out_hw[1] * s.kernel[0] * s.kernel[1]
            held = (*arrays, out)
            call_rows(self._fn, planes, work // WORK_PER_ELEMENT,
                      tuple(address(a) for a in held), held)
        return out


def pool_kernel(op: Operation, compiler: Compiler | None = None) -> Callable | None:
    """For a ``max_pool2d`` or ``max_pool2d_grad`` of float32 or float64 planes of
    static sizes: ``run(x[, g], out=None)``, the generated code for arrays it takes
    as they are, the op's NumPy kernels otherwise; None for other ops."""
    if op.name not in ("max_pool2d", "max_pool2d_grad"):
        return None
    compiler = compiler or default_compiler()
    spec = _spec(op, op.name == "max_pool2d_grad", compiler)
    if spec is None:
        return None
    pool = Pool(spec, compiler)
    numpy, numpy_out = _numpy_kernels(op)

    def dispatch(kernel, out_kernel):
        def run(*arrays, out=None):
            result = pool.run(list(arrays), out)
            if result is not None:
                return result
            return kernel(*arrays) if out is None else out_kernel(*arrays, out=out)
        return run
    run = dispatch(numpy, numpy_out)
    run.__wrapped__ = dispatch(numpy.__wrapped__, numpy_out.__wrapped__)
    return run
