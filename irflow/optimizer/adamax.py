"""Adamax: Adam with the infinity norm in place of the second moment."""
from __future__ import annotations

import numpy as np

from ._ops import absolute, add, div, maximum, mul, shaped_like, sub
from .adam import adam_hyperparameters
from .optimizer import Optimizer, filled

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Paddle's ``paddle.optimizer.Adamax``, with the accumulators ``moment``,
    ``inf_norm`` and the power ``beta1_pow_acc`` (starting at beta1, shape [1])::

        moment    = beta1 * moment + (1 - beta1) * grad
        inf_norm  = max(beta2 * inf_norm + epsilon, |grad|)
        param     = param - lr / (1 - beta1_pow) * moment / inf_norm
        beta1_pow = beta1_pow * beta1

    Parameter groups may set ``beta1``, ``beta2`` and ``epsilon``."""

    _float32_moments = True  # for a float16 parameter, as Paddle (see `Optimizer`)

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters=None, weight_decay=None, grad_clip=None,
                 name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults=hyper)

    def _accumulators(self, param, options):
        zeros = filled(param, 0)
        return [("moment", zeros), ("inf_norm", zeros),
                ("beta1_pow_acc", filled(param, options["beta1"], shape=[1]))]

    def _constants(self, options, dtype):
        one = np.ones((), dtype)
        beta1 = np.asarray(options["beta1"], dtype)
        return {"one": one, "beta1": beta1, "1-beta1": one - beta1, "beta2": options["beta2"],
                "epsilon": options["epsilon"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        moment = add(mul(c["beta1"], s["moment"]), mul(c["1-beta1"], grad))
        inf_norm = maximum(add(mul(c["beta2"], s["inf_norm"]), c["epsilon"]), absolute(grad))
        s["moment"].set_value(moment)
        s["inf_norm"].set_value(inf_norm)
        b1_pow = s["beta1_pow_acc"]
        lr_t = div(slot.lr, sub(c["one"], b1_pow))
        p.set_value(shaped_like(sub(p, mul(lr_t, div(moment, inf_norm))), p))
        b1_pow.set_value(mul(b1_pow, c["beta1"]))
