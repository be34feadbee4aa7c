"""Paddle's ``paddle.distribution.ExponentialFamily``: distributions of density
``exp(<t(x), theta> - F(theta) + k(x))``, whose entropy follows from the log
normalizer F alone."""
from __future__ import annotations

from ..autograd import grad
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions. A subclass gives
    `_natural_parameters` (theta), `_log_normalizer` (F) and `_mean_carrier_measure`
    (E[k(x)]); `entropy` is then ``F(theta) - <theta, grad F(theta)> - E[k(x)]``
    (Bregman divergence), differentiable through a second-order gradient."""

    @property
    def _natural_parameters(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_parameters):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """The entropy from the log normalizer's gradient (see the class)."""
        parameters, log_norm, grads = self._log_normalizer_and_gradients()
        entropy_value = -self._mean_carrier_measure + log_norm
        for parameter, gradient in zip(parameters, grads):
            entropy_value = entropy_value - parameter * gradient
        return entropy_value

    def _log_normalizer_and_gradients(self) -> tuple[list, object, list]:
        """(the natural parameters, detached to differentiate F at them; F there; its
        gradients, which themselves differentiate: what the entropy and the KL
        divergence between two of a family are made of)."""
        parameters = []
        for parameter in self._natural_parameters:
            parameter = parameter.detach()
            parameter.stop_gradient = False
            parameters.append(parameter)
        log_norm = self._log_normalizer(*parameters)
        return parameters, log_norm, grad(log_norm.sum(), parameters, create_graph=True)
