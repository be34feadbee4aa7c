"""Every workload of issue 11, side by side in one run; run by hand:

    PYTHONPATH=. python benchmarks/issue11.py              # the table
    PYTHONPATH=. python benchmarks/issue11.py --quick      # fewer samples
    PYTHONPATH=. python benchmarks/issue11.py --compile    # compile times too
    PYTHONPATH=. python benchmarks/issue11.py --threads 2  # irflow's kernels on 2 threads
    PYTHONPATH=. python benchmarks/issue11.py --only training --rounds 81  # one row
    PYTHONPATH=. python benchmarks/issue11.py --overhead   # per-call overhead, warm/cold
    PYTHONPATH=. python benchmarks/issue11.py --floor      # and the products alone

Each workload runs as NumPy eager written the natural way (for the convolution:
``sliding_window_view`` im2col and one matmul; GELU with ``scipy.special.erf``),
as ``irflow.compile(..., backend="numpy")`` and ``backend="llvm"``, and as PyTorch
(``torch.compile``, eager where it cannot compile), ``jax.jit`` and PaddlePaddle's
dynamic graph when they are importable (none is a dependency: install them in a
virtual environment of their own). All share the same weights; every result is
checked against NumPy eager's before timing, and a mismatch stops the run.

One thread each (OMP/MKL/OpenBLAS, ``torch.set_num_threads(1)``, and the process
pinned to one core, since jax.jit's matmuls otherwise run on every core whatever
the thread settings say; OpenMP's idle threads wait passively, so that none spins
on that core after its framework's call); OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset before any library loads (the script re-executes
itself without them) and the BLAS kernels that run are printed (threadpoolctl).
Calls are interleaved; the table gives median wall times, the ratio to NumPy eager
and the peak memory of one call that tracemalloc sees, the previous call's result
still held (NumPy's and irflow's allocations; the other frameworks allocate outside
it, so they have no column).
``--compile`` times compiling the training step (tracing, autodiff, passes, LLVM
kernels, first call) in fresh processes with an empty and then a warm kernel cache.
"""
from __future__ import annotations

import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
# OpenMP runtimes (torch's, paddle's) keep their idle threads spinning after a
# parallel region (200 ms for Intel's); on the one core every system shares, that
# spinning takes time from whichever system runs next
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("KMP_BLOCKTIME", "0")


def _threads_asked() -> int:
    """``--threads N`` of the command line, read before any library starts a pool."""
    for k, a in enumerate(sys.argv):
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
        if a == "--threads" and k + 1 < len(sys.argv):
            return int(sys.argv[k + 1])
    return 1


if _threads_asked() == 1 and hasattr(os, "sched_setaffinity"):
    # one core for the whole process: jax.jit's CPU runtime runs its matmuls on a pool
    # of every core whatever OMP_NUM_THREADS or XLA_FLAGS say (measured: twice the CPU
    # time of its wall time on two cores), and its pool inherits this affinity
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
if any(v in os.environ for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")):
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(v, None)
    os.execv(sys.executable, [sys.executable, *sys.argv])  # before any BLAS loads

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import irflow  # noqa: E402
from irflow import nn  # noqa: E402
from irflow.static import InputSpec  # noqa: E402
from benchmarks.fusion import ConvBNReLU, LayerNormGelu  # noqa: E402
from benchmarks.llvm_backend import blas_report, mlp, tensor_once  # noqa: E402

F = irflow.nn.functional
HAVE = {m: importlib.util.find_spec(m) is not None for m in ("torch", "jax", "paddle")}
SYSTEMS = ["numpy eager", "irflow numpy", "irflow llvm"] + [
    label for label, module in (("torch", "torch"), ("jax.jit", "jax"), ("paddle", "paddle"))
    if HAVE[module]]
TRACED = ("numpy eager", "irflow numpy", "irflow llvm")


def _erf():
    try:
        from scipy.special import erf
    except ImportError:
        from irflow.ir.registry import lookup
        erf = lookup("erf").kernel
    return erf


def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _torch_compiled(torch, fn, probe):
    """(torch.compile(fn), "compile") if it compiles and runs `probe`, else (fn,
    "eager: " + why)."""
    try:
        compiled = torch.compile(fn)
        compiled(*probe)
        return compiled, "compile"
    except Exception as e:  # noqa: BLE001 -- no C compiler, an unsupported op...
        return fn, f"eager: torch.compile failed ({type(e).__name__})"


def _torch_inference(torch, fn, x):
    """`fn` (a module or function) compiled by `_torch_compiled`, run as the other
    systems are: an array in (shared by `from_numpy`), an array out."""
    with torch.no_grad():
        fn, mode = _torch_compiled(torch, fn, (torch.from_numpy(x),))

    def run(x):
        with torch.no_grad():
            return fn(torch.from_numpy(x)).numpy()
    run.mode = mode
    return run


def _paddle():
    import paddle
    paddle.set_device("cpu")
    return paddle


# ---------------------------------------------------------------- the workloads
# Each builder returns (inputs, {system: fn(*inputs)}, compare) where `compare`
# says how to compare a result with NumPy eager's ("allclose" or "loss").

def mlp_model(widths):
    model = mlp(widths)
    model.eval()
    return model


def torch_mlp(torch, weights):
    layers = []
    for w, b in weights:
        lin = torch.nn.Linear(*w.shape)
        lin.weight.data, lin.bias.data = torch.from_numpy(w.T.copy()), torch.from_numpy(b.copy())
        layers += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def paddle_mlp(paddle, weights):
    layers = []
    for w, b in weights:
        lin = paddle.nn.Linear(*w.shape)
        lin.weight.set_value(w)
        lin.bias.set_value(b)
        layers += [lin, paddle.nn.ReLU()]
    return paddle.nn.Sequential(*layers[:-1])


def linear_weights(model):
    return [(m.weight.numpy(), m.bias.numpy()) for m in model if isinstance(m, nn.Linear)]


def irflow_inference(model, shape, backend, **options):
    compiled = irflow.compile(model, input_spec=[InputSpec([None, *shape[1:]], "float32")],
                              backend=backend, **options)

    t = tensor_once()

    def run(x):
        with irflow.no_grad():
            return compiled(t(x))  # the result Tensor as users hold it (no copy)
    return run


def mlp_inference(widths, batch):
    model = mlp_model(widths)
    weights = linear_weights(model)
    x = np.random.default_rng(0).standard_normal((batch, widths[0])).astype(np.float32)

    def numpy_eager(x):
        for k, (w, b) in enumerate(weights):
            x = x @ w + b
            if k < len(weights) - 1:
                x = np.maximum(x, 0)
        return x
    calls = {"numpy eager": numpy_eager}
    for backend in ("numpy", "llvm"):
        calls[f"irflow {backend}"] = irflow_inference(model, x.shape, backend)
    if HAVE["torch"]:
        torch = _torch()
        net = torch_mlp(torch, weights).eval()
        calls["torch"] = _torch_inference(torch, net, x)
    if HAVE["jax"]:
        import jax
        import jax.numpy as jnp
        jw = [(jnp.asarray(w), jnp.asarray(b)) for w, b in weights]

        @jax.jit
        def jax_fn(x):
            for k, (w, b) in enumerate(jw):
                x = x @ w + b
                if k < len(jw) - 1:
                    x = jnp.maximum(x, 0)
            return x
        calls["jax.jit"] = lambda x: np.asarray(jax_fn(x).block_until_ready())
    if HAVE["paddle"]:
        paddle = _paddle()
        pnet = paddle_mlp(paddle, weights)
        pnet.eval()

        def paddle_run(x):
            with paddle.no_grad():
                return pnet(paddle.to_tensor(x)).numpy()
        calls["paddle"] = paddle_run
    return (x,), calls, "allclose"


def layer_norm_gelu(shape):
    model = LayerNormGelu(shape[1], approximate=False)
    model.eval()
    erf = _erf()
    w, b = model.w.numpy(), model.b.numpy()
    gamma, beta = model.ln.weight.numpy(), model.ln.bias.numpy()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def numpy_eager(x):
        h = x * w + b
        s = x + 0.5 * h * (1 + erf(h / np.float32(np.sqrt(2))))
        mu = s.mean(-1, keepdims=True)
        var = ((s - mu) ** 2).mean(-1, keepdims=True)
        return (s - mu) / np.sqrt(var + np.float32(1e-5)) * gamma + beta
    calls = {"numpy eager": numpy_eager}
    for backend in ("numpy", "llvm"):
        calls[f"irflow {backend}"] = irflow_inference(model, shape, backend)
    if HAVE["torch"]:
        torch = _torch()
        tw, tb = torch.from_numpy(w), torch.from_numpy(b)
        ln = torch.nn.LayerNorm(shape[1])
        ln.weight.data, ln.bias.data = torch.from_numpy(gamma), torch.from_numpy(beta)

        def block(x):
            return ln(x + torch.nn.functional.gelu(x * tw + tb))
        calls["torch"] = _torch_inference(torch, block, x)
    if HAVE["jax"]:
        import jax
        import jax.numpy as jnp

        @jax.jit
        def jax_fn(x):
            s = x + jax.nn.gelu(x * w + b, approximate=False)
            mu = s.mean(-1, keepdims=True)
            var = ((s - mu) ** 2).mean(-1, keepdims=True)
            return (s - mu) / jnp.sqrt(var + 1e-5) * gamma + beta
        calls["jax.jit"] = lambda x: np.asarray(jax_fn(x).block_until_ready())
    if HAVE["paddle"]:
        paddle = _paddle()
        pw, pb = paddle.to_tensor(w), paddle.to_tensor(b)
        pln = paddle.nn.LayerNorm(shape[1])
        pln.weight.set_value(gamma)
        pln.bias.set_value(beta)

        def paddle_run(x):
            with paddle.no_grad():
                x = paddle.to_tensor(x)
                return pln(x + paddle.nn.functional.gelu(x * pw + pb)).numpy()
        calls["paddle"] = paddle_run
    return (x,), calls, "allclose"


def training_step(widths, batch, lr=0.01, others=True):
    """One SGD step of cross-entropy on an MLP; each system updates its own copy of
    the same initial weights. The result compared is the first step's loss. Without
    `others`, NumPy eager and irflow only."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, widths[0])).astype(np.float32)
    labels = rng.integers(0, widths[-1], (batch, 1))
    init = linear_weights(mlp_model(widths))

    def irflow_step(backend):
        model = mlp_model(widths)
        for layer, (w, b) in zip([m for m in model if isinstance(m, nn.Linear)], init):
            layer.weight.set_value(w)
            layer.bias.set_value(b)
        model.train()
        opt = irflow.optimizer.SGD(learning_rate=lr, parameters=model.parameters())

        def step(x, labels):
            loss = F.cross_entropy(model(x), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        compiled = irflow.compile(step, backend=backend)
        t = tensor_once()
        return lambda x, y: float(compiled(t(x), t(y)))

    params = [(w.copy(), b.copy()) for w, b in init]

    def numpy_eager(x, labels):
        acts = [x]
        for k, (w, b) in enumerate(params):
            h = acts[-1] @ w + b
            acts.append(np.maximum(h, 0) if k < len(params) - 1 else h)
        logits = acts[-1]
        shifted = logits - logits.max(1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        rows = np.arange(len(x))
        loss = -logp[rows, labels[:, 0]].mean()
        grad = np.exp(logp)
        grad[rows, labels[:, 0]] -= 1
        grad /= len(x)
        for k in reversed(range(len(params))):
            w, b = params[k]
            if k < len(params) - 1:
                grad = grad * (acts[k + 1] > 0)
            gw, gb = acts[k].T @ grad, grad.sum(0)
            if k:
                grad = grad @ w.T
            w -= lr * gw
            b -= lr * gb
        return float(loss)
    calls = {"numpy eager": numpy_eager, "irflow numpy": irflow_step("numpy"),
             "irflow llvm": irflow_step("llvm")}
    if not others:
        return (x, labels), calls, "loss"
    if HAVE["torch"]:
        torch = _torch()
        net = torch_mlp(torch, init)
        opt = torch.optim.SGD(net.parameters(), lr=lr)

        def torch_step(x, y):
            loss = torch.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        probe = (torch.from_numpy(x), torch.from_numpy(labels[:, 0]))
        fn, mode = _torch_compiled(torch, torch_step, probe)
        # the probe took a step: restart from the initial weights
        with torch.no_grad():
            for lin, (w, b) in zip([m for m in net if isinstance(m, torch.nn.Linear)], init):
                lin.weight.copy_(torch.from_numpy(w.T.copy()))
                lin.bias.copy_(torch.from_numpy(b))
        def torch_run(x, y):
            return float(fn(torch.from_numpy(x), torch.from_numpy(y[:, 0])))
        torch_run.mode = mode
        calls["torch"] = torch_run
    if HAVE["jax"]:
        import jax
        import jax.numpy as jnp

        def loss_fn(ps, x, y):
            h = x
            for k, (w, b) in enumerate(ps):
                h = h @ w + b
                if k < len(ps) - 1:
                    h = jnp.maximum(h, 0)
            logp = jax.nn.log_softmax(h)
            return -jnp.take_along_axis(logp, y, axis=1).mean()

        @jax.jit
        def jax_step(ps, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(ps, x, y)
            return loss, [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(ps, grads)]
        state = {"ps": [(jnp.asarray(w), jnp.asarray(b)) for w, b in init]}

        def jax_run(x, y):
            loss, state["ps"] = jax_step(state["ps"], x, y)
            return float(loss.block_until_ready())
        calls["jax.jit"] = jax_run
    if HAVE["paddle"]:
        paddle = _paddle()
        pnet = paddle_mlp(paddle, init)
        popt = paddle.optimizer.SGD(learning_rate=lr, parameters=pnet.parameters())

        def paddle_step(x, y):
            loss = paddle.nn.functional.cross_entropy(pnet(paddle.to_tensor(x)),
                                                      paddle.to_tensor(y))
            loss.backward()
            popt.step()
            popt.clear_grad()
            return float(loss)
        calls["paddle"] = paddle_step
    return (x, labels), calls, "loss"


def eager_loop(lib, tensor, w, b):
    """The converging loop in the eager mode of `lib` (torch or paddle: both have
    ``tanh``, ``no_grad`` and ``@``), on the tensor `tensor` makes of the array."""
    def run(h):
        h = tensor(h)
        with lib.no_grad():
            diff = 1.0
            while diff > 1e-4:
                new = lib.tanh(h @ w + b)
                diff = float((new - h).abs().max())
                h = new
        return h.numpy()
    return run


def converging_loop(shape):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((shape[1], shape[1])) * (0.5 / shape[1] ** 0.5)).astype(np.float32)
    b = (rng.standard_normal(shape[1]) * 0.1).astype(np.float32)
    x = rng.standard_normal(shape).astype(np.float32)
    iw, ib = irflow.to_tensor(w), irflow.to_tensor(b)

    def loop(h):
        diff = irflow.to_tensor(1.0)
        while diff > 1e-4:
            new = irflow.tanh(irflow.matmul(h, iw) + ib)
            diff = irflow.max(irflow.abs(new - h))
            h = new
        return h

    def numpy_eager(h):
        diff = 1.0
        while diff > 1e-4:
            new = np.tanh(h @ w + b)
            diff = np.abs(new - h).max()
            h = new
        return h
    calls = {"numpy eager": numpy_eager}
    for backend in ("numpy", "llvm"):
        compiled = irflow.compile(loop, backend=backend)
        calls[f"irflow {backend}"] = (lambda c, t: lambda h: c(t(h)))(compiled, tensor_once())
    if HAVE["torch"]:
        torch = _torch()
        tw, tb = torch.from_numpy(w), torch.from_numpy(b)

        # eager: torch.compile breaks the graph at the data-dependent test
        torch_run = eager_loop(torch, torch.from_numpy, tw, tb)
        torch_run.mode = "eager (a data-dependent loop)"
        calls["torch"] = torch_run
    if HAVE["jax"]:
        import jax
        import jax.numpy as jnp

        @jax.jit
        def jax_fn(h):
            def body(carry):
                h, _ = carry
                new = jnp.tanh(h @ w + b)
                return new, jnp.abs(new - h).max()
            return jax.lax.while_loop(lambda c: c[1] > 1e-4, body, (h, jnp.float32(1.0)))[0]
        calls["jax.jit"] = lambda h: np.asarray(jax_fn(h).block_until_ready())
    if HAVE["paddle"]:
        paddle = _paddle()
        pw, pb = paddle.to_tensor(w), paddle.to_tensor(b)

        calls["paddle"] = eager_loop(paddle, paddle.to_tensor, pw, pb)
    return (x,), calls, "allclose"


def conv_bn_relu(shape):
    channels = shape[1]
    model = ConvBNReLU(channels)
    rng = np.random.default_rng(1)  # running statistics that are not the identity
    model.bn._mean.set_value(rng.standard_normal(channels).astype(np.float32) * 0.1)
    model.bn._variance.set_value(rng.uniform(0.5, 2, channels).astype(np.float32))
    model.bn.weight.set_value(rng.uniform(0.5, 1.5, channels).astype(np.float32))
    model.bn.bias.set_value(rng.standard_normal(channels).astype(np.float32) * 0.1)
    model.eval()
    w, cb = model.conv.weight.numpy(), model.conv.bias.numpy()
    mean, var = model.bn._mean.numpy(), model.bn._variance.numpy()
    gamma, beta, eps = model.bn.weight.numpy(), model.bn.bias.numpy(), np.float32(1e-5)
    x = rng.standard_normal(shape).astype(np.float32)
    w_rows = w.reshape(w.shape[0], -1)

    def numpy_eager(x):
        n, c, h, wd = x.shape
        padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
        cols = sliding_window_view(padded, (3, 3), axis=(2, 3))       # [N, C, H, W, 3, 3]
        cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * 9)
        y = (cols @ w_rows.T + cb).reshape(n, h, wd, -1).transpose(0, 3, 1, 2)
        y = (y - mean[:, None, None]) / np.sqrt(var[:, None, None] + eps)
        return np.maximum(y * gamma[:, None, None] + beta[:, None, None], 0)
    calls = {"numpy eager": numpy_eager}
    for backend in ("numpy", "llvm"):
        calls[f"irflow {backend}"] = irflow_inference(model, shape, backend, freeze=True)
    if HAVE["torch"]:
        torch = _torch()
        conv = torch.nn.Conv2d(channels, channels, 3, padding=1)
        bn = torch.nn.BatchNorm2d(channels, eps=1e-5)
        conv.weight.data, conv.bias.data = torch.from_numpy(w), torch.from_numpy(cb)
        bn.running_mean.data, bn.running_var.data = torch.from_numpy(mean), torch.from_numpy(var)
        bn.weight.data, bn.bias.data = torch.from_numpy(gamma), torch.from_numpy(beta)
        net = torch.nn.Sequential(conv, bn, torch.nn.ReLU()).eval()
        calls["torch"] = _torch_inference(torch, net, x)
    if HAVE["jax"]:
        import jax
        import jax.numpy as jnp

        @jax.jit
        def jax_fn(x):
            y = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)))
            y = y + cb[:, None, None]
            y = (y - mean[:, None, None]) / jnp.sqrt(var[:, None, None] + eps)
            return jnp.maximum(y * gamma[:, None, None] + beta[:, None, None], 0)
        calls["jax.jit"] = lambda x: np.asarray(jax_fn(x).block_until_ready())
    if HAVE["paddle"]:
        paddle = _paddle()
        pconv = paddle.nn.Conv2D(channels, channels, 3, padding=1)
        pbn = paddle.nn.BatchNorm2D(channels, epsilon=1e-5)
        pconv.weight.set_value(w)
        pconv.bias.set_value(cb)
        pbn._mean.set_value(mean)
        pbn._variance.set_value(var)
        pbn.weight.set_value(gamma)
        pbn.bias.set_value(beta)
        pnet = paddle.nn.Sequential(pconv, pbn, paddle.nn.ReLU())
        pnet.eval()

        def paddle_run(x):
            with paddle.no_grad():
                return pnet(paddle.to_tensor(x)).numpy()
        calls["paddle"] = paddle_run
    return (x,), calls, "allclose"


def products_alone(shapes):
    """The matrix products a row's NumPy eager code makes, and nothing else: each
    ``(m, k, n)`` an ``np.matmul`` of float32 operands into a preallocated output. A
    system using the same BLAS for its products computes the row in no less time, so
    this time over NumPy eager's is the lowest ratio the row allows without a faster
    GEMM (``--floor``)."""
    rng = np.random.default_rng(1)
    operands = [(rng.standard_normal((m, k)).astype(np.float32),
                 rng.standard_normal((k, n)).astype(np.float32),
                 np.empty((m, n), np.float32)) for m, k, n in shapes]

    def run(*_):
        for a, b, out in operands:
            np.matmul(a, b, out=out)
    return run


# (m, k, n) of the products NumPy eager makes in the rows that are mostly products:
# the forward layers; for the training step, then the output layer's weight gradient
# and the hidden layer's input gradient and weight gradient (the first layer's input
# gradient is not computed)
PRODUCTS = {
    "MLP 784-512-256-10, batch 1024, inference": [(1024, 784, 512), (1024, 512, 256),
                                                   (1024, 256, 10)],
    "MLP 784-256-10, batch 256, training step (SGD)": [(256, 784, 256), (256, 256, 10),
                                                        (256, 256, 10), (256, 10, 256),
                                                        (784, 256, 256)],
}

WORKLOADS = [
    ("LayerNorm(x + GELU(x*w + b)), [4096,1024]", lambda: layer_norm_gelu((4096, 1024)), 1),
    ("MLP 784-512-256-10, batch 1024, inference", lambda: mlp_inference([784, 512, 256, 10], 1024), 1),
    ("MLP 784-256-10, batch 256, training step (SGD)", lambda: training_step([784, 256, 10], 256), 1),
    ("while h = tanh(h @ W + b) converges, [64,256]", lambda: converging_loop((64, 256)), 1),
    ("MLP 784-64-10, batch 1, per-call latency", lambda: mlp_inference([784, 64, 10], 1), 20),
    ("Conv2D+BatchNorm+ReLU, [8,16,32,32], eval, frozen", lambda: conv_bn_relu((8, 16, 32, 32)), 1),
]


# ---------------------------------------------------------------- measuring

def check(name, calls, inputs, compare) -> None:
    """Every system agrees with NumPy eager (a first call also warms each up)."""
    want = calls["numpy eager"](*inputs)
    for system, fn in calls.items():
        if system in ("numpy eager", "products alone"):
            continue  # (a training step has moved its weights: the others' first step is compared)
        got = fn(*inputs)
        ok = (abs(got - want) <= 1e-4 * max(1.0, abs(want)) if compare == "loss" else
              np.allclose(np.asarray(got), want, rtol=2e-3, atol=2e-3))
        if not ok:
            raise SystemExit(f"{name}: {system} disagrees with NumPy eager")


def medians(calls: dict, inputs, samples: int, batch: int) -> dict:
    """The median wall time of a call of each system; each round runs every system
    once, in an order shuffled per round (seeded), each sample the mean of `batch`
    calls. A system pays for what the one before it left in the caches and TLBs, so
    every system gets every predecessor alike: the forwards-then-backwards order
    this replaced ran the first system (NumPy eager) only after itself or irflow's
    NumPy backend, never after torch, jax or paddle (batch-1 latency, same code:
    NumPy eager 6.4 -> 7.3-7.6 µs, irflow llvm 9.2-9.8 -> 8.7-9.0)."""
    for fn in calls.values():
        fn(*inputs)
    names = list(calls)
    times = {name: [] for name in names}
    order = random.Random(0)
    for _ in range(samples):
        for name in order.sample(names, len(names)):
            fn = calls[name]
            start = time.perf_counter()
            for _ in range(batch):
                fn(*inputs)
            times[name].append((time.perf_counter() - start) / batch)
    return {name: statistics.median(t) for name, t in times.items()}


def peak_mb(fn, inputs) -> float:
    """The peak of what one call allocates, the previous call's result still held: a
    compiled function reuses a result's memory once its caller drops it, and the
    column is the memory a call needs, its result included."""
    held = fn(*inputs)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn(*inputs)
        return (tracemalloc.get_traced_memory()[1] - before) / 2 ** 20
    finally:
        tracemalloc.stop()
        del held


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def machine() -> str:
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    versions = [f"numpy {np.__version__}"]
    for module in ("llvmlite", "scipy", "torch", "jax", "paddle"):
        if importlib.util.find_spec(module) is not None:
            versions.append(f"{module} {__import__(module).__version__}")
    return f"{model}, {os.cpu_count()} cpus; python {platform.python_version()}; " \
           + ", ".join(versions)


# ---------------------------------------------------------------- compile time

COMPILE_ONE = """
import os, sys, time
import numpy as np
import irflow
from irflow import nn
F = irflow.nn.functional
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
opt = irflow.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
rng = np.random.default_rng(0)
x = irflow.to_tensor(rng.standard_normal((256, 784)).astype(np.float32))
y = irflow.to_tensor(rng.integers(0, 10, (256, 1)))
def step(x, labels):
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss
start = time.perf_counter()
compiled = irflow.compile(step, backend=sys.argv[1])
float(compiled(x, y))
print(f"{time.perf_counter() - start:.3f}")
"""


def compile_times() -> None:
    """Each process with Python's bytecode cache on, as an installed package has it
    (an environment setting PYTHONDONTWRITEBYTECODE would make every process compile
    irflow's own sources first, some 25 ms), written by an untimed first process
    whose kernels go to a cache of their own."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(cache, "bytecode"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def seconds(backend: str, kernels: str) -> str:
            return subprocess.run(
                [sys.executable, "-c", COMPILE_ONE, backend],
                env=dict(env, IRFLOW_CACHE_DIR=os.path.join(cache, kernels)),
                capture_output=True, text=True, check=True).stdout.strip()
        seconds("llvm", "warm-up")
        for label, backend in (("numpy", "numpy"), ("llvm, empty kernel cache", "llvm"),
                               ("llvm, warm kernel cache", "llvm")):
            print(f"| training step MLP 784-256-10, backend {label} | "
                  f"{seconds(backend, 'kernels')} s |")


def overhead(samples: int) -> None:
    """What a call costs beyond its kernels: the training step of a model small
    enough that a call is nearly all overhead (MLP 16-16-4, batch 8), warm (calls
    back to back) and cold (a pass over 32 MiB of other memory before each call, as
    the table's rounds leave the caches to the system that runs next)."""
    inputs, calls, _ = training_step([16, 16, 4], 8, others=False)
    other = np.zeros(8 << 20, np.float32)
    print(f"machine: {machine()}\n")
    print("| training step MLP 16-16-4, batch 8 | " + " | ".join(TRACED) + " |")
    print("|---" * (len(TRACED) + 1) + "|")
    for label, evict in (("warm", False), ("cold", True)):
        times = {name: [] for name in calls}
        for _ in range(samples):
            for name, fn in calls.items():
                if evict:
                    other += 1
                start = time.perf_counter()
                fn(*inputs)
                times[name].append(time.perf_counter() - start)
        base = statistics.median(times["numpy eager"])
        print(f"| {label} | " + " | ".join(
            f"{_time(statistics.median(times[s]))} ({statistics.median(times[s]) / base:.2f})"
            for s in TRACED) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads irflow's compiled kernels split across "
                             "(irflow.set_num_threads; everything else keeps one)")
    parser.add_argument("--only", default="",
                        help="the workloads whose name contains this text (e.g. "
                             "'training'): a noisy row measured alone, with more --rounds")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds of every system (21; 5 with --quick)")
    parser.add_argument("--floor", action="store_true",
                        help="also time the matrix products alone of the rows that are "
                             "mostly products, in the same rounds (the lowest ratio "
                             "their BLAS allows)")
    parser.add_argument("--overhead", action="store_true",
                        help="only what a call costs beyond its kernels, warm and cold "
                             "(a training step of a tiny MLP)")
    args = parser.parse_args()
    irflow.set_num_threads(args.threads)
    samples = args.rounds or (5 if args.quick else 21)
    irflow.seed(0)
    if args.overhead:
        return overhead(args.rounds or 301)
    built = []
    for name, make, batch in WORKLOADS:
        if args.only not in name:
            continue
        inputs, calls, compare = make()
        if args.floor and name in PRODUCTS:
            calls["products alone"] = products_alone(PRODUCTS[name])
        check(name, calls, inputs, compare)
        built.append((name, inputs, calls, batch))
    print(f"machine: {machine()}")
    print(f"BLAS: {blas_report()}")
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "all"
    print("unset before loading: OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE; one thread each"
          + (f" (irflow's compiled kernels: {args.threads})" if args.threads != 1 else "")
          + f"; cores the process may run on: {cores}")
    print()
    print("| workload | " + " | ".join(SYSTEMS) + " | peak MB (" + " / ".join(TRACED) + ") |")
    print("|---" * (len(SYSTEMS) + 2) + "|")
    floors = []
    for name, inputs, calls, batch in built:
        times = medians(calls, inputs, samples, batch)
        base = times["numpy eager"]
        cells = [f"{_time(times[s])} ({times[s] / base:.3f})" for s in SYSTEMS]
        peaks = " / ".join(f"{peak_mb(calls[s], inputs):.1f}" for s in TRACED)
        print(f"| {name} | " + " | ".join(cells) + f" | {peaks} |", flush=True)
        if "products alone" in times:
            floors.append((name, times["products alone"] / base,
                           times["irflow llvm"] / base))
    if floors:
        print("\n| workload | products alone / numpy eager | irflow llvm / numpy eager |")
        print("|---|---|---|")
        for name, floor, llvm in floors:
            print(f"| {name} | {floor:.3f} | {llvm:.3f} |")
    if HAVE["torch"]:
        print("\ntorch: " + "; ".join(f"{name}: {getattr(calls.get('torch'), 'mode', '?')}"
                                      for name, _, calls, _ in built))
    if args.compile:
        print()
        print("| compile (fresh process: trace, autodiff, passes, kernels, first call) | s |")
        print("|---|---|")
        compile_times()


if __name__ == "__main__":
    main()
