"""Kernels for ``fused`` ops (`irflow.ops.fused`): the scalar body over the domain,
reductions along the op's axes, and the anchor (a matmul) before its epilogue.

`lower_fused(op)` makes a `FusedKernel`, which runs the anchor (if any) by its
NumPy kernel, then one compiled function over the domain:

- **No reduced axes.** When every result spans the whole domain the body is an
  elementwise `KernelSpec` (`irflow.codegen.llvm.kernel`): merged loops, one flat
  vectorized loop where broadcasting allows.
- **Reductions** (a `FusedSpec`). The kernel loops over the *rows* (the indices of
  the unreduced axes, outermost first; a full reduction has one row). Per row,
  each ``reduce`` of the body, in order, is a *phase*: one loop over the reduced
  axes computes the element values the reduction reads and stores them, in loop
  order, into a row buffer; a second loop reduces that buffer with independent
  vector accumulators (so it vectorizes without reassociating anything LLVM may
  not: the order of the sum is fixed by the code, as NumPy's pairwise order is
  by its loops). Its result is a *row value* the later phases read as a scalar.
  A last loop computes and stores the results that vary along the reduced axes;
  results that do not (a row's mean) are stored once per row. An element value
  that a later phase needs again (``x - mean`` in layer norm) is stored into a
  row buffer of its own by the phase that computes it and loaded after, rather
  than recomputed. Row buffers live in a scratch array the caller allocates per
  call and per part of a split call (so threads never share one), ``buffers *
  reduced elements`` of 8 bytes; a row of 1024 floats keeps all of them in L1.
- **Accumulation.** ``sum`` and ``mean`` of float32 accumulate in float64 (more
  accurate than NumPy's pairwise float32 sum, so results agree to float32
  rounding whatever the order); every other reduction accumulates in its dtype
  (integer sums wrap as NumPy's do, exactly). ``max``/``min`` propagate NaN;
  ``mean`` divides by the element count (NaN over none, as NumPy); ``max`` and
  ``min`` over no elements are the interpreter's error, raised by running the
  NumPy evaluator instead.

Everything is checked before code runs: each array's dtype, rank and sizes against
the domain (no input can make the code read or write out of bounds); results and
scratch are allocated by the caller for the checked sizes.
"""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...errors import IrflowError, ShapeError
from ...ir.core import Operation, Value
from ...ir.registry import lookup
from ...ir.types import TensorType
from .compiler import Compiler, default_compiler
from .elementwise import Unsupported
from .kernel import (FUNCTION_NAME, NUMPY_DTYPES, Instr, Kernel, KernelSpec, _advance,
                     _strides, call_rows, plan_domain)
from .loops import carried_loop, counted_loop
from .mathlib import Math
from .scalar import EMITTERS, LLVM_TYPES, MEMORY_TYPES, ScalarEmitter, can_fail, is_float

I64 = ir.IntType(64)
F64 = ir.DoubleType()
REDUCTIONS = ("sum", "prod", "mean", "max", "min", "any", "all")
VECTOR_BYTES = 64   # the accumulators of a reduction: one 512-bit vector's worth
# Below this many elements the ctypes call and the checks cost more than NumPy's
# loops (measured: a matmul epilogue on [1,64] runs in 8.7 µs by NumPy, 12.5 µs compiled)
MIN_ELEMENTS = 4096
BYTES = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}


# ---------------------------------------------------------------- the spec

@dataclass(frozen=True)
class FusedSpec:
    """A fused body with reductions, as plain hashable data (the compiler's key).

    Values are numbered as in `KernelSpec`: the inputs, then one per instruction
    (``reduce`` has attribute ``kind``). `masks[k][d]`: input k is broadcast along
    domain dim d (stride 0); `rows[v]`: value v does not vary along the reduced
    axes; `outputs`: (value, its mask over the domain dims) per result."""

    inputs: tuple[str, ...]
    masks: tuple[tuple[bool, ...], ...]
    body: tuple[Instr, ...]
    rows: tuple[bool, ...]
    outputs: tuple[tuple[int, tuple[bool, ...]], ...]
    rank: int
    axes: tuple[int, ...]

    def dtype(self, value: int) -> str:
        n = len(self.inputs)
        return self.inputs[value] if value < n else self.body[value - n].dtype

    def args(self, value: int) -> tuple[int, ...]:
        n = len(self.inputs)
        return () if value < n else self.body[value - n].args

    def is_reduce(self, value: int) -> bool:
        n = len(self.inputs)
        return value >= n and self.body[value - n].op == "reduce"

    @property
    def reductions(self) -> tuple[int, ...]:
        n = len(self.inputs)
        return tuple(n + i for i, instr in enumerate(self.body) if instr.op == "reduce")

    @property
    def fallible(self) -> bool:
        return any(can_fail(i.op, i.dtype) for i in self.body)

    @property
    def parallel(self) -> tuple[int, ...]:
        return tuple(d for d in range(self.rank) if d not in self.axes)

    def phases(self) -> tuple[list[list[int]], list[set[int]]]:
        """Per phase (each reduction, then the final stores): the values it must
        produce, and which element values it stores into row buffers because a
        later phase reads them (see the module docstring)."""
        targets = [[self.args(r)[0]] for r in self.reductions]
        targets.append([v for v, _ in self.outputs])
        materialized: set[int] = set()
        stored: list[set[int]] = []
        for k, t in enumerate(targets):
            own = self._cone(t, materialized)
            needed: set[int] = set()
            for later in targets[k + 1:]:
                self._cone(later, materialized | own, needed)
            stored.append(needed & own)
            materialized |= stored[-1]
        return targets, stored

    def _cone(self, targets, stop: set[int], reached: set[int] | None = None) -> set[int]:
        """The element values (not inputs) computed to produce `targets`, not
        descending into row values or those in `stop`; those of `stop` it reaches
        are added to `reached`."""
        seen: set[int] = set()
        stack = list(targets)
        while stack:
            v = stack.pop()
            if v in seen or self.rows[v] or v < len(self.inputs):
                continue
            if v in stop:
                if reached is not None:
                    reached.add(v)
                continue
            seen.add(v)
            stack.extend(self.args(v))
        return seen

    def buffers(self) -> int:
        """Row buffers the scratch array holds: one per reduction and per stored value."""
        _, stored = self.phases()
        return len(self.reductions) + sum(len(s) for s in stored)

    def llvm_ir(self, fma: bool) -> str:
        return _Generator(self, fma).generate()

    def text(self) -> str:
        heads = [f"%{i}: {d}[" + "".join("b" if b else "." for b in mask) + "]"
                 for i, (d, mask) in enumerate(zip(self.inputs, self.masks))]
        lines = [f"fused kernel rank {self.rank} axes {list(self.axes)} ({', '.join(heads)}) {{"]
        lines += ["  " + instr.text(len(self.inputs), i) for i, instr in enumerate(self.body)]
        lines.append("  store " + ", ".join(f"%{v}" for v, _ in self.outputs) + "\n}")
        return "\n".join(lines)


# ---------------------------------------------------------------- code generation

class _Generator:
    """``void kernel(i64 begin, i64 end, i64 size_0..., ptr in..., ptr out...,
    ptr scratch, [ptr status])``: rows of the first unreduced axis in
    ``[begin, end)`` (the whole single row of a full reduction when there is none)."""

    def __init__(self, spec: FusedSpec, fma: bool):
        self.spec = spec
        self.fma = fma

    def generate(self) -> str:
        spec = self.spec
        module = ir.Module(name="irflow_fused")
        n_in, n_out = len(spec.inputs), len(spec.outputs)
        ptr = ir.PointerType()
        n_ptr = n_in + n_out + 1 + spec.fallible
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64] * (2 + spec.rank)
                                                 + [ptr] * n_ptr), name=FUNCTION_NAME)
        for p in fn.args[2 + spec.rank:]:
            p.add_attribute("noalias")
        b = self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        begin, end = fn.args[0], fn.args[1]
        self.sizes = fn.args[2:2 + spec.rank]
        pointers = fn.args[2 + spec.rank:]
        self.inputs = pointers[:n_in]
        self.outs = pointers[n_in:n_in + n_out]
        scratch = pointers[n_in + n_out]
        status = pointers[n_in + n_out + 1] if spec.fallible else None
        self.emitter = ScalarEmitter(b, Math(b, self.fma), status)
        self.in_strides = [_strides(b, self.sizes, m) for m in spec.masks]
        self.out_strides = [_strides(b, self.sizes, m) for _, m in spec.outputs]
        count = ir.Constant(I64, 1)
        for d in spec.axes:
            count = b.mul(count, self.sizes[d])
        self.count = count
        # row buffers: each reduction's, then each stored value's, `count` slots of 8 bytes
        self.targets, self.stored = spec.phases()
        slots = [r for r in spec.reductions] + [v for s in self.stored for v in sorted(s)]
        self.buffer = {}
        for j, v in enumerate(slots):
            self.buffer[v] = b.gep(scratch, [b.mul(count, ir.Constant(I64, 8 * j))],
                                   source_etype=ir.IntType(8))
        parallel = spec.parallel
        zero = ir.Constant(I64, 0)

        def rows(level, in_offsets, out_offsets):
            if level == len(parallel):
                self.row(in_offsets, out_offsets)
                return
            d = parallel[level]
            start, stop = (begin, end) if level == 0 else (zero, self.sizes[d])
            with counted_loop(b, start, stop, f"r{d}") as i:
                rows(level + 1,
                     [_advance(b, o, i, s[d]) for o, s in zip(in_offsets, self.in_strides)],
                     [_advance(b, o, i, s[d]) for o, s in zip(out_offsets, self.out_strides)])

        if parallel:
            rows(0, [zero] * n_in, [zero] * n_out)
        else:
            with counted_loop(b, begin, end, "row"):
                self.row([zero] * n_in, [zero] * n_out)
        b.ret_void()
        return str(module)

    # -- one row

    def row(self, in_offsets, out_offsets) -> None:
        spec = self.spec
        row_values: dict[int, object] = {}
        self.available: set[int] = set()  # values in row buffers, stored by earlier phases
        for phase, targets in enumerate(self.targets):
            final = phase == len(self.targets) - 1
            seen: set[int] = set()
            for v in targets:
                self.row_value(v, in_offsets, row_values, seen)
            if final:
                for j, (v, _) in enumerate(spec.outputs):
                    if spec.rows[v]:
                        self.store(j, row_values[v], out_offsets[j])
                if all(spec.rows[v] for v, _ in spec.outputs):
                    return
            stored = self.stored[phase]

            def element(values, t, in_offs, out_offs, targets=targets, stored=stored,
                        final=final):
                for v in targets:
                    self.value(v, values, in_offs, t)
                if final:
                    for j, (v, _) in enumerate(spec.outputs):
                        if not spec.rows[v]:
                            self.store(j, values[v], out_offs[j])
                else:
                    self.put(self.buffer[spec.reductions[phase]], t, values[targets[0]],
                             spec.dtype(targets[0]))
                for v in sorted(stored):
                    self.put(self.buffer[v], t, values[v], spec.dtype(v))

            self.reduced_loops(row_values, in_offsets, out_offsets, element)
            self.available |= stored
            if not final:
                r = spec.reductions[phase]
                row_values[r] = self.reduce(r)

    def reduced_loops(self, row_values, in_offsets, out_offsets, element) -> None:
        """Loops over the reduced axes; `element(values, t, ...)` at each index, with
        `values` starting from the row's and `t` the flat index in loop order."""
        spec, b = self.spec, self.b
        axes = spec.axes

        def nest(level, t, in_offs, out_offs):
            if level == len(axes):
                element(dict(row_values), t, in_offs, out_offs)
                return
            d = axes[level]
            with counted_loop(b, ir.Constant(I64, 0), self.sizes[d], f"e{d}") as i:
                t_next = b.add(b.mul(t, self.sizes[d]), i)
                nest(level + 1, t_next,
                     [_advance(b, o, i, s[d]) for o, s in zip(in_offs, self.in_strides)],
                     [_advance(b, o, i, s[d]) for o, s in zip(out_offs, self.out_strides)])

        nest(0, ir.Constant(I64, 0), in_offsets, out_offsets)

    # -- values

    def row_value(self, v: int, in_offsets, values: dict, seen: set) -> None:
        """Emit, at row level, the row values `v` needs (and `v`, if it is one)."""
        spec = self.spec
        if v in values or v in seen:
            return
        seen.add(v)
        if not spec.rows[v]:
            for a in spec.args(v):
                self.row_value(a, in_offsets, values, seen)
            return
        self.value(v, values, in_offsets, None)

    def value(self, v: int, values: dict, in_offsets, t) -> object:
        """The LLVM value of `v` in the current scope (`values` caches it); `t` is the
        flat index over the reduced axes (None at row level)."""
        if v in values:
            return values[v]
        spec = self.spec
        n = len(spec.inputs)
        if v < n:
            result = self.load(v, in_offsets[v])
        elif t is not None and v in self.available:
            result = self.take(self.buffer[v], t, spec.dtype(v))
        else:
            instr = spec.body[v - n]
            args = [self.value(a, values, in_offsets, t) for a in instr.args]
            if instr.op == "const":
                result = self.emitter.constant(instr.dtype, dict(instr.attrs)["value"])
            else:
                result = self.emitter.emit(instr.op, args, [spec.dtype(a) for a in instr.args],
                                           instr.dtype, dict(instr.attrs))
        values[v] = result
        return result

    def load(self, k: int, offset):
        dtype = self.spec.inputs[k]
        return self.take(self.inputs[k], offset, dtype)

    def take(self, pointer, index, dtype: str, raw: bool = False):
        """The element at `index` (a bool as i1 unless `raw`: its byte)."""
        b = self.b
        value = b.load(b.gep(pointer, [index], inbounds=True, source_etype=MEMORY_TYPES[dtype]),
                       typ=MEMORY_TYPES[dtype])
        return b.icmp_unsigned("!=", value, ir.Constant(ir.IntType(8), 0)) \
            if dtype == "bool" and not raw else value

    def put(self, pointer, index, value, dtype: str) -> None:
        b = self.b
        if dtype == "bool":
            value = b.zext(value, ir.IntType(8))
        b.store(value, b.gep(pointer, [index], inbounds=True, source_etype=MEMORY_TYPES[dtype]))

    def store(self, j: int, value, offset) -> None:
        v, _ = self.spec.outputs[j]
        self.put(self.outs[j], offset, value, self.spec.dtype(v))

    # -- reductions

    def reduce(self, r: int):
        """Reduce the row buffer of reduction `r`: vector accumulators over whole
        vectors, a scalar one over the rest, then the lanes in a fixed order."""
        spec, b = self.spec, self.b
        kind = dict(spec.body[r - len(spec.inputs)].attrs)["kind"]
        dtype = spec.dtype(r)
        acc = "f64" if kind in ("sum", "mean") and dtype == "f32" else dtype
        memory, wide = MEMORY_TYPES[dtype], MEMORY_TYPES[acc]
        lanes = max(4, VECTOR_BYTES // BYTES[acc])
        vector = ir.VectorType(memory, lanes)
        wide_vector = ir.VectorType(wide, lanes)
        pointer = self.buffer[r]
        count = self.count
        blocks = b.udiv(count, ir.Constant(I64, lanes))
        identity = _identity(kind, acc)
        with carried_loop(b, ir.Constant(I64, 0), blocks,
                          [ir.Constant(wide_vector, [identity] * lanes)], "v") as loop:
            address = b.gep(pointer, [b.mul(loop.index, ir.Constant(I64, lanes))],
                            inbounds=True, source_etype=memory)
            chunk = self.widen(b.load(address, typ=vector, align=BYTES[dtype]), dtype, acc,
                               wide_vector)
            loop.next = [self.combine(kind, acc, loop.values[0], chunk)]
        scalar = None
        for lane in range(lanes):
            x = b.extract_element(loop.values[0], ir.Constant(ir.IntType(32), lane))
            scalar = x if scalar is None else self.combine(kind, acc, scalar, x)
        with carried_loop(b, b.mul(blocks, ir.Constant(I64, lanes)), count, [scalar],
                          "t") as tail:
            x = self.widen(self.take(pointer, tail.index, dtype, raw=True), dtype, acc, wide)
            tail.next = [self.combine(kind, acc, tail.values[0], x)]
        result = tail.values[0]
        value = result
        if kind == "mean":
            value = b.fdiv(value, b.sitofp(count, wide))
        if acc != dtype:
            value = b.fptrunc(value, LLVM_TYPES[dtype])
        if dtype == "bool":
            value = b.icmp_unsigned("!=", value, ir.Constant(ir.IntType(8), 0))
        return value

    def widen(self, value, dtype: str, acc: str, kind):
        return self.b.fpext(value, kind) if acc != dtype else value

    def combine(self, kind: str, acc: str, x, y):
        b = self.b
        if kind in ("sum", "mean"):
            return b.fadd(x, y) if is_float(acc) else b.add(x, y)
        if kind == "prod":
            return b.fmul(x, y) if is_float(acc) else b.mul(x, y)
        if kind == "any":
            return b.or_(x, y)
        if kind == "all":
            return b.and_(x, y)
        op = ">" if kind == "max" else "<"
        if is_float(acc):  # NaN propagates: x if x op y or x is NaN, else y
            pick = b.or_(b.fcmp_ordered(op, x, y), b.fcmp_unordered("uno", x, x))
        else:
            pick = b.icmp_signed(op, x, y)
        return b.select(pick, x, y)


def _identity(kind: str, dtype: str):
    if kind in ("sum", "mean", "any"):
        return 0.0 if is_float(dtype) else 0
    if kind in ("prod", "all"):
        return 1.0 if is_float(dtype) else 1
    bits = {"i32": 32, "i64": 64}.get(dtype)
    if kind == "max":
        return float("-inf") if is_float(dtype) else -(1 << (bits - 1))
    return float("inf") if is_float(dtype) else (1 << (bits - 1)) - 1


# ---------------------------------------------------------------- from the IR

def lower_body(lay, entering: Sequence[TensorType]):
    """(input dtypes, instructions, value number of every body value) of a fused
    body; raises `Unsupported` for what the backend has no code for."""
    for v in [*lay.body.args, *(r for inner in lay.body.body_ops() for r in inner.results)]:
        if v.type.dtype.short not in LLVM_TYPES:
            raise Unsupported(f"the LLVM backend has no kernels for {v.type.dtype.name} yet "
                              f"(a value of type {v.type})")
    number: dict[Value, int] = {arg: k for k, arg in enumerate(lay.body.args)}
    instrs: list[Instr] = []
    for inner in lay.body.body_ops():
        dtype = inner.result.type.dtype.short
        if inner.name == "const":
            instr = Instr("const", (), dtype, (("value", np.asarray(inner.attrs["value"]).item()),))
        elif inner in lay.reductions:
            kind = inner.attrs["kind"]
            if kind not in REDUCTIONS:
                raise Unsupported(f"no LLVM code for reduction {kind!r}", inner.loc)
            instr = Instr("reduce", (number[inner.operand(0)],), dtype, (("kind", kind),))
        elif inner.name in EMITTERS:
            instr = Instr(inner.name, tuple(number[v] for v in inner.operands), dtype,
                          tuple(sorted((k, getattr(a, "short", a))
                                       for k, a in inner.attrs.items())))
        else:
            raise Unsupported(f"'{inner.name}' has no scalar emitter", inner.loc)
        number[inner.result] = len(entering) + len(instrs)
        instrs.append(instr)
    return tuple(t.dtype.short for t in entering), instrs, number


def _mask(shape, rank: int) -> tuple[bool, ...]:
    """Per domain dim: stride 0 (the dim is missing or of size 1)."""
    lead = rank - len(shape)
    return tuple(d < lead or shape[d - lead] == 1 for d in range(rank))


class FusedKernel:
    """A fused op as compiled code: ``kernel.evaluator`` is its `RegionOp` evaluator
    (``run(operands, regions) -> results``). What cannot go wrong in the code is
    checked first; what the interpreter rejects (an integer division by zero, the max
    of nothing) runs the NumPy evaluator, which raises the interpreter's error at the
    failing op's location. Small calls run the NumPy evaluator (`MIN_ELEMENTS`)."""

    def __init__(self, op: Operation, compiler: Compiler | None = None,
                 min_elements: int = MIN_ELEMENTS):
        """`min_elements`: below this size of the domain's largest array, calls run
        the NumPy evaluator (tests set 0, to run the code at every size)."""
        compiler = compiler or default_compiler()
        self.min_elements = min_elements
        lay = lookup(op.name, op.loc).region_op.layout(op)  # an irflow.ops.fused.FusedLayout
        self.op = op
        self._numpy = lookup(op.name).region_op.body_evaluator(op)
        self._anchor = None
        if lay.anchored:
            self._anchor = lookup(op.name).region_op.anchor_kernel(op)
            if self._anchor is None:
                raise Unsupported("the anchor is not one op on the anchor's arguments", op.loc)
        entering = ([op.regions[0].blocks[0].terminator.operand(0).type] if lay.anchored
                    else []) + [v.type for v in op.operands[lay.n_anchor:]]
        inputs, instrs, number = lower_body(lay, entering)
        yielded = list(lay.body.terminator.operands)
        result_types = [r.type for r in op.results]
        rank = len(lay.domain)
        self.n_anchor = lay.n_anchor
        if not lay.axes and all(lay.shapes[v] == lay.domain for v in yielded):
            outputs = []
            for v in yielded:
                if number[v] < len(inputs):  # an operand yielded as it is: copy it
                    instrs.append(Instr("stop_gradient", (number[v],), inputs[number[v]]))
                    outputs.append(len(inputs) + len(instrs) - 1)
                else:
                    outputs.append(number[v])
            domain, masks = plan_domain(entering)
            spec = KernelSpec(inputs, masks, tuple(instrs), tuple(outputs), len(domain.groups))
            self.elementwise: Kernel | None = compiler.kernel(spec, domain)
            self._shapes = [lay.dropped_axes(v, t.shape) for v, t in zip(yielded, result_types)]
            self.spec = spec
            return
        self.elementwise = None
        rows = tuple(lay.is_row(v) for v in (*lay.body.args,
                                              *(i.result for i in lay.body.body_ops())))
        outputs = tuple((number[v], _mask(lay.shapes[v], rank)) for v in yielded)
        self.spec = FusedSpec(inputs, tuple(_mask(t.shape, rank) for t in entering),
                              tuple(instrs), rows, outputs, rank, lay.axes)
        self._prepare(lay, entering, yielded, result_types)
        self._code = compiler.code(self.spec)
        n = len(inputs) + len(outputs) + 1 + self.spec.fallible
        self._fn = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * (2 + rank),
                                    *[ctypes.c_void_p] * n)(self._code.address)

    def _prepare(self, lay, entering, yielded, result_types) -> None:
        """The call's checks and shapes, precomputed."""
        spec, rank = self.spec, len(lay.domain)
        self._dtypes = [NUMPY_DTYPES[d] for d in spec.inputs]
        self._ranks = [t.rank for t in entering]
        # domain dim d's size comes from (input, axis), or is 1
        self._sources = []
        for d in range(rank):
            k = next((k for k, m in enumerate(spec.masks) if not m[d]), None)
            self._sources.append(None if k is None else (k, d - (rank - entering[k].rank)))
        # (input, axis, domain dim or None where the axis must be 1)
        self._expect = [(k, a, None if spec.masks[k][a + rank - t.rank] else a + rank - t.rank)
                        for k, t in enumerate(entering) for a in range(t.rank)]
        self._out_dims = []  # per result: (dims of the domain it keeps, broadcast mask)
        for (v, mask), y, t in zip(spec.outputs, yielded, result_types):
            span = len(lay.shapes[y])
            dims = list(range(rank - span, rank))
            dropped = lay.dropped_axes(y, t.shape)
            if dropped == lay.axes and span == rank and dropped:
                dims = [d for d in dims if d not in lay.axes]
            else:
                dims = dims[len(dropped):]
            self._out_dims.append((tuple(dims), mask))
        self._out_dtypes = [NUMPY_DTYPES[spec.dtype(v)] for v, _ in spec.outputs]
        self._buffers = spec.buffers()
        self._empty_fails = any(dict(spec.body[r - len(spec.inputs)].attrs)["kind"]
                                in ("max", "min") for r in spec.reductions)

    def evaluator(self) -> Callable:
        """The evaluator: below `MIN_ELEMENTS` elements (the anchor's result, or the
        largest operand), the NumPy evaluator, which costs less per call there."""
        anchor, n, numpy = self._anchor, self.n_anchor, self._numpy
        body = self._run_elementwise if self.elementwise is not None else self._run
        least = self.min_elements

        def run(args, regions):
            operands = args
            if anchor is not None:
                operands = [anchor(*args[:n]), *args[n:]]
            if least and max(np.size(a) for a in operands) < least:
                return numpy(list(operands), regions)
            results = body(operands)
            if results is None:  # the interpreter's error, at the failing op
                return numpy(list(operands), regions)
            return results
        return run

    def out_evaluator(self, into: tuple[bool, ...]) -> Callable:
        """The out evaluator (`RegionOp.out_evaluator`): `evaluator`'s run, the
        compiled code storing result k with ``into[k]`` into the next given buffer;
        where it runs NumPy, the NumPy out evaluator of the body writes them. The
        anchor's result is a new array (the code's pointers are ``noalias``, so it
        cannot be the buffer the epilogue writes)."""
        anchor, n = self._anchor, self.n_anchor
        numpy = lookup(self.op.name).region_op.body_evaluator(self.op, into)
        body = self._run_elementwise if self.elementwise is not None else self._run
        least = self.min_elements

        def run(args, regions, outs):
            operands = args
            if anchor is not None:
                operands = [anchor(*args[:n]), *args[n:]]
            if least and max(np.size(a) for a in operands) < least:
                return numpy(list(operands), regions, outs)
            results = body(operands, into, outs)
            if results is None:  # the interpreter's error, at the failing op
                return numpy(list(operands), regions, outs)
            return results
        return run

    def _run_elementwise(self, operands, into=(), given=()):
        out = None
        if given:  # the given buffers as the domain spans them, new arrays for the rest
            shape = np.broadcast_shapes(*(np.shape(a) for a in operands))
            buffers = iter(given)
            out = [np.expand_dims(next(buffers), dropped) if written else
                   np.empty(shape, dtype) for written, dropped, dtype in
                   zip(into, self._shapes, self.elementwise._out_dtypes)]
        try:
            outs = self.elementwise(*operands, out=out)
        except IrflowError as e:
            if isinstance(e, ShapeError):
                raise e.with_loc(self.op.loc)
            return None
        for k, dropped in enumerate(self._shapes):
            if dropped:
                outs[k] = outs[k].reshape(outs[k].shape[len(dropped):])
        buffers = iter(given)
        return [next(buffers) if written else o for written, o in
                zip(into or (False,) * len(outs), outs)]

    def _run(self, operands, into=(), given=()):
        arrays = []
        for k, (a, dtype, rank) in enumerate(zip(operands, self._dtypes, self._ranks)):
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != rank:
                got = f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) \
                    else type(a).__name__
                raise ShapeError(f"fused kernel input {k} must be a {dtype} array of rank "
                                 f"{rank}, got {got}", self.op.loc)
            arrays.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        sizes = [1 if src is None else arrays[src[0]].shape[src[1]] for src in self._sources]
        for k, axis, d in self._expect:
            want = 1 if d is None else sizes[d]
            if arrays[k].shape[axis] != want:
                raise ShapeError(f"fused kernel input {k} has shape {list(arrays[k].shape)}, "
                                 f"which does not broadcast to {sizes} as compiled",
                                 self.op.loc)
        spec = self.spec
        count = math.prod(sizes[a] for a in spec.axes)
        if count == 0 and self._empty_fails:
            return None
        buffers = iter(given)
        outs = [next(buffers) if written else
                np.empty(tuple(1 if mask[d] else sizes[d] for d in dims), dtype)
                for written, (dims, mask), dtype in
                zip(into or (False,) * len(self._out_dims), self._out_dims, self._out_dtypes)]
        parallel = [sizes[d] for d in spec.parallel]
        if all(parallel):
            pointers = [a.ctypes.data for a in arrays] + [o.ctypes.data for o in outs]
            rows = parallel[0] if parallel else 1  # a full reduction is one row, never split
            if call_rows(self._fn, rows, math.prod(sizes), [*sizes, *pointers],
                         (*arrays, *outs), scratch=self._buffers * count * 8,
                         fallible=spec.fallible):
                return None
        return outs
