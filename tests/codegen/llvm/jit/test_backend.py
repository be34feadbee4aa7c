"""``irflow.compile(..., backend="llvm")``: the workloads of the LLVM issue compiled
for the LLVM backend equal eager execution; the backend's fused kernels are what
runs; one program is called from several threads at once; what the backend has no
code for runs on NumPy kernels, with the same results."""
import threading

import numpy as np
import pytest

import irflow
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.codegen import compile_plan
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.gemm import Gemm
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import IrflowError
from irflow.ir import parse
from irflow.static import InputSpec
from tests.support.models import LayerNormGelu, mlp, sgd_step


def fused_ops(compiled):
    return [op for op in compiled.ir.walk() if op.name == "fused"]


def assert_compiled_like_eager(model, x, tolerance, **options):
    model.eval()
    with irflow.no_grad():
        want = model(x).numpy()
        compiled = irflow.compile(model, backend="llvm", **options)
        got = compiled(x).numpy()
    np.testing.assert_allclose(got, want, **tolerance)
    return compiled


def test_layer_norm_of_gelu_is_one_compiled_kernel():
    irflow.seed(0)
    compiled = assert_compiled_like_eager(LayerNormGelu(256), irflow.randn([64, 256]),
                                          {"rtol": 1e-4, "atol": 1e-5})
    (op,) = fused_ops(compiled)
    assert FusedKernel(op).spec.axes == (1,)


@pytest.mark.parametrize("widths, batch", [((784, 512, 256, 10), 64), ((32, 16, 4), 1)])
def test_mlp_inference(widths, batch):
    irflow.seed(1)
    compiled = assert_compiled_like_eager(mlp(*widths), irflow.randn([batch, widths[0]]),
                                          {"rtol": 1e-5, "atol": 1e-5})
    assert len(fused_ops(compiled)) == len(widths) - 1  # each matmul with its epilogue


def test_calls_too_small_for_compiled_code_run_the_numpy_step(monkeypatch):
    """Below `MIN_ELEMENTS` a fused op runs the NumPy backend's step: with static sizes
    that is its step (nothing compiles), with symbolic ones each small call runs it."""
    def compiled_code(*args, **kwargs):  # the code's call, as the run makes it
        def body(operands, given):
            raise AssertionError("the compiled code ran")
        return body

    def gemm(*args, **kwargs):
        raise AssertionError("the compiled code ran")
    monkeypatch.setattr(FusedKernel, "_reduction_call", compiled_code)
    monkeypatch.setattr(FusedKernel, "_elementwise_body", compiled_code)
    monkeypatch.setattr(Gemm, "run", gemm)  # a matmul and its epilogue in one
    # the plan's steps, not the whole model as one native function (test_whole.py)
    monkeypatch.setattr(LLVMLowering, "function", lambda self, fn: None)
    monkeypatch.setattr(FusedKernel, "_tiles_call", lambda *args: gemm)  # its generated call
    irflow.seed(5)
    model = mlp(784, 64, 10)
    model.eval()
    x = irflow.randn([1, 784])
    with irflow.no_grad():
        want = model(x).numpy()
        static = irflow.compile(model, backend="llvm")
        np.testing.assert_array_equal(static(x).numpy(), want)
        assert all(FusedKernel.declines(op) for op in fused_ops(static))
        symbolic = irflow.compile(model, input_spec=[InputSpec([None, 784], "float32")],
                                  backend="llvm")
        np.testing.assert_array_equal(symbolic(x).numpy(), want)
        assert not any(FusedKernel.declines(op) for op in fused_ops(symbolic))
        with pytest.raises(AssertionError, match="the compiled code ran"):
            symbolic(irflow.randn([256, 784]))


def test_small_bodies_with_reductions_run_compiled_code_for_size(monkeypatch):
    """Below `MIN_ELEMENTS` a body with a reduction still runs its compiled code
    (NumPy reduces a short axis slowly), compiled for size (`SMALL`: scalar loops)
    when every size is static. A body computing exp, log or another approximated
    function of symbolic sizes runs its small calls on the NumPy step: its code is
    the vectorized one of the large calls."""
    def f(x, w):
        centered = x - x.mean(axis=1, keepdim=True)
        return centered * w, F.softmax(x * w, axis=1)

    ran = []  # the kernels whose compiled code ran, by a Python call or a native run
    real, real_native = FusedKernel._reduction_call, FusedKernel._reduction_native

    def counted(self, *args):
        call = real(self, *args)

        def body(operands, given):
            ran.append(self)
            return call(operands, given)
        return body

    def in_native_run(self, *args):
        call = real_native(self, *args)
        if call is not None:
            ran.append(self)
        return call
    monkeypatch.setattr(FusedKernel, "_reduction_call", counted)
    monkeypatch.setattr(FusedKernel, "_reduction_native", in_native_run)
    irflow.seed(6)
    x, w = irflow.randn([16, 10]), irflow.randn([10])

    def has_exp(op):
        return any(inner.name == "exp" for inner in op.regions[-1].blocks[0].body_ops())
    with irflow.no_grad():
        want = [t.numpy() for t in f(x, w)]
        for spec in (None, [InputSpec([None, 10], "float32"), InputSpec([10], "float32")]):
            ran.clear()
            compiled = irflow.compile(f, input_spec=spec, backend="llvm")
            got = [t.numpy() for t in compiled(x, w)]
            for g, e in zip(got, want):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
            ops = fused_ops(compiled)
            assert sorted(map(has_exp, ops)) == [False, True]
            assert not any(FusedKernel.declines(op) for op in ops)
            if spec is None:
                assert sorted(has_exp(k.op) for k in ran) == [False, True]
                assert all(k.spec.small for k in ran)
            else:
                assert [(has_exp(k.op), k.spec.small) for k in ran] == [(False, False)]


def test_frozen_conv_batchnorm_relu():
    irflow.seed(2)
    model = nn.Sequential(nn.Conv2D(4, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU())
    model.train()
    model(irflow.randn([2, 4, 8, 8]))
    compiled = assert_compiled_like_eager(model, irflow.randn([2, 4, 8, 8]),
                                          {"rtol": 1e-4, "atol": 1e-5}, freeze=True)
    assert len(fused_ops(compiled)) == 1


def test_data_dependent_while_loop():
    irflow.seed(3)
    w = irflow.randn([16, 16]) * 0.1
    b = irflow.randn([16]) * 0.1

    def converge(h):
        i = 0
        delta = irflow.to_tensor(1.0)
        while delta > 1e-3 and i < 50:
            new = irflow.tanh(irflow.matmul(h, w) + b)
            delta = irflow.max(irflow.abs(new - h))
            h = new
            i += 1
        return h

    x = irflow.randn([8, 16])
    want = converge(x).numpy()
    compiled = irflow.compile(converge, backend="llvm")
    np.testing.assert_allclose(compiled(x).numpy(), want, rtol=1e-5, atol=1e-6)
    assert fused_ops(compiled)


def test_training_step_gradients_match_the_numpy_backend():
    irflow.seed(4)
    results = {}
    for backend in ("numpy", "llvm"):
        irflow.seed(4)
        model = mlp(20, 16, 5)
        compiled = irflow.compile(sgd_step(model, 0.1), backend=backend)
        rng = np.random.default_rng(4)
        losses = []
        for _ in range(3):
            x = irflow.to_tensor(rng.standard_normal((8, 20)).astype(np.float32))
            y = irflow.to_tensor(rng.integers(0, 5, (8,)))
            losses.append(float(compiled(x, y)))
        results[backend] = (losses, [p.numpy() for p in model.parameters()])
    np.testing.assert_allclose(results["llvm"][0], results["numpy"][0], rtol=1e-5)
    for a, b in zip(results["llvm"][1], results["numpy"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dtypes_without_kernels_run_on_numpy():
    def f(x):
        return irflow.exp(x * 2.0) - x

    x = irflow.to_tensor(np.linspace(-2, 2, 64, dtype=np.float16).reshape(8, 8))
    compiled = irflow.compile(f, backend="llvm")
    np.testing.assert_array_equal(compiled(x).numpy(), f(x).numpy())
    assert fused_ops(compiled)  # fused, and run by the NumPy evaluator


def test_wrong_inputs_are_errors_not_crashes():
    compiled = irflow.compile(LayerNormGelu(8), backend="llvm",
                              input_spec=[InputSpec([None, 8], "float32")])
    with pytest.raises(IrflowError):
        compiled(irflow.randn([3, 9]))
    with pytest.raises(IrflowError):
        compiled(irflow.randn([3, 8]).astype("float64"))


def test_llvm_is_the_default_backend(monkeypatch, tmp_path):
    """compile, to_static and jit.load run the compiled kernels unless told
    backend="numpy", which runs none."""
    runs = []
    compiled_call = FusedKernel._reduction_call

    def counted(self, *args, **kwargs):  # the code's call, counting its runs
        body = compiled_call(self, *args, **kwargs)

        def run(operands, given):
            runs.append(self.op.name)
            return body(operands, given)
        return run
    monkeypatch.setattr(FusedKernel, "_reduction_call", counted)
    irflow.seed(6)
    model, x = LayerNormGelu(256), irflow.randn([64, 256])
    model.eval()
    spec = [InputSpec([None, 256], "float32")]
    irflow.jit.save(model, str(tmp_path / "m"), input_spec=spec)
    with irflow.no_grad():
        want = model(x).numpy()
        for make in (lambda: irflow.compile(model), lambda: irflow.jit.to_static(model),
                     lambda: irflow.jit.load(str(tmp_path / "m"))):
            before = len(runs)
            np.testing.assert_allclose(make()(x).numpy(), want, rtol=1e-4, atol=1e-5)
            assert len(runs) == before + 1
        irflow.compile(LayerNormGelu(256), backend="numpy")(x)
    assert len(runs) == 3


def test_unknown_backends_are_refused():
    with pytest.raises(IrflowError, match="unknown backend 'gpu'; available: 'numpy', 'llvm'"):
        irflow.compile(LayerNormGelu(8), backend="gpu")


def test_one_compiled_program_called_from_several_threads_at_once():
    irflow.seed(5)
    model = LayerNormGelu(512)
    model.eval()
    compiled = irflow.compile(model, backend="llvm",
                              input_spec=[InputSpec([None, 512], "float32")])
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((n, 512)).astype(np.float32) for n in (16, 31, 64, 7)]
    with irflow.no_grad():
        expected = [model(irflow.to_tensor(a)).numpy() for a in inputs]
    start = threading.Barrier(len(inputs))
    errors = []

    def worker(i):
        try:
            start.wait(30)
            for _ in range(30):
                with irflow.no_grad():
                    got = compiled(irflow.to_tensor(inputs[i])).numpy()
                np.testing.assert_allclose(got, expected[i], rtol=1e-4, atol=1e-5)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "any", "all"])
def test_a_small_reduction_alone_runs_code_compiled_for_size(name):
    """A reduction no fused op holds (a loss's mean), of static sizes below
    `MIN_ELEMENTS`, is a one-op body compiled for size (NumPy's reduction costs
    several times that after a big product): every axis set, keepdim or not, into
    the arena or not; NaNs propagate through max and min as NumPy's do."""
    rng = np.random.default_rng(3)
    lowering = LLVMLowering()
    boolean = name in ("any", "all")
    x = (rng.random((6, 5, 4)) < 0.6) if boolean else rng.standard_normal((6, 5, 4))
    x = x if boolean else x.astype(np.float32)
    if name in ("max", "min"):
        x[2, 1, 3] = np.nan
    dtype = "bool" if boolean else "f32"
    for axis, keepdim in [(None, False), ((1,), True), ((0, 2), False), ((2,), False)]:
        want = getattr(np, name)(x, axis=axis, keepdims=keepdim)
        shape = np.shape(want)
        attrs = "" if axis is None else f"axis={list(axis)}, "
        t = f"{dtype}[{','.join(map(str, shape))}]"
        then = "logical_not %r" if boolean else "neg %r"  # %r lives in the arena
        text = (f"func @f(%x: {dtype}[6,5,4]) -> ({t}, {t}) {{\n"
                f"  %r = {name} %x {{{attrs}keepdim={str(keepdim).lower()}}} : {t}\n"
                f"  %s = {then} : {t}\n  %u = {then} : {t}\n  return %s, %u\n}}\n")
        module = parse(text)
        (op,) = [o for o in module.walk() if o.name == name]
        assert lowering.kernel(op) is not None
        got = compile_plan(module.main, lowering)(x)
        then_want = ~want if boolean else -want
        for g in got:
            if boolean or name in ("max", "min"):
                np.testing.assert_array_equal(g, then_want)
            else:
                np.testing.assert_allclose(g, then_want, rtol=1e-5)
