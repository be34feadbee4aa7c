"""Paddle's tensor arrays (``paddle.tensor.create_array``, ``array_write``,
``array_read``, ``array_length``): in the dynamic graph, as in Paddle's, an array is
a Python list of tensors and the index a one-element int tensor. In compiled code an
array that a tensor-dependent loop writes is a list the program grows (any object
other than a plain list brings its own ``write``, ``read`` and ``length``)."""
from __future__ import annotations

from ..errors import IrflowError
from .convert import traced_dim
from .tensor import Tensor


def create_array(dtype, initialized_list=None) -> list:
    array = list(initialized_list) if initialized_list is not None else []
    for value in array:
        if not isinstance(value, Tensor):
            raise TypeError(f"create_array: every value of initialized_list must be a "
                            f"Tensor, got {type(value).__name__}")
    return array


def _index(i) -> int:
    """The position `i` gives: while tracing, an index made of constants (such as
    ``paddle.full([1], k, "int64")`` in a Python loop) is known."""
    if isinstance(i, Tensor) and i._value is None:
        known = traced_dim(i)
        if isinstance(known, int):
            return known
    return int(i.item(0)) if isinstance(i, Tensor) else int(i)


def array_write(x, i, array=None) -> list:
    """Write `x` at position `i` of `array` (a new array if None), which may be one
    past its end; returns the array."""
    array = [] if array is None else array
    if type(array) is not list:
        return array.write(i, x)
    index = _index(i)
    if index > len(array):
        raise IrflowError(f"array_write: index {index} is past the end of an array of "
                          f"length {len(array)}")
    if index == len(array):
        array.append(x)
    else:
        array[index] = x
    return array


def array_read(array, i) -> Tensor:
    if type(array) is not list:
        return array.read(i)
    return array[_index(i)]


def array_length(array):
    """The array's length: an int, or in compiled code an i64 tensor."""
    if type(array) is not list:
        return array.length()
    return len(array)
