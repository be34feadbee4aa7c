"""paddle.distribution classes beyond the core ones (Cauchy, Gumbel, Geometric,
Poisson, Binomial, Multinomial, Independent, StudentT, Chi2, MultivariateNormal),
the Bregman KL of exponential families, and zero-probability support values:
densities, entropies and KL divergences against closed forms or sums over the
support written here with NumPy and math.lgamma, gradients against finite
differences, samplers by shape and sample moments, Paddle's conversions and
errors."""
import math

import numpy as np
import pytest

import irflow as paddle

from tests.nn.gradcheck import check_grads

D = paddle.distribution
lgamma = np.vectorize(math.lgamma)
EULER = 0.5772156649015329


def t64(values, stop_gradient=True):
    return paddle.to_tensor(np.asarray(values, np.float64), stop_gradient=stop_gradient)


def close(tensor, expected, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(tensor.numpy(), expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- Cauchy

def test_cauchy_density_cdf_entropy_and_kl_are_the_closed_forms():
    loc, scale, x = np.array([0.1, -1.0]), np.array([1.2, 0.5]), np.array([1.5, 5.1])
    d = D.Cauchy(t64(loc), t64(scale))
    density = 1 / (math.pi * scale * (1 + ((x - loc) / scale) ** 2))
    close(d.log_prob(t64(x)), np.log(density))
    close(d.prob(t64(x)), density)
    close(d.cdf(t64(x)), np.arctan((x - loc) / scale) / math.pi + 0.5)
    close(d.entropy(), np.log(4 * math.pi * scale))
    q_loc, q_scale = 0.3, 2.0
    kl = np.log(((scale + q_scale) ** 2 + (loc - q_loc) ** 2) / (4 * scale * q_scale))
    close(D.kl_divergence(d, D.Cauchy(t64(q_loc), t64(q_scale))), kl)


def test_cauchy_converts_numbers_broadcasts_and_rejects_non_tensor_values():
    d = D.Cauchy(0, paddle.to_tensor([1.0, 2.0]))
    assert d.batch_shape == (2,) and d.loc.dtype == paddle.float32
    assert d.rsample([3]).shape == [3, 2]
    for moment in ("mean", "variance", "stddev"):
        with pytest.raises(ValueError):
            getattr(d, moment)
    with pytest.raises(TypeError):
        d.log_prob(1.0)
    with pytest.raises(TypeError):
        D.Cauchy([0.0], 1.0)


def test_cauchy_gradients_and_reparameterized_samples():
    x = t64([1.5, 5.1])
    check_grads(lambda m, s: D.Cauchy(m, s).log_prob(x) + D.Cauchy(m, s).cdf(x),
                [0.1, -1.0], [1.2, 0.5])
    check_grads(lambda m, s: D.kl_divergence(D.Cauchy(m, s), D.Cauchy(t64(0.0), t64(2.0))),
                [0.1, -1.0], [1.2, 0.5])
    loc = t64([0.1, -1.0], stop_gradient=False)
    draws = D.Cauchy(loc, t64([1.2, 0.5])).rsample([4])
    (grad,) = paddle.grad(draws.sum(), [loc])
    close(grad, [4.0, 4.0])
    paddle.seed(0)
    median = np.median(D.Cauchy(t64(2.0), t64(3.0)).sample([20000]).numpy())
    assert abs(median - 2.0) < 0.15


# ---------------------------------------------------------------- Gumbel

def test_gumbel_density_moments_and_entropy_are_the_closed_forms():
    loc, scale, x = np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([0.5, -3.0])
    d = D.Gumbel(t64(loc), t64(scale))
    z = (x - loc) / scale
    log_density = -(z + np.exp(-z)) - np.log(scale)
    close(d.log_prob(t64(x)), log_density)
    close(d.prob(t64(x)), np.exp(log_density))
    close(d.cdf(t64(x)), np.exp(-np.exp(-z)))
    close(d.mean, loc + EULER * scale)
    close(d.variance, (math.pi * scale) ** 2 / 6)
    close(d.stddev, math.pi * scale / math.sqrt(6))
    close(d.entropy(), np.log(scale) + 1 + EULER)


def test_gumbel_log_prob_stays_finite_far_below_loc():
    """Paddle takes log(prob), which underflows to -inf once exp(-z) passes ~88 in
    float32; the log density is ``-(z + exp(-z))``, finite."""
    log_prob = D.Gumbel(0.0, 1.0).log_prob(paddle.to_tensor([-5.0]))
    close(log_prob, [5.0 - math.exp(5.0)], rtol=1e-6)


def test_gumbel_samples_and_gradients():
    paddle.seed(0)
    draws = D.Gumbel(t64([1.0, -2.0]), t64([0.5, 2.0])).sample([40000]).numpy()
    np.testing.assert_allclose(draws.mean(0), [1.0 + 0.5 * EULER, -2.0 + 2.0 * EULER],
                               atol=0.05)
    np.testing.assert_allclose(draws.var(0), [math.pi ** 2 / 24, math.pi ** 2 * 4 / 6],
                               rtol=0.05)
    x = t64([0.5, -3.0])
    check_grads(lambda m, s: D.Gumbel(m, s).log_prob(x) + D.Gumbel(m, s).entropy(),
                [0.0, 1.0], [1.0, 2.0])
    loc = t64([0.0, 1.0], stop_gradient=False)
    (grad,) = paddle.grad(D.Gumbel(loc, t64([1.0, 2.0])).rsample([3]).sum(), [loc])
    close(grad, [3.0, 3.0])


# ---------------------------------------------------------------- Geometric

def test_geometric_pmf_cdf_moments_and_entropy():
    p, k = np.array([0.3, 0.8]), np.array([2, 0])
    d = D.Geometric(t64(p))
    close(d.pmf(paddle.to_tensor(k)), (1 - p) ** k * p)
    close(d.log_pmf(paddle.to_tensor(k)), k * np.log1p(-p) + np.log(p))
    close(d.cdf(paddle.to_tensor(k)), 1 - (1 - p) ** (k + 1))
    close(d.mean, (1 - p) / p)
    close(d.variance, (1 - p) / p ** 2)
    counts = np.arange(2000)[:, None]
    log_pmf = counts * np.log1p(-p) + np.log(p)
    close(d.entropy(), -(np.exp(log_pmf) * log_pmf).sum(0))
    assert D.Geometric(0.3).probs.dtype == paddle.float32


def test_geometric_kl_is_the_expected_log_pmf_ratio():
    """KL = sum_k pmf_p(k) log(pmf_p(k) / pmf_q(k)); Paddle returns p times it."""
    p, q = np.array([0.3, 0.8]), np.array([0.5, 0.5])
    counts = np.arange(2000)[:, None]
    log_p, log_q = counts * np.log1p(-p) + np.log(p), counts * np.log1p(-q) + np.log(q)
    expected = (np.exp(log_p) * (log_p - log_q)).sum(0)
    close(D.kl_divergence(D.Geometric(t64(p)), D.Geometric(t64(q))), expected)
    check_grads(lambda a: D.Geometric(a).kl_divergence(D.Geometric(t64(q))), p)


def test_geometric_samples_have_its_mean():
    paddle.seed(0)
    draws = D.Geometric(t64([0.3, 0.8])).sample([40000]).numpy()
    np.testing.assert_allclose(draws.mean(0), [0.7 / 0.3, 0.2 / 0.8], rtol=0.03)
    assert (draws == np.floor(draws)).all() and (draws >= 0).all()


# ---------------------------------------------------------------- Poisson

def test_poisson_log_prob_entropy_and_kl_over_the_support():
    rate, x = np.array([0.5, 3.0]), np.array([1.0, 2.0])
    d = D.Poisson(t64(rate))
    close(d.log_prob(t64(x)), x * np.log(rate) - rate - lgamma(x + 1))
    counts = np.arange(200.0)[:, None]
    log_pmf = counts * np.log(rate) - rate - lgamma(counts + 1)
    close(d.entropy(), -(np.exp(log_pmf) * log_pmf).sum(0))
    q = np.array([1.0, 2.0])
    log_q = counts * np.log(q) - q - lgamma(counts + 1)
    close(D.kl_divergence(d, D.Poisson(t64(q))), (np.exp(log_pmf) * (log_pmf - log_q)).sum(0))
    check_grads(lambda r: D.Poisson(r).log_prob(t64(x)) + D.Poisson(r).entropy(), rate)


def test_poisson_impossible_counts_have_log_prob_minus_inf():
    """Paddle maps these -inf to -eps, a probability of about 1."""
    d = D.Poisson(paddle.to_tensor([0.0, 2.0]))
    close(d.log_prob(paddle.to_tensor([0.0, -1.0])), [0.0, -np.inf])
    close(d.log_prob(paddle.to_tensor([1.0, 0.0])), [-np.inf, -2.0])
    close(d.entropy()[0], 0.0)
    kl = D.kl_divergence(D.Poisson(paddle.to_tensor([1.0])), D.Poisson(paddle.to_tensor([0.0])))
    close(kl, [np.inf])


def test_poisson_converts_numbers_to_one_element_tensors():
    d = D.Poisson(2.0)
    assert d.rate.shape == [1] and d.batch_shape == (1,)
    assert D.Poisson(t64([1.0])).sample([3]).dtype == paddle.float64
    with pytest.raises(ValueError):
        D.kl_divergence(D.Poisson(t64([1.0])), D.Poisson(t64([1.0, 2.0])))


# ---------------------------------------------------------------- Binomial

def test_binomial_log_prob_entropy_and_kl_over_the_support():
    n, p, x = np.array([10.0, 5.0]), np.array([0.3, 0.8]), np.array([3.0, 5.0])

    def log_pmf(k, prob):
        with np.errstate(divide="ignore", invalid="ignore"):
            comb = lgamma(n + 1) - lgamma(np.maximum(n - k, 0) + 1) - lgamma(k + 1)
            value = comb + k * np.log(prob) + (n - k) * np.log1p(-prob)
        return np.where(k > n, -np.inf, value)

    d = D.Binomial(paddle.to_tensor([10, 5]), t64(p))
    close(d.log_prob(t64(x)), log_pmf(x, p))
    close(d.mean, n * p)
    close(d.variance, n * p * (1 - p))
    counts = np.arange(11.0)[:, None]
    lp, q = log_pmf(counts, p), np.array([0.4, 0.5])
    lq, possible = log_pmf(counts, q), np.isfinite(lp)
    close(d.entropy(), -(np.exp(lp) * np.where(possible, lp, 0)).sum(0))
    kl = (np.exp(lp) * np.where(possible, lp - np.where(possible, lq, 0), 0)).sum(0)
    close(D.kl_divergence(d, D.Binomial(paddle.to_tensor([10, 5]), t64(q))), kl)
    check_grads(lambda a: D.Binomial(paddle.to_tensor([10, 5]), a).log_prob(t64(x))
                + D.Binomial(paddle.to_tensor([10, 5]), a).entropy(), p)


def test_binomial_counts_outside_zero_to_n_have_log_prob_minus_inf():
    """Paddle maps these -inf to -eps, a probability of about 1."""
    log_prob = D.Binomial(10, 0.3).log_prob(paddle.to_tensor([11.0, -1.0]))
    close(log_prob, [-np.inf, -np.inf])


def test_binomial_conversions_and_samples():
    d = D.Binomial(10, paddle.to_tensor([0.3, 0.8]))
    assert d.total_count.dtype == paddle.float32 and d.batch_shape == (2,)
    paddle.seed(0)
    draws = d.sample([20000])
    assert draws.dtype == paddle.float32 and draws.shape == [20000, 2]
    np.testing.assert_allclose(draws.numpy().mean(0), [3.0, 8.0], rtol=0.02)


# ---------------------------------------------------------------- Multinomial

def test_multinomial_log_prob_and_entropy_by_enumeration():
    probs, n = np.array([0.2, 0.3, 0.5]), 4
    d = D.Multinomial(n, t64(probs))
    outcomes = np.array([(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a)],
                        np.float64)
    log_pmf = (math.lgamma(n + 1) - lgamma(outcomes + 1).sum(1)
               + (outcomes * np.log(probs)).sum(1))
    close(d.log_prob(t64(outcomes)), log_pmf)
    close(d.entropy(), -(np.exp(log_pmf) * log_pmf).sum())
    close(d.mean, n * probs)
    close(d.variance, n * probs * (1 - probs))
    check_grads(lambda p: D.Multinomial(n, p).log_prob(t64([1.0, 1.0, 2.0]))
                + D.Multinomial(n, p).entropy(), probs)


def test_multinomial_with_a_zero_probability_category():
    """A category of probability 0 is a Binomial over the others; Paddle's entropy
    is nan there."""
    d = D.Multinomial(5, paddle.to_tensor([0.0, 1.0, 1.0]))
    counts = np.arange(6.0)
    log_pmf = lgamma(6) - lgamma(counts + 1) - lgamma(6 - counts) + 5 * math.log(0.5)
    close(d.entropy(), -(np.exp(log_pmf) * log_pmf).sum(), rtol=1e-5)
    close(d.log_prob(paddle.to_tensor([0, 2, 3])), log_pmf[2], rtol=1e-5)
    close(d.log_prob(paddle.to_tensor([1.0, 1.0, 3.0])), -np.inf)


def test_multinomial_samples_and_errors():
    paddle.seed(0)
    draws = D.Multinomial(10, paddle.to_tensor([[1.0, 1.0, 2.0], [0.0, 1.0, 1.0]])).sample([5000])
    assert draws.shape == [5000, 2, 3]
    np.testing.assert_array_equal(draws.numpy().sum(-1), 10)
    np.testing.assert_allclose(draws.numpy().mean(0), [[2.5, 2.5, 5.0], [0, 5, 5]], atol=0.1)
    with pytest.raises(ValueError):
        D.Multinomial(0, paddle.to_tensor([0.5, 0.5]))


# ---------------------------------------------------------------- Independent

def test_independent_sums_the_reinterpreted_axes():
    loc, scale = np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([[1.0, 2.0], [1.0, 0.5]])
    base = D.Normal(t64(loc), t64(scale))
    x = t64([[0.5, 0.5], [0.1, 0.2]])
    one = D.Independent(base, 1)
    assert (one.batch_shape, one.event_shape) == ((2,), (2,))
    close(one.log_prob(x), base.log_prob(x).numpy().sum(-1))
    close(one.entropy(), base.entropy().numpy().sum(-1))
    both = D.Independent(base, 2)
    assert (both.batch_shape, both.event_shape) == ((), (2, 2))
    close(both.log_prob(x), base.log_prob(x).numpy().sum())
    for rank in (0, 3):
        with pytest.raises(ValueError):
            D.Independent(base, rank)


# ---------------------------------------------------------------- StudentT

def test_student_t_density_entropy_and_moments():
    df, loc, scale = np.array([3.0, 1.5]), np.array([0.0, 1.0]), np.array([1.0, 2.0])
    x = np.array([0.5, -2.0])
    d = D.StudentT(t64(df), t64(loc), t64(scale))
    y = (x - loc) / scale
    log_norm = (np.log(scale) + 0.5 * np.log(df * math.pi) + lgamma(df / 2)
                - lgamma((df + 1) / 2))
    close(d.log_prob(t64(x)), -(df + 1) / 2 * np.log1p(y ** 2 / df) - log_norm)
    grid = np.linspace(-400, 400, 800001)[:, None]
    density = np.exp(d.log_prob(t64(np.broadcast_to(grid, (grid.shape[0], 2)))).numpy())
    entropy = -(density * np.log(density)).sum(0) * (grid[1, 0] - grid[0, 0])
    close(d.entropy(), entropy, rtol=2e-3)
    moments = D.StudentT(t64([0.5, 1.5, 3.0]), t64([1.0, 1.0, 1.0]), t64([2.0, 2.0, 2.0]))
    close(moments.mean, [np.nan, 1.0, 1.0])
    close(moments.variance, [np.nan, np.inf, 4.0 * 3.0])
    check_grads(lambda a, m, s: D.StudentT(a, m, s).log_prob(t64(x))
                + D.StudentT(a, m, s).entropy(), df, loc, scale)


def test_student_t_conversions_and_errors():
    d = D.StudentT(paddle.to_tensor([3.0, 1.5]), 0.0, paddle.to_tensor([[1.0], [2.0]]))
    assert d.batch_shape == (2, 2) and d.sample([3]).shape == [3, 2, 2]
    with pytest.raises(ValueError):
        D.StudentT(-1.0, 0.0, 1.0)
    with pytest.raises(TypeError):
        D.StudentT(3, 0, 1)


# ---------------------------------------------------------------- Chi2

def test_chi2_is_the_gamma_of_half_df_and_rate_one_half():
    df, x = np.array([2.0, 5.0]), np.array([1.0, 3.0])
    d = D.Chi2(t64(df))
    k = df / 2
    close(d.log_prob(t64(x)), (k - 1) * np.log(x) - x / 2 - k * math.log(2) - lgamma(k))
    close(d.mean, df)
    close(d.variance, 2 * df)
    assert isinstance(d, D.Gamma)
    kl = D.kl_divergence(d, D.Chi2(t64([3.0, 3.0])))
    gamma_kl = D.kl_divergence(D.Gamma(t64(k), t64([0.5, 0.5])),
                               D.Gamma(t64([1.5, 1.5]), t64([0.5, 0.5])))
    close(kl, gamma_kl.numpy())
    with pytest.raises(ValueError):
        D.Chi2(-3.0)


# ---------------------------------------------------------------- MultivariateNormal

COV = np.array([[2.0, 0.5], [0.5, 1.0]])


def mvn_log_density(x, mean, cov):
    diff = x - mean
    solved = np.linalg.solve(cov, diff[..., None])[..., 0]
    return -0.5 * ((diff * solved).sum(-1) + len(mean) * math.log(2 * math.pi)
                   + np.log(np.linalg.det(cov)))


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_each_parameterization(kind):
    given = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV),
             "scale_tril": np.linalg.cholesky(COV)}[kind]
    mean = np.array([1.0, -1.0])
    d = D.MultivariateNormal(t64(mean), **{kind: t64(given)})
    x = np.array([[0.3, 0.2], [1.0, 1.0], [0.0, 0.0]])
    close(d.log_prob(t64(x)), mvn_log_density(x, mean, COV))
    close(d.entropy(), 0.5 * (2 * (1 + math.log(2 * math.pi)) + math.log(np.linalg.det(COV))))
    close(d.variance, np.diag(COV))
    assert getattr(d, kind) is not None and (d.batch_shape, d.event_shape) == ((), (2,))


def test_multivariate_normal_batches_kl_and_gradients():
    means = np.array([[1.0, -1.0], [0.0, 0.0], [2.0, 1.0]])
    d = D.MultivariateNormal(t64(means), covariance_matrix=t64(COV))
    assert d.batch_shape == (3,) and d.sample([4]).shape == [4, 3, 2]
    close(d.log_prob(t64([0.3, 0.2])),
          [mvn_log_density(np.array([0.3, 0.2]), m, COV) for m in means])
    cov2, mean2 = np.array([[1.0, -0.2], [-0.2, 2.0]]), np.array([0.0, 0.5])
    diff = mean2 - means[0]
    kl = 0.5 * (np.trace(np.linalg.solve(cov2, COV)) + diff @ np.linalg.solve(cov2, diff) - 2
                + math.log(np.linalg.det(cov2) / np.linalg.det(COV)))
    p = D.MultivariateNormal(t64(means[0]), covariance_matrix=t64(COV))
    close(D.kl_divergence(p, D.MultivariateNormal(t64(mean2), covariance_matrix=t64(cov2))), kl)
    # The covariance enters symmetrised: cholesky reads one triangle only.
    check_grads(lambda m, c: D.MultivariateNormal(m, covariance_matrix=(c + c.T) / 2).log_prob(
        t64([0.3, 0.2])), means[0], COV)
    loc = t64(means[0], stop_gradient=False)
    draws = D.MultivariateNormal(loc, scale_tril=t64(np.linalg.cholesky(COV))).rsample([3])
    close(paddle.grad(draws.sum(), [loc])[0], [3.0, 3.0])
    with pytest.raises(ValueError):
        D.MultivariateNormal(t64(means[0]))


def test_multivariate_normal_samples_have_its_covariance():
    paddle.seed(0)
    draws = D.MultivariateNormal(t64([1.0, -1.0]), covariance_matrix=t64(COV)).sample([40000])
    np.testing.assert_allclose(np.cov(draws.numpy().T), COV, atol=0.05)


# ---------------------------------------------------------------- KL and zero probabilities

def test_exponential_family_kl_is_the_bregman_divergence_of_the_log_normalizer():
    """A subclass registered for no pair uses the (ExponentialFamily,
    ExponentialFamily) Bregman divergence, which for two Exponentials is the closed
    form ``log(a / b) + b / a - 1``."""
    class Rate(D.ExponentialFamily):
        def __init__(self, rate):
            self.rate = rate
            super().__init__(rate.shape)

        @property
        def _natural_parameters(self):
            return (-self.rate,)

        def _log_normalizer(self, x):
            return -paddle.log(-x)

    a, b = np.array([0.5, 2.0]), np.array([1.0, 3.0])
    close(D.kl_divergence(Rate(t64(a)), Rate(t64(b))), np.log(a / b) + b / a - 1)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(Rate(t64(a)), D.Exponential(t64(b)))


def test_categorical_entropy_and_kl_with_a_zero_probability_category():
    """0 log 0 = 0: a logit of -inf leaves the entropy of the other categories
    (Paddle's is nan)."""
    d = D.Categorical(paddle.to_tensor([float("-inf"), 0.0, 0.0]))
    close(d.entropy(), math.log(2), rtol=1e-6)
    q = D.Categorical(paddle.to_tensor([0.0, 0.0, math.log(2.0)]))
    close(D.kl_divergence(d, q), [0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.5)],
          rtol=1e-6)
