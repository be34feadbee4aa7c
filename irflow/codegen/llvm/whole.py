"""A small call of a whole function as one native function: batch-1 latency.

A plan runs a function step by step, each step a Python call of a kernel (a
generated check, then ctypes), around the steps its arena and a silencing of NumPy's
warnings. For a batch-1 MLP that is most of the time: its two fused layers compute
in about a microsecond, and the plan's steps took 7.2 µs against NumPy eager's 5.4
for the whole model. So a function made only of float32 products and the elementwise
bodies fused over them (``relu(x @ w + b)``, layer after layer) is also compiled into
*one* native function (`WholeSpec`): the products of a few rows by
`irflow.codegen.llvm.gemv`, each body by the GEMM's epilogue code
(`irflow.codegen.llvm.gemm.emit_epilogue`, the scalar code of every fused kernel)
over the product it follows, the intermediates on the native stack. Its call
(`compile_whole`) checks the arguments in one generated Python function, takes the
results' memory (the last call's, once its caller has dropped it) and makes one
ctypes call.

The call keeps the last arguments it ran (to reuse their addresses) and its last
results (to write them again once dropped), so those stay allocated until the next
call replaces them: a batch of fewer than 8 rows and the parameters, which the model
holds anyway.

It takes only the calls it is made for, and says no (returns None) to the others,
which the plan's steps then run, raising what they raise:

- arguments of the function's float32 types (NumPy arrays, C-contiguous, writable,
  not empty, its symbols' sizes consistent);
- every product of fewer than `MIN_ROWS` rows (more rows: the plan's GEMM, whose
  tiles are faster from there);
- intermediates of at most `STACK_BYTES` together (they live on the calling
  thread's stack, so threads never share them), on a thread whose stack holds them
  (`irflow.codegen.llvm.stack`: not one made after ``threading.stack_size`` set a
  small size, where a call ran off the stack).

A function with anything else (another op, dtype or layout, a transposed operand, a
reduction in a body, a constant), or with no product at all (nothing to save),
gets no native function: `compile_whole` says
None when the plan is built, before any LLVM work, so other programs compile
nothing more.
"""
from __future__ import annotations

import ctypes
import math
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...ir import dtypes
from ...ir.core import Function, Operation, Value
from ...ir.registry import lookup
from ...ir.types import TensorType, is_symbol
from ..arena import ALONE
from .calling import GENERAL, make, product, read_shapes, refuse, tuple_of
from .compiler import Compiler
from .elementwise import Unsupported
from .fused import lower_body
from .gemm import F32, I64, MIN_ROWS, PTR, Epilogue, const, emit_epilogue, operand_kind
from .gemv import emit_product, vectors
from .kernel import FUNCTION_NAME
from .stack import stack

STACK_BYTES = 64 << 10  # the intermediates of a call, on the native stack: a thread's
                        # is 8 MiB by default on Linux; one with less than
                        # `threads.ROOMY_BYTES` takes the plan's steps (`stack.roomy`)
ALIGN = 64
BRIEF_WORK = 1 << 20  # multiply-adds of a call that keeps the GIL (`_brief`)

Dim = int | str  # a static size, or a symbol: a size argument of the native function


@dataclass(frozen=True)
class Product:
    """One product of a `WholeSpec`, buffer `a` ``[m, k]`` @ buffer `b` ``[k, n]``
    into buffer `c`, then `epilogue` over C in place, its operands the buffers
    `extras`."""

    a: int
    b: int
    c: int
    m: Dim
    k: Dim
    n: Dim
    epilogue: Epilogue | None = None
    extras: tuple[int, ...] = ()


@dataclass(frozen=True)
class WholeSpec:
    """A function as one native function (plain data, the compiler's key):
    ``void kernel(i64 sizes..., ptr buffers...)`` whose size arguments are the
    symbols `sizes` and whose pointers are `buffers` float32 arrays (the function's
    arguments, then its results); the `scratch` intermediates (their shapes)
    follow them in the buffers' numbering. The `products` run in order."""

    sizes: tuple[str, ...]
    buffers: int
    scratch: tuple[tuple[Dim, ...], ...]
    products: tuple[Product, ...]

    def llvm_ir(self, fma: bool) -> str:
        module = ir.Module(name="whole")
        fnty = ir.FunctionType(ir.VoidType(), [I64] * len(self.sizes) + [PTR] * self.buffers)
        fn = ir.Function(module, fnty, FUNCTION_NAME)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        sizes = dict(zip(self.sizes, fn.args))

        def dim(d: Dim):
            return const(d) if isinstance(d, int) else sizes[d]

        buffers = list(fn.args[len(self.sizes):])
        for arg in buffers:
            arg.add_attribute("noalias")
        for shape in self.scratch:
            count = const(1)
            for d in shape:
                count = b.mul(count, dim(d))
            memory = b.alloca(F32, size=count)
            memory.align = ALIGN
            buffers.append(b.inttoptr(b.ptrtoint(memory, I64), PTR))  # llvmlite's is typed
        products: dict[int, ir.Function] = {}
        for number, p in enumerate(self.products):
            nv = vectors(p.n)
            if nv not in products:
                products[nv] = emit_product(module, nv, f"product{nv}")
            b.call(products[nv], [dim(p.m), dim(p.n), dim(p.k),
                                  buffers[p.a], buffers[p.b], buffers[p.c]])
            if p.epilogue is not None:
                epilogue = emit_epilogue(module, p.epilogue, fma, f"epilogue{number}")
                b.call(epilogue, [buffers[p.c], dim(p.n), const(0), const(0), dim(p.m),
                                  dim(p.n), *[buffers[x] for x in p.extras]])
        b.ret_void()
        return str(module)


# ---------------------------------------------------------------- from the IR

def whole_spec(fn: Function) -> WholeSpec:
    """`fn` as a `WholeSpec`; raises `Unsupported` for a function it cannot be."""
    block = fn.block
    sizes: list[str] = []
    for arg in block.args:
        _float_matrix_or_vector(arg)
        sizes += [d for d in arg.type.shape if isinstance(d, str) and d not in sizes]
    returned = list(block.terminator.operands)
    if len(set(returned)) != len(returned) or any(v in block.args for v in returned):
        raise Unsupported("a result that is an argument, or returned twice")
    number: dict[Value, int] = {arg: k for k, arg in enumerate(block.args)}
    number.update((v, len(block.args) + j) for j, v in enumerate(returned))
    scratch: list[tuple[Dim, ...]] = []
    products = []
    for op in block.body_ops():
        p = _product(op, number, sizes)
        if op.result not in number:
            number[op.result] = len(block.args) + len(returned) + len(scratch)
            scratch.append(tuple(op.result.type.shape))
        products.append(Product(number[p[0]], number[p[1]], number[op.result], *p[2:]))
    if not products:
        raise Unsupported("no product: nothing a native function would save")
    if any(v not in number for v in returned) or any(isinstance(p.m, int) and p.m >= MIN_ROWS
                                                     for p in products):
        raise Unsupported("every call has a product of too many rows")
    if sum(4 * math.prod(shape) for shape in scratch
           if all(isinstance(d, int) for d in shape)) > STACK_BYTES:
        raise Unsupported("intermediates too large for the stack")
    return WholeSpec(tuple(sizes), len(block.args) + len(returned), tuple(scratch),
                     tuple(products))


def _float_matrix_or_vector(v: Value) -> None:
    t = v.type
    if not (isinstance(t, TensorType) and t.dtype is dtypes.float32 and 1 <= t.rank <= 2
            and all(isinstance(d, int) or is_symbol(d) for d in t.shape)):
        raise Unsupported(f"not a float32 matrix or vector of sizes or symbols: {t}")


def _product(op: Operation, number: dict, sizes: list[str]) -> tuple:
    """``(a, b, m, k, n, epilogue, extras)`` of a product, `op` a matmul or a fused op
    of a matmul anchor and an elementwise float32 body over it, whose operands are
    in `number`."""
    if len(op.results) != 1:
        raise Unsupported(f"'{op.name}' has several results")
    _float_matrix_or_vector(op.result)
    if any(isinstance(d, str) and d not in sizes for d in op.result.type.shape):
        raise Unsupported("a size no argument has")
    if op.name == "matmul":
        return (*_matmul(op, op.operands, number), None, ())
    if op.name != "fused":
        raise Unsupported(f"'{op.name}' is not a product")
    region_op = lookup(op.name).region_op
    anchor = region_op.anchor_op(op)
    if anchor is None or anchor.name != "matmul":
        raise Unsupported("a fused op without a matmul anchor")
    lay = region_op.layout(op)
    a, b, m, k, n = _matmul(anchor, op.operands[:lay.n_anchor], number)
    c = anchor.result.type
    entering = [c, *(v.type for v in op.operands[lay.n_anchor:])]
    yielded = lay.body.terminator.operands
    if lay.axes or tuple(lay.domain) != tuple(c.shape) or op.result.type != c \
            or len(yielded) != 1:
        raise Unsupported("a body that is not elementwise over the product")
    inputs, instrs, numbers = lower_body(lay, entering)
    kinds = tuple(operand_kind(t.shape, m, n) for t in entering[1:])
    extras = op.operands[lay.n_anchor:]
    try:
        if None in kinds or numbers[yielded[0]] < len(inputs) \
                or any(v not in number for v in extras) or any(d != "f32" for d in inputs):
            raise ValueError("operands the epilogue does not take")
        epilogue = Epilogue(kinds, tuple(instrs), numbers[yielded[0]])  # checks the body
    except ValueError:
        raise Unsupported("a body the product's epilogue cannot apply") from None
    return a, b, m, k, n, epilogue, tuple(number[v] for v in extras)


def _matmul(op: Operation, operands: Sequence[Value], number: dict) -> tuple:
    """``(a, b, m, k, n)`` of the matmul `op` of the values `operands`: float32
    matrices, not transposed, computed before."""
    x, y = operands
    if op.attrs["transpose_x"] or op.attrs["transpose_y"] or x.type.rank != 2 \
            or y.type.rank != 2 or x not in number or y not in number:
        raise Unsupported("not a product of two matrices computed before")
    (m, k), (_, n) = x.type.shape, y.type.shape
    return x, y, m, k, n


# ---------------------------------------------------------------- the call

def compile_whole(fn: Function, compiler: Compiler) -> Callable | None:
    """``call(arrays, out)``: `fn`'s results for the arguments `arrays` by one native
    function, or None for a call it does not take (see the module docstring); None
    instead of a call for a function it cannot compile or on hosts without AVX-512
    (what `irflow.codegen.llvm.gemv` is written for)."""
    if "+avx512f" not in compiler.target.features.split(","):
        return None
    try:
        spec = whole_spec(fn)
    except Unsupported:
        return None
    code = compiler.code(spec)
    native = code.function(len(spec.sizes) + spec.buffers, keeps_gil=_brief(spec))
    args = [a.type for a in fn.block.args]
    results = [v.type for v in fn.block.terminator.operands]
    return _call_function(spec, native, args, results)


def _brief(spec: WholeSpec) -> bool:
    """Whether every call of `spec` is brief enough to keep the GIL (`Code.function`):
    its products' weights static and at most `BRIEF_WORK` multiply-adds at the most
    rows a call takes (another thread then waits at most a few hundred µs, were the
    weights in memory)."""
    shapes = [(p.k, p.n) for p in spec.products]
    return (all(isinstance(k, int) and isinstance(n, int) for k, n in shapes)
            and MIN_ROWS * sum(k * n for k, n in shapes) <= BRIEF_WORK)


def _remembered_addresses(pointers: list[str], arrays: list[str]) -> list[str]:
    """The lines taking the data addresses of the argument `arrays` into `pointers`,
    each remembered with its array: a parameter is the same array call after call,
    and ctypes' view of it costs 0.25 µs (of a batch-1 MLP's 8). ``seen[k]`` holds
    the last array of argument k, its address and the view. The entry's reference
    makes NumPy's ``resize`` refuse to move the data (unless told not to check,
    NumPy's own unsafe case), and the shape is checked on every call, so the
    address stays the array's; only assigning ``strides`` (deprecated in NumPy 2.4)
    could make the same array non-contiguous unseen. An array that has no view
    (read-only, not C-contiguous, empty) goes to the general path."""
    lines = []
    for k, (p, a) in enumerate(zip(pointers, arrays)):
        lines += [f"h = seen[{k}]", f"if h is not None and h[0] is {a}:", f"    {p} = h[1]",
                  "else:", "    try:", f"        v = view({a})",
                  "    except (TypeError, ValueError):  # read-only, not C-contiguous, or empty",
                  f"        {GENERAL}", f"    {p} = addressof(v)",
                  f"    seen[{k}] = ({a}, {p}, v)"]
    return lines


def _result_lines(outs: list[str], pointers: list[str], shapes: list[str]) -> list[str]:
    """The lines taking each result's memory into `outs` and its address into
    `pointers`: the buffer a call before returned when nobody holds it any more
    (``spare[j]`` keeps it with its address), as a plan's result buffers
    (`irflow.codegen.arena`): a batch-1 call spent 0.45 µs making and viewing a new
    one. Its shape, dtype and flags are checked again: a caller may have assigned
    them before it dropped the array, and one made read-only or (deprecated)
    given other strides must not come back written, read-only or strided
    (``carray``: C-contiguous, writable and aligned, one lookup). The array is read
    into a local before its count is asked, so two threads reading the entry at
    once both see the other's reference and neither writes it."""
    lines = []
    for j, (o, p, shape) in enumerate(zip(outs, pointers, shapes)):
        lines += [f"h = spare[{j}]", f"{o} = None if h is None else h[0]",
                  f"if (getrefcount({o}) > {ALONE + 1} or {o}.shape != {shape}"
                  f" or {o}.dtype is not f32 or not {o}.flags.carray):",
                  f"    {o} = empty({shape}, f32)",
                  "    try:", f"        {p} = addressof(view({o}))",
                  "    except (TypeError, ValueError):  # empty",
                  f"        {GENERAL}", f"    spare[{j}] = ({o}, {p})",
                  "else:", f"    {p} = h[1]"]
    return lines


def _declined(arrays, out) -> None:
    """The general path of a whole call: none (the plan's steps run)."""
    return None


def _call_function(spec: WholeSpec, native, args: list[TensorType],
                   results: list[TensorType]) -> Callable:
    """The generated call of `native` (see `irflow.codegen.llvm.calling`). For a
    batch-1 MLP::

        def call(arrays, out):
            if len(arrays) != 5:
                return general(arrays, out)
            a0, a1, a2, a3, a4, = arrays
            if (type(a0) is not ndarray or a0.dtype is not f32 ... or a0.ndim != 2):
                return general(arrays, out)
            a0_0, a0_1, = a0.shape
            if (a0_1 != 784 or a1.shape != (784, 64) ... or a0_0 >= 8
                    or a0_0 * 256 > 65536 or not stack.roomy):
                return general(arrays, out)
            h = seen[0]
            if h is not None and h[0] is a0:
                p0 = h[1]
            else:
                ... (a0's view, its address, remembered in seen[0])
            ... (a1 to a4 alike)
            h = spare[0]
            o0 = None if h is None else h[0]
            if (getrefcount(o0) > 3 or o0.shape != (a0_0, 10) or o0.dtype is not f32
                    or not o0.flags.carray):
                ... (a new result, its address, kept in spare[0])
            else:
                p5 = h[1]
            fn(a0_0, p0, p1, p2, p3, p4, p5)
            return [o0]
    """
    ins = [f"a{k}" for k in range(len(args))]
    body = [f"if len(arrays) != {len(ins)}:", f"    {GENERAL}", f"{', '.join(ins)}, = arrays"]
    dims, ranks, unpack, checks = read_shapes(ins, [t.shape for t in args])
    body += refuse([f"type({a}) is not ndarray or {a}.dtype is not f32" for a in ins] + ranks)
    body += unpack
    size_of: dict[str, str] = {}  # symbol -> the name its size is read into
    for t, names in zip(args, dims):
        for d, name in zip(t.shape, names):
            if isinstance(d, str) and d in size_of:
                checks.append(f"{name} != {size_of[d]}")
            elif isinstance(d, str):
                size_of[d] = name

    def size(d: Dim):
        return d if isinstance(d, int) else size_of[d]

    checks += dict.fromkeys(f"{size(p.m)} >= {MIN_ROWS}" for p in spec.products
                            if not isinstance(p.m, int))
    scratch = [product([size(d) for d in shape] + [4]) for shape in spec.scratch]
    if any(not isinstance(n, int) for n in scratch):
        checks.append(f"{' + '.join(str(n) for n in scratch)} > {STACK_BYTES}")
    checks.append("not stack.roomy")  # a thread's stack too small for the intermediates
    body += refuse(checks)
    outs = [f"o{j}" for j in range(len(results))]
    pointers = [f"p{i}" for i in range(spec.buffers)]
    body += _remembered_addresses(pointers[:len(ins)], ins)
    body += _result_lines(outs, pointers[len(ins):],
                          [tuple_of([size(d) for d in t.shape]) for t in results])
    body += [f"fn({', '.join([size_of[s] for s in spec.sizes] + pointers)})",
             f"return [{', '.join(outs)}]"]
    values = {"fn": native, "general": _declined, "seen": [None] * len(ins),
              "spare": [None] * len(outs), "getrefcount": sys.getrefcount,
              "ndarray": np.ndarray, "empty": np.empty, "addressof": ctypes.addressof,
              "view": ctypes.c_char.from_buffer, "f32": np.dtype(np.float32), "stack": stack}
    return make(values, body, f"<irflow whole call {len(spec.products)}>")


__all__ = ["WholeSpec", "Product", "compile_whole", "whole_spec", "STACK_BYTES"]
