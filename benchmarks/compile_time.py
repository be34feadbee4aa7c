"""First-call time of irflow.compile: conversion, tracing, passes, plan, first run.
Run by hand:

    python benchmarks/compile_time.py

Issue 5 asks for under 0.15 s for an MLP 784-512-256-10 (Paddle's to_static about
0.16 s, jax.jit 0.15 s on this kind of machine) and under 1 s for a 20-layer MLP.
Each measurement builds a fresh model class so that no cache is warm.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import time  # noqa: E402

import irflow as paddle  # noqa: E402
import irflow.nn as nn  # noqa: E402
import irflow.nn.functional as F  # noqa: E402


def make_mlp(sizes):
    class MLP(nn.Layer):
        def __init__(self):
            super().__init__()
            self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i < len(self.layers) - 1:
                    x = F.relu(x)
            return x
    return MLP()


def first_call(sizes, batch=32):
    model = make_mlp(sizes)
    model.eval()
    x = paddle.randn([batch, sizes[0]])
    start = time.perf_counter()
    compiled = paddle.compile(model, input_spec=[paddle.static.InputSpec([None, sizes[0]])])
    compiled(x)
    return time.perf_counter() - start


def main():
    cases = {
        "MLP 784-512-256-10": [784, 512, 256, 10],
        "20-layer MLP (256 wide)": [784] + [256] * 19 + [10],
    }
    first_call([4, 4])  # import-time work (registry, converter) is not the model's
    for name, sizes in cases.items():
        times = sorted(first_call(sizes) for _ in range(5))
        print(f"{name:<26} first call: median {times[2] * 1e3:7.1f} ms, best {times[0] * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
