"""NumPy's own BLAS, called from native runs: the products below the generated GEMM's
thresholds.

A fused op's anchor product too small for the generated GEMM (`gemm.MIN_WORK`: a
training step's ``[256, 256] @ [256, 10]``) runs NumPy's matmul, which calls its
BLAS's ``cblas_sgemm``. In a native run (`irflow.codegen.llvm.sequence`) the
product is that same call, made from native code (`sgemm_call`), so the step needs
no Python: the run takes the address of the function NumPy itself calls.

That function is found where NumPy's wheels put their BLAS (scipy-openblas, in
``numpy.libs`` on Linux and Windows, ``numpy/.dylibs`` on macOS), already loaded by
NumPy; a NumPy built against another BLAS has none, and its products stay NumPy's
steps. The search runs once per process (`host_sgemm`).
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numpy as np

from ..native import Array, Call

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS's enumerations


@functools.lru_cache(maxsize=1)
def host_sgemm() -> ctypes._CFuncPtr | None:
    """NumPy's ``cblas_sgemm`` (64-bit integers), or None where NumPy's BLAS is not a
    scipy-openblas of 64-bit integers found loaded."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (KeyError, TypeError, ValueError):
        return None
    if blas.get("name") != "scipy-openblas" or \
            "USE64BITINT" not in blas.get("openblas configuration", ""):
        return None
    package = Path(np.__file__).parent
    for library in [*package.parent.glob("numpy.libs/libscipy_openblas64_*"),
                    *package.glob(".dylibs/libscipy_openblas64_*")]:
        try:
            return ctypes.CDLL(str(library)).scipy_cblas_sgemm64_
        except (OSError, AttributeError):
            continue
    return None


def sgemm_call(sizes: tuple[int, int, int], trans_a: bool, trans_b: bool, a: Array,
               b: Array, c: Array) -> Call | None:
    """The call of NumPy's ``cblas_sgemm`` computing ``C = A @ B`` of C-contiguous
    float32 matrices, ``A`` given transposed (``[K, M]``) if `trans_a`, ``B`` if
    `trans_b`, for the static `sizes` ``(M, N, K)``; None without that function."""
    sgemm = host_sgemm()
    if sgemm is None:
        return None
    m, n, k = sizes
    return Call(sgemm, (ROW_MAJOR, TRANS if trans_a else NO_TRANS,
                        TRANS if trans_b else NO_TRANS, m, n, k, 1.0, a, m if trans_a else k,
                        b, k if trans_b else n, 0.0, c, n))
