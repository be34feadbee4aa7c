"""Paddle 3.3.1 nn APIs that irflow lacked or refused (AttributeError or
NotImplementedError where Paddle runs): conv padding modes, SAME padding of a
transposed conv, weight_norm, sigmoid_focal_loss, local_response_norm, rrelu,
alpha_dropout, fold, affine_grid and grid_sample. Each is checked against a NumPy
reference written from Paddle's definition, and gradients against central
differences."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F

from .gradcheck import check_grads

RNG = np.random.default_rng(12)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_conv2d(x, w, stride=(1, 1)):
    """Cross-correlation of x [N, C, H, W] with w [O, C, kh, kw], no padding."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride[0] + 1, (wd - kw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


# ---------------------------------------------------------------- conv padding modes

@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                          ("circular", "wrap")])
def test_conv2d_padding_mode_pads_the_input_by_that_mode(mode, np_mode):
    """Paddle pads by np.pad's matching mode, then convolves with no padding."""
    x = RNG.standard_normal((2, 3, 5, 6)).astype("float32")
    conv = paddle.nn.Conv2D(3, 4, 3, stride=2, padding=2, padding_mode=mode, bias_attr=False)
    expected = np_conv2d(np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode=np_mode),
                         conv.weight.numpy(), (2, 2))
    np.testing.assert_allclose(conv(t(x)).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_conv1d_padding_mode_channels_last():
    x = RNG.standard_normal((2, 7, 3)).astype("float32")  # NLC
    conv = paddle.nn.Conv1D(3, 2, 3, padding=1, padding_mode="reflect", data_format="NLC",
                            bias_attr=False)
    padded = np.pad(x.transpose(0, 2, 1), ((0, 0), (0, 0), (1, 1)), mode="reflect")
    expected = np_conv2d(padded[:, :, None], conv.weight.numpy()[:, :, None])[:, :, 0]
    np.testing.assert_allclose(conv(t(x)).numpy(), expected.transpose(0, 2, 1), rtol=1e-5,
                               atol=1e-5)


def test_conv_padding_mode_needs_an_int_padding():
    with pytest.raises(TypeError, match="int padding"):
        paddle.nn.Conv2D(3, 4, 3, padding=[1, 2], padding_mode="reflect")
    with pytest.raises(ValueError, match="padding_mode"):
        paddle.nn.Conv2D(3, 4, 3, padding_mode="mirror")


# ---------------------------------------------------------------- conv2d_transpose SAME

@pytest.mark.parametrize("size,stride,kernel", [(7, 2, 3), (5, 3, 4), (4, 2, 2)])
def test_conv2d_transpose_same_is_the_transpose_of_the_same_conv(size, stride, kernel):
    """Paddle's SAME transposed conv uses the forward conv's SAME padding for an input
    of x's size (ceil(size / stride) outputs, dilation 1): its output is the adjoint
    of that conv applied to an input of size (size - 1) * stride + kernel - pad."""
    x = RNG.standard_normal((1, 2, size, size))
    w = RNG.standard_normal((2, 3, kernel, kernel))
    out = F.conv2d_transpose(t(x), t(w), stride=stride, padding="SAME", dilation=2).numpy()
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    low = total // 2
    full = (size - 1) * stride + kernel
    expected = np.zeros((1, 3, full, full))
    for i in range(size):
        for j in range(size):
            expected[:, :, i * stride:i * stride + kernel, j * stride:j * stride + kernel] += \
                np.einsum("nc,cohw->nohw", x[:, :, i, j], w)
    end = full - (total - low)
    np.testing.assert_allclose(out, expected[:, :, low:end, low:end], rtol=1e-10)


# ---------------------------------------------------------------- weight_norm

def test_weight_norm_splits_the_weight_into_direction_and_magnitude():
    conv = paddle.nn.Conv2D(2, 3, 2)
    w = conv.weight.numpy().copy()
    paddle.nn.utils.weight_norm(conv, dim=1)
    names = [n for n, _ in conv.named_parameters()]
    assert names == ["bias", "weight_v", "weight_g"]
    np.testing.assert_allclose(conv.weight_v.numpy(), w)
    np.testing.assert_allclose(conv.weight_g.numpy(),
                               np.sqrt((w ** 2).sum((0, 2, 3)) + 1e-12), rtol=1e-6)
    conv.weight_g.set_value(np.array([1.0, 2.0], "float32"))
    x = RNG.standard_normal((1, 2, 4, 4)).astype("float32")
    direction = w / np.sqrt((w ** 2).sum((0, 2, 3), keepdims=True))
    expected = np_conv2d(x, direction * np.array([1.0, 2.0]).reshape(1, 2, 1, 1))
    np.testing.assert_allclose(conv(t(x)).numpy(), expected, rtol=1e-5, atol=1e-5)


def numeric_gradient(f, a, eps=1e-6):
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_weight_norm_gradients_reach_g_and_v():
    """loss = sum(x @ w * c) with w = g v / ||v||, the norm per column of the
    [in, out] weight (dim 1)."""
    paddle.set_default_dtype("float64")
    try:
        lin = paddle.nn.Linear(3, 2, bias_attr=False)
    finally:
        paddle.set_default_dtype("float32")
    paddle.nn.utils.weight_norm(lin, dim=1)
    x, c = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    v, g = lin.weight_v.numpy(), lin.weight_g.numpy()
    (lin(t(x)) * t(c)).sum().backward()

    def loss(v, g):
        return float((x @ (g * v / np.sqrt((v ** 2).sum(0))) * c).sum())

    np.testing.assert_allclose(lin.weight_v.grad.numpy(),
                               numeric_gradient(lambda a: loss(a, g), v), rtol=1e-6)
    np.testing.assert_allclose(lin.weight_g.grad.numpy(),
                               numeric_gradient(lambda a: loss(v, a), g), rtol=1e-6)


def test_weight_norm_dim_none_uses_one_norm_and_remove_restores_a_parameter():
    lin = paddle.nn.Linear(3, 4)
    w = lin.weight.numpy().copy()
    paddle.nn.utils.weight_norm(lin, dim=None)
    assert lin.weight_g.shape == []
    np.testing.assert_allclose(lin.weight_g.numpy(), np.sqrt((w ** 2).sum()), rtol=1e-6)
    lin.weight_g.set_value(lin.weight_g * 2)
    paddle.nn.utils.remove_weight_norm(lin)
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(lin.weight.numpy(), 2 * w, rtol=1e-5)
    with pytest.raises(ValueError, match="no weight_norm"):
        paddle.nn.utils.remove_weight_norm(lin)


def test_weight_norm_trains():
    lin = paddle.nn.Linear(3, 2)
    paddle.nn.utils.weight_norm(lin)
    opt = paddle.optimizer.SGD(0.5, parameters=lin.parameters())
    x = t(RNG.standard_normal((8, 3)).astype("float32"))
    losses = []
    for _ in range(5):
        loss = (lin(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]


# ---------------------------------------------------------------- sigmoid_focal_loss

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_sigmoid_focal_loss(reduction):
    """RetinaNet's alpha_t (1 - p_t)^gamma BCE, over a normalizer, then reduced."""
    logit = RNG.standard_normal((4, 5))
    label = (RNG.random((4, 5)) > 0.5).astype("float64")
    p = 1 / (1 + np.exp(-logit))
    p_t = p * label + (1 - p) * (1 - label)
    alpha_t = 0.3 * label + 0.7 * (1 - label)
    loss = -alpha_t * (1 - p_t) ** 1.5 * np.log(p_t) / 3.0
    expected = {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]
    out = F.sigmoid_focal_loss(t(logit), t(label), t(np.array([3.0])), alpha=0.3, gamma=1.5,
                               reduction=reduction)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_grads(lambda x: F.sigmoid_focal_loss(x, t(label), alpha=0.3, gamma=1.5,
                                               reduction=reduction), logit)


# ---------------------------------------------------------------- local_response_norm

def np_lrn(x, size, alpha, beta, k, axis=1):
    x = np.moveaxis(x, axis, -1)
    c = x.shape[-1]
    sq = np.pad(x ** 2, [(0, 0)] * (x.ndim - 1) + [(size // 2, (size - 1) // 2)])
    window = sum(sq[..., i:i + c] for i in range(size))
    return np.moveaxis(x / (k + alpha / size * window) ** beta, -1, axis)


@pytest.mark.parametrize("shape,fmt,axis", [((2, 5, 3, 4), "NCHW", 1), ((2, 3, 4, 5), "NHWC", 3),
                                            ((2, 5, 6), "NCL", 1),
                                            ((1, 2, 3, 2, 6), "NDHWC", 4)])
def test_local_response_norm(shape, fmt, axis):
    x = RNG.standard_normal(shape)
    out = F.local_response_norm(t(x), 4, alpha=0.3, beta=0.6, k=1.5, data_format=fmt)
    np.testing.assert_allclose(out.numpy(), np_lrn(x, 4, 0.3, 0.6, 1.5, axis), rtol=1e-10)
    layer = paddle.nn.LocalResponseNorm(3, alpha=0.2, data_format=fmt)
    np.testing.assert_allclose(layer(t(x)).numpy(), np_lrn(x, 3, 0.2, 0.75, 1.0, axis),
                               rtol=1e-10)


def test_local_response_norm_gradient():
    check_grads(lambda x: F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0),
                RNG.standard_normal((1, 4, 2, 3)))


# ---------------------------------------------------------------- rrelu, alpha_dropout

def test_rrelu_uses_the_mean_slope_in_eval_and_a_bounded_random_one_in_training():
    x = RNG.standard_normal((4, 50))
    layer = paddle.nn.RReLU(0.1, 0.3)
    layer.eval()
    np.testing.assert_allclose(layer(t(x)).numpy(), np.where(x >= 0, x, 0.2 * x))
    negative = -np.abs(x) - 0.1
    slopes = F.rrelu(t(negative), 0.1, 0.3, training=True).numpy() / negative
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    positive = np.abs(x)
    np.testing.assert_array_equal(F.rrelu(t(positive), training=True).numpy(), positive)


def test_alpha_dropout_keeps_mean_and_variance_and_is_identity_in_eval():
    """Dropped units take SELU's saturation value, and the affine map a y + b brings
    a standard normal input back to mean 0 and variance 1."""
    x = RNG.standard_normal(200000)
    y = F.alpha_dropout(t(x), 0.4, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.4) * (1 + 0.4 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, alpha_p * a - a * alpha_p * 0.4)
    assert abs(dropped.mean() - 0.4) < 0.01
    layer = paddle.nn.AlphaDropout(0.4)
    layer.eval()
    np.testing.assert_array_equal(layer(t(x)).numpy(), x)


# ---------------------------------------------------------------- fold

def test_fold_is_the_adjoint_of_unfold():
    """<unfold(x), y> == <x, fold(y)> for every x, y."""
    x = RNG.standard_normal((2, 3, 5, 6))
    cols = F.unfold(t(x), [2, 3], strides=[1, 2], paddings=[1, 0, 1, 0], dilations=[2, 1])
    y = RNG.standard_normal(cols.shape)
    back = F.fold(t(y), [5, 6], [2, 3], strides=[1, 2], paddings=[1, 0, 1, 0],
                  dilations=[2, 1])
    np.testing.assert_allclose((cols.numpy() * y).sum(), (x * back.numpy()).sum(), rtol=1e-10)


def test_fold_sums_overlapping_blocks():
    """All-ones blocks of 2x2 with stride 1 over 3x3: each cell counts its blocks."""
    out = paddle.nn.Fold([3, 3], 2)(t(np.ones((1, 4, 4)))).numpy()
    np.testing.assert_array_equal(out[0, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


# ---------------------------------------------------------------- affine_grid, grid_sample

@pytest.mark.parametrize("align_corners", [True, False])
def test_affine_grid(align_corners):
    theta = RNG.standard_normal((2, 2, 3))
    grid = F.affine_grid(t(theta), [2, 1, 3, 4], align_corners=align_corners).numpy()
    xs, ys = np.linspace(-1, 1, 4), np.linspace(-1, 1, 3)
    if not align_corners:
        xs, ys = xs * 3 / 4, ys * 2 / 3
    base = np.stack([*np.meshgrid(xs, ys), np.ones((3, 4))], -1)  # [H, W, 3] as (x, y, 1)
    np.testing.assert_allclose(grid, np.einsum("hwk,njk->nhwj", base, theta), rtol=1e-10)


def np_reflect(c, low, high):
    """c reflected into [low, high] by mirroring at each end."""
    span = high - low
    if span == 0:
        return np.zeros_like(c)
    d = np.abs(c - low)
    flips = np.floor(d / span)
    extra = d - flips * span
    return np.where(flips % 2 == 0, low + extra, high - extra)


def np_grid_sample(x, grid, mode, padding_mode, align_corners):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])

    def coord(g, size):
        p = (g + 1) * (size - 1) / 2 if align_corners else ((g + 1) * size - 1) / 2
        if padding_mode == "border":
            p = np.clip(p, 0, size - 1)
        elif padding_mode == "reflection":
            p = (np_reflect(p, 0, size - 1) if align_corners
                 else np_reflect(p, -0.5, size - 0.5))
            p = np.clip(p, 0, size - 1)
        return p

    def pixel(b, row, col):
        if 0 <= row < h and 0 <= col < w:
            return x[b, :, row, col]
        return np.zeros(c)

    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                px, py = coord(grid[b, i, j, 0], w), coord(grid[b, i, j, 1], h)
                if mode == "nearest":
                    out[b, :, i, j] = pixel(b, int(np.round(py)), int(np.round(px)))
                    continue
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                fx, fy = px - x0, py - y0
                out[b, :, i, j] = (pixel(b, y0, x0) * (1 - fx) * (1 - fy)
                                   + pixel(b, y0, x0 + 1) * fx * (1 - fy)
                                   + pixel(b, y0 + 1, x0) * (1 - fx) * fy
                                   + pixel(b, y0 + 1, x0 + 1) * fx * fy)
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 4, 5))
    grid = RNG.uniform(-2.5, 2.5, (2, 3, 4, 2))
    out = F.grid_sample(t(x), t(grid), mode=mode, padding_mode=padding_mode,
                        align_corners=align_corners)
    np.testing.assert_allclose(out.numpy(),
                               np_grid_sample(x, grid, mode, padding_mode, align_corners),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_bilinear_gradients(padding_mode):
    x = RNG.standard_normal((1, 2, 3, 4))
    grid = RNG.uniform(-1.4, 1.4, (1, 2, 3, 2))
    check_grads(lambda a, g: F.grid_sample(a, g, padding_mode=padding_mode,
                                           align_corners=False), x, grid, rtol=1e-4,
                atol=1e-6)


def test_grid_sample_through_affine_grid_identity_reproduces_the_image():
    x = RNG.standard_normal((2, 3, 4, 5))
    theta = np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1))
    for align_corners in (True, False):
        grid = F.affine_grid(t(theta), [2, 3, 4, 5], align_corners=align_corners)
        out = F.grid_sample(t(x), grid, align_corners=align_corners)
        np.testing.assert_allclose(out.numpy(), x, rtol=1e-10, atol=1e-12)
