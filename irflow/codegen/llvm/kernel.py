"""Elementwise kernels: a scalar program run once per element of a broadcast domain.

A `KernelSpec` is what gets compiled: the dtypes of the inputs, which loop dims each
input is broadcast along (stride 0), the scalar program (`Instr`s in SSA over the
inputs) and which of its values are stored as outputs. It is plain hashable data,
independent of where it came from (a chain of elementwise ops, the body of a
``fused`` op), and it is the in-process cache key.

**Loops.** The domain's dims that are statically 1 are dropped, and adjacent dims
along which every input either broadcasts or not are merged, so
``f32[N,C] + f32[C]`` loops over ``N`` then ``C`` while ``f32[4096,1024] * f32``
is one flat loop of 4M elements. Inputs and outputs are C-contiguous, so in the
innermost loop every operand is either contiguous or loop-invariant: a loop that
LLVM vectorizes for the host's vector width (pointers are ``noalias``, so no
run-time alias checks are needed; `Kernel` refuses outputs that overlap inputs).
Strides in the outer loops are computed from the sizes at run time, so one kernel
serves every size of a symbolic dim.

The function is ``void kernel(i64 begin, i64 end, i64 size_0, ..., ptr in_0, ...,
ptr out_0, ..., [ptr status])``; it runs the outermost loop over ``[begin, end)``, so
`call_rows` can split that loop across threads (`irflow.set_num_threads`). A kernel
that can fail (integer ``//`` or ``%``, by a zero divisor) takes a last pointer to a
status byte it sets on failure; `call_rows` passes a fresh one per call and per part,
and `Kernel` raises the interpreter's error.

**In place.** `KernelSpec.inplace` pairs an output with an input it is stored
over: the output has no pointer argument of its own and is stored through the
input's, at the offset the input is loaded from, so LLVM sees one pointer, each
element loaded before it is stored over, and vectorizes as before (two ``noalias``
pointers to one buffer would be undefined behaviour). Only an input that spans every
loop dim, of the output's dtype, can be one (`check_inplace`); a fused op's epilogue
stores over its anchor's result that way (`irflow.codegen.llvm.fused.FusedKernel`).

**Calls.** `Kernel` checks every argument (ndarray, dtype, rank, each size against
the domain) before the code runs, so no input can make it read or write out of
bounds; non-contiguous inputs are copied to contiguous ones; the arrays written
share no memory with another operand (`overlapping`, from the addresses taken). It
calls the code through a ctypes ``CFUNCTYPE``, which releases the GIL, and keeps no
per-call state, so one kernel may be called from several threads at once. A call
runs a function generated for the kernel (`Kernel.run`, `irflow.codegen.llvm.calling`):
the common call's checks are one comparison each, static sizes written in, and the
code is called directly when the call cannot split; any other call goes through
`Kernel.checked_call`, the general path, which raises the errors.
"""
from __future__ import annotations

import ctypes
import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from llvmlite import ir

from ...errors import IntegerDivisionByZero, ShapeError
from ...ir import dtypes
from ...ir.types import TensorType, broadcast_shapes
from ..native import Array, Call
from ..threads import row_ranges, run_parts
from .calling import (GENERAL, addresses, call_lines, input_lines, make, overlaps, product,
                      refuse, tuple_of)
from .jit import FULL, SMALL, Optimization
from .loops import counted_loop
from .mathlib import Math
from .scalar import MEMORY_TYPES, ScalarEmitter, can_fail

I64 = ir.IntType(64)
NUMPY_DTYPES = {d.short: d.np for d in dtypes.ALL if d.short in MEMORY_TYPES}
FUNCTION_NAME = "kernel"


@dataclass(frozen=True)
class Instr:
    """One scalar op: value ``n_inputs + i`` for the i-th instruction. ``const``
    holds its value in `attrs` (``(("value", 0.5),)``)."""

    op: str
    args: tuple[int, ...]
    dtype: str
    attrs: tuple[tuple[str, object], ...] = ()

    def text(self, n_inputs: int, index: int) -> str:
        args = ", ".join(f"%{a}" for a in self.args)
        attrs = "".join(f" {k}={v!r}" for k, v in self.attrs)
        return f"%{n_inputs + index} = {self.op} {args}{attrs} : {self.dtype}"


@dataclass(frozen=True)
class KernelSpec:
    """A scalar program over a loop nest of `rank` dims (see the module docstring)."""

    inputs: tuple[str, ...]
    broadcast: tuple[tuple[bool, ...], ...]   # per input, per loop dim: stride 0 there
    body: tuple[Instr, ...]
    outputs: tuple[int, ...]                  # value numbers stored over the domain
    rank: int
    # (output j, input k): output j is stored through input k's pointer, at the index
    # it loads (in place; see "In place" in the module docstring)
    inplace: tuple[tuple[int, int], ...] = ()
    small: bool = False  # every call is small: compiled for size (`SMALL`)

    @property
    def optimization(self) -> Optimization:
        return SMALL if self.small else FULL

    def __post_init__(self):
        check_inplace(self.inplace, self.inputs, self.broadcast,
                      [self.dtype(v) for v in self.outputs])

    def dtype(self, value: int) -> str:
        n = len(self.inputs)
        return self.inputs[value] if value < n else self.body[value - n].dtype

    @property
    def fallible(self) -> bool:
        """Whether the kernel can fail (it then takes a status byte)."""
        return any(can_fail(i.op, i.dtype) for i in self.body)

    def llvm_ir(self, fma: bool) -> str:
        return generate(self, fma)

    def text(self) -> str:
        """A readable form, one line per instruction."""
        heads = [f"%{i}: {d}" + ("[" + "".join("b" if b else "." for b in mask) + "]")
                 for i, (d, mask) in enumerate(zip(self.inputs, self.broadcast))]
        lines = [f"kernel rank {self.rank} ({', '.join(heads)}) {{"]
        lines += ["  " + instr.text(len(self.inputs), i) for i, instr in enumerate(self.body)]
        lines.append("  store " + ", ".join(f"%{v}" for v in self.outputs) + "\n}")
        lines += [f"  (output {j} in place of %{k})" for j, k in self.inplace]
        return "\n".join(lines)


def check_inplace(inplace, inputs, masks, out_dtypes) -> None:
    """Raise `ValueError` unless each (output j, input k) pair of `inplace` may share
    a pointer: input k spans every loop dim (so its index is the output's) and has
    output j's dtype, and no output or input is in two pairs."""
    outs, ins = [j for j, _ in inplace], [k for _, k in inplace]
    if len(set(outs)) != len(outs) or len(set(ins)) != len(ins):
        raise ValueError(f"an output or input is stored in place twice: {inplace}")
    for j, k in inplace:
        if any(masks[k]) or inputs[k] != out_dtypes[j]:
            raise ValueError(f"output {j} ({out_dtypes[j]}) cannot be stored in place of "
                             f"input {k} ({inputs[k]}, broadcast {masks[k]})")


# ---------------------------------------------------------------- the domain

@dataclass(frozen=True)
class Domain:
    """How arrays of the IR types of a kernel's inputs map onto its loops: the
    run-time checks and the loop sizes of `Kernel`.

    `inputs[k]` is input k's IR shape; `sources[d]` is the (input, axis) that gives
    the size of domain dim d, or None for a dim that is statically 1; `groups[j]`
    lists the domain dims loop dim j covers; `expect[k][axis]` is the domain dim input
    k's axis must match, or None where the input has size 1 (it broadcasts)."""

    shape: tuple                                # the domain's IR shape
    inputs: tuple[tuple, ...]
    sources: tuple[tuple[int, int] | None, ...]
    groups: tuple[tuple[int, ...], ...]
    expect: tuple[tuple[int | None, ...], ...]

    @property
    def rank(self) -> int:
        return len(self.sources)

    @property
    def ranks(self) -> tuple[int, ...]:
        return tuple(len(shape) for shape in self.inputs)


def plan_domain(types: Sequence[TensorType]) -> tuple[Domain, tuple[tuple[bool, ...], ...]]:
    """The `Domain` of inputs of `types` (their broadcast) and, per input, along
    which loop dims it broadcasts."""
    shape = broadcast_shapes(*(t.shape for t in types)) if types else ()
    rank = len(shape)
    padded = [(None,) * (rank - t.rank) + tuple(t.shape) for t in types]
    kept = [d for d in range(rank) if shape[d] != 1]
    spread = [[p[d] is None or (p[d] == 1 and shape[d] != 1) for d in range(rank)]
              for p in padded]
    groups: list[list[int]] = []
    for d in kept:
        if groups and all(m[groups[-1][-1]] == m[d] for m in spread):
            groups[-1].append(d)
        else:
            groups.append([d])
    sources = []
    for d in range(rank):
        if shape[d] == 1:
            sources.append(None)
            continue
        k = next(k for k, m in enumerate(spread) if not m[d])
        sources.append((k, d - (rank - types[k].rank)))
    expect = tuple(tuple(None if spread[k][d + rank - t.rank] or shape[d + rank - t.rank] == 1
                         else d + rank - t.rank for d in range(t.rank))
                   for k, t in enumerate(types))
    masks = tuple(tuple(spread[k][g[0]] for g in groups) or (True,) for k in range(len(types)))
    domain = Domain(tuple(shape), tuple(tuple(t.shape) for t in types), tuple(sources),
                    tuple(tuple(g) for g in groups) or ((),), expect)
    return domain, masks


# ---------------------------------------------------------------- code generation

def generate(spec: KernelSpec, fma: bool) -> str:
    """The LLVM IR text of `spec`'s kernel function."""
    module = ir.Module(name="irflow_kernel")
    n_in, n_out = len(spec.inputs), len(spec.outputs) - len(spec.inplace)
    ptr = ir.PointerType()
    n_status = 1 if spec.fallible else 0
    kind = ir.FunctionType(ir.VoidType(), [I64] * (2 + spec.rank)
                           + [ptr] * (n_in + n_out + n_status))
    fn = ir.Function(module, kind, name=FUNCTION_NAME)
    begin, end = fn.args[0], fn.args[1]
    sizes = fn.args[2:2 + spec.rank]
    pointers = fn.args[2 + spec.rank:]
    for p in pointers:
        p.add_attribute("noalias")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    strides = [_strides(builder, sizes, mask) for mask in spec.broadcast]
    strides += [_strides(builder, sizes, (False,) * spec.rank)] * n_out
    emitter = ScalarEmitter(builder, Math(builder, fma),
                            pointers[n_in + n_out] if n_status else None)
    # per output, the pointer argument (and offset) it is stored through
    targets = stored_through(spec.inplace, len(spec.outputs), n_in)

    def body(offsets):
        values = []
        for k, dtype in enumerate(spec.inputs):
            address = builder.gep(pointers[k], [offsets[k]], inbounds=True,
                                  source_etype=MEMORY_TYPES[dtype])
            value = builder.load(address, typ=MEMORY_TYPES[dtype])
            if dtype == "bool":
                value = builder.icmp_unsigned("!=", value, ir.Constant(ir.IntType(8), 0))
            values.append(value)
        for instr in spec.body:
            if instr.op == "const":
                values.append(emitter.constant(instr.dtype, dict(instr.attrs)["value"]))
                continue
            ins = [spec.dtype(a) for a in instr.args]
            values.append(emitter.emit(instr.op, [values[a] for a in instr.args], ins,
                                       instr.dtype, dict(instr.attrs)))
        for j, v in enumerate(spec.outputs):
            value = values[v]
            if spec.dtype(v) == "bool":
                value = builder.zext(value, ir.IntType(8))
            operand = targets[j]
            address = builder.gep(pointers[operand], [offsets[operand]], inbounds=True,
                                  source_etype=MEMORY_TYPES[spec.dtype(v)])
            builder.store(value, address)

    def nest(level, offsets):
        if level == spec.rank:
            body(offsets)
            return
        start = begin if level == 0 else ir.Constant(I64, 0)
        stop = end if level == 0 else sizes[level]
        with counted_loop(builder, start, stop, f"i{level}") as i:
            nest(level + 1, [_advance(builder, o, i, s[level]) for o, s in zip(offsets, strides)])

    nest(0, [ir.Constant(I64, 0)] * (n_in + n_out))
    builder.ret_void()
    return str(module)


def stored_through(inplace, n_outputs: int, n_inputs: int) -> list[int]:
    """Per output, the pointer argument (among the inputs' and the outputs' own) it is
    stored through: input k's for an output in place of input k, so that LLVM sees one
    pointer, loaded and stored at the same index, and needs no alias checks."""
    through = dict(inplace)
    own = iter(range(n_inputs, n_inputs + n_outputs - len(through)))
    return [through[j] if j in through else next(own) for j in range(n_outputs)]


def _strides(builder: ir.IRBuilder, sizes, mask) -> list:
    """Element strides of a C-contiguous operand over the loop dims: 0 where it
    broadcasts, else the product of the sizes of the inner dims it spans."""
    out, acc = [None] * len(mask), ir.Constant(I64, 1)
    for d in reversed(range(len(mask))):
        out[d] = ir.Constant(I64, 0) if mask[d] else acc
        if not mask[d]:
            acc = builder.mul(acc, sizes[d]) if d else acc
    return out


def _advance(builder: ir.IRBuilder, offset, index, stride):
    if isinstance(stride, ir.Constant) and stride.constant == 0:
        return offset
    step = index if isinstance(stride, ir.Constant) and stride.constant == 1 \
        else builder.mul(index, stride)
    return builder.add(offset, step)


# ---------------------------------------------------------------- calling

def address(a: np.ndarray) -> int:
    """The address of a C-contiguous array's data. ctypes' view of a writable
    buffer costs a sixth of ``a.ctypes.data`` (0.2 µs against 1.2, a kernel call
    takes five or more; ``__array_interface__`` costs 1.2 too), which read-only and
    empty arrays (no view: ctypes refuses them) still use; asking ctypes first
    spares the flags' 0.06 µs."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):  # read-only, or no byte to view
        return a.ctypes.data


STATUS_BYTES = 64  # a status byte per cache line: parts running at once never share one


def call_rows(fn, rows: int, elements: int, args: Sequence[int], keep: Sequence[np.ndarray],
              scratch: int | None = None, fallible: bool = False) -> bool:
    """Call the compiled ``fn(begin, end, *args, [scratch], [status])`` over the rows
    ``[0, rows)`` of a domain of `elements` elements, split across threads when
    `irflow.codegen.threads.row_ranges` says it pays. Each part gets its own region
    of `scratch` bytes (None: the kernel takes no scratch) and, if `fallible`, its
    own status byte; each holds `keep` (the arrays the pointers of `args` point
    into) until it ends. Returns whether any part reported a failure."""
    ranges = row_ranges(rows, elements)
    if len(ranges) == 1:  # the common call: nothing to hand to other threads
        return _call_whole(fn, rows, args, scratch, fallible)
    parts = len(ranges)
    memory, bases = [], []  # arrays of per-part regions; (first pointer, region bytes)
    if scratch is not None:
        region = -(-scratch // 64) * 64  # parts' regions start on their own cache lines
        memory.append(np.empty(max(region * parts, 8), np.uint8))
        bases.append((address(memory[-1]), region))
    if fallible:
        memory.append(np.zeros(STATUS_BYTES * parts, np.int8))
        bases.append((address(memory[-1]), STATUS_BYTES))
    held = (*keep, *memory)
    run_parts([functools.partial(_call_part, fn, begin, end, args,
                                 [base + k * step for base, step in bases], held)
               for k, (begin, end) in enumerate(ranges)])
    return fallible and np.count_nonzero(memory[-1]) > 0


def call_rows_reducing(fn, rows: int, elements: int, args: Sequence[int],
                       keep: Sequence[np.ndarray], result: np.ndarray, combine) -> None:
    """`call_rows` of code that also reduces what its rows compute to one value,
    which it stores through a last pointer argument: in one part, `result`'s data
    (the code writes it once, where it belongs); split, each part stores its own
    into a slot of its own (a cache line each, so no part waits for another's) and
    `combine` (a NumPy ufunc exact in any order, such as ``np.maximum``, whose
    reduction propagates NaN as the code's does) reduces the slots into `result`."""
    ranges = row_ranges(rows, elements)
    if len(ranges) == 1:
        fn(0, rows, *args, address(result))
        return
    slots = np.empty((len(ranges), 64 // result.itemsize), result.dtype)
    base = address(slots)
    held = (*keep, slots)
    run_parts([functools.partial(_call_part, fn, begin, end, args, [base + 64 * k], held)
               for k, (begin, end) in enumerate(ranges)])
    result[...] = combine.reduce(slots[:, 0])


def _call_whole(fn, rows: int, args: Sequence[int], scratch: int | None,
                fallible: bool) -> bool:
    """`call_rows` in one call on this thread: its scratch and status byte, if any."""
    if scratch is not None:
        memory = np.empty(max(scratch, 8), np.uint8)  # held until the call returns
        args = (*args, address(memory))
    if not fallible:
        fn(0, rows, *args)
        return False
    status = np.zeros(1, np.int8)
    fn(0, rows, *args, address(status))
    return bool(status[0])


def _call_part(fn, begin: int, end: int, args, tail, held) -> None:
    """One part of `call_rows`; `held` keeps its arrays alive while it runs."""
    fn(begin, end, *args, *tail)


def division_by_zero() -> IntegerDivisionByZero:
    """The error a kernel's status byte reports, as the interpreter raises it."""
    return IntegerDivisionByZero("integer division by zero (// or % with a zero "
                                 "divisor); Paddle raises here too")


def overlapping(pairs: Sequence[tuple[int, int]], arrays: Sequence[np.ndarray],
                pointers: Sequence[int]) -> int | None:
    """The first array of the first of `pairs` (numbers into `arrays`, C-contiguous,
    their data at `pointers`) whose memories overlap, or None: what the kernels'
    ``noalias`` pointers require. The bounds of contiguous arrays are exactly their
    memory, so this is ``np.may_share_memory``, from the addresses already taken."""
    for w, i in pairs:
        a, b = arrays[w].nbytes, arrays[i].nbytes
        if pointers[i] < pointers[w] + a and pointers[w] < pointers[i] + b and a and b:
            return w
    return None


def written_pairs(written: Sequence[int], others: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The pairs of an array of `written` with another of `written` or `others`
    (array numbers; each pair once), which `overlapping` checks."""
    return tuple((w, i) for w in written for i in others
                 if i != w and not (i in written and i < w))


class Kernel:
    """A compiled `KernelSpec` bound to a `Domain`: ``kernel(*arrays, out=None)``
    returns the list of output arrays (written into `out` when given: buffers, or
    None for a new array, for the outputs not stored in place; those are their
    inputs' arrays)."""

    def __init__(self, spec: KernelSpec, domain: Domain, code):
        self.spec = spec
        self.domain = domain
        self._code = code  # holds the library, whose engine owns the machine code
        self._fallible = spec.fallible
        self._through = dict(spec.inplace)
        n = len(spec.inputs) + len(spec.outputs) - len(spec.inplace) + self._fallible
        self._fn = code.function(2 + spec.rank + n)
        self._in_dtypes = tuple(NUMPY_DTYPES[d] for d in spec.inputs)
        self._out_dtypes = tuple(NUMPY_DTYPES[spec.dtype(v)] for j, v in
                                 enumerate(spec.outputs) if j not in self._through)
        self._inputs = tuple(zip(self._in_dtypes, domain.ranks))
        # (input, axis, domain dim or None where it must be 1), but for the axes a
        # domain dim's size is read from
        self._expect = tuple((k, axis, d) for k, expect in enumerate(domain.expect)
                             for axis, d in enumerate(expect)
                             if d is None or domain.sources[d] != (k, axis))
        # the arrays written: the inputs stored through, then every own output
        n_in = len(spec.inputs)
        through = sorted(self._through.values())
        n_all = n_in + len(self._out_dtypes)
        self._pairs = written_pairs((*through, *range(n_in, n_all)), range(n_all))
        # without `out` the outputs are new arrays, whose memory nothing else holds
        self._pairs_new = written_pairs(through, range(n_in))
        self.run: Callable[[Sequence, Sequence | None], list[np.ndarray]] = _call_function(self)

    def __call__(self, *arrays, out: Sequence[np.ndarray | None] | None = None
                 ) -> list[np.ndarray]:
        return self.run(arrays, out)

    def native(self, inputs: Sequence[Array], outputs: Sequence[Array]) -> Call | None:
        """The call `run` makes in one part on arrays of the domain's static shape (the
        `inputs`, then the outputs not stored in place, at `outputs`), as data
        (`irflow.codegen.native`); None for a domain of symbolic or no elements."""
        shape = self.domain.shape
        if not all(isinstance(d, int) for d in shape):
            return None
        loops = [math.prod(shape[d] for d in group) for group in self.domain.groups]
        if not all(loops):
            return None
        return Call(self._fn, (0, loops[0], *loops, *inputs, *outputs),
                    fallible=self._fallible)

    def checked_call(self, arrays: Sequence, out: Sequence[np.ndarray | None] | None
                     ) -> list[np.ndarray]:
        """The call, every check made the general way: `run`'s path for what its
        fast path does not take (other shapes, non-contiguous, read-only or empty
        arrays), which raises the errors."""
        arrays = self._checked_inputs(arrays)
        shape = self._shape(arrays)
        outs = self._outputs(shape, out)
        for k in self._through.values():
            if not arrays[k].flags.writeable or arrays[k].shape != shape:
                raise ShapeError(f"kernel input {k}, which an output is stored in place "
                                 f"of, must be writable and of shape {list(shape)}")
        sizes = [math.prod(shape[d] for d in group) for group in self.domain.groups]
        operands = (*arrays, *outs)
        pointers = [address(a) for a in operands]
        j = overlapping(self._pairs if out is not None else self._pairs_new, operands,
                        pointers)
        if j is not None:
            raise ShapeError(f"output buffer {j - len(arrays)} overlaps an input or another "
                             "output" if j >= len(arrays) else
                             f"kernel input {j}, which an output is stored in place of, "
                             "overlaps another operand")
        if all(sizes) and call_rows(self._fn, sizes[0], math.prod(sizes), [*sizes, *pointers],
                                    operands, fallible=self._fallible):
            raise division_by_zero()
        if not self._through:
            return outs
        own = iter(outs)
        return [arrays[self._through[j]] if j in self._through else next(own)
                for j in range(len(self.spec.outputs))]

    def _checked_inputs(self, arrays) -> list[np.ndarray]:
        if len(arrays) != len(self._inputs):
            raise ShapeError(f"the kernel takes {len(self._inputs)} arrays, got "
                             f"{len(arrays)}")
        checked = []
        for k, (a, (dtype, rank)) in enumerate(zip(arrays, self._inputs)):
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != rank:
                got = (f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray)
                       else type(a).__name__)
                raise ShapeError(f"kernel input {k} must be a {dtype} array of rank {rank}, "
                                 f"got {got}")
            checked.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        return checked

    def _shape(self, arrays) -> tuple[int, ...]:
        """The domain's shape, each dim's size read from one input; raises
        `ShapeError` unless every input's axes have the sizes the domain gives them."""
        shape = tuple(1 if src is None else arrays[src[0]].shape[src[1]]
                      for src in self.domain.sources)
        for k, axis, d in self._expect:
            if arrays[k].shape[axis] != (1 if d is None else shape[d]):
                raise ShapeError(f"kernel input {k} has shape {list(arrays[k].shape)}, which "
                                 f"does not broadcast to {list(shape)} as compiled "
                                 f"(axis {axis} should be {1 if d is None else shape[d]})")
        return shape

    def _outputs(self, shape, out) -> list[np.ndarray]:
        if out is None:
            return [np.empty(shape, dtype) for dtype in self._out_dtypes]
        if len(out) != len(self._out_dtypes):
            raise ShapeError(f"the kernel writes {len(self._out_dtypes)} outputs, got "
                             f"{len(out)} buffers")
        outs = []
        for j, (o, dtype) in enumerate(zip(out, self._out_dtypes)):
            if o is None:
                o = np.empty(shape, dtype)
            elif not (isinstance(o, np.ndarray) and o.dtype == dtype and o.shape == shape
                      and o.flags.c_contiguous and o.flags.writeable):
                raise ShapeError(f"output buffer {j} must be a writable C-contiguous {dtype} "
                                 f"array of shape {list(shape)}")
            outs.append(o)
        return outs


# ---------------------------------------------------------------- the generated call

def _call_function(kernel: Kernel) -> Callable[[Sequence, Sequence | None], list[np.ndarray]]:
    """``run(arrays, out)``: `kernel`'s call generated for its spec and domain
    (`irflow.codegen.llvm.calling`), any call it does not take handed to
    `Kernel.checked_call`. For ``(m + b) * h`` on f32[64,256], f32[256], f32[64,256]::

        def call(arrays, out):
            ... (the inputs checked: `calling`'s example)
            if out is None:
                o0 = empty((64, 256), u0)
            else:
                ... (each given buffer: None, or of its dtype and shape)
            try:
                p0 = addressof(view(a0))
                ...
            except (TypeError, ValueError):  # read-only, not C-contiguous, or empty
                return general(arrays, out)
            if out is not None and (p0 < p3 + 65536 and p3 < p0 + 65536 or ...):
                return general(arrays, out)
            fn(0, 64, 64, 256, p0, p1, p2, p3)
            return [o0]
    """
    spec, domain = kernel.spec, kernel.domain
    n_in = len(spec.inputs)
    values = {"fn": kernel._fn, "general": kernel.checked_call, "ndarray": np.ndarray,
              "empty": np.empty, "addressof": ctypes.addressof, "view": ctypes.c_char.from_buffer,
              "call_rows": call_rows, "division_by_zero": division_by_zero}
    values.update((f"t{k}", np.dtype(d)) for k, d in enumerate(kernel._in_dtypes))
    values.update((f"u{j}", np.dtype(d)) for j, d in enumerate(kernel._out_dtypes))
    body, ins, dims, sizes = input_lines(domain.inputs, domain.sources, kernel._expect)
    body += refuse([f"{ins[k]}.shape != {tuple_of(sizes)}" for k in kernel._through.values()
                    if dims[k] != sizes])  # stored over: of the domain's shape
    outs = [f"o{j}" for j in range(len(kernel._out_dtypes))]
    body += _output_lines(outs, tuple_of(sizes))
    pointers = [f"p{i}" for i in range(len(ins) + len(outs))]
    body += addresses(pointers, ins + outs)
    itemsizes = [np.dtype(d).itemsize for d in (*kernel._in_dtypes, *kernel._out_dtypes)]
    nbytes = [product([*shape, size]) for shape, size in
              zip([*dims, *[sizes] * len(outs)], itemsizes)]
    for when, pairs in (("out is None", kernel._pairs_new), ("out is not None", kernel._pairs)):
        if pairs:  # the call's own new outputs overlap nothing
            body += refuse([f"{when} and ({overlaps(pairs, pointers, nbytes)})"])
    loops = [product([sizes[d] for d in group]) for group in domain.groups]
    body += call_lines(loops[0], loops, pointers, ins + outs, product(loops),
                       kernel._fallible, "raise division_by_zero()")
    own = iter(outs)
    body.append("return [" + ", ".join(ins[kernel._through[j]] if j in kernel._through
                                       else next(own) for j in range(len(spec.outputs))) + "]")
    return make(values, body, f"<irflow kernel call {n_in}:{len(outs)}>")


def _output_lines(outs: list[str], shape: str) -> list[str]:
    """The lines of `_call_function` that make the outputs or check given buffers
    (None, or of the output's dtype and `shape`)."""
    if not outs:  # every output is stored in place
        return refuse(["out is not None and len(out)"])
    body = ["if out is None:"] + [f"    {o} = empty({shape}, u{j})" for j, o in enumerate(outs)]
    body += ["else:", f"    if len(out) != {len(outs)}:", f"        {GENERAL}",
             f"    {', '.join(outs)}, = out"]
    for j, o in enumerate(outs):
        body += [f"    if {o} is None:", f"        {o} = empty({shape}, u{j})",
                 f"    elif type({o}) is not ndarray or {o}.dtype is not u{j} or "
                 f"{o}.shape != {shape}:", f"        {GENERAL}"]
    return body
