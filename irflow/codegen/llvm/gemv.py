"""Float32 products of a few rows (``[M, K] @ [K, N]`` with M below the GEMM's
`MIN_ROWS`) as generated LLVM code: a batch-1 layer's ``x @ w``.

The GEMM of `irflow.codegen.llvm.gemm` is built for many rows: its tiles compute 8
rows at once and it copies B into panels, so a row-vector product spends its time
packing B and in FMA latency (1 x 784 x 64 took 10 µs there, NumPy's 2.4). Here each
row of C is computed in blocks of ``16 * nv`` columns, held in ``4 * nv`` zmm
accumulators: per k the block's ``nv`` vectors of B's row k are read where they are
(B is read once per row of A, in memory order, which the hardware prefetches) and
multiplied by A's element k, broadcast. Four consecutive k go into four
independent sets of accumulators, so four FMAs chains are in flight per vector
(an FMA's latency is four cycles, two issue per cycle); the sets are added at the
end of the row. Columns past N are masked (``llvm.masked.load/store``, which touch
no memory where the mask is off), so any N works, and a block narrower than ``nv``
vectors wastes only the lanes' FMAs.

The sum of each element runs over k in four interleaved parts, then adds them:
another order than NumPy's (OpenBLAS's), both within float32 rounding of the exact
product.

``product(M, N, K, A, B, C)`` is an internal function of the module that calls it
(`emit_product`), which holds the pointers' checks: `irflow.codegen.llvm.whole`.
"""
from __future__ import annotations

from llvmlite import ir

from .gemm import F32, I32, I64, MASK, PTR, V16, WIDTH, const, gep, splat
from .loops import carried_loop, counted_loop

CHAINS = 4  # independent accumulator sets: consecutive k go to different ones
MAX_VECTORS = 4  # a block of at most 64 columns: 16 accumulators, half the zmm registers


def vectors(n) -> int:
    """The block width, in vectors, for products of `n` columns (an int, or a symbol:
    any width)."""
    if not isinstance(n, int):
        return MAX_VECTORS
    return max(1, min(MAX_VECTORS, -(-n // WIDTH)))


def declared(module: ir.Module, name: str, result, args) -> ir.Function:
    """The function `name` of `module` (an intrinsic), declared if it is not yet."""
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(result, args), name)


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
    masked_load = declared(module, "llvm.masked.load.v16f32.p0", V16, [PTR, I32, MASK, V16])
    masked_store = declared(module, "llvm.masked.store.v16f32.p0", ir.VoidType(),
                            [V16, PTR, I32, MASK])
    fma = declared(module, "llvm.fma.v16f32", V16, [V16] * 3)
    zero = ir.Constant(V16, [0.0] * WIDTH)
    align = ir.Constant(I32, 4)
    lanes_type = ir.VectorType(I64, WIDTH)
    lanes = ir.Constant(lanes_type, list(range(WIDTH)))
    block = WIDTH * nv
    with counted_loop(b, const(0), M, "i") as i:
        a_row, c_row = gep(b, A, b.mul(i, K)), gep(b, C, b.mul(i, N))
        blocks = b.sdiv(b.add(N, const(block - 1)), const(block))
        with counted_loop(b, const(0), blocks, "j") as jb:
            j = b.mul(jb, const(block))
            masks = [b.icmp_signed("<", lanes, splat(b, b.sub(N, b.add(j, const(WIDTH * v))),
                                                     lanes_type)) for v in range(nv)]

            def step(k, acc: list) -> list:
                element = splat(b, b.load(gep(b, a_row, k), typ=F32))
                row = gep(b, B, b.add(b.mul(k, N), j))
                return [b.call(fma, [element, b.call(masked_load, [
                    gep(b, row, const(WIDTH * v)), align, masks[v], zero]), acc[v]])
                        for v in range(nv)]

            quads = b.sdiv(K, const(CHAINS))
            with carried_loop(b, const(0), quads, [zero] * (CHAINS * nv), "k") as loop:
                acc = []
                for c in range(CHAINS):
                    k = b.add(b.mul(loop.index, const(CHAINS)), const(c))
                    acc += step(k, loop.values[c * nv:(c + 1) * nv])
                loop.next = acc
            sets = loop.values
            with carried_loop(b, b.mul(quads, const(CHAINS)), K, sets[:nv], "kr") as rest:
                rest.next = step(rest.index, rest.values)
            sets = rest.values + sets[nv:]
            for v in range(nv):
                total = b.fadd(b.fadd(sets[v], sets[nv + v]),
                               b.fadd(sets[2 * nv + v], sets[3 * nv + v]))
                b.call(masked_store, [total, gep(b, c_row, b.add(j, const(WIDTH * v))),
                                      align, masks[v]])
    b.ret_void()
    return fn
