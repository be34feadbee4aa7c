"""Calls the generated code must survive: a thread whose native stack is too small
for the GEMM's panels or a whole call's intermediates, or a split call whose pool
workers would get such a stack (run in a subprocess: before the checks, SIGSEGV), and a dropped result of a whole call that its holder made
read-only or restrided, which must not come back from the next call."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from irflow.codegen import compile_plan
from irflow.codegen.llvm.jit import HostTarget
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.ir import TensorType, function

pytestmark = pytest.mark.skipif("+avx512f" not in HostTarget().features.split(","),
                                reason="the GEMM and the whole call are made for AVX-512 hosts")

SMALL_STACK = textwrap.dedent("""
    import threading
    import numpy as np
    import irflow
    import irflow.nn as nn
    from irflow.codegen.llvm.gemm import Gemm
    from irflow.errors import IrflowError
    from irflow.static import InputSpec

    irflow.seed(1)
    spec = [InputSpec([None, 256], "float32")]
    w, b = irflow.randn([256, 256]) * 0.1, irflow.randn([256]) * 0.1

    def step(h):  # the GEMM's tiles with a maximum beside them
        new = irflow.tanh(irflow.matmul(h, w) + b)
        return new, irflow.max(irflow.abs(new - h))

    cases = []
    for fn, rows in ((nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)), 64),
                     (nn.Sequential(nn.Linear(256, 2300), nn.ReLU(), nn.Linear(2300, 3)), 7),
                     (step, 64)):
        if isinstance(fn, nn.Layer):
            fn.eval()
        x = np.random.default_rng(rows).standard_normal((rows, 256)).astype("f4")
        cases.append((irflow.compile(fn, input_spec=spec),
                      irflow.compile(fn, input_spec=spec, backend="numpy"), x))

    def outputs(r):
        return [t.numpy() for t in (r if isinstance(r, (list, tuple)) else [r])]

    with irflow.no_grad():
        want = [outputs(numpy(x)) for _, numpy, x in cases]
        for llvm, _, x in cases:
            llvm(x)  # compiled on the main thread
    gemm = Gemm()
    a = np.ones((64, 1024), np.float32)
    threading.stack_size(64 * 1024)
    got, refused = [], []

    def work():
        with irflow.no_grad():
            got.extend(outputs(llvm(x)) for llvm, _, x in cases)
        try:
            gemm(a, a.T.copy())
        except IrflowError as e:
            refused.append(str(e))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    # split across threads from the main thread: the pool's workers, started now,
    # would get the small stack, so the parts run on the main thread
    irflow.set_num_threads(2)
    big = np.random.default_rng(0).standard_normal((1024, 512)).astype("f4")
    np.testing.assert_allclose(gemm(big, big.T.copy()), big @ big.T, rtol=1e-4, atol=1e-3)
    for g, w_ in zip(got, want, strict=True):
        for x, y in zip(g, w_, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
    assert refused and "stack" in refused[0]
    print("ok")
""")


def test_a_thread_with_a_small_stack_runs_numpy_not_off_its_stack():
    done = subprocess.run([sys.executable, "-c", SMALL_STACK], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


def test_a_dropped_result_made_read_only_or_restrided_is_not_reused():
    fn = function("f", [TensorType("f32", ["N", 64]), TensorType("f32", [64, 32])],
                  lambda b, x, w: b.matmul(x, w))
    plan = compile_plan(fn, LLVMLowering())
    assert plan.whole is not None
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    (r,) = plan(x, w)
    r.flags.writeable = False
    del r
    (r,) = plan(x, w)
    assert r.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # assigning strides
        r.strides = (4, 12)
    del r
    (r,) = plan(x, w)
    assert r.flags.c_contiguous
    np.testing.assert_allclose(r, x @ w, rtol=1e-5, atol=1e-5)
