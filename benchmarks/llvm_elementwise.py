"""Elementwise chains as one LLVM kernel against NumPy eager and irflow's NumPy
interpreter (run by hand; medians of repeated runs, one thread).

    python benchmarks/llvm_elementwise.py [--rows 4096] [--cols 1024] [--repeat 15]

Workloads, float32 [rows, cols] with a [cols] weight and bias:
- ``gelu_tanh``: h = x*w + b; 0.5 h (1 + tanh(0.7978845608 (h + 0.044715 h^3)))
- ``gelu_erf``:  h = x*w + b; 0.5 h (1 + erf(h / sqrt(2)))  (NumPy has no erf: the
  natural NumPy is a ufunc of math.erf, as irflow's interpreter kernel is)
- ``sigmoid_mul``: h = x*w + b; h * sigmoid(h)  (SiLU)

Prints median seconds, the ratio to NumPy eager and the peak of NumPy-allocated
memory per call (tracemalloc) for each system. The first call of the kernel, which
compiles it (or loads it from the disk cache), is timed separately.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import time
import tracemalloc

for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # they slow a current NumPy
    os.environ.pop(_var, None)

import numpy as np  # noqa: E402

from irflow.codegen import compile_plan  # noqa: E402
from irflow.codegen.llvm import ElementwiseFunction  # noqa: E402
from irflow.ir import TensorType, function  # noqa: E402

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu_tanh_ir(b, x, w, c):
    f = lambda v: b.constant(v, "float32")  # noqa: E731
    h = b.add(b.mul(x, w), c)
    inner = b.mul(f(0.7978845608), b.add(h, b.mul(f(0.044715), b.mul(h, b.mul(h, h)))))
    return b.mul(b.mul(f(0.5), h), b.add(f(1.0), b.tanh(inner)))


def gelu_tanh_np(x, w, c):
    h = x * w + c
    return 0.5 * h * (1 + np.tanh(np.float32(0.7978845608) * (h + np.float32(0.044715) * h ** 3)))


def gelu_erf_ir(b, x, w, c):
    f = lambda v: b.constant(v, "float32")  # noqa: E731
    h = b.add(b.mul(x, w), c)
    return b.mul(b.mul(f(0.5), h), b.add(f(1.0), b.erf(b.mul(h, f(1 / math.sqrt(2))))))


def gelu_erf_np(x, w, c):
    h = x * w + c
    return 0.5 * h * (1 + _erf(h * np.float32(1 / math.sqrt(2))).astype(np.float32))


def silu_ir(b, x, w, c):
    h = b.add(b.mul(x, w), c)
    return b.mul(h, b.sigmoid(h))


def silu_np(x, w, c):
    h = x * w + c
    return h / (1 + np.exp(-h))


WORKLOADS = {"gelu_tanh": (gelu_tanh_ir, gelu_tanh_np), "gelu_erf": (gelu_erf_ir, gelu_erf_np),
             "sigmoid_mul": (silu_ir, silu_np)}


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    w = rng.standard_normal(args.cols).astype(np.float32)
    c = rng.standard_normal(args.cols).astype(np.float32)
    types = [TensorType("f32", ["N", args.cols]), TensorType("f32", [args.cols]),
             TensorType("f32", [args.cols])]
    print(f"float32 [{args.rows}, {args.cols}], one thread, median of {args.repeat}")
    print(f"{'workload':<12} {'system':<22} {'seconds':>9} {'/ numpy':>8} {'peak MB':>8}")
    for name, (ir_body, numpy_fn) in WORKLOADS.items():
        fn = function(name, types, ir_body)
        start = time.perf_counter()
        kernel = ElementwiseFunction(fn)
        first = time.perf_counter() - start
        plan = compile_plan(fn)
        repeat = args.repeat if name != "gelu_erf" else 3
        systems = {"numpy eager": lambda: numpy_fn(x, w, c),
                   "irflow interpreter": lambda: plan(x, w, c),
                   "irflow llvm": lambda: kernel(x, w, c)}
        base = None
        for system, call in systems.items():
            seconds = median_time(call, repeat)
            base = base or seconds
            print(f"{name:<12} {system:<22} {seconds:9.4f} {seconds / base:8.3f} "
                  f"{peak_mb(call):8.1f}")
        error = np.max(np.abs(kernel(x, w, c)[0] - numpy_fn(x, w, c)))
        print(f"{name:<12} compile (first call) {first:.3f} s; max |llvm - numpy| {error:.2e}")


if __name__ == "__main__":
    main()
