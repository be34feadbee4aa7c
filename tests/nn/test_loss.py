"""Losses of irflow.nn.functional and their Layer forms against NumPy references
written from Paddle 3's definitions (including its normalisation of "mean"), and
their gradients against finite differences."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(1)
N, C = 6, 4
LOGITS = RNG.standard_normal((N, C)) * 2
LABELS = np.array([0, 3, 1, 1, 2, 3])
IGNORED = np.array([0, -100, 1, -100, 2, 3])
WEIGHT = np.array([0.5, 2.0, 1.0, 3.0])
SOFT = RNG.uniform(size=(N, C))
SOFT /= SOFT.sum(1, keepdims=True)
PROBS = RNG.uniform(0.05, 0.95, (N, C))
TARGETS = RNG.uniform(size=(N, C))


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


def reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def ref_hard_ce(logits, labels, weight=None, ignore_index=-100):
    """Per-sample losses and Paddle's "mean" denominator."""
    valid = labels != ignore_index
    safe = np.where(valid, labels, 0)
    loss = -np_log_softmax(logits)[np.arange(len(labels)), safe] * valid
    if weight is not None:
        w = weight[safe] * valid
        return loss * w, w.sum()
    return loss, valid.sum() if ignore_index >= 0 else len(labels)


REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("labels, kwargs", [
    (LABELS, {}),
    (LABELS, {"weight": WEIGHT}),
    (IGNORED, {}),
    (IGNORED, {"weight": WEIGHT}),
    (LABELS, {"ignore_index": 1}),
    (LABELS, {"ignore_index": 3, "weight": WEIGHT}),
])
def test_cross_entropy_hard_labels(labels, kwargs, reduction):
    loss, denominator = ref_hard_ce(LOGITS, labels, **kwargs)
    expected = loss.sum() / denominator if reduction == "mean" else reduce(loss, reduction)
    call_kwargs = {**kwargs, "weight": t(kwargs["weight"])} if "weight" in kwargs else kwargs
    out = F.cross_entropy(t(LOGITS), t(labels), reduction=reduction, **call_kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_grads(lambda x: F.cross_entropy(x, t(labels), reduction=reduction, **call_kwargs),
                LOGITS)


def test_cross_entropy_default_ignore_mean_divides_by_all_samples_as_paddle():
    loss, _ = ref_hard_ce(LOGITS, IGNORED)
    np.testing.assert_allclose(F.cross_entropy(t(LOGITS), t(IGNORED)).numpy(), loss.sum() / N)
    loss, _ = ref_hard_ce(LOGITS, np.where(IGNORED < 0, 1, IGNORED), ignore_index=1)
    np.testing.assert_allclose(
        F.cross_entropy(t(LOGITS), t(np.where(IGNORED < 0, 1, IGNORED)), ignore_index=1).numpy(),
        loss.sum() / 3)


def test_cross_entropy_label_shapes():
    assert F.cross_entropy(t(LOGITS), t(LABELS), reduction="none").shape == [N]
    out = F.cross_entropy(t(LOGITS), t(LABELS[:, None]), reduction="none")
    assert out.shape == [N, 1]
    np.testing.assert_allclose(out.numpy()[:, 0], ref_hard_ce(LOGITS, LABELS)[0], rtol=1e-10)
    assert F.cross_entropy(t(LOGITS), t(LABELS)).shape == []


def test_cross_entropy_all_ignored_mean_is_zero_not_nan():
    out = F.cross_entropy(t(LOGITS), t(np.full(N, 2)), ignore_index=2)
    assert out.item() == 0.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_soft_labels(weighted, reduction):
    loss = -(SOFT * np_log_softmax(LOGITS)).sum(1, keepdims=True)
    kwargs = {}
    if weighted:
        sample_weight = SOFT @ WEIGHT
        loss = loss * sample_weight[:, None]
        kwargs["weight"] = t(WEIGHT)
    if reduction == "mean" and weighted:
        expected = loss.sum() / sample_weight.sum()
    else:
        expected = reduce(loss, reduction)
    out = F.cross_entropy(t(LOGITS), t(SOFT), soft_label=True, reduction=reduction, **kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    # the logits' gradient; the soft labels take none (Paddle's kernel)
    check_grads(lambda x: F.cross_entropy(x, t(SOFT), soft_label=True, reduction=reduction,
                                          **kwargs), LOGITS)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(weighted, reduction):
    eps = 0.2
    smoothed = np.eye(C)[LABELS] * (1 - eps) + eps / C
    loss = -(smoothed * np_log_softmax(LOGITS)).sum(1, keepdims=True)
    kwargs = {}
    if weighted:
        sample_weight = smoothed @ WEIGHT
        loss = loss * sample_weight[:, None]
        kwargs["weight"] = t(WEIGHT)
    expected = (loss.sum() / sample_weight.sum() if reduction == "mean" and weighted
                else reduce(loss, reduction))
    out = F.cross_entropy(t(LOGITS), t(LABELS), label_smoothing=eps, reduction=reduction,
                          **kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_grads(lambda x: F.cross_entropy(x, t(LABELS), label_smoothing=eps,
                                          reduction=reduction, **kwargs), LOGITS)


def test_cross_entropy_label_smoothing_skips_ignored_samples():
    eps = 0.1
    labels = np.where(LABELS == 1, 5, LABELS)
    keep = labels != 5
    smoothed = np.eye(C)[np.where(keep, labels, 0)] * (1 - eps) + eps / C
    loss = -(smoothed * np_log_softmax(LOGITS)).sum(1) * keep
    out = F.cross_entropy(t(LOGITS), t(labels), ignore_index=5, label_smoothing=eps)
    np.testing.assert_allclose(out.numpy(), loss.sum() / keep.sum(), rtol=1e-10)


def test_cross_entropy_along_axis_1():
    logits = RNG.standard_normal((2, C, 3))
    labels = RNG.integers(0, C, (2, 3))
    lsm = np_log_softmax(logits, axis=1)
    loss = -np.take_along_axis(lsm, labels[:, None], 1)[:, 0]
    out = F.cross_entropy(t(logits), t(labels), axis=1, reduction="none")
    np.testing.assert_allclose(out.numpy(), loss, rtol=1e-10)
    np.testing.assert_allclose(F.cross_entropy(t(logits), t(labels), axis=1).numpy(),
                               loss.mean(), rtol=1e-10)
    check_grads(lambda x: F.cross_entropy(x, t(labels), axis=1), logits)


def test_cross_entropy_on_probabilities():
    probs = PROBS / PROBS.sum(1, keepdims=True)
    expected = -np.log(probs[np.arange(N), LABELS]).mean()
    np.testing.assert_allclose(F.cross_entropy(t(probs), t(LABELS), use_softmax=False).numpy(),
                               expected, rtol=1e-10)


def test_cross_entropy_argument_errors():
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(t(LOGITS), t(LABELS), reduction="avg")
    with pytest.raises(ValueError, match="ignore_index"):
        F.cross_entropy(t(LOGITS), t(SOFT), soft_label=True, ignore_index=1)
    with pytest.raises(TypeError, match="soft_label=True"):
        F.cross_entropy(t(LOGITS), t(SOFT))


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, -1000.0], [-1000.0, 1000.0]], np.float32)
    out = F.cross_entropy(t(logits), t(np.array([1, 1])), reduction="none")
    np.testing.assert_allclose(out.numpy(), [2000.0, 0.0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(weighted, reduction):
    log_probs = np_log_softmax(LOGITS)
    valid = IGNORED != -100
    safe = np.where(valid, IGNORED, 0)
    w = (WEIGHT[safe] if weighted else np.ones(N)) * valid
    loss = -log_probs[np.arange(N), safe] * w
    expected = loss.sum() / w.sum() if reduction == "mean" else reduce(loss, reduction)
    kwargs = {"weight": t(WEIGHT)} if weighted else {}
    out = F.nll_loss(t(log_probs), t(IGNORED), reduction=reduction, **kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_grads(lambda x: F.nll_loss(x, t(IGNORED), reduction=reduction, **kwargs), log_probs)


def test_nll_loss_with_spatial_dims():
    log_probs = np_log_softmax(RNG.standard_normal((2, C, 3)), axis=1)
    labels = RNG.integers(0, C, (2, 3))
    out = F.nll_loss(t(log_probs), t(labels), reduction="none")
    np.testing.assert_allclose(out.numpy(),
                               -np.take_along_axis(log_probs, labels[:, None], 1)[:, 0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("fn, ref", [
    (F.mse_loss, lambda x, y: (x - y) ** 2),
    (F.l1_loss, lambda x, y: np.abs(x - y)),
])
def test_regression_losses(fn, ref, reduction):
    np.testing.assert_allclose(fn(t(PROBS), t(TARGETS), reduction).numpy(),
                               reduce(ref(PROBS, TARGETS), reduction), rtol=1e-10)
    check_grads(lambda x, y: fn(x, y, reduction), PROBS, TARGETS)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(weighted, reduction):
    w = RNG.uniform(0.5, 2, (N, C)) if weighted else np.ones((N, C))
    loss = -(TARGETS * np.log(PROBS) + (1 - TARGETS) * np.log(1 - PROBS)) * w
    kwargs = {"weight": t(w)} if weighted else {}
    out = F.binary_cross_entropy(t(PROBS), t(TARGETS), reduction=reduction, **kwargs)
    np.testing.assert_allclose(out.numpy(), reduce(loss, reduction), rtol=1e-10)
    check_grads(lambda p: F.binary_cross_entropy(p, t(TARGETS), reduction=reduction, **kwargs),
                PROBS)


def test_binary_cross_entropy_clamps_the_log_at_minus_100():
    p = t(np.array([0.0, 1.0, 1e-30], np.float32), stop_gradient=False)
    y = t(np.array([1.0, 0.0, 1.0], np.float32))
    out = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(out.numpy(), [100.0, 100.0, -np.log(1e-30)], rtol=1e-5)
    paddle.sum(out).backward()
    assert np.all(np.isfinite(p.grad.numpy()))


def test_binary_cross_entropy_gradient_at_saturated_predictions_is_paddles():
    """Paddle's kernel: (p - y) / max(p (1 - p), 1e-12), so a prediction saturated at
    the wrong end still learns (the clamped log's derivative is zero there). Values
    from Paddle 3.3.1."""
    p = t(np.array([0, 1, 1, 0, 0.3, 0.9], np.float32), stop_gradient=False)
    y = t(np.array([0, 1, 0, 1, 1, 0], np.float32))
    loss = F.binary_cross_entropy(p, y, reduction="sum")
    loss.backward()
    assert float(loss) == pytest.approx(203.50656127929688, rel=1e-6)
    np.testing.assert_allclose(p.grad.numpy(), [0.0, 0.0, 999999995904.0, -999999995904.0,
                                                -3.3333332538604736, 9.999998092651367],
                               rtol=1e-6)
    compiled = paddle.compile(lambda q: F.binary_cross_entropy(q, y, reduction="sum"))
    q = t(p.numpy(), stop_gradient=False)
    compiled(q).backward()
    np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", ["plain", "weight", "pos_weight"])
def test_binary_cross_entropy_with_logits(options, reduction):
    sigmoid = 1 / (1 + np.exp(-LOGITS))
    pos = WEIGHT if options == "pos_weight" else np.ones(C)
    w = RNG.uniform(0.5, 2, (N, C)) if options == "weight" else np.ones((N, C))
    loss = -(pos * TARGETS * np.log(sigmoid) + (1 - TARGETS) * np.log(1 - sigmoid)) * w
    kwargs = {"weight": t(w)} if options == "weight" else {}
    if options == "pos_weight":
        kwargs["pos_weight"] = t(WEIGHT)
    out = F.binary_cross_entropy_with_logits(t(LOGITS), t(TARGETS), reduction=reduction,
                                             **kwargs)
    np.testing.assert_allclose(out.numpy(), reduce(loss, reduction), rtol=1e-10)
    check_grads(lambda x: F.binary_cross_entropy_with_logits(x, t(TARGETS), reduction=reduction,
                                                             **kwargs), LOGITS)


def test_binary_cross_entropy_with_logits_does_not_overflow():
    x = t(np.array([-100.0, 50.0, 1000.0], np.float32))
    y = t(np.array([1.0, 0.0, 1.0], np.float32))
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(x, y, reduction="none").numpy(),
                               [100.0, 50.0, 0.0], atol=1e-6)


def test_loss_layers_forward_their_options():
    w = t(WEIGHT)
    cases = [
        (nn.CrossEntropyLoss(weight=w, reduction="sum"),
         F.cross_entropy(t(LOGITS), t(LABELS), weight=w, reduction="sum"), LOGITS, LABELS),
        (nn.CrossEntropyLoss(soft_label=True),
         F.cross_entropy(t(LOGITS), t(SOFT), soft_label=True), LOGITS, SOFT),
        (nn.NLLLoss(ignore_index=1), F.nll_loss(t(LOGITS), t(LABELS), ignore_index=1),
         LOGITS, LABELS),
        (nn.MSELoss("sum"), F.mse_loss(t(PROBS), t(TARGETS), "sum"), PROBS, TARGETS),
        (nn.L1Loss(), F.l1_loss(t(PROBS), t(TARGETS)), PROBS, TARGETS),
        (nn.BCELoss(reduction="none"), F.binary_cross_entropy(t(PROBS), t(TARGETS), None, "none"),
         PROBS, TARGETS),
        (nn.BCEWithLogitsLoss(pos_weight=w),
         F.binary_cross_entropy_with_logits(t(LOGITS), t(TARGETS), pos_weight=w), LOGITS,
         TARGETS),
    ]
    for layer, expected, x, y in cases:
        np.testing.assert_allclose(layer(t(x), t(y)).numpy(), expected.numpy())
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert list(nn.CrossEntropyLoss(weight=w).state_dict()) == []


def test_label_smoothing_of_soft_labels():
    eps = 0.3
    smoothed = SOFT * (1 - eps) + eps / C
    expected = -(smoothed * np_log_softmax(LOGITS)).sum(1).mean()
    out = F.cross_entropy(t(LOGITS), t(SOFT), soft_label=True, label_smoothing=eps)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)


# ---------------------------------------------------------------- smooth L1, KL, ranking

def test_smooth_l1_loss_is_huber_by_default():
    x, y = np.array([[-1.0, -2.0, 0.5], [0.3, -0.1, -3.0]]), np.array([[0.0, 0.5, -0.2],
                                                                         [0.25, 1.0, 0.0]])
    d = np.abs(x - y)          # 1, 2.5, 0.7, 0.05, 1.1, 3
    huber = np.where(d < 0.5, 0.5 * d * d, 0.5 * (d - 0.25))
    np.testing.assert_allclose(F.smooth_l1_loss(t(x), t(y), "none", delta=0.5).numpy(), huber,
                               rtol=1e-12)
    np.testing.assert_allclose(huber[1, 0], 0.5 * 0.05 ** 2, rtol=1e-12)
    np.testing.assert_allclose(huber[0, 1], 0.5 * 2.5 - 0.125, rtol=1e-12)
    plain = np.where(d < 0.5, d * d, d - 0.25)          # 0.5 d^2 / delta, |d| - delta / 2
    np.testing.assert_allclose(
        F.smooth_l1_loss(t(x), t(y), "none", delta=0.5, is_huber=False).numpy(), plain,
        rtol=1e-12)
    np.testing.assert_allclose(nn.SmoothL1Loss()(t(x), t(y)).numpy(),
                               np.where(d < 1, 0.5 * d * d, d - 0.5).mean(), rtol=1e-12)
    check_grads(lambda a: F.smooth_l1_loss(a, t(TARGETS), "sum", delta=0.3), LOGITS)


def test_kl_div_reductions_and_nonpositive_labels():
    logp = np_log_softmax(LOGITS)
    label = SOFT.copy()
    label[0, 0], label[1, 2] = 0.0, -0.5                 # Paddle: no loss where label <= 0
    want = np.where(label > 0, label * (np.log(np.where(label > 0, label, 1)) - logp), 0.0)
    assert want[0, 0] == 0 and want[1, 2] == 0
    np.testing.assert_allclose(F.kl_div(t(logp), t(label), "none").numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(F.kl_div(t(logp), t(label)).numpy(), want.mean(), rtol=1e-12)
    np.testing.assert_allclose(F.kl_div(t(logp), t(label), "sum").numpy(), want.sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(F.kl_div(t(logp), t(label), "batchmean").numpy(),
                               want.sum() / N, rtol=1e-12)
    np.testing.assert_allclose(
        nn.KLDivLoss("none", log_target=True)(t(logp), t(np.log(SOFT))).numpy(),
        SOFT * (np.log(SOFT) - logp), rtol=1e-12)
    check_grads(lambda a: F.kl_div(F.log_softmax(a), t(SOFT), "batchmean"), LOGITS)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_kl_div_batchmean_compiles_for_a_symbolic_batch(backend):
    """batchmean divides by the batch's size, which a program with a symbolic batch
    reads when it runs (it failed to compile: the size was made a Python float)."""
    def loss(logp, label):
        return F.kl_div(logp, label, reduction="batchmean")
    compiled = paddle.compile(loss, input_spec=[InputSpec([None, 3], "float64")] * 2,
                              backend=backend)
    for n in (2, 5):
        logp = t(np_log_softmax(LOGITS[:n, :3]))
        label = t(SOFT[:n, :3])
        np.testing.assert_allclose(compiled(logp, label).numpy(), loss(logp, label).numpy(),
                                   rtol=1e-12)


def test_margin_ranking_loss():
    a, b = LOGITS[:, 0], LOGITS[:, 1]
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    want = np.maximum(0.0, -y * (a - b) + 0.3)
    np.testing.assert_allclose(F.margin_ranking_loss(t(a), t(b), t(y), 0.3, "none").numpy(),
                               want, rtol=1e-12)
    np.testing.assert_allclose(nn.MarginRankingLoss(0.3)(t(a), t(b), t(y)).numpy(), want.mean(),
                               rtol=1e-12)
    check_grads(lambda u, v: F.margin_ranking_loss(u, v, t(y), 0.3, "sum"), a, b)


def test_label_smooth_and_softmax_with_cross_entropy():
    onehot = np.eye(C)[LABELS]
    np.testing.assert_allclose(F.label_smooth(t(onehot), epsilon=0.2).numpy(),
                               0.8 * onehot + 0.2 / C, rtol=1e-12)
    prior = np.array([[0.4, 0.3, 0.2, 0.1]])
    np.testing.assert_allclose(F.label_smooth(t(onehot), t(prior), epsilon=0.2).numpy(),
                               0.8 * onehot + 0.2 * prior, rtol=1e-12)
    logp = np_log_softmax(LOGITS)
    loss, probs = F.softmax_with_cross_entropy(t(LOGITS), t(LABELS[:, None]),
                                               return_softmax=True)
    assert loss.shape == [N, 1]                          # no reduction, size 1 on the axis
    np.testing.assert_allclose(loss.numpy()[:, 0], -logp[np.arange(N), LABELS], rtol=1e-12)
    np.testing.assert_allclose(probs.numpy(), np.exp(logp), rtol=1e-12)
    soft = F.softmax_with_cross_entropy(t(LOGITS.T), t(SOFT.T), soft_label=True, axis=0)
    np.testing.assert_allclose(soft.numpy(), -(SOFT * logp).sum(1)[None, :], rtol=1e-12)


def test_soft_labels_must_have_the_input_shape():
    """Paddle refuses them; a [4, 1] label broadcast against [4, 3] logits."""
    for label in (np.full((4, 1), 0.5), np.full((1, 3), 1 / 3)):
        with pytest.raises(ValueError, match="soft labels must have the input's shape"):
            F.cross_entropy(t(LOGITS[:4, :3]), t(label), soft_label=True)


@pytest.mark.parametrize("loss", [
    lambda s, t: F.kl_div(F.log_softmax(s), F.softmax(t), reduction="sum"),
    lambda s, t: F.cross_entropy(s, F.softmax(t), soft_label=True),
    lambda s, t: F.binary_cross_entropy(F.sigmoid(s), F.sigmoid(t)),
    lambda s, t: F.binary_cross_entropy_with_logits(s, F.sigmoid(t))],
    ids=["kl_div", "soft cross entropy", "bce", "bce with logits"])
def test_the_label_of_distillation_losses_takes_no_gradient(loss):
    """As Paddle's kernels, these losses differentiate their input only: a teacher
    whose outputs were not detached is not trained through the loss."""
    student = paddle.to_tensor(np.array([[1.0, 2.0, 0.5]], "float32"), stop_gradient=False)
    teacher = paddle.to_tensor(np.array([[0.3, 0.1, 2.0]], "float32"), stop_gradient=False)
    loss(student, teacher).backward()
    assert teacher.grad is None and student.grad is not None
