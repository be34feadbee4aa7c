"""The conv2d kernels (forward, input gradient, filter gradient) on a few shapes;
run by hand, and once more on another checkout to compare:

    PYTHONPATH=. python benchmarks/conv2d.py                 # this checkout
    PYTHONPATH=/path/to/other/checkout python benchmarks/conv2d.py

Median wall time of each registry kernel (`lookup(name).kernel`, the NumPy kernels
every backend runs for conv2d), float32, one thread (the BLAS too), with
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset before NumPy loads.
"""
from benchmarks.one_thread import prepare

prepare(pin=False)

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import irflow  # noqa: E402
from irflow.ir import lookup  # noqa: E402


def geometry(stride=1, padding=1, dilation=1, groups=1):
    pair = lambda v: (v, v)  # noqa: E731
    return dict(stride=pair(stride), padding=(padding,) * 4, dilation=pair(dilation),
                groups=groups)


SHAPES = [
    # (name, x shape, w shape, attributes)
    ("[8,16,32,32] 16->16 3x3 pad 1 (issue 11)", (8, 16, 32, 32), (16, 16, 3, 3), geometry()),
    ("[32,3,32,32] 3->32 3x3 pad 1", (32, 3, 32, 32), (32, 3, 3, 3), geometry()),
    ("[16,64,16,16] 64->64 3x3 stride 2", (16, 64, 16, 16), (64, 64, 3, 3), geometry(2)),
    ("[8,32,32,32] depthwise 3x3", (8, 32, 32, 32), (32, 1, 3, 3), geometry(groups=32)),
    ("[8,32,28,28] 32->64 5x5 dil 2 groups 2", (8, 32, 28, 28), (64, 16, 5, 5),
     geometry(padding=4, dilation=2, groups=2)),
    ("[64,64,8,8] 64->128 1x1", (64, 64, 8, 8), (128, 64, 1, 1), geometry(padding=0)),
]


def median(call, runs: int) -> float:
    call()
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    forward, grad_input, grad_filter = (lookup(name).kernel for name in
                                        ("conv2d", "conv2d_grad_input", "conv2d_grad_filter"))
    print(f"irflow from {os.path.dirname(irflow.__file__)}; numpy {np.__version__}; one thread")
    print("| shape | forward | input gradient | filter gradient |\n|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name, x_shape, w_shape, attrs in SHAPES:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        y = forward(x, w, **attrs)
        g = rng.standard_normal(y.shape).astype(np.float32)
        times = [median(lambda: forward(x, w, **attrs), args.runs),
                 median(lambda: grad_input(g, w, input_hw=x_shape[2:], **attrs), args.runs),
                 median(lambda: grad_filter(x, g, kernel_hw=w_shape[2:], **attrs), args.runs)]
        print(f"| {name} | " + " | ".join(f"{t * 1e3:.3f} ms" for t in times) + " |")


if __name__ == "__main__":
    main()
