"""Adadelta: steps scaled by the ratio of running RMS of updates and of gradients."""
from __future__ import annotations

import numpy as np

from ._ops import add, div, mul, neg, sqrt
from .optimizer import Optimizer, filled

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Paddle's ``paddle.optimizer.Adadelta``, with the accumulators
    ``_avg_squared_grad`` and ``_avg_squared_update``::

        avg_squared_grad   = rho * avg_squared_grad + (1 - rho) * grad * grad
        update             = -sqrt((avg_squared_update + epsilon)
                                   / (avg_squared_grad + epsilon)) * grad
        avg_squared_update = rho * avg_squared_update + (1 - rho) * update * update
        param              = param + lr * update

    Parameter groups may set ``epsilon`` and ``rho``."""

    def __init__(self, learning_rate=0.001, epsilon: float = 1.0e-6, rho: float = 0.95,
                 parameters=None, weight_decay=None, grad_clip=None, name: str | None = None):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if epsilon is None:
            raise ValueError("epsilon is not set")
        if rho is None:
            raise ValueError("rho is not set")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={"epsilon": float(epsilon), "rho": float(rho)})

    def _accumulators(self, param, options):
        zeros = filled(param, 0)
        return [("_avg_squared_grad", zeros), ("_avg_squared_update", zeros)]

    def _constants(self, options, dtype):
        rho = np.asarray(options["rho"], dtype)
        return {"rho": rho, "1-rho": np.ones((), dtype) - rho, "epsilon": options["epsilon"]}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        sq_grad = add(mul(c["rho"], s["_avg_squared_grad"]), mul(mul(c["1-rho"], grad), grad))
        ratio = div(add(s["_avg_squared_update"], c["epsilon"]), add(sq_grad, c["epsilon"]))
        update = neg(mul(sqrt(ratio), grad))
        sq_update = add(mul(c["rho"], s["_avg_squared_update"]),
                        mul(mul(c["1-rho"], update), update))
        s["_avg_squared_grad"].set_value(sq_grad)
        s["_avg_squared_update"].set_value(sq_update)
        p.set_value(add(p, mul(slot.lr, update)))
