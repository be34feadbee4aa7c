"""celu, softshrink, hardshrink, tanhshrink, thresholded_relu, softsign, swish, maxout
and Softmax2D; soft_margin, hinge_embedding, cosine_embedding, triplet_margin,
multi_label_soft_margin, poisson_nll and gaussian_nll losses (functional and layers):
values against NumPy references written from the definitions and against numbers
from PaddlePaddle 3.3.1, gradients against finite differences and at the kinks,
compiled programs against eager code, and argument errors."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)) * 2
SIGNS = np.sign(RNG.standard_normal((3, 4, 5)))
BACKENDS = ["numpy", "llvm"]
KINKS = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("fn, ref", [
    (F.celu, lambda x: np.maximum(x, 0) + np.minimum(0, np.expm1(x))),
    (lambda x: F.celu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x / 0.7))),
    (lambda x: F.celu(x, -0.7),
     lambda x: np.maximum(x, 0) + np.minimum(0, -0.7 * np.expm1(x / -0.7))),
    (F.softshrink, lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    (lambda x: F.softshrink(x, 1.5), lambda x: np.sign(x) * np.maximum(np.abs(x) - 1.5, 0)),
    (F.hardshrink, lambda x: np.where(np.abs(x) >= 0.5, x, 0)),
    (lambda x: F.hardshrink(x, 1.5), lambda x: np.where(np.abs(x) >= 1.5, x, 0)),
    (F.tanhshrink, lambda x: x - np.tanh(x)),
    (F.thresholded_relu, lambda x: np.where(x > 1.0, x, 0)),
    (lambda x: F.thresholded_relu(x, -0.5, 0.25), lambda x: np.where(x > -0.5, x, 0.25)),
    (F.softsign, lambda x: x / (1 + np.abs(x))),
    (F.swish, lambda x: x / (1 + np.exp(-x))),
], ids=["celu", "celu_alpha", "celu_negative_alpha", "softshrink", "softshrink_threshold",
        "hardshrink", "hardshrink_threshold", "tanhshrink", "thresholded_relu",
        "thresholded_relu_value", "softsign", "swish"])
def test_activation_values_and_gradients(fn, ref):
    np.testing.assert_allclose(fn(t(X)).numpy(), ref(X), rtol=1e-12, atol=1e-14)
    check_grads(fn, X)


@pytest.mark.parametrize("fn, values, grads", [
    # PaddlePaddle 3.3.1: F.celu(x, 2.0), F.softshrink(x), F.hardshrink(x),
    # F.thresholded_relu(x), F.softsign(x) on float64 [-2, -1, -0.5, 0, 0.5, 1, 2]
    (lambda x: F.celu(x, 2.0),
     [-1.2642411176571153, -0.7869386805747332, -0.44239843385719024, 0.0, 0.5, 1.0, 2.0],
     [0.3678794411714423, 0.6065306597126334, 0.7788007830714049, 1.0, 1.0, 1.0, 1.0]),
    (F.softshrink, [-1.5, -0.5, 0.0, 0.0, 0.0, 0.5, 1.5], [1, 1, 0, 0, 0, 1, 1]),
    (F.hardshrink, KINKS, [1, 1, 1, 0, 1, 1, 1]),
    (F.thresholded_relu, [0, 0, 0, 0, 0, 0, 2.0], [0, 0, 0, 0, 0, 0, 1]),
    (F.softsign, [-2 / 3, -0.5, -1 / 3, 0.0, 1 / 3, 0.5, 2 / 3],
     [0.1111111111111111, 0.25, 0.4444444444444444, 1.0, 0.4444444444444444, 0.25,
      0.1111111111111111]),
], ids=["celu", "softshrink", "hardshrink", "thresholded_relu", "softsign"])
def test_values_and_gradients_at_the_kinks_are_paddles(fn, values, grads):
    """hardshrink keeps x at exactly +-threshold (gradient 1), softshrink and
    thresholded_relu pass no gradient at their thresholds, celu's slope at 0 is 1."""
    x = t(KINKS, stop_gradient=False)
    out = fn(x)
    paddle.sum(out).backward()
    np.testing.assert_allclose(out.numpy(), values, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), grads, rtol=1e-12)


def test_hardshrink_with_a_negative_threshold_keeps_everything():
    np.testing.assert_array_equal(F.hardshrink(t(X), -1.0).numpy(), X)


def test_celu_does_not_overflow_for_a_small_alpha():
    x = t(np.array([100.0, -100.0, 0.5], np.float32), stop_gradient=False)
    out = F.celu(x, 0.01)
    paddle.sum(out).backward()
    np.testing.assert_allclose(out.numpy(), [100.0, -0.01, 0.5], rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1.0])


def np_maxout(x, groups, axis):
    shape = list(x.shape)
    shape[axis:axis + 1] = [shape[axis] // groups, groups]
    return x.reshape(shape).max(axis + 1)


@pytest.mark.parametrize("groups, axis, shape", [
    (2, 1, (2, 6, 3, 4)), (3, 1, (2, 6, 3, 4)), (2, -1, (2, 3, 4, 6)), (3, 3, (2, 3, 4, 6))])
def test_maxout_values_and_gradients(groups, axis, shape):
    x = RNG.standard_normal(shape)
    np.testing.assert_array_equal(F.maxout(t(x), groups, axis).numpy(),
                                  np_maxout(x, groups, axis % 4))
    check_grads(lambda v: F.maxout(v, groups, axis), x)


def test_maxout_gives_a_tie_gradient_to_the_first_channel():
    """PaddlePaddle 3.3.1: F.maxout of [1, 1, 2, 0.5] (channels) with groups 2 gives
    the gradient [1, 0, 1, 0]."""
    x = t(np.array([1.0, 1.0, 2.0, 0.5]).reshape(1, 4, 1, 1), stop_gradient=False)
    paddle.sum(F.maxout(x, 2)).backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel(), [1, 0, 1, 0])


@pytest.mark.parametrize("call, error", [
    (lambda: F.celu(t(X), 0.0), ZeroDivisionError),
    (lambda: F.softshrink(t(X), -0.1), ValueError),
    (lambda: F.maxout(t(np.zeros((2, 6, 3, 3))), 4), ValueError),  # 6 channels, groups 4
    (lambda: F.maxout(t(np.zeros((2, 6, 3, 3))), 1), ValueError),
    (lambda: F.maxout(t(np.zeros((2, 6, 3, 3))), 2, axis=2), ValueError),
    (lambda: F.maxout(t(np.zeros((2, 6, 3))), 2), ValueError),
    (lambda: nn.Softmax2D()(t(np.zeros((2, 3)))), ValueError),
])
def test_activation_argument_errors(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)])
def test_softmax2d_normalizes_the_channels(shape):
    x = RNG.standard_normal(shape)
    e = np.exp(x - x.max(-3, keepdims=True))
    np.testing.assert_allclose(nn.Softmax2D()(t(x)).numpy(), e / e.sum(-3, keepdims=True),
                               rtol=1e-12)


def test_activation_layers_forward_their_options_and_repr_as_paddle():
    x = t(X)
    for layer, expected, text in [
        (nn.CELU(2.0), F.celu(x, 2.0), "CELU(alpha=2.0)"),
        (nn.Softshrink(0.3), F.softshrink(x, 0.3), "Softshrink(threshold=0.3)"),
        (nn.Hardshrink(threshold=1.0), F.hardshrink(x, 1.0), "Hardshrink(threshold=1.0)"),
        (nn.Tanhshrink(), F.tanhshrink(x), "Tanhshrink()"),
        (nn.ThresholdedReLU(0.5, 0.1), F.thresholded_relu(x, 0.5, 0.1),
         "ThresholdedReLU(threshold=0.5, value=0.1)"),
        (nn.Softsign(), F.softsign(x), "Softsign()"),
        (nn.Swish(), F.silu(x), "Swish()"),
    ]:
        np.testing.assert_array_equal(layer(x).numpy(), expected.numpy())
        assert repr(layer) == text  # Paddle 3.3.1's repr
    assert repr(nn.Maxout(2)) == "Maxout(groups=2, axis=1)"


# ---------------------------------------------------------------- losses

A, B, C = (RNG.standard_normal((4, 5)) for _ in range(3))


def np_reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def np_distance(x, y, p=2.0, eps=1e-6):
    return (np.abs(x - y + eps) ** p).sum(-1) ** (1 / p)


def np_cos(x1, x2):
    return (x1 * x2).sum(-1) / np.sqrt(((x1 ** 2).sum(-1) + 1e-11) * ((x2 ** 2).sum(-1) + 1e-11))


LOSS_CASES = {
    "soft_margin": (lambda a, b, c, r: F.soft_margin_loss(a, t(SIGNS[0, :4]), r),
                    lambda r: np_reduce(-np_log_sigmoid(SIGNS[0, :4] * A), r), [0]),
    "hinge_embedding": (
        lambda a, b, c, r: F.hinge_embedding_loss(a, t(SIGNS[0, :4]), 0.7, r),
        lambda r: np_reduce(np.where(SIGNS[0, :4] == 1, A, np.maximum(0, 0.7 - A)), r), [0]),
    "cosine_embedding": (
        lambda a, b, c, r: F.cosine_embedding_loss(a, b, t(np.array([1, -1, -1, 1])), 0.1, r),
        lambda r: np_reduce(np.where(np.array([1, -1, -1, 1]) == 1, 1 - np_cos(A, B),
                                     np.maximum(np_cos(A, B) - 0.1, 0)), r), [0, 1]),
    "triplet_margin": (
        lambda a, b, c, r: F.triplet_margin_loss(a, b, c, 0.5, reduction=r),
        lambda r: np_reduce(np.maximum(np_distance(A, B) - np_distance(A, C) + 0.5, 0), r),
        [0, 1, 2]),
    "triplet_margin_swap_p3": (
        lambda a, b, c, r: F.triplet_margin_loss(a, b, c, 2.0, 3, 1e-3, True, r),
        lambda r: np_reduce(np.maximum(np_distance(A, B, 3, 1e-3) - np.minimum(
            np_distance(A, C, 3, 1e-3), np_distance(B, C, 3, 1e-3)) + 2.0, 0), r), [0, 1, 2]),
    "multi_label_soft_margin": (
        lambda a, b, c, r: F.multi_label_soft_margin_loss(a, t((B > 0) * 1.0), t(np.abs(C)), r),
        lambda r: np_reduce((-((B > 0) * np_log_sigmoid(A) + (B <= 0) * np_log_sigmoid(-A))
                             * np.abs(C)).mean(-1), r), [0]),
    "poisson_nll": (
        lambda a, b, c, r: F.poisson_nll_loss(a, b, reduction=r),
        lambda r: np_reduce(np.exp(A) - B * A, r), [0, 1]),
    "poisson_nll_full": (
        lambda a, b, c, r: F.poisson_nll_loss(a * a + 0.5, b * b * 3, False, True, reduction=r),
        lambda r: np_reduce(A * A + 0.5 - 3 * B * B * np.log(A * A + 0.5 + 1e-8) + np.where(
            3 * B * B > 1, 3 * B * B * np.log(3 * B * B) - 3 * B * B
            + 0.5 * np.log(2 * np.pi * 3 * B * B), 0), r), [0, 1]),
    "gaussian_nll": (
        lambda a, b, c, r: F.gaussian_nll_loss(a, b, t(C * C + 0.1), reduction=r),
        lambda r: np_reduce(0.5 * (np.log(C * C + 0.1) + (A - B) ** 2 / (C * C + 0.1)), r),
        [0, 1]),
    "gaussian_nll_per_sample_full": (
        lambda a, b, c, r: F.gaussian_nll_loss(a, b, t(C[:, 0] ** 2 + 1e-9), True, 1e-3, r),
        lambda r: np_reduce(0.5 * (np.log(np.maximum(C[:, :1] ** 2 + 1e-9, 1e-3)) + (A - B) ** 2
                                   / np.maximum(C[:, :1] ** 2 + 1e-9, 1e-3) + np.log(2 * np.pi)),
                            r),
        [0, 1]),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_loss_values_and_gradients(case, reduction):
    """Each case: the loss of (a, b, c, reduction), its NumPy reference, and the
    inputs it differentiates (the gaussian losses' variance takes no gradient)."""
    fn, ref, wrt = LOSS_CASES[case]
    out = fn(t(A), t(B), t(C), reduction)
    np.testing.assert_allclose(out.numpy(), ref(reduction), rtol=1e-10, atol=1e-12)
    check_grads(lambda a, b, c: fn(a, b, c, reduction), A, B, C, wrt=wrt)


@pytest.mark.parametrize("case", list(LOSS_CASES))
def test_loss_reductions_are_checked(case):
    with pytest.raises(ValueError, match="reduction"):
        LOSS_CASES[case][0](t(A), t(B), t(C), "batchmean")


def test_soft_margin_loss_stays_finite_where_paddles_formula_overflows():
    """Paddle 3.3.1 gives [0.474077, inf, inf] in float32; the losses are 200 and 100."""
    out = F.soft_margin_loss(t(np.array([0.5, -200.0, 100.0], np.float32)),
                             t(np.array([1, 1, -1])), "none")
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [0.474077, 200.0, 100.0], rtol=1e-6)


def test_paddle_numbers_for_hinge_and_cosine_embedding():
    # PaddlePaddle 3.3.1, reduction="none"
    hinge = F.hinge_embedding_loss(t(np.array([0.5, -0.3, 2.0, 0.7], np.float32)),
                                   t(np.array([1.0, -1.0, -1.0, 0.0], np.float32)),
                                   reduction="none")
    np.testing.assert_allclose(hinge.numpy(), [0.5, 1.3, 0.0, 0.0], rtol=1e-6)
    x1 = np.array([[1.6, 1.2, -0.5], [3.2, 2.6, -5.8], [0.0, 0.0, 0.0]], np.float32)
    x2 = np.array([[0.5, 0.5, -1.8], [2.3, -1.4, 1.1], [1.0, 1.0, 1.0]], np.float32)
    cos = F.cosine_embedding_loss(t(x1), t(x2), t(np.array([1, -1, 1])), 0.5, "none")
    np.testing.assert_allclose(cos.numpy(), [0.42310387, 0.0, 1.0], rtol=1e-6)
    one = F.cosine_embedding_loss(t(x1[0]), t(x2[0]), t(np.array([1])), 0.5, "none")
    np.testing.assert_allclose(one.numpy(), [0.42310387], rtol=1e-6)


def test_poisson_nll_loss_full_against_paddle():
    """PaddlePaddle 3.3.1 numbers; its label gradient at label 0 is NaN (log 0 in the
    branch not taken), irflow's is the loss's own, -input."""
    x = t(np.array([0.5, 1.0, 2.0, 0.1], np.float32), stop_gradient=False)
    label = t(np.array([0.0, 1.0, 3.0, 5.0], np.float32), stop_gradient=False)
    out = F.poisson_nll_loss(x, label, full=True, reduction="none")
    paddle.sum(out).backward()
    np.testing.assert_allclose(out.numpy(), [1.6487212, 1.7182817, 3.1531377, 5.3760185],
                               rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [1.6487212, 1.7182817, 4.389056, -3.894829],
                               rtol=1e-6)
    np.testing.assert_allclose(label.grad.numpy(), [-0.5, -1.0, -0.734721, 1.609438],
                               rtol=1e-5)


def test_gaussian_nll_loss_trains_the_mean_and_the_variance():
    """Loss 31248.523 and input gradient [[0.25, -125000], [0.125, -0.25]] as in Paddle
    3.3.1; the variance's gradient is (1/v - (x - y)^2 / v^2) / 2 / 4 (the mean of four
    terms) where it is above epsilon and zero where clamped. Paddle gives the variance
    none (it clamps under no_grad), so a predicted variance would never train."""
    x = t(np.array([[0.5, 1.0], [2.0, -1.0]], np.float32), stop_gradient=False)
    label = t(np.array([[0.0, 1.5], [1.0, 0.0]], np.float32))
    v = np.array([[0.5, 1e-8], [2.0, 1.0]], np.float32)
    variance = t(v, stop_gradient=False)
    out = F.gaussian_nll_loss(x, label, variance)
    out.backward()
    np.testing.assert_allclose(out.numpy(), 31248.523, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [[0.25, -125000.0], [0.125, -0.25]], rtol=1e-6)
    diff = x.numpy() - label.numpy()
    expected = np.where(v >= 1e-6, (1 / v - diff ** 2 / v ** 2) / 8, 0.0)
    np.testing.assert_allclose(variance.grad.numpy(), expected, rtol=1e-6)
    check_grads(lambda s: F.gaussian_nll_loss(x.detach(), label, s, reduction="sum"),
                np.array([[0.5, 1.5], [2.0, 1.0]]))


@pytest.mark.parametrize("call, error", [
    (lambda: F.soft_margin_loss(t(A), t(B[:3])), ValueError),
    (lambda: F.multi_label_soft_margin_loss(t(A), t(B[:, :4])), ValueError),
    (lambda: F.poisson_nll_loss(t(A), t(B), epsilon=0.0), ValueError),
    (lambda: F.poisson_nll_loss(t(A), t(B.T)), ValueError),
    (lambda: F.triplet_margin_loss(t(A), t(B), t(C[:3])), ValueError),
    (lambda: F.triplet_margin_loss(t(A), t(B), t(C), margin=-1.0), ValueError),
    (lambda: F.cosine_embedding_loss(t(A), t(B), t(np.ones((4, 1)))), ValueError),
    (lambda: F.cosine_embedding_loss(t(A), t(B[:, :4]), t(np.ones(4))), ValueError),
    (lambda: F.cosine_embedding_loss(t(X), t(X), t(np.ones(3))), ValueError),
    (lambda: F.gaussian_nll_loss(t(A), t(B), t(np.ones(5))), ValueError),
    (lambda: F.gaussian_nll_loss(t(A), t(B), t(-np.ones(4))), ValueError),
    (lambda: F.gaussian_nll_loss(t(A), t(B), t(np.ones((4, 5), np.int64))), TypeError),
    (lambda: nn.CosineEmbeddingLoss(margin=1.5), ValueError),
    (lambda: nn.PoissonNLLLoss(epsilon=0.0), ValueError),
    (lambda: nn.TripletMarginLoss(reduction="avg"), ValueError),
])
def test_loss_argument_errors(call, error):
    with pytest.raises(error):
        call()


def test_loss_layers_match_their_functions():
    a, b, c = t(A), t(B), t(C)
    signs, labels = t(SIGNS[0, :4]), t(np.array([1, -1, -1, 1]))
    variance = t(C * C + 0.1)
    for layer, inputs, expected in [
        (nn.SoftMarginLoss("sum"), (a, signs), F.soft_margin_loss(a, signs, "sum")),
        (nn.HingeEmbeddingLoss(0.3), (a, signs), F.hinge_embedding_loss(a, signs, 0.3)),
        (nn.CosineEmbeddingLoss(0.2, "none"), (a, b, labels),
         F.cosine_embedding_loss(a, b, labels, 0.2, "none")),
        (nn.TripletMarginLoss(0.5, 1.0, swap=True), (a, b, c),
         F.triplet_margin_loss(a, b, c, 0.5, 1.0, swap=True)),
        (nn.MultiLabelSoftMarginLoss(t(np.abs(C[0]))), (a, signs),
         F.multi_label_soft_margin_loss(a, signs, t(np.abs(C[0])))),
        (nn.PoissonNLLLoss(False, True, 1e-3), (a * a, b * b),
         F.poisson_nll_loss(a * a, b * b, False, True, 1e-3)),
        (nn.GaussianNLLLoss(True, 1e-3, "sum"), (a, b, variance),
         F.gaussian_nll_loss(a, b, variance, True, 1e-3, "sum")),
    ]:
        np.testing.assert_array_equal(layer(*inputs).numpy(), expected.numpy())


# ---------------------------------------------------------------- compiled

@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_activations_match_eager(backend):
    model = nn.Sequential(nn.CELU(0.5), nn.Softshrink(0.1), nn.Hardshrink(0.05),
                          nn.Tanhshrink(), nn.Softsign(), nn.ThresholdedReLU(0.01, 0.2),
                          nn.Swish(), nn.Maxout(2), nn.Softmax2D())
    x = t(RNG.standard_normal((3, 4, 5, 6)).astype(np.float32) * 3)
    eager = model(x).numpy()
    np.testing.assert_allclose(paddle.compile(model, backend=backend)(x).numpy(), eager,
                               rtol=1e-5, atol=1e-7)
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 4, 5, 6])],
                                  backend=backend)
    np.testing.assert_allclose(static(x).numpy(), eager, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(static(x[:1]).numpy(), eager[:1], rtol=1e-5, atol=1e-7)


def all_losses(a, b, c):
    signs = paddle.sign(b)
    return (F.soft_margin_loss(a, signs) + F.hinge_embedding_loss(a, signs)
            + F.cosine_embedding_loss(a, b, signs[:, 0])
            + F.triplet_margin_loss(a, b, c, swap=True)
            + F.multi_label_soft_margin_loss(a, (b > 0).astype("float32"))
            + F.poisson_nll_loss(a, paddle.abs(b), full=True)
            + F.gaussian_nll_loss(a, b, paddle.abs(c[:, 0]) + 0.1, full=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_losses_match_eager_values_and_gradients(backend):
    arrays = [RNG.standard_normal((4, 5)).astype(np.float32) for _ in range(3)]

    def run(fn):
        inputs = [t(v, stop_gradient=False) for v in arrays]
        out = fn(*inputs)
        out.backward()
        return out.numpy(), [v.grad.numpy() for v in inputs[:2]]

    (eager, eager_grads), (compiled, grads) = run(all_losses), run(
        paddle.compile(all_losses, backend=backend))
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    static = paddle.jit.to_static(all_losses, input_spec=[InputSpec([None, 5])] * 3,
                                  backend=backend)
    halves = [t(v[:2]) for v in arrays]
    np.testing.assert_allclose(static(*halves).numpy(), all_losses(*halves).numpy(), rtol=1e-5)

