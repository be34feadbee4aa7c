"""Momentum SGD, optionally Nesterov's."""
from __future__ import annotations

from ._ops import add, mul, sub
from .optimizer import Optimizer, as_regularizer, filled
from .regularizer import L2Decay, WeightDecayRegularizer

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
    With `multi_precision` a float16 parameter is updated on a float32 master weight
    (see `Optimizer`); `use_multi_tensor` is accepted for compatibility.

    In a parameter group, Paddle applies an L2 ``weight_decay`` (or a float) in its
    kernel and any other regularizer on the gradient, where a parameter without one
    gets the optimizer's regularizer unless that is L2 decay (see `_regularizer`)."""

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
                                   "rescale_grad": float(rescale_grad)},
                         multi_precision=multi_precision)

    def _accumulators(self, param, options):
        return [("velocity", filled(param, 0))]

    def _constants(self, options, dtype):
        return {"momentum": options["momentum"], "rescale_grad": options["rescale_grad"]}

    def _regularizer(self, param, options, in_group):
        """As Paddle's Momentum: a group's L1 decay applies alone; a group's L2 decay
        (or float) applies together with the optimizer's L1 decay; a group without
        decay (None) gets the optimizer's L1 decay but not its L2 decay."""
        if not in_group:
            return super()._regularizer(param, options, in_group)
        decay = options.get("weight_decay")
        if isinstance(decay, WeightDecayRegularizer) and not isinstance(decay, L2Decay):
            return decay
        fallback = None if isinstance(self.regularization, L2Decay) else self.regularization
        kernel = as_regularizer(decay)  # the group's L2 decay (Paddle's kernel applies it)
        if fallback is None or kernel is None:
            return kernel if fallback is None else fallback
        return _Decays(fallback, kernel)

    def _regularized(self, slot, grad):
        if slot.options["rescale_grad"] != 1.0:
            grad = mul(grad, slot.consts["rescale_grad"])
        return super()._regularized(slot, grad)

    def _update(self, slot, grad) -> None:
        p, velocity, mu = slot.target, slot.state["velocity"], slot.consts["momentum"]
        v = add(mul(velocity, mu), grad)
        velocity.set_value(v)
        if slot.options["use_nesterov"]:
            p.set_value(sub(p, mul(add(grad, mul(v, mu)), slot.lr)))
        else:
            p.set_value(sub(p, mul(slot.lr, v)))


class _Decays(WeightDecayRegularizer):
    """Two regularizers at once: the optimizer's L1 decay that Paddle's Momentum adds
    to the gradient and a group's L2 decay that its kernel adds."""

    def __init__(self, first: WeightDecayRegularizer, second: WeightDecayRegularizer):
        super().__init__()
        self._parts = (first, second)

    def __call__(self, param, grad=None, block=None):
        first, second = self._parts
        return add(first(param, grad), second(param, grad))
