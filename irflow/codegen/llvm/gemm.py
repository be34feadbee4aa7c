"""Float32 matrix products (GEMM) as generated LLVM code, for the matmul anchors.

``C = A @ B`` for row-major float32 matrices, ``A`` given as ``[M, K]`` or, with
`GemmSpec.trans_a`, as ``[K, M]`` (its transpose is the operand: ``x.T @ g``), and
``B`` as ``[K, N]`` or, with `GemmSpec.trans_b`, as ``[N, K]`` (``g @ w.T``).

**Tiles.** A tile of ``mr`` rows by ``NR = 16 * nv`` columns of C is held in
``mr * nv`` zmm accumulators while its function runs the depth of a K block: per
k it loads ``nv`` 16-float vectors of a B row, broadcasts each of the tile's
``mr`` A elements (a load folded into the FMA) and does ``mr * nv``
``llvm.fma.v16f32``. The code is unrolled over the tile (and 4 k steps, but for
the first tile of a panel, which runs once per panel and M block), so the
accumulators stay in registers (`assembly` shows the loop: 64 FMAs, 32 broadcasts,
8 loads of B and no stack access per 4 k steps of an 8 x 32 tile).

**Blocking** (GotoBLAS/BLIS's). The driver loops over K blocks of at most ``kc``
(of one depth), M blocks of ``mc`` rows, the tile columns (*panels*) of N, then
the tile rows of the M block. A panel's ``kc x NR`` floats of B are copied once,
contiguous, into a buffer on the function's stack (zero past N) that stays in L1
or L2 (32 KiB at ``kc`` = 256, 128 KiB at 1024: one 64-byte B row per 16 FMAs is
well within L2's bandwidth) while every tile row uses it; the ``mc x kc`` block
of A stays in L2 (`blocking`). The copy is fused into the
panel's first tile, which reads B where it is and stores each vector it loads
into the buffer (no pass of its own: a separate copy of a 256 x 256 B cost a
sixth of a 64-row product). Reading B rows ``N`` apart in every tile instead
is slower: rows 1 KiB apart fall into a few L1 sets and evict each other. A
``[N, K]`` B is transposed into the buffer by gathers before the panel's tiles.
A row-major A is read where it is, through one pointer per tile row (which is
what limits ``mr`` to 8: x86 has 16 general registers); a ``[K, M]`` A is copied
per M block into a stack buffer in the tiles' order (``mr`` floats per k, tile
after tile), since read in place its columns are M floats apart.

**Edges.** Columns past N are masked: the first tile's B loads and every C load
and store use ``llvm.masked.load/store`` with per-vector masks (every lane on the
inner panels; an AVX-512 mask costs nothing there). Past the end of M, a tile
still computes ``mr`` rows, reading a row-major A's last row again (a packed A is
zero there), and stores only the rows inside M. So the module holds two tile
functions (one packing B, one reading the panel), where one per row count and
edge (32) made 1.3 MB of IR and took 0.55 s to compile.

**Accumulation.** The first K block stores its sums; later ones add them to what
C holds. A tile prefetches its C rows (for writing) before its K loop, so that C's
lines arrive while it computes: a C larger than L2, read again by a later K block,
otherwise waits for memory at every tile (1024 x 1024 x 512 took 2-10% longer). The
tiles of a panel after its first also ask, one row per iteration of their unrolled
loop, for the rows of B's next panel, which its first tile then packs from cache
(`_Generator.next_panel_share`). The order of the sum differs from OpenBLAS's, which is fine: both agree
with the float64 product to float32 rounding.

**Epilogue.** With `GemmSpec.epilogue`, each tile of the last K block stores its
sums into a tile buffer on the stack, and an elementwise body then reads them (a
loop over the tile, in L1, which LLVM vectorizes) and stores its results into C,
so a fused op's ``relu(x @ w + b)`` is one call and one pass (`fused_kernel`); its
operands follow C as pointer arguments. The tile's lines of the operands of C's
shape (the weight of an SGD update ``w - lr * (x.T @ g)``) are asked for before
the tile's K loop (`prefetch_operands`). Stored into C and read back there, a
tile's sums waited for the C lines their stores had just asked for, and the
operands' lines were read only when the body ran: cold (32 MiB of other memory
written before each call), 784 x 256 x 256 with that update took 570-630 µs
against 460-540 staged and prefetched (the product alone: 440-480).
An epilogue with an `Epilogue.maximum` also folds one of its values into running
maxima, one per element of a tile, on the stack of the call (or of each part of a
split call): the converging loop's ``new = tanh(h @ w + b)`` and ``max(abs(new -
h))`` are one call. After the last tile the driver folds those maxima into one and
stores it through its last pointer, once (`call_rows_reducing` combines the parts').

The function is ``void kernel(i64 begin, i64 end, i64 M, i64 N, i64 K, ptr A,
ptr B, ptr C, ptr operands..., [ptr maximum])`` over the tile rows ``[begin,
end)`` (units of ``mr`` rows), so `call_rows` can split M across threads (each
part's buffers on its thread's stack, at most 160 KiB: no scratch array to
allocate per call);
`Gemm` checks every argument before any code runs. The blocking is tuned for AVX-512 (32 zmm
registers) on an AMD Zen 5 and an Intel Xeon (`blocking`), and the backend uses the code
only on hosts that have it (`anchor_kernels`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ...errors import IrflowError, ShapeError
from ...ir import dtypes
from ...ir.core import Operation
from ...ir.registry import lookup
from ..native import Array, Call
from .blas import sgemm_call
from .compiler import Compiler, default_compiler
from .jit import HostTarget, Optimization
from .kernel import FUNCTION_NAME, Instr, address, call_rows, call_rows_reducing
from .loops import carried_loop, counted_loop
from .mathlib import Math
from .scalar import ScalarEmitter, can_fail
from .stack import stack

I1 = ir.IntType(1)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
WIDTH = 16  # floats per zmm vector
V16 = ir.VectorType(F32, WIDTH)
MASK = ir.VectorType(I1, WIDTH)
PTR = ir.PointerType()
ALIGN = 64  # bytes: the panel buffer starts on a cache line
UNROLL = 4  # k steps per iteration of a tile's loop


def const(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def gep(b: ir.IRBuilder, pointer, index):
    """The address of float `index` of `pointer`."""
    return b.gep(pointer, [index], inbounds=True, source_etype=F32)


def declared(module: ir.Module, name: str, result, args) -> ir.Function:
    """The function `name` of `module` (an intrinsic), declared if it is not yet."""
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(result, args), name)


def tile_intrinsics(module: ir.Module) -> tuple[ir.Function, ir.Function, ir.Function]:
    """``llvm.fma``, ``llvm.masked.load`` and ``llvm.masked.store`` of 16-float
    vectors, declared in `module`: what a tile of vector accumulators is made of."""
    return (declared(module, "llvm.fma.v16f32", V16, [V16] * 3),
            declared(module, "llvm.masked.load.v16f32.p0", V16, [PTR, I32, MASK, V16]),
            declared(module, "llvm.masked.store.v16f32.p0", ir.VoidType(),
                     [V16, PTR, I32, MASK]))


def splat(b: ir.IRBuilder, scalar, vector_type=V16):
    """A vector of `vector_type` (16 lanes) with `scalar` in every lane."""
    vector = b.insert_element(ir.Constant(vector_type, ir.Undefined), scalar,
                              ir.Constant(I32, 0))
    return b.shuffle_vector(vector, ir.Constant(vector_type, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, WIDTH), [0] * WIDTH))


@dataclass(frozen=True)
class GemmSpec:
    """One generated GEMM: the operands' layouts and the blocking (plain data, the
    compiler's cache key). Tiles of ``mr`` rows by ``16 * nv`` columns; K blocks of
    ``kc``, M blocks of ``mc`` rows (a multiple of ``mr``)."""

    trans_a: bool = False
    trans_b: bool = False
    mr: int = 8
    nv: int = 2
    kc: int = 1024
    mc: int = 128
    epilogue: Epilogue | None = None
    # LLVM's O1 pipeline without its loop unroller: the tiles are vector code
    # unrolled by hand, which O3's extra passes do not improve (the two GEMMs of the
    # training step ran the same within 1%, compiled in 0.21 s against 0.27), and
    # the unroller's work on the rest (fully unrolling a full tile's epilogue loop)
    # took a fifth of a module's 0.13 s and measured no faster. The loop vectorizer
    # stays: it vectorizes the epilogue's loop over a tile.
    optimization: ClassVar[Optimization] = Optimization(level=1, unroll=False)

    def __post_init__(self):
        if self.mc % self.mr or self.kc % UNROLL or min(self.mr, self.nv, self.kc) < 1:
            raise ValueError(f"bad blocking {self}: mc must be a multiple of mr, kc of "
                             f"{UNROLL}")

    @property
    def nr(self) -> int:
        return WIDTH * self.nv

    @property
    def extras(self) -> int:
        """The epilogue's operands: pointer arguments after C."""
        return len(self.epilogue.kinds) if self.epilogue is not None else 0

    @property
    def reduces(self) -> bool:
        """Whether the function stores a maximum (through a last pointer argument)."""
        return self.epilogue is not None and self.epilogue.maximum is not None

    def llvm_ir(self, fma: bool) -> str:
        """The module (the tiles always use ``llvm.fma``, and the backend runs them
        only on AVX-512 hosts; `fma` is the epilogue's math library's)."""
        return _Generator(self, fma).module()


EPILOGUE_KINDS = ("full", "row", "column", "scalar")
BODY_DTYPES = ("f32", "bool")  # an epilogue's values: float32, and the comparisons a
                               # select reads (softplus, leaky ReLU)


@dataclass(frozen=True)
class Epilogue:
    """An elementwise float32 body (its values float32, or the comparisons a select
    reads: `BODY_DTYPES`) the tiles apply to C's elements once their last K
    block is summed, in place, so that ``relu(x @ w + b)`` is one pass: value 0 is
    C's element, values 1.. are the elements of the extra operands (per `kinds`:
    "full" of C's shape, "row" a row of N broadcast down M, "column" M values
    broadcast along N, "scalar"), then one per instruction (numbered as in
    `KernelSpec`); `output` is the value stored into C. `maximum`, if not None, is a
    value whose maximum over C's elements the code stores too (NumPy's: NaN if any
    is NaN), a second result: ``max(abs(new - h))`` beside ``new = tanh(h @ w +
    b)``."""

    kinds: tuple[str, ...]
    body: tuple[Instr, ...]
    output: int
    maximum: int | None = None

    def __post_init__(self):
        values = 1 + len(self.kinds) + len(self.body)
        if any(k not in EPILOGUE_KINDS for k in self.kinds) \
                or any(i.dtype not in BODY_DTYPES or can_fail(i.op, i.dtype) for i in self.body) \
                or not 0 <= self.output < values or self.dtype(self.output) != "f32" \
                or self.maximum is not None and not (0 <= self.maximum < values
                                                     and self.dtype(self.maximum) == "f32"):
            raise ValueError(f"not a float32 epilogue of {EPILOGUE_KINDS} operands: {self}")

    def dtype(self, value: int) -> str:
        return "f32" if value <= len(self.kinds) else self.body[value - 1 - len(self.kinds)].dtype

    @property
    def magnitude(self) -> bool:
        """Whether the maximum is of an ``abs``: a value that is non-negative, or a
        NaN whose sign bit is clear (`fold_maximum` compares those as integers)."""
        k = len(self.kinds)
        return self.maximum is not None and self.maximum > k \
            and self.body[self.maximum - 1 - k].op == "abs"


def assembly(spec: GemmSpec, target: HostTarget | None = None) -> str:
    """The host assembly of `spec`'s module, to check that the tiles' loops keep
    their accumulators in registers (no stack access between the FMAs)."""
    target = target or HostTarget()
    module = llvm.parse_assembly(target.optimized_ir(spec.llvm_ir(target.has_fma),
                                                     spec.optimization))
    return target.machine.emit_assembly(module)


# ---------------------------------------------------------------- code generation

@dataclass
class _Block:
    """The driver's values a tile call needs: the function's arguments, the panel
    buffer, and the current K block (its start, depth, whether it adds)."""

    fn: ir.Function
    M: ir.Value
    N: ir.Value
    K: ir.Value
    A: ir.Value
    B: ir.Value
    C: ir.Value
    panel: ir.Value
    packed_a: ir.Value | None
    m_end: ir.Value
    extras: tuple = ()
    staged: ir.Value | None = None  # with an epilogue: the tile's sums, its input
    running: ir.Value | None = None  # with a maximum: one per element of a tile
    pc: ir.Value = None
    kc: ir.Value = None
    accumulate: ir.Value = None
    last: ir.Value = None
    row_tiles: ir.Value = None  # of the current M block


class _Generator:
    """Emits a `GemmSpec`'s module: the tile functions and the driver."""

    def __init__(self, spec: GemmSpec, fma: bool = True):
        self.spec = spec
        self.has_fma = fma
        self.m = ir.Module(name="gemm")
        self.fma, self.mload, self.mstore = tile_intrinsics(self.m)
        self.prefetch = ir.Function(self.m, ir.FunctionType(
            ir.VoidType(), [PTR, I32, I32, I32]), "llvm.prefetch.p0")  # rw, locality, data
        self.gather = ir.Function(
            self.m, ir.FunctionType(V16, [ir.VectorType(PTR, WIDTH), I32, MASK, V16]),
            "llvm.masked.gather.v16f32.v16p0") if spec.trans_b else None
        column = ir.VectorType(F32, spec.mr)  # a tile's A column, copying a [K, M] A
        self.column_load = ir.Function(
            self.m, ir.FunctionType(column, [PTR, I32, ir.VectorType(I1, spec.mr), column]),
            f"llvm.masked.load.v{spec.mr}f32.p0") if spec.trans_a else None
        # first -> tile function; first tiles pack B (not for [N, K] B)
        firsts = (False,) if spec.trans_b else (False, True)
        self.tiles = {first: self.tile(first) for first in firsts}

    def module(self) -> str:
        epilogue = self.spec.epilogue
        # the body over full tiles (a static width: 1.3 µs less a 64 x 256 x 256
        # call of the converging loop's body than one function of any width) and
        # over edge tiles
        self.epilogues = None if epilogue is None else (
            emit_epilogue(self.m, epilogue, self.has_fma, "epilogue_full", self.spec.nr, True),
            emit_epilogue(self.m, epilogue, self.has_fma, "epilogue_edge", staged=True))
        self.driver()
        return str(self.m)

    # -- helpers

    gep = staticmethod(gep)

    def masked_load(self, b: ir.IRBuilder, pointer, mask, passthru):
        return b.call(self.mload, [pointer, ir.Constant(I32, 4), mask, passthru])

    def masked_store(self, b: ir.IRBuilder, value, pointer, mask) -> None:
        b.call(self.mstore, [value, pointer, ir.Constant(I32, 4), mask])

    splat = staticmethod(splat)

    @staticmethod
    def min(b: ir.IRBuilder, x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)

    @staticmethod
    def ceil_div(b: ir.IRBuilder, x, d: int):
        return b.sdiv(b.add(x, const(d - 1)), const(d))

    def masks(self, b: ir.IRBuilder, width) -> list:
        """Per vector of a tile, the mask of its columns below `width`."""
        vt = ir.VectorType(I64, WIDTH)
        lanes = ir.Constant(vt, list(range(WIDTH)))
        return [b.icmp_signed("<", lanes, self.splat(b, b.sub(width, const(WIDTH * v)), vt))
                for v in range(self.spec.nv)]

    # -- the tile

    def tile(self, first: bool) -> ir.Function:
        """``tile(kc, a, a_step, b, ldb, c, ldc, mask_0..mask_{nv-1}, accumulate,
        panel, rows, ahead, ahead_rows, d, ldd)``: D[0:rows, 0:NR] (``ldd`` apart, the
        columns the masks keep) = the product of the A rows (row r's element k at
        ``a[r * a_step + k]``, or ``a[k * a_step + r]`` for a transposed A) and kc
        rows of B, plus C's rows (``ldc`` apart) if `accumulate`; D is C, or the stack
        tile an epilogue reads (`store_tile`). The tile asks for B's rows at `ahead`
        (`next_panel_share`) while it runs. A `first` tile
        reads B's rows ``ldb`` apart (the columns the masks keep, zero past them) and
        stores each vector into `panel`; the others read `panel`. Every tile
        computes ``mr`` rows: past `rows`, a row-major A's last row is read again
        (a packed A is zero there) and nothing is stored. So two functions serve
        every tile: one per row count and column edge (32 for 8 x 32 tiles) made a
        module of 1.3 MB of IR, 0.55 s to compile, where the masked C accesses and
        first-tile B loads cost nothing measurable (AVX-512 masks)."""
        s, nv = self.spec, self.spec.nv
        fnty = ir.FunctionType(ir.VoidType(), [I64, PTR, I64, PTR, I64, PTR, I64,
                                               *[I16] * nv, I1, PTR, I64, PTR, I64, PTR, I64])
        fn = ir.Function(self.m, fnty, f"tile{'p' if first else ''}")
        fn.linkage = "internal"
        fn.attributes.add("noinline")  # a call per tile costs nothing; compiling, half
        for k in (1, 3, 5, len(fn.args) - 2):
            fn.args[k].add_attribute("noalias")
        kc, a, a_step, bp, ldb, c, ldc, *rest = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        masks = [b.bitcast(m, MASK) for m in rest[:nv]]
        accumulate, panel, rows, ahead, ahead_rows, d, ldd = rest[nv:nv + 7]
        last = b.sub(rows, const(1))
        a_rows = None if s.trans_a else [
            self.gep(b, a, b.mul(a_step, self.min(b, const(r), last))) for r in range(s.mr)]

        def b_row(k) -> list:
            if not first:
                row = self.gep(b, panel, b.mul(k, const(s.nr)))
                return [b.load(self.gep(b, row, const(WIDTH * v)), typ=V16, align=ALIGN)
                        for v in range(nv)]
            row = self.gep(b, bp, b.mul(k, ldb))
            out = self.gep(b, panel, b.mul(k, const(s.nr)))
            vectors = []
            for v in range(nv):
                pointer = self.gep(b, row, const(WIDTH * v))
                vectors.append(self.masked_load(b, pointer, masks[v],
                                                ir.Constant(V16, [0.0] * WIDTH)))
                b.store(vectors[-1], self.gep(b, out, const(WIDTH * v)), align=ALIGN)
            return vectors

        def step(k, acc, unrolled: int | None = None) -> list:
            if not first and unrolled == 0:
                self.prefetch_row(b, ahead, b.sdiv(k, const(UNROLL)), ahead_rows, ldb)
            bvecs = b_row(k)
            if a_rows is None:
                column = self.gep(b, a, b.mul(k, a_step))
                pointers = [self.gep(b, column, const(r)) for r in range(s.mr)]
            else:
                pointers = [self.gep(b, row, k) for row in a_rows]
            out = []
            for r, pointer in enumerate(pointers):
                element = self.splat(b, b.load(pointer, typ=F32))
                out += [b.call(self.fma, [element, bvecs[v], acc[r * nv + v]])
                        for v in range(nv)]
            return out

        self.prefetch_tile(b, c, ldc, last)
        # a first tile runs once per panel and M block (one tile row of mc / mr), so
        # it is not unrolled: that halves its code, about half the module's
        acc = self.k_loop(b, kc, step, [ir.Constant(V16, [0.0] * WIDTH)] * (s.mr * nv),
                          1 if first else UNROLL)
        self.store_tile(b, acc, rows, (c, ldc), (d, ldd), masks, accumulate)
        b.ret_void()
        return fn

    def prefetch_row(self, b: ir.IRBuilder, ahead, i, count, ldb) -> None:
        """Ask for row `i` of B's rows at `ahead` (``ldb`` apart), the tile's ``nv``
        vectors of it, if i < `count` (else row 0 again: a hint in cache, no branch)."""
        row = b.gep(ahead, [b.mul(b.select(b.icmp_signed("<", i, count), i, const(0)), ldb)],
                    source_etype=F32)
        for v in range(self.spec.nv):
            b.call(self.prefetch, [b.gep(row, [const(WIDTH * v)], source_etype=F32),
                                   ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])

    def next_panel_share(self, b: ir.IRBuilder, x: _Block, t, jr) -> tuple:
        """(the first of B's rows, count) that tile row `t` (not the first) of the
        panel at column `jr` asks for, one per iteration of its unrolled loop: the K
        block's rows of the next panel, shared among this panel's other tiles. Its
        first tile, which packs them, then reads them from cache: B's rows are N
        floats apart, which the hardware prefetches poorly from memory (a cold 256 x
        784 x 256 product took 3-5% less, a warm one up to 1% more). None for a
        transposed B, whose panels are gathered."""
        s = self.spec
        if s.trans_b:
            return x.B, const(0)
        others = b.sub(x.row_tiles, const(1))
        share = b.sdiv(b.add(x.kc, b.sub(others, const(1))),  # rows a tile asks for
                       b.select(b.icmp_signed(">", others, const(0)), others, const(1)))
        start = b.mul(b.sub(t, const(1)), share)
        count = self.min(b, share, b.sub(x.kc, start))
        next_panel = b.add(jr, const(s.nr))
        count = b.select(b.icmp_signed("<", next_panel, x.N), count, const(0))
        return b.gep(x.B, [b.add(b.mul(b.add(x.pc, start), x.N), next_panel)],
                     source_etype=F32), count

    def prefetch_tile(self, b: ir.IRBuilder, c, ldc, last) -> None:
        """Ask for the lines of the tile's C rows (up to row `last`), to write: a hint,
        so addresses past N or past the end of C (plain, not inbounds, geps) do no
        harm."""
        for r in range(self.spec.mr):
            row = b.gep(c, [b.mul(ldc, self.min(b, const(r), last))], source_etype=F32)
            for v in range(self.spec.nv):
                b.call(self.prefetch, [b.gep(row, [const(WIDTH * v)], source_etype=F32),
                                       ir.Constant(I32, 1), ir.Constant(I32, 3),
                                       ir.Constant(I32, 1)])

    def k_loop(self, b: ir.IRBuilder, kc, step, inits, unroll: int = UNROLL) -> list:
        """The accumulators after ``step(k, acc)`` for k in [0, kc): a loop unrolled
        `unroll` times (fewer loop instructions per FMA), then one for the rest."""
        if unroll == 1:
            with carried_loop(b, const(0), kc, inits, "k") as loop:
                loop.next = step(loop.index, loop.values)
            return loop.values
        steps = b.sdiv(kc, const(unroll))
        with carried_loop(b, const(0), steps, inits, "k") as loop:
            acc = loop.values
            for u in range(unroll):
                acc = step(b.add(b.mul(loop.index, const(unroll)), const(u)), acc, u)
            loop.next = acc
        with carried_loop(b, b.mul(steps, const(unroll)), kc, loop.values, "kr") as rest:
            rest.next = step(rest.index, rest.values)
        return rest.values

    def store_tile(self, b: ir.IRBuilder, acc, rows, c, d, masks, accumulate) -> None:
        """Store the accumulators of the tile's first `rows` rows (the columns the
        masks keep) into `d`, added to what `c` holds if `accumulate` (a branch: the
        first K block neither loads C nor waits for it); `c` and `d` are (pointer,
        row stride): both C's, or C's and the stack tile an epilogue reads."""
        nv = self.spec.nv
        nothing = ir.Constant(MASK, [0] * WIDTH)
        places = []  # (C's pointer, d's pointer, mask) per accumulator
        for r in range(self.spec.mr):
            inside = b.icmp_signed("<", const(r), rows)
            rows_at = [self.gep(b, p, b.mul(ld, const(r))) for p, ld in (c, d)]
            places += [(*(self.gep(b, row, const(WIDTH * v)) for row in rows_at),
                        b.select(inside, masks[v], nothing)) for v in range(nv)]
        with b.if_else(accumulate) as (adding, setting):
            with adding:
                for value, (source, pointer, mask) in zip(acc, places):
                    old = self.masked_load(b, source, mask, ir.Constant(V16, [0.0] * WIDTH))
                    self.masked_store(b, b.fadd(value, old), pointer, mask)
            with setting:
                for value, (_, pointer, mask) in zip(acc, places):
                    self.masked_store(b, value, pointer, mask)

    # -- the driver

    def driver(self) -> None:
        s = self.spec
        fnty = ir.FunctionType(ir.VoidType(),
                               [I64] * 5 + [PTR] * (3 + s.extras + s.reduces))
        fn = ir.Function(self.m, fnty, FUNCTION_NAME)
        begin, end, M, N, K, A, B, C, *extras = fn.args
        for arg in (A, B, C, *extras):
            arg.add_attribute("noalias")
        maximum = extras.pop() if s.reduces else None
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        panel = self.stack(b, s.kc * s.nr)
        packed_a = self.stack(b, s.mc * s.kc) if s.trans_a else None
        staged = None if s.epilogue is None else self.stack(b, s.mr * s.nr)
        m_begin = b.mul(begin, const(s.mr))
        x = _Block(fn, M, N, K, A, B, C, panel, packed_a,
                   self.min(b, b.mul(end, const(s.mr)), M), tuple(extras), staged)
        if maximum is not None:
            x.running = self.stack(b, s.mr * s.nr)
            # the identity of max (of magnitudes: 0)
            lowest = ir.Constant(V16, [0.0 if s.epilogue.magnitude else -math.inf] * WIDTH)
            for v in range(s.mr * s.nv):
                b.store(lowest, self.gep(b, x.running, const(WIDTH * v)), align=ALIGN)
        # K blocks of one depth (a multiple of the tiles' unrolling), at most kc:
        # K = 784 is one block of 784, not 768 and 16
        k_blocks = self.ceil_div(b, K, s.kc)
        depth = b.sdiv(b.add(K, b.sub(k_blocks, const(1))),
                       b.select(b.icmp_signed(">", k_blocks, const(0)), k_blocks, const(1)))
        depth = b.mul(self.ceil_div(b, depth, UNROLL), const(UNROLL))
        with counted_loop(b, const(0), k_blocks, "pc") as pcb:
            x.pc = b.mul(pcb, depth)
            x.kc = self.min(b, depth, b.sub(K, x.pc))
            x.accumulate = b.icmp_signed("!=", pcb, const(0))
            x.last = b.icmp_signed("==", pcb, b.sub(k_blocks, const(1)))
            with counted_loop(b, const(0), self.ceil_div(b, b.sub(x.m_end, m_begin), s.mc),
                              "ic") as icb:
                ic = b.add(m_begin, b.mul(icb, const(s.mc)))
                row_tiles = self.ceil_div(b, self.min(b, const(s.mc), b.sub(x.m_end, ic)),
                                          s.mr)
                x.row_tiles = row_tiles
                if s.trans_a:
                    self.pack_a(b, x, ic, row_tiles)
                with counted_loop(b, const(0), self.ceil_div(b, N, s.nr), "jr") as jrb:
                    jr = b.mul(jrb, const(s.nr))
                    if s.trans_b:
                        self.pack_transposed(b, x, jr)
                    with counted_loop(b, const(0), row_tiles, "ir") as irb:
                        first = b.icmp_signed("==", irb, const(0))
                        self.tile_call(b, x, ic, irb, jr, first)
        if maximum is not None:
            self.store_maximum(b, x.running, maximum)
        b.ret_void()

    @staticmethod
    def stack(b: ir.IRBuilder, floats: int) -> ir.Value:
        """A buffer of `floats` floats on the function's stack, on a cache line."""
        buffer = b.alloca(ir.ArrayType(F32, floats))
        buffer.align = ALIGN
        return b.inttoptr(b.ptrtoint(buffer, I64), PTR)  # llvmlite's alloca is typed

    def store_maximum(self, b: ir.IRBuilder, running, pointer) -> None:
        """Store the maximum of the running maxima (one per element of a tile: see
        `emit_epilogue`) through `pointer`, by NumPy's maximum (a NaN stays): vector
        with vector, then lane with lane."""
        s, emitter = self.spec, ScalarEmitter(b, Math(b, self.has_fma))

        def maximum(x, y):
            return fold_maximum(emitter, s.epilogue.magnitude, x, y)
        values = [b.load(self.gep(b, running, const(WIDTH * v)), typ=V16, align=ALIGN)
                  for v in range(s.mr * s.nv)]
        values = [functools.reduce(maximum, values)]
        values = [b.extract_element(values[0], ir.Constant(I32, lane))
                  for lane in range(WIDTH)]
        b.store(functools.reduce(maximum, values), pointer)

    def tile_call(self, b: ir.IRBuilder, x: _Block, ic, t, jr, first) -> None:
        """Compute tile row `t` of the M block at row `ic`, at column `jr` of C, over
        the K block (its panel's first tile if `first`, for a [K, N] B)."""
        s = self.spec
        i = b.add(ic, b.mul(t, const(s.mr)))
        width = b.sub(x.N, jr)
        masks = [b.bitcast(m, I16) for m in self.masks(b, width)]
        if s.trans_a:
            ap, a_step = self.gep(b, x.packed_a, b.mul(t, const(s.kc * s.mr))), const(s.mr)
        else:
            ap, a_step = self.gep(b, x.A, b.add(b.mul(i, x.K), x.pc)), x.K
        bp = self.gep(b, x.B, b.add(b.mul(x.pc, x.N), jr))
        cp = self.gep(b, x.C, b.add(b.mul(i, x.N), jr))
        rows = self.min(b, const(s.mr), b.sub(x.m_end, i))
        ahead, ahead_rows = self.next_panel_share(b, x, t, jr)
        d, ldd = cp, x.N
        if x.staged is not None:  # the last K block's sums go to the epilogue's tile
            d, ldd = b.select(x.last, x.staged, cp), b.select(x.last, const(s.nr), x.N)
        args = [x.kc, ap, a_step, bp, x.N, cp, x.N, *masks, x.accumulate, x.panel, rows,
                ahead, ahead_rows, d, ldd]
        if s.epilogue is not None and "full" in s.epilogue.kinds:
            with b.if_then(x.last):
                self.prefetch_operands(b, x, i, jr, rows)
        if s.trans_b:  # the panel is filled before its tiles: none packs
            b.call(self.tiles[False], args)
        else:
            with b.if_else(first) as (packing, reading):
                with packing:
                    b.call(self.tiles[True], args)
                with reading:
                    b.call(self.tiles[False], args)
        if self.epilogues is not None:
            args = [x.C, x.N, i, jr, rows, self.min(b, width, const(s.nr)), x.staged,
                    const(s.nr), *x.extras, *(() if x.running is None else (x.running,))]
            with b.if_then(x.last):
                with b.if_else(b.icmp_signed(">=", width, const(s.nr))) as (full, edge):
                    with full:
                        b.call(self.epilogues[0], args)
                    with edge:
                        b.call(self.epilogues[1], args)

    def prefetch_operands(self, b: ir.IRBuilder, x: _Block, i, jr, rows) -> None:
        """Ask for the tile's lines of the epilogue's operands of C's shape (rows i..
        of `rows`, columns jr..), which it reads once the tile is summed: fetched
        while the tile's K loop runs."""
        last = b.sub(rows, const(1))
        for kind, extra in zip(self.spec.epilogue.kinds, x.extras):
            if kind != "full":
                continue
            for r in range(self.spec.mr):
                row = b.gep(extra, [b.add(b.mul(b.add(i, self.min(b, const(r), last)), x.N),
                                          jr)], source_etype=F32)
                for v in range(self.spec.nv):
                    b.call(self.prefetch, [b.gep(row, [const(WIDTH * v)], source_etype=F32),
                                           ir.Constant(I32, 0), ir.Constant(I32, 3),
                                           ir.Constant(I32, 1)])

    def pack_a(self, b: ir.IRBuilder, x: _Block, ic, row_tiles) -> None:
        """Copy the M block of a [K, M] A into the tiles' order: tile row t's k-th
        ``mr`` floats (the tile's A column k, zero past M) at ``(t * kc + k) * mr``,
        so a tile reads its A as one sequential stream (read in place, its columns
        are M floats apart: half a cache line used per line, and 15% slower)."""
        mr = self.spec.mr
        vt, lanes_type = ir.VectorType(F32, mr), ir.VectorType(I64, mr)
        lanes = ir.Constant(lanes_type, list(range(mr)))
        with counted_loop(b, const(0), row_tiles, "pa") as t:
            i = b.add(ic, b.mul(t, const(mr)))
            left = b.insert_element(ir.Constant(lanes_type, ir.Undefined), b.sub(x.m_end, i),
                                    ir.Constant(I32, 0))
            left = b.shuffle_vector(left, ir.Constant(lanes_type, ir.Undefined),
                                    ir.Constant(ir.VectorType(I32, mr), [0] * mr))
            mask = b.icmp_signed("<", lanes, left)  # the rows of the tile inside M
            tile = self.gep(b, x.packed_a, b.mul(t, const(self.spec.kc * mr)))
            with counted_loop(b, const(0), x.kc, "pak") as k:
                source = self.gep(b, x.A, b.add(b.mul(b.add(x.pc, k), x.M), i))
                column = b.call(self.column_load, [source, ir.Constant(I32, 4), mask,
                                                   ir.Constant(vt, [0.0] * mr)])
                b.store(column, self.gep(b, tile, b.mul(k, const(mr))), align=4)

    def pack_transposed(self, b: ir.IRBuilder, x: _Block, jr) -> None:
        """Fill the panel buffer from an [N, K] B: the panel's row k (vector v) is
        element pc + k of B's rows jr + 16 v + lane (zero past N), one
        ``llvm.masked.gather`` per vector (a scalar loop copying the same took 6%
        of a 1024 x 256 x 784 product)."""
        vt = ir.VectorType(I64, WIDTH)
        lanes = ir.Constant(vt, list(range(WIDTH)))
        bytes_per_row = b.mul(x.K, const(4))
        bases, masks = [], self.masks(b, b.sub(x.N, jr))
        for v in range(self.spec.nv):
            rows = b.add(self.splat(b, b.add(jr, const(WIDTH * v)), vt), lanes)
            start = b.add(b.ptrtoint(x.B, I64), b.mul(x.pc, const(4)))
            bases.append(b.add(self.splat(b, start, vt),
                               b.mul(rows, self.splat(b, bytes_per_row, vt))))
        with counted_loop(b, const(0), x.kc, "pt") as k:
            row = self.gep(b, x.panel, b.mul(k, const(self.spec.nr)))
            offset = self.splat(b, b.mul(k, const(4)), vt)
            for v, (base, mask) in enumerate(zip(bases, masks)):
                pointers = b.inttoptr(b.add(base, offset), ir.VectorType(PTR, WIDTH))
                column = b.call(self.gather, [pointers, ir.Constant(I32, 4), mask,
                                              ir.Constant(V16, [0.0] * WIDTH)])
                b.store(column, self.gep(b, row, const(WIDTH * v)), align=ALIGN)


def emit_epilogue(module: ir.Module, epilogue: Epilogue, has_fma: bool,
                  name: str = "epilogue", width: int | None = None,
                  staged: bool = False) -> ir.Function:
    """Add to `module` the internal ``epilogue(c, ldc, i, j, rows, width, extra_1..,
    [running])``: `epilogue`'s body over C's rows i.. (``rows``) and columns j..
    (``width``), in place: a tile just stored, still in L1, its inner loop over
    contiguous columns vectorized by LLVM. `staged`: ``epilogue(c, ldc, i, j, rows,
    width, tile, ldt, extra_1.., [running])`` reads the products from `tile` (row r's
    ``ldt`` floats apart, on the caller's stack) and stores the results into C. The
    GEMM stages its tiles: read back from C in place, a tile's sums waited for the
    lines its stores had just asked for (a cold 784 x 256 x 256 product with a
    one-multiply epilogue took 10-20% longer than without). The body is the scalar code of
    `irflow.codegen.llvm.scalar`, as an elementwise kernel's, so it computes what the
    unfused epilogue computes. A static `width` (a full tile's) replaces the
    argument's: the loop is then whole vectors, without the remainder loops a
    variable width needs, and LLVM keeps the body's constants in registers.

    With a maximum, `running` holds a running maximum per element of a tile
    (``running[r * width + col]``, folded with `fold_maximum`): independent per
    element, so the loop still vectorizes with no value carried from one element to
    the next. max is exact in any order, and a slot holds only values already
    folded in (or the identity), so the layout may change with the tile's width."""
    n = len(epilogue.kinds) + (epilogue.maximum is not None)
    fnty = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, I64, I64,
                                           *([PTR, I64] if staged else []), *[PTR] * n])
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # the driver calls it per tile; compiling, less
    c, ldc, i, j, rows, columns, *extras = fn.args
    tile, ldt = (extras.pop(0), extras.pop(0)) if staged else (None, None)
    for arg in (c, *extras, *(() if tile is None else (tile,))):
        arg.add_attribute("noalias")
    running = extras.pop() if epilogue.maximum is not None else None
    columns = columns if width is None else const(width)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    emitter = ScalarEmitter(b, Math(b, has_fma))
    with counted_loop(b, const(0), rows, "er") as r:
        row = b.add(i, r)
        with counted_loop(b, const(0), columns, "ec") as col:
            column = b.add(j, col)
            offsets = {"full": b.add(b.mul(row, ldc), column), "row": column,
                       "column": row, "scalar": const(0)}
            at = gep(b, c, offsets["full"])
            source = at if tile is None else gep(b, tile, b.add(b.mul(r, ldt), col))
            values = [b.load(source, typ=F32)]
            values += [b.load(gep(b, pointer, offsets[kind]), typ=F32)
                       for pointer, kind in zip(extras, epilogue.kinds)]
            for instr in epilogue.body:
                if instr.op == "const":
                    values.append(emitter.constant(instr.dtype, dict(instr.attrs)["value"]))
                    continue
                values.append(emitter.emit(instr.op, [values[a] for a in instr.args],
                                           [epilogue.dtype(a) for a in instr.args],
                                           instr.dtype, dict(instr.attrs)))
            b.store(values[epilogue.output], at)
            if running is not None:
                slot = gep(b, running, b.add(b.mul(r, columns), col))
                b.store(fold_maximum(emitter, epilogue.magnitude, b.load(slot, typ=F32),
                                     values[epilogue.maximum]), slot)
    b.ret_void()
    return fn


def fold_maximum(emitter: ScalarEmitter, magnitude: bool, x, y):
    """NumPy's maximum of the floats (or vectors of floats) x and y, a NaN of either
    kept. For magnitudes (`Epilogue.magnitude`: non-negative, or a NaN with its sign
    clear), the larger as unsigned integers: their bits order them as their values
    do, every such NaN's above inf's, in one instruction (NumPy's maximum takes a
    compare, a NaN test, an or and a select)."""
    b = emitter.b
    if not magnitude:
        return emitter.emit("maximum", [x, y], ["f32", "f32"], "f32", {})
    kind = ir.VectorType(I32, x.type.count) if isinstance(x.type, ir.VectorType) else I32
    xi, yi = b.bitcast(x, kind), b.bitcast(y, kind)
    return b.bitcast(b.select(b.icmp_unsigned(">", xi, yi), xi, yi), x.type)


# ---------------------------------------------------------------- calling

F32_DTYPE = np.dtype(np.float32)
MR = 8  # tile rows: 16 accumulators of 32 columns (each row of a row-major A takes a
        # pointer register: 14 rows ran at 80 GF/s on 64 x 256 x 256, 8 at 146)
NARROW = 16  # at most this many columns: tiles one vector wide (measured: N = 10
             # runs in 57 µs at 1024 x 256 x 10 against 89 µs with 32-wide tiles)
WORK_PER_ELEMENT = 8  # multiply-adds per element of `call_rows`: a part of a split
                      # call gets at least 2M (about 10 µs on one AVX-512 core)


def blocking(trans_a: bool, trans_b: bool, cpu: str) -> tuple[int, int]:
    """``(kc, mc)`` for the host CPU `cpu` (LLVM's name for it): the most K blocks
    are ``kc`` deep (`_Generator.driver` splits K into blocks of one depth), measured
    against OpenBLAS's SkylakeX kernels on the shapes of `benchmarks/gemm.py`,
    interleaved, in several processes (the physical pages an array gets move a
    product by up to 8%), on two hosts:

    - AMD EPYC (Zen 5: 48 KiB of L1 and 1 MiB of L2 per core), row-major: K blocks of
      up to 1024, M blocks of 128 rows (an A block of at most 512 KiB in L2, the panel
      of B from L2). C is read and written once per K block, which costs most where
      C is larger than L2: 1024 x 784 x 512 ran at 0.96 of OpenBLAS's time against
      0.99-1.08 with K blocks of 512 and M blocks of 256, 1024 x 1024 x 512 at
      0.97-0.99 against 0.99-1.14; the others the same within 1%;
    - Intel Xeon (AVX-512 and AMX, 48 KiB of L1 and 2 MiB of L2 per core, a mesh
      L3; LLVM names it after a client core), row-major: K blocks of up to 512. Each
      M block packs the panels of B again, and there a K block of B that outgrows L2
      (1.6 MB at 784 x 512 in one block) is read from an L3 much slower than Zen 5's:
      1024 x 784 x 512 ran at 1.07 of OpenBLAS's time in one K block of 784, 0.99-1.00
      in two of 392 (M blocks of 64, 128 or 256 alike); 1024 x 512 x 256, 256 x 784 x
      256 and 64 x 256 x 256 the same within 2% (0.85-0.90), 1024 x 1024 x 1024 1.13-1.17
      against 1.22;
    - on both, a transposed A: K blocks of 256, M blocks of 128 (copied per block into
      a stack buffer of 128 KiB): deeper or shorter blocks were the same or slower;
    - on both, a transposed B: K blocks of 512, M blocks of 1024 (its transposition
      into the panel buffer, per block and panel, then pays for more rows): on Zen 5
      1024 x 512 x 784 at 1.00-1.02 of OpenBLAS's time against 1.03-1.08 with K blocks
      of 256."""
    if trans_a:
        return 256, 128
    if trans_b:
        return 512, 1024
    return (1024, 128) if cpu.startswith("znver") else (512, 128)


def vectors(n: int) -> int:
    """The tile width, in vectors, for products with `n` columns: one for narrow ones
    (a 32-wide tile of 10 columns wastes two thirds of its FMAs), else two."""
    return 1 if n <= NARROW else 2


class Gemm:
    """``gemm(a, b, out=None)``: ``a @ b`` of float32 matrices by generated code,
    ``a`` given transposed (``[K, M]``) if `trans_a`, ``b`` if `trans_b` (``[N,
    K]``); into `out` when given. `n`: the columns of every call when known (only
    that variant is compiled, when the object is made, so a call never compiles).

    Everything is checked before the code runs (`sizes`): a call the code cannot
    take raises `ShapeError` (operands that are not C-contiguous are copied first),
    and a call on a thread whose stack cannot hold the code's panels (`stack`)
    raises `IrflowError`. A caller that has a fallback asks both itself, then calls
    `run`. With an `epilogue`, C is that body of the product (`run` takes its
    operands, which `extras_fit` checks), and with the epilogue's `Epilogue.maximum`
    the call also gives that value's maximum (`run` stores it into an array
    `maximum_fits` checks)."""

    def __init__(self, trans_a: bool = False, trans_b: bool = False, n: int | None = None,
                 compiler: Compiler | None = None, epilogue: Epilogue | None = None):
        compiler = compiler or default_compiler()
        self.trans_a, self.trans_b = trans_a, trans_b
        self.epilogue = epilogue
        widths = (1, 2) if n is None else (vectors(n),)
        self._functions = {}  # tile width in vectors -> the compiled function
        for nv in widths:
            kc, mc = blocking(trans_a, trans_b, compiler.target.cpu)
            spec = GemmSpec(trans_a, trans_b, MR, nv, kc, mc, epilogue)
            code = compiler.code(spec)
            self._functions[nv] = code.function(5 + 3 + spec.extras + spec.reduces)
        self._only = self._functions[widths[0]] if len(widths) == 1 else None

    @property
    def functions(self) -> dict:
        """The compiled functions by tile width in vectors (`vectors`): one when the
        columns are known, else both."""
        return dict(self._functions)

    def sizes(self, a, b, out=None) -> tuple[int, int, int] | None:
        """``(M, N, K)`` if the code takes these arrays as they are: 2-D C-contiguous
        float32 operands whose inner sizes agree, and `out` None or a writable
        C-contiguous float32 ``[M, N]`` array sharing no memory with them (the code's
        pointers are ``noalias``); else None."""
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim
                and a.dtype == F32_DTYPE and b.dtype == F32_DTYPE
                and a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        m, k = a.shape[::-1] if self.trans_a else a.shape
        k_b, n = b.shape[::-1] if self.trans_b else b.shape
        if k != k_b:
            return None
        if out is not None and not (
                type(out) is np.ndarray and out.dtype == F32_DTYPE and out.shape == (m, n)
                and out.flags.c_contiguous and out.flags.writeable
                and not np.may_share_memory(out, a) and not np.may_share_memory(out, b)):
            return None
        return m, n, k

    def __call__(self, a, b, out: np.ndarray | None = None,
                 operands: tuple[np.ndarray, ...] = ()):
        """The checked call; `operands`: the epilogue's, if the code has one. C, or
        with the epilogue's maximum, (C, the maximum as a 0-d array)."""
        if not stack.roomy:
            raise IrflowError("matmul: the generated GEMM keeps up to 160 KiB on the "
                              "native stack, and this thread's has less than 512 KiB "
                              "(made after threading.stack_size set a smaller size)")
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        sizes = self.sizes(a, b, out)
        if sizes is None:
            raise ShapeError(self._refusal(a, b, out))
        if self.epilogue is None and operands:
            raise ShapeError("matmul: operands for an epilogue this code does not have")
        if self.epilogue is not None and not self.extras_fit(operands, sizes, out):
            raise ShapeError(f"matmul: the epilogue takes {len(self.epilogue.kinds)} "
                             f"C-contiguous float32 operands ({', '.join(self.epilogue.kinds)}"
                             f") sharing no memory with the output, after a K of at least 1"
                             + (" and into a product not empty, for its maximum"
                                if self.epilogue.maximum is not None else ""))
        if self.epilogue is None or self.epilogue.maximum is None:
            return self.run(a, b, out, sizes, tuple(operands))
        maximum = np.empty((), F32_DTYPE)
        return self.run(a, b, out, sizes, tuple(operands), maximum), maximum

    def extras_fit(self, extras, sizes: tuple[int, int, int], out) -> bool:
        """Whether the code takes `extras` as the epilogue's operands of a product of
        `sizes` (`sizes`' answer) into `out`: C-contiguous float32 arrays of their
        kinds' shapes, none sharing memory with `out`; and K is not 0 (the epilogue
        runs after a K block), nor, with a maximum, M or N (the maximum of nothing is an
        error)."""
        m, n, k = sizes
        if not k or len(extras) != len(self.epilogue.kinds) \
                or self.epilogue.maximum is not None and not (m and n):
            return False
        for e, kind in zip(extras, self.epilogue.kinds):
            if not (type(e) is np.ndarray and e.dtype == F32_DTYPE and e.flags.c_contiguous
                    and (out is None or not np.may_share_memory(out, e))):
                return False
            if not (e.shape == (m, n) if kind == "full" else
                    e.size == n and e.shape[-1:] == (n,) if kind == "row" else
                    e.size == m and e.shape[:1] == (m,) if kind == "column" else e.size == 1):
                return False
        return True

    def maximum_fits(self, maximum) -> bool:
        """Whether the code may store the epilogue's maximum into `maximum`: a
        writable C-contiguous float32 array of one element (`run` checks that it
        shares no memory with the other arrays)."""
        return (type(maximum) is np.ndarray and maximum.dtype == F32_DTYPE
                and maximum.size == 1 and maximum.flags.c_contiguous
                and maximum.flags.writeable)

    def run(self, a: np.ndarray, b: np.ndarray, out: np.ndarray | None,
            sizes: tuple[int, int, int], extras: tuple[np.ndarray, ...] = (),
            maximum: np.ndarray | None = None) -> np.ndarray | None:
        """The product, for arrays `sizes` accepted (it returned `sizes`), with an
        epilogue of the `extras` that `extras_fit` accepted; into `out` if not None.
        The epilogue's maximum, if it has one, is stored into `maximum` (given exactly
        then), which `maximum_fits` accepted; None, and nothing computed, when that
        shares memory with another of the arrays (the code's pointers are
        ``noalias``), decided from the addresses the call takes anyway."""
        m, n, k = sizes
        if out is None:
            out = np.empty((m, n), F32_DTYPE)
        if not (m and n):
            return out
        if not k:
            out.fill(0.0)
            return out
        fn = self._only or self._functions[vectors(n)]
        arrays = (a, b, out, *extras)
        pa = address(a)  # an operand that is A too (a loop's carried value): one view
        pointers = (pa, address(b), address(out),
                    *[pa if e is a else address(e) for e in extras])
        tiles, work = -(-m // MR), m * n * k // WORK_PER_ELEMENT
        if maximum is None:
            call_rows(fn, tiles, work, (m, n, k, *pointers), arrays)
            return out
        at = address(maximum)
        if any(p < at + 4 and at < p + x.nbytes for p, x in zip(pointers, arrays)):
            return None
        call_rows_reducing(fn, tiles, work, (m, n, k, *pointers), arrays, maximum,
                           np.maximum)
        return out

    def native(self, sizes: tuple[int, int, int], a: Array, b: Array, c: Array,
               extras: Sequence[Array] = (), maximum: Array | None = None) -> Call:
        """The call `run` makes for a product of the static `sizes` ``(M, N, K)``
        (none 0) in one part, as data (`irflow.codegen.native`): A, B and C at
        those arrays, the epilogue's operands at `extras`, its maximum stored at
        `maximum`."""
        m, n, k = sizes
        fn = self._only or self._functions[vectors(n)]
        return Call(fn, (0, -(-m // MR), m, n, k, a, b, c, *extras,
                         *(() if maximum is None else (maximum,))))

    def _refusal(self, a, b, out) -> str:
        """Why `sizes` refused these arrays (for the error)."""
        for x, name in ((a, "x"), (b, "y")):
            if not (isinstance(x, np.ndarray) and x.dtype == F32_DTYPE and x.ndim == 2):
                got = (f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray)
                       else type(x).__name__)
                return f"matmul: {name} must be a 2-D float32 array, got {got}"
        k = a.shape[0] if self.trans_a else a.shape[1]
        k_b = b.shape[1] if self.trans_b else b.shape[0]
        if k != k_b:
            return f"matmul: the contracted dims differ ({k} and {k_b})"
        m = a.shape[1] if self.trans_a else a.shape[0]
        n = b.shape[0] if self.trans_b else b.shape[1]
        return (f"matmul: the output buffer must be a writable C-contiguous float32 array "
                f"of shape {[m, n]} sharing no memory with the operands")


# ---------------------------------------------------------------- matmul anchors

MIN_ROWS = 8         # fewer rows: NumPy's matmul (a tile of 1-4 rows is FMA-latency
                     # bound: 1 x 784 x 64 took 10 µs against NumPy's 2.7)
MIN_WORK = 1 << 20   # fewer multiply-adds: NumPy's matmul, whose call costs ~3 µs
                     # less (8 x 256 x 256: 13.6 µs against 10.1; 16 x 256 x 256:
                     # 18.6 against 24.6)


def anchor_kernels(inner: Operation, kernel: Callable, out_kernel: Callable | None,
                   compiler: Compiler | None = None) -> Callable | None:
    """For a fused op's anchor `inner` when it is a float32 matmul of two matrices:
    its kernel, ``run(x, y, out=None)`` (the kernel and the out kernel in one), by
    `Gemm` for products of at least `MIN_ROWS` rows and `MIN_WORK` multiply-adds, by
    the NumPy kernels `kernel` and `out_kernel` (the anchor's, errors located) for
    the rest and for arrays the code does not take as they are (`Gemm.sizes`:
    another dtype or layout, an output buffer overlapping an operand), so the answer
    is NumPy's to float32 rounding and every refusal NumPy's. None for other
    anchors, for products whose static sizes are all below the thresholds, and on
    hosts without AVX-512 (what the tiles are made and measured for)."""
    product = _product(inner, compiler) if out_kernel is not None else None
    if product is None:
        return None
    trans_x, trans_y, (_, _, n) = product
    gemm = Gemm(trans_x, trans_y, n if isinstance(n, int) else None, compiler)
    run = _dispatching(gemm, kernel, out_kernel)
    # like the NumPy kernels' (quiet), `__wrapped__` leaves their floating-point
    # warnings to a caller that silences them once (the code itself never warns)
    run.__wrapped__ = _dispatching(gemm, getattr(kernel, "__wrapped__", kernel),
                                   getattr(out_kernel, "__wrapped__", out_kernel))
    run.gemm = gemm
    return run


def matmul_kernel(op: Operation, compiler: Compiler | None = None) -> Callable | None:
    """For a standalone float32 matmul of two matrices (backend ``llvm``): its kernel
    ``run(x, y, out=None)``, `anchor_kernels`' dispatch between `Gemm` and the op's
    NumPy kernel, which its ``__wrapped__`` calls unsilenced; its ``native``, the
    call into a given buffer as data where its sizes are static (`product_call`).
    Where the GEMM takes no call of it, NumPy's kernel, described as its BLAS's
    call where it has one. None for other ops."""
    opdef = lookup(op.name, op.loc)
    numpy = functools.partial(opdef.kernel, **op.attrs)
    numpy.__wrapped__ = functools.partial(getattr(opdef.kernel, "__wrapped__", opdef.kernel),
                                          **op.attrs)
    run = anchor_kernels(op, numpy, numpy, compiler)
    if run is None:  # NumPy's matmul; in a native run its BLAS's same call
        product = product_call(op, None, Array(0), Array(1), Array(2))
        if product is None:
            return None
        numpy.native = (product,)
        return numpy
    sizes = static_product(op)
    if sizes is not None:
        run.native = (run.gemm.native(sizes, Array(0), Array(1), Array(2)),)
    return run


def static_product(inner: Operation) -> tuple[int, int, int] | None:
    """``(M, N, K)`` of matmul `inner`, a product of matrices the generated GEMM
    takes (`_product`), when its sizes are static and every call of it is the
    GEMM's (`_dispatching`: enough rows and work), else None."""
    sizes = _static_sizes(inner)
    if sizes is None or sizes[0] < MIN_ROWS or math.prod(sizes) < MIN_WORK:
        return None
    return sizes


def product_call(inner: Operation, gemm: Gemm | None, a: Array, b: Array,
                 c: Array) -> Call | None:
    """The call computing matmul `inner` of the arrays at `a` and `b` into `c`, as
    its kernel would for every call, as data (`irflow.codegen.native`): `gemm`'s
    (the generated GEMM the kernel dispatches to, if any) where it takes every
    call, else NumPy's BLAS (`blas.sgemm_call`) for a float32 product of matrices
    of static sizes, none 0; None for any other."""
    sizes = static_product(inner) if gemm is not None else None
    if sizes is not None:
        return gemm.native(sizes, a, b, c)
    x, y = (v.type for v in inner.operands)
    sizes = _static_sizes(inner)
    if sizes is None or not all(sizes) or x.dtype is not dtypes.float32 \
            or y.dtype is not dtypes.float32:
        return None
    return sgemm_call(sizes, bool(inner.attrs["transpose_x"]),
                      bool(inner.attrs["transpose_y"]), a, b, c)


def _static_sizes(inner: Operation) -> tuple[int, int, int] | None:
    """``(M, N, K)`` of matmul `inner` of two matrices of static shapes, else None."""
    x, y = (v.type for v in inner.operands)
    if not (x.is_static and y.is_static and x.rank == 2 == y.rank):
        return None
    m, k = x.shape[::-1] if inner.attrs["transpose_x"] else x.shape
    n = y.shape[0] if inner.attrs["transpose_y"] else y.shape[1]
    return m, n, k


def fused_kernel(inner: Operation, spec, entering, compiler: Compiler | None = None,
                 maximum: int | None = None) -> Callable | None:
    """For a fused op whose anchor `inner` is a float32 matmul of matrices and whose
    elementwise body (`spec`, a `KernelSpec`: input 0 the anchor's result, the
    others of `entering`'s types) has one float32 result, stored in place of the
    anchor's: ``run(anchor_operands, operands, out, top=None) -> result or None``,
    the product with the body applied by the tiles (`Epilogue`), into `out` if not
    None. With `maximum` (a value of `spec`'s body, numbered as in it), the run also
    stores that value's maximum over the product's elements into `top`, an array of
    one float32 (`Gemm.maximum_fits`, sharing no memory with the other arrays). None
    (the caller runs the anchor, then the body) for a call below the thresholds, of
    arrays the code does not take as they are or on a thread whose stack is too
    small for it (`stack`); and None instead of a run for other ops, bodies of
    other operands (not C's shape, a row, a column or a scalar) and static sizes
    below the thresholds. The run's ``gemm`` is its `Gemm`
    (for a generated call of it)."""
    product = _product(inner, compiler)
    if product is None or len(spec.outputs) != 1 or spec.outputs[0] < len(spec.inputs) \
            or spec.inplace or any(d != "f32" for d in spec.inputs):
        return None
    trans_x, trans_y, (m, k, n) = product
    kinds = tuple(operand_kind(t.shape, m, n) for t in entering[1:])
    if None in kinds or any(i.dtype not in BODY_DTYPES or can_fail(i.op, i.dtype)
                            for i in spec.body):
        return None
    gemm = Gemm(trans_x, trans_y, n if isinstance(n, int) else None, compiler,
                Epilogue(kinds, spec.body, spec.outputs[0], maximum))
    rows_axis = 1 if trans_x else 0

    def run(anchor_operands, operands, out, top=None):
        a, b = anchor_operands
        try:
            rows = a.shape[rows_axis]
        except (AttributeError, IndexError, TypeError):
            return None
        if rows < MIN_ROWS or not stack.roomy:
            return None
        sizes = gemm.sizes(a, b, out)
        if sizes is None or math.prod(sizes) < MIN_WORK \
                or not gemm.extras_fit(operands, sizes, out):
            return None
        if maximum is None:
            return gemm.run(a, b, out, sizes, tuple(operands))
        if not gemm.maximum_fits(top):
            return None
        return gemm.run(a, b, out, sizes, tuple(operands), top)
    run.gemm = gemm
    return run


def operand_kind(shape, m, n) -> str | None:
    """An epilogue operand's kind (`EPILOGUE_KINDS`) from its shape, for C of shape
    ``[m, n]`` (dims as the IR gives them: ints or symbols); None for another."""
    if all(d == 1 for d in shape):
        return "scalar"
    if shape[-1] == n and all(d == 1 for d in shape[:-1]):
        return "row"
    if tuple(shape) == (m, n):
        return "full"
    if tuple(shape) == (m, 1):
        return "column"
    return None


def _product(inner: Operation, compiler: Compiler | None
             ) -> tuple[bool, bool, tuple] | None:
    """``(transpose_x, transpose_y, (M, K, N))`` of `inner` if the generated GEMM may
    run it: a float32 matmul of two matrices, on an AVX-512 host, not statically
    below the thresholds (dims are ints or symbols); else None."""
    compiler = compiler or default_compiler()
    if inner is None or inner.name != "matmul" \
            or "+avx512f" not in compiler.target.features.split(","):
        return None
    x, y = (v.type for v in inner.operands)
    if x.rank != 2 or y.rank != 2 or x.dtype is not dtypes.float32 \
            or y.dtype is not dtypes.float32:
        return None
    trans_x, trans_y = bool(inner.attrs["transpose_x"]), bool(inner.attrs["transpose_y"])
    m, k = x.shape[::-1] if trans_x else x.shape
    n = y.shape[0] if trans_y else y.shape[1]
    if isinstance(m, int) and m < MIN_ROWS or all(isinstance(d, int) for d in (m, k, n)) \
            and m * k * n < MIN_WORK:
        return None  # every call is NumPy's: nothing to compile
    return trans_x, trans_y, (m, k, n)


def _dispatching(gemm: Gemm, kernel: Callable, out_kernel: Callable) -> Callable:
    """`anchor_kernels`' run: `gemm` where it takes the call and the call is large
    enough and the thread's stack holds the GEMM's panels (`stack`), else the NumPy
    `kernel` (`out_kernel` with a buffer). The rows are looked at first, so a
    batch-1 call pays no more than a comparison."""
    rows_axis = 1 if gemm.trans_a else 0

    def run(a, b, out=None):
        try:
            rows = a.shape[rows_axis]
        except (AttributeError, IndexError, TypeError):
            rows = 0  # not an array of two dims: NumPy's to answer
        if rows >= MIN_ROWS and stack.roomy:
            sizes = gemm.sizes(a, b, out)
            if sizes is not None and math.prod(sizes) >= MIN_WORK:
                return gemm.run(a, b, out, sizes)
        return kernel(a, b) if out is None else out_kernel(a, b, out=out)
    return run
