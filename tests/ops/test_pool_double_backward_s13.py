"""Second-order gradients through pooling: the VJPs of the pooling gradient
primitives (avg_pool2d_grad, adaptive_avg_pool2d_grad, max_pool2d_grad) against
finite differences and their adjoint identities, and gradient penalties through
the functional pools, eager and compiled, against float64 finite differences.

Paddle 3.3 takes double backward through avg_pool1d/2d and adaptive_avg_pool1d/2d
and raises for max pooling and the 3-D pools; irflow differentiates all of them."""
import math

import numpy as np
import pytest

import irflow as paddle
from irflow.codegen import run
from tests.support.opcheck import apply_op, check_op_vjp, types_of, vjp_function

F = paddle.nn.functional

POOL_GEOMETRIES = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((1, 2, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 5, 6), {"kernel_size": (2, 3), "stride": (1, 2), "padding": (0, 1, 1, 0),
                    "ceil_mode": True}),
    ((2, 1, 5, 5), {"kernel_size": 3, "stride": 1, "padding": 1}),
]


def normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def distinct(*shape, seed=0):
    """Values 0.1 apart: every window has one maximum, far from ties."""
    return np.random.default_rng(seed).permutation(math.prod(shape)).reshape(shape) * 0.1


def pooled(name, x, **attrs):
    return apply_op(name, [x], **attrs)[0]


@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("x_shape, attrs", POOL_GEOMETRIES)
def test_avg_pool2d_grad_vjp(x_shape, attrs, exclusive):
    """avg_pool2d_grad is linear in g; its VJP (avg_pool2d of the cotangent) matches
    central differences, the divisors at the padded and ceil_mode edges included."""
    attrs = {**attrs, "exclusive": exclusive}
    g = normal(*pooled("avg_pool2d", normal(*x_shape), **attrs).shape, seed=1)
    check_op_vjp("avg_pool2d_grad", [g], {"input_hw": x_shape[2:], **attrs})


@pytest.mark.parametrize("x_shape, output_size", [((2, 3, 6, 6), (2, 2)),
                                                  ((1, 2, 7, 5), (3, 4)),
                                                  ((1, 1, 5, 3), (5, 3))])
def test_adaptive_avg_pool2d_grad_vjp(x_shape, output_size):
    g = normal(*x_shape[:2], *output_size, seed=2)
    check_op_vjp("adaptive_avg_pool2d_grad", [g], {"input_hw": x_shape[2:]})


@pytest.mark.parametrize("x_shape, attrs", POOL_GEOMETRIES)
def test_max_pool2d_grad_vjp(x_shape, attrs):
    """Linear in g (the cotangent read at each window's maximum), constant in x away
    from ties: both match central differences, x's being zero."""
    x = distinct(*x_shape, seed=3)
    g = normal(*pooled("max_pool2d", x, **attrs).shape, seed=4)
    grads = check_op_vjp("max_pool2d_grad", [x, g], attrs)
    np.testing.assert_array_equal(grads[0], np.zeros(x_shape))


@pytest.mark.parametrize("x_shape, attrs", POOL_GEOMETRIES)
def test_max_pool2d_grad_vjp_is_its_adjoint_on_ties_and_nans(x_shape, attrs):
    """With ties and NaNs (where finite differences do not apply) the VJP is still the
    transpose of max_pool2d_grad's map of g: <max_pool2d_grad(x, g), c> = <g, vjp(c)>,
    so it reads c where max_pool2d_grad put g (the first maximum, a NaN first)."""
    x = np.random.default_rng(5).integers(0, 3, x_shape).astype(np.float64)
    x.reshape(-1)[::7] = np.nan
    g = normal(*pooled("max_pool2d", x, **attrs).shape, seed=6)
    c = normal(*x_shape, seed=7)
    (dx,) = apply_op("max_pool2d_grad", [x, g], **attrs)
    _, dg = run(vjp_function("max_pool2d_grad", types_of([x, g]), attrs), x, g, c)
    assert np.vdot(dx, c) == pytest.approx(np.vdot(g, dg), rel=1e-12)


def penalty(pool, x):
    """A gradient penalty: |d/dx sum(tanh(pool(x))^2)|^2, whose gradient needs the
    second derivative through the pool."""
    (g,) = paddle.grad((paddle.tanh(pool(x)) ** 2).sum(), x, create_graph=True)
    return (g * g).sum()


def first_gradient(pool, xn):
    x = paddle.to_tensor(xn, stop_gradient=False)
    (g,) = paddle.grad((paddle.tanh(pool(x)) ** 2).sum(), x)
    return g.numpy()


def penalty_gradient_by_differences(pool, xn, eps=1e-6):
    """d penalty / dx by central differences of the first gradient (itself checked
    against finite differences by the pools' first-order tests)."""
    fd = np.zeros(xn.shape)
    for k in range(xn.size):
        up, down = xn.copy(), xn.copy()
        up.reshape(-1)[k] += eps
        down.reshape(-1)[k] -= eps
        fd.reshape(-1)[k] = (np.sum(first_gradient(pool, up) ** 2)
                             - np.sum(first_gradient(pool, down) ** 2)) / (2 * eps)
    return fd


def penalty_gradient(pool, xn, compile_mode=None):
    x = paddle.to_tensor(xn, stop_gradient=False)
    fn = lambda x: penalty(pool, x)  # noqa: E731
    if compile_mode == "to_static":
        fn = paddle.jit.to_static(fn)
    elif compile_mode is not None:
        fn = paddle.compile(fn, backend=compile_mode)
    fn(x).backward()
    return x.grad.numpy()


POOLS = {
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), (1, 2, 4, 4)),
    "avg_pool2d_padded_ceil": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                      ceil_mode=True), (1, 2, 5, 4)),
    "avg_pool2d_inclusive": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                    exclusive=False), (1, 2, 5, 4)),
    "avg_pool2d_nhwc": (lambda x: F.avg_pool2d(x, 2, stride=1, data_format="NHWC"),
                        (1, 3, 4, 2)),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, stride=2, padding=1), (2, 2, 7)),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 2, padding=1), (1, 1, 3, 3, 4)),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (1, 2, 5, 4)),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), (2, 2, 7)),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 2, 3)), (1, 1, 3, 3, 4)),
    "lp_pool2d": (lambda x: F.lp_pool2d(x, 2, 2), (1, 2, 4, 4)),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1), (1, 2, 5, 4)),
    "max_pool1d": (lambda x: F.max_pool1d(x, 2), (2, 2, 6)),
    "max_pool3d": (lambda x: F.max_pool3d(x, 2), (1, 1, 4, 2, 4)),
}


@pytest.mark.parametrize("name", POOLS)
def test_gradient_penalty_through_a_pool_matches_finite_differences(name):
    pool, shape = POOLS[name]
    xn = distinct(*shape, seed=8) - 0.05 * math.prod(shape)  # centred, tanh not saturated
    np.testing.assert_allclose(penalty_gradient(pool, xn),
                               penalty_gradient_by_differences(pool, xn),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("compile_mode", ["to_static", "numpy", "llvm"])
@pytest.mark.parametrize("name", ["avg_pool2d_padded_ceil", "adaptive_avg_pool2d",
                                  "max_pool2d"])
def test_compiled_gradient_penalty_through_a_pool_matches_eager(name, compile_mode):
    pool, shape = POOLS[name]
    xn = distinct(*shape, seed=9) - 0.05 * math.prod(shape)
    np.testing.assert_allclose(penalty_gradient(pool, xn, compile_mode),
                               penalty_gradient(pool, xn), rtol=1e-12, atol=1e-14)
