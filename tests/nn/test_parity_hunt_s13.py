"""Parity hunt (session 13) in irflow.nn: `interpolate`'s 1-D "linear", 3-D
"trilinear" and "nearest" and the "area" mode, against NumPy references written from
Paddle's sampling rule, gradients against finite differences."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(13)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


# ---------------------------------------------------------------- interpolate

def linear_taps(n_in: int, n_out: int, scale, align_corners: bool, align_mode: int):
    """Paddle's linear source taps of one axis: per output position the (low, high,
    weight of high). Source position dst * ratio with `align_corners` or align_mode 1,
    else the half-pixel centre ratio * (dst + 0.5) - 0.5 clamped at 0; the ratio is
    (in - 1) / (out - 1) with `align_corners` (0 for a single output), else 1 / scale
    when a scale factor was given, else in / out."""
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None else n_in / n_out
    taps = []
    for dst in range(n_out):
        src = dst * ratio if align_corners or align_mode == 1 else max(ratio * (dst + 0.5) - 0.5, 0)
        low = min(int(np.floor(src)), n_in - 1)
        taps.append((low, min(low + 1, n_in - 1), src - low))
    return taps


def np_linear(x, axes, out_sizes, scales, align_corners, align_mode):
    """Separable linear resampling of `x` on `axes`, one axis after the other."""
    for axis, n_out, scale in zip(axes, out_sizes, scales):
        taps = linear_taps(x.shape[axis], n_out, scale, align_corners, align_mode)
        low = np.take(x, [a for a, _, _ in taps], axis)
        high = np.take(x, [b for _, b, _ in taps], axis)
        shape = [1] * x.ndim
        shape[axis] = n_out
        w = np.array([w for _, _, w in taps]).reshape(shape)
        x = low * (1 - w) + high * w
    return x


@pytest.mark.parametrize("align_corners,align_mode", [(False, 0), (False, 1), (True, 0)])
def test_linear_1d_matches_the_sampling_rule(align_corners, align_mode):
    x = RNG.standard_normal((2, 3, 7))
    for size, scale in (([11], None), ([4], None), (None, 1.5), (None, 0.6)):
        got = F.interpolate(t(x), size=size, scale_factor=scale, mode="linear",
                            align_corners=align_corners, align_mode=align_mode)
        out = size or [int(7 * scale)]
        want = np_linear(x, [2], out, [scale], align_corners, align_mode)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    nwc = F.interpolate(t(x.transpose(0, 2, 1)), size=[9], mode="linear",
                        align_corners=align_corners, align_mode=align_mode, data_format="NWC")
    np.testing.assert_allclose(nwc.numpy().transpose(0, 2, 1),
                               np_linear(x, [2], [9], [None], align_corners, align_mode),
                               rtol=1e-12)
    check_grads(lambda a: F.interpolate(a, scale_factor=1.5, mode="linear",
                                        align_corners=align_corners, align_mode=align_mode),
                x[:1, :2])


@pytest.mark.parametrize("align_corners,align_mode", [(False, 0), (False, 1), (True, 0)])
def test_trilinear_matches_the_sampling_rule(align_corners, align_mode):
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    for size, scales in (([4, 5, 7], [None] * 3), (None, [2.0, 1.5, 0.5])):
        got = F.interpolate(t(x), size=size, scale_factor=None if size else scales,
                            mode="trilinear", align_corners=align_corners,
                            align_mode=align_mode)
        out = size or [int(n * s) for n, s in zip(x.shape[2:], scales)]
        want = np_linear(x, [2, 3, 4], out, scales, align_corners, align_mode)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    ndhwc = F.interpolate(t(x.transpose(0, 2, 3, 4, 1)), size=[4, 5, 7], mode="trilinear",
                          align_corners=align_corners, align_mode=align_mode,
                          data_format="NDHWC")
    np.testing.assert_allclose(ndhwc.numpy().transpose(0, 4, 1, 2, 3),
                               np_linear(x, [2, 3, 4], [4, 5, 7], [None] * 3, align_corners,
                                         align_mode), rtol=1e-12)
    check_grads(lambda a: F.interpolate(a, size=[3, 5, 3], mode="trilinear",
                                        align_corners=align_corners, align_mode=align_mode),
                x[:, :1, :2])


def test_trilinear_with_corners_aligned_is_exact_on_linear_functions():
    """A function linear in (d, h, w) is reproduced exactly at the source positions
    i * (in - 1) / (out - 1) of each axis."""
    d, h, w = np.meshgrid(np.arange(3.0), np.arange(4.0), np.arange(5.0), indexing="ij")
    x = (2 * d - 3 * h + 0.5 * w)[None, None]
    got = F.interpolate(t(x), size=[5, 7, 9], mode="trilinear", align_corners=True)
    d, h, w = np.meshgrid(np.linspace(0, 2, 5), np.linspace(0, 3, 7), np.linspace(0, 4, 9),
                          indexing="ij")
    np.testing.assert_allclose(got.numpy()[0, 0], 2 * d - 3 * h + 0.5 * w, atol=1e-12)


def test_single_output_position_of_linear_modes_is_the_half_pixel_centre():
    """Paddle's linear and trilinear kernels keep the half-pixel ratio where the
    output has one position (the centre of the input), its bilinear kernel samples
    the first row or column there."""
    x = np.arange(7.0).reshape(1, 1, 7)
    assert F.interpolate(t(x), size=[1], mode="linear").numpy().ravel().tolist() == [3.0]
    assert F.interpolate(t(x), size=[1], mode="linear", align_mode=1).item() == 0.0
    assert F.interpolate(t(x), size=[1], mode="linear", align_corners=True).item() == 0.0
    cube = np.arange(60.0).reshape(1, 1, 3, 4, 5)
    # centres 1, 1.5 and 2 of the axes of 3, 4 and 5 cells: 1 * 20 + 1.5 * 5 + 2
    assert F.interpolate(t(cube), size=[1, 1, 1], mode="trilinear").item() == 29.5
    image = np.arange(20.0).reshape(1, 1, 4, 5)
    assert F.interpolate(t(image), size=[1, 1], mode="bilinear").item() == 0.0


def test_nearest_5d():
    x = RNG.standard_normal((2, 2, 3, 4, 5))
    got = F.interpolate(t(x), size=[5, 6, 3], mode="nearest")
    # nearest: source floor(dst * in / out)
    rows = [np.floor(np.arange(o) * n / o).astype(int) for n, o in zip((3, 4, 5), (5, 6, 3))]
    np.testing.assert_array_equal(got.numpy(), x[:, :, rows[0]][:, :, :, rows[1]][..., rows[2]])
    ndhwc = F.interpolate(t(x.transpose(0, 2, 3, 4, 1)), scale_factor=2, mode="nearest",
                          data_format="NDHWC")
    np.testing.assert_array_equal(ndhwc.numpy().transpose(0, 4, 1, 2, 3),
                                  x.repeat(2, 2).repeat(2, 3).repeat(2, 4))
    assert nn.Upsample(scale_factor=2, mode="trilinear")(t(x)).shape == [2, 2, 6, 8, 10]


def test_area_is_adaptive_average_pooling():
    x = RNG.standard_normal((2, 3, 5, 7))
    np.testing.assert_allclose(F.interpolate(t(x), size=[2, 3], mode="area").numpy(),
                               F.adaptive_avg_pool2d(t(x), [2, 3]).numpy())
    line = F.interpolate(t(x[:, :, 0]), size=[3], mode="area").numpy()
    # bins [0, 3), [2, 5), [4, 7) of 7 cells into 3
    np.testing.assert_allclose(line, np.stack([x[:, :, 0, a:b].mean(-1) for a, b in
                                               ((0, 3), (2, 5), (4, 7))], -1))
    assert F.interpolate(t(x[:, :, None]), size=[1, 2, 3], mode="area").shape == [2, 3, 1, 2, 3]
    with pytest.raises(ValueError, match="area"):
        F.interpolate(t(x), scale_factor=2, mode="area")


def test_interpolate_checks_mode_rank_and_layout():
    with pytest.raises(ValueError, match="linear needs a 3-D input"):
        F.interpolate(t(np.zeros((1, 1, 2, 2))), size=[3, 3], mode="linear")
    with pytest.raises(ValueError, match="nearest needs a 4 or 5-D input"):
        F.interpolate(t(np.zeros((1, 1, 2))), size=[3], mode="nearest")
    with pytest.raises(ValueError, match="'NCW' or 'NWC'"):
        F.interpolate(t(np.zeros((1, 1, 2))), size=[3], mode="linear", data_format="NCHW")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.interpolate(t(np.zeros((1, 1, 2, 2))), size=[3, 3], mode="cubic")


# ---------------------------------------------------------------- ctc_loss

def np_ctc_by_enumeration(logits, labels, input_lengths, label_lengths, blank):
    """-log of the summed probability of every path of classes (softmax of the logits
    per step) that collapses to the label sequence: repeats merged, then blanks
    dropped. Enumerates all C^T paths, so small inputs only."""
    steps, batch, classes = logits.shape
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    losses = []
    for b in range(batch):
        n = input_lengths[b]
        target = list(labels[b, :label_lengths[b]])
        total = 0.0
        for path in np.ndindex(*([classes] * n)):
            merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if [c for c in merged if c != blank] == target:
                total += np.prod([probs[t, b, c] for t, c in enumerate(path)])
        losses.append(-np.log(total) if total > 0 else np.inf)
    return np.array(losses)


CTC_LOGITS = RNG.standard_normal((5, 4, 3))
CTC_LABELS = np.array([[1, 1], [2, 1], [2, 0], [1, 2]], "int32")
CTC_INPUT_LENGTHS = np.array([5, 4, 3, 5])
CTC_LABEL_LENGTHS = np.array([2, 2, 1, 0])


def ctc(logits, **kw):
    return F.ctc_loss(logits, t(CTC_LABELS), t(CTC_INPUT_LENGTHS), t(CTC_LABEL_LENGTHS), **kw)


def test_ctc_loss_sums_the_probabilities_of_all_alignments():
    want = np_ctc_by_enumeration(CTC_LOGITS, CTC_LABELS, CTC_INPUT_LENGTHS, CTC_LABEL_LENGTHS, 0)
    got = ctc(t(CTC_LOGITS), reduction="none")
    assert got.shape == [4] and got.dtype == paddle.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(ctc(t(CTC_LOGITS), reduction="sum").numpy(), want.sum(),
                               rtol=1e-10)
    # "mean": each loss over its label length (the empty label's gives inf), then the mean
    head = F.ctc_loss(t(CTC_LOGITS[:, :3]), t(CTC_LABELS[:3]), t(CTC_INPUT_LENGTHS[:3]),
                      t(CTC_LABEL_LENGTHS[:3]))
    np.testing.assert_allclose(head.numpy(), np.mean(want[:3] / CTC_LABEL_LENGTHS[:3]),
                               rtol=1e-10)
    labels = np.where(CTC_LABELS == 0, 2, np.where(CTC_LABELS == 2, 0, CTC_LABELS))
    blank_two = F.ctc_loss(t(CTC_LOGITS), t(labels), t(CTC_INPUT_LENGTHS),
                           t(CTC_LABEL_LENGTHS), blank=2, reduction="none")
    np.testing.assert_allclose(
        blank_two.numpy(),
        np_ctc_by_enumeration(CTC_LOGITS, labels, CTC_INPUT_LENGTHS, CTC_LABEL_LENGTHS, 2),
        rtol=1e-10)
    check_grads(lambda a: ctc(a, reduction="none"), CTC_LOGITS)


def test_ctc_loss_norm_by_times_scales_the_gradient_only():
    plain, scaled = t(CTC_LOGITS, stop_gradient=False), t(CTC_LOGITS, stop_gradient=False)
    a, b = ctc(plain, reduction="sum"), ctc(scaled, reduction="sum", norm_by_times=True)
    a.backward()
    b.backward()
    assert a.item() == b.item()
    np.testing.assert_allclose(scaled.grad.numpy(),
                               plain.grad.numpy() / CTC_INPUT_LENGTHS[None, :, None],
                               rtol=1e-12)


def test_ctc_loss_without_any_alignment_is_infinite_and_has_no_gradient():
    """Labels 1, 1, 2 need four steps (a blank between the repeated 1s); three are
    given."""
    logits = t(CTC_LOGITS[:3, :1], stop_gradient=False)
    args = (t(np.array([[1, 1, 2]], "int32")), t(np.array([3])), t(np.array([3])))
    loss = F.ctc_loss(logits, *args, reduction="none")
    assert loss.numpy().tolist() == [np.inf]
    zeroed = F.ctc_loss(logits, *args, reduction="sum", zero_infinity=True)
    zeroed.backward()
    assert zeroed.item() == 0.0 and not logits.grad.numpy().any()


def test_ctc_loss_layer_and_compiled():
    layer = nn.CTCLoss(blank=0, reduction="sum")
    args = (t(CTC_LABELS), t(CTC_INPUT_LENGTHS), t(CTC_LABEL_LENGTHS))
    eager = layer(t(CTC_LOGITS), *args)
    np.testing.assert_allclose(eager.numpy(), ctc(t(CTC_LOGITS), reduction="sum").numpy())
    compiled = paddle.jit.to_static(lambda a, *rest: layer(a, *rest, norm_by_times=True))
    np.testing.assert_allclose(compiled(t(CTC_LOGITS), *args).numpy(), eager.numpy(),
                               rtol=1e-12)


def _penalty(logits_values, label):
    """||d CE(x, label) / dx||^2 of soft-label cross entropy, and its gradient."""
    x = paddle.to_tensor(logits_values, stop_gradient=False)
    (g,) = paddle.grad(F.cross_entropy(x, label, soft_label=True), x, create_graph=True)
    penalty = (g * g).sum()
    (h,) = paddle.grad(penalty, x)
    return float(penalty), h.numpy()


def test_soft_label_cross_entropy_differentiates_twice():
    """Its gradient (softmax - label, as Paddle) was a constant of the graph, so a
    gradient penalty through it had no gradient (paddle.grad said the input was
    unused); now the second derivative agrees with finite differences."""
    label = paddle.to_tensor([[0.2, 0.5, 0.3], [0.0, 0.0, 1.0]], dtype="float64")
    values = np.array([[1.0, 2.0, 0.5], [-0.3, 0.1, 2.0]])
    _, analytic = _penalty(values, label)
    numeric = np.zeros_like(values)
    for index in np.ndindex(values.shape):
        step = np.zeros_like(values)
        step[index] = 1e-6
        numeric[index] = (_penalty(values + step, label)[0]
                          - _penalty(values - step, label)[0]) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-9)


def test_embedding_refuses_negative_ids_eagerly_and_compiled():
    """An id of -1 picked the table's last row (Paddle's kernel reads outside its
    table); ids must lie in [0, num_embeddings), as Paddle documents."""
    from irflow.static import InputSpec
    table = nn.Embedding(10, 3)
    with pytest.raises(IndexError, match="ids must lie in"):
        table(paddle.to_tensor([1, -1]))
    compiled = paddle.jit.to_static(table, input_spec=[InputSpec([None], "int64")])
    np.testing.assert_array_equal(compiled(paddle.to_tensor([1, 2])).numpy(),
                                  table(paddle.to_tensor([1, 2])).numpy())
    with pytest.raises(IndexError, match="ids must lie in"):
        compiled(paddle.to_tensor([1, -1]))
