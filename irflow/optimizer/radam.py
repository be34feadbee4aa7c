"""RAdam: Adam whose adaptive step is rectified while its variance estimate is young."""
from __future__ import annotations

import numpy as np

from ._ops import add, div, gt, maximum, mul, select, sqrt, sub
from .adam import adam_hyperparameters, update_moments
from .optimizer import Optimizer, filled

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Paddle's ``paddle.optimizer.RAdam``, with Adam's ``moment1`` and ``moment2``, the
    powers ``beta1_pow`` and ``beta2_pow`` and ``rho`` = t * beta2_pow / (1 -
    beta2_pow), kept by a recurrence (all starting at 1, in the parameter's shape as in
    Paddle)::

        rho_inf = 2 / (1 - beta2) - 1,   rho_t = rho_inf - 2 * rho
        m_hat   = moment1 / (1 - beta1_pow)
        param   = param - lr * m_hat * r_t * sqrt(1 - beta2_pow) / (sqrt(moment2) + epsilon)
                                                                        (rho_t > 5)
        param   = param - lr * m_hat                                    (otherwise)

    with r_t = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2)
    rho_t)). Parameter groups may set ``beta1``, ``beta2`` and ``epsilon``."""

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1.0e-8, parameters=None, weight_decay=None,
                 grad_clip=None, name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults=hyper)

    def _accumulators(self, param, options):
        ones, zeros = filled(param, 1), filled(param, 0)
        return [("beta1_pow", ones), ("beta2_pow", ones), ("rho", ones), ("moment1", zeros),
                ("moment2", zeros)]

    def _constants(self, options, dtype):
        one = np.ones((), dtype)
        beta1, beta2 = np.asarray(options["beta1"], dtype), np.asarray(options["beta2"], dtype)
        rho_inf = np.asarray(2, dtype) / (one - beta2) - one
        four, two = np.asarray(4, dtype), np.asarray(2, dtype)
        return {"zero": np.zeros((), dtype), "one": one, "two": two, "four": four,
                "five": 5.0, "beta1": beta1, "beta2": beta2, "1-beta1": one - beta1,
                "1-beta2": one - beta2, "epsilon": options["epsilon"], "rho_inf": rho_inf,
                "rectifier_denominator": (rho_inf - four) * (rho_inf - two)}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        beta1_pow = mul(s["beta1_pow"], c["beta1"])
        beta2_pow = mul(s["beta2_pow"], c["beta2"])
        rho = div(add(mul(s["rho"], sub(c["beta2"], beta2_pow)), beta2_pow),
                  sub(c["one"], beta2_pow))
        m1, m2 = update_moments(slot, grad)
        m_hat = div(m1, sub(c["one"], beta1_pow))
        rho_t = sub(c["rho_inf"], mul(c["two"], rho))
        step = m_hat
        if 2 / (1 - slot.options["beta2"]) - 1 > 5:  # else rho_t < rho_inf <= 5 always
            # (rho_t - 4)(rho_t - 2) is negative for rho_t in (2, 4), where the plain
            # step is taken: clamped, so that the unused branch stays finite.
            spread = maximum(mul(sub(rho_t, c["four"]), sub(rho_t, c["two"])), c["zero"])
            rectifier = sqrt(div(mul(spread, c["rho_inf"]),
                                 mul(c["rectifier_denominator"], rho_t)))
            adaptive = div(sqrt(sub(c["one"], beta2_pow)), add(sqrt(m2), c["epsilon"]))
            step = select(gt(rho_t, c["five"]), mul(mul(m_hat, rectifier), adaptive), m_hat)
        p.set_value(sub(p, mul(slot.lr, step)))
        s["beta1_pow"].set_value(beta1_pow)
        s["beta2_pow"].set_value(beta2_pow)
        s["rho"].set_value(rho)
