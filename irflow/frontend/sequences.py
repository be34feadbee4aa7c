"""Sequences whose length only the run knows, as converted code iterates them.

``for o in outs`` over a list grown in a tensor-dependent loop, ``for row in x``
over a tensor with a symbolic first dim, ``reversed(range(n))`` with a traced `n`,
``zip(outs, weights)`` or ``enumerate(outs)``: each has a length that is a tensor
and an item at a traced index, which is all a loop over an index needs. A
`RunSequence` is that pair; `run_sequence` finds one behind a value, and the
wrappers compose them (``enumerate(zip(reversed(outs), x))``). Python iterables of
static length stay Python iterables: only a run-time length makes a sequence here
(a `Range` with Python bounds is the `range` it stands for).
"""
from __future__ import annotations

import numbers

from ..dispatch import user_location
from ..errors import ConversionError
from ..ir.types import Dim, dim_sub, dim_terms
from ..tensor.tensor import Tensor
from .stand_ins import PythonScalar
from .tensor_array import GROWN_LISTS, TensorArray, TupleArray
from .tracer import is_traced


class RunSequence:
    """A sequence of `length()` items (an i64 scalar tensor or an int); `item(i)` is
    the one at index `i`, a traced i64 scalar in ``range(length())``."""

    def length(self):
        raise NotImplementedError

    def item(self, i):
        raise NotImplementedError

    def __iter__(self):
        """Python iteration (a list comprehension with a tuple target, a generator
        expression consumed by ``sum()``, unpacking, ``list()``) of a sequence of
        Python length, as ``zip(x, y)`` of tensors of static first dims is; with a
        run-time length, converted code loops over it only in a ``for`` statement or
        a list comprehension."""
        n = self.length()
        if isinstance(n, int):
            return (self.item(i) for i in range(n))
        raise ConversionError("iterating a range, enumerate, zip or reversed whose length "
                              "is known only when the program runs outside a for loop or a "
                              "list comprehension (in a generator expression, unpacking, "
                              "list()): write a for loop, or a list comprehension",
                              user_location())


def length_of(x):
    """``len(x)`` in converted code: for a traced tensor with a symbolic first dim or a
    grown list, an i64 scalar computed when the program runs."""
    if isinstance(x, GROWN_LISTS):
        return PythonScalar.of(x.length())
    if is_traced(x):
        shape = x._ir.type.shape
        if not shape:
            raise ConversionError("len() of a 0-d tensor", user_location())
        if isinstance(shape[0], int):
            return shape[0]
        from ..dispatch import apply
        return PythonScalar.of(apply("numel", (x,), {"axis": (0,)}))
    return len(x)


class Rows(RunSequence):
    """The rows ``x[i]`` of a traced tensor."""

    def __init__(self, x: Tensor):
        self.x = x

    def length(self):
        return length_of(self.x)

    def item(self, i):
        from ..tensor.manipulation import getitem
        return getitem(self.x, i)


class Items(RunSequence):
    """The elements of a list a tensor-dependent loop grew."""

    def __init__(self, array: TensorArray | TupleArray):
        self.array = array

    def length(self):
        return self.array.length()

    def item(self, i):
        return self.array[i]


class Range(RunSequence):
    """``range(start, stop, step)`` whose bounds may be traced tensors (a loop over it
    runs while the index is short of `stop`; its length needs a Python int step)."""

    def __init__(self, *args):
        self.start, self.stop, self.step = (0, args[0], 1) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) > 2 else 1)

    def length(self):
        step = self.step
        if is_traced(step):
            raise ConversionError("reversed(), zip() or enumerate() of a range take a "
                                  "Python int step, got a tensor", user_location())
        if self.start == 0 and step == 1 and self.trips() is not None:
            return self.stop  # a size: range(x.shape[1])
        span = self.stop - self.start if step > 0 else self.start - self.stop
        count = (span + abs(step) - 1) // abs(step)
        return elementwise_extreme(count, 0, "maximum") if is_traced(count) else max(count, 0)

    def trips(self) -> Dim | None:
        """The length as a dim where the bounds are polynomials of the program's sizes
        and the length cannot be negative (``range(x.shape[1])``), else None."""
        if isinstance(self.step, bool) or self.step not in (1, -1):
            return None
        start, stop = (_dim_of(b) for b in (self.start, self.stop))
        if start is None or stop is None:
            return None
        count = dim_sub(stop, start) if self.step == 1 else dim_sub(start, stop)
        return count if _nonnegative(count) else None

    def item(self, i):
        return self.start + i * self.step


class Reversed(RunSequence):
    def __init__(self, inner: RunSequence):
        self.inner = inner

    def length(self):
        return self.inner.length()

    def item(self, i):
        return self.inner.item(self.inner.length() - 1 - i)


class Enumerated(RunSequence):
    def __init__(self, inner: RunSequence, start):
        self.inner, self.start = inner, start

    def length(self):
        return self.inner.length()

    def item(self, i):
        return i + self.start, self.inner.item(i)


class Zipped(RunSequence):
    """``zip(a, b, ...)``: as long as the shortest."""

    def __init__(self, parts: list[RunSequence]):
        self.parts = parts

    def length(self):
        out = self.parts[0].length()
        for part in self.parts[1:]:
            n = part.length()
            out = elementwise_extreme(out, n, "minimum") if is_traced(out) or is_traced(n) \
                else min(out, n)
        return out

    def item(self, i):
        return tuple(part.item(i) for part in self.parts)


class Fixed(RunSequence):
    """A Python list or tuple zipped with a run-time sequence: its numbers or its
    tensors (of one type) stacked, read at the traced index. Numbers stay Python
    numbers: stacked as float64 (int64 if all are ints), each read as a stand-in that
    promotes as the number would (``row * 0.1`` of a float64 row multiplies by 0.1, not
    by 0.1 rounded to float32)."""

    def __init__(self, values):
        from ..tensor.creation import to_tensor
        from ..tensor.manipulation import stack
        values = list(values)
        self.n = len(values)
        self.numbers = False
        if values and all(isinstance(v, Tensor) for v in values):
            self.table = stack(values)
        elif values and all(isinstance(v, numbers.Number) and not isinstance(v, bool)
                            for v in values):
            integral = all(isinstance(v, numbers.Integral) for v in values)
            self.table = to_tensor(values, "int64" if integral else "float64")
            self.numbers = True
        else:
            raise ConversionError("zip() of a sequence whose length is known only when the "
                                  "program runs takes tensors, numbers, or lists of tensors "
                                  "of one type or of numbers", user_location())

    def length(self):
        return self.n

    def item(self, i):
        from ..tensor.manipulation import getitem
        item = getitem(self.table, i)
        return PythonScalar.of(item) if self.numbers else item


def run_sequence(x) -> RunSequence | None:
    """The run-time sequence behind `x`, or None for a Python iterable."""
    if isinstance(x, RunSequence):
        return x
    if isinstance(x, GROWN_LISTS):
        return Items(x)
    if is_traced(x):
        return Rows(x)
    return None


def _dim_of(x) -> Dim | None:
    from ..tensor.convert import traced_dim
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    return traced_dim(x) if is_traced(x) else None


def _nonnegative(d: Dim) -> bool:
    return d >= 0 if isinstance(d, int) else all(coef >= 0 for coef, _ in dim_terms(d))


def elementwise_extreme(a, b, which: str):
    """``maximum`` or ``minimum`` (`which`) of `a` and `b`, one of them a tensor."""
    from ..tensor import math
    from ..tensor.convert import as_tensor
    like = a if isinstance(a, Tensor) else b
    return getattr(math, which)(as_tensor(a, like=like), as_tensor(b, like=like))
