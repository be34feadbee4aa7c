"""Paddle's ``paddle.distribution.Binomial``: successes in `total_count` trials of
success probability `probs`."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select
from .distribution import Distribution, broadcast_pair, plogp, summed_kl


class Binomial(Distribution):
    """The binomial distribution of `total_count` (an int, or a Tensor cast to the
    dtype of `probs`) and `probs` (a float, made a default-dtype 0-D Tensor, or a
    Tensor used as given), broadcast together. The support is enumerated from
    `total_count`'s values, so entropy and kl_divergence run eagerly."""

    def __init__(self, total_count, probs):
        if isinstance(probs, float):
            probs = T.to_tensor(probs, dtype=get_default_dtype())
        self.dtype = probs.dtype
        total_count = (T.to_tensor(total_count, dtype=self.dtype)
                       if isinstance(total_count, int) else total_count.astype(self.dtype))
        self.total_count, self.probs = broadcast_pair(total_count, probs)
        super().__init__(tuple(self.total_count.shape))

    @property
    def mean(self):
        """``total_count probs``."""
        return self.total_count * self.probs

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """Draws (counts in the dtype of `probs`) of shape ``shape + batch_shape``,
        not differentiable."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        with no_grad():
            shape = list(shape) + list(self.batch_shape)
            counts = T.broadcast_to(self.total_count, shape).astype(dtypes.int32)
            return T.binomial(counts, T.broadcast_to(self.probs, shape)).astype(self.dtype)

    def _support(self):
        """The counts 0 .. max(total_count) on the first axis, broadcasting over the
        batch."""
        end = int(np.max(self.total_count.numpy())) + 1
        return T.arange(0, end, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))

    def log_prob(self, value):
        """``log C(n, value) + value log(p) + (n - value) log(1 - p)``, p clipped to
        [eps, 1 - eps] as in Paddle, and -inf outside [0, n]. (Paddle maps those -inf
        to ``-eps``, a probability of about 1 for impossible counts.)"""
        value = value.astype(self.dtype)
        n = self.total_count
        log_comb = T.lgamma(n + 1.0) - T.lgamma(n - value + 1.0) - T.lgamma(value + 1.0)
        eps = float(np.finfo(self.dtype.np).eps)
        probs = T.clip(self.probs, min=eps, max=1 - eps)
        log_pmf = log_comb + value * T.log(probs) + (n - value) * T.log(1 - probs)
        outside = T.logical_or(value < 0, value > n)
        return select(outside, T.full_like(log_pmf, float("-inf")), log_pmf)

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(value))

    def entropy(self):
        """``-sum(p log p)`` over the counts 0 .. max(total_count)."""
        return -T.sum(plogp(self.log_prob(self._support())), axis=0)

    def kl_divergence(self, other):
        """KL(self || other), summed over self's counts."""
        if not isinstance(other, Binomial):
            raise TypeError(f"Expected type of other is Binomial, but got {type(other)}")
        support = self._support()
        log_p, log_q = self.log_prob(support), other.log_prob(support)
        return summed_kl(log_p, log_q)
