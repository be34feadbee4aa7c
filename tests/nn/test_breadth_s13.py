"""Max pools' masks (return_mask), max_unpool and pad with negative amounts: values
against NumPy references written from Paddle's documented rules, gradients against
the rule they imply, and a compiled program against eager code."""
import itertools

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec

RNG = np.random.default_rng(13)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def ties(shape):
    """Small integers, so windows hold tied maxima."""
    return RNG.integers(0, 4, shape).astype(np.float64)


def np_max_pool_mask(x, kernel, stride, pads, ceil_mode=False):
    """Paddle's max pool with mask: window o of each axis spans input cells
    [o * stride - low, o * stride - low + kernel) clipped to the input; the maximum is
    the first (row-major) cell strictly greater than all before it, and the mask is
    its row-major flat index within the channel's plane."""
    sizes = x.shape[2:]
    outs = []
    for n, k, s, (lo, hi) in zip(sizes, kernel, stride, pads):
        span = n + lo + hi - k
        outs.append((span + (s - 1 if ceil_mode else 0)) // s + 1)
    values = np.empty(x.shape[:2] + tuple(outs))
    mask = np.empty(values.shape, dtype=np.int64)
    for b, c in itertools.product(*map(range, x.shape[:2])):
        for o in itertools.product(*map(range, outs)):
            ranges = [range(max(i * s - lo, 0), min(i * s - lo + k, n))
                      for i, s, (lo, _), k, n in zip(o, stride, pads, kernel, sizes)]
            best, at = -np.inf, None
            for cell in itertools.product(*ranges):
                if x[(b, c) + cell] > best:
                    best, at = x[(b, c) + cell], cell
            values[(b, c) + o] = best
            mask[(b, c) + o] = np.ravel_multi_index(at, sizes)
    return values, mask


def np_unpool(x, mask, sizes):
    out = np.zeros(x.shape[:2] + (int(np.prod(sizes)),))
    for b, c in itertools.product(*map(range, x.shape[:2])):
        out[b, c, mask[b, c].ravel()] = x[b, c].ravel()
    return out.reshape(x.shape[:2] + tuple(sizes))


def mask_grad(x_shape, mask, weight):
    """The gradient of sum(weight * pooled) under the first-tie rule: each output's
    weight lands on the input cell its mask names."""
    grad = np.zeros((x_shape[0], x_shape[1], int(np.prod(x_shape[2:]))))
    for b, c in itertools.product(range(x_shape[0]), range(x_shape[1])):
        np.add.at(grad[b, c], mask[b, c].ravel(), weight[b, c].ravel())
    return grad.reshape(x_shape)


@pytest.mark.parametrize("kw, pads", [
    (dict(kernel_size=2), ((0, 0), (0, 0))),
    (dict(kernel_size=2, stride=1), ((0, 0), (0, 0))),
    (dict(kernel_size=3, stride=2, padding=1), ((1, 1), (1, 1))),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), ((1, 1), (1, 1))),
    (dict(kernel_size=[2, 3], stride=[1, 2], padding=[1, 0]), ((1, 1), (0, 0))),
    (dict(kernel_size=2, padding="SAME"), ((0, 1), (0, 1))),   # TensorFlow's SAME split
])
def test_max_pool2d_mask_values_and_gradient(kw, pads):
    x = ties((2, 3, 5, 7))
    kernel, stride = (v if isinstance(v, list) else [v] * 2
                      for v in (kw["kernel_size"], kw.get("stride", kw["kernel_size"])))
    values, mask = np_max_pool_mask(x, kernel, stride, pads, kw.get("ceil_mode", False))
    xt = t(x, stop_gradient=False)
    out, got = F.max_pool2d(xt, return_mask=True, **kw)
    assert got.dtype == paddle.int32
    np.testing.assert_array_equal(got.numpy(), mask)
    np.testing.assert_array_equal(out.numpy(), values)
    np.testing.assert_array_equal(out.numpy(), F.max_pool2d(t(x), **kw).numpy())
    weight = RNG.standard_normal(values.shape)
    (out * t(weight)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), mask_grad(x.shape, mask, weight))


def test_max_pool2d_mask_skips_padding_for_negative_inputs():
    x = -1.0 - ties((1, 2, 4, 5))
    values, mask = np_max_pool_mask(x, [3, 3], [2, 2], ((1, 1), (1, 1)))
    out, got = F.max_pool2d(t(x), 3, 2, 1, return_mask=True)
    np.testing.assert_array_equal(got.numpy(), mask)
    np.testing.assert_array_equal(out.numpy(), values)


@pytest.mark.parametrize("kw, pads", [
    (dict(kernel_size=2), ((0, 0),)),
    (dict(kernel_size=3, stride=2, padding=1), ((1, 1),)),
    (dict(kernel_size=2, ceil_mode=True), ((0, 0),)),
])
def test_max_pool1d_mask(kw, pads):
    x = ties((2, 3, 9))
    kernel = [kw["kernel_size"]]
    values, mask = np_max_pool_mask(x, kernel, [kw.get("stride", kernel[0])], pads,
                                    kw.get("ceil_mode", False))
    out, got = F.max_pool1d(t(x), return_mask=True, **kw)
    np.testing.assert_array_equal(got.numpy(), mask)
    np.testing.assert_array_equal(out.numpy(), values)
    layer_out, layer_mask = nn.MaxPool1D(return_mask=True, **kw)(t(x))
    np.testing.assert_array_equal(layer_mask.numpy(), mask)


def test_max_pool3d_mask_and_gradient():
    x = ties((1, 2, 3, 4, 5))
    values, mask = np_max_pool_mask(x, [2, 2, 2], [1, 1, 1], ((1, 1),) * 3)
    xt = t(x, stop_gradient=False)
    out, got = F.max_pool3d(xt, 2, 1, 1, return_mask=True)
    np.testing.assert_array_equal(got.numpy(), mask)
    np.testing.assert_array_equal(out.numpy(), values)
    weight = RNG.standard_normal(values.shape)
    (out * t(weight)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), mask_grad(x.shape, mask, weight))
    _, layer_mask = nn.MaxPool3D(2, 1, 1, return_mask=True)(t(x))
    np.testing.assert_array_equal(layer_mask.numpy(), mask)


def test_mask_needs_channels_first():
    with pytest.raises(ValueError, match="max_pool2d: return_mask=True takes channels-first"):
        F.max_pool2d(t(ties((1, 4, 4, 2))), 2, return_mask=True, data_format="NHWC")
    with pytest.raises(ValueError, match="max_pool3d: return_mask=True takes channels-first"):
        F.max_pool3d(t(ties((1, 4, 4, 4, 2))), 2, return_mask=True, data_format="NDHWC")


def np_adaptive_max_mask(x, outs):
    """Adaptive bins: cells floor(i * n / out) up to ceil((i + 1) * n / out) per axis,
    the first maximum in row-major order."""
    sizes = x.shape[2:]
    values = np.empty(x.shape[:2] + tuple(outs))
    mask = np.empty(values.shape, dtype=np.int64)
    for b, c in itertools.product(*map(range, x.shape[:2])):
        for o in itertools.product(*map(range, outs)):
            box = tuple(slice(i * n // m, -(-(i + 1) * n // m))
                        for i, n, m in zip(o, sizes, outs))
            patch = x[(b, c) + box]
            local = np.unravel_index(np.argmax(patch), patch.shape)
            values[(b, c) + o] = patch[local]
            mask[(b, c) + o] = np.ravel_multi_index(
                tuple(s.start + i for s, i in zip(box, local)), sizes)
    return values, mask


@pytest.mark.parametrize("fn, shape, outs", [
    (F.adaptive_max_pool2d, (2, 3, 5, 7), [3, 2]),
    (F.adaptive_max_pool3d, (1, 2, 3, 4, 5), [2, 3, 2]),
])
def test_adaptive_max_pool_mask_and_gradient(fn, shape, outs):
    x = ties(shape)
    values, mask = np_adaptive_max_mask(x, outs)
    xt = t(x, stop_gradient=False)
    out, got = fn(xt, outs, return_mask=True)
    assert got.dtype == paddle.int32
    np.testing.assert_array_equal(got.numpy(), mask)
    np.testing.assert_array_equal(out.numpy(), values)
    weight = RNG.standard_normal(values.shape)
    (out * t(weight)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), mask_grad(shape, mask, weight))


def test_adaptive_max_pool_layers_return_mask():
    x = ties((1, 2, 5, 7))
    _, mask = np_adaptive_max_mask(x, [2, 3])
    _, got = nn.AdaptiveMaxPool2D([2, 3], return_mask=True)(t(x))
    np.testing.assert_array_equal(got.numpy(), mask)


@pytest.mark.parametrize("pool, unpool, layer, shape, kernel", [
    (F.max_pool1d, F.max_unpool1d, nn.MaxUnPool1D, (2, 3, 8), 2),
    (F.max_pool2d, F.max_unpool2d, nn.MaxUnPool2D, (2, 3, 4, 6), 2),
    (F.max_pool3d, F.max_unpool3d, nn.MaxUnPool3D, (1, 2, 4, 4, 6), 2),
])
def test_max_unpool_inverts_the_mask(pool, unpool, layer, shape, kernel):
    x = RNG.standard_normal(shape)
    out, mask = pool(t(x), kernel, return_mask=True)
    pooled = t(out.numpy(), stop_gradient=False)
    got = unpool(pooled, mask, kernel)
    expected = np_unpool(out.numpy(), mask.numpy(), shape[2:])
    np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(layer(kernel)(t(out.numpy()), mask).numpy(), expected)
    weight = RNG.standard_normal(shape)
    (got * t(weight)).sum().backward()
    read_back = np.take_along_axis(weight.reshape(shape[:2] + (-1,)),
                                   mask.numpy().reshape(shape[:2] + (-1,)).astype(np.int64), 2)
    np.testing.assert_allclose(pooled.grad.numpy(), read_back.reshape(out.shape))


def test_max_unpool_output_size():
    x = RNG.standard_normal((1, 2, 5, 7))
    out, mask = F.max_pool2d(t(x), 2, return_mask=True)
    got = F.max_unpool2d(out, mask, 2, output_size=[5, 7])
    np.testing.assert_array_equal(got.numpy(), np_unpool(out.numpy(), mask.numpy(), (5, 7)))
    assert F.max_unpool2d(out, mask, 2, output_size=[1, 2, 5, 7]).shape == [1, 2, 5, 7]
    # the default size is (n - 1) * stride + kernel: 4 x 6; one stride either way is out
    with pytest.raises(ValueError, match="entry 0 must lie strictly between 2 and 6"):
        F.max_unpool2d(out, mask, 2, output_size=[6, 6])
    with pytest.raises(ValueError, match="data_format must be 'NCHW'"):
        F.max_unpool2d(out, mask, 2, data_format="NHWC")


def np_pad(x, pad, mode):
    """A negative amount crops: the positive amounts pad the whole input first (NumPy's
    np.pad modes: 'reflect', 'edge', 'wrap'; constant 7), then the negative ones cut."""
    grow = [(0, 0), (0, 0), (max(pad[2], 0), max(pad[3], 0)), (max(pad[0], 0), max(pad[1], 0))]
    np_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    extra = {"constant_values": 7.0} if mode == "constant" else {}
    out = np.pad(x, grow, mode=np_mode, **extra)
    h, w = out.shape[2:]
    return out[:, :, max(-pad[2], 0):h - max(-pad[3], 0), max(-pad[0], 0):w - max(-pad[1], 0)]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [[-1, 2, 0, -1], [-1, -1, -1, -1], [1, -2, 0, 0]])
def test_pad_negative_crops_after_padding(mode, pad):
    x = RNG.standard_normal((1, 2, 4, 5))
    xt = t(x, stop_gradient=False)
    got = F.pad(xt, pad, mode=mode, value=7.0)
    np.testing.assert_array_equal(got.numpy(), np_pad(x, pad, mode))
    weight = RNG.standard_normal(got.shape)
    (got * t(weight)).sum().backward()
    # the pad is affine in x: d/dx_i sum(w * pad(x)) = sum(w * (pad(e_i) - pad(0)))
    base = np_pad(np.zeros_like(x), pad, mode)
    expected = np.array([(weight * (np_pad(e.reshape(x.shape), pad, mode) - base)).sum()
                         for e in np.eye(x.size)]).reshape(x.shape)
    np.testing.assert_allclose(xt.grad.numpy(), expected, atol=1e-12)


def test_compiled_masks_match_eager():
    x = t(RNG.standard_normal((2, 3, 6, 8)).astype(np.float32))

    def fn(x):
        out, mask = F.max_pool2d(x, 3, 2, 1, return_mask=True)
        values, amask = F.adaptive_max_pool2d(x, [2, 3], return_mask=True)
        return (F.max_unpool2d(out, mask, 3, 2, 1, output_size=[6, 8]),
                mask, amask, F.pad(x, [-1, 2, 1, -2], mode="circular"))

    eager = [r.numpy() for r in fn(x)]
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([None, 3, 6, 8])])
    for got, want in zip(static(x), eager):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(static(x[:1]), eager):
        np.testing.assert_array_equal(got.numpy(), want[:1])
