"""Paddle's ``paddle.distribution``: probability distributions (sampling, densities,
entropies, KL divergences), composed from irflow's tensor operations so that they
differentiate and trace like any other code."""
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .exponential_family import ExponentialFamily
from .gamma import Gamma
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lognormal import LogNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "Gamma", "Laplace", "LogNormal", "Normal", "Uniform",
           "kl_divergence", "register_kl"]
