"""Paddle's ``paddle.distribution.Poisson``: counts of events at rate `rate`."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select
from .distribution import Distribution, plogp, summed_kl, xlogy


def _support_end(max_rate: float) -> int:
    """Paddle's truncation of the support for entropies and KL divergences: the
    counts below ``max_rate + 30 sqrt(max_rate)`` (``max_rate + 30`` for rates below
    1), which hold all but a negligible part of the mass."""
    spread = math.sqrt(max_rate) if max_rate >= 1 else 1.0
    return int(max_rate + 30 * spread)


def _max_of(x) -> float:
    """The largest element of `x`, read eagerly: the support sizes depend on it."""
    return float(np.max(x.numpy()))


class Poisson(Distribution):
    """The Poisson distribution of `rate`: a real number (made a 1-D default-dtype
    Tensor of one element, as in Paddle) or a Tensor used as given. The support is
    enumerated from the rate's values, so entropy and kl_divergence run eagerly."""

    def __init__(self, rate):
        if isinstance(rate, (float, int)):
            rate = T.to_tensor([rate], dtype=get_default_dtype())
        self.rate = rate
        self.dtype = rate.dtype
        super().__init__(tuple(rate.shape))

    @property
    def mean(self):
        """The mean, `rate`."""
        return self.rate

    @property
    def variance(self):
        """The variance, `rate`."""
        return self.rate

    def sample(self, shape=()):
        """Draws (counts in the rate's dtype) of shape ``shape + batch_shape``, not
        differentiable."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        with no_grad():
            return T.poisson(T.broadcast_to(self.rate, list(shape) + list(self.batch_shape)))

    def _support(self, end: int):
        """The counts 0 .. end - 1 on the first axis, broadcasting over the batch."""
        return T.arange(0, end, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))

    def log_prob(self, value):
        """``value log(rate) - rate - lgamma(value + 1)`` (0 log 0 = 0), and -inf
        below 0 or at a positive count of rate 0. (Paddle maps those -inf to
        ``-eps``, a probability of about 1 for impossible counts.)"""
        value = value.astype(self.dtype)
        log_pmf = xlogy(value, self.rate) - self.rate - T.lgamma(value + 1)
        return select(value < 0, T.full_like(log_pmf, float("-inf")), log_pmf)

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(value))

    def entropy(self):
        """``-sum(p log p)`` over the truncated support (see `_support_end`); 0 for
        rate 0."""
        log_prob = self.log_prob(self._support(_support_end(_max_of(self.rate))))
        entropy = -T.sum(plogp(log_prob), axis=0)
        return select(self.rate == 0, T.zeros_like(entropy), entropy)

    def kl_divergence(self, other):
        """KL(self || other), summed over the support truncated at the larger rate
        of the two (as Paddle's, one count short of `_support_end`)."""
        if not isinstance(other, Poisson):
            raise TypeError(f"Expected type of other is Poisson, but got {type(other)}")
        if self.batch_shape != other.batch_shape:
            raise ValueError("KL divergence of two poisson distributions should share the "
                             "same `batch_shape`.")
        max_rate = max(_max_of(self.rate), _max_of(other.rate))
        support = self._support(_support_end(max_rate) - 1)
        log_p, log_q = self.log_prob(support), other.log_prob(support)
        return summed_kl(log_p, log_q)
