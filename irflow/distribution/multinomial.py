"""Paddle's ``paddle.distribution.Multinomial``: category counts of `total_count`
categorical draws."""
from __future__ import annotations

from collections.abc import Iterable

from .. import tensor as T
from ..nn import functional as F
from .categorical import Categorical
from .distribution import Distribution, xlogy


class Multinomial(Distribution):
    """The multinomial distribution of `total_count` (an int, at least 1) draws from
    the categories of the last axis of `probs` (normalised to sum 1)."""

    def __init__(self, total_count, probs):
        if not isinstance(total_count, int) or total_count < 1:
            raise ValueError("input parameter total_count must be int type and grater than "
                             "zero.")
        if probs.ndim < 1:
            raise ValueError("probs parameter should not be none and over one dimension")
        self.probs = probs / probs.sum(-1, keepdim=True)
        self.total_count = total_count
        self._categorical = Categorical(logits=T.log(probs))
        super().__init__(probs.shape[:-1], probs.shape[-1:])

    @property
    def mean(self):
        """``total_count probs``."""
        return self.probs * self.total_count

    @property
    def variance(self):
        """``total_count probs (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(value))

    def log_prob(self, value):
        """``lgamma(n + 1) - sum(lgamma(value + 1)) + sum(value log(probs))``, n the
        total of `value` (0 log 0 = 0)."""
        if not value.dtype.is_float:
            value = value.astype(self.probs.dtype)
        return (T.lgamma(value.sum(-1) + 1) - T.lgamma(value + 1).sum(-1)
                + xlogy(value, self.probs).sum(-1))

    def sample(self, shape=()):
        """Counts (in the dtype of `probs`) of shape ``shape + batch_shape +
        event_shape``: one-hot categorical draws summed over the trials (not
        differentiable)."""
        if not isinstance(shape, Iterable):
            raise TypeError("sample shape must be Iterable object.")
        draws = self._categorical.sample([self.total_count, *list(shape)])
        one_hot = F.one_hot(draws, self.probs.shape[-1]).astype(self.probs.dtype)
        return one_hot.sum(0)

    def entropy(self):
        """``n H(categorical) - lgamma(n + 1) + sum_k E[lgamma(x_k + 1)]``, the last
        from each count's binomial marginal (Binomial(n, p_k)), over 1 .. n."""
        n = float(self.total_count)
        support = T.arange(1, self.total_count + 1, dtype=self.probs.dtype).reshape(
            [-1] + [1] * self.probs.ndim)
        binomial_pmf = T.exp(self._binomial_log_pmf(n, support))
        return (n * self._categorical.entropy() - T.lgamma(T.full([], n + 1, self.probs.dtype))
                + (binomial_pmf * T.lgamma(support + 1)).sum([0, -1]))

    def _binomial_log_pmf(self, n: float, value):
        """``log C(n, value) + value log(p) + (n - value) log(1 - p)`` per category
        (0 log 0 = 0, so categories of probability 0 or 1 stay finite or -inf, where
        Paddle's logit form gets nan)."""
        log_comb = (T.lgamma(T.full([], n + 1, self.probs.dtype)) - T.lgamma(value + 1)
                    - T.lgamma(n - value + 1))
        return log_comb + xlogy(value, self.probs) + xlogy(n - value, 1 - self.probs)
