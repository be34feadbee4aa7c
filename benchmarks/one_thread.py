"""What a benchmark does before NumPy loads (call `prepare()` first): one thread for
OpenMP, OpenBLAS and MKL; with `pin`, the process on one core; and
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset, by re-executing the script without them
(a work-around for old OpenBLAS builds that halves a current NumPy's SGEMM: it must
be gone before any BLAS loads)."""
from __future__ import annotations

import os
import sys

OLD_OPENBLAS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def prepare(pin: bool = True) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    if any(v in os.environ for v in OLD_OPENBLAS):
        for v in OLD_OPENBLAS:
            os.environ.pop(v, None)
        os.execv(sys.executable, [sys.executable, *sys.argv])
