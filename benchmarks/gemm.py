"""The generated float32 GEMM (`irflow.codegen.llvm.gemm`) against NumPy's matmul
(OpenBLAS) and, when importable, torch.matmul (MKL/oneDNN); run by hand:

    PYTHONPATH=. python benchmarks/gemm.py            # the table
    PYTHONPATH=. python benchmarks/gemm.py --quick    # fewer samples

The shapes are the products of the benchmark rows (an MLP of 784-256-256-10 at
batch 1024, 256 and 64), given as M x K x N, with the layout the training step
calls them in: ``A^T`` is ``x.T @ g`` (A stored [K, M]), ``B^T`` is ``g @ w.T`` (B
stored [N, K]). Each call writes into a preallocated output (``np.matmul(a, b,
out=)``, ``Gemm(a, b, out=)`` through its Python checks, ``torch.matmul(...,
out=)``); calls are interleaved, and the table gives the median of each system's
per-round medians. "anchor" says which of the two a fused op's matmul anchor
runs at that shape (`irflow.codegen.llvm.gemm.anchor_kernels`: NumPy below
`MIN_ROWS` rows or `MIN_WORK` multiply-adds).

It prints the core's float32 FMA peak first (`fma_peak_gflops`), of which the
GF/s column is a fraction. One thread (OMP/OpenBLAS/MKL, torch) and the process
pinned to one core;
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset before NumPy loads (the script
re-executes itself without them), and the BLAS that runs is printed.
"""
from __future__ import annotations

from benchmarks.one_thread import prepare

prepare()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.llvm_backend import blas_report  # noqa: E402
from benchmarks.llvm_elementwise import median_time  # noqa: E402
from irflow.codegen.llvm.gemm import MIN_ROWS, MIN_WORK, Gemm  # noqa: E402

# (M, K, N, A given transposed, B given transposed)
SHAPES = [
    (64, 256, 256, False, False),
    (256, 784, 256, False, False),
    (784, 256, 256, True, False),
    (1024, 784, 512, False, False),
    (1024, 512, 256, False, False),
    (1024, 256, 10, False, False),
    (256, 256, 10, False, False),
    (1024, 256, 784, False, True),
    (1024, 10, 256, False, True),
    (256, 1024, 256, True, False),
    (1, 784, 64, False, False),
    (1, 64, 10, False, False),
]


def systems(m, k, n, trans_a, trans_b, gemms, torch):
    """name -> a call writing the product into a preallocated output."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    A, B = (a.T if trans_a else a), (b.T if trans_b else b)
    out, ours = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
    gemm = gemms[trans_a, trans_b]
    expected = A.astype(np.float64) @ B
    gemm(a, b, out=ours)
    bound = (k + 2) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B)) + 1e-38
    if not (np.abs(ours - expected) <= bound).all():
        raise SystemExit(f"the generated GEMM is wrong at {m}x{k}x{n}")
    calls = {"openblas": lambda: np.matmul(A, B, out=out),
             "ours": lambda: gemm(a, b, out=ours)}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ta, tb = (ta.T if trans_a else ta), (tb.T if trans_b else tb)
        tout = torch.empty((m, n))
        calls["torch"] = lambda: torch.matmul(ta, tb, out=tout)
    return calls


CHAINS = 16  # independent FMA chains: enough to fill two pipes of 4-cycle latency


def fma_peak_gflops(iterations: int = 20_000_000) -> float:
    """The core's float32 FMA throughput: a compiled loop of `CHAINS` independent
    ``llvm.fma.v16f32`` chains (no memory traffic), the best of five runs; what
    the GEMMs' GF/s column is a fraction of."""
    import ctypes
    import time
    from irflow.codegen.llvm.jit import HostTarget, Library
    phis = "".join(f"  %a{k} = phi <16 x float> [%b, %entry], [%n{k}, %loop]\n"
                   for k in range(CHAINS))
    fmas = "".join(f"  %n{k} = call <16 x float> @llvm.fma.v16f32(<16 x float> %a{k}, "
                   f"<16 x float> %b, <16 x float> %b)\n" for k in range(CHAINS))
    sums = "".join(f"  %s{k} = fadd <16 x float> %s{k - 1}, %n{k}\n" for k in range(1, CHAINS))
    text = f"""declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
define float @peak(i64 %n, float %x) {{
entry:
  %v = insertelement <16 x float> undef, float %x, i32 0
  %b = shufflevector <16 x float> %v, <16 x float> undef, <16 x i32> zeroinitializer
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
{phis}{fmas}  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %s0 = fadd <16 x float> %n0, zeroinitializer
{sums}  %r = extractelement <16 x float> %s{CHAINS - 1}, i32 0
  ret float %r
}}
"""
    target = HostTarget()
    library = Library(target, target.compile(text))
    peak = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64, ctypes.c_float)(
        library.address("peak"))
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        peak(iterations, 0.5)
        best = max(best, iterations * CHAINS * 16 * 2 / (time.perf_counter() - start))
    return best / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    torch = None
    if importlib.util.find_spec("torch") is not None:
        import torch
        torch.set_num_threads(1)
    print(f"BLAS: {blas_report()}")
    print(f"float32 FMA peak of this core: {fma_peak_gflops():.0f} GF/s")
    if torch is not None:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} thread")
    gemms = {(ta, tb): Gemm(ta, tb) for ta in (False, True) for tb in (False, True)}
    rounds = 5 if args.quick else 15
    head = f"{'M x K x N':>22} {'openblas':>10} {'ours':>10} {'ratio':>6} {'GF/s':>11}"
    print(head + (f" {'torch':>10}" if torch is not None else "") + "  anchor")
    for m, k, n, trans_a, trans_b in SHAPES:
        calls = systems(m, k, n, trans_a, trans_b, gemms, torch)
        reps = max(5, min(2000, int(2e7 / (m * k * n) * (2 if args.quick else 10))))
        samples = {name: [] for name in calls}
        for _ in range(rounds):
            for name, call in calls.items():
                samples[name].append(median_time(call, reps))
        t = {name: statistics.median(s) for name, s in samples.items()}
        flops = 2 * m * k * n
        label = f"{m}x{k}x{n}" + (" A^T" if trans_a else "") + (" B^T" if trans_b else "")
        anchor = "numpy" if m < MIN_ROWS or m * k * n < MIN_WORK else "ours"
        line = (f"{label:>22} {t['openblas'] * 1e6:8.1f}us {t['ours'] * 1e6:8.1f}us "
                f"{t['ours'] / t['openblas']:6.2f} {flops / t['openblas'] / 1e9:5.0f}/"
                f"{flops / t['ours'] / 1e9:<5.0f}")
        if torch is not None:
            line += f" {t['torch'] * 1e6:8.1f}us"
        print(line + f"  {anchor}", flush=True)


if __name__ == "__main__":
    main()
