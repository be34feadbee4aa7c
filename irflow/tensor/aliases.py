"""Names Paddle 3.3 added over its own functions: the in-place forms of its math,
logic and shape functions (``paddle.sin_(x)``, ``x.equal_(y)``), the torch-style
aliases (``paddle.cat``, ``clamp``, ``eq``, ``ger``...) and Tensor's dtype and device
methods (``x.float()``, ``x.to("float64")``, ``x.requires_grad``). Each is made from
the irflow function that computes it, so values, dtypes and gradients are that
function's."""
from __future__ import annotations

import builtins
import functools

import numpy as np

from ..device import CPUPlace
from ..dispatch import user_location
from ..errors import ShapeError
from ..ir import dtypes
from ..ir.types import numel
from . import arrangement, linalg, logic, manipulation, math
from .convert import as_tensor as _tensor_of
from .convert import cast, get_default_dtype
from .creation import to_tensor
from .manipulation import _rebind, check_in_place, exact_shape, in_place
from .tensor import Tensor

__all__ = [
    "abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "cos_", "cosh_", "sin_",
    "sinh_", "tan_", "tanh_", "erf_", "expm1_", "digamma_", "lgamma_", "log_", "log2_",
    "log10_", "log1p_", "logit_", "neg_", "trunc_", "square_", "nan_to_num_", "cumsum_",
    "cumprod_", "pow_", "mod_", "remainder_", "floor_mod_", "floor_divide_", "index_add_",
    "scatter_", "scatter_add_", "where_", "divide_", "div_", "multiply_",
    "subtract_", "sub_", "logical_and_", "logical_or_", "logical_xor_", "logical_not_",
    "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", "bitwise_invert",
    "bitwise_invert_", "equal_", "not_equal_", "less_than_", "less_equal_", "greater_than_",
    "greater_equal_", "less_", "cast_", "tril_", "triu_", "reshape_", "squeeze_",
    "unsqueeze_", "flatten_", "transpose_", "masked_fill_", "index_put_", "t_",
    "cat", "concatenate", "clamp", "eq", "ne", "gt", "ge", "lt", "le", "less", "greater",
    "mul", "sub", "div", "true_divide", "floor_mod", "negative", "positive", "sgn",
    "reverse", "matrix_transpose", "vecdot", "ger", "take_along_dim", "range", "asarray",
    "as_tensor", "from_numpy",
]


# -- in-place forms ---------------------------------------------------------------------

def in_place_form(name: str, fn, judge: str | None = None, keep_shape: bool = True,
              takes_dtype: bool = False):
    """``paddle.name_`` from `fn`, which computes ``paddle.name``: x takes
    ``fn(x, ...)`` and is returned, as Paddle's in-place functions; a leaf that requires
    a gradient is refused (`check_in_place`). `judge` names the function `in_place`
    judges a dtype change by (``clamp_`` is ``clip``'s); with `takes_dtype` x takes
    the result's dtype whatever it is, as Paddle's ``equal_`` (x becomes bool),
    ``cast_`` and ``log_`` of an int tensor (float32) do."""
    judge = judge or name

    @functools.wraps(fn)
    def op(x, *args, **kwargs):
        result = fn(x, *args, **kwargs)
        if takes_dtype:
            return _become(x, result, name, keep_shape)
        return in_place(x, result, judge, keep_shape, args + tuple(kwargs.values()))
    op.__name__ = op.__qualname__ = f"{name}_"
    op.__doc__ = (f"``paddle.{name}`` in place: its first argument takes the result and "
                  "is returned.")
    return op


def _become(x: Tensor, result: Tensor, name: str, keep_shape: bool) -> Tensor:
    """x made `result`, dtype and all (see `_in_place`)."""
    check_in_place(x)
    if keep_shape and tuple(exact_shape(result)) != tuple(exact_shape(x)):
        raise ShapeError(f"{name}_: the result has shape {list(exact_shape(result))}, but "
                         f"an in-place change keeps the tensor's shape "
                         f"{list(exact_shape(x))}", user_location())
    _rebind(x, result)
    return x


def _cumsum_keeping_dtype(x, axis=None, dtype=None, name=None) -> Tensor:
    """cumsum in x's dtype unless `dtype` says otherwise: Paddle's ``cumsum_`` keeps an
    int32 tensor int32, where ``cumsum`` makes it int64."""
    return math.cumsum(x, axis, x.dtype if dtype is None else dtype)


abs_, acos_, acosh_, asin_, asinh_, atan_, atanh_, cos_, cosh_, sin_, sinh_, tan_, tanh_ = (
    in_place_form(n, getattr(math, n)) for n in ["abs", "acos", "acosh", "asin", "asinh", "atan",
                                             "atanh", "cos", "cosh", "sin", "sinh", "tan",
                                             "tanh"])
erf_, digamma_, lgamma_, logit_, neg_, trunc_, square_, nan_to_num_, pow_ = (
    in_place_form(n, getattr(math, n)) for n in ["erf", "digamma", "lgamma", "logit", "neg",
                                             "trunc", "square", "nan_to_num", "pow"])
# Paddle makes an int tensor float32 in place by these (where sin_ has no int kernel)
expm1_, log_, log2_, log10_, log1p_ = (
    in_place_form(n, getattr(math, n), takes_dtype=True)
    for n in ["expm1", "log", "log2", "log10", "log1p"])
# with no axis the tensor becomes the 1-D running total, as in Paddle
cumsum_ = in_place_form("cumsum", _cumsum_keeping_dtype, keep_shape=False, takes_dtype=True)
cumprod_ = in_place_form("cumprod", math.cumprod, keep_shape=False, takes_dtype=True)
mod_ = remainder_ = floor_mod_ = in_place_form("remainder", math.remainder)
floor_divide_ = in_place_form("floor_divide", math.floor_divide)
index_add_ = in_place_form("index_add", manipulation.index_add)
scatter_ = in_place_form("scatter", manipulation.scatter)
scatter_add_ = in_place_form("scatter_add", arrangement.scatter_add)


def where_(condition, x, y=None, name=None) -> Tensor:
    """``paddle.where`` in place: x (the second argument, as in Paddle) takes
    ``where(condition, x, y)`` and is returned. x and y are tensors, as Paddle's
    where_ requires: a Python number would make x change dtype (``where`` makes a
    float16 tensor and 1.5 float32)."""
    for what, value in (("x", x), ("y", y)):
        if value is not None and not isinstance(value, Tensor):
            raise ValueError(f"where_: {what} must be a tensor (as in Paddle), got "
                             f"{type(value).__name__} {value!r}; use paddle.where, or "
                             f"paddle.full_like(x, {value!r}) for a number")
    return in_place(x, logic.where(condition, x, y), "where", True, (y,))
multiply_ = in_place_form("multiply", math.multiply)
logical_and_, logical_or_, logical_xor_, logical_not_ = (
    in_place_form(n, getattr(logic, n), takes_dtype=True)
    for n in ["logical_and", "logical_or", "logical_xor", "logical_not"])
bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_not_ = (
    in_place_form(n, getattr(logic, n)) for n in ["bitwise_and", "bitwise_or", "bitwise_xor",
                                              "bitwise_not"])
bitwise_invert, bitwise_invert_ = logic.bitwise_not, bitwise_not_
equal_, not_equal_, less_than_, less_equal_, greater_than_, greater_equal_ = (
    in_place_form(n, getattr(logic, n), takes_dtype=True)
    for n in ["equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal"])
less_ = less_than_
cast_ = in_place_form("cast", cast, takes_dtype=True)
tril_, triu_ = in_place_form("tril", linalg.tril), in_place_form("triu", linalg.triu)
reshape_, squeeze_, unsqueeze_, flatten_, transpose_, t_ = (
    in_place_form(n, getattr(manipulation, n), keep_shape=False)
    for n in ["reshape", "squeeze", "unsqueeze", "flatten", "transpose", "t"])
masked_fill_ = in_place_form("masked_fill", manipulation.masked_fill)
index_put_ = in_place_form("index_put", manipulation.index_put)


# -- aliases ----------------------------------------------------------------------------

def cat(x, axis=0, name=None) -> Tensor:
    """Paddle's alias of `concat`: the tensors joined along `axis`."""
    return manipulation.concat(x, _axis(axis), name)


concatenate = cat


def _axis(axis) -> int:
    """An axis given as an int or (as Paddle allows) a 0-D int tensor."""
    return int(axis.item()) if isinstance(axis, Tensor) else int(axis)


def clamp(x, min=None, max=None, name=None) -> Tensor:  # noqa: A002  (Paddle's names)
    """Paddle's alias of `clip`: x limited to [min, max]."""
    return math.clip(x, min, max, name)


clamp_ = in_place_form("clamp", clamp, "clip")

eq, ne, gt, ge = logic.equal, logic.not_equal, logic.greater_than, logic.greater_equal
lt = less = logic.less_than
le = logic.less_equal
greater = logic.greater_than
mul, floor_mod, negative, reverse, ger = (math.multiply, math.remainder, math.neg,
                                          manipulation.flip, math.outer)
take_along_dim = manipulation.take_along_axis


sub = math.subtract
subtract_ = sub_ = in_place_form("subtract", sub)

div = math.divide

divide_ = div_ = in_place_form("divide", div)


def true_divide(input, other) -> Tensor:  # noqa: A002  (Paddle's names)
    """input / other as floats (ints give float32), Paddle's torch-style `divide`."""
    return math.divide(input, other)


def positive(x, name=None) -> Tensor:
    """x itself (``+x``); Paddle refuses a bool tensor."""
    x = _tensor_of(x)
    if x.dtype is dtypes.bool_:
        raise TypeError("positive: the `+` operator is not defined for a bool tensor")
    return x


def sgn(x, name=None) -> Tensor:
    """The sign of each element (-1, 0 or 1) of a float tensor, as Paddle's, which has
    no int kernel (use `sign` for ints)."""
    x = _tensor_of(x)
    if not x.dtype.is_float:
        raise TypeError(f"sgn: the input should be a float tensor, not {x.dtype.name} "
                        "(use paddle.sign)")
    return math.sign(x)


def matrix_transpose(x, name=None) -> Tensor:
    """x with its last two axes swapped (a batch of matrices transposed)."""
    x = _tensor_of(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: the input should have at least 2 dims, not "
                         f"{x.ndim}")
    return manipulation.transpose(x, [*builtins.range(x.ndim - 2), x.ndim - 1, x.ndim - 2])


def vecdot(x, y, axis=-1, name=None) -> Tensor:
    """The dot products of x's and y's vectors along `axis` (the two broadcast); an
    int32 product sums to int64, as Paddle's `sum` does."""
    return math.sum(math.multiply(x, y), axis=axis)


def range(start=0, end=None, step=1, dtype=None, *, device=None,  # noqa: A001
          requires_grad=False, name=None) -> Tensor:
    """The numbers from `start` by `step` up to and INCLUDING `end` (Paddle's `range`,
    unlike `arange` and Python's range), in the default float dtype unless `dtype`
    says; ``range(n)`` is 0..n. The bounds are numbers or 0-D tensors."""
    _cpu_only(device, "range")
    start, end, step = (s.item() if isinstance(s, Tensor) else s for s in (start, end, step))
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("range: step should not be 0")
    count = builtins.max(int(np.floor((end - start) / step)) + 1, 0)
    dtype = dtypes.dtype(get_default_dtype() if dtype is None else dtype)
    values = start + step * np.arange(count, dtype=np.float64)
    out = Tensor._from_array(dtypes.astype(values, dtype))
    out.stop_gradient = not requires_grad
    return out


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """`obj` (a tensor, array, list or number) as a new tensor, as `to_tensor`."""
    _cpu_only(device, "asarray")
    return to_tensor(obj, dtype, stop_gradient=not requires_grad)


def as_tensor(data, dtype=None, device=None, requires_grad=False,
              pin_memory=False) -> Tensor:
    """`data` as a new tensor, as `to_tensor`."""
    _cpu_only(device, "as_tensor")
    return to_tensor(data, dtype, stop_gradient=not requires_grad)


def from_numpy(ndarray) -> Tensor:
    """A tensor of a NumPy array's values and dtype (a copy, as Paddle's)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: the input should be a numpy.ndarray, not "
                        f"{type(ndarray).__name__} (use paddle.to_tensor)")
    return to_tensor(ndarray, ndarray.dtype)


# -- Tensor's dtype and device methods --------------------------------------------------

def conversion_method(dtype: dtypes.DType):
    def method(self) -> Tensor:
        return cast(self, dtype)
    method.__doc__ = (f"The tensor as {dtype.name} (itself if it is already): "
                      f"``x.astype('{dtype.name}')``.")
    return method


CONVERSIONS = {
    "float": dtypes.float32, "double": dtypes.float64, "half": dtypes.float16,
    "bfloat16": dtypes.bfloat16, "int": dtypes.int32, "long": dtypes.int64,
    "short": dtypes.int16, "bool": dtypes.bool_, "byte": dtypes.uint8, "char": dtypes.int8,
}
"""Tensor's torch-style conversion methods and the dtype each casts to."""

_CPU_NAMES = ("cpu", "cpu:0")


def _cpu_only(device, what: str) -> None:
    """Refuse a device other than the CPU, the one irflow computes on."""
    if device is None or isinstance(device, CPUPlace) or \
            isinstance(device, str) and device.lower() in _CPU_NAMES:
        return
    raise ValueError(f"{what}: the device should not be {device!r}: irflow runs on the "
                     "CPU only (use 'cpu')")


def _is_device(value) -> bool:
    return isinstance(value, CPUPlace) or isinstance(value, str) and (
        value.lower().split(":")[0] in ("cpu", "gpu", "cuda", "xpu", "npu"))


def to(self, *args, **kwargs) -> Tensor:
    """The tensor on a device and/or as a dtype, given positionally or as ``device=``,
    ``dtype=`` (a tensor as the argument means its dtype); ``blocking`` and ``copy``
    are accepted. Only the CPU exists: another device is an error."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("blocking", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"Tensor.to: unexpected arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif _is_device(arg):
            device = arg
        elif not isinstance(arg, bool):
            dtype = arg
    _cpu_only(device, "Tensor.to")
    out = self if dtype is None else cast(self, dtype)
    return manipulation.clone(out) if copy and out is self else out


def cuda(self, device_id=None, blocking=True) -> Tensor:
    """Refused: irflow has no GPU (Paddle without one raises the same way)."""
    raise ValueError("Tensor.cuda: no GPU is available; irflow runs on the CPU only "
                     "(use the tensor as it is, or .cpu())")


def get_device(self) -> int:
    """-1: the tensor is on the CPU (Paddle's answer for a CPU tensor)."""
    return -1


def _get_requires_grad(self) -> bool:
    return not self.stop_gradient


def _set_requires_grad(self, value: bool) -> None:
    self.stop_gradient = not value


requires_grad = property(_get_requires_grad, _set_requires_grad,
                         doc="Whether gradients reach the tensor: ``not stop_gradient``.")


def requires_grad_(self, requires_grad=True) -> Tensor:
    """Set whether gradients reach the tensor (``stop_gradient = not requires_grad``);
    the tensor is returned."""
    self.stop_gradient = not requires_grad
    return self


itemsize = property(lambda self: self.element_size(),
                    doc="The bytes one element takes, as `element_size`.")


def stride(self, dim=None):
    """The elements one step along each axis skips: the C-contiguous strides, since
    irflow's tensors are never strided views (see `Tensor.is_contiguous`); with `dim`,
    that axis's."""
    shape = list(exact_shape(self))
    strides = [numel(shape[i + 1:]) for i in builtins.range(len(shape))]
    if dim is None:
        return strides
    if not -len(shape) <= dim < len(shape):
        raise IndexError(f"stride: dim {dim} is out of range for a tensor of "
                         f"{len(shape)} dims")
    return strides[dim]


def data_ptr(self) -> int:
    """The address of the tensor's first element in memory (a traced tensor, which has
    no storage, is refused)."""
    return self._concrete("data_ptr()").ctypes.data

