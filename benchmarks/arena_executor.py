"""The executor with its arena against the executor before it (kernels allocating
every value), side by side: median time per call, the ratio, and the peak memory a
call allocates. Run by hand:

    PYTHONPATH=. python benchmarks/arena_executor.py            # every workload
    PYTHONPATH=. python benchmarks/arena_executor.py --quick    # fewer repeats
    PYTHONPATH=. python benchmarks/arena_executor.py --baseline REV

The executor before is read from git (``irflow/codegen/executor.py`` at REV, by
default the last commit before buffer planning) and runs the same IR with the same
kernels. One thread each; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset. Times
are CPU time (``time.process_time``), which other processes on a shared machine
inflate less than wall time; samples of the two alternate.
"""
from __future__ import annotations

from benchmarks.one_thread import prepare

prepare(pin=False)

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import irflow as paddle  # noqa: E402
import irflow.nn as nn  # noqa: E402
import irflow.nn.functional as F  # noqa: E402
from irflow.codegen import compile_plan  # noqa: E402

BASELINE = "0897e3f"  # the executor whose kernels allocated every value
ROOT = Path(__file__).resolve().parents[1]


def baseline_executor(rev: str):
    """irflow/codegen/executor.py as it was at `rev`, as a module of this irflow."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:irflow/codegen/executor.py"],
                            check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("irflow.codegen._baseline_executor", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "irflow.codegen"
    exec(compile(source, f"{rev}:irflow/codegen/executor.py", "exec"), module.__dict__)
    return module


# ---------------------------------------------------------------- workloads

def compiled_program(target, *inputs):
    """(the IR function, its arguments) of `target` compiled for `inputs`."""
    compiled = paddle.compile(target)
    compiled(*inputs)
    program = compiled._last
    args = [x.numpy() for x in inputs] + [t._value for t in program.state]
    if program.uses_seed:
        args.append(np.int64(0))
    return program.ir.main, args


def layer_norm_gelu(shape):
    w = paddle.randn([shape[1]])
    b = paddle.randn([shape[1]])
    norm = nn.LayerNorm(shape[1])
    return compiled_program(lambda x: norm(x + F.gelu(x * w + b)), paddle.randn(list(shape)))


def elementwise_chain(shape, depth=24):
    def chain(x):
        for i in range(depth):
            x = [paddle.tanh, paddle.sin, paddle.exp, paddle.cos][i % 4](x * 0.5)
        return x
    return compiled_program(chain, paddle.randn(list(shape)))


def mlp(sizes, batch):
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    model.eval()
    return compiled_program(model, paddle.randn([batch, sizes[0]]))


def training_step(sizes, batch):
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())

    def step(x, labels):
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    labels = paddle.to_tensor(np.random.default_rng(0).integers(0, sizes[-1], (batch, 1)))
    return compiled_program(step, paddle.randn([batch, sizes[0]]), labels)


def converging_loop(shape):
    w = paddle.randn([shape[1], shape[1]]) * (0.5 / shape[1] ** 0.5)
    b = paddle.randn([shape[1]]) * 0.1

    def loop(h):
        diff = paddle.to_tensor(1.0)
        while diff > 1e-4:
            new = paddle.tanh(paddle.matmul(h, w) + b)
            diff = paddle.max(paddle.abs(new - h))
            h = new
        return h
    return compiled_program(loop, paddle.randn(list(shape)))


WORKLOADS = [
    ("LayerNorm(x + GELU(x*w + b)) [4096,1024]", lambda: layer_norm_gelu((4096, 1024))),
    ("elementwise chain of 24 ops [1024,1024]", lambda: elementwise_chain((1024, 1024))),
    ("MLP 784-512-256-10, batch 1024, inference", lambda: mlp([784, 512, 256, 10], 1024)),
    ("MLP 784-256-10, batch 256, training step", lambda: training_step([784, 256, 10], 256)),
    ("while h = tanh(h @ W + b) converges [64,256]", lambda: converging_loop((64, 256))),
    ("small MLP 16-32-4, batch 1, per call", lambda: mlp([16, 32, 4], 1)),
]


# ---------------------------------------------------------------- measuring

def median_times(calls, repeat: int) -> list[float]:
    """The median time of each call, sampled in turns (the order alternating), so
    that a machine speeding up or slowing down during the run favours neither."""
    budgets = [max(1, int(0.02 / _once(call))) for call in calls]  # calls per sample
    samples = [[] for _ in calls]
    for k in range(repeat):
        order = range(len(calls)) if k % 2 == 0 else reversed(range(len(calls)))
        for i in order:
            start = time.process_time()
            for _ in range(budgets[i]):
                calls[i]()
            samples[i].append((time.process_time() - start) / budgets[i])
    return [statistics.median(s) for s in samples]


def _once(call) -> float:
    call()
    start = time.process_time()
    call()
    return max(time.process_time() - start, 1e-7)


def peak_bytes(call) -> int:
    """The most memory one call holds at once beyond what it started with."""
    call()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _time_text(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:9.1f} us"


def _mib(n: int) -> str:
    return f"{n / 2 ** 20:8.2f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 samples instead of 15")
    parser.add_argument("--baseline", default=BASELINE, help="the git revision to compare with")
    args = parser.parse_args()
    repeat = 5 if args.quick else 15
    before = baseline_executor(args.baseline)
    print(f"executor before: {args.baseline}; numpy {np.__version__}; one thread\n")
    header = (f"{'workload':46} {'before':>12} {'arena':>12} {'ratio':>6}   "
              f"{'peak before':>12} {'peak arena':>12} {'arena':>12}")
    print(header)
    print("-" * len(header))
    for name, make in WORKLOADS:
        fn, inputs = make()
        old, new = before.compile_plan(fn), compile_plan(fn)
        for got, want in zip(new(*inputs), old(*inputs)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        t_old, t_new = median_times([lambda: old(*inputs), lambda: new(*inputs)], repeat)
        m_old, m_new = peak_bytes(lambda: old(*inputs)), peak_bytes(lambda: new(*inputs))
        arena = new.memory_plan.arena_bytes
        print(f"{name:46} {_time_text(t_old)} {_time_text(t_new)} {t_new / t_old:6.2f}   "
              f"{_mib(m_old)} {_mib(m_new)} {_mib(arena)}")
    print("\nratio: arena time / time before (< 1 is faster). peak: the most a call "
          "allocates at once (tracemalloc);\nthe arena itself is allocated once per shape "
          "and stays between calls.")


if __name__ == "__main__":
    main()
