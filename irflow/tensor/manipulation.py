"""Shape manipulation, joining and splitting, gathering, and indexing (`x[...]`)."""
from __future__ import annotations

import builtins

import numpy as np

from ..context import grad_enabled
from ..dispatch import apply, user_location
from ..errors import (ConversionError, DimMismatch, DTypeError, IrflowError, ShapeError,
                      SymbolicShapeError)
from ..ir import dtypes
from ..ir.types import (check_same_shape, dim_add, dim_div, dim_mul, dim_sub, dim_terms,
                        mismatch, numel)
from .convert import as_tensor, cast, dims, traced_dim
from .logic import greater_equal, less_than, logical_and, logical_xor, select
from .math import add, maximum, minimum, multiply, subtract
from .tensor import Tensor


def exact_shape(x: Tensor) -> tuple:
    """x's shape with symbolic dims as symbols (while tracing), for shape attributes."""
    return x._ir.type.shape if x._value is None else x._value.shape


def reshape(x, shape, name=None) -> Tensor:
    return apply("reshape", (as_tensor(x),), {"shape": dims(shape)})


def transpose(x, perm, name=None) -> Tensor:
    """x with its axes in the order `perm`; ``transpose(x, 1, 3)`` (two axes, which
    Paddle 3.3 takes too) swaps those two."""
    x = as_tensor(x)
    if isinstance(perm, int) and isinstance(name, int):
        order = list(range(x.ndim))
        order[perm], order[name] = order[name], order[perm]
        perm = order
    return apply("transpose", (x,), {"perm": dims(perm)})


def t(input, name=None) -> Tensor:  # noqa: A002  (Paddle's name)
    """The transpose of a tensor of at most 2 dims (Paddle's ``paddle.t``)."""
    x = as_tensor(input)
    if x.ndim > 2:
        raise IrflowError(f"t: the input must have at most 2 dims, got {x.ndim} "
                          f"(shape {list(exact_shape(x))}); use paddle.transpose")
    return x if x.ndim < 2 else transpose(x, [1, 0])


def moveaxis(x, source, destination, name=None) -> Tensor:
    """x with its axes `source` (an int or a list) moved to positions `destination`,
    the other axes keeping their order, as Paddle's and NumPy's moveaxis."""
    x = as_tensor(x)
    rank = builtins.max(x.ndim, 1)
    src = [a % rank for a in dims(source)]
    dst = [a % rank for a in dims(destination)]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"moveaxis: source {list(dims(source))} and destination "
                         f"{list(dims(destination))} must be lists of distinct axes of one "
                         "length")
    perm = [a for a in range(x.ndim) if a not in src]
    for position, axis in sorted(zip(dst, src)):
        perm.insert(position, axis)
    return transpose(x, perm)


def squeeze(x, axis=None, name=None) -> Tensor:
    x = as_tensor(x)
    if axis is None and x._value is None:
        _check_not_one(x)
    return apply("squeeze", (x,), {"axis": None if axis is None else dims(axis)})


def _check_not_one(x: Tensor) -> None:
    """``squeeze()`` in a traced program removes the dims that are 1 for every size; a
    dim whose size is known only at run time (a batch of ``None``) stays, where eager
    code removes it when it is 1. A program would give a result of another rank, so a
    run where such a size is 1 raises instead (an `assert`)."""
    for axis, size in enumerate(exact_shape(x)):
        if isinstance(size, str):
            _assert_size_is_not(x, axis, 1, (
                f"squeeze() without axis removes the dims of size 1, and dim {axis} of "
                f"this {len(exact_shape(x))}-D tensor ({size}, a size known only when the "
                f"program runs) is 1 in this call: the program, made for every size, keeps "
                f"that dim where eager code removes it; give squeeze the axes to remove"))


def _assert_size_is_not(x: Tensor, axis: int, size: int, message: str) -> None:
    """Raise `message` (a ShapeError at the user's line) on each run of the program
    where `axis` of traced x, a size known only then, is `size` (an `assert`)."""
    from .math import not_equal
    apply("assert", [not_equal(_traced_size(x, axis), size)], {
        "msg": f"{user_location()}: {message}", "error": "ShapeError"})


def unsqueeze(x, axis, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("unsqueeze", (x,), {"axis": _inserted_positions(dims(axis), x.ndim)})


def _inserted_positions(axes: tuple, rank: int) -> tuple:
    """The result positions of the size-1 dims unsqueeze(x, axes) inserts, as Paddle
    places them: one axis after another, each in the shape the previous ones made (a
    negative one counting from that shape's end), the 1s already inserted at or after
    it moving one place right. So [3, 1] on rank 3 gives positions 1 and 4 (the op's
    positions in the result would be 1 and 3), and [0, 0] two leading 1s."""
    inserted: list[int] = []
    for axis in axes:
        position = axis + rank + 1 if axis < 0 else axis
        if not 0 <= position <= rank:
            raise ShapeError(f"unsqueeze: axis {axis} of {list(axes)} is out of range for "
                             f"the rank-{rank} shape it is inserted into (from "
                             f"{-rank - 1} to {rank})")
        inserted = [p + 1 if p >= position else p for p in inserted] + [position]
        rank += 1
    return tuple(sorted(inserted))


def flatten(x, start_axis=0, stop_axis=-1, name=None) -> Tensor:
    x = as_tensor(x)
    rank = x.ndim
    if rank == 0:
        return reshape(x, [1])
    start, stop = start_axis % rank, stop_axis % rank
    if start > stop:
        raise IrflowError(f"flatten: start_axis {start_axis} comes after stop_axis {stop_axis}")
    shape = exact_shape(x)  # symbolic dims outside the flattened range stay symbolic
    return apply("reshape", (x,), {"shape": (*shape[:start], -1, *shape[stop + 1:])})


def concat(x, axis=0, name=None) -> Tensor:
    if hasattr(x, "_concat_elements"):  # a list that a compiled loop grows
        return x._concat_elements(int(axis))
    tensors = _one_dtype([as_tensor(t) for t in x], "concat")
    return apply("concat", tensors, {"axis": int(axis)})


def stack(x, axis=0, name=None) -> Tensor:
    if hasattr(x, "_stack_elements"):  # a list that a compiled loop grows
        return x._stack_elements(int(axis))
    tensors = _one_dtype([as_tensor(t) for t in x], "stack")
    return apply("stack", tensors, {"axis": int(axis)})


def _one_dtype(tensors: list[Tensor], what: str) -> list[Tensor]:
    """The tensors of a concat or stack, which must share a dtype, as in Paddle (a
    float64 among float32s was promoted silently)."""
    found = sorted({t.dtype.name for t in tensors})
    if len(found) > 1:
        raise DTypeError(f"{what}: the tensors have the dtypes {', '.join(found)}; they must "
                         "share one, as in Paddle: cast them with .astype()", user_location())
    return tensors


def _same_dtype(tensors: list[Tensor]) -> list[Tensor]:
    from .convert import promote
    first = tensors[0]
    for t in tensors[1:]:
        first, _ = promote(first, t)
    return [cast(t, first.dtype) for t in tensors]


def split(x, num_or_sections, axis=0, name=None) -> list[Tensor]:
    x = as_tensor(x)
    if not -x.ndim <= int(axis) < x.ndim:
        raise ShapeError(f"split: axis {axis} is out of range for a tensor of rank {x.ndim}")
    axis = int(axis) % x.ndim
    size = exact_shape(x)[axis]
    if isinstance(num_or_sections, int):
        listed, sections = None, _equal_sections(size, num_or_sections, axis)
    else:
        listed = list(dims(num_or_sections))
        sections = _listed_sections(size, listed, axis)
    out, start = [], 0
    for s in sections:
        out.append(slice(x, [axis], [start], [dim_add(start, s)]))
        start = dim_add(start, s)
    if listed is not None and -1 in listed:
        _check_rest_not_empty(out[listed.index(-1)], listed, axis)
    return out


def _equal_sections(size, num: int, axis: int) -> list:
    """`num` parts of equal size of a dim of `size`, which must divide evenly."""
    if num <= 0:
        raise ShapeError(f"split: num_or_sections={num} must be a positive number of parts")
    part = dim_div(size, num)
    if part is None and isinstance(size, int):
        raise ShapeError(f"split: dim {axis} of size {size} does not divide into {num} equal "
                         "parts")
    if part is None:
        raise SymbolicShapeError(f"split: dim {axis} has a size {size} known only when the "
                                 f"program runs, which may not divide into {num} equal parts; "
                                 "give the sizes of the parts", user_location())
    return [part] * num


def _listed_sections(size, sections: list, axis: int) -> list:
    """The sizes of the parts, one of which may be -1 (the rest of the dim). As in
    Paddle they must add up to the dim's size: a part too many or too few was a
    silently clipped or dropped row. On a symbolic dim, parts that add up to a static
    size fix the dim to it (a `DimMismatch`), and a -1 part of a symbolic size is
    checked when the program runs (`_check_rest_not_empty`)."""
    if sections.count(-1) > 1:
        raise ShapeError(f"split: at most one section may be -1, got {sections}")
    if any(isinstance(s, int) and s < -1 for s in sections):
        raise ShapeError(f"split: sections must be sizes (or one -1), got {sections}")
    total = 0
    for s in sections:
        total = total if s == -1 else dim_add(total, s)
    if -1 not in sections:
        if size != total:
            raise mismatch(size, total, f"split: the sections {sections} add up to {total}, "
                           f"not to the size {size} of dim {axis}").with_loc(user_location())
        return sections
    rest = dim_sub(size, total)
    if isinstance(rest, int) and rest <= 0:
        raise ShapeError(f"split: the sections {sections} other than -1 add up to {total}, "
                         f"which leaves nothing of dim {axis} (size {size})", user_location())
    return [rest if s == -1 else s for s in sections]


def _check_rest_not_empty(rest: Tensor, sections: list, axis: int) -> None:
    """As eager split refuses sections whose -1 would leave nothing of the dim, a
    traced split whose -1 part has a size known only when the program runs checks
    it then (an `assert`): with a size of 0 a program would give an empty part where
    eager code raises."""
    size = exact_shape(rest)[axis]
    if isinstance(size, str):
        _assert_size_is_not(rest, axis, 0, (
            f"split: the sections {sections} other than -1 add up to the whole of dim "
            f"{axis} in this call, which leaves nothing for the -1 (its size {size} is 0)"))


def chunk(x, chunks, axis=0, name=None) -> list[Tensor]:
    return split(x, chunks, axis)


def unbind(input, axis=0) -> list[Tensor]:  # noqa: A002
    x = as_tensor(input)
    size = exact_shape(x)[axis]
    if isinstance(size, str):
        raise SymbolicShapeError(
            f"unbind: axis {axis} has the size {size}, known only when the program runs, "
            "so the number of tensors it gives is too, and a Python list needs it now; "
            f"index the slices in a loop (for i in range(x.shape[{axis}]): ... x[i]), or "
            "give that axis a static size in the input_spec", user_location())
    if size == 0:
        return []
    return [squeeze(t, [axis]) for t in split(x, size, axis)]


def unstack(x, axis=0, num=None) -> list[Tensor]:
    """The slices of x along `axis`, that axis removed (``unbind``); `num`, if given,
    must be that axis's size, as in Paddle."""
    x = as_tensor(x)
    size = exact_shape(x)[axis]
    if num is not None and num != size:  # a symbolic size is fixed to num (DimMismatch)
        raise mismatch(size, num, f"unstack: num is {num} but axis {axis} of x (shape "
                       f"{list(exact_shape(x))}) has size {size}").with_loc(user_location())
    return unbind(x, axis)


def unflatten(x, axis, shape, name=None) -> Tensor:
    """x with axis `axis` split into `shape` (one -1 may stand for the rest)."""
    x = as_tensor(x)
    axis = int(axis) % x.ndim
    parts = [int(d) for d in (shape.tolist() if isinstance(shape, Tensor) else shape)]
    outer = list(exact_shape(x))
    return reshape(x, outer[:axis] + parts + outer[axis + 1:])


def rot90(x, k=1, axes=(0, 1), name=None) -> Tensor:
    """x rotated by 90 degrees `k` times in the plane of `axes`, from the first axis
    toward the second, as NumPy's and Paddle's rot90."""
    x = as_tensor(x)
    first, second = (int(a) % x.ndim for a in axes)
    if first == second or len(axes) != 2:
        raise ValueError(f"rot90: axes must be two different axes of x, got {list(axes)}")
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, [first, second])
    swapped = list(range(x.ndim))
    swapped[first], swapped[second] = second, first
    if k == 1:
        return transpose(flip(x, second), swapped)
    return flip(transpose(x, swapped), second)


def slice(input, axes, starts, ends) -> Tensor:  # noqa: A001,A002  (Paddle's names)
    x = as_tensor(input)
    bounds = [*_listed(starts), *_listed(ends)]
    if any(isinstance(b, Tensor) and b._value is None and traced_dim(b) is None
           for b in bounds):  # bounds from tensor values: as x[..., i:j] indexes
        index = [builtins.slice(None)] * x.ndim
        for axis, start, stop in zip(dims(axes), _listed(starts), _listed(ends)):
            index[axis] = builtins.slice(start, stop)
        return x[tuple(index)]
    return apply("slice", (x,), {"axes": dims(axes), "starts": dims(starts),
                                 "stops": dims(ends)})


def _listed(values) -> list:
    """Paddle's list argument (a list, a tuple, a 1-D tensor or a number) as a list,
    its one-element tensors (``paddle.full([1], k)``) as scalars."""
    if isinstance(values, Tensor):
        items = [values] if values.ndim == 0 else [values[k] for k in range(values.shape[0])]
    else:
        items = list(values) if isinstance(values, list | tuple) else [values]
    return [reshape(v, []) if isinstance(v, Tensor) and v.ndim == 1 else v for v in items]


def strided_slice(x, axes, starts, ends, strides, name=None) -> Tensor:
    return apply("slice", (as_tensor(x),), {"axes": dims(axes), "starts": dims(starts),
                                            "stops": dims(ends), "steps": dims(strides)})


def crop(x, shape=None, offsets=None, name=None) -> Tensor:
    """The block of x of `shape` starting at `offsets` (default: all of x, from 0),
    as Paddle's: a -1 in `shape` takes the rest of that axis after its offset; both
    may be lists or int tensors. A block reaching past x's end is refused."""
    x = as_tensor(x)
    size = exact_shape(x)
    shape = size if shape is None else dims(shape)
    offsets = (0,) * x.ndim if offsets is None else dims(offsets)
    if len(shape) != x.ndim or len(offsets) != x.ndim:
        raise ShapeError(f"crop: shape and offsets need one entry per axis of x (rank "
                         f"{x.ndim}), got shape {list(shape)} and offsets {list(offsets)}")
    ends = [dim_sub(d, o) if n == -1 else dim_add(o, n)
            for d, o, n in zip(size, offsets, shape)]
    for d, o, e in zip(size, offsets, ends):
        if isinstance(d, int) and isinstance(e, int) and not 0 <= o <= e <= d:
            raise ShapeError(f"crop: shape {list(shape)} at offsets {list(offsets)} "
                             f"reaches past x of shape {list(size)}")
    ends = [d if n == -1 else e for d, n, e in zip(size, shape, ends)]
    return apply("slice", (x,), {"axes": tuple(range(x.ndim)), "starts": tuple(offsets),
                                 "stops": tuple(ends)})


def as_strided(x, shape, stride, offset=0, name=None) -> Tensor:
    """The tensor of `shape` whose element ``[i, j, ...]`` is element ``offset_elems
    + i*stride[0] + j*stride[1] + ...`` of x's elements in row-major order, as Paddle's
    view of x's memory; `offset` counts bytes, as Paddle's does. It is a gather (a
    copy, not a view): the gradient of an element read more than once is the sum
    over its reads."""
    x = as_tensor(x)
    shape, stride = dims(shape), dims(stride)
    if len(shape) != len(stride):
        raise ShapeError(f"as_strided: shape {list(shape)} and stride {list(stride)} need "
                         "the same length")
    itemsize = x.dtype.np.itemsize
    if offset % itemsize:
        raise ValueError(f"as_strided: offset is in bytes, as in Paddle, and must be a "
                         f"multiple of the {x.dtype.name} element size {itemsize}, got {offset}")
    index = np.full(shape, offset // itemsize, dtype=np.int64)
    for axis, (n, step) in enumerate(zip(shape, stride)):
        index += (np.arange(n) * step).reshape([n if a == axis else 1 for a in range(len(shape))])
    total = numel(exact_shape(x))
    if index.size and (index.min() < 0 or index.max() >= total):
        raise ShapeError(f"as_strided: shape {list(shape)}, stride {list(stride)} and "
                         f"offset {offset} read element {int(index.max())} (or "
                         f"{int(index.min())}) of x's {total}")
    return pick(reshape(x, [-1]), Tensor._from_array(index), 0)


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1) -> Tensor:  # noqa: A002
    """Ids of a table split into `nshards` shards of ``ceil(index_num / nshards)`` rows,
    as seen by shard `shard_id`: an id in that shard becomes its row in the shard, any
    other id `ignore_value` (Paddle's rule, for a model-parallel embedding)."""
    x = as_tensor(input)
    if x.dtype not in (dtypes.int32, dtypes.int64):
        raise DTypeError(f"shard_index: input must be int32 or int64, got {x.dtype.name}")
    if not 0 <= shard_id < nshards:
        raise ValueError(f"shard_index: shard_id must be in [0, {nshards}), got {shard_id}")
    size = (index_num + nshards - 1) // nshards
    low = shard_id * size
    inside = logical_and(greater_equal(x, low), less_than(x, low + size))
    return select(inside, subtract(x, low), as_tensor(ignore_value, like=x))


def flip(x, axis, name=None) -> Tensor:
    x = as_tensor(x)
    axes = dims(axis)
    n = len(axes)
    return apply("slice", (x,), {"axes": axes, "starts": (None,) * n, "stops": (None,) * n,
                                 "steps": (-1,) * n})


def roll(x, shifts, axis=None, name=None) -> Tensor:
    """x with elements moved `shifts` places along `axis` (the flattened x when
    None), wrapping around."""
    shifts = [int(s) for s in (shifts.tolist() if isinstance(shifts, Tensor) else
                               [shifts] if isinstance(shifts, int) else shifts)]
    axis = None if axis is None else list(dims(axis))
    return apply("roll", (as_tensor(x),), {"shifts": tuple(shifts),
                                           "axis": None if axis is None else tuple(axis)})


def meshgrid(*args, name=None) -> list[Tensor]:
    """Grids of the 1-D inputs, "ij"-indexed: output k varies along axis k."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        args = tuple(args[0])
    tensors = [as_tensor(t) for t in args]
    shape = tuple(exact_shape(t)[0] if t.ndim else 1 for t in tensors)
    out = []
    for k, t in enumerate(tensors):
        along = [1] * len(tensors)
        along[k] = shape[k]
        out.append(broadcast_to(reshape(t, along), shape))
    return out


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None) -> Tensor:
    """The n-th forward difference of x along `axis` (``x[i+1] - x[i]``, n times),
    after joining `prepend` before x and `append` after it along that axis. A bool
    tensor's difference is whether neighbours differ (xor), as in Paddle; n at least
    the axis' size gives an empty axis."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ShapeError("diff needs a tensor of at least 1 dim, as in Paddle, got a 0-D "
                         "tensor")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"diff: n must be a positive int, as in Paddle, got {n!r}")
    axis = int(axis) % x.ndim
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = concat([as_tensor(t, like=x) for t in parts], axis)
    step = logical_xor if x.dtype.is_bool else subtract
    for _ in range(n):
        later = apply("slice", (x,), {"axes": (axis,), "starts": (1,), "stops": (None,)})
        earlier = apply("slice", (x,), {"axes": (axis,), "starts": (None,), "stops": (-1,)})
        x = step(later, earlier)
    return x


def repeat_interleave(x, repeats, axis=None, name=None) -> Tensor:
    """Each element (or slice along `axis`) of x repeated `repeats` times in place;
    x is flattened when axis is None. Per-element repeats (a tensor) give a
    data-dependent length, known eagerly only."""
    x = as_tensor(x)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis = int(axis) % builtins.max(x.ndim, 1)
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = repeats._concrete("repeat_interleave with a tensor of repeats").item() \
            if repeats._value is not None else repeats
    if isinstance(repeats, int):
        shape = list(exact_shape(x))
        y = unsqueeze(x, [axis + 1])
        wide = shape[:axis + 1] + [repeats] + shape[axis + 1:]
        y = broadcast_to(y, wide)
        return reshape(y, shape[:axis] + [dim_mul(shape[axis], repeats)] + shape[axis + 1:])
    counts = repeats._value if isinstance(repeats, Tensor) else np.asarray(repeats)
    if counts is None:
        raise ConversionError("repeat_interleave with per-element repeats computed in the "
                          "program gives a data-dependent length; give the repeats as a "
                          "Python list or an int", user_location())
    index = np.repeat(np.arange(len(counts)), counts)
    return gather(x, Tensor._from_array(index.astype(np.int64)), axis)


def gather_nd(x, index, name=None) -> Tensor:
    """The slices of x that the last axis of `index` addresses: index [..., k] picks
    x[i0, ..., ik-1, ...], giving index.shape[:-1] + x.shape[k:]."""
    x, index = as_tensor(x), _as_index(as_tensor(index))
    k, shape, lead = _nd_index_shapes(x, index, "gather_nd")
    if k == 0:
        return broadcast_to(reshape(x, (1,) * len(lead) + shape), lead + shape)
    flat = reshape(x, (numel(shape[:k]),) + shape[k:])
    return reshape(gather(flat, _linear_index(x, index, k), 0), lead + shape[k:])


def scatter_nd_add(x, index, updates, name=None) -> Tensor:
    """x plus `updates` added at the slices the last axis of `index` addresses (as in
    `gather_nd`; repeated indices add up): updates has index.shape[:-1] +
    x.shape[k:]."""
    x, index = as_tensor(x), _as_index(as_tensor(index))
    updates = cast(as_tensor(updates, like=x), x.dtype)
    k, shape, lead = _nd_index_shapes(x, index, "scatter_nd_add")
    if k == 0:
        from .math import sum as reduce_sum
        return add(x, reduce_sum(reshape(updates, (-1,) + shape), 0))
    flat = reshape(x, (numel(shape[:k]),) + shape[k:])
    rows = reshape(updates, (-1,) + shape[k:])
    out = apply("scatter_add", (flat, _linear_index(x, index, k), rows), {"axis": 0})
    return reshape(out, shape)


def _nd_index_shapes(x: Tensor, index: Tensor, what: str):
    """(k, x's shape, index's shape less its last axis) for an index into k axes of x."""
    k = index.shape[-1]
    shape = tuple(exact_shape(x))
    if k > len(shape):
        raise IndexError(f"{what}: index addresses {k} axes of a rank-{len(shape)} tensor")
    return k, shape, tuple(exact_shape(index))[:-1]


def _linear_index(x: Tensor, index: Tensor, k: int) -> Tensor:
    """The row-major offsets [M] into x's first k axes of the index tuples of `index`."""
    shape = tuple(exact_shape(x))
    sizes = [d if isinstance(d, int) else _traced_size(x, a) for a, d in enumerate(shape[:k])]
    linear, stride = None, 1
    for a in range(k - 1, -1, -1):
        part = squeeze(slice(index, [-1], [a], [a + 1]), [-1])
        part = _in_range(part, sizes[a], str(shape[a]))
        term = multiply(part, stride)
        linear = term if linear is None else add(linear, term)
        stride = stride * sizes[a]
    return reshape(linear, [-1])


def _traced_size(x: Tensor, axis: int) -> Tensor:
    """A symbolic dim of traced x as an int64 scalar computed when the program runs."""
    from .attribute import shape
    return squeeze(slice(shape(x), [0], [axis], [axis + 1]), [0])


def scatter(x, index, updates, overwrite=True, name=None) -> Tensor:
    """x with rows `index` (a 1-D int tensor, along axis 0) replaced by the rows of
    `updates` (with repeated indices the last one wins, and alone gets the gradient:
    Paddle's gives it to every repeat, though the others change nothing), or with
    `overwrite=False` set to the sum of the updates they get."""
    x = as_tensor(x)
    index = reshape(_as_index(as_tensor(index)), [-1])
    updates = cast(as_tensor(updates, like=x), x.dtype)
    rows = unsqueeze(index, list(range(1, x.ndim)))
    rows = broadcast_to(rows, (exact_shape(index)[0],) + tuple(exact_shape(x))[1:])
    if overwrite:
        landed = _landed_values(x, rows, updates, 0)
        return apply("put_along_axis", (x, rows, landed), {"axis": 0, "reduce": "assign"})
    from .creation import zeros_like
    cleared = apply("put_along_axis", (x, rows, zeros_like(updates)),
                    {"axis": 0, "reduce": "assign"})
    return apply("scatter_add", (cleared, index, updates), {"axis": 0})


def masked_fill(x, mask, value, name=None) -> Tensor:
    """x with `value` where the bool `mask` (broadcast with x) holds."""
    x = as_tensor(x)
    value = cast(as_tensor(value, like=x), x.dtype)
    return select(as_tensor(mask), value, x)


def broadcast_to(x, shape, name=None) -> Tensor:
    return apply("broadcast_to", (as_tensor(x),), {"shape": dims(shape)})


expand = broadcast_to


def expand_as(x, y, name=None) -> Tensor:
    return apply("broadcast_to", (as_tensor(x),), {"shape": exact_shape(y)})


def tile(x, repeat_times, name=None) -> Tensor:
    x = as_tensor(x)
    reps = dims(repeat_times)
    shape = list(exact_shape(x))
    shape = [1] * (len(reps) - len(shape)) + shape
    reps = (1,) * (len(shape) - len(reps)) + reps
    interleaved = [d for pair in zip([1] * len(shape), shape) for d in pair]
    expanded = [d for pair in zip(reps, shape) for d in pair]
    y = reshape(x, interleaved)
    y = broadcast_to(y, expanded)
    return reshape(y, [dim_mul(r, d) for r, d in zip(reps, shape)])


def gather(x, index, axis=None, name=None) -> Tensor:
    """The entries of x at `index` along `axis` (default 0). As in Paddle the index is
    0-D, 1-D or [N, 1], which counts as [N] (it kept the 1: [N, 1, ...])."""
    index = as_tensor(index)
    if index.ndim == 2 and exact_shape(index)[1] == 1:
        index = reshape(index, [-1])
    elif index.ndim > 1:
        raise ShapeError(f"gather: the index must be 0-D, 1-D or of shape [N, 1], as in "
                         f"Paddle, got shape {list(index.shape)}; paddle.take_along_axis "
                         "or gather_nd take others")
    return pick(x, index, 0 if axis is None else int(axis))


def pick(x, index, axis: int) -> Tensor:
    """np.take(x, index, axis): the entries of x at an int `index` of any shape, giving
    x.shape[:axis] + index.shape + x.shape[axis+1:] (Paddle's gather takes only 1-D
    indices; an embedding's ids have any shape)."""
    return apply("gather", (as_tensor(x), _as_index(as_tensor(index))), {"axis": axis})


def index_select(x, index, axis=0, name=None) -> Tensor:
    """The entries of x at the 1-D (or [N, 1]) `index` along `axis`."""
    index = as_tensor(index)
    if index.ndim == 0:
        raise ShapeError("index_select: the index must be 1-D, as in Paddle, got a 0-D "
                         "tensor; use paddle.gather, or index[None]")
    return gather(x, index, axis)


def take_along_axis(arr, indices, axis, broadcast=True) -> Tensor:
    """The entries of `arr` at `indices` along `axis`. With `broadcast` (default) the
    index's other dims broadcast against arr's; without it, as torch.gather, they may
    be smaller than arr's and the result has the index's shape."""
    arr, index = as_tensor(arr), _as_index(as_tensor(indices))
    axis = _along_axis(arr, index, axis, "take_along_axis")
    if broadcast:
        arr = _widened_to_index(arr, index, axis)
    else:
        arr = _cut_to_index(arr, index, axis, "take_along_axis")
    return apply("take_along_axis", (arr, index), {"axis": axis})


def _widened_to_index(arr: Tensor, index: Tensor, axis: int) -> Tensor:
    """arr broadcast to the index's size on the dims other than `axis` where arr has
    size 1 and the index more, as Paddle's take_along_axis broadcasts both ways (an
    arr of shape [1, 3] read with an index of shape [2, 2] gives [2, 2])."""
    shape = list(exact_shape(arr))
    wide = [i if a != axis and d == 1 and isinstance(i, int) and i > 1 else d
            for a, (d, i) in enumerate(zip(shape, exact_shape(index)))]
    return arr if wide == shape else broadcast_to(arr, wide)


def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True,
                   broadcast=True) -> Tensor:
    """arr with `values` put at the positions take_along_axis(arr, indices, axis)
    reads, combined as `reduce` says: 'assign' writes (where an index repeats, the
    last write lands and alone gets the gradient, as in Paddle), 'add' sums, 'mul'
    (or 'multiply') multiplies, 'mean' averages, 'amax' / 'amin' keep the largest /
    smallest (equal winners share the gradient evenly, as in Paddle). With
    `include_self=False` the positions written start from nothing, not from arr's
    entries (an add is the sum of the values alone, a mean their mean); positions no
    index names keep arr's entries. An int mean truncates toward zero, as Paddle's.
    Without `broadcast`, as torch.scatter, only the index's own positions are
    written (its other dims may be smaller than arr's) and `values` is read at the
    same positions."""
    arr, index = as_tensor(arr), _as_index(as_tensor(indices))
    axis = _along_axis(arr, index, axis, "put_along_axis")
    values = cast(as_tensor(values, like=arr), arr.dtype)
    if broadcast:
        return _put_along(arr, index, values, axis, reduce, include_self)
    if values.ndim:
        values = _cut_to_index(values, index, None, "put_along_axis: values")
    block = _leading_slice(arr, index, axis, "put_along_axis")
    if block is None:
        return _put_along(arr, index, values, axis, reduce, include_self)
    updated = _put_along(apply("slice", (arr,), block), index, values, axis, reduce,
                         include_self)
    return apply("set_slice", (arr, updated), block)


def index_add(x, index, axis, value, alpha=1, name=None) -> Tensor:
    """x with ``alpha * value`` added along `axis` at the positions of the 1-D `index`:
    ``value`` has x's shape but ``len(index)`` along `axis`, and repeated indices add
    up, as Paddle's."""
    x = as_tensor(x)
    value = cast(as_tensor(value, like=x), x.dtype)
    index = _as_index(as_tensor(index))
    if index.ndim != 1 or value.ndim != x.ndim:
        raise ShapeError(f"index_add: index must be 1-D and value of x's rank {x.ndim}, got "
                         f"index of shape {list(index.shape)} and value of shape "
                         f"{list(value.shape)}")
    axis = int(axis) % x.ndim
    along = apply("reshape", (index,), {"shape": tuple(
        exact_shape(index)[0] if d == axis else 1 for d in range(x.ndim))})
    if alpha != 1:
        value = multiply(value, alpha)
    return put_along_axis(x, broadcast_to(along, exact_shape(value)), value, axis,
                          reduce="add", broadcast=False)


_PUT_REDUCES = ("assign", "add", "mul", "multiply", "mean", "amax", "amin")


def _put_along(arr, index, values, axis, reduce, include_self) -> Tensor:
    if reduce not in _PUT_REDUCES:
        raise ValueError(f"put_along_axis: reduce must be one of {', '.join(_PUT_REDUCES)}, "
                         f"as in Paddle, got {reduce!r}")
    if reduce == "mean":
        return _put_mean(arr, index, values, axis, include_self)
    if reduce in ("mul", "multiply", "amax", "amin"):
        return _put_dense(arr, index, values, axis, reduce, include_self)
    if reduce == "add" and not include_self:  # the positions written start from 0
        arr = apply("put_along_axis", (arr, index, as_tensor(0, like=arr)),
                    {"axis": axis, "reduce": "assign"})
    if reduce == "assign":
        values = _landed_values(arr, index, values, axis)
    return apply("put_along_axis", (arr, index, values), {"axis": axis, "reduce": reduce})


def _put_mean(arr: Tensor, index: Tensor, values: Tensor, axis: int,
              include_self: bool) -> Tensor:
    """put_along_axis's 'mean': the sum of 'add' divided by how many terms each
    position got (arr's entry counting as one with `include_self`). A position no
    index names has a count of at least 1 and a sum of arr's entry, so it keeps it."""
    from .creation import full_like
    from .math import divide
    total = _put_along(arr, index, values, axis, "add", include_self)
    counts = apply("put_along_axis", (full_like(arr, 1 if include_self else 0),
                                      index, as_tensor(1, like=arr)),
                   {"axis": axis, "reduce": "add"})
    counts = maximum(counts, as_tensor(1, like=counts))
    if arr.dtype.is_float:
        return divide(total, counts)
    return cast(divide(cast(total, dtypes.float64), cast(counts, dtypes.float64)), arr.dtype)


def _put_dense(arr: Tensor, index: Tensor, values: Tensor, axis: int, reduce: str,
               include_self: bool) -> Tensor:
    """put_along_axis's 'mul', 'amax' and 'amin', from ops that have gradients:
    each value is spread over a one-hot row of the axis (1, or a value that never
    wins, where it does not go) and the rows are reduced with prod, max or min, arr
    joining as one more row with `include_self`. So the gradients are the product
    rule's, and an even share among equal winners. Memory: the index's size times
    the axis' length."""
    from .creation import arange
    from .logic import equal
    from .math import _sentinel, any as any_, max as max_, min as min_, prod
    shape = tuple(exact_shape(arr))
    shape = shape[:axis] + (exact_shape(index)[axis],) + shape[axis + 1:]
    length = exact_shape(arr)[axis]
    length = length if isinstance(length, int) else _traced_size(arr, axis)
    index = broadcast_to(cast(index, dtypes.int64), shape)
    index = select(less_than(index, 0), add(index, length), index)
    hits = equal(unsqueeze(moveaxis(index, axis, -1), -1), arange(length, dtype="int64"))
    spread_values = unsqueeze(moveaxis(broadcast_to(values, shape), axis, -1), -1)
    reduce_rows = {"amax": max_, "amin": min_}.get(reduce, prod)
    neutral = 1 if reduce_rows is prod else _sentinel(arr.dtype, reduce == "amax")
    rows = select(hits, spread_values, as_tensor(neutral, like=arr))
    base = moveaxis(arr, axis, -1)
    if include_self:
        rows = concat([unsqueeze(base, -2), rows], axis=-2)
    combined = select(any_(hits, axis=-2), reduce_rows(rows, -2), base)
    return moveaxis(combined, -1, axis)


def _landed_values(arr: Tensor, index: Tensor, values: Tensor, axis: int) -> Tensor:
    """`values` broadcast to the index's shape, passing gradients on only where their
    write lands. Where an index repeats along `axis`, one write overwrites the others,
    and Paddle's put_along_axis gives the gradient to that one alone (the op's own
    VJP gives it to all of them). Which write lands is found by the same op writing
    each position's number; values that need no gradient are returned as they are."""
    if not grad_enabled() or values.stop_gradient:
        return values
    from .creation import arange, full_like
    shape = tuple(exact_shape(arr))
    shape = shape[:axis] + (exact_shape(index)[axis],) + shape[axis + 1:]
    index = broadcast_to(index, shape)
    count = shape[axis] if isinstance(shape[axis], int) else _traced_size(index, axis)
    numbers = reshape(arange(count), [-1 if d == axis else 1 for d in range(len(shape))])
    numbers = broadcast_to(numbers, shape)
    landed = apply("put_along_axis", (full_like(arr, -1, dtypes.int64), index, numbers),
                   {"axis": axis, "reduce": "assign"})
    won = apply("take_along_axis", (landed, index), {"axis": axis}) == numbers
    values = broadcast_to(values, shape)
    return select(won, values, values.detach())


def _along_axis(arr: Tensor, index: Tensor, axis, what: str) -> int:
    """`axis` made non-negative, once it is known to be an axis of arr and the index
    to have arr's rank (the op checks both too, after the cut that needs the axis)."""
    if index.ndim != arr.ndim:
        raise ShapeError(f"{what}: indices must have the rank of arr, as in Paddle: arr "
                         f"has the shape {list(arr.shape)}, indices {list(index.shape)}")
    if not -arr.ndim <= int(axis) < arr.ndim:
        raise ShapeError(f"{what}: axis {axis} is out of range for a tensor of rank "
                         f"{arr.ndim}")
    return int(axis) % arr.ndim


def _cut_to_index(x: Tensor, index: Tensor, axis: int | None, what: str) -> Tensor:
    """x cut to the index's size on every axis but `axis` (all of them if None): the
    block that Paddle's broadcast=False addresses, where the index may be smaller
    than x but never larger."""
    attrs = _leading_slice(x, index, axis, what)
    return x if attrs is None else apply("slice", (x,), attrs)


def _leading_slice(x: Tensor, index: Tensor, axis: int | None, what: str) -> dict | None:
    """The `slice` attributes cutting x to the index's leading block (see
    `_cut_to_index`), or None when x already has the index's size there."""
    cut = []
    for a, (x_dim, index_dim) in enumerate(zip(exact_shape(x), exact_shape(index))):
        if a == axis or x_dim == index_dim:
            continue
        if isinstance(x_dim, int) and isinstance(index_dim, int) and index_dim > x_dim:
            raise ShapeError(f"{what} with broadcast=False: indices (shape "
                             f"{list(index.shape)}) may not be larger than the tensor (shape "
                             f"{list(x.shape)}) at dim {a}, as in Paddle")
        cut.append((a, index_dim))
    if not cut:
        return None
    return {"axes": tuple(a for a, _ in cut), "starts": (0,) * len(cut),
            "stops": tuple(d for _, d in cut), "steps": None}


def _as_index(index: Tensor) -> Tensor:
    if index.dtype not in (dtypes.int32, dtypes.int64):
        raise DTypeError(f"an index tensor must be int32 or int64, got {index.dtype.name}")
    return index


def clone(x, name=None) -> Tensor:
    x = as_tensor(x)
    return apply("cast", (x,), {"dtype": x.dtype})


def astype(x, dtype, name=None) -> Tensor:
    """x converted to `dtype` (Paddle's paddle.cast); Python numbers are accepted."""
    return cast(as_tensor(x), dtype)


# ---------------------------------------------------------------- indexing
#
# ``x[index]`` follows Paddle, which follows NumPy except that integers are always
# basic indices (they remove their axis before tensor indices apply, so
# ``x[0, :, idx]`` is ``x[0][:, idx]``). An index is split into parts for registered
# ops: None inserts axes (unsqueeze, first), ints and slices are one `slice` op (ints
# then squeezed), integer tensors gather (several broadcast together and address their
# axes jointly, as in NumPy: adjacent ones keep their place, otherwise the indexed
# dims come first). A bool mask has a data-dependent result shape, so it is accepted
# in reads as a gather of the positions `nonzero` finds (a data-dependent size: a
# fresh symbol when compiled), and in assignments (``x[x > 0] = 0``) as a select.


_BASIC_ITEMS = (int, builtins.slice)  # the common index items, which need no conversion


class _Index:
    """An index expression resolved against a tensor of some rank."""

    def __init__(self, x: Tensor, index):
        items = index if isinstance(index, tuple) else (index,)
        if not builtins.all(type(item) in _BASIC_ITEMS for item in items):
            items = self._expand_ellipsis(x, items)
        shape = exact_shape(x)
        self.new_axes: list[int] = []      # None: unsqueeze at these positions first
        self.axes, self.starts, self.stops, self.steps = [], [], [], []
        self.squeezed: list[int] = []      # axes an int index removes
        self.tensors: list[tuple[int, Tensor]] = []  # (axis, int tensor)
        self.mask: tuple[int, Tensor] | None = None   # (first axis, bool tensor)
        self.mask_dims: tuple = ()                     # the dims of x the mask covers
        axis = 0
        for item in items:
            if item is None:
                self.new_axes.append(axis)
                axis += 1
                continue
            rank = len(shape) + len(self.new_axes)
            if axis >= rank:
                raise IndexError(f"too many indices for a tensor of rank {len(shape)}")
            dim = shape[axis - len(self.new_axes)]
            if isinstance(item, builtins.slice):
                self._add_slice(axis, item, x, axis - len(self.new_axes), dim)
            elif isinstance(item, int | np.integer):  # bools are masks by now
                self._add_int(axis, int(item), dim)
            elif item.dtype.is_bool:
                if self.mask is not None:
                    raise IrflowError("an index can hold only one bool mask")
                self.mask = (axis, item)
                x_axis = axis - len(self.new_axes)
                self.mask_dims = tuple(shape[x_axis:x_axis + item.ndim])
                axis += item.ndim
                continue
            else:
                self.tensors.append((axis, item))
            axis += 1
        if self.mask is not None and self.tensors:
            self._mask_as_positions()

    def _mask_as_positions(self) -> None:
        """A bool mask beside integer tensor indices becomes the int tensors of its
        true positions, one per dim it covers, as NumPy and Paddle read it
        (``x[mask, idx]`` is ``x[*mask.nonzero(), idx]``). Only a mask with a value
        (eager code) has known positions."""
        axis, mask = self.mask
        if mask._value is None:
            raise IrflowError("a bool mask cannot be combined with integer tensor indices "
                              "in compiled code (its true positions are known only when the "
                              "program runs); index with paddle.nonzero(mask) instead")
        _check_mask_dims(mask, self.mask_dims)
        positions = np.nonzero(mask._value)
        self.tensors += [(axis + k, as_tensor(p.astype(np.int64)))
                         for k, p in enumerate(positions)]
        self.tensors.sort(key=lambda pair: pair[0])
        self.mask = None

    @staticmethod
    def _expand_ellipsis(x: Tensor, items: tuple) -> list:
        """The index with Ellipsis replaced by full slices and lists, arrays and bools
        turned into tensors."""
        items = [_index_item(item) for item in items]
        at = [i for i, v in enumerate(items) if v is Ellipsis]
        if not at:
            return items
        if len(at) > 1:
            raise IndexError("an index can hold only one Ellipsis (...)")
        used = builtins.sum(v.ndim if isinstance(v, Tensor) and v.dtype.is_bool else 1
                            for v in items if v is not None and v is not Ellipsis)
        fill = [builtins.slice(None)] * builtins.max(x.ndim - used, 0)
        return items[:at[0]] + fill + items[at[0] + 1:]

    def _add_slice(self, axis: int, item: builtins.slice, x: Tensor, x_axis: int, dim) -> None:
        if item.start is None and item.stop is None and item.step is None:
            return
        step = 1 if item.step is None else int(item.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        start, stop = _bound(item.start, dim), _bound(item.stop, dim)
        if isinstance(start, Tensor) or isinstance(stop, Tensor):
            if step != 1:
                raise IrflowError("a slice whose bounds depend on tensor values must have "
                                  "step 1")
            self.tensors.append((axis, _positions(x, x_axis, dim, start, stop)))
        elif (start, stop, step) != (None, None, 1):
            self.axes.append(axis)
            self.starts.append(start)
            self.stops.append(stop)
            self.steps.append(step)

    def _add_int(self, axis: int, i: int, dim) -> None:
        if isinstance(dim, int) and not -dim <= i < dim:
            raise IndexError(f"index {i} is out of range for axis {axis} of size {dim}")
        self.axes.append(axis)
        self.starts.append(i)
        self.stops.append(i + 1 if i != -1 else None)
        self.steps.append(1)
        self.squeezed.append(axis)

    @property
    def slice_attrs(self) -> dict | None:
        if not self.axes:
            return None
        return {"axes": tuple(self.axes), "starts": tuple(self.starts),
                "stops": tuple(self.stops), "steps": tuple(self.steps)}

    def after_squeeze(self, axis: int) -> int:
        return axis - builtins.sum(1 for a in self.squeezed if a < axis)


def _index_item(item):
    if item is None or item is Ellipsis or isinstance(item, builtins.slice):
        return item
    if isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_):
        return item
    if isinstance(item, Tensor | list | np.ndarray | bool | np.bool_):
        t = as_tensor(item)
        if t.dtype.is_float:
            raise IndexError(f"an index tensor, list or array must hold ints or bools, got "
                             f"{t.dtype.name}")
        return t
    raise IndexError(f"unsupported index {item!r}: use ints, slices, None, Ellipsis, or "
                     "int or bool tensors")


def _bound(v, dim):
    """A slice bound on an axis of size `dim`: None, an int, the symbolic dim a traced
    size computes when that is a position (no negative terms, or the size minus an
    int), else the traced tensor itself (its value, and sign, known at run time)."""
    if v is None or not isinstance(v, Tensor) or v._value is not None:
        return None if v is None else int(v)
    bound = traced_dim(v)
    if isinstance(bound, str) and any(c < 0 for c, _ in dim_terms(bound)) and \
            not isinstance(dim_sub(bound, dim), int):
        return v
    return v if bound is None else bound


def _positions(x: Tensor, axis: int, dim, start, stop) -> Tensor:
    """The indices ``x[start:stop]`` takes along `axis` (of size `dim`), as a 1-D
    tensor, for bounds known only when the program runs: negative ones count from
    the end and both are clipped to the axis, as in Python."""
    from .creation import arange
    size = dim if isinstance(dim, int) else apply("numel", (x,), {"axis": (axis,)})

    def clipped(bound, default):
        if bound is None:
            return default
        bound = cast(as_tensor(bound), dtypes.int64)
        return minimum(maximum(select(bound < 0, add(bound, size), bound), 0), size)

    return arange(clipped(start, 0), clipped(stop, size))


def _basic(x: Tensor, parts: _Index) -> tuple[Tensor, Tensor, Tensor]:
    """x with its new axes inserted, its slice by ints and slices, and that slice with
    the ints' axes removed."""
    if parts.new_axes:
        x = unsqueeze(x, parts.new_axes)
    sliced = x
    attrs = parts.slice_attrs
    if attrs is not None:
        sliced = apply("slice", (x,), attrs)
    region = sliced
    if parts.squeezed:
        region = apply("squeeze", (sliced,), {"axis": tuple(parts.squeezed)})
    return x, sliced, region


def getitem(x: Tensor, index) -> Tensor:
    parts = _Index(x, index)
    _, _, y = _basic(x, parts)
    if parts.mask is not None:
        return _masked_read(y, parts.after_squeeze(parts.mask[0]), parts.mask[1])
    if parts.tensors:
        tensors = [(parts.after_squeeze(a), t) for a, t in parts.tensors]
        y, axis, index_t, _ = _joint_index(y, tensors)
        y = apply("gather", (y, index_t), {"axis": axis})
    return y


def _check_mask_dims(mask: Tensor, dims: tuple) -> None:
    """A bool mask must have exactly the dims it indexes: an IndexError otherwise, as
    in eager code, except where only symbolic dims differ (another input's symbol, or
    a static size), whose `DimMismatch` makes the frontend trace again with them one
    symbol (or the size fixed), as it does for ``x + y``."""
    shape = tuple(exact_shape(mask))
    message = (f"a bool mask of shape {list(shape)} does not match the dims {list(dims)} "
               f"it indexes")
    try:
        check_same_shape(shape, dims, message)
    except DimMismatch:
        raise
    except ShapeError:
        raise IndexError(message) from None


def _masked_read(region: Tensor, axis: int, mask: Tensor) -> Tensor:
    """``region[..., mask, ...]``: the mask's dims (from `axis`) become one dim
    holding the selected elements, as many as the mask has true ones."""
    from .search import flat_positions
    shape = tuple(exact_shape(region))
    k = mask.ndim
    _check_mask_dims(mask, shape[axis:axis + k])
    merged = reshape(region, shape[:axis] + (numel(shape[axis:axis + k]),) + shape[axis + k:])
    return gather(merged, flat_positions(mask), axis)


def _joint_index(y: Tensor, tensors: list) -> tuple[Tensor, int, Tensor, tuple]:
    """Reduce tensor indices at several axes of y to one index at one axis: y with
    those axes moved together (to the front unless adjacent, as NumPy does) and
    merged, the axis, the combined index, and the permutation applied (or ())."""
    axes = [a for a, _ in tensors]
    if len(tensors) == 1:
        return y, axes[0], _as_index(tensors[0][1]), ()
    perm = ()
    if axes != list(range(axes[0], axes[0] + len(axes))):
        perm = tuple(axes) + tuple(a for a in range(y.ndim) if a not in axes)
        y = transpose(y, perm)
        axes = list(range(len(axes)))
    first = axes[0]
    shape = exact_shape(y)
    dims = shape[first:first + len(axes)]
    linear, stride = None, 1
    for a, (_, t) in reversed(list(enumerate(tensors, first))):
        size = shape[a] if isinstance(shape[a], int) else _traced_size(y, a)
        term = multiply(_in_range(_as_index(t), size, str(shape[a])), stride)
        linear = term if linear is None else add(linear, term)
        stride = stride * size
    merged = apply("reshape", (y,), {"shape": (*shape[:first], numel(dims),
                                               *shape[first + len(axes):])})
    return merged, first, linear, perm


def _in_range(index: Tensor, dim, size_text: str | None = None) -> Tensor:
    """`index` (int64) with negative entries counted from the end, its range checked
    first, since combining indices into one offset would otherwise hide a bad one: in
    eager code now, in a traced program by an `assert` op (IndexError) each time it
    runs. `dim` is an int, or (a symbolic size) a traced int64 scalar that
    `size_text` names. Wrapping with `where`, not a remainder, keeps an empty index
    into an empty axis valid."""
    from .math import all as reduce_all
    index = cast(index, dtypes.int64)
    if index._value is not None and isinstance(dim, int):
        if index._value.size:
            low, high = index._value.min(), index._value.max()
            if low < -dim or high >= dim:
                bad = low if low < -dim else high
                raise IndexError(f"index {bad} is out of range for an axis of size {dim}")
    else:
        inside = logical_and(greater_equal(index, -dim), less_than(index, dim))
        apply("assert", [reduce_all(inside)], {
            "msg": f"{user_location()}: an index is out of range for an axis of size "
                   f"{dim if size_text is None else size_text}", "error": "IndexError"})
    return select(less_than(index, 0), add(index, dim), index)


def setitem(x: Tensor, index, value) -> None:
    """``x[index] = value``: x is rebound to a copy with the indexed part replaced by
    `value` broadcast to its shape, so gradients flow to x's old value (except
    there) and to `value`. Tensor indices write with put_along_axis, a bool mask
    with where; with repeated indices the last write wins."""
    check_in_place(x)
    parts = _Index(x, index)
    value = cast(as_tensor(value, like=x), x.dtype)
    expanded, sliced, region = _basic(x, parts)
    if parts.mask is not None:
        axis, mask = parts.mask
        updated = _masked(region, parts.after_squeeze(axis), mask, value)
    elif parts.tensors:
        updated = _put(region, [(parts.after_squeeze(a), t) for a, t in parts.tensors], value)
    else:
        updated = _broadcast_value(value, tuple(exact_shape(region)))
    attrs = parts.slice_attrs
    if attrs is not None:
        updated = apply("set_slice", (expanded, _reshape_to(updated, exact_shape(sliced))),
                        attrs)
    if parts.new_axes:
        updated = squeeze(updated, parts.new_axes)
    _rebind(x, updated)


def _without_leading_ones(shape, rank: int) -> tuple:
    """`shape` less the leading size-1 dims it has beyond `rank` dims."""
    shape = tuple(shape)
    while len(shape) > rank and shape[0] == 1:
        shape = shape[1:]
    return shape


def _broadcast_value(value: Tensor, shape: tuple) -> Tensor:
    """A value assigned into x[...] broadcast to the indexed part's `shape`: as in
    Paddle and NumPy it may have extra leading dims of size 1 (``x[0, 2] = [[v]]``)."""
    value = _reshape_to(value, _without_leading_ones(exact_shape(value), len(shape)))
    return broadcast_to(value, shape)


def _reshape_to(x: Tensor, shape: tuple) -> Tensor:
    """x reshaped to `shape` unless it has it already."""
    return x if tuple(exact_shape(x)) == tuple(shape) else \
        apply("reshape", (x,), {"shape": tuple(shape)})


def _masked(region: Tensor, axis: int, mask: Tensor, value: Tensor) -> Tensor:
    """region with `value` where the bool `mask` (indexing axes axis, axis+1, ...)
    holds: the same value for every selected element (it broadcasts to the dims after
    the mask's), or, as in Paddle, one per selected element in order (a leading dim of
    the count the mask selects: written at the mask's `nonzero` positions)."""
    from .search import nonzero
    shape = tuple(exact_shape(region))
    k = mask.ndim
    _check_mask_dims(mask, shape[axis:axis + k])
    trailing = shape[axis + k:]
    value_shape = _without_leading_ones(exact_shape(value), len(trailing))
    if len(value_shape) > len(trailing):
        positions = nonzero(mask, as_tuple=True)
        count = exact_shape(positions[0])[0]
        if isinstance(count, int) and value_shape[0] != count:
            raise ShapeError(f"x[mask] = value: the mask selects {count} elements, and the "
                             f"value (shape {list(value.shape)}) is neither one value for "
                             f"all of them (broadcasting to {list(trailing)}) nor one per "
                             "selected element")
        return _put(region, [(axis + i, p) for i, p in enumerate(positions)], value)
    value = _reshape_to(value, tuple(value_shape))
    mask = _reshape_to(mask, (1,) * axis + tuple(exact_shape(mask)) + (1,) * len(trailing))
    return apply("select", (mask, broadcast_to(value, trailing), region))


def _put(region: Tensor, tensors: list, value: Tensor, reduce: str = "assign") -> Tensor:
    """region with `value` written (or with reduce='add' added) at the positions the
    tensor indices address. Where a position repeats, the last write lands and alone
    gets the gradient (see `_landed_values`)."""
    y, axis, index, perm = _joint_index(region, tensors)
    shape = tuple(exact_shape(y))
    pre, post = shape[:axis], shape[axis + 1:]
    index_shape = tuple(exact_shape(index))
    count = numel(index_shape)
    value = _broadcast_value(value, pre + index_shape + post)
    value = _reshape_to(value, pre + (count,) + post)
    index = _reshape_to(index, (1,) * len(pre) + (count,) + (1,) * len(post))
    y = _put_along(y, index, value, axis, reduce, include_self=True)
    unmerged = tuple(exact_shape(region)) if not perm else \
        tuple(exact_shape(region)[a] for a in perm)
    y = _reshape_to(y, unmerged)
    if perm:
        y = transpose(y, [perm.index(a) for a in range(len(perm))])
    return y


def index_put(x, indices, value, accumulate=False, name=None) -> Tensor:
    """x with `value` put at ``x[indices]``, as Paddle's: `indices` is a tuple of int
    tensors (broadcast together, one per leading axis) or of one bool mask, and
    `value` broadcasts to the part they address. Written, where a position repeats
    the last write lands and alone gets the gradient (Paddle gives it to every
    repeat, though only one value is kept); with `accumulate` added, repeats
    summing."""
    from .search import nonzero
    x = as_tensor(x)
    value = cast(as_tensor(value, like=x), x.dtype)
    parts = _Index(x, tuple(as_tensor(i) for i in indices))
    tensors = parts.tensors
    if parts.mask is not None:
        axis, mask = parts.mask
        if not accumulate:
            return _masked(x, axis, mask, value)
        _check_mask_dims(mask, parts.mask_dims)
        tensors = [(axis + k, p) for k, p in enumerate(nonzero(mask, as_tuple=True))]
    return _put(x, tensors, value, "add" if accumulate else "assign")


def check_in_place(x: Tensor) -> None:
    """Raise for a change in place that Paddle refuses: of a leaf that requires a
    gradient while gradients are recorded (its gradient would be of a value it no
    longer holds). Under ``no_grad`` Paddle allows it: the hand-written SGD step
    ``with no_grad(): w.subtract_(lr * w.grad)`` (see `_rebind`)."""
    if not x.stop_gradient and x.is_leaf and x._value is not None and grad_enabled():
        raise IrflowError("a leaf tensor that requires a gradient cannot be modified in "
                          "place (as in Paddle); use paddle.where or work on a copy",
                          user_location())


def in_place(x: Tensor, result: Tensor, what: str, keep_shape: bool = True,
             operands: tuple = ()) -> Tensor:
    """``x.what_(*operands)``: `x` becomes `result` (of x's shape unless the method's
    job is a new shape, as ``reshape_``; of the dtype `_in_place_dtype` says), and is
    returned, as Paddle's in-place methods do."""
    check_in_place(x)
    if keep_shape and tuple(exact_shape(result)) != tuple(exact_shape(x)):
        raise ShapeError(f"{what}_: the result has shape {list(exact_shape(result))}, but "
                         f"an in-place change keeps the tensor's shape "
                         f"{list(exact_shape(x))}", user_location())
    if keep_shape and result.stop_gradient and not x.stop_gradient and grad_enabled():
        # a value that does not depend on x (fill_, zero_, uniform_...): as in Paddle, x
        # stays in the graph, requiring a gradient and passing a zero one on to what it
        # was made from (an optimizer then steps those parameters, as Paddle's does)
        from .creation import ones_like
        result = select(ones_like(x, dtype="bool"), result, x)
    _rebind(x, cast(result, _in_place_dtype(x, result, what, operands)))
    return x


_COMPUTED_IN_OWN_DTYPE = frozenset({"clip", "pow", "scale", "fill"})
"""In-place methods Paddle computes in the tensor's dtype: ``int_t.clip_(1.5, 2.5)``
and ``int_t.pow_(0.5)`` truncate, where their out-of-place forms give floats."""
_INT_TO_FLOAT = frozenset({"divide", "exp"})
"""In-place methods after which Paddle's int tensor is float32 (its other float
functions, sqrt_ or tanh_, have no int kernel and raise)."""


def _in_place_dtype(x: Tensor, result: Tensor, what: str, operands: tuple) -> dtypes.DType:
    """x's dtype after ``x.what_(*operands)``: the result's, as in Paddle (a float32
    tensor plus float64 becomes float64, an int tensor divided by ints float32),
    where Paddle allows the change; it was always x's, which truncated
    ``int_t.divide(2)`` to ints."""
    if result.dtype is x.dtype or what in _COMPUTED_IN_OWN_DTYPE:
        return x.dtype
    if x.dtype.is_float:
        return result.dtype
    if x.dtype.is_int and what in _INT_TO_FLOAT and not builtins.any(
            isinstance(v, float) or isinstance(v, Tensor) and v.dtype.is_float
            for v in operands):
        return result.dtype
    raise TypeError(f"{what}_: Paddle does not change a {x.dtype.name} tensor in place "
                    f"into {result.dtype.name}; use the result of paddle.{what}(...) or "
                    f"cast the tensor first (x.astype('float32'))")


def _rebind(dst: Tensor, src: Tensor) -> None:
    """Make `dst` the tensor `src` is (in-place update semantics). While tracing, a
    tensor with a value (a buffer, a tensor the code captured) changed in place by a
    traced one takes it as a state update of the program (`set_value`), so each call
    changes it as eager code does and it never holds a traced value."""
    if dst._value is not None and src._value is None:
        if src.dtype is not dst.dtype:
            raise ConversionError(f"a change in place that makes a {dst.dtype.name} tensor "
                                  f"{src.dtype.name} (an int tensor's divide_ or exp_): the "
                                  "program's state keeps its dtype; assign the result to a "
                                  "new variable instead", user_location())
        src._tracer.set_value(dst, src)
        return
    if not grad_enabled() and not dst.stop_gradient and dst._value is not None \
            and src._value is not None:
        # a change no graph records (under no_grad): dst keeps its place in the graph,
        # as in Paddle, a leaf still requiring a gradient, an intermediate still
        # passing gradients on to what it was made from, at its new value
        if dst._node is None:
            dst._value = src._value
        else:
            dst._take_value_in_graph(src._value)
        return
    dst._value, dst._ir, dst._tracer = src._value, src._ir, src._tracer
    dst._node, dst._index, dst.stop_gradient = src._node, src._index, src.stop_gradient
