"""Stochastic gradient descent: ``param = param - lr * grad``."""
from __future__ import annotations

from ._ops import mul, sub
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """Paddle's ``paddle.optimizer.SGD``. A float `weight_decay` adds
    ``weight_decay * param`` to the gradient (L2 decay). With `multi_precision` a
    float16 parameter is updated on a float32 master weight (see `Optimizer`)."""

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None,
                 grad_clip=None, multi_precision: bool = False, name: str | None = None):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         multi_precision=multi_precision)

    def _update(self, slot, grad) -> None:
        p = slot.target
        p.set_value(sub(p, mul(slot.lr, grad)))
