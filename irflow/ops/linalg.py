"""Linear algebra: `matmul`, with the semantics of ``paddle.matmul``.

``matmul x, y {transpose_x, transpose_y}`` first transposes the last two axes of an
operand whose flag is set (a no-op for a 1-D operand). Then a 1-D x is a ``[1, k]``
row and a 1-D y a ``[k, 1]`` column, whose added dim is removed from the result;
the remaining leading dims are batch dims, broadcast as NumPy does. So
``f32[N,3,4] @ f32[4,5] -> f32[N,3,5]``, ``f32[4] @ f32[4,5] -> f32[5]`` and
``f32[4] @ f32[4] -> f32``.

The decompositions `inverse`, `det`, `slogdet`, `solve` and `cholesky` take float
matrices ``[*batch, n, n]`` (NumPy's LAPACK kernels); a singular matrix (not positive
definite for `cholesky`) is a `SingularMatrixError`, a ValueError as Paddle raises.
The factorizations `qr`, `eigh` (of symmetric matrices), `svd` and `lu` give
several results, with the shapes and orders of paddle.linalg's (`lu` adds the
permutation matrix its VJP needs).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, SingularMatrixError, SymbolicShapeError
from ..ir import dtypes
from ..ir.traits import Contraction
from ..ir.types import TensorType, broadcast_shapes, mismatch, numel, reworded, shape_str
from ._rules import check_kind, defop, quiet, same_dtype, unbroadcast


def _matrix(t: TensorType, transpose: bool, vector_is_row: bool) -> tuple:
    """``(batch, rows, cols)`` of an operand as the product sees it: transposed if
    asked, and a 1-D operand as a row (x) or a column (y)."""
    if t.rank == 1:
        return ((), 1, t.shape[0]) if vector_is_row else ((), t.shape[0], 1)
    batch, rows, cols = t.shape[:-2], t.shape[-2], t.shape[-1]
    return (batch, cols, rows) if transpose else (batch, rows, cols)


def _describe(t: TensorType, transpose: bool) -> str:
    return f"{t} transposed" if transpose and t.rank > 1 else str(t)


def product_dims(xt: TensorType, yt: TensorType, transpose_x: bool, transpose_y: bool):
    """``(batch, m, k, n)``: the product is ``[*batch, m, k] @ [*batch, k, n]``."""
    for t, what in ((xt, "x"), (yt, "y")):
        if t.rank == 0:
            raise ShapeError(f"{what} must have at least one dim, got the 0-d {t}")
    x_batch, m, kx = _matrix(xt, transpose_x, vector_is_row=True)
    y_batch, ky, n = _matrix(yt, transpose_y, vector_is_row=False)
    if kx != ky:
        raise mismatch(kx, ky, f"the contracted dims differ: x is {_describe(xt, transpose_x)} "
                               f"and y is {_describe(yt, transpose_y)}, so x's columns ({kx}) "
                               f"do not match y's rows ({ky})")
    try:
        batch = broadcast_shapes(x_batch, y_batch)
    except ShapeError as e:
        raise reworded(e, f"the batch dims {shape_str(x_batch)} of x {xt} and "
                          f"{shape_str(y_batch)} of y {yt} do not broadcast") from None
    return batch, m, kx, n


def _matmul_infer(types, attrs):
    xt, yt = types
    check_kind(xt, "number", "x")
    check_kind(yt, "number", "y")
    same_dtype(types)
    batch, m, _, n = product_dims(xt, yt, attrs["transpose_x"], attrs["transpose_y"])
    shape = batch + ((m,) if xt.rank > 1 else ()) + ((n,) if yt.rank > 1 else ())
    return TensorType(xt.dtype, shape)


def _matmul_kernel(x, y, transpose_x, transpose_y, out=None):
    """Also the out kernel: BLAS takes a transposed operand as it is (a transpose of
    a contiguous array is Fortran-contiguous), so with `out` nothing is allocated."""
    if transpose_x and x.ndim > 1:
        x = np.swapaxes(x, -1, -2)
    if transpose_y and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    return np.asarray(np.matmul(x, y, out=out))


def _as_matrix(b, v, shape):
    return v if v.type.shape == shape else b.reshape(v, shape=shape)


def _grad_x(b, g, y, tx: bool, ty: bool):
    """The cotangent of x (as a matrix, before the batch sum): ``g @ y^T`` for the
    plain product, with the transposes arranged so none is materialized."""
    if tx:
        return b.matmul(y, g, transpose_x=ty, transpose_y=True)
    return b.matmul(g, y, transpose_y=not ty)


def _grad_y(b, g, x, tx: bool, ty: bool):
    """The cotangent of y (as a matrix, before the batch sum): ``x^T @ g`` for the
    plain product."""
    if ty:
        return b.matmul(g, x, transpose_x=True, transpose_y=tx)
    return b.matmul(x, g, transpose_x=not tx)


def _sum_to(b, g, matrix_type: TensorType, t: TensorType):
    """Sum `g` over broadcast batch dims to `matrix_type`, then drop a vector's
    added dim to give the operand type `t`."""
    g = unbroadcast(b, g, matrix_type)
    return _as_matrix(b, g, t.shape)


def _matmul_vjp(b, cts, ins, outs, transpose_x, transpose_y):
    """The plain product's rule (``g @ y^T``, ``x^T @ g``) on the operands as
    matrices: 1-D operands and the cotangent get their removed dims back by a
    reshape, and each cotangent is summed over the batch dims its operand was
    broadcast along. When y has no batch dims and x is not transposed, x's batch
    dims are folded into its rows first, so y's cotangent is one matrix product
    rather than a batched product followed by a sum."""
    x, y = ins
    if not x.type.dtype.is_float:
        return [None, None]
    tx = transpose_x and x.type.rank > 1
    ty = transpose_y and y.type.rank > 1
    batch, m, k, n = product_dims(x.type, y.type, tx, ty)
    x_shape = (m, k) if x.type.rank == 1 else x.type.shape
    y_shape = (k, n) if y.type.rank == 1 else y.type.shape
    x2, y2 = _as_matrix(b, x, x_shape), _as_matrix(b, y, y_shape)
    g = _as_matrix(b, cts[0], batch + (m, n))
    gx = _sum_to(b, _grad_x(b, g, y2, tx, ty), x2.type, x.type)
    if y2.type.rank == 2 and x2.type.rank > 2 and not tx:
        rows = numel(batch + (m,))
        x2, g = b.reshape(x2, shape=(rows, k)), b.reshape(g, shape=(rows, n))
    gy = _sum_to(b, _grad_y(b, g, x2, tx, ty), y2.type, y.type)
    return [gx, gy]


def _matmul_channels(op):
    """Result column c is linear in column c of a matrix y (row c if transposed)."""
    y = op.operand(1).type
    if y.rank != 2:
        return None
    return op.result.type.rank - 1, 0 if op.attrs["transpose_y"] else 1


_matmul = quiet(_matmul_kernel)
defop("matmul", _matmul_infer, _matmul, out_kernel=_matmul, arity=2,
      attrs={"transpose_x": False, "transpose_y": False}, vjp=_matmul_vjp,
      traits=(Contraction(weight=1, channels=_matmul_channels),),
      doc="matmul(x, y): the matrix product of two float or int tensors of one dtype "
          "and rank >= 1, as paddle.matmul. Attributes `transpose_x`, `transpose_y` "
          "(bool, default false) swap the operand's last two axes first (no-op for "
          "1-D). A 1-D x is taken as [1, k] and a 1-D y as [k, 1], and that dim is "
          "removed from the result. Leading (batch) dims broadcast as in NumPy; x's "
          "last dim must equal y's second-to-last. The result type is "
          "x.dtype[*batch, m, n] for x [*, m, k] and y [*, k, n].")


# ---------------------------------------------------------------- decompositions

def _square(t: TensorType, what: str) -> tuple:
    """The batch dims of a float ``[*batch, n, n]`` operand."""
    check_kind(t, "float", what)
    if t.rank < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{what} must be a square matrix or a batch of them "
                         f"([*, n, n]), got {t}")
    return t.shape[:-2]


def _factoring(name: str, fn):
    """`fn` with NumPy's LinAlgError turned into a SingularMatrixError naming the op;
    a multi-result kernel's tuple is passed through."""
    def kernel(*arrays, **attrs):
        try:
            out = fn(*arrays, **attrs)
        except np.linalg.LinAlgError as e:
            raise SingularMatrixError(f"{name}: the matrix cannot be factored ({e}); "
                                      "Paddle raises here too") from None
        return out if isinstance(out, tuple) else np.asarray(out)
    kernel.__name__ = name
    return kernel


def _mT(b, v):
    """v with its last two axes swapped."""
    perm = tuple(range(v.type.rank - 2)) + (v.type.rank - 1, v.type.rank - 2)
    return b.transpose(v, perm=perm)


def _as_batch_scalars(b, g, batch: tuple):
    """A cotangent of per-matrix scalars as ``[*batch, 1, 1]``, to scale matrices."""
    return b.reshape(g, shape=batch + (1, 1))


def _inverse_vjp(b, g, ins, outs):
    """d inv(A) = -inv(A) dA inv(A), so the cotangent is -inv(A)^T g inv(A)^T."""
    inv = outs[0]
    return [b.neg(b.matmul(b.matmul(inv, g[0], transpose_x=True), inv, transpose_y=True))]


def _det_vjp(b, g, ins, outs):
    """d det(A) = det(A) tr(inv(A) dA): the cotangent g det(A) inv(A)^T (the
    inverse fails for a singular A)."""
    (x,) = ins
    scale = _as_batch_scalars(b, b.mul(g[0], outs[0]), x.type.shape[:-2])
    return [b.mul(scale, _mT(b, b.inverse(x)))]


def _slogdet_infer(types, attrs):
    (t,) = types
    return TensorType(t.dtype, (2,) + _square(t, "slogdet's x"))


def _slogdet_kernel(x):
    sign, logabsdet = np.linalg.slogdet(x)
    return np.stack([sign, logabsdet]).astype(x.dtype)


def _slogdet_vjp(b, g, ins, outs):
    """Only the log|det| row carries a gradient (the sign is piecewise constant):
    d log|det(A)| = tr(inv(A) dA), so its cotangent times inv(A)^T."""
    (x,) = ins
    batch = x.type.shape[:-2]
    row = b.slice(g[0], axes=(0,), starts=(1,), stops=(2,))
    return [b.mul(_as_batch_scalars(b, row, batch), _mT(b, b.inverse(x)))]


def _solve_infer(types, attrs):
    xt, yt = types
    x_batch = _square(xt, "solve's x")
    check_kind(yt, "float", "solve's y")
    same_dtype(types)
    if yt.rank < 2 or yt.shape[-2] != xt.shape[-1]:
        raise ShapeError(f"solve's y must be [*, n, k] with n = {xt.shape[-1]} rows, as x "
                         f"{xt} has columns, got {yt}")
    try:
        batch = broadcast_shapes(x_batch, yt.shape[:-2])
    except ShapeError as e:
        raise reworded(e, f"the batch dims of solve's x {xt} and y {yt} do not "
                          "broadcast") from None
    return TensorType(xt.dtype, batch + yt.shape[-2:])


def _solve_kernel(x, y):
    """np.linalg.solve, which reads y as a batch of matrices only from rank 3 and
    does not broadcast a single matrix y against batched x's: y is broadcast first."""
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = np.broadcast_to(x, batch + x.shape[-2:])
    y = np.broadcast_to(y, batch + y.shape[-2:])
    return np.linalg.solve(x, y)


def _solve_vjp(b, g, ins, outs):
    """For A X = B: the cotangent of B solves A^T gB = g, and A's is -gB X^T; each is
    summed over the batch dims it was broadcast along."""
    x, y = ins
    gy = b.solve(_mT(b, x), g[0])
    gx = b.neg(b.matmul(gy, outs[0], transpose_y=True))
    return [unbroadcast(b, gx, x.type), unbroadcast(b, gy, y.type)]


def _cholesky_vjp(b, g, ins, outs):
    """For A = L L^T (Murray, 2016): with P the lower triangle of L^T gL whose
    diagonal is halved, S = L^-T P L^-1, and A's cotangent is S's symmetric part."""
    (low,) = outs
    half = b.constant(0.5, low.type.dtype)
    inner = b.matmul(low, g[0], transpose_x=True)
    phi = b.mul(half, b.add(b.tril(inner), b.tril(inner, diagonal=-1)))
    inv = b.inverse(low)
    s = b.matmul(b.matmul(inv, phi, transpose_x=True), inv)
    return [b.mul(half, b.add(s, _mT(b, s)))]


def _same_square(what: str):
    def infer(types, attrs):
        (t,) = types
        _square(t, what)
        return t
    return infer


def _decomposition(name, infer, kernel, vjp, doc):
    defop(name, infer, _factoring(name, kernel), arity=1, vjp=vjp, doc=doc)


_decomposition("inverse", _same_square("inverse's x"), np.linalg.inv, _inverse_vjp,
               "inverse(x): the inverse of each float matrix of x ([*, n, n]), same type "
               "as x; a singular matrix is an error. The VJP is -inv^T g inv^T")
defop("det", lambda types, attrs: TensorType(types[0].dtype, _square(types[0], "det's x")),
      lambda x: np.asarray(np.linalg.det(x)), arity=1, vjp=_det_vjp,
      doc="det(x): the determinant of each float matrix of x ([*, n, n]), of type "
          "x.dtype[*]. The VJP, g det inv(x)^T, needs invertible matrices")
defop("slogdet", _slogdet_infer, _slogdet_kernel, arity=1, vjp=_slogdet_vjp,
      doc="slogdet(x): the sign and the log of the absolute determinant of each float "
          "matrix of x ([*, n, n]), stacked as paddle.linalg.slogdet's x.dtype[2, *] "
          "(sign 0 and -inf for a singular matrix). Only log|det| has a gradient, "
          "g inv(x)^T, which needs invertible matrices")
defop("solve", _solve_infer, _factoring("solve", _solve_kernel), arity=2, vjp=_solve_vjp,
      doc="solve(x, y): X with x X = y, for float x [*, n, n] and y [*, n, k] of one "
          "dtype whose batch dims broadcast; the result is [*batch, n, k]. A singular x is "
          "an error")
_decomposition("cholesky", _same_square("cholesky's x"), np.linalg.cholesky, _cholesky_vjp,
               "cholesky(x): the lower triangular L with L L^T = x for each symmetric "
               "positive definite float matrix of x ([*, n, n]; only its lower triangle "
               "is read), same type as x; a matrix that is not positive definite is an "
               "error. The VJP is the symmetric cotangent of Murray's rule")


# ---------------------------------------------------------------- qr, eigh and svd

def _matrices(t: TensorType, what: str) -> tuple:
    """``(batch, m, n)`` of a float ``[*batch, m, n]`` operand."""
    check_kind(t, "float", what)
    if t.rank < 2:
        raise ShapeError(f"{what} must be a matrix or a batch of them ([*, m, n]), got {t}")
    return t.shape[:-2], t.shape[-2], t.shape[-1]


def _fewer(m, n, what: str):
    """min(m, n), the size of a reduced factorization; with symbolic sizes only when
    they are one dim (a symbol could be either)."""
    if m == n:
        return m
    if isinstance(m, int) and isinstance(n, int):
        return min(m, n)
    raise SymbolicShapeError(f"{what}: the factors' size is min({m}, {n}), which is not "
                             "known while tracing; make the matrix's sizes static")


def _eye(b, n, dtype):
    """The identity matrix of static size n, to place a vector on a diagonal."""
    if not isinstance(n, int):
        raise SymbolicShapeError(f"the gradient of a factorization needs its matrix size, "
                                 f"got the symbolic {n}; make the matrix's sizes static")
    return b.constant(np.eye(n), dtype)


def _as_row(b, v):
    """A vector cotangent ``[*, k]`` as ``[*, 1, k]``, to scale the columns of matrices."""
    return b.unsqueeze(v, axis=v.type.rank - 1)


def _as_column(b, v):
    """``[*, k]`` as ``[*, k, 1]``, to scale the rows of matrices."""
    return b.unsqueeze(v, axis=v.type.rank)


def _differences(b, w):
    """``E[i, j] = w[j] - w[i]`` with ones on the diagonal (which the callers' skew
    numerators are zero on), the denominators of the eigen and singular VJPs; repeated
    values make it zero off the diagonal, and the gradient infinite, as in Paddle."""
    n = w.type.shape[-1]
    diff = b.sub(_as_row(b, w), _as_column(b, w))
    return b.add(diff, _eye(b, n, w.type.dtype))


def _skew(b, v):
    return b.sub(v, _mT(b, v))


_QR_MODES = ("reduced", "complete", "r")


def _qr_infer(types, attrs):
    (t,) = types
    batch, m, n = _matrices(t, "qr's x")
    mode = attrs["mode"]
    if mode not in _QR_MODES:
        raise ShapeError(f"qr's mode must be one of {', '.join(_QR_MODES)}, got {mode!r}")
    k = m if mode == "complete" else _fewer(m, n, "qr")
    r = TensorType(t.dtype, batch + (k, n))
    return r if mode == "r" else (TensorType(t.dtype, batch + (m, k)), r)


def _qr_kernel(x, mode):
    out = np.linalg.qr(x, mode=mode)
    return out.astype(x.dtype) if mode == "r" else tuple(a.astype(x.dtype) for a in out)


def _qr_tall_vjp(b, q, r, gq, gr):
    """For x = Q R with x [m, n], m >= n (TensorFlow's QrGrad, after Walter and
    Lehmann 2018): with M = tril(skew(Q^T gQ) + skew(R gR^T)),
    gx = Q gR + (Q M + gQ - Q Q^T gQ) R^-T."""
    qdq = b.matmul(q, gq, transpose_x=True)
    m = b.tril(b.add(_skew(b, qdq), _skew(b, b.matmul(r, gr, transpose_y=True))))
    right = b.add(b.matmul(q, b.sub(m, qdq)), gq)
    return b.add(b.matmul(q, gr), _mT(b, b.solve(r, _mT(b, right))))


def _qr_vjp(b, cts, ins, outs, mode):
    """Reduced QR, and complete QR of a wide or square x (where it is the same).
    For a wide x = [X Y] (m < n), R = [U V] with X = Q U square: X's cotangent is the
    square rule's with gQ + Y gV^T, and Y's is Q gV. Paddle has no gradient for
    mode 'r' (Q is not kept) or for a complete Q of a tall x (its last m - n columns
    are not determined by x), and irflow raises there too."""
    (x,) = ins
    m, n = x.type.shape[-2:]
    if mode == "r":
        raise ShapeError("qr: mode='r' has no gradient (Q is not kept), as in Paddle; "
                         "use mode='reduced' to differentiate R")
    if mode == "complete" and not (isinstance(m, int) and isinstance(n, int) and m <= n):
        raise ShapeError(f"qr: mode='complete' has no gradient for a matrix of {m} rows "
                         f"and {n} columns (more rows than columns), as in Paddle: Q's "
                         "last columns are not determined by x; use mode='reduced'")
    (q, r), (gq, gr) = outs, cts
    if m == n or (isinstance(m, int) and isinstance(n, int) and m > n):
        return [_qr_tall_vjp(b, q, r, gq, gr)]
    rank = x.type.rank
    last = rank - 1

    def columns(v, start, stop):
        return b.slice(v, axes=(last,), starts=(start,), stops=(stop,))

    y, gv = columns(x, m, n), columns(gr, m, n)
    gx = _qr_tall_vjp(b, q, columns(r, 0, m), b.add(gq, b.matmul(y, gv, transpose_y=True)),
                      columns(gr, 0, m))
    return [b.concat(gx, b.matmul(q, gv), axis=last)]


defop("qr", _qr_infer, _factoring("qr", _qr_kernel), arity=1, attrs={"mode": "reduced"},
      vjp=_qr_vjp,
      doc="qr(x) {mode}: the QR factorization of each float matrix of x ([*, m, n]), as "
          "paddle.linalg.qr: with k = min(m, n), mode 'reduced' (default) gives Q "
          "[*, m, k] with orthonormal columns and the upper triangular R [*, k, n]; "
          "'complete' gives Q [*, m, m] and R [*, m, n]; 'r' gives only the reduced R. "
          "The VJP is defined for 'reduced', and for 'complete' when m <= n")


def _eigh_infer(types, attrs):
    (t,) = types
    batch = _square(t, "eigh's x")
    if attrs["UPLO"] not in ("L", "U"):
        raise ShapeError(f"eigh's UPLO must be 'L' or 'U', got {attrs['UPLO']!r}")
    return TensorType(t.dtype, batch + t.shape[-1:]), t


def _eigh_kernel(x, UPLO):
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return w.astype(x.dtype), v.astype(x.dtype)


def _eigh_vjp(b, cts, ins, outs, UPLO):
    """For x = V diag(w) V^T: gx = V (diag(gw) + skew(V^T gV) / 2E) V^T with
    E[i, j] = w[j] - w[i], the symmetric gradient Paddle gives (x is taken as
    symmetric, whichever triangle was read)."""
    (w, v), (gw, gv) = outs, cts
    half = b.constant(0.5, w.type.dtype)
    inner = b.div(b.mul(half, _skew(b, b.matmul(v, gv, transpose_x=True))),
                  _differences(b, w))
    inner = b.add(inner, b.mul(_as_row(b, gw), _eye(b, w.type.shape[-1], w.type.dtype)))
    return [b.matmul(b.matmul(v, inner), v, transpose_y=True)]


defop("eigh", _eigh_infer, _factoring("eigh", _eigh_kernel), arity=1, attrs={"UPLO": "L"},
      vjp=_eigh_vjp,
      doc="eigh(x) {UPLO}: the eigenvalues (ascending, [*, n]) and the orthonormal "
          "eigenvectors (columns, [*, n, n]) of each symmetric float matrix of x "
          "([*, n, n]), reading only its lower ('L', default) or upper ('U') triangle. "
          "The VJP is the symmetric one; repeated eigenvalues make it infinite")


def _svd_infer(types, attrs):
    (t,) = types
    batch, m, n = _matrices(t, "svd's x")
    k = _fewer(m, n, "svd")
    rows, cols = (m, n) if attrs["full_matrices"] else (k, k)
    return (TensorType(t.dtype, batch + (m, rows)), TensorType(t.dtype, batch + (k,)),
            TensorType(t.dtype, batch + (cols, n)))


def _svd_kernel(x, full_matrices):
    return tuple(a.astype(x.dtype) for a in np.linalg.svd(x, full_matrices=full_matrices))


def _svd_vjp(b, cts, ins, outs, full_matrices):
    """For x = U diag(S) VH, of the reduced factors (Townsend 2016):
    gx = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] VH
         + (I - U U^T) gU S^-1 VH + U S^-1 gV^T (I - V V^T),
    with E[i, j] = S[j]^2 - S[i]^2; the last two terms vanish for a square x.
    With full_matrices, the columns of U (rows of VH) beyond min(m, n), which x does
    not determine, are dropped with their cotangents, as Paddle does."""
    (x,) = ins
    m, n = x.type.shape[-2:]
    u, s, vh = outs
    gu, gs, gvh = cts
    k = s.type.shape[-1]
    if full_matrices:
        last = x.type.rank - 1
        u, gu = (b.slice(t, axes=(last,), starts=(0,), stops=(k,)) for t in (u, gu))
        vh, gvh = (b.slice(t, axes=(last - 1,), starts=(0,), stops=(k,)) for t in (vh, gvh))
    v, gv = _mT(b, vh), _mT(b, gvh)
    row, column = _as_row(b, s), _as_column(b, s)
    uhgu = _skew(b, b.matmul(u, gu, transpose_x=True))
    vhgv = _skew(b, b.matmul(v, gv, transpose_x=True))
    inner = b.div(b.add(b.mul(uhgu, row), b.mul(column, vhgv)),
                  _differences(b, b.mul(s, s)))
    inner = b.add(inner, b.mul(_as_row(b, gs), _eye(b, k, s.type.dtype)))
    gx = b.matmul(b.matmul(u, inner), vh)
    if m != k:
        gu_s = b.div(gu, row)
        away = b.sub(gu_s, b.matmul(u, b.matmul(u, gu_s, transpose_x=True)))
        gx = b.add(gx, b.matmul(away, vh))
    if n != k:
        gv_s = b.div(gv, row)
        away = b.sub(gv_s, b.matmul(v, b.matmul(v, gv_s, transpose_x=True)))
        gx = b.add(gx, b.matmul(u, away, transpose_y=True))
    return [gx]


defop("svd", _svd_infer, _factoring("svd", _svd_kernel), arity=1,
      attrs={"full_matrices": False}, vjp=_svd_vjp,
      doc="svd(x) {full_matrices}: the singular value decomposition x = U diag(S) VH of "
          "each float matrix of x ([*, m, n]), as paddle.linalg.svd: with k = min(m, n), "
          "U [*, m, k], S [*, k] (descending) and VH [*, k, n], or U [*, m, m] and VH "
          "[*, n, n] with `full_matrices`. The VJP uses the reduced factors; repeated "
          "singular values make it infinite")


# ---------------------------------------------------------------- lu

def _lu_infer(types, attrs):
    (t,) = types
    batch, m, n = _matrices(t, "lu's x")
    k = _fewer(m, n, "lu")
    return (t, TensorType(dtypes.int32, batch + (k,)), TensorType(dtypes.int32, batch),
            TensorType(t.dtype, batch + (m, m)))


def _swap_rows(a, rows, i: int, j):
    """Swap row i with row j[b] of each matrix b of the batch `a`."""
    kept = a[rows, i].copy()
    a[rows, i] = a[rows, j]
    a[rows, j] = kept


def _lu_kernel(x):
    """LAPACK's getrf with partial pivoting, unblocked: at each step the row holding
    the first largest |value| of the column (idamax's choice) is swapped up, the
    column below is scaled by the pivot's reciprocal and the rest updated. A zero
    pivot is skipped (the column is left unscaled) and recorded, 1-based, in info."""
    m, n = x.shape[-2:]
    a = np.array(x, copy=True).reshape(-1, m, n)
    count, k = a.shape[0], min(m, n)
    rows = np.arange(count)
    pivots = np.zeros((count, k), np.int32)
    infos = np.zeros(count, np.int32)
    order = np.tile(np.arange(m), (count, 1))
    for j in range(k):
        p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        _swap_rows(a, rows, j, p)
        _swap_rows(order, rows, j, p)
        pivot = a[:, j, j]
        zero = pivot == 0
        infos[zero & (infos == 0)] = j + 1
        scale = np.where(zero, 1, 1 / np.where(zero, 1, pivot)).astype(x.dtype)
        a[:, j + 1:, j] *= scale[:, None]
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    permutation = np.zeros((count, m, m), x.dtype)
    permutation[rows[:, None], order, np.arange(m)] = 1
    batch = x.shape[:-2]
    return (a.reshape(x.shape), pivots.reshape(batch + (k,)), infos.reshape(batch),
            permutation.reshape(batch + (m, m)))


def _lu_square_cotangent(b, lower, upper, g, less_lower=None, less_upper=None):
    """A = L U with square L and U: gA = L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T,
    since d(LU) = dL U + L dU gives L^-1 dA U^-1 = L^-1 dL + dU U^-1 (strictly lower
    plus upper); gL and gU are g's strictly lower and upper parts. `less_lower` and
    `less_upper` are taken from L^T gL and gU U^T first (a non-square x's terms)."""
    lower_term = b.matmul(lower, b.tril(g, diagonal=-1), transpose_x=True)
    upper_term = b.matmul(b.triu(g, diagonal=0), upper, transpose_y=True)
    if less_lower is not None:
        lower_term = b.sub(lower_term, less_lower)
    if less_upper is not None:
        upper_term = b.sub(upper_term, less_upper)
    middle = b.add(b.tril(lower_term, diagonal=-1), b.triu(upper_term, diagonal=0))
    left = b.solve(_mT(b, lower), middle)
    return _mT(b, b.solve(upper, _mT(b, left)))


def _lu_vjp(b, cts, ins, outs):
    """x = P A, A = L U, with gL and gU the strictly lower and upper parts of the
    packed cotangent, and gx = P gA. A wide A = L [U1 U2] adds U2 = L^-1 A2: gA2 =
    L^-T gU2, and gL less L^-T gU2 U2^T. A tall A = [L1; L2] U adds L2 = A2 U^-1:
    gA2 = gL2 U^-T, and gU less L2^T gL2 U^-T. Both then take the square rule."""
    (x,) = ins
    m, n = x.type.shape[-2:]
    packed, _, _, permutation = outs
    g = cts[0]
    rows, cols = x.type.rank - 2, x.type.rank - 1
    k = _fewer(m, n, "lu")

    def part(v, axis, start, stop):
        return b.slice(v, axes=(axis,), starts=(start,), stops=(stop,))

    unit = _eye(b, k, x.type.dtype)
    if m == n:
        lower = b.add(b.tril(packed, diagonal=-1), unit)
        ga = _lu_square_cotangent(b, lower, b.triu(packed, diagonal=0), g)
    elif m < n:
        square, g_square = part(packed, cols, 0, m), part(g, cols, 0, m)
        lower = b.add(b.tril(square, diagonal=-1), unit)
        u2, g_u2 = part(packed, cols, m, n), part(g, cols, m, n)
        g_a2 = b.solve(_mT(b, lower), g_u2)
        ga1 = _lu_square_cotangent(b, lower, b.triu(square, diagonal=0), g_square,
                                   less_lower=b.matmul(g_u2, u2, transpose_y=True))
        ga = b.concat(ga1, g_a2, axis=cols)
    else:
        square, g_square = part(packed, rows, 0, n), part(g, rows, 0, n)
        lower, upper = b.add(b.tril(square, diagonal=-1), unit), b.triu(square, diagonal=0)
        l2, g_l2 = part(packed, rows, n, m), part(g, rows, n, m)
        g_a2 = _mT(b, b.solve(upper, _mT(b, g_l2)))
        ga1 = _lu_square_cotangent(b, lower, upper, g_square,
                                   less_upper=b.matmul(l2, g_l2, transpose_x=True))
        ga = b.concat(ga1, g_a2, axis=rows)
    return [b.matmul(permutation, ga)]


defop("lu", _lu_infer, _lu_kernel, arity=1, vjp=_lu_vjp,
      doc="lu(x): the LU factorization with partial pivoting of each float matrix of x "
          "([*, m, n], k = min(m, n)), as paddle.linalg.lu and LAPACK's getrf: the "
          "packed LU [*, m, n] (L's strict lower part, its unit diagonal implied, and U), "
          "the 1-based int32 pivots [*, k] (row j was swapped with row pivots[j] - 1), "
          "the int32 infos [*] (the 1-based index of the first zero pivot, 0 if none) "
          "and the permutation matrix P [*, m, m] with x = P L U. The VJP is that of "
          "the packed LU")
