"""Adagrad: per-element rates shrinking with the sum of squared gradients."""
from __future__ import annotations

from ._ops import add, div, mul, sqrt, sub
from .optimizer import Optimizer, filled

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Paddle's ``paddle.optimizer.Adagrad``, with the accumulator ``moment`` (starting
    at `initial_accumulator_value`)::

        moment = moment + grad * grad
        param  = param - lr * grad / (sqrt(moment) + epsilon)

    Parameter groups may set ``epsilon`` and ``initial_accumulator_value``."""

    def __init__(self, learning_rate, epsilon: float = 1.0e-6, parameters=None,
                 weight_decay=None, grad_clip=None, name: str | None = None,
                 initial_accumulator_value: float = 0.0):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if epsilon is None:
            raise ValueError("epsilon is not set")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={"epsilon": float(epsilon),
                                   "initial_accumulator_value":
                                       float(initial_accumulator_value)})

    def _accumulators(self, param, options):
        return [("moment", filled(param, options["initial_accumulator_value"]))]

    def _constants(self, options, dtype):
        return {"epsilon": options["epsilon"]}

    def _update(self, slot, grad) -> None:
        p, moment = slot.target, slot.state["moment"]
        m = add(moment, mul(grad, grad))
        moment.set_value(m)
        p.set_value(sub(p, div(mul(slot.lr, grad), add(sqrt(m), slot.consts["epsilon"]))))
