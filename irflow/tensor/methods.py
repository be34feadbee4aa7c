"""Tensor's operators and methods, each bound to the one function that implements it."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from . import (aliases, arrangement, covariance, histogram, linalg, logic, lu, manipulation,
               math, random, sampling, search, special, stat)
from .convert import as_tensor, cast
from .tensor import Tensor


def _reflected(fn):
    def method(self, other):
        return fn(as_tensor(other, like=self), self)
    return method


def _swapped(fn):
    """The reflected operator of `fn` that passes the other operand on as it is, for a
    function that types a Python number itself."""
    def method(self, other):
        return fn(other, self)
    return method


def _equality(fn):
    """``==`` or ``!=`` (`fn`) as Paddle's: elementwise against tensors, numbers and
    NumPy arrays; against anything else (None, a list, a tuple, a string) Python's own
    comparison, False for ``==``, so ``t == None`` and ``t in [None, other]`` are
    plain bools rather than elementwise tensors."""
    def method(self, other):
        if isinstance(other, Tensor | numbers.Number | np.ndarray | np.generic):
            return fn(self, other)
        return NotImplemented
    return method


def _astype(self, dtype):
    return cast(self, dtype)


def _type_as(self, other):
    """The tensor cast to `other`'s dtype."""
    return cast(self, other.dtype)


_OPERATORS = {
    "__add__": math.add, "__radd__": math.add,
    "__sub__": math._subtract, "__rsub__": _reflected(math._subtract),
    "__mul__": math.multiply, "__rmul__": math.multiply,
    "__truediv__": math._divide, "__rtruediv__": _swapped(math._divide),
    "__floordiv__": math.floor_divide, "__rfloordiv__": _reflected(math.floor_divide),
    "__mod__": math.remainder, "__rmod__": _reflected(math.remainder),
    "__pow__": math.pow, "__rpow__": _reflected(math.pow),
    "__matmul__": math.matmul, "__rmatmul__": _reflected(math.matmul),
    "__neg__": math.neg, "__pos__": aliases.positive, "__abs__": math.abs,
    "__invert__": logic.bitwise_not,
    "__and__": logic.bitwise_and, "__rand__": logic.bitwise_and,
    "__or__": logic.bitwise_or, "__ror__": logic.bitwise_or,
    "__xor__": logic.bitwise_xor, "__rxor__": logic.bitwise_xor,
    "__lshift__": logic.bitwise_left_shift,
    "__rlshift__": _reflected(logic.bitwise_left_shift),
    "__rshift__": logic.bitwise_right_shift,
    "__rrshift__": _reflected(logic.bitwise_right_shift),
    "__eq__": _equality(logic.equal), "__ne__": _equality(logic.not_equal),
    "__lt__": logic.less_than, "__le__": logic.less_equal,
    "__gt__": logic.greater_than, "__ge__": logic.greater_equal,
    "__getitem__": manipulation.getitem, "__setitem__": manipulation.setitem,
}

_METHODS = {
    "astype": _astype, "cast": _astype, "type_as": _type_as,
    **{name: getattr(math, name) for name in [
        "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "mod", "pow",
        "maximum", "minimum", "matmul", "mm", "dot", "abs", "neg", "sign", "exp", "log",
        "log1p", "log2", "log10", "sqrt", "rsqrt", "square", "reciprocal", "tanh", "sigmoid",
        "erf", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
        "acosh", "atanh", "atan2", "floor", "ceil", "round", "scale", "clip", "sum", "mean", "prod",
        "max", "min", "amax", "amin", "any", "all", "var", "std", "logsumexp", "norm", "cumsum",
        "cumprod", "cummax", "cummin", "bmm", "outer", "lerp", "logaddexp", "rad2deg",
        "deg2rad", "nan_to_num",
        "trunc", "fmax", "fmin", "expm1", "logit", "lgamma", "digamma", "erfinv",
        "heaviside", "frac", "stanh", "logcumsumexp"]},
    **{name: getattr(logic, name) for name in [
        "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal",
        "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
        "bitwise_left_shift", "bitwise_right_shift",
        "bitwise_xor", "bitwise_not", "isnan", "isinf",
        "isfinite", "allclose", "isclose", "equal_all", "where", "isin"]},
    **{name: getattr(manipulation, name) for name in [
        "reshape", "transpose", "t", "moveaxis", "squeeze", "unsqueeze", "flatten", "split",
        "chunk", "unbind", "flip", "broadcast_to", "expand", "expand_as", "tile", "gather",
        "index_select", "take_along_axis", "put_along_axis", "clone", "roll",
        "repeat_interleave", "gather_nd", "scatter", "masked_fill", "diff", "index_add",
        "rot90", "unflatten", "unstack", "index_put", "as_strided", "shard_index"]},
    **{name: getattr(search, name) for name in [
        "argmax", "argmin", "argsort", "sort", "topk", "nonzero", "unique", "masked_select",
        "bincount", "bucketize", "kthvalue", "mode", "unique_consecutive"]},
    **{name: getattr(linalg, name) for name in [
        "tril", "triu", "dist", "cross", "inner", "kron", "diagonal", "trace", "tensordot",
        "inverse", "slogdet", "solve", "matrix_power", "cholesky", "diag", "diagflat", "mv",
        "qr", "eigvalsh", "pinv", "lstsq", "cond"]},
    **{name: getattr(stat, name) for name in [
        "median", "nanmedian", "quantile", "nanquantile", "nansum", "nanmean",
        "count_nonzero"]},
    **{name: getattr(histogram, name)
       for name in ["histogram", "histogram_bin_edges", "histogramdd"]},
    **{name: getattr(covariance, name) for name in ["cov", "corrcoef"]},
    **{name: getattr(lu, name) for name in ["lu", "lu_unpack"]},
    **{name: getattr(arrangement, name) for name in [
        "hsplit", "vsplit", "dsplit", "tensor_split", "atleast_1d", "atleast_2d", "atleast_3d",
        "combinations", "diag_embed", "take", "index_sample", "index_fill", "index_fill_",
        "scatter_add", "scatter_reduce", "select_scatter", "slice_scatter", "diagonal_scatter",
        "masked_scatter", "masked_scatter_", "unfold", "swapaxes", "swapdims", "permute", "view",
        "view_as", "narrow", "ravel", "msort", "rank", "is_floating_point", "is_complex",
        "is_integer", "is_empty"]},
}

def _fill_(self, value):
    from .creation import full_like
    return manipulation.in_place(self, full_like(self, value), "fill")


def _zero_(self):
    return _fill_(self, 0)  # not x * 0, which keeps NaN and makes inf NaN


def _diagonal_positions(shape, offset: int, wrap: bool) -> np.ndarray:
    """The flat positions Paddle's ``fill_diagonal_`` kernel writes: every step of the
    sum of the strides (one down each dim) from the start, moved `offset` along the
    row when that stays in the row; without `wrap` a 2-D tensor stops after its first
    square block (``wrap`` restarts the diagonal below it; more dims always wrap)."""
    size, row = int(np.prod(shape)), shape[1]
    step = int(sum(np.prod(shape[k + 1:]) for k in range(len(shape))))
    if len(shape) == 2 and not wrap:
        size = min(size, row * row)
    starts = np.arange(0, size, step, dtype=np.int64)
    kept = starts[(starts % row + offset >= 0) & (starts % row + offset < row)] + offset
    return kept[kept < int(np.prod(shape))]


def _fill_diagonal_(self, value, offset=0, wrap=False, name=None):
    """``x.fill_diagonal_(value)``: x's diagonal (all indices equal, moved `offset`
    columns) set to `value` in x's dtype; the gradient through it is zero there."""
    shape = list(manipulation.exact_shape(self))
    if len(shape) < 2:
        raise ShapeError(f"fill_diagonal_: needs a tensor of at least 2 dims, got shape "
                         f"{shape}")
    mask = np.zeros(int(np.prod(shape)), dtype=bool)
    mask[_diagonal_positions(shape, int(offset), bool(wrap))] = True
    from .creation import full_like
    filled = logic.select(Tensor._from_array(mask.reshape(shape)), full_like(self, value), self)
    return manipulation.in_place(self, filled, "fill")


def _fill_diagonal_tensor(self, y, offset=0, dim1=0, dim2=1, name=None):
    """x with the diagonal of its (dim1, dim2) planes replaced by y, which has the
    shape ``x.diagonal(offset, dim1, dim2)`` gives (`arrangement.diagonal_scatter`)."""
    return arrangement.diagonal_scatter(self, y, offset, dim1, dim2)


def _copy_(self, other, blocking=True):
    """``x.copy_(y)``: x takes y's value (and shape), as Paddle's copy: no graph is
    recorded from y, a leaf that requires a gradient may take it (like `set_value`),
    and an intermediate passes gradients on to what it was made from at its new
    value. `blocking` is accepted for Paddle's signature (irflow computes
    synchronously). Returns x."""
    if not isinstance(other, Tensor):
        raise ArgumentError(f"copy_: the source must be a Tensor, as in Paddle, got "
                            f"{type(other).__name__}")
    if other.dtype is not self.dtype:
        raise DTypeError(f"copy_: the source is {other.dtype.name} but the tensor is "
                         f"{self.dtype.name}; Paddle copies between equal dtypes only "
                         f"(cast the source first)")
    same_shape = tuple(manipulation.exact_shape(other)) == tuple(manipulation.exact_shape(self))
    if same_shape or self._value is None or other._value is None:
        self.set_value(other)
    elif self._node is not None and not self.stop_gradient:
        raise ShapeError(f"copy_: a tensor of the dynamic graph keeps its shape "
                         f"{list(self.shape)}, got a source of shape {list(other.shape)}")
    else:
        self._value = other._value
    return self


_IN_PLACE = {
    **{f"{name}_": aliases.in_place_form(name, _METHODS[name]) for name in [
        "add", "subtract", "multiply", "divide", "scale", "clip", "exp", "sqrt", "rsqrt",
        "tanh", "sigmoid", "abs", "floor", "ceil", "round", "reciprocal", "pow", "square",
        "lerp", "nan_to_num", "frac", "index_put", "put_along_axis", "erfinv"]},
    **{f"{name}_": aliases.in_place_form(name, _METHODS[name], keep_shape=False)
       for name in ["reshape", "squeeze", "unsqueeze", "flatten"]},
    "zero_": _zero_, "fill_": _fill_, "uniform_": random.uniform_, "normal_": random.normal_,
    "fill_diagonal_": _fill_diagonal_, "copy_": _copy_,
    "fill_diagonal_tensor": _fill_diagonal_tensor,
    "fill_diagonal_tensor_": aliases.in_place_form("fill_diagonal_tensor", _fill_diagonal_tensor),
}

for _name, _fn in {**_OPERATORS, **_METHODS, **_IN_PLACE}.items():
    setattr(Tensor, _name, _fn)

for _name in ["multinomial", "vander", "exponential_", "bernoulli_", "cauchy_", "geometric_",
              "log_normal_", "new_zeros", "new_ones", "new_full", "new_empty"]:
    setattr(Tensor, _name, getattr(sampling, _name))

for _name in ["gammaln", "polygamma", "multigammaln", "gammainc", "gammaincc", "i0", "i0e",
              "i1", "i1e", "sinc", "hypot", "ldexp", "copysign", "frexp", "signbit", "gcd", "lcm",
              "isneginf", "isposinf", "isreal", "trapezoid", "cumulative_trapezoid", "cdist",
              "addmm", "baddbmm", "renorm"]:
    setattr(Tensor, _name, getattr(special, _name))
for _name in ["gammaln", "polygamma", "multigammaln", "gammainc", "gammaincc", "i0", "sinc",
              "hypot", "ldexp", "copysign", "gcd", "lcm", "addmm", "baddbmm", "renorm"]:
    setattr(Tensor, f"{_name}_", aliases.in_place_form(_name, getattr(special, _name)))

for _name in ["acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "cos_", "cosh_", "sin_",
              "sinh_", "tan_", "digamma_", "lgamma_", "log_", "log2_", "log10_", "log1p_",
              "logit_", "neg_", "trunc_", "cumsum_", "cumprod_", "mod_", "remainder_",
              "floor_mod_", "floor_divide_", "index_add_", "scatter_", "scatter_add_",
              "where_", "divide_",
              "div_", "subtract_", "sub_", "logical_and_",
              "logical_or_", "logical_xor_", "logical_not_", "bitwise_and_", "bitwise_or_",
              "bitwise_xor_", "bitwise_not_", "bitwise_invert", "bitwise_invert_", "equal_",
              "not_equal_", "less_than_", "less_equal_", "greater_than_", "greater_equal_",
              "less_", "cast_", "tril_", "triu_", "transpose_", "masked_fill_", "t_", "clamp",
              "clamp_", "eq", "ne", "gt", "ge", "lt", "le", "less", "greater", "mul", "sub",
              "div", "true_divide", "floor_mod", "negative", "sgn", "reverse",
              "matrix_transpose", "take_along_dim", "to", "cuda", "get_device", "requires_grad",
              "requires_grad_", "itemsize", "stride", "data_ptr"]:
    setattr(Tensor, _name, getattr(aliases, _name))
Tensor.mul_ = aliases.multiply_
for _name, _dtype in aliases.CONVERSIONS.items():
    setattr(Tensor, _name, aliases.conversion_method(_dtype))

# As Paddle's Tensor: NumPy ufuncs refuse Tensors, so ``ndarray + tensor`` calls
# Tensor.__radd__ and gives a Tensor (rather than NumPy computing an ndarray).
Tensor.__array_ufunc__ = None
