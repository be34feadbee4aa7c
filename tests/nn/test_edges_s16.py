"""irflow.nn.functional on edge inputs: NaN and infinite grid coordinates, logits and
inputs, labels outside the classes, empty axes that are symbolic when compiled, empty
inputs of CTC; eager against NumPy or hand-derived values (and Paddle 3.3.1's where
stated), compiled (a symbolic batch, both backends) against eager."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.errors import OutOfRangeError
from irflow.static import InputSpec

BACKENDS = ["numpy", "llvm"]
nan, inf = np.nan, np.inf


def t(values, dtype=np.float32, **kwargs):
    return paddle.to_tensor(np.asarray(values, dtype), **kwargs)


def compiled(fn, *specs, backend):
    return paddle.compile(fn, input_spec=[InputSpec(*s) for s in specs], backend=backend)


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- grid_sample

CELLS = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("point", [[nan, 0.0], [0.0, nan], [nan, nan]])
def test_grid_sample_at_a_nan_position(padding_mode, align_corners, point):
    # Paddle 3.3.1: nearest reads 0 there (a NaN position lies outside x), bilinear NaN
    grid = t([[[point]]])
    nearest = F.grid_sample(t(CELLS), grid, "nearest", padding_mode, align_corners)
    np.testing.assert_array_equal(nearest.numpy(), [[[[0.0]]]])
    bilinear = F.grid_sample(t(CELLS), grid, "bilinear", padding_mode, align_corners)
    assert np.isnan(bilinear.numpy()).all() and bilinear.shape == [1, 1, 1, 1]


@pytest.mark.parametrize("mode, want", [("nearest", 0.0), ("bilinear", nan)])
def test_grid_sample_reflecting_an_infinite_position(mode, want):
    # reflection folds inf to NaN: as a NaN position (Paddle 3.3.1 alike)
    out = F.grid_sample(t(CELLS), t([[[[inf, 0.0]]]]), mode, "reflection")
    np.testing.assert_array_equal(out.numpy(), [[[[want]]]])


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_grid_sample_outside_x_reads_zero_beside_an_infinite_cell(mode):
    # the corner cell holds inf; positions past it read 0 (not 0 * inf), as Paddle's
    x = CELLS.copy()
    x[0, 0, 0, 0] = inf
    out = F.grid_sample(t(x), t([[[[-3.0, -3.0], [-1.5, -1.0]]]]), mode, "zeros")
    want = [0.0, inf]  # (-1.5, -1): the bilinear corner inside is the inf cell, weight 1/2
    np.testing.assert_array_equal(out.numpy().ravel(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_sample_with_nan_positions_compiled_equals_eager(backend):
    def sample(grid):
        return (F.grid_sample(t(CELLS[:, :, :2]).expand([paddle.shape(grid)[0], 1, 2, 3]),
                              grid, "nearest", "border"),
                F.grid_sample(t(CELLS[:, :, :2]).expand([paddle.shape(grid)[0], 1, 2, 3]),
                              grid, "bilinear", "zeros", align_corners=False))
    run = compiled(sample, ([None, 2, 2, 2], "float32"), backend=backend)
    for batch in (0, 1, 3):
        grid = np.random.default_rng(batch).uniform(-1.5, 1.5, (batch, 2, 2, 2))
        grid.reshape(-1)[::3] = nan
        grid = t(grid)
        for got, want in zip(run(grid), sample(grid)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---------------------------------------------------------------- softmax over a symbolic axis

SHIFTED = {
    "softmax": lambda x: F.softmax(x, axis=0),
    "log_softmax": lambda x: F.log_softmax(x, axis=0),
    "logsumexp": lambda x: paddle.logsumexp(x, axis=0),
    "logsumexp_all": lambda x: paddle.logsumexp(x),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SHIFTED))
def test_softmax_over_a_symbolic_axis_that_is_empty_when_run(backend, name):
    fn = SHIFTED[name]
    run = compiled(fn, ([None, 3], "float32"), backend=backend)
    for batch in (0, 1, 4):
        x = t(np.random.default_rng(batch).standard_normal((batch, 3)) * 30)
        assert_same(run(x).numpy(), fn(x).numpy())
    empty = run(paddle.zeros([0, 3])).numpy()
    if name.startswith("logsumexp"):  # the log of an empty sum
        assert (empty == -inf).all() and empty.shape == ((3,) if name == "logsumexp" else ())
    else:
        assert empty.shape == (0, 3)


# ---------------------------------------------------------------- labels outside the classes

@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
@pytest.mark.parametrize("label", [[-1, 0], [0, 3]])
def test_a_label_outside_the_classes_raises(loss, label):
    # Paddle 3.3.1 raises for both (IndexError for cross_entropy, ValueError for nll_loss);
    # -1 picked the last class
    x = t(np.arange(6).reshape(2, 3))
    with pytest.raises(IndexError, match=r"label values must lie in \[0, 3\) or equal "
                                         r"ignore_index \(-100\)"):
        loss(x, t(label, np.int64))
    for backend in BACKENDS:
        run = compiled(loss, ([None, 3], "float32"), ([None], "int64"), backend=backend)
        with pytest.raises(IndexError, match=r"label values must lie in \[0, 3\)"):
            run(x, t(label, np.int64))


def test_an_ignored_negative_label_is_still_ignored():
    probabilities = t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    loss = F.cross_entropy(probabilities, t([-1, 2], np.int64), ignore_index=-1,
                           use_softmax=False, reduction="sum")
    np.testing.assert_allclose(loss.numpy(), -np.log(0.1), rtol=1e-6)


# ---------------------------------------------------------------- losses at infinities

def test_binary_cross_entropy_with_logits_at_infinite_logits():
    # -log(sigmoid(x)) for label 1, -log(1 - sigmoid(x)) for label 0: 0 on the label's
    # side, inf on the other (Paddle 3.3.1 gives inf for -inf, NaN for +inf, label 1)
    logits = t([inf, -inf, inf, -inf, nan])
    labels = t([1.0, 1.0, 0.0, 0.0, 1.0])
    out = F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
    np.testing.assert_array_equal(out.numpy(), [0.0, inf, inf, 0.0, nan])
    weighted = F.binary_cross_entropy_with_logits(logits, labels, reduction="none",
                                                  pos_weight=t([2.0] * 5))
    np.testing.assert_array_equal(weighted.numpy(), [0.0, inf, inf, 0.0, nan])


def test_binary_cross_entropy_with_logits_finite_values_and_gradient():
    x = np.array([-30.0, -2.0, 0.0, 0.5, 40.0])
    y = np.array([1.0, 0.3, 0.0, 1.0, 0.0])
    w = 1.7
    logits = paddle.to_tensor(x, stop_gradient=False)
    out = F.binary_cross_entropy_with_logits(logits, paddle.to_tensor(y), reduction="sum",
                                             pos_weight=paddle.to_tensor(np.full(5, w)))
    softplus = lambda z: np.logaddexp(0.0, z)  # noqa: E731
    np.testing.assert_allclose(out.numpy(), np.sum(w * y * softplus(-x) + (1 - y) * softplus(x)),
                               rtol=1e-12)
    out.backward()
    sigmoid = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(logits.grad.numpy(), -w * y * (1 - sigmoid) + (1 - y) * sigmoid,
                               rtol=1e-12, atol=1e-15)


def test_ctc_of_an_empty_input():
    # no step: the empty alignment, probability 1 for an empty label (loss 0, as
    # torch's; Paddle 3.3.1's warp-ctc gives inf), none for another (inf)
    log_probs = t(np.log(np.full((5, 3, 4), 0.25)))
    labels = t([[1, 2], [1, 2], [3, 3]], np.int32)
    loss = F.ctc_loss(log_probs, labels, t([0, 0, 4], np.int64), t([0, 1, 2], np.int64),
                      reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0.0, inf, 3.9357], rtol=1e-4)


# ---------------------------------------------------------------- dropout, gumbel_softmax

def test_dropout_drops_infinite_and_nan_elements_to_zero():
    x = t([nan, inf, -inf, 1.0] * 64)
    np.testing.assert_array_equal(F.dropout(x, p=1.0).numpy(), np.zeros(256))
    paddle.seed(3)
    out = F.dropout(x, p=0.5).numpy()
    paddle.seed(3)
    kept = F.dropout(paddle.ones([256]), p=0.5).numpy() != 0  # the same draw
    assert 0 < kept.sum() < 256
    np.testing.assert_array_equal(out[~kept], 0.0)
    np.testing.assert_array_equal(out[kept], (x.numpy() * 2)[kept])


def test_dropout_of_p_one_keeps_x_in_the_graph_with_zero_gradient():
    x = t([inf, 2.0], stop_gradient=False)
    F.dropout(x, p=1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_alpha_dropout_replaces_a_dropped_infinite_element():
    paddle.seed(5)
    x = t([inf] * 64)
    out = F.alpha_dropout(x, p=0.5).numpy()
    dropped = np.isfinite(out)
    assert 0 < dropped.sum() < 64
    p, alpha = 0.5, -1.6732632423543772 * 1.0507009873554805
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    np.testing.assert_allclose(out[dropped], alpha * a - a * alpha * p, rtol=1e-6)


def test_hard_gumbel_softmax_of_infinite_logits_is_one_hot():
    # a NaN sample (inf - inf in the softmax) picks its first class (Paddle 3.3.1 alike)
    x = t([[inf, 0.0, 0.0], [-inf, 0.0, -inf], [-inf, -inf, -inf]])
    out = F.gumbel_softmax(x, hard=True).numpy()
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 1, 0], [1, 0, 0]])


# ---------------------------------------------------------------- npair_loss, compiled

@pytest.mark.parametrize("backend", BACKENDS)
def test_npair_loss_with_a_symbolic_batch(backend):
    def loss(x):
        return F.npair_loss(x, x + 1.0, paddle.arange(paddle.shape(x)[0]).astype("float32"))
    run = compiled(loss, ([None, 3], "float32"), backend=backend)
    x = t(np.random.default_rng(0).standard_normal((4, 3)))
    assert_same(run(x).numpy(), loss(x).numpy())
    with pytest.raises(ValueError, match="npair_loss: anchor must not be empty"):
        run(paddle.zeros([0, 3]))


# ---------------------------------------------------------------- sequence_mask, one_hot

@pytest.mark.parametrize("backend", BACKENDS)
def test_sequence_mask_of_lengths_that_are_empty_when_run(backend):
    run = compiled(F.sequence_mask, ([None], "int64"), backend=backend)
    for lengths in ([0, 2, 3], [], [-2, -1]):  # maxlen max(x), 0 for none, no step below 0
        want = F.sequence_mask(t(lengths, np.int64)).numpy()
        width = max([0, *lengths])
        np.testing.assert_array_equal(want, np.arange(width) < np.array(lengths)[:, None])
        np.testing.assert_array_equal(run(t(lengths, np.int64)).numpy(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_hot_of_num_classes_minus_one_and_no_index(backend):
    # max(x) + 1 of nothing: Paddle 3.3.1 raises ValueError; NumPy's message leaked
    with pytest.raises(ValueError, match="one_hot: num_classes=-1 takes max"):
        F.one_hot(t([], np.int64), -1)
    run = compiled(lambda x: F.one_hot(x, -1), ([None], "int64"), backend=backend)
    with pytest.raises(ValueError):
        run(t([], np.int64))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_classes", [3, -1])
def test_one_hot_of_an_index_outside_the_classes_raises_when_compiled(backend, num_classes):
    # eager raises OutOfRangeError (a ValueError, as Paddle's); compiled gave zero rows
    def encode(x):
        return F.one_hot(x, num_classes)
    run = compiled(encode, ([None], "int64"), backend=backend)
    assert_same(run(t([0, 2, 1], np.int64)).numpy(), encode(t([0, 2, 1], np.int64)).numpy())
    for labels in [[3, 0], [-1, 0]] if num_classes == 3 else [[-1, 0]]:
        with pytest.raises(OutOfRangeError, match="one_hot: index -?[0-9] is out of range"):
            encode(t(labels, np.int64))
        with pytest.raises(OutOfRangeError, match="one_hot: an index is out of range"):
            run(t(labels, np.int64))
