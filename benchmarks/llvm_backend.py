"""The LLVM backend against the NumPy backend and NumPy eager, side by side in one
run; run by hand:

    PYTHONPATH=. python benchmarks/llvm_backend.py            # the table
    PYTHONPATH=. python benchmarks/llvm_backend.py --quick    # fewer runs
    PYTHONPATH=. python benchmarks/llvm_backend.py --compile  # compile times too

Each workload runs as hand-written NumPy (eager, the natural way: ``scipy.special.erf``
for GELU where SciPy is installed), as ``irflow.compile(..., backend="numpy")`` (the
executor on the registry's NumPy kernels) and as ``backend="llvm"``, and with PyTorch
and JAX when they are installed. Calls are interleaved, and the table gives median
wall times and ratios to NumPy eager, one thread each (the BLAS too), and the peak
traced memory of a call (tracemalloc sees NumPy's allocations).

OpenBLAS reads ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` when it loads; some
machines set them (a work-around for old OpenBLAS builds) and they halve a current
NumPy's SGEMM, so this script unsets both before NumPy is imported, and prints the
BLAS kernel that runs (threadpoolctl if installed, else OpenBLAS's own report).
``--compile`` measures compiling the small MLP in fresh processes: cold (an empty
kernel cache) and warm (the same cache again).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None)]
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import irflow  # noqa: E402
from irflow import nn  # noqa: E402
from irflow.static import InputSpec  # noqa: E402
from benchmarks.fusion import LayerNormGelu  # noqa: E402

F = irflow.nn.functional


def blas_report() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return _openblas_corename()
    return "; ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
                     f"threads={i.get('num_threads')}" for i in threadpool_info()
                     if i.get("user_api") == "blas") or "no BLAS found"


def _openblas_corename() -> str:
    import ctypes
    import glob
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                                  "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return f"OpenBLAS core {fn().decode()} ({os.path.basename(path)})"
    return "BLAS kernel unknown (install threadpoolctl)"


# ---------------------------------------------------------------- the workloads

def mlp(widths):
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def numpy_layer_norm_gelu(model):
    try:
        from scipy.special import erf
    except ImportError:
        from irflow.ir.registry import lookup
        erf = lookup("erf").kernel
    w, b = model.w.numpy(), model.b.numpy()
    gamma, beta = model.ln.weight.numpy(), model.ln.bias.numpy()

    def run(x):
        h = x * w + b
        s = x + 0.5 * h * (1 + erf(h / np.float32(np.sqrt(2))))
        mu = s.mean(-1, keepdims=True)
        var = ((s - mu) ** 2).mean(-1, keepdims=True)
        return (s - mu) / np.sqrt(var + np.float32(1e-5)) * gamma + beta
    return run


def numpy_mlp(model):
    weights = [(m.weight.numpy(), m.bias.numpy()) for m in model if isinstance(m, nn.Linear)]

    def run(x):
        for k, (w, b) in enumerate(weights):
            x = x @ w + b
            if k < len(weights) - 1:
                x = np.maximum(x, 0)
        return x
    return run


def torch_version(model, kind):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    if kind == "mlp":
        layers = []
        for m in model:
            if isinstance(m, nn.Linear):
                lin = torch.nn.Linear(*m.weight.shape)
                lin.weight.data = torch.from_numpy(m.weight.numpy().T.copy())
                lin.bias.data = torch.from_numpy(m.bias.numpy())
                layers.append(lin)
            else:
                layers.append(torch.nn.ReLU())
        net = torch.compile(torch.nn.Sequential(*layers))
    else:
        w, b = torch.from_numpy(model.w.numpy()), torch.from_numpy(model.b.numpy())
        ln = torch.nn.LayerNorm(w.shape[0])
        net = torch.compile(lambda x: ln(x + torch.nn.functional.gelu(x * w + b)))

    def run(x):
        with torch.no_grad():
            return net(torch.from_numpy(x)).numpy()
    return run


def jax_version(numpy_fn):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    del jnp
    fn = jax.jit(numpy_fn)
    return lambda x: fn(x).block_until_ready()


def tensor_once():
    """A converter giving each input array's Tensor, made on first use: a model's
    inputs come as Tensors (NumPy eager takes the array, torch.from_numpy shares it),
    so the timed call does not copy the input."""
    made = {}  # id -> (the array, kept so its id stays its own; its Tensor)

    def tensor(x):
        if id(x) not in made:
            made[id(x)] = (x, irflow.to_tensor(x))
        return made[id(x)][1]
    return tensor


def irflow_version(model, shape, backend):
    model.eval()
    compiled = irflow.compile(model, input_spec=[InputSpec([None, *shape[1:]], "float32")],
                              backend=backend)

    t = tensor_once()

    def run(x):
        with irflow.no_grad():
            return compiled(t(x))
    return run


# ---------------------------------------------------------------- timing

def interleaved_medians(calls: dict, x, runs: int) -> dict:
    for fn in calls.values():
        fn(x)  # warm-up: compile, first-touch
    times = {name: [] for name in calls}
    for _ in range(runs):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn(x)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def peak_mb(fn, x) -> float:
    tracemalloc.start()
    fn(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def row(name, model, shape, numpy_fn, kind, runs) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    calls = {"numpy eager": numpy_fn,
             "irflow numpy": irflow_version(model, shape, "numpy"),
             "irflow llvm": irflow_version(model, shape, "llvm")}
    for label, fn in (("torch.compile", torch_version(model, kind)),
                      ("jax.jit", jax_version(numpy_fn))):
        if fn is not None:
            calls[label] = fn
    medians = interleaved_medians(calls, x, runs)
    base = medians["numpy eager"]
    cells = [f"{_time(t)} ({t / base:.3f})" for t in medians.values()]
    peaks = f"{peak_mb(numpy_fn, x):.0f} / {peak_mb(calls['irflow llvm'], x):.0f}"
    print(f"| {name} | " + " | ".join(cells) + f" | {peaks} |")


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


# ---------------------------------------------------------------- compile time

COMPILE_SNIPPET = """
import time, numpy as np
start = time.perf_counter()
import irflow
from irflow import nn
from irflow.static import InputSpec
imported = time.perf_counter()
model = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
model.eval()
compiled = irflow.compile(model, input_spec=[InputSpec([None, 784], "float32")],
                          backend="{backend}")
with irflow.no_grad():
    compiled(irflow.to_tensor(np.ones((1, 784), np.float32)))
done = time.perf_counter()
print(f"{{imported - start:.3f}} {{done - imported:.3f}}")
"""


def compile_times() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, IRFLOW_CACHE_DIR=cache)
        for label, backend in (("numpy", "numpy"), ("llvm, cold cache", "llvm"),
                               ("llvm, warm cache", "llvm")):
            out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET.format(backend=backend)],
                                 env=env, capture_output=True, text=True, check=True).stdout
            imported, compiled = out.split()
            print(f"| small MLP 784-64-10, backend {label} | import {imported} s | "
                  f"trace + passes + kernels + first call {compiled} s |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    runs = 5 if args.quick else 21
    print(f"unset for the timed runs: {', '.join(UNSET) or 'none was set'}; BLAS: "
          f"{blas_report()}; irflow threads: 1")
    irflow.seed(0)
    block = LayerNormGelu(1024, approximate=False)
    net = mlp([784, 512, 256, 10])
    small = mlp([784, 64, 10])
    import importlib.util
    labels = ["numpy eager", "irflow numpy", "irflow llvm"] + [
        label for label, module in (("torch.compile", "torch"), ("jax.jit", "jax"))
        if importlib.util.find_spec(module) is not None]
    print("| workload | " + " | ".join(labels) + " | peak MB (eager / llvm) |")
    print("|---" * (len(labels) + 2) + "|")
    for name, model, shape, fn, kind, n in (
            ("LayerNorm(x + GELU(x*w+b)), [4096,1024]", block, [4096, 1024],
             numpy_layer_norm_gelu(block), "block", runs),
            ("MLP 784-512-256-10, batch 1024", net, [1024, 784], numpy_mlp(net), "mlp", runs),
            ("MLP 784-64-10, batch 1 (latency)", small, [1, 784], numpy_mlp(small), "mlp",
             runs * 50)):
        row(name, model, shape, fn, kind, n)
    if args.compile:
        print()
        compile_times()


if __name__ == "__main__":
    main()
