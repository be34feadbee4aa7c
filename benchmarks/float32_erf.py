"""The float32 erf of this tree against another version of mathlib32, interleaved
in one process: a compiled erf on [256,256] (in L2) and [1024,1024], and the
issue11 row LayerNorm(x + GELU(x*w + b)) on [4096,1024] against NumPy eager.

    git show <commit>:irflow/codegen/llvm/mathlib32.py > /tmp/mathlib32_old.py
    PYTHONPATH=. taskset -c 1 python benchmarks/float32_erf.py /tmp/mathlib32_old.py [rounds]

Both versions are compiled side by side (`scalar.Math32` swapped while each
compiles, the disk cache off, a fresh default compiler for each model); each round
times every call in alternating order. Prints medians over the rounds.
"""
import importlib.util
import os
import sys
import time

os.environ["IRFLOW_CACHE_DIR"] = ""
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import irflow.codegen.llvm.compiler as compiler_module  # noqa: E402
import irflow.codegen.llvm.scalar as scalar  # noqa: E402
from irflow.codegen.llvm import Compiler, ElementwiseFunction  # noqa: E402
from irflow.ir import TensorType, function  # noqa: E402

import issue11  # noqa: E402


def load_old(path):
    spec = importlib.util.spec_from_file_location("irflow.codegen.llvm.mathlib32_old", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its relative imports resolve in irflow.codegen.llvm
    return module.Math32


def built_with(math32, make):
    new = scalar.Math32
    scalar.Math32 = math32
    compiler_module._default = None
    try:
        return make()
    finally:
        scalar.Math32 = new


def erf_kernel():
    fn = function("f", [TensorType("f32", ["N", "M"])], lambda b, x: b.erf(x))
    return ElementwiseFunction(fn, Compiler(cache_dir=None))


def layer_norm_row():
    """(irflow llvm, numpy eager, inputs); each build has its own model's weights."""
    inputs, calls, _ = issue11.layer_norm_gelu((4096, 1024))
    llvm, eager = calls["irflow llvm"], calls["numpy eager"]
    assert np.allclose(llvm(*inputs), eager(*inputs), rtol=2e-3, atol=2e-3)
    return llvm, eager, inputs


def mean_time(fn, args, n):
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n


def main():
    versions = {"old": load_old(sys.argv[1]), "new": scalar.Math32}
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    big = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32) * 2
    small = big[:256, :256].copy()
    erf = {v: built_with(m, erf_kernel) for v, m in versions.items()}
    rows = {v: built_with(m, layer_norm_row) for v, m in versions.items()}
    eager, ln_inputs = rows["old"][1], rows["old"][2]
    times = {}
    for k in range(rounds):
        order = list(versions) if k % 2 == 0 else list(reversed(versions))
        for v in order:
            times.setdefault(f"erf [256,256] {v}", []).append(
                mean_time(erf[v], (small,), 300) / small.size * 1e9)
            times.setdefault(f"erf [1024,1024] {v}", []).append(
                mean_time(erf[v], (big,), 20) / big.size * 1e9)
        times.setdefault("LN numpy", []).append(mean_time(eager, ln_inputs, 1))
        for v in order:
            times.setdefault(f"LN {v}", []).append(mean_time(rows[v][0], rows[v][2], 3))
    median = {name: float(np.median(t)) for name, t in times.items()}
    for shape in ("[256,256]", "[1024,1024]"):
        print(f"erf {shape}, ns an element: old {median[f'erf {shape} old']:.3f}, "
              f"new {median[f'erf {shape} new']:.3f}")
    numpy_ms = median["LN numpy"] * 1e3
    print(f"LayerNorm(x + GELU) [4096,1024], ms: NumPy eager {numpy_ms:.2f}, " + ", ".join(
        f"{v} {median[f'LN {v}'] * 1e3:.2f} (ratio {median[f'LN {v}'] * 1e3 / numpy_ms:.4f})"
        for v in versions))


if __name__ == "__main__":
    main()
