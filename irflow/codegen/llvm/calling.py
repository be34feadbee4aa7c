"""The source of generated kernel calls: one Python function per compiled kernel
(`irflow.codegen.llvm.kernel.Kernel`) and per fused kernel variant
(`irflow.codegen.llvm.fused.FusedKernel`), made by the executor's `generated`.

A call from a plan runs once per op per call of the program, and the code it calls
often runs in a few microseconds, so the checks around it are written for the
kernel's arity, dtypes and shapes: every check one comparison (an array of static
shape one tuple comparison), sizes and byte counts that are static written in as
numbers, no loops, lists or helper calls. A generated call takes only the common
case: ndarrays of the exact dtypes and of the IR's sizes, C-contiguous, writable and
not empty, whose memories do not overlap where they must not. Every other call goes
to its kernel's general path (``general(arrays, out)``), which takes any valid call,
computes the same thing and raises the errors, so a generated call accepts nothing
that path refuses. The helpers here write the lines; each caller names its own
values (``ndarray``, ``empty``, ``addressof``, ``view``, ``fn``, ``call_rows``,
``general``...) as the generated function's closure. Every call starts by checking
its inputs, for three arrays of static shapes (``input_lines``)::

    def call(arrays, out):
        if len(arrays) != 3:
            return general(arrays, out)
        a0, a1, a2, = arrays
        if (type(a0) is not ndarray or a0.dtype is not t0
            or ...):
            return general(arrays, out)
        if (a0.shape != (64, 256)
            or a1.shape != (256,)
            or a2.shape != (64, 256)):
            return general(arrays, out)
        ... (the outputs, the addresses, the call: each kernel's own)
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from ..executor import generated
from ..threads import least_split

GENERAL = "return general(arrays, out)"


def make(values: dict, body: list[str], name: str) -> Callable:
    """``call(arrays, out)`` of `body`, whose free names are the keys of `values`."""
    return generated(list(values), "call(arrays, out)", body, name)(*values.values())


def input_lines(shapes: Sequence[tuple], sources: Sequence[tuple[int, int] | None],
                expect: Sequence[tuple[int, int, int | None]]
                ) -> tuple[list[str], list[str], list[list], list]:
    """The lines unpacking and checking the input arrays ``a0, a1...`` (``t0, t1...``
    their dtypes, `shapes` their IR shapes) of a kernel over a domain whose dim d
    has the size of input ``sources[d] = (k, axis)`` (None: 1), where input k's axis
    must have the size of domain dim d or, for d None, 1, for each ``(k, axis, d)``
    of `expect`. Returns (the lines, the inputs' names, per input and axis its
    size, the domain's sizes: ints or the names read)."""
    ins = [f"a{k}" for k in range(len(shapes))]
    body = [f"if len(arrays) != {len(ins)}:", f"    {GENERAL}"]
    if ins:
        body.append(f"{', '.join(ins)}, = arrays")
    dims, ranks, unpack, checks = read_shapes(ins, shapes)
    body += refuse([f"type({a}) is not ndarray or {a}.dtype is not t{k}"
                    for k, a in enumerate(ins)] + ranks) + unpack
    sizes = [1 if src is None else dims[src[0]][src[1]] for src in sources]
    for k, axis, d in expect:  # the sizes broadcast as compiled
        if dims[k][axis] != (1 if d is None else sizes[d]):
            checks.append(f"{dims[k][axis]} != {1 if d is None else sizes[d]}")
    return body + refuse(checks), ins, dims, sizes


def read_shapes(arrays: Sequence[str], shapes: Sequence[tuple]
                ) -> tuple[list[list], list[str], list[str], list[str]]:
    """For the ndarrays named `arrays`, of IR shapes `shapes`: (per array, per axis,
    its size: the static int, or the name it is read into; the conditions under
    which an array to unpack has another rank; the lines unpacking those, after
    that; the conditions under which the sizes are not the IR's). An array of static
    shape is one comparison; one with symbols is unpacked, its static sizes
    compared."""
    dims, ranks, unpack, checks = [], [], [], []
    for a, shape in zip(arrays, shapes):
        if all(isinstance(d, int) for d in shape):
            checks.append(f"{a}.shape != {tuple_of(shape)}")
            dims.append(list(shape))
            continue
        names = [f"{a}_{axis}" for axis in range(len(shape))]
        ranks.append(f"{a}.ndim != {len(shape)}")
        unpack.append(f"{', '.join(names)}, = {a}.shape")
        checks += [f"{n} != {d}" for n, d in zip(names, shape) if isinstance(d, int)]
        dims.append([d if isinstance(d, int) else n for n, d in zip(names, shape)])
    return dims, ranks, unpack, checks


def refuse(checks: Sequence[str]) -> list[str]:
    """The lines handing the call to the general path when any of `checks` holds."""
    if not checks:
        return []
    return ["if (" + "\n        or ".join(checks) + "):", f"    {GENERAL}"]


def addresses(pointers: Sequence[str], arrays: Sequence[str],
              same: dict[int, int] | None = None) -> list[str]:
    """The lines taking the data addresses of `arrays` into `pointers` through
    ctypes' view of each buffer (0.2 µs an array, where ``a.ctypes.data`` costs
    0.8), which exists only for a writable, C-contiguous, non-empty array: any other
    goes to the general path. `same` maps an array's number to an earlier one's that
    may be the same object (a loop's carried value, both the product's operand and
    the body's): then its view is taken only when it is not."""
    same = same or {}
    lines = []
    for i, (p, a) in enumerate(zip(pointers, arrays)):
        view = f"addressof(view({a}))"
        if i in same:
            view = f"{pointers[same[i]]} if {a} is {arrays[same[i]]} else {view}"
        lines.append(f"    {p} = {view}")
    return (["try:"] + lines
            + ["except (TypeError, ValueError):  # read-only, not C-contiguous, or empty",
               f"    {GENERAL}"])


def overlaps(pairs: Sequence[tuple[int, int]], pointers: Sequence[str],
             nbytes: Sequence) -> str:
    """The condition that the memories of a pair of `pairs` (numbers into `pointers`
    and `nbytes`, of non-empty C-contiguous arrays) overlap, as
    `irflow.codegen.llvm.kernel.overlapping` decides it."""
    return " or ".join(f"{pointers[i]} < {pointers[w]} + {nbytes[w]} and "
                       f"{pointers[w]} < {pointers[i]} + {nbytes[i]}" for w, i in pairs)


def call_lines(rows, sizes: Sequence, pointers: Sequence[str], arrays: Sequence[str],
               elements, fallible: bool, failed: str, scratch=None) -> list[str]:
    """The lines calling the code ``fn`` over `rows` (the range of its outer loop,
    which `call_rows` may split) with the loop `sizes` it takes (ints or
    expressions) and the data at `pointers` (of `arrays`), in a domain of `elements`
    elements: directly when it cannot split (`least_split`) and cannot fail, else
    through ``call_rows``, after which a failure runs `failed`. `scratch`: the bytes
    of scratch the code takes (at least 8), or None."""
    args = ", ".join(str(x) for x in (*sizes, *pointers))
    through_rows = (f"call_rows(fn, {rows}, {elements}, ({args},), ({', '.join(arrays)},), "
                    f"scratch={scratch}, fallible={fallible})")
    if fallible:
        return [f"if {through_rows}:", f"    {failed}"]
    direct = [f"fn(0, {rows}, {args})"]
    if scratch is not None:  # held until the call returns
        direct = [f"scratch = empty({scratch}, uint8)",
                  f"fn(0, {rows}, {args}, addressof(view(scratch)))"]
    if isinstance(elements, int):
        return direct if elements < least_split() else [through_rows]
    return ([f"if {elements} < {least_split()}:"] + [f"    {line}" for line in direct]
            + ["else:", f"    {through_rows}"])


def product(factors: Sequence):
    """The product of `factors` (ints and expressions): an int when all are ints,
    else an expression with the ints folded into one factor."""
    number = math.prod(f for f in factors if isinstance(f, int))
    names = [f for f in factors if not isinstance(f, int)]
    if not names or number == 0:
        return number
    return " * ".join(names + ([str(number)] if number != 1 else []))


def tuple_of(items: Sequence) -> str:
    """The source of a tuple of `items` (ints and expressions)."""
    items = [str(i) for i in items]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
