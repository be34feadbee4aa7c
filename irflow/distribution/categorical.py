"""Paddle's ``paddle.distribution.Categorical``: K categories, the last axis of
`logits`."""
from __future__ import annotations

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from ..nn import functional as F
from .distribution import (Distribution, float_dtype, plogp, sample_shape, shape_of,
                           summed_kl)


class Categorical(Distribution):
    """The categorical distribution over the last axis of `logits`.

    Paddle's methods read `logits` two ways, and irflow keeps both, as Paddle
    documents them by example: `sample`, `entropy` and `kl_divergence` take the
    probabilities ``softmax(logits)``, while `probs` and `log_prob` take
    ``logits / sum(logits)`` (the argument as unnormalised probabilities)."""

    def __init__(self, logits, name=None):
        self.name = name if name is not None else "Categorical"
        if self._validate_args(logits):
            self.logits = logits
        else:
            (self.logits,) = self._to_tensor(logits, dtype=float_dtype(logits))
        self.dtype = self.logits.dtype
        self._prob = self.logits / T.sum(self.logits, axis=-1, keepdim=True)
        super().__init__(self.logits.shape[:-1])

    def sample(self, shape=()):
        """int64 categories of shape ``shape + logits.shape[:-1]``, drawn from
        ``softmax(logits)`` by inverting its cumulative sum at uniform draws (not
        differentiable)."""
        shape = sample_shape(shape, "Categorical.sample")
        if self.logits.ndim == 0:
            raise ValueError("Categorical.sample: logits must have at least 1 dimension "
                             "(the categories), got a 0-D Tensor")
        with no_grad():
            cdf = T.cumsum(F.softmax(self.logits, axis=-1), axis=-1)
            draws = T.rand(shape + shape_of(self.logits)[:-1] + [1], dtype=self.dtype)
            index = T.sum((cdf < draws).astype(dtypes.int64), axis=-1)
            return T.clip(index, max=self.logits.shape[-1] - 1)

    def _log_softmax(self):
        return F.log_softmax(self.logits, axis=-1)

    def kl_divergence(self, other):
        """KL(self || other) of the softmax probabilities, with the last axis kept
        (shape ``batch_shape + [1]``, as Paddle returns it). Categories of
        probability 0 under self (logit -inf) add 0, where Paddle's sum gets nan."""
        if not isinstance(other, Categorical):
            raise TypeError(f"Categorical.kl_divergence: other must be a Categorical, got "
                            f"{type(other).__name__}")
        return summed_kl(self._log_softmax(), other._log_softmax(), axis=-1, keepdim=True)

    def entropy(self):
        """``-sum(p log p)`` of the softmax probabilities p, shape `batch_shape`;
        categories of probability 0 (logit -inf) add 0, where Paddle's sum gets
        nan."""
        return -T.sum(plogp(self._log_softmax()), axis=-1)

    def probs(self, value):
        """``(logits / sum(logits))`` at the categories `value`: with a single
        distribution, one probability per element of `value`; with a batch, a 1-D
        `value` is taken for every distribution, otherwise `value` indexes the last
        axis per distribution."""
        value = value if isinstance(value, T.Tensor) else T.to_tensor(value)
        if self._prob.ndim == 1:
            return T.gather(self._prob, T.reshape(value, [-1])).reshape(shape_of(value))
        if value.ndim == 1:
            value = T.reshape(value, [1] * (self._prob.ndim - 1) + [-1])
        return T.take_along_axis(self._prob, value, axis=-1)

    def log_prob(self, value):
        """``log(probs(value))``."""
        return T.log(self.probs(value))
