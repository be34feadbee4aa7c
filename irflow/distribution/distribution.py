"""Paddle's ``paddle.distribution.Distribution``: the base class, and the argument
conversions its subclasses share (Paddle's rules, which decide parameter dtypes and
shapes, so they are kept exactly)."""
from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable

import numpy as np

from .. import tensor as T
from ..ir import dtypes
from ..nn import functional as F
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select

_ARG_TYPES = (float, list, tuple, np.ndarray, T.Tensor)


class Distribution:
    """The abstract base class of probability distributions: `batch_shape` counts
    independent (not identically distributed) distributions, `event_shape` is the
    shape of one draw (``()`` for scalar distributions)."""

    def __init__(self, batch_shape=(), event_shape=()):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)

    @property
    def batch_shape(self):
        """The batch shape, a tuple."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The event shape, a tuple."""
        return self._event_shape

    @property
    def mean(self):
        """Mean of the distribution."""
        raise NotImplementedError

    @property
    def variance(self):
        """Variance of the distribution."""
        raise NotImplementedError

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape + event_shape``."""
        raise NotImplementedError

    def rsample(self, shape=()):
        """Reparameterized draws: differentiable with respect to the parameters."""
        raise NotImplementedError

    def entropy(self):
        """The entropy of the distribution."""
        raise NotImplementedError

    def kl_divergence(self, other):
        """The KL divergence from `other` to this distribution."""
        raise NotImplementedError

    def prob(self, value):
        """Probability density (or mass) at `value`: ``exp(log_prob(value))``."""
        return self.log_prob(value).exp()

    def log_prob(self, value):
        """Log probability density (or mass) at `value`."""
        raise NotImplementedError

    def probs(self, value):
        """Probability density (or mass) at `value` (Paddle's older name for `prob`)."""
        raise NotImplementedError

    def _extend_shape(self, sample_shape):
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def _validate_args(self, *args):
        """True when every argument is a Tensor; a mix of Tensors and numbers is a
        ValueError, as in Paddle."""
        tensors = [isinstance(a, T.Tensor) for a in args]
        if any(tensors) and not all(tensors):
            raise ValueError("if one argument is Tensor, all arguments should be Tensor")
        return all(tensors)

    def _to_tensor(self, *args, dtype="float32"):
        """Numbers, lists and arrays as Tensors broadcast against each other, float32
        unless `dtype` says (Paddle assigns them into float32 tensors, then casts;
        non-float inputs are converted with a warning, as in Paddle)."""
        arrays = []
        for arg in args:
            if not isinstance(arg, _ARG_TYPES):
                raise TypeError("Type of input args must be float, list, tuple, numpy.ndarray "
                                f"or Tensor, but received type {type(arg)}")
            array = np.array(arg)
            if array.dtype not in (np.float32, np.float64):
                warnings.warn("data type of argument only support float32 and float64, your "
                              "argument will be convert to float32.", stacklevel=3)
            arrays.append(array)
        dtype = dtypes.dtype(dtype).name
        return tuple(T.to_tensor(a.astype(dtype)) for a in np.broadcast_arrays(*arrays))

    def _check_values_dtype_in_probs(self, param, value):
        """`value` in the parameters' dtype: a float value of the other float dtype is
        cast with a warning (as Paddle does); an integer value is cast silently so
        that arithmetic with the parameters is defined."""
        value = T.to_tensor(value) if not isinstance(value, T.Tensor) else value
        if value.dtype == param.dtype:
            return value
        if value.dtype.is_float:
            warnings.warn("dtype of input 'value' needs to be the same as parameters of "
                          "distribution class. dtype of 'value' will be converted.",
                          stacklevel=3)
        return value.astype(param.dtype)

    def _probs_to_logits(self, probs, is_binary=False):
        return T.log(probs) - T.log1p(-probs) if is_binary else T.log(probs)

    def _logits_to_probs(self, logits, is_binary=False):
        return F.sigmoid(logits) if is_binary else F.softmax(logits, axis=-1)


def float_dtype(*args):
    """The dtype Paddle's Normal and Uniform give numeric parameters: that of the
    first float32/float64 NumPy array among them, else float32."""
    for arg in args:
        if isinstance(arg, np.ndarray) and arg.dtype in (np.float32, np.float64):
            return dtypes.dtype(str(arg.dtype))
    return dtypes.float32


def real_or_tensor(x, name: str):
    """A real number as a default-dtype 0-D Tensor, a Tensor as given (the rule of
    Paddle's Laplace, Cauchy and Gumbel); anything else is a TypeError."""
    if isinstance(x, numbers.Real):
        return T.full([], float(x), dtype=get_default_dtype())
    if not isinstance(x, T.Tensor):
        raise TypeError(f"Expected type of {name} is Real|Variable, but got {type(x)}")
    return x


class LocationScale(Distribution):
    """A distribution of `loc` and `scale` (real numbers, made default-dtype 0-D
    Tensors, or Tensors), broadcast together: Cauchy's and Gumbel's constructor."""

    def __init__(self, loc, scale):
        loc, scale = real_or_tensor(loc, "loc"), real_or_tensor(scale, "scale")
        self.loc, self.scale = broadcast_pair(loc, scale)
        self.dtype = self.loc.dtype
        super().__init__(batch_shape=self.loc.shape, event_shape=())


def sample_shape(shape, op: str) -> list:
    """A sample shape as a list; Paddle raises TypeError for a non-iterable one."""
    if not isinstance(shape, Iterable):
        raise TypeError(f"{op}: sample shape must be Iterable object, got {type(shape).__name__}")
    return list(shape)


def broadcast_pair(a, b):
    """a and b broadcast to their common shape. Adding zeros keeps values (even inf
    and nan), gradients, and symbolic batch sizes while tracing."""
    return a + T.zeros_like(b), b + T.zeros_like(a)


def xlogy(x, y):
    """``x log(y)``, 0 where x is 0 (even where y is 0 too), as in a Poisson or
    binomial log pmf at the count 0."""
    zero = x == 0
    return select(zero, T.zeros_like(x * y), x * T.log(select(zero, T.ones_like(y), y)))


def plogp(log_prob):
    """``p log p`` from log p, 0 where p is 0 (log p = -inf) rather than nan: the
    terms of an entropy summed over a support that holds impossible values."""
    possible = log_prob > float("-inf")
    safe = select(possible, log_prob, T.zeros_like(log_prob))
    return select(possible, T.exp(safe) * safe, T.zeros_like(safe))


def summed_kl(log_p, log_q, axis=0, keepdim=False):
    """``sum(p (log p - log q))`` over `axis` (an enumerated support), the terms of
    values impossible under p (log p = -inf) counted as 0 rather than nan."""
    possible = log_p > float("-inf")
    safe_p = select(possible, log_p, T.zeros_like(log_p))
    terms = select(possible, T.exp(safe_p) * (safe_p - log_q), T.zeros_like(safe_p))
    return T.sum(terms, axis=axis, keepdim=keepdim)


def shape_of(x) -> list:
    return list(x.shape)


def parameter_pair(dist: Distribution, a, b, op: str):
    """The two parameters of Normal or Uniform as Tensors, by Paddle's rules: two
    Tensors are kept as given (not broadcast); numbers, lists and arrays (never mixed
    with Tensors) are broadcast together, in the dtype of the first float NumPy
    array among them, else float32. Complex parameters are not provided."""
    a, b = (float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in (a, b))
    a, b = (np.array(v, dtype=np.float32 if np.array(v).dtype == np.float64 else None)
            if isinstance(v, list | tuple) else v for v in (a, b))
    if any(isinstance(v, complex) or (isinstance(v, np.ndarray) and v.dtype.kind == "c")
           or (isinstance(v, T.Tensor) and not v.dtype.is_float) for v in (a, b)):
        raise TypeError(f"{op}: parameters must be real floats; complex parameters are not "
                        "provided by irflow")
    if dist._validate_args(a, b):
        return a, b
    return dist._to_tensor(a, b, dtype=float_dtype(a, b))
