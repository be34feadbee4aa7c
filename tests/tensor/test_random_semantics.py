"""Random APIs against Paddle 3.3.1's documented semantics: ranges and defaults,
the `seed` argument, tensor parameters of `normal` (and their gradients), randint's
argument rules, bfloat16 draws, the generator state, and the initializers
TruncatedNormal (far from its mean), Orthogonal, Dirac and Bilinear. Statistical
checks are seeded and use large samples with tolerances of many standard errors."""
import math

import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.errors import OutOfRangeError
from irflow.nn import initializer as I
from irflow.tensor import random as R


@pytest.fixture(autouse=True)
def _seeded():
    paddle.seed(2024)


# ---- uniform -------------------------------------------------------------------------

def test_uniform_defaults_to_the_unit_interval():
    """Paddle 3's paddle.uniform has min=0, max=1 (its docs: "Default is 0")."""
    values = paddle.uniform([200000]).numpy()
    assert values.min() >= 0.0 and values.max() < 1.0
    assert abs(values.mean() - 0.5) < 0.01  # standard error 0.00065


def test_uniform_nonzero_seed_repeats_and_leaves_the_global_stream_alone():
    first = paddle.uniform([5], seed=7).numpy()
    paddle.seed(99)
    assert np.array_equal(paddle.uniform([5], seed=7).numpy(), first)
    assert not np.array_equal(paddle.uniform([5], seed=8).numpy(), first)
    paddle.seed(3)
    a = paddle.rand([4]).numpy()
    paddle.seed(3)
    paddle.uniform([5], seed=7)
    assert np.array_equal(paddle.rand([4]).numpy(), a)


def test_uniform_in_place_seed_repeats():
    a = paddle.zeros([6]).uniform_(-2.0, -1.0, seed=11).numpy()
    b = paddle.zeros([6]).uniform_(-2.0, -1.0, seed=11).numpy()
    assert np.array_equal(a, b) and a.min() >= -2.0 and a.max() < -1.0


def test_seeded_uniform_is_the_same_in_every_run_of_a_compiled_function():
    @paddle.jit.to_static
    def draw(x):
        return x + paddle.uniform([3], seed=5), x + paddle.rand([3])

    fixed_1, fresh_1 = draw(paddle.zeros([3]))
    fixed_2, fresh_2 = draw(paddle.zeros([3]))
    assert np.array_equal(fixed_1.numpy(), fixed_2.numpy())
    assert np.array_equal(fixed_1.numpy(), paddle.uniform([3], seed=5).numpy())
    assert not np.array_equal(fresh_1.numpy(), fresh_2.numpy())


# ---- normal with tensor parameters ---------------------------------------------------

def test_normal_tensor_mean_gives_shape_dtype_and_per_element_means():
    mean = paddle.to_tensor([[0.0] * 4, [100.0] * 4], dtype="float64")
    out = paddle.normal(mean, 2.0)
    assert out.dtype == paddle.float64 and list(out.shape) == [2, 4]
    big = paddle.normal(paddle.concat([paddle.zeros([100000]), paddle.full([100000], 5.0)]),
                        paddle.concat([paddle.ones([100000]), paddle.full([100000], 3.0)]))
    low, high = big.numpy()[:100000], big.numpy()[100000:]
    assert abs(low.mean()) < 0.03 and abs(low.std() - 1.0) < 0.02
    assert abs(high.mean() - 5.0) < 0.06 and abs(high.std() - 3.0) < 0.05


def test_normal_tensor_std_alone_sets_the_shape_and_shape_is_ignored():
    out = paddle.normal(1.0, paddle.full([3, 2], 0.5), shape=[7])
    assert list(out.shape) == [3, 2] and out.dtype == paddle.float32
    assert list(paddle.normal(paddle.zeros([2, 3]), 1.0, shape=[5]).shape) == [2, 3]


def test_normal_std_tensor_is_cast_and_reshaped_to_the_mean():
    out = paddle.normal(paddle.zeros([2, 3]), paddle.ones([6], dtype="float64"))
    assert list(out.shape) == [2, 3] and out.dtype == paddle.float32
    with pytest.raises(ValueError):
        paddle.normal(paddle.zeros([2]), paddle.ones([3]))


def test_normal_with_tensors_differentiates_as_mean_plus_std_times_z():
    mean = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    std = paddle.to_tensor([0.5, 1.0, 2.0], stop_gradient=False)
    out = paddle.normal(mean, std)
    out.sum().backward()
    z = (out.numpy() - mean.numpy()) / std.numpy()
    np.testing.assert_allclose(mean.grad.numpy(), np.ones(3))
    np.testing.assert_allclose(std.grad.numpy(), z, rtol=1e-5, atol=1e-6)


# ---- randint -------------------------------------------------------------------------

def test_randint_argument_rules():
    with pytest.raises(ValueError, match="greater than 0"):
        paddle.randint()
    with pytest.raises(ValueError, match="greater than 0"):
        paddle.randint(-3)
    with pytest.raises(ValueError, match="less than high"):
        paddle.randint(5, 5)
    with pytest.raises(TypeError, match="int32 or int64"):
        paddle.randint(0, 10, [3], dtype="float32")
    with pytest.raises(OutOfRangeError, match="2\\*\\*53"):
        paddle.randint(2 ** 53, 2 ** 53 + 4, [3])


# ---- bfloat16, generator state -------------------------------------------------------

def test_random_floats_in_bfloat16():
    u = paddle.rand([50000], dtype="bfloat16")
    z = paddle.randn([50000], dtype="bfloat16")
    assert u.dtype == paddle.bfloat16 and z.dtype == paddle.bfloat16
    u32, z32 = u.astype("float32").numpy(), z.astype("float32").numpy()
    assert u32.min() >= 0 and u32.max() <= 1 and abs(u32.mean() - 0.5) < 0.02
    assert abs(z32.mean()) < 0.03 and abs(z32.std() - 1.0) < 0.03
    x = paddle.zeros([4], dtype="bfloat16").normal_(3.0, 0.1)
    assert x.dtype == paddle.bfloat16


def test_like_draws_in_bfloat16():
    like = paddle.ones([40000], dtype="bfloat16")
    u, z = paddle.rand_like(like), paddle.randn_like(like)
    assert u.dtype == paddle.bfloat16 and z.dtype == paddle.bfloat16
    assert abs(u.astype("float32").numpy().mean() - 0.5) < 0.02
    assert abs(z.astype("float32").numpy().std() - 1.0) < 0.03


def test_rng_state_round_trip_repeats_the_draws():
    state = R.get_rng_state()
    first = [paddle.rand([3]).numpy(), paddle.randint(0, 100, [3]).numpy()]
    R.set_rng_state(state)
    again = [paddle.rand([3]).numpy(), paddle.randint(0, 100, [3]).numpy()]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


# ---- initializers --------------------------------------------------------------------

def _param(shape, init, dtype="float32"):
    return paddle.create_parameter(shape, dtype, default_initializer=init).numpy()


def _truncated_normal_moments(mean, std, a, b):
    """Mean and std of Normal(mean, std) restricted to [a, b] (the textbook formulas)."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = (pdf(alpha) - pdf(beta)) / z
    var = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


def test_truncated_normal_matches_its_moments_even_far_from_the_mean():
    """Normal(5, 1) in [-2, 2] (which Paddle draws; irflow's redrawing raised), with
    central intervals beside it."""
    for mean, std, a, b in [(5.0, 1.0, -2.0, 2.0), (0.0, 2.0, -2.0, 2.0), (0.0, 1.0, -1.0, 3.0)]:
        values = _param([400, 500], I.TruncatedNormal(mean, std, a, b)).astype(np.float64)
        want_mean, want_std = _truncated_normal_moments(mean, std, a, b)
        assert values.min() >= a and values.max() <= b
        assert abs(values.mean() - want_mean) < 0.01 * (b - a)
        assert abs(values.std() - want_std) < 0.02 * want_std


@pytest.mark.parametrize("shape", [[30, 50], [50, 30], [8, 4, 3, 3]])
def test_orthogonal_rows_or_columns_are_orthonormal_times_gain(shape):
    w = _param(shape, I.Orthogonal(gain=2.0)).reshape(shape[0], -1).astype(np.float64)
    gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)


def test_orthogonal_needs_two_dims():
    with pytest.raises(ValueError):
        _param([5], I.Orthogonal())


def test_dirac_makes_a_convolution_the_identity():
    x = paddle.randn([2, 3, 5, 5])
    w = paddle.to_tensor(_param([3, 3, 3, 3], I.Dirac()))
    np.testing.assert_array_equal(F.conv2d(x, w, padding=1).numpy(), x.numpy())


def test_dirac_groups_place_the_ones_per_group():
    w = _param([6, 2, 3], I.Dirac(groups=2))
    assert np.argwhere(w).tolist() == [[0, 0, 1], [1, 1, 1], [3, 0, 1], [4, 1, 1]]
    with pytest.raises(ValueError):
        _param([5, 2, 3], I.Dirac(groups=2))
    with pytest.raises(ValueError):
        _param([4, 4], I.Dirac())


def test_bilinear_kernel_is_the_outer_product_of_the_interpolation_taps():
    """k = 4: f = 2, c = 0.75, taps 1 - |x / 2 - 0.75| = [0.25, 0.75, 0.75, 0.25]."""
    w = _param([2, 3, 4, 4], I.Bilinear())
    taps = np.array([0.25, 0.75, 0.75, 0.25])
    for kernel in w.reshape(-1, 4, 4):
        np.testing.assert_allclose(kernel, np.outer(taps, taps))
    with pytest.raises(ValueError):
        _param([2, 3, 4, 3], I.Bilinear())


def test_uniform_initializer_rejects_low_above_high():
    with pytest.raises(ValueError, match="low <= high"):
        I.Uniform(2.0, 1.0)


def test_gumbel_softmax_of_float16_logits_has_no_nan_rows():
    """The noise is drawn in float32: a float16 uniform draw rounds up to 1.0 about
    once in 2048, which made the noise +inf and its whole row NaN."""
    paddle.seed(0)
    y = paddle.nn.functional.gumbel_softmax(paddle.zeros([64, 1000], "float16"))
    assert y.dtype == paddle.float16
    values = y.numpy().astype(np.float32)
    assert not np.isnan(values).any()
    np.testing.assert_allclose(values.sum(axis=1), 1.0, rtol=2e-2)
