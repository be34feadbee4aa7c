"""Paddle's ``paddle.linalg``: the part irflow provides (norms, matmul, the inverse,
determinants, solves, Cholesky and matrix powers; decompositions such as svd, qr and
eig are not provided yet, and the Paddle runner says so by name)."""
from .tensor.linalg import (cholesky, det, inv, matrix_power, multi_dot, slogdet, solve,
                            triangular_solve)
from .tensor.math import matmul, matrix_norm, norm, vector_norm

__all__ = ["cholesky", "det", "inv", "matmul", "matrix_norm", "matrix_power", "multi_dot",
           "norm", "slogdet", "solve", "triangular_solve", "vector_norm"]
