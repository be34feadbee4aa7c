"""dropout2d / Dropout2D, cosine_similarity, sequence_mask and square_error_cost:
values against NumPy references from their definitions, gradients against finite
differences, compiled programs against eager code, and argument errors."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((4, 6, 3, 5)) + 5  # no zeros: a zero marks a dropped value
BACKENDS = ["numpy", "llvm"]


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- dropout2d

def assert_channels_dropped(out, x, p, channel_axis):
    """Each (sample, channel) slice is all zero or all x / (1 - p)."""
    out, x = np.moveaxis(out, channel_axis, 1), np.moveaxis(x, channel_axis, 1)
    dropped = (out == 0).all(axis=(2, 3))
    kept = np.isclose(out, x / (1 - p)).all(axis=(2, 3))
    assert (dropped ^ kept).all()
    assert dropped.any() and kept.any()


@pytest.mark.parametrize("fmt, channel_axis", [("NCHW", 1), ("NHWC", 3)])
def test_dropout2d_drops_whole_channels_and_scales_the_rest(fmt, channel_axis):
    paddle.seed(1)
    out = F.dropout2d(t(X4), 0.4, data_format=fmt).numpy()
    assert_channels_dropped(out, X4, 0.4, channel_axis)
    np.testing.assert_array_equal(F.dropout2d(t(X4), 0.4, training=False, data_format=fmt)
                                  .numpy(), X4)


def test_dropout2d_gradient_uses_the_same_mask_and_is_seeded():
    x = t(X4, stop_gradient=False)
    paddle.seed(5)
    out = F.dropout2d(x, 0.5)
    paddle.sum(out).backward()
    np.testing.assert_allclose(x.grad.numpy(), out.numpy() / X4, rtol=1e-12)
    paddle.seed(5)
    np.testing.assert_array_equal(F.dropout2d(t(X4), 0.5).numpy(), out.numpy())


def test_dropout2d_layer_follows_training_mode_and_errors():
    layer = nn.Dropout2D(0.5, data_format="NHWC")
    assert repr(layer) == "Dropout2D(p=0.5, data_format=NHWC)"
    paddle.seed(2)
    assert_channels_dropped(layer(t(X4)).numpy(), X4, 0.5, 3)
    layer.eval()
    np.testing.assert_array_equal(layer(t(X4)).numpy(), X4)
    with pytest.raises(ValueError, match="dropout2d: x must be a 4-D tensor"):
        F.dropout2d(t(X4[0]))
    with pytest.raises(ValueError, match="data_format must be 'NCHW' or 'NHWC'"):
        F.dropout2d(t(X4), data_format="NCL")
    with pytest.raises(ValueError, match="p argument should between 0 and 1"):
        F.dropout2d(t(X4), p=1.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_dropout2d(backend):
    layer = nn.Dropout2D(0.3)
    x = t(X4.astype(np.float32))
    compiled = paddle.compile(layer, backend=backend)
    assert_channels_dropped(compiled(x).numpy(), X4.astype(np.float32), 0.3, 1)
    layer.eval()
    static = paddle.jit.to_static(layer, input_spec=[InputSpec([None, 6, 3, 5])],
                                  backend=backend)
    np.testing.assert_array_equal(static(x).numpy(), x.numpy())


# ---------------------------------------------------------------- cosine_similarity

def np_cosine(a, b, axis, eps):
    a, b = np.broadcast_arrays(a, b)
    dot = (a * b).sum(axis)
    return dot / np.sqrt(np.maximum((a * a).sum(axis) * (b * b).sum(axis), eps * eps))


@pytest.mark.parametrize("shapes, axis", [
    (((4, 5), (4, 5)), 1), (((4, 5), (4, 5)), 0), (((2, 1, 5), (3, 5)), -1),
    (((2, 1), (2, 4)), 1),
])
def test_cosine_similarity_values_and_gradients(shapes, axis):
    a, b = (RNG.standard_normal(s) for s in shapes)
    np.testing.assert_allclose(F.cosine_similarity(t(a), t(b), axis).numpy(),
                               np_cosine(a, b, axis, 1e-8), rtol=1e-12)
    check_grads(lambda a, b: F.cosine_similarity(a, b, axis), a, b)


def test_cosine_similarity_of_a_zero_vector_is_zero_with_finite_gradient():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    a[0] = 0
    out = F.cosine_similarity(t(a), t(b), eps=1e-3)
    np.testing.assert_allclose(out.numpy(), np_cosine(a, b, 1, 1e-3), rtol=1e-12)
    assert out.numpy()[0] == 0
    check_grads(lambda a, b: F.cosine_similarity(a, b, eps=1e-3), a, b)


# ---------------------------------------------------------------- sequence_mask

def np_sequence_mask(lengths, maxlen):
    return np.arange(maxlen) < np.asarray(lengths)[..., None]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_sequence_mask_values_and_dtypes(dtype):
    lengths = np.array([[3, 0], [5, 1]], dtype)
    out = F.sequence_mask(t(lengths))
    assert out.dtype == paddle.int64 and out.stop_gradient
    np.testing.assert_array_equal(out.numpy(), np_sequence_mask(lengths, 5))
    np.testing.assert_array_equal(F.sequence_mask(t(lengths), 7).numpy(),
                                  np_sequence_mask(lengths, 7))
    np.testing.assert_array_equal(F.sequence_mask(t(lengths), 2).numpy(),
                                  np_sequence_mask(lengths, 2))
    np.testing.assert_array_equal(F.sequence_mask(t(lengths), maxlen=-1).numpy(),
                                  np_sequence_mask(lengths, 5))
    np.testing.assert_array_equal(F.sequence_mask(t(lengths), t(4)).numpy(),
                                  np_sequence_mask(lengths, 4))
    for name in ("bool", "float32"):
        out = F.sequence_mask(t(lengths), dtype=name)
        assert out.dtype == getattr(paddle, name)
        np.testing.assert_array_equal(out.numpy(), np_sequence_mask(lengths, 5))


def test_sequence_mask_float_scalar_and_empty_lengths():
    lengths = np.array([2.5, 1.0], np.float32)  # maxlen int(2.5) = 2, compared as floats
    np.testing.assert_array_equal(F.sequence_mask(t(lengths)).numpy(),
                                  np_sequence_mask(lengths, 2))
    np.testing.assert_array_equal(F.sequence_mask(t(2)).numpy(), np_sequence_mask(2, 2))
    assert F.sequence_mask(t(np.zeros([0], np.int64))).shape == [0, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_sequence_mask(backend):
    lengths = t(np.array([3, 1, 4]))
    for fn in (F.sequence_mask, lambda x: F.sequence_mask(x, 6, "float32")):
        np.testing.assert_array_equal(paddle.compile(fn, backend=backend)(lengths).numpy(),
                                      fn(lengths).numpy())
    static = paddle.jit.to_static(F.sequence_mask, input_spec=[InputSpec([None], "int64")],
                                  backend=backend)
    np.testing.assert_array_equal(static(lengths).numpy(), np_sequence_mask([3, 1, 4], 4))
    np.testing.assert_array_equal(static(t(np.array([2]))).numpy(), np_sequence_mask([2], 2))


# ---------------------------------------------------------------- square_error_cost

def test_square_error_cost_values_and_gradients():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(F.square_error_cost(t(a), t(b)).numpy(), (a - b) ** 2,
                               rtol=1e-12)
    check_grads(F.square_error_cost, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_similarity_and_cost(backend):
    a = t(RNG.standard_normal((3, 4)).astype(np.float32))
    b = t(RNG.standard_normal((3, 4)).astype(np.float32))

    def fn(a, b):
        return F.cosine_similarity(a, b, axis=-1) + F.square_error_cost(a, b).sum(1)

    np.testing.assert_allclose(paddle.compile(fn, backend=backend)(a, b).numpy(),
                               fn(a, b).numpy(), rtol=1e-6)
