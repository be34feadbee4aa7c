"""Parity fixes in resampling and 1-D convolution: channels-last pair padding of the
1-D convolutions and lp_pool1d, interpolate's copy when no size changes, nearest's
float32 source cells, antialiased bilinear and bicubic resizing, the reflection
gradient at grid_sample's ends, and 5-D grid_sample. Each expected value comes from
the rule stated in its test, computed with NumPy."""
import numpy as np
import pytest

import irflow
from irflow.errors import ShapeError
from irflow.nn import functional as F

from .gradcheck import check_grads

RNG = np.random.default_rng(0)


def t(a, stop_gradient=True):
    return irflow.to_tensor(np.asarray(a), stop_gradient=stop_gradient)


# ---------------------------------------------------------------- 1-D pair padding

def test_conv1d_nlc_pair_padding_names_the_length_axis_second():
    """Padding as one [low, high] pair per axis of an [N, L, C] input takes L's pair
    from position 1: the same as [low, high] on the NCL layout."""
    x = RNG.standard_normal((2, 11, 4)).astype(np.float32)
    w = RNG.standard_normal((6, 4, 3)).astype(np.float32)
    pairs = F.conv1d(t(x), t(w), padding=[[0, 0], [1, 2], [0, 0]], data_format="NLC")
    flat = F.conv1d(t(x.transpose(0, 2, 1)), t(w), padding=[1, 2])
    assert pairs.shape == [2, 12, 6]
    np.testing.assert_allclose(pairs.numpy(), flat.numpy().transpose(0, 2, 1), rtol=1e-5,
                               atol=1e-5)


def test_conv1d_transpose_nlc_pair_padding():
    x = RNG.standard_normal((2, 7, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3)).astype(np.float32)
    pairs = F.conv1d_transpose(t(x), t(w), stride=2, padding=[[0, 0], [1, 2], [0, 0]],
                               data_format="NLC")
    flat = F.conv1d_transpose(t(x.transpose(0, 2, 1)), t(w), stride=2, padding=[1, 2])
    assert pairs.shape == [2, 12, 3]   # (7 - 1) * 2 - 1 - 2 + 3
    np.testing.assert_allclose(pairs.numpy(), flat.numpy().transpose(0, 2, 1), rtol=1e-5,
                               atol=1e-5)


def test_lp_pool1d_nlc_pair_padding():
    x = np.abs(RNG.standard_normal((2, 9, 3))).astype(np.float32) + 0.1
    pairs = F.lp_pool1d(t(x), 2, 3, 2, [[0, 0], [1, 2], [0, 0]], data_format="NLC")
    flat = F.lp_pool1d(t(x), 2, 3, 2, [1, 2], data_format="NLC")
    np.testing.assert_allclose(pairs.numpy(), flat.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- interpolate

@pytest.mark.parametrize("mode, shape, layout", [
    ("nearest", (1, 2, 3, 5), None), ("bilinear", (1, 2, 3, 5), None),
    ("bicubic", (1, 2, 3, 5), "NHWC"), ("linear", (1, 2, 5), None),
    ("trilinear", (1, 2, 3, 4, 5), None), ("nearest", (1, 2, 3, 4, 5), "NDHWC")])
def test_interpolate_copies_x_when_no_size_changes(mode, shape, layout):
    """A scale factor of 1.1 leaves sizes 3, 4 and 5 as they are (floor(n * 1.1) = n):
    Paddle's kernels then copy x (and its gradient) rather than resample at 1 / 1.1."""
    x = RNG.standard_normal(shape).astype(np.float32)
    xt = t(x, stop_gradient=False)
    out = F.interpolate(xt, scale_factor=1.1, mode=mode, data_format=layout)
    np.testing.assert_array_equal(out.numpy(), x)
    cotangent = RNG.standard_normal(shape).astype(np.float32)
    (out * t(cotangent)).sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), cotangent)


def test_interpolate_copies_only_when_every_size_is_unchanged():
    """With one size changed, the unchanged axis still samples at 1 / scale_factor:
    nearest's row k reads row floor(k / 1.1) of 3, so rows 0, 0, 1; with none
    changed, the rows are x's own."""
    x = np.arange(15, dtype=np.float32).reshape(1, 1, 3, 5)
    out = F.interpolate(t(x), scale_factor=[1.1, 2], mode="nearest").numpy()
    np.testing.assert_array_equal(out[0, 0, :, 0], x[0, 0, [0, 0, 1], 0])
    same = F.interpolate(t(x), scale_factor=[1.1, 1.1], mode="nearest").numpy()
    np.testing.assert_array_equal(same[0, 0, :, 0], x[0, 0, [0, 1, 2], 0])


def test_nearest_source_cells_are_computed_in_float32():
    """Paddle's nearest kernel reads cell int(float32(1 / scale) * k) in float32
    arithmetic. For 100 cells by 1.3, output 39 gives float32 30.000002 (cell 30),
    where float64 gives 29.99999... (cell 29)."""
    n, scale = 100, 1.3
    x = np.arange(n, dtype=np.float32).reshape(1, 1, 1, n)
    out = F.interpolate(t(x), scale_factor=[1, scale], mode="nearest").numpy().ravel()
    k = np.arange(int(n * scale), dtype=np.float32)
    cells = np.minimum((k * np.float32(1 / scale)).astype(np.int64), n - 1)
    assert cells[39] == 30 and int(np.floor(39 * (1 / scale))) == 29
    np.testing.assert_array_equal(out, cells.astype(np.float32))


def _triangle(d):
    return np.maximum(1 - np.abs(d), 0)


def _keys_half(d):
    d, a = np.abs(d), -0.5
    return np.where(d < 1, ((a + 2) * d - (a + 3)) * d * d + 1,
                    np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0))


def antialias_matrix(n_in, n_out, mode, align_corners=False, scale=None):
    """Pillow's (and PyTorch's) antialiased resampling along one axis as an [out, in]
    matrix: output i is centred at ratio * (i + 0.5); the filter (triangle, or Keys'
    cubic with a = -0.5), widened by the ratio when it exceeds 1, weighs the cells
    floor(centre - support + 0.5) up to floor(centre + support + 0.5), normalized."""
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = scale if scale is not None else n_in / n_out
    kernel, support = {"bilinear": (_triangle, 1.0), "bicubic": (_keys_half, 2.0)}[mode]
    stretch = max(ratio, 1.0)
    matrix = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = ratio * (i + 0.5)
        low = max(int(centre - support * stretch + 0.5), 0)
        high = min(int(centre + support * stretch + 0.5), n_in)
        row = kernel((np.arange(low, high) - centre + 0.5) / stretch)
        matrix[i, low:high] = row / row.sum()
    return matrix


def test_antialias_bilinear_halving_by_hand():
    """4 cells to 2: ratio 2, the triangle widened to 2 cells each side; output 0 is
    centred at 1 and weighs cells 0, 1, 2 by 0.75, 0.75, 0.25 (over 1.75), output 1
    cells 1, 2, 3 by 0.25, 0.75, 0.75."""
    x = np.array([0, 1, 2, 3], np.float32).reshape(1, 1, 1, 4)
    out = F.interpolate(t(x), size=[1, 2], mode="bilinear", antialias=True).numpy().ravel()
    np.testing.assert_allclose(out, [(0.75 + 0.5) / 1.75, (0.25 + 1.5 + 2.25) / 1.75],
                               rtol=1e-6)
    plain = F.interpolate(t(x), size=[1, 2], mode="bilinear").numpy().ravel()
    np.testing.assert_allclose(plain, [0.5, 2.5])   # no antialias: cells 0.5 and 2.5


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("options, out_hw, scales", [
    (dict(size=[4, 5]), (4, 5), (None, None)),
    (dict(scale_factor=[0.5, 1.7]), (4, 18), (2.0, 1 / 1.7)),
    (dict(scale_factor=0.37), (3, 4), (1 / 0.37, 1 / 0.37)),
    (dict(size=[9, 4]), (9, 4), (None, None))])
def test_antialias_matches_separable_rule(mode, align_corners, options, out_hw, scales):
    x = RNG.standard_normal((2, 3, 9, 11)).astype(np.float32)
    xt = t(x, stop_gradient=False)
    out = F.interpolate(xt, mode=mode, antialias=True, align_corners=align_corners,
                        **options)
    rows = antialias_matrix(9, out_hw[0], mode, align_corners, scales[0])
    cols = antialias_matrix(11, out_hw[1], mode, align_corners, scales[1])
    expected = np.einsum("ij,ncjw,kw->ncik", rows, x, cols)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    out.sum().backward()   # a linear map: the gradient of the sum is W^T 1 per axis
    grad = np.outer(rows.sum(0), cols.sum(0))
    np.testing.assert_allclose(xt.grad.numpy(), np.broadcast_to(grad, x.shape), rtol=1e-5,
                               atol=1e-5)


def test_antialias_channels_last():
    x = RNG.standard_normal((2, 9, 11, 3)).astype(np.float32)
    out = F.interpolate(t(x), size=[4, 5], mode="bicubic", antialias=True,
                        data_format="NHWC")
    expected = np.einsum("ij,njwc,kw->nikc", antialias_matrix(9, 4, "bicubic"), x,
                         antialias_matrix(11, 5, "bicubic"))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "area", "linear"])
def test_antialias_takes_only_bilinear_and_bicubic(mode):
    x = t(np.ones((1, 1, 4) if mode == "linear" else (1, 1, 4, 4), np.float32))
    with pytest.raises(ValueError, match="antialias"):
        F.interpolate(x, size=[2] if mode == "linear" else [2, 2], mode=mode, antialias=True)


# ---------------------------------------------------------------- grid_sample

def test_grid_sample_reflection_gradient_at_the_ends():
    """Paddle folds a reflected coordinate with the derivative +1 at both ends of the
    axis (align_corners: pixel 0 at x = -1, pixel W - 1 at x = 1). Bilinear's
    derivative there is the forward difference, the cell past the end reading 0; a
    normalized step is (W - 1) / 2 pixels."""
    row = np.array([0, 1, 4, 9, 16], np.float32)
    x = np.stack([row, row])[None, None]   # [1, 1, 2, 5]
    grid = t(np.array([[[[-1.0, -1.0], [1.0, -1.0]]]], np.float32), stop_gradient=False)
    out = F.grid_sample(t(x), grid, padding_mode="reflection", align_corners=True)
    np.testing.assert_allclose(out.numpy().ravel(), [0, 16])
    out.sum().backward()
    half_width = (5 - 1) / 2
    np.testing.assert_allclose(grid.grad.numpy()[0, 0, :, 0],
                               [(row[1] - row[0]) * half_width, (0 - row[4]) * half_width])


def trilinear_reference(x, grid, align_corners):
    """Trilinear sampling of x [N, C, D, H, W] at grid [N, ..., 3] ((x, y, z) order,
    zeros outside), looping over the 8 corners in float64."""
    n, c, *sizes = x.shape
    coords = []
    for axis, size in enumerate(sizes):
        g = grid[..., 2 - axis].astype(np.float64)
        coords.append((g + 1) * (size - 1) / 2 if align_corners else ((g + 1) * size - 1) / 2)
    lows = [np.floor(p) for p in coords]
    out = np.zeros((n, c, *grid.shape[1:-1]))
    for corner in np.ndindex(2, 2, 2):
        weight = np.ones(grid.shape[:-1])
        idx, inside = [], np.ones(grid.shape[:-1], bool)
        for p, low, step, size in zip(coords, lows, corner, sizes):
            weight = weight * ((p - low) if step else (1 - (p - low)))
            cell = (low + step).astype(np.int64)
            inside &= (cell >= 0) & (cell < size)
            idx.append(np.clip(cell, 0, size - 1))
        for b in range(n):
            values = x[b][:, idx[0][b], idx[1][b], idx[2][b]]
            out[b] += values * (weight[b] * inside[b])
    return out


@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_5d_trilinear(align_corners):
    x = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    grid = RNG.uniform(-1.3, 1.3, (2, 3, 4, 5, 3)).astype(np.float32)
    out = F.grid_sample(t(x), t(grid), align_corners=align_corners)
    assert out.shape == [2, 3, 3, 4, 5]
    np.testing.assert_allclose(out.numpy(), trilinear_reference(x, grid, align_corners),
                               rtol=1e-5, atol=1e-5)
    check_grads(lambda a, g: F.grid_sample(a, g, align_corners=align_corners),
                x[:1, :2], grid[:1, :2], rtol=1e-4, atol=1e-6)


def test_grid_sample_5d_nearest_reads_the_rounded_cell():
    """Grid (x, y, z) = (1, -1, 0) with align_corners is cell (W - 1, 0, (D - 1) / 2)
    = (5, 0, 2) of a 5 x 4 x 6 (D, H, W) volume."""
    x = RNG.standard_normal((1, 2, 5, 4, 6)).astype(np.float32)
    grid = np.array([1.0, -1.0, 0.0], np.float32).reshape(1, 1, 1, 1, 3)
    out = F.grid_sample(t(x), t(grid), mode="nearest")
    np.testing.assert_array_equal(out.numpy().ravel(), x[0, :, 2, 0, 5])


def test_grid_sample_rejects_a_mismatched_grid():
    with pytest.raises(ShapeError, match="grid"):
        F.grid_sample(t(np.ones((1, 1, 2, 2, 2), np.float32)),
                      t(np.zeros((1, 1, 1, 2), np.float32)))
