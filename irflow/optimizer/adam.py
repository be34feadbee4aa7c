"""Adam, with Paddle's bias correction and optional AMSGrad."""
from __future__ import annotations

import numpy as np

from ..tensor.tensor import Tensor
from ._ops import add, div, maximum, mul, shaped_like, sqrt, sub
from .optimizer import Optimizer, filled

__all__ = ["Adam"]


def _number(value, name: str) -> float:
    """A hyperparameter given as a number or, as Paddle's Adam and AdamW allow, a
    one-element tensor (``paddle.to_tensor([0.9])``)."""
    if not isinstance(value, Tensor):
        return float(value)
    if value.size != 1:
        raise ValueError(f"{name} given as a tensor must have one element, got shape "
                         f"{value.shape}")
    return float(value.item())


def adam_hyperparameters(beta1, beta2, epsilon) -> dict:
    """The checked ``beta1``, ``beta2`` and ``epsilon`` of the Adam family, as the
    per-group defaults of its optimizers. Given as tensors they are read once, here:
    the powers start at beta1 and beta2 as for numbers (Paddle starts them at 0.9 and
    0.999 for tensors whatever their values, contradicting its bias correction)."""
    beta1, beta2 = _number(beta1, "beta1"), _number(beta2, "beta2")
    epsilon = _number(epsilon, "epsilon")
    if not 0 <= beta1 < 1:
        raise ValueError(f"invalid beta1 {beta1}: expected a value in [0, 1)")
    if not 0 <= beta2 < 1:
        raise ValueError(f"invalid beta2 {beta2}: expected a value in [0, 1)")
    if not 0 <= epsilon:
        raise ValueError(f"invalid epsilon {epsilon}: expected a value >= 0")
    return {"beta1": beta1, "beta2": beta2, "epsilon": epsilon}


def update_moments(slot, grad):
    """Adam's moment updates (shared with Lamb): store and return the new ``moment1``
    and ``moment2`` of `slot`."""
    c, s = slot.consts, slot.state
    m1 = add(mul(c["beta1"], s["moment1"]), mul(c["1-beta1"], grad))
    m2 = add(mul(c["beta2"], s["moment2"]), mul(mul(c["1-beta2"], grad), grad))
    s["moment1"].set_value(m1)
    s["moment2"].set_value(m2)
    return m1, m2


class Adam(Optimizer):
    """Paddle's ``paddle.optimizer.Adam``. With the accumulators ``moment1``,
    ``moment2`` (``moment2_max`` with `amsgrad`) and the powers ``beta1_pow_acc``,
    ``beta2_pow_acc`` (starting at beta1 and beta2, shape [1] per parameter)::

        moment1 = beta1 * moment1 + (1 - beta1) * grad
        moment2 = beta2 * moment2 + (1 - beta2) * grad * grad
        lr_t    = lr * sqrt(1 - beta2_pow) / (1 - beta1_pow)
        param   = param - lr_t * moment1 / (sqrt(moment2) + epsilon * sqrt(1 - beta2_pow))
        beta1_pow, beta2_pow = beta1_pow * beta1, beta2_pow * beta2

    (AMSGrad uses ``moment2_max = max(moment2_max, moment2)`` in place of moment2 in
    the denominator.) A float `weight_decay` adds L2 decay to the gradient. Parameter
    groups may set ``beta1``, ``beta2``, ``epsilon``. As in Paddle, a float16
    parameter's state is float32 and its update computed in float32, on a float32
    master weight with `multi_precision` (see `Optimizer`). `lazy_mode` (sparse
    gradients) and `use_multi_tensor` are accepted for compatibility and have no
    effect: irflow's gradients are dense."""

    _float32_moments = True

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters=None, weight_decay=None, grad_clip=None,
                 lazy_mode: bool = False, multi_precision: bool = False,
                 use_multi_tensor: bool = False, amsgrad: bool = False,
                 name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        self._amsgrad = bool(amsgrad)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={**hyper, "lazy_mode": bool(lazy_mode)},
                         multi_precision=multi_precision)

    def _accumulators(self, param, options):
        zeros = filled(param, 0)
        moments = [("moment1", zeros), ("moment2", zeros)]
        if self._amsgrad:
            moments.append(("moment2_max", zeros))
        return moments + [("beta1_pow_acc", filled(param, options["beta1"], shape=[1])),
                          ("beta2_pow_acc", filled(param, options["beta2"], shape=[1]))]

    def _constants(self, options, dtype):
        one = np.ones((), dtype)
        beta1, beta2 = np.asarray(options["beta1"], dtype), np.asarray(options["beta2"], dtype)
        return {"one": one, "beta1": beta1, "beta2": beta2, "1-beta1": one - beta1,
                "1-beta2": one - beta2, "epsilon": options["epsilon"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        m1, m2 = update_moments(slot, grad)
        if self._amsgrad:
            m2 = maximum(s["moment2_max"], m2)
            s["moment2_max"].set_value(m2)
        b1_pow, b2_pow = s["beta1_pow_acc"], s["beta2_pow_acc"]
        root = sqrt(sub(c["one"], b2_pow))
        lr_t = div(mul(slot.lr, root), sub(c["one"], b1_pow))
        denominator = add(sqrt(m2), mul(c["epsilon"], root))
        p.set_value(shaped_like(sub(p, mul(lr_t, div(m1, denominator))), p))
        b1_pow.set_value(mul(b1_pow, c["beta1"]))
        b2_pow.set_value(mul(b2_pow, c["beta2"]))
