"""RMSProp, plain or centered, with optional momentum."""
from __future__ import annotations

import numpy as np

from ._ops import add, div, mul, sqrt, sub
from .optimizer import Optimizer, filled

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    """Paddle's ``paddle.optimizer.RMSProp``, with the accumulators ``mean_square``,
    ``momentum`` and (centered) ``mean_grad``::

        mean_square = rho * mean_square + (1 - rho) * grad * grad
        mean_grad   = rho * mean_grad + (1 - rho) * grad                 (centered)
        momentum    = momentum_coef * momentum
                      + lr * grad / sqrt(mean_square - mean_grad ** 2 + epsilon)
        param       = param - momentum

    (without `centered`, ``mean_grad`` is 0). Parameter groups may set ``rho``,
    ``epsilon``, ``momentum`` and ``centered``."""

    def __init__(self, learning_rate, rho: float = 0.95, epsilon: float = 1.0e-6,
                 momentum: float = 0.0, centered: bool = False, parameters=None,
                 weight_decay=None, grad_clip=None, name: str | None = None):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if not 0.0 <= rho:
            raise ValueError(f"invalid rho {rho}: expected a value >= 0")
        if not 0.0 <= epsilon:
            raise ValueError(f"invalid epsilon {epsilon}: expected a value >= 0")
        if not 0.0 <= momentum:
            raise ValueError(f"invalid momentum {momentum}: expected a value >= 0")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={"rho": float(rho), "epsilon": float(epsilon),
                                   "momentum": float(momentum), "centered": bool(centered)})

    def _accumulators(self, param, options):
        zeros = filled(param, 0)
        return [("momentum", zeros), ("mean_square", zeros), ("mean_grad", zeros)]

    def _constants(self, options, dtype):
        rho = np.asarray(options["rho"], dtype)
        return {"rho": rho, "1-rho": np.ones((), dtype) - rho,
                "epsilon": options["epsilon"], "momentum": options["momentum"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        mean_square = add(mul(c["rho"], s["mean_square"]), mul(mul(c["1-rho"], grad), grad))
        s["mean_square"].set_value(mean_square)
        if slot.options["centered"]:
            mean_grad = add(mul(c["rho"], s["mean_grad"]), mul(c["1-rho"], grad))
            s["mean_grad"].set_value(mean_grad)
            mean_square = sub(mean_square, mul(mean_grad, mean_grad))
        step = div(mul(slot.lr, grad), sqrt(add(mean_square, c["epsilon"])))
        moment = add(mul(c["momentum"], s["momentum"]), step)
        s["momentum"].set_value(moment)
        p.set_value(sub(p, moment))
