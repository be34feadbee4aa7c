"""`F.interpolate(mode="bicubic")` and `nn.Upsample`: Paddle's numbers, a NumPy
transcription of Paddle's kernel (4x4 taps, A = -0.75, border taps clamped), both
`align_corners`, NHWC, gradients and compilation."""
import numpy as np
import pytest

import irflow as paddle
from irflow import nn
from irflow.nn import functional as F

from .gradcheck import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)


def cubic(d):
    """Keys' cubic convolution kernel with A = -0.75, at distance d."""
    a, d = -0.75, abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0


def source(out_size, in_size, align_corners, scale=None):
    """Paddle's source position of each output position (bicubic: never clamped, so
    a single output position samples at -0.5 without `align_corners`)."""
    if out_size == 1:
        ratio = 0.0
    elif align_corners:
        ratio = (in_size - 1) / (out_size - 1)
    else:
        ratio = 1.0 / scale if scale else in_size / out_size
    dst = np.arange(out_size)
    return dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5


def paddle_bicubic(x, out_hw, align_corners, scales=(None, None)):
    """The loop of Paddle's CPU bicubic kernel over 4x4 taps, in float64."""
    n, c, h, w = x.shape
    ys = source(out_hw[0], h, align_corners, scales[0])
    xs = source(out_hw[1], w, align_corners, scales[1])
    out = np.zeros((n, c, *out_hw))
    for i, y in enumerate(ys):
        for j, xx in enumerate(xs):
            y0, x0 = int(np.floor(y)), int(np.floor(xx))
            for a in range(-1, 3):
                for b in range(-1, 3):
                    weight = cubic(y - (y0 + a)) * cubic(xx - (x0 + b))
                    tap = x[:, :, min(max(y0 + a, 0), h - 1), min(max(x0 + b, 0), w - 1)]
                    out[:, :, i, j] += weight * tap
    return out


def test_matches_paddle_numbers():
    # From Paddle 3.3.1: F.interpolate(x, size=[2, 5], mode="bicubic",
    # align_corners=False / True) on this x.
    x = (np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4) % 5) ** 1.5
    half_pixel = [[1.9972706, 0.6722819, 1.1244885, 3.2997365, 4.862179],
                  [6.110239, 6.801673, 3.0514657, -0.1720453, 1.4020125]]
    corners = [[0.0, 0.5805956, 1.7859892, 3.5577068, 5.1961527],
               [5.1961527, 8.208504, 4.169111, -0.6171875, 1.0]]
    for align_corners, expected in ((False, half_pixel), (True, corners)):
        got = F.interpolate(paddle.to_tensor(x), size=[2, 5], mode="bicubic",
                            align_corners=align_corners).numpy()
        np.testing.assert_allclose(got[0, 0], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("out_hw", [(9, 4), (3, 11), (1, 1), (10, 14)])
def test_sizes_match_paddles_kernel(out_hw, align_corners):
    got = F.interpolate(paddle.to_tensor(X), size=list(out_hw), mode="bicubic",
                        align_corners=align_corners)
    np.testing.assert_allclose(got.numpy(), paddle_bicubic(X, out_hw, align_corners),
                               rtol=1e-5, atol=1e-5)


def test_scale_factor_and_nhwc():
    got = F.interpolate(paddle.to_tensor(X), scale_factor=[0.6, 1.7], mode="bicubic")
    np.testing.assert_allclose(got.numpy(), paddle_bicubic(X, (3, 11), False, (0.6, 1.7)),
                               rtol=1e-5, atol=1e-5)
    nhwc = X.transpose(0, 2, 3, 1)
    got = nn.Upsample(scale_factor=2, mode="bicubic", data_format="NHWC")(
        paddle.to_tensor(nhwc))
    np.testing.assert_allclose(got.numpy().transpose(0, 3, 1, 2),
                               paddle_bicubic(X, (10, 14), False, (2, 2)), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("align_corners", [False, True])
def test_gradients(align_corners):
    check_grads(lambda a: F.interpolate(a, size=[4, 6], mode="bicubic",
                                        align_corners=align_corners), X[:1, :2, :3, :4])


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_matches_eager(backend):
    model = nn.Sequential(nn.Upsample(scale_factor=2, mode="bicubic"), nn.Conv2D(3, 2, 3))
    x = paddle.to_tensor(X)
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(),
                               model(x).numpy(), rtol=1e-5, atol=1e-5)
