"""The LU factorization: Paddle's ``paddle.linalg.lu`` (the ``lu`` op) and
``lu_unpack`` (composed: P from the pivots as a product of row swaps)."""
from __future__ import annotations

from ..dispatch import apply
from ..errors import InputError
from .convert import as_tensor, cast
from .creation import arange, eye
from .linalg import _float_matrices, tril, triu
from .logic import equal
from .manipulation import slice  # noqa: A004  (Paddle's name)
from .manipulation import exact_shape, unsqueeze
from .math import add, matmul, multiply, subtract
from .tensor import Tensor


def lu(x, pivot=True, get_infos=False, name=None):
    """The LU factorization with partial pivoting of each float matrix of x
    ([*, m, n], k = min(m, n)), as Paddle's (LAPACK's getrf): the packed LU [*, m, n]
    (L's strict lower part, its unit diagonal implied, and U above), the 1-based int32
    pivots [*, k], and with `get_infos` the int32 infos [*] (the 1-based position of
    the first zero pivot, 0 when there is none; a singular x is not an error).
    Gradients flow through LU for square matrices; Paddle's CPU kernel has no
    pivot=False, and neither has irflow."""
    x = _float_matrices(x, "lu", square=False)
    if not pivot:
        raise InputError("lu: pivot=False is not implemented, as in Paddle's CPU kernel; "
                         "use pivot=True")
    packed, pivots, infos, _ = apply("lu", (x,), {})
    return (packed, pivots, infos) if get_infos else (packed, pivots)


def lu_unpack(x, y, unpack_ludata=True, unpack_pivots=True, name=None):
    """(P, L, U) from `lu`'s packed factors x ([*, m, n]) and pivots y ([*, k]), with
    x = P L U as Paddle's: P [*, m, m] in x's dtype, the unit lower L [*, m, k] and the
    upper U [*, k, n]. What is not unpacked (P without `unpack_pivots`, L and U
    without `unpack_ludata`) is None, where Paddle gives uninitialised tensors."""
    x = _float_matrices(x, "lu_unpack", square=False)
    y = as_tensor(y)
    m, n = exact_shape(x)[-2:]
    k = min(m, n)
    lower = upper = permutation = None
    if unpack_ludata:
        lower = add(tril(slice(x, [x.ndim - 1], [0], [k]), -1), eye(m, k, dtype=x.dtype))
        upper = triu(slice(x, [x.ndim - 2], [0], [k]))
    if unpack_pivots:
        permutation = _pivot_matrix(y, m, x.dtype)
    return permutation, lower, upper


def _pivot_matrix(pivots: Tensor, m: int, dtype) -> Tensor:
    """P = S_0 S_1 ... S_{k-1}, S_j the identity with rows j and pivots[j] - 1 swapped:
    getrf applied the swaps in order to x, so x = P L U."""
    positions = arange(m, dtype=pivots.dtype)
    identity = eye(m, dtype=dtype)
    product = None
    for j in range(exact_shape(pivots)[-1]):
        target = slice(pivots, [pivots.ndim - 1], [j], [j + 1])
        to = cast(equal(positions, subtract(target, 1)), dtype)
        at = cast(equal(positions, as_tensor(j, like=pivots)), dtype)
        swap = identity - _outer(at, at) - _outer(to, to) + _outer(at, to) + _outer(to, at)
        product = swap if product is None else matmul(product, swap)
    return identity if product is None else product


def _outer(u: Tensor, v: Tensor) -> Tensor:
    """The batched outer product u v^T of vectors [*, m]."""
    return multiply(unsqueeze(u, -1), unsqueeze(v, -2))
