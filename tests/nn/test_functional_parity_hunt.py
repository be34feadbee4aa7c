"""Arguments of irflow.nn.functional where irflow used to return a different answer
than Paddle 3.3.1 without an error, against NumPy references written from Paddle's
definitions (quirks included)."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F

RNG = np.random.default_rng(7)
N, C = 6, 5
LOGITS = RNG.standard_normal((N, C)) * 2
LABELS = np.array([0, 2, 1, 1, 4, 3])
WEIGHT = np.array([0.5, 2.0, 1.0, 3.0, 1.5])


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


# ---------------------------------------------------------------- conv2d_transpose

def test_conv2d_transpose_positional_arguments_in_paddles_order():
    """Paddle's order is ..., output_padding, dilation, groups, output_size,
    data_format: a positional dilation of 2 and groups of 1 is that, not the reverse."""
    x = RNG.standard_normal((1, 2, 3, 4))
    w = RNG.standard_normal((2, 2, 2, 2))
    positional = F.conv2d_transpose(t(x), t(w), None, 1, 0, 0, 2, 1)
    keywords = F.conv2d_transpose(t(x), t(w), stride=1, padding=0, dilation=2, groups=1)
    assert positional.shape == [1, 2, 5, 6]
    np.testing.assert_allclose(positional.numpy(), keywords.numpy())
    sized = F.conv2d_transpose(t(x), t(w), None, 2, 0, 0, 1, 1, [7, 9], "NCHW")
    assert sized.shape == [1, 2, 7, 9]


# ---------------------------------------------------------------- cross entropy

def _smoothed(labels, eps, classes=C):
    return np.eye(classes)[labels] * (1 - eps) + eps / classes


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_label_smoothing_keeps_samples_at_a_class_ignore_index(weighted, reduction):
    """Paddle one-hot encodes and smooths every hard label, one equal to an
    ignore_index in [0, C) too, and its "mean" then divides by the count of the label
    entries unequal to ignore_index: N * C, times the sample weights if weighted."""
    eps, ignore = 0.2, 1
    smoothed = _smoothed(LABELS, eps)
    loss = -(smoothed * np_log_softmax(LOGITS)).sum(1, keepdims=True)
    kwargs = {}
    counted = (smoothed != ignore).astype(float)
    if weighted:
        sample_weight = smoothed @ WEIGHT
        loss = loss * sample_weight[:, None]
        counted = counted * sample_weight[:, None]
        kwargs["weight"] = t(WEIGHT)
    expected = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / counted.sum()}[reduction]
    out = F.cross_entropy(t(LOGITS), t(LABELS), ignore_index=ignore, label_smoothing=eps,
                          reduction=reduction, **kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)


def test_soft_labels_with_ignore_index_0_divide_by_nonzero_entries():
    """soft_label=True accepts ignore_index=0; Paddle's "mean" then divides by the
    number of label entries that are not 0."""
    soft = RNG.uniform(size=(N, C))
    soft[1, 2] = soft[3, :2] = 0.0
    soft /= soft.sum(1, keepdims=True)
    loss = -(soft * np_log_softmax(LOGITS)).sum(1)
    out = F.cross_entropy(t(LOGITS), t(soft), soft_label=True, ignore_index=0)
    np.testing.assert_allclose(out.numpy(), loss.sum() / np.count_nonzero(soft), rtol=1e-10)


def test_soft_label_smoothing_is_over_the_last_axis_whatever_axis():
    """Paddle smooths soft labels with label_smooth, uniform over the last axis (3
    here), even when the classes lie along axis 1 (5 of them)."""
    eps = 0.1
    logits = RNG.standard_normal((2, C, 3))
    soft = RNG.uniform(size=(2, C, 3))
    smoothed = soft * (1 - eps) + eps / 3
    expected = -(smoothed * np_log_softmax(logits, 1)).sum(1).mean()
    out = F.cross_entropy(t(logits), t(soft), soft_label=True, axis=1, label_smoothing=eps)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_soft_label_gradient_is_softmax_minus_label(reduction):
    """Paddle's softmax cross entropy kernel differentiates soft labels as
    softmax - label, the true gradient only for labels summing to 1; a multi-hot
    label does not."""
    multi_hot = (RNG.uniform(size=(N, C)) > 0.5).astype(float)
    per_sample = -(multi_hot * np_log_softmax(LOGITS)).sum(1, keepdims=True)
    logits = t(LOGITS, stop_gradient=False)
    loss = F.cross_entropy(logits, t(multi_hot), soft_label=True, reduction=reduction)
    np.testing.assert_allclose(loss.numpy(), per_sample if reduction == "none"
                               else per_sample.sum(), rtol=1e-10)
    upstream = RNG.standard_normal(loss.shape)
    (loss * t(upstream)).sum().backward()
    softmax = np.exp(np_log_softmax(LOGITS))
    expected = (softmax - multi_hot) * np.reshape(upstream, (-1, 1))
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-10)


def test_avg_pool_counting_padding_clips_at_the_padding_before_the_axis():
    """exclusive=False with padding [0, 1] along the width: Paddle 3.3.1 divides the last
    window (the 5 and the padding after it) by 1, clipping every window at the input's
    end plus the padding *before* the axis, and gives [1.5, 2.5, 3.5, 4.5, 5.0]."""
    x = paddle.to_tensor(np.arange(1, 6, dtype=np.float32).reshape(1, 1, 1, 5))
    np.testing.assert_allclose(
        F.avg_pool2d(x, (1, 2), 1, [0, 0, 0, 1], exclusive=False).numpy().ravel(),
        [1.5, 2.5, 3.5, 4.5, 5.0])
    np.testing.assert_allclose(
        F.avg_pool1d(x.reshape([1, 1, 5]), 2, 1, [0, 1], exclusive=False).numpy().ravel(),
        [1.5, 2.5, 3.5, 4.5, 5.0])


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolating_an_integer_tensor_is_an_error(mode):
    """Paddle has no integer kernel for bilinear or bicubic interpolation; bicubic gave
    a uint8 image all zeros here."""
    from irflow.errors import DTypeError
    x = paddle.to_tensor((np.arange(16).reshape(1, 1, 4, 4) * 10).astype(np.uint8))
    with pytest.raises(DTypeError, match=f"{mode} takes a float tensor"):
        F.interpolate(x, size=[6, 6], mode=mode)
    assert F.interpolate(x, size=[6, 6], mode="nearest").dtype == paddle.uint8
