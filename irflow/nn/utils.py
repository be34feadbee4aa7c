"""Paddle's ``paddle.nn.utils``: clipping the gradients of parameters in place
(`clip_grad_norm_`, `clip_grad_value_`), flattening parameters to one vector, and
the weight-norm and spectral-norm reparameterizations (`weight_norm`,
`remove_weight_norm`, `spectral_norm`)."""
from __future__ import annotations

from ..context import current_tracer
from ..dispatch import no_grad
from ..tensor import (Tensor, abs as absolute, clip, concat, matmul, max as reduce_max, moveaxis,
                      norm, normal, reshape, sqrt, stack, sum as reduce_sum)
from ..tensor.creation import to_tensor
from .functional.common import normalize
from .layer.common import Linear
from .layer.conv import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose


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


def _rows(v, dim: int):
    """`v` with axis `dim` moved first and the rest flattened: one row per slice."""
    return reshape(moveaxis(v, dim, 0), [v.shape[dim], -1])


def _norm_except_dim(v, dim: int):
    """The L2 norm of each slice of `v` along `dim` (of all of `v` for dim -1), as
    Paddle's norm op computes it: sqrt(sum of squares + 1e-12)."""
    if dim == -1:
        return sqrt(reduce_sum(v * v) + 1e-12)
    rows = _rows(v, dim)
    return sqrt(reduce_sum(rows * rows, axis=1) + 1e-12)


def _weight_from(v, g, dim: int):
    """g * v / ||v||, the norm taken per slice along `dim` (over all of v for -1)."""
    if dim == -1:
        return v / (sqrt(reduce_sum(v * v)) + 1e-12) * g
    moved = moveaxis(v, dim, 0)
    direction = reshape(normalize(_rows(v, dim), axis=1), moved.shape)
    scale = reshape(g, [-1] + [1] * (v.ndim - 1))
    return moveaxis(direction * scale, 0, dim)


class WeightNorm:
    """The forward pre-hook of `weight_norm`: recomputes the layer's `name` tensor from
    `name`_g and `name`_v before each forward, so gradients reach g and v."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, layer):
        return _weight_from(getattr(layer, self.name + "_v"), getattr(layer, self.name + "_g"),
                            self.dim)

    def __call__(self, layer, inputs) -> None:
        setattr(layer, self.name, self.compute_weight(layer))


def weight_norm(layer, name: str = "weight", dim: int | None = 0):
    """Reparameterize `layer`'s parameter `name` as w = g * v / ||v||: parameters
    `name`_v (the direction, initially w) and `name`_g (the magnitude, the norm of each
    slice along `dim`) replace it. dim None (or -1, as in Paddle) takes one norm over
    the whole tensor. Returns the layer."""
    for hook in layer._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"weight_norm: parameter {name!r} already has a weight_norm hook")
    weight = layer._parameters[name]
    rank = weight.ndim
    dim = -1 if dim is None else dim
    if not -rank <= dim < rank:
        raise ValueError(f"weight_norm: dim must lie in [-{rank}, {rank}) for the rank-{rank} "
                         f"parameter {name!r}, got {dim}")
    dim = dim if dim == -1 else dim % rank
    with no_grad():
        g_value = _norm_except_dim(weight, dim)
    delattr(layer, name)
    v = layer.create_parameter(weight.shape, dtype=weight.dtype)
    layer.add_parameter(name + "_v", v)
    g = layer.create_parameter(g_value.shape, dtype=weight.dtype)
    layer.add_parameter(name + "_g", g)
    with no_grad():
        v.set_value(weight)
        g.set_value(g_value)
    hook = WeightNorm(name, dim)
    setattr(layer, name, hook.compute_weight(layer))
    layer.register_forward_pre_hook(hook)
    return layer


def remove_weight_norm(layer, name: str = "weight"):
    """Undo `weight_norm`: `name` becomes one parameter again, holding g * v / ||v||."""
    for key, hook in layer._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            with no_grad():
                weight = hook.compute_weight(layer)
            delattr(layer, name)
            delattr(layer, name + "_g")
            delattr(layer, name + "_v")
            parameter = layer.create_parameter(weight.shape, dtype=weight.dtype)
            with no_grad():
                parameter.set_value(weight)
            layer.add_parameter(name, parameter)
            del layer._forward_pre_hooks[key]
            layer._structure_changed()
            return layer
    raise ValueError(f"remove_weight_norm: no weight_norm of {name!r} on {type(layer).__name__}")


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`: sets the layer's `name` tensor to
    `name`_orig / sigma before each forward, sigma = u^T W v with W the weight as a
    matrix (see `_rows`). In training it first runs `n_power_iterations` steps of
    power iteration, storing u and v back into their buffers, as Paddle's hook does;
    in eval it uses the stored ones. u and v are buffers, constants to the gradient
    (the paper's rule), so the weight's gradient comes through W alone. The sigma
    of a forward uses clones of them, so that the power iteration of a later
    forward (before the backward) does not change it; clones, not `detach()`, which
    in a compiled program reads a buffer's value from before this call's
    `set_value`."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name, self.n_power_iterations, self.dim, self.eps = \
            name, n_power_iterations, dim, eps

    def _power_iteration(self, matrix, u, v) -> None:
        """v = normalize(W^T u), u = normalize(W v), n_power_iterations times, in place."""
        with no_grad():
            for _ in range(self.n_power_iterations):
                v.set_value(normalize(matmul(matrix, u, transpose_x=True), axis=0,
                                      epsilon=self.eps))
                u.set_value(normalize(matmul(matrix, v), axis=0, epsilon=self.eps))

    def compute_weight(self, layer, do_power_iteration: bool):
        weight = getattr(layer, self.name + "_orig")
        u, v = getattr(layer, self.name + "_u"), getattr(layer, self.name + "_v")
        matrix = _rows(weight, self.dim)
        if do_power_iteration:
            self._power_iteration(matrix, u, v)
        u, v = u.clone(), v.clone()
        sigma = reduce_sum(u * matmul(matrix, v))
        return weight / sigma

    def __call__(self, layer, inputs) -> None:
        setattr(layer, self.name, self.compute_weight(layer, layer.training))


def _spectral_norm_dim(layer, dim, rank: int) -> int:
    """`spectral_norm`'s dim: Paddle's default is 1 for Linear (whose weight is [in,
    out]) and the transposed convolutions (weight [in, out, ...]), so that the
    matrix's rows are the outputs; 0 for any other layer."""
    if dim is None:
        return 1 if isinstance(layer, Linear | Conv1DTranspose | Conv2DTranspose |
                               Conv3DTranspose) else 0
    if not -rank <= dim < rank:
        raise ValueError(f"spectral_norm: dim must lie in [-{rank}, {rank}) for the rank-{rank} "
                         f"weight, got {dim}")
    return dim % rank


def spectral_norm(layer, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None):
    """Reparameterize `layer`'s parameter `name` as W / sigma(W), sigma its largest
    singular value estimated by power iteration (see `SpectralNorm`), as Paddle's
    ``paddle.nn.utils.spectral_norm``: the parameter becomes `name`_orig, with
    buffers `name`_u [rows] and `name`_v [columns] drawn from N(0, 1) and normalized.
    W is the weight with axis `dim` moved first and the rest flattened. Returns the
    layer."""
    if n_power_iterations <= 0:
        raise ValueError(f"spectral_norm: n_power_iterations must be positive, got "
                         f"{n_power_iterations}")
    for hook in layer._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"spectral_norm: parameter {name!r} already has a "
                               f"spectral_norm hook")
    weight = layer._parameters[name]
    dim = _spectral_norm_dim(layer, dim, weight.ndim)
    rows, columns = _rows(weight, dim).shape
    with no_grad():
        u = normalize(normal(0.0, 1.0, [rows]).astype(weight.dtype), axis=0, epsilon=eps)
        v = normalize(normal(0.0, 1.0, [columns]).astype(weight.dtype), axis=0, epsilon=eps)
    delattr(layer, name)
    layer.add_parameter(name + "_orig", weight)
    setattr(layer, name, weight * 1.0)
    layer.register_buffer(name + "_u", u)
    layer.register_buffer(name + "_v", v)
    layer.register_forward_pre_hook(SpectralNorm(name, n_power_iterations, dim, eps))
    return layer
