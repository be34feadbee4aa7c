"""Special functions, floating-point helpers, integer arithmetic, trapezoid rules,
distances, addmm / baddbmm and renorm (irflow/tensor/special.py): values against
NumPy or closed forms, gradients against finite differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, ShapeError
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads


def t(values, dtype="float64"):
    return paddle.to_tensor(np.asarray(values, dtype=dtype))


# ---------------------------------------------------------------- gamma family

def _polygamma_reference(x: float, n: int) -> float:
    """(-1)**(n+1) n! sum_k (x + k)**-(n+1), the series summed to 10**5 terms plus
    its integral tail (and the half-term correction), for n >= 1."""
    k = np.arange(100_000, dtype=np.float64)
    total = np.sum((x + k) ** -(n + 1.0))
    end = x + 100_000
    total += end ** -n / n + 0.5 * end ** -(n + 1.0)
    return (-1) ** (n + 1) * math.factorial(n) * total


def test_gammaln_is_lgamma_with_its_gradient():
    x = [0.5, 2.5, 7.0, -1.5]
    np.testing.assert_allclose(paddle.gammaln(t(x)).numpy(), [math.lgamma(v) for v in x])
    check_grads(paddle.gammaln, np.array(x))
    assert t(x).gammaln().shape == [4]


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_matches_the_hurwitz_series(n):
    x = [0.3, 1.0, 2.5, 7.25, 40.0, -1.5, -3.7]
    expected = [_polygamma_reference(v, n) for v in x]
    np.testing.assert_allclose(paddle.polygamma(t(x), n).numpy(), expected, rtol=1e-9)


def test_polygamma_known_values_poles_and_order_zero():
    # psi'(1) = pi**2 / 6, psi''(1) = -2 zeta(3)
    zeta3 = 1.2020569031595942
    np.testing.assert_allclose(paddle.polygamma(t([1.0]), 1).numpy(), [math.pi ** 2 / 6])
    np.testing.assert_allclose(paddle.polygamma(t([1.0]), 2).numpy(), [-2 * zeta3])
    np.testing.assert_array_equal(paddle.polygamma(t([0.0, -2.0]), 1).numpy(), [np.inf] * 2)
    np.testing.assert_array_equal(paddle.polygamma(t([0.0]), 2).numpy(), [-np.inf])
    np.testing.assert_allclose(paddle.polygamma(t([2.5]), 0).numpy(),
                               paddle.digamma(t([2.5])).numpy())
    assert paddle.polygamma(paddle.to_tensor([1, 2]), 1).dtype == paddle.float32
    with pytest.raises(ValueError, match="n must be an integer >= 0"):
        paddle.polygamma(t([1.0]), -1)


def test_polygamma_gradient_is_the_next_order():
    x = np.array([0.7, 2.5, -1.5, 9.0])
    for n in (0, 1, 2):
        check_grads(lambda v: paddle.polygamma(v, n), x, rtol=1e-6)


def test_multigammaln_sums_shifted_lgammas():
    x = np.array([2.5, 3.0, 10.0])
    expected = [3 * 2 / 4 * math.log(math.pi) + sum(math.lgamma(v - j / 2) for j in range(3))
                for v in x]
    np.testing.assert_allclose(paddle.multigammaln(t(x), 3).numpy(), expected)
    check_grads(lambda v: paddle.multigammaln(v, 3), x)
    with pytest.raises(ValueError, match="p must be an integer >= 1"):
        paddle.multigammaln(t(x), 0)


def _lower_gamma_integer_shape(a: int, y: float) -> float:
    """P(a, y) = 1 - exp(-y) sum_{k<a} y**k / k! for an integer a."""
    return 1 - math.exp(-y) * sum(y ** k / math.factorial(k) for k in range(a))


def test_gammainc_closed_forms_for_integer_and_half_shapes():
    shapes, limits = [], []
    for a in (1, 2, 5, 30):
        for y in (0.1, 1.0, 4.0, 29.0, 60.0):
            shapes.append(a)
            limits.append(y)
    expected = [_lower_gamma_integer_shape(a, y) for a, y in zip(shapes, limits)]
    np.testing.assert_allclose(paddle.gammainc(t(shapes), t(limits)).numpy(), expected,
                               rtol=1e-10, atol=1e-14)
    # P(1/2, y) = erf(sqrt(y))
    y = [0.01, 0.5, 2.0, 9.0]
    np.testing.assert_allclose(paddle.gammainc(t([0.5] * 4), t(y)).numpy(),
                               [math.erf(math.sqrt(v)) for v in y], rtol=1e-12)


def test_gammaincc_is_the_complement_and_accurate_in_the_tail():
    a, y = t([0.5, 3.0, 5.0]), t([1.0, 50.0, 0.2])
    np.testing.assert_allclose((paddle.gammainc(a, y) + paddle.gammaincc(a, y)).numpy(), 1.0)
    # Q(3, 50) = exp(-50) (1 + 50 + 1250), far below 1 - P's resolution
    np.testing.assert_allclose(paddle.gammaincc(t([3.0]), t([50.0])).numpy(),
                               [math.exp(-50) * 1301], rtol=1e-10)


def test_gammainc_edges_and_broadcasting():
    nan = float("nan")
    out = paddle.gammainc(t([0.0, 2.0, 1.0, 2.0, -1.0, nan]),
                          t([1.0, 0.0, np.inf, -1.0, 1.0, 1.0])).numpy()
    np.testing.assert_array_equal(out[:3], [1.0, 0.0, 1.0])
    assert np.isnan(out[3:]).all()
    grid = paddle.gammainc(t([[1.0], [2.0]]), t([1.0, 3.0])).numpy()
    expected = [[_lower_gamma_integer_shape(a, y) for y in (1.0, 3.0)] for a in (1, 2)]
    np.testing.assert_allclose(grid, expected, rtol=1e-12)


def test_gammainc_gradient_reaches_only_the_limit():
    a = np.array([0.5, 2.0, 5.0])
    y = np.array([1.0, 3.0, 5.0])
    check_grads(paddle.gammainc, a, y, wrt=[1])
    check_grads(paddle.gammaincc, a, y, wrt=[1])
    shape = paddle.to_tensor(a, stop_gradient=False)
    limit = paddle.to_tensor(y, stop_gradient=False)
    paddle.gammainc(shape, limit).sum().backward()
    assert shape.grad is None and limit.grad is not None


# ---------------------------------------------------------------- Bessel functions

def _bessel_reference(x: float, order: int) -> float:
    """The power series sum_k (x/2)**(2k+order) / (k! (k+order)!), 200 terms in
    float64 (all of one sign, so summed without cancellation)."""
    term = (x / 2) ** order / math.factorial(order)
    total = term
    for k in range(1, 200):
        term *= (x / 2) ** 2 / (k * (k + order))
        total += term
    return total


def test_i0_matches_numpy_over_both_branches():
    x = np.array([0.0, 0.5, -1.0, 3.0, 9.0, -20.0, 29.9, 30.0, 45.0, -80.0, 300.0])
    np.testing.assert_allclose(paddle.i0(t(x)).numpy(), np.i0(x), rtol=1e-13)
    np.testing.assert_allclose(paddle.i0e(t(x)).numpy(), np.i0(x) * np.exp(-np.abs(x)),
                               rtol=1e-13)
    assert paddle.i0e(t([1e5])).numpy()[0] > 0  # i0 overflows there; i0e does not
    assert paddle.i0(paddle.to_tensor([1, 2])).dtype == paddle.float32


def test_i1_matches_its_series_and_is_odd():
    x = np.array([0.0, 0.5, -1.0, 3.0, 9.0, -20.0, 35.0, -60.0])
    expected = np.array([_bessel_reference(v, 1) for v in x])
    np.testing.assert_allclose(paddle.i1(t(x)).numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose(paddle.i1e(t(x)).numpy(), expected * np.exp(-np.abs(x)),
                               rtol=1e-13)


def test_bessel_gradients():
    x = np.array([0.3, -1.0, 3.0, 12.0, 33.0, -40.0])
    for fn in (paddle.i0e, paddle.i1e):
        check_grads(fn, x, rtol=1e-6)
    for fn in (paddle.i0, paddle.i1):  # of moderate size, for the finite differences
        check_grads(fn, x[:4], rtol=1e-6)
    # i0' = i1
    v = paddle.to_tensor(x, stop_gradient=False)
    paddle.i0(v).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), paddle.i1(t(x)).numpy(), rtol=1e-12)


# ---------------------------------------------------------------- floating point

def test_sinc_values_and_gradient():
    x = np.array([0.0, 0.5, -1.0, 2.25, 1e-3])
    np.testing.assert_allclose(paddle.sinc(t(x)).numpy(), np.sinc(x), atol=1e-16)
    check_grads(paddle.sinc, np.array([0.3, -1.25, 2.5]))
    v = paddle.to_tensor([0.0], stop_gradient=False)
    paddle.sinc(v).sum().backward()
    assert v.grad.numpy()[0] == 0.0


def test_hypot_broadcasts_and_differentiates():
    x, y = np.array([[3.0], [-5.0]]), np.array([4.0, 12.0, 0.0])
    np.testing.assert_allclose(paddle.hypot(t(x), t(y)).numpy(), np.hypot(x, y))
    check_grads(paddle.hypot, x, y)
    assert paddle.hypot(paddle.to_tensor([3]), paddle.to_tensor([4])).dtype == paddle.float32


def test_ldexp_and_its_gradient():
    x, e = np.array([1.0, 2.0, -3.0]), np.array([2, -1, 3])
    out = paddle.ldexp(t(x), paddle.to_tensor(e))
    np.testing.assert_array_equal(out.numpy(), np.ldexp(x, e))
    assert out.dtype == paddle.float64
    assert paddle.ldexp(paddle.to_tensor([1, 2]), paddle.to_tensor([1, 1])).dtype == paddle.float32
    check_grads(lambda a: paddle.ldexp(a, paddle.to_tensor(e)), x)


def test_copysign_reads_negative_zero():
    x, y = np.array([1.0, -2.0, 3.0, 0.0]), np.array([-1.0, 2.0, -0.0, -1.0])
    out = paddle.copysign(t(x), t(y)).numpy()
    np.testing.assert_array_equal(out, np.copysign(x, y))
    assert np.signbit(out[3])
    ints = paddle.copysign(paddle.to_tensor([1, -2]), paddle.to_tensor([-1, 2]))
    assert ints.dtype == paddle.int64 and ints.numpy().tolist() == [-1, 2]
    check_grads(lambda a: paddle.copysign(a, t(y)), np.array([1.0, -2.0, 3.0, 0.5]))


def test_frexp_matches_numpy():
    x = np.array([8.0, 0.0, -3.0, 0.3, 1e-310, 1.7e308, -0.75, 2.0 ** 52, np.inf])
    mantissa, exponent = paddle.frexp(t(x))
    m, e = np.frexp(x)
    np.testing.assert_array_equal(mantissa.numpy(), m)
    np.testing.assert_array_equal(exponent.numpy(), e.astype(np.float64))
    assert exponent.dtype == paddle.float64
    x32 = np.array([1e-45, 3.0e38, 1.0 - 2.0 ** -24], np.float32)
    m32, e32 = paddle.frexp(paddle.to_tensor(x32))
    np.testing.assert_array_equal(m32.numpy(), np.frexp(x32)[0])
    np.testing.assert_array_equal(e32.numpy(), np.frexp(x32)[1])
    # (not at a power of two, where the mantissa jumps)
    check_grads(lambda a: paddle.frexp(a)[0], np.array([7.0, 3.0, -0.3]))
    with pytest.raises(DTypeError, match="float32 or float64"):
        paddle.frexp(paddle.to_tensor([1, 2]))


def test_signbit_and_infinity_tests():
    x = np.array([-0.0, 0.0, -2.0, 3.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(paddle.signbit(t(x)).numpy(), np.signbit(x))
    np.testing.assert_array_equal(paddle.isposinf(t(x)).numpy(), np.isposinf(x))
    np.testing.assert_array_equal(paddle.isneginf(t(x)).numpy(), np.isneginf(x))
    assert paddle.isreal(t(x)).numpy().all()
    ints = paddle.to_tensor([-1, 0, 2])
    assert paddle.signbit(ints).numpy().tolist() == [True, False, False]
    assert not paddle.isposinf(ints).numpy().any() and paddle.isposinf(ints).dtype == paddle.bool


# ---------------------------------------------------------------- integers

def test_gcd_and_lcm_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.integers(-10 ** 6, 10 ** 6, size=50)
    y = rng.integers(-10 ** 6, 10 ** 6, size=50)
    x[:3], y[:3] = [0, 0, 7], [0, 5, 0]
    np.testing.assert_array_equal(paddle.gcd(paddle.to_tensor(x), paddle.to_tensor(y)).numpy(),
                                  np.gcd(x, y))
    np.testing.assert_array_equal(paddle.lcm(paddle.to_tensor(x), paddle.to_tensor(y)).numpy(),
                                  np.lcm(x, y))
    # consecutive Fibonacci numbers take Euclid's longest path
    fib = [1, 1]
    while fib[-1] < 2 ** 62:
        fib.append(fib[-1] + fib[-2])
    big = paddle.gcd(paddle.to_tensor([fib[-2]]), paddle.to_tensor([fib[-3]]))
    assert big.numpy().tolist() == [1]
    grid = paddle.gcd(paddle.to_tensor([[12], [3]], dtype="int32"),
                      paddle.to_tensor([18, 8], dtype="int32"))
    assert grid.dtype == paddle.int32 and grid.numpy().tolist() == [[6, 4], [3, 1]]
    with pytest.raises(DTypeError, match="integer tensors"):
        paddle.gcd(t([1.0]), t([2.0]))


# ---------------------------------------------------------------- integration

def test_trapezoid_with_dx_x_and_axis():
    y = np.array([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]])
    np.testing.assert_allclose(paddle.trapezoid(t(y)).numpy(), np.trapezoid(y))
    np.testing.assert_allclose(paddle.trapezoid(t(y), dx=0.5, axis=0).numpy(),
                               np.trapezoid(y, dx=0.5, axis=0))
    x1 = np.array([0.0, 1.0, 3.0])
    np.testing.assert_allclose(paddle.trapezoid(t(y), x=t(x1)).numpy(), np.trapezoid(y, x1))
    x2 = np.array([[0.0, 1.0, 3.0], [0.0, 2.0, 3.0]])
    np.testing.assert_allclose(paddle.trapezoid(t(y), x=t(x2)).numpy(), np.trapezoid(y, x2))
    with pytest.raises(ValueError, match="not both"):
        paddle.trapezoid(t(y), x=t(x1), dx=1.0)
    check_grads(lambda a, b: paddle.trapezoid(a, x=b), y, x1)


def test_cumulative_trapezoid_is_the_running_integral():
    y = np.array([[1.0, 2.0, 4.0], [0.0, 1.0, 3.0]])
    x = np.array([0.0, 1.0, 3.0])
    steps = (y[:, 1:] + y[:, :-1]) / 2 * np.diff(x)
    np.testing.assert_allclose(paddle.cumulative_trapezoid(t(y), x=t(x)).numpy(),
                               np.cumsum(steps, axis=1))
    down = paddle.cumulative_trapezoid(t(y), axis=0).numpy()
    np.testing.assert_allclose(down, (y[1:] + y[:-1]) / 2)
    check_grads(lambda a: paddle.cumulative_trapezoid(a, dx=0.5), y)


# ---------------------------------------------------------------- distances

def _minkowski(u, v, p):
    d = np.abs(u - v)
    if p == 0:
        return float(np.count_nonzero(d))
    if p == np.inf:
        return float(d.max())
    return float(np.sum(d ** p) ** (1 / p))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, np.inf])
def test_cdist_and_pdist_match_pairwise_norms(p):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    expected = [[_minkowski(u, v, p) for v in b] for u in a]
    np.testing.assert_allclose(paddle.cdist(t(a), t(b), p).numpy(), expected, rtol=1e-12)
    pairs = [_minkowski(a[i], a[j], p) for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_allclose(paddle.pdist(t(a), p).numpy(), pairs, rtol=1e-12)


def test_cdist_batches_and_gradients():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((1, 5, 4))
    out = paddle.cdist(t(a), t(b)).numpy()
    assert out.shape == (2, 3, 5)
    np.testing.assert_allclose(out[1, 2, 4], np.linalg.norm(a[1, 2] - b[0, 4]))
    check_grads(paddle.cdist, a, b)
    check_grads(lambda u: paddle.pdist(u, 3.0), rng.standard_normal((4, 2)))
    # a zero distance has gradient 0, as Paddle's
    u = paddle.to_tensor(np.zeros((2, 2)), stop_gradient=False)
    paddle.pdist(u).sum().backward()
    np.testing.assert_array_equal(u.grad.numpy(), np.zeros((2, 2)))
    with pytest.raises(ShapeError, match="cdist"):
        paddle.cdist(t(a), t(rng.standard_normal((5, 3))))


# ---------------------------------------------------------------- products and norms

def test_addmm_and_baddbmm():
    rng = np.random.default_rng(3)
    inp, x, y = rng.standard_normal(2), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    np.testing.assert_allclose(paddle.addmm(t(inp), t(x), t(y), beta=0.5, alpha=2.0).numpy(),
                               0.5 * inp + 2.0 * x @ y)
    check_grads(lambda i, a, b: paddle.addmm(i, a, b, 0.5, 2.0), inp, x, y)
    bi, bx, by = (rng.standard_normal(s) for s in ((2, 3, 2), (2, 3, 4), (2, 4, 2)))
    np.testing.assert_allclose(paddle.baddbmm(t(bi), t(bx), t(by), 0.5, 2.0).numpy(),
                               0.5 * bi + 2.0 * bx @ by)
    check_grads(lambda i, a, b: paddle.baddbmm(i, a, b, 0.5, 2.0), bi, bx, by)
    with pytest.raises(ShapeError):
        paddle.addmm(t(np.ones(3)), t(x), t(y))
    with pytest.raises(ShapeError, match="2-D"):
        paddle.addmm(t(inp), t(np.ones(4)), t(y))


def test_renorm_scales_only_slices_over_the_limit():
    x = np.array([[1.0, 2.0, 2.0], [0.1, 0.2, 0.2], [3.0, 0.0, 4.0]])
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    expected = np.where(norms > 1.0, x / (norms + 1e-7), x)
    np.testing.assert_allclose(paddle.renorm(t(x), 2.0, 0, 1.0).numpy(), expected)
    columns = np.abs(x).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(paddle.renorm(t(x), 1.0, -1, 2.0).numpy(),
                               np.where(columns > 2.0, x * 2.0 / (columns + 1e-7), x))
    check_grads(lambda a: paddle.renorm(a, 2.0, 0, 1.0), x)


# ---------------------------------------------------------------- methods and compiling

def test_methods_and_in_place_variants():
    x = t([3.0, 5.0])
    assert np.allclose(x.hypot(t([4.0, 12.0])).numpy(), [5.0, 13.0])
    assert x.hypot_(t([4.0, 12.0])) is x
    np.testing.assert_allclose(x.numpy(), [5.0, 13.0])
    n = paddle.to_tensor([12, 20])
    n.gcd_(paddle.to_tensor([18, 8]))
    assert n.numpy().tolist() == [6, 4]
    for name in ("gammaln", "polygamma", "i0", "i1e", "frexp", "signbit", "cdist", "addmm",
                 "renorm", "trapezoid", "isposinf"):
        assert hasattr(paddle.Tensor, name)
    for name in ("i0_", "sinc_", "ldexp_", "lcm_", "baddbmm_", "renorm_", "gammainc_"):
        assert hasattr(paddle.Tensor, name)


def test_compiled_matches_eager():
    def program(a, b):
        return (paddle.polygamma(a, 2) + paddle.gammainc(a, b) + paddle.i1(b)
                + paddle.sinc(b) + paddle.hypot(a, b) + paddle.frexp(b)[0]
                + paddle.cdist(paddle.unsqueeze(a, -1), paddle.unsqueeze(b, -1)).sum(-1)
                + paddle.trapezoid(b))
    a = np.array([0.5, 2.0, 3.5, 7.0], np.float32)
    b = np.array([1.0, 0.3, 4.0, 40.0], np.float32)
    static = paddle.jit.to_static(program, input_spec=[InputSpec([4], "float32")] * 2)
    np.testing.assert_allclose(static(paddle.to_tensor(a), paddle.to_tensor(b)).numpy(),
                               program(paddle.to_tensor(a), paddle.to_tensor(b)).numpy(),
                               rtol=1e-6)


def test_compiled_integer_and_product_functions_match_eager():
    """Traced, gcd runs all of Euclid's bounded steps (eagerly it stops early)."""
    def integers(a, b):
        return paddle.gcd(a, b) * 1000 + paddle.lcm(a, b)

    def products(m, v):
        return paddle.renorm(paddle.addmm(v, m, m, 0.5, 2.0), 2.0, 0, 1.0)

    a, b = np.array([12, -20, 0, 7], np.int64), np.array([18, 8, 5, 0], np.int64)
    static = paddle.jit.to_static(integers, input_spec=[InputSpec([4], "int64")] * 2)
    np.testing.assert_array_equal(static(paddle.to_tensor(a), paddle.to_tensor(b)).numpy(),
                                  np.gcd(a, b) * 1000 + np.lcm(a, b))
    m = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)
    v = np.ones(3, np.float32)
    static = paddle.jit.to_static(products, input_spec=[InputSpec([3, 3], "float32"),
                                                        InputSpec([3], "float32")])
    np.testing.assert_allclose(static(paddle.to_tensor(m), paddle.to_tensor(v)).numpy(),
                               products(paddle.to_tensor(m), paddle.to_tensor(v)).numpy(),
                               rtol=1e-6)
