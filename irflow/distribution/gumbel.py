"""Paddle's ``paddle.distribution.Gumbel``: the extreme value distribution of `loc`
and `scale`."""
from __future__ import annotations

import math

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from .distribution import LocationScale, sample_shape

_FINFO32 = np.finfo(np.float32)


class Gumbel(LocationScale):
    """The Gumbel distribution of `loc` and `scale` (real numbers, made default-dtype
    0-D Tensors, or Tensors), broadcast together. Paddle builds it as a
    TransformedDistribution of a Uniform; irflow gives the same methods directly."""


    @property
    def mean(self):
        """``loc + scale * euler_gamma``."""
        return self.loc + self.scale * float(np.euler_gamma)

    @property
    def variance(self):
        """``scale^2 pi^2 / 6``."""
        return self.scale.pow(2) * (math.pi * math.pi / 6)

    @property
    def stddev(self):
        """``sqrt(variance)``."""
        return T.sqrt(self.variance)

    def _minus_standardized(self, value):
        """``(loc - value) / scale``, value in the parameters' dtype."""
        value = T.to_tensor(value) if not isinstance(value, T.Tensor) else value
        return (self.loc - value.astype(self.dtype)) / self.scale

    def prob(self, value):
        """``exp(y - exp(y)) / scale``, y = ``(loc - value) / scale``."""
        y = self._minus_standardized(value)
        return T.exp(y - T.exp(y)) / self.scale

    def log_prob(self, value):
        """``y - exp(y) - log(scale)``, y = ``(loc - value) / scale``: Paddle takes the
        log of `prob`, which underflows to -inf far below loc (exp(y) above ~88 in
        float32) where this stays finite."""
        y = self._minus_standardized(value)
        return y - T.exp(y) - T.log(self.scale)

    def cdf(self, value):
        """``exp(-exp(-(value - loc) / scale))``, in the dtype of `value` (as Paddle
        casts the parameters to it)."""
        value = T.to_tensor(value) if not isinstance(value, T.Tensor) else value
        loc, scale = self.loc.astype(value.dtype), self.scale.astype(value.dtype)
        return T.exp(-T.exp(-(value - loc) / scale))

    def entropy(self):
        """``log(scale) + 1 + euler_gamma``."""
        return T.log(self.scale) + (1 + float(np.euler_gamma))

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``loc - scale log(-log(u))`` with u uniform in [tiny, 1 - eps) of float32
        (Paddle's base Uniform): differentiable in loc and scale."""
        shape = list(self._extend_shape(sample_shape(shape, "Gumbel.rsample")))
        uniforms = T.uniform(shape, dtype=self.dtype, min=float(_FINFO32.tiny),
                             max=float(1 - _FINFO32.eps))
        return self.loc - self.scale * T.log(-T.log(uniforms))
