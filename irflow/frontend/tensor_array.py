"""`TensorArray`: a Python list of tensors that a tensor-dependent loop grows, while
tracing.

``outs.append(h)`` in a ``while`` whose trip count only the run knows cannot stay a
Python list: the loop's body is traced once. The loop conversion (`jst`) finds such
lists and replaces them, for the trace, by a `TensorArray`: a traced value of IR
type ``list<T>`` that behaves like the list where the user's code touches it
(``append``, ``extend``, ``insert``, ``pop()``, ``reverse()``, ``outs[i]``,
slices such as ``outs[1:]`` or ``outs[::-1]``, ``outs + [x]``, and, in converted
code, ``len(outs)``, ``for o in outs``, ``reversed``, ``enumerate``, ``zip``, ``sum``
and comprehensions; ``paddle.stack(outs)`` and ``paddle.concat(outs)``, Paddle's
``array_write``/``array_read``/``array_length``). It is a `Tensor` to the tracer,
so branches and loops carry and yield it like any traced tensor; returned from a
compiled function, it comes back as a Python list of tensors.
"""
from __future__ import annotations

from ..dispatch import apply, user_location
from ..errors import ConversionError
from ..ir import dtypes
from ..ir.types import ListType, TensorType, dim_mul
from ..tensor.tensor import Tensor
from .structure import Container, Structure, describe, flatten, unflatten


class Concatenation:
    """``+`` and ``+=`` of grown lists, with each other and with Python lists, from
    the list's `copy`, `extend` and `empty`."""
    __slots__ = ()

    def __add__(self, other):
        if not isinstance(other, list | type(self)):
            return NotImplemented
        out = self.copy()
        out.extend(other)
        return out

    def __radd__(self, other):
        if not isinstance(other, list):
            return NotImplemented
        out = self.empty()
        out.extend(other)
        out.extend(self)
        return out

    def __iadd__(self, other):
        self.extend(other)
        return self


class TensorArray(Concatenation, Tensor):
    __slots__ = ()

    @classmethod
    def of(cls, t: Tensor) -> "TensorArray":
        """`t` (a traced tensor of a list type) as a TensorArray."""
        array = cls._from_array(None)
        array._ir, array._tracer, array.stop_gradient = t._ir, t._tracer, t.stop_gradient
        return array

    @classmethod
    def new(cls, tracer, elem: TensorType, items=(), loc=None) -> "TensorArray":
        """A list of `elem`s holding `items`, built where the tracer is."""
        b = tracer.scope.builder
        with b.location(loc or user_location()):
            array = cls.of(tracer.wrap(b.create("list_new", result_types=[ListType(elem)])
                                       .result))
        for item in items:
            array.append(item)
        return array

    @property
    def elem_type(self) -> TensorType:
        return self._ir.type.elem

    def _become(self, t: Tensor) -> None:
        """In-place list semantics: this object is now the list `t` (another value)."""
        self._ir, self.stop_gradient = t._ir, t.stop_gradient

    def _element(self, x) -> Tensor:
        from ..tensor.convert import as_tensor, cast
        x = as_tensor(x, like=_like(self.elem_type))
        if x.dtype is not self.elem_type.dtype:
            x = cast(x, self.elem_type.dtype)
        return x

    # -- the list protocol
    def append(self, x) -> None:
        self._become(apply("list_append", [self, self._element(x)]))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._slice(i)
        return apply("list_get", [self, _index(i)])

    def _slice(self, s: slice) -> "TensorArray":
        step = 1 if s.step is None else s.step
        if isinstance(step, bool) or not isinstance(step, int) or step == 0:
            raise ConversionError("a slice of a list grown in a tensor-dependent loop takes "
                                  f"a nonzero Python int step, got {step!r}", user_location())
        n = self.length()
        start = s.start if s.start is not None else (0 if step > 0 else -1)
        stop = s.stop if s.stop is not None else (n if step > 0 else -n - 1)
        out = apply("list_slice", [self, _index(start), _index(stop)], {"step": step})
        if s.start is None and s.stop is None and step in (1, -1):
            self._tracer.as_long_as(out._ir, self._ir)
        return out

    read = __getitem__

    def __setitem__(self, i, x) -> None:
        self._become(apply("list_set", [self, _index(i), self._element(x)]))

    def pop(self, i=-1):
        if not isinstance(i, int) or i != -1:
            raise ConversionError("pop() of a list grown in a tensor-dependent loop takes "
                                  "only the last element", user_location())
        rest, last = apply("list_pop", [self])
        self._become(rest)
        return last

    def extend(self, items) -> None:
        if isinstance(items, TensorArray):
            self._become(apply("list_concat", [self, items]))
            return
        for x in items:
            self.append(x)

    def insert(self, i, x) -> None:
        head = self[:i]
        head.append(x)
        self._become(apply("list_concat", [head, self[i:]]))

    def reverse(self) -> None:
        self._become(self[::-1])

    def copy(self) -> "TensorArray":
        return TensorArray.of(self)  # list values are immutable: a new name for one

    def empty(self) -> "TensorArray":
        return TensorArray.new(self._tracer, self.elem_type)

    def write(self, i, x) -> "TensorArray":
        """Paddle's ``array_write``: set element `i`, or append where `i` is the length."""
        self._become(apply("list_write", [self, _index(i), self._element(x)]))
        return self

    def length(self) -> Tensor:
        """The number of elements, an i64 scalar known when the program runs."""
        return apply("list_len", [self])

    def _stack_elements(self, axis: int) -> Tensor:
        rank = self.elem_type.rank
        axis = axis + rank + 1 if axis < 0 else axis
        return apply("list_stack", [self], {"axis": axis,
                                             "size": self._tracer.list_size(self._ir)})

    def _concat_elements(self, axis: int) -> Tensor:
        from ..tensor.manipulation import reshape
        shape = self.elem_type.shape
        axis = axis + len(shape) if axis < 0 else axis
        stacked = self._stack_elements(axis)
        size = stacked._ir.type.shape[axis]
        return reshape(stacked, [*shape[:axis], dim_mul(size, shape[axis]), *shape[axis + 1:]])

    def __len__(self) -> int:
        raise ConversionError("the length of a list grown in a tensor-dependent loop is "
                              "known only when the program runs; in converted code len() "
                              "gives it as a tensor", user_location())

    def __iter__(self):
        raise ConversionError("iterating over a list grown in a tensor-dependent loop is "
                              "supported in a converted `for` loop", user_location())

    @property
    def shape(self):
        raise ConversionError("a list grown in a tensor-dependent loop has no shape; "
                              "paddle.stack(outs) makes it a tensor", user_location())

    def __repr__(self) -> str:
        return f"TensorArray(traced, elements {self.elem_type})"


class TupleArray(Concatenation, Container):
    """A list of tuples (or other nested structures of tensors) that a tensor-dependent
    loop grows, ``states.append((h, c))``: one `TensorArray` per position of the item
    (`fields`), read back together, so ``states[-1]`` is a tuple ``(h, c)`` again.
    Compiled functions return it as the Python list of tuples it stands for."""

    def __init__(self, item: Structure, fields: list):
        self.item, self.fields_ = item, fields

    def fields(self):
        return (self.item,), self.fields_

    @classmethod
    def rebuild(cls, keys, children):
        (item,) = keys
        if any(isinstance(f, TensorArray) for f in children):
            return cls(item, children)
        return [unflatten(item, leaves) for leaves in zip(*children)]  # values of a run

    def _leaves(self, x) -> list:
        leaves, structure = flatten(x)
        if structure != self.item:
            raise ConversionError(f"a list of {self._item_text()} "
                                  f"grown in a tensor-dependent loop cannot take "
                                  f"{describe(x)}", user_location())
        return leaves

    def append(self, x) -> None:
        for field, leaf in zip(self.fields_, self._leaves(x)):
            field.append(leaf)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return TupleArray(self.item, [f[i] for f in self.fields_])
        return unflatten(self.item, [f[i] for f in self.fields_])

    def pop(self, i=-1):
        return unflatten(self.item, [f.pop(i) for f in self.fields_])

    def extend(self, items) -> None:
        if isinstance(items, TupleArray):
            for field, other in zip(self.fields_, self._same(items).fields_):
                field.extend(other)
            return
        for x in items:
            self.append(x)

    def _same(self, other: "TupleArray") -> "TupleArray":
        if other.item != self.item:
            raise ConversionError("lists of different structures grown in tensor-dependent "
                                  "loops cannot be joined", user_location())
        return other

    def insert(self, i, x) -> None:
        for field, leaf in zip(self.fields_, self._leaves(x)):
            field.insert(i, leaf)

    def reverse(self) -> None:
        for field in self.fields_:
            field.reverse()

    def copy(self) -> "TupleArray":
        return TupleArray(self.item, [f.copy() for f in self.fields_])

    def length(self) -> Tensor:
        return self.fields_[0].length()

    def empty(self) -> "TupleArray":
        return TupleArray(self.item, [f.empty() for f in self.fields_])

    __len__, __iter__ = TensorArray.__len__, TensorArray.__iter__

    def __repr__(self) -> str:
        return f"TupleArray(traced, items {self._item_text()})"

    def _item_text(self) -> str:
        return describe(unflatten(self.item, [_like(f.elem_type) for f in self.fields_]))


GROWN_LISTS = (TensorArray, TupleArray)


def _like(t: TensorType) -> Tensor:
    import numpy as np
    return Tensor._from_array(np.zeros((), dtype=t.dtype.np))


def _index(i) -> Tensor:
    """An index as an i64 scalar tensor: a Python int, or a one-element tensor
    (Paddle's tensor arrays take ``i`` of shape [1])."""
    from ..tensor.convert import as_tensor, cast
    from ..tensor.manipulation import reshape
    if isinstance(i, bool) or not isinstance(i, int | Tensor):
        raise ConversionError(f"a list index must be an int or an integer tensor, got "
                              f"{type(i).__name__}", user_location())
    t = as_tensor(i)
    if not t.dtype.is_int:
        raise ConversionError(f"a list index must be an integer, got {t.dtype.name}",
                              user_location())
    if t.size != 1:
        raise ConversionError(f"a list index must be a single value, got shape {t.shape}",
                              user_location())
    return cast(reshape(t, []), dtypes.int64)


def list_type(elements, tracer) -> ListType:
    """The type of a TensorArray holding `elements` (tensors or numbers of one type)."""
    types = {tracer.value_of(_as_tensor(e)).type for e in elements}
    if len(types) != 1:
        raise ConversionError("a list grown in a tensor-dependent loop must hold tensors of "
                              "one dtype and shape, got " + ", ".join(sorted(map(str, types))),
                              user_location())
    return ListType(types.pop())


def _as_tensor(e) -> Tensor:
    from ..tensor.convert import as_tensor
    return as_tensor(e)
