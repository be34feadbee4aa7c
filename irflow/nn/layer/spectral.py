"""SpectralNorm: a weight divided by its largest singular value, as Paddle's
``paddle.nn.SpectralNorm`` (Miyato et al., "Spectral Normalization for Generative
Adversarial Networks")."""
from __future__ import annotations

import math

from ...errors import ShapeError
from ...tensor import matmul, reshape, sqrt, sum as reduce_sum, transpose
from ..initializer import Normal
from .layers import Layer


def _normalized(vector, eps: float):
    """vector / (||vector||_2 + eps), Paddle's normalization in the power iteration."""
    return vector / (sqrt(reduce_sum(vector * vector)) + eps)


class SpectralNorm(Layer):
    """``forward(weight)``: weight / sigma, sigma the largest singular value of the
    weight seen as a matrix [weight_shape[dim], rest] (dim first, the other axes
    flattened), estimated by `power_iters` steps of power iteration from the vectors
    `weight_u` [rows] and `weight_v` [columns] (parameters drawn from N(0, 1) that
    receive no gradient):

        v = normalize(W^T u),  u = normalize(W v),  sigma = u^T W v

    with normalize(t) = t / (||t|| + eps). As in Paddle, the iteration starts from
    the stored `weight_u` and `weight_v` on every call and does not write them back.

    The gradient treats u and v as constants (the paper's rule):
    d sigma / dW = u v^T. Paddle 3.3.1's kernel gives a gradient that disagrees with
    finite differences of its own forward even with power_iters=0, where u and v do
    not depend on the weight, so it is not copied."""

    def __init__(self, weight_shape, dim: int = 0, power_iters: int = 1, eps: float = 1e-12,
                 dtype="float32"):
        super().__init__(dtype=dtype)
        self._weight_shape = [int(d) for d in weight_shape]
        if math.prod(self._weight_shape) <= 0:
            raise ShapeError(f"SpectralNorm: every dim of weight_shape must be positive, got "
                             f"{self._weight_shape}")
        if dim not in (0, 1) or dim >= len(self._weight_shape):
            raise ValueError(f"SpectralNorm: dim must be 0 or 1 and below the rank of "
                             f"weight_shape {self._weight_shape}, got {dim}")
        self._dim, self._power_iters, self._eps = dim, power_iters, eps
        rows = self._weight_shape[dim]
        columns = math.prod(self._weight_shape) // rows
        self.weight_u = self.create_parameter([rows], default_initializer=Normal(0.0, 1.0))
        self.weight_u.stop_gradient = True
        self.weight_v = self.create_parameter([columns], default_initializer=Normal(0.0, 1.0))
        self.weight_v.stop_gradient = True

    def _matrix(self, weight):
        """weight as [weight_shape[dim], rest]: axis `dim` first, the others flattened."""
        if list(weight.shape) != self._weight_shape:
            raise ShapeError(f"SpectralNorm: the weight has shape {list(weight.shape)}, "
                             f"expected weight_shape {self._weight_shape}")
        if self._dim == 1:
            weight = transpose(weight, [1, 0] + list(range(2, weight.ndim)))
        return reshape(weight, [self._weight_shape[self._dim], -1])

    def forward(self, x):
        matrix = self._matrix(x)
        fixed = matrix.detach()
        u, v = self.weight_u, self.weight_v
        for _ in range(self._power_iters):
            v = _normalized(matmul(u, fixed), self._eps)
            u = _normalized(matmul(fixed, v), self._eps)
        sigma = reduce_sum(u.detach() * matmul(matrix, v.detach()))
        return x / sigma
