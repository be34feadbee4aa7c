"""Gradient clipping: Paddle's ``paddle.nn.ClipGradByValue``, ``ClipGradByNorm`` and
``ClipGradByGlobalNorm``, passed to an optimizer as ``grad_clip``.

A clip maps a list of ``(param, grad)`` pairs to a new list with clipped gradients
(``param.grad`` itself is left alone, as in Paddle). Parameters with
``need_clip=False`` keep their gradient and take no part in a global norm.

Clipping by a norm is written without a branch on the norm's value:
``grad * (clip_norm / maximum(norm, clip_norm))`` equals Paddle's "scale only when
the norm exceeds clip_norm" exactly (the factor is exactly 1 otherwise), and a
traced training step stays one straight-line program.
"""
from __future__ import annotations

from ..tensor.convert import cast
from ..tensor.math import add, clip, divide, maximum, multiply, sqrt
from ..tensor.math import sum as reduce_sum

__all__ = ["ClipGradBase", "GradientClipBase", "ClipGradByValue", "ClipGradByNorm",
           "ClipGradByGlobalNorm"]


class ClipGradBase:
    """The base class of gradient clips: subclasses define `_clip`."""

    def __call__(self, params_grads: list) -> list:
        return self._clip([(p, g) for p, g in params_grads if g is not None])

    def _clip(self, params_grads: list) -> list:
        raise NotImplementedError


GradientClipBase = ClipGradBase


def _needs_clip(param) -> bool:
    return getattr(param, "need_clip", True)


def _squared_norm(grad):
    return reduce_sum(multiply(grad, grad))


class ClipGradByValue(ClipGradBase):
    """Clip every gradient element into ``[min, max]`` (`min` defaults to ``-max``)."""

    def __init__(self, max: float, min: float | None = None) -> None:  # noqa: A002
        if min is None:
            if not max > 0.0:
                raise ValueError(f"max must be positive when min is not given, got {max}")
            min = -max  # noqa: A001
        self.max = float(max)
        self.min = float(min)

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"

    def _clip(self, params_grads: list) -> list:
        return [(p, clip(g, self.min, self.max) if _needs_clip(p) else g)
                for p, g in params_grads]


class ClipGradByNorm(ClipGradBase):
    """Scale each gradient whose L2 norm exceeds `clip_norm` down to that norm."""

    def __init__(self, clip_norm: float) -> None:
        self.clip_norm = float(clip_norm)

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"

    def _clip(self, params_grads: list) -> list:
        return [(p, self._scaled(g) if _needs_clip(p) else g) for p, g in params_grads]

    def _scaled(self, grad):
        norm = sqrt(_squared_norm(grad))
        return multiply(grad, divide(self.clip_norm, maximum(norm, self.clip_norm)))


class ClipGradByGlobalNorm(ClipGradBase):
    """Scale all gradients by ``clip_norm / max(global_norm, clip_norm)``, where the
    global norm is the L2 norm of all clipped gradients together (summed in float64
    if any gradient is float64, as Paddle does). `auto_skip_clip` is accepted for
    compatibility: skipping the scaling when the norm is small gives the same values
    as scaling by exactly 1."""

    def __init__(self, clip_norm: float, group_name: str = "default_group",
                 auto_skip_clip: bool = False) -> None:
        if not isinstance(auto_skip_clip, bool):
            raise TypeError("auto_skip_clip must be a bool")
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def _clip(self, params_grads: list) -> list:
        squares = [_squared_norm(g) for p, g in params_grads if _needs_clip(p)]
        if not squares:
            return params_grads
        wide = max((s.dtype for s in squares), key=lambda d: d.np.itemsize)
        total = squares[0] if squares[0].dtype is wide else cast(squares[0], wide)
        for s in squares[1:]:
            total = add(total, s if s.dtype is wide else cast(s, wide))
        scale = divide(self.clip_norm, maximum(sqrt(total), self.clip_norm))
        scales = {wide: scale}
        clipped = []
        for p, g in params_grads:
            if _needs_clip(p):
                if g.dtype not in scales:
                    scales[g.dtype] = cast(scale, g.dtype)
                g = multiply(g, scales[g.dtype])
            clipped.append((p, g))
        return clipped
