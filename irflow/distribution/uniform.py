"""Paddle's ``paddle.distribution.Uniform``: the uniform distribution on
[low, high)."""
from __future__ import annotations

from .. import tensor as T
from ..tensor.logic import select
from .distribution import Distribution, parameter_pair, sample_shape, shape_of


class Uniform(Distribution):
    """The uniform distribution on [low, high), one per element of the broadcast
    bounds. Like Paddle's, it gives no mean, variance or rsample."""

    def __init__(self, low, high, name=None):
        self.name = name if name is not None else "Uniform"
        self.low, self.high = parameter_pair(self, low, high, "Uniform")
        self.dtype = self.low.dtype
        super().__init__(self.low.shape)

    def sample(self, shape=(), seed=0):
        """Draws of shape ``shape + broadcast(low, high).shape``: ``low + u (high -
        low)`` with u uniform in [0, 1) (differentiable, as in Paddle). `seed` is
        accepted and ignored: `paddle.seed` governs every draw."""
        shape = sample_shape(shape, "Uniform.sample")
        batch = shape_of(self.low + self.high)
        return T.rand(shape + batch, dtype=self.dtype) * (self.high - self.low) + self.low

    def _inside(self, value):
        """1 where low < value < high, else 0 (Paddle's open interval)."""
        return ((self.low < value).astype(value.dtype)
                * (value < self.high).astype(value.dtype))

    def log_prob(self, value):
        """``log(1{low < value < high}) - log(high - low)``: -inf outside."""
        value = self._check_values_dtype_in_probs(self.low, value)
        return T.log(self._inside(value)) - T.log(self.high - self.low)

    def probs(self, value):
        """``1{low < value < high} / (high - low)``."""
        value = self._check_values_dtype_in_probs(self.low, value)
        return self._inside(value) / (self.high - self.low)

    def entropy(self):
        """``log(high - low)``."""
        return T.log(self.high - self.low)

    def kl_divergence(self, other):
        """KL(self || other) between uniforms: ``log((other.high - other.low) /
        (high - low))`` where other's support covers self's, inf elsewhere. (Paddle
        registers this pair but raises NotImplementedError.)"""
        if not isinstance(other, Uniform):
            raise TypeError(f"Uniform.kl_divergence: other must be a Uniform, got "
                            f"{type(other).__name__}")
        kl = T.log(other.high - other.low) - T.log(self.high - self.low)
        outside = T.logical_or(other.low > self.low, other.high < self.high)
        return select(outside, T.full_like(kl, float("inf")), kl)
