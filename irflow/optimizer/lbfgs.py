"""L-BFGS: quasi-Newton steps from a short history of gradient changes, eager only.

Paddle's ``paddle.optimizer.LBFGS`` (itself PyTorch's) step by step: ``step(closure)``
evaluates the loss and gradients through `closure` as many times as its iterations
and line search need, which depends on the values, so it runs eagerly only; traced
(``irflow.compile``, static-graph mode) it raises a `ConversionError`. The search
computes on the parameters flattened into one NumPy vector of their dtype: its
arithmetic is Paddle's, float32 vectors combined with Python floats in float32
(NumPy 2's rules for Python scalars are Paddle's), so its branches decide as
Paddle's do.
"""
from __future__ import annotations

import numpy as np

from ..context import current_tracer
from ..dispatch import enable_grad, no_grad, user_location
from ..errors import ConversionError
from ..tensor.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _dot(x: np.ndarray, y: np.ndarray):
    """A 0-d dot product in the vectors' dtype, as Paddle's LBFGS computes it."""
    return (x * y).sum(axis=-1)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimum of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    within `bounds` (default: between x1 and x2); their middle if the cubic has no
    minimum. (Nocedal and Wright, Numerical Optimization, 2006, formula 3.59.)"""
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(position, low), high)
    return (low + high) / 2.0


class _Point:
    """A step length along the search direction, with the loss, gradient and
    directional derivative there."""

    __slots__ = ("alpha", "loss", "grad", "gtd")

    def __init__(self, alpha, loss, grad, gtd):
        self.alpha, self.loss, self.grad, self.gtd = alpha, loss, grad, gtd


class _StrongWolfe:
    """A line search for a step satisfying the strong Wolfe conditions (Nocedal and
    Wright, Algorithm 3.5): bracket an interval that holds one, then zoom in on it.
    `evaluate(alpha)` gives the loss and the flat gradient at that step length."""

    def __init__(self, evaluate, d: np.ndarray, start: _Point, c1=1e-4, c2=0.9,
                 tolerance_change=1e-9, max_ls=25):
        self.evaluate, self.d, self.start = evaluate, d, start
        self.c1, self.c2, self.tolerance_change, self.max_ls = c1, c2, tolerance_change, max_ls
        self.evaluations = 0

    def point(self, alpha) -> _Point:
        loss, grad = self.evaluate(alpha)
        self.evaluations += 1
        return _Point(alpha, loss, grad, _dot(grad, self.d))

    def sufficient_decrease_fails(self, p: _Point) -> bool:
        start = self.start
        return p.loss > (start.loss + self.c1 * p.alpha * start.gtd)

    def curvature_holds(self, p: _Point) -> bool:
        return abs(p.gtd) <= -self.c2 * self.start.gtd

    def search(self, alpha) -> tuple[_Point, int]:
        """The point found from the initial step length `alpha`, and how many times
        the loss was evaluated."""
        bracket, done, iterations = self._bracket(self.point(alpha))
        found = bracket[0] if done else self._zoom(bracket, iterations)
        return found, self.evaluations

    def _bracket(self, new: _Point) -> tuple[list, bool, int]:
        """An interval holding a point that satisfies the conditions, whether its
        point does already, and the iterations taken."""
        start = self.start
        previous = origin = _Point(0, start.loss, start.grad, start.gtd)
        for iterations in range(self.max_ls):
            if self.sufficient_decrease_fails(new) or (iterations > 1 and
                                                       new.loss >= previous.loss):
                return [previous, new], False, iterations
            if self.curvature_holds(new):
                return [new], True, iterations
            if new.gtd >= 0:
                return [previous, new], False, iterations
            alpha = _cubic_interpolate(previous.alpha, previous.loss, previous.gtd,
                                       new.alpha, new.loss, new.gtd,
                                       bounds=(new.alpha + 0.01 * (new.alpha - previous.alpha),
                                               new.alpha * 10))
            previous, new = new, self.point(alpha)
        return [origin, new], False, self.max_ls

    def _zoom(self, bracket: list, iterations: int) -> _Point:
        """Shrink `bracket` around a point that satisfies the conditions: its lower
        end when done (or out of iterations)."""
        insufficient_progress = False
        low, high = (0, 1) if bracket[0].loss <= bracket[-1].loss else (1, 0)
        d_norm = np.abs(self.d).max()
        while iterations < self.max_ls:
            if abs(bracket[1].alpha - bracket[0].alpha) * d_norm < self.tolerance_change:
                break
            alpha, insufficient_progress = self._trial_step(bracket, insufficient_progress)
            new = self.point(alpha)
            iterations += 1
            if self.sufficient_decrease_fails(new) or new.loss >= bracket[low].loss:
                bracket[high] = new
                low, high = (0, 1) if bracket[0].loss <= bracket[1].loss else (1, 0)
                continue
            done = self.curvature_holds(new)
            if not done and new.gtd * (bracket[high].alpha - bracket[low].alpha) >= 0:
                bracket[high] = bracket[low]  # the old low end becomes the high one
            bracket[low] = new
            if done:
                break
        return bracket[low]

    @staticmethod
    def _trial_step(bracket: list, insufficient_progress: bool):
        """The next step length to try in `bracket`: the cubic's minimum, moved a
        tenth of the interval away from an end it comes too close to twice in a row
        (or reaches)."""
        first, second = bracket
        alpha = _cubic_interpolate(first.alpha, first.loss, first.gtd, second.alpha,
                                   second.loss, second.gtd)
        top = max(first.alpha, second.alpha)
        bottom = min(first.alpha, second.alpha)
        eps = 0.1 * (top - bottom)
        if min(top - alpha, alpha - bottom) >= eps:
            return alpha, False
        if not (insufficient_progress or alpha >= top or alpha <= bottom):
            return alpha, True
        return (top - eps if abs(alpha - top) < abs(alpha - bottom) else bottom + eps), False


class LBFGS(Optimizer):
    """Paddle's ``paddle.optimizer.LBFGS``. ``step(closure)`` runs up to `max_iter`
    iterations (and `max_eval` evaluations of `closure`, which clears the gradients,
    computes the loss, calls ``backward()`` and returns the loss) and returns the
    first loss. Each iteration moves the parameters along the L-BFGS direction
    (the gradient through the inverse-Hessian estimate of the last `history_size`
    steps) by `learning_rate`, or by the step a strong-Wolfe line search finds with
    ``line_search_fn="strong_wolfe"``; it stops early once the gradient, the step or
    the loss's change falls below the tolerances.

    As in Paddle, the update reads the gradients as the closure leaves them:
    `weight_decay` and `grad_clip` are accepted and do not apply, and parameter
    groups give the parameters of the last group. ``state_dict()`` is
    ``{"state": ...}``, the search's history."""

    def __init__(self, learning_rate: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None, parameters=None, weight_decay=None,
                 grad_clip=None, name: str | None = None):
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        self.tolerance_grad, self.tolerance_change = tolerance_grad, tolerance_change
        self.history_size = history_size
        self.line_search_fn = line_search_fn
        self.state: dict = {}
        super().__init__(1.0, parameters, weight_decay, grad_clip, name)
        groups = self._param_groups
        self._params = groups[-1]["params"] if isinstance(groups[0], dict) else groups

    # ------------------------------------------------------------ flat vectors

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p._value.size, p._value.dtype) if p.grad is None
                               else p.grad._value.reshape(-1) for p in self._params])

    def _move(self, alpha, d: np.ndarray) -> None:
        """Add ``alpha * d`` to the parameters, flattened."""
        offset = 0
        for p in self._params:
            size = p._value.size
            p.set_value(Tensor._from_array(
                p._value + d[offset:offset + size].reshape(p._value.shape) * alpha))
            offset += size

    def _evaluate(self, closure) -> tuple[float, np.ndarray]:
        with enable_grad():
            loss = float(closure())
        return loss, self._flat_grad()

    # ------------------------------------------------------------ stepping

    def step(self, closure) -> Tensor:
        """Run the iterations on the loss `closure` computes (see the class); returns
        its first loss."""
        if current_tracer() is not None:
            raise ConversionError("LBFGS.step(closure) runs eagerly only: it calls the "
                                  "closure as many times as the values need, which a "
                                  "compiled or static-graph program cannot; call it "
                                  "outside compiled code", user_location())
        with no_grad():
            with enable_grad():
                first_loss = closure()
            self._iterate(float(first_loss), self._flat_grad(), closure)
        return first_loss

    def _iterate(self, loss: float, flat_grad: np.ndarray, closure) -> None:
        state = self.state
        state["func_evals"] = state.get("func_evals", 0) + 1
        state.setdefault("n_iter", 0)
        if np.abs(flat_grad).max() <= self.tolerance_grad:
            return
        evaluations = 1
        for n_iter in range(1, self.max_iter + 1):
            state["n_iter"] += 1
            d = state["d"] = self._direction(flat_grad)
            state["prev_flat_grad"], state["prev_loss"] = flat_grad, loss
            alpha = state["alpha"] = self._initial_step(flat_grad)
            gtd = _dot(flat_grad, d)
            if gtd > -self.tolerance_change:
                break
            loss, flat_grad, alpha, used = self._take_step(
                closure, _Point(alpha, loss, flat_grad, gtd), d, last=n_iter == self.max_iter)
            state["alpha"] = alpha
            evaluations += used
            state["func_evals"] += used
            if self._converged(flat_grad, d, alpha, loss, evaluations):
                break

    def _initial_step(self, flat_grad: np.ndarray):
        if self.state["n_iter"] == 1:
            return min(1.0, 1.0 / np.abs(flat_grad).sum()) * self.learning_rate
        return self.learning_rate

    def _take_step(self, closure, start: _Point, d: np.ndarray, last: bool):
        """Move the parameters along `d` from `start` (its alpha the initial step
        length): (loss, flat gradient, step length, evaluations of the closure)."""
        if self.line_search_fn is None:
            self._move(start.alpha, d)
            if last:  # Paddle evaluates no more after the last iteration's step
                return start.loss, start.grad, start.alpha, 0
            return (*self._evaluate(closure), start.alpha, 1)
        origin = [p._value for p in self._params]

        def evaluate(alpha):
            self._move(alpha, d)
            found = self._evaluate(closure)
            for p, value in zip(self._params, origin):
                p.set_value(Tensor._from_array(value))
            return found

        found, evaluations = _StrongWolfe(evaluate, d, start).search(start.alpha)
        self._move(found.alpha, d)
        return found.loss, found.grad, found.alpha, evaluations

    def _converged(self, flat_grad, d, alpha, loss: float, evaluations: int) -> bool:
        return bool(np.abs(flat_grad).max() <= self.tolerance_grad
                    or np.abs(d * alpha).max() <= self.tolerance_change
                    or abs(loss - self.state["prev_loss"]) < self.tolerance_change
                    or evaluations >= self.max_eval)

    def _direction(self, flat_grad: np.ndarray) -> np.ndarray:
        """The search direction: minus the gradient at the first iteration, else the
        L-BFGS two-loop recursion over the history, which first takes in the last
        step if its curvature is positive."""
        state = self.state
        if state["n_iter"] == 1:
            state.update(old_yk=[], old_sk=[], ro=[],
                         H_diag=np.asarray(1.0, flat_grad.dtype))
            return -flat_grad
        y = flat_grad - state["prev_flat_grad"]
        s = state["d"] * np.asarray(state["alpha"], state["d"].dtype)
        ys = _dot(y, s)
        if ys > 1e-10:
            self._remember(y, s, ys)
        old_yk, old_sk, ro = state["old_yk"], state["old_sk"], state["ro"]
        q, al = -flat_grad, [None] * len(old_yk)
        for i in range(len(old_yk) - 1, -1, -1):
            al[i] = _dot(old_sk[i], q) * ro[i]
            q = q + old_yk[i] * (-al[i])
        r = q * state["H_diag"]
        for i in range(len(old_yk)):
            be_i = _dot(old_yk[i], r) * ro[i]
            r = r + old_sk[i] * (al[i] - be_i)
        return r

    def _remember(self, y: np.ndarray, s: np.ndarray, ys) -> None:
        """Add the last step to the history, dropping its oldest beyond `history_size`.
        New lists, never changed in place: a state dict taken before stays as it was."""
        state = self.state
        drop = 1 if len(state["old_yk"]) == self.history_size else 0
        for key, value in (("old_yk", y), ("old_sk", s), ("ro", 1.0 / ys)):
            state[key] = [*state[key][drop:], value]
        state["H_diag"] = ys / _dot(y, y)

    # ------------------------------------------------------------ not for LBFGS

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        raise NotImplementedError("LBFGS does not minimize a loss tensor: call "
                                  "step(closure) with a closure that computes the loss")

    def state_dict(self) -> dict:
        """``{"state": ...}``: the iteration counts and the search's history (NumPy
        arrays: the flat direction, gradient and history vectors)."""
        return {"state": dict(self.state)}

    def set_state_dict(self, state_dict: dict) -> None:
        """Take back the history `state_dict` saved."""
        if "state" not in state_dict:
            raise KeyError("an LBFGS state dict has a 'state' entry (LBFGS.state_dict())")
        self.state = dict(state_dict["state"])

    load_state_dict = set_state_dict
