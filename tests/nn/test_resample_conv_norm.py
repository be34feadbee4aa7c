"""F.interpolate, F.unfold, pad modes, the new activations, Conv1D,
Conv2DTranspose, GroupNorm and InstanceNorm2D against NumPy references written from
the definitions (loops where that is clearest), gradients against finite
differences; and gradient clipping at Paddle's paths."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4, 5))


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- interpolate

def np_resize(x, out_hw, sample):
    """Per output pixel: `sample(in_size, out_size, i)` gives a list of (source, weight)
    along each axis (the bilinear weights multiply)."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            for si, wi in sample(h, oh, i):
                for sj, wj in sample(w, ow, j):
                    out[:, :, i, j] += wi * wj * x[:, :, si, sj]
    return out


def nearest(n_in, n_out, i):
    return [(min(int(math.floor(i * n_in / n_out)), n_in - 1), 1.0)]


def bilinear(align_corners):
    def sample(n_in, n_out, i):
        if align_corners:
            src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((i + 0.5) * n_in / n_out - 0.5, 0.0)
        low = min(int(math.floor(src)), n_in - 1)
        high = min(low + 1, n_in - 1)
        frac = src - low
        return [(low, 1 - frac), (high, frac)]
    return sample


@pytest.mark.parametrize("out_hw", [(7, 9), (2, 3), (4, 5)])
def test_interpolate_nearest_and_bilinear(out_hw):
    np.testing.assert_allclose(F.interpolate(t(X), size=out_hw).numpy(),
                               np_resize(X, out_hw, nearest))
    for corners in (False, True):
        got = F.interpolate(t(X), size=list(out_hw), mode="bilinear", align_corners=corners)
        np.testing.assert_allclose(got.numpy(), np_resize(X, out_hw, bilinear(corners)),
                                   rtol=1e-10)
    check_grads(lambda a: F.interpolate(a, size=out_hw, mode="bilinear"), X[:1, :1])


def test_interpolate_scale_factor_and_layout():
    x = X[:, :, :3, :4]
    # Paddle: with a scale factor the source is dst / scale, here 1.5 -> 4 rows of 3
    np.testing.assert_array_equal(F.interpolate(t(x), scale_factor=1.5).numpy()[0, 0, :, 0],
                                  x[0, 0, [0, 0, 1, 2], 0])
    assert F.interpolate(t(x), scale_factor=[2, 0.5], mode="bilinear").shape == [2, 3, 6, 2]
    nhwc = F.interpolate(t(x.transpose(0, 2, 3, 1)), size=[5, 6], data_format="NHWC")
    np.testing.assert_array_equal(nhwc.numpy().transpose(0, 3, 1, 2),
                                  F.interpolate(t(x), size=[5, 6]).numpy())
    assert nn.Upsample(scale_factor=2, mode="bilinear")(t(x)).shape == [2, 3, 6, 8]
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(t(x), size=[5, 6], align_corners=True)
    with pytest.raises(ValueError, match="trilinear needs a 5-D input"):
        F.interpolate(t(x), size=[5, 6], mode="trilinear")
    static = paddle.jit.to_static(lambda a: F.interpolate(a, size=[6, 8], mode="bilinear"),
                                  input_spec=[InputSpec([None, 3, 3, 4], "float64")])
    np.testing.assert_allclose(static(t(x)).numpy(),
                               F.interpolate(t(x), size=[6, 8], mode="bilinear").numpy())


# ---------------------------------------------------------------- unfold, pad

def np_unfold(x, k, s, p, d):
    top, left, bottom, right = p
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, hp, wp = xp.shape
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ch in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                row = (ch * k[0] + i) * k[1] + j
                for a in range(oh):
                    for b in range(ow):
                        out[:, row, a * ow + b] = xp[:, ch, a * s[0] + i * d[0], b * s[1] + j * d[1]]
    return out


def test_unfold():
    np.testing.assert_array_equal(F.unfold(t(X), [2, 2]).numpy(),
                                  np_unfold(X, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)))
    got = F.unfold(t(X), [2, 3], strides=[1, 2], paddings=[1, 0, 2, 1], dilations=[2, 1])
    np.testing.assert_array_equal(got.numpy(),
                                  np_unfold(X, (2, 3), (1, 2), (1, 0, 2, 1), (2, 1)))
    assert nn.Unfold([3, 3], paddings=1)(t(X)).shape == [2, 27, 20]
    check_grads(lambda a: F.unfold(a, [2, 2], strides=2), X[:1])


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                           ("circular", "wrap")])
def test_pad_modes(mode, np_mode):
    got = F.pad(t(X), [1, 2, 2, 1], mode=mode)  # [left, right, top, bottom]
    np.testing.assert_array_equal(got.numpy(),
                                  np.pad(X, ((0, 0), (0, 0), (2, 1), (1, 2)), mode=np_mode))
    check_grads(lambda a: F.pad(a, [1, 2, 0, 1], mode=mode), X[:1, :1])
    assert nn.Pad2D(1, mode=mode)(t(X)).shape == [2, 3, 6, 7]


def test_pad_mode_errors():
    with pytest.raises(ValueError, match="smaller than the dim"):
        F.pad(t(X), [5, 0, 0, 0], mode="reflect")
    with pytest.raises(ValueError, match="mode should be one of"):
        F.pad(t(X), [1, 1, 1, 1], mode="mirror")


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("fn, ref", [
    (lambda x: F.softplus(x, beta=2, threshold=5),
     lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2)),
    (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (F.hardsigmoid, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (lambda x: F.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (F.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 *
                                                     (np.exp(x) - 1))),
    (lambda x: F.glu(x, axis=1), None),
])
def test_activations(fn, ref):
    x = X[:, :2] * 4  # reaching past the kinks at +-3 and softplus's threshold
    if ref is None:  # glu: a * sigmoid(b) of the halves
        ref = lambda a: a[:, :1] / (1 + np.exp(-a[:, 1:]))  # noqa: E731
    np.testing.assert_allclose(fn(t(x)).numpy(), ref(x), rtol=1e-6, atol=1e-12)
    check_grads(fn, x)  # no element lies within the step of a kink


def test_activation_layers_and_no_overflow():
    x = t([-1000.0, 0.5, 1000.0], stop_gradient=False)
    for layer in (nn.ELU(), nn.SELU(), nn.Softplus(), nn.Mish()):
        out = layer(x)
        out.sum().backward()
        assert np.isfinite(out.numpy()).all() and np.isfinite(x.grad.numpy()).all()
        x.clear_grad()
    assert nn.Softplus(2, 10)._values == {"beta": 2, "threshold": 10}
    assert nn.GLU(axis=0)(t(np.ones((2, 3)))).shape == [1, 3]
    assert nn.Hardswish()(t([-4.0, 4.0])).numpy().tolist() == [0.0, 4.0]


# ---------------------------------------------------------------- convolutions

def np_conv1d(x, w, stride, pad, dilation):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    n, c, length = x.shape
    co, ci, k = w.shape
    out_len = (length - dilation * (k - 1) - 1) // stride + 1
    out = np.zeros((n, co, out_len))
    for o in range(out_len):
        window = x[:, :, o * stride:o * stride + dilation * (k - 1) + 1:dilation]
        out[:, :, o] = np.einsum("nck,ock->no", window, w)
    return out


def np_conv_transpose(x, w, stride, pad, dilation, out_pad):
    """Scatter each input pixel times the filter into the output, then crop."""
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + out_pad[0]
    full_w = (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + out_pad[1]
    out = np.zeros((n, co, full_h + 0, full_w + 0))
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for b in range(kw):
                    out[:, :, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]] += \
                        np.einsum("nc,co->no", x[:, :, i, j], w[:, :, a, b])
    return out[:, :, pad[0]:full_h - pad[0], pad[1]:full_w - pad[1]]


def test_conv1d():
    conv = nn.Conv1D(3, 4, 3, stride=2, padding=1, dilation=1)
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    want = np_conv1d(x, conv.weight.numpy(), 2, 1, 1) + conv.bias.numpy()[:, None]
    np.testing.assert_allclose(conv(t(x)).numpy(), want, rtol=1e-5, atol=1e-6)
    assert conv.weight.shape == [4, 3, 3]
    nlc = nn.Conv1D(3, 4, 3, data_format="NLC")
    nlc.weight.set_value(conv.weight)
    assert nlc(t(x.transpose(0, 2, 1))).shape == [2, 7, 4]
    check_grads(lambda a, w: F.conv1d(a, w, padding=[1, 2], dilation=2),
                x[:1].astype(np.float64), conv.weight.numpy().astype(np.float64))


@pytest.mark.parametrize("stride, pad, dilation, out_pad", [
    ((2, 2), (1, 1), (1, 1), (1, 1)), ((1, 2), (1, 0), (1, 2), (0, 1)), ((1, 1), (0, 0), (1, 1), (0, 0))])
def test_conv2d_transpose(stride, pad, dilation, out_pad):
    layer = nn.Conv2DTranspose(3, 4, (2, 3), stride=stride, padding=list(pad),
                               output_padding=list(out_pad), dilation=dilation)
    assert layer.weight.shape == [3, 4, 2, 3]
    want = np_conv_transpose(X, layer.weight.numpy(), stride, pad, dilation, out_pad)
    want = want + layer.bias.numpy()[None, :, None, None]
    np.testing.assert_allclose(layer(t(X.astype(np.float32))).numpy(), want, rtol=1e-5,
                               atol=1e-5)
    w = layer.weight.numpy().astype(np.float64)
    check_grads(lambda a, k: F.conv2d_transpose(a, k, stride=stride, padding=list(pad),
                                                output_padding=list(out_pad),
                                                dilation=dilation), X[:1], w)


def test_conv2d_transpose_groups_and_output_size():
    layer = nn.Conv2DTranspose(4, 6, 3, stride=2, groups=2)
    x = RNG.standard_normal((1, 4, 3, 3)).astype(np.float32)
    w = layer.weight.numpy()
    want = np.concatenate([np_conv_transpose(x[:, 2 * g:2 * g + 2], w[2 * g:2 * g + 2], (2, 2),
                                             (0, 0), (1, 1), (0, 0)) for g in range(2)], axis=1)
    np.testing.assert_allclose(layer(t(x)).numpy(), want + layer.bias.numpy()[:, None, None],
                               rtol=1e-5, atol=1e-5)
    assert layer(t(x), output_size=[8, 8]).shape == [1, 6, 8, 8]
    with pytest.raises(ValueError, match="output size"):
        layer(t(x), output_size=[10, 10])


# ---------------------------------------------------------------- normalization

def np_group_norm(x, groups, eps=1e-5):
    n, c = x.shape[:2]
    v = x.reshape(n, groups, -1)
    out = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + eps)
    return out.reshape(x.shape)


def test_group_and_instance_norm():
    x = RNG.standard_normal((2, 4, 3, 3)) * 3 + 1
    gn = nn.GroupNorm(2, 4)
    gn.weight.set_value(np.arange(1, 5, dtype=np.float32))
    want = np_group_norm(x, 2) * np.arange(1, 5)[:, None, None]
    np.testing.assert_allclose(gn(t(x.astype(np.float32))).numpy(), want, rtol=1e-4, atol=1e-5)
    inorm = nn.InstanceNorm2D(4)
    assert list(inorm.state_dict()) == ["scale", "bias"]  # Paddle's names
    np.testing.assert_allclose(inorm(t(x.astype(np.float32))).numpy(), np_group_norm(x, 4),
                               rtol=1e-4, atol=1e-5)
    check_grads(lambda a: F.group_norm(a, 2), x[:1], rtol=1e-4)
    check_grads(lambda a: F.instance_norm(a), x[:1], rtol=1e-4)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    nhwc = F.group_norm(t(x.transpose(0, 2, 3, 1)), 2, data_format="NHWC")
    np.testing.assert_allclose(nhwc.numpy().transpose(0, 3, 1, 2), np_group_norm(x, 2),
                               rtol=1e-6)


# ---------------------------------------------------------------- clipping

def grads_of(layer):
    layer.clear_gradients()
    (layer(t(RNG.standard_normal((4, 3)).astype(np.float32))) ** 2).sum().backward()
    return [p.grad.numpy().copy() for p in layer.parameters()]


def test_clip_grad_norm_():
    layer = nn.Linear(3, 2)
    before = grads_of(layer)
    total = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in before))
    norm = nn.utils.clip_grad_norm_(layer.parameters(), 0.5)
    np.testing.assert_allclose(norm.numpy(), total, rtol=1e-6)
    for g, p in zip(before, layer.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), g * min(0.5 / (total + 1e-6), 1), rtol=1e-5)
    before = grads_of(layer)
    inf_norm = nn.utils.clip_grad_norm_(layer.parameters(), 1e9, norm_type=float("inf"))
    assert float(inf_norm) == max(np.abs(g).max() for g in before)
    np.testing.assert_allclose(layer.weight.grad.numpy(), before[0])  # under max_norm: kept
    nn.utils.clip_grad_value_(layer.parameters(), 0.01)
    assert np.abs(layer.weight.grad.numpy()).max() <= 0.01
    assert float(nn.utils.clip_grad_norm_([paddle.zeros([2])], 1.0)) == 0.0
    layer.weight.grad.set_value(np.full([3, 2], np.nan, np.float32))
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(layer.parameters(), 1.0, error_if_nonfinite=True)


def test_clip_classes_at_paddles_paths():
    from irflow.optimizer.clip import ClipGradByGlobalNorm
    assert nn.ClipGradByGlobalNorm is ClipGradByGlobalNorm
    layer = nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(1.0, parameters=layer.parameters(),
                               grad_clip=nn.ClipGradByValue(1e-3))
    w = layer.weight.numpy().copy()
    grads_of(layer)
    opt.step()
    assert np.abs(layer.weight.numpy() - w).max() <= 1e-3 + 1e-7
    assert isinstance(nn.ClipGradByNorm(1.0)([(layer.weight, layer.weight.grad)]), list)


def test_parameters_to_vector_and_back():
    layer = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(layer.parameters())
    assert vec.shape == [8]
    nn.utils.vector_to_parameters(vec * 0 + 1, layer.parameters())
    assert layer.bias.numpy().tolist() == [1, 1]


def test_interpolate_to_size_one_and_with_a_recomputed_scale_as_paddle():
    """Paddle samples an output dim of size 1 at source position 0 (ratio 0, whatever
    the scale), and with recompute_scale_factor takes the ratio from the sizes, not
    from the factor (values from Paddle 3.3.1)."""
    x = paddle.to_tensor(np.arange(15, dtype="float32").reshape(1, 1, 3, 5))
    assert F.interpolate(x, size=(1, 5), mode="bilinear").numpy().ravel().tolist() == \
        [0.0, 1.0, 2.0, 3.0, 4.0]
    assert F.interpolate(x, scale_factor=0.4, mode="bilinear").numpy().ravel().tolist() == \
        [0.75, 3.25]
    assert nn.Upsample(size=(3, 1), mode="bilinear")(x).numpy().ravel().tolist() == \
        [0.0, 5.0, 10.0]
    y = paddle.to_tensor(np.arange(16, dtype="float32").reshape(1, 1, 4, 4))
    assert F.interpolate(y, scale_factor=1.7, recompute_scale_factor=True
                         ).numpy()[0, 0, 0].tolist() == [0.0, 0.0, 1.0, 2.0, 2.0, 3.0]
    up = nn.Upsample(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)
    np.testing.assert_allclose(up(y).numpy()[0, 0, 0], [0.0, 0.5, 1.1667, 1.8333, 2.5, 3.0],
                               atol=1e-4)


def test_layer_norm_of_several_dims_keeps_flat_weights_as_paddle():
    """LayerNorm([5, 6]) holds a weight and a bias of [30], as Paddle's, so a Paddle
    checkpoint's state dict loads (it was [5, 6]: the keys were skipped)."""
    ln = nn.LayerNorm([5, 6])
    assert {k: v.shape for k, v in ln.state_dict().items()} == {"weight": [30], "bias": [30]}
    ln.set_state_dict({"weight": np.full([30], 2.0, "float32"), "bias": np.ones([30], "float32")})
    x = np.random.default_rng(0).standard_normal((2, 5, 6)).astype("float32")
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(ln(paddle.to_tensor(x)).numpy(),
                               (x - mean) / np.sqrt(var + 1e-5) * 2 + 1, rtol=1e-5, atol=1e-5)
