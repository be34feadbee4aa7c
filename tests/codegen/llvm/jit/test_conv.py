"""The generated direct convolution (`irflow.codegen.llvm.conv`): every size, padding
and edge against the float64 convolution, to float32 rounding (a sum of K = C * kH
* kW products is within about K units of roundoff of the sum of their
magnitudes); its checks; its split across threads; and the conv2d ops of the llvm
backend that run it (fused ops with an epilogue, plain anchors, standalone), with
the ones it leaves to NumPy."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from hypothesis import given
from hypothesis import strategies as st

import irflow
from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.conv import Conv, ConvSpec, conv_spec
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.jit import HostTarget
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.errors import ShapeError
from irflow.ir import Module, TensorType, function
from irflow.ir.registry import lookup
from irflow.passes import PassManager
from tests.support.threads import with_threads

EPS = 2.0 ** -24  # float32's unit roundoff
rng = np.random.default_rng(5)
AVX512 = "+avx512f" in HostTarget().features.split(",")


def conv64(x, w, padding):
    """The float64 cross-correlation of stride 1, by its definition (a window per
    output element), independently of irflow's kernels."""
    top, bottom, left, right = padding
    framed = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (top, bottom), (left, right)])
    windows = sliding_window_view(framed, w.shape[2:], axis=(2, 3))  # [N, C, OH, OW, kH, kW]
    return np.einsum("ncyxij,ocij->noyx", windows, w.astype(np.float64))


def reference(x, w, padding):
    """The float64 convolution and the bound of a float32 one's error."""
    magnitudes = conv64(np.abs(x), np.abs(w), padding)
    return conv64(x, w, padding), (w[0].size + 2) * EPS * magnitudes + 1e-38


def check_conv(got, x, w, padding):
    exact, bound = reference(x, w, padding)
    assert got.dtype == np.float32 and got.shape == exact.shape
    assert (np.abs(got - exact) <= bound).all()


def arrays(n, c, co, h, wd, kh, kw):
    return (rng.standard_normal((n, c, h, wd)).astype(np.float32),
            rng.standard_normal((co, c, kh, kw)).astype(np.float32))


@given(st.integers(0, 3), st.integers(1, 5), st.integers(1, 19), st.integers(1, 9),
       st.integers(1, 40), st.integers(1, 4), st.integers(1, 4),
       st.tuples(*[st.integers(0, 3)] * 4))
def test_every_small_size_padding_and_edge(compiler, n, c, co, h, wd, kh, kw, padding):
    """Channel counts past a tile's 8, widths past one or two vectors (and less),
    asymmetric padding, padding wider than the kernel (outputs wider than the
    input), an empty batch."""
    spec = ConvSpec(c, co, h, wd, (kh, kw), padding)
    oh, ow = spec.out_hw
    if oh < 1 or ow < 1:
        return
    x, w = arrays(n, c, co, h, wd, kh, kw)
    check_conv(Conv(spec, compiler)(x, w), x, w, padding)


@pytest.mark.parametrize("n, c, co, hw, k, pad", [
    (8, 16, 16, 32, 3, 1), (2, 64, 24, 16, 3, 1), (3, 3, 32, 28, 5, 2), (1, 8, 8, 40, 1, 0),
    (2, 7, 9, 33, 3, 0)])
def test_model_sizes(compiler, n, c, co, hw, k, pad):
    x, w = arrays(n, c, co, hw, hw, k, k)
    padding = (pad,) * 4
    check_conv(Conv(ConvSpec(c, co, hw, hw, (k, k), padding), compiler)(x, w), x, w, padding)


def test_nan_and_inf_propagate(compiler):
    x, w = arrays(2, 3, 4, 6, 20, 3, 3)
    x[0, 1, 2, 5], x[1, 0, 0, 0], w[2, 1, 1, 1] = np.nan, np.inf, -np.inf
    padding = (1, 1, 1, 1)
    got = Conv(ConvSpec(3, 4, 6, 20, (3, 3), padding), compiler)(x, w)
    want = conv64(x, w, padding)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_arrays_the_code_does_not_take_are_refused_before_it_runs(compiler):
    conv = Conv(ConvSpec(3, 4, 6, 20, (3, 3), (1, 1, 1, 1)), compiler)
    x, w = arrays(2, 3, 4, 6, 20, 3, 3)
    out = np.zeros((2, 4, 6, 20), np.float32)  # (np.empty's bytes may cast with a warning)
    frozen = out.copy()
    frozen.flags.writeable = False
    wide = np.empty((2, 3, 6, 40), np.float32)
    for args in [(np.asfortranarray(x), w, None), (x.astype(np.float64), w, None),
                 (x[:, :, :, :10], w, None), (x, w[:2], None), (x, w, out[:1]),
                 (x, w, frozen), (wide[:, :, :, :20], w, None), (x, w, out.astype(np.float64))]:
        assert conv.sizes(*args) is None
        with pytest.raises(ShapeError, match="conv2d: the generated code takes"):
            conv(*args[:2], out=args[2])
    overlapping = np.empty(4 * 6 * 20 * 2 + 3 * 6 * 20 * 2, np.float32)
    x_view = overlapping[:x.size].reshape(x.shape)
    assert conv.sizes(x_view, w, overlapping[-out.size:].reshape(out.shape)) is not None
    assert conv.sizes(x_view, w, overlapping[:out.size].reshape(out.shape)) is None


def test_a_batch_split_across_threads_gives_one_threads_bits(compiler, parts):
    """The batch's images are the rows `call_rows` splits (forced at this size)."""
    conv = Conv(ConvSpec(4, 8, 12, 20, (3, 3), (1, 1, 1, 1)), compiler)
    x, w = arrays(5, 4, 8, 12, 20, 3, 3)
    one = conv(x, w)
    np.testing.assert_array_equal(with_threads(3, conv, x, w), one)
    assert parts == [1, 3]


# ---------------------------------------------------------------- in the backend

def f32(*shape):
    return TensorType("f32", list(shape))


def fused_module(types, body):
    module = Module([function("f", types, body)])
    PassManager(["fuse"], verify_each=True).run(module)
    return module


def conv_relu(b, x, w, e, padding=(1, 1, 1, 1)):
    return b.relu(b.add(b.conv2d(x, w, padding=padding), e))


OPERANDS = {  # kind: the epilogue operand's shape for an output [N, 16, 20, 24]
    "per channel": [16, 1, 1], "per pixel": [20, 24], "per image and element": ["N", 16, 20, 24],
    "one image's shape": [1, 16, 20, 24], "scalar": [],
}


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
@pytest.mark.parametrize("kind", OPERANDS)
def test_a_fused_epilogue_runs_in_the_tiles(compiler, kind, monkeypatch):
    """relu(conv(x, w) + e) is one call of the code for every kind of operand e, with
    the interpreter's values to float32 rounding, into the arena's buffer or not."""
    types = [f32("N", 8, 20, 24), f32(16, 8, 3, 3), f32(*OPERANDS[kind])]
    module = fused_module(types, conv_relu)
    (op,) = [o for o in module.walk() if o.name == "fused"]
    kernel = FusedKernel(op, compiler, min_elements=0)
    assert kernel._fused is not None
    runs = []
    original = Conv.run
    monkeypatch.setattr(Conv, "run", lambda self, *a: runs.append(a[3]) or original(self, *a))
    x, w = arrays(3, 8, 16, 20, 24, 3, 3)
    e = rng.standard_normal([3 if d == "N" else d for d in OPERANDS[kind]]).astype(np.float32)
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, w, e)[0]
    assert runs == [3]
    exact, bound = reference(x, w, (1, 1, 1, 1))
    want = np.maximum(exact + e, 0)
    assert (np.abs(got - want) <= bound + 1e-6).all()
    out = np.full((3, 16, 20, 24), np.nan, np.float32)
    assert kernel.out_evaluator((True,))([x, w, e], [], [out])[0] is out
    np.testing.assert_array_equal(out, got)


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
def test_a_body_with_a_comparison_and_a_transcendental(compiler):
    def body(b, x, w, e):
        s = b.add(b.conv2d(x, w, padding=(1, 1, 1, 1)), e)
        leaky = b.select(b.gt(s, b.constant(0.0, "float32")), s,
                         b.mul(s, b.constant(0.1, "float32")))
        return b.sigmoid(leaky)
    types = [f32("N", 4, 16, 16), f32(8, 4, 3, 3), f32(8, 1, 1)]
    module = fused_module(types, body)
    (op,) = [o for o in module.walk() if o.name == "fused"]
    assert FusedKernel(op, compiler, min_elements=0)._fused is not None
    x, w = arrays(2, 4, 8, 16, 16, 3, 3)
    e = rng.standard_normal((8, 1, 1)).astype(np.float32)
    want = run(function("f", types, body), x, w, e)[0]
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, w, e)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
def test_arrays_the_tiles_refuse_run_the_anchor_then_the_body(compiler):
    """A strided input (a view): NumPy's convolution, then the body, as before."""
    types = [f32(2, 8, 20, 24), f32(16, 8, 3, 3), f32(16, 1, 1)]
    module = fused_module(types, conv_relu)
    (op,) = [o for o in module.walk() if o.name == "fused"]
    assert FusedKernel(op, compiler, min_elements=0)._fused is not None
    x, w = arrays(2, 8, 16, 20, 48, 3, 3)
    strided = x[:, :, :, ::2]
    e = rng.standard_normal((16, 1, 1)).astype(np.float32)
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(strided, w, e)[0]
    want = run(function("f", types, conv_relu), strided, w, e)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
def test_a_standalone_conv_and_a_plain_anchor_run_the_code(compiler, monkeypatch):
    runs = []
    original = Conv.run
    monkeypatch.setattr(Conv, "run", lambda self, *a: runs.append(a[3]) or original(self, *a))
    x, w = arrays(2, 3, 16, 24, 24, 3, 3)
    types = [f32("N", 3, 24, 24), f32(16, 3, 3, 3)]

    def plain(b, x, w):
        return b.conv2d(x, w, padding=(1, 1, 1, 1))
    module = Module([function("f", types, plain)])
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, w)[0]
    check_conv(got, x, w, (1, 1, 1, 1))

    def reduced(b, x, w):  # an anchor whose body the tiles do not apply: a reduction
        return b.sum(b.relu(b.conv2d(x, w, padding=(1, 1, 1, 1))), axis=(2, 3))
    module = fused_module(types, reduced)
    (op,) = [o for o in module.walk() if o.name == "fused"]
    assert FusedKernel(op, compiler, min_elements=0)._fused is None
    got = compile_plan(module.main, LLVMLowering(compiler, min_elements=0))(x, w)[0]
    want = run(function("f", types, reduced), x, w)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert runs == [2, 2]


@pytest.mark.parametrize("attrs, image", [
    ({"stride": (2, 2)}, 32), ({"dilation": (2, 2)}, 32), ({"groups": 2}, 32),
    ({}, 8), ({}, 7)])
def test_convolutions_the_code_does_not_pay_for_keep_numpy(compiler, attrs, image):
    """Strided, dilated and grouped convolutions, and images too narrow for the
    tiles' lanes (8 of 16 used: 1.5 times NumPy's time), get no code."""
    def body(b, x, w):
        return b.conv2d(x, w, padding=(1, 1, 1, 1), **attrs)
    module = Module([function("f", [f32("N", 4, image, image), f32(8, 4 // attrs.get(
        "groups", 1), 3, 3)], body)])
    (op,) = [o for o in module.walk() if o.name == "conv2d"]
    assert conv_spec(op, compiler) is None
    assert LLVMLowering(compiler, min_elements=0).kernel(op) is None


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
def test_a_compiled_conv_bn_relu_layer_matches_eager():
    """The issue-11 block, frozen for inference (BatchNorm folded into the
    convolution): the compiled output is eager's."""
    conv, bn = irflow.nn.Conv2D(16, 16, 3, padding=1), irflow.nn.BatchNorm2D(16)
    bn._mean.set_value(rng.standard_normal(16).astype(np.float32) * 0.1)
    bn._variance.set_value(rng.uniform(0.5, 2, 16).astype(np.float32))
    model = irflow.nn.Sequential(conv, bn, irflow.nn.ReLU())
    model.eval()
    x = irflow.to_tensor(rng.standard_normal((4, 16, 32, 32)).astype(np.float32))
    compiled = irflow.compile(model, input_spec=[irflow.static.InputSpec([None, 16, 32, 32])],
                              freeze=True)
    with irflow.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not AVX512, reason="the backend runs the code on AVX-512 hosts")
@pytest.mark.parametrize("kernel, padding", [((3, 3), (1, 1, 1, 1)), ((3, 3), (0, 0, 0, 0)),
                                             ((5, 3), (2, 1, 0, 2)), ((1, 1), (0, 0, 0, 0))])
def test_the_input_gradient_is_the_transposed_convolution(compiler, kernel, padding,
                                                          monkeypatch):
    """conv2d_grad_input of stride 1 runs the code (the filters transposed and
    flipped, the padding what the forward's leaves of the kernel), with the NumPy
    kernel's values to float32 rounding, into the arena's buffer too."""
    runs = []
    original = Conv.run
    monkeypatch.setattr(Conv, "run", lambda self, *a: runs.append(a[3]) or original(self, *a))
    n, c, co, h, w = 3, 6, 10, 20, 32
    x_types = [f32("N", c, h, w), f32(co, c, *kernel)]
    out_hw = (h + padding[0] + padding[1] - kernel[0] + 1, w + padding[2] + padding[3] - kernel[1] + 1)

    def body(b, g, wt):
        return b.conv2d_grad_input(g, wt, input_hw=(h, w), padding=padding)
    module = Module([function("f", [f32("N", co, *out_hw), x_types[1]], body)])
    (op,) = [o for o in module.walk() if o.name == "conv2d_grad_input"]
    kernel_fn = LLVMLowering(compiler, min_elements=0).kernel(op)
    assert kernel_fn is not None
    g = rng.standard_normal((n, co, *out_hw)).astype(np.float32)
    wt = rng.standard_normal((co, c, *kernel)).astype(np.float32)
    numpy = lookup("conv2d_grad_input").kernel
    want = numpy(g.astype(np.float64), wt.astype(np.float64), input_hw=(h, w), stride=(1, 1),
                 padding=padding, dilation=(1, 1), groups=1)
    bound = (co * kernel[0] * kernel[1] + 2) * EPS * numpy(
        np.abs(g).astype(np.float64), np.abs(wt).astype(np.float64), input_hw=(h, w),
        stride=(1, 1), padding=padding, dilation=(1, 1), groups=1) + 1e-38
    out = np.full((n, c, h, w), np.nan, np.float32)
    for got in (kernel_fn(g, wt), kernel_fn(g, wt, out=out)):
        assert got.shape == (n, c, h, w) and (np.abs(got - want) <= bound).all()
    assert runs == [n, n]


@pytest.mark.parametrize("attrs", [{"stride": (2, 2), "padding": (1, 1, 1, 1)},
                                   {"padding": (3, 3, 3, 3)}])
def test_input_gradients_the_code_does_not_run_keep_numpy(compiler, attrs):
    """A strided convolution's input gradient, and one whose padding is wider than
    its kernel (the transposed convolution would need negative padding)."""
    out_hw = (32 + 2 * attrs["padding"][0] - 3) // attrs.get("stride", (1, 1))[0] + 1

    def body(b, g, wt):
        return b.conv2d_grad_input(g, wt, input_hw=(32, 32), **attrs)
    module = Module([function("f", [f32("N", 4, out_hw, out_hw), f32(4, 4, 3, 3)], body)])
    (op,) = [o for o in module.walk() if o.name == "conv2d_grad_input"]
    assert LLVMLowering(compiler, min_elements=0).kernel(op) is None
