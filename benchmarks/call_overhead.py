"""Per-call overhead of compiled programs against hand-written NumPy, side by side in
one run; run by hand:

    PYTHONPATH=. python benchmarks/call_overhead.py            # the table
    PYTHONPATH=. python benchmarks/call_overhead.py --quick    # fewer runs

Issue 11 item 3 asks that a batch-1 MLP run within 1.3x of NumPy eager. The rows:
the small MLP 784-64-10 at batch 1 (nearly all overhead), the MLP 784-512-256-10 at
batch 1024 (nearly all BLAS) and, at batch 1, a model with an ``if`` on a tensor
(``if h.mean() > 0``: a ``cond`` whose branches are sub-plans), each under
``backend="numpy"`` and ``backend="llvm"``, called as a user calls them (a Tensor
in, ``no_grad``, a Tensor out). Calls are interleaved in batches; the table gives
the median time per call and the ratio to NumPy eager, one thread each (the BLAS
too). Like `llvm_backend.py`, it unsets ``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE``
before NumPy loads and prints the BLAS kernel that runs.

The script uses only the public API, so it measures another checkout as well:
``PYTHONPATH=/path/to/other/checkout python benchmarks/call_overhead.py``.
"""
import argparse
import os
import statistics
import sys
import time

UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None)]
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import irflow  # noqa: E402
from irflow import nn  # noqa: E402
from irflow.static import InputSpec  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.llvm_backend import blas_report, mlp, numpy_mlp  # noqa: E402

F = nn.functional


class Gated(nn.Layer):
    """An MLP whose activation depends on a tensor: a ``cond`` in the program."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        h = self.fc1(x)
        if h.mean() > 0:
            h = F.relu(h)
        else:
            h = F.tanh(h)
        return self.fc2(h)


def numpy_gated(model):
    w1, b1 = model.fc1.weight.numpy(), model.fc1.bias.numpy()
    w2, b2 = model.fc2.weight.numpy(), model.fc2.bias.numpy()

    def run(x):
        h = x @ w1 + b1
        h = np.maximum(h, 0) if h.mean() > 0 else np.tanh(h)
        return h @ w2 + b2
    return run


def compiled(model, shape, backend):
    model.eval()
    program = irflow.compile(model, input_spec=[InputSpec([None, *shape[1:]], "float32")],
                             backend=backend)

    def run(x):
        with irflow.no_grad():
            return program(x)
    return run


def medians(calls: dict, rounds: int, batch: int) -> dict:
    """Median time per call of each ``name: (fn, argument)``, the candidates
    interleaved in batches of `batch` calls."""
    for fn, arg in calls.values():
        fn(arg)  # warm-up: compile, first touch
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (fn, arg) in calls.items():
            start = time.perf_counter()
            for _ in range(batch):
                fn(arg)
            times[name].append((time.perf_counter() - start) / batch)
    return {name: statistics.median(t) for name, t in times.items()}


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(f"irflow from {os.path.dirname(irflow.__file__)}")
    print(f"unset for the timed runs: {', '.join(UNSET) or 'none was set'}; BLAS: "
          f"{blas_report()}")
    irflow.seed(0)
    small, big, gated = mlp([784, 64, 10]), mlp([784, 512, 256, 10]), Gated()
    rows = [("MLP 784-64-10, batch 1", small, [1, 784], numpy_mlp(small), 200),
            ("MLP 784-512-256-10, batch 1024", big, [1024, 784], numpy_mlp(big), 1),
            ("tensor-dependent if, batch 1", gated, [1, 784], numpy_gated(gated), 200)]
    print("| workload | NumPy eager | irflow, backend=\"numpy\" | irflow, backend=\"llvm\" |")
    print("|---|---|---|---|")
    for name, model, shape, numpy_fn, batch in rows:
        array = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        tensor = irflow.to_tensor(array)  # NumPy eager takes the array, irflow a Tensor
        calls = {"numpy": (numpy_fn, array),
                 "irflow numpy": (compiled(model, shape, "numpy"), tensor),
                 "irflow llvm": (compiled(model, shape, "llvm"), tensor)}
        rounds = (20 if args.quick else 100) if batch > 1 else (5 if args.quick else 31)
        found = medians(calls, rounds, batch)
        base = found["numpy"]
        print(f"| {name} | " + " | ".join(f"{_time(t)} ({t / base:.2f})"
                                          for t in found.values()) + " |")


if __name__ == "__main__":
    main()
