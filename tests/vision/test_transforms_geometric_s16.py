"""`rotate`, `affine`, `perspective` and RandomRotation / RandomAffine /
RandomPerspective: against a per-pixel NumPy reference of the two pixel grids
(arrays: pixels at integer coordinates, as Paddle's OpenCV path; tensors: pixel
centres at half-integers, as Paddle's grid_sample path), and against small outputs
of Paddle 3.3.1 (with opencv-python 5.1 for arrays) stated where they are used."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, InputError
from irflow.vision import transforms as T
from irflow.vision.transforms import functional as TF

RNG = np.random.default_rng(3)


def chw(array):
    return paddle.to_tensor(np.ascontiguousarray(array.transpose(2, 0, 1)))


# ---------------------------------------------------------------- the reference


def _rotation(angle):
    """The matrix turning (x, y) (y down) by `angle` degrees counter-clockwise."""
    a = math.radians(angle)
    return np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])


def _affine_forward(angle, scale, shear_x):
    """Rotation by `angle` clockwise after a shear along x, scaled: R(a) SHx(s)."""
    a, s = math.radians(angle), math.radians(shear_x)
    rotation = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return scale * rotation @ np.array([[1.0, -math.tan(s)], [0.0, 1.0]])


def reference_warp(img, to_source, out_hw, mode, fill, grid):
    """For each output pixel, its source position `to_source(x, y)` (in the same
    coordinates), read from the HWC float image: grid "array" has pixel (i, j) at
    (j, i), "tensor" at (j + 0.5, i + 0.5). Nearest: the pixel whose cell holds the
    position (ties up for arrays); bilinear: the four neighbours, outside ones
    reading `fill`."""
    height, width, channels = img.shape
    fill = np.broadcast_to(np.asarray(fill, np.float64), (channels,))
    shift = 0.0 if grid == "array" else 0.5
    out = np.zeros(tuple(out_hw) + (channels,))

    def pixel(r, c):
        return img[r, c] if 0 <= r < height and 0 <= c < width else fill

    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            sx, sy = to_source(j + shift, i + shift)
            sx, sy = sx - shift, sy - shift   # in pixel indices
            if mode == "nearest":
                out[i, j] = pixel(math.floor(round(sy, 9) + 0.5), math.floor(round(sx, 9) + 0.5))
                continue
            x0, y0 = math.floor(sx), math.floor(sy)
            fx, fy = sx - x0, sy - y0
            out[i, j] = ((1 - fy) * ((1 - fx) * pixel(y0, x0) + fx * pixel(y0, x0 + 1))
                         + fy * ((1 - fx) * pixel(y0 + 1, x0) + fx * pixel(y0 + 1, x0 + 1)))
    return out


def about(center, matrix, out_center=None):
    """Source position of an output point for the forward `matrix` about `center`
    (the output's centre point `out_center`, default the same)."""
    inverse = np.linalg.inv(matrix)
    out_center = center if out_center is None else out_center

    def to_source(x, y):
        return np.asarray(center) + inverse @ (np.array([x, y]) - out_center)
    return to_source


def homography_source(startpoints, endpoints):
    """The map from an output point to its source: the homography taking the
    endpoints to the startpoints, solved exactly."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(endpoints, startpoints):
        rows += [[x, y, 1, 0, 0, 0, -u * x, -u * y], [0, 0, 0, x, y, 1, -v * x, -v * y]]
        rhs += [u, v]
    a, b, c, d, e, f, g, h = np.linalg.solve(np.array(rows, float), np.array(rhs, float))

    def to_source(x, y):
        w = g * x + h * y + 1
        return (a * x + b * y + c) / w, (d * x + e * y + f) / w
    return to_source


# ---------------------------------------------------------------- Paddle's numbers


def test_small_outputs_equal_paddles():
    # Paddle 3.3.1 (tensors: its grid_sample path; arrays: OpenCV 5.1), on
    # x = arange(20).reshape(4, 5) as float32 CHW (3 equal channels) and
    # a = arange(24).reshape(4, 6) as uint8 HWC (3 equal channels)
    x = chw(np.arange(20, dtype=np.float32).reshape(4, 5, 1).repeat(3, 2))
    a = np.arange(24, dtype=np.uint8).reshape(4, 6, 1).repeat(3, 2)
    sp, ep = [[0, 0], [4, 0], [4, 3], [0, 3]], [[1, 0], [4, 1], [3, 3], [0, 2]]
    expected = {
        "tensor rotate 30": (TF.rotate(x, 30.0, fill=-1).numpy()[0],
                             [[-1, 2, 3, 9, 9], [1, 6, 7, 13, 14], [5, 6, 12, 13, 18],
                              [10, 10, 16, 17, -1]]),
        "tensor affine": (TF.affine(x, 20.0, [1, 0], 1.2, [10, 0], fill=-1).numpy()[0],
                          [[-1, 5, 6, 1, 2], [10, 10, 6, 7, 8], [15, 11, 11, 12, 13],
                           [-1, 16, 17, 18, 13]]),
        "tensor perspective": (TF.perspective(x, sp, ep, fill=-1).numpy()[0],
                               [[-1, 0, 2, -1, -1], [10, 6, 7, 3, 4],
                                [15, 12, 13, 14, -1], [-1, -1, 18, 19, -1]]),
        "array rotate 90": (TF.rotate(a, 90.0, fill=(200, 201, 202))[:, :, 0],
                            [[200, 5, 11, 17, 23, 200], [200, 4, 10, 16, 22, 200],
                             [200, 3, 9, 15, 21, 200], [200, 2, 8, 14, 20, 200]]),
        "array rotate 30 bilinear": (TF.rotate(a, 30.0, "bilinear")[:, :, 0],
                                     [[0, 1, 2, 6, 9, 3], [1, 3, 6, 10, 14, 14],
                                      [3, 7, 11, 15, 19, 23], [7, 12, 16, 20, 14, 3]]),
        "array perspective": (TF.perspective(a, sp, ep, fill=(200, 201, 202))[:, :, 0],
                              [[200, 0, 1, 200, 200, 200], [200, 7, 8, 3, 4, 5],
                               [18, 19, 14, 15, 11, 200], [200, 200, 21, 22, 23, 200]]),
    }
    for name, (got, want) in expected.items():
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert TF.rotate(a, 90.0, fill=(200, 201, 202))[0, 0].tolist() == [200, 201, 202]
    # the expanded sizes of a 5x7 array (Paddle's OpenCV path, as PIL)
    b = np.zeros((5, 7, 3), np.uint8)
    assert TF.rotate(b, 30.0, expand=True).shape == (9, 9, 3)
    assert TF.rotate(b, 90.0, expand=True).shape == (7, 5, 3)


# ---------------------------------------------------------------- rotate


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("angle, center, expand", [(37.0, None, False), (-120.0, (2.0, 1.5), False),
                                                   (23.0, None, True), (90.0, None, True)])
def test_rotate_array_matches_reference(mode, angle, center, expand):
    img = RNG.integers(0, 256, (5, 8, 3)).astype(np.uint8)
    height, width = img.shape[:2]
    got = TF.rotate(img, angle, mode, expand, center, fill=(10, 20, 30))
    c = (width / 2, height / 2) if center is None else center
    out_hw = got.shape[:2]
    if expand:   # the box of the turned corners, floored and ceiled
        corners = np.array([[0, 0], [width, 0], [width, height], [0, height]]) - c
        turned = np.round(corners @ _rotation(angle).T, 9) + c
        assert out_hw == (math.ceil(turned[:, 1].max()) - math.floor(turned[:, 1].min()),
                          math.ceil(turned[:, 0].max()) - math.floor(turned[:, 0].min()))
    out_c = np.array(c) + ((out_hw[1] - width) / 2, (out_hw[0] - height) / 2)
    expected = reference_warp(img.astype(float), about(c, _rotation(angle), out_c), out_hw,
                              mode, (10, 20, 30), "array")
    assert got.dtype == np.uint8
    # bilinear: a value exactly half-way between two levels may round either way
    np.testing.assert_allclose(got, np.clip(np.rint(expected), 0, 255),
                               atol=0 if mode == "nearest" else 1)


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("angle, center, expand", [(37.0, None, False), (-120.0, (2.0, 1.5), False),
                                                   (23.0, None, True)])
def test_rotate_tensor_matches_reference(mode, angle, center, expand):
    img = RNG.normal(size=(6, 8, 2)).astype(np.float32)
    height, width = img.shape[:2]
    got = TF.rotate(chw(img), angle, mode, expand, center, fill=[0.5, -2.0]).numpy()
    c = np.array((width / 2, height / 2) if center is None else center)
    out_hw = got.shape[1:]
    expected = reference_warp(img.astype(float), about(c, _rotation(angle), c + (
        (out_hw[1] - width) / 2, (out_hw[0] - height) / 2)), out_hw, mode, (0.5, -2.0),
        "tensor")
    np.testing.assert_allclose(got.transpose(1, 2, 0), expected, rtol=1e-4, atol=1e-4)


def test_right_angles_of_a_square_tensor_permute_its_pixels():
    img = chw(np.arange(25, dtype=np.float32).reshape(5, 5, 1))
    for k in (1, 2, 3):
        np.testing.assert_array_equal(TF.rotate(img, 90.0 * k).numpy(),
                                      np.rot90(img.numpy(), k, axes=(1, 2)))


def test_expand_sizes_an_odd_tensor_as_an_array():
    # Paddle's tensor path makes a 5x7 image 6x8 at 0 degrees and 8x6 at 90 (it
    # floors and ceils corners measured from the centre); irflow sizes as PIL
    t = paddle.zeros([1, 5, 7])
    assert TF.rotate(t, 0.0, expand=True).shape == [1, 5, 7]
    assert TF.rotate(t, 90.0, expand=True).shape == [1, 7, 5]
    assert TF.rotate(t, 30.0, expand=True).shape == [1, 9, 9]


def test_bilinear_fill_equal_to_the_image_keeps_it_constant():
    # Paddle blends img * mask + (1 - mask) * fill, darkening the border of a tensor
    # even when fill equals the image; the fill read outside keeps it constant
    value = np.float32(0.75)
    t = paddle.full([3, 6, 7], value)
    for out in (TF.rotate(t, 33.0, "bilinear", fill=float(value)),
                TF.affine(t, 10.0, [1, 1], 0.8, [5, 0], "bilinear", fill=float(value)),
                TF.perspective(t, [[0, 0], [6, 0], [6, 5], [0, 5]],
                               [[1, 1], [5, 0], [6, 4], [0, 5]], "bilinear", float(value))):
        np.testing.assert_allclose(out.numpy(), value, rtol=1e-6)
    a = np.full((6, 7, 3), 90, np.uint8)
    np.testing.assert_array_equal(TF.rotate(a, 33.0, "bilinear", fill=90), a)


def test_an_int_fill_fills_every_channel_of_an_array():
    # Paddle's OpenCV path gives an int fill to the first channel only
    out = TF.rotate(np.zeros((4, 4, 3), np.uint8) + 1, 45.0, fill=9)
    assert out[0, 0].tolist() == [9, 9, 9]
    gray = TF.rotate(np.ones((4, 6), np.float32), 90.0, fill=(7, 8, 9))
    assert gray.shape == (4, 6) and gray[0, 0] == 7


# ---------------------------------------------------------------- affine


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_affine_matches_reference_for_both_grids(mode):
    img = RNG.normal(size=(6, 7, 3)).astype(np.float32)
    height, width = img.shape[:2]
    angle, translate, scale, shear = 25.0, (1.0, -2.0), 0.9, 12.0
    forward = _affine_forward(angle, scale, shear)
    for form, grid, center in ((img, "array", None), (chw(img), "tensor", None),
                               (img, "array", (2.0, 4.0)), (chw(img), "tensor", (2.0, 4.0))):
        c = np.array((width / 2, height / 2) if center is None else center)
        got = TF.affine(form, angle, translate, scale, shear, mode, 0.25, center)
        got = got.numpy().transpose(1, 2, 0) if grid == "tensor" else got
        expected = reference_warp(img.astype(float), about(c, forward, c + translate),
                                  (height, width), mode, 0.25, grid)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=f"{grid} {center}")


def test_affine_is_rotate_the_other_way_and_translates_as_paddle():
    img = RNG.integers(0, 256, (5, 6, 3)).astype(np.uint8)
    for form in (img, chw(img.astype(np.float32))):
        left = TF.affine(form, -40.0, [0, 0], 1.0, [0, 0], "bilinear")
        right = TF.rotate(form, 40.0, "bilinear")
        np.testing.assert_allclose(np.asarray(getattr(left, "numpy", lambda: left)()),
                                   np.asarray(getattr(right, "numpy", lambda: right)()),
                                   atol=1e-3)
    # a pure move: Paddle's array path gives the same (its only case free of its
    # overwritten translation)
    moved = TF.affine(img, 0, [2, -1], 1.0, [0, 0], fill=(1, 2, 3))
    np.testing.assert_array_equal(moved[:4, 2:], img[1:, :4])
    assert moved[4, 0].tolist() == [1, 2, 3]


def test_affine_center_of_a_tensor_is_x_then_y():
    # the pixel at the centre of a rotation stays (Paddle swaps width and height of
    # a tensor's centre, moving it in a non-square image)
    img = np.arange(24, dtype=np.float32).reshape(4, 6, 1)
    out = TF.affine(chw(img), 90.0, [0, 0], 1.0, [0, 0], center=(4.5, 1.5)).numpy()
    assert out[0, 1, 4] == img[1, 4, 0]


# ---------------------------------------------------------------- perspective


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_perspective_matches_reference_for_both_grids(mode):
    img = RNG.normal(size=(7, 8, 2)).astype(np.float32)
    sp = [[0, 0], [7, 0], [7, 6], [0, 6]]
    ep = [[2, 0], [7, 2], [7, 4], [2, 6]]   # no pixel half-way between two sources
    to_source = homography_source(sp, ep)
    np.testing.assert_allclose(TF.perspective(img, sp, ep, mode, -1.0),
                               reference_warp(img.astype(float), to_source, (7, 8), mode,
                                              -1.0, "array"), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        TF.perspective(chw(img), sp, ep, mode, -1.0).numpy().transpose(1, 2, 0),
        reference_warp(img.astype(float), to_source, (7, 8), mode, -1.0, "tensor"),
        rtol=1e-4, atol=1e-4)


def test_perspective_onto_itself_is_the_identity():
    img = RNG.integers(0, 256, (5, 6, 3)).astype(np.uint8)
    corners = [[0, 0], [5, 0], [5, 4], [0, 4]]
    np.testing.assert_array_equal(TF.perspective(img, corners, corners), img)
    t = chw(img.astype(np.float32))
    np.testing.assert_allclose(TF.perspective(t, corners, corners, "bilinear").numpy(),
                               t.numpy(), atol=1e-4)


# ---------------------------------------------------------------- errors


def test_errors_name_the_function_and_the_input():
    img = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(NotImplementedError, match="rotate: interpolation 'bicubic'"):
        TF.rotate(img, 10, "bicubic")
    with pytest.raises(ValueError, match="affine: interpolation must be one of"):
        TF.affine(img, 10, [0, 0], 1.0, 0, "area")
    with pytest.raises(InputError, match="affine: scale must be a positive"):
        TF.affine(img, 10, [0, 0], 0.0, 0)
    with pytest.raises(InputError, match="fill must be a number or give a value for each"):
        TF.rotate(img, 10, fill=(1, 2))
    with pytest.raises(DTypeError, match="rotate: a tensor image must be float32"):
        TF.rotate(paddle.to_tensor(img.transpose(2, 0, 1)), 10)
    with pytest.raises(InputError, match="perspective: startpoints and endpoints"):
        TF.perspective(img, [[0, 0]], [[1, 1]])


# ---------------------------------------------------------------- random transforms


def test_random_transforms_draw_within_their_ranges():
    img = RNG.integers(0, 256, (6, 7, 3)).astype(np.uint8)
    np.testing.assert_array_equal(T.RandomRotation((30, 30), fill=5)(img),
                                  TF.rotate(img, 30.0, fill=5))
    np.testing.assert_array_equal(
        T.RandomAffine((10, 10), translate=(0, 0), scale=(2, 2), shear=(5, 5, 3, 3))(img),
        TF.affine(img, 10.0, (0, 0), 2.0, (5.0, 3.0)))
    assert T.RandomPerspective(prob=0.0)(img) is img
    # no distortion: every corner stays, the warp is the identity
    np.testing.assert_array_equal(T.RandomPerspective(1.0, 0.0)(img), img)
    start, end = T.RandomPerspective().get_params(40, 20, 0.5)
    assert start == [[0, 0], [39, 0], [39, 19], [0, 19]]
    for (x, y), (sx, sy) in zip(end, start):
        assert abs(x - sx) <= 10 and abs(y - sy) <= 5


def test_random_transforms_follow_paddle_seed_and_pass_labels():
    img = RNG.integers(0, 256, (6, 7, 3)).astype(np.uint8)
    transform = T.Compose([T.RandomRotation(45), T.RandomAffine(20, (0.2, 0.2), (0.8, 1.2), 10),
                           T.RandomPerspective(0.5)])
    paddle.seed(11)
    first = transform((img, 3))
    paddle.seed(11)
    second = transform((img, 3))
    assert first[1] == 3
    np.testing.assert_array_equal(first[0], second[0])


def test_random_transform_arguments_are_checked():
    with pytest.raises(InputError, match="RandomRotation: degrees: a single number"):
        T.RandomRotation(-5)
    with pytest.raises(InputError, match="RandomAffine: translate must be two fractions"):
        T.RandomAffine(0, translate=(0.5, 1.5))
    with pytest.raises(TypeError, match="RandomAffine: shear must be"):
        T.RandomAffine(0, shear=(1, 2, 3))
    with pytest.raises(InputError, match="RandomPerspective: prob and distortion_scale"):
        T.RandomPerspective(distortion_scale=2)


def test_paddles_names_are_exported():
    for name in ("RandomAffine", "RandomPerspective", "RandomRotation", "affine",
                 "perspective", "rotate"):
        assert hasattr(T, name) and name in T.__all__
    for name in ("affine", "perspective", "rotate"):
        assert getattr(TF, name) is getattr(T, name)
