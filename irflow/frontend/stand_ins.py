"""Traced stand-ins for the Python and NumPy values eager code has.

Eagerly, ``x.item()``, ``float(x)``, ``len(x)``, ``x.shape[0]`` and a counter a loop
increments are Python numbers, and ``x.numpy()`` is an array; in a compiled program
they exist only when it runs. While tracing they are traced tensors of these classes,
so that they behave as the values they stand for where it matters: a
`PythonScalar` prints as a number (``print(loss.item())`` shows ``0.25``, not a
Tensor, and so does ``f"{m:.3f}"``: see `Tracer.text_of`), propagates through
arithmetic with other numbers and rounds; a `NumpyView` refuses NumPy functions
with a clear error. Both are tensors to the tracer.
"""
from __future__ import annotations

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
        return self._tracer.text_of(self, spec, scalar=True)

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
        """``math.floor``/``ceil``/``trunc``: a Python int, so an i64 scalar."""
        from ..dispatch import apply
        if self.dtype.is_int:
            return self
        whole = self if rounding == "trunc" else apply(rounding, [self])
        return apply("cast", [whole], {"dtype": dtypes.int64})

    def __round__(self, ndigits=None):
        from ..dispatch import apply
        if ndigits is None:
            return apply("round", [self])
        scale = 10.0 ** ndigits
        return apply("round", [self * scale]) / scale


class NumpyView(_StandIn):
    """What ``t.numpy()`` gives for a traced `t` in converted code: `t` itself, still
    symbolic (as ``.item()`` is), so ``if t.numpy() > 0`` and ``for row in t.numpy()``
    convert. NumPy functions, which need the values, refuse it with a clear error."""

    __slots__ = ()

    def _refuse(self, what: str):
        raise ConversionError(f"NumPy's {what}() needs the values of .numpy(), which a "
                              "compiled program only knows when it runs; use the paddle "
                              "function of the same name on the tensor", user_location())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._refuse(ufunc.__name__)

    def __array_function__(self, func, types_, args, kwargs):
        self._refuse(func.__name__)
