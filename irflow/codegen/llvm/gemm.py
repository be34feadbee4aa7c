"""Float32 matrix products (GEMM) as generated LLVM code, for the matmul anchors.

``C = A @ B`` for row-major float32 matrices, ``A`` given as ``[M, K]`` or, with
`GemmSpec.trans_a`, as ``[K, M]`` (its transpose is the operand: ``x.T @ g``), and
``B`` as ``[K, N]`` or, with `GemmSpec.trans_b`, as ``[N, K]`` (``g @ w.T``).

**Structure** (GotoBLAS/BLIS's). A *tile* of ``mr`` rows by ``NR = 16 * nv``
columns of C is held in ``mr * nv`` zmm accumulators while the tile function runs
the whole depth of a K block: per k it loads ``nv`` 16-float vectors of a B row,
broadcasts each of the tile's ``mr`` A elements (a load folded into the FMA) and
does ``mr * nv`` ``llvm.fma.v16f32``. The tile functions are fully unrolled over
the tile, so the accumulators never leave registers (`GemmSpec.assembly` shows
it). Around them, the driver loops over N blocks of ``nc`` columns, K blocks of
``kc``, M blocks of ``mc`` rows, the tile columns of the block, then its tile
rows: the ``kc * NR`` B panel a tile column reads stays in L1 while every tile
row of the M block uses it, and the ``mc * kc`` A block stays in L2.

**Operands in memory.** A is read where it is: a row-major A by one pointer per
tile row, a transposed A (``[K, M]``) as ``mr`` consecutive floats per k. B is
either read where it is (row-major ``[K, N]``: a tile's B rows are ``ldb = N``
apart) or, with `GemmSpec.pack_b`, first copied per K and N block into panels of
``kc x NR`` contiguous floats (zero-padded past N) in the caller's scratch;
``[N, K]`` B is always packed (that copy is its transpose). Which pays is decided
per call by `choose` from measurements.

**Edges.** Columns past N are masked: B loads and C loads and stores use
``llvm.masked.load/store`` with per-vector masks the driver computes (all ones
inside), so one tile function serves every width. Rows past the end of M use the
tile function with exactly the rows left (one is generated per row count).

**Accumulation.** The first K block stores its sums; later ones add them to C
(a masked load of -0.0 where nothing is there yet, so results are exact sums in
this order, -0.0 included). The order of the sum differs from OpenBLAS's, which
is fine: both agree with the float64 product to float32 rounding.

The function is ``void kernel(i64 begin, i64 end, i64 M, i64 N, i64 K, ptr A,
ptr B, ptr C, ptr scratch)`` over the tile rows ``[begin, end)`` (units of
``mr`` rows), so `call_rows` can split M across threads; `Gemm` checks every
argument before any code runs.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...errors import ShapeError
from .kernel import FUNCTION_NAME, address, call_rows
from .loops import carried_loop, counted_loop

I1 = ir.IntType(1)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
WIDTH = 16  # floats per zmm vector
V16 = ir.VectorType(F32, WIDTH)
MASK = ir.VectorType(I1, WIDTH)
PTR = ir.PointerType()
ALIGN = 64  # bytes: packed panels start on cache lines
UNROLL = 4  # k steps per iteration of a tile's loop


@dataclass(frozen=True)
class GemmSpec:
    """One generated GEMM: the operands' layouts and the blocking (plain data, the
    compiler's cache key). ``mr`` rows by ``16 * nv`` columns per tile; K blocks of
    ``kc``, M blocks of ``mc`` rows, N blocks of ``nc`` columns (``nc`` a multiple
    of the tile width)."""

    trans_a: bool = False
    trans_b: bool = False
    pack_b: bool = True
    mr: int = 8
    nv: int = 2
    kc: int = 256
    mc: int = 256
    nc: int = 1024
    rows_outer: bool = False

    def __post_init__(self):
        if self.trans_b and not self.pack_b:
            raise ValueError("a transposed B is always packed")
        if self.nc % (WIDTH * self.nv) or self.mc % self.mr:
            raise ValueError("nc must be a multiple of the tile width, mc of mr")

    @property
    def nr(self) -> int:
        return WIDTH * self.nv

    def scratch_bytes(self, n: int) -> int:
        """Bytes of scratch a call with `n` columns needs: one packed B block (and
        room to align it), none without packing."""
        if not self.pack_b:
            return 0
        width = -(-min(n, self.nc) // self.nr) * self.nr
        return self.kc * width * 4 + ALIGN

    def llvm_ir(self, fma: bool) -> str:
        return _Generator(self).module()


# ---------------------------------------------------------------- code generation

@dataclass
class _Block:
    """The values of the driver's loops a tile call needs."""

    fn: ir.Function
    tiles: dict
    M: object
    N: object
    K: object
    A: object
    B: object
    C: object
    packed: object
    pc: object
    kc: object
    jc: object
    nc: object
    m1: object
    accumulate: object


class _Generator:
    """Emits a `GemmSpec`'s module: the tile functions, the packing loop, the driver."""

    def __init__(self, spec: GemmSpec):
        self.spec = spec
        self.m = ir.Module(name="gemm")
        self.fma = ir.Function(self.m, ir.FunctionType(V16, [V16] * 3), "llvm.fma.v16f32")
        self.mload = ir.Function(self.m, ir.FunctionType(V16, [PTR, I32, MASK, V16]),
                                 "llvm.masked.load.v16f32.p0")
        self.mstore = ir.Function(self.m, ir.FunctionType(ir.VoidType(),
                                                          [V16, PTR, I32, MASK]),
                                  "llvm.masked.store.v16f32.p0")

    def module(self) -> str:
        tiles = {(mr, edge): self.tile(mr, edge) for mr in range(1, self.spec.mr + 1)
                 for edge in (False, True)}
        pack = self.pack() if self.spec.pack_b else None
        self.driver(tiles, pack)
        return str(self.m)

    # -- helpers

    def gep(self, b: ir.IRBuilder, pointer, index):
        return b.gep(pointer, [index], inbounds=True, source_etype=F32)

    def masked_load(self, b: ir.IRBuilder, pointer, mask, passthru):
        return b.call(self.mload, [pointer, ir.Constant(I32, 4), mask, passthru])

    def masked_store(self, b: ir.IRBuilder, value, pointer, mask) -> None:
        b.call(self.mstore, [value, pointer, ir.Constant(I32, 4), mask])

    @staticmethod
    def splat(b: ir.IRBuilder, scalar):
        vector = b.insert_element(ir.Constant(V16, ir.Undefined), scalar, ir.Constant(I32, 0))
        return b.shuffle_vector(vector, ir.Constant(V16, ir.Undefined),
                                ir.Constant(ir.VectorType(I32, WIDTH), [0] * WIDTH))

    # -- the tile

    def tile(self, mr: int, edge: bool) -> ir.Function:
        """``tile(kc, a, a_step, b, ldb, c, ldc, mask_0..mask_{nv-1}, accumulate)``:
        C[0:mr, 0:NR] = or += the product of the A rows (row r's element k at
        ``a[r * a_step + k]``, or ``a[k * a_step + r]`` for a transposed A) and the
        kc rows of B ``ldb`` apart. An `edge` tile (the last columns of N) masks its
        C accesses, and its B loads unless B is packed (zero-padded); a full one
        ignores the masks, so its loop has no mask registers to keep."""
        nv = self.spec.nv
        fnty = ir.FunctionType(ir.VoidType(), [I64, PTR, I64, PTR, I64, PTR, I64,
                                               *[I16] * nv, I1])
        fn = ir.Function(self.m, fnty, f"tile{mr}{'e' if edge else ''}")
        fn.linkage = "internal"
        for k in (1, 3, 5):
            fn.args[k].add_attribute("noalias")
        kc, a, a_step, bp, ldb, c, ldc, *rest = fn.args
        masks_i16, accumulate = rest[:nv], rest[nv]
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        masks = [b.bitcast(m, MASK) for m in masks_i16] if edge else None
        load_masks = masks if edge and not self.spec.pack_b else None
        if self.spec.trans_a:
            rows = None
        else:
            rows = [self.gep(b, a, b.mul(a_step, ir.Constant(I64, r))) for r in range(mr)]

        def step(k, acc):
            brow = self.gep(b, bp, b.mul(k, ldb))
            bvecs = [self.vector_load(b, self.gep(b, brow, ir.Constant(I64, WIDTH * v)),
                                      load_masks and load_masks[v]) for v in range(nv)]
            if rows is None:
                acol = self.gep(b, a, b.mul(k, a_step))
                pointers = [self.gep(b, acol, ir.Constant(I64, r)) for r in range(mr)]
            else:
                pointers = [self.gep(b, row, k) for row in rows]
            out = []
            for r, pointer in enumerate(pointers):
                bcast = self.splat(b, b.load(pointer, typ=F32))
                out += [b.call(self.fma, [bcast, bvecs[v], acc[r * nv + v]])
                        for v in range(nv)]
            return out

        acc = self.k_loop(b, kc, step, [ir.Constant(V16, [0.0] * WIDTH)] * (mr * nv))
        minus_zero = ir.Constant(V16, [-0.0] * WIDTH)
        for r in range(mr):
            crow = self.gep(b, c, b.mul(ldc, ir.Constant(I64, r)))
            for v in range(nv):
                pointer = self.gep(b, crow, ir.Constant(I64, WIDTH * v))
                if edge:
                    none = ir.Constant(MASK, [0] * WIDTH)
                    old = self.masked_load(b, pointer, b.select(accumulate, masks[v], none),
                                           minus_zero)
                    self.masked_store(b, b.fadd(acc[r * nv + v], old), pointer, masks[v])
                else:
                    old = b.select(accumulate, b.load(pointer, typ=V16, align=4), minus_zero)
                    b.store(b.fadd(acc[r * nv + v], old), pointer, align=4)
        b.ret_void()
        return fn

    def k_loop(self, b: ir.IRBuilder, kc, step, inits) -> list:
        """The accumulators after ``step(k, acc)`` for k in [0, kc): a loop unrolled
        UNROLL times, then one for the rest."""
        quads = b.sdiv(kc, ir.Constant(I64, UNROLL))
        with carried_loop(b, ir.Constant(I64, 0), quads, inits, "k") as loop:
            acc = loop.values
            for u in range(UNROLL):
                k = b.add(b.mul(loop.index, ir.Constant(I64, UNROLL)), ir.Constant(I64, u))
                acc = step(k, acc)
            loop.next = acc
        with carried_loop(b, b.mul(quads, ir.Constant(I64, UNROLL)), kc, loop.values,
                          "krest") as rest:
            rest.next = step(rest.index, rest.values)
        return rest.values

    def vector_load(self, b: ir.IRBuilder, pointer, mask):
        """16 floats at `pointer`, or those `mask` says (zero elsewhere)."""
        if mask is None:
            return b.load(pointer, typ=V16, align=4)
        return self.masked_load(b, pointer, mask, ir.Constant(V16, [0.0] * WIDTH))

    # -- packing B

    def pack(self) -> ir.Function:
        """``pack(B, ldb, k0, kc, j0, nc, dst)``: B's rows k0..k0+kc, columns
        j0..j0+nc into panels of kc x NR floats at dst, zero past column nc."""
        nr = self.spec.nr
        fnty = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, I64, I64, PTR])
        fn = ir.Function(self.m, fnty, "pack")
        fn.linkage = "internal"
        src, ld, k0, kc, j0, nc, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        panels = b.sdiv(b.add(nc, ir.Constant(I64, nr - 1)), ir.Constant(I64, nr))
        with counted_loop(b, ir.Constant(I64, 0), panels, "p") as p:
            col = b.mul(p, ir.Constant(I64, nr))
            panel = self.gep(b, dst, b.mul(col, kc))
            if self.spec.trans_b:
                self.pack_transposed(b, src, ld, k0, kc, b.add(j0, col),
                                     b.sub(nc, col), panel)
            else:
                masks = self.masks(b, b.sub(nc, col))
                with counted_loop(b, ir.Constant(I64, 0), kc, "pk") as k:
                    row = self.gep(b, src, b.add(b.mul(b.add(k0, k), ld), b.add(j0, col)))
                    out = self.gep(b, panel, b.mul(k, ir.Constant(I64, nr)))
                    zero = ir.Constant(V16, [0.0] * WIDTH)
                    for v in range(self.spec.nv):
                        offset = ir.Constant(I64, WIDTH * v)
                        vec = self.masked_load(b, self.gep(b, row, offset), masks[v], zero)
                        b.store(vec, self.gep(b, out, offset), align=ALIGN)
        b.ret_void()
        return fn

    def pack_transposed(self, b, src, ld, k0, kc, j, width, panel) -> None:
        """Panel columns c < width from the rows j + c of an [N, K] B (row j + c's
        elements k0.. are column c's), zero past width."""
        nr = self.spec.nr
        with counted_loop(b, ir.Constant(I64, 0), ir.Constant(I64, nr), "pc") as c:
            inside = b.icmp_signed("<", c, width)
            row = self.gep(b, src, b.add(b.mul(b.select(inside, b.add(j, c), j), ld), k0))
            with counted_loop(b, ir.Constant(I64, 0), kc, "pt") as k:
                value = b.select(inside, b.load(self.gep(b, row, k), typ=F32),
                                 ir.Constant(F32, 0.0))
                b.store(value, self.gep(b, panel, b.add(b.mul(k, ir.Constant(I64, nr)), c)))

    def masks(self, b: ir.IRBuilder, width) -> list:
        """Per vector of a tile, the i1 mask of its columns < `width`."""
        lanes = ir.Constant(ir.VectorType(I64, WIDTH), list(range(WIDTH)))
        out = []
        for v in range(self.spec.nv):
            left = b.sub(width, ir.Constant(I64, WIDTH * v))
            out.append(b.icmp_signed("<", lanes, self.splat64(b, left)))
        return out

    @staticmethod
    def splat64(b: ir.IRBuilder, scalar):
        vt = ir.VectorType(I64, WIDTH)
        vector = b.insert_element(ir.Constant(vt, ir.Undefined), scalar, ir.Constant(I32, 0))
        return b.shuffle_vector(vector, ir.Constant(vt, ir.Undefined),
                                ir.Constant(ir.VectorType(I32, WIDTH), [0] * WIDTH))

    # -- the driver

    def driver(self, tiles: dict, pack) -> None:
        s = self.spec
        fnty = ir.FunctionType(ir.VoidType(), [I64] * 5 + [PTR] * 4)
        fn = ir.Function(self.m, fnty, FUNCTION_NAME)
        begin, end, M, N, K, A, B, C, scratch = fn.args
        for arg in (A, B, C, scratch):
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        const = lambda v: ir.Constant(I64, v)  # noqa: E731
        m0 = b.mul(begin, const(s.mr))
        m1 = self.min(b, b.mul(end, const(s.mr)), M)
        packed = None
        if pack is not None:
            raw = b.ptrtoint(scratch, I64)
            aligned = b.and_(b.add(raw, const(ALIGN - 1)), const(-ALIGN))
            packed = b.inttoptr(aligned, PTR)
        n_blocks = self.ceil_div(b, N, s.nc)
        k_blocks = self.ceil_div(b, K, s.kc)
        with counted_loop(b, const(0), n_blocks, "jc") as jcb:
            jc = b.mul(jcb, const(s.nc))
            nc = self.min(b, const(s.nc), b.sub(N, jc))
            with counted_loop(b, const(0), k_blocks, "pc") as pcb:
                pc = b.mul(pcb, const(s.kc))
                kc = self.min(b, const(s.kc), b.sub(K, pc))
                accumulate = b.icmp_signed("!=", pcb, const(0))
                if pack is not None:
                    b.call(pack, [B, K if s.trans_b else N, pc, kc, jc, nc, packed])
                m_blocks = self.ceil_div(b, b.sub(m1, m0), s.mc)
                with counted_loop(b, const(0), m_blocks, "ic") as icb:
                    ic = b.add(m0, b.mul(icb, const(s.mc)))
                    mc = self.min(b, const(s.mc), b.sub(m1, ic))
                    block = _Block(fn, tiles, M, N, K, A, B, C, packed, pc, kc, jc, nc,
                                   m1, accumulate)
                    panels = self.ceil_div(b, nc, s.nr)
                    row_tiles = self.ceil_div(b, mc, s.mr)

                    def row(index):
                        return b.add(ic, b.mul(index, const(s.mr)))

                    def column(index):
                        return b.mul(index, const(s.nr))

                    if s.rows_outer:
                        with counted_loop(b, const(0), row_tiles, "ir") as irb:
                            with counted_loop(b, const(0), panels, "jr") as jrb:
                                self.tile_call(b, block, row(irb), column(jrb))
                    else:
                        with counted_loop(b, const(0), panels, "jr") as jrb:
                            with counted_loop(b, const(0), row_tiles, "ir") as irb:
                                self.tile_call(b, block, row(irb), column(jrb))
        b.ret_void()

    def tile_call(self, b: ir.IRBuilder, block: "_Block", i, jr) -> None:
        """Compute the tile at row i, column jr of the block."""
        s, x = self.spec, block
        const = lambda v: ir.Constant(I64, v)  # noqa: E731
        width = b.sub(x.nc, jr)
        masks = [b.bitcast(m, I16) for m in self.masks(b, width)]
        edge = b.icmp_signed("<", width, const(s.nr))
        if x.packed is not None:
            bp, ldb = self.gep(b, x.packed, b.mul(jr, x.kc)), const(s.nr)
        else:
            bp = self.gep(b, x.B, b.add(b.mul(x.pc, x.N), b.add(x.jc, jr)))
            ldb = x.N
        rows = self.min(b, const(s.mr), b.sub(x.m1, i))
        if s.trans_a:
            ap, a_step = self.gep(b, x.A, b.add(b.mul(x.pc, x.M), i)), x.M
        else:
            ap, a_step = self.gep(b, x.A, b.add(b.mul(i, x.K), x.pc)), x.K
        cp = self.gep(b, x.C, b.add(b.mul(i, x.N), b.add(x.jc, jr)))
        args = [x.kc, ap, a_step, bp, ldb, cp, x.N, *masks, x.accumulate]
        self.dispatch(b, x.fn, x.tiles, rows, edge, args)

    def dispatch(self, b: ir.IRBuilder, fn, tiles: dict, rows, edge, args) -> None:
        """Call the tile function of `rows` rows (the full one unless at M's end),
        its edge variant if `edge` (the last columns of N)."""
        after = fn.append_basic_block("tiled")
        for masked in (False, True):
            block = b.append_basic_block("edge" if masked else "inside")
            if not masked:
                inside, edged = block, None
            else:
                edged = block
        b.cbranch(edge, edged, inside)
        for masked, block in ((False, inside), (True, edged)):
            b.position_at_end(block)
            cases = {mr: fn.append_basic_block(f"rows{mr}") for mr in range(1, self.spec.mr + 1)}
            switch = b.switch(rows, cases[self.spec.mr])
            for mr, case in cases.items():
                if mr != self.spec.mr:
                    switch.add_case(ir.Constant(I64, mr), case)
                b.position_at_end(case)
                b.call(tiles[mr, masked], args)
                b.branch(after)
        b.position_at_end(after)

    @staticmethod
    def min(b: ir.IRBuilder, x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)

    @staticmethod
    def ceil_div(b: ir.IRBuilder, x, d: int):
        return b.sdiv(b.add(x, ir.Constant(I64, d - 1)), ir.Constant(I64, d))
