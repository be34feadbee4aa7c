"""`paddle.vision.transforms` on NumPy HWC arrays and CHW tensors: against Paddle's
numbers for tensor images (its cv2-free path), against NumPy for arrays."""
import numpy as np
import pytest

import irflow as paddle
from irflow.nn import functional as F
from irflow.vision import transforms as T

RNG = np.random.default_rng(0)
IMG = RNG.integers(0, 256, (6, 8, 3)).astype(np.uint8)


def chw(img):
    return paddle.to_tensor(img.transpose(2, 0, 1).astype(np.float32))


def test_to_tensor_and_normalize():
    tensor = T.ToTensor()(IMG)
    assert tensor.shape == [3, 6, 8] and tensor.dtype == paddle.float32
    np.testing.assert_allclose(tensor.numpy(), IMG.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert T.ToTensor("HWC")(IMG[:, :, 0]).shape == [6, 8, 1]
    normalized = T.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.4])(tensor).numpy()
    np.testing.assert_allclose(normalized[2], (IMG[:, :, 2] / 255.0 - 0.3) / 0.4, rtol=1e-5)
    hwc = T.Normalize(127.0, 50.0, data_format="HWC", to_rgb=True)(IMG.astype(np.float32))
    np.testing.assert_allclose(hwc[..., 0], (IMG[..., 2] - 127.0) / 50.0, rtol=1e-6)


def test_resize_of_tensor_images_matches_paddle():
    # From Paddle 3.3.1: T.Resize((2, 3), mode)(x), x = arange(24).reshape(1, 4, 6)**2
    # as float32 (Paddle resizes tensor images with F.interpolate).
    x = paddle.to_tensor((np.arange(24, dtype=np.float32).reshape(1, 4, 6)) ** 2)
    expected = {"nearest": [[0.0, 4.0, 16.0], [144.0, 196.0, 256.0]],
                "bilinear": [[21.5, 39.5, 65.5], [249.5, 315.5, 389.5]],
                "bicubic": [[10.07421875, 26.1875, 51.42578125],
                            [256.98828125, 328.0625, 408.26171875]]}
    for mode, values in expected.items():
        np.testing.assert_allclose(T.Resize((2, 3), mode)(x).numpy()[0], values,
                                   rtol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_resize_of_arrays_samples_as_interpolate(mode):
    out = T.Resize((9, 13), mode)(IMG)
    assert out.shape == (9, 13, 3) and out.dtype == np.uint8
    reference = F.interpolate(chw(IMG)[None], size=[9, 13], mode=mode).numpy()[0]
    expected = np.clip(np.rint(reference.transpose(1, 2, 0)), 0, 255)
    np.testing.assert_array_equal(out, expected)
    assert T.resize(IMG[:, :, 0], (3, 4), mode).shape == (3, 4)


def test_resize_by_shorter_side():
    assert T.Resize(4)(IMG).shape == (4, 5, 3)          # 6x8: width 8 * 4 / 6 -> 5
    assert T.Resize(3)(chw(IMG)).shape == [3, 3, 4]
    assert T.Resize(6)(IMG) is IMG
    with pytest.raises(ValueError, match="interpolation"):
        T.Resize(4, "area")


def test_crops_flips_transpose():
    np.testing.assert_array_equal(T.CenterCrop((3, 5))(IMG), IMG[2:5, 2:7])
    np.testing.assert_array_equal(T.CenterCrop(3)(chw(IMG)).numpy(),
                                  chw(IMG).numpy()[:, 2:5, 2:5])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(IMG), IMG[:, ::-1])
    np.testing.assert_array_equal(T.RandomVerticalFlip(1.0)(chw(IMG)).numpy(),
                                  chw(IMG).numpy()[:, ::-1])
    assert T.RandomHorizontalFlip(0.0)(IMG) is IMG
    np.testing.assert_array_equal(T.Transpose()(IMG), IMG.transpose(2, 0, 1))
    assert T.Transpose()(IMG[:, :, 0]).shape == (1, 6, 8)


def test_random_crop_is_a_window_and_follows_paddle_seed():
    def crops():
        paddle.seed(5)
        return [T.RandomCrop(4)(IMG) for _ in range(6)]

    first = crops()
    windows = {(i, j): IMG[i:i + 4, j:j + 4] for i in range(3) for j in range(5)}
    for crop in first:
        assert any(np.array_equal(crop, w) for w in windows.values())
    assert all(np.array_equal(a, b) for a, b in zip(first, crops()))
    assert T.RandomCrop((8, 10), pad_if_needed=True)(IMG).shape == (8, 10, 3)
    with pytest.raises(ValueError, match="pad_if_needed"):
        T.RandomCrop(7)(IMG)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad_modes(mode):
    out = T.Pad((1, 2, 3, 0), fill=7, padding_mode=mode)(IMG)
    kwargs = {"constant_values": 7} if mode == "constant" else {}
    np.testing.assert_array_equal(out, np.pad(IMG, ((2, 0), (1, 3), (0, 0)), mode, **kwargs))


def test_pad_fill_per_channel_and_checks():
    out = T.pad(IMG, 1, fill=(1, 2, 3))
    assert out.shape == (8, 10, 3) and list(out[0, 0]) == [1, 2, 3]
    with pytest.raises(ValueError, match="padding_mode"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(TypeError, match="NumPy array"):
        T.hflip([[1, 2]])


def test_compose_on_sample_tuples():
    pipeline = T.Compose([T.Resize(3), T.CenterCrop(3), T.ToTensor(),
                          T.Normalize(0.5, 0.5)])
    image, label = pipeline((IMG, 4))
    assert image.shape == [3, 3, 3] and label == 4
    assert float(image.numpy().min()) >= -1.0 and float(image.numpy().max()) <= 1.0
    with pytest.raises(NotImplementedError, match="boxes"):
        T.ToTensor(keys=("image", "boxes"))
