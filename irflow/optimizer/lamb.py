"""Lamb: Adam steps rescaled per parameter by the trust ratio ||param|| / ||step||."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ._ops import add, div, gt, logical_and, mul, norm, select, shaped_like, sqrt, sub
from .adam import adam_hyperparameters, update_moments
from .optimizer import Optimizer, filled

__all__ = ["Lamb"]


class Lamb(Optimizer):
    """Paddle's ``paddle.optimizer.Lamb``, with Adam's accumulators ``moment1``,
    ``moment2``, ``beta1_pow_acc`` and ``beta2_pow_acc`` (shape [1])::

        moment1 = beta1 * moment1 + (1 - beta1) * grad
        moment2 = beta2 * moment2 + (1 - beta2) * grad * grad
        r       = (moment1 / (1 - beta1_pow)) / (sqrt(moment2 / (1 - beta2_pow)) + epsilon)
                  + lamb_weight_decay * param
        ratio   = ||param|| / ||r||   (1 if either norm is 0)
        param   = param - lr * ratio * r

    A parameter for which `exclude_from_weight_decay_fn(param)` is true gets no decay
    and, unless `always_adapt`, ratio 1 (as does every parameter when
    ``lamb_weight_decay`` is 0). Parameter groups may set ``beta1``, ``beta2``,
    ``epsilon`` and ``lamb_weight_decay``. As in Paddle, a float16 parameter's state is
    float32 and its update computed in float32, on a float32 master weight with
    `multi_precision` (see `Optimizer`)."""

    _float32_moments = True

    def __init__(self, learning_rate=0.001, lamb_weight_decay: float = 0.01,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-6,
                 parameters=None, grad_clip=None,
                 exclude_from_weight_decay_fn: Callable | None = None,
                 multi_precision: bool = False, always_adapt: bool = False,
                 name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn
        self.always_adapt = bool(always_adapt)
        super().__init__(learning_rate, parameters, None, grad_clip, name,
                         defaults={**hyper, "lamb_weight_decay": float(lamb_weight_decay)},
                         multi_precision=multi_precision)

    def _slot_options(self, param, options: dict) -> dict:
        exclude = self._exclude_from_weight_decay_fn
        if exclude is not None and exclude(param):
            return {**options, "lamb_weight_decay": 0.0}
        return options

    def _accumulators(self, param, options):
        zeros = filled(param, 0)
        return [("moment1", zeros), ("moment2", zeros),
                ("beta1_pow_acc", filled(param, options["beta1"], shape=[1])),
                ("beta2_pow_acc", filled(param, options["beta2"], shape=[1]))]

    def _constants(self, options, dtype):
        one = np.ones((), dtype)
        beta1, beta2 = np.asarray(options["beta1"], dtype), np.asarray(options["beta2"], dtype)
        return {"zero": np.zeros((), dtype), "one": one, "beta1": beta1, "beta2": beta2,
                "1-beta1": one - beta1, "1-beta2": one - beta2,
                "epsilon": options["epsilon"], "decay": options["lamb_weight_decay"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        m1, m2 = update_moments(slot, grad)
        b1_pow, b2_pow = s["beta1_pow_acc"], s["beta2_pow_acc"]
        m1_hat = div(m1, sub(c["one"], b1_pow))
        m2_hat = div(m2, sub(c["one"], b2_pow))
        r = add(div(m1_hat, add(sqrt(m2_hat), c["epsilon"])), mul(c["decay"], p))
        lr = slot.lr
        if self.always_adapt or slot.options["lamb_weight_decay"] != 0.0:
            p_norm, r_norm = norm(p), norm(r)
            both = logical_and(gt(p_norm, c["zero"]), gt(r_norm, c["zero"]))
            lr = mul(lr, select(both, div(p_norm, select(both, r_norm, c["one"])), c["one"]))
        p.set_value(shaped_like(sub(p, mul(lr, r)), p))
        b1_pow.set_value(mul(b1_pow, c["beta1"]))
        b2_pow.set_value(mul(b2_pow, c["beta2"]))
