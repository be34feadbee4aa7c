"""Paddle's ``paddle.distribution.kl_divergence`` and ``register_kl``: KL divergences
looked up by the pair of distribution classes, the most specific registered pair
winning."""
from __future__ import annotations

import functools
import warnings

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .exponential_family import ExponentialFamily
from .gamma import Gamma
from .geometric import Geometric
from .laplace import Laplace
from .lognormal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_REGISTER_TABLE = {}


def kl_divergence(p, q):
    """KL(p || q) by the function registered for the classes of p and q (or their
    closest registered bases); NotImplementedError when none is."""
    return _dispatch(type(p), type(q))(p, q)


def register_kl(cls_p, cls_q):
    """Decorator registering a function ``f(p, q)`` as the KL divergence of
    instances of `cls_p` from instances of `cls_q`."""
    if not (isinstance(cls_p, type) and issubclass(cls_p, Distribution)
            and isinstance(cls_q, type) and issubclass(cls_q, Distribution)):
        raise TypeError("cls_p and cls_q must be subclass of Distribution")

    def decorator(f):
        _REGISTER_TABLE[cls_p, cls_q] = f
        return f
    return decorator


def _dispatch(cls_p, cls_q):
    """The registered function of the most specific pair of bases, warning when the
    pair most specific in p and the pair most specific in q disagree."""
    matches = [(super_p, super_q) for super_p, super_q in _REGISTER_TABLE
               if issubclass(cls_p, super_p) and issubclass(cls_q, super_q)]
    if not matches:
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"({cls_p.__name__}, {cls_q.__name__})")
    left_p, left_q = min(_Compare(*m) for m in matches).classes
    right_q, right_p = min(_Compare(*reversed(m)) for m in matches).classes
    if _REGISTER_TABLE[left_p, left_q] is not _REGISTER_TABLE[right_p, right_q]:
        warnings.warn(f"Ambiguous kl_divergence({cls_p.__name__}, {cls_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return _REGISTER_TABLE[left_p, left_q]


@functools.total_ordering
class _Compare:
    """Orders class pairs by specificity, lexicographically."""

    def __init__(self, *classes):
        self.classes = classes

    def __eq__(self, other):
        return self.classes == other.classes

    def __le__(self, other):
        for cls_x, cls_y in zip(self.classes, other.classes):
            if not issubclass(cls_x, cls_y):
                return False
            if cls_x is not cls_y:
                break
        return True


def _by_method(p, q):
    return p.kl_divergence(q)


for _cls in (Bernoulli, Binomial, Categorical, Cauchy, Exponential, Gamma, Geometric, Laplace,
             MultivariateNormal, Normal, Poisson, Uniform):
    register_kl(_cls, _cls)(_by_method)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer F between the natural
    parameters: ``F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>``,
    the inner product over the event axes. Only for two distributions of one
    class."""
    if type(p) is not type(q):
        raise NotImplementedError(f"kl_divergence: no KL divergence is registered for "
                                  f"({type(p).__name__}, {type(q).__name__})")
    p_params, p_log_norm, p_grads = p._log_normalizer_and_gradients()
    kl = q._log_normalizer(*q._natural_parameters) - p_log_norm
    event_axes = list(range(-len(q.event_shape), 0))
    for p_param, q_param, p_grad in zip(p_params, q._natural_parameters, p_grads):
        term = (q_param - p_param) * p_grad
        kl = kl - (term.sum(event_axes) if event_axes else term)
    return kl


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return p._base.kl_divergence(q._base)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return ((q.alpha.lgamma() + q.beta.lgamma() + (p.alpha + p.beta).lgamma())
            - (p.alpha.lgamma() + p.beta.lgamma() + (q.alpha + q.beta).lgamma())
            + ((p.alpha - q.alpha) * p.alpha.digamma())
            + ((p.beta - q.beta) * p.beta.digamma())
            + (((q.alpha + q.beta) - (p.alpha + p.beta)) * (p.alpha + p.beta).digamma()))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    return ((a.sum(-1).lgamma() - b.sum(-1).lgamma())
            - (a.lgamma() - b.lgamma()).sum(-1)
            + ((a - b) * (a.digamma() - a.sum(-1).digamma().unsqueeze(-1))).sum(-1))
