"""Matrix and vector products of Paddle's tensor API (einsum, inner, kron, cross,
tensordot), diagonals and traces, the triangles tril/triu, dist, and paddle.linalg's
decompositions and what is built on them (pinv, lstsq, matrix_rank, cond)."""
from __future__ import annotations

import numpy as np

from ..dispatch import apply, user_location
from ..errors import DTypeError, ShapeError
from ..ir import dtypes
from ..ir.types import dim_mul, numel
from . import math as tensor_math
from .convert import as_tensor, cast
from .creation import assign, eye, zeros
from .manipulation import (_same_dtype, broadcast_to, exact_shape, pick, reshape, roll, squeeze,
                           transpose, unsqueeze)
from .logic import greater_than, select
from .math import add, divide, matmul, multiply, subtract, sum, vector_norm
from .tensor import Tensor


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation over `operands` (which may also come as one list)."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return apply("einsum", _same_dtype([as_tensor(t) for t in operands]),
                 {"equation": equation})


def tril(x, diagonal=0, name=None) -> Tensor:
    """x's lower triangle (last two axes): zeros above the `diagonal`-th diagonal."""
    return apply("tril", (as_tensor(x),), {"diagonal": int(diagonal)})


def triu(x, diagonal=0, name=None) -> Tensor:
    """x's upper triangle (last two axes): zeros below the `diagonal`-th diagonal."""
    return apply("triu", (as_tensor(x),), {"diagonal": int(diagonal)})


def dist(x, y, p=2, name=None) -> Tensor:
    """The p-norm of x - y (broadcast) over all elements, as Paddle's: p 0 counts the
    nonzero differences, inf and -inf take the largest and smallest |x - y|. x and y
    must be float tensors of one dtype, as in Paddle."""
    x, y = as_tensor(x), as_tensor(y)
    _check_float_pair(x, y, "dist")
    return vector_norm(subtract(x, y), float(p))


def _check_float_pair(x: Tensor, y: Tensor, what: str) -> None:
    if x.dtype is not y.dtype:
        raise DTypeError(f"{what}: x is {x.dtype.name} and y is {y.dtype.name}; they must "
                         "share one dtype, as in Paddle: cast one with .astype()",
                         user_location())
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{what} needs float32 or float64 tensors, as in Paddle, got "
                        f"{x.dtype.name}")


def cross(x, y, axis=9, name=None) -> Tensor:
    """The cross product of 3-vectors along `axis` of x and y (of one shape); the
    default 9 means the first axis of size 3, as in Paddle."""
    x, y = _same_dtype([as_tensor(x), as_tensor(y)])
    shape = list(exact_shape(x))
    if shape != list(exact_shape(y)):
        raise ShapeError(f"cross: x and y must have one shape, as in Paddle, got {shape} and "
                         f"{list(exact_shape(y))}")
    axis = _cross_axis(shape, axis)
    # component i is x[i+1] y[i+2] - x[i+2] y[i+1], indices mod 3: rolled copies
    x1, x2 = roll(x, -1, axis), roll(x, -2, axis)
    y1, y2 = roll(y, -1, axis), roll(y, -2, axis)
    return subtract(multiply(x1, y2), multiply(x2, y1))


def _cross_axis(shape: list, axis) -> int:
    if axis == 9:
        if 3 not in shape:
            raise ShapeError(f"cross: no axis of size 3 in the shape {shape}; cross takes the "
                             "first one when axis is not given, as in Paddle")
        return shape.index(3)
    axis = int(axis)
    if not -len(shape) <= axis < len(shape) or shape[axis] != 3:
        raise ShapeError(f"cross: axis {axis} must be an axis of size 3, as in Paddle; the "
                         f"shape is {shape}")
    return axis % len(shape)


def inner(x, y, name=None) -> Tensor:
    """The sums of products over the last axis of x and of y: the result has x's
    other axes, then y's (a 0-D operand multiplies the other)."""
    x, y = _same_dtype([as_tensor(x), as_tensor(y)])
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    x_shape, y_shape = exact_shape(x), exact_shape(y)
    if x_shape[-1] != y_shape[-1]:
        raise ShapeError(f"inner: the last axes of x (shape {list(x_shape)}) and y (shape "
                         f"{list(y_shape)}) must have one size, as in Paddle")
    rows = matmul(reshape(x, [-1, x_shape[-1]]), reshape(y, [-1, y_shape[-1]]),
                  transpose_y=True)
    return reshape(rows, [*x_shape[:-1], *y_shape[:-1]])


def kron(x, y, name=None) -> Tensor:
    """The Kronecker product of x and y (of one dtype, as in Paddle): the shorter
    shape is padded with leading 1s, and each axis of the result is x's size times
    y's, y's block varying fastest."""
    x, y = as_tensor(x), as_tensor(y)
    if x.dtype is not y.dtype:
        raise DTypeError(f"kron: x is {x.dtype.name} and y is {y.dtype.name}; they must "
                         "share one dtype, as in Paddle: cast one with .astype()",
                         user_location())
    rank = max(x.ndim, y.ndim)
    x_shape = (1,) * (rank - x.ndim) + tuple(exact_shape(x))
    y_shape = (1,) * (rank - y.ndim) + tuple(exact_shape(y))
    # x's axes interleaved with size-1 axes where y's go, and y's the other way round
    spread_x = reshape(x, [d for a in x_shape for d in (a, 1)])
    spread_y = reshape(y, [d for b in y_shape for d in (1, b)])
    return reshape(multiply(spread_x, spread_y),
                   [dim_mul(a, b) for a, b in zip(x_shape, y_shape)])


def diag(x, offset=0, padding_value=0, name=None) -> Tensor:
    """Of a 1-D x, the square matrix with x on the diagonal `offset` (above the main
    one if positive) and `padding_value` elsewhere; of a 2-D x, that diagonal."""
    from .creation import arange, full
    from .logic import equal, select
    from .manipulation import concat, gather, unsqueeze
    x = as_tensor(x)
    if x.ndim == 2:
        return diagonal(x, offset)
    if x.ndim != 1:
        raise ShapeError(f"diag: x must be 1-D or 2-D, got shape {list(x.shape)}",
                         user_location())
    n = x.shape[0] + abs(int(offset))
    if not isinstance(n, int):
        raise ShapeError("diag: a 1-D x needs a size known when the program is compiled",
                         user_location())
    rows, cols = unsqueeze(arange(n), 1), unsqueeze(arange(n), 0)
    padded = concat([x, full([abs(int(offset))], 0, x.dtype)]) if offset else x
    along = rows if offset >= 0 else cols  # the index of x each cell would hold
    values = reshape(gather(padded, reshape(broadcast_to(along, [n, n]), [-1])), [n, n])
    on_diagonal = equal(subtract(cols, rows), int(offset))
    return select(on_diagonal, values, full([n, n], padding_value, x.dtype))


def diagflat(x, offset=0, name=None) -> Tensor:
    """The square matrix with the flattened x on the diagonal `offset`, zeros elsewhere."""
    return diag(reshape(as_tensor(x), [-1]), offset)


def mv(x, vec, name=None) -> Tensor:
    """The matrix x [m, n] times the vector vec [n]: [m]."""
    x, vec = as_tensor(x), as_tensor(vec)
    if x.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv: x must be 2-D and vec 1-D, got shapes {list(x.shape)} and "
                         f"{list(vec.shape)}", user_location())
    return matmul(x, vec)


def diagonal(x, offset=0, axis1=0, axis2=1, name=None) -> Tensor:
    """The diagonals of x in the planes of `axis1` and `axis2`: the elements
    ``[i, i + offset]`` of each, along a new last axis after x's other axes (as
    Paddle's). The two axes need sizes known when the program is compiled."""
    x = as_tensor(x)
    first, second = _plane_axes(x, axis1, axis2, "diagonal")
    others = [a for a in range(x.ndim) if a not in (first, second)]
    shape = exact_shape(x)
    rows, cols = shape[first], shape[second]
    if not (isinstance(rows, int) and isinstance(cols, int)):
        raise ShapeError(f"diagonal: the axes {axis1} and {axis2} of x (shape {list(shape)}) "
                         "need static sizes, which irflow's diagonal reads when it traces")
    planes = reshape(transpose(x, [*others, first, second]), [*(shape[a] for a in others), -1])
    row0, col0 = max(0, -offset), max(0, offset)  # where the diagonal starts
    length = max(0, min(rows - row0, cols - col0))
    flat = row0 * cols + col0 + (cols + 1) * np.arange(length, dtype=np.int64)
    return pick(planes, Tensor._from_array(flat), planes.ndim - 1)


def _plane_axes(x: Tensor, axis1, axis2, what: str) -> tuple[int, int]:
    """axis1 and axis2 made non-negative, once they are two different axes of x."""
    if x.ndim < 2:
        raise ShapeError(f"{what} needs a tensor of at least 2 dims, as in Paddle, got shape "
                         f"{list(exact_shape(x))}")
    for axis in (axis1, axis2):
        if not -x.ndim <= int(axis) < x.ndim:
            raise ShapeError(f"{what}: axis {axis} is out of range for a tensor of rank "
                             f"{x.ndim}")
    first, second = int(axis1) % x.ndim, int(axis2) % x.ndim
    if first == second:
        raise ShapeError(f"{what}: axis1 and axis2 must be different axes, as in Paddle, "
                         f"got {axis1} and {axis2}")
    return first, second


def trace(x, offset=0, axis1=0, axis2=1, name=None) -> Tensor:
    """The sums of the diagonals of x (see `diagonal`), in x's dtype, as Paddle's
    (an int32 trace stays int32); 0 where the offset leaves no diagonal."""
    x = as_tensor(x)
    if x.dtype.is_bool:
        raise TypeError("trace: x is a bool tensor, which Paddle does not take; cast it to "
                        "a number dtype first")
    return cast(sum(diagonal(x, offset, axis1, axis2), axis=-1), x.dtype)


def tensordot(x, y, axes=2, name=None) -> Tensor:
    """The sums of products of x and y over pairs of axes, as Paddle's: `axes` an int
    k (x's last k axes with y's first k), or a pair of lists (x's axes, y's axes; the
    shorter one is completed from the longer), also as a tensor. The result has x's
    free axes, then y's."""
    x, y = _same_dtype([as_tensor(x), as_tensor(y)])
    x_axes, y_axes = _contracted_axes(x, y, axes)
    x_shape, y_shape = exact_shape(x), exact_shape(y)
    for a, b in zip(x_axes, y_axes):
        if x_shape[a] != y_shape[b]:
            raise ShapeError(f"tensordot: axis {a} of x (shape {list(x_shape)}) and axis {b} "
                             f"of y (shape {list(y_shape)}) must have one size")
    x_free = [a for a in range(x.ndim) if a not in x_axes]
    y_free = [b for b in range(y.ndim) if b not in y_axes]
    size = [x_shape[a] for a in x_axes]
    x_rows = reshape(transpose(x, [*x_free, *x_axes]), [-1, numel(tuple(size))])
    y_cols = reshape(transpose(y, [*y_axes, *y_free]), [numel(tuple(size)), -1])
    return reshape(matmul(x_rows, y_cols),
                   [*(x_shape[a] for a in x_free), *(y_shape[b] for b in y_free)])


def _contracted_axes(x: Tensor, y: Tensor, axes) -> tuple[list[int], list[int]]:
    """tensordot's `axes` as two lists of non-negative axes of x and of y."""
    if isinstance(axes, Tensor):
        axes = axes.tolist()
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: axes must not be negative, as in Paddle, got {axes}")
        return list(range(x.ndim - axes, x.ndim)), list(range(axes))
    if not (isinstance(axes, list | tuple) and len(axes) == 2 and
            all(isinstance(side, list | tuple) for side in axes)):
        raise ValueError(f"tensordot: axes must be an int or a pair of lists of axes (of x "
                         f"and of y), as in Paddle, got {axes!r}")
    x_axes, y_axes = list(axes[0]), list(axes[1])
    longer = x_axes if len(x_axes) > len(y_axes) else y_axes
    x_axes += longer[len(x_axes):]
    y_axes += longer[len(y_axes):]
    return [int(a) % x.ndim for a in x_axes], [int(b) % y.ndim for b in y_axes]


# ---------------------------------------------------------------- paddle.linalg decompositions

def _float_matrices(x, what: str, square: bool = True) -> Tensor:
    """x as a float32 or float64 tensor of matrices ``[*, m, n]``, square unless
    `square` is false, which is what Paddle's kernels take (an int tensor has no
    kernel there)."""
    x = as_tensor(x)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"{what} needs a float32 or float64 tensor, as in Paddle, got "
                         f"{x.dtype.name}: cast it with .astype('float32')", user_location())
    shape = exact_shape(x)
    if x.ndim < 2:
        raise ShapeError(f"{what} needs matrices (shape [*, m, n]), as in Paddle, got shape "
                         f"{list(shape)}", user_location())
    if square and shape[-1] != shape[-2]:
        raise ShapeError(f"{what} needs square matrices (shape [*, n, n]), as in Paddle, got "
                         f"shape {list(shape)}", user_location())
    return x


def _swap_last(x: Tensor) -> Tensor:
    """x with its last two axes swapped (each matrix transposed)."""
    return transpose(x, [*range(x.ndim - 2), x.ndim - 1, x.ndim - 2])


def inv(x, name=None) -> Tensor:
    """The inverse of each matrix of x ([*, n, n], float32 or float64); a singular
    matrix raises a ValueError, as in Paddle."""
    return apply("inverse", (_float_matrices(x, "inv"),))


inverse = inv


def det(x, name=None) -> Tensor:
    """The determinant of each matrix of x ([*, n, n]): shape [*]."""
    return apply("det", (_float_matrices(x, "det"),))


def slogdet(x, name=None) -> Tensor:
    """The sign and the natural log of the absolute determinant of each matrix of x,
    stacked as Paddle 3.3's [2, *] (row 0 the signs, row 1 the logs): finite where
    det itself would overflow. A singular matrix gives sign 0 and log -inf."""
    return apply("slogdet", (_float_matrices(x, "slogdet"),))


def solve(x, y, left=True, name=None) -> Tensor:
    """X with x X = y (left) or X x = y (left=False), x square matrices [*, n, n] and
    y matrices [*, n, k] (or [*, k, n] when not left) whose batch dims broadcast, or
    one vector [n]; a singular x raises a ValueError, as in Paddle."""
    x = _float_matrices(x, "solve")
    y = as_tensor(y)
    if y.dtype is not x.dtype:
        raise DTypeError(f"solve: x is {x.dtype.name} and y is {y.dtype.name}; they must "
                         "share one dtype, as in Paddle", user_location())
    if y.ndim == 1:
        return squeeze(solve(x, unsqueeze(y, -1 if left else 0), left), -1 if left else 0)
    if not left:  # X x = y is x^T X^T = y^T
        return _swap_last(apply("solve", (_swap_last(x), _swap_last(y))))
    return apply("solve", (x, y))


def matrix_power(x, n, name=None) -> Tensor:
    """x to the integer power n, matrix by matrix ([*, m, m]): the identity for n 0,
    powers of the inverse for negative n, by repeated squaring."""
    x = _float_matrices(x, "matrix_power")
    if not isinstance(n, int | np.integer) or isinstance(n, bool):
        raise TypeError(f"matrix_power: n must be an int, as in Paddle, got {n!r}")
    if n == 0:
        return broadcast_to(eye(exact_shape(x)[-1], dtype=x.dtype), list(exact_shape(x)))
    base, rest = (inv(x) if n < 0 else x), abs(int(n))
    result = None
    while True:
        if rest & 1:
            result = base if result is None else matmul(result, base)
        rest >>= 1
        if not rest:
            return result
        base = matmul(base, base)


def cholesky(x, upper=False, name=None) -> Tensor:
    """The Cholesky factor of each symmetric positive definite matrix of x: the lower
    L with L L^T = x, or with upper=True the upper U = L^T (U^T U = x). Only x's
    lower triangle is read; a matrix that is not positive definite raises a
    ValueError, as in Paddle."""
    low = apply("cholesky", (_float_matrices(x, "cholesky"),))
    return _swap_last(low) if upper else low


def triangular_solve(x, y, upper=True, transpose=False, unitriangular=False,
                     name=None) -> Tensor:
    """X with A X = y, A the upper (or lower) triangle of each matrix of x, transposed
    if asked, with ones on its diagonal if `unitriangular` (x's diagonal is then not
    read). y is [*, n, k] (at least 2-D, as in Paddle) and the batch dims broadcast."""
    x = _float_matrices(x, "triangular_solve")
    y = as_tensor(y)
    if y.ndim < 2:
        raise ShapeError(f"triangular_solve: y must have at least 2 dims ([*, n, k]), as in "
                         f"Paddle, got shape {list(exact_shape(y))}")
    side = triu if upper else tril
    if unitriangular:
        a = add(side(x, 1 if upper else -1), eye(exact_shape(x)[-1], dtype=x.dtype))
    else:
        a = side(x)
    return solve(_swap_last(a) if transpose else a, y)


def multi_dot(x, name=None) -> Tensor:
    """The product of the matrices in the list x, left to right, as Paddle's: the
    first may be a vector [n] (a row) and the last a vector [n] (a column), whose dims
    the result does not have."""
    if not isinstance(x, list | tuple) or len(x) < 2:
        raise ValueError(f"multi_dot needs a list of at least 2 tensors, as in Paddle, got "
                         f"{x!r}")
    tensors = _same_dtype([as_tensor(t) for t in x])
    for i, t in enumerate(tensors):
        if t.ndim != 2 and not (t.ndim == 1 and i in (0, len(tensors) - 1)):
            raise ShapeError(f"multi_dot: tensor {i} must be 2-D (only the first and the "
                             f"last may be 1-D), as in Paddle, got shape "
                             f"{list(exact_shape(t))}")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result


# ---------------------------------------------------------------- factorizations

def qr(x, mode="reduced", name=None):
    """The QR factorization of each matrix of x ([*, m, n]), with k = min(m, n):
    mode 'reduced' gives (Q [*, m, k], R [*, k, n]), 'complete' (Q [*, m, m],
    R [*, m, n]) and 'r' only the reduced R, as in Paddle. Gradients flow for
    'reduced', and for 'complete' when m <= n (Paddle has none elsewhere either)."""
    x = _float_matrices(x, "qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced' (default), 'complete' or 'r', as in "
                         f"Paddle, got {mode!r}")
    return apply("qr", (x,), {"mode": mode})


def _uplo(UPLO, what: str) -> str:
    if UPLO not in ("L", "U"):
        raise ValueError(f"{what}: UPLO must be 'L' or 'U', as in Paddle, got {UPLO!r}")
    return UPLO


def eigh(x, UPLO="L", name=None):
    """The eigenvalues (ascending, [*, n]) and orthonormal eigenvectors (the columns of
    [*, n, n]) of each symmetric matrix of x, reading only its lower ('L') or upper
    ('U') triangle. The gradient is the symmetric one Paddle gives; repeated
    eigenvalues make the eigenvectors' gradient infinite."""
    return apply("eigh", (_float_matrices(x, "eigh"),), {"UPLO": _uplo(UPLO, "eigh")})


def eigvalsh(x, UPLO="L", name=None) -> Tensor:
    """The ascending eigenvalues of each symmetric matrix of x (see `eigh`)."""
    return apply("eigh", (_float_matrices(x, "eigvalsh"),),
                 {"UPLO": _uplo(UPLO, "eigvalsh")})[0]


def svd(x, full_matrices=False, name=None, *, out=None):
    """The singular value decomposition x = U diag(S) VH of each matrix of x
    ([*, m, n]), as Paddle's (U, S, VH): with k = min(m, n), U [*, m, k], S [*, k]
    descending and VH [*, k, n]; with `full_matrices`, U [*, m, m] and VH [*, n, n].
    `out`, three tensors, takes the results. Gradients use the reduced factors;
    repeated singular values make them infinite."""
    results = apply("svd", (_float_matrices(x, "svd", square=False),),
                    {"full_matrices": bool(full_matrices)})
    if out is None:
        return results
    return tuple(assign(r, o) for r, o in zip(results, out))


def svdvals(x, name=None) -> Tensor:
    """The singular values of each matrix of x, descending ([*, min(m, n)])."""
    return apply("svd", (_float_matrices(x, "svdvals", square=False),))[1]


def _reciprocal_where(keep: Tensor, s: Tensor) -> Tensor:
    """1 / s where `keep`, else 0: the pseudo-inverse of a diagonal. The kept values
    are divided alone, so a dropped zero's 1/0 does not make the gradient NaN."""
    one = as_tensor(1, like=s)
    return select(keep, divide(one, select(keep, s, one)), as_tensor(0, like=s))


def _above_rcond(size: Tensor, rcond) -> Tensor:
    """Which of the singular values `size` ([*, k]) exceed `rcond` times the largest."""
    largest = tensor_math.max(size, -1, True)
    return greater_than(size, multiply(as_tensor(rcond, like=largest), largest))


def pinv(x, rcond=1e-15, hermitian=False, name=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix of x ([*, m, n] -> [*, n, m]),
    from its SVD, as Paddle's: singular values up to `rcond` times the largest are
    taken as zero. With `hermitian`, x is taken as symmetric and its eigenvalues
    (by absolute value) are used instead (only its lower triangle is read)."""
    x = _float_matrices(x, "pinv", square=bool(hermitian))
    if hermitian:
        w, u = eigh(x)
        inverse_w = _reciprocal_where(_above_rcond(tensor_math.abs(w), rcond), w)
        return matmul(multiply(u, unsqueeze(inverse_w, -2)), u, transpose_y=True)
    u, s, vh = svd(x)
    inverse_s = _reciprocal_where(_above_rcond(s, rcond), s)
    return matmul(multiply(_swap_last(vh), unsqueeze(inverse_s, -2)), u, transpose_y=True)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(x, y, rcond=None, driver=None, name=None):
    """The least-squares solutions of x X = y (x [*, m, n], y [*, m, k]), as Paddle's
    (solution [*, n, k], residuals, rank, singular_values) on the CPU, where the
    driver defaults to 'gelsy'. Singular values up to `rcond` (default 1e-7 or 1e-15
    times max(m, n) for float32 or float64) times the largest are dropped, giving
    the minimum-norm solution. Which outputs are empty follows Paddle: residuals, the
    column sums of squared errors [*, k], only for m > n with 'gels', or with 'gelsd'
    and 'gelss' when every matrix has full rank n; rank (int32 [*]) except with
    'gels' (an empty int64); singular values [*, min(m, n)] only with 'gelsd' and
    'gelss'. Paddle records no gradient through lstsq, and neither does irflow."""
    if driver not in (None, *_LSTSQ_DRIVERS):
        raise ValueError(f"lstsq: driver must be one of {', '.join(_LSTSQ_DRIVERS)} or None, "
                         f"as in Paddle's CPU lstsq, got {driver!r}")
    driver = driver or "gelsy"
    x, y = as_tensor(x), as_tensor(y)
    if x.dtype is not y.dtype:
        raise DTypeError(f"lstsq: x is {x.dtype.name} and y is {y.dtype.name}; they must "
                         "share one float dtype, as in Paddle", user_location())
    x = _float_matrices(x, "lstsq", square=False).detach()
    y = _float_matrices(y, "lstsq's y", square=False).detach()
    m, n = exact_shape(x)[-2:]
    if exact_shape(y)[-2] != m:
        raise ShapeError(f"lstsq: x [*, m = {m}, n] and y [*, m, k] need the same m, got y "
                         f"of shape {list(exact_shape(y))}", user_location())
    if rcond is None:
        rcond = (1e-7 if x.dtype is dtypes.float32 else 1e-15) * max(m, n)
    u, s, vh = svd(x)
    keep = _above_rcond(s, rcond)
    scaled = multiply(unsqueeze(_reciprocal_where(keep, s), -1), matmul(u, y, transpose_x=True))
    solution = matmul(vh, scaled, transpose_x=True)
    rank = cast(sum(cast(keep, dtypes.int32), -1), dtypes.int32)
    empty = zeros([0], x.dtype)
    residuals = empty
    if m > n and driver != "gelsy" and (driver == "gels" or
                                        bool((rank._concrete("lstsq's residuals") == n).all())):
        error = subtract(matmul(x, solution), y)
        residuals = sum(multiply(error, error), -2)
    if driver == "gels":
        return solution, residuals, zeros([0], dtypes.int64), empty
    return solution, residuals, rank, (s if driver in ("gelsd", "gelss") else empty)


def _rank_tolerance(tol, atol, rtol) -> tuple:
    """matrix_rank's (atol, rtol): `tol` alone is an absolute tolerance; rtol left as
    None becomes eps * max(m, n) later (as Paddle's, whether or not atol is given)."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise ValueError("matrix_rank: give tol alone, or atol and rtol without tol, as "
                             "in Paddle")
        return tol, 0.0
    return (0.0 if atol is None else atol), rtol


def _per_matrix(value, like: Tensor) -> Tensor:
    """A tolerance (a number, or a tensor of one per matrix, [*]) as [*, 1], to compare
    with singular values [*, k]."""
    value = as_tensor(value, like=like)
    return unsqueeze(cast(value, like.dtype), -1) if value.ndim else value


def matrix_rank(x, tol=None, hermitian=False, atol=None, rtol=None, name=None) -> Tensor:
    """The rank of each matrix of x ([*, m, n]): the number of singular values (of
    absolute eigenvalues with `hermitian`) above max(atol, rtol * the largest), an
    int64 tensor [*], as Paddle's. `tol` alone is atol with rtol 0; rtol defaults to
    eps * max(m, n) of x's dtype. No gradient flows (the rank is an integer)."""
    x = _float_matrices(x, "matrix_rank", square=bool(hermitian)).detach()
    shape = exact_shape(x)
    if 0 in shape[-2:]:
        return zeros(list(shape[:-2]), dtypes.int64)
    atol, rtol = _rank_tolerance(tol, atol, rtol)
    s = tensor_math.abs(eigvalsh(x)) if hermitian else svdvals(x)
    if rtol is None:
        rtol = float(np.finfo(x.dtype.np).eps) * max(shape[-2:])
    largest = tensor_math.max(s, -1, True)
    threshold = tensor_math.maximum(_per_matrix(atol, s),
                                    multiply(_per_matrix(rtol, s), largest))
    return sum(cast(greater_than(s, threshold), dtypes.int64), -1)


_COND_ORDERS = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))


def cond(x, p=None, name=None) -> Tensor:
    """The condition number of each matrix of x in the norm `p`, as Paddle's: p None
    or 2 the ratio of the largest to the smallest singular value (-2 its inverse), on
    any [*, m, n]; 'fro', 'nuc', 1, -1, inf or -inf, on square matrices only,
    norm(x) * norm(inv(x)), which fails for a singular matrix. An empty batch of
    matrices gives zeros."""
    x = _float_matrices(x, "cond", square=False)
    p = 2 if p is None else p
    if p not in _COND_ORDERS:
        raise ValueError(f"cond: p must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf or "
                         f"None, as in Paddle, got {p!r}")
    shape = exact_shape(x)
    if p not in (2, -2) and shape[-1] != shape[-2]:
        raise ValueError(f"cond: p={p!r} needs square matrices, as in Paddle, got shape "
                         f"{list(shape)}")
    if 0 in shape:
        return zeros(list(shape[:-2]), x.dtype)
    if p in (2, -2):
        s = svdvals(x)
        largest, smallest = tensor_math.max(s, -1), tensor_math.min(s, -1)
        return divide(largest, smallest) if p == 2 else divide(smallest, largest)
    return multiply(_cond_norm(x, p), _cond_norm(inv(x), p))


def _cond_norm(x: Tensor, p) -> Tensor:
    if p == "nuc":
        return sum(svdvals(x), -1)
    return tensor_math.matrix_norm(x, p)
