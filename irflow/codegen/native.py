"""A plan step's calls of compiled code, as data: what lets a run of steps be one
native call.

A step of the LLVM backend is a Python function that checks its arrays, takes their
addresses and calls compiled code through ctypes. Each costs a few microseconds
warm, and several times that after other work has evicted the Python code and data
it touches: a training step's nine steps cost about 190 µs around 945 µs of
kernels when other programs ran in between. Where the executor knows a step's
arrays (its operands' registers, its results' buffers in the arena) and the
lowering knows which code the step calls with which sizes, the calls of several
steps in a row can be made by one native function instead (``Lowering.sequence``).

A lowered kernel or evaluator may describe itself by a ``native`` attribute: the
tuple of `Call` and `Check` every call of it with its results given buffers makes,
the arrays numbered as the step's (`Array`: its operands, then its results, then
the `Temporary` arrays it declares in the tuple, memory the run provides).
Nothing else is left to Python in such a step: it allocates nothing, splits
nothing across threads and raises only where a `Call` is fallible or a `Check`
fails, in which case the step runs again as Python, which raises the error. The
attribute may also be a function making that tuple (or None), which the executor
calls only for a step that would join a run with steps described as they are, so
nothing is made for the others.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Array:
    """The data address of array `index`: of a step, its operands then its results;
    of a run of steps (`Lowering.sequence`), its arrays in the run's order."""

    index: int


@dataclass(frozen=True)
class Call:
    """``function(*args)``, then a scratch pointer if `scratch` is not None (the
    bytes it needs, which no other call of the run uses meanwhile), then, if
    `fallible`, the pointer of a status byte it sets nonzero when it fails. Each of
    `args` is an int (a 64-bit integer: a size, a row range's bound, or a C int,
    passed in the same register), a float (a float32) or an `Array`'s address.
    `function` is the ctypes function of the code (holding the code)."""

    function: Callable
    args: tuple[int | Array, ...]
    scratch: int | None = None
    fallible: bool = False


@dataclass(frozen=True)
class Check:
    """Fails when the bool scalar at `array` is false (an ``assert``)."""

    array: Array


@dataclass(frozen=True)
class Temporary:
    """Memory of `nbytes` bytes a step's calls share (a fused op's anchor product,
    which its body then reads): the step's next array after its results."""

    nbytes: int
