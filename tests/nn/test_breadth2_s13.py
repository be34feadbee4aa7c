"""avg pools' divisor_override, the power-average pools (lp_pool1d/2d) and Paddle's
less common losses: values against NumPy references written from Paddle's documented
formulas, gradients against finite differences, and compiled programs against eager
code."""
import itertools

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec

from .gradcheck import check_grads

RNG = np.random.default_rng(132)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ------------------------------------------------------------------ NumPy references

def np_windows(size, kernel, stride, low, high, ceil_mode):
    """Paddle's pooling windows of one axis as (start, stop) input cells, clipped to
    the input: window o spans [o * stride - low, o * stride - low + kernel)."""
    span = size + low + high - kernel
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    return [(max(o * stride - low, 0), min(o * stride - low + kernel, size)) for o in range(out)]


def np_pool(x, kernel, stride, pads, ceil_mode, reduce):
    """`reduce` of each window's cells of x [N, C, *spatial] (pads flat (low, high)
    per axis)."""
    axes = [np_windows(x.shape[2 + a], kernel[a], stride[a], pads[2 * a], pads[2 * a + 1],
                       ceil_mode) for a in range(len(kernel))]
    out = np.zeros(x.shape[:2] + tuple(len(w) for w in axes))
    for index in itertools.product(*[range(len(w)) for w in axes]):
        box = tuple(slice(*axes[a][i]) for a, i in enumerate(index))
        cells = x[(slice(None), slice(None)) + box]
        out[(slice(None), slice(None)) + index] = reduce(cells.reshape(*x.shape[:2], -1))
    return out


# ------------------------------------------------------------------ divisor_override

@pytest.mark.parametrize("kw", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, exclusive=False),
    dict(kernel_size=(2, 3), stride=2, ceil_mode=True),
])
def test_avg_pool2d_divisor_override_is_window_sum_over_divisor(kw):
    x = RNG.standard_normal((2, 3, 5, 6))
    kernel = kw["kernel_size"] if isinstance(kw["kernel_size"], tuple) else (kw["kernel_size"],) * 2
    stride = (kw.get("stride", kernel[0]),) * 2 if "stride" in kw else kernel
    pad = kw.get("padding", 0)
    want = np_pool(x, kernel, stride, (pad,) * 4, kw.get("ceil_mode", False),
                   lambda cells: cells.sum(-1) / 5)
    got = F.avg_pool2d(t(x), divisor_override=5, **kw)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(lambda v: F.avg_pool2d(v, divisor_override=5, **kw), x)


def test_avg_pool2d_divisor_override_channels_last_and_layer():
    x = RNG.standard_normal((2, 3, 4, 6)).astype(np.float32)
    want = np_pool(x.astype(np.float64), (2, 2), (2, 2), (1, 1, 1, 1), False,
                   lambda cells: cells.sum(-1) / 3)
    got = F.avg_pool2d(t(x.transpose(0, 2, 3, 1)), 2, padding=1, divisor_override=3,
                       data_format="NHWC")
    assert got.dtype == paddle.float32
    np.testing.assert_allclose(got.numpy().transpose(0, 3, 1, 2), want, rtol=1e-5)
    layer = nn.AvgPool2D(2, padding=1, divisor_override=3)
    np.testing.assert_allclose(layer(t(x)).numpy(), want, rtol=1e-5)


def test_avg_pool3d_divisor_override():
    x = RNG.standard_normal((1, 2, 4, 5, 3))
    want = np_pool(x, (2, 2, 2), (2, 2, 2), (1, 1, 0, 0, 1, 1), False,
                   lambda cells: cells.sum(-1) / 2.5)
    got = F.avg_pool3d(t(x), 2, padding=[1, 0, 1], divisor_override=2.5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    got = nn.AvgPool3D(2, padding=[1, 0, 1], divisor_override=2.5, data_format="NDHWC")(
        t(x.transpose(0, 2, 3, 4, 1)))
    np.testing.assert_allclose(got.numpy().transpose(0, 4, 1, 2, 3), want, rtol=1e-12)
    check_grads(lambda v: F.avg_pool3d(v, 2, padding=[1, 0, 1], divisor_override=2.5), x)


def test_divisor_override_must_be_a_number():
    with pytest.raises(ValueError, match="divisor_override"):
        F.avg_pool2d(t(np.ones((1, 1, 4, 4))), 2, divisor_override="2")


# ------------------------------------------------------------------ lp_pool

def np_lp(p):
    """Paddle's power-average: (sum of x ** p) ** (1 / p) over a window's input cells,
    the maximum for p = inf."""
    if p == np.inf:
        return lambda cells: cells.max(-1)
    return lambda cells: (cells ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("p, kw", [
    (2, dict(kernel_size=2)),
    (3, dict(kernel_size=3, stride=1, padding=1)),
    (1.5, dict(kernel_size=4, stride=3, padding=1, ceil_mode=True)),
    (np.inf, dict(kernel_size=2, stride=1)),
])
def test_lp_pool1d_matches_power_average(p, kw):
    x = RNG.uniform(0.5, 2.0, (2, 3, 7))
    pad = kw.get("padding", 0)
    stride = kw.get("stride", kw["kernel_size"])
    want = np_pool(x, (kw["kernel_size"],), (stride,), (pad, pad), kw.get("ceil_mode", False),
                   np_lp(p))
    np.testing.assert_allclose(F.lp_pool1d(t(x), p, **kw).numpy(), want, rtol=1e-12)
    check_grads(lambda v: F.lp_pool1d(v, p, **kw), x)
    got = nn.LPPool1D(p, data_format="NLC", **kw)(t(x.transpose(0, 2, 1)))
    np.testing.assert_allclose(got.numpy().transpose(0, 2, 1), want, rtol=1e-12)


def test_lp_pool_odd_power_keeps_the_sign_of_negative_cells():
    """The power is of x itself, not |x|: (-1) ** 3 + 2 ** 3 = 7."""
    x = np.array([[[-1.0, 2.0, 3.0, -4.0]]])
    np.testing.assert_allclose(F.lp_pool1d(t(x), 3, 2).numpy(),
                               [[[7 ** (1 / 3), np.nan]]])


def test_lp_pool2d_padding_ceil_and_channels_last():
    x = RNG.uniform(0.5, 2.0, (2, 2, 6, 6))
    want = np_pool(x, (2, 3), (2, 2), (1, 1, 0, 0), True, np_lp(2))
    got = F.lp_pool2d(t(x), 2, (2, 3), 2, padding=[1, 0], ceil_mode=True)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(lambda v: F.lp_pool2d(v, 2, (2, 3), 2, padding=[1, 0], ceil_mode=True), x)
    got = nn.LPPool2D(2, (2, 3), 2, padding=[1, 0], ceil_mode=True, data_format="NHWC")(
        t(x.transpose(0, 2, 3, 1)))
    np.testing.assert_allclose(got.numpy().transpose(0, 3, 1, 2), want, rtol=1e-12)
    with pytest.raises(ValueError, match="norm_type"):
        F.lp_pool2d(t(x), 0, 2)


def test_compiled_pools_match_eager():
    x = t(RNG.uniform(0.5, 2.0, (2, 3, 6, 8)).astype(np.float32))

    def fn(x):
        return (F.avg_pool2d(x, 3, 2, 1, divisor_override=4),
                F.lp_pool2d(x, 2, 3, 2, padding=1, ceil_mode=True),
                F.lp_pool1d(x[:, :, 0], 3, 2))

    eager = [r.numpy() for r in fn(x)]
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([None, 3, 6, 8])])
    for got, want in zip(static(x), eager):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


# ------------------------------------------------------------------ losses

def np_multi_margin(x, y, p=1, margin=1.0, weight=None):
    """Paddle's documented per-sample loss: sum over j != y of
    weight[y] * max(0, margin - x[y] + x[j]) ** p, over C."""
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        terms = [max(0.0, margin - x[i, y[i]] + x[i, j]) ** p for j in range(c) if j != y[i]]
        out[i] = (1.0 if weight is None else weight[y[i]]) * sum(terms) / c
    return out


def test_multi_margin_loss():
    x = RNG.standard_normal((4, 5))
    y = np.array([0, 3, 4, 1])
    w = RNG.uniform(0.5, 2.0, 5)
    for kw in [{}, dict(p=2, margin=0.5)]:
        want = np_multi_margin(x, y, **kw)
        np.testing.assert_allclose(F.multi_margin_loss(t(x), t(y), **kw).numpy(), want.mean())
        check_grads(lambda v: F.multi_margin_loss(v, t(y), reduction="none", **kw), x)
    got = nn.MultiMarginLoss(weight=t(w), reduction="sum")(t(x), t(y))
    np.testing.assert_allclose(got.numpy(), np_multi_margin(x, y, weight=w).sum())
    check_grads(lambda v, u: F.multi_margin_loss(v, t(y), weight=u, reduction="none"), x, w)


def np_multi_label_margin(x, labels):
    """sum over targets j (the labels before the first -1) and non-targets k of
    max(0, 1 - (x[j] - x[k])), over C."""
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        row = list(labels[i])
        targets = row[:row.index(-1)] if -1 in row else row
        others = [k for k in range(c) if k not in targets]
        out[i] = sum(max(0.0, 1 - x[i, j] + x[i, k]) for j in targets for k in others) / c
    return out


def test_multi_label_margin_loss():
    x = RNG.standard_normal((4, 5))
    labels = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, -1, 2, 2]])
    want = np_multi_label_margin(x, labels)
    np.testing.assert_allclose(F.multi_label_margin_loss(t(x), t(labels)).numpy(), want.mean())
    np.testing.assert_allclose(
        nn.MultiLabelMarginLoss(reduction="none")(t(x), t(labels)).numpy(), want)
    check_grads(lambda v: F.multi_label_margin_loss(v, t(labels), reduction="none"), x)
    with pytest.raises(ValueError, match="label values"):
        F.multi_label_margin_loss(t(x), t(labels + 1))


def test_dice_loss():
    p = RNG.uniform(0.05, 0.95, (3, 4, 5))
    label = RNG.integers(0, 5, (3, 4, 1))
    onehot = np.eye(5)[label[..., 0]]
    dice = 1 - 2 * (p * onehot).sum((1, 2)) / (p.sum((1, 2)) + onehot.sum((1, 2)) + 1e-5)
    np.testing.assert_allclose(F.dice_loss(t(p), t(label)).numpy(), dice.mean())
    check_grads(lambda v: F.dice_loss(v, t(label)), p)


def test_log_loss():
    p = RNG.uniform(0.05, 0.95, (6, 1))
    label = RNG.integers(0, 2, (6, 1)).astype(np.float64)
    want = -label * np.log(p + 1e-4) - (1 - label) * np.log(1 - p + 1e-4)
    np.testing.assert_allclose(F.log_loss(t(p), t(label)).numpy(), want)
    check_grads(lambda v, u: F.log_loss(v, u, epsilon=0.01), p, label)
    with pytest.raises(ValueError, match="log_loss"):
        F.log_loss(t(p.reshape(2, 3)), t(label.reshape(2, 3)))


def np_npair(anchor, positive, labels, l2_reg=0.002):
    """Paddle's documented npair loss: softmax cross entropy of anchor @ positive.T
    against the row-normalised "same label" matrix, plus l2_reg / 4 times the mean
    squared norms."""
    same = (labels[:, None] == labels[None, :]).astype(np.float64)
    targets = same / same.sum(1, keepdims=True)
    logits = anchor @ positive.T
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ce = -(targets * log_softmax).sum(1)
    l2 = (anchor ** 2).sum(1).mean() + (positive ** 2).sum(1).mean()
    return 0.25 * l2_reg * l2 + (targets * ce[:, None]).sum(0).mean()


def test_npair_loss_in_float64():
    anchor, positive = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    labels = np.array([1, 2, 1, 0])
    got = F.npair_loss(t(anchor), t(positive), t(labels), l2_reg=0.1)
    assert got.dtype == paddle.float64
    np.testing.assert_allclose(got.numpy(), np_npair(anchor, positive, labels, 0.1))
    check_grads(lambda a, b: F.npair_loss(a, b, t(labels)), anchor, positive)


def test_triplet_margin_with_distance_loss():
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))

    def dist(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))

    want = np.maximum(dist(a, p) - np.minimum(dist(a, n), dist(p, n)) + 2.0, 0)
    got = F.triplet_margin_with_distance_loss(t(a), t(p), t(n), margin=2.0, swap=True,
                                              reduction="none")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(lambda *v: F.triplet_margin_with_distance_loss(*v, margin=2.0, swap=True,
                                                               reduction="none"), a, p, n)
    l1 = lambda u, v: paddle.abs(u - v).sum(-1)  # noqa: E731
    want = np.maximum(np.abs(a - p).sum(-1) - np.abs(a - n).sum(-1) + 1.0, 0).sum()
    got = nn.TripletMarginWithDistanceLoss(distance_function=l1, reduction="sum")(
        t(a), t(p), t(n))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="negative distance"):
        F.triplet_margin_with_distance_loss(t(a), t(p), t(n),
                                            distance_function=lambda u, v: (u - v).sum(-1))


def np_hsigmoid(x, weight, bias, paths, codes, length):
    """Binary cross entropy of each node's logit on the path against its code bit,
    summed, plus log(2) per step the path is shorter than `length` (Paddle's padding,
    a zero logit)."""
    out = np.zeros((len(x), 1))
    for i, (path, code) in enumerate(zip(paths, codes)):
        logits = np.clip(weight[path] @ x[i] + bias[path, 0], -40, 40)
        out[i] = (np.log1p(np.exp(logits)) - np.array(code) * logits).sum()
        out[i] += (length - len(path)) * np.log(2)
    return out


def default_path(c, num_classes):
    """Paddle's default tree: code c + num_classes; bit j (lowest first, below the
    leading one) is branch j, at node (code >> (j + 1)) - 1."""
    code = int(c) + num_classes
    steps = range(code.bit_length() - 1)
    return [(code >> (j + 1)) - 1 for j in steps], [(code >> j) & 1 for j in steps]


def test_hsigmoid_loss_default_tree():
    num_classes, x = 6, RNG.standard_normal((5, 4))
    weight, bias = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 1))
    labels = np.array([0, 1, 3, 5, 2])
    paths, codes = zip(*[default_path(c, num_classes) for c in labels])
    want = np_hsigmoid(x, weight, bias, paths, codes, 3)
    got = F.hsigmoid_loss(t(x), t(labels), num_classes, t(weight), t(bias))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(lambda *v: F.hsigmoid_loss(v[0], t(labels), num_classes, *v[1:]),
                x, weight, bias)


def test_hsigmoid_loss_custom_tree_and_layer():
    x = RNG.standard_normal((3, 4))
    table = np.array([[0, 1, -1], [0, 2, 3], [0, 2, 4]])
    code = np.array([[1, 0, -1], [0, 1, 1], [0, 0, 1]])
    layer = nn.HSigmoidLoss(4, 6, is_custom=True)
    assert layer.weight.shape == [6, 4] and layer.bias.shape == [6, 1]
    weight, bias = layer.weight.numpy().astype(np.float64), layer.bias.numpy()
    paths = [[n for n in row if n >= 0] for row in table]
    codes = [list(c[:len(p)]) for c, p in zip(code, paths)]
    want = np_hsigmoid(x, weight, bias, paths, codes, 3)
    got = layer(t(x.astype(np.float32)), t(np.array([0, 1, 2])), t(table), t(code))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    check_grads(lambda v, w: F.hsigmoid_loss(v, t(np.zeros(3, np.int64)), 6, w, None,
                                             t(table), t(code)), x, weight)


def test_compiled_losses_match_eager():
    x = t(RNG.standard_normal((4, 5)).astype(np.float32))
    y = t(np.array([0, 3, 4, 1]))
    labels = t(np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, -1, 2, 2]]))
    weight = t(RNG.standard_normal((4, 5)).astype(np.float32))

    def fn(x, y, labels):
        return (F.multi_margin_loss(x, y, p=2), F.multi_label_margin_loss(x, labels),
                F.dice_loss(F.softmax(x), y[:, None]), F.npair_loss(x, x * 2, y),
                F.triplet_margin_with_distance_loss(x, x + 1, x * 2),
                F.hsigmoid_loss(x, y, 5, weight))

    eager = [r.numpy() for r in fn(x, y, labels)]
    static = paddle.jit.to_static(fn, input_spec=[InputSpec([4, 5]),
                                                   InputSpec([4], dtype="int64"),
                                                   InputSpec([4, 5], dtype="int64")])
    for got, want in zip(static(x, y, labels), eager):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
