"""Paddle's ``paddle.distribution.Normal``: the Gaussian of mean `loc` and standard
deviation `scale`."""
from __future__ import annotations

import math

from .. import tensor as T
from .distribution import Distribution, parameter_pair, sample_shape, shape_of


class Normal(Distribution):
    """The normal distribution N(loc, scale^2), one per element of the broadcast
    parameters. Numbers, lists and arrays are converted as in Paddle (see
    `parameter_pair`); Tensors are used as given, so gradients reach them."""

    def __init__(self, loc, scale, name=None):
        self.name = name if name is not None else "Normal"
        self.loc, self.scale = parameter_pair(self, loc, scale, "Normal")
        self.dtype = self.loc.dtype
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        """The mean, `loc`."""
        return self.loc

    @property
    def variance(self):
        """The variance, ``scale ** 2``."""
        return self.scale.pow(2)

    def sample(self, shape=(), seed=0):
        """Draws of shape ``shape + broadcast(loc, scale).shape``: ``loc + scale * eps``
        with standard normal eps (differentiable, as in Paddle). `seed` is accepted
        and ignored: `paddle.seed` governs every draw."""
        shape = sample_shape(shape, "Normal.sample")
        batch = shape_of(self.loc + self.scale)
        return T.randn(shape + batch, dtype=self.dtype) * self.scale + self.loc

    def rsample(self, shape=()):
        """Reparameterized draws ``loc + eps * scale`` of shape ``shape + batch_shape``
        (broadcast with the scale's shape)."""
        shape = list(self._extend_shape(sample_shape(shape, "Normal.rsample")))
        return self.loc + T.randn(shape, dtype=self.dtype) * self.scale

    def entropy(self):
        """``0.5 + 0.5 log(2 pi) + log(scale)``, over the broadcast parameters."""
        scale = self.scale + T.zeros_like(self.loc)
        return 0.5 + 0.5 * math.log(2 * math.pi) + T.log(scale)

    def log_prob(self, value):
        """``-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))``."""
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        return (-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var)
                - (T.log(self.scale) + math.log(math.sqrt(2.0 * math.pi))))

    def probs(self, value):
        """The density at `value`."""
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        return (T.exp(-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var))
                / (math.sqrt(2 * math.pi) * self.scale))

    def kl_divergence(self, other):
        """KL(self || other) between normals:
        ``0.5 r + 0.5 (t^2 - 1 - log r)``, r the variance ratio and t the mean
        difference in units of other's scale."""
        if not isinstance(other, Normal):
            raise TypeError(f"Normal.kl_divergence: other must be a Normal, got "
                            f"{type(other).__name__}")
        var_ratio = self.scale / other.scale
        var_ratio = var_ratio * var_ratio
        t1 = (self.loc - other.loc) / other.scale
        t1 = t1 * t1
        return 0.5 * var_ratio + 0.5 * (t1 - 1.0 - T.log(var_ratio))
