"""Paddle's ``paddle.distribution.Gamma`` (shape `concentration`, inverse scale
`rate`), and the standard gamma sampler that Gamma, Dirichlet and Beta draw with."""
from __future__ import annotations

from .. import tensor as T
from ..dispatch import no_grad
from ..ir import dtypes
from ..tensor.convert import get_default_dtype
from ..tensor.logic import select
from .distribution import sample_shape
from .exponential_family import ExponentialFamily

# Proposals per draw in `standard_gamma`. Marsaglia and Tsang's method accepts a
# proposal with probability above 0.95 for every concentration (boosted to at least
# 1), so all 16 are rejected with probability below 1e-20.
_PROPOSALS = 16


def log_standard_gamma(concentration):
    """Logs of draws of Gamma(concentration, 1), one per element, not differentiable
    (as Paddle's ``standard_gamma``). Marsaglia and Tsang's rejection method,
    vectorised: every element gets `_PROPOSALS` proposals and keeps the first
    accepted one; a concentration a < 1 draws from Gamma(a + 1) and adds
    ``log(u) / a``. Logs, because small concentrations give draws that underflow
    (Dirichlet normalises them in log space)."""
    with no_grad():
        alpha = concentration.detach()
        shape, dtype = list(alpha.shape), alpha.dtype
        boosted = select(alpha < 1, alpha + 1, alpha)
        d = boosted - 1.0 / 3.0
        c = 1.0 / T.sqrt(9.0 * d)
        z = T.randn([_PROPOSALS] + shape, dtype=dtype)
        u = T.rand([_PROPOSALS] + shape, dtype=dtype)
        v = (1.0 + c * z) ** 3
        positive = v > 0
        v = select(positive, v, T.ones_like(v))
        accept = T.logical_and(positive, T.log(u) < 0.5 * z * z + d - d * v + d * T.log(v))
        first = T.argmax(accept.astype(dtypes.int32), axis=0, keepdim=True)
        log_draws = T.log(d) + T.log(T.take_along_axis(v, first, axis=0).squeeze(0))
        boost = T.log(T.rand(shape, dtype=dtype)) / alpha
        return select(alpha < 1, log_draws + boost, log_draws)


def standard_gamma(concentration):
    """Draws of Gamma(concentration, 1) (see `log_standard_gamma`)."""
    return T.exp(log_standard_gamma(concentration))


class Gamma(ExponentialFamily):
    """The gamma distribution of `concentration` (shape) and `rate` (inverse scale):
    both floats or both Tensors (used as given, not broadcast)."""

    def __init__(self, concentration, rate):
        if self._validate_args(concentration, rate):
            self.concentration, self.rate = concentration, rate
            self.dtype = concentration.dtype
        else:
            self.concentration, self.rate = self._to_tensor(concentration, rate)
            self.dtype = dtypes.dtype(get_default_dtype())
        super().__init__(self.concentration.shape)

    @property
    def mean(self):
        """``concentration / rate``."""
        return self.concentration / self.rate

    @property
    def variance(self):
        """``concentration / rate^2``."""
        return self.concentration / self.rate.pow(2)

    def prob(self, value):
        """The density at `value`."""
        return T.exp(self.log_prob(value))

    def log_prob(self, value):
        """``a log(rate) + (a - 1) log(value) - rate value - lgamma(a)``."""
        return (self.concentration * T.log(self.rate)
                + (self.concentration - 1) * T.log(value)
                - self.rate * value - T.lgamma(self.concentration))

    def entropy(self):
        """``a - log(rate) + lgamma(a) + (1 - a) digamma(a)``."""
        a = self.concentration
        return a - T.log(self.rate) + T.lgamma(a) + (1.0 - a) * T.digamma(a)

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape``, not differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``standard_gamma(concentration) / rate``: differentiable in `rate` only
        (Paddle's standard_gamma has no gradient)."""
        shape = list(self._extend_shape(sample_shape(shape, "Gamma.rsample")))
        return (standard_gamma(T.broadcast_to(self.concentration, shape))
                / T.broadcast_to(self.rate, shape))

    def kl_divergence(self, other):
        """KL(self || other) between gamma distributions."""
        if not isinstance(other, Gamma):
            raise TypeError(f"Expected type of other is Gamma, but got {type(other)}")
        t1 = other.concentration * T.log(self.rate / other.rate)
        t2 = T.lgamma(other.concentration) - T.lgamma(self.concentration)
        t3 = (self.concentration - other.concentration) * T.digamma(self.concentration)
        t4 = (other.rate - self.rate) * (self.concentration / self.rate)
        return t1 + t2 + t3 + t4

    @property
    def _natural_parameters(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return T.lgamma(x + 1) + (x + 1) * T.log(-y.reciprocal())
