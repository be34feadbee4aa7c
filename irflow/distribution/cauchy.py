"""Paddle's ``paddle.distribution.Cauchy``: the Cauchy-Lorentz distribution of
`loc` (the peak) and `scale` (the half width at half maximum)."""
from __future__ import annotations

import math

from .. import tensor as T
from ..dispatch import no_grad
from .distribution import LocationScale, broadcast_pair, sample_shape


def _tensor_value(value, op: str):
    """Paddle's Cauchy takes only Tensor values."""
    if not isinstance(value, T.Tensor):
        raise TypeError(f"{op}: expected type of value is Variable or Value, but got "
                        f"{type(value)}")
    return value


class Cauchy(LocationScale):
    """The Cauchy distribution of `loc` and `scale` (real numbers, made default-dtype
    0-D Tensors, or Tensors), broadcast together. It has no mean, variance or
    standard deviation: asking for them is a ValueError, as in Paddle."""

    def __init__(self, loc, scale, name=None):
        self.name = name if name is not None else "Cauchy"
        super().__init__(loc, scale)

    @property
    def mean(self):
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self):
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self):
        raise ValueError("Cauchy distribution has no stddev.")

    def sample(self, shape=(), name=None):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=(), name=None):
        """``loc + scale tan(pi (u - 1/2))`` with u uniform in [0, 1): differentiable
        in loc and scale."""
        shape = list(self._extend_shape(sample_shape(shape, "Cauchy.rsample")))
        uniforms = T.rand(shape, dtype=self.dtype)
        return self.loc + self.scale * T.tan(math.pi * (uniforms - 0.5))

    def _standardized(self, value, op: str):
        """``(value - loc) / scale`` (value in the parameters' dtype), with the
        scale, broadcast with the parameters."""
        value = self._check_values_dtype_in_probs(self.loc, _tensor_value(value, op))
        loc, value = broadcast_pair(self.loc, value)
        scale, _ = broadcast_pair(self.scale, value)
        return (value - loc) / scale, scale

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(_tensor_value(value, "Cauchy.prob")))

    def log_prob(self, value):
        """``-log1p(((value - loc) / scale)^2) - log(pi) - log(scale)``."""
        z, scale = self._standardized(value, "Cauchy.log_prob")
        return -T.log1p(z * z) - (math.log(math.pi) + T.log(scale))

    def cdf(self, value):
        """``atan((value - loc) / scale) / pi + 1/2``."""
        z, _ = self._standardized(value, "Cauchy.cdf")
        return T.atan(z) / math.pi + 0.5

    def entropy(self):
        """``log(4 pi) + log(scale)``."""
        return math.log(4 * math.pi) + T.log(self.scale)

    def kl_divergence(self, other):
        """KL(self || other) = ``log(((s1 + s2)^2 + (l1 - l2)^2) / (4 s1 s2))``."""
        if not isinstance(other, Cauchy):
            raise TypeError(f"Expected type of other is Cauchy, but got {type(other)}")
        scale_sum, loc_diff = self.scale + other.scale, self.loc - other.loc
        return (T.log(scale_sum * scale_sum + loc_diff * loc_diff)
                - T.log(4 * self.scale * other.scale))
