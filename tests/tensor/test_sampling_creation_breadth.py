"""Paddle's sampling APIs (multinomial, bernoulli, poisson, binomial, standard_gamma,
log_normal, the *_like draws, the in-place fills), checked statistically against the
distributions' moments and for reproducibility under paddle.seed; and its creation
helpers (logspace, tril/triu_indices, vander, Tensor.new_*) and finfo/iinfo, checked
against NumPy."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import OutOfRangeError
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

N = 40000


def _moments(t):
    values = t.numpy().astype(np.float64)
    return values.mean(), values.var()


def _close_to(sample_mean, mean, var, n=N):
    """Within 5 standard errors of the mean."""
    assert abs(sample_mean - mean) <= 5 * np.sqrt(var / n) + 1e-12, (sample_mean, mean)


# ---- multinomial, bernoulli ------------------------------------------------------------

def test_multinomial_with_replacement_follows_the_weights():
    paddle.seed(0)
    weights = np.array([[1.0, 2.0, 0.0, 7.0], [1.0, 1.0, 1.0, 1.0]])
    out = paddle.multinomial(paddle.to_tensor(weights), 20000, replacement=True)
    assert out.dtype == paddle.int64 and out.shape == [2, 20000] and out.stop_gradient
    for row, w in zip(out.numpy(), weights):
        freq = np.bincount(row, minlength=4) / 20000
        np.testing.assert_allclose(freq, w / w.sum(), atol=0.015)
        assert freq[w == 0].sum() == 0


def test_multinomial_without_replacement_draws_in_sequence():
    """Distinct indices; the second one has the law of a second draw after removing
    the first: P(j) = sum_i p_i p_j / (1 - p_i)."""
    paddle.seed(1)
    p = np.array([0.1, 0.2, 0.0, 0.7])
    out = paddle.multinomial(paddle.to_tensor(np.tile(p, (20000, 1)), dtype="float32"), 2)
    first, second = out.numpy().T
    assert (first != second).all()
    np.testing.assert_allclose(np.bincount(first, minlength=4) / 20000, p, atol=0.015)
    want = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    np.testing.assert_allclose(np.bincount(second, minlength=4) / 20000, want, atol=0.015)
    one = paddle.multinomial(paddle.to_tensor([0.0, 3.0, 0.0]))
    assert one.shape == [1] and one.numpy().tolist() == [1]
    assert sorted(paddle.multinomial(paddle.to_tensor([1.0, 1.0, 1.0]), 3).numpy()) == [0, 1, 2]


def test_multinomial_argument_errors():
    p = paddle.to_tensor([0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="at most the number of non-zero weights"):
        paddle.multinomial(p, 3)
    with pytest.raises(OutOfRangeError, match="weights >= 0"):
        paddle.multinomial(paddle.to_tensor([-0.1, 1.0]))
    with pytest.raises(ValueError, match="positive sum"):
        paddle.multinomial(paddle.to_tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        paddle.multinomial(paddle.ones([2, 2, 2]))
    with pytest.raises(TypeError, match="float tensor"):
        paddle.multinomial(paddle.to_tensor([1, 2]))
    with pytest.raises(ValueError, match="num_samples must be > 0"):
        p.multinomial(0)


def test_bernoulli_and_bernoulli_():
    paddle.seed(2)
    probs = paddle.to_tensor(np.tile([0.0, 0.3, 1.0], (N, 1)), dtype="float64",
                             stop_gradient=False)
    out = paddle.bernoulli(probs)
    assert out.dtype == paddle.float64 and out.stop_gradient
    np.testing.assert_allclose(out.numpy().mean(0), [0.0, 0.3, 1.0], atol=0.01)
    assert set(np.unique(out.numpy())) <= {0.0, 1.0}
    assert paddle.bernoulli(paddle.ones([5]), p=0.0).numpy().sum() == 0
    with pytest.raises(OutOfRangeError, match=r"probabilities in \[0, 1\]"):
        paddle.bernoulli(paddle.to_tensor([1.5]))
    x = paddle.zeros([2, 3])
    assert x.bernoulli_(paddle.to_tensor([0.0, 1.0, 0.0])) is x
    np.testing.assert_array_equal(x.numpy(), [[0, 1, 0], [0, 1, 0]])
    assert abs(paddle.zeros([N]).bernoulli_(0.25).numpy().mean() - 0.25) < 0.01


# ---- poisson, binomial, standard_gamma ---------------------------------------------------

@pytest.mark.parametrize("rate", [0.0, 0.4, 4.0, 9.5, 10.0, 60.0, 5000.0])
def test_poisson_mean_and_variance_are_the_rate(rate):
    paddle.seed(3)
    out = paddle.poisson(paddle.full([N], rate))
    assert out.dtype == paddle.float32
    values = out.numpy()
    assert (values == np.round(values)).all() and (values >= 0).all()
    mean, var = _moments(out)
    _close_to(mean, rate, rate)
    assert abs(var - rate) <= 0.05 * rate + 0.01


def test_poisson_has_a_zero_gradient_and_rejects_negative_rates():
    """Paddle's poisson is differentiable with gradient zero (its result requires a
    gradient where the rate does)."""
    rate = paddle.to_tensor([2.0, 30.0], stop_gradient=False)
    out = paddle.poisson(rate)
    assert not out.stop_gradient
    (out * 3).sum().backward()
    np.testing.assert_array_equal(rate.grad.numpy(), [0.0, 0.0])
    with pytest.raises(OutOfRangeError, match="rates >= 0"):
        paddle.poisson(paddle.to_tensor([-1.0]))


@pytest.mark.parametrize("count,prob", [(5, 0.3), (30, 0.2), (200, 0.5), (1000, 0.93),
                                        (10**9, 0.5), (50, 0.0), (50, 1.0), (7, 0.99)])
def test_binomial_mean_and_variance(count, prob):
    paddle.seed(4)
    out = paddle.binomial(paddle.full([N], count, "int64"), paddle.full([N], prob))
    assert out.dtype == paddle.int64
    values = out.numpy()
    assert values.min() >= 0 and values.max() <= count
    mean, var = _moments(out)
    want_var = count * prob * (1 - prob)
    _close_to(mean, count * prob, want_var)
    assert abs(var - want_var) <= 0.05 * want_var + 1e-9


def test_binomial_broadcasts_and_checks_its_arguments():
    out = paddle.binomial(paddle.to_tensor([10.0]), paddle.to_tensor([0.0, 1.0], "float64"))
    assert out.dtype == paddle.int64 and out.numpy().tolist() == [0, 10]
    with pytest.raises(OutOfRangeError, match=r"prob in \[0, 1\]"):
        paddle.binomial(paddle.to_tensor([10]), paddle.to_tensor([1.5]))
    with pytest.raises(OutOfRangeError, match="count >= 0"):
        paddle.binomial(paddle.to_tensor([-1]), paddle.to_tensor([0.5]))


@pytest.mark.parametrize("shape", [0.1, 0.5, 1.0, 2.5, 50.0])
def test_standard_gamma_mean_and_variance_are_the_shape(shape):
    paddle.seed(5)
    out = paddle.standard_gamma(paddle.full([N], shape, "float64"))
    assert out.dtype == paddle.float64 and out.stop_gradient
    mean, var = _moments(out)
    _close_to(mean, shape, shape)
    assert abs(var - shape) <= 0.1 * shape


def test_standard_gamma_of_zero_is_the_smallest_normal_number():
    out = paddle.standard_gamma(paddle.to_tensor([0.0, 0.0]))
    np.testing.assert_array_equal(out.numpy(), np.finfo(np.float32).tiny)
    with pytest.raises(OutOfRangeError, match="shapes >= 0"):
        paddle.standard_gamma(paddle.to_tensor([-1.0]))


# ---- log-normal, in-place fills, *_like ------------------------------------------------

def test_log_normal_moments_and_shapes():
    paddle.seed(6)
    out = paddle.log_normal(0.5, 0.25, [N])
    assert out.dtype == paddle.float32 and out.shape == [N]
    logs = np.log(out.numpy().astype(np.float64))
    _close_to(logs.mean(), 0.5, 0.25 ** 2)
    assert abs(logs.std() - 0.25) < 0.01
    assert paddle.log_normal().shape == [1]
    per_element = paddle.log_normal(paddle.to_tensor([0.0, 1.0], "float64"), 1.0)
    assert per_element.dtype == paddle.float64 and per_element.shape == [2]


def test_log_normal_gradient_is_that_of_exp_mean_plus_std_z():
    def draw(mean, std):
        paddle.seed(7)  # the same z on every call
        return paddle.log_normal(mean, std)
    check_grads(draw, np.array([0.1, -0.4, 0.3]), np.array([0.5, 1.0, 0.2]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_fills_follow_their_distributions(dtype):
    paddle.seed(8)
    x = paddle.zeros([N], dtype)
    assert x.exponential_(2.0) is x and x.dtype == getattr(paddle, dtype)
    _close_to(x.numpy().mean(), 0.5, 0.25)
    assert (x.numpy() >= 0).all()
    x.geometric_(0.3)  # failures before the first success: mean (1 - p) / p
    values = x.numpy()
    assert (values == np.floor(values)).all() and values.min() == 0
    _close_to(values.mean(), 0.7 / 0.3, 0.7 / 0.3 ** 2)
    x.cauchy_(1.0, 2.0)  # quartiles at loc -+ scale
    np.testing.assert_allclose(np.percentile(x.numpy(), [25, 50, 75]), [-1, 1, 3], atol=0.1)
    x.log_normal_(0.0, 0.5)
    logs = np.log(x.numpy().astype(np.float64))
    _close_to(logs.mean(), 0.0, 0.25)


def test_in_place_fill_argument_errors():
    with pytest.raises(ValueError, match="lam must be > 0"):
        paddle.zeros([2]).exponential_(-1.0)
    with pytest.raises(OutOfRangeError, match=r"probs in \(0, 1\]"):
        paddle.zeros([2]).geometric_(0.0)
    with pytest.raises(TypeError, match="float tensor"):
        paddle.zeros([2], "int64").cauchy_()
    np.testing.assert_array_equal(paddle.zeros([3]).geometric_(1.0).numpy(), 0.0)
    assert paddle.zeros([3]).exponential_(lambd=3.0).shape == [3]


def test_like_draws_take_the_shape_and_dtype():
    x = paddle.ones([3, 4], "float64")
    for out in (paddle.rand_like(x), paddle.randn_like(x)):
        assert out.shape == [3, 4] and out.dtype == paddle.float64 and out.stop_gradient
    assert paddle.rand_like(x, dtype="float32").dtype == paddle.float32
    assert not paddle.randn_like(x, requires_grad=True).stop_gradient
    u = paddle.rand_like(paddle.zeros([N])).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    ints = paddle.randint_like(paddle.zeros([N], "int32"), 3, 6)
    assert ints.dtype == paddle.int32 and sorted(np.unique(ints.numpy())) == [3, 4, 5]
    assert paddle.randint_like(x, 4).dtype == paddle.float64
    with pytest.raises(TypeError, match="float type"):
        paddle.rand_like(paddle.to_tensor([1, 2]))
    with pytest.raises(ValueError, match="low must be less than high"):
        paddle.randint_like(x, 5, 3)


def test_paddle_seed_makes_every_sampler_reproducible():
    rate = paddle.to_tensor([0.5, 3.0, 40.0])

    def draws():
        return [paddle.multinomial(rate, 2), paddle.bernoulli(rate / 40), paddle.poisson(rate),
                paddle.binomial(paddle.to_tensor([5, 50, 500]), rate / 40),
                paddle.standard_gamma(rate), paddle.log_normal(0.0, 1.0, [3]),
                paddle.zeros([3]).exponential_(), paddle.randn_like(rate)]
    paddle.seed(9)
    first = draws()
    paddle.seed(9)
    for a, b in zip(first, draws()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_compiled_samplers_follow_the_seed():
    def sample(x):
        return (paddle.poisson(x), paddle.binomial(paddle.full_like(x, 40, "int64"), x / 100),
                paddle.standard_gamma(x), paddle.multinomial(x, 2), paddle.bernoulli(x / 100))
    static = paddle.jit.to_static(sample, input_spec=[InputSpec([None], "float32")])
    x = paddle.to_tensor([1.0, 20.0, 50.0])
    paddle.seed(10)
    first = static(x)
    paddle.seed(10)
    for a, b in zip(first, static(x)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert first[1].dtype == paddle.int64 and first[3].shape == [2]
    assert len(set(first[3].numpy().tolist())) == 2


# ---- creation --------------------------------------------------------------------------

def test_logspace_matches_numpy():
    np.testing.assert_allclose(paddle.logspace(0, 2, 3).numpy(), [1, 10, 100])
    out = paddle.logspace(-1.0, 2.5, 7, 2.0, dtype="float64")
    np.testing.assert_allclose(out.numpy(), np.logspace(-1.0, 2.5, 7, base=2.0), rtol=1e-15)
    # int dtypes truncate: 2 ** (10/3) = 10.08, 2 ** (20/3) = 101.6
    ints = paddle.logspace(0, 10, 4, 2, dtype="int64")
    assert ints.dtype == paddle.int64 and ints.numpy().tolist() == [1, 10, 101, 1024]
    np.testing.assert_array_equal(paddle.logspace(0, 2, 3, -2.0).numpy(), [1, -2, 4])
    assert paddle.logspace(1, 5, 1).numpy().tolist() == [10]
    with pytest.raises(ValueError, match="num must be > 0"):
        paddle.logspace(1, 5, 0)


@pytest.mark.parametrize("row,col,offset", [(3, 4, 0), (3, 4, 1), (4, 3, -1), (0, 3, 0),
                                            (2, 3, 10), (2, 3, -10)])
def test_tril_and_triu_indices_match_numpy(row, col, offset):
    lower = paddle.tril_indices(row, col, offset)
    assert lower.dtype == paddle.int64
    np.testing.assert_array_equal(lower.numpy().reshape(2, -1),
                                  np.stack(np.tril_indices(row, offset, col)))
    upper = paddle.triu_indices(row, col, offset, "int32")
    assert upper.dtype == paddle.int32
    np.testing.assert_array_equal(upper.numpy().reshape(2, -1),
                                  np.stack(np.triu_indices(row, offset, col)))


def test_triu_indices_default_col_and_errors():
    np.testing.assert_array_equal(paddle.triu_indices(3).numpy(), np.stack(np.triu_indices(3)))
    with pytest.raises(TypeError, match="int32 or int64"):
        paddle.tril_indices(2, 2, 0, "float32")
    with pytest.raises(TypeError, match="row must be a non-negative int"):
        paddle.tril_indices(-1, 2)


def test_vander_matches_numpy_with_exact_gradients():
    x = np.array([0.0, 2.0, -3.0])
    np.testing.assert_array_equal(paddle.vander(paddle.to_tensor(x)).numpy(), np.vander(x))
    np.testing.assert_array_equal(paddle.to_tensor(x).vander(4, True).numpy(),
                                  np.vander(x, 4, increasing=True))
    ints = paddle.vander(paddle.to_tensor([1, 2, 3], "int32"))
    assert ints.dtype == paddle.int32 and ints.numpy().tolist() == np.vander([1, 2, 3]).tolist()
    assert paddle.vander(paddle.to_tensor(x), 0).shape == [3, 0]
    check_grads(lambda t: paddle.vander(t, 4), x)  # at x = 0 too
    with pytest.raises(ValueError, match="1-D"):
        paddle.vander(paddle.ones([2, 2]))


def test_tensor_new_creation_methods():
    t = paddle.to_tensor([1, 2], "int32")
    zeros = t.new_zeros([2, 3])
    assert zeros.dtype == paddle.int32 and zeros.numpy().tolist() == [[0] * 3] * 2
    assert t.new_ones(2, 3).numpy().tolist() == [[1] * 3] * 2
    assert t.new_zeros(3).shape == [3] and t.new_empty([2]).shape == [2]
    assert t.new_full([2], 3.7).numpy().tolist() == [3, 3]  # in t's int dtype
    assert t.new_full([2], paddle.to_tensor(5)).numpy().tolist() == [5, 5]
    floats = paddle.ones([1]).new_full([2], True)
    assert floats.dtype == paddle.float32 and floats.numpy().tolist() == [1, 1]
    grad = t.new_zeros([2], dtype="float64", requires_grad=True)
    assert grad.dtype == paddle.float64 and not grad.stop_gradient


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_finfo_matches_numpy(dtype):
    info, want = paddle.finfo(getattr(paddle, dtype)), np.finfo(dtype)
    assert (info.bits, info.eps, info.max, info.min) == (want.bits, want.eps, want.max, want.min)
    assert info.tiny == info.smallest_normal == want.smallest_normal
    assert info.resolution == 10.0 ** -want.precision and info.dtype == dtype
    assert paddle.finfo(dtype).eps == want.eps


def test_finfo_bfloat16_and_iinfo():
    bf16 = paddle.finfo(paddle.bfloat16)
    assert (bf16.bits, bf16.eps, bf16.tiny) == (16, 2.0 ** -7, 2.0 ** -126)
    assert bf16.max == (2 - 2.0 ** -7) * 2.0 ** 127 and bf16.min == -bf16.max
    for dtype in ["int8", "int16", "int32", "int64", "uint8"]:
        info, want = paddle.iinfo(dtype), np.iinfo(dtype)
        assert (info.bits, info.min, info.max, info.dtype) == (want.bits, want.min, want.max,
                                                              dtype)
    with pytest.raises(TypeError, match="float type"):
        paddle.finfo(paddle.int32)
    with pytest.raises(TypeError, match="integer type"):
        paddle.iinfo(paddle.float32)
