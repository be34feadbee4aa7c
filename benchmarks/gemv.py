"""Float32 products of a few rows (`irflow.codegen.llvm.gemv`, what a batch-1 call
compiled whole runs) against NumPy's matmul (OpenBLAS); run by hand:

    PYTHONPATH=. python benchmarks/gemv.py            # the table
    PYTHONPATH=. python benchmarks/gemv.py --quick    # fewer samples

Each product is called as a whole call runs it: one native function of the product
alone (`WholeSpec`, sizes static, no checks), through ctypes (about 0.3 µs of
each time), against ``np.matmul(a, b, out=)``. B is given twice: starting on a
cache line, and 32 bytes into one (as NumPy often places its arrays), since a row
of B that starts mid-line costs a vector load two lines. Interleaved; the median of
each system's per-round medians.

One thread (OMP/OpenBLAS) and the process pinned to one core; OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are unset before NumPy loads (the script re-executes itself
without them), and the BLAS that runs is printed.
"""
from __future__ import annotations

from benchmarks.one_thread import prepare

prepare()

import argparse  # noqa: E402
import statistics  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.llvm_backend import blas_report  # noqa: E402
from benchmarks.llvm_elementwise import median_time  # noqa: E402
from irflow.codegen.llvm import Compiler  # noqa: E402
from irflow.codegen.llvm.whole import Product, WholeSpec  # noqa: E402

SHAPES = [(1, 784, 64), (1, 64, 10), (1, 784, 512), (2, 784, 64), (4, 784, 64),
          (7, 256, 256)]


def at_offset(array: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `array` whose data starts `offset` bytes after a cache line."""
    memory = np.empty(array.nbytes + 128, np.uint8)
    start = -memory.ctypes.data % 64 + offset
    copy = memory[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    print(f"BLAS: {blas_report()}")
    compiler = Compiler(cache_dir=None)
    rng = np.random.default_rng(0)
    rounds = 5 if args.quick else 15
    print(f"{'M x K x N':>12} {'B at':>5} {'numpy':>9} {'ours':>9} {'ratio':>6}")
    for m, k, n in SHAPES:
        fn = compiler.code(WholeSpec((), 3, (), (Product(0, 1, 2, m, k, n),))).function(3)
        a = rng.standard_normal((m, k)).astype(np.float32)
        for offset in (0, 32):
            b = at_offset(rng.standard_normal((k, n)).astype(np.float32), offset)
            out, ours = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
            pointers = (a.ctypes.data, b.ctypes.data, ours.ctypes.data)
            fn(*pointers)
            bound = (k + 2) * 2.0 ** -24 * (np.abs(a.astype(np.float64)) @ np.abs(b)) + 1e-38
            if not (np.abs(ours - a.astype(np.float64) @ b) <= bound).all():
                raise SystemExit(f"the few-row product is wrong at {m}x{k}x{n}")
            calls = {"numpy": lambda: np.matmul(a, b, out=out), "ours": lambda: fn(*pointers)}
            reps = max(20, min(2000, int(2e7 / (m * k * n))))
            samples = {name: [] for name in calls}
            for _ in range(rounds):
                for name, call in calls.items():
                    samples[name].append(median_time(call, reps))
            t = {name: statistics.median(s) for name, s in samples.items()}
            print(f"{m}x{k}x{n:<5} {offset:>4}B {t['numpy'] * 1e6:7.2f}us "
                  f"{t['ours'] * 1e6:7.2f}us {t['ours'] / t['numpy']:6.2f}", flush=True)


if __name__ == "__main__":
    main()
