"""Paddle's ``paddle.nn.utils``: clipping the gradients of parameters in place
(`clip_grad_norm_`, `clip_grad_value_`) and flattening parameters to one vector."""
from __future__ import annotations

from ..context import current_tracer
from ..dispatch import no_grad
from ..tensor import Tensor, abs as absolute, clip, concat, max as reduce_max, norm, reshape, stack
from ..tensor.creation import to_tensor


def _with_grads(parameters) -> list[tuple]:
    """(parameter, its gradient) for those of `parameters` that have one. While tracing,
    a gradient that exists on some runs only is there with its value, zeros on the
    other runs, which adds nothing to a norm; `_replace_grad` keeps whether it exists."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    tracer = current_tracer()
    pairs = [(p, p.grad if tracer is None else tracer.gradient(p)[0]) for p in parameters]
    return [(p, g) for p, g in pairs if g is not None]


def _replace_grad(p, g) -> None:
    """Store `g` as p's gradient: in place eagerly, in the program while tracing."""
    tracer = current_tracer()
    if tracer is not None:
        tracer.replace_grad(p, g)
    else:
        p.grad.set_value(g)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False):
    """Scale the gradients of `parameters` in place so that their joint `norm_type`
    norm is at most `max_norm` (by max_norm / (norm + 1e-6), never above 1); returns
    the norm before clipping."""
    pairs = _with_grads(parameters)
    if not pairs:
        return to_tensor(0.0)
    max_norm, norm_type = float(max_norm), float(norm_type)
    params = [p for p, _ in pairs]
    with no_grad():
        grads = [g.detach() for _, g in pairs]
        if norm_type == float("inf"):
            norms = [reduce_max(absolute(g)) for g in grads]
            total = norms[0] if len(norms) == 1 else reduce_max(stack(norms))
        else:
            total = norm(stack([norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and total._value is not None and \
                not bool(total.isfinite().item()):
            raise RuntimeError(f"The total norm of {norm_type} order of the gradients from "
                               "`parameters` is non-finite, so it cannot be clipped. In any "
                               "case, disable this error and scale the gradient by non-finite "
                               "norm, set `error_if_nonfinite=False`")
        coef = clip(max_norm / (total + 1e-6), max=1.0)
        for p, g in zip(params, grads):
            _replace_grad(p, g * coef.astype(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clip every gradient element of `parameters` into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for p, g in _with_grads(parameters):
            _replace_grad(p, clip(g.detach(), -clip_value, clip_value))


def parameters_to_vector(parameters, name=None) -> Tensor:
    """The parameters flattened and joined into one 1-D tensor."""
    return concat([reshape(p, [-1]) for p in parameters])


def vector_to_parameters(vec, parameters, name=None) -> None:
    """Copy consecutive pieces of the 1-D `vec` into `parameters` (in place)."""
    start = 0
    with no_grad():
        for p in parameters:
            n = p.size
            p.set_value(reshape(vec[start:start + n], p.shape))
            start += n
