"""Gradient clips against NumPy, alone and inside an optimizer."""
import numpy as np
import pytest

import irflow
from irflow.optimizer import SGD
from irflow.optimizer.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue

rng = np.random.default_rng(7)


def param(shape, dtype="float64", need_clip=True, name=None):
    p = irflow.Parameter(rng.standard_normal(shape).astype(dtype), name=name)
    p.need_clip = need_clip
    return p


def tensor(array):
    return irflow.to_tensor(array)


def test_clip_by_value():
    g = rng.standard_normal((3, 4)) * 2
    frozen = rng.standard_normal(5) * 2
    p, q = param((3, 4)), param((5,), need_clip=False)
    (p_out, g_out), (q_out, h_out) = ClipGradByValue(max=0.5)([(p, tensor(g)), (q, tensor(frozen))])
    assert p_out is p and q_out is q
    np.testing.assert_array_equal(g_out.numpy(), np.clip(g, -0.5, 0.5))
    np.testing.assert_array_equal(h_out.numpy(), frozen)
    (_, g_out), = ClipGradByValue(max=1.0, min=0.2)([(p, tensor(g))])
    np.testing.assert_array_equal(g_out.numpy(), np.clip(g, 0.2, 1.0))


def test_clips_drop_missing_gradients():
    p, q = param((2,)), param((2,))
    for clip in [ClipGradByValue(1.0), ClipGradByNorm(1.0), ClipGradByGlobalNorm(1.0)]:
        out = clip([(p, None), (q, tensor(np.ones(2)))])
        assert [pair[0] for pair in out] == [q]


def test_clip_by_norm_per_tensor():
    big, small = rng.standard_normal(6) * 3, rng.standard_normal(6) * 0.01
    p, q = param((6,)), param((6,))
    (_, a), (_, b) = ClipGradByNorm(clip_norm=1.0)([(p, tensor(big)), (q, tensor(small))])
    np.testing.assert_allclose(a.numpy(), big / np.linalg.norm(big), rtol=1e-14)
    np.testing.assert_array_equal(b.numpy(), small)  # below the norm: untouched, exactly


@pytest.mark.parametrize("scale", [0.01, 10.0])
def test_clip_by_global_norm(scale):
    grads = [rng.standard_normal(s) * scale for s in [(3, 2), (4,), (2, 2)]]
    params = [param(g.shape) for g in grads]
    params[2].need_clip = False
    out = ClipGradByGlobalNorm(clip_norm=1.0)([(p, tensor(g)) for p, g in zip(params, grads)])
    norm = np.sqrt(sum((g ** 2).sum() for g in grads[:2]))
    factor = 1.0 / max(norm, 1.0)
    for (p, got), want in zip(out, [grads[0] * factor, grads[1] * factor, grads[2]]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    if scale < 1:
        np.testing.assert_array_equal(out[0][1].numpy(), grads[0])


def test_clip_by_global_norm_mixed_dtypes():
    g32 = rng.standard_normal(4).astype("float32") * 5
    g64 = rng.standard_normal(3) * 5
    out = ClipGradByGlobalNorm(2.0)([(param((4,), "float32"), tensor(g32)),
                                     (param((3,)), tensor(g64))])
    norm = np.sqrt((g32.astype("float64") ** 2).sum() + (g64 ** 2).sum())
    assert out[0][1].dtype == irflow.float32 and out[1][1].dtype == irflow.float64
    np.testing.assert_allclose(out[0][1].numpy(), g32 * 2.0 / norm, rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), g64 * 2.0 / norm, rtol=1e-6)


def test_all_parameters_excluded_from_the_global_norm():
    p = param((2,), need_clip=False)
    g = tensor(np.array([30.0, 40.0]))
    assert ClipGradByGlobalNorm(1.0)([(p, g)]) == [(p, g)]


def test_optimizer_updates_with_clipped_gradient_and_keeps_grad():
    w, b = param((3, 2), name="w"), param((2,), name="b")
    w0, b0 = w.numpy(), b.numpy()
    gw, gb = rng.standard_normal((3, 2)) * 4, rng.standard_normal(2) * 4
    w.grad, b.grad = gw, gb
    SGD(0.1, parameters=[w, b], grad_clip=ClipGradByGlobalNorm(1.0)).step()
    factor = 1.0 / np.sqrt((gw ** 2).sum() + (gb ** 2).sum())
    np.testing.assert_allclose(w.numpy(), w0 - 0.1 * gw * factor, rtol=1e-14)
    np.testing.assert_allclose(b.numpy(), b0 - 0.1 * gb * factor, rtol=1e-14)
    np.testing.assert_array_equal(w.grad.numpy(), gw)  # param.grad itself is not clipped


def test_arguments():
    with pytest.raises(ValueError, match="positive"):
        ClipGradByValue(max=-1.0)
    with pytest.raises(TypeError, match="auto_skip_clip"):
        ClipGradByGlobalNorm(1.0, auto_skip_clip=1)
    assert str(ClipGradByNorm(0.5)) == "Gradient Clip By Norm, clip_norm=0.500000"
    with pytest.raises(TypeError, match="grad_clip"):
        SGD(0.1, parameters=[param((2,))], grad_clip=lambda pg: pg)
