"""The NumPy evaluator of `fused` ops, which the interpreter and the executor run.

The body's ops run on arrays, each op's own kernel with NumPy broadcasting spreading
the operands over the domain, so the results are bit for bit those of the ops
unfused. What makes it more than a loop over the ops:

- **Generated code.** The body becomes one Python function, one line per op, with
  the kernels, attributes and constants bound as closure values, so no per-op
  dispatch remains. It is compiled once per body text.
- **Blocks that stay in cache.** A large domain is evaluated in blocks of about
  `BLOCK_ELEMENTS` elements along its first axis that nothing reduces, so each
  temporary is still in the L2 cache when the next op reads it: a chain of k ops
  goes through main memory once instead of k times, which is what fusion buys on
  NumPy (numexpr blocks for the same reason). Operands that vary along that axis
  are sliced (views); results are assembled into arrays of their full shape.
  Blocks split no reduction, so every reduction adds what it added whole.
- **In place.** An op whose operand dies at it and spans the result's shape and
  dtype writes into that operand's buffer, a ufunc with ``out=`` (``np.add(t, b,
  out=t)``), another op through its out kernel (`OpDef.out_kernel`, where its op
  may overwrite that operand: erf, relu, sigmoid...): only buffers the body made
  itself or a contraction's result, never an operand's.
- **The anchor** (a matmul or conv2d) runs by its kernel, on the first line of the
  generated code unless the body runs in blocks; an error in any op names that
  op's location.
- **Into given buffers** (`out_evaluator`, what the executor runs when the plan
  gives results arena memory). The last op of each such result's value computes
  into its buffer (a ufunc with ``out=``, another op by its out kernel; through a
  view with the size-1 axes the result drops); a value yielded twice, a reduction,
  an argument or a constant is computed as before and copied in, and blocks are
  written into the buffer's slices. A plain anchor with an out kernel computes into
  the buffer of a result of its type that the epilogue writes straight, when the
  values that buffer holds in turn (the anchor's result, then each op's written in
  place over it) are never read after the result is written (`anchor_result`,
  `_Holder`): a matmul, bias and relu then run in one buffer.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import IrflowError
from ..ir.core import Operation, OpResult, Value
from ..ir.registry import lookup
from ..ir.symbols import CallOp
from ..ir.traits import Contraction, View
from ..ir.types import numel

if TYPE_CHECKING:
    from .fused import FusedLayout

# Elements of the domain per block: a few float arrays of this size fit in L2.
BLOCK_ELEMENTS = 1 << 16


def evaluator(op: Operation, lay: "FusedLayout"):
    """The `RegionOp.evaluator` of fused op `op`, whose layout is `lay`: usually the
    generated code itself, so a call is one Python frame."""
    types = [r.type for r in op.results]
    blocking = _blocking(lay)
    anchor = plain_anchor(op) if lay.anchored else None
    if blocking is None and (anchor is not None or not lay.anchored):
        return _generate(lay, types, anchor, fresh_anchor(anchor))
    body = body_evaluator(op, lay)
    if not lay.anchored:
        return body
    # the anchor's result first, whole; then the body, perhaps in blocks
    n = lay.n_anchor
    call = located_kernel(anchor) if anchor is not None else None

    def run(args, regions):
        args[:n] = [call(*args[:n])] if call is not None else regions[0](args[:n])
        return body(args, regions)
    return run


def out_evaluator(op: Operation, lay: "FusedLayout", into: tuple[bool, ...]):
    """The `RegionOp.out_evaluator` of fused op `op`: `evaluator`'s run, writing each
    result k with ``into[k]`` into the next buffer of its ``outs`` (see the module
    docstring, **Into given buffers**)."""
    types = [r.type for r in op.results]
    blocking = _blocking(lay)
    anchor = plain_anchor(op) if lay.anchored else None
    k = anchor_result(op, lay, into)
    if blocking is None and (anchor is not None or not lay.anchored):
        return _generate(lay, types, anchor, fresh_anchor(anchor), into, k)
    body = body_evaluator(op, lay, into, k)
    if not lay.anchored:
        return body
    n = lay.n_anchor
    if k is not None:  # the anchor computes into result k's buffer
        j = sum(into[:k])
        write = located_kernel(anchor, out=True)

        def run(args, regions, outs):
            write(*args[:n], out=outs[j])
            args[:n] = [outs[j]]
            return body(args, regions, outs)
        return run
    call = located_kernel(anchor) if anchor is not None else None

    def run(args, regions, outs):
        args[:n] = [call(*args[:n])] if call is not None else regions[0](args[:n])
        return body(args, regions, outs)
    return run


def anchor_result(op: Operation, lay: "FusedLayout", into: tuple[bool, ...]) -> int | None:
    """The result whose given buffer `out_evaluator` computes the anchor's result
    into, or None: one of the anchor's type whose value the epilogue's last op writes
    straight into its buffer, where no value in that buffer is read after it is
    written over (see `_Holder`); the anchor, one op, has an out kernel."""
    anchor = plain_anchor(op) if lay.anchored else None
    if anchor is None or lookup(anchor.name).out_kernel is None:
        return None
    types = [r.type for r in op.results]
    k = _Outs(lay, types, into).anchor_result(anchor)
    if k is None:
        return None
    try:
        _generate(lay, types, fresh_anchor=fresh_anchor(anchor), into=into, anchor_in=k)
    except _Clobbered:
        return None
    return k


def body_evaluator(op: Operation, lay: "FusedLayout", into: tuple[bool, ...] | None = None,
                   anchor_in: int | None = None):
    """``run(values, regions)`` of the body alone, on the values entering it (the
    anchor's result first, if there is an anchor), perhaps in blocks: what
    `evaluator` runs after the anchor, and what a backend that computed the anchor
    itself runs. With `into`, ``run(values, regions, outs)`` of `out_evaluator`, the
    anchor's result in result `anchor_in`'s buffer if given (`anchor_result`)."""
    types = [r.type for r in op.results]
    blocking = _blocking(lay)
    fresh = fresh_anchor(plain_anchor(op) if lay.anchored else None)
    return _generate(lay, types, fresh_anchor=fresh, into=into, anchor_in=anchor_in) \
        if blocking is None else _blocked(lay, types, blocking, fresh, into, anchor_in)


def fresh_anchor(anchor: Operation | None) -> bool:
    """Whether the anchor's result is a new array nobody else holds (a contraction's),
    which the epilogue may write into."""
    return anchor is not None and lookup(anchor.name).has(Contraction)


def plain_anchor(op: Operation) -> Operation | None:
    """The anchor region's op when it is one kernel on the region's arguments (else
    None: the region runs as a region)."""
    block = op.regions[0].blocks[0]
    ops = list(block.body_ops())
    inner = ops[0] if len(ops) == 1 else None
    if inner is None or inner.regions or inner.operands != block.args \
            or block.terminator.operands != (inner.result,):
        return None
    opdef = lookup(inner.name, inner.loc)
    if opdef.kernel is None or opdef.shape_attrs or opdef.has(CallOp):
        return None
    return inner


def located_kernel(inner: Operation, out: bool = False) -> Callable:
    """`inner`'s kernel (its out kernel if `out`) with its attributes, raising its
    errors at its location. Like a quiet kernel's, its ``__wrapped__`` (where the
    kernel has one) leaves floating-point warnings to a caller that silences them."""
    opdef = lookup(inner.name)
    kernel = opdef.out_kernel if out else opdef.kernel
    call = _located(kernel, inner.attrs, inner.loc)
    if hasattr(kernel, "__wrapped__"):
        call.__wrapped__ = _located(kernel.__wrapped__, inner.attrs, inner.loc)
    return call


def _located(kernel: Callable, attrs: dict, loc) -> Callable:
    def call(*arrays, **given):
        try:
            return kernel(*arrays, **given, **attrs)
        except IrflowError as e:
            raise e.with_loc(loc)
    return call


# ---------------------------------------------------------------- blocks

def _blocking(lay: "FusedLayout"):
    """(the axis to block along, (argument, its axis) for the arguments that vary
    along it, the axis of each yielded value along it or None), or None when
    blocks would not pay: the domain is small whatever its symbols are, every axis
    is reduced, or the body makes no more arrays along the axis than twice the
    results it yields along it (each array made in cache saves a pass over memory,
    each result copied out of the blocks costs one)."""
    size = numel(lay.domain)
    parallel = [a for a in range(len(lay.domain)) if a not in lay.axes]
    if (isinstance(size, int) and size < 2 * BLOCK_ELEMENTS) or not parallel:
        return None
    axis, rank = parallel[0], len(lay.domain)

    def along(v: Value) -> int | None:
        shape = lay.shapes[v]
        ax = axis - (rank - len(shape))
        return ax if ax >= 0 and shape[ax] != 1 else None

    sliced = tuple((i, along(a)) for i, a in enumerate(lay.body.args) if along(a) is not None)
    spans = tuple(along(v) for v in lay.body.terminator.operands)
    made = sum(along(inner.result) is not None for inner in lay.body.body_ops())
    if not sliced or made <= 2 * sum(ax is not None for ax in spans):
        return None
    return axis, sliced, spans


def _blocked(lay: "FusedLayout", result_types, blocking, fresh_anchor: bool,
             into: tuple[bool, ...] | None = None, anchor_in: int | None = None) -> Callable:
    """``run(args, regions)`` evaluating the body block by block when the domain is
    large, whole otherwise; with `into`, ``run(args, regions, outs)``, whose blocks
    are written into the slices of the given buffers (a block reads only its own
    slice of the anchor's result, so that result may be in one of them:
    `anchor_in`)."""
    whole = _generate(lay, result_types, fresh_anchor=fresh_anchor, into=into,
                      anchor_in=anchor_in)
    code = _generate(lay, fresh_anchor=fresh_anchor)
    finish = _finisher(lay, result_types)
    axis, sliced, spans = blocking
    first, first_axis = sliced[0]
    given = [k for k, i in enumerate(into or ()) if i]
    spanned = [lay.dropped_axes(v, t.shape) for v, t in
               zip(lay.body.terminator.operands, result_types)]

    def evaluate(args: list, regions, buffers) -> list:
        big = max(args[i].size for i, _ in sliced)
        n = args[first].shape[first_axis]
        step = BLOCK_ELEMENTS // max(big // max(n, 1), 1)
        if big < 2 * BLOCK_ELEMENTS or step == 0 or step >= n:
            return whole(args, regions, buffers) if into else whole(args, regions)
        # the given buffers, with the axes their results drop, as the blocks span them
        outs: list = [None] * len(spans)
        for k, buffer in zip(given, buffers):
            outs[k] = np.expand_dims(buffer, spanned[k]) if spanned[k] else buffer
        for lo in range(0, n, step):
            part = list(args)
            for i, ax in sliced:
                part[i] = args[i][(slice(None),) * ax + (slice(lo, lo + step),)]
            values = code(part, regions)
            for k, ax in enumerate(spans):
                if ax is None:  # the same in every block
                    if outs[k] is None or k not in given:
                        outs[k] = values[k]
                    elif lo == 0:
                        np.copyto(outs[k], values[k])
                    continue
                if outs[k] is None:
                    shape = list(values[k].shape)
                    shape[ax] = n
                    outs[k] = np.empty(shape, values[k].dtype)
                outs[k][(slice(None),) * ax + (slice(lo, lo + step),)] = values[k]
        results = finish(outs)
        for k, buffer in zip(given, buffers):
            results[k] = buffer
        return results

    if into:
        return evaluate
    return lambda args, regions: evaluate(args, regions, ())


def _finisher(lay: "FusedLayout", result_types) -> Callable[[list], list]:
    """What turns the yielded arrays into results (see `_finished`)."""
    steps = [(k, f) for k, f in enumerate(_finished(lay, result_types)) if f is not None]

    def finish(values: list) -> list:
        for k, step in steps:
            values[k] = step(values[k])
        return values
    return finish


def _finished(lay: "FusedLayout", result_types) -> list:
    """Per result, what makes it of its type from the yielded array, or None: the
    size-1 axes it drops squeezed away, or a 0-d result made an array (NumPy
    computes scalars)."""
    steps = []
    for v, t in zip(lay.body.terminator.operands, result_types):
        dropped = lay.dropped_axes(v, t.shape)
        if dropped:
            steps.append(lambda a, axes=dropped: np.squeeze(a, axis=axes))
        else:
            steps.append(np.asarray if not t.shape else None)
    return steps


# ---------------------------------------------------------------- the generated function

def _generate(lay: "FusedLayout", result_types=None, anchor: Operation | None = None,
              fresh_anchor: bool = False, into: tuple[bool, ...] | None = None,
              anchor_in: int | None = None):
    """``code(args, regions) -> list``: one line per body op, each calling the op's
    kernel (a `reduce`, its kind's kernel over the reduced axes, keeping them), in
    place where `_dying_operand` allows, and dropping the arrays whose last use it is
    (as the executor frees registers: the next array may reuse their memory while it
    is in cache). With `result_types` it returns the results
    (squeezed as `_finished` says), without them the yielded arrays. With `anchor`,
    `args` are the fused op's operands and the first line computes the anchor's
    result; else they are the body's arguments. `fresh_anchor`: the anchor's result
    (the first body argument) is an array the epilogue may write into.

    With `into` (and `result_types`), ``code(args, regions, outs)`` writes each
    result k with ``into[k]`` into the next buffer of `outs` (see `_Outs`); with
    `anchor_in`, the anchor's result is (with `anchor`: is computed into) result
    `anchor_in`'s buffer, and `_Clobbered` is raised if the epilogue would write
    over it while it is read (see `_Holder`)."""
    block = lay.body
    ops = list(block.body_ops())
    yielded = block.terminator.operands
    last_use = {v: i for i, inner in enumerate(ops) for v in inner.operands}
    last_use.update((v, len(ops)) for v in yielded)
    for inner in reversed(ops):
        # a view's kernel may return its operand's array (stop_gradient does): that
        # array lives as long as either name, or an op would be written over it while
        # the view is still to be read
        view = lookup(inner.name).trait(View)
        if view is not None:
            source = inner.operand(view.operand)
            last_use[source] = max(last_use[source], last_use.get(inner.result, -1))
    names = {arg: f"a{i}" for i, arg in enumerate(block.args)}
    arguments = list(names.values())
    params: list = []
    owned: set[Value] = {block.args[0]} if fresh_anchor else set()  # arrays no one else holds

    def param(value) -> str:
        params.append(value)
        return f"p{len(params) - 1}"

    def keywords(attrs: dict) -> list[str]:
        return [f"{k}={param(v)}" for k, v in attrs.items()]

    def unquiet(kernel) -> Callable:
        """A quiet kernel's own function: the body is quiet as a whole."""
        nonlocal silenced
        if hasattr(kernel, "__wrapped__"):
            kernel, silenced = kernel.__wrapped__, True
        return kernel

    lines, locs = [], []
    silenced = False
    outs = _Outs(lay, result_types, into)
    holder = None
    if anchor is not None:
        operands = [f"o{i}" for i in range(lay.n_anchor)]
        arguments = operands + arguments[1:]
        call = ", ".join(operands + keywords(anchor.attrs))
        opdef = lookup(anchor.name)
        if anchor_in is not None:
            lines.append(f"{param(unquiet(opdef.out_kernel))}({call}, "
                         f"out={outs.target[anchor_in]}); a0 = {outs.target[anchor_in]}")
        else:
            lines.append(f"a0 = {param(unquiet(opdef.kernel))}({call})")
        locs.append(anchor.loc)
    if anchor_in is not None:  # the buffer holds the anchor's result, then what it becomes
        holder = _Holder(block.args[0], outs.direct[anchor_in])
    for i, inner in enumerate(ops):
        out = inner.result
        if inner.name == "const":
            names[out] = param(np.asarray(inner.attrs["value"]))
            continue
        names[out] = f"v{i}"
        args = [names[v] for v in inner.operands]
        if inner in lay.reductions:
            kernel = unquiet(lookup(inner.attrs["kind"]).kernel)
            line = f"{names[out]} = {param(kernel)}({args[0]}, axis={param(lay.axes)}, " \
                   "keepdim=True)"
        else:
            dying = _dying_operand(inner, i, last_use, owned, lay)
            target = None if dying is None else names[dying]
            if out in outs.direct.values():  # a result's last op: into its buffer
                target = outs.target[next(k for k, v in outs.direct.items() if v is out)]
            if holder is not None and not holder.allows(inner, i, dying, last_use):
                raise _Clobbered
            line = _kernel_line(inner, args + keywords(inner.attrs), names, owned, target,
                                lay, lambda k: param(unquiet(k)))
        dying = [names[v] for v in dict.fromkeys(inner.operands)
                 if last_use[v] == i and not names[v].startswith("p")]
        lines.append(line + "".join(f"; del {n}" for n in dying))
        locs.append(inner.loc)
    if holder is not None and not holder.done:
        raise _Clobbered
    returned = [names[v] for v in yielded]
    copies = [f"{param(np.copyto)}({outs.target[k]}, {returned[k]})"
              for k in outs.buffer if k not in outs.direct]
    if copies:  # computed otherwise (a reduction, an argument, a value yielded twice)
        lines.append("; ".join(copies))
        locs.append(None)
    if result_types is not None:
        returned = [name if f is None else f"{param(f)}({name})"
                    for name, f in zip(returned, _finished(lay, result_types))]
        passed = [k for k, v in enumerate(yielded) if k not in outs.buffer and v not in owned]
        if passed:  # results a kernel may have passed an operand through: see `_own_memory`
            lines.insert(0, f"m_ = {param(_memory_of)}(({', '.join(arguments)},))")
            locs.insert(0, None)
            for k in passed:
                returned[k] = f"{param(_own_memory)}({returned[k]}, m_)"
    for k, buffer in outs.buffer.items():
        returned[k] = buffer
    error = param(IrflowError)
    unpacking = outs.unpacking(param)
    returning = "[" + ", ".join(returned) + "]"

    def made(quiet: bool) -> Callable:
        first = _FIRST_OP_LINE + quiet  # the errstate's `with` takes a line

        def located(e: IrflowError) -> IrflowError:
            return e.with_loc(_failing_loc(e.__traceback__, locs, first))
        tail = [located, np.errstate] if quiet else [located]
        make = _maker(tuple(arguments), len(params) + len(tail), tuple(lines), error,
                      f"p{len(params)}", returning, f"p{len(params) + 1}" if quiet else None,
                      unpacking)
        return make(*params, *tail)

    code = made(silenced)
    if silenced:  # as a quiet kernel's: for a caller that silences a whole plan once
        code.__wrapped__ = made(False)
    return code


def _owner(a: np.ndarray) -> np.ndarray:
    return a if a.base is None else a.base


def _memory_of(operands) -> frozenset[int]:
    """The ids of the arrays owning the operands' memory (held by the caller while the
    code runs, so the ids stay theirs)."""
    return frozenset(id(_owner(a)) for a in operands if isinstance(a, np.ndarray))


def _own_memory(result, operands_memory: frozenset[int]):
    """`result`, copied if it is memory of one of the operands (`_memory_of`): a fused
    op's results are memory of their own (the buffer planner gives its operands'
    memory to later values once the op has run), but a body that yields an argument,
    or passes one through a kernel that returns its operand (``stop_gradient``),
    would return that operand's array."""
    if isinstance(result, np.ndarray) and id(_owner(result)) in operands_memory:
        return result.copy()
    return result


class _Outs:
    """The given buffers of an out evaluator's code: `buffer[k]`, the name of result
    k's buffer; `target[k]`, the name of what the body writes (the buffer, or its
    view with the axes the result drops, `dropped[k]`); `direct[k]`, the yielded
    value whose last op writes straight into it (one yielded once, made by an
    elementwise op of the body; others are computed and copied in)."""

    def __init__(self, lay: "FusedLayout", result_types, into):
        self.types = result_types
        self.into = into
        self.buffer = {k: f"q{k}" for k, i in enumerate(into or ()) if i}
        yielded = lay.body.terminator.operands
        self.dropped = {k: lay.dropped_axes(yielded[k], result_types[k].shape)
                        for k in self.buffer}
        self.target = {k: f"w{k}" if self.dropped[k] else b for k, b in self.buffer.items()}
        self.direct = {}
        for k in self.buffer:
            v = yielded[k]
            inner = v.op if isinstance(v, OpResult) else None
            if (inner is not None and yielded.count(v) == 1 and inner.name != "const"
                    and inner not in lay.reductions
                    and (_is_ufunc(lookup(inner.name).kernel)
                         or lookup(inner.name).out_kernel is not None)):
                self.direct[k] = v

    def anchor_result(self, anchor: Operation) -> int | None:
        """A result whose buffer the anchor may compute into (of its type, written
        straight by the epilogue's last op), or None."""
        if lookup(anchor.name).out_kernel is None:
            return None
        t = anchor.result.type
        return next((k for k, v in self.direct.items() if self.types[k] == t
                     and not self.dropped[k]), None)

    def unpacking(self, param) -> str | None:
        """The code taking the buffers out of ``outs`` (and their views), or None."""
        if self.into is None:
            return None
        return "".join(f"{b}, " for b in self.buffer.values()) + "= outs" + "".join(
            f"; {self.target[k]} = {param(np.expand_dims)}({b}, {param(self.dropped[k])})"
            for k, b in self.buffer.items() if self.dropped[k])


def _is_ufunc(kernel) -> bool:
    return isinstance(getattr(kernel, "__wrapped__", kernel), np.ufunc)


class _Clobbered(Exception):
    """The epilogue would write over the anchor's result in a result's buffer while
    that result is still read."""


class _Holder:
    """The anchor's result computed into a result's buffer, followed through the
    epilogue: an op writing in place over the value the buffer holds holds it next,
    and the result's last op (`result`) may write into the buffer only if the value
    there is not read after it (read there, by an op that may write over it)."""

    def __init__(self, value: Value, result: Value):
        self.value, self.result, self.done = value, result, False

    def allows(self, inner: Operation, index: int, dying: Value | None, last_use) -> bool:
        held = self.value
        if inner.result is self.result:
            self.done = True
            if last_use.get(held, -1) != index:
                return last_use.get(held, -1) < index
            opdef = lookup(inner.name)
            return _is_ufunc(opdef.kernel) or all(
                opdef.overwrites(k) for k, v in enumerate(inner.operands) if v is held)
        if dying is held:
            self.value = inner.result
        return True


def _kernel_line(inner: Operation, call: list[str], names: dict, owned: set, target,
                 lay: "FusedLayout", bound: Callable) -> str:
    """The line computing body op `inner` from the arguments `call`: a ufunc writes
    into `target` (the name of a dying buffer the body owns or of a given buffer, or
    None) with ``out=``, another kernel with an out kernel through it (which returns
    nothing), else the kernel makes a new array. `bound(kernel)` names a kernel as
    the code's parameter."""
    opdef, out = lookup(inner.name), names[inner.result]
    kernel = opdef.kernel
    if _is_ufunc(kernel):
        if lay.shapes[inner.result]:
            owned.add(inner.result)
        if target is not None:
            call = call + [f"out={target}"]
    elif target is not None and opdef.out_kernel is not None:
        owned.add(inner.result)
        written = ", ".join(call + [f"out={target}"])
        return f"{bound(opdef.out_kernel)}({written}); {out} = {target}"
    return f"{out} = {bound(kernel)}({', '.join(call)})"


def _dying_operand(inner: Operation, index: int, last_use, owned, lay: "FusedLayout"):
    """An operand of `inner` whose buffer it may write its result into (one the body
    owns, dying here, of the result's shape and dtype, that its op may overwrite), or
    None."""
    shape, dtype = lay.shapes[inner.result], inner.result.type.dtype
    opdef = lookup(inner.name)
    for k, v in enumerate(inner.operands):
        if v in owned and last_use[v] == index and lay.shapes[v] == shape \
                and v.type.dtype is dtype and opdef.overwrites(k):
            return v
    return None


_SOURCE_NAME = "<irflow fused body>"
_FIRST_OP_LINE = 5  # after "def make", "def body", "try:" and the unpacking of `args`


@lru_cache(maxsize=1024)
def _maker(arguments: tuple[str, ...], n_params: int, lines: tuple[str, ...], error: str,
           located: str, returned: str, quiet: str | None,
           outs: str | None = None) -> Callable:
    """``make(*params) -> code(args, regions)``: `args` unpacked into `arguments`,
    then `lines` (which name the kernels, attributes and constants ``p0...``) under
    ``quiet(all="ignore")`` if `quiet` names NumPy's errstate; an `error` raised on
    a line is re-raised through `located`. With `outs` (the code unpacking the given
    buffers, on the line that unpacks `args`), ``code(args, regions, outs)``."""
    params = ", ".join(f"p{i}" for i in range(n_params))
    # the list is the body's own: emptied, each array lives until its last use
    unpack = "".join(f"{a}, " for a in arguments) + "= args; args.clear()" if arguments \
        else "pass"
    if outs is not None:
        unpack += "; " + outs
    opening = [f"with {quiet}(all='ignore'):"] if quiet else []
    indent = " " * (12 + 4 * len(opening))
    signature = "args, regions, outs" if outs is not None else "args, regions"
    source = (f"def make({params}):\n    def body({signature}):\n        try:\n"
              + "".join(f"            {line}\n" for line in opening)
              + "".join(f"{indent}{line}\n" for line in (unpack, *lines))
              + f"        except {error} as e:\n            raise {located}(e)\n"
              + f"        return {returned}\n    return body\n")
    namespace: dict = {}
    exec(compile(source, _SOURCE_NAME, "exec"), namespace)
    return namespace["make"]


def _failing_loc(tb, locs: list, first: int):
    """The location of the body op on whose generated line (the first op's is line
    `first`) the traceback `tb` ends."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _SOURCE_NAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    index = line - first if line is not None else -1
    return locs[index] if 0 <= index < len(locs) else None
