"""Paddle's functions that arrange existing elements: stacking and splitting along
NumPy's conventional axes, block and diagonal layouts, index-driven reads and writes
(take, index_fill, the *_scatter family), sliding windows, and the aliases Paddle
keeps for torch users (permute, view, narrow, swapaxes). All are compositions of
the ops in `manipulation`, so they differentiate and compile as those do. irflow
never aliases memory: a "view" is a copy (see docs/eager.md)."""
from __future__ import annotations

import builtins
import itertools

import numpy as np

from ..errors import DTypeError, OutOfRangeError, ShapeError
from ..ir import dtypes
from ..ir.types import dim_add
from .convert import as_tensor, cast, dims
from .creation import arange, full, to_tensor
from .logic import equal, select
from .manipulation import (_in_range, _traced_size, broadcast_to, concat, exact_shape,
                           flatten, in_place, meshgrid, moveaxis, pick, put_along_axis,
                           reshape, scatter_nd_add, slice, stack, take_along_axis,
                           transpose, unsqueeze)
from .math import _into, add, any as any_, clip, cumsum, remainder
from .search import sort
from .tensor import Tensor

# ---------------------------------------------------------------- at least n dims


def _at_least(rank: int, layout: dict):
    """atleast_{rank}d: each input with size-1 dims added until it has `rank` dims,
    placed as `layout` (the shape of an input of each smaller rank) says; one input
    gives one tensor, several (or one list of them) a list, as Paddle's."""
    def at_least(*inputs, name=None):
        if len(inputs) == 1 and isinstance(inputs[0], list | tuple):
            inputs = tuple(inputs[0])
        out = []
        for value in inputs:
            x = as_tensor(value)
            out.append(reshape(x, layout[x.ndim](list(exact_shape(x))))
                       if x.ndim < rank else x)
        return out[0] if len(out) == 1 else out
    at_least.__name__ = f"atleast_{rank}d"
    at_least.__doc__ = (f"The inputs with at least {rank} dims, as NumPy's and Paddle's "
                        f"atleast_{rank}d.")
    return at_least


atleast_1d = _at_least(1, {0: lambda s: [1]})
atleast_2d = _at_least(2, {0: lambda s: [1, 1], 1: lambda s: [1, *s]})
atleast_3d = _at_least(3, {0: lambda s: [1, 1, 1], 1: lambda s: [1, *s, 1],
                           2: lambda s: [*s, 1]})


# ---------------------------------------------------------------- stacking


def hstack(x, name=None) -> Tensor:
    """The tensors joined along their columns: axis 0 of 1-D (and 0-D) ones, axis 1
    of others, as NumPy's hstack."""
    tensors = _listed_at_least(x, atleast_1d)
    return concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(x, name=None) -> Tensor:
    """The tensors joined along axis 0, 1-D (and 0-D) ones as rows, as NumPy's vstack."""
    return concat(_listed_at_least(x, atleast_2d), 0)


row_stack = vstack


def dstack(x, name=None) -> Tensor:
    """The tensors joined along axis 2 after `atleast_3d`, as NumPy's dstack."""
    return concat(_listed_at_least(x, atleast_3d), 2)


def column_stack(x, name=None) -> Tensor:
    """The tensors joined as columns: 1-D (and 0-D) ones become [n, 1] columns, the
    rest join along axis 1, as NumPy's column_stack."""
    tensors = [as_tensor(t) for t in x]
    columns = [reshape(t, [-1, 1]) if t.ndim < 2 else t for t in tensors]
    return concat(columns, 1)


def _listed_at_least(x, raise_rank) -> list[Tensor]:
    return [raise_rank(t) for t in x]


# ---------------------------------------------------------------- splitting


def tensor_split(x, num_or_indices, axis=0, name=None) -> list[Tensor]:
    """x cut along `axis` as NumPy's array_split: into `num_or_indices` parts whose
    sizes differ by at most one (the larger ones first), or at the listed indices,
    each part ``x[start:stop]`` with Python's slice rules (so an index past the end
    or below the previous one gives an empty part)."""
    x = as_tensor(x)
    if isinstance(axis, Tensor):
        axis = axis.item()
    if not -x.ndim <= int(axis) < x.ndim:
        raise ShapeError(f"tensor_split: axis {axis} is out of range for a tensor of rank "
                         f"{x.ndim}")
    axis = int(axis) % x.ndim
    size = exact_shape(x)[axis]
    if not isinstance(size, int):
        raise ShapeError(f"tensor_split: axis {axis} of x needs a size known when the "
                         "program is compiled")
    if isinstance(num_or_indices, int):
        cuts = _even_cuts(size, num_or_indices)
    else:
        cuts = [int(i) for i in num_or_indices]
    bounds = [0, *cuts, size]
    return [_part(x, axis, size, start, stop) for start, stop in zip(bounds, bounds[1:])]


def _even_cuts(size: int, num: int) -> list[int]:
    """The cut points of array_split into `num` parts: size % num parts of one more."""
    if num <= 0:
        raise ShapeError(f"tensor_split: num_or_indices={num} must be a positive number of "
                         "parts")
    base, extra = divmod(size, num)
    sizes = [base + 1] * extra + [base] * (num - extra)
    return list(itertools.accumulate(sizes))[:-1]


def _part(x: Tensor, axis: int, size: int, start: int, stop: int) -> Tensor:
    """``x[start:stop]`` along `axis` with Python's slice rules."""
    start, stop, _ = builtins.slice(start, stop).indices(size)
    return slice(x, [axis], [start], [builtins.max(start, stop)])


def _split_from(what: str, min_rank: int, axis_of):
    def split(x, num_or_indices, name=None) -> list[Tensor]:
        x = as_tensor(x)
        if x.ndim < min_rank:
            raise ShapeError(f"{what}: x needs at least {min_rank} dims, as in Paddle, got "
                             f"shape {list(exact_shape(x))}")
        return tensor_split(x, num_or_indices, axis_of(x))
    split.__name__ = what
    return split


hsplit = _split_from("hsplit", 1, lambda x: 0 if x.ndim == 1 else 1)
hsplit.__doc__ = """x cut along its columns (axis 1, or axis 0 of a 1-D x) as `tensor_split`."""
vsplit = _split_from("vsplit", 2, lambda x: 0)
vsplit.__doc__ = """x cut along axis 0 as `tensor_split`; x needs at least 2 dims."""
dsplit = _split_from("dsplit", 3, lambda x: 2)
dsplit.__doc__ = """x cut along axis 2 as `tensor_split`; x needs at least 3 dims."""


# ---------------------------------------------------------------- block layouts


def block_diag(inputs, name=None) -> Tensor:
    """The tensors (0-D, 1-D as one row, or 2-D, of one dtype) laid along the diagonal
    of a matrix, zeros elsewhere."""
    blocks = [as_tensor(t) for t in inputs]
    for b in blocks:
        if b.ndim > 2:
            raise ShapeError(f"block_diag: every input must have 0, 1 or 2 dims, as in "
                             f"Paddle, got shape {list(exact_shape(b))}")
    blocks = [atleast_2d(b) for b in blocks]
    widths = [exact_shape(b)[1] for b in blocks]
    total = sum(widths)
    rows, before = [], 0
    for b, width in zip(blocks, widths):
        height = exact_shape(b)[0]
        rows.append(concat([full([height, before], 0, b.dtype), b,
                            full([height, total - before - width], 0, b.dtype)], 1))
        before += width
    return concat(rows, 0)


def cartesian_prod(x, name=None) -> Tensor:
    """The rows of all combinations of one element of each 1-D tensor (the last
    varying fastest), as itertools.product; one tensor is returned as it is."""
    tensors = [as_tensor(t) for t in x]
    for t in tensors:
        if t.ndim != 1:
            raise ShapeError(f"cartesian_prod: every input must be 1-D, as in Paddle, got "
                             f"shape {list(exact_shape(t))}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, [-1]) for g in meshgrid(tensors)], 1)


def combinations(x, r=2, with_replacement=False, name=None) -> Tensor:
    """The r-element combinations of the 1-D x's elements, as rows in
    itertools.combinations order (with_replacement: combinations_with_replacement).
    r=0 gives an empty 1-D tensor, as Paddle's."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ShapeError(f"combinations: x must be 1-D, as in Paddle, got shape "
                         f"{list(exact_shape(x))}")
    if not isinstance(r, int) or r < 0:
        raise ValueError(f"combinations: r must be a non-negative int, got {r!r}")
    size = exact_shape(x)[0]
    if not isinstance(size, int):
        raise ShapeError("combinations: x needs a size known when the program is compiled")
    if r == 0:
        return full([0], 0, x.dtype)
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(choose(range(size), r)), np.int64).reshape(-1, r)
    return reshape(pick(x, Tensor._from_array(rows.reshape(-1)), 0), [rows.shape[0], r])


def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:  # noqa: A002  (Paddle's name)
    """A tensor one dim larger than input whose planes (dims `dim1`, `dim2` of the
    result) hold input's last axis on their diagonal `offset` (``[i, i + offset]``),
    zeros elsewhere."""
    x = as_tensor(input)
    rank = x.ndim + 1
    if x.ndim == 0:
        raise ShapeError("diag_embed: input needs at least 1 dim, as in Paddle")
    for d in (dim1, dim2):
        if not -rank <= int(d) < rank:
            raise ShapeError(f"diag_embed: dim {d} is out of range for the rank-{rank} result")
    first, second = int(dim1) % rank, int(dim2) % rank
    if first == second:
        raise ShapeError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    n = exact_shape(x)[-1]
    if not isinstance(n, int):
        raise ShapeError("diag_embed: the last axis of input needs a size known when the "
                         "program is compiled")
    offset = int(offset)
    size = n + abs(offset)
    rows, cols = np.arange(size)[:, None], np.arange(size)[None, :]
    source = np.broadcast_to(np.clip(rows - builtins.max(-offset, 0), 0, builtins.max(n - 1, 0)),
                             (size, size))
    values = pick(x, Tensor._from_array(source.astype(np.int64)), x.ndim - 1)
    on_diagonal = Tensor._from_array(cols - rows == offset)
    planes = select(on_diagonal, values, full([], 0, x.dtype))
    return moveaxis(planes, [rank - 2, rank - 1], [first, second])


# ---------------------------------------------------------------- broadcasting


def broadcast_shape(x_shape, y_shape) -> list[int]:
    """The shape two tensors of these shapes broadcast to, by NumPy's rules."""
    x_shape, y_shape = list(x_shape), list(y_shape)
    rank = builtins.max(len(x_shape), len(y_shape))
    x_full = [1] * (rank - len(x_shape)) + x_shape
    y_full = [1] * (rank - len(y_shape)) + y_shape
    out = []
    for a, b in zip(x_full, y_full):
        if a != b and 1 not in (a, b):
            raise ShapeError(f"broadcast_shape: the shapes {x_shape} and {y_shape} do not "
                             "broadcast together")
        out.append(b if a == 1 else a)
    return out


def broadcast_tensors(input, name=None) -> list[Tensor]:  # noqa: A002  (Paddle's name)
    """The tensors (of one dtype) broadcast to their common shape."""
    tensors = [as_tensor(t) for t in input]
    found = sorted({t.dtype.name for t in tensors})
    if len(found) > 1:
        raise DTypeError(f"broadcast_tensors: the tensors have the dtypes {', '.join(found)}; "
                         "they must share one, as in Paddle")
    shape: list = []
    for t in tensors:
        shape = broadcast_shape(shape, list(exact_shape(t)))
    return [broadcast_to(t, shape) for t in tensors]


# ---------------------------------------------------------------- index reads and writes

_TAKE_MODES = ("raise", "wrap", "clip")


def take(x, index, mode="raise", name=None) -> Tensor:
    """The elements of the flattened x at `index` (int32 or int64, any shape; the
    result has its shape). mode 'raise' takes negative indices from the end and
    rejects out-of-range ones, 'wrap' wraps every index around, 'clip' clamps it to
    [0, numel - 1] (a negative one to 0), as NumPy's take."""
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode must be one of {', '.join(_TAKE_MODES)}, got {mode!r}")
    flat = reshape(as_tensor(x), [-1])
    index = as_tensor(index)
    if index.dtype not in (dtypes.int32, dtypes.int64):
        raise DTypeError(f"take: the index must be int32 or int64, got {index.dtype.name}")
    index = cast(index, dtypes.int64)
    size, size_text = _index_size(flat, 0)
    if mode == "raise":
        index = _in_range(index, size, size_text)
    elif mode == "wrap":
        index = remainder(index, as_tensor(size, like=index))
    else:
        index = clip(index, 0, size - 1)
    return pick(flat, index, 0)


def _index_size(x: Tensor, axis: int):
    """The size of x's `axis` for arithmetic on indices, and its text for messages: an
    int (None), or while tracing a symbolic size (such as ``N*3``) the int64 scalar the
    program computes when it runs, since the symbol itself is no number."""
    size = exact_shape(x)[axis]
    if isinstance(size, int):
        return size, None
    return _traced_size(x, axis), str(size)


def index_sample(x, index) -> Tensor:
    """Row i of the result is ``x[i][index[i]]``: x is [N, M], index (int32 or int64)
    [N, K], as Paddle's index_sample."""
    x, index = as_tensor(x), as_tensor(index)
    if x.ndim != 2 or index.ndim != 2:
        raise ShapeError(f"index_sample: x and index must be 2-D, got shapes "
                         f"{list(exact_shape(x))} and {list(exact_shape(index))}")
    if exact_shape(x)[0] != exact_shape(index)[0]:
        raise ShapeError(f"index_sample: x (shape {list(exact_shape(x))}) and index (shape "
                         f"{list(exact_shape(index))}) must have the same number of rows")
    if index._value is not None and index._value.size and index._value.min() < 0:
        raise OutOfRangeError(f"index_sample: indices must be at least 0, as in Paddle, got "
                              f"{index._value.min()}")
    return take_along_axis(x, index, 1, broadcast=False)


def index_fill(x, index, axis, value, name=None) -> Tensor:
    """x with `value` (cast to x's dtype) in every slice along `axis` that the 1-D
    `index` names (negative indices from the end)."""
    x = as_tensor(x)
    axis = int(axis) % x.ndim
    size, size_text = _index_size(x, axis)
    index = _in_range(reshape(as_tensor(index), [-1]), size, size_text)
    hit = any_(equal(unsqueeze(arange(size, dtype="int64"), 1), unsqueeze(index, 0)), axis=1)
    hit = reshape(hit, [exact_shape(x)[axis] if a == axis else 1 for a in range(x.ndim)])
    return select(hit, cast(as_tensor(value, like=x), x.dtype), x)


def scatter_nd(index, updates, shape, name=None) -> Tensor:
    """A zero tensor of `shape` (updates' dtype) with `updates` added at the slices
    that the last axis of `index` addresses (repeated indices add up), as
    ``scatter_nd_add(zeros(shape), index, updates)``."""
    updates = as_tensor(updates)
    return scatter_nd_add(full(list(dims(shape)), 0, updates.dtype), index, updates)


def scatter_add(input, dim, index, src) -> Tensor:  # noqa: A002  (Paddle's names)
    """input with src's elements added at `index` along `dim`, as torch.scatter_add:
    the index may be smaller than src and input on every dim, and only its own
    positions are read and written."""
    return put_along_axis(input, index, src, dim, reduce="add", broadcast=False)


_SCATTER_REDUCES = {"sum": "add", "prod": "mul", "mean": "mean", "amin": "amin",
                    "amax": "amax"}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor:  # noqa: A002
    """input with src's elements combined into it at `index` along `dim` by `reduce`
    ('sum', 'prod', 'mean', 'amin' or 'amax'), as torch.scatter_reduce; with
    include_self=False the positions written start from nothing."""
    if reduce not in _SCATTER_REDUCES:
        raise ValueError(f"scatter_reduce: reduce must be one of "
                         f"{', '.join(_SCATTER_REDUCES)}, got {reduce!r}")
    return put_along_axis(input, index, src, dim, reduce=_SCATTER_REDUCES[reduce],
                          include_self=include_self, broadcast=False)


def select_scatter(x, values, axis, index, name=None) -> Tensor:
    """x with its slice at `index` along `axis` replaced by `values` (x's shape
    without that axis; cast to x's dtype)."""
    x = as_tensor(x)
    axis = int(axis) % x.ndim
    size = exact_shape(x)[axis]
    index = int(index)
    if not -size <= index < size:
        raise OutOfRangeError(f"select_scatter: index {index} is out of range for axis "
                              f"{axis} of size {size}")
    index %= size
    values = cast(as_tensor(values, like=x), x.dtype)
    attrs = {"axes": (axis,), "starts": (index,), "stops": (index + 1,), "steps": None}
    return _set_slice(x, unsqueeze(values, axis), attrs, "select_scatter")


def slice_scatter(x, value, axes, starts, ends, strides, name=None) -> Tensor:
    """x with its slice ``[start:end:stride]`` on each of `axes` replaced by `value`
    (broadcast to the slice's shape, cast to x's dtype)."""
    x = as_tensor(x)
    attrs = {"axes": dims(axes), "starts": dims(starts), "stops": dims(ends),
             "steps": dims(strides)}
    target = exact_shape(slice(x, attrs["axes"], attrs["starts"], attrs["stops"])
                         if attrs["steps"] == (1,) * len(attrs["axes"]) else
                         _strided(x, attrs))
    value = broadcast_to(cast(as_tensor(value, like=x), x.dtype), target)
    return _set_slice(x, value, attrs, "slice_scatter")


def _strided(x: Tensor, attrs: dict) -> Tensor:
    from .manipulation import strided_slice
    return strided_slice(x, attrs["axes"], attrs["starts"], attrs["stops"], attrs["steps"])


def _set_slice(x: Tensor, update: Tensor, attrs: dict, what: str) -> Tensor:
    from ..dispatch import apply
    try:
        return apply("set_slice", (x, update), attrs)
    except ShapeError as e:
        raise ShapeError(f"{what}: {e}") from e


def diagonal_scatter(x, y, offset=0, axis1=0, axis2=1, name=None) -> Tensor:
    """x with its diagonals in the planes of `axis1`, `axis2` (as `diagonal` reads
    them, offset above the main one if positive) replaced by y, which has the shape
    `diagonal` gives."""
    from .linalg import _plane_axes, diagonal
    x = as_tensor(x)
    first, second = _plane_axes(x, axis1, axis2, "diagonal_scatter")
    want = exact_shape(diagonal(x, offset, first, second))
    y = cast(as_tensor(y, like=x), x.dtype)
    if tuple(exact_shape(y)) != tuple(want):
        raise ShapeError(f"diagonal_scatter: y must have the diagonal's shape {list(want)}, "
                         f"got {list(exact_shape(y))}")
    others = [a for a in range(x.ndim) if a not in (first, second)]
    perm = [*others, first, second]
    moved = transpose(x, perm)
    shape = list(exact_shape(moved))
    rows, cols = shape[-2], shape[-1]
    offset = int(offset)
    row0, col0 = builtins.max(0, -offset), builtins.max(0, offset)
    flat_index = row0 * cols + col0 + (cols + 1) * np.arange(want[-1], dtype=np.int64)
    planes = reshape(moved, [*shape[:-2], rows * cols])
    index = broadcast_to(Tensor._from_array(flat_index), exact_shape(y))
    written = put_along_axis(planes, index, y, planes.ndim - 1)
    return transpose(reshape(written, shape), list(np.argsort(perm)))


def masked_scatter(x, mask, value, name=None) -> Tensor:
    """x (broadcast with the bool `mask`) with the positions where mask holds taking
    value's elements in row-major order, one after another. value needs at least as
    many elements as mask has True entries (checked eagerly; Paddle reads past its
    end)."""
    x, mask = as_tensor(x), as_tensor(mask)
    if not mask.dtype.is_bool:
        raise DTypeError(f"masked_scatter: mask must be bool, got {mask.dtype.name}")
    x, mask = broadcast_tensors([x, cast(mask, x.dtype)])
    mask = cast(mask, dtypes.bool_)
    source = reshape(cast(as_tensor(value, like=x), x.dtype), [-1])
    count = exact_shape(source)[0]
    taken = cumsum(reshape(cast(mask, dtypes.int64), [-1])) - 1
    if mask._value is not None and int(mask._value.sum()) > count:
        raise ShapeError(f"masked_scatter: mask has {int(mask._value.sum())} True entries "
                         f"but value only {count} elements")
    values = reshape(pick(source, clip(taken, 0, builtins.max(count - 1, 0)), 0),
                     exact_shape(x))
    return select(mask, values, x)


# ---------------------------------------------------------------- windows and aliases


def unfold(x, axis, size, step, name=None) -> Tensor:
    """The windows of `size` elements along `axis`, starting every `step`: axis
    becomes the window count ``(len - size) // step + 1`` and a last axis of `size`
    is added, as Paddle's Tensor.unfold (a copy here, not a view)."""
    x = as_tensor(x)
    if x.ndim == 0:  # one window of the one element, as Paddle's
        if size != 1:
            raise ShapeError(f"unfold: a 0-D tensor has one window, of size 1, got size {size}")
        return reshape(x, [1])
    axis = int(axis) % x.ndim
    length = exact_shape(x)[axis]
    if not isinstance(length, int):
        raise ShapeError(f"unfold: axis {axis} needs a size known when the program is "
                         "compiled")
    if not 0 < size <= length or step <= 0:
        raise ShapeError(f"unfold: size must be in 1..{length} (the size of axis {axis}) "
                         f"and step positive, got size {size} and step {step}")
    count = (length - size) // step + 1
    windows = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    return moveaxis(pick(x, Tensor._from_array(windows.astype(np.int64)), axis), axis + 1, -1)


def swapaxes(x, perm, *axis, name=None) -> Tensor:
    """x with two axes swapped (``swapaxes(x, 0, 2)``), or permuted by a full `perm`,
    as Paddle's swapaxes, which is its transpose taking both forms."""
    x = as_tensor(x)
    if not axis:
        return transpose(x, perm)
    order = list(range(x.ndim))
    first, second = int(perm) % x.ndim, int(axis[0]) % x.ndim
    order[first], order[second] = second, first
    return transpose(x, order)


swapdims = swapaxes


def permute(input, *dims) -> Tensor:  # noqa: A002  (Paddle's names)
    """x with its axes in the order `dims`, given as a list or one by one."""
    order = dims[0] if len(dims) == 1 and isinstance(dims[0], list | tuple) else dims
    return transpose(input, list(order))


def view(x, shape_or_dtype, *more, name=None) -> Tensor:
    """x reshaped to the shape given as a list or one int per dim. A copy, since
    irflow never aliases memory; reading x's bytes as another dtype is not
    supported."""
    if isinstance(shape_or_dtype, list | tuple | Tensor) or more or \
            isinstance(shape_or_dtype, int):
        shape = [shape_or_dtype, *more] if isinstance(shape_or_dtype, int) else shape_or_dtype
        return reshape(x, shape)
    raise DTypeError(f"view: irflow cannot reinterpret a tensor's bytes as "
                     f"{shape_or_dtype!r}; give a shape, or convert values with astype")


def view_as(x, other, name=None) -> Tensor:
    """x reshaped to other's shape (a copy: irflow never aliases memory)."""
    return reshape(x, exact_shape(as_tensor(other)))


def narrow(input, dim, start, length) -> Tensor:  # noqa: A002  (Paddle's names)
    """The `length` entries of input along `dim` from `start` (negative from the end)."""
    x = as_tensor(input)
    dim = int(dim) % x.ndim
    size = exact_shape(x)[dim]
    if isinstance(start, Tensor) and start._value is not None:
        start = start.item()
    if isinstance(start, Tensor):
        return slice(x, [dim], [start], [add(start, length)])
    start = start + size if start < 0 else start
    if isinstance(size, int) and not (0 <= start and start + length <= size):
        raise OutOfRangeError(f"narrow: start {start} and length {length} do not fit in "
                              f"dim {dim} of size {size}")
    return slice(x, [dim], [start], [dim_add(start, length)])


def ravel(input) -> Tensor:  # noqa: A002  (Paddle's name)
    """input flattened to 1-D (a 0-D input to [1])."""
    return flatten(input)


def msort(input, *, out=None) -> Tensor:  # noqa: A002  (Paddle's name)
    """input sorted along axis 0, ascending."""
    return _into(sort(input, axis=0), out)


def tolist(x):
    """x's values as nested Python lists (a 0-D x as a number)."""
    return as_tensor(x).tolist()


# ---------------------------------------------------------------- questions


def rank(input) -> Tensor:  # noqa: A002  (Paddle's name)
    """The number of dims of input, as a 0-D int32 tensor."""
    return to_tensor(as_tensor(input).ndim, dtype="int32")


def is_floating_point(x) -> bool:
    """Whether x has a float dtype (float16, bfloat16, float32, float64)."""
    return as_tensor(x).dtype.is_float


def is_integer(x) -> bool:
    """Whether x has an integer dtype (uint8 to int64; bool is not one)."""
    return as_tensor(x).dtype.is_int


def is_complex(x) -> bool:
    """Whether x has a complex dtype: always False, irflow has none."""
    as_tensor(x)
    return False


def is_empty(x, name=None) -> Tensor:
    """Whether x has no elements, as a 0-D bool tensor."""
    from .attribute import numel
    return equal(numel(as_tensor(x)), 0)


# ---------------------------------------------------------------- in place


def index_fill_(x, index, axis, value, name=None) -> Tensor:
    """``index_fill`` in place: x takes the result and is returned."""
    return in_place(x, index_fill(x, index, axis, value), "index_fill")


def masked_scatter_(x, mask, value, name=None) -> Tensor:
    """``masked_scatter`` in place: x takes the result (of x's shape) and is returned."""
    return in_place(x, masked_scatter(x, mask, value), "masked_scatter")
