"""NAdam: Adam with Nesterov momentum, its momentum factor warmed up over time."""
from __future__ import annotations

import numpy as np

from ._ops import add, div, mul, power, sqrt, sub
from .adam import adam_hyperparameters, update_moments
from .optimizer import Optimizer, filled

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Paddle's ``paddle.optimizer.NAdam``, with Adam's ``moment1`` and ``moment2`` and
    the running products ``momentum_decay_pow`` (0.96 ** t), ``beta2_pow`` and
    ``mu_product`` (all starting at 1, in the parameter's shape as in Paddle)::

        mu_t      = beta1 * (1 - 0.5 * momentum_decay_pow ** momentum_decay)
        mu_next   = beta1 * (1 - 0.5 * (0.96 * momentum_decay_pow) ** momentum_decay)
        m_hat     = mu_next * moment1 / (1 - mu_product * mu_next)
                    + (1 - mu_t) * grad / (1 - mu_product)
        param     = param - lr * m_hat / (sqrt(moment2 / (1 - beta2_pow)) + epsilon)

    with the products taken through step t (``mu_product`` includes mu_t). Parameter
    groups may set ``beta1``, ``beta2``, ``epsilon`` and ``momentum_decay``."""

    _float32_moments = True  # for a float16 parameter, as Paddle (see `Optimizer`)

    def __init__(self, learning_rate=0.002, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1.0e-8, momentum_decay: float = 0.004, parameters=None,
                 weight_decay=None, grad_clip=None, name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"invalid momentum_decay {momentum_decay}: expected a value "
                             f">= 0")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={**hyper, "momentum_decay": float(momentum_decay)})

    def _accumulators(self, param, options):
        ones, zeros = filled(param, 1), filled(param, 0)
        return [("momentum_decay_pow", ones), ("beta2_pow", ones), ("mu_product", ones),
                ("moment1", zeros), ("moment2", zeros)]

    def _constants(self, options, dtype):
        one = np.ones((), dtype)
        beta1, beta2 = np.asarray(options["beta1"], dtype), np.asarray(options["beta2"], dtype)
        return {"one": one, "half": 0.5, "0.96": 0.96, "beta1": beta1, "beta2": beta2,
                "1-beta1": one - beta1, "1-beta2": one - beta2,
                "epsilon": options["epsilon"], "psi": options["momentum_decay"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        decay_pow = mul(s["momentum_decay_pow"], c["0.96"])
        beta2_pow = mul(s["beta2_pow"], c["beta2"])
        mu_t = mul(c["beta1"], sub(c["one"], mul(c["half"], power(decay_pow, c["psi"]))))
        mu_next = mul(c["beta1"], sub(c["one"], mul(c["half"],
                                                    power(mul(decay_pow, c["0.96"]),
                                                          c["psi"]))))
        mu_product = mul(s["mu_product"], mu_t)
        m1, m2 = update_moments(slot, grad)
        m_hat = add(div(mul(mu_next, m1), sub(c["one"], mul(mu_product, mu_next))),
                    div(mul(sub(c["one"], mu_t), grad), sub(c["one"], mu_product)))
        v_hat = div(m2, sub(c["one"], beta2_pow))
        p.set_value(sub(p, div(mul(slot.lr, m_hat), add(sqrt(v_hat), c["epsilon"]))))
        s["momentum_decay_pow"].set_value(decay_pow)
        s["beta2_pow"].set_value(beta2_pow)
        s["mu_product"].set_value(mu_product)
