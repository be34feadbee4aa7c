"""Shape and indexing ops: `reshape`, `transpose`, `broadcast_to`, `unsqueeze`,
`squeeze`, `concat`, `stack`, `slice`, `set_slice`, `gather`, `scatter_add`,
`take_along_axis`, `put_along_axis`, `pad`, `arange` and `range`.

Attributes that depend on the operand's shape are resolved by canonicalization, so
the stored form is explicit: a reshape's ``-1`` and ``0`` become the dims they stand
for, negative axes become non-negative, and slice bounds become normalized
non-negative ones. Symbolic dims pass through as polynomials of symbols (see
`irflow.ir.types`): concat of sizes N and M gives N+M, padding S1 by 2 gives S1+2,
``x[:, 1:]`` of a symbolic axis S1 gives S1-1. A rule that needs a symbolic dim to
equal a static one raises `DimMismatch`.

Kernels return NumPy views where NumPy does (reshape, broadcast_to, slice, ...;
not transpose, which copies, see there), and those ops carry the `View` trait: kernels never write into their
inputs, so sharing memory is safe. The ops that copy have out kernels writing into a
given buffer; `set_slice`, `scatter_add` and `put_along_axis` may write over x (in
place), which then needs no copy.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..ir import dtypes
from ..ir.registry import REQUIRED
from ..ir.traits import View
from ..ir.types import (TensorType, check_same_shape, dim_add, dim_div, dim_sub, dim_terms,
                        mismatch, normalize_dim, numel, shape_str)
from ._rules import (BypassBroadcast, ReturnsOperand, SkipInnerOfChain, check_kind, defop,
                     norm_axes, norm_axis, same_dtype, unbroadcast)


# ---------------------------------------------------------------- helpers

def _int_tuple(value, what: str) -> tuple:
    """An int or a tuple of ints as a tuple of ints."""
    items = (value,) if isinstance(value, int) else value
    if not isinstance(items, tuple) or not all(_is_int(v) for v in items):
        raise ShapeError(f"{what} must be an int or a list of ints, got {value!r}")
    return items


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _shape_attr(value) -> tuple:
    """A `shape` attribute as a tuple of ints (-1 and 0 allowed, resolved by the
    caller) and canonical symbolic dims."""
    items = (value,) if _is_int(value) or isinstance(value, str) else value
    if not isinstance(items, tuple):
        raise ShapeError(f"shape must be a list of dims, got {value!r}")
    out = []
    for d in items:
        if isinstance(d, str):
            out.append(normalize_dim(d))
        elif _is_int(d) and d >= -1:
            out.append(d)
        else:
            raise ShapeError(f"shape {shape_str(items)} holds {d!r}; expected dims that are "
                             f"non-negative ints, -1 or symbol names")
    return tuple(out)


def _zeros(b, t: TensorType):
    """A zero tensor of type `t` (a broadcast scalar), for VJP rules."""
    return b.broadcast_to(b.constant(0, t.dtype), shape=t.shape)


def _along(axis: int, rank: int, index) -> tuple:
    """The index tuple that selects `index` along `axis` and everything elsewhere."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (rank - axis - 1)


# ---------------------------------------------------------------- reshape

def _reshape_canon(attrs, types):
    (x,) = types
    return {"shape": _resolve_reshape(_shape_attr(attrs["shape"]), x.shape)}


def _resolve_reshape(shape: tuple, in_shape: tuple) -> tuple:
    """Resolve Paddle's 0 (copy the input dim at that position) and -1 (whatever
    size makes the element counts agree).

    A resolved shape may hold a genuine 0 (an empty dim), which re-resolving would
    read as "copy". So a 0 is taken literally when copying makes the element counts
    disagree but the literal 0 makes them agree; this only differs from Paddle for
    tensors with no elements, and keeps canonicalization idempotent."""
    if shape.count(-1) > 1:
        raise ShapeError(f"shape {shape_str(shape)} holds more than one -1")
    total = numel(in_shape)
    try:
        return _fill_reshape(_copy_zeros(shape, in_shape), in_shape, total)
    except ShapeError:
        if 0 in shape and -1 not in shape and numel(shape) == total:
            return shape
        raise


def _copy_zeros(shape: tuple, in_shape: tuple) -> tuple:
    out = []
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(in_shape):
                raise ShapeError(f"shape {shape_str(shape)} holds 0 (copy the input dim) at "
                                 f"position {i}, but the operand {shape_str(in_shape)} has "
                                 f"rank {len(in_shape)}")
            d = in_shape[i]
        out.append(d)
    return tuple(out)


def _fill_reshape(shape: tuple, in_shape: tuple, total) -> tuple:
    if -1 in shape:
        i = shape.index(-1)
        rest = numel(shape[:i] + shape[i + 1:])
        d = _empty_fill(shape[:i] + shape[i + 1:], in_shape) if rest == total == 0 \
            else dim_div(total, rest)
        if d is None:
            what = "a whole number of elements" if isinstance(total, int) and \
                isinstance(rest, int) else "a polynomial of the symbolic dims"
            raise ShapeError(f"cannot reshape {shape_str(in_shape)} to {shape_str(shape)}: "
                             f"the -1 would be {total} / {rest}, which is not {what}")
        shape = shape[:i] + (d,) + shape[i + 1:]
    if numel(shape) != total:
        raise mismatch(total, numel(shape), f"cannot reshape {shape_str(in_shape)} ({total} "
                       f"elements) to {shape_str(shape)} ({numel(shape)} elements)")
    return shape


def _empty_fill(others: tuple, in_shape: tuple):
    """The -1 of a reshape of a tensor with no elements to a shape with an empty dim
    besides it, where element counts leave it 0 / 0: the product of the input's
    non-empty dims over that of the other non-empty dims (None when it is not whole),
    as Paddle does. So ``reshape(x, [x.shape[0], -1])`` of an empty batch [0, 2, 3]
    gives [0, 6], as a program compiled for any batch size does with N = 0."""
    return dim_div(numel([d for d in in_shape if d != 0]), numel([d for d in others if d != 0]))


def _reshape_infer(types, attrs):
    return types[0].with_shape(attrs["shape"])


def _as_shape_canon(attrs, types):
    return {**attrs, "shape": tuple(normalize_dim(d) for d in attrs["shape"])}


def _as_shape_infer(types, attrs):
    x, shape = types[0], attrs["shape"]
    if len(shape) != x.rank or any(isinstance(d, int) and isinstance(e, int) and d != e
                                   for d, e in zip(x.shape, shape)):
        raise ShapeError(f"as_shape: {x} cannot be seen as {shape_str(shape)}: a dim may "
                         "change only where one side is symbolic")
    return x.with_shape(shape)


defop("as_shape", _as_shape_infer, lambda x, shape: x, arity=1, attrs={"shape": REQUIRED},
      canonicalize=_as_shape_canon, traits=(View(),),
      vjp=lambda b, g, i, o, shape: [b.as_shape(g[0], shape=i[0].type.shape)],
      doc="as_shape(x) {shape}: x itself, seen with another type of its rank and dtype, "
          "whose dims differ from x's only where one side is symbolic; a symbol not bound "
          "yet is bound from x (and a static dim is checked against x). A `cond` whose "
          "branches give a value different sizes yields it through as_shape, so both "
          "branches yield one type; its VJP sees the cotangent with x's type again")


def _match_shape_kernel(x, shape, needed_at):
    if tuple(x.shape) != tuple(shape):
        where = f" at {needed_at}" if needed_at else ""
        raise ShapeError(f"sizes known only when the program runs differ: shape "
                         f"{list(x.shape)} where {list(shape)} was expected. The program "
                         f"combines them{where} taking them to be equal (a size of 1 that "
                         "would broadcast is not taken into account there)")
    return x


defop("match_shape", _as_shape_infer, _match_shape_kernel, arity=1,
      attrs={"shape": REQUIRED, "needed_at": ""}, shape_attrs=("shape",),
      canonicalize=_as_shape_canon, traits=(View(),),
      vjp=lambda b, g, i, o, shape, needed_at: [b.as_shape(g[0], shape=i[0].type.shape)],
      doc="match_shape(x) {shape, needed_at}: x itself, seen with the type of `shape`, "
          "whose symbols are bound already; checked when the program runs, raising "
          "ShapeError if x's sizes are not those (`needed_at`: the source line whose rule "
          "needed them equal, for the message). A size known only at run time (of a "
          "slice with traced bounds, a nonzero) that a later rule needs equal to another "
          "size goes through it, as TVM's match_cast")


defop("reshape", _reshape_infer, lambda x, shape: x.reshape(shape), arity=1,
      attrs={"shape": REQUIRED}, shape_attrs=("shape",), canonicalize=_reshape_canon,
      vjp=lambda b, g, i, o, shape: [b.reshape(g[0], shape=i[0].type.shape)],
      traits=(View(),), patterns=(ReturnsOperand(), SkipInnerOfChain()),
      doc="reshape(x) {shape}: the elements of x in row-major order, laid out as `shape`. "
          "`shape` may hold one -1 (the size that keeps the element count) and 0s "
          "(copy x's dim at that position, as in Paddle); both are resolved when the op "
          "is built, so the stored shape is explicit. Symbolic dims work when the sizes "
          "are expressible: f32[N,4,4] to [-1,16] gives f32[N,16], to [-1] f32[N*16]. "
          "The element counts must agree")


# ---------------------------------------------------------------- broadcast_to

def _broadcast_canon(attrs, types):
    (x,) = types
    shape = _shape_attr(attrs["shape"])
    lead = len(shape) - x.rank
    for i, d in enumerate(shape):
        if d == -1:
            if i < lead:
                raise ShapeError(f"shape {shape_str(shape)} holds -1 (keep x's dim) at "
                                 f"position {i}, which x ({x}) does not have")
            shape = shape[:i] + (x.shape[i - lead],) + shape[i + 1:]
    return {"shape": shape}


def _check_broadcast(t: TensorType, shape: tuple, what: str = "") -> None:
    """`t` must broadcast to exactly `shape` (NumPy rules, one direction)."""
    subject = f"{what} {t}" if what else str(t)
    lead = len(shape) - t.rank
    if lead < 0:
        raise ShapeError(f"cannot broadcast {subject} to the lower-rank shape {shape_str(shape)}")
    for i, d in enumerate(t.shape):
        if d != 1 and d != shape[lead + i]:
            raise mismatch(d, shape[lead + i], f"cannot broadcast {subject} to "
                           f"{shape_str(shape)}: dim {d} at axis {i} is neither 1 nor "
                           f"{shape[lead + i]}")


def _broadcast_infer(types, attrs):
    _check_broadcast(types[0], attrs["shape"])
    return types[0].with_shape(attrs["shape"])


defop("broadcast_to", _broadcast_infer, np.broadcast_to, arity=1,
      attrs={"shape": REQUIRED}, shape_attrs=("shape",), canonicalize=_broadcast_canon,
      vjp=lambda b, g, i, o, shape: [unbroadcast(b, g[0], i[0].type)],
      traits=(View(),), patterns=(ReturnsOperand(), BypassBroadcast()),
      doc="broadcast_to(x) {shape}: x repeated to `shape` by NumPy broadcasting: x's dims "
          "align with the trailing dims of `shape` and each must equal its dim or be 1. "
          "A -1 in `shape` keeps x's dim there. The result is a read-only view")


# ---------------------------------------------------------------- transpose

def _transpose_canon(attrs, types):
    (x,) = types
    perm = _int_tuple(attrs["perm"], "perm")
    normed = tuple(norm_axis(a, x.rank, "perm entry") for a in perm)
    if sorted(normed) != list(range(x.rank)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {x.rank} axes of {x}")
    return {"perm": normed}


def _transpose_infer(types, attrs):
    (x,) = types
    return x.with_shape(tuple(x.shape[a] for a in attrs["perm"]))


def _transpose_vjp(b, g, ins, outs, perm):
    return [b.transpose(g[0], perm=tuple(int(a) for a in np.argsort(perm)))]


def _is_identity_perm(op) -> bool:
    return op.attrs["perm"] == tuple(range(len(op.attrs["perm"])))


def _transpose_out(x, out, perm):
    np.copyto(out, np.transpose(x, perm))


# transpose copies, as Paddle's does, rather than returning NumPy's permuted view: then
# every array a kernel makes is in row-major order, as an arena buffer is, so a
# reduction adds in the same order in the interpreter and the executor (NumPy's
# elementwise results follow their operands' layout), and a reshape is a view.
defop("transpose", _transpose_infer, lambda x, perm: np.transpose(x, perm).copy(),
      out_kernel=_transpose_out, arity=1,
      attrs={"perm": REQUIRED}, canonicalize=_transpose_canon, vjp=_transpose_vjp,
      patterns=(ReturnsOperand(when=_is_identity_perm),),
      doc="transpose(x) {perm}: permute the axes: result axis i is x's axis perm[i]. "
          "`perm` lists every axis of x once (negative entries count from the end)")


# ---------------------------------------------------------------- unsqueeze, squeeze

def _unsqueeze_canon(attrs, types):
    (x,) = types
    axes = _int_tuple(attrs["axis"], "axis")
    rank = x.rank + len(axes)
    normed = []
    for a in axes:
        if not -rank <= a < rank:
            raise ShapeError(f"axis {a} is out of range: inserting {len(axes)} dim(s) into "
                             f"{x} gives rank {rank}")
        normed.append(a % rank)
    if len(set(normed)) != len(normed):
        raise ShapeError(f"axis {list(axes)} names a result position twice")
    return {"axis": tuple(sorted(normed))}


def _unsqueeze_infer(types, attrs):
    (x,) = types
    dims = iter(x.shape)
    rank = x.rank + len(attrs["axis"])
    return x.with_shape(tuple(1 if i in attrs["axis"] else next(dims) for i in range(rank)))


def _reshape_back_vjp(b, g, ins, outs, **attrs):
    return [b.reshape(g[0], shape=ins[0].type.shape)]


defop("unsqueeze", _unsqueeze_infer, lambda x, axis: np.expand_dims(x, axis), arity=1,
      attrs={"axis": REQUIRED}, canonicalize=_unsqueeze_canon, vjp=_reshape_back_vjp,
      traits=(View(),),
      doc="unsqueeze(x) {axis}: insert size-1 dims. `axis` (an int or a list) gives their "
          "positions in the result, whose rank is x's rank plus the number of axes; "
          "negative positions count from the result's end. Canonically a sorted tuple")


def _squeeze_canon(attrs, types):
    (x,) = types
    if attrs["axis"] is None:
        return {"axis": tuple(i for i, d in enumerate(x.shape) if d == 1)}
    axes = norm_axes(_int_tuple(attrs["axis"], "axis"), x.rank)
    for a in axes:
        if isinstance(x.shape[a], str):
            raise ShapeError(f"cannot squeeze axis {a} of {x}: its size {x.shape[a]} is not "
                             f"known to be 1")
    return {"axis": tuple(a for a in axes if x.shape[a] == 1)}


def _squeeze_infer(types, attrs):
    (x,) = types
    return x.with_shape(tuple(d for i, d in enumerate(x.shape) if i not in attrs["axis"]))


defop("squeeze", _squeeze_infer, lambda x, axis: np.squeeze(x, axis), arity=1,
      attrs={"axis": None}, canonicalize=_squeeze_canon, vjp=_reshape_back_vjp,
      traits=(View(),),
      doc="squeeze(x) {axis}: remove size-1 dims: those listed in `axis` (an int or a "
          "list), or with axis=None every dim statically 1. As in Paddle, a listed dim "
          "whose static size is not 1 is left alone; a listed symbolic dim is an error, "
          "because whether it is 1 is known only at run time. Canonically `axis` is the "
          "sorted tuple of the dims actually removed")


# ---------------------------------------------------------------- concat, stack

def _axis_canon(extra_rank: int):
    """Canonicalize an int `axis` of a rank-r operand into [0, r + extra_rank)."""
    def canon(attrs, types):
        axis = attrs["axis"]
        if not _is_int(axis):
            raise ShapeError(f"axis must be an int, got {axis!r}")
        rank = types[0].rank + extra_rank
        if not -rank <= axis < rank:
            raise ShapeError(f"axis {axis} is out of range for a rank-{rank} result")
        return {**attrs, "axis": axis % rank}
    return canon


def _concat_infer(types, attrs):
    axis = attrs["axis"]
    same_dtype(types)
    first = types[0]
    size = first.shape[axis]
    for i, t in enumerate(types[1:], 1):
        outside = t.shape[:axis] + t.shape[axis + 1:]
        check_same_shape(outside, first.shape[:axis] + first.shape[axis + 1:],
                         f"operand {i} ({t}) does not match operand 0 ({first}) outside "
                         f"axis {axis}")
        size = dim_add(size, t.shape[axis])
    return first.with_shape(first.shape[:axis] + (size,) + first.shape[axis + 1:])


def _concat_vjp(b, g, ins, outs, axis):
    grads, start = [], 0
    for x in ins:
        stop = dim_add(start, x.type.shape[axis])
        grads.append(b.slice(g[0], axes=(axis,), starts=(start,), stops=(stop,)))
        start = stop
    return grads


def _concat_out(*xs, out, axis):
    np.concatenate(xs, axis=axis, out=out)


def _concat(*xs, axis):
    """Into a row-major array of its own: NumPy's concatenate keeps the layout of
    its inputs (of broadcast views too), which a buffer of the arena does not have."""
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = np.empty(shape, dtype=xs[0].dtype)
    np.concatenate(xs, axis=axis, out=out)
    return out


defop("concat", _concat_infer, _concat,
      out_kernel=_concat_out, arity=(1, None), attrs={"axis": 0}, canonicalize=_axis_canon(0), vjp=_concat_vjp,
      doc="concat(*xs) {axis}: join one or more tensors of one dtype and rank along "
          "`axis` (default 0); their other dims must be equal. The result's size along "
          "`axis` is the sum of theirs (`N+M` for symbolic sizes)")


def _stack_infer(types, attrs):
    same_dtype(types)
    first = types[0]
    for i, t in enumerate(types):
        check_same_shape(t.shape, first.shape, f"operand {i} ({t}) differs from operand 0 "
                         f"({first}); stack takes operands of one type")
    axis = attrs["axis"]
    return first.with_shape(first.shape[:axis] + (len(types),) + first.shape[axis:])


def _stack_vjp(b, g, ins, outs, axis):
    return [b.reshape(b.slice(g[0], axes=(axis,), starts=(i,), stops=(i + 1,)),
                      shape=x.type.shape) for i, x in enumerate(ins)]


def _stack_out(*xs, out, axis):
    np.stack(xs, axis=axis, out=out)


defop("stack", _stack_infer, lambda *xs, axis: np.stack(xs, axis=axis), out_kernel=_stack_out,
      arity=(1, None),
      attrs={"axis": 0}, canonicalize=_axis_canon(1), vjp=_stack_vjp,
      doc="stack(*xs) {axis}: join one or more tensors of one type along a new axis, "
          "which is `axis` (default 0) of the result")


# ---------------------------------------------------------------- slice, set_slice

_INT_MAX = 2 ** 31 - 1  # Paddle programs write stops of INT_MAX for "to the end"


def _bounds(value, what: str) -> tuple:
    """starts or stops as a tuple of ints, Nones or symbolic dims."""
    items = value if isinstance(value, tuple) else (value,)
    for v in items:
        if not (v is None or _is_int(v) or isinstance(v, str)):
            raise ShapeError(f"{what} must hold ints or None, got {value!r}")
    return tuple(normalize_dim(v) if isinstance(v, str) else v for v in items)


def _slice_canon(attrs, types):
    """Bounds normalized per axis, identity slices dropped, axes sorted."""
    x = types[0]
    axes = _int_tuple(attrs["axes"], "axes")
    starts, stops = _bounds(attrs["starts"], "starts"), _bounds(attrs["stops"], "stops")
    steps = (1,) * len(axes) if attrs["steps"] is None else _int_tuple(attrs["steps"], "steps")
    if not len(axes) == len(starts) == len(stops) == len(steps):
        raise ShapeError(f"axes, starts, stops and steps must have one entry per sliced axis, "
                         f"got {len(axes)}, {len(starts)}, {len(stops)} and {len(steps)}")
    normed = [norm_axis(a, x.rank) for a in axes]
    if len(set(normed)) != len(normed):
        raise ShapeError(f"axes {list(axes)} name an axis twice")
    kept = {}
    for axis, start, stop, step in zip(normed, starts, stops, steps):
        if step == 0:
            raise ShapeError(f"the step for axis {axis} is 0")
        bounds = _axis_bounds(x.shape[axis], axis, start, stop, step)
        if bounds is not None:
            kept[axis] = bounds
    order = sorted(kept)
    return {"axes": tuple(order), "starts": tuple(kept[a][0] for a in order),
            "stops": tuple(kept[a][1] for a in order),
            "steps": tuple(kept[a][2] for a in order)}


def _axis_bounds(dim, axis: int, start, stop, step):
    """Canonical (start, stop, step) of Python's ``[start:stop:step]`` on an axis of
    size `dim`, or None when the slice keeps the axis as it is.

    For a static dim: start is the first index taken, stop the tightest exclusive
    bound (None when a negative step runs through index 0, since -1 would mean the
    last element), a single element has step 1 and an empty slice is (0, 0, 1)."""
    if isinstance(dim, str):
        return _symbolic_axis_bounds(dim, axis, start, stop, step)
    if isinstance(start, str) or isinstance(stop, str):
        raise ShapeError(f"axis {axis} has the static size {dim}, so its bounds must be ints, "
                         f"got start {start}, stop {stop}")
    start, stop, step = slice(start, stop, step).indices(dim)
    count = len(range(start, stop, step))
    if count == dim and (step == 1 or count <= 1):
        return None
    if count == 0:
        return (0, 0, 1)
    if count == 1:
        return (start, start + 1, 1)
    last = start + (count - 1) * step
    if step > 0:
        return (start, last + 1, step)
    return (start, last - 1 if last > 0 else None, step)


def _symbolic_axis_bounds(dim: str, axis: int, start, stop, step):
    """On a symbolic axis a slice with step 1 has the size stop - start, which holds
    when the bounds lie within the axis (the kernel checks that): start is an int
    (negative counts from the end) or an expression, stop also None for the end.
    Bounds that are the size minus an int count from the end (S1-1 on S1 is -1).
    The only other slice is the whole axis reversed (None, None, -1)."""
    if step == -1 and start in (None, -1) and (
            stop is None or (_is_int(stop) and stop <= -_INT_MAX)):
        return (None, None, -1)
    if step != 1:
        raise ShapeError(f"axis {axis} has the symbolic size {dim}: a slice of it with step "
                         f"{step} has a size that is not a polynomial of {dim}; only step 1, "
                         f"or reversing it whole (start None, stop None, step -1), is "
                         f"supported")
    start = _from_end(0 if start is None else start, dim)
    if stop == dim or (_is_int(stop) and stop >= _INT_MAX):
        stop = None
    stop = _from_end(stop, dim)
    for bound in (start, stop):
        if isinstance(bound, str) and any(coef < 0 for coef, _ in dim_terms(bound)):
            raise ShapeError(f"the bound {bound} of axis {axis} (size {dim}) may be negative, "
                             f"which would count from the end; a symbolic bound must be a "
                             f"position, or the size minus an int")
    if start == 0 and stop is None:
        return None
    if _is_empty(_slice_size(dim, start, stop)):
        return (0, 0, 1)
    return (start, stop, 1)


def _from_end(bound, dim: str):
    """A symbolic bound that is `dim` minus a positive int, as that negative int."""
    if isinstance(bound, str):
        offset = dim_sub(bound, dim)
        if isinstance(offset, int) and offset < 0:
            return offset
    return bound


def _position(bound, dim):
    """The index a canonical step-1 bound stands for on an axis of size `dim`."""
    if bound is None:
        return dim
    return dim_add(dim, bound) if _is_int(bound) and bound < 0 else bound


def _slice_size(dim, start, stop):
    return dim_sub(_position(stop, dim), _position(start, dim))


def _is_empty(size) -> bool:
    return isinstance(size, int) and size <= 0


def _sliced_shape(x: TensorType, attrs) -> tuple:
    shape = list(x.shape)
    for axis, start, stop, step in zip(attrs["axes"], attrs["starts"], attrs["stops"],
                                       attrs["steps"]):
        d = shape[axis]
        if isinstance(d, int):
            shape[axis] = len(range(start, -1 if stop is None else stop, step))
        elif step == 1:
            shape[axis] = _slice_size(d, start, stop)
    return tuple(shape)


def _slice_index(shape: tuple, axes, starts, stops, steps) -> tuple:
    """The NumPy index of a slice, whose step-1 bounds must lie within their axes: on
    a symbolic axis the type's size stop - start is right only then (canonical bounds
    on a static axis always do)."""
    index = [slice(None)] * len(shape)
    for axis, start, stop, step in zip(axes, starts, stops, steps):
        index[axis] = slice(start, stop, step)
        if step == 1:
            n = shape[axis]
            first = start + n if start < 0 else start
            end = n if stop is None else stop + n if stop < 0 else stop
            if not 0 <= first <= end <= n:
                raise ShapeError(f"the slice {start}:{'' if stop is None else stop} of axis "
                                 f"{axis} reaches outside the axis, which has {n} elements "
                                 f"in this run; a slice of an axis with a symbolic size "
                                 f"must lie within it")
    return tuple(index)


def _slice_kernel(x, **bounds):
    return x[_slice_index(x.shape, **bounds)]


def _slice_vjp(b, g, ins, outs, **bounds):
    return [b.set_slice(_zeros(b, ins[0].type), g[0], **bounds)]


_SLICE_ATTRS = {"axes": REQUIRED, "starts": REQUIRED, "stops": REQUIRED, "steps": None}
_SLICE_DOC = ("`axes` lists the sliced axes (others are kept whole) and `starts`, `stops`, "
              "`steps` (default all 1) hold one Python slice per listed axis: negative "
              "bounds count from the end, bounds are clipped, steps may be negative. "
              "Canonically the bounds are normalized against the static dims (start is "
              "the first index taken, stop the tightest bound, or None when a negative "
              "step runs through index 0) and axes sliced whole are dropped. A symbolic "
              "axis takes step 1 (size stop - start; bounds may be symbolic, and must lie "
              "within the axis when the program runs) or is reversed whole (None, None, "
              "-1)")

defop("slice", lambda types, attrs: types[0].with_shape(_sliced_shape(types[0], attrs)),
      _slice_kernel, arity=1, attrs=dict(_SLICE_ATTRS), canonicalize=_slice_canon,
      shape_attrs=("starts", "stops"), vjp=_slice_vjp, traits=(View(),),
      doc="slice(x) {axes, starts, stops, steps}: x[start:stop:step] along each listed "
          "axis, like paddle.strided_slice. " + _SLICE_DOC)


def _set_slice_infer(types, attrs):
    x, update = types
    same_dtype(types)
    shape = _sliced_shape(x, attrs)
    check_same_shape(update.shape, shape, f"update has the shape {shape_str(update.shape)}, "
                     f"but the slice of {x} has the shape {shape_str(shape)}")
    return x


def _set_slice_kernel(x, update, out=None, **bounds):
    """Also the out kernel, which may be given x's own memory."""
    out = _copy_of(x, out)
    out[_slice_index(x.shape, **bounds)] = update
    return out


def _copy_of(x: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """x in `out` (a new array if None), which may already be x's memory (in place)."""
    if out is None:
        return x.copy()
    if not np.may_share_memory(out, x):
        np.copyto(out, x)
    return out


def _set_slice_vjp(b, g, ins, outs, **bounds):
    return [b.set_slice(g[0], _zeros(b, ins[1].type), **bounds), b.slice(g[0], **bounds)]


defop("set_slice", _set_slice_infer, _set_slice_kernel, out_kernel=_set_slice_kernel,
      in_place=(0,), arity=2, attrs=dict(_SLICE_ATTRS),
      canonicalize=_slice_canon, shape_attrs=("starts", "stops"), vjp=_set_slice_vjp,
      doc="set_slice(x, update) {axes, starts, stops, steps}: a copy of x whose slice (as "
          "in `slice`) is replaced by `update`, which has x's dtype and exactly the "
          "slice's shape. " + _SLICE_DOC)


# ---------------------------------------------------------------- gather, scatter_add

def _gather_shape(x: TensorType, index: TensorType, axis: int) -> tuple:
    check_kind(index, "int", "index")
    if x.rank == 0:
        raise ShapeError(f"x must have at least one dim, got {x}")
    return x.shape[:axis] + index.shape + x.shape[axis + 1:]


def _gather_infer(types, attrs):
    x, index = types
    return x.with_shape(_gather_shape(x, index, attrs["axis"]))


def _gather_vjp(b, g, ins, outs, axis):
    x, index = ins
    return [b.scatter_add(_zeros(b, x.type), index, g[0], axis=axis), None]


def _operand_axis_canon(attrs, types):
    """An int `axis` of the first operand, made non-negative."""
    if not _is_int(attrs["axis"]):
        raise ShapeError(f"axis must be an int, got {attrs['axis']!r}")
    return {**attrs, "axis": norm_axis(attrs["axis"], types[0].rank)}


def _gather_out(x, index, out, axis):
    """np.take buffers its output when it checks the indices itself (mode "raise"),
    so the check comes first, and the kernel raises NumPy's error for a bad index."""
    n = x.shape[axis]
    if index.size and not -n <= index.min() <= index.max() < n:
        np.take(x, index, axis=axis)
    np.take(x, index, axis=axis, out=out, mode="wrap")


defop("gather", _gather_infer, lambda x, index, axis: np.take(x, index, axis=axis),
      out_kernel=_gather_out, arity=2, attrs={"axis": 0}, canonicalize=_operand_axis_canon, vjp=_gather_vjp,
      doc="gather(x, index) {axis}: np.take(x, index, axis): the entries of x at the "
          "positions `index` (i32 or i64, any rank; negative counts from the end) along "
          "`axis` (default 0). Result shape: x.shape[:axis] + index.shape + "
          "x.shape[axis+1:]")


def _scatter_add_infer(types, attrs):
    x, index, updates = types
    check_kind(x, "number", "x")
    same_dtype([x, updates])
    shape = _gather_shape(x, index, attrs["axis"])
    check_same_shape(updates.shape, shape, f"updates must have the shape {shape_str(shape)} "
                     f"(x's dims with the index's dims in place of axis {attrs['axis']}), got "
                     f"{updates}")
    return x


def _scatter_add_kernel(x, index, updates, axis, out=None):
    """Also the out kernel, which may be given x's own memory."""
    out = _copy_of(x, out)
    np.add.at(out, _along(axis, x.ndim, index), updates)
    return out


defop("scatter_add", _scatter_add_infer, _scatter_add_kernel, out_kernel=_scatter_add_kernel,
      in_place=(0,), arity=3, attrs={"axis": 0},
      canonicalize=_operand_axis_canon,
      vjp=lambda b, g, i, o, axis: [g[0], None, b.gather(g[0], i[1], axis=axis)],
      doc="scatter_add(x, index, updates) {axis}: a copy of x with `updates` added at the "
          "positions `index` along `axis`, duplicates accumulating (np.add.at): the "
          "transpose of `gather`, whose result shape `updates` must have")


# ---------------------------------------------------------------- take/put_along_axis

def _along_axis_shape(x: TensorType, index: TensorType, axis: int) -> tuple:
    """x's shape with the index's size at `axis`: the shape the index broadcasts to."""
    check_kind(index, "int", "index")
    if x.rank == 0:
        raise ShapeError(f"x must have at least one dim, got {x}")
    if index.rank != x.rank:
        raise ShapeError(f"index must have the rank of x ({x}), got {index}")
    for d, (xd, id_) in enumerate(zip(x.shape, index.shape)):
        if d != axis and id_ != 1 and id_ != xd:
            raise mismatch(id_, xd, f"index dim {id_} at axis {d} must be 1 or x's dim {xd} "
                           f"(x is {x}, index {index})")
    return x.shape[:axis] + (index.shape[axis],) + x.shape[axis + 1:]


def _take_along_axis_infer(types, attrs):
    x, index = types
    return x.with_shape(_along_axis_shape(x, index, attrs["axis"]))


def _take_along_axis_vjp(b, g, ins, outs, axis):
    x, index = ins
    return [b.put_along_axis(_zeros(b, x.type), index, g[0], axis=axis, reduce="add"), None]


defop("take_along_axis", _take_along_axis_infer,
      lambda x, index, axis: np.take_along_axis(x, index, axis), arity=2,
      attrs={"axis": REQUIRED}, canonicalize=_operand_axis_canon, vjp=_take_along_axis_vjp,
      doc="take_along_axis(x, index) {axis}: np.take_along_axis: result[..., j, ...] = "
          "x[..., index[..., j, ...], ...] along `axis`. `index` (i32 or i64) has x's "
          "rank; its other dims equal x's or are 1 and broadcast. Result: x's shape with "
          "index's size at `axis`")


def _put_along_axis_canon(attrs, types):
    if attrs["reduce"] not in ("assign", "add"):
        raise ShapeError(f"reduce must be 'assign' or 'add', got {attrs['reduce']!r}")
    return _operand_axis_canon(attrs, types)


def _put_along_axis_infer(types, attrs):
    x, index, values = types
    same_dtype([x, values])
    _check_broadcast(values, _along_axis_shape(x, index, attrs["axis"]), "values")
    return x


def _along_axis_index(index: np.ndarray, axis: int) -> tuple:
    """The fancy index addressing x[i0, ..., index[i0, ..., ik, ...], ..., ik, ...]
    for every position of `index` (a full-shape index array)."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[axis] = index
    return tuple(grids)


def _put_along_axis_kernel(x, index, values, axis, reduce, out=None):
    """Also the out kernel, which may be given x's own memory."""
    shape = x.shape[:axis] + (index.shape[axis],) + x.shape[axis + 1:]
    where = _along_axis_index(np.broadcast_to(index, shape), axis)
    values = np.broadcast_to(values, shape)
    out = _copy_of(x, out)
    if reduce == "add" and shape[axis] > 1:
        np.add.at(out, where, values)  # several indices per row may repeat: accumulate
    elif reduce == "add":  # one index per row: no repeats, so a plain += is exact (and fast)
        out[where] += values
    else:
        out[where] = values
    return out


def _put_along_axis_vjp(b, g, ins, outs, axis, reduce):
    x, index, values = ins
    picked = unbroadcast(b, b.take_along_axis(g[0], index, axis=axis), values.type)
    if reduce == "add":
        return [g[0], None, picked]
    cleared = b.put_along_axis(g[0], index, b.constant(0, x.type.dtype), axis=axis)
    return [cleared, None, picked]


defop("put_along_axis", _put_along_axis_infer, _put_along_axis_kernel,
      out_kernel=_put_along_axis_kernel, in_place=(0,), arity=3,
      attrs={"axis": REQUIRED, "reduce": "assign"}, canonicalize=_put_along_axis_canon,
      vjp=_put_along_axis_vjp,
      doc="put_along_axis(x, index, values) {axis, reduce}: a copy of x with `values` "
          "written at the positions take_along_axis(x, index, axis) reads, like "
          "paddle.put_along_axis. `index` is as in `take_along_axis`; `values` (x's "
          "dtype) broadcasts to the index's broadcast shape. reduce='assign' (default) "
          "overwrites (with duplicate positions, which value wins is unspecified, and "
          "the VJP assumes distinct positions); reduce='add' adds, duplicates "
          "accumulating")


# ---------------------------------------------------------------- pad

def _pad_canon(attrs, types):
    (x,) = types
    pads = attrs["pads"]
    if not (isinstance(pads, tuple) and len(pads) == x.rank and all(
            isinstance(p, tuple) and len(p) == 2 and all(_is_int(n) and n >= 0 for n in p)
            for p in pads)):
        raise ShapeError(f"pads must hold one (low, high) pair of non-negative ints per "
                         f"axis of {x}, got {pads!r}")
    value = attrs["value"]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ShapeError(f"value must be a number, got {value!r}")
    return {"pads": pads, "value": float(value)}


def _pad_infer(types, attrs):
    (x,) = types
    shape = []
    for d, (low, high) in zip(x.shape, attrs["pads"]):
        shape.append(dim_add(d, low + high))
    return x.with_shape(shape)


def _pad_kernel(x, pads, value, out=None):
    """Also the out kernel."""
    if out is None:
        out = np.empty([d + low + high for d, (low, high) in zip(x.shape, pads)], x.dtype)
    out.fill(value)
    out[tuple(slice(low, low + d) for d, (low, _) in zip(x.shape, pads))] = x
    return out


def _pad_vjp(b, g, ins, outs, pads, value):
    axes = tuple(i for i, p in enumerate(pads) if p != (0, 0))
    return [b.slice(g[0], axes=axes, starts=tuple(pads[i][0] for i in axes),
                    stops=tuple(-pads[i][1] if pads[i][1] else None for i in axes))]


defop("pad", _pad_infer, _pad_kernel, out_kernel=_pad_kernel, arity=1,
      attrs={"pads": REQUIRED, "value": 0.0},
      canonicalize=_pad_canon, vjp=_pad_vjp,
      doc="pad(x) {pads, value}: x with `value` (a float, default 0.0, cast to x's "
          "dtype) added around it: `pads` holds one (low, high) pair of non-negative "
          "ints per axis, in axis order (a symbolic dim S1 padded by (1, 1) is S1+2)")


# ---------------------------------------------------------------- arange

def _arange_canon(attrs, types):
    """The bounds converted to the result dtype first, as Paddle's kernel takes them:
    an int dtype truncates each toward zero (arange(-2.5, 3, dtype='int32') starts at
    -2), so a fractional step below 1 becomes 0 and is refused."""
    numbers = {k: attrs[k] for k in ("start", "stop", "step")}
    for key, v in numbers.items():
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise ShapeError(f"{key} must be a number, got {v!r}")
    if attrs["dtype"] is not None:
        try:
            dtype = dtypes.dtype(attrs["dtype"])
        except TypeError as e:
            raise ShapeError(str(e)) from None
    else:
        dtype = dtypes.int64 if all(_is_int(v) for v in numbers.values()) else dtypes.float32
    if dtype.is_int:
        numbers = {k: int(v) for k, v in numbers.items()}
    if numbers["step"] == 0:
        raise ShapeError(f"step must not be 0 (as {dtype.name}), got {attrs['step']!r}")
    return {**numbers, "dtype": dtype}


def _arange_length(start, stop, step, dtype) -> int:
    """Paddle's length: exact for ints; for floats ceil((stop - start) / step) computed
    in the dtype's precision, so arange(1, 2.2, 0.3) in float32 stops before 2.2 (4
    elements; float64 arithmetic makes the quotient 4.000000000000001 and a 5th
    element equal to the excluded stop)."""
    if all(_is_int(v) for v in (start, stop, step)):
        return len(range(start, stop, step))
    kind = dtype.np.type if dtype.is_float else np.float64
    quotient = (kind(stop) - kind(start)) / kind(step)
    return max(0, math.ceil(float(quotient)))


def _arange_infer(types, attrs):
    return TensorType(attrs["dtype"], (_arange_length(attrs["start"], attrs["stop"],
                                                      attrs["step"], attrs["dtype"]),))


def _arange_kernel(start, stop, step, dtype):
    n = _arange_length(start, stop, step, dtype)
    if dtype.np in (np.float32, np.float64):
        # start + step * i in the dtype, as Paddle's kernel rounds it: arange(0, 1, 0.3)[3]
        # is 0.90000004 in float32 (computed in float64 and cast, 0.9 rounds to 0.89999998)
        kind = dtype.np
        return np.asarray(start, kind) + np.asarray(step, kind) * np.arange(n, dtype=kind)
    return (start + step * np.arange(n)).astype(dtype.np)


defop("arange", _arange_infer, _arange_kernel,
      attrs={"start": 0, "stop": REQUIRED, "step": 1, "dtype": None},
      canonicalize=_arange_canon, nondiff=True,
      doc="arange() {start, stop, step, dtype}: the 1-D tensor start, start + step, ... "
          "up to but excluding stop; its length ceil((stop - start) / step), computed in "
          "`dtype` (an int dtype truncates the bounds first), is static. `dtype` defaults "
          "to int64 when start, stop and step are ints, else float32")


def _range_canon(attrs, types):
    try:
        dtype = dtypes.dtype(attrs["dtype"])
    except TypeError as e:
        raise ShapeError(str(e)) from None
    return {"dtype": dtype, "size": normalize_dim(attrs["size"])}


def _range_infer(types, attrs):
    for t, what in zip(types, ("start", "stop", "step")):
        check_kind(t, "number", what)
        if t.rank:
            raise ShapeError(f"{what} must be a scalar, got {t}")
    return TensorType(attrs["dtype"], (attrs["size"],))


def _range_kernel(start, stop, step, dtype, size):
    if step == 0:
        raise ShapeError("step must not be 0")
    return _arange_kernel(start.item(), stop.item(), step.item(), dtype)


defop("range", _range_infer, _range_kernel, arity=3,
      attrs={"dtype": REQUIRED, "size": REQUIRED}, canonicalize=_range_canon, nondiff=True,
      doc="range(start, stop, step) {dtype, size}: `arange` of three scalar operands "
          "whose values are known only when the program runs. `size` is the result's "
          "length: a symbol of its own where it depends on tensor values, bound from the "
          "result when the op runs")


# ---------------------------------------------------------------- roll

def _roll_canon(attrs, types):
    shifts, axis = attrs["shifts"], attrs["axis"]
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if axis is None:
        if len(shifts) != 1:
            raise ShapeError(f"roll without an axis takes one shift, got {list(shifts)}")
        return {"shifts": shifts, "axis": None}
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axis) != len(shifts):
        raise ShapeError(f"roll: {len(shifts)} shift(s) for {len(axis)} axis/axes")
    rank = types[0].rank
    return {"shifts": shifts, "axis": tuple(norm_axis(a, rank) for a in axis)}


def _roll_kernel(x, shifts, axis):
    if axis is None:
        return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    return np.roll(x, shifts, axis)


defop("roll", lambda types, attrs: types[0], _roll_kernel, arity=1,
      attrs={"shifts": REQUIRED, "axis": None}, canonicalize=_roll_canon,
      vjp=lambda b, g, i, o, shifts, axis: [b.roll(g[0], shifts=tuple(-s for s in shifts),
                                                   axis=axis)],
      doc="roll(x) {shifts, axis}: x with its elements moved `shifts` places along each "
          "axis of `axis`, wrapping around (one shift over the flattened x when axis is "
          "None); same type as x. The VJP rolls the cotangent back")
