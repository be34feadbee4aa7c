"""Paddle's ``paddle.distribution.Exponential``: waiting times of rate `rate`."""
from __future__ import annotations

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from ..tensor.convert import get_default_dtype
from .distribution import sample_shape
from .exponential_family import ExponentialFamily


class Exponential(ExponentialFamily):
    """The exponential distribution of `rate` (a float, list or array, converted to
    float32 as in Paddle, or a Tensor used as given)."""

    def __init__(self, rate):
        if self._validate_args(rate):
            self.rate = rate
            self.dtype = rate.dtype
        else:
            (self.rate,) = self._to_tensor(rate)
            self.dtype = dtypes.dtype(get_default_dtype())
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        """``1 / rate``."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """``rate^-2``."""
        return self.rate.pow(-2)

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``-log(u) / rate`` with u uniform in (tiny, 1): differentiable in `rate`."""
        shape = list(self._extend_shape(sample_shape(shape, "Exponential.rsample")))
        uniform = T.uniform(shape, dtype=self.rate.dtype,
                            min=float(np.finfo(np.float32).tiny), max=1.0)
        return -T.log(uniform) / self.rate

    def prob(self, value):
        """``rate exp(-rate value)``."""
        return self.rate * T.exp(-self.rate * value)

    def log_prob(self, value):
        """``log(rate) - rate value``."""
        return T.log(self.rate) - self.rate * value

    def entropy(self):
        """``1 - log(rate)``."""
        return 1.0 - T.log(self.rate)

    def cdf(self, value):
        """``1 - exp(-rate value)``."""
        return 1.0 - T.exp(-self.rate * value)

    def icdf(self, value):
        """``-log(1 - value) / rate``."""
        return -T.log1p(-value) / self.rate

    def kl_divergence(self, other):
        """KL(self || other) = ``log(rate / other.rate) + other.rate / rate - 1``."""
        if not isinstance(other, Exponential):
            raise TypeError(f"Expected type of other is Exponential, but got {type(other)}")
        rate_ratio = other.rate / self.rate
        return -T.log(rate_ratio) + rate_ratio - 1

    @property
    def _natural_parameters(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -T.log(-x)
