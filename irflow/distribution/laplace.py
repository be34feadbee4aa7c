"""Paddle's ``paddle.distribution.Laplace``: the double exponential of `loc` and
`scale`."""
from __future__ import annotations

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from .distribution import Distribution, real_or_tensor, sample_shape

# Paddle's epsilons keeping the uniform draws of `rsample` off -1 and 1.
_EPS = {dtypes.float32: 1.19209e-07, dtypes.float64: 2.22045e-16}


class Laplace(Distribution):
    """The Laplace distribution of `loc` and `scale` (real numbers, made
    default-dtype 0-D Tensors, or Tensors), broadcast together."""

    def __init__(self, loc, scale):
        loc, scale = real_or_tensor(loc, "loc"), real_or_tensor(scale, "scale")
        if (scale.ndim > 0 or loc.ndim > 0) and loc.dtype == scale.dtype:
            loc, scale = loc + T.zeros_like(scale), scale + T.zeros_like(loc)
        self.loc, self.scale = loc, scale
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        """The mean, `loc`."""
        return self.loc

    @property
    def stddev(self):
        """``sqrt(2) scale``."""
        return (2 ** 0.5) * self.scale

    @property
    def variance(self):
        """``2 scale^2``."""
        return self.stddev.pow(2)

    def _validate_value(self, value):
        """loc, scale and `value` (in scale's dtype) broadcast together."""
        value = real_or_tensor(value, "value")
        if value.dtype != self.scale.dtype:
            value = value.astype(self.scale.dtype)
        zero = T.zeros_like(self.loc) + T.zeros_like(self.scale) + T.zeros_like(value)
        return self.loc + zero, self.scale + zero, value + zero

    def log_prob(self, value):
        """``-log(2 scale) - |value - loc| / scale``."""
        loc, scale, value = self._validate_value(value)
        return -T.log(2 * scale) - T.abs(value - loc) / scale

    def entropy(self):
        """``1 + log(2 scale)``."""
        return 1 + T.log(2 * self.scale)

    def cdf(self, value):
        """``0.5 - 0.5 sign(value - loc) expm1(-|value - loc| / scale)``."""
        loc, scale, value = self._validate_value(value)
        return 0.5 - 0.5 * (value - loc).sign() * T.expm1(-(value - loc).abs() / scale)

    def icdf(self, value):
        """``loc - scale sign(value - 0.5) log1p(-2 |value - 0.5|)``."""
        loc, scale, value = self._validate_value(value)
        term = value - 0.5
        return loc - scale * term.sign() * T.log1p(-2 * term.abs())

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``loc - scale sign(u) log1p(-|u|)`` with u uniform in (-1, 1):
        differentiable in loc and scale."""
        eps = _EPS.get(self.loc.dtype, _EPS[dtypes.float32])
        shape = list(self._extend_shape(sample_shape(shape, "Laplace.rsample")))
        uniform = T.uniform(shape, dtype=self.loc.dtype, min=-1.0 + eps / 2, max=1.0 - eps / 2)
        return self.loc - self.scale * uniform.sign() * T.log1p(-uniform.abs())

    def kl_divergence(self, other):
        """KL(self || other) between Laplace distributions."""
        if not isinstance(other, Laplace):
            raise TypeError(f"Laplace.kl_divergence: other must be a Laplace, got "
                            f"{type(other).__name__}")
        t = T.abs(self.loc - other.loc)
        term1 = (self.scale * T.exp(-t / self.scale) + t) / other.scale
        return term1 + T.log(other.scale / self.scale) - 1
