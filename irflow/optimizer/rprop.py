"""Rprop: per-element step sizes that grow while a gradient keeps its sign."""
from __future__ import annotations

from ._ops import gt, lt, maximum, minimum, mul, select, sign, sub
from .optimizer import Optimizer, _is_number, filled

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Paddle's ``paddle.optimizer.Rprop``, for full-batch training. With the
    accumulators ``prevs`` (the last gradient used) and ``learning_rates`` (a step
    size per element, starting at `learning_rate`)::

        product        = grad * prevs
        eta            = etas[1] where product > 0, etas[0] where product < 0, else 1
        grad           = 0 where product < 0
        learning_rates = clip(learning_rates * eta, *learning_rate_range)
        param          = param - sign(grad) * learning_rates
        prevs          = grad

    The step sizes alone set the steps, so `learning_rate` is a float (no scheduler,
    no per-group rate), as in Paddle. `learning_rate_range` and `etas` apply to every
    parameter group; with `multi_precision` a float16 parameter is updated on a float32
    master weight (see `Optimizer`)."""

    def __init__(self, learning_rate: float = 0.001,
                 learning_rate_range: tuple[float, float] = (1e-5, 50), parameters=None,
                 etas: tuple[float, float] = (0.5, 1.2), grad_clip=None,
                 multi_precision: bool = False, name: str | None = None):
        if not _is_number(learning_rate):
            raise TypeError(f"Rprop's learning_rate must be a float (the initial step "
                            f"size), not {type(learning_rate).__name__}")
        low, high = (float(v) for v in learning_rate_range)
        if not 0.0 < low <= learning_rate <= high:
            raise ValueError(f"invalid learning_rate {learning_rate} or learning_rate_range "
                             f"{tuple(learning_rate_range)}: expected 0 < "
                             f"learning_rate_range[0] <= learning_rate <= "
                             f"learning_rate_range[1]")
        decrease, increase = (float(v) for v in etas)
        if not 0.0 < decrease < 1.0 < increase:
            raise ValueError(f"invalid etas {tuple(etas)}: expected 0 < etas[0] < 1 < etas[1]")
        self._initial_learning_rate = float(learning_rate)
        self._rprop_constants = {"lr_min": low, "lr_max": high, "eta-": decrease,
                                 "eta+": increase}
        super().__init__(learning_rate, parameters, None, grad_clip, name,
                         multi_precision=multi_precision)

    def _accumulators(self, param, options):
        return [("prevs", filled(param, 0)),
                ("learning_rates", filled(param, self._initial_learning_rate))]

    def _constants(self, options, dtype):
        return {"zero": 0.0, "one": 1.0, **self._rprop_constants}

    def _update(self, slot, grad) -> None:
        c, s, p = slot.consts, slot.state, slot.target
        product = mul(grad, s["prevs"])
        flipped = lt(product, c["zero"])
        eta = select(gt(product, c["zero"]), c["eta+"], select(flipped, c["eta-"], c["one"]))
        grad = select(flipped, c["zero"], grad)
        rates = minimum(maximum(mul(s["learning_rates"], eta), c["lr_min"]), c["lr_max"])
        s["learning_rates"].set_value(rates)
        s["prevs"].set_value(grad)
        p.set_value(sub(p, mul(sign(grad), rates)))
