"""`TensorArray`: a Python list of tensors that a tensor-dependent loop grows, while
tracing.

``outs.append(h)`` in a ``while`` whose trip count only the run knows cannot stay a
Python list: the loop's body is traced once. The loop conversion (`jst`) finds such
lists and replaces them, for the trace, by a `TensorArray`: a traced value of IR
type ``list<T>`` that behaves like the list where the user's code touches it
(``append``, ``outs[i]``, ``outs[-1]``, ``len(outs)`` and ``for o in outs`` in
converted code, ``paddle.stack(outs)`` and ``paddle.concat(outs)``, Paddle's
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


class TensorArray(Tensor):
    __slots__ = ()

    @classmethod
    def of(cls, t: Tensor) -> "TensorArray":
        """`t` (a traced tensor of a list type) as a TensorArray."""
        array = cls._from_array(None)
        array._ir, array._tracer, array.stop_gradient = t._ir, t._tracer, t.stop_gradient
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
        return apply("list_get", [self, _index(i)])

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
