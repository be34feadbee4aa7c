"""Learning-rate schedulers: Paddle's ``paddle.optimizer.lr``.

A scheduler is a host-side object: ``step()`` advances ``last_epoch`` and computes
``last_lr`` in Python floats, with the same formulas (including Paddle's recursive
form of cosine annealing) and the same ``state_dict`` keys as Paddle.

Optimizers never read a scheduler inside the computation they run: each keeps the
rate in persistable 0-d tensors (see `irflow.optimizer.Optimizer`). A scheduler
therefore tells the optimizers bound to it whenever ``last_lr`` changes, so those
tensors stay current even when ``step()`` runs as a compiled program that does not
re-execute the optimizer's Python code.
"""
from __future__ import annotations

import math
import weakref
from typing import Sequence

from ..tensor.tensor import Tensor

__all__ = ["LRScheduler", "StepDecay", "MultiStepDecay", "ExponentialDecay",
           "CosineAnnealingDecay", "LinearWarmup"]


class LRScheduler:
    """The base class: subclasses define `get_lr()` from ``base_lr``, ``last_epoch``
    (and ``last_lr``). Calling the scheduler returns the current rate."""

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (float, int)):
            raise TypeError(f"the learning rate must be a float, not "
                            f"{type(learning_rate).__name__}")
        if learning_rate < 0:
            raise ValueError(f"invalid learning rate {learning_rate}: it must be >= 0")
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self.step()

    @property
    def last_lr(self) -> float:
        return self._last_lr

    @last_lr.setter
    def last_lr(self, value: float) -> None:
        self._last_lr = value
        for optimizer in self.__dict__.get("_optimizers", ()):
            optimizer._refresh_lr()

    def _bind(self, optimizer) -> None:
        """Refresh `optimizer`'s learning-rate tensors whenever ``last_lr`` changes."""
        self.__dict__.setdefault("_optimizers", weakref.WeakSet()).add(optimizer)

    def _unbind(self, optimizer) -> None:
        self.__dict__.get("_optimizers", weakref.WeakSet()).discard(optimizer)

    def __call__(self) -> float:
        return self.last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and update ``last_lr``."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed_form() if closed_form is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")

    def get_lr(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def state_keys(self) -> None:
        """Set ``self.keys``: the attributes `state_dict` saves."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict:
        self.state_keys()
        state = {}
        for key in self.keys:
            if hasattr(self, key):
                value = getattr(self, key)
                state[key] = float(value) if isinstance(value, Tensor) else value
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        self.state_keys()
        for key in self.keys:
            if key not in state_dict:
                raise RuntimeError(f"the scheduler's state dict has no '{key}'; was it "
                                   f"saved from a different scheduler?")
            setattr(self, key, state_dict[key])

    set_dict = set_state_dict


def _check_gamma(gamma: float) -> None:
    if gamma >= 1.0:
        raise ValueError(f"gamma should be < 1.0, got {gamma}")


class StepDecay(LRScheduler):
    """``base_lr * gamma ** (last_epoch // step_size)``."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int):
            raise TypeError(f"step_size must be an int, not {type(step_size).__name__}")
        if step_size <= 0:
            raise ValueError(f"step_size must be a positive integer, got {step_size}")
        _check_gamma(gamma)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** (self.last_epoch // self.step_size))


class MultiStepDecay(LRScheduler):
    """``base_lr * gamma ** (number of milestones <= last_epoch)``."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(milestones, (tuple, list)):
            raise TypeError(f"milestones must be a list or tuple, not "
                            f"{type(milestones).__name__}")
        if any(a >= b for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"milestones must be increasing, got {list(milestones)}")
        _check_gamma(gamma)
        self.milestones = milestones
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        passed = sum(1 for m in self.milestones if self.last_epoch >= m)
        return self.base_lr * (self.gamma ** passed)


class ExponentialDecay(LRScheduler):
    """``base_lr * gamma ** last_epoch``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not 0.0 < gamma < 1.0:
            raise ValueError(f"gamma must be in (0, 1) so that the rate decays, got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** self.last_epoch)


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_max`` epochs (and back,
    periodically). `step()` uses Paddle's recursive form, which depends on
    ``last_lr``; ``step(epoch)`` uses the closed form
    ``eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, int):
            raise TypeError(f"T_max must be an int, not {type(T_max).__name__}")
        if T_max <= 0:
            raise ValueError(f"T_max must be a positive integer, got {T_max}")
        if isinstance(eta_min, bool) or not isinstance(eta_min, (float, int)):
            raise TypeError(f"eta_min must be a float, not {type(eta_min).__name__}")
        self.T_max = T_max
        self.eta_min = float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return (self.last_lr + (self.base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2)
        return ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def _get_closed_form_lr(self) -> float:
        return (self.eta_min + (self.base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2)


class LinearWarmup(LRScheduler):
    """Rise linearly from `start_lr` to `end_lr` over `warmup_steps` epochs, then follow
    `learning_rate`: a constant, or a scheduler stepped to ``last_epoch - warmup_steps``."""

    def __init__(self, learning_rate: float | LRScheduler, warmup_steps: int,
                 start_lr: float, end_lr: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if isinstance(learning_rate, bool) or \
                not isinstance(learning_rate, (float, int, LRScheduler)):
            raise TypeError(f"learning_rate must be a float or an LRScheduler, not "
                            f"{type(learning_rate).__name__}")
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) \
                or warmup_steps <= 0:
            raise ValueError(f"warmup_steps must be a positive integer, got {warmup_steps!r}")
        if not end_lr > start_lr:
            raise ValueError(f"end_lr ({end_lr}) must be greater than start_lr ({start_lr})")
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.start_lr = start_lr
        self.end_lr = end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            return ((self.end_lr - self.start_lr) * float(self.last_epoch)
                    / float(self.warmup_steps) + self.start_lr)
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return self.learning_rate

    def state_dict(self) -> dict:
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        super().set_state_dict(state_dict)
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(state_dict["LinearWarmup_LR"])
