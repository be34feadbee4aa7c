"""paddle.distribution: densities, entropies, moments and KL divergences against their
closed forms (written here with NumPy and math.lgamma), gradients against finite
differences, samplers by their sample moments over many draws (never against
Paddle's draws), Paddle's parameter conversions and errors, and tracing."""
import math
import warnings

import numpy as np
import pytest

import irflow as paddle
from irflow.static import InputSpec

from tests.nn.gradcheck import check_grads

D = paddle.distribution
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
lgamma = np.vectorize(math.lgamma)


def digamma(x):
    """psi(x) for x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then
    the asymptotic series (error below 1e-12 there)."""
    x = np.asarray(x, np.float64).copy()
    shift = np.zeros_like(x)
    while (x < 10).any():
        small = x < 10
        shift[small] -= 1 / x[small]
        x[small] += 1
    inv2 = 1 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 / 240)))
    return shift + np.log(x) - 0.5 / x - series


def t64(values, stop_gradient=True):
    return paddle.to_tensor(np.asarray(values, np.float64), stop_gradient=stop_gradient)


def moments(samples, axis=0):
    samples = samples.numpy().astype(np.float64)
    return samples.mean(axis), samples.var(axis)


# ---------------------------------------------------------------- Normal

def test_normal_log_prob_entropy_moments_match_the_gaussian_formulas():
    loc, scale, x = np.array([[0.0], [1.5]]), np.array([0.5, 1.0, 2.0]), np.array([0.3, -1.0, 2.0])
    n = D.Normal(t64(loc), t64(scale))
    expected = -(x - loc) ** 2 / (2 * scale ** 2) - np.log(scale) - LOG_SQRT_2PI
    np.testing.assert_allclose(n.log_prob(t64(x)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(n.prob(t64(x)).numpy(), np.exp(expected), rtol=1e-12)
    np.testing.assert_allclose(n.probs(t64(x)).numpy(), np.exp(expected), rtol=1e-12)
    entropy = n.entropy()
    assert entropy.shape == [2, 3]
    np.testing.assert_allclose(entropy.numpy(), np.broadcast_to(
        0.5 + LOG_SQRT_2PI + np.log(scale), (2, 3)), rtol=1e-12)
    np.testing.assert_allclose(n.mean.numpy(), loc)
    np.testing.assert_allclose(n.variance.numpy(), scale ** 2)
    assert n.batch_shape == (2, 1) and n.event_shape == ()  # Paddle: loc's shape


def test_normal_kl_divergence_is_the_closed_form():
    m1, s1, m2, s2 = np.array([0.0, 1.0]), np.array([1.0, 0.5]), np.array([0.5, -1.0]), 2.0
    p, q = D.Normal(t64(m1), t64(s1)), D.Normal(t64(m2), t64(s2))
    expected = np.log(s2 / s1) + (s1 ** 2 + (m1 - m2) ** 2) / (2 * s2 ** 2) - 0.5
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(p.kl_divergence(q).numpy(), expected, rtol=1e-12)


def test_normal_gradients_of_log_prob_entropy_and_kl():
    x = np.array([0.3, -1.0])
    check_grads(lambda m, s: D.Normal(m, s).log_prob(t64(x)), [0.1, 0.4], [0.7, 1.3])
    check_grads(lambda m, s: D.Normal(m, s).entropy(), [0.1, 0.4], [0.7, 1.3], wrt=[1])
    check_grads(lambda m, s, m2, s2: D.kl_divergence(D.Normal(m, s), D.Normal(m2, s2)),
                [0.1, 0.4], [0.7, 1.3], [-0.2, 0.5], [1.1, 0.6])


def test_normal_converts_numbers_lists_and_arrays_as_paddle():
    scalar = D.Normal(0, 1)  # ints become floats: 0-D float32
    assert scalar.loc.shape == [] and scalar.loc.dtype == paddle.float32
    assert scalar.sample([3]).shape == [3] and scalar.sample().shape == []
    listed = D.Normal([0.0, 1.0], 2.0)  # lists are float32, numbers broadcast to them
    assert listed.scale.shape == [2] and listed.scale.dtype == paddle.float32
    assert D.Normal(np.array([0.0, 1.0]), 2.0).loc.dtype == paddle.float64
    assert D.Normal(np.array([0.0], np.float32), np.float64(2.0)).loc.dtype == paddle.float32
    with pytest.raises(ValueError, match="all arguments should be Tensor"):
        D.Normal(paddle.to_tensor([0.0]), 1.0)
    with pytest.raises(TypeError):
        D.Normal("a", 1.0)
    with pytest.raises(TypeError):
        D.Normal(0.0, 1.0).sample(3)


def test_normal_value_of_the_other_float_dtype_is_cast_with_a_warning():
    n = D.Normal(paddle.to_tensor([0.0]), paddle.to_tensor([1.0]))
    with pytest.warns(UserWarning, match="will be converted"):
        out = n.log_prob(t64([0.5]))
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [-0.125 - LOG_SQRT_2PI], rtol=1e-6)


def test_normal_samples_have_its_moments_and_shapes():
    paddle.seed(2024)
    loc, scale = np.array([-1.0, 3.0]), np.array([0.5, 2.0])
    n = D.Normal(t64(loc), t64(scale))
    samples = n.sample([40000])
    assert samples.shape == [40000, 2] and samples.dtype == paddle.float64
    mean, var = moments(samples)
    np.testing.assert_allclose(mean, loc, atol=4 * 2.0 / 200)  # 4 standard errors
    np.testing.assert_allclose(var, scale ** 2, rtol=0.03)
    broadcast = D.Normal(t64([[0.0], [1.0]]), t64([1.0, 2.0, 3.0]))
    assert broadcast.sample([5]).shape == [5, 2, 3]
    assert broadcast.rsample([5]).shape == [5, 2, 3]


def test_normal_rsample_is_loc_plus_scale_times_noise():
    """d sum(loc + scale eps) / d loc = N and / d scale = sum(eps)."""
    paddle.seed(7)
    loc, scale = t64([0.5], stop_gradient=False), t64([2.0], stop_gradient=False)
    draws = D.Normal(loc, scale).rsample([1000])
    draws.sum().backward()
    eps = (draws.numpy() - 0.5) / 2.0
    np.testing.assert_allclose(loc.grad.numpy(), [1000.0])
    np.testing.assert_allclose(scale.grad.numpy(), [eps.sum()], rtol=1e-10)


# ---------------------------------------------------------------- Uniform

def test_uniform_log_prob_is_minus_log_width_inside_and_minus_inf_outside():
    u = D.Uniform(t64([0.0, 1.0]), t64([2.0, 5.0]))
    lp = u.log_prob(t64([1.0, 6.0])).numpy()
    np.testing.assert_allclose(lp[0], -math.log(2.0))
    assert lp[1] == -np.inf
    np.testing.assert_allclose(u.probs(t64([1.0, 6.0])).numpy(), [0.5, 0.0])
    np.testing.assert_allclose(u.prob(t64([1.0, 6.0])).numpy(), [0.5, 0.0])
    np.testing.assert_allclose(u.entropy().numpy(), np.log([2.0, 4.0]))
    with pytest.raises(NotImplementedError):  # Paddle's Uniform gives no mean
        u.mean


def test_uniform_gradients_of_log_prob_and_entropy():
    check_grads(lambda lo, hi: D.Uniform(lo, hi).log_prob(t64([0.5, 0.7])), [0.0, 0.1], [1.0, 2.0])
    check_grads(lambda lo, hi: D.Uniform(lo, hi).entropy(), [0.0, 0.1], [1.0, 2.0])


def test_uniform_samples_fill_the_interval():
    paddle.seed(11)
    u = D.Uniform(t64([-1.0, 2.0]), t64([1.0, 10.0]))
    samples = u.sample([40000])
    values = samples.numpy()
    assert samples.shape == [40000, 2]
    assert (values >= [-1.0, 2.0]).all() and (values < [1.0, 10.0]).all()
    mean, var = moments(samples)
    np.testing.assert_allclose(mean, [0.0, 6.0], atol=0.05)
    np.testing.assert_allclose(var, [4 / 12, 64 / 12], rtol=0.03)
    assert D.Uniform(0.0, 1.0).sample([4]).shape == [4]


def test_uniform_kl_is_the_log_width_ratio_or_inf():
    """Paddle registers this pair but raises NotImplementedError; irflow computes
    log(width_q / width_p) when q's support covers p's, inf otherwise."""
    p = D.Uniform(t64([0.0, 0.0]), t64([1.0, 1.0]))
    q = D.Uniform(t64([-1.0, 0.5]), t64([3.0, 2.0]))
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), [math.log(4.0), np.inf])


# ---------------------------------------------------------------- Categorical

def test_categorical_probs_normalise_by_the_sum_as_paddle_documents():
    """Paddle's probs/log_prob read logits as unnormalised probabilities (its own
    docstring example: probs = x / sum(x)), even where they are negative."""
    logits = np.array([0.5, -1.0, 2.0])
    c = D.Categorical(t64(logits))
    value = paddle.to_tensor([0, 2, 2])
    expected = logits[[0, 2, 2]] / logits.sum()
    np.testing.assert_allclose(c.probs(value).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(c.log_prob(value[:2]).numpy(), np.log(expected[:2]), rtol=1e-12)
    assert c.probs(paddle.to_tensor([[1, 0]])).shape == [1, 2]


def test_categorical_probs_of_a_batch():
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 2.0]])
    c = D.Categorical(t64(logits))
    prob = logits / logits.sum(-1, keepdims=True)
    one_d = c.probs(paddle.to_tensor([0, 2])).numpy()  # taken for every distribution
    np.testing.assert_allclose(one_d, prob[:, [0, 2]])
    per_row = c.probs(paddle.to_tensor([[0, 2], [1, 1]])).numpy()
    np.testing.assert_allclose(per_row, [prob[0, [0, 2]], prob[1, [1, 1]]])
    assert c.batch_shape == (2,)


def test_categorical_entropy_and_kl_use_softmax():
    a, b = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]]), np.array([1.0, 2.0, 0.0])
    p, q = (np.exp(v) / np.exp(v).sum(-1, keepdims=True) for v in (a, b))
    ca, cb = D.Categorical(t64(a)), D.Categorical(t64(b))
    np.testing.assert_allclose(ca.entropy().numpy(), -(p * np.log(p)).sum(-1), rtol=1e-12)
    kl = D.kl_divergence(ca, cb)
    assert kl.shape == [2, 1]  # Paddle keeps the category axis
    np.testing.assert_allclose(kl.numpy(), (p * np.log(p / q)).sum(-1, keepdims=True),
                               rtol=1e-12)


def test_categorical_gradients_of_entropy_kl_and_log_prob():
    a, b = [[0.5, -1.0, 2.0], [0.1, 0.2, 1.0]], [1.0, 2.0, 0.0]
    check_grads(lambda x: D.Categorical(x).entropy(), a)
    check_grads(lambda x, y: D.kl_divergence(D.Categorical(x), D.Categorical(y)), a, b)
    check_grads(lambda x: D.Categorical(x).log_prob(paddle.to_tensor([0, 2])),
                [[0.5, 1.0, 2.0], [0.1, 0.2, 1.0]])


def test_categorical_samples_follow_softmax_frequencies():
    paddle.seed(3)
    logits = np.array([[0.0, 1.0, 2.0], [2.0, 0.0, -1.0]])
    c = D.Categorical(paddle.to_tensor(logits.astype(np.float32)))
    samples = c.sample([30000])
    assert samples.shape == [30000, 2] and samples.dtype == paddle.int64
    values = samples.numpy()
    softmax = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    for row in range(2):
        frequencies = np.bincount(values[:, row], minlength=3) / 30000
        np.testing.assert_allclose(frequencies, softmax[row], atol=0.012)
    assert c.sample([2, 3]).shape == [2, 3, 2]
    assert D.Categorical(paddle.to_tensor([1.0, 2.0])).sample().shape == []


def test_categorical_conversions_and_errors():
    assert D.Categorical([1.0, 2.0]).logits.dtype == paddle.float32
    assert D.Categorical(np.array([1.0, 2.0])).logits.dtype == paddle.float64
    with pytest.raises(TypeError):
        D.Categorical("abc")


# ---------------------------------------------------------------- Bernoulli

def test_bernoulli_log_prob_entropy_kl_and_moments():
    p, q, x = np.array([0.2, 0.7, 0.5]), np.array([0.5, 0.1, 0.9]), np.array([1.0, 0.0, 1.0])
    b, c = D.Bernoulli(t64(p)), D.Bernoulli(t64(q))
    np.testing.assert_allclose(b.log_prob(t64(x)).numpy(),
                               x * np.log(p) + (1 - x) * np.log1p(-p), rtol=1e-12)
    np.testing.assert_allclose(b.prob(t64(x)).numpy(), np.where(x == 1, p, 1 - p), rtol=1e-12)
    np.testing.assert_allclose(b.entropy().numpy(),
                               -p * np.log(p) - (1 - p) * np.log1p(-p), rtol=1e-12)
    kl = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    np.testing.assert_allclose(D.kl_divergence(b, c).numpy(), kl, rtol=1e-10)
    np.testing.assert_allclose(b.mean.numpy(), p)
    np.testing.assert_allclose(b.variance.numpy(), p * (1 - p))
    np.testing.assert_allclose(b.cdf(t64([-1.0, 0.5, 1.0])).numpy(), [0.0, 0.3, 1.0])
    np.testing.assert_allclose(b.logits.numpy(), np.log(p / (1 - p)), rtol=1e-12)


def test_bernoulli_gradients():
    x = t64([1.0, 0.0])
    check_grads(lambda p: D.Bernoulli(p).log_prob(x), [0.2, 0.7])
    check_grads(lambda p: D.Bernoulli(p).entropy(), [0.2, 0.7])
    check_grads(lambda p, q: D.kl_divergence(D.Bernoulli(p), D.Bernoulli(q)),
                [0.2, 0.7], [0.6, 0.4])


def test_bernoulli_clips_probs_to_the_dtype_epsilon():
    eps = float(np.finfo(np.float32).eps)
    b = D.Bernoulli(paddle.to_tensor([0.0, 1.0]))
    np.testing.assert_allclose(b.probs.numpy(), [eps, 1 - eps])
    assert np.isfinite(b.logits.numpy()).all()


def test_bernoulli_number_takes_the_default_dtype():
    b = D.Bernoulli(0.3)
    assert b.probs.dtype == paddle.float32 and b.batch_shape == ()
    paddle.set_default_dtype("float64")
    try:
        assert D.Bernoulli(0.3).probs.dtype == paddle.float64
    finally:
        paddle.set_default_dtype("float32")
    with pytest.raises(TypeError):  # as Paddle: an int is not a probability
        D.Bernoulli(1)


def test_bernoulli_samples_and_relaxed_samples():
    """sample is 0/1 with mean p; rsample is the logistic relaxation before its
    sigmoid, so rsample > 0 exactly when the relaxed draw rounds to 1, which has
    probability p at any temperature."""
    paddle.seed(5)
    p = np.array([0.2, 0.7])
    b = D.Bernoulli(t64(p))
    samples = b.sample([40000])
    assert samples.shape == [40000, 2] and samples.dtype == paddle.float64
    assert set(np.unique(samples.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(samples.numpy().mean(0), p, atol=0.01)
    relaxed = b.rsample([40000], temperature=0.5).numpy()
    np.testing.assert_allclose((relaxed > 0).mean(0), p, atol=0.01)


# ---------------------------------------------------------------- kl_divergence

def test_kl_divergence_dispatch_and_register_kl():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
    np.testing.assert_allclose(float(D.kl_divergence(p, q)), 0.5)  # inherits Normal's
    D.register_kl(MyNormal, D.Normal)(lambda a, b: paddle.to_tensor(-1.0))
    assert float(D.kl_divergence(p, q)) == -1.0  # the more specific pair wins
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))
    with pytest.raises(TypeError, match="subclass of Distribution"):
        D.register_kl(int, D.Normal)


def test_distribution_base_raises_not_implemented():
    d = D.Distribution([2], [3])
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    for method in (d.sample, d.rsample, d.entropy):
        with pytest.raises(NotImplementedError):
            method()
    with pytest.raises(NotImplementedError):
        d.log_prob(paddle.to_tensor(0.0))


# ---------------------------------------------------------------- Gamma, Exponential

def test_gamma_log_prob_entropy_kl_and_moments():
    a, r, x = np.array([0.5, 2.0, 7.5]), np.array([1.0, 3.0, 0.5]), np.array([0.3, 1.2, 9.0])
    a2, r2 = np.array([1.5, 1.0, 4.0]), np.array([2.0, 1.0, 1.0])
    g = D.Gamma(t64(a), t64(r))
    np.testing.assert_allclose(g.log_prob(t64(x)).numpy(), a * np.log(r) + (a - 1) * np.log(x)
                               - r * x - lgamma(a), rtol=1e-12)
    np.testing.assert_allclose(g.entropy().numpy(), a - np.log(r) + lgamma(a)
                               + (1 - a) * digamma(a), rtol=1e-9)
    np.testing.assert_allclose(g.mean.numpy(), a / r)
    np.testing.assert_allclose(g.variance.numpy(), a / r ** 2)
    kl = ((a - a2) * digamma(a) - lgamma(a) + lgamma(a2) + a2 * (np.log(r) - np.log(r2))
          + a * (r2 - r) / r)
    np.testing.assert_allclose(D.kl_divergence(g, D.Gamma(t64(a2), t64(r2))).numpy(), kl,
                               rtol=1e-9)
    check_grads(lambda a, r: D.Gamma(a, r).log_prob(t64(x)), a, r)
    check_grads(lambda a, r: D.Gamma(a, r).entropy(), a, r)


@pytest.mark.parametrize("concentration", [0.3, 1.0, 4.5])
def test_gamma_samples_have_its_moments(concentration):
    paddle.seed(17)
    g = D.Gamma(t64([concentration]), t64([2.0]))
    samples = g.sample([40000])
    assert samples.shape == [40000, 1] and samples.dtype == paddle.float64
    assert (samples.numpy() > 0).all()
    mean, var = moments(samples)
    np.testing.assert_allclose(mean, [concentration / 2], rtol=0.03)
    np.testing.assert_allclose(var, [concentration / 4], rtol=0.06)


def test_gamma_rsample_differentiates_through_the_rate_only():
    """As Paddle: the standard gamma draw has no gradient, x = g / rate does."""
    paddle.seed(1)
    a, r = t64([2.0], stop_gradient=False), t64([4.0], stop_gradient=False)
    draws = D.Gamma(a, r).rsample([100])
    draws.sum().backward()
    assert a.grad is None
    np.testing.assert_allclose(r.grad.numpy(), [-draws.numpy().sum() / 4.0], rtol=1e-10)


def test_exponential_formulas_and_samples():
    rate, rate2, x = np.array([0.5, 2.0]), np.array([1.0, 3.0]), np.array([0.3, 1.5])
    e = D.Exponential(t64(rate))
    np.testing.assert_allclose(e.log_prob(t64(x)).numpy(), np.log(rate) - rate * x)
    np.testing.assert_allclose(e.prob(t64(x)).numpy(), rate * np.exp(-rate * x))
    np.testing.assert_allclose(e.entropy().numpy(), 1 - np.log(rate))
    np.testing.assert_allclose(e.cdf(t64(x)).numpy(), 1 - np.exp(-rate * x))
    np.testing.assert_allclose(e.icdf(t64([0.25, 0.5])).numpy(), -np.log1p(-np.array(
        [0.25, 0.5])) / rate)
    np.testing.assert_allclose(e.mean.numpy(), 1 / rate)
    np.testing.assert_allclose(e.variance.numpy(), 1 / rate ** 2)
    np.testing.assert_allclose(D.kl_divergence(e, D.Exponential(t64(rate2))).numpy(),
                               np.log(rate / rate2) + rate2 / rate - 1)
    check_grads(lambda r: D.Exponential(r).log_prob(t64(x)), rate)
    paddle.seed(9)
    mean, var = moments(e.sample([40000]))
    np.testing.assert_allclose(mean, 1 / rate, rtol=0.03)
    np.testing.assert_allclose(var, 1 / rate ** 2, rtol=0.08)
    assert D.Exponential(0.5).rate.dtype == paddle.float32


def test_exponential_family_entropy_from_the_log_normalizer():
    """The Bregman entropy F(theta) - theta F'(theta) - E[k(x)] of the exponential
    distribution (theta = -rate, F = -log(-theta), k = 0) is 1 - log(rate)."""
    class ExponentialByBregman(D.Exponential):
        _mean_carrier_measure = 0.0
        entropy = D.ExponentialFamily.entropy

    rate = np.array([0.5, 2.0])
    np.testing.assert_allclose(ExponentialByBregman(t64(rate)).entropy().numpy(),
                               1 - np.log(rate), rtol=1e-12)


# ---------------------------------------------------------------- Beta, Dirichlet

def test_beta_log_prob_entropy_kl_and_moments():
    a, b, x = np.array([0.5, 2.0]), np.array([3.0, 1.5]), np.array([0.3, 0.8])
    a2, b2 = np.array([1.0, 4.0]), np.array([2.0, 0.5])
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    beta = D.Beta(t64(a), t64(b))
    np.testing.assert_allclose(beta.log_prob(t64(x)).numpy(),
                               (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_beta, rtol=1e-12)
    entropy = (log_beta - (a - 1) * digamma(a) - (b - 1) * digamma(b)
               + (a + b - 2) * digamma(a + b))
    np.testing.assert_allclose(beta.entropy().numpy(), entropy, rtol=1e-9)
    np.testing.assert_allclose(beta.mean.numpy(), a / (a + b))
    np.testing.assert_allclose(beta.variance.numpy(), a * b / ((a + b) ** 2 * (a + b + 1)))
    kl = (lgamma(a2) + lgamma(b2) - lgamma(a2 + b2) - log_beta + (a - a2) * digamma(a)
          + (b - b2) * digamma(b) + (a2 - a + b2 - b) * digamma(a + b))
    np.testing.assert_allclose(D.kl_divergence(beta, D.Beta(t64(a2), t64(b2))).numpy(), kl,
                               rtol=1e-9)
    check_grads(lambda a, b: D.Beta(a, b).log_prob(t64(x)), a, b)
    assert D.Beta(2.0, 3.0).alpha.shape == [] and D.Beta(t64([1.0, 2.0]), 3.0).beta.shape == [2]


def test_beta_samples_have_its_moments():
    paddle.seed(21)
    a, b = np.array([0.5, 2.0]), np.array([3.0, 1.5])
    samples = D.Beta(t64(a), t64(b)).sample([40000])
    assert samples.shape == [40000, 2]
    mean, var = moments(samples)
    np.testing.assert_allclose(mean, a / (a + b), rtol=0.03)
    np.testing.assert_allclose(var, a * b / ((a + b) ** 2 * (a + b + 1)), rtol=0.06)


def test_dirichlet_log_prob_entropy_kl_and_moments():
    c, c2 = np.array([[0.5, 2.0, 1.0], [1.0, 1.0, 1.0]]), np.array([2.0, 1.0, 3.0])
    x = np.array([0.3, 0.6, 0.1])
    total = c.sum(-1)
    d = D.Dirichlet(t64(c))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    log_norm = lgamma(c).sum(-1) - lgamma(total)
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(),
                               ((c - 1) * np.log(x)).sum(-1) - log_norm, rtol=1e-12)
    entropy = log_norm + (total - 3) * digamma(total) - ((c - 1) * digamma(c)).sum(-1)
    np.testing.assert_allclose(d.entropy().numpy(), entropy, rtol=1e-9)
    np.testing.assert_allclose(d.mean.numpy(), c / total[:, None])
    np.testing.assert_allclose(d.variance.numpy(), c * (total[:, None] - c)
                               / (total[:, None] ** 2 * (total[:, None] + 1)))
    kl = (lgamma(total) - lgamma(c2.sum()) - (lgamma(c) - lgamma(c2)).sum(-1)
          + ((c - c2) * (digamma(c) - digamma(total)[:, None])).sum(-1))
    np.testing.assert_allclose(D.kl_divergence(d, D.Dirichlet(t64(c2))).numpy(), kl, rtol=1e-9)
    check_grads(lambda c: D.Dirichlet(c).log_prob(t64(x)), c)
    with pytest.raises(ValueError, match="at least one dimensional"):
        D.Dirichlet(paddle.to_tensor(1.0))


def test_dirichlet_samples_lie_on_the_simplex_with_its_moments():
    paddle.seed(8)
    c = np.array([0.5, 2.0, 1.0])
    samples = D.Dirichlet(t64(c)).sample([40000])
    assert samples.shape == [40000, 3]
    np.testing.assert_allclose(samples.numpy().sum(-1), 1.0, rtol=1e-12)
    mean, var = moments(samples)
    np.testing.assert_allclose(mean, c / c.sum(), rtol=0.03)
    np.testing.assert_allclose(var, c * (c.sum() - c) / (c.sum() ** 2 * (c.sum() + 1)), rtol=0.06)
    tiny = D.Dirichlet(t64([0.01, 0.01])).sample([200]).numpy()  # draws that underflow
    assert np.isfinite(tiny).all()
    np.testing.assert_allclose(tiny.sum(-1), 1.0)


# ---------------------------------------------------------------- Laplace, LogNormal

def test_laplace_formulas_gradients_and_samples():
    loc, scale, x = np.array([0.0, 1.0]), np.array([2.0, 0.5]), np.array([0.3, -1.0])
    lap = D.Laplace(t64(loc), t64(scale))
    np.testing.assert_allclose(lap.log_prob(t64(x)).numpy(),
                               -np.log(2 * scale) - np.abs(x - loc) / scale, rtol=1e-12)
    np.testing.assert_allclose(lap.entropy().numpy(), 1 + np.log(2 * scale))
    np.testing.assert_allclose(lap.variance.numpy(), 2 * scale ** 2)
    cdf = np.where(x < loc, 0.5 * np.exp((x - loc) / scale), 1 - 0.5 * np.exp(-(x - loc) / scale))
    np.testing.assert_allclose(lap.cdf(t64(x)).numpy(), cdf, rtol=1e-12)
    np.testing.assert_allclose(lap.icdf(t64(cdf)).numpy(), x, rtol=1e-10)
    loc2, scale2 = np.array([0.5, 0.0]), np.array([1.0, 1.0])
    t = np.abs(loc - loc2)
    kl = np.log(scale2 / scale) + (scale * np.exp(-t / scale) + t) / scale2 - 1
    np.testing.assert_allclose(D.kl_divergence(lap, D.Laplace(t64(loc2), t64(scale2))).numpy(),
                               kl, rtol=1e-12)
    check_grads(lambda m, s: D.Laplace(m, s).log_prob(t64(x)), loc + 0.1, scale)
    paddle.seed(4)
    mean, var = moments(lap.sample([40000]))
    np.testing.assert_allclose(mean, loc, atol=0.05)
    np.testing.assert_allclose(var, 2 * scale ** 2, rtol=0.06)
    with pytest.raises(TypeError):
        D.Laplace([0.0], 1.0)


def test_lognormal_formulas_and_samples():
    loc, scale, x = np.array([0.0, 0.5]), np.array([1.0, 0.25]), np.array([0.7, 2.0])
    ln = D.LogNormal(t64(loc), t64(scale))
    expected = (-(np.log(x) - loc) ** 2 / (2 * scale ** 2) - np.log(scale) - LOG_SQRT_2PI
                - np.log(x))
    np.testing.assert_allclose(ln.log_prob(t64(x)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(ln.entropy().numpy(), 0.5 + LOG_SQRT_2PI + np.log(scale) + loc)
    np.testing.assert_allclose(ln.mean.numpy(), np.exp(loc + scale ** 2 / 2))
    np.testing.assert_allclose(ln.variance.numpy(), np.expm1(scale ** 2)
                               * np.exp(2 * loc + scale ** 2))
    other = D.LogNormal(t64([1.0, 0.0]), t64([2.0, 1.0]))
    np.testing.assert_allclose(D.kl_divergence(ln, other).numpy(), D.kl_divergence(
        D.Normal(t64(loc), t64(scale)), D.Normal(t64([1.0, 0.0]), t64([2.0, 1.0]))).numpy())
    paddle.seed(6)
    samples = ln.sample([40000]).numpy()
    np.testing.assert_allclose(np.log(samples).mean(0), loc, atol=0.02)
    np.testing.assert_allclose(np.log(samples).std(0), scale, rtol=0.03)


# ---------------------------------------------------------------- tracing

def test_distributions_trace_under_to_static_with_a_symbolic_batch():
    def losses(loc, scale, x):
        normal = D.Normal(loc, scale)
        value = (normal.log_prob(x) + D.kl_divergence(normal, D.Normal(loc * 0, scale * 0 + 1))
                 + D.Categorical(loc).entropy().unsqueeze(-1)
                 + D.Bernoulli(paddle.nn.functional.sigmoid(loc)).log_prob(x * 0 + 1)
                 + D.Gamma(scale, scale).entropy() + D.Beta(scale, scale).log_prob(x * 0 + 0.5))
        return value, normal.rsample([3]), D.Dirichlet(scale).sample([2])

    rng = np.random.default_rng(0)
    loc, x = (paddle.to_tensor(rng.random((2, 3)).astype(np.float32)) for _ in range(2))
    scale = paddle.to_tensor(rng.random((2, 3)).astype(np.float32) + 0.5)
    compiled = paddle.jit.to_static(losses, input_spec=[InputSpec([None, 3], "float32")] * 3)
    value, draws, simplex = compiled(loc, scale, x)
    np.testing.assert_allclose(value.numpy(), losses(loc, scale, x)[0].numpy(), rtol=1e-5)
    assert draws.shape == [3, 2, 3] and simplex.shape == [2, 2, 3]
    np.testing.assert_allclose(simplex.numpy().sum(-1), 1.0, rtol=1e-5)


def test_mixed_float_dtype_value_warns_only_where_paddle_casts():
    b = D.Bernoulli(paddle.to_tensor([0.5]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.log_prob(paddle.to_tensor([1.0]))  # same dtype: no warning
    with pytest.warns(UserWarning):
        b.log_prob(t64([1.0]))
