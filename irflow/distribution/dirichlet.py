"""Paddle's ``paddle.distribution.Dirichlet``: distributions over the probability
simplex of the last axis of `concentration`."""
from __future__ import annotations

from .. import tensor as T
from ..dispatch import no_grad
from ..nn import functional as F
from .distribution import sample_shape
from .exponential_family import ExponentialFamily
from .gamma import log_standard_gamma


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution of `concentration` (a Tensor of at least one
    dimension; the last is the event)."""

    def __init__(self, concentration):
        if not isinstance(concentration, T.Tensor):
            raise TypeError(f"Dirichlet: concentration must be a Tensor, got "
                            f"{type(concentration).__name__}")
        # A symbolic (traced) size is never zero: only static sizes are checked.
        sizes = [d for d in concentration.shape if isinstance(d, int)]
        if concentration.ndim < 1 or 0 in sizes:
            raise ValueError("`concentration` parameter must be at least one dimensional")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:])

    @property
    def mean(self):
        """``concentration / sum(concentration)``."""
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self):
        """``a_i (a_0 - a_i) / (a_0^2 (a_0 + 1))``, a_0 the total concentration."""
        total = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (total - self.concentration)) / (
            total.pow(2) * (total + 1))

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape + event_shape``: independent standard
        gamma draws normalised over the last axis, in log space so that draws which
        underflow still give a point of the simplex (not differentiable)."""
        shape = list(self._extend_shape(sample_shape(shape, "Dirichlet.sample")))
        with no_grad():
            log_gammas = log_standard_gamma(T.broadcast_to(self.concentration, shape))
            return F.softmax(log_gammas, axis=-1)

    def prob(self, value):
        """The density at `value`."""
        return T.exp(self.log_prob(value))

    def log_prob(self, value):
        """``sum((a - 1) log(value)) + lgamma(sum(a)) - sum(lgamma(a))``."""
        return ((T.log(value) * (self.concentration - 1.0)).sum(-1)
                + T.lgamma(self.concentration.sum(-1))
                - T.lgamma(self.concentration).sum(-1))

    def entropy(self):
        """``sum(lgamma(a)) - lgamma(a_0) - (k - a_0) digamma(a_0) - sum((a - 1)
        digamma(a))``."""
        total = self.concentration.sum(-1)
        k = self.concentration.shape[-1]
        return (T.lgamma(self.concentration).sum(-1) - T.lgamma(total)
                - (k - total) * T.digamma(total)
                - ((self.concentration - 1.0) * T.digamma(self.concentration)).sum(-1))

    @property
    def _natural_parameters(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - T.lgamma(x.sum(-1))
