"""Convolution and pooling (irflow.ops.nn): kernels against slow loop references written
from Paddle's definitions, type rules (symbolic batch, error messages), canonical
attributes, adjointness of the gradient primitives, and every VJP against finite
differences."""
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from irflow.codegen import run
from irflow.errors import ShapeError
from irflow.ir import Builder, Function, Module, TensorType, function, lookup, parse, verify
from tests.support.opcheck import apply_op, check_op_vjp, types_of, vjp_function


def infer(name, types, **attrs):
    """(result type, canonical attrs) of `name` on operands of `types`, with the op
    name prefixed to errors as the builder does."""
    fn = Function("f", types)
    op = Builder(fn.block).create(name, list(fn.args), attrs)
    return op.results[0].type, op.attrs


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def distinct(*shape, seed=0):
    """Values 0.1 apart, so that every window has a single maximum far from ties."""
    return np.random.default_rng(seed).permutation(math.prod(shape)).reshape(shape) * 0.1


def four(padding):
    if isinstance(padding, int):
        return (padding,) * 4
    return padding if len(padding) == 4 else (padding[0], padding[0], padding[1], padding[1])


def two(value):
    return (value, value) if isinstance(value, int) else value


# ---------------------------------------------------------------- references

def ref_conv2d(x, w, stride=1, padding=0, dilation=1, groups=1):
    (sh, sw), (dh, dw), (top, bottom, left, right) = two(stride), two(dilation), four(padding)
    n, c, h, wd = x.shape
    c_out, c_group, kh, kw = w.shape
    padded = np.zeros((n, c, h + top + bottom, wd + left + right))
    padded[:, :, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c_out, oh, ow))
    for b in range(n):
        for o in range(c_out):
            group = o // (c_out // groups)
            for y in range(oh):
                for z in range(ow):
                    total = 0.0
                    for ci in range(c_group):
                        for i in range(kh):
                            for j in range(kw):
                                total += (padded[b, group * c_group + ci, y * sh + i * dh,
                                                 z * sw + j * dw] * w[o, ci, i, j])
                    out[b, o, y, z] = total
    return out


def pool_windows(h, w, kernel_size, stride, padding, ceil_mode):
    """Paddle's pooling loop bounds: per output cell, the window clipped to the padded
    input (for the non-exclusive divisor) and to the input (for the values)."""
    (kh, kw), (top, bottom, left, right) = two(kernel_size), four(padding)
    sh, sw = two(stride if stride is not None else kernel_size)
    extra_h, extra_w = (sh - 1, sw - 1) if ceil_mode else (0, 0)
    oh = (h - kh + top + bottom + extra_h) // sh + 1
    ow = (w - kw + left + right + extra_w) // sw + 1
    for y in range(oh):
        for z in range(ow):
            hs, ws = y * sh - top, z * sw - left
            # Paddle's kernel clips a window's end at the input's end plus the padding
            # before the axis (top, left), also where the padding after it differs
            he, we = min(hs + kh, h + top), min(ws + kw, w + left)
            yield y, z, (he - hs) * (we - ws), (max(hs, 0), min(he, h), max(ws, 0), min(we, w))


def pool_out_hw(h, w, kernel_size, stride, padding, ceil_mode):
    cells = [(y, z) for y, z, _, _ in pool_windows(h, w, kernel_size, stride, padding,
                                                   ceil_mode)]
    return cells[-1][0] + 1, cells[-1][1] + 1


def ref_max_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False):
    n, c, h, w = x.shape
    out = np.zeros((n, c, *pool_out_hw(h, w, kernel_size, stride, padding, ceil_mode)))
    for y, z, _, (h0, h1, w0, w1) in pool_windows(h, w, kernel_size, stride, padding,
                                                  ceil_mode):
        out[:, :, y, z] = x[:, :, h0:h1, w0:w1].max(axis=(2, 3))
    return out


def ref_avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True):
    n, c, h, w = x.shape
    out = np.zeros((n, c, *pool_out_hw(h, w, kernel_size, stride, padding, ceil_mode)))
    for y, z, padded_count, (h0, h1, w0, w1) in pool_windows(h, w, kernel_size, stride,
                                                             padding, ceil_mode):
        count = (h1 - h0) * (w1 - w0) if exclusive else padded_count
        out[:, :, y, z] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / count
    return out


def ref_max_pool2d_grad(x, g, kernel_size, stride=None, padding=0, ceil_mode=False):
    """Each cotangent to the first maximum of its window, scanning rows then columns."""
    n, c, h, w = x.shape
    dx = np.zeros_like(x)
    for y, z, _, (h0, h1, w0, w1) in pool_windows(h, w, kernel_size, stride, padding,
                                                  ceil_mode):
        for b in range(n):
            for ch in range(c):
                best = None
                for r in range(h0, h1):
                    for s in range(w0, w1):
                        if best is None or x[b, ch, r, s] > x[b, ch, best[0], best[1]]:
                            best = (r, s)
                dx[b, ch, best[0], best[1]] += g[b, ch, y, z]
    return dx


def ref_adaptive_avg_pool2d(x, output_size):
    oh, ow = two(output_size)
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for z in range(ow):
            h0, h1 = math.floor(y * h / oh), math.ceil((y + 1) * h / oh)
            w0, w1 = math.floor(z * w / ow), math.ceil((z + 1) * w / ow)
            out[:, :, y, z] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


# ---------------------------------------------------------------- conv2d

CONV_CASES = [
    # (x shape, w shape, attrs)
    ((2, 3, 6, 5), (4, 3, 3, 3), {}),
    ((2, 3, 7, 7), (4, 3, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 4, 7, 6), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0, 2, 1),
                                  "dilation": (1, 2), "groups": 2}),
    ((1, 4, 5, 5), (8, 1, 3, 3), {"padding": 1, "groups": 4}),          # depthwise, x2
    ((2, 2, 8, 7), (3, 2, 3, 2), {"dilation": 2, "padding": (2, 1), "stride": (3, 2)}),
    ((2, 3, 7, 5), (2, 3, 1, 1), {"stride": 3}),
    ((1, 2, 4, 3), (3, 2, 4, 3), {}),                                     # one window
    ((2, 3, 5, 5), (3, 1, 3, 3), {"padding": 1, "groups": 3}),          # depthwise, x1
    ((2, 4, 3, 3), (6, 2, 1, 1), {"groups": 2}),                         # pointwise
    ((2, 3, 5, 4), (2, 3, 1, 1), {"stride": 2}),                         # 1x1, strided
    ((1, 1, 4, 4), (1, 1, 1, 1), {}),                                     # 1x1, one channel
]


@pytest.mark.parametrize("x_shape, w_shape, attrs", CONV_CASES)
def test_conv2d_matches_loop_reference(x_shape, w_shape, attrs):
    x, w = normal(*x_shape, seed=1), normal(*w_shape, seed=2)
    expected = ref_conv2d(x, w, **attrs)
    np.testing.assert_allclose(apply_op("conv2d", [x, w], **attrs)[0], expected,
                               rtol=1e-12, atol=1e-12)
    (out32,) = apply_op("conv2d", [x.astype(np.float32), w.astype(np.float32)], **attrs)
    np.testing.assert_allclose(out32, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("x_shape, w_shape, attrs", CONV_CASES)
def test_conv2d_vjp(x_shape, w_shape, attrs):
    check_op_vjp("conv2d", [normal(*x_shape, seed=3), normal(*w_shape, seed=4)], attrs,
                 atol=1e-7)


@st.composite
def conv_geometry(draw):
    groups = draw(st.integers(1, 3))
    c_group, c_out_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(4))
    extent = (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1)
    h = max(1, extent[0] - padding[0] - padding[1]) + draw(st.integers(0, 3))
    w = max(1, extent[1] - padding[2] - padding[3]) + draw(st.integers(0, 3))
    x_shape = (draw(st.integers(1, 2)), c_group * groups, h, w)
    w_shape = (c_out_group * groups, c_group, kh, kw)
    return x_shape, w_shape, {"stride": stride, "padding": padding, "dilation": dilation,
                              "groups": groups}


@given(conv_geometry(), st.integers(0, 2**16))
def test_conv2d_and_its_gradients_on_random_geometry(geometry, seed):
    """The forward kernel matches the reference, and the two gradient primitives are
    the adjoints of the convolution in x and in w."""
    x_shape, w_shape, attrs = geometry
    x, w = normal(*x_shape, seed=seed), normal(*w_shape, seed=seed + 1)
    (y,) = apply_op("conv2d", [x, w], **attrs)
    np.testing.assert_allclose(y, ref_conv2d(x, w, **attrs), rtol=1e-10, atol=1e-10)
    g = normal(*y.shape, seed=seed + 2)
    (dx,) = apply_op("conv2d_grad_input", [g, w], input_hw=x_shape[2:], **attrs)
    (dw,) = apply_op("conv2d_grad_filter", [x, g], kernel_hw=w_shape[2:], **attrs)
    assert np.vdot(y, g) == pytest.approx(np.vdot(x, dx), rel=1e-9, abs=1e-9)
    assert np.vdot(y, g) == pytest.approx(np.vdot(w, dw), rel=1e-9, abs=1e-9)


def ref_conv2d_by_taps(x, w, stride, padding, dilation, groups):
    """conv2d, its input gradient and its filter gradient written plainly: a zero-padded
    copy of x, then one product per kernel tap and group over the strided slice that
    tap sees. Shares nothing with the kernels (no im2col, no chunks), and is fast
    enough for batches the kernels split into several chunks."""
    (sh, sw), (dh, dw), (top, bottom, left, right) = stride, dilation, padding
    n, c, h, wd = x.shape
    c_out, c_group, kh, kw = w.shape
    padded = np.zeros((n, c, h + top + bottom, wd + left + right), x.dtype)
    padded[:, :, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    m = c_out // groups

    def tap(frame, i, j, grp):
        return frame[:, grp * c_group:(grp + 1) * c_group,
                     i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
    y = np.zeros((n, c_out, oh, ow), x.dtype)
    for grp in range(groups):
        for i in range(kh):
            for j in range(kw):
                y[:, grp * m:(grp + 1) * m] += np.einsum(
                    "oc,nchw->nohw", w[grp * m:(grp + 1) * m, :, i, j], tap(padded, i, j, grp))
    return y, oh, ow, tap, padded


def ref_conv2d_grads(x, w, g, stride, padding, dilation, groups):
    _, oh, ow, tap, padded = ref_conv2d_by_taps(x, w, stride, padding, dilation, groups)
    (top, _, left, _), (h, wd) = padding, x.shape[2:]
    c_out, _, kh, kw = w.shape
    m = c_out // groups
    dpadded, dw = np.zeros_like(padded), np.zeros_like(w)
    for grp in range(groups):
        gg = g[:, grp * m:(grp + 1) * m]
        for i in range(kh):
            for j in range(kw):
                tap(dpadded, i, j, grp)[...] += np.einsum(
                    "oc,nohw->nchw", w[grp * m:(grp + 1) * m, :, i, j], gg)
                dw[grp * m:(grp + 1) * m, :, i, j] = np.einsum(
                    "nohw,nchw->oc", gg, tap(padded, i, j, grp))
    return dpadded[:, :, top:top + h, left:left + wd], dw


LARGE_CONV_CASES = [
    # (x shape, w shape, attrs): batches that run in several chunks of the scratch
    # budget, the last one partial, and images that need more than the budget alone
    ((30, 4, 16, 16), (5, 4, 3, 3), {"padding": 1}),
    ((17, 6, 15, 13), (4, 3, 3, 2), {"stride": (2, 1), "padding": (2, 0, 1, 3),
                                     "dilation": (2, 1), "groups": 2}),
    ((3, 64, 32, 32), (8, 64, 3, 3), {"padding": 1}),
    ((21, 8, 16, 16), (8, 1, 3, 3), {"padding": (1, 1, 0, 2), "groups": 8}),
    ((40, 8, 12, 12), (6, 8, 1, 1), {}),
    ((25, 9, 10, 10), (6, 3, 5, 5), {"stride": 3, "groups": 3}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_shape, w_shape, attrs", LARGE_CONV_CASES)
def test_conv2d_kernels_on_batches_of_several_chunks(x_shape, w_shape, attrs, dtype):
    x = normal(*x_shape, seed=7).astype(dtype)
    w = normal(*w_shape, seed=8).astype(dtype)
    full = lookup("conv2d").complete_attrs(attrs, types_of([x, w]))
    geometry = [full[k] for k in ("stride", "padding", "dilation", "groups")]
    expected = ref_conv2d_by_taps(x, w, *geometry)[0]
    tol = dict(rtol=1e-11, atol=1e-11) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-3)
    (y,) = apply_op("conv2d", [x, w], **attrs)
    assert y.dtype == dtype and y.flags.c_contiguous
    np.testing.assert_allclose(y, expected, **tol)
    g = normal(*y.shape, seed=9).astype(dtype)
    dx_ref, dw_ref = ref_conv2d_grads(x, w, g, *geometry)
    (dx,) = apply_op("conv2d_grad_input", [g, w], input_hw=x_shape[2:], **attrs)
    (dw,) = apply_op("conv2d_grad_filter", [x, g], kernel_hw=w_shape[2:], **attrs)
    assert dx.flags.c_contiguous and dw.flags.c_contiguous
    np.testing.assert_allclose(dx, dx_ref, **tol)
    np.testing.assert_allclose(dw, dw_ref, **(tol if dtype == np.float64
                                              else dict(rtol=1e-4, atol=2e-2)))


@pytest.mark.parametrize("x_shape, w_shape, attrs", LARGE_CONV_CASES[:2] + CONV_CASES[2:4])
def test_conv2d_out_kernels_write_into_the_buffer(x_shape, w_shape, attrs):
    """The out kernels write the kernel's result over whatever `out` held, into `out`
    itself, also when `out` is not row-major."""
    x, w = normal(*x_shape, seed=10), normal(*w_shape, seed=11)
    for name, operands, extra in (("conv2d", [x, w], {}),
                                  ("conv2d_grad_input", None, {"input_hw": x_shape[2:]})):
        opdef = lookup(name)
        if operands is None:
            operands = [normal(*expected.shape, seed=12), w]
        full = opdef.complete_attrs(dict(attrs, **extra), types_of(operands))
        expected = opdef.kernel(*operands, **full)
        buffer = np.full(expected.shape, np.nan)
        assert opdef.out_kernel(*operands, out=buffer, **full) is buffer
        np.testing.assert_array_equal(buffer, expected)
        strided = np.full(expected.shape[::-1], np.nan).T
        assert opdef.out_kernel(*operands, out=strided, **full) is strided
        np.testing.assert_array_equal(strided, expected)


def test_conv2d_types_with_symbolic_batch():
    out, attrs = infer("conv2d", [TensorType("f32", ("N", 3, 8, 8)),
                                  TensorType("f32", (4, 3, 3, 3))], stride=2, padding=1)
    assert str(out) == "f32[N,4,4,4]"
    assert attrs == {"stride": (2, 2), "padding": (1, 1, 1, 1), "dilation": (1, 1),
                     "groups": 1}
    out, _ = infer("conv2d", [TensorType("f64", ("B", 6, 9, 7)),
                              TensorType("f64", (12, 2, 3, 2))],
                   padding=(1, 0, 2, 1), dilation=(2, 1), groups=3)
    assert str(out) == "f64[B,12,6,9]"


@pytest.mark.parametrize("given_attrs, canonical", [
    ({"stride": 2, "padding": 1, "dilation": 2},
     {"stride": (2, 2), "padding": (1, 1, 1, 1), "dilation": (2, 2)}),
    ({"stride": [1, 2], "padding": [1, 2]},
     {"stride": (1, 2), "padding": (1, 1, 2, 2)}),
    ({"padding": (0, 1, 2, 3)}, {"padding": (0, 1, 2, 3)}),
])
def test_conv2d_canonical_attributes_are_idempotent(given_attrs, canonical):
    types = [TensorType("f32", (1, 2, 9, 9)), TensorType("f32", (2, 2, 3, 3))]
    full = lookup("conv2d").complete_attrs(given_attrs, types)
    assert {k: full[k] for k in canonical} == canonical
    assert lookup("conv2d").complete_attrs(full, types) == full


@pytest.mark.parametrize("x, w, attrs, message", [
    ("f32[N,3,8,H]", "f32[4,3,3,3]", {}, "input must have static H and W, got f32[N,3,8,H]"),
    ("f32[N,C,8,8]", "f32[4,3,3,3]", {}, "3 input channels with groups=1, but the input "
                                         "f32[N,C,8,8] has C"),
    ("f32[1,3,8]", "f32[4,3,3,3]", {}, "input must be a rank-4 [N, C, H, W] tensor"),
    ("i64[1,3,8,8]", "f32[4,3,3,3]", {}, "input must be float typed, got i64[1,3,8,8]"),
    ("f32[1,3,8,8]", "f64[4,3,3,3]", {}, "operand dtypes differ"),
    ("f32[1,3,8,8]", "f32[4,3,K,3]", {}, "filter must have static dims, got f32[4,3,K,3]"),
    ("f32[1,3,8,8]", "f32[4,2,3,3]", {},
     "the filter [4, 2, 3, 3] takes 2 channels per group, so 2 input channels with "
     "groups=1, but the input f32[1,3,8,8] has 3"),
    ("f32[1,3,8,8]", "f32[4,1,3,3]", {"groups": 2},
     "input channels 3 are not divisible by groups=2"),
    ("f32[1,4,8,8]", "f32[3,2,3,3]", {"groups": 2},
     "filter output channels 3 are not divisible by groups=2"),
    ("f32[1,3,4,8]", "f32[4,3,3,3]", {"dilation": 2},
     "the padded input height 4 is smaller than the kernel height 5"),
    ("f32[1,3,8,8]", "f32[4,3,3,3]", {"stride": 0}, "stride must be at least 1, got 0"),
    ("f32[1,3,8,8]", "f32[4,3,3,3]", {"padding": (1, 2, 3)},
     "padding must be an int, a pair (h, w) or a 4-tuple"),
    ("f32[1,3,8,8]", "f32[4,3,3,3]", {"padding": -1}, "padding must be non-negative"),
    ("f32[1,3,8,8]", "f32[4,3,3,3]", {"groups": 0}, "groups must be a positive int, got 0"),
])
def test_conv2d_rejects_bad_operands_and_attributes(x, w, attrs, message):
    types = [parse_type(x), parse_type(w)]
    with pytest.raises(ShapeError) as info:
        infer("conv2d", types, **attrs)
    assert info.value.message.startswith("conv2d: ")
    assert message in info.value.message


def parse_type(text):
    return parse(f"func @f(%x: {text}) -> () {{\n  return\n}}\n").main.args[0].type


def test_conv2d_gradient_primitives_check_the_cotangent():
    w = TensorType("f32", (4, 2, 3, 3))
    out, _ = infer("conv2d_grad_input", [TensorType("f32", ("N", 4, 4, 4)), w],
                   input_hw=(8, 8), stride=2, padding=1, groups=2)
    assert str(out) == "f32[N,4,8,8]"
    out, _ = infer("conv2d_grad_filter", [TensorType("f32", ("N", 4, 8, 8)),
                                          TensorType("f32", ("N", 4, 4, 4))],
                   kernel_hw=(3, 3), stride=2, padding=1, groups=2)
    assert out == w
    with pytest.raises(ShapeError, match=r"the cotangent f32\[N,4,5,5\] does not match the "
                                         r"forward result f32\[N,4,4,4\]"):
        infer("conv2d_grad_input", [TensorType("f32", ("N", 4, 5, 5)), w],
              input_hw=(8, 8), stride=2, padding=1, groups=2)
    with pytest.raises(ShapeError, match=r"does not match the forward result f32\[M,4,4,4\]"):
        infer("conv2d_grad_filter", [TensorType("f32", ("M", 4, 8, 8)),
                                     TensorType("f32", ("N", 4, 4, 4))],
              kernel_hw=(3, 3), stride=2, padding=1, groups=2)


# ---------------------------------------------------------------- pooling

POOL_CASES = [
    # (x shape, attrs)
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((2, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((2, 2, 6, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 3, 5, 7), {"kernel_size": (2, 3), "stride": (1, 2), "padding": (0, 1, 1, 0),
                    "ceil_mode": True}),
    ((2, 2, 5, 5), {"kernel_size": 2, "ceil_mode": True}),     # overhangs past the input
    ((1, 2, 5, 6), {"kernel_size": (3, 2), "stride": (2, 3), "padding": (2, 1)}),
]


@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_max_pool2d_matches_loop_reference(x_shape, attrs):
    x = normal(*x_shape, seed=5)
    np.testing.assert_array_equal(apply_op("max_pool2d", [x], **attrs)[0],
                                  ref_max_pool2d(x, **attrs))
    (out32,) = apply_op("max_pool2d", [x.astype(np.float32)], **attrs)
    np.testing.assert_array_equal(out32, ref_max_pool2d(x, **attrs).astype(np.float32))


@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_avg_pool2d_matches_loop_reference(x_shape, attrs, exclusive):
    x = normal(*x_shape, seed=6)
    expected = ref_avg_pool2d(x, **attrs, exclusive=exclusive)
    np.testing.assert_allclose(apply_op("avg_pool2d", [x], **attrs, exclusive=exclusive)[0],
                               expected, rtol=1e-12)
    (out32,) = apply_op("avg_pool2d", [x.astype(np.float32)], **attrs, exclusive=exclusive)
    np.testing.assert_allclose(out32, expected, rtol=1e-5, atol=1e-6)


def test_avg_pool2d_divisors_follow_paddle():
    """On ones, the result is (cells counted in the sum) / divisor: exclusive counts input
    cells only; otherwise padding counts but the ceil_mode overhang does not."""
    x = np.ones((1, 1, 3, 3))
    attrs = {"kernel_size": 2, "padding": (1, 0, 1, 0), "ceil_mode": True}
    (exclusive,) = apply_op("avg_pool2d", [x], **attrs)
    (inclusive,) = apply_op("avg_pool2d", [x], **attrs, exclusive=False)
    np.testing.assert_array_equal(exclusive, np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(inclusive, [[[[1 / 4, 2 / 4], [2 / 4, 4 / 4]]]])
    (overhang,) = apply_op("avg_pool2d", [x], kernel_size=2, ceil_mode=True, exclusive=False)
    np.testing.assert_array_equal(overhang, np.ones((1, 1, 2, 2)))


@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_max_pool2d_vjp(x_shape, attrs):
    check_op_vjp("max_pool2d", [distinct(*x_shape, seed=7)], attrs)


@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_avg_pool2d_vjp(x_shape, attrs, exclusive):
    check_op_vjp("avg_pool2d", [normal(*x_shape, seed=8)], {**attrs, "exclusive": exclusive})


@pytest.mark.parametrize("x_shape, attrs", POOL_CASES)
def test_max_pool2d_grad_sends_ties_to_the_first_maximum(x_shape, attrs):
    x = np.random.default_rng(9).integers(0, 3, x_shape).astype(np.float64)
    (out,) = apply_op("max_pool2d", [x], **attrs)
    g = normal(*out.shape, seed=10)
    (dx,) = apply_op("max_pool2d_grad", [x, g], **attrs)
    np.testing.assert_allclose(dx, ref_max_pool2d_grad(x, g, **attrs), rtol=1e-12)


def test_max_pool2d_and_its_gradient_with_nans():
    """A NaN is its window's maximum (NumPy's max), and its gradient goes to the
    window's first NaN (argmax's choice)."""
    x = np.array([[[[1.0, np.nan, 3.0, 0.0], [np.nan, 2.0, -1.0, -2.0]]]])
    (out,) = apply_op("max_pool2d", [x], kernel_size=2)
    np.testing.assert_array_equal(out, [[[[np.nan, 3.0]]]])
    (dx,) = apply_op("max_pool2d_grad", [x, np.array([[[[5.0, 7.0]]]])], kernel_size=2)
    np.testing.assert_array_equal(dx, [[[[0.0, 5.0, 7.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])


def test_max_pool2d_grad_on_a_flat_window():
    x = np.zeros((1, 1, 2, 2))
    (dx,) = apply_op("max_pool2d_grad", [x, np.full((1, 1, 1, 1), 5.0)], kernel_size=2)
    np.testing.assert_array_equal(dx, [[[[5.0, 0.0], [0.0, 0.0]]]])


@st.composite
def pool_geometry(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, kernel[i // 2] - 1)) for i in range(4))
    ceil_mode = draw(st.booleans())
    h = max(1, kernel[0] - padding[0] - padding[1]) + draw(st.integers(0, 4))
    w = max(1, kernel[1] - padding[2] - padding[3]) + draw(st.integers(0, 4))
    attrs = {"kernel_size": kernel, "stride": stride, "padding": padding,
             "ceil_mode": ceil_mode}
    oh, ow = pool_out_hw(h, w, **attrs)
    assume((oh - 1) * stride[0] - padding[0] < h and (ow - 1) * stride[1] - padding[2] < w)
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w), attrs


@given(pool_geometry(), st.booleans(), st.integers(0, 2**16))
def test_pools_and_their_gradients_on_random_geometry(geometry, exclusive, seed):
    x_shape, attrs = geometry
    x = distinct(*x_shape, seed=seed)
    np.testing.assert_array_equal(apply_op("max_pool2d", [x], **attrs)[0],
                                  ref_max_pool2d(x, **attrs))
    (avg,) = apply_op("avg_pool2d", [x], **attrs, exclusive=exclusive)
    np.testing.assert_allclose(avg, ref_avg_pool2d(x, **attrs, exclusive=exclusive),
                               rtol=1e-12, atol=1e-12)
    g = normal(*avg.shape, seed=seed)
    (dx,) = apply_op("avg_pool2d_grad", [g], input_hw=x_shape[2:], **attrs,
                     exclusive=exclusive)
    assert np.vdot(avg, g) == pytest.approx(np.vdot(x, dx), rel=1e-9, abs=1e-9)
    (dx,) = apply_op("max_pool2d_grad", [x, g], **attrs)
    np.testing.assert_allclose(dx, ref_max_pool2d_grad(x, g, **attrs), rtol=1e-12)


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
def test_pool_types_and_canonical_attributes(name):
    out, attrs = infer(name, [TensorType("f32", ("N", "C", 7, 6))], kernel_size=3,
                       padding=(1, 0), ceil_mode=True)
    assert str(out) == "f32[N,C,3,2]"
    assert attrs["kernel_size"] == (3, 3) and attrs["stride"] == (3, 3)
    assert attrs["padding"] == (1, 1, 0, 0)
    types = [TensorType("f32", (1, 1, 7, 6))]
    assert lookup(name).complete_attrs(attrs, types) == attrs


@pytest.mark.parametrize("x, attrs, message", [
    ("f32[N,C,H,6]", {"kernel_size": 2}, "input must have static H and W, got f32[N,C,H,6]"),
    ("i32[1,1,4,4]", {"kernel_size": 2}, "input must be float typed"),
    ("f32[1,1,4,4]", {"kernel_size": 2, "padding": 2},
     "a pooling window would cover only padding along the height (input height 4, "
     "kernel 2, stride 2, padding 2/2, ceil_mode=False)"),
    ("f32[1,1,5,5]", {"kernel_size": 2, "padding": (0, 1), "ceil_mode": True},
     "a pooling window would cover only padding along the width"),
    ("f32[1,1,2,5]", {"kernel_size": 3}, "the padded input height 2 is smaller than the "
                                         "kernel height 3"),
    ("f32[1,1,4,4]", {"kernel_size": (2, 0)}, "kernel_size must be at least 1"),
    ("f32[1,1,4,4]", {}, "requires the attribute 'kernel_size'"),
])
def test_pools_reject_bad_operands_and_attributes(x, attrs, message):
    for name in ("max_pool2d", "avg_pool2d"):
        with pytest.raises(ShapeError) as info:
            infer(name, [parse_type(x)], **attrs)
        assert message in info.value.message


def test_pool_gradient_primitives_check_the_cotangent():
    x = TensorType("f32", ("N", 2, 7, 7))
    out, _ = infer("max_pool2d_grad", [x, TensorType("f32", ("N", 2, 4, 4))],
                   kernel_size=3, stride=2, padding=1)
    assert out == x
    out, _ = infer("avg_pool2d_grad", [TensorType("f32", ("N", 2, 4, 4))], input_hw=(7, 7),
                   kernel_size=3, stride=2, padding=1)
    assert out == x
    with pytest.raises(ShapeError, match=r"max_pool2d_grad: the cotangent f32\[N,2,3,3\] "
                                         r"does not match the forward result f32\[N,2,4,4\]"):
        infer("max_pool2d_grad", [x, TensorType("f32", ("N", 2, 3, 3))], kernel_size=3,
              stride=2, padding=1)
    with pytest.raises(ShapeError, match=r"the cotangent f64\[N,2,4,4\] does not match"):
        infer("max_pool2d_grad", [x, TensorType("f64", ("N", 2, 4, 4))], kernel_size=3,
              stride=2, padding=1)


# ---------------------------------------------------------------- adaptive_avg_pool2d

ADAPTIVE_CASES = [((2, 3, 7, 6), (3, 4)), ((1, 2, 5, 5), 5), ((2, 2, 4, 6), 1),
                  ((1, 2, 3, 3), (5, 4)), ((2, 1, 9, 4), (2, 3))]


@pytest.mark.parametrize("x_shape, output_size", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d_matches_loop_reference(x_shape, output_size):
    x = normal(*x_shape, seed=11)
    expected = ref_adaptive_avg_pool2d(x, output_size)
    np.testing.assert_allclose(apply_op("adaptive_avg_pool2d", [x],
                                        output_size=output_size)[0], expected, rtol=1e-12)
    (out32,) = apply_op("adaptive_avg_pool2d", [x.astype(np.float32)], output_size=output_size)
    np.testing.assert_allclose(out32, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape, output_size", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d_vjp(x_shape, output_size):
    check_op_vjp("adaptive_avg_pool2d", [normal(*x_shape, seed=12)],
                 {"output_size": output_size})


def test_adaptive_avg_pool2d_types():
    out, attrs = infer("adaptive_avg_pool2d", [TensorType("f32", ("N", "C", 7, 6))],
                       output_size=(None, 2))
    assert str(out) == "f32[N,C,7,2]" and attrs == {"output_size": (7, 2)}
    out, _ = infer("adaptive_avg_pool2d_grad", [out], input_hw=(7, 6))
    assert str(out) == "f32[N,C,7,6]"
    with pytest.raises(ShapeError, match="output_size must be a positive int"):
        infer("adaptive_avg_pool2d", [TensorType("f32", (1, 1, 4, 4))], output_size=0)
    with pytest.raises(ShapeError, match=r"input must have static H and W, got f32\[1,1,H,4\]"):
        infer("adaptive_avg_pool2d", [TensorType("f32", (1, 1, "H", 4))], output_size=2)


# ---------------------------------------------------------------- programs

def test_a_conv_net_with_symbolic_batch_runs_and_round_trips_as_text():
    types = [TensorType("f32", ("N", 3, 9, 9)), TensorType("f32", (6, 3, 3, 3))]

    def body(b, x, w):
        y = b.conv2d(x, w, stride=2, padding=(1, 0, 1, 0))
        y = b.max_pool2d(y, kernel_size=2, ceil_mode=True)
        y = b.avg_pool2d(y, kernel_size=2, padding=1, exclusive=False)
        return b.adaptive_avg_pool2d(y, output_size=1)

    module = Module([function("net", types, body)])
    verify(module)
    assert str(module.main.block.ops[-2].results[0].type) == "f32[N,6,1,1]"
    assert str(parse(str(module))) == str(module)
    for n in (1, 3):
        x, w = normal(n, 3, 9, 9).astype(np.float32), normal(6, 3, 3, 3).astype(np.float32)
        expected = ref_conv2d(x, w, stride=2, padding=(1, 0, 1, 0))
        expected = ref_max_pool2d(expected, 2, ceil_mode=True)
        expected = ref_avg_pool2d(expected, 2, padding=1, exclusive=False)
        expected = ref_adaptive_avg_pool2d(expected, 1)
        (out,) = run(module, x, w)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, shapes, attrs", [
    ("conv2d", [("N", 4, 7, 6), (6, 2, 3, 2)], {"stride": 2, "padding": 1, "groups": 2}),
    ("max_pool2d", [("N", 2, 7, 6)], {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ("avg_pool2d", [("N", 2, 7, 6)], {"kernel_size": 3, "padding": 1}),
    ("adaptive_avg_pool2d", [("N", 2, 7, 6)], {"output_size": (2, 4)}),
])
def test_vjp_rules_build_programs_for_a_symbolic_batch(name, shapes, attrs):
    """The VJP programs verify, print and parse with a symbolic batch, and run for two
    batch sizes with the results of the static-shape programs that check_op_vjp checks."""
    module = Module([vjp_function(name, [TensorType("f64", s) for s in shapes], attrs)])
    assert str(parse(str(module))) == str(module)
    for n in (1, 2):
        arrays = [normal(*[n if d == "N" else d for d in s], seed=13) for s in shapes]
        (out,) = apply_op(name, arrays, **attrs)
        g = normal(*out.shape, seed=14)
        expected = run(vjp_function(name, types_of(arrays), attrs), *arrays, g)
        for got, want in zip(run(module, *arrays, g), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12)
