"""Paddle's ``paddle.static.gradients`` and ``append_backward``: gradient variables
added to a static program, which an `Executor` fetches like any other (also by name,
``"<parameter>@GRAD"``, as Paddle's legacy programs name them).

Both are ``paddle.grad`` traced into the current program: irflow's one autodiff
(`irflow.passes.autodiff`), as for ``optimizer.minimize``.
"""
from __future__ import annotations

from typing import Sequence

from ..autograd import grad
from ..tensor.tensor import Tensor
from .mode import static_programs


def gradients(targets, inputs, target_gradients=None, no_grad_set=None) -> list:
    """The gradients of the sum of `targets` (weighted by `target_gradients`) with
    respect to each of `inputs`: variables of the current program, None for an
    input the targets do not depend on. No gradient flows through the variables of
    `no_grad_set` (variables or their names); an input among them has None."""
    programs = static_programs("static.gradients")
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    skipped = list(no_grad_set or ())
    wanted = [i for i, t in enumerate(inputs) if not _listed(t, skipped)]
    grads = [None] * len(inputs)
    if wanted:
        with programs.main._tracer.blocking(_variables(skipped)):
            found = grad(targets, [inputs[i] for i in wanted], target_gradients,
                         allow_unused=True)
        for i, g in zip(wanted, found):
            grads[i] = g
    _name_gradients(programs, inputs, grads)
    return grads


def append_backward(loss: Tensor, parameter_list: Sequence | None = None,
                    no_grad_set=None, callbacks=None, checkpoints=None) -> list[tuple]:
    """The (parameter, gradient) pairs of `loss` for `parameter_list` (parameters or
    their names; default: the program's trainable parameters), the parameters the
    loss does not depend on left out. No gradient flows through the variables of
    `no_grad_set` (variables or their names)."""
    programs = static_programs("static.append_backward")
    params = programs.main.all_parameters()
    if parameter_list is not None:
        named = {p.name: p for p in params}
        params = [named[p] if isinstance(p, str) else p for p in parameter_list]
    skipped = list(no_grad_set or ())
    params = [p for p in params if not p.stop_gradient and not _listed(p, skipped)]
    grads = []
    if params:
        with programs.main._tracer.blocking(_variables(skipped)):
            grads = grad([loss], params, allow_unused=True)
    _name_gradients(programs, params, grads)
    return [(p, g) for p, g in zip(params, grads) if g is not None]


def _listed(variable: Tensor, no_grad_set: list) -> bool:
    """Whether `variable` is in `no_grad_set`: itself, or by its name."""
    return any(v is variable or (variable.name is not None and variable.name ==
                                 (v if isinstance(v, str) else v.name))
               for v in no_grad_set)


def _variables(no_grad_set: list) -> list[Tensor]:
    """The variables of `no_grad_set` given as variables (a name stands for a parameter
    or an input, which no gradient flows through anyway)."""
    return [v for v in no_grad_set if isinstance(v, Tensor)]


def _name_gradients(programs, variables, grads) -> None:
    """Name each gradient ``<variable>@GRAD`` in the program, for fetching by name."""
    for v, g in zip(variables, grads):
        if g is not None and v.name:
            g.name = f"{v.name}@GRAD"
            programs.main._tracer.named[g.name] = g


__all__ = ["append_backward", "gradients"]
