"""ASGD: steps along the average of the last `batch_num` gradients (SAG)."""
from __future__ import annotations

import numbers

import numpy as np

from ..tensor.convert import cast
from ._ops import add, constant, div, minimum, mod, mul, reshape, row, shaped_like, sub, \
    with_row
from .optimizer import Optimizer, filled

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Paddle's ``paddle.optimizer.ASGD``: the stochastic average gradient, which
    keeps the last gradient of each of `batch_num` batches. With the accumulators
    ``d`` (their sum), ``y`` (the gradients, shape ``[batch_num, *param.shape]``) and
    ``m`` (the number of updates, int64 of shape [1])::

        i     = m % batch_num
        d     = d - y[i] + grad
        y[i]  = grad
        m     = m + 1
        param = param - lr / min(m, batch_num) * d

    `batch_num` applies to every parameter group; with `multi_precision` a float16
    parameter is updated on a float32 master weight (see `Optimizer`)."""

    def __init__(self, learning_rate=0.001, batch_num: int = 1, parameters=None,
                 weight_decay=None, grad_clip=None, multi_precision: bool = False,
                 name: str | None = None):
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if isinstance(batch_num, bool) or not isinstance(batch_num, numbers.Integral):
            raise TypeError(f"batch_num must be an int, not {type(batch_num).__name__}")
        if batch_num <= 0:
            raise ValueError(f"invalid batch_num {batch_num}: expected a value > 0")
        self._batch_num = int(batch_num)
        # int64 constants of the update's counting, shared by every parameter
        self._one_step = constant(1, np.int64)
        self._batches = constant(self._batch_num, np.int64)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         multi_precision=multi_precision)

    def _accumulators(self, param, options):
        return [("d", filled(param, 0)),
                ("y", filled(param, 0, shape=[self._batch_num, *param._value.shape])),
                ("m", filled(param, 0, shape=[1], dtype=np.int64))]

    def _update(self, slot, grad) -> None:
        s, p = slot.state, slot.target
        index = reshape(mod(s["m"], self._batches), [])
        d = add(sub(s["d"], row(s["y"], index)), grad)
        m = add(s["m"], self._one_step)
        count = cast(minimum(m, self._batches), slot.dtype)
        s["d"].set_value(d)
        s["y"].set_value(with_row(s["y"], index, grad))
        s["m"].set_value(m)
        p.set_value(shaped_like(sub(p, mul(div(slot.lr, count), d)), p))
