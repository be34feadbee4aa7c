"""Kernels for ``fused`` ops (`irflow.ops.fused`): the scalar body over the domain,
reductions along the op's axes, and the anchor (a matmul) before its epilogue.

`lower_fused(op)` makes a `FusedKernel`, which runs the anchor (if any) by its
NumPy kernel (a float32 matmul of matrices by the generated GEMM of
`irflow.codegen.llvm.gemm`, above its size thresholds), then one compiled
function over the domain (a one-result elementwise body over such a matmul, alone
or beside the max over the whole domain of one of its values, is applied by the
GEMM's tiles instead, in the same call: `FusedSpec.elementwise_and_maximum`):

- **No reduced axes.** When every result spans the whole domain the body is an
  elementwise `KernelSpec` (`irflow.codegen.llvm.kernel`): merged loops, one flat
  vectorized loop where broadcasting allows.
- **Reductions in rows** (a `FusedSpec` whose innermost spanned dim is reduced:
  layer norm, softmax, a full reduction). The kernel loops over the *rows* (the
  indices of the unreduced axes, outermost first; a full reduction has one row).
  Per row, each ``reduce`` of the body, in order, is a *phase*: one loop over the
  reduced axes computes the element values the reduction reads and stores them, in
  loop order, into a row buffer; a second loop reduces that buffer with four
  independent vector accumulators (so it vectorizes without reassociating anything
  LLVM may not: the order of the sum is fixed by the code, as NumPy's pairwise
  order is by its loops). Its result is a *row value* the later phases read as a
  scalar. A result that varies along the reduced axes is stored by the first phase
  that computes it (``tanh(h @ w + b)`` beside ``max(abs(new - h))``), else by a
  last loop; results that do not (a row's mean) are stored once per row. An element
  value that a later phase needs again (``x - mean`` in layer norm) is stored into
  a row buffer of its own by the phase that computes it and loaded after, rather
  than recomputed. Row buffers live in a scratch array the caller allocates per
  call and per part of a split call (so threads never share one), ``buffers *
  reduced elements`` of 8 bytes; a row of 1024 floats keeps all of them in L1.
- **Rows in lanes** (`FusedSpec.lanes`, `_LaneGenerator`). Where rows are short, of
  a static count of elements (at most 64 where the rows code would be compiled for
  size, 32 or 15 where it would be vectorized: `MAX_LANE_ELEMENTS`), and there are
  rows enough (`MIN_LANE_ROWS`), the code in rows runs on blocks of 16 consecutive
  rows at once (8 where the body computes float64 values), a row in each lane of a
  vector: each phase loops over the elements of the rows, loading each for every
  lane at once (a gather; a vector where the lanes' rows are adjacent; a scalar
  where every row reads the same element), computes on vectors (the scalar
  emitters, exp and log included, through `LaneBuilder`) and combines each
  reduction's elements into one accumulator vector. So no horizontal reduction,
  and each lane reduces its row in index order in the scalar code's accumulation
  dtype: the results are those of the scalar rows compiled for size, bit for bit
  (the vectorized rows sum in another order). The last block masks its missing
  lanes; values later phases read, gathered inputs among them, wait in lane
  buffers in the scratch. The cross-entropy of the MLP's training step (logits
  [256, 10], four reductions, exp and log) runs in 3.3 µs where the scalar rows took
  20 (its step in the plan: 22 µs against 38 warm, 38 against 52 after 32 MiB of
  other memory), compiled in 0.03 s against 0.022; a softmax over [4096, 10] takes
  33 µs where the vectorized rows took 208. Bodies with no vector form (sin and cos,
  an integer division's status byte) run a row at a time.
- **Reductions in columns** (the innermost spanned dim is kept: a sum over the
  batch). Each phase is one pass over the whole domain in memory order, adding
  each element into the accumulator of its kept index, a row of them in the
  scratch (``reductions * kept elements`` of 8 bytes): the innermost loop is
  contiguous and its accumulators independent, so it vectorizes, and each
  accumulator adds its elements in index order. Later phases read the finished
  reductions from the accumulators and recompute the element values they need
  (a pass over the domain costs less than a buffer of its size); results are
  stored as in rows, those that do not vary along the reduced axes by a last loop
  over the kept indices.
- **Accumulation.** ``sum`` and ``mean`` of float32 accumulate in float64 (more
  accurate than NumPy's pairwise float32 sum, so results agree to float32
  rounding whatever the order); every other reduction accumulates in its dtype
  (integer sums wrap as NumPy's do, exactly). ``max``/``min`` propagate NaN;
  ``mean`` divides by the element count (NaN over none, as NumPy); ``max`` and
  ``min`` over no elements are the interpreter's error, raised by running the
  NumPy evaluator instead.

Everything is checked before code runs: each array's dtype, rank and sizes against
the domain (no input can make the code read or write out of bounds); results and
scratch are allocated by the caller for the checked sizes, or are the buffers the
plan gives, checked too. A result may be stored in place of the anchor's result
(`FusedKernel`, "In place"; `FusedSpec.reads_before_store` for bodies with
reductions). The call of each variant's code is a function generated for it
(`irflow.codegen.llvm.calling`, as `Kernel`'s), its general path `FusedKernel._run`.
"""
from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...errors import IrflowError, ShapeError
from ...ir.core import Operation, Value
from ...ir.registry import lookup
from ...ir.signature import evaluate_terms, slot_terms
from ...ir.types import TensorType, dim_terms, is_symbol, numel, symbols_of
from ..native import Array, Call, Temporary
from ..threads import get_num_threads, least_split
from . import conv
from .compiler import Compiler, default_compiler
from .elementwise import Unsupported, check_dtypes, pow_attrs
from .calling import (GENERAL, addresses, call_lines, input_lines, make, overlaps, product,
                      refuse, tuple_of)
from .gemm import (MIN_ROWS, MIN_WORK, MR, NARROW, WORK_PER_ELEMENT, anchor_kernels,
                   fused_kernel, product_call, static_product)
from .kernel import (FUNCTION_NAME, NUMPY_DTYPES, Instr, Kernel, KernelSpec, _advance,
                     _strides, address, call_rows, call_rows_reducing, check_inplace,
                     overlapping, plan_domain, stored_through, written_pairs)
from .jit import FULL, SMALL, Optimization
from .loops import carried_loop, counted_loop
from .mathlib import Math
from .scalar import (EMITTERS, LANE_DECLINED, LLVM_TYPES, MEMORY_TYPES, TRANSCENDENTAL,
                     LaneBuilder, ScalarEmitter, can_fail, icmp, int_range, is_float)
from .stack import stack

I32, I64 = ir.IntType(32), ir.IntType(64)
F64 = ir.DoubleType()
REDUCTIONS = ("sum", "prod", "mean", "max", "min", "any", "all")
HALF_ROUNDED = ("sum", "prod", "mean")  # float16 reductions with no code (lower_body)
# Reductions coded as another: max_or_neg_inf is max over an axis that is not empty;
# over an empty one, whose max the code refuses, the NumPy evaluator gives its -inf.
CODED_AS = {"max_or_neg_inf": "max"}
VECTOR_BYTES = 64   # the accumulators of a reduction: one 512-bit vector's worth
ACCUMULATORS = 4    # vectors of them, independent: a combine's latency is 3-4 cycles
# Below this many elements a body without reductions runs NumPy's evaluator. The code
# is faster there too when warm, but by little (1.9-2.1 µs a call against 2.1-3.2 for
# bodies of 2-6 float32 ops on 64-1024 elements), too little to pay for compiling a
# kernel for each distinct small body (0.01-0.03 s: an optimizer's update of many
# small parameters would compile several); in a training step, compiled for size
# (`SMALL`), a 256-element update took 6 µs where NumPy's took 3.5. A body with a
# reduction is compiled at every size (`small_calls`): NumPy reduces a short axis
# slowly (the sum of [256,10] along its rows takes 5 µs), and in a training step,
# after its big products have evicted the caches, the code of such a body ran in
# 9-13 µs where NumPy's took 23-28. A body computing exp or log of symbolic sizes
# keeps the threshold for its small calls (its vectorized code takes 0.08-0.14 s to
# compile and serves the large ones); of static small sizes it is compiled for size
# (a softmax with its cross-entropy: 0.03 s, and 95 µs a call in the training step
# against NumPy's 130).
MIN_ELEMENTS = 4096
# Rows in lanes (`FusedSpec.lane_width`) pay for rows of a static count of elements
# up to a limit that depends on the code they replace. Measured on one Zen 4 core,
# the code alone, float32 [R, C], C elements a row: against the scalar rows compiled
# for size (`SMALL`), softmax, log-softmax, layer norm and a sum of squares ran
# 1.0-4.6x faster over 8-256 rows of 10-100 elements; against the vectorized rows
# (`FULL`), bodies of two reductions or more (softmax, log-softmax, layer norm) ran
# 1.6-9.7x faster at 10-28 elements, 0.9-2.1x at 32, slower from 48, and bodies of
# one sum (of squares, ``x - mean``) 1.1-3.2x faster below 16 elements, 0.5-1.1x from
# 16 to 32: each element of a row is a gather (and a scatter, for a result), about
# 4 ns for 16 lanes, where the vectorized rows load a short row in a vector or two.
MAX_LANE_ELEMENTS_SMALL = 64  # the rows code is scalar
MAX_LANE_ELEMENTS = 32        # the rows code is vectorized, two reductions or more
MAX_LANE_ELEMENTS_ONE = 15    # vectorized, one reduction
# and at least this many rows along the lanes' dim (or a symbolic count): the code
# of one block costs as much for 1 row as for 16 (at 8 rows it ran 1.0-1.8x faster
# than the scalar rows, at 2-4 rows 0.7-1.2x)
MIN_LANE_ROWS = 8
BYTES = {dtype: np_dtype.itemsize for dtype, np_dtype in NUMPY_DTYPES.items()}


# ---------------------------------------------------------------- the spec

@dataclass(frozen=True)
class Phases:
    """`FusedSpec.phases`: per phase, its `targets` (a reduction's first: the value
    it reduces) and the values it `stored` for later phases; `early[j]`, the phase
    that stores element result j, for those a reduction's phase computes."""

    targets: list[list[int]]
    stored: list[set[int]]
    early: dict[int, int]


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
    # (output j, input k): output j is stored through input k's pointer (in place;
    # only where `reads_before_store` says no phase reads the input after the store)
    inplace: tuple[tuple[int, int], ...] = ()
    small: bool = False  # every call is small: compiled for size (`SMALL`)
    # rows per vector of the code that runs rows in lanes (`lane_width`), 0 for the
    # code that runs one row at a time
    lanes: int = 0

    @property
    def optimization(self) -> Optimization:
        # the rows-in-lanes code is vector code already, which LLVM's O1 keeps as it is
        return SMALL if self.small or self.lanes else FULL

    def __post_init__(self):
        check_inplace(self.inplace, self.inputs, self.masks,
                      [self.dtype(v) for v, _ in self.outputs])
        for j, k in self.inplace:
            if any(self.outputs[j][1]) or not self.reads_before_store(j, k):
                raise ValueError(f"output {j} cannot be stored in place of input {k}: it "
                                 "is broadcast, or a phase reads the input after the store")

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

    @property
    def columns(self) -> bool:
        """Whether the kernel runs in columns: the innermost dim any input spans is
        kept, so looping over it innermost reads contiguous memory and accumulates
        into a row of independent accumulators (see the module docstring)."""
        spanned = [d for d in range(self.rank) if not all(m[d] for m in self.masks)]
        return bool(self.axes) and bool(spanned) and spanned[-1] not in self.axes

    def phases(self) -> "Phases":
        """Per phase (each reduction, then the final stores): the values it must
        produce, which element values it stores into row buffers because a later
        phase reads them (none in columns: those recompute them), and the element
        results it stores because it computes them anyway (see the module
        docstring)."""
        targets = [[self.args(r)[0]] for r in self.reductions]
        early: dict[int, int] = {}
        for j, (v, _) in enumerate(self.outputs):
            k = next((k for k, t in enumerate(targets) if v in self._cone(t, set())), None)
            if k is not None:
                early[j] = k
        for j, k in early.items():
            targets[k].append(self.outputs[j][0])
        targets.append([v for j, (v, _) in enumerate(self.outputs) if j not in early])
        materialized: set[int] = set()
        stored: list[set[int]] = []
        for k, t in enumerate(targets):
            own = self._cone(t, materialized)
            needed: set[int] = set()
            if not self.columns:
                for later in targets[k + 1:]:
                    self._cone(later, materialized | own, needed)
            stored.append(needed & own)
            materialized |= stored[-1]
        return Phases(targets, stored, early)

    def _cone(self, targets, stop: set[int], reached: set[int] | None = None) -> set[int]:
        """The element values computed to produce `targets`, not descending into row
        values or those in `stop`; those of `stop` it reaches are added to `reached`.
        Inputs are loaded, not computed, but for those the rows-in-lanes code
        gathers (`gathered`): a lane buffer is cheaper than gathering again."""
        seen: set[int] = set()
        stack = list(targets)
        while stack:
            v = stack.pop()
            if v in seen or self.rows[v] or v < len(self.inputs) and not self.gathered(v):
                continue
            if v in stop:
                if reached is not None:
                    reached.add(v)
                continue
            seen.add(v)
            stack.extend(self.args(v))
        return seen

    def gathered(self, k: int) -> bool:
        """Whether the rows-in-lanes code gathers input k's elements: it varies along
        the lanes' dim and along the reduced axes (so each lane's row is elsewhere)."""
        return bool(self.lanes) and not self.rows[k] and not self.masks[k][self.lane_dim]

    def reads_before_store(self, j: int, k: int) -> bool:
        """Whether input k is read only by the phase that stores element result j (so
        each element is loaded before that phase stores over it, at the same index,
        and never loaded again): what makes storing j in place of k safe."""
        if self.rows[self.outputs[j][0]] or self.rows[k]:
            return False
        phases = self.phases()
        storing = phases.early.get(j, len(phases.targets) - 1)
        available: set[int] = set()  # values later phases load from row buffers
        for phase, targets in enumerate(phases.targets):
            if phase != storing and k in self._inputs_read(targets, available):
                return False
            available |= phases.stored[phase]
        return True

    def _inputs_read(self, targets, stop: set[int]) -> set[int]:
        """The inputs a phase computing `targets` may load: those reached from them
        through values other than reductions (each computed by its own phase, from its
        row buffer or accumulators) and those in `stop` (loaded from row buffers)."""
        reached: set[int] = set()
        seen: set[int] = set()
        stack = list(targets)
        while stack:
            v = stack.pop()
            if v in seen or v in stop or self.is_reduce(v):
                continue
            seen.add(v)
            if v < len(self.inputs):
                reached.add(v)
            stack.extend(self.args(v))
        return reached

    def elementwise_and_maximum(self) -> tuple[KernelSpec, int, int, int] | None:
        """The body as the tiles of a GEMM apply it (`gemm.fused_kernel`), when its
        results are a value spanning the whole domain and the max over the whole
        domain of one float32 value (``new = tanh(h @ w + b)`` beside ``max(abs(new -
        h))``): (the elementwise `KernelSpec` computing the first, without the
        reduction; the value maxed, numbered in it; the index of the spanning result;
        the index of the maximum), else None."""
        n = len(self.inputs)
        if len(self.outputs) != 2 or len(self.reductions) != 1 \
                or self.axes != tuple(range(self.rank)):
            return None
        (r,) = self.reductions
        reduce = self.body[r - n]
        if dict(reduce.attrs)["kind"] != "max" or reduce.dtype != "f32" \
                or any(r in instr.args for instr in self.body):
            return None  # another reduction, or a body computing on the maximum
        tops = [j for j, (v, _) in enumerate(self.outputs) if v == r]
        spanning = [j for j, (v, mask) in enumerate(self.outputs) if v != r and not any(mask)]
        if len(tops) != 1 or len(spanning) != 1:
            return None

        def renumbered(v: int) -> int:  # the numbers after the reduction's move down
            return v - (v > r)
        body = tuple(dataclasses.replace(instr, args=tuple(map(renumbered, instr.args)))
                     for i, instr in enumerate(self.body) if i != r - n)
        (j,), (top,) = spanning, tops
        spec = KernelSpec(self.inputs, self.masks, body, (renumbered(self.outputs[j][0]),),
                          self.rank)
        return spec, reduce.args[0], j, top

    def buffers(self) -> int:
        """Buffers the scratch array holds, one per reduction and per stored value,
        each of 8-byte slots: one per reduced element of a row, or in columns, one
        per kept element (a reduction's accumulators). Rows in lanes keep their
        reductions' accumulators in registers and a slot per lane for each stored
        value."""
        stored = sum(len(s) for s in self.phases().stored)
        return self.lanes * stored if self.lanes else len(self.reductions) + stored

    @property
    def lane_dim(self) -> int | None:
        """The domain dim whose rows the rows-in-lanes code puts in a vector's lanes:
        the innermost unreduced dim an input or a result spans (None if there is
        none: every row is one)."""
        masks = [*self.masks, *(mask for _, mask in self.outputs)]
        spanned = [d for d in self.parallel if not all(m[d] for m in masks)]
        return spanned[-1] if spanned else None

    def lane_width(self, domain: Sequence) -> int:
        """The rows per vector for code running rows in lanes, for a domain of sizes
        `domain` (ints and symbols), or 0 for the code that runs a row at a time:
        rows in lanes pay where rows are short, of a static size at most
        `MAX_LANE_ELEMENTS` (or its variants, by the code they replace), and there
        are rows to fill the lanes (at least
        `MIN_LANE_ROWS` along `lane_dim`, or a symbolic count), for a body whose
        scalar code runs on vectors (`LaneBuilder`: no status byte, no
        `LANE_DECLINED` op). 16 lanes (a 512-bit vector of float32), 8 where the body
        computes float64 values."""
        dim = self.lane_dim
        extents = [domain[a] for a in self.axes]
        if self.small:
            limit = MAX_LANE_ELEMENTS_SMALL
        else:
            limit = MAX_LANE_ELEMENTS if len(self.reductions) > 1 else MAX_LANE_ELEMENTS_ONE
        if self.columns or dim is None or self.fallible \
                or any(i.op in LANE_DECLINED for i in self.body) \
                or not all(isinstance(n, int) for n in extents) \
                or math.prod(extents) > limit \
                or isinstance(domain[dim], int) and domain[dim] < MIN_LANE_ROWS:
            return 0
        return 8 if "f64" in (*self.inputs, *(i.dtype for i in self.body)) else 16

    def llvm_ir(self, fma: bool) -> str:
        return (_LaneGenerator if self.lanes else _Generator)(self, fma).generate()

    def text(self) -> str:
        heads = [f"%{i}: {d}[" + "".join("b" if b else "." for b in mask) + "]"
                 for i, (d, mask) in enumerate(zip(self.inputs, self.masks))]
        lines = [f"fused kernel rank {self.rank} axes {list(self.axes)} ({', '.join(heads)}) {{"]
        lines += ["  " + instr.text(len(self.inputs), i) for i, instr in enumerate(self.body)]
        lines.append("  store " + ", ".join(f"%{v}" for v, _ in self.outputs) + "\n}")
        lines += [f"  (output {j} in place of %{k})" for j, k in self.inplace]
        lines += [f"  (rows in {self.lanes} lanes)"] if self.lanes else []
        return "\n".join(lines)


# ---------------------------------------------------------------- code generation

class _Generator:
    """``void kernel(i64 begin, i64 end, i64 size_0..., ptr in..., ptr out...,
    ptr scratch, [ptr status])``: the indices of the first unreduced axis in
    ``[begin, end)`` (the whole single row of a full reduction when there is none),
    in rows or in columns (`FusedSpec.columns`)."""

    def __init__(self, spec: FusedSpec, fma: bool):
        self.spec = spec
        self.fma = fma

    def generate(self) -> str:
        spec = self.spec
        module = ir.Module(name="irflow_fused")
        n_in, n_out = len(spec.inputs), len(spec.outputs) - len(spec.inplace)
        ptr = ir.PointerType()
        n_ptr = n_in + n_out + 1 + spec.fallible
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64] * (2 + spec.rank)
                                                 + [ptr] * n_ptr), name=FUNCTION_NAME)
        for p in fn.args[2 + spec.rank:]:
            p.add_attribute("noalias")
        b = self.b = self.builder(fn.append_basic_block("entry"))
        self.begin, self.end = fn.args[0], fn.args[1]
        self.sizes = fn.args[2:2 + spec.rank]
        pointers = fn.args[2 + spec.rank:]
        self.inputs = pointers[:n_in]
        self.pointers = pointers
        # per result, the pointer it is stored through (an input's, in place)
        self.targets = stored_through(spec.inplace, len(spec.outputs), n_in)
        status = pointers[n_in + n_out + 1] if spec.fallible else None
        self.emitter = ScalarEmitter(b, Math(b, self.fma), status)
        own = dict(spec.inplace)
        self.strides = [_strides(b, self.sizes, m) for m in spec.masks] + \
            [_strides(b, self.sizes, m) for j, (_, m) in enumerate(spec.outputs)
             if j not in own]
        self.count = self.extent(spec.axes)
        self.phases = spec.phases()
        self.split = spec.parallel[0] if spec.parallel else None
        if spec.columns:
            self.columns(pointers[n_in + n_out])
        else:
            self.rows(pointers[n_in + n_out])
        b.ret_void()
        return str(module)

    def builder(self, block: ir.Block) -> ir.IRBuilder:
        return ir.IRBuilder(block)

    def extent(self, dims):
        """The number of indices of the domain dims `dims`."""
        count = ir.Constant(I64, 1)
        for d in dims:
            count = self.b.mul(count, self.sizes[d])
        return count

    def slice_scratch(self, scratch, values, slots) -> dict:
        """Each of `values`' buffer in the scratch array: `slots` slots of 8 bytes."""
        b = self.b
        return {v: b.gep(scratch, [b.mul(slots, ir.Constant(I64, 8 * j))],
                         source_etype=ir.IntType(8)) for j, v in enumerate(values)}

    def loops(self, dims, offsets, strides, body) -> None:
        """Nested loops over the domain dims `dims`, outermost first (the first
        unreduced dim over ``[begin, end)``), advancing each of `offsets` by its
        `strides`; `body(offsets)` at each index."""
        b, zero = self.b, ir.Constant(I64, 0)

        def nest(level, offsets):
            if level == len(dims):
                body(offsets)
                return
            d = dims[level]
            start, stop = (self.begin, self.end) if d == self.split else (zero, self.sizes[d])
            with counted_loop(b, start, stop, f"i{d}") as i:
                nest(level + 1, [_advance(b, o, i, s[d]) for o, s in zip(offsets, strides)])

        nest(0, offsets)

    def stores(self, outputs, values, offsets) -> None:
        """Store the results numbered `outputs` from `values` at their `offsets`
        (those of the inputs first, then of the results not stored in place)."""
        for j in outputs:
            self.store(j, values[self.spec.outputs[j][0]], offsets[self.targets[j]])

    def element_outputs(self, phase: int) -> list[int]:
        """The results varying along the reduced axes that phase `phase` stores:
        those it computes for its reduction (`Phases.early`); the last, the others."""
        spec, early = self.spec, self.phases.early
        final = phase == len(self.phases.targets) - 1
        return [j for j, (v, _) in enumerate(spec.outputs) if not spec.rows[v]
                and (j not in early if final else early.get(j) == phase)]

    # -- in rows

    def rows(self, scratch) -> None:
        """Per row (the unreduced indices), each phase loops over its reduced
        elements, storing what the reduction reads into a row buffer, then reduces it."""
        spec = self.spec
        slots = [*spec.reductions, *(v for s in self.phases.stored for v in sorted(s))]
        self.buffer = self.slice_scratch(scratch, slots, self.count)
        zero = ir.Constant(I64, 0)
        offsets = [zero] * len(self.strides)
        if spec.parallel:
            self.loops(spec.parallel, offsets, self.strides, self.row)
        else:
            with counted_loop(self.b, self.begin, self.end, "row"):
                self.row(offsets)

    def row(self, offsets) -> None:
        spec = self.spec
        n_in = len(spec.inputs)
        row_values: dict[int, object] = {}
        self.available: set[int] = set()  # values in row buffers, stored by earlier phases
        for phase, targets in enumerate(self.phases.targets):
            final = phase == len(self.phases.targets) - 1
            seen: set[int] = set()
            for v in targets:
                self.row_value(v, offsets[:n_in], row_values, seen)
            if final:
                self.stores([j for j, (v, _) in enumerate(spec.outputs) if spec.rows[v]],
                            row_values, offsets)
            outputs = self.element_outputs(phase)
            if final and not outputs:
                return
            stored = self.phases.stored[phase]

            def element(values, t, offs, targets=targets, stored=stored, outputs=outputs,
                        final=final):
                for v in targets:
                    self.value(v, values, offs[:n_in], t)
                self.stores(outputs, values, offs)
                if not final:
                    self.feed(spec.reductions[phase], t, values[targets[0]])
                for v in sorted(stored):
                    self.put(self.buffer[v], t, values[v], spec.dtype(v))

            if not final:
                self.begin_reduction(spec.reductions[phase])
            self.reduced_loops(row_values, offsets, element)
            self.available |= stored
            if not final:
                r = spec.reductions[phase]
                row_values[r] = self.reduce(r)

    def begin_reduction(self, r: int) -> None:
        """Before reduction `r`'s phase loops over a row (nothing here: its row buffer
        is filled whole, then reduced)."""

    def feed(self, r: int, t, value) -> None:
        """Element `t` of the row, `value`, to reduction `r`: into its row buffer."""
        self.put(self.buffer[r], t, value, self.spec.dtype(self.spec.args(r)[0]))

    def reduced_loops(self, row_values, offsets, element) -> None:
        """Loops over the reduced axes; `element(values, t, offsets)` at each index,
        with `values` starting from the row's and `t` the flat index in loop order."""
        spec = self.spec
        flat = _strides(self.b, self.sizes, tuple(d not in spec.axes for d in range(spec.rank)))
        self.loops(spec.axes, [*offsets, ir.Constant(I64, 0)], [*self.strides, flat],
                   lambda offs: element(dict(row_values), offs[-1], offs[:-1]))

    # -- in columns

    def columns(self, scratch) -> None:
        """Each phase is one pass over the whole domain in memory order, adding each
        element into the accumulator of its kept index (independent accumulators in
        the innermost loop, so it vectorizes without reordering any reduction);
        later phases read the finished reductions from the accumulators and
        recompute the element values they need; results that do not vary along the
        reduced axes are stored by a last loop over the kept indices."""
        spec, b = self.spec, self.b
        kept = _strides(b, self.sizes, tuple(d in spec.axes for d in range(spec.rank)))
        inner = self.extent(spec.parallel[1:])
        self.accumulators = self.slice_scratch(scratch, spec.reductions,
                                               self.extent(spec.parallel))
        with counted_loop(b, b.mul(self.begin, inner), b.mul(self.end, inner), "init") as i:
            for r in spec.reductions:
                kind, acc = self.accumulation(r)
                self.put_raw(self.accumulators[r], i,
                             ir.Constant(MEMORY_TYPES[acc], _identity(kind, acc)))
        n_in = len(spec.inputs)
        zero = ir.Constant(I64, 0)
        offsets = [zero] * (len(self.strides) + 1)
        strides = [*self.strides, kept]
        for phase, targets in enumerate(self.phases.targets):
            final = phase == len(self.phases.targets) - 1
            outputs = self.element_outputs(phase)
            if final and not outputs:
                break

            def element(offs, targets=targets, outputs=outputs, final=final, phase=phase):
                values = {r: self.finished(r, offs[-1]) for r in spec.reductions[:phase]}
                for v in targets:
                    self.value(v, values, offs[:n_in], None)
                self.stores(outputs, values, offs)
                if not final:
                    self.accumulate(spec.reductions[phase], offs[-1], values[targets[0]])

            self.loops(range(spec.rank), offsets, strides, element)
        row_outputs = [j for j, (v, _) in enumerate(spec.outputs) if spec.rows[v]]
        if row_outputs:
            def row(offs):
                values = {r: self.finished(r, offs[-1]) for r in spec.reductions}
                for j in row_outputs:
                    self.value(spec.outputs[j][0], values, offs[:n_in], None)
                self.stores(row_outputs, values, offs)
            self.loops(spec.parallel, offsets, strides, row)

    def accumulate(self, r: int, index, value) -> None:
        """Combine `value` into reduction `r`'s accumulator at `index`."""
        kind, acc = self.accumulation(r)
        pointer = self.accumulators[r]
        x = self.take(pointer, index, acc, raw=True)
        value = self.widen(value, self.spec.dtype(r), acc, MEMORY_TYPES[acc])
        if acc == "bool":
            value = self.b.zext(value, ir.IntType(8))
        self.put_raw(pointer, index, self.combine(kind, acc, x, value))

    def finished(self, r: int, index):
        """Reduction `r`'s result at kept index `index`, from its accumulator."""
        kind, acc = self.accumulation(r)
        return self.finish(kind, self.spec.dtype(r), acc,
                           self.take(self.accumulators[r], index, acc, raw=True))

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
        if t is not None and v in self.available:  # an input too, if gathered in lanes
            result = self.take(self.buffer[v], t, spec.dtype(v))
        elif v < n:
            result = self.load(v, in_offsets[v])
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

    def put_raw(self, pointer, index, value) -> None:
        """Store `value` as it is (an accumulator, a bool as its byte)."""
        b = self.b
        b.store(value, b.gep(pointer, [index], inbounds=True, source_etype=value.type))

    def store(self, j: int, value, offset) -> None:
        v, _ = self.spec.outputs[j]
        self.put(self.pointers[self.targets[j]], offset, value, self.spec.dtype(v))

    # -- reductions

    def reduce(self, r: int):
        """Reduce the row buffer of reduction `r`: `ACCUMULATORS` independent vector
        accumulators over whole groups of vectors (so no combine waits for the one
        before), then one over the whole vectors left, the vectors and their lanes
        in a fixed order, then a scalar one over the rest. (A masked load of the rest
        measured slower on short rows: a wide load of what narrow stores just wrote
        cannot be forwarded from the store buffer.)"""
        spec, b = self.spec, self.b
        kind, acc = self.accumulation(r)
        dtype = spec.dtype(r)
        count = self.count
        # compiled for size, or an order to keep (`in_order`): the scalar loop alone
        if spec.small or _in_order(kind, acc):
            with carried_loop(b, ir.Constant(I64, 0), count,
                              [ir.Constant(MEMORY_TYPES[acc], _identity(kind, acc))], "t") as tail:
                x = self.widen(self.take(self.buffer[r], tail.index, dtype, raw=True), dtype,
                               acc, MEMORY_TYPES[acc])
                tail.next = [self.combine(kind, acc, tail.values[0], x)]
            return self.finish(kind, dtype, acc, tail.values[0])
        lanes = max(4, VECTOR_BYTES // BYTES[acc])
        group = lanes * ACCUMULATORS
        start = ir.Constant(ir.VectorType(MEMORY_TYPES[acc], lanes), [_identity(kind, acc)] * lanes)
        blocks = b.udiv(count, ir.Constant(I64, group))
        with carried_loop(b, ir.Constant(I64, 0), blocks, [start] * ACCUMULATORS,
                          "v") as loop:
            first = b.mul(loop.index, ir.Constant(I64, group))
            loop.next = [self.combine(kind, acc, total,
                                      self.chunk(r, b.add(first, ir.Constant(I64, k * lanes))))
                         for k, total in enumerate(loop.values)]
        totals = list(loop.values)
        whole = b.udiv(count, ir.Constant(I64, lanes))
        with carried_loop(b, b.mul(blocks, ir.Constant(I64, ACCUMULATORS)), whole,
                          [totals[0]], "w") as rest:
            rest.next = [self.combine(kind, acc, rest.values[0],
                                      self.chunk(r, b.mul(rest.index, ir.Constant(I64, lanes))))]
        totals[0] = rest.values[0]
        while len(totals) > 1:
            totals = [self.combine(kind, acc, x, y) for x, y in zip(totals[::2], totals[1::2])]
        scalar = None
        for lane in range(lanes):
            x = b.extract_element(totals[0], ir.Constant(ir.IntType(32), lane))
            scalar = x if scalar is None else self.combine(kind, acc, scalar, x)
        with carried_loop(b, b.mul(whole, ir.Constant(I64, lanes)), count, [scalar],
                          "t") as tail:
            x = self.widen(self.take(self.buffer[r], tail.index, dtype, raw=True), dtype, acc,
                           MEMORY_TYPES[acc])
            tail.next = [self.combine(kind, acc, tail.values[0], x)]
        return self.finish(kind, dtype, acc, tail.values[0])

    def chunk(self, r: int, first):
        """The vector of reduction `r`'s row buffer from element `first`, in its
        accumulator's dtype."""
        b, spec = self.b, self.spec
        kind, acc = self.accumulation(r)
        dtype = spec.dtype(r)
        lanes = max(4, VECTOR_BYTES // BYTES[acc])
        vector = ir.VectorType(MEMORY_TYPES[dtype], lanes)
        address = b.gep(self.buffer[r], [first], inbounds=True, source_etype=MEMORY_TYPES[dtype])
        return self.widen(b.load(address, typ=vector, align=BYTES[dtype]), dtype, acc,
                          ir.VectorType(MEMORY_TYPES[acc], lanes))

    def accumulation(self, r: int) -> tuple[str, str]:
        """Reduction `r`'s kind and the dtype it accumulates in."""
        kind = dict(self.spec.body[r - len(self.spec.inputs)].attrs)["kind"]
        dtype = self.spec.dtype(r)
        return kind, "f64" if kind in ("sum", "mean") and dtype == "f32" else dtype

    def finish(self, kind: str, dtype: str, acc: str, value):
        """A reduction's result of `dtype` from its accumulated `value` (a bool's byte)."""
        b = self.b
        if kind == "mean":
            value = b.fdiv(value, b.sitofp(self.count, MEMORY_TYPES[acc]))
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
        op = (">" if kind == "max" else "<") + ("=" if _in_order(kind, acc) else "")
        if is_float(acc):  # NaN propagates: x if x op y or x is NaN, else y
            pick = b.or_(b.fcmp_ordered(op, x, y), b.fcmp_unordered("uno", x, x))
        else:
            pick = icmp(b, acc, op, x, y)
        return b.select(pick, x, y)


class _LaneGenerator(_Generator):
    """Rows in lanes (`FusedSpec.lanes`): the code in rows, run on blocks of
    ``lanes`` consecutive rows along `FusedSpec.lane_dim` at once, a row in each
    lane of every vector. Each element is loaded for all lanes at once (a gather, a
    contiguous vector where the lanes' rows are adjacent, one scalar where the array
    does not vary along the lanes' dim), the scalar emitters compute on the vectors
    (`LaneBuilder`) and each reduction combines element after element into one
    accumulator vector: each lane reduces its row in index order with the scalar
    code's combine and accumulation dtype, so the results are the scalar rows' code's
    (`SMALL`'s) bit for bit. The last block's missing lanes are masked off (loads and
    stores). Values a later phase reads, the gathered inputs among them
    (`FusedSpec.gathered`), are kept in lane buffers in the scratch, ``lanes``
    slots per element (`FusedSpec.buffers`)."""

    def builder(self, block: ir.Block) -> LaneBuilder:
        return LaneBuilder(block, self.spec.lanes)

    def rows(self, scratch) -> None:
        """The blocks of rows, in loops over the other unreduced dims."""
        spec, b = self.spec, self.b
        lanes = spec.lanes
        stored = sorted(v for s in self.phases.stored for v in s)
        self.buffer = self.slice_scratch(scratch, stored,
                                         b.mul(self.count, ir.Constant(I64, lanes)))
        self.lane = spec.lane_dim
        self.iota = ir.Constant(ir.VectorType(I32, lanes), list(range(lanes)))
        self.steps = [self.lane_steps(s[self.lane]) for s in self.strides]
        # in the entry block, so that LLVM keeps them in registers
        self.accumulators = {r: b.alloca(ir.VectorType(MEMORY_TYPES[self.accumulation(r)[1]],
                                                       lanes))
                             for r in spec.reductions}
        zero = ir.Constant(I64, 0)
        outer = [d for d in spec.parallel if d != self.lane]
        self.loops(outer, [zero] * len(self.strides), self.strides, self.blocks)

    def lane_steps(self, stride):
        """How far each lane's row is from the first lane's, in elements, for an
        array of `stride` along the lanes' dim: None where it is 0 (every lane reads
        the same element), `iota` (0, 1, ...) where it is 1, else a vector of i32
        (the dims after the lanes' dim are reduced, so a stride is at most a row's
        static count of elements)."""
        if isinstance(stride, ir.Constant) and stride.constant in (0, 1):
            return None if stride.constant == 0 else self.iota
        return self.b.mul(self.iota, self.b.trunc(stride, I32))

    def blocks(self, offsets) -> None:
        """The rows along the lanes' dim, `lanes` at a time, from each array's
        `bases` (its pointer at the block's first row), the last block's missing
        lanes masked off (`active`)."""
        b, zero = self.b, ir.Constant(I64, 0)
        lanes, spare = ir.Constant(I64, self.spec.lanes), ir.Constant(I64, self.spec.lanes - 1)
        start, stop = (self.begin, self.end) if self.lane == self.split \
            else (zero, self.sizes[self.lane])
        count = b.udiv(b.add(b.sub(stop, start), spare), lanes)
        with counted_loop(b, zero, count, "block") as block:
            first = b.add(start, b.mul(block, lanes))
            left = b.sub(stop, first)
            left = b.select(b.icmp_signed("<", left, lanes), left, lanes)
            self.active = b.icmp_signed("<", self.iota, b.trunc(left, I32))
            self.bases = [b.gep(p, [_advance(b, o, first, s[self.lane])], inbounds=True,
                                source_etype=MEMORY_TYPES[dtype])
                          for p, o, s, dtype in zip(self.pointers, offsets, self.strides,
                                                    self.array_dtypes())]
            self.row([zero] * len(offsets))

    def array_dtypes(self) -> list[str]:
        """The dtypes of the arrays `strides` lists: the inputs, then the results not
        stored in place."""
        spec, own = self.spec, dict(self.spec.inplace)
        return [*spec.inputs, *(spec.dtype(v) for j, (v, _) in enumerate(spec.outputs)
                                if j not in own)]

    # -- memory

    def load(self, k: int, offset):
        """Input k's element at `offset` from each lane's row."""
        dtype = self.spec.inputs[k]
        kind = MEMORY_TYPES[dtype]
        steps, b = self.steps[k], self.b
        if steps is None:
            value = b.splat(b.load(self.element(k, offset, kind), typ=kind))
        else:
            zeros = ir.Constant(ir.VectorType(kind, self.spec.lanes), None)
            value = self.masked("load", dtype, self.element(k, offset, kind), zeros) \
                if steps is self.iota else \
                self.masked("gather", dtype, self.addresses(k, offset, kind), zeros)
        return b.icmp_unsigned("!=", value, ir.Constant(kind, 0)) if dtype == "bool" else value

    def store(self, j: int, value, offset) -> None:
        """Result j at `offset` in each active lane's row."""
        dtype = self.spec.dtype(self.spec.outputs[j][0])
        kind = MEMORY_TYPES[dtype]
        value, target = self.in_memory(value, dtype), self.targets[j]
        steps = self.steps[target]
        if steps is None:  # one element for every row, which each lane computed
            self.b.store(self.b.extract_element(value, ir.Constant(I32, 0)),
                         self.element(target, offset, kind))
        elif steps is self.iota:
            self.masked("store", dtype, value, self.element(target, offset, kind))
        else:
            self.masked("scatter", dtype, value, self.addresses(target, offset, kind))

    def masked(self, name: str, dtype: str, first, second):
        """``llvm.masked.<name>`` (load, gather: `first` the address(es), `second` the
        values of masked-off lanes; store, scatter: `first` the values, `second` the
        address(es)) of `dtype`'s vectors, over the `active` lanes."""
        lanes = self.spec.lanes
        suffix = dtype if is_float(dtype) else f"i{MEMORY_TYPES[dtype].width}"
        pointers = f"v{lanes}p0" if name in ("gather", "scatter") else "p0"
        align = ir.Constant(I32, BYTES[dtype])
        args = [first, align, self.active, second] if name in ("load", "gather") \
            else [first, second, align, self.active]
        ret = args[-1].type if name in ("load", "gather") else ir.VoidType()
        fn = self.emitter.math.intrinsic(f"llvm.masked.{name}.v{lanes}{suffix}.{pointers}",
                                         ret, [a.type for a in args])
        return self.b.call(fn, args)

    def element(self, array: int, offset, kind):
        """The address of `array`'s element at `offset` from the block's first row."""
        return self.b.gep(self.bases[array], [offset], inbounds=True, source_etype=kind)

    def addresses(self, array: int, offset, kind):
        """The vector of each lane's address of `array`'s element at `offset` in its
        row: the block's base pointer and a vector of i32 indices, the form x86's
        gathers and scatters take as it is. (llvmlite types a GEP as its pointer
        operand, a scalar here, so the vector type is set on it.)"""
        b = self.b
        index = b.add(self.steps[array], b.trunc(offset, I32))
        addresses = b.gep(self.bases[array], [index], inbounds=True, source_etype=kind)
        addresses.type = ir.VectorType(ir.PointerType(), self.spec.lanes)
        return addresses

    def in_memory(self, value, dtype: str):
        """`value` as a vector of `dtype`'s memory type (a bool as its byte)."""
        value = self.b.splat(value)
        return self.b.zext(value, MEMORY_TYPES[dtype]) if dtype == "bool" else value

    def lane_slot(self, pointer, index, dtype: str):
        """The address of element `index`'s lanes in lane buffer `pointer`."""
        b = self.b
        return b.gep(pointer, [b.mul(index, ir.Constant(I64, self.spec.lanes))],
                     inbounds=True, source_etype=MEMORY_TYPES[dtype])

    def take(self, pointer, index, dtype: str, raw: bool = False):
        """Element `index` of lane buffer `pointer` in every lane (a bool as i1
        unless `raw`: its byte)."""
        kind = MEMORY_TYPES[dtype]
        value = self.b.load(self.lane_slot(pointer, index, dtype),
                            typ=ir.VectorType(kind, self.spec.lanes), align=BYTES[dtype])
        return self.b.icmp_unsigned("!=", value, ir.Constant(kind, 0)) \
            if dtype == "bool" and not raw else value

    def put(self, pointer, index, value, dtype: str) -> None:
        """Element `index` of lane buffer `pointer`, `value`, in every lane."""
        self.b.store(self.in_memory(value, dtype), self.lane_slot(pointer, index, dtype),
                     align=BYTES[dtype])

    # -- reductions: an accumulator vector each, combined element after element

    def begin_reduction(self, r: int) -> None:
        """Reduction `r`'s accumulator vector, at its identity in every lane."""
        kind, acc = self.accumulation(r)
        self.put_raw(self.accumulators[r], ir.Constant(I64, 0),
                     self.b.splat(ir.Constant(MEMORY_TYPES[acc], _identity(kind, acc))))

    def feed(self, r: int, t, value) -> None:
        self.accumulate(r, ir.Constant(I64, 0), value)

    def reduce(self, r: int):
        return self.finished(r, ir.Constant(I64, 0))


def _in_order(kind: str, acc: str) -> bool:
    """Whether reduction `kind` accumulating in `acc` must combine its elements in
    index order: NumPy's float16 max and min loop over them one by one keeping the
    first of equal values (of -0.0 and 0.0, ``>=``, as its elementwise maximum), so
    the scalar loop, not the vector accumulators, gives its result."""
    return acc == "f16" and kind in ("max", "min")


def _identity(kind: str, dtype: str):
    """The value a reduction starts from: +0.0 for float sums, so that a sum of
    negative zeros is +0.0, as NumPy's."""
    if kind in ("sum", "mean", "any"):
        return 0.0 if is_float(dtype) else 0
    if kind in ("prod", "all"):
        return 1.0 if is_float(dtype) else 1
    if kind == "max":
        return float("-inf") if is_float(dtype) else int_range(dtype)[0]
    return float("inf") if is_float(dtype) else int_range(dtype)[1]


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
            kind = CODED_AS.get(inner.attrs["kind"], inner.attrs["kind"])
            if kind not in REDUCTIONS:
                raise Unsupported(f"no LLVM code for reduction {kind!r}", inner.loc)
            if dtype == "f16" and kind in HALF_ROUNDED:
                raise Unsupported(f"NumPy rounds a float16 {kind} to float16 where its "
                                  "loops end, which depends on the layout", inner.loc)
            instr = Instr("reduce", (number[inner.operand(0)],), dtype, (("kind", kind),))
        elif inner.name in EMITTERS:
            check_dtypes(inner)
            extra = pow_attrs(lay.shapes[inner.operand(1)], lay.domain) \
                if inner.name == "pow" else ()
            instr = Instr(inner.name, tuple(number[v] for v in inner.operands), dtype,
                          tuple(sorted([*((k, getattr(a, "short", a))
                                          for k, a in inner.attrs.items()), *extra])))
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
    failing op's location. Small calls run the op's own NumPy evaluator, the NumPy
    backend's step (`MIN_ELEMENTS`, `small_calls`).

    **In place.** Where it is safe (`in_place_result`), the compiled code stores a
    result through the pointer of the anchor's result, so the epilogue runs over the
    anchor's memory: the anchor computes into the result's given buffer (its out
    kernel), or the anchor's new array becomes the result; either way no array of
    the anchor's size is allocated for the result, nor written in a pass of its own."""

    def __init__(self, op: Operation, compiler: Compiler | None = None,
                 min_elements: int = MIN_ELEMENTS):
        """`min_elements`: below this size of the domain's largest array, calls run
        the NumPy evaluator (tests set 0, to run the code at every size)."""
        compiler = compiler or default_compiler()
        self._compiler = compiler
        self.min_elements = min_elements
        lay = lookup(op.name, op.loc).region_op.layout(op)  # an irflow.ops.fused.FusedLayout
        self.op = op
        self._anchor = self._anchor_into = None
        if lay.anchored:
            region_op = lookup(op.name).region_op
            self._anchor = region_op.anchor_kernel(op)
            self._anchor_into = region_op.anchor_out_kernel(op)
            if self._anchor is None:
                raise Unsupported("the anchor is not one op on the anchor's arguments", op.loc)
        entering = ([op.regions[0].blocks[0].terminator.operand(0).type] if lay.anchored
                    else []) + [v.type for v in op.operands[lay.n_anchor:]]
        inputs, instrs, number = lower_body(lay, entering)
        yielded = list(lay.body.terminator.operands)
        result_types = [r.type for r in op.results]
        rank = len(lay.domain)
        self.n_anchor = lay.n_anchor
        small = static_small(op, min_elements, lay)
        self._variants: dict[int | None, object] = {}  # in-place result -> code
        if not lay.axes and all(lay.shapes[v] == lay.domain for v in yielded):
            outputs = []
            for v in yielded:
                if number[v] < len(inputs):  # an operand yielded as it is: copy it
                    instrs.append(Instr("stop_gradient", (number[v],), inputs[number[v]]))
                    outputs.append(len(inputs) + len(instrs) - 1)
                else:
                    outputs.append(number[v])
            domain, masks = plan_domain(entering)
            spec = KernelSpec(inputs, masks, tuple(instrs), tuple(outputs), len(domain.groups),
                              small=small)
            self._domain = domain
            self._shapes = [lay.dropped_axes(v, t.shape) for v, t in zip(yielded, result_types)]
            self._dropping = [(r, dropped) for r, dropped in enumerate(self._shapes) if dropped]
            self.spec = spec
        else:
            self._domain = None
            rows = tuple(lay.is_row(v) for v in (*lay.body.args,
                                                  *(i.result for i in lay.body.body_ops())))
            outputs = tuple((number[v], _mask(lay.shapes[v], rank)) for v in yielded)
            spec = FusedSpec(inputs, tuple(_mask(t.shape, rank) for t in entering),
                             tuple(instrs), rows, outputs, rank, lay.axes, small=small)
            self.spec = dataclasses.replace(spec, lanes=spec.lane_width(lay.domain))
            self._prepare(lay, entering, yielded, result_types)
        self._in_place = self._in_place_candidates(op, lay, yielded, number, len(inputs))
        # a float32 matmul and a one-result elementwise body stored over it, with at
        # most a full max beside it: the GEMM's tiles apply the body
        # (gemm.fused_kernel), where a call fits
        self._fused, self._tiled = self._tiles(op, entering, compiler)
        if lay.anchored and self._fused is None:
            # a float32 matmul whose body the tiles do not apply: the generated GEMM,
            # then the body. (Where they do, a call they refuse, too small or of
            # arrays they do not take, runs NumPy's matmul, then the body: one GEMM
            # module less to compile, 0.1-0.15 s each.)
            inner = region_op.anchor_op(op)
            compiled = (conv.anchor_kernel if inner.name == "conv2d" else anchor_kernels)(
                inner, self._anchor, self._anchor_into, compiler)
            if compiled is not None:
                self._anchor = self._anchor_into = compiled

    def _tiles(self, op, entering, compiler) -> tuple[Callable | None, tuple]:
        """(the run of a GEMM whose tiles apply the body, `gemm.fused_kernel`, or None;
        (the result it stores over the anchor's, the result it stores the maximum
        into or None)): for a float32 matmul anchor and a body of one result stored
        in place of the anchor's, elementwise or beside the max of a value over the
        whole domain (`FusedSpec.elementwise_and_maximum`)."""
        if not self._in_place:
            return None, ()
        anchor = lookup(op.name).region_op.anchor_op(op)
        if self._domain is not None:
            if self._in_place != [0] or len(op.results) != 1:
                return None, ()
            tiles = conv.fused_kernel if anchor.name == "conv2d" else fused_kernel
            return tiles(anchor, self.spec, entering, compiler), (0, None)
        if anchor.name != "matmul":
            return None, ()
        tiled = self.spec.elementwise_and_maximum()
        if tiled is None or tiled[2] not in self._in_place:
            return None, ()
        spec, maximum, result, top = tiled
        return fused_kernel(anchor, spec, entering, compiler, maximum), (result, top)

    def _function(self, spec: FusedSpec):
        """The compiled function of `spec`, callable through ctypes."""
        code = self._compiler.code(spec)
        n = len(spec.inputs) + len(spec.outputs) - len(spec.inplace) + 1 + spec.fallible
        return code.function(2 + spec.rank + n)

    def _in_place_candidates(self, op, lay, yielded, number, n_inputs) -> list[int]:
        """The results the code may store in place of the anchor's result (body input
        0): the anchor is one contraction (its result a new array nobody else holds);
        the result is yielded once, made by a body op (not an operand passed through),
        of the anchor's type and spanning the whole domain (not broadcast); the code
        cannot fail (a failing call reruns the body on NumPy from the anchor's
        result); and for a body with reductions, no phase but the one storing the
        result reads the anchor's (`FusedSpec.reads_before_store`)."""
        region_op = lookup(op.name).region_op
        if not lay.anchored or not region_op.anchor_is_new(op) or self.spec.fallible:
            return []
        t = op.regions[0].blocks[0].terminator.operand(0).type
        fits = [k for k, (v, r) in enumerate(zip(yielded, op.results))
                if yielded.count(v) == 1 and number[v] >= n_inputs and r.type == t
                and lay.shapes[v] == tuple(t.shape) == tuple(lay.domain)]
        if self._domain is not None:
            return [] if any(self.spec.broadcast[0]) else fits
        spec = self.spec
        return [k for k in fits if not any(spec.masks[0]) and not any(spec.outputs[k][1])
                and spec.reads_before_store(k, 0)]

    def in_place_result(self, into: tuple[bool, ...] = ()) -> tuple[int, bool] | None:
        """(the result the code stores in place of the anchor's, whether the anchor
        computes into that result's given buffer) for results given buffers where
        `into` says, or None. A result with a buffer is preferred (the anchor's out
        kernel writes it); else one without (the anchor's new array is the result)."""
        given = [k for k in self._in_place if k < len(into) and into[k]]
        if given and self._anchor_into is not None:
            return given[0], True
        free = [k for k in self._in_place if not (k < len(into) and into[k])]
        return (free[0], False) if free else None

    @property
    def elementwise(self) -> Kernel | None:
        """The `Kernel` of a body without reductions (storing no result in place),
        None for a body with reductions."""
        return None if self._domain is None else self._variant(None)

    def _variant(self, k: int | None):
        """The code storing result `k` in place of the anchor's result (None: none),
        compiled when a run asks for it (when the plan is built): a plan uses one
        variant, and each takes 0.01-0.08 s to compile."""
        if k not in self._variants:
            spec = self.spec if k is None else dataclasses.replace(self.spec,
                                                                   inplace=((k, 0),))
            self._variants[k] = (self._compiler.kernel(spec, self._domain)
                                 if self._domain is not None else self._function(spec))
        return self._variants[k]

    @staticmethod
    def declines(op: Operation, min_elements: int = MIN_ELEMENTS) -> bool:
        """Whether every call of `op` is too small for compiled code, its sizes being
        static: then the op's own NumPy evaluator is its step, and nothing compiles."""
        return small_calls(op, min_elements) is always_small

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
        # (input, axis, domain dim or None where the axis must be 1), but for the axes
        # the sizes are read from
        self._expect = [(k, a, None if spec.masks[k][a + rank - t.rank] else a + rank - t.rank)
                        for k, t in enumerate(entering) for a in range(t.rank)
                        if (k, a) not in self._sources]
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
        self._fallible = spec.fallible
        self._axes, self._parallel, self._columns = spec.axes, spec.parallel, spec.columns
        self._inputs = tuple(zip(self._dtypes, self._ranks))
        self._shapes_in = tuple(tuple(t.shape) for t in entering)  # the IR's
        self._anchor_new = lay.anchored and lookup(self.op.name).region_op.anchor_is_new(self.op)
        self._empty_fails = any(dict(spec.body[r - len(spec.inputs)].attrs)["kind"]
                                in ("max", "min") for r in spec.reductions)

    def evaluator(self) -> Callable:
        """The evaluator: below `MIN_ELEMENTS` elements (the anchor's result, or the
        largest operand), the NumPy backend's own evaluator of the op, which costs
        less per call there."""
        region_op = lookup(self.op.name).region_op
        return self._sized(self._compiled(()), lambda: region_op.evaluator(self.op), False)

    def out_evaluator(self, into: tuple[bool, ...]) -> Callable:
        """The out evaluator (`RegionOp.out_evaluator`): `evaluator`'s run, the
        compiled code storing result k with ``into[k]`` into the next given buffer;
        where it runs NumPy, the NumPy out evaluator writes them. Its ``native``, where
        `native` gives one, is what it does as data."""
        region_op = lookup(self.op.name).region_op
        compiled = self._compiled(into)
        run = self._sized(compiled, lambda: region_op.out_evaluator(self.op, into), True)
        native = self.native(into) if run is compiled else None
        if native is not None:
            run.native = native
        return run

    def compiled_out_evaluator(self, into: tuple[bool, ...]) -> Callable:
        """`out_evaluator`'s run without its small calls given to NumPy: the code at
        every size (for an op whose every call is small, compiled for size), which a
        small op's step runs once a native run runs that code (`native`)."""
        return self._compiled(into)

    def native(self, into: tuple[bool, ...]) -> tuple[Call | Temporary, ...] | None:
        """The calls `out_evaluator`'s run makes on every call, as data
        (`irflow.codegen.native`: the operands are the step's arrays, their results'
        given buffers follow), where it makes nothing else: operands and results of
        static sizes, none empty, every result given a buffer, and the anchor, if
        any, a float32 product of matrices (`gemm.product_call`) computing into the
        buffer of the result stored in its place, or else into a `Temporary`. None
        for any other op. For an op whose every call is small (its run is NumPy's
        evaluator: `declines`), the calls of its code compiled for size, which only
        a native run makes (`LLVMLowering.out_evaluator`)."""
        op, n = self.op, self.n_anchor
        values = (*op.operands, *op.results)
        if not (into and all(into)) \
                or small_calls(op, self.min_elements) not in (None, always_small) \
                or not all(isinstance(v.type, TensorType) and v.type.is_static
                           and numel(v.type.shape) for v in values):
            return None
        k, computed_into = self.in_place_result(into) or (None, False)
        results = [Array(len(op.operands) + r) for r in range(len(op.results))]
        anchor = lookup(op.name).region_op.anchor_op(op) if n else None
        if self._fused is not None and k == self._tiled[0]:  # the tiles apply the body
            gemm, top = getattr(self._fused, "gemm", None), self._tiled[1]
            sizes = static_product(anchor) if gemm is not None and computed_into else None
            if sizes is None:
                return None
            return (gemm.native(sizes, Array(0), Array(1), results[k],
                                [Array(i) for i in range(2, len(op.operands))],
                                None if top is None else results[top]),)
        calls, operands = [], [Array(i) for i in range(len(op.operands))]
        if n:  # the product into result k's buffer, or memory of the run's
            target = results[k] if computed_into else Array(len(values))
            kernel = self._anchor_into if computed_into else self._anchor
            product = product_call(anchor, getattr(kernel, "gemm", None), Array(0),
                                   Array(1), target) if anchor.name == "matmul" else None
            if product is None:
                return None
            if not computed_into:
                t = anchor.result.type
                calls.append(Temporary(numel(t.shape) * t.dtype.np.itemsize))
            calls.append(product)
            operands = [target, *operands[n:]]
        own = [results[r] for r in range(len(results)) if r != k]
        if self._domain is None:
            body = self._reduction_native(k, operands, own)
        else:
            body = None if self._dropping else self._variant(k).native(operands, own)
        return None if body is None else (*calls, body)

    def _reduction_native(self, k: int | None, operands: list[Array], own: list[Array]
                          ) -> Call | None:
        """The call of the code of a body with reductions, result `k` stored in place,
        on static sizes (`_reduction_call`'s direct call), as data."""
        sizes = [1 if src is None else self._shapes_in[src[0]][src[1]]
                 for src in self._sources]
        count, rows, _, scratch = self._geometry(sizes)
        if not rows or not count and self._empty_fails:
            return None
        return Call(self._variant(k), (0, rows, *sizes, *operands, *own), scratch=scratch,
                    fallible=self._fallible)

    def _compiled(self, into: tuple[bool, ...]) -> Callable:
        """``run(args, regions, outs=())``: the anchor, then the code, in place where
        `in_place_result` says (see the class docstring); results given buffers
        where `into` says. A call the code refuses (the max of nothing) runs the
        NumPy evaluator, which raises the interpreter's error at the failing op. Its
        ``__wrapped__`` runs the anchor's kernel unsilenced, as a quiet kernel's does,
        for a caller that silences floating-point warnings once (a plan)."""
        k, computed_into = self.in_place_result(into) or (None, False)
        anchor = self._anchor_into if computed_into else self._anchor
        tiles = self._tiles_run(into, k, sum(into[:k]) if computed_into else None)
        if tiles is not None and self._domain is not None and all(
                v.type.is_static for v in self.op.operands[:self.n_anchor]):
            # the GEMM's tiles apply the elementwise body to every call of these
            # static sizes (`gemm.fused_kernel` has no tiles for sizes below its
            # thresholds) but of arrays they do not take as they are: those run the
            # anchor, then the NumPy body, so the body needs no code of its own
            # (0.01-0.02 s less to compile). With a symbolic batch the tiles refuse
            # the calls below their thresholds, which run the body's code.
            body = None
        elif self._domain is not None:
            body = self._elementwise_body(self._variant(k), k, into)
        else:
            body = self._reduction_call(self._variant(k), k,
                                        into or (False,) * len(self._out_dims),
                                        self._aliasing_pairs(k, into, computed_into))
        region_op = lookup(self.op.name).region_op
        fallback = _made_at_first_call(lambda: region_op.body_evaluator(self.op, into or None))
        run = self._make_run(into, k, computed_into, anchor, body, tiles, fallback)
        run.__wrapped__ = self._make_run(into, k, computed_into,
                                         getattr(anchor, "__wrapped__", anchor), body, tiles,
                                         fallback)
        return run

    def _make_run(self, into, k: int | None, computed_into: bool, anchor, body,
                  tiles, fallback) -> Callable:
        """`_compiled`'s run, with `anchor` the anchor's kernel (its out kernel if
        `computed_into`: it computes into result `k`'s buffer), `body` the code's
        call (``body(operands, given)``: the results, or None where it refuses; None
        where the body has no code: the NumPy body runs) and `fallback` the NumPy
        body's evaluator."""
        n = self.n_anchor
        j = sum(into[:k]) if computed_into else None  # the buffer of result k in `outs`

        def run(args, regions, outs=()):
            if tiles is not None:
                results = tiles(args, outs)
                if results is not None:
                    return results
            operands = args
            if j is not None:
                anchor(*args[:n], out=outs[j])
                operands = [outs[j], *args[n:]]
            elif anchor is not None:
                operands = [anchor(*args[:n]), *args[n:]]
            results = None if body is None else body(operands, outs)
            if results is not None:
                return results
            # the interpreter's error, at the failing op (the NumPy evaluator may write
            # result k's buffer, so it reads the anchor's result from a copy)
            if k is not None:
                operands = [operands[0].copy(), *operands[1:]]
            return fallback(list(operands), regions, outs) if into else \
                fallback(list(operands), regions)
        return run

    def _tiles_run(self, into, k: int | None, j: int | None) -> Callable | None:
        """``tiles(args, outs) -> results or None``: the call of the GEMM whose tiles
        apply the body (`_tiles`) for the variant storing result `k` in place (into
        ``outs[j]``, the anchor computing into it, if `j` is not None), with the
        maximum, if the body has one, stored into its given buffer where `into`
        says, else into a new array; None where the tiles do not apply to `k`. It is
        a generated call (`_tiles_call`) whose general path is the one below."""
        if self._fused is None or k != self._tiled[0]:
            return None
        fused, n, top = self._fused, self.n_anchor, self._tiled[1]
        t = None if top is None or not (top < len(into) and into[top]) else sum(into[:top])
        if top is None:
            def tiles(args, outs):
                result = fused(args[:n], args[n:], outs[j] if j is not None else None)
                return None if result is None else [result]
        else:
            shape, first = tuple(self.op.results[top].type.shape), k < top

            def tiles(args, outs):
                peak = outs[t] if t is not None else np.empty(shape, np.float32)
                result = fused(args[:n], args[n:], outs[j] if j is not None else None,
                               peak)
                if result is None:
                    return None
                return [result, peak] if first else [peak, result]
        if not hasattr(fused, "gemm"):
            return tiles  # a convolution's: one call takes 0.1 ms and more
        return self._tiles_call(into, k, j, t, tiles)

    def _tiles_call(self, into, k: int, j: int | None, t: int | None, general) -> Callable:
        """`_tiles_run`'s call, generated as `_reduction_call`'s is (the converging
        loop runs it once an iteration, and its Python took a sixth of the
        iteration): for ndarrays of float32 and of the IR's sizes, C-contiguous,
        writable and not empty, above the GEMM's thresholds, on a thread whose stack
        holds the GEMM's panels (`irflow.codegen.llvm.stack`), and buffers given for C
        (``out[j]``) and the maximum (``out[t]``) of their shapes sharing no memory
        with an operand, each check is one comparison, an operand that is the
        product's operand too is viewed once, and the code is called directly when
        the call runs in one part; any other call goes to `general`. For ``tanh(h @
        w + b)`` beside its max, the max given a buffer::

            def call(arrays, out):
                if len(arrays) != 4:
                    return general(arrays, out)
                a0, a1, a2, a3, = arrays
                if (type(a0) is not ndarray or a0.dtype is not t0
                    ...):
                    return general(arrays, out)
                if len(out) != 1:
                    return general(arrays, out)
                c = empty((64, 256), f32)
                o = out[0]
                if (type(o) is not ndarray or o.dtype is not f32 or o.shape != ()):
                    return general(arrays, out)
                try:
                    p0 = addressof(view(a0))
                    ...
                    p3 = p0 if a3 is a0 else addressof(view(a3))
                    ...
                except (TypeError, ValueError):  # read-only, not C-contiguous, or empty
                    return general(arrays, out)
                if (p0 < p5 + 4 and p5 < p0 + 65536 or ...):
                    return general(arrays, out)
                fn = f2
                if threads() == 1:
                    fn(0, 8, 64, 256, 256, p0, p1, p4, p2, p3, p5)
                else:
                    call_rows_reducing(fn, 8, 524288, (...), (a0, a1, c, a2, a3, ), o, maximum)
                return [c, o]
        """
        gemm, top = self._fused.gemm, self._tiled[1]
        shapes = [tuple(v.type.shape) for v in self.op.operands]
        body, ins, dims, sizes = input_lines(shapes, *self._tile_axes(gemm, shapes))
        m, columns, depth = sizes
        refusals = [f"{m} < {MIN_ROWS}"] if not isinstance(m, int) else []
        work = product([m, columns, depth])
        if not isinstance(work, int):
            refusals.append(f"{work} < {MIN_WORK}")
        refusals.append("not stack.roomy")  # the GEMM's panels on a thread's small stack
        body += refuse(refusals) + [f"if len(out) != {sum(into)}:", f"    {GENERAL}"]
        written = [("c", tuple_of([m, columns]), j)]  # (name, shape, its buffer in out)
        if top is not None:
            written.append(("o", tuple_of(self.op.results[top].type.shape), t))
        for name, shape, given in written:
            if given is None:
                body.append(f"{name} = empty({shape}, f32)")
            else:
                body += [f"{name} = out[{given}]"] + refuse([
                    f"type({name}) is not ndarray or {name}.dtype is not f32 "
                    f"or {name}.shape != {shape}"])
        pointers = [f"p{i}" for i in range(len(ins) + len(written))]
        same = {i: shapes.index(shape) for i, shape in enumerate(shapes)
                if shapes.index(shape) < i}
        body += addresses(pointers, [*ins, *(name for name, _, _ in written)], same)
        nbytes = [product([*d, 4]) for d in dims] + [product([m, columns, 4]), 4]
        # a given buffer against the operands (and the maximum's against C); the
        # arrays the call makes share memory with nothing
        pairs = [(len(ins) + w, i) for w, (_, _, given) in enumerate(written)
                 if given is not None for i in range(len(ins) + w)]
        if pairs:
            body += refuse([overlaps(pairs, pointers, nbytes)])
        functions = gemm.functions
        values = {"general": general, "ndarray": np.ndarray, "empty": np.empty,
                  "f32": np.dtype(np.float32), "addressof": ctypes.addressof,
                  "view": ctypes.c_char.from_buffer, "call_rows": call_rows,
                  "call_rows_reducing": call_rows_reducing, "maximum": np.maximum,
                  "threads": get_num_threads, "stack": stack,
                  **{f"t{i}": np.dtype(np.float32) for i in range(len(ins))},
                  **{f"f{nv}": fn for nv, fn in functions.items()}}
        body.append(f"fn = f{next(iter(functions))}" if len(functions) == 1
                    else f"fn = f1 if {columns} <= {NARROW} else f2")
        body += self._tiles_invocation(m, work, [str(x) for x in (m, columns, depth)],
                                       pointers, len(ins), top is not None)
        results = ["c" if r == k else "o" for r in range(len(self.op.results))]
        body.append(f"return [{', '.join(results)}]")
        return make(values, body, f"<irflow fused tiles call {len(ins)}:{len(results)}>")

    @staticmethod
    def _tile_axes(gemm, shapes) -> tuple[list, list]:
        """`input_lines`' sources and expected sizes for a GEMM's operands (A, B) and
        its epilogue's (the others), over the domain (M, N, K): A and B give the
        sizes, B's K must be A's, and each epilogue operand spans M and N as its kind
        (`gemm.EPILOGUE_KINDS`) says, its other axes of size 1."""
        ta, tb = gemm.trans_a, gemm.trans_b
        sources = [(0, 1 if ta else 0), (1, 0 if tb else 1), (0, 0 if ta else 1)]
        expect = [(1, 1 if tb else 0, 2)]
        for e, (kind, shape) in enumerate(zip(gemm.epilogue.kinds, shapes[2:]), start=2):
            spans = {"full": [0, 1], "column": [0, None],
                     "row": [*[None] * (len(shape) - 1), 1],
                     "scalar": [None] * len(shape)}[kind]
            expect += [(e, axis, d) for axis, d in enumerate(spans)]
        return sources, expect

    @staticmethod
    def _tiles_invocation(m, work, sizes: list[str], pointers: list[str], n_in: int,
                          reduces: bool) -> list[str]:
        """The lines calling the GEMM ``fn`` over the product's `sizes` (M, N, K) with
        A, B, C, the epilogue's operands (`pointers`: the `n_in` operands', then C's
        and, if it `reduces`, the maximum's): directly when the call runs in one part
        (below the least split, or with one thread: `row_ranges`), else through
        `call_rows` or `call_rows_reducing`."""
        args = ", ".join([*sizes, pointers[0], pointers[1], pointers[n_in],
                          *pointers[2:n_in]])
        tiles = -(-m // MR) if isinstance(m, int) else f"-(-{m} // {MR})"
        elements = work // WORK_PER_ELEMENT if isinstance(work, int) \
            else f"{work} // {WORK_PER_ELEMENT}"
        keep = f"(a0, a1, c, {''.join(f'a{i}, ' for i in range(2, n_in))})"
        if reduces:
            direct = f"fn(0, {tiles}, {args}, {pointers[-1]})"
            split = (f"call_rows_reducing(fn, {tiles}, {elements}, ({args},), {keep}, o, "
                     f"maximum)")
        else:
            direct = f"fn(0, {tiles}, {args})"
            split = f"call_rows(fn, {tiles}, {elements}, ({args},), {keep})"
        if isinstance(elements, int) and elements < least_split():
            return [direct]
        small = "" if isinstance(elements, int) else f"{elements} < {least_split()} or "
        return [f"if {small}threads() == 1:", f"    {direct}", "else:", f"    {split}"]

    def _sized(self, compiled: Callable, make_numpy: Callable[[], Callable],
               into: bool) -> Callable:
        """`compiled`, or `make_numpy()` (the op's own evaluator; out evaluators if
        `into`) on calls too small for the code, so a small call runs exactly the
        NumPy backend's step. Like a quiet kernel's, its ``__wrapped__`` (of the NumPy
        evaluator, where it has one, and of `compiled`) leaves floating-point warnings
        to a caller that silences them."""
        small = small_calls(self.op, self.min_elements)
        if small is None:
            return compiled
        numpy = make_numpy()
        if small is always_small:
            return numpy

        def make(numpy: Callable, compiled: Callable) -> Callable:
            if into:
                def run_into(args, regions, outs):
                    if small(args):
                        return numpy(args, regions, outs)
                    return compiled(args, regions, outs)
                return run_into

            def run(args, regions):
                return numpy(args, regions) if small(args) else compiled(args, regions)
            return run
        run = make(numpy, compiled)
        run.__wrapped__ = make(getattr(numpy, "__wrapped__", numpy), compiled.__wrapped__)
        return run

    def _elementwise_body(self, kernel: Kernel, k: int | None, into: tuple[bool, ...]
                          ) -> Callable:
        """``body(operands, given)``: `_run_elementwise` of `kernel`, storing result `k`
        in place, given buffers where `into` says. When no result drops axes, the
        kernel's outputs are the results (a given buffer is the output it returns),
        so it is the kernel's call with the buffers each output takes worked out
        once."""
        if self._dropping:
            return lambda operands, given: self._run_elementwise(kernel, k, operands, into,
                                                                 given)
        given_at = {r: i for i, r in enumerate(r for r, written in enumerate(into) if written)}
        picks = [given_at.get(r) for r in range(len(self._shapes)) if r != k]
        same = picks == list(range(len(given_at)))  # the given buffers are the outputs'
        loc = self.op.loc

        def body(operands, given):
            if same or not given:
                out = given or None
            else:
                out = [None if i is None else given[i] for i in picks]
            try:
                return kernel.run(operands, out)
            except IrflowError as e:
                if isinstance(e, ShapeError):
                    raise e.with_loc(loc)
                return None
        return body

    def _run_elementwise(self, kernel: Kernel, k: int | None, operands, into=(), given=()):
        """Run the elementwise `kernel`, storing result `k` (if not None) in place of
        `operands[0]`; given buffers for the results `into` marks."""
        out = None
        if given:  # the given buffers as the domain spans them, new arrays (None) else
            buffers = iter(given)
            out = []
            for r, (written, dropped) in enumerate(zip(into, self._shapes)):
                buffer = next(buffers) if written else None
                if r != k:
                    out.append(np.expand_dims(buffer, dropped) if dropped and written
                               else buffer)
        try:
            outs = kernel(*operands, out=out)
        except IrflowError as e:
            if isinstance(e, ShapeError):
                raise e.with_loc(self.op.loc)
            return None
        for r, dropped in self._dropping:
            outs[r] = outs[r].reshape(outs[r].shape[len(dropped):])
        if not given:
            return outs
        buffers = iter(given)
        return [next(buffers) if written else o for written, o in zip(into, outs)]

    def _aliasing_pairs(self, k: int | None, into, computed_into: bool
                        ) -> tuple[tuple[int, int], ...]:
        """The pairs of the call's arrays (`_run`'s operands, then the results but
        `k`) that the ``noalias`` pointers need checked: each array the code writes
        with every other, but for the arrays made for the call (the results without
        a buffer, the anchor's new result where it does not compute into one), whose
        memory nothing else can hold. Whatever a caller passes (a given buffer, an
        input, the anchor's result written in place of) is checked."""
        n_in, into = len(self.spec.inputs), into or (False,) * len(self._out_dims)
        own = [r for r in range(len(self._out_dims)) if r != k]
        fresh = {n_in + i for i, r in enumerate(own) if not into[r]}
        if self._anchor_new and not computed_into:
            fresh.add(0)
        written = {n_in + i for i in range(len(own))} | ({0} if k is not None else set())
        return written_pairs(sorted(written - fresh),
                             [i for i in range(n_in + len(own)) if i not in fresh])

    def _reduction_call(self, fn, k: int | None, into: tuple[bool, ...],
                        pairs: tuple[tuple[int, int], ...]) -> Callable:
        """``body(operands, given)``: `_run` of `fn` for result `k` in place, given
        buffers where `into` says and the overlap check of `pairs`, generated
        (`irflow.codegen.llvm.calling`), any call it does not take handed to `_run`.
        For ``tanh(h @ w + b)`` beside its max, in place, on static shapes::

            def call(arrays, out):
                ... (the inputs checked: `calling`'s example)
                if len(out) != 0:
                    return general(arrays, out)
                o1 = empty((), u1)
                try:
                    p0 = addressof(view(a0))
                    ...
                except (TypeError, ValueError):  # read-only, not C-contiguous, or empty
                    return general(arrays, out)
                scratch = empty(131072, uint8)
                fn(0, 1, 64, 256, p0, p1, p2, p3, addressof(view(scratch)))
                return [a0, o1]
        """
        n_in = len(self.spec.inputs)
        values = {"fn": fn, "general": functools.partial(self._run, fn, k, into, pairs),
                  "ndarray": np.ndarray, "empty": np.empty, "uint8": np.uint8,
                  "addressof": ctypes.addressof, "view": ctypes.c_char.from_buffer,
                  "call_rows": call_rows}
        values.update((f"t{i}", np.dtype(d)) for i, d in enumerate(self._dtypes))
        values.update((f"u{r}", np.dtype(d)) for r, d in enumerate(self._out_dtypes))
        body, ins, dims, sizes = input_lines(self._shapes_in, self._sources, self._expect)
        nbytes = [product([*shape, np.dtype(self._dtypes[i]).itemsize])
                  for i, shape in enumerate(dims)]
        results, lines = self._result_lines(k, into, sizes, nbytes)
        body += lines
        pointers = [f"p{i}" for i in range(n_in + len(results))]
        body += addresses(pointers, ins + results)
        if pairs:
            body += refuse([overlaps(pairs, pointers, nbytes)])
        parallel = [sizes[d] for d in self._parallel]
        slots = product(parallel) if self._columns else product([sizes[a] for a in self._axes])
        scratch = product([self._buffers * 8, slots])  # as `_geometry`'s
        if isinstance(scratch, int):  # else not below 8: the domain is not empty here
            scratch = max(scratch, 8)
        body += call_lines(parallel[0] if parallel else 1, sizes, pointers, ins + results,
                           product(sizes), self._fallible, "return None", scratch)
        returned = list(results)
        if k is not None:
            returned.insert(k, ins[0])
        body.append(f"return [{', '.join(returned)}]")
        return make(values, body, f"<irflow fused call {n_in}:{len(results)}>")

    def _result_lines(self, k: int | None, into: tuple[bool, ...], sizes: list, nbytes: list
                      ) -> tuple[list[str], list[str]]:
        """(the results' names but `k`'s, the lines of `_reduction_call` that make them
        or check their given buffers, ``out[i]``, where `into` says); appends their
        byte counts to `nbytes`. `sizes`: the domain's (ints or names)."""
        body = [f"if len(out) != {sum(into)}:", f"    {GENERAL}"]
        results, given = [], iter(range(sum(into)))
        for r, ((kept, mask), dtype) in enumerate(zip(self._out_dims, self._out_dtypes)):
            buffer = next(given) if into[r] else None
            if r == k:  # stored over the anchor's result (computed into its buffer)
                continue
            extent = [1 if mask[d] else sizes[d] for d in kept]
            shape = tuple_of(extent)
            results.append(f"o{r}")
            nbytes.append(product([*extent, np.dtype(dtype).itemsize]))
            if buffer is None:
                body.append(f"o{r} = empty({shape}, u{r})")
            else:
                body += [f"o{r} = out[{buffer}]"] + refuse(
                    [f"type(o{r}) is not ndarray or o{r}.dtype is not u{r} "
                     f"or o{r}.shape != {shape}"])
        return results, body

    def _run(self, fn, k: int | None, into, pairs, operands, given):
        """Run the compiled `fn` of a body with reductions, storing result `k` (if not
        None) in place of `operands[0]`; given buffers for the results `into` marks;
        `pairs`, the arrays that may alias (`_aliasing_pairs`). The general path of
        `_reduction_call`: the results, or None where the code refuses the call."""
        arrays, sizes, (count, rows, elements, scratch) = self._checked(operands)
        if count == 0 and self._empty_fails:
            return None
        own = self._results(sizes, k, into, given)
        if k is not None and not arrays[0].flags.writeable:
            raise ShapeError("the anchor's result, which a result is stored in place of, "
                             "must be writable", self.op.loc)
        operands = (*arrays, *own)
        pointers = [address(a) for a in operands]
        if overlapping(pairs, operands, pointers) is not None:
            raise ShapeError("a result's buffer (or the anchor's result, stored in place "
                             "of) overlaps another operand", self.op.loc)
        if rows and call_rows(fn, rows, elements, (*sizes, *pointers), operands,
                              scratch=scratch, fallible=self._fallible):
            return None
        if k is None:
            return own
        return [*own[:k], arrays[0], *own[k:]]

    def _checked(self, operands) -> tuple[Sequence[np.ndarray], Sequence[int], tuple]:
        """(the operands as C-contiguous arrays, the domain's sizes, its `_geometry`);
        raises `ShapeError` for an operand of another dtype or rank, or sizes the
        domain does not give."""
        arrays = []
        for i, (a, (dtype, rank)) in enumerate(zip(operands, self._inputs)):
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != rank:
                got = f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) \
                    else type(a).__name__
                raise ShapeError(f"fused kernel input {i} must be a {dtype} array of rank "
                                 f"{rank}, got {got}", self.op.loc)
            arrays.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        return (arrays, *self._sizes(arrays))

    def _sizes(self, arrays) -> tuple[Sequence[int], tuple[int, int, int, int]]:
        """The domain's sizes, read from the inputs, and its `_geometry`; raises
        `ShapeError` unless every input's axes have the sizes the domain gives them."""
        sizes = [1 if src is None else arrays[src[0]].shape[src[1]] for src in self._sources]
        for i, axis, d in self._expect:
            if arrays[i].shape[axis] != (1 if d is None else sizes[d]):
                raise ShapeError(f"fused kernel input {i} has shape {list(arrays[i].shape)}, "
                                 f"which does not broadcast to {sizes} as compiled",
                                 self.op.loc)
        return sizes, self._geometry(sizes)

    def _geometry(self, sizes) -> tuple[int, int, int, int]:
        """For the domain's `sizes`: (reduced elements per row, the rows the code runs,
        0 when a kept size is 0 and it runs none; the domain's elements; the scratch's
        bytes)."""
        count = math.prod([sizes[a] for a in self._axes])
        parallel = [sizes[d] for d in self._parallel]
        slots = math.prod(parallel) if self._columns else count
        rows = parallel[0] if parallel else 1  # a full reduction is one row, never split
        return count, rows if all(parallel) else 0, math.prod(sizes), self._buffers * slots * 8

    def _result_shapes(self, sizes) -> tuple[tuple[int, ...], ...]:
        """Each result's shape for the domain's `sizes`."""
        return tuple(tuple(1 if mask[d] else sizes[d] for d in dims)
                     for dims, mask in self._out_dims)

    def _results(self, sizes, k: int | None, into, given) -> list[np.ndarray]:
        """The arrays the code stores the results but `k` into: the given buffers
        (checked against the sizes: the code writes them whole) where `into` says,
        new arrays for the others."""
        buffers = iter(given)
        outs = []
        for r, (written, shape, dtype) in enumerate(zip(
                into or (False,) * len(self._out_dims), self._result_shapes(sizes),
                self._out_dtypes)):
            buffer = next(buffers) if written else None
            if r == k:
                continue
            if buffer is None:
                buffer = np.empty(shape, dtype)
            elif buffer.dtype != dtype or buffer.shape != shape or not (
                    buffer.flags.c_contiguous and buffer.flags.writeable):
                raise ShapeError(f"the buffer given for result {r} must be a writable "
                                 f"C-contiguous {dtype} array of shape {list(shape)}",
                                 self.op.loc)
            outs.append(buffer)
        return outs


def small_calls(op: Operation, least: int) -> Callable[[list], bool] | None:
    """What tells the calls of fused op `op` below `least` elements (the anchor's
    result, or the largest operand) from the others: None when the code runs
    whatever the sizes (`least` is 0, the body reduces and its sizes are static or
    it has no transcendental function, a static size reaches it, or the anchor's
    result has a size its operands' dims do not give), else ``small(operands)``,
    which reads the symbolic sizes off the operands' shapes (`always_small` when
    every size is static). See `MIN_ELEMENTS`."""
    if not least:
        return None
    lay = lookup(op.name, op.loc).region_op.layout(op)
    counts = _element_counts(op, lay)
    if lay.reductions and (all(isinstance(n, int) for n in counts) or not any(
            inner.name in TRANSCENDENTAL for inner in lay.body.body_ops())):
        return None
    types = [v.type for v in op.operands]
    if any(isinstance(n, int) and n >= least for n in counts):
        return None
    varying = [n for n in counts if not isinstance(n, int)]
    if not varying:
        return always_small
    where: dict[str, tuple[int, int]] = {}  # symbol -> an operand's (index, axis) of it
    for k, t in enumerate(types):
        for axis, d in enumerate(t.shape):
            if is_symbol(d):
                where.setdefault(d, (k, axis))
    if any(s not in where for n in varying for s in symbols_of(n)):
        return None
    if len(varying) == 1 and len(dim_terms(varying[0])) == 1:
        (coef, symbols), = dim_terms(varying[0])
        if len(symbols) == 1 and coef > 0:  # c * S: the size of one dim tells (a batch)
            k, axis = where[symbols[0]]
            below = -(-least // coef)
            return lambda args: args[k].shape[axis] < below
    symbols = sorted(where)
    reads = [where[s] for s in symbols]
    terms = [slot_terms(n, {s: i for i, s in enumerate(symbols)}) for n in varying]

    def small(args: list) -> bool:
        sizes = [args[k].shape[axis] for k, axis in reads]
        return all(evaluate_terms(t, sizes) < least for t in terms)
    return small


def _made_at_first_call(make: Callable[[], Callable]) -> Callable:
    """A function calling what `make()` returns, made at its first call: the NumPy
    evaluators compiled code falls back on, which most programs never run (making
    them was a tenth of a warm compile of the training step). Two threads making it
    at once make equal functions."""
    made: list[Callable] = []

    def call(*args):
        if not made:
            made.append(make())
        return made[0](*args)
    return call


def _element_counts(op: Operation, lay) -> list:
    """The element counts `small_calls` compares: of the body's operands and of the
    anchor's result (ints, or symbolic sizes)."""
    types = [v.type for v in op.operands]
    shapes = [types[k].shape for k in range(lay.n_anchor, len(types))]
    if lay.anchored:
        shapes.append(op.regions[0].blocks[0].terminator.operand(0).type.shape)
    return [numel(shape) for shape in shapes]


def static_small(op: Operation, least: int, lay) -> bool:
    """Whether every call of fused op `op` (of layout `lay`) is below `least`
    elements, its sizes static: its code is then compiled for size (`SMALL`)."""
    return all(isinstance(n, int) and n < least for n in _element_counts(op, lay))


def always_small(args: list) -> bool:
    """`small_calls` of an op whose sizes are static and below the least."""
    return True
