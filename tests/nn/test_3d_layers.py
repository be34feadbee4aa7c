"""3-D convolution and pooling, the 1-D and 3-D transposed convolutions, and
BatchNorm3D / InstanceNorm3D: values against NumPy references written as loops over
the output (or input) positions from the definitions, gradients against finite
differences, compiled programs against eager code."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4, 5, 6, 7))
X32 = X.astype(np.float32)   # for layers, whose parameters are float32
BACKENDS = ["numpy", "llvm"]


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- references

def np_conv(x, w, stride, pads, dilation, groups):
    """Cross-correlation over any number of spatial axes: output position o reads the
    zero-padded input at o * stride + k * dilation for each tap k."""
    spatial = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in range(spatial)])
    kernel = w.shape[2:]
    out_size = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                for i in range(spatial)]
    c_group, o_group = w.shape[1], w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *out_size))
    for g in range(groups):
        ws = w[g * o_group:(g + 1) * o_group]
        for pos in np.ndindex(*out_size):
            window = xp[(slice(None), slice(g * c_group, (g + 1) * c_group),
                         *(slice(p * s, p * s + d * (k - 1) + 1, d)
                           for p, s, d, k in zip(pos, stride, dilation, kernel)))]
            out[(slice(None), slice(g * o_group, (g + 1) * o_group), *pos)] = np.tensordot(
                window, ws, axes=(list(range(1, spatial + 2)), list(range(1, spatial + 2))))
    return out


def np_conv_transpose(x, w, stride, pads, dilation, groups, out_size):
    """The adjoint of np_conv: input position i of channel c adds x * w[c, o] into
    output position i * stride + k * dilation - low, for every tap k."""
    spatial = x.ndim - 2
    c_group, o_group = x.shape[1] // groups, w.shape[1]
    lows = pads[0::2]
    out = np.zeros((x.shape[0], o_group * groups, *out_size))
    for g in range(groups):
        for c in range(g * c_group, (g + 1) * c_group):
            for pos in np.ndindex(*x.shape[2:]):
                for tap in np.ndindex(*w.shape[2:]):
                    target = [p * s + k * d - lo for p, s, k, d, lo
                              in zip(pos, stride, tap, dilation, lows)]
                    if all(0 <= q < n for q, n in zip(target, out_size)):
                        out[(slice(None), slice(g * o_group, (g + 1) * o_group), *target)] += (
                            x[(slice(None), c, *pos)][:, None] * w[(c, slice(None), *tap)])
    return out


def np_pool3d(x, kernel, stride, pads, ceil_mode, reduce, exclusive=True):
    """Window o of an axis starts at o * stride - low; it reads the input cells it
    covers. The mean divides by the cells read (exclusive) or, per axis, by the
    window's extent clipped at size + low (Paddle's rule: the padding before the axis
    bounds the window's end, whatever the padding after it)."""
    sizes = x.shape[2:]
    counts = []
    for i in range(3):
        span = sizes[i] + pads[2 * i] + pads[2 * i + 1] - kernel[i]
        counts.append((span + (stride[i] - 1 if ceil_mode else 0)) // stride[i] + 1)
    out = np.zeros((*x.shape[:2], *counts))
    for pos in np.ndindex(*counts):
        starts = [p * s - pads[2 * i] for i, (p, s) in enumerate(zip(pos, stride))]
        cells = x[(slice(None), slice(None),
                   *(slice(max(b, 0), min(b + k, n)) for b, k, n in zip(starts, kernel, sizes)))]
        if reduce == "max":
            out[(slice(None), slice(None), *pos)] = cells.max((2, 3, 4))
        else:
            divisor = cells[0, 0].size if exclusive else np.prod(
                [min(b + k, n + pads[2 * i]) - b
                 for i, (b, k, n) in enumerate(zip(starts, kernel, sizes))])
            out[(slice(None), slice(None), *pos)] = cells.sum((2, 3, 4)) / divisor
    return out


def np_adaptive3d(x, out_size, reduce):
    """Bin i of an axis of n cells covers floor(i*n/out) up to ceil((i+1)*n/out)."""
    bins = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]
            for n, o in zip(x.shape[2:], out_size)]
    out = np.zeros((*x.shape[:2], *out_size))
    for pos in np.ndindex(*out_size):
        cells = x[(slice(None), slice(None), *(slice(*bins[i][p]) for i, p in enumerate(pos)))]
        out[(slice(None), slice(None), *pos)] = getattr(cells, reduce)((2, 3, 4))
    return out


# ---------------------------------------------------------------- convolution

@pytest.mark.parametrize("kw, geometry", [
    (dict(), ((1, 1, 1), (0,) * 6, (1, 1, 1))),
    (dict(stride=2, padding=1), ((2, 2, 2), (1,) * 6, (1, 1, 1))),
    (dict(stride=[1, 2, 1], padding=[1, 0, 2], dilation=[2, 1, 1]),
     ((1, 2, 1), (1, 1, 0, 0, 2, 2), (2, 1, 1))),
    (dict(padding=[1, 0, 0, 1, 2, 1]), ((1, 1, 1), (1, 0, 0, 1, 2, 1), (1, 1, 1))),
    (dict(padding=[[0, 0], [0, 0], [1, 2], [0, 1], [1, 1]]),
     ((1, 1, 1), (1, 2, 0, 1, 1, 1), (1, 1, 1))),
    # SAME: ceil(size / stride) outputs, the dilation reset to 1, the padding needed
    # split evenly (odd cell after): D 5 -> 3 needs 2*2 + 3 - 5 = 2, H 6 -> 3 needs 0,
    # W 7 -> 4 needs 3*2 + 3 - 7 = 2
    (dict(padding="SAME", stride=2, dilation=2), ((2, 2, 2), (1, 1, 0, 0, 1, 1), (1, 1, 1))),
    (dict(padding="SAME", stride=[2, 4, 1]), ((2, 4, 1), (1, 1, 0, 1, 1, 1), (1, 1, 1))),
])
def test_conv3d_values_and_gradients(kw, geometry):
    w = RNG.standard_normal((3, 4, 3, 2, 3))
    b = RNG.standard_normal(3)
    got = F.conv3d(t(X), t(w), t(b), **kw).numpy()
    want = np_conv(X, w, *geometry, 1) + b[:, None, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    check_grads(lambda x, w, b: F.conv3d(x, w, b, **kw), X[:1, :, :4, :4, :5], w, b)


def test_conv3d_groups_and_channels_last():
    w = RNG.standard_normal((6, 2, 2, 3, 2))
    want = np_conv(X, w, (1, 2, 1), (1, 1, 0, 0, 1, 0), (1, 1, 2), 2)
    got = F.conv3d(t(X), t(w), None, [1, 2, 1], [1, 1, 0, 0, 1, 0], [1, 1, 2], groups=2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    channels_last = F.conv3d(t(X.transpose(0, 2, 3, 4, 1)), t(w), None, [1, 2, 1],
                             [1, 1, 0, 0, 1, 0], [1, 1, 2], 2, "NDHWC")
    np.testing.assert_allclose(channels_last.numpy(), want.transpose(0, 2, 3, 4, 1),
                               rtol=1e-10, atol=1e-12)
    check_grads(lambda x, w: F.conv3d(x, w, padding=1, groups=2), X[:1, :, :3, :3, :4], w)


@pytest.mark.parametrize("kw, geometry", [
    (dict(stride=2, padding=1), ((2, 2, 2), (1,) * 6, (1, 1, 1), (0, 0, 0))),
    (dict(stride=[2, 3, 2], padding=[1, 0, 1], output_padding=[1, 2, 0]),
     ((2, 3, 2), (1, 1, 0, 0, 1, 1), (1, 1, 1), (1, 2, 0))),
    (dict(stride=2, dilation=[2, 1, 3], padding=[0, 1, 2]),
     ((2, 2, 2), (0, 0, 1, 1, 2, 2), (2, 1, 3), (0, 0, 0))),
    (dict(stride=2, padding=[1, 0, 0, 2, 1, 1], groups=2),
     ((2, 2, 2), (1, 0, 0, 2, 1, 1), (1, 1, 1), (0, 0, 0))),
])
def test_conv3d_transpose_values_and_gradients(kw, geometry):
    stride, pads, dilation, extra = geometry
    groups = kw.get("groups", 1)
    w = RNG.standard_normal((4, 3, 3, 2, 3))
    out_size = [(n - 1) * s - pads[2 * i] - pads[2 * i + 1] + d * (k - 1) + 1 + e
                for i, (n, s, d, k, e) in enumerate(zip(X.shape[2:], stride, dilation,
                                                         w.shape[2:], extra))]
    got = F.conv3d_transpose(t(X), t(w), **kw).numpy()
    want = np_conv_transpose(X, w, stride, pads, dilation, groups, out_size)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    check_grads(lambda x, w: F.conv3d_transpose(x, w, **kw), X[:1, :, :3, :2, :3], w)


def test_conv3d_transpose_output_size_and_channels_last():
    w = RNG.standard_normal((4, 3, 3, 2, 3))
    b = RNG.standard_normal(3)
    # inferred sizes (5-1)*2-2+3 = 9, 11, 13: output_size may add up to stride - 1
    got = F.conv3d_transpose(t(X), t(w), t(b), stride=2, padding=1, output_size=[10, 11, 14])
    want = np_conv_transpose(X, w, (2,) * 3, (1,) * 6, (1,) * 3, 1, (10, 11, 14))
    np.testing.assert_allclose(got.numpy(), want + b[:, None, None, None], rtol=1e-10,
                               atol=1e-12)
    last = F.conv3d_transpose(t(X.transpose(0, 2, 3, 4, 1)), t(w), t(b), stride=2, padding=1,
                              output_size=[10, 11, 14], data_format="NDHWC")
    np.testing.assert_allclose(last.numpy(), got.numpy().transpose(0, 2, 3, 4, 1), rtol=1e-12)
    with pytest.raises(ValueError, match="conv3d_transpose: the output size"):
        F.conv3d_transpose(t(X), t(w), stride=2, padding=1, output_size=[8, 11, 13])


def test_transposed_output_padding_must_be_below_stride():
    """The convolution of an output longer by `stride` or more would be longer than the
    input, so Paddle rejects output_padding >= stride, whatever the dilation."""
    x, w = t(X[:, :, 0]), t(RNG.standard_normal((4, 3, 3, 3)))
    with pytest.raises(ValueError, match=r"conv2d_transpose: the output size must lie in "
                                         r"\[inferred, inferred \+ stride\)"):
        F.conv2d_transpose(x, w, stride=1, dilation=2, output_padding=1)
    # (n - 1) * 2 + 2 * (3 - 1) + 1 + 1 for n = 6, 7
    assert F.conv2d_transpose(x, w, stride=2, dilation=2, output_padding=1).shape == \
        [2, 3, 16, 18]


@pytest.mark.parametrize("kw, geometry", [
    (dict(), (1, (0, 0), 1, 0, 1)),
    (dict(stride=2, padding=1, output_padding=1), (2, (1, 1), 1, 1, 1)),
    (dict(stride=3, padding=[1, 2], dilation=2, groups=2), (3, (1, 2), 2, 0, 2)),
])
def test_conv1d_transpose_values_and_gradients(kw, geometry):
    stride, pads, dilation, extra, groups = geometry
    x = RNG.standard_normal((2, 4, 9))
    w = RNG.standard_normal((4, 3, 3))
    size = (9 - 1) * stride - sum(pads) + dilation * 2 + 1 + extra
    want = np_conv_transpose(x, w, (stride,), pads, (dilation,), groups, (size,))
    np.testing.assert_allclose(F.conv1d_transpose(t(x), t(w), **kw).numpy(), want,
                               rtol=1e-10, atol=1e-12)
    last = F.conv1d_transpose(t(x.transpose(0, 2, 1)), t(w), data_format="NLC", **kw)
    np.testing.assert_allclose(last.numpy(), want.transpose(0, 2, 1), rtol=1e-10, atol=1e-12)
    check_grads(lambda x, w: F.conv1d_transpose(x, w, **kw), x[:1, :, :5], w)


# ---------------------------------------------------------------- pooling

POOLS = [
    (dict(kernel_size=2), ((2, 2, 2), (2, 2, 2), (0,) * 6, False)),
    (dict(kernel_size=3, stride=2, padding=1), ((3,) * 3, (2,) * 3, (1,) * 6, False)),
    (dict(kernel_size=[2, 3, 2], stride=[2, 2, 3], ceil_mode=True),
     ((2, 3, 2), (2, 2, 3), (0,) * 6, True)),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
     ((3,) * 3, (2,) * 3, (1,) * 6, True)),
    # SAME: padding (0, 1) on D (5 -> 3 windows of 2), (0, 1) on H, (1, 2) on W
    (dict(kernel_size=[2, 3, 4], stride=2, padding="SAME"),
     ((2, 3, 4), (2,) * 3, (0, 1, 0, 1, 1, 2), False)),
    (dict(kernel_size=3, stride=2, padding=[1, 0, 0, 1, 1, 1]),
     ((3,) * 3, (2,) * 3, (1, 0, 0, 1, 1, 1), False)),
]


@pytest.mark.parametrize("kw, geometry", POOLS)
def test_pool3d_values_and_gradients(kw, geometry):
    x = t(X)
    np.testing.assert_allclose(F.max_pool3d(x, **kw).numpy(),
                               np_pool3d(X, *geometry, "max"), rtol=1e-12)
    np.testing.assert_allclose(F.avg_pool3d(x, **kw).numpy(),
                               np_pool3d(X, *geometry, "avg"), rtol=1e-12)
    np.testing.assert_allclose(F.avg_pool3d(x, exclusive=False, **kw).numpy(),
                               np_pool3d(X, *geometry, "avg", exclusive=False), rtol=1e-12)
    small = X[:1, :2]
    check_grads(lambda x: F.max_pool3d(x, **kw), small)
    check_grads(lambda x: F.avg_pool3d(x, exclusive=False, **kw), small)


def test_pool3d_channels_last_and_layers():
    x = t(X)
    last = t(X.transpose(0, 2, 3, 4, 1))
    for pool, layer in [(F.max_pool3d, nn.MaxPool3D), (F.avg_pool3d, nn.AvgPool3D)]:
        want = pool(x, 3, 2, 1, ceil_mode=True).numpy()
        got = pool(last, 3, 2, 1, ceil_mode=True, data_format="NDHWC").numpy()
        np.testing.assert_array_equal(got, want.transpose(0, 2, 3, 4, 1))
        np.testing.assert_array_equal(layer(3, 2, 1, ceil_mode=True)(x).numpy(), want)
    assert repr(nn.MaxPool3D(3, 2)) == "MaxPool3D(kernel_size=3, stride=2, padding=0)"
    with pytest.raises(ValueError, match="'VALID' takes ceil_mode=False"):
        F.max_pool3d(x, 2, padding="VALID", ceil_mode=True)


@pytest.mark.parametrize("size, out_size", [
    (2, (2, 2, 2)), ([3, 4, 5], (3, 4, 5)), ([None, 2, 3], (5, 2, 3)), ([5, 6, 7], (5, 6, 7)),
    ([4, 5, 6], (4, 5, 6)),
])
def test_adaptive_pool3d_values_and_gradients(size, out_size):
    x = t(X)
    np.testing.assert_allclose(F.adaptive_avg_pool3d(x, size).numpy(),
                               np_adaptive3d(X, out_size, "mean"), rtol=1e-12)
    np.testing.assert_allclose(F.adaptive_max_pool3d(x, size).numpy(),
                               np_adaptive3d(X, out_size, "max"), rtol=1e-12)
    small = X[:1, :2, :4, :4, :5]
    check_grads(lambda x: F.adaptive_avg_pool3d(x, size), small)
    check_grads(lambda x: F.adaptive_max_pool3d(x, size), small)
    np.testing.assert_array_equal(nn.AdaptiveAvgPool3D(size)(x).numpy(),
                                  F.adaptive_avg_pool3d(x, size).numpy())
    np.testing.assert_array_equal(nn.AdaptiveMaxPool3D(size)(x).numpy(),
                                  F.adaptive_max_pool3d(x, size).numpy())


def test_adaptive_avg_pool3d_channels_last():
    got = F.adaptive_avg_pool3d(t(X.transpose(0, 2, 3, 4, 1)), [2, 3, 4], "NDHWC")
    np.testing.assert_allclose(got.numpy(),
                               np_adaptive3d(X, (2, 3, 4), "mean").transpose(0, 2, 3, 4, 1),
                               rtol=1e-12)


# Cells of a [1, 1, 2, 2, 2] input in (D, H, W) row-major order: the maximum 1 is
# tied at cells 2, 4, 5 and 7, so the first in row-major order is cell 2 (D 0, H 1).
TIED = np.array([0, 0, 1, 0, 1, 1, 0, 1], float).reshape(1, 1, 2, 2, 2)


@pytest.mark.parametrize("pool, first", [
    (lambda x: F.max_pool3d(x, 2), 2),
    (lambda x: F.adaptive_max_pool3d(x, 1), 2),
    (lambda x: F.adaptive_max_pool2d(x[:, :, 1], 1), 4),   # the D 1 slice: tied 4, 5, 7
])
def test_max_pool_tie_gradient_goes_to_first_cell(pool, first):
    """Paddle's max-pool kernels scan a window in row-major order and keep a new
    maximum only when it is greater, so a tie passes the whole gradient to the first
    tied cell."""
    x = t(TIED, stop_gradient=False)
    pool(x).sum().backward()
    want = np.zeros(8)
    want[first] = 1
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), want)


# ---------------------------------------------------------------- layers

def test_conv3d_layers_shapes_and_repr():
    conv = nn.Conv3D(4, 6, [3, 2, 1], stride=2, padding=1, groups=2, bias_attr=False)
    assert conv.weight.shape == [6, 2, 3, 2, 1] and conv.bias is None
    assert repr(conv) == ("Conv3D(4, 6, kernel_size=[3, 2, 1], stride=[2, 2, 2], padding=1, "
                          "groups=2, data_format=NCDHW)")
    np.testing.assert_allclose(
        conv(t(X32)).numpy(), np_conv(X, conv.weight.numpy(), (2,) * 3, (1,) * 6, (1,) * 3, 2),
        rtol=1e-5, atol=1e-5)
    assert nn.Conv3DTranspose(4, 6, 3, groups=2).weight.shape == [4, 3, 3, 3, 3]
    assert nn.Conv1DTranspose(4, 6, 3, groups=2).weight.shape == [4, 3, 3]
    layer = nn.Conv3DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1)
    np.testing.assert_array_equal(
        layer(t(X32)).numpy(),
        F.conv3d_transpose(t(X32), layer.weight, layer.bias, 2, 1, 1).numpy())


def test_conv3d_layer_padding_mode():
    """A non-zero padding_mode pads x in that mode (here: wrapping around) before a
    padding-free convolution."""
    conv = nn.Conv3D(4, 3, 3, padding=1, padding_mode="circular")
    wrapped = np.pad(X, [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)], mode="wrap")
    want = np_conv(wrapped, conv.weight.numpy(), (1,) * 3, (0,) * 6, (1,) * 3, 1)
    np.testing.assert_allclose(conv(t(X32)).numpy(), want, rtol=1e-5, atol=1e-5)


def test_batch_norm3d_and_instance_norm3d():
    x = t(X32)
    bn = nn.BatchNorm3D(4)
    mean, var = X.mean((0, 2, 3, 4)), X.var((0, 2, 3, 4))
    want = (X - mean[:, None, None, None]) / np.sqrt(var[:, None, None, None] + 1e-5)
    np.testing.assert_allclose(bn(x).numpy(), want, rtol=1e-5, atol=1e-6)
    # running mean <- momentum * running + (1 - momentum) * batch mean
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)
    last = nn.BatchNorm3D(4, data_format="NDHWC")(t(X32.transpose(0, 2, 3, 4, 1)))
    np.testing.assert_allclose(last.numpy(), want.transpose(0, 2, 3, 4, 1), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="rank 5"):
        bn(t(X32[0]))
    inorm = nn.InstanceNorm3D(4)
    mean, var = X.mean((2, 3, 4), keepdims=True), X.var((2, 3, 4), keepdims=True)
    np.testing.assert_allclose(inorm(x).numpy(), (X - mean) / np.sqrt(var + 1e-5), rtol=1e-5,
                               atol=1e-6)
    assert [n for n, _ in inorm.named_parameters()] == ["scale", "bias"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_matches_eager(backend):
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3D(4, 6, 3, padding=1, groups=2)
            self.norm = nn.BatchNorm3D(6)
            self.pool = nn.MaxPool3D(2, ceil_mode=True)
            self.avg = nn.AvgPool3D(3, 1, 1, exclusive=False)
            self.up = nn.Conv3DTranspose(6, 4, 3, stride=2, padding=1, output_padding=1)
            self.adaptive = nn.AdaptiveMaxPool3D([2, 3, None])

        def forward(self, x):
            y = self.up(self.avg(self.pool(self.norm(self.conv(x)))))
            return self.adaptive(y) + F.adaptive_avg_pool3d(y, [2, 3, None])

    paddle.seed(0)
    net = Net()
    net.eval()
    x = t(X32)
    eager = net(x).numpy()
    static = paddle.jit.to_static(net, input_spec=[InputSpec([None, 4, 5, 6, 7])],
                                  backend=backend)
    np.testing.assert_allclose(static(x).numpy(), eager, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(static(x[:1]).numpy(), eager[:1], rtol=1e-5, atol=1e-5)
