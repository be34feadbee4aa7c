"""`LLVMLowering`: what ``backend="llvm"`` runs instead of the NumPy kernels.

The executor (`irflow.codegen.executor`) asks it, op by op, for a kernel:

- a ``fused`` op gets its `FusedKernel` (the scalar body, reductions and the
  anchor's epilogue compiled for the host), whose calls below `MIN_ELEMENTS`
  elements run the op's own NumPy evaluator, the NumPy backend's step (an op whose
  static sizes are all below it keeps that evaluator and compiles nothing);
- a standalone elementwise op whose NumPy kernel is slow (`COMPILED_OPS`: ``erf``,
  which NumPy has no ufunc for and the registry computes in several array passes)
  gets a one-op kernel, used for arrays of at least `MIN_ELEMENTS` elements (below
  that, the ctypes call and the checks cost more than NumPy's loop). Measured on
  [1024,1024] float32 (AVX-512): erf 112 ms in NumPy, 3.7 ms compiled; NumPy's
  SIMD loops win for exp, log, tanh (0.3-0.4 ms against 0.9-1.2), sin and cos
  (0.56-0.60 ms against 0.69-0.80 float32-native, for |x| <= 100) and pow (0.5-0.7
  against 4.6-6.2), and tie for sigmoid, sqrt and add, so those stay (in a fused
  body, sin and cos are compiled: ``sin(x) cos(x) + x`` takes 0.87-1.04 ms against
  NumPy's 1.61-1.98);
- a standalone reduction whose every call is small (static sizes below
  `MIN_ELEMENTS`: a loss's mean) gets a one-op fused body compiled for size
  (`jit.SMALL`): after a training step's big products, NumPy's reduction of 256
  floats took 19-53 µs, the compiled one 9;
- a standalone float32 matmul of two matrices gets the generated GEMM
  (`irflow.codegen.llvm.gemm.matmul_kernel`) from 8 rows and 2^20 multiply-adds,
  NumPy's matmul below that (as a fused op's matmul anchor does);
- a standalone float32 conv2d of stride 1, dilation 1 and one group, over images
  wide enough for its tiles, gets the generated direct convolution
  (`irflow.codegen.llvm.conv.conv_kernel`), as a fused op's conv2d anchor does, and
  so does its input gradient (`conv2d_grad_input`: the convolution with the filters
  transposed and flipped, `conv.grad_input_kernel`);
- everything else, and anything the backend has no code for (a dtype, an op, an
  anchor that is not a contraction), keeps the registry's NumPy kernel: the
  fallback is per op, never an error and never a different answer.

A one-op kernel whose result the plan puts in the arena is called with ``out=`` its
buffer and writes there; when that buffer is an operand's (the op runs in place)
NumPy's out kernel writes it, since the compiled kernel's pointers are ``noalias``.

Kernels are compiled when the plan is built, through the compiler's memory and
disk caches, so a call never compiles.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ...ir.core import Block, Function, Operation, Region
from ...ir.registry import lookup
from ...ir.traits import Elementwise, Reduction
from ...ir.types import TensorType, numel
from ..executor import Lowering
from ..native import Array, Check
from .compiler import Compiler, default_compiler
from .elementwise import Unsupported, lower_elementwise
from .conv import conv_kernel, grad_input_kernel
from .fused import MIN_ELEMENTS, REDUCTIONS, FusedKernel
from .gemm import matmul_kernel
from .pool import pool_kernel
from .sequence import compile_sequence
from .whole import compile_whole

REGION_OPS = {"fused": FusedKernel}
"""The ops with regions the backend compiles, by name (ops know no backend)."""
COMPILED_OPS = frozenset({"erf"})
GENERATED = {"matmul": matmul_kernel, "conv2d": conv_kernel,
             "conv2d_grad_input": grad_input_kernel, "max_pool2d": pool_kernel,
             "max_pool2d_grad": pool_kernel}
"""The ops whose kernels are generated code of their own (a GEMM, a convolution)."""


class LLVMLowering(Lowering):
    """The LLVM backend's kernels for a plan (see the module docstring)."""

    def __init__(self, compiler: Compiler | None = None, min_elements: int = MIN_ELEMENTS):
        """`min_elements`: the smallest arrays compiled kernels run on (smaller ones
        go to NumPy; tests set 0)."""
        self.compiler = compiler or default_compiler()
        self.min_elements = min_elements

    def evaluator(self, op: Operation) -> Callable | None:
        make = REGION_OPS.get(op.name)
        if make is None or make.declines(op, self.min_elements):
            return None
        try:
            return make(op, self.compiler, self.min_elements).evaluator()
        except Unsupported:
            return None

    def out_evaluator(self, op: Operation, into: tuple[bool, ...]) -> Callable | None:
        make = REGION_OPS.get(op.name)
        if make is None:
            return None
        if make.declines(op, self.min_elements):
            return self._small_native(op, into, make)
        try:
            return make(op, self.compiler, self.min_elements).out_evaluator(into)
        except Unsupported:
            return None

    def _small_native(self, op: Operation, into: tuple[bool, ...], make) -> Callable | None:
        """For an op too small for compiled code, of static sizes, every result given
        a buffer: its step, NumPy's out evaluator, with a ``native`` that makes the
        description of its code compiled for size when a native run with steps of
        compiled code asks for it (only then is anything compiled): between the
        large steps of a training step, there a call costs no Python. From then on
        the step runs that code too, so the op's results are the same bits whether
        the run takes a call or leaves it to the steps. None for other ops (their
        own evaluator)."""
        if not all(into):
            return None
        step = [lookup(op.name, op.loc).region_op.out_evaluator(op, into)]

        def run(args, regions, outs):
            return step[0](args, regions, outs)

        def native():
            try:
                kernel = make(op, self.compiler, self.min_elements)
                described = kernel.native(into)
            except Unsupported:
                return None
            if described is not None:
                step[0] = kernel.compiled_out_evaluator(into)
            return described
        run.native = native
        return run

    def function(self, fn: Function) -> Callable | None:
        return compile_whole(fn, self.compiler)

    def sequence(self, steps, types, owned, temporaries) -> Callable[[list], int] | None:
        return compile_sequence(steps, types, owned, temporaries, self.compiler)

    def kernel(self, op: Operation) -> Callable | None:
        if op.name == "assert":
            return _checked_assert(op)
        generated = GENERATED.get(op.name)
        if generated is not None:
            # a fused op's anchor is run by its FusedKernel: its region's plan (for
            # the NumPy evaluator) needs no code of its own to compile
            return None if _in_fused_op(op) else generated(op, self.compiler)
        opdef = lookup(op.name, op.loc)
        if opdef.has(Reduction):
            return self._small_reduction(op)
        if op.name not in COMPILED_OPS or not opdef.has(Elementwise) or op.result.type.rank == 0:
            return None
        inputs = list(dict.fromkeys(op.operands))
        try:
            spec, domain, _ = lower_elementwise([op], inputs, [op.result])
        except Unsupported:
            return None
        kernel = self.compiler.kernel(spec, domain)
        numpy, numpy_out = opdef.kernel, opdef.out_kernel
        attrs, least = op.attrs, self.min_elements
        # the operand each kernel input is (x * x reads one array)
        first = [list(op.operands).index(v) for v in inputs]
        repeated = len(first) != len(op.operands)

        def run(*arrays, out=None):
            if out is not None and (max(a.size for a in arrays) < least or any(
                    np.may_share_memory(out, a) for a in arrays)):
                # in place: the kernel's pointers are noalias, so NumPy writes it
                return numpy_out(*arrays, out=out, **attrs)
            if out is None and max(a.size for a in arrays) < least:
                return numpy(*arrays, **attrs)
            if repeated:
                arrays = [arrays[k] for k in first]
            return kernel(*arrays, out=None if out is None else [out])[0]
        return run

    def _small_reduction(self, op: Operation) -> Callable | None:
        """A reduction outside any fused op whose every call is small (static sizes
        below `min_elements`), as a one-op fused body compiled for size, since
        NumPy's reduction costs several times that in a training step, after its big
        products have evicted the code (a loss's mean of 256 floats: 19-53 µs); None
        for other reductions and what the backend has no code for."""
        x = op.operand(0).type
        if not (x.is_static and 0 < numel(x.shape) < self.min_elements) or _in_fused_op(op) \
                or op.name not in REDUCTIONS:
            return None
        axis = op.attrs["axis"]  # canonical: None (every axis) or a tuple
        axes = tuple(range(x.rank)) if axis is None else tuple(axis)
        if not axes:
            return None
        # over an argument of its own, so that the op's operand gains no use
        outside = Block([x], ["x"])
        body = Block([TensorType(x.dtype)], ["x"])
        reduce = Operation("reduce", [body.args[0]], [TensorType(op.result.type.dtype)],
                           {"kind": op.name}, loc=op.loc)
        body.append(reduce)
        body.append(Operation("yield", [reduce.result], loc=op.loc))
        fused = Operation("fused", [outside.args[0]], [op.result.type], {"axes": axes},
                          [Region([body])], loc=op.loc)
        try:
            kernel = FusedKernel(fused, self.compiler, self.min_elements)
        except Unsupported:
            return None
        evaluate, into = kernel.evaluator(), kernel.out_evaluator((True,))

        def run(x, out=None):
            return evaluate([x], ())[0] if out is None else into([x], (), [out])[0]
        run.native = getattr(into, "native", None)  # its operand and result, as the step's
        return run


def _checked_assert(op: Operation) -> Callable:
    """An ``assert``'s own kernel, its attributes bound, described as a `Check` of its
    operand, so a native run checks it (and its step raises the error)."""
    opdef = lookup(op.name, op.loc)
    kernel = functools.partial(opdef.kernel, **op.attrs)
    kernel.native = (Check(Array(0)),)
    return kernel


def _in_fused_op(op: Operation) -> bool:
    """Whether `op` is in a region of a ``fused`` op."""
    region = op.parent.parent if op.parent is not None else None
    return region is not None and region.parent is not None and region.parent.name == "fused"
