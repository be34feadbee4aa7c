"""Paddle's ``paddle.distribution.LogNormal``: exp of a Normal(loc, scale)."""
from __future__ import annotations

from .. import tensor as T
from .distribution import Distribution
from .normal import Normal


class LogNormal(Distribution):
    """The distribution of ``exp(x)``, x ~ Normal(loc, scale) (parameters converted as
    Normal converts them)."""

    def __init__(self, loc, scale):
        self._base = Normal(loc=loc, scale=scale)
        self.loc, self.scale = self._base.loc, self._base.scale
        super().__init__(self._base.batch_shape, self._base.event_shape)

    @property
    def mean(self):
        """``exp(loc + scale^2 / 2)``."""
        return T.exp(self._base.mean + self._base.variance / 2)

    @property
    def variance(self):
        """``expm1(scale^2) exp(2 loc + scale^2)``."""
        return T.expm1(self._base.variance) * T.exp(2 * self._base.mean + self._base.variance)

    def sample(self, shape=()):
        """``exp`` of the base Normal's draws (differentiable, as the Normal's)."""
        return T.exp(self._base.sample(shape))

    def rsample(self, shape=()):
        """``exp`` of the base Normal's reparameterized draws."""
        return T.exp(self._base.rsample(shape))

    def log_prob(self, value):
        """``base.log_prob(log(value)) - log(value)`` (change of variables)."""
        log_value = T.log(value)
        return self._base.log_prob(log_value) - log_value

    def probs(self, value):
        """The density at `value`."""
        return T.exp(self.log_prob(value))

    def entropy(self):
        """``base entropy + loc``."""
        return self._base.entropy() + self._base.mean

    def kl_divergence(self, other):
        """KL between the base Normals (exp is a bijection)."""
        if not isinstance(other, LogNormal):
            raise TypeError(f"LogNormal.kl_divergence: other must be a LogNormal, got "
                            f"{type(other).__name__}")
        return self._base.kl_divergence(other._base)
