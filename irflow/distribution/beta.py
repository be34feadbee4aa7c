"""Paddle's ``paddle.distribution.Beta``: distributions on [0, 1], the two-category
Dirichlet."""
from __future__ import annotations

import numbers

from .. import tensor as T
from ..tensor.convert import get_default_dtype
from .dirichlet import Dirichlet
from .distribution import broadcast_pair
from .exponential_family import ExponentialFamily


class Beta(ExponentialFamily):
    """The beta distribution of `alpha` and `beta` (real numbers, made default-dtype
    0-D Tensors, or Tensors), broadcast together."""

    def __init__(self, alpha, beta):
        alpha, beta = (T.full([], float(v), dtype=get_default_dtype())
                       if isinstance(v, numbers.Real) else v for v in (alpha, beta))
        for name, v in (("alpha", alpha), ("beta", beta)):
            if not isinstance(v, T.Tensor):
                raise TypeError(f"Beta: {name} must be a real number or a Tensor, got "
                                f"{type(v).__name__}")
        self.alpha, self.beta = broadcast_pair(alpha, beta)
        self._dirichlet = Dirichlet(T.stack([self.alpha, self.beta], -1))
        super().__init__(self._dirichlet._batch_shape)

    @property
    def mean(self):
        """``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        """``alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``."""
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total.pow(2) * (total + 1))

    def prob(self, value):
        """The density at `value`."""
        return T.exp(self.log_prob(value))

    def log_prob(self, value):
        """The Dirichlet log density at ``(value, 1 - value)``."""
        return self._dirichlet.log_prob(T.stack([value, 1.0 - value], -1))

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``: the first component of Dirichlet
        draws (not differentiable)."""
        return self._dirichlet.sample(tuple(shape))[..., 0]

    def entropy(self):
        """The entropy (that of the Dirichlet)."""
        return self._dirichlet.entropy()

    @property
    def _natural_parameters(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y):
        return T.lgamma(x) + T.lgamma(y) - T.lgamma(x + y)
