"""Paddle's ``paddle.distribution.Bernoulli``: 1 with probability `probs`, else 0."""
from __future__ import annotations

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from ..nn import functional as F
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select
from .distribution import broadcast_pair, sample_shape
from .exponential_family import ExponentialFamily


def _clip_probs(probs, dtype):
    """`probs` kept at least the dtype's epsilon from 0 and 1, as Paddle does, so that
    the logits stay finite."""
    eps = float(np.finfo(dtype.np).eps)
    return T.clip(probs, min=eps, max=1 - eps).astype(dtype)


class Bernoulli(ExponentialFamily):
    """The Bernoulli distribution of success probability `probs` (a float, or a
    float Tensor used as given so that gradients reach it), clipped to
    [eps, 1 - eps] of its dtype."""

    def __init__(self, probs, name=None):
        self.name = name or "Bernoulli"
        if self._validate_args(probs):
            self.probs = probs
        else:
            (self.probs,) = self._to_tensor(probs)
        self.dtype = (self.probs.dtype if isinstance(probs, T.Tensor)
                      else dtypes.dtype(get_default_dtype()))
        self.probs = _clip_probs(self.probs, self.dtype)
        self.logits = self._probs_to_logits(self.probs, is_binary=True)
        super().__init__(batch_shape=self.probs.shape, event_shape=())

    @property
    def mean(self):
        """The mean, `probs`."""
        return self.probs

    @property
    def variance(self):
        """The variance, ``probs (1 - probs)``."""
        return self.probs * (1 - self.probs)

    def sample(self, shape=()):
        """0/1 draws in the dtype of `probs`, of shape ``shape + batch_shape`` (not
        differentiable)."""
        shape = list(self._extend_shape(sample_shape(shape, "Bernoulli.sample")))
        with no_grad():
            return (T.rand(shape, dtype=self.dtype) < self.probs).astype(self.dtype)

    def rsample(self, shape=(), temperature=1.0):
        """Relaxed draws (Concrete / Gumbel-softmax): ``(logit(u) + logit(probs)) /
        temperature`` with u uniform, differentiable in `probs`. As Paddle documents,
        they still need a `sigmoid` to land in (0, 1)."""
        shape = list(self._extend_shape(sample_shape(shape, "Bernoulli.rsample")))
        probs = T.broadcast_to(self.probs, shape)
        uniforms = T.rand(shape, dtype=self.dtype)
        return ((T.log(uniforms) - T.log1p(-uniforms)) + (T.log(probs) - T.log1p(-probs))) \
            / temperature

    def cdf(self, value):
        """0 below 0, ``1 - probs`` on [0, 1), 1 from 1 on."""
        value = self._check_values_dtype_in_probs(self.probs, value)
        probs, value = broadcast_pair(self.probs, value)
        return select(value < 0, T.zeros_like(probs),
                       select(value < 1, 1 - probs, T.ones_like(probs)))

    def log_prob(self, value):
        """``value log(probs) + (1 - value) log(1 - probs)``, from the logits."""
        value = self._check_values_dtype_in_probs(self.probs, value)
        logits, value = broadcast_pair(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return self.log_prob(value).exp()

    def entropy(self):
        """``-probs log(probs) - (1 - probs) log(1 - probs)``, as ``softplus(logits) -
        probs logits``: the value of Paddle's ``binary_cross_entropy_with_logits(logits,
        probs)``, but differentiable in `probs` (Paddle's gradient is zero, as its loss
        passes no gradient to the label)."""
        return F.softplus(self.logits) - self.probs * self.logits

    def kl_divergence(self, other):
        """KL(self || other) = ``p log(p / q) + (1 - p) log((1 - p) / (1 - q))``,
        from the logits."""
        if not isinstance(other, Bernoulli):
            raise TypeError(f"Bernoulli.kl_divergence: other must be a Bernoulli, got "
                            f"{type(other).__name__}")
        a, b = self.logits, other.logits
        pa, one_minus_pa = F.sigmoid(a), F.sigmoid(-a)
        return ((-F.softplus(-a) + F.softplus(-b)) * pa
                + (-F.softplus(a) + F.softplus(b)) * one_minus_pa)
