"""Learning-rate schedulers: Paddle's ``paddle.optimizer.lr``.

A scheduler is a host-side object: ``step()`` advances ``last_epoch`` and computes
``last_lr`` in Python floats, with the same formulas (including Paddle's recursive
form of cosine annealing) and the same ``state_dict`` keys as Paddle.

Optimizers never read a scheduler inside the computation they run: each keeps the
rate in persistable 0-d tensors (see `irflow.optimizer.Optimizer`). A scheduler
therefore tells the optimizers bound to it whenever ``last_lr`` changes, so those
tensors stay current even when ``step()`` runs as a compiled program that does not
re-execute the optimizer's Python code.

A scheduler's ``step()`` inside compiled code (``loss.backward(); opt.step();
sched.step()`` as one compiled training step) is host arithmetic, which tracing
would run only once. So the trace does not run it: it records it
(`on_host_each_run`), and every run of the program makes the step eagerly, after its
plan, or before it when the step came before the program read the rate
(``sched.step(); opt.step()``). An optimizer's ``set_lr`` there is recorded alike.
The rate each run reads, and the scheduler's state after it, are those of eager
code, with Python's own arithmetic. ``ReduceOnPlateau.step(loss)`` with a loss the
program computes is an error there: the loss's value exists only after the run.
"""
from __future__ import annotations

import math
import weakref
from typing import Sequence

import numpy as np

from ..context import current_static, current_tracer
from ..dispatch import user_location
from ..errors import ConversionError
from ..tensor.tensor import Tensor

__all__ = ["LRScheduler", "StepDecay", "MultiStepDecay", "ExponentialDecay",
           "CosineAnnealingDecay", "LinearWarmup", "PiecewiseDecay", "NaturalExpDecay",
           "InverseTimeDecay", "PolynomialDecay", "LambdaDecay", "MultiplicativeDecay",
           "NoamDecay", "OneCycleLR", "ReduceOnPlateau", "CyclicLR", "LinearLR",
           "CosineAnnealingWarmRestarts"]


def on_host_each_run(owner, call, what: str = "step()", optimizers=None) -> bool:
    """Inside compiled code, record `call` (a scheduler's step, or an optimizer's
    ``set_lr``, as eager code would make it) for each run of the program to make
    (`Tracer.on_host`) and return True; outside, or in static-graph mode (whose tracer
    is active for the whole thread, and whose programs read the rate at each
    ``Executor.run``), return False: the caller makes the call now. The call runs
    before the program's plan unless one of `optimizers` (default: those the scheduler
    `owner` drives) has read its rate in the program already (``opt.step()`` came
    first); `owner` may not change the rate between their updates."""
    tracer = current_tracer()
    if tracer is None or current_static() is not None:
        return False
    name = f"{host_label(owner)}.{what}"
    if optimizers is None:
        optimizers = owner.__dict__.get("_optimizers", ())
    read = {tracer.reads_state(t) for optimizer in optimizers
            for t in optimizer._lr_tensors.values()}
    if len(read) > 1:
        raise ConversionError(f"{name} inside a compiled function between the updates of "
                              f"the parameters whose rate it sets: the program reads each "
                              f"rate once per run; call it before or after all of them",
                              user_location())
    tracer.on_host(owner, call, before=read != {True}, what=name)
    return True


def host_label(owner) -> str:
    """How messages name `owner`, an object compiled code changes on the host: its
    class, or the label it gives (an optimizer's `_ConstantRate` names the optimizer)."""
    return getattr(owner, "host_label", None) or type(owner).__name__


def check_rate_current(owner, what: str = "step()") -> None:
    """An optimizer's update inside compiled code reads the rate `owner` (its
    scheduler, or the optimizer itself for ``set_lr``) gives: an error if the program
    changes that rate after its plan (`on_host_each_run`), since this update, which
    came after the change, would read the rate from before it."""
    tracer = current_tracer()
    if tracer is not None and current_static() is None and tracer.runs_after(owner):
        raise ConversionError(f"an optimizer step after {host_label(owner)}.{what}, "
                              f"which follows an earlier update, in one compiled function: "
                              f"the program reads the learning rate once per run; change "
                              f"the rate after the last update", user_location())


def note_read(owner, name: str) -> None:
    """Compiled code reads the Python number ``owner.name`` through library code (a
    learning rate: ``opt.get_lr()``, ``sched()``), which the program then holds as a
    constant: make it one of the program's guards, so that a call after the number
    changed traces anew instead of returning the old rate. After a scheduler's step
    or a ``set_lr`` the program makes on each run (`on_host_each_run`), the rate is
    not known when tracing: an error."""
    tracer = current_tracer()
    if tracer is None or current_static() is not None:
        return
    changers = (owner, getattr(owner, "_learning_rate", None),
                getattr(owner, "_constant_rate", None))
    changer = next((o for o, _ in (*tracer.before_run, *tracer.after_run)
                    if any(o is c for c in changers)), None)
    if changer is not None:
        what = "step()" if isinstance(changer, LRScheduler) else "set_lr()"
        raise ConversionError(f"reading the learning rate after {host_label(changer)}"
                              f".{what} in a compiled function: the program makes that "
                              f"change on each run, so the rate after it is known only "
                              f"then; read it after the call", user_location())
    tracer.reads.note("attribute", owner, name)


def _traced(value) -> bool:
    return isinstance(value, Tensor) and value._value is None


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
        self._step()

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
        note_read(self, "_last_lr")
        return self.last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and update ``last_lr``; inside compiled
        code, on every run of the program (see the module's docstring)."""
        if _traced(epoch):
            raise ConversionError(f"{type(self).__name__}.step(epoch) inside a compiled "
                                  f"function takes a Python number, not a tensor the "
                                  f"program computes", user_location())
        if not on_host_each_run(self, lambda: self._step(epoch)):
            self._step(epoch)

    def _step(self, epoch: int | None = None) -> None:
        """`step` as it runs eagerly (construction takes this first step)."""
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
                state[key] = float(value.item()) if isinstance(value, Tensor) else value
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


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (float, int)):
        raise TypeError(f"{name} must be a float, not {type(value).__name__}")
    return float(value)


def _function(name: str, value):
    if not callable(value):
        raise TypeError(f"{name} must be a function of the epoch, not {type(value).__name__}")
    return value


class PiecewiseDecay(LRScheduler):
    """``values[i]`` for the epochs before ``boundaries[i]`` (and before every later
    boundary), ``values[-1]`` from the last boundary on."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float],
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if len(boundaries) == 0:
            raise ValueError("PiecewiseDecay needs at least one boundary")
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseDecay needs one value more than boundaries: got "
                             f"{len(boundaries)} boundaries and {len(values)} values")
        self.boundaries = boundaries
        self.values = values
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for boundary, value in zip(self.boundaries, self.values):
            if self.last_epoch < boundary:
                return value
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``base_lr * exp(-gamma * last_epoch)``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if _number("gamma", gamma) <= 0:
            raise ValueError(f"gamma must be > 0 so that the rate decays, got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``base_lr / (1 + gamma * last_epoch)``."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.gamma = _number("gamma", gamma)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """From ``base_lr`` to `end_lr` along ``(1 - epoch / decay_steps) ** power`` over
    `decay_steps` epochs, then `end_lr`; with `cycle`, ``decay_steps`` grows to the
    next multiple of itself at or above the epoch, so the decay restarts."""

    def __init__(self, learning_rate: float, decay_steps: int, end_lr: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.decay_steps = _positive_int("decay_steps", decay_steps)
        self.end_lr = _number("end_lr", end_lr)
        if _number("power", power) <= 0:
            raise ValueError(f"power must be > 0 so that the rate decays, got {power}")
        self.power = power
        self.cycle = bool(cycle)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, steps = self.last_epoch, self.decay_steps
        if self.cycle:
            steps *= max(1, math.ceil(epoch / steps))
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * (1 - epoch / steps) ** self.power + self.end_lr


class LambdaDecay(LRScheduler):
    """``base_lr * lr_lambda(last_epoch)``."""

    def __init__(self, learning_rate: float, lr_lambda, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.lr_lambda = _function("lr_lambda", lr_lambda)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """``base_lr`` times ``lr_lambda(e)`` for every epoch ``e`` from 1 to ``last_epoch``
    (recomputed from the start each epoch, as Paddle does, so ``step(epoch)`` jumps
    exactly)."""

    def __init__(self, learning_rate: float, lr_lambda, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.lr_lambda = _function("lr_lambda", lr_lambda)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        lr = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            lr = lr * self.lr_lambda(epoch)
        return lr


class NoamDecay(LRScheduler):
    """The Transformer's schedule: ``base_lr * d_model ** -0.5 * min(epoch ** -0.5,
    epoch * warmup_steps ** -1.5)`` (the first factor is 1 at epoch 0)."""

    def __init__(self, d_model: int, warmup_steps: int, learning_rate: float = 1.0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if d_model <= 0:
            raise ValueError(f"d_model must be > 0, got {d_model}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        decay = 1 if self.last_epoch == 0 else self.last_epoch ** -0.5
        warmup = self.warmup_steps ** -1.5 * self.last_epoch
        return self.base_lr * self.d_model ** -0.5 * min(decay, warmup)


class OneCycleLR(LRScheduler):
    """The one-cycle policy over `total_steps` steps: from ``max_learning_rate /
    divide_factor`` up to `max_learning_rate` during the first `phase_pct` of the
    steps, then down to `end_learning_rate` (with `three_phase`: down to the initial
    rate over as many steps, then to `end_learning_rate`). Each phase anneals by
    cosine or linearly (`anneal_strategy`). Phase boundaries are Paddle's: phase
    ``k`` ends at step ``k * phase_pct * total_steps - k`` and the last at
    ``total_steps - 1``; stepping past `total_steps` raises."""

    def __init__(self, max_learning_rate: float, total_steps: int,
                 divide_factor: float = 25.0, end_learning_rate: float = 0.0001,
                 phase_pct: float = 0.3, anneal_strategy: str = "cos",
                 three_phase: bool = False, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if _number("max_learning_rate", max_learning_rate) < 0:
            raise ValueError(f"max_learning_rate must be >= 0, got {max_learning_rate}")
        if _number("end_learning_rate", end_learning_rate) < 0:
            raise ValueError(f"end_learning_rate must be >= 0, got {end_learning_rate}")
        self.total_steps = _positive_int("total_steps", total_steps)
        if not isinstance(phase_pct, float):
            raise TypeError(f"phase_pct must be a float, not {type(phase_pct).__name__}")
        if not 0 <= phase_pct <= (0.5 if three_phase else 1):
            raise ValueError(f"phase_pct must be in [0, {0.5 if three_phase else 1}]"
                             f"{' with three_phase' if three_phase else ''}, got {phase_pct}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        initial = max_learning_rate / float(_number("divide_factor", divide_factor))
        last = self.total_steps - 1
        if three_phase:
            ends = [phase_pct * total_steps - 1, 2 * phase_pct * total_steps - 2, last]
            rates = [initial, float(max_learning_rate), initial, float(end_learning_rate)]
        else:
            ends = [phase_pct * total_steps - 1, last]
            rates = [initial, float(max_learning_rate), float(end_learning_rate)]
        starts = [0] + ends[:-1]
        # (start step, length, start rate, end rate) of each phase.
        self._phases = [(s, e - s, a, b) for s, e, a, b in zip(starts, ends, rates, rates[1:])]
        self.anneal_strategy = anneal_strategy
        super().__init__(initial, last_epoch, verbose)

    def get_lr(self) -> float:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR was stepped {step} times, past its total_steps "
                             f"({self.total_steps})")
        for i, (start, length, a, b) in enumerate(self._phases):
            if step <= start + length or i == len(self._phases) - 1:
                pct = (step - start) / length
                if self.anneal_strategy == "cos":
                    return b + (a - b) / 2.0 * (math.cos(math.pi * pct) + 1)
                return (b - a) * pct + a
        raise AssertionError("unreachable: the last phase takes every later step")


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by `factor` (not below `min_lr`) when the metric given to
    ``step(metrics)`` has not improved for more than `patience` epochs, then wait
    `cooldown` epochs. Improvement: below ``best * (1 - threshold)`` (mode 'min',
    threshold_mode 'rel'), ``best - threshold`` ('abs'), or above for mode 'max'.
    Changes smaller than `epsilon` are skipped.

    As in Paddle, ``best`` is the metric as given (a Tensor, an array or a number), and
    the test computes in its dtype: a float32 metric's bound is float32 arithmetic, as
    Paddle's Tensor arithmetic makes it, so a metric on the bound decides alike. A
    Tensor is kept detached, so that ``best`` holds no recorded graph alive."""

    def __init__(self, learning_rate: float, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float = 0, epsilon: float = 1e-8,
                 verbose: bool = False) -> None:
        mode, threshold_mode = mode.lower(), threshold_mode.lower()
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        if factor >= 1.0:
            raise ValueError(f"factor must be < 1.0 so that the rate decreases, got {factor}")
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.patience, self.threshold = factor, patience, threshold
        self.cooldown, self.min_lr, self.epsilon = cooldown, min_lr, epsilon
        self.cooldown_counter = 0
        self.best = None
        self.num_bad_epochs = 0
        # Unlike the other schedulers, construction takes no step: there is no metric yet.
        self.base_lr = _number("learning_rate", learning_rate)
        self.last_lr = self.base_lr
        self.last_epoch = 0
        self.verbose = verbose

    def state_keys(self) -> None:
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics, epoch: int | None = None) -> None:
        """Record this epoch's `metrics` (a number, or a one-element Tensor or array);
        inside compiled code, on every run of the program, so `metrics` must not be a
        tensor the program computes (its value exists only after the run)."""
        if _traced(metrics) or _traced(epoch):
            raise ConversionError("ReduceOnPlateau.step(metrics) inside a compiled function "
                                  "needs the metric's value, which the program has only "
                                  "after it ran: return the loss and call step(loss) after "
                                  "each call", user_location())
        if not on_host_each_run(self, lambda: self._record(metrics, epoch), "step(metrics)"):
            self._record(metrics, epoch)

    def _record(self, metrics, epoch: int | None) -> None:
        """`step` as it runs eagerly."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        _check_metric(metrics)
        if isinstance(metrics, Tensor):  # kept as `best` without the graph that made it
            metrics = metrics.detach()
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(metrics, self.best):
            self.best, self.num_bad_epochs = metrics, 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to "
                          f"{self.last_lr}.")

    def _is_better(self, current, best) -> bool:
        """Paddle's test (``current < best - best * threshold`` for 'min' and 'rel'),
        with the bound computed in `best`'s precision and compared in the metric's."""
        current, best = _metric_number(current), _metric_number(best)
        threshold = type(best)(self.threshold) if isinstance(best, np.floating) \
            else self.threshold
        change = best * threshold if self.threshold_mode == "rel" else threshold
        if self.mode == "min":
            current, bound = _compared(current, best - change)
            return bool(current < bound)
        current, bound = _compared(current, best + change)
        return bool(current > bound)


def _check_metric(metrics) -> None:
    """A metric of `ReduceOnPlateau.step` is a number or holds one value."""
    if isinstance(metrics, (Tensor, np.ndarray)):
        if metrics.size != 1:
            raise ValueError(f"ReduceOnPlateau.step takes one metric value; got "
                             f"{metrics.size} values (reduce them first, e.g. with "
                             f"paddle.mean)")
    elif isinstance(metrics, bool) or not isinstance(metrics, (int, float, np.floating)):
        raise TypeError(f"metrics must be a number, a Tensor or a NumPy array, not "
                        f"{type(metrics).__name__}")


def _metric_number(metric):
    """The value of a metric: a NumPy scalar of its dtype for a Tensor or an array, the
    number itself otherwise."""
    if isinstance(metric, Tensor):
        metric = metric.numpy()
    if isinstance(metric, np.ndarray):
        return metric.reshape(())[()]
    return metric


def _compared(a, b) -> tuple:
    """`a` and `b` as Paddle compares a Tensor with a Python number: the number in the
    Tensor's dtype."""
    if isinstance(a, np.floating) and not isinstance(b, np.generic):
        return a, type(a)(b)
    if isinstance(b, np.floating) and not isinstance(a, np.generic):
        return type(b)(a), b
    return a, b


class CyclicLR(LRScheduler):
    """Cycles between `base_learning_rate` and `max_learning_rate`: up over
    `step_size_up` steps, down over `step_size_down` (default: as many). The
    amplitude is scaled per cycle ('triangular': 1; 'triangular2': halved each cycle)
    or per step ('exp_range': ``exp_gamma ** step``), or by `scale_fn` of the cycle
    number or the step (`scale_mode`)."""

    def __init__(self, base_learning_rate: float, max_learning_rate: float,
                 step_size_up: int, step_size_down: int | None = None,
                 mode: str = "triangular", exp_gamma: float = 1.0, scale_fn=None,
                 scale_mode: str = "cycle", last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if _number("max_learning_rate", max_learning_rate) < 0:
            raise ValueError(f"max_learning_rate must be >= 0, got {max_learning_rate}")
        up = _positive_int("step_size_up", step_size_up)
        down = up if step_size_down is None else _positive_int("step_size_down",
                                                                 step_size_down)
        if not isinstance(exp_gamma, float):
            raise TypeError(f"exp_gamma must be a float, not {type(exp_gamma).__name__}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"mode must be 'triangular', 'triangular2' or 'exp_range' "
                             f"(or give scale_fn), got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        self.cycle_size = float(up + down)
        self.step_up_pct = up / self.cycle_size
        self.max_lr = float(max_learning_rate)
        self.amplitude = self.max_lr - base_learning_rate
        self.mode, self.gamma = mode, exp_gamma
        if scale_fn is not None:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "triangular":
            self.scale_fn, self.scale_mode = (lambda x: 1.0), "cycle"
        elif mode == "triangular2":
            self.scale_fn, self.scale_mode = (lambda x: 1 / 2.0 ** (x - 1)), "cycle"
        else:
            self.scale_fn, self.scale_mode = (lambda x: self.gamma ** x), "iterations"
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        step = self.last_epoch
        cycle = 1 + step // self.cycle_size
        pct = 1.0 + step / self.cycle_size - cycle  # position within the cycle, [0, 1)
        if pct <= self.step_up_pct:
            height = pct / self.step_up_pct
        else:
            height = (1 - pct) / (1 - self.step_up_pct)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else step)
        return self.base_lr + self.amplitude * height * scale


class LinearLR(LRScheduler):
    """From ``learning_rate * start_factor`` to ``learning_rate * end_factor``,
    linearly over `total_steps` steps, then constant; each step multiplies the last
    rate (Paddle's recursive form)."""

    def __init__(self, learning_rate: float, total_steps: int, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, last_epoch: int = -1, verbose: bool = False) -> None:
        if not 0 < start_factor <= 1.0:
            raise ValueError(f"start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1.0:
            raise ValueError(f"end_factor must be in [0, 1], got {end_factor}")
        self.total_steps = _positive_int("total_steps", total_steps)
        self.start_factor, self.end_factor = start_factor, end_factor
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr * self.start_factor
        if self.last_epoch > self.total_steps:
            return self.last_lr
        change = self.end_factor - self.start_factor
        start = self.total_steps * self.start_factor
        return self.last_lr * (1.0 + change / (start + (self.last_epoch - 1) * change))


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to `eta_min` over `T_0` epochs, restarting
    at ``base_lr``; each period is `T_mult` times the one before.
    ``step(epoch)`` may jump to any (even fractional) epoch."""

    def __init__(self, learning_rate: float, T_0: int, T_mult: int = 1, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        self.T_0 = self.T_i = _positive_int("T_0", T_0)
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"T_mult must be an integer >= 1, got {T_mult!r}")
        self.T_mult, self.eta_min = T_mult, _number("eta_min", eta_min)
        self.T_cur = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) \
            * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def _step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: CosineAnnealingWarmRestarts set learning rate "
                  f"to {self.last_lr}.")
