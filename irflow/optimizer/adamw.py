"""AdamW: Adam with decoupled weight decay."""
from __future__ import annotations

from typing import Callable

from ._ops import mul, sub
from .adam import Adam, adam_hyperparameters
from .optimizer import Optimizer, _is_number, as_regularizer

__all__ = ["AdamW"]


class AdamW(Adam):
    """Paddle's ``paddle.optimizer.AdamW``: before the Adam update (see `Adam`), each
    parameter decays as ``param = param - lr * weight_decay * param``, with the plain
    (not bias-corrected) learning rate.

    `weight_decay` (default 0.01) is this decoupled coefficient, per group if groups
    set it; `apply_decay_param_fun(name)` returning False exempts a parameter from it.
    `lr_ratio(param)` scales a parameter's whole learning rate (Paddle implements it on
    GPU only). Both are evaluated once, when the optimizer is built. A parameter's own
    regularizer (``param.regularizer``) still adds its term to the gradient, as in
    Paddle. A float16 parameter is updated as by `Adam` (float32 state), unless
    `use_lowprecision_moment` keeps its moments in float16; `lazy_mode` has no effect."""

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters=None, weight_decay: float = 0.01,
                 use_lowprecision_moment: bool = False,
                 lr_ratio: Callable | None = None,
                 apply_decay_param_fun: Callable[[str], bool] | None = None,
                 grad_clip=None, lazy_mode: bool = False, multi_precision: bool = False,
                 amsgrad: bool = False, name: str | None = None):
        hyper = adam_hyperparameters(beta1, beta2, epsilon)
        if hasattr(weight_decay, "item"):
            weight_decay = weight_decay.item()
        if not _is_number(weight_decay):
            raise TypeError(f"weight_decay must be a float, not {type(weight_decay).__name__}")
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("lr_ratio must be a function of the parameter")
        self._amsgrad = bool(amsgrad)
        self._apply_decay_param_fun = apply_decay_param_fun
        self._lr_ratio_fun = lr_ratio
        self._float32_moments = not use_lowprecision_moment
        Optimizer.__init__(self, learning_rate, parameters, None, grad_clip, name,
                           defaults={**hyper, "lazy_mode": bool(lazy_mode),
                                     "weight_decay": float(weight_decay)},
                           multi_precision=multi_precision)

    def _lr_ratio(self, param) -> float:
        return 1.0 if self._lr_ratio_fun is None else float(self._lr_ratio_fun(param))

    def _slot_options(self, param, options: dict) -> dict:
        exempt = self._apply_decay_param_fun is not None and \
            not self._apply_decay_param_fun(param.name)
        return {**options, "weight_decay": 0.0} if exempt else options

    def _regularizer(self, param, options, in_group):
        return as_regularizer(getattr(param, "regularizer", None))

    def _constants(self, options, dtype):
        return {**super()._constants(options, dtype), "weight_decay": options["weight_decay"]}

    def _update(self, slot, grad) -> None:
        if slot.options["weight_decay"] != 0.0:
            p, c = slot.target, slot.consts
            p.set_value(sub(p, mul(mul(slot.lr, c["weight_decay"]), p)))
        super()._update(slot, grad)
