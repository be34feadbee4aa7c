"""`paddle.vision.transforms` colour adjustments (`to_grayscale`, `adjust_brightness`,
`adjust_contrast`, `adjust_saturation`, `adjust_hue` and their transforms),
`erase` / `RandomErasing` and `RandomResizedCrop`, on HWC arrays and CHW tensors,
checked against the rules their docstrings state (OpenCV's fixed-point luma and
Paddle's look-up tables for uint8 arrays, Paddle's lerp for tensors)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, InputError
from irflow.vision import transforms as T

RNG = np.random.default_rng(0)
IMG = RNG.integers(0, 256, (6, 8, 3)).astype(np.uint8)
FLOAT = RNG.random((6, 8, 3)).astype(np.float32)
# pure red, green, blue, white and black pixels
PRIMARIES = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255],
                       [0, 0, 0]]], np.uint8)


def chw(img):
    return paddle.to_tensor(np.ascontiguousarray(img.transpose(2, 0, 1)))


def test_to_grayscale_of_uint8_arrays_is_opencvs_rounded_luma():
    # 0.299 R + 0.587 G + 0.114 B rounded: red 76.2, green 149.7, blue 29.1
    gray = T.to_grayscale(PRIMARIES)
    assert gray.shape == (1, 5, 1) and gray.dtype == np.uint8
    assert gray[0, :, 0].tolist() == [76, 150, 29, 255, 0]
    three = T.Grayscale(3)(PRIMARIES)
    assert three.shape == (1, 5, 3) and (three == gray).all()


def test_to_grayscale_of_tensors_uses_paddles_weights():
    gray = T.to_grayscale(chw(FLOAT), 3).numpy()
    expected = FLOAT @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    assert gray.shape == (3, 6, 8)
    np.testing.assert_allclose(gray[2], expected, rtol=1e-6)
    with pytest.raises(InputError, match="3 \\(RGB\\) channels"):
        T.to_grayscale(IMG[:, :, :2])


def test_adjust_brightness_scales_and_truncates():
    out = T.adjust_brightness(IMG, 1.7)
    np.testing.assert_array_equal(out, np.clip(IMG * 1.7, 0, 255).astype(np.uint8))
    tensor = T.adjust_brightness(chw(FLOAT), 0.5).numpy()
    np.testing.assert_allclose(tensor, chw(FLOAT).numpy() * 0.5, rtol=1e-6)
    with pytest.raises(DTypeError, match="uint8"):
        T.adjust_brightness(FLOAT, 0.5)


def test_adjust_contrast_blends_with_a_grey_level():
    # uint8 arrays: Paddle's look-up table (i - 74) * factor + 74
    out = T.adjust_contrast(IMG, 0.5)
    np.testing.assert_array_equal(out, np.clip((IMG - 74.0) * 0.5 + 74, 0, 255)
                                  .astype(np.uint8))
    # tensors: the mean of the luma
    x = chw(FLOAT)
    mean = np.mean(FLOAT @ np.array([0.2989, 0.5870, 0.1140], np.float32))
    np.testing.assert_allclose(T.adjust_contrast(x, 0.0).numpy(), np.full((3, 6, 8), mean),
                               rtol=1e-5)
    np.testing.assert_allclose(T.adjust_contrast(x, 1.5).numpy(),
                               np.clip(mean + 1.5 * (x.numpy() - mean), 0, 1), rtol=1e-5)


def test_adjust_saturation_is_deterministic_and_keeps_the_image_at_one():
    np.testing.assert_array_equal(T.adjust_saturation(IMG, 1.0), IMG)
    grey = T.adjust_saturation(IMG.astype(np.float32), 0.0)
    luma = IMG.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    np.testing.assert_allclose(grey, np.repeat(luma[:, :, None], 3, 2), rtol=1e-5)
    x = chw(FLOAT)
    np.testing.assert_allclose(T.adjust_saturation(x, 1.0).numpy(), x.numpy(), atol=1e-7)
    luma = FLOAT @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    np.testing.assert_allclose(T.adjust_saturation(x, 2.0).numpy(),
                               np.clip(2 * x.numpy() - luma, 0, 1), rtol=1e-5, atol=1e-6)


def test_adjust_hue_turns_the_colour_wheel():
    # red turned by half a turn is cyan, by a third green, by minus a third blue
    red = np.array([[[255, 0, 0]]], np.uint8)
    assert T.adjust_hue(red, 0.5).tolist() == [[[0, 255, 255]]]
    assert T.adjust_hue(red, 1 / 3).tolist() == [[[0, 255, 0]]]
    assert T.adjust_hue(chw(red), -1 / 3).numpy()[:, 0, 0].tolist() == [0, 0, 255]
    # a zero turn keeps integer images (Paddle's truncation would darken them)
    np.testing.assert_array_equal(T.adjust_hue(IMG, 0.0), IMG)
    np.testing.assert_array_equal(T.adjust_hue(chw(IMG), 0.0).numpy(), chw(IMG).numpy())
    np.testing.assert_allclose(T.adjust_hue(chw(FLOAT), 0.0).numpy(), chw(FLOAT).numpy(),
                               atol=1e-6)
    with pytest.raises(InputError, match="hue_factor"):
        T.adjust_hue(IMG, 0.7)


def test_erase_sets_a_region_and_honours_inplace():
    out = T.erase(IMG, 1, 2, 3, 4, np.array([9, 8, 7], np.uint8))
    expected = IMG.copy()
    expected[1:4, 2:6] = [9, 8, 7]
    np.testing.assert_array_equal(out, expected)
    assert (IMG != out).any()
    x = chw(FLOAT)
    copy = T.erase(x, 0, 0, 2, 2, paddle.to_tensor([0.0]))
    assert (copy.numpy()[:, :2, :2] == 0).all() and (x.numpy()[:, :2, :2] != 0).all()
    same = T.erase(x, 0, 0, 2, 2, 0.0, inplace=True)
    assert same is x and (x.numpy()[:, :2, :2] == 0).all()


def test_normalize_of_an_hw_array_ignores_to_rgb():
    # an HW image has no channels to reverse; its rows must stay in place
    gray = IMG[:, :, 0].astype(np.float32)
    out = T.normalize(gray, [1.0], [2.0], "CHW", to_rgb=True)
    np.testing.assert_allclose(out[0], (gray - 1.0) / 2.0)


def test_color_transforms_draw_factors_in_their_ranges():
    paddle.seed(0)
    assert T.ColorJitter()(IMG) is IMG
    assert T.HueTransform(0.0)(IMG) is IMG
    out = T.ColorJitter(0.4, 0.4, 0.4, 0.1)(IMG)
    assert out.shape == IMG.shape and out.dtype == np.uint8
    bright = T.BrightnessTransform((2.0, 2.0))(chw(FLOAT))
    np.testing.assert_allclose(bright.numpy(), np.clip(2 * chw(FLOAT).numpy(), 0, 1))
    with pytest.raises(InputError, match="range"):
        T.HueTransform((-0.6, 0.2))
    with pytest.raises(InputError, match="non-negative"):
        T.ContrastTransform(-1)


def test_random_resized_crop_sizes_and_its_central_fallback():
    paddle.seed(1)
    img = RNG.integers(0, 256, (40, 60, 3)).astype(np.uint8)
    assert T.RandomResizedCrop(16)(img).shape == (16, 16, 3)
    assert T.RandomResizedCrop((8, 12))(chw(img)).shape == [3, 8, 12]
    # an area above the image's never fits: the central crop of aspect 4/3
    fallback = T.RandomResizedCrop((10, 10), scale=(2.0, 3.0), interpolation="nearest")
    np.testing.assert_array_equal(fallback(img),
                                  T.resize(img[:, 3:56], (10, 10), "nearest"))


def test_random_erasing_writes_one_rectangle_of_the_value():
    paddle.seed(2)
    img = np.zeros((20, 30, 3), np.uint8)
    out = T.RandomErasing(prob=1.0, value=(1, 2, 3))(img)
    rows, cols = np.nonzero(out[:, :, 0])
    assert rows.size and (out[rows, cols] == [1, 2, 3]).all()
    assert rows.size == (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
    assert T.RandomErasing(prob=0.0)(img) is img
    noise = T.RandomErasing(prob=1.0, value="random")(chw(FLOAT))
    assert noise.shape == [3, 6, 8] and noise.dtype == paddle.float32
    with pytest.raises(InputError, match="'random'"):
        T.RandomErasing(value="noise")
