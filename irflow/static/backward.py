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
    input the targets do not depend on."""
    programs = static_programs("static.gradients")
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    skipped = _names(no_grad_set)
    wanted = [i for i, t in enumerate(inputs) if t.name is None or t.name not in skipped]
    grads = [None] * len(inputs)
    if wanted:
        found = grad(targets, [inputs[i] for i in wanted], target_gradients, allow_unused=True)
        for i, g in zip(wanted, found):
            grads[i] = g
    _name_gradients(programs, inputs, grads)
    return grads


def append_backward(loss: Tensor, parameter_list: Sequence | None = None,
                    no_grad_set=None, callbacks=None, checkpoints=None) -> list[tuple]:
    """The (parameter, gradient) pairs of `loss` for `parameter_list` (parameters or
    their names; default: the program's trainable parameters), the parameters the
    loss does not depend on left out."""
    programs = static_programs("static.append_backward")
    params = programs.main.all_parameters()
    if parameter_list is not None:
        named = {p.name: p for p in params}
        params = [named[p] if isinstance(p, str) else p for p in parameter_list]
    skipped = _names(no_grad_set)
    params = [p for p in params if not p.stop_gradient and p.name not in skipped]
    grads = grad([loss], params, allow_unused=True) if params else []
    _name_gradients(programs, params, grads)
    return [(p, g) for p, g in zip(params, grads) if g is not None]


def _names(no_grad_set) -> set[str]:
    return {v if isinstance(v, str) else v.name for v in (no_grad_set or ())}


def _name_gradients(programs, variables, grads) -> None:
    """Name each gradient ``<variable>@GRAD`` in the program, for fetching by name."""
    for v, g in zip(variables, grads):
        if g is not None and v.name:
            g.name = f"{v.name}@GRAD"
            programs.main._tracer.named[g.name] = g


__all__ = ["append_backward", "gradients"]
