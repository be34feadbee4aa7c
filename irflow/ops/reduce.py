"""Reductions: `sum`, `prod`, `mean`, `max`, `min`, `max_or_neg_inf`, `any`, `all`,
`argmax`, `argmin`, and `numel`, the run-time element count that `mean`'s VJP divides by.

``axis`` names the reduced axes: None reduces every axis, a tuple the listed ones.
It is canonicalized to a sorted tuple of distinct non-negative axes, and to None
when it lists every axis, so equal reductions print (and CSE) equally; ``axis=()``
reduces nothing. With ``keepdim`` the reduced axes stay as size-1 dims. A result has
its operand's dtype (an int32 sum stays int32, as in Paddle) and a full reduction
gives a 0-d tensor.

The VJP rules bring the cotangent back to the operand's shape by reshaping it to
the keepdim shape (which may hold symbolic dims) and broadcasting.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..ir import dtypes
from ..ir.traits import Reduction
from ..ir.types import TensorType, numel
from ._rules import check_kind, defop, norm_axes, norm_axis, quiet

# ---------------------------------------------------------------- axes


def _check_int_axes(axis) -> None:
    axes = () if axis is None else (axis,) if isinstance(axis, int) else axis
    if not isinstance(axes, tuple) or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise ShapeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")


def _canon_axes(attrs: dict, types) -> dict:
    """``axis`` as None (every axis) or a sorted tuple of some but not all axes."""
    _check_int_axes(attrs["axis"])
    rank = types[0].rank
    if rank == 0:  # axis 0 or -1 (as Paddle accepts them), like None, reduces nothing
        norm_axes(attrs["axis"], 1)
        return {**attrs, "axis": None}
    axes = norm_axes(attrs["axis"], rank)
    return {**attrs, "axis": None if axes == tuple(range(rank)) else axes}


def reduced_axes(axis, rank: int) -> tuple[int, ...]:
    """The axes a canonical ``axis`` attribute reduces."""
    return tuple(range(rank)) if axis is None else axis


def keepdim_shape(t: TensorType, axis) -> tuple:
    """`t`'s shape with the reduced axes set to 1."""
    axes = reduced_axes(axis, t.rank)
    return tuple(1 if i in axes else d for i, d in enumerate(t.shape))


def _result_shape(t: TensorType, axis, keepdim: bool) -> tuple:
    if keepdim:
        return keepdim_shape(t, axis)
    axes = reduced_axes(axis, t.rank)
    return tuple(d for i, d in enumerate(t.shape) if i not in axes)


def _check_nonempty(t: TensorType, axes, op: str = "") -> None:
    """max, min, argmax and argmin have no value over an empty axis. `op` names the
    op where the caller does not (a kernel's error; the type rule's gets it)."""
    for a in axes:
        if t.shape[a] == 0:
            raise ShapeError(f"{op + ': ' if op else ''}axis {a} of {t} has size 0, which "
                             "has no maximum or minimum")


def _check_nonempty_run(op: str, x: np.ndarray, axes) -> None:
    """`_check_nonempty` when the program runs, where a symbolic dim may be 0: the
    error eager code raises, where NumPy's (a ValueError) names neither op nor line."""
    if 0 in x.shape:
        _check_nonempty(TensorType(dtypes.from_numpy(x), x.shape), axes, op)


# ---------------------------------------------------------------- sum, prod, mean, max, ...

def _reduce_rule(kind: str, nonempty: bool = False):
    def infer(types, attrs):
        (t,) = types
        check_kind(t, kind)
        if nonempty:
            _check_nonempty(t, reduced_axes(attrs["axis"], t.rank))
        return TensorType(t.dtype, _result_shape(t, attrs["axis"], attrs["keepdim"]))
    return infer


def _np_reduce(fn, pass_dtype: bool, nonempty: str = ""):
    """The kernel and the out kernel of a NumPy reduction; `pass_dtype` keeps int32
    sums int32 (NumPy would widen them to int64); `nonempty` names an op that
    refuses an empty reduced axis (max, min)."""
    if pass_dtype:
        def kernel(x, axis, keepdim, out=None):
            return np.asarray(fn(x, axis=axis, keepdims=keepdim, dtype=x.dtype, out=out))
    elif nonempty:
        def kernel(x, axis, keepdim, out=None):
            _check_nonempty_run(nonempty, x, reduced_axes(axis, x.ndim))
            return np.asarray(fn(x, axis=axis, keepdims=keepdim, out=out))
    else:
        def kernel(x, axis, keepdim, out=None):
            return np.asarray(fn(x, axis=axis, keepdims=keepdim, out=out))
    return quiet(kernel)  # an overflowing sum, the mean of nothing: inf and NaN


def _float_vjp(rule):
    """Wrap a reduction's VJP: integer operands get no cotangent, and reducing no
    axis is the identity, whose cotangent is the result's."""
    def vjp(b, g, i, o, axis, keepdim):
        x = i[0]
        if not x.type.dtype.is_float:
            return [None]
        if not reduced_axes(axis, x.type.rank):
            return [g[0]]
        return [rule(b, g[0], x, o[0], axis, keepdim)]
    return vjp


def _to_keepdim(b, v, x, axis, keepdim):
    """A result-shaped value `v` reshaped to the keepdim shape, ready to broadcast
    against the operand `x`."""
    if keepdim:
        return v
    return b.reshape(v, shape=keepdim_shape(x.type, axis))


def _expand(b, v, x, axis, keepdim):
    """A result-shaped value `v` broadcast back to the operand `x`'s shape."""
    v = _to_keepdim(b, v, x, axis, keepdim)
    if v.type.shape == x.type.shape:
        return v
    return b.broadcast_to(v, shape=x.type.shape)


def _reduced_count(b, x, axis):
    """The number of elements each result element reduces, as a scalar of `x`'s
    dtype: a constant when the reduced dims are static, else `numel` at run time."""
    axes = reduced_axes(axis, x.type.rank)
    count = numel(tuple(x.type.shape[a] for a in axes))
    if isinstance(count, int):
        return b.constant(count, x.type.dtype)
    return b.cast(b.numel(x, axis=axis), dtype=x.type.dtype)


def _sum_vjp(b, g, x, out, axis, keepdim):
    return _expand(b, g, x, axis, keepdim)


def _mean_vjp(b, g, x, out, axis, keepdim):
    return _expand(b, b.div(g, _reduced_count(b, x, axis)), x, axis, keepdim)


def _prod_vjp(b, g, x, out, axis, keepdim):
    """d prod / d x_i is the product of the other elements. It is computed as
    prod(x with zeros replaced by 1) / x_i where x_i is not a zero (the product of
    the others is then the full product of nonzeros divided by x_i) or
    prod(nonzeros) where x_i is the zero, and is 0 wherever another element of the
    reduced group is a zero; so zeros get exact gradients without a division by
    zero."""
    dt = x.type.dtype
    zero, one = b.constant(0, dt), b.constant(1, dt)
    is_zero = b.eq(x, zero)
    nonzero_x = b.select(is_zero, one, x)
    prod_nonzero = b.prod(nonzero_x, axis=axis, keepdim=True)
    zeros = b.cast(is_zero, dtype=dt)
    other_zeros = b.sub(b.sum(zeros, axis=axis, keepdim=True), zeros)
    others = b.div(prod_nonzero, nonzero_x)
    g = _to_keepdim(b, g, x, axis, keepdim)
    return b.select(b.eq(other_zeros, zero), b.mul(g, others), zero)


def _extremum_vjp(b, g, x, out, axis, keepdim):
    """The cotangent is split evenly among the elements equal to the extremum (as
    in JAX and torch.amax), so ties share it rather than the first one taking it."""
    dt = x.type.dtype
    hit = b.cast(b.eq(x, _to_keepdim(b, out, x, axis, keepdim)), dtype=dt)
    ties = b.sum(hit, axis=axis, keepdim=True)
    return b.mul(b.div(_to_keepdim(b, g, x, axis, keepdim), ties), hit)


_AXIS_ATTRS = {"axis": None, "keepdim": False}
_AXIS_DOC = ("Attributes: `axis` (None: every axis, or a tuple of axes; an int, "
             "negative axes and an axis list naming every axis are canonicalized), "
             "`keepdim` (bool, default false: drop the reduced axes). ")


def reduction(name, np_fn, kind, vjp=None, pass_dtype=False, nonempty=False, doc=""):
    kernel = _np_reduce(np_fn, pass_dtype, name if nonempty else "")
    return defop(name, _reduce_rule(kind, nonempty), kernel, out_kernel=kernel, arity=1, attrs=dict(_AXIS_ATTRS), canonicalize=_canon_axes,
                 vjp=None if vjp is None else _float_vjp(vjp), nondiff=vjp is None,
                 traits=(Reduction(),),
                 doc=doc + " " + _AXIS_DOC + "The result has x's dtype; reducing every "
                 "axis without keepdim gives a 0-d tensor.")


reduction("sum", np.sum, "number", _sum_vjp, pass_dtype=True,
          doc="sum(x): the sum of a float or int tensor over `axis`.")
reduction("prod", np.prod, "number", _prod_vjp, pass_dtype=True,
          doc="prod(x): the product of a float or int tensor over `axis`; its gradient "
              "is exact also where x holds zeros.")
def _mean(x, axis=None, keepdims=False, dtype=None, out=None):
    """np.mean, except that the mean of nothing is NaN without NumPy's "Mean of empty
    slice" warning (a Python warning, which errstate does not silence), and float16
    accumulates in float32 (its own sum of 100 values of 1000 overflowed to inf)."""
    if x.dtype == np.float16:
        wide = np.asarray(_mean(x.astype(np.float32), axis, keepdims))
        if out is None:
            return wide.astype(np.float16)
        np.copyto(out, wide)
        return out
    if x.size:
        return np.mean(x, axis=axis, keepdims=keepdims, dtype=dtype, out=out)
    total = np.sum(x, axis=axis, keepdims=keepdims, dtype=dtype, out=out)
    return np.divide(total, x.dtype.type(0), out=out)


reduction("mean", _mean, "float", _mean_vjp, pass_dtype=True,
          doc="mean(x): the mean of a float tensor over `axis` (NaN over no elements; "
              "float16 accumulates in float32).")
reduction("max", np.max, "number", _extremum_vjp, nonempty=True,
          doc="max(x): the largest element of a float or int tensor over `axis`; tied "
              "maxima share the gradient evenly.")
reduction("min", np.min, "number", _extremum_vjp, nonempty=True,
          doc="min(x): the smallest element of a float or int tensor over `axis`; tied "
              "minima share the gradient evenly.")


def _max_or_neg_inf(x, axis=None, keepdims=False, out=None):
    """np.max that gives -inf over an empty axis instead of refusing it."""
    return np.max(x, axis=axis, keepdims=keepdims, out=out, initial=-np.inf)


reduction("max_or_neg_inf", _max_or_neg_inf, "float",
          doc="max_or_neg_inf(x): the largest element of a float tensor over `axis`, as "
              "`max`, but -inf over an empty axis where `max` refuses one: the shift "
              "that softmax and logsumexp subtract over an axis whose size is only known "
              "when the program runs (exp(x - shift) of an empty axis is empty, its "
              "log-sum-exp -inf). Not differentiable: the shift is a constant of theirs.")
reduction("any", np.any, "bool",
          doc="any(x): whether some element of a bool tensor is true over `axis`.")
reduction("all", np.all, "bool",
          doc="all(x): whether every element of a bool tensor is true over `axis`.")


# ---------------------------------------------------------------- numel

def _numel_infer(types, attrs):
    return TensorType(dtypes.int64, ())


def _numel_kernel(x, axis):
    return np.asarray(_count(x, axis), dtype=np.int64)


def _numel_out(x, out, axis):
    out[()] = _count(x, axis)


def _count(x, axis) -> int:
    return math.prod(x.shape[a] for a in reduced_axes(axis, x.ndim))


defop("numel", _numel_infer, _numel_kernel, out_kernel=_numel_out, arity=1, attrs={"axis": None},
      canonicalize=_canon_axes, nondiff=True,
      doc="numel(x): the i64 scalar product of the sizes of x's dims over `axis` "
          "(None: every dim, so the element count), known at run time when the dims "
          "are symbolic; x may have any dtype and only its shape is read. Attribute "
          "`axis` is canonicalized as for `sum`. Not differentiable.")


# ---------------------------------------------------------------- argmax, argmin

def _canon_arg_axis(attrs: dict, types) -> dict:
    """``axis`` as a non-negative int, or None (the flattened tensor), which it is
    also for rank 0 and 1, where the two coincide."""
    axis, rank = attrs["axis"], types[0].rank
    if axis is not None:
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise ShapeError(f"axis must be None or an int, got {axis!r}")
        axis = norm_axis(axis, max(rank, 1))  # a 0-d tensor takes 0 and -1, as in Paddle
        if rank <= 1:
            axis = None
    return {**attrs, "axis": axis}


def _arg_infer(types, attrs):
    (t,) = types
    check_kind(t, "number")
    axis, keepdim = attrs["axis"], attrs["keepdim"]
    if axis is None:
        _check_elements(t)
        return TensorType(dtypes.int64, (1,) * t.rank if keepdim else ())
    _check_nonempty(t, (axis,))
    return TensorType(dtypes.int64, _result_shape(t, (axis,), keepdim))


def _check_elements(t: TensorType, op: str = "") -> None:
    """argmax and argmin of the flattened tensor need an element (`op` as in
    `_check_nonempty`)."""
    if numel(t.shape) == 0:
        raise ShapeError(f"{op + ': ' if op else ''}{t} has no elements, so no maximum "
                         "or minimum")


def _np_arg(fn, op: str):
    """The kernel and the out kernel of argmax or argmin (`op`), refusing an empty
    axis as the type rule does (a symbolic dim may be 0 when the program runs)."""
    def check(x, axis):
        if axis is None:
            _check_elements(TensorType(dtypes.from_numpy(x), x.shape), op)
        else:
            _check_nonempty_run(op, x, (axis,))

    def kernel(x, axis, keepdim):
        check(x, axis)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim), dtype=np.int64)

    def out_kernel(x, out, axis, keepdim):
        check(x, axis)
        fn(x, axis=axis, keepdims=keepdim, out=out)
    return kernel, out_kernel


for _name, _fn, _what in [("argmax", np.argmax, "largest"), ("argmin", np.argmin, "smallest")]:
    _kernel, _out = _np_arg(_fn, _name)
    defop(_name, _arg_infer, _kernel, out_kernel=_out, arity=1, attrs=dict(_AXIS_ATTRS),
          canonicalize=_canon_arg_axis, nondiff=True,
          doc=f"{_name}(x): the index of the {_what} element of a float or int tensor "
              "along `axis`; ties give the first index, as in NumPy. Attributes: "
              "`axis` (None: index into the flattened tensor; else an int, made "
              "non-negative), `keepdim` (bool, default false: keep the reduced axis as "
              "size 1; with axis None every dim becomes 1). The result is int64. Not "
              "differentiable.")
