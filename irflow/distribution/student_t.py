"""Paddle's ``paddle.distribution.StudentT``: Student's t of `df` degrees of
freedom, location `loc` and scale `scale`."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import tensor as T
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select
from .distribution import Distribution
from .gamma import Gamma

_ARG_TYPES = (float, list, tuple, np.ndarray, T.Tensor)


def _broadcast_all(*args):
    """Paddle's conversion: floats, lists and arrays become Tensors of the dtype of
    the first Tensor argument (else the default dtype), then all broadcast
    together."""
    for arg in args:
        if not isinstance(arg, _ARG_TYPES):
            raise TypeError("Type of input args must be float, list, tuple, numpy.ndarray "
                            f"or Tensor, but received type {type(arg)}")
    dtype = next((a.dtype for a in args if isinstance(a, T.Tensor)), get_default_dtype())
    tensors = [a if isinstance(a, T.Tensor) else T.to_tensor(a, dtype=dtype) for a in args]
    zero = sum(T.zeros_like(t) for t in tensors)
    return [t + zero for t in tensors]


def _all_nonnegative(x) -> bool:
    return bool((x >= 0.0).all())


class StudentT(Distribution):
    """Student's t distribution of `df`, `loc` and `scale` (floats, lists, arrays or
    Tensors, broadcast together); negative `df` or `scale` is a ValueError."""

    def __init__(self, df, loc, scale, name=None):
        self.name = name if name is not None else "StudentT"
        self.df, self.loc, self.scale = _broadcast_all(df, loc, scale)
        if not _all_nonnegative(self.df):
            raise ValueError("Every element of input parameter `df` should be nonnegative.")
        if not _all_nonnegative(self.scale):
            raise ValueError("Every element of input parameter `scale` should be "
                             "nonnegative.")
        self.dtype = self.df.dtype
        super().__init__(tuple(self.df.shape))
        self._chi2 = Gamma(0.5 * self.df, T.full_like(self.df, 0.5))

    @property
    def mean(self):
        """`loc` where df > 1, else nan."""
        return select(self.df > 1.0, self.loc, T.full_like(self.loc, float("nan")))

    @property
    def variance(self):
        """``scale^2 df / (df - 2)`` where df > 2, inf where 1 < df <= 2, else nan."""
        df = self.df.detach()
        finite = self.scale.pow(2) * df / (df - 2)
        var = select(df > 2.0, finite, T.full_like(finite, float("nan")))
        infinite = T.logical_and(df <= 2.0, df > 1.0)
        return select(infinite, T.full_like(var, float("inf")), var)

    def sample(self, shape=()):
        """``loc + scale z / sqrt(chi2 / df)``, z standard normal and chi2 of df
        degrees of freedom, of shape ``shape + batch_shape`` (not differentiable in
        df, as the gamma draws are not)."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        z = T.randn(list(self._extend_shape(shape)), dtype=self.dtype)
        chi2 = self._chi2.sample(shape)
        return self.loc + self.scale * (z * T.rsqrt(chi2 / self.df))

    def entropy(self):
        """``log(scale) + (df + 1)/2 (digamma((df + 1)/2) - digamma(df/2)) + log(df)/2
        + log B(df/2, 1/2)``."""
        half_df = 0.5 * self.df
        half_df1 = 0.5 * (self.df + 1)
        log_beta = T.lgamma(half_df) + math.lgamma(0.5) - T.lgamma(half_df1)
        return (T.log(self.scale) + half_df1 * (T.digamma(half_df1) - T.digamma(half_df))
                + 0.5 * T.log(self.df) + log_beta)

    def log_prob(self, value):
        """``-(df + 1)/2 log1p(y^2 / df) - log(scale) - log(df pi)/2 - log B(df/2,
        1/2)``, y = ``(value - loc) / scale``."""
        value = self._check_values_dtype_in_probs(self.df, value)
        y = (value - self.loc) / self.scale
        log_norm = (T.log(self.scale) + 0.5 * T.log(self.df) + 0.5 * math.log(math.pi)
                    + T.lgamma(0.5 * self.df) - T.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * T.log1p(y * y / self.df) - log_norm

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(value))
