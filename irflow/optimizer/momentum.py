"""Momentum SGD, optionally Nesterov's."""
from __future__ import annotations

from ._ops import add, mul, sub
from .optimizer import Optimizer, filled

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """Paddle's ``paddle.optimizer.Momentum``::

        grad     = grad * rescale_grad + regularization term
        velocity = momentum * velocity + grad
        param    = param - lr * velocity                      (use_nesterov=False)
        param    = param - lr * (grad + momentum * velocity)  (use_nesterov=True)

    with the accumulator ``velocity``. Parameter groups may set ``momentum``,
    ``use_nesterov`` and ``rescale_grad``. `rescale_grad` is applied as documented
    (Paddle's CPU kernel ignores it; its GPU kernel applies it as here).
    `multi_precision` and `use_multi_tensor` are accepted for compatibility."""

    def __init__(self, learning_rate=0.001, momentum: float = 0.9, parameters=None,
                 use_nesterov: bool = False, weight_decay=None, grad_clip=None,
                 multi_precision: bool = False, rescale_grad: float = 1.0,
                 use_multi_tensor: bool = False, name: str | None = None):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if momentum is None:
            raise ValueError("momentum is not set")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         defaults={"momentum": float(momentum),
                                   "use_nesterov": bool(use_nesterov),
                                   "rescale_grad": float(rescale_grad)})

    def _accumulators(self, param, options):
        return [("velocity", filled(param, 0))]

    def _constants(self, options, dtype):
        return {"momentum": options["momentum"], "rescale_grad": options["rescale_grad"]}

    def _regularized(self, slot, grad):
        if slot.options["rescale_grad"] != 1.0:
            grad = mul(grad, slot.consts["rescale_grad"])
        return super()._regularized(slot, grad)

    def _update(self, slot, grad) -> None:
        p, velocity, mu = slot.param, slot.state["velocity"], slot.consts["momentum"]
        v = add(mul(velocity, mu), grad)
        velocity.set_value(v)
        if slot.options["use_nesterov"]:
            p.set_value(sub(p, mul(add(grad, mul(v, mu)), slot.lr)))
        else:
            p.set_value(sub(p, mul(slot.lr, v)))
