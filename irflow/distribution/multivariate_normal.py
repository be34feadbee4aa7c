"""Paddle's ``paddle.distribution.MultivariateNormal``: the Gaussian of mean vector
`loc` and one of a covariance matrix, a precision matrix or a lower-triangular
scale (Cholesky factor of the covariance)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import tensor as T
from ..dispatch import no_grad
from ..tensor import linalg
from ..tensor.convert import get_default_dtype
from .distribution import Distribution


def _transpose_last(x):
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return x.transpose(perm)


def precision_to_scale_tril(precision):
    """The lower-triangular L with ``L L^T = inverse(precision)``: with U the
    Cholesky factor of the precision read backwards (flipped on both axes), L is
    the inverse of its flipped transpose."""
    flipped = T.flip(linalg.cholesky(T.flip(precision, [-2, -1])), [-2, -1])
    identity = T.eye(precision.shape[-1], dtype=precision.dtype)
    return linalg.triangular_solve(_transpose_last(flipped), identity, upper=False)


def batch_mahalanobis(scale_tril, diff):
    """``|L^-1 diff|^2`` over the last axis, L broadcast against diff's batch."""
    batch = list(np.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1])))
    n = diff.shape[-1]
    tril = T.broadcast_to(scale_tril, batch + [n, n])
    column = T.broadcast_to(diff, batch + [n]).unsqueeze(-1)
    return linalg.triangular_solve(tril, column, upper=False).pow(2).sum([-2, -1])


class MultivariateNormal(Distribution):
    """The multivariate normal of `loc` (a number, made a default-dtype vector of one
    element, or a Tensor) and exactly one of `covariance_matrix`,
    `precision_matrix` and `scale_tril` (cast to loc's dtype). The batch shape
    broadcasts loc's leading axes with the matrix's."""

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
        if isinstance(loc, (float, int)):
            loc = T.to_tensor([loc], dtype=get_default_dtype())
        self.dtype = loc.dtype
        if loc.ndim < 1:
            loc = loc.reshape([1])
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (kind, matrix), = given
        if matrix.ndim < 2:
            raise ValueError(f"{kind} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        matrix = matrix.astype(self.dtype)
        batch_shape = list(np.broadcast_shapes(tuple(matrix.shape[:-2]),
                                               tuple(loc.shape[:-1])))
        self.covariance_matrix = self.precision_matrix = self.scale_tril = None
        setattr(self, kind, T.broadcast_to(matrix, batch_shape + list(matrix.shape[-2:])))
        self.loc = T.broadcast_to(loc, batch_shape + [loc.shape[-1]])
        if kind == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif kind == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)
        super().__init__(batch_shape, self.loc.shape[-1:])

    @property
    def mean(self):
        """The mean, `loc`."""
        return self.loc

    @property
    def variance(self):
        """The diagonal of the covariance: row sums of ``L^2``."""
        return T.broadcast_to(self._unbroadcasted_scale_tril.pow(2).sum(-1),
                              list(self._batch_shape + self._event_shape))

    def sample(self, shape=()):
        """Draws of shape ``shape + batch_shape + event_shape``, not
        differentiable."""
        with no_grad():
            return self.rsample(shape)

    def rsample(self, shape=()):
        """``loc + L eps``, eps standard normal: differentiable in the parameters."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        eps = T.randn(list(self._extend_shape(shape)), dtype=self.dtype)
        return self.loc + T.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        """``log det(L)``, half the log determinant of the covariance."""
        return T.log(self._unbroadcasted_scale_tril.diagonal(axis1=-2, axis2=-1)).sum(-1)

    def log_prob(self, value):
        """``-(k log(2 pi) + |L^-1 (value - loc)|^2) / 2 - log det(L)``."""
        diff = value.astype(self.dtype) - self.loc
        mahalanobis = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis)
                - self._half_log_det())

    def prob(self, value):
        """``exp(log_prob(value))``."""
        return T.exp(self.log_prob(value))

    def entropy(self):
        """``k (1 + log(2 pi)) / 2 + log det(L)``, over the batch shape."""
        entropy = (0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi))
                   + self._half_log_det())
        return T.broadcast_to(entropy, list(self._batch_shape)) if self._batch_shape else entropy

    def kl_divergence(self, other):
        """KL(self || other) = ``(tr(S2^-1 S1) + |L2^-1 (l2 - l1)|^2 - k) / 2 +
        log det(L2) - log det(L1)``."""
        if not isinstance(other, MultivariateNormal):
            raise TypeError(f"Expected type of other is MultivariateNormal, but got "
                            f"{type(other)}")
        if self._batch_shape != other._batch_shape and self._event_shape != other._event_shape:
            raise ValueError("KL divergence of two Multivariate Normal distributions should "
                             "share the same `batch_shape` and `event_shape`.")
        l1, l2 = self._unbroadcasted_scale_tril, other._unbroadcasted_scale_tril
        cov1, cov2 = T.matmul(l1, _transpose_last(l1)), T.matmul(l2, _transpose_last(l2))
        trace = linalg.solve(cov2, cov1).diagonal(axis1=-2, axis2=-1).sum(-1)
        expectation = trace + batch_mahalanobis(l2, self.loc - other.loc)
        return (other._half_log_det() - self._half_log_det()
                + 0.5 * (expectation - self._event_shape[0]))
