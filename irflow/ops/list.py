"""Lists of tensors: what a Python list that grows in a tensor-dependent loop becomes
(``outs.append(h)``, then ``paddle.stack(outs)``), and Paddle's tensor arrays.

    %l0 = list_new : list<f32[N,4]>
    %l1 = list_append %l0, %h : list<f32[N,4]>
    %h0 = list_get %l1, %i : f32[N,4]
    %n = list_len %l1 : i64
    %hs = list_stack %l1 {axis=1, size="D1", elem_shape=[N, 4]} : f32[N,D1,4]
    %tail = list_slice %l1, %one, %n {step=1} : list<f32[N,4]>

A list's length is known only when the program runs; stacking it gives a tensor
whose new axis is a fresh symbol (`size`), bound from the result. Lists are values:
appending returns a new list and leaves the old one as it was (at run time a list is
an immutable tuple of arrays, so the list a loop iteration started with stays valid
for autodiff). A list of float tensors is differentiable: its cotangent is a list of
the same length, and the remaining ops here (`list_pop`, `list_set`, `list_unstack`,
`list_zeros_like`, `list_add`, `list_unwrite`, `list_fill`, `list_any`) exist for the
VJP rules.

Whether a list's cotangent exists is said per element, as a list of bools (the rules
take and return it: `TracksDefined`): reading one element gives the whole list a
cotangent, zeros elsewhere, while eager code, where a list is a Python list, gives
the elements that did not reach the loss no gradient, and optimizers then skip their
parameters (`preds.append(head(x))` in a loop that may `break`, then `preds[-1]`).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, VerificationError
from ..ir import dtypes
from ..ir.builder import is_list
from ..ir.registry import REQUIRED, Defined
from ..ir.traits import ContainerOperands, TracksDefined
from ..ir.types import ListType, TensorType, normalize_dim
from ._rules import defop, norm_axis

_LIST = (ContainerOperands(),)
_DIFFERENTIABLE = (ContainerOperands(), TracksDefined())


def _list_of(types, what: str) -> ListType:
    if not types or not isinstance(types[0], ListType):
        raise ShapeError(f"{what} takes a list as its first operand, got "
                         f"{types[0] if types else 'nothing'}")
    return types[0]


def _check_index(t, what: str) -> None:
    if not isinstance(t, TensorType) or t.dtype is not dtypes.int64 or t.rank:
        raise ShapeError(f"{what} takes an i64 scalar index, got {t}")


def _check_item(lst: ListType, t, what: str) -> None:
    if t != lst.elem:
        raise ShapeError(f"{what}: a {lst} holds {lst.elem}, got {t}")


def _position(items: tuple, i, what: str, end_ok: bool = False) -> int:
    """Index `i` of `items` as a non-negative position (negative counts from the end,
    as in Python); `end_ok` accepts the position one past the end."""
    n = len(items)
    k = int(i)
    k = k + n if k < 0 else k
    if not 0 <= k < n + end_ok:
        raise ShapeError(f"{what}: index {int(i)} is out of range for a list of length {n}")
    return k


# ---------------------------------------------------------------- building and reading

def _verify_new(op) -> None:
    if len(op.results) != 1 or not isinstance(op.results[0].type, ListType):
        raise VerificationError("list_new must have one list-typed result")


def _append_infer(types, attrs):
    lst = _list_of(types, "list_append")
    _check_item(lst, types[1], "list_append")
    return lst


def _append_vjp(b, cts, ins, outs, defined):
    if cts[0] is None:
        return [None, None]
    rest, last = b.list_pop(cts[0])
    defined_rest, defined_last = b.list_pop(defined[0]) if is_list(defined[0]) else defined * 2
    return [Defined(rest, defined_rest), Defined(last, defined_last)]


def _get_infer(types, attrs):
    lst = _list_of(types, "list_get")
    _check_index(types[1], "list_get")
    return lst.elem


def _get_vjp(b, cts, ins, outs, defined):
    """Element i's cotangent, zeros elsewhere: only element i's exists."""
    flags = defined[0] if defined[0] is False else b.list_set(
        b.flag(False, like=ins[0]), ins[1], b.flag(defined[0]))
    return [Defined(b.list_set(b.list_zeros_like(ins[0]), ins[1], cts[0]), flags), None]


def _len_infer(types, attrs):
    _list_of(types, "list_len")
    return TensorType(dtypes.int64, ())


def _stack_canon(attrs, types):
    elem = _list_of(types, "list_stack").elem
    return {"axis": norm_axis(attrs["axis"], elem.rank + 1), "size": normalize_dim(attrs["size"]),
            "elem_shape": tuple(elem.shape), "dtype": elem.dtype}


def _stack_infer(types, attrs):
    elem = _list_of(types, "list_stack").elem
    if tuple(attrs["elem_shape"]) != tuple(elem.shape) or attrs["dtype"] is not elem.dtype:
        raise VerificationError(f"list_stack: elem_shape and dtype must be the list's element "
                                f"type {elem}, got {list(attrs['elem_shape'])} "
                                f"{attrs['dtype'].name}")
    shape = list(elem.shape)
    shape.insert(attrs["axis"], attrs["size"])
    return TensorType(elem.dtype, shape)


def _stack_kernel(items, axis, size, elem_shape, dtype):
    if not items:  # no elements: a size-0 axis (a loop that ran no iteration)
        shape = list(elem_shape)
        shape.insert(axis, 0)
        return np.zeros(shape, dtype.np)
    return np.stack(items, axis=axis)


defop("list_new", None, lambda: (), verify=_verify_new, traits=_LIST,
      doc="an empty list; the result type names the element type")
defop("list_append", _append_infer, lambda items, x: (*items, x), arity=2,
      traits=_DIFFERENTIABLE, vjp=_append_vjp,
      doc="list_append(l, x) is l with x added at the end")
defop("list_get", _get_infer, lambda items, i: items[_position(items, i, "list_get")],
      arity=2, traits=_DIFFERENTIABLE, vjp=_get_vjp,
      doc="list_get(l, i): element i of l (an i64 scalar; negative counts from the end); "
          "out of range is a run-time error")
defop("list_len", _len_infer, lambda items: np.asarray(len(items), dtype=np.int64), arity=1,
      traits=_LIST, nondiff=True, doc="the number of elements of the list, as an i64 scalar")
defop("list_stop_gradient", lambda types, attrs: _list_of(types, "list_stop_gradient"),
      lambda items: items, arity=1, traits=_LIST, nondiff=True,
      doc="the list itself; no gradient flows through it to its elements (a list used "
          "under no_grad() in compiled code)")
defop("list_stack", _stack_infer, _stack_kernel, arity=1,
      attrs={"axis": 0, "size": REQUIRED, "elem_shape": (), "dtype": dtypes.float32},
      shape_attrs=("elem_shape",), canonicalize=_stack_canon, traits=_DIFFERENTIABLE,
      vjp=lambda b, cts, ins, outs, defined, axis, **_: [
          Defined(b.list_unstack(cts[0], axis=axis), defined[0])],
      doc="list_stack(l) {axis, size}: the elements joined along a new axis `axis` of "
          "the result, whose size is the dim `size` (a fresh symbol, bound from the "
          "result); `elem_shape` and `dtype` repeat the element type (filled in when the "
          "op is made), so that an empty list stacks to a size-0 axis")


# ---------------------------------------------------------------- for the VJP rules

def _set_infer(what: str):
    def infer(types, attrs):
        lst = _list_of(types, what)
        _check_index(types[1], what)
        _check_item(lst, types[2], what)
        return lst
    return infer


def _set_kernel(items, i, x):
    k = _position(items, i, "list_set")
    return (*items[:k], x, *items[k + 1:])


def _set_vjp(b, cts, ins, outs, defined):
    if cts[0] is None:
        return [None, None, None]
    flags = defined[0] if defined[0] is False else b.list_set(
        b.flag(defined[0], like=cts[0]), ins[1], b.flag(False))
    return [Defined(b.list_set(cts[0], ins[1], b.zeros(ins[2].type)), flags), None,
            Defined(b.list_get(cts[0], ins[1]), _element(b, defined[0], ins[1]))]


def _element(b, defined, i):
    """Whether the cotangent of element `i` exists, given a list's `defined`."""
    return b.list_get(defined, i) if is_list(defined) else defined


def _pop_infer(types, attrs):
    lst = _list_of(types, "list_pop")
    return lst, lst.elem


def _pop_kernel(items):
    if not items:
        raise ShapeError("list_pop: the list is empty")
    return items[:-1], items[-1]


def _pop_vjp(b, cts, ins, outs, defined):
    rest, last = defined
    flags = rest if rest is last else b.list_append(b.flag(rest, like=cts[0]), b.flag(last))
    return [Defined(b.list_append(cts[0], cts[1]), flags)]


def _unstack_canon(attrs, types):
    return {"axis": norm_axis(attrs["axis"], types[0].rank)}


def _unstack_infer(types, attrs):
    t = types[0]
    if isinstance(t, ListType) or not t.rank:
        raise ShapeError(f"list_unstack takes a tensor of rank 1 or more, got {t}")
    shape = list(t.shape)
    del shape[attrs["axis"]]
    return ListType(TensorType(t.dtype, shape))


def _unstack_kernel(y, axis):
    return tuple(np.moveaxis(y, axis, 0))


def _same_lists_infer(what: str):
    def infer(types, attrs):
        lst = _list_of(types, what)
        if types[1] != lst:
            raise ShapeError(f"{what} takes two lists of one type, got {lst} and {types[1]}")
        return lst
    return infer


def _add_kernel(a, b):
    if len(a) != len(b):
        raise ShapeError(f"list_add: lists of lengths {len(a)} and {len(b)}")
    return tuple(x + y for x, y in zip(a, b))


def _write_kernel(items, i, x):
    k = _position(items, i, "list_write", end_ok=True)
    return (*items, x) if k == len(items) else (*items[:k], x, *items[k + 1:])


def _write_vjp(b, cts, ins, outs, defined):
    if cts[0] is None:
        return [None, None, None]
    flags = defined[0] if defined[0] is False else b.list_unwrite(
        b.flag(defined[0], like=cts[0]), ins[1], b.flag(False, like=ins[0]))
    return [Defined(b.list_unwrite(cts[0], ins[1], ins[0]), flags), None,
            Defined(b.list_get(cts[0], ins[1]), _element(b, defined[0], ins[1]))]


def _unwrite_infer(types, attrs):
    lst = _list_of(types, "list_unwrite")
    _check_index(types[1], "list_unwrite")
    if types[2] != lst:
        raise ShapeError(f"list_unwrite: the list written to is {types[2]}, not {lst}")
    return lst


def _unwrite_kernel(cts, i, items):
    k = _position(items, i, "list_unwrite", end_ok=True)
    if k == len(items):
        return cts[:-1]
    return (*cts[:k], np.zeros_like(cts[k]), *cts[k + 1:])


defop("list_set", _set_infer("list_set"), _set_kernel, arity=3, traits=_DIFFERENTIABLE,
      vjp=_set_vjp, doc="list_set(l, i, x) is l with element i replaced by x")
defop("list_write", _set_infer("list_write"), _write_kernel, arity=3, traits=_DIFFERENTIABLE,
      vjp=_write_vjp,
      doc="list_write(l, i, x): Paddle's array_write, list_set where i < len(l) and "
          "list_append where i == len(l)")
defop("list_pop", _pop_infer, _pop_kernel, arity=1, traits=_DIFFERENTIABLE, vjp=_pop_vjp,
      doc="list_pop(l) is (l without its last element, that element)")
defop("list_unstack", _unstack_infer, _unstack_kernel, arity=1, attrs={"axis": 0},
      canonicalize=_unstack_canon, traits=_DIFFERENTIABLE,
      vjp=lambda b, cts, ins, outs, defined, axis: [Defined(
          b.list_stack(cts[0], axis=axis, size=ins[0].type.shape[axis]),
          b.list_any(defined[0]) if is_list(defined[0]) else defined[0])],
      doc="list_unstack(y) {axis}: the slices of y along `axis`, as a list")
defop("list_zeros_like", lambda types, attrs: _list_of(types, "list_zeros_like"),
      lambda items: tuple(np.zeros_like(a) for a in items), arity=1, traits=_LIST,
      nondiff=True, doc="a list of zeros shaped like the elements of the operand")
defop("list_add", _same_lists_infer("list_add"), _add_kernel, arity=2, traits=_DIFFERENTIABLE,
      vjp=lambda b, cts, ins, outs, defined: [Defined(cts[0], defined[0])] * 2,
      doc="list_add(a, b): the elementwise sums of two lists of one length")
defop("list_unwrite", _unwrite_infer, _unwrite_kernel, arity=3, traits=_LIST,
      doc="list_unwrite(c, i, l): the cotangent of l, given the cotangent c of "
          "list_write(l, i, x): c without its last element where i == len(l), else c "
          "with element i zeroed")


def _fill_infer(types, attrs):
    _list_of(types, "list_fill")
    if not isinstance(types[1], TensorType):
        raise ShapeError(f"list_fill fills a list with a tensor, got {types[1]}")
    return ListType(types[1])


def _any_infer(types, attrs):
    flag = TensorType(dtypes.bool_, ())
    if _list_of(types, "list_any").elem != flag:
        raise ShapeError(f"list_any takes a list of bool scalars, got {types[0]}")
    return flag


defop("list_fill", _fill_infer, lambda items, x: tuple(x for _ in items), arity=2,
      traits=_LIST, nondiff=True,
      doc="list_fill(l, x): a list as long as l whose every element is x (the VJP rules "
          "say with a list of bools whether each element's cotangent exists)")
defop("list_any", _any_infer, lambda items: np.asarray(any(map(bool, items))), arity=1,
      traits=_LIST, nondiff=True,
      doc="list_any(l): whether any element of a list of bool scalars is true")


# ---------------------------------------------------------------- slices and concatenation

def _slice_infer(what: str):
    def infer(types, attrs):
        lst = _list_of(types, what)
        for t in types[1:3]:
            _check_index(t, what)
        if types[3:] and types[3] != lst:
            raise ShapeError(f"{what}: the list sliced is {types[3]}, not {lst}")
        if attrs["step"] == 0:
            raise ShapeError(f"{what}: the step must not be zero")
        return lst
    return infer


def _slice_vjp(b, cts, ins, outs, defined, step):
    if cts[0] is None:
        return [None, None, None]
    flags = defined[0] if defined[0] is False else b.list_unslice(
        b.flag(defined[0], like=cts[0]), ins[1], ins[2], b.flag(False, like=ins[0]), step=step)
    return [Defined(b.list_unslice(cts[0], ins[1], ins[2], ins[0], step=step), flags),
            None, None]


def _unslice_kernel(cts, start, stop, items, step):
    """The cotangent of `items` from that of ``items[start:stop:step]``: zeros where
    the slice took nothing."""
    out = [np.zeros_like(a) for a in items]
    for k, j in enumerate(range(len(items))[int(start):int(stop):step]):
        out[j] = cts[k]
    return tuple(out)


def _concat_vjp(b, cts, ins, outs, defined):
    if cts[0] is None:
        return [None, None]
    split = b.list_len(ins[0])

    def halves(items):
        return (b.list_slice(items, b.constant(0, dtypes.int64), split, step=1),
                b.list_slice(items, split, b.list_len(items), step=1))

    flags = halves(defined[0]) if is_list(defined[0]) else defined * 2
    return [Defined(ct, flag) for ct, flag in zip(halves(cts[0]), flags)]


def _unslice_vjp(b, cts, ins, outs, defined, step):
    def sliced(items):
        return b.list_slice(items, ins[1], ins[2], step=step)

    flags = sliced(defined[0]) if is_list(defined[0]) else defined[0]
    return [Defined(sliced(cts[0]), flags), None, None, None]


defop("list_slice", _slice_infer("list_slice"),
      lambda items, start, stop, step: items[int(start):int(stop):step], arity=3,
      attrs={"step": 1}, traits=_DIFFERENTIABLE, vjp=_slice_vjp,
      doc="list_slice(l, start, stop) {step}: l[start:stop:step] as in Python (i64 "
          "scalars; negative counts from the end, out of range is clamped)")
defop("list_concat", _same_lists_infer("list_concat"), lambda a, b: (*a, *b), arity=2,
      traits=_DIFFERENTIABLE, vjp=_concat_vjp,
      doc="list_concat(a, b): the elements of a, then those of b")
defop("list_unslice", _slice_infer("list_unslice"), _unslice_kernel, arity=4,
      attrs={"step": 1}, traits=_DIFFERENTIABLE, vjp=_unslice_vjp,
      doc="list_unslice(c, start, stop, l) {step}: the cotangent of l, given the "
          "cotangent c of list_slice(l, start, stop): c's elements at the positions the "
          "slice took, zeros elsewhere")
