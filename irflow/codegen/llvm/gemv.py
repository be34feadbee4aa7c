"""Float32 products of a few rows (``[M, K] @ [K, N]`` with M below the GEMM's
`MIN_ROWS`) as generated LLVM code: a batch-1 layer's ``x @ w``.

The GEMM of `irflow.codegen.llvm.gemm` is built for many rows: its tiles compute 8
rows at once and it copies B into panels, so a row-vector product spends its time
packing B and in FMA latency (1 x 784 x 64 took 10 µs there, NumPy's 2.4). Here C's
rows go in groups of 4, then 2, then 1, each group over blocks of ``16 * nv``
columns: per k the block's ``nv`` vectors of B's row k are read where they are (B
once per group, in memory order, which the hardware prefetches) and multiplied by
each row's element k, broadcast. A group of fewer rows has fewer FMAs per k, so its
consecutive k go into ``4 / rows`` independent sets of accumulators taking turns
(an FMA's latency is four cycles, two issue per cycle), added at the end: 16
accumulators at most. Columns past N are masked (``llvm.masked.load/store``, which
touch no memory where the mask is off), so any N works, and a block narrower than
``nv`` vectors wastes only the lanes' FMAs.

**Cache lines.** A vector load from a B row that starts mid-line touches two lines,
which made 1 x 784 x 64 take 2.2 µs instead of 1.5 (NumPy's parameters start 16 or
32 bytes into a line). When N is a multiple of 16, every row of B starts equally far
(`lead` floats) before a line, so the last row of C (a batch-1 call's only one) is
computed on a grid of vectors on lines instead, from column ``lead - 16`` (the
lanes before column 0 are masked, so nothing before a row is read): one vector
more per block, half the lines.

Measured by `benchmarks/gemv.py` (one core, B in L2, through ctypes): 1 x 784 x 64
in 1.5-1.6 µs with B on a cache line, 1.7-2.0 when its rows start mid-line, NumPy's
2.4-3.0; 4 x 784 x 64 in 2.6-3.6 µs (3.2-4.1); 1 x 784 x 512 in 17-20 µs (17-21).

The sum of each element runs over k in interleaved parts, then adds them: another
order than NumPy's (OpenBLAS's), both within float32 rounding of the exact product.

``product(M, N, K, A, B, C)`` is an internal function of the module that calls it
(`emit_product`), which holds the pointers' checks: `irflow.codegen.llvm.whole`.
"""
from __future__ import annotations

from llvmlite import ir

from .gemm import F32, I32, I64, PTR, V16, WIDTH, const, gep, splat, tile_intrinsics
from .loops import carried_loop, counted_loop

CHAINS = 4  # FMAs in flight per vector of a row group: rows times accumulator sets
MAX_VECTORS = 4  # a block of at most 64 columns: 16 accumulators, half the zmm registers


def vectors(n) -> int:
    """The block width, in vectors, for products of `n` columns (an int, or a symbol:
    any width)."""
    if not isinstance(n, int):
        return MAX_VECTORS
    return max(1, min(MAX_VECTORS, -(-n // WIDTH)))


def emit_product(module: ir.Module, nv: int, name: str) -> ir.Function:
    """Add to `module` the internal ``name(M, N, K, A, B, C)``: C = A @ B for
    row-major float32 A [M, K], B [K, N] and C [M, N] (C sharing no memory with A
    or B), in blocks of ``16 * nv`` columns (see the module docstring)."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64] * 3 + [PTR] * 3), name)
    fn.linkage = "internal"
    M, N, K, A, B, C = fn.args
    for pointer in (A, B, C):
        pointer.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fma, masked_load, masked_store = tile_intrinsics(module)
    zero = ir.Constant(V16, [0.0] * WIDTH)
    align = ir.Constant(I32, 4)
    lanes_type = ir.VectorType(I64, WIDTH)
    lanes = ir.Constant(lanes_type, list(range(WIDTH)))

    def rows(first, count: int, start, stop, nv: int) -> None:
        """C's rows first.. (`count` of them) over the columns [start, stop) in blocks
        of `nv` vectors: per k, the block's vectors of B's row k times each row's
        element k, in ``CHAINS // count`` sets of accumulators per row taking turns
        over k."""
        block = WIDTH * nv
        chains = CHAINS // count
        a_rows = [gep(b, A, b.mul(b.add(first, const(r)), K)) for r in range(count)]
        c_rows = [gep(b, C, b.mul(b.add(first, const(r)), N)) for r in range(count)]
        blocks = b.sdiv(b.add(b.sub(stop, start), const(block - 1)), const(block))
        with counted_loop(b, const(0), blocks, f"j{count}") as jb:
            j = b.add(start, b.mul(jb, const(block)))
            columns = [b.add(lanes, splat(b, b.add(j, const(WIDTH * v)), lanes_type))
                       for v in range(nv)]
            masks = [b.and_(b.icmp_signed("<", c, splat(b, stop, lanes_type)),
                            b.icmp_signed(">=", c, ir.Constant(lanes_type, [0] * WIDTH)))
                     for c in columns]

            def step(k, acc: list) -> list:  # acc: per row, per vector
                row = b.gep(B, [b.add(b.mul(k, N), j)], source_etype=F32)  # (may be before B)
                vectors = [b.call(masked_load, [b.gep(row, [const(WIDTH * v)], source_etype=F32),
                                                align, masks[v], zero]) for v in range(nv)]
                out = []
                for r, a_row in enumerate(a_rows):
                    element = splat(b, b.load(gep(b, a_row, k), typ=F32))
                    out += [b.call(fma, [element, vectors[v], acc[r * nv + v]])
                            for v in range(nv)]
                return out

            width = count * nv  # accumulators of one set
            turns = b.sdiv(K, const(chains))
            with carried_loop(b, const(0), turns, [zero] * (chains * width),
                              f"k{count}") as loop:
                acc = []
                for c in range(chains):
                    k = b.add(b.mul(loop.index, const(chains)), const(c))
                    acc += step(k, loop.values[c * width:(c + 1) * width])
                loop.next = acc
            sets = loop.values
            with carried_loop(b, b.mul(turns, const(chains)), K, sets[:width],
                              f"kr{count}") as rest:
                rest.next = step(rest.index, rest.values)
            sets = rest.values + sets[width:]
            for r, c_row in enumerate(c_rows):
                for v in range(nv):
                    parts = [sets[c * width + r * nv + v] for c in range(chains)]
                    while len(parts) > 1:  # a tree: (s0 + s1) + (s2 + s3)
                        parts = [b.fadd(x, y) for x, y in zip(parts[::2], parts[1::2])]
                    b.call(masked_store, [parts[0], b.gep(c_row, [b.add(j, const(WIDTH * v))],
                                                          source_etype=F32), align, masks[v]])

    fours = b.sdiv(M, const(4))
    with counted_loop(b, const(0), fours, "g") as g:
        rows(b.mul(g, const(4)), 4, const(0), N, nv)
    done = b.mul(fours, const(4))
    with b.if_then(b.icmp_signed(">=", b.sub(M, done), const(2))):
        rows(done, 2, const(0), N, nv)
    with b.if_then(b.icmp_signed("==", b.srem(M, const(2)), const(1))):
        last = b.sub(M, const(1))
        # B's rows all start `lead` floats before a cache line when N is a multiple of
        # 16: those columns first, then the rest in vectors on cache lines
        lead = b.and_(b.lshr(b.sub(const(0), b.ptrtoint(B, I64)), const(2)), const(WIDTH - 1))
        peel = b.and_(b.icmp_signed("!=", lead, const(0)),
                      b.icmp_signed("==", b.and_(N, const(WIDTH - 1)), const(0)))
        with b.if_else(peel) as (peeling, plain):
            with peeling:  # a grid of vectors on cache lines, from column lead - 16
                rows(last, 1, b.sub(lead, const(WIDTH)), N, min(nv + 1, MAX_VECTORS + 1))
            with plain:
                rows(last, 1, const(0), N, nv)
    b.ret_void()
    return fn
