"""Paddle's ``paddle.distribution.Independent``: the rightmost batch axes of a
distribution reinterpreted as event axes."""
from __future__ import annotations

from .distribution import Distribution


def _sum_rightmost(value, n: int):
    """`value` summed over its last `n` axes."""
    return value.sum(list(range(-n, 0))) if n > 0 else value


class Independent(Distribution):
    """`base` with its last `reinterpreted_batch_rank` batch axes (at least one, at
    most all) made event axes: log_prob and entropy sum over them."""

    def __init__(self, base, reinterpreted_batch_rank):
        if not isinstance(base, Distribution):
            raise TypeError(f"Expected type of 'base' is Distribution, but got {type(base)}")
        if not 0 < reinterpreted_batch_rank <= len(base.batch_shape):
            raise ValueError(f"Expected 0 < reinterpreted_batch_rank <= "
                             f"{len(base.batch_shape)}, but got {reinterpreted_batch_rank}")
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        split = len(base.batch_shape) - reinterpreted_batch_rank
        super().__init__(batch_shape=shape[:split], event_shape=shape[split:])

    @property
    def mean(self):
        """The base's mean."""
        return self._base.mean

    @property
    def variance(self):
        """The base's variance."""
        return self._base.variance

    def sample(self, shape=()):
        """The base's draws."""
        return self._base.sample(shape)

    def log_prob(self, value):
        """The base's log_prob summed over the reinterpreted axes."""
        return _sum_rightmost(self._base.log_prob(value), self._reinterpreted_batch_rank)

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return self.log_prob(value).exp()

    def entropy(self):
        """The base's entropy summed over the reinterpreted axes."""
        return _sum_rightmost(self._base.entropy(), self._reinterpreted_batch_rank)
