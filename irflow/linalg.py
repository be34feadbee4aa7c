"""Paddle's ``paddle.linalg``: the part irflow provides (norms and matmul;
decompositions such as svd, qr and inv are not provided yet, and the Paddle runner
says so by name)."""
from .tensor.math import matmul, matrix_norm, norm, vector_norm

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]
