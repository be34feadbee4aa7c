"""Parity of `paddle.vision.transforms` with Paddle 3.3.1 where irflow used to give a
different answer silently (values checked against Paddle 3.3.1)."""
import numpy as np

import irflow as paddle
import irflow.vision.transforms as T

MEAN, STD = [0.1, 0.2, 0.3], [0.5, 0.6, 0.7]
TOL = {"rtol": 1e-6, "atol": 1e-6}


def _chw(shape=(3, 2, 4)):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10.0


def test_normalize_of_a_tensor_ignores_to_rgb():
    # Paddle's tensor path (functional_tensor.normalize) has no to_rgb.
    x = _chw()
    expected = (x - np.reshape(MEAN, (-1, 1, 1))) / np.reshape(STD, (-1, 1, 1))
    out = T.Normalize(MEAN, STD, to_rgb=True)(paddle.to_tensor(x))
    np.testing.assert_allclose(out.numpy(), expected, **TOL)
    hwc = T.normalize(paddle.to_tensor(x.transpose(1, 2, 0)), MEAN, STD, "HWC", to_rgb=True)
    np.testing.assert_allclose(hwc.numpy(), expected.transpose(1, 2, 0), **TOL)


def test_normalize_of_a_chw_array_with_to_rgb_reverses_its_channels():
    """Deliberately not Paddle's: its cv2 path reverses img[..., ::-1] whatever
    data_format, mirroring a CHW image's columns; to_rgb means BGR to RGB."""
    x = _chw()
    out = T.normalize(x, MEAN, STD, "CHW", to_rgb=True)
    expected = (x[::-1] - np.reshape(MEAN, (-1, 1, 1))) / np.reshape(STD, (-1, 1, 1))
    np.testing.assert_allclose(out, expected, **TOL)


def test_normalize_keeps_a_float64_tensor_float64():
    out = T.normalize(paddle.to_tensor(_chw().astype(np.float64)), MEAN, STD)
    assert out.dtype == paddle.float64


def test_resize_of_a_uint8_tensor_truncates_as_paddle():
    # Paddle 3.3.1: T.resize(x, (3, 4)) on this uint8 tensor; the float results are
    # 13.75, 30.25, ... and Paddle's kernel casts them down.
    x = (np.arange(24).reshape(1, 4, 6) * 11 % 256).astype(np.uint8)
    out = T.resize(paddle.to_tensor(x), (3, 4))
    assert out.dtype == paddle.uint8
    np.testing.assert_array_equal(out.numpy(), [[[13, 30, 46, 63], [101, 118, 134, 151],
                                                 [189, 206, 222, 239]]])


def test_random_crop_pad_if_needed_pads_both_sides():
    # Paddle pads a short side by the shortfall on both ends, so a 2x3 image in a
    # 4x4 crop is padded to 6x5 and may sit anywhere in the crop.
    img = np.arange(1, 7, dtype=np.float32).reshape(2, 3, 1)
    padded = np.pad(img, ((2, 2), (1, 1), (0, 0)))
    windows = {(i, j): padded[i:i + 4, j:j + 4] for i in range(3) for j in range(2)}
    paddle.seed(0)
    seen = set()
    for _ in range(60):
        crop = T.RandomCrop(4, pad_if_needed=True)(img)
        seen |= {key for key, window in windows.items() if np.array_equal(crop, window)}
    assert seen == set(windows)
