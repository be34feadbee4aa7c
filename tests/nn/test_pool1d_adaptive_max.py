"""max_pool1d, avg_pool1d and adaptive_max_pool2d (functional and layers): values
against NumPy references written from the window definitions, gradients against
finite differences, compiled programs against eager code, and argument errors."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 3, 11))
X4 = RNG.standard_normal((2, 3, 7, 9))
BACKENDS = ["numpy", "llvm"]


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_pool1d(x, kernel, stride, lo, hi, ceil_mode, reduce, exclusive=True):
    """Windows start at i * stride - lo; with ceil_mode a last partial window counts
    if it starts inside the input or the low padding. Padding is -inf for max, and
    counted in the mean unless `exclusive`."""
    length = x.shape[-1]
    span = length + lo + hi - kernel
    count = (math.ceil(span / stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (count - 1) * stride >= length + lo:
        count -= 1
    out = []
    for i in range(count):
        start = i * stride - lo
        cells = x[..., max(start, 0):min(start + kernel, length)]
        if reduce == "max":
            out.append(cells.max(-1))
        else:
            padded = min(start + kernel, length + lo) - start  # Paddle's: `lo`, not `hi`
            out.append(cells.sum(-1) / (cells.shape[-1] if exclusive else padded))
    return np.stack(out, -1)


@pytest.mark.parametrize("kw, geometry", [
    (dict(kernel_size=2), (2, 2, 0, 0, False)),
    (dict(kernel_size=3, stride=2, padding=1), (3, 2, 1, 1, False)),
    (dict(kernel_size=[3], stride=[2], padding=[1, 2]), (3, 2, 1, 2, False)),
    (dict(kernel_size=3, stride=2, ceil_mode=True), (3, 2, 0, 0, True)),
    (dict(kernel_size=4, stride=3, padding=[[0, 0], [0, 0], [2, 2]], ceil_mode=True),
     (4, 3, 2, 2, True)),
    (dict(kernel_size=3, padding="SAME"), (3, 3, 0, 1, False)),
    (dict(kernel_size=3, padding="VALID"), (3, 3, 0, 0, False)),
])
def test_pool1d_values_and_gradients(kw, geometry):
    ref = np_pool1d(X3, *geometry, "max")
    np.testing.assert_allclose(F.max_pool1d(t(X3), **kw).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(F.avg_pool1d(t(X3), **kw).numpy(),
                               np_pool1d(X3, *geometry, "avg"), rtol=1e-12)
    check_grads(lambda x: F.max_pool1d(x, **kw), X3)
    check_grads(lambda x: F.avg_pool1d(x, **kw), X3)


@pytest.mark.parametrize("kw, geometry", [
    (dict(kernel_size=3, stride=2, padding=1), (3, 2, 1, 1, False)),
    (dict(kernel_size=4, stride=3, padding=1, ceil_mode=True), (4, 3, 1, 1, True)),
])
def test_avg_pool1d_counts_padding_unless_exclusive(kw, geometry):
    got = F.avg_pool1d(t(X3), exclusive=False, **kw).numpy()
    np.testing.assert_allclose(got, np_pool1d(X3, *geometry, "avg", exclusive=False),
                               rtol=1e-12)


def test_pool1d_layers_forward_their_options():
    x = t(X3)
    np.testing.assert_array_equal(nn.MaxPool1D(3, 2, 1, ceil_mode=True)(x).numpy(),
                                  F.max_pool1d(x, 3, 2, 1, ceil_mode=True).numpy())
    np.testing.assert_array_equal(nn.AvgPool1D(3, 2, 1, exclusive=False)(x).numpy(),
                                  F.avg_pool1d(x, 3, 2, 1, exclusive=False).numpy())
    assert repr(nn.MaxPool1D(3, 2, 1)) == "MaxPool1D(kernel_size=3, stride=2, padding=1)"
    assert repr(nn.AvgPool1D(3)) == "AvgPool1D(kernel_size=3, stride=None, padding=0)"


def test_pool1d_argument_errors():
    x = t(X3)
    with pytest.raises(ValueError, match="kernel_size must be an int or a list of one int"):
        F.max_pool1d(x, [2, 2])
    with pytest.raises(ValueError, match="padding of a 1-D convolution or pool"):
        F.avg_pool1d(x, 2, padding=[1, 2, 3])
    with pytest.raises(ValueError, match="'SAME', 'VALID'"):
        F.max_pool1d(x, 2, padding="FOO")
    with pytest.raises(ValueError, match="ceil_mode"):
        F.max_pool1d(x, 2, padding="VALID", ceil_mode=True)
    with pytest.raises(ValueError, match=r"max_pool1d: x must be a 3-D \[N, C, L\]"):
        F.max_pool1d(t(X4), 2)
    with pytest.raises(ValueError, match=r"avg_pool1d: x must be a 3-D"):
        F.avg_pool1d(t(X4), 2)


def np_adaptive_max(x, out_h, out_w):
    """Bin i of an axis of n cells covers floor(i*n/out) up to ceil((i+1)*n/out)."""
    h, w = x.shape[2:]
    bins = lambda n, out: [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]
    return np.stack([np.stack([x[:, :, r0:r1, c0:c1].max((2, 3)) for c0, c1 in bins(w, out_w)],
                              -1) for r0, r1 in bins(h, out_h)], -2)


@pytest.mark.parametrize("size, out_hw", [
    (1, (1, 1)), (3, (3, 3)), ([2, 4], (2, 4)), ([5, None], (5, 9)), ([None, 9], (7, 9)),
    ((10, 12), (10, 12)),
])
def test_adaptive_max_pool2d_values_and_gradients(size, out_hw):
    got = F.adaptive_max_pool2d(t(X4), size).numpy()
    np.testing.assert_allclose(got, np_adaptive_max(X4, *out_hw), rtol=1e-12)
    check_grads(lambda x: F.adaptive_max_pool2d(x, size), X4[:1, :2])


def test_adaptive_max_pool2d_layer_and_errors():
    x = t(X4)
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2D([2, 3])(x).numpy(),
                                  F.adaptive_max_pool2d(x, [2, 3]).numpy())
    assert repr(nn.AdaptiveMaxPool2D(3)) == "AdaptiveMaxPool2D(output_size=3, return_mask=False)"
    with pytest.raises(ValueError, match=r"x must be a 4-D \[N, C, H, W\]"):
        F.adaptive_max_pool2d(t(X3), 2)
    with pytest.raises(ValueError, match="output_size must be a positive int"):
        F.adaptive_max_pool2d(x, [0, 2])
    with pytest.raises(ValueError, match="output_size must be a positive int"):
        F.adaptive_max_pool2d(x, [1, 2, 3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_matches_eager(backend):
    x3, x4 = t(X3.astype(np.float32)), t(X4.astype(np.float32))
    for fn, x in [(lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), x3),
                  (lambda x: F.avg_pool1d(x, 4, 3, "SAME", exclusive=False), x3),
                  (lambda x: F.adaptive_max_pool2d(x, [3, 4]), x4)]:
        np.testing.assert_array_equal(paddle.compile(fn, backend=backend)(x).numpy(),
                                      fn(x).numpy())
    model = nn.Sequential(nn.AdaptiveMaxPool2D([5, 4]), nn.Flatten(2), nn.MaxPool1D(2),
                          nn.AvgPool1D(3, 1, 1))
    eager = model(x4).numpy()
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 3, 7, 9])],
                                  backend=backend)
    np.testing.assert_array_equal(static(x4).numpy(), eager)
    np.testing.assert_array_equal(static(x4[:1]).numpy(), eager[:1])
