"""paddle.histogram / histogram_bin_edges, paddle.linalg.cov / corrcoef and
paddle.linalg.lu / lu_unpack: values against NumPy implementations of Paddle's
documented rules, gradients against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, InputError, ShapeError
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(13)


def _t(a, dtype=None):
    return paddle.to_tensor(np.asarray(a), dtype=dtype)


# ---------------------------------------------------------------- histogram

def _histogram_rule(x, bins, lo, hi, weight=None, density=False):
    """Paddle's CPU kernel: bin = trunc((x - lo) * bins / (hi - lo)) in x's dtype, x == hi
    in the last bin, elements outside [lo, hi] (and NaN) dropped, weights summed in
    float32, density = counts * (bins / (hi - lo) / total) in float32."""
    dtype = x.dtype.type
    lo, hi = dtype(lo), dtype(hi)
    out = np.zeros(bins, np.float32 if weight is not None or density else np.int64)
    for k, v in enumerate(x.ravel()):
        if not lo <= v <= hi:
            continue
        if x.dtype.kind == "i":
            index = int(v - lo) * bins // int(hi - lo)
        else:
            index = int((v - lo) * dtype(bins) / (hi - lo))
        index = min(index, bins - 1)
        add = 1 if weight is None else np.float32(weight.ravel()[k])
        out[index] = out[index] + add
    if density:
        f32 = np.float32
        out = out * (f32(bins) / f32(hi - lo) / out.sum(dtype=np.float32))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_histogram_matches_the_kernel_rule(dtype):
    x = RNG.standard_normal(200) * 5
    if dtype.startswith("int"):
        x = np.round(x)
    x = x.astype(dtype)
    for bins, lo, hi in [(7, -4, 6), (1, -1, 1), (13, -8.5, 8.5)]:
        lo_k, hi_k = (int(lo), int(hi)) if dtype.startswith("int") else (lo, hi)
        got = paddle.histogram(_t(x), bins=bins, min=lo, max=hi)
        assert got.dtype == paddle.int64
        np.testing.assert_array_equal(got.numpy(), _histogram_rule(x, bins, lo_k, hi_k))


def test_histogram_float32_arithmetic_decides_the_bin():
    # in float32, (0.2 - 0.1) * 10 / (1.1 - 0.1) is 1 (bin 1), as Paddle computes it;
    # the same float32 values in float64 arithmetic give 0.99999... (bin 0)
    x = np.array([0.2, 0.4, 0.5, 0.16], np.float32)
    got = paddle.histogram(_t(x), bins=10, min=0.1, max=1.1).numpy()
    np.testing.assert_array_equal(got, _histogram_rule(x, 10, 0.1, 1.1))
    np.testing.assert_array_equal(got, [1, 1, 0, 1, 1, 0, 0, 0, 0, 0])
    at_max = paddle.histogram(_t([0.1, 0.7]), bins=10, min=0.1, max=0.7).numpy()
    assert at_max[0] == 1 and at_max[9] == 1  # max itself goes into the last bin


def test_histogram_default_range_is_the_data_and_a_single_value_widens_by_one():
    np.testing.assert_array_equal(paddle.histogram(_t([1., 2., 1., 5.]), bins=4).numpy(),
                                  _histogram_rule(np.float32([1, 2, 1, 5]), 4, 1, 5))
    # [3, 3] is the range [2, 4]: 3 is in bin 2 of 4
    np.testing.assert_array_equal(paddle.histogram(_t([3., 3.]), bins=4).numpy(), [0, 0, 2, 0])
    # min == max (not both 0) also means the data's range, as Paddle's kernel does
    np.testing.assert_array_equal(
        paddle.histogram(_t([1., 2., 7.]), bins=2, min=2, max=2).numpy(), [2, 1])


def test_histogram_of_ints_truncates_the_bounds_and_divides_in_integers():
    x = np.arange(5, dtype=np.int64)  # min 0.7 -> 0, max 3.9 -> 3: 4 is outside
    np.testing.assert_array_equal(
        paddle.histogram(_t(x), bins=4, min=0.7, max=3.9).numpy(), [1, 1, 1, 1])
    x = np.array([-3, -2, -1, 0, 1], np.int32)  # min -2.5 -> -2 (toward zero)
    np.testing.assert_array_equal(
        paddle.histogram(_t(x), bins=3, min=-2.5, max=1).numpy(), [1, 1, 2])


def test_histogram_drops_nan_and_out_of_range_values():
    x = np.array([1., np.nan, 5., np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(paddle.histogram(_t(x), bins=2, min=0, max=5).numpy(), [1, 1])
    # NaN is skipped when the range comes from the data, wherever it is
    np.testing.assert_array_equal(
        paddle.histogram(_t([np.nan, 1., 3.]), bins=2).numpy(), [1, 1])
    with pytest.raises(InputError, match="finite"):
        paddle.histogram(_t([1., np.inf]), bins=2)


def test_histogram_keeps_float64_bounds_in_float64():
    # Paddle rounds min/max through float32 (0.1 -> 0.10000000149), dropping 0.1 and 0.7
    x = np.array([0.1, 0.4, 0.7])
    np.testing.assert_array_equal(
        paddle.histogram(_t(x), bins=2, min=0.1, max=0.7).numpy(), [1, 2])


def test_histogram_weights_and_density_are_float32():
    x = RNG.standard_normal(60).astype(np.float32)
    w = RNG.random(60).astype(np.float32)
    got = paddle.histogram(_t(x), bins=6, min=-1.5, max=2, weight=_t(w))
    assert got.dtype == paddle.float32
    np.testing.assert_allclose(got.numpy(), _histogram_rule(x, 6, -1.5, 2, w), rtol=1e-6)
    for weight in (None, w):
        got = paddle.histogram(_t(x), bins=6, min=-1.5, max=2, density=True,
                               weight=None if weight is None else _t(weight))
        want = _histogram_rule(x, 6, -1.5, 2, weight, density=True)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        # integrates to 1 over the bins
        np.testing.assert_allclose(got.numpy().sum() * 3.5 / 6, 1, rtol=1e-5)
    ints = paddle.histogram(_t([1, 2, 1, 5], "int64"), bins=4, weight=_t([1, 2, 3, 4], "int64"))
    assert ints.dtype == paddle.float32
    np.testing.assert_array_equal(ints.numpy(), [4, 2, 0, 4])


def test_histogram_of_an_empty_tensor_is_zeros_and_2d_weights_work():
    got = paddle.histogram(_t(np.zeros(0, np.float32)), bins=3)
    assert got.dtype == paddle.int64 and got.numpy().tolist() == [0, 0, 0]
    got = paddle.histogram(_t([[1., 2.], [3., 4.]]), bins=2, weight=_t([[1., 2.], [3., 4.]]))
    np.testing.assert_array_equal(got.numpy(), [3, 7])
    np.testing.assert_array_equal(_t([1., 2., 1., 5.]).histogram(bins=4).numpy(), [2, 1, 0, 1])


def test_histogram_rejects_what_paddle_rejects():
    with pytest.raises(InputError, match="bins"):
        paddle.histogram(_t([1., 2.]), bins=0)
    with pytest.raises(InputError, match="max must be at least min"):
        paddle.histogram(_t([1., 2.]), bins=2, min=3, max=1)
    with pytest.raises(DTypeError, match="weight"):
        paddle.histogram(_t([1., 2.]), bins=2, weight=_t([1, 2], "int32"))
    with pytest.raises(ShapeError, match="weight"):
        paddle.histogram(_t([1., 2., 3.]), bins=2, weight=_t([1., 2.]))
    with pytest.raises(DTypeError, match="input"):
        paddle.histogram(_t([True, False]), bins=2)


def test_histogram_bin_edges_follow_paddles_linspace_rule():
    got = paddle.histogram_bin_edges(_t([1., 2., 1., 5.]), bins=4)
    assert got.dtype == paddle.float32
    np.testing.assert_array_equal(got.numpy(), [1, 2, 3, 4, 5])
    got = paddle.histogram_bin_edges(_t([1, 7], "int64"), bins=3)
    assert got.dtype == paddle.float32
    np.testing.assert_array_equal(got.numpy(), [1, 3, 5, 7])
    # a single value v spans v - 0.5 .. v + 0.5 here (histogram itself widens by 1)
    np.testing.assert_array_equal(paddle.histogram_bin_edges(_t([3., 3.]), bins=2).numpy(),
                                  [2.5, 3, 3.5])
    np.testing.assert_array_equal(
        paddle.histogram_bin_edges(_t([1., 7.]), bins=2, min=2, max=2).numpy(), [1.5, 2, 2.5])
    np.testing.assert_allclose(_t([0.]).histogram_bin_edges(bins=4, min=0, max=3).numpy(),
                               [0, 0.75, 1.5, 2.25, 3])
    with pytest.raises(InputError, match="max must be at least min"):
        paddle.histogram_bin_edges(_t([1., 7.]), bins=3, min=2)


# ---------------------------------------------------------------- cov and corrcoef

@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("ddof", [True, False])
def test_cov_matches_numpy(rowvar, ddof):
    x = RNG.standard_normal((3, 6))
    n = 6 if rowvar else 3
    fw = RNG.integers(0, 4, n)
    fw[0] = 2
    aw = RNG.random(n)
    for f, a in [(None, None), (fw, None), (None, aw), (fw, aw)]:
        got = paddle.linalg.cov(_t(x), rowvar=rowvar, ddof=ddof,
                                fweights=None if f is None else _t(f),
                                aweights=None if a is None else _t(a))
        want = np.cov(x, rowvar=rowvar, ddof=int(ddof), fweights=f, aweights=a)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_cov_shapes_and_the_tensor_method():
    v = RNG.standard_normal(5)
    got = paddle.linalg.cov(_t(v))
    assert got.shape == [] and np.isclose(float(got), np.var(v, ddof=1))
    x = RNG.standard_normal((1, 4))  # columns are variables with rowvar=False, as documented
    got = paddle.linalg.cov(_t(x), rowvar=False, ddof=False)
    assert got.shape == [4, 4]
    np.testing.assert_allclose(got.numpy(), np.cov(x, rowvar=False, ddof=0))
    x32 = RNG.standard_normal((2, 5)).astype(np.float32)
    got = _t(x32).cov()
    assert got.dtype == paddle.float32
    np.testing.assert_allclose(got.numpy(), np.cov(x32), rtol=1e-5)


def test_cov_rejects_what_paddle_rejects():
    x = _t(RNG.standard_normal((2, 3)))
    with pytest.raises(InputError, match="whole numbers"):
        paddle.linalg.cov(x, fweights=_t([1.5, 1., 1.]))
    with pytest.raises(InputError, match="non-negative"):
        paddle.linalg.cov(x, aweights=_t([-1., 1., 1.]))
    with pytest.raises(InputError, match="sum to zero"):
        paddle.linalg.cov(x, aweights=_t([0., 0., 0.]))
    with pytest.raises(ShapeError, match="one weight per observation"):
        paddle.linalg.cov(x, fweights=_t([1, 1], "int64"))
    with pytest.raises(DTypeError, match="float32 or float64"):
        paddle.linalg.cov(_t([[1, 2], [3, 4]], "int64"))
    with pytest.raises(ShapeError, match="1-D or 2-D"):
        paddle.linalg.corrcoef(_t(np.ones((2, 2, 2))))


def test_cov_gradient():
    fw, aw = _t([1, 3, 2, 1, 2], "int64"), _t(RNG.random(5) + 0.1)
    check_grads(lambda t: paddle.linalg.cov(t), RNG.standard_normal((3, 5)))
    check_grads(lambda t: paddle.linalg.cov(t, fweights=fw, aweights=aw),
                RNG.standard_normal((3, 5)))
    check_grads(lambda t, a: paddle.linalg.cov(t, rowvar=False, aweights=a),
                RNG.standard_normal((5, 2)), RNG.random(5) + 0.1)


def test_corrcoef_matches_numpy_and_differentiates():
    x = RNG.standard_normal((4, 7))
    np.testing.assert_allclose(paddle.linalg.corrcoef(_t(x)).numpy(), np.corrcoef(x),
                               rtol=1e-10)
    np.testing.assert_allclose(_t(x).corrcoef(rowvar=False).numpy(),
                               np.corrcoef(x, rowvar=False), rtol=1e-10)
    assert float(paddle.linalg.corrcoef(_t(x[0]))) == 1.0  # one variable: c / c
    check_grads(lambda t: paddle.linalg.corrcoef(t), x)


# ---------------------------------------------------------------- lu

def _getrf(a):
    """Partial pivoting as LAPACK's getrf: the first largest |value| of each column
    below the diagonal is swapped up; returns the packed LU, 1-based pivots and P."""
    a = np.array(a, np.float64)
    m, n = a.shape
    order = list(range(m))
    pivots = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        pivots.append(p + 1)
        a[[j, p]] = a[[p, j]]
        order[j], order[p] = order[p], order[j]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    perm = np.zeros((m, m))
    perm[order, np.arange(m)] = 1
    return a, np.array(pivots), perm


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)])
def test_lu_matches_getrf_and_unpacks_to_x(shape):
    x = RNG.standard_normal(shape)
    packed, pivots = paddle.linalg.lu(_t(x))
    assert pivots.dtype == paddle.int32 and pivots.shape == list(shape[:-2]) + [min(shape[-2:])]
    flat_x = x.reshape((-1,) + shape[-2:])
    want = [_getrf(a) for a in flat_x]
    np.testing.assert_allclose(packed.numpy().reshape(flat_x.shape),
                               np.stack([w[0] for w in want]), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(pivots.numpy().reshape(len(want), -1),
                                  np.stack([w[1] for w in want]))
    p, lower, upper = paddle.linalg.lu_unpack(packed, pivots)
    k = min(shape[-2:])
    assert p.shape == list(shape[:-1]) + [shape[-2]]
    assert lower.shape == list(shape[:-1]) + [k]
    assert upper.shape == list(shape[:-2]) + [k, shape[-1]]
    np.testing.assert_array_equal(p.numpy().reshape(-1, shape[-2], shape[-2]),
                                  np.stack([w[2] for w in want]))
    np.testing.assert_allclose((p @ lower @ upper).numpy(), x, rtol=1e-10, atol=1e-12)


def test_lu_infos_mark_the_first_zero_pivot():
    x = np.array([[[1., 2.], [2., 4.]], [[0., 0.], [0., 1.]], [[3., 1.], [1., 2.]]])
    packed, pivots, infos = paddle.linalg.lu(_t(x), get_infos=True)
    assert infos.dtype == paddle.int32
    np.testing.assert_array_equal(infos.numpy(), [2, 1, 0])
    np.testing.assert_array_equal(pivots.numpy(), [[2, 2], [1, 2], [1, 2]])


def test_lu_options_and_errors():
    x = _t(RNG.standard_normal((3, 3)))
    with pytest.raises(InputError, match="pivot=False"):
        paddle.linalg.lu(x, pivot=False)
    with pytest.raises(DTypeError, match="float32 or float64"):
        paddle.linalg.lu(_t(np.eye(2, dtype=np.int64)))
    packed, pivots = x.lu()
    p, lower, upper = paddle.linalg.lu_unpack(packed, pivots, unpack_ludata=False)
    assert lower is None and upper is None and p.shape == [3, 3]
    p, lower, upper = packed.lu_unpack(pivots, unpack_pivots=False)
    assert p is None and lower.shape == [3, 3]


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)])
def test_lu_gradient(shape):
    check_grads(lambda t: paddle.linalg.lu(t)[0], RNG.standard_normal(shape))

    def unpacked(t):
        p, lower, upper = paddle.linalg.lu_unpack(*paddle.linalg.lu(t))
        return lower.sum(-1) + upper.sum(-2)[..., :1]

    check_grads(unpacked, RNG.standard_normal(shape))
