"""Weight-decay regularizers: Paddle's ``paddle.regularizer.L1Decay`` and ``L2Decay``.

An optimizer adds a regularizer's term to a parameter's gradient before its update
(a float ``weight_decay`` means ``L2Decay(weight_decay)``); a regularizer set on a
parameter (``param.regularizer``, e.g. through ``ParamAttr``) takes precedence over
the optimizer's.
"""
from __future__ import annotations

from ..tensor.math import multiply, sign

__all__ = ["WeightDecayRegularizer", "L1Decay", "L2Decay"]


class WeightDecayRegularizer:
    """Base class: calling it gives the term added to the gradient of `param`."""

    def __init__(self, coeff: float = 0.0) -> None:
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            raise TypeError(f"the regularization coefficient must be a float, not "
                            f"{type(coeff).__name__}")
        self._coeff = float(coeff)

    def __call__(self, param, grad=None, block=None):
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{type(self).__name__}, coeff={self._coeff:f}"


class L2Decay(WeightDecayRegularizer):
    """Penalty ``coeff / 2 * sum(param ** 2)``: adds ``coeff * param`` to the gradient."""

    def __call__(self, param, grad=None, block=None):
        return multiply(param, self._coeff)


class L1Decay(WeightDecayRegularizer):
    """Penalty ``coeff * sum(|param|)``: adds ``coeff * sign(param)`` to the gradient."""

    def __call__(self, param, grad=None, block=None):
        return multiply(sign(param), self._coeff)
