"""Paddle's ``paddle.linalg``: norms, matmul, the inverse, determinants, solves,
Cholesky, matrix powers, the QR, LU, symmetric eigen and singular value
decompositions and what they give (pinv, lstsq, matrix_rank, cond), covariance and
correlation matrices; eig and the other decompositions are not provided yet, and the
Paddle runner says so by name."""
from .tensor.covariance import corrcoef, cov
from .tensor.linalg import (cholesky, cond, det, eigh, eigvalsh, inv, lstsq, matrix_power,
                            matrix_rank, multi_dot, pinv, qr, slogdet, solve, svd, svdvals,
                            triangular_solve)
from .tensor.lu import lu, lu_unpack
from .tensor.math import matmul, matrix_norm, norm, vector_norm

__all__ = ["cholesky", "cond", "corrcoef", "cov", "det", "eigh", "eigvalsh", "inv", "lstsq",
           "lu", "lu_unpack", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "triangular_solve", "vector_norm"]
