"""``paddle.amp.GradScaler`` as Paddle 3.3.1 runs it on the CPU.

Paddle enables loss scaling on CUDA, XPU and custom devices only; on the CPU a
scaler warns, when made, that it makes no effect, and is disabled: ``scale`` returns
the loss as it is, ``step`` and ``minimize`` are the optimizer's, ``unscale_`` and
``update`` do nothing and ``state_dict`` is empty. Dynamic loss scaling (skipping
steps whose gradients are not finite) therefore never runs there, so irflow, which
runs on the CPU, has none: a script written for it computes what Paddle computes on
a CPU, a step with NaN gradients included.
"""
from __future__ import annotations

import warnings

from ..device import CPUPlace

__all__ = ["AmpScaler", "GradScaler"]


class AmpScaler:
    """Loss scaling for mixed-precision training, disabled on the CPU (see the
    module): `init_loss_scaling` and `use_dynamic_loss_scaling` change nothing. The
    other settings are kept and returned by the getters, which on Paddle's CPU build
    raise AttributeError instead."""

    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 15,
                 incr_ratio: float = 2.0, decr_ratio: float = 0.5,
                 incr_every_n_steps: int = 1000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True) -> None:
        self._setup(enable, incr_ratio, decr_ratio, incr_every_n_steps,
                    decr_every_n_nan_or_inf)

    def _setup(self, enable: bool, incr_ratio: float, decr_ratio: float,
               incr_every_n_steps: int, decr_every_n_nan_or_inf: int) -> None:
        """What each class's ``__init__`` does with its defaults: called from there, so
        that the warning names the user's line."""
        if enable:
            warnings.warn(f"{type(self).__name__} makes no effect on {CPUPlace()!r}, where "
                          "irflow runs: as in Paddle, loss scaling is enabled on CUDA, XPU "
                          "and custom devices only, so losses are not scaled and every "
                          "step is taken", UserWarning, stacklevel=3)
        self._init_loss_scaling = 1.0
        self._incr_ratio, self._decr_ratio = incr_ratio, decr_ratio
        self._incr_every_n_steps = incr_every_n_steps
        self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf

    def scale(self, var):
        """The loss multiplied by the scale factor; `var` itself, as the scaler is
        disabled."""
        return var

    def minimize(self, optimizer, *args, **kwargs):
        """``optimizer.minimize(*args, **kwargs)``: a disabled scaler takes every step."""
        return optimizer.minimize(*args, **kwargs)

    def step(self, optimizer) -> None:
        """``optimizer.step()``: a disabled scaler takes every step."""
        optimizer.step()

    def update(self) -> None:
        """Adjust the scale factor after a step: nothing to adjust when disabled."""

    def unscale_(self, optimizer) -> None:
        """Divide the gradients by the scale factor: they were never scaled."""

    def is_enable(self) -> bool:
        return False

    def is_use_dynamic_loss_scaling(self) -> bool:
        return False

    def get_init_loss_scaling(self) -> float:
        """1.0, the factor of a disabled scaler, until `set_init_loss_scaling`."""
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling: float) -> None:
        """Record a new initial factor (as Paddle does; `scale` still returns the loss
        as it is)."""
        self._init_loss_scaling = new_init_loss_scaling

    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio: float) -> None:
        if not new_incr_ratio > 1.0:
            raise ValueError(f"incr_ratio must be > 1.0, got {new_incr_ratio}")
        self._incr_ratio = new_incr_ratio

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio: float) -> None:
        if not new_decr_ratio < 1.0:
            raise ValueError(f"decr_ratio must be < 1.0, got {new_decr_ratio}")
        self._decr_ratio = new_decr_ratio

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps: int) -> None:
        self._incr_every_n_steps = new_incr_every_n_steps

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf: int) -> None:
        self._decr_every_n_nan_or_inf = new_decr_every_n_nan_or_inf

    def state_dict(self) -> dict:
        """The scaler's state: empty for a disabled scaler, as in Paddle."""
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state: a disabled scaler ignores it, as in Paddle (whose GPU scaler
        state, saved elsewhere, loads here without error)."""


class GradScaler(AmpScaler):
    """``paddle.amp.GradScaler``: `AmpScaler` with Paddle's defaults for it (an initial
    factor of 2**16, increased every 2000 finite steps), disabled on the CPU."""

    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 16,
                 incr_ratio: float = 2.0, decr_ratio: float = 0.5,
                 incr_every_n_steps: int = 2000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True) -> None:
        self._setup(enable, incr_ratio, decr_ratio, incr_every_n_steps,
                    decr_every_n_nan_or_inf)
