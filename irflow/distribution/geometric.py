"""Paddle's ``paddle.distribution.Geometric``: the number of failures before the
first success of probability `probs`."""
from __future__ import annotations

import numbers

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from .distribution import Distribution, sample_shape


class Geometric(Distribution):
    """The geometric distribution on {0, 1, ...} of success probability `probs` (a
    real number, made a float32 0-D Tensor as in Paddle, or a Tensor used as given).
    Like Paddle's, it gives `pmf` and `log_pmf` rather than `prob` and `log_prob`."""

    def __init__(self, probs):
        if isinstance(probs, numbers.Real):
            probs = T.full([], float(probs), dtype=dtypes.float32)
        if not isinstance(probs, T.Tensor):
            raise TypeError(f"Expected type of probs is Number.Real|Tensor, but got "
                            f"{type(probs)}")
        self.probs = probs
        super().__init__(tuple(probs.shape))

    @property
    def mean(self):
        """``1 / probs - 1``."""
        return 1.0 / self.probs - 1.0

    @property
    def variance(self):
        """``(1 / probs - 1) / probs``."""
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self):
        """``sqrt(variance)``."""
        return T.sqrt(self.variance)

    def _count(self, k, op: str):
        """`k` as a Tensor in the dtype of `probs` (an integer Tensor too, which Paddle
        rejects in its type promotion)."""
        if isinstance(k, numbers.Integral):
            return k
        if not isinstance(k, T.Tensor):
            raise TypeError(f"{op}: expected type of k is number.Integral|Tensor, but got "
                            f"{type(k)}")
        return k.astype(self.probs.dtype)

    def pmf(self, k):
        """``(1 - probs)^k probs``."""
        return T.pow(1.0 - self.probs, self._count(k, "Geometric.pmf")) * self.probs

    def log_pmf(self, k):
        """``log(pmf(k))``."""
        return T.log(self.pmf(self._count(k, "Geometric.log_pmf")))

    def cdf(self, k):
        """``1 - (1 - probs)^(k + 1)``."""
        return 1.0 - T.pow(1.0 - self.probs, self._count(k, "Geometric.cdf") + 1)

    def entropy(self):
        """``-((1 - p) log(1 - p) + p log(p)) / p``."""
        p = self.probs
        return -((1.0 - p) * T.log(1.0 - p) + p * T.log(p)) / p

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``floor(log(u) / log1p(-probs))`` with u uniform in (tiny, 1) (inversion of
        the cdf; its gradient is zero almost everywhere)."""
        shape = list(self._extend_shape(sample_shape(shape, "Geometric.rsample")))
        uniforms = T.uniform(shape, dtype=self.probs.dtype,
                             min=float(np.finfo(np.float32).tiny), max=1.0)
        return T.floor(T.log(uniforms) / T.log1p(-self.probs))

    def kl_divergence(self, other):
        """KL(self || other) = ``log(p / q) + ((1 - p) / p) log((1 - p) / (1 - q))``:
        the expected log ratio of the pmfs, ``log(p / q) + E[k] log((1 - p) / (1 -
        q))``. Paddle returns p times this (the KL of Bernoulli(p) from Bernoulli(q)),
        and documents a third formula; neither is the geometric KL."""
        if not isinstance(other, Geometric):
            raise TypeError(f"Exacted type of other is geometric.Geometric, but got "
                            f"{type(other)}")
        p, q = self.probs, other.probs
        return T.log(p / q) + (1.0 - p) / p * T.log((1.0 - p) / (1.0 - q))
