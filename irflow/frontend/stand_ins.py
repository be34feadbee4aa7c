"""Traced stand-ins for the Python and NumPy values eager code has.

Eagerly, ``x.item()``, ``float(x)``, ``len(x)``, ``x.shape[0]`` and a counter a loop
increments are Python numbers, and ``x.numpy()`` is an array; in a compiled program
they exist only when it runs. While tracing they are traced tensors of these classes,
so that they behave as the values they stand for where it matters: a
`PythonScalar` prints as a number (``print(loss.item())`` shows ``0.25``, not a
Tensor, and so does ``f"{m:.3f}"``: see `Tracer.text_of`), has Python's dtype for
the number (a float is a double, an int an int64), so that arithmetic with other
numbers computes and rounds as Python's, and meets a tensor as the number would
(`irflow.tensor.convert.result_dtype`); a `NumpyView` prints as the array, and
refuses NumPy functions with a clear error. Both are tensors to the tracer.
"""
from __future__ import annotations

import numbers

from ..dispatch import user_location
from ..errors import ConversionError
from ..ir import dtypes
from ..tensor.tensor import Tensor


class _StandIn(Tensor):
    __slots__ = ()

    @classmethod
    def of(cls, t: Tensor):
        """`t` (a traced tensor) as this stand-in."""
        view = cls._from_array(None)
        view._ir, view._tracer, view.stop_gradient = t._ir, t._tracer, t.stop_gradient
        return view


class PythonScalar(_StandIn):
    """A traced value that eager code has as a Python number."""

    __slots__ = ()
    python_number = True

    def __str__(self) -> str:
        return format(self, "")

    def __format__(self, spec: str) -> str:
        if self._value is not None:
            return format(self._value.item(), spec)
        return self._tracer.text_of(self, spec, "number")

    def __hash__(self) -> int:
        """As the number's hash, so ``table[int(t)]`` finds the entry the number keys;
        a number known only when the program runs cannot pick one."""
        if self._value is not None:
            return hash(self._value.item())
        raise ConversionError("a dict lookup needs the value of the tensor used as a "
                              "key, which a compiled program only knows when it runs; "
                              "use a list or paddle ops to choose by a tensor",
                              user_location())

    def __floor__(self):
        return self._whole("floor")

    def __ceil__(self):
        return self._whole("ceil")

    def __trunc__(self):
        return self._whole("trunc")

    def _whole(self, rounding: str):
        """``math.floor``/``ceil``/``trunc``, ``round``: a Python int, so an i64 scalar."""
        from ..dispatch import apply
        if self.dtype.is_int:
            return self
        whole = self if rounding == "trunc" else apply(rounding, [self])
        return apply("cast", [whole], {"dtype": dtypes.int64})

    def __truediv__(self, other):
        if not _is_number(other):
            return Tensor.__truediv__(self, other)
        return Tensor.__truediv__(_as_double(self), _as_double(other))

    def __rtruediv__(self, other):
        if not _is_number(other):
            return Tensor.__rtruediv__(self, other)
        return Tensor.__rtruediv__(_as_double(self), _as_double(other))

    def __pow__(self, other):
        """Python's ``**``: an int to a negative int power is a float (``2 ** -1``)."""
        if self.dtype.is_int and isinstance(other, numbers.Integral) and other < 0:
            return Tensor.__pow__(_as_double(self), other)
        return Tensor.__pow__(self, other)

    def __round__(self, ndigits=None):
        """``round(x)``: a Python int, as ``math.floor`` gives; ``round(x, n)`` a float."""
        from ..dispatch import apply
        if ndigits is None:
            return self._whole("round")
        scale = 10.0 ** ndigits
        return apply("round", [self * scale]) / scale


def python_list(t: Tensor):
    """``t.tolist()`` of a traced `t`: nested Python lists of stand-ins for its numbers,
    which print, index and compute as the list eager code has does; a 0-d `t` gives
    one number. A size known only when the program runs makes no such list."""
    from ..tensor.convert import cast, python_number_dtype
    from ..tensor.manipulation import reshape, unbind
    shape = t._ir.type.shape
    if not all(isinstance(d, int) for d in shape):
        raise ConversionError("tolist() of a tensor whose size is known only when the "
                              "program runs makes a list of a length compiled code does "
                              "not know; print the tensor, or index it", user_location())
    if not shape:
        return t.item()
    flat = cast(reshape(t.detach(), [-1]), python_number_dtype(t.dtype))
    numbers_ = [PythonScalar.of(n) for n in unbind(flat)]
    return _nested(numbers_, list(shape))


def _nested(items: list, shape: list) -> list:
    """`items` (row-major) as nested lists of `shape`."""
    if len(shape) == 1:
        return items
    step = len(items) // shape[0] if shape[0] else 0
    return [_nested(items[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])]


def _is_number(v) -> bool:
    """Whether `v` is a Python number or a stand-in for one: a number meeting a
    stand-in computes as in Python, a tensor as with the number eager code has."""
    return v.python_number if isinstance(v, Tensor) else isinstance(v, numbers.Number)


def _as_double(v):
    """`v`, a Python number or a stand-in for one, as a double: Python's true division
    divides ints as floats (``7 / 2`` is 3.5)."""
    from ..tensor.convert import cast
    return cast(v, dtypes.float64) if isinstance(v, Tensor) else float(v)


class NumpyView(_StandIn):
    """What ``t.numpy()`` gives for a traced `t` in converted code: `t` itself, still
    symbolic (as ``.item()`` is), so ``if t.numpy() > 0`` and ``for row in t.numpy()``
    convert. NumPy functions, which need the values, refuse it with a clear error."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        """As NumPy's: the array's text, or for a 0-d array a number's with a spec."""
        if spec and self.ndim:
            raise TypeError("unsupported format string passed to numpy.ndarray.__format__")
        return self._tracer.text_of(self, spec, "array")

    @property
    def shape(self) -> tuple:
        """NumPy's: a tuple."""
        return tuple(Tensor.shape.fget(self))

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """NumPy's: the deviation about the mean over n - `ddof` (Paddle's `std` is
        unbiased by default)."""
        return self._spread("std", axis, dtype, out, ddof, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """NumPy's, as `std`."""
        return self._spread("var", axis, dtype, out, ddof, keepdims)

    def _spread(self, name: str, axis, dtype, out, ddof, keepdims):
        if dtype is not None or out is not None or ddof not in (0, 1):
            self._refuse(name)
        return getattr(Tensor, name)(self, axis=axis, unbiased=ddof == 1, keepdim=keepdims)

    def _refuse(self, what: str):
        raise ConversionError(f"NumPy's {what}() needs the values of .numpy(), which a "
                              "compiled program only knows when it runs; use the paddle "
                              "function of the same name on the tensor", user_location())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._refuse(ufunc.__name__)

    def __array_function__(self, func, types_, args, kwargs):
        self._refuse(func.__name__)
