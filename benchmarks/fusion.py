"""Does fusion pay on the NumPy executor? Each workload compiled without and with the
``fuse`` pass (the default pipeline has it), side by side in one run; run by hand:

    PYTHONPATH=. python benchmarks/fusion.py            # the table
    PYTHONPATH=. python benchmarks/fusion.py --quick    # smaller shapes, fewer runs

Prints the median CPU time of a call (after warm-up) for the default pipeline without
``fuse`` and with it, their ratio (below 1: fusion is faster),
and the kernels each program runs (ops outside fused bodies that are not constants,
views or terminators). The fused kernels run on the executor by the `fused` op's
evaluator, which executes the body on whole arrays (in blocks that stay in cache)
and writes each op's result into a dying temporary of its own where it can; the
unfused program runs its kernels into the executor's arena. So the comparison is
the interpreter's semantics at NumPy speed both ways; the LLVM backend is what
turns the kernels into loops.
"""
import argparse
import os
import statistics
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import irflow as paddle  # noqa: E402
from irflow import nn  # noqa: E402
from irflow.ir.registry import lookup  # noqa: E402
from irflow.ir.traits import Terminator, View  # noqa: E402
from irflow.passes import DEFAULT_PIPELINE, INFERENCE_PIPELINE  # noqa: E402

F = paddle.nn.functional


class LayerNormGelu(nn.Layer):
    def __init__(self, width: int, approximate: bool):
        super().__init__()
        self.w = self.create_parameter([width])
        self.b = self.create_parameter([width])
        self.ln = nn.LayerNorm(width)
        self.approximate = approximate

    def forward(self, x):
        return self.ln(x + F.gelu(x * self.w + self.b, approximate=self.approximate))


class Softmax(nn.Layer):
    def forward(self, x):
        return F.softmax(x, -1)


class Chain(nn.Layer):
    """A deep elementwise chain: 16 cheap ops."""

    def forward(self, x):
        for _ in range(4):
            x = paddle.tanh(x * 0.5 + 0.25) - x * 0.125
        return x


class MLP(nn.Layer):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return x


class ConvBNReLU(nn.Layer):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2D(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2D(channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def kernels(compiled) -> int:
    count = 0
    for op in compiled.ir.main.block.ops:
        opdef = lookup(op.name)
        if op.name != "const" and not opdef.has(Terminator) and not opdef.has(View):
            count += 1
    return count


def interleaved_medians(calls, runs: int) -> list[float]:
    """The median CPU time of each of `calls` (one thread: other processes on the
    machine count less than in wall time), run in turns (A, B, A, B...) after a
    warm-up, so that the machine's drift and other load fall on both alike."""
    for call in calls:
        call()
        call()
    times = [[] for _ in calls]
    for _ in range(runs):
        for call, spent in zip(calls, times):
            start = time.process_time()
            call()
            spent.append(time.process_time() - start)
    return [statistics.median(spent) for spent in times]


def compiled(layer, shape, pipeline, freeze=False):
    spec = [paddle.static.InputSpec(shape, "float32")]
    return paddle.compile(layer, input_spec=spec, pipeline=pipeline, freeze=freeze)


def without_fuse(pipeline) -> tuple:
    return tuple(p for p in pipeline if p != "fuse")


def inference(name, layer, shape, runs, freeze=False):
    layer.eval()
    x = paddle.randn(shape)
    base = INFERENCE_PIPELINE if freeze else DEFAULT_PIPELINE
    fns = [compiled(layer, shape, pipeline, freeze) for pipeline in (without_fuse(base), base)]
    with paddle.no_grad():
        times = interleaved_medians([lambda fn=fn: fn(x) for fn in fns], runs)
    return [name, times[0], kernels(fns[0]), times[1], kernels(fns[1])]


def training(name, sizes, batch, runs):
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((batch, sizes[0])).astype("float32"))
    label = paddle.to_tensor(rng.integers(0, sizes[-1], (batch, 1)))
    steps, fns = [], []
    for pipeline in (without_fuse(DEFAULT_PIPELINE), DEFAULT_PIPELINE):
        model = MLP(sizes)
        opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
        fn = compiled(model, [None, sizes[0]], pipeline)

        def step(fn=fn, opt=opt):
            loss = F.cross_entropy(fn(x), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
        steps.append(step)
        fns.append(fn)
    times = interleaved_medians(steps, runs)
    return [name, times[0], kernels(fns[0]), times[1], kernels(fns[1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows_n, runs = (512, 5) if args.quick else (4096, 15)
    rows = [
        inference(f"LayerNorm(x + GELU(x*w + b)) [{rows_n},1024]", LayerNormGelu(1024, False),
                  [rows_n, 1024], max(3, runs // 5)),
        inference(f"same, tanh GELU [{rows_n},1024]", LayerNormGelu(1024, True),
                  [rows_n, 1024], runs),
        inference(f"softmax [{rows_n},1024]", Softmax(), [rows_n, 1024], runs),
        inference(f"16-op elementwise chain [{rows_n},1024]", Chain(), [rows_n, 1024], runs),
        inference("MLP 784-512-256-10, batch 1024", MLP([784, 512, 256, 10]), [1024, 784],
                  runs),
        inference("MLP 784-64-10, batch 1 (latency)", MLP([784, 64, 10]), [1, 784], 200),
        inference("Conv2D+BatchNorm+ReLU [8,16,32,32], frozen", ConvBNReLU(16),
                  [8, 16, 32, 32], runs, freeze=True),
        training("MLP 784-256-10 training step, batch 256", [784, 256, 10], 256, runs),
    ]
    print(f"{'workload':<46} {'unfused':>10} {'fused':>10} {'ratio':>6}  kernels")
    for name, t0, k0, t1, k1 in rows:
        print(f"{name:<46} {t0 * 1e3:>8.3f}ms {t1 * 1e3:>8.3f}ms {t1 / t0:>6.2f}  {k0} -> {k1}")


if __name__ == "__main__":
    main()
