"""A run of plan steps as one native call (`irflow.codegen.native`).

The executor hands `compile_sequence` the calls of consecutive steps (`Call`,
`Check`), their arrays numbered in the run's order, the types of those arrays and
the sizes of the temporaries the run provides.
It generates one function that makes every call in order, the sizes written in
as constants::

    i64 kernel(ptr functions, ptr arrays, ptr scratch)

`functions` holds the called code's addresses and `arrays` the arrays' data
addresses, so the function's text holds no address: it is compiled and cached
like any kernel (`Compiler`), and equal runs of different programs share it. It
returns the number of steps it completed: all of them, or the step whose fallible
call reported a failure or whose check failed, which the executor then runs as
Python (so the error is raised as the step raises it).

The returned Python function (`NativeRun`) takes the run's arrays, checks what the
plan has not made itself (the arrays it does not own: the function's arguments,
constants, what other steps allocated) for the dtype, shape and C-contiguity the
calls were generated for, and makes the one ctypes call. It runs nothing and
returns 0 (every step to Python) on a thread that splits kernels
(``irflow.set_num_threads``; the steps split their loops) or whose stack cannot
hold the GEMM's panels (`irflow.codegen.llvm.stack`).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from llvmlite import ir

from ...ir.types import TensorType
from ..native import Array, Call, Check
from ..threads import get_num_threads
from .compiler import Compiler
from .gemm import F32, I64, PTR, const
from .kernel import FUNCTION_NAME, address
from .stack import stack

I8 = ir.IntType(8)
ALIGN = 64  # bytes: each temporary, and the scratch, starts on a cache line


@dataclass(frozen=True)
class Float32:
    """A float argument of a call, as a `SequenceSpec` holds it: its own type, so that
    a spec passing ``1.0`` never equals one passing ``1`` (an integer register)."""

    value: float


# A step's calls in a `SequenceSpec`: (the function's number, its arguments: ints,
# `Float32` and `Array`, takes scratch, fallible) for a `Call`, an array's number
# for a `Check`.
SpecCall = tuple[int, tuple, bool, bool] | int


@dataclass(frozen=True)
class SequenceSpec:
    """The calls of a run of steps (plain data, the compiler's key): per step, its
    calls (`SpecCall`); `functions` distinct functions are called."""

    steps: tuple[tuple[SpecCall, ...], ...]
    functions: int

    def llvm_ir(self, fma: bool) -> str:
        module = ir.Module(name="sequence")
        fn = ir.Function(module, ir.FunctionType(I64, [PTR, PTR, PTR]), FUNCTION_NAME)
        functions, arrays, scratch = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        status = b.alloca(I8)
        scratch_arg = b.ptrtoint(scratch, I64)
        status_arg = b.ptrtoint(status, I64)

        def load(table, index: int, kind):
            return b.load(b.gep(table, [const(index)], source_etype=kind), typ=kind)

        def failed_at(step: int, condition) -> None:
            with b.if_then(condition, likely=False):
                b.ret(const(step))

        for number, calls in enumerate(self.steps):
            for call in calls:
                if isinstance(call, int):  # a check: the bool must be true
                    flag = b.load(b.inttoptr(load(arrays, call, I64), PTR), typ=I8)
                    failed_at(number, b.icmp_unsigned("==", flag, ir.Constant(I8, 0)))
                    continue
                index, args, takes_scratch, fallible = call
                values = [load(arrays, a.index, I64) if isinstance(a, Array) else
                          ir.Constant(F32, a.value) if isinstance(a, Float32) else const(a)
                          for a in args]
                values += [scratch_arg] * takes_scratch + [status_arg] * fallible
                if fallible:
                    b.store(ir.Constant(I8, 0), status)
                # integers and addresses as 64-bit integers, as ctypes passes them
                # (the registers of the code's sizes, pointers and C ints)
                signature = ir.FunctionType(ir.VoidType(), [v.type for v in values])
                b.call(load(functions, index, signature.as_pointer()), values)
                if fallible:
                    failed = b.load(status, typ=I8)
                    failed_at(number, b.icmp_unsigned("!=", failed, ir.Constant(I8, 0)))
        b.ret(const(len(self.steps)))
        return str(module)


class NativeRun:
    """``run(arrays) -> steps completed`` (see the module docstring)."""

    __slots__ = ("_fn", "_functions", "_checks", "_pointers", "_offsets", "_memory", "_held")

    def __init__(self, fn, functions: Sequence, types: Sequence[TensorType],
                 owned: Sequence[bool], temporaries: Sequence[int], scratch: int):
        self._fn = fn
        self._held = tuple(functions)  # each holds its code
        addresses = [ctypes.cast(f, ctypes.c_void_p).value for f in functions]
        self._functions = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        self._pointers = ctypes.c_void_p * (len(types) + len(temporaries))
        # (array number, dtype, shape) of the arrays the plan does not make itself
        self._checks = tuple((i, t.dtype.np, tuple(t.shape))
                             for i, (t, own) in enumerate(zip(types, owned)) if not own)
        # the temporaries, then the scratch, in one allocation a call, each on a
        # cache line of its own
        offsets = [0]
        for nbytes in temporaries:
            offsets.append(offsets[-1] + -(-nbytes // ALIGN) * ALIGN)
        self._offsets = tuple(offsets)
        self._memory = offsets[-1] + max(scratch, 8) + ALIGN

    def __call__(self, arrays) -> int:
        if get_num_threads() != 1 or not stack.roomy:
            return 0
        for i, dtype, shape in self._checks:
            a = arrays[i]
            if (type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape
                    or not a.flags.c_contiguous):
                return 0
        memory = np.empty(self._memory, np.uint8)
        base = address(memory)
        base += -base % ALIGN
        *temporaries, scratch = [base + offset for offset in self._offsets]
        return self._fn(self._functions,
                        self._pointers(*map(address, arrays), *temporaries), scratch)


def compile_sequence(steps: Sequence[Sequence[Call | Check]], types: Sequence[TensorType],
                     owned: Sequence[bool], temporaries: Sequence[int],
                     compiler: Compiler) -> NativeRun:
    """The native run of `steps` (per step its calls, their `Array` numbers those of
    `types`, the types of the arrays a run is given, then of the `temporaries`, the
    bytes of memory the run provides; `owned`: which of the given arrays the plan
    made, its arena's or result buffers, whose types need no check)."""
    functions: list = []
    number: dict[int, int] = {}  # id of a ctypes function -> its number
    spec_steps, scratch = [], 0
    for calls in steps:
        spec_calls: list[SpecCall] = []
        for call in calls:
            if isinstance(call, Check):
                spec_calls.append(call.array.index)
                continue
            if id(call.function) not in number:
                number[id(call.function)] = len(functions)
                functions.append(call.function)
            args = tuple(Float32(a) if isinstance(a, float) else a for a in call.args)
            spec_calls.append((number[id(call.function)], args, call.scratch is not None,
                               call.fallible))
            scratch = max(scratch, call.scratch or 0)
        spec_steps.append(tuple(spec_calls))
    spec = SequenceSpec(tuple(spec_steps), len(functions))
    code = compiler.code(spec)
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)(code.address)
    fn.code = code
    return NativeRun(fn, functions, types, owned, temporaries, scratch)
