"""paddle.linalg's qr, eigh, eigvalsh, svd, svdvals, pinv, lstsq, matrix_rank and
cond: values against NumPy's LAPACK routines, gradients against finite differences
(batched too), and the output conventions Paddle documents (shapes, dtypes, which
lstsq outputs are empty for which driver)."""
from __future__ import annotations

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import DTypeError, ShapeError
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(0)


def _t(a):
    return paddle.to_tensor(a)


def _symmetric(*shape):
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


# ---------------------------------------------------------------- qr

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 5, 3), (2, 3, 3)])
def test_qr_modes_match_numpy(shape):
    a = RNG.standard_normal(shape)
    for mode in ("reduced", "complete"):
        q, r = paddle.linalg.qr(_t(a), mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        assert q.shape == list(nq.shape) and r.shape == list(nr.shape)
        np.testing.assert_allclose(q.numpy(), nq, atol=1e-12)
        np.testing.assert_allclose(r.numpy(), nr, atol=1e-12)
        np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-12)
    r = paddle.linalg.qr(_t(a), mode="r")
    assert isinstance(r, paddle.Tensor)
    np.testing.assert_allclose(r.numpy(), np.linalg.qr(a, mode="r"), atol=1e-12)
    q32, _ = _t(a.astype("float32")).qr()
    assert q32.dtype == paddle.float32


def test_qr_rejects_what_paddle_rejects():
    with pytest.raises(ValueError, match="mode"):
        paddle.linalg.qr(_t(np.eye(2)), mode="full")
    with pytest.raises(ShapeError, match="matrices"):
        paddle.linalg.qr(_t(np.ones(3)))
    with pytest.raises(DTypeError, match="float32 or float64"):
        paddle.linalg.qr(_t(np.ones((2, 2), np.int64)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 5)])
def test_qr_gradient(shape):
    k = min(shape[-2:])
    cq = RNG.standard_normal(shape[:-1] + (k,))
    cr = RNG.standard_normal(shape[:-2] + (k, shape[-1]))

    def both(t):
        q, r = paddle.linalg.qr(t)
        return (q * _t(cq)).sum() + (r * _t(cr)).sum()

    check_grads(both, RNG.standard_normal(shape))
    check_grads(lambda t: paddle.linalg.qr(t)[1], RNG.standard_normal(shape))
    if shape[-2] <= shape[-1]:  # a wide complete Q is the reduced one
        check_grads(lambda t: paddle.linalg.qr(t, mode="complete")[0], RNG.standard_normal(shape))


def test_qr_gradient_refused_where_q_is_not_determined():
    """Paddle has no gradient for mode 'r', nor for the complete Q of a tall matrix,
    whose last m - n columns x does not determine."""
    x = paddle.to_tensor(RNG.standard_normal((4, 3)), stop_gradient=False)
    with pytest.raises(ShapeError, match="mode='r'"):
        paddle.linalg.qr(x, mode="r").sum().backward()
    with pytest.raises(ShapeError, match="complete"):
        paddle.linalg.qr(x, mode="complete")[1].sum().backward()


# ---------------------------------------------------------------- eigh

@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle(uplo):
    a = RNG.standard_normal((2, 4, 4))  # not symmetric: only one triangle is read
    w, v = paddle.linalg.eigh(_t(a), UPLO=uplo)
    nw, nv = np.linalg.eigh(a, UPLO=uplo)
    assert w.shape == [2, 4] and v.shape == [2, 4, 4]
    np.testing.assert_allclose(w.numpy(), nw, atol=1e-12)
    np.testing.assert_allclose(v.numpy(), nv, atol=1e-12)
    assert np.all(np.diff(w.numpy(), axis=-1) >= 0)  # ascending
    np.testing.assert_allclose(paddle.linalg.eigvalsh(_t(a), UPLO=uplo).numpy(), nw, atol=1e-12)
    np.testing.assert_allclose(_t(a).eigvalsh(uplo).numpy(), nw, atol=1e-12)
    with pytest.raises(ValueError, match="UPLO"):
        paddle.linalg.eigh(_t(a), UPLO="X")
    with pytest.raises(ShapeError, match="square"):
        paddle.linalg.eigvalsh(_t(a[:, :3]))


def test_eigh_gradient_batched():
    """Through a symmetric input, per matrix of a batch (Paddle 3.3.1's batched eigh
    gradient mixes the matrices up; the rule V (diag(gw) + skew(V^T gV) / 2E) V^T is
    applied to each one here)."""
    gv = RNG.standard_normal((3, 4, 4))
    gw = RNG.standard_normal((3, 4))

    def both(t):
        w, v = paddle.linalg.eigh(t + t.transpose([0, 2, 1]))
        return (w * _t(gw)).sum() + (v * _t(gv)).sum()

    check_grads(both, RNG.standard_normal((3, 4, 4)))
    check_grads(lambda t: paddle.linalg.eigvalsh(t + t.transpose([0, 2, 1]), UPLO="U"),
                RNG.standard_normal((3, 4, 4)))


def test_eigh_gradient_is_symmetric():
    """As Paddle's: the gradient of x taken as a symmetric matrix, V diag(gw) V^T for
    the eigenvalues, whichever triangle the factorization read."""
    a = _symmetric(4, 4)
    x = paddle.to_tensor(a, stop_gradient=False)
    gw = RNG.standard_normal(4)
    (paddle.linalg.eigvalsh(x) * _t(gw)).sum().backward()
    _, v = np.linalg.eigh(a)
    np.testing.assert_allclose(x.grad.numpy(), v @ np.diag(gw) @ v.T, atol=1e-12)


# ---------------------------------------------------------------- svd

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_matches_numpy(shape):
    a = RNG.standard_normal(shape)
    for full in (False, True):
        u, s, vh = paddle.linalg.svd(_t(a), full_matrices=full)
        nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
        for mine, ref in ((u, nu), (s, ns), (vh, nvh)):
            assert mine.shape == list(ref.shape)
            np.testing.assert_allclose(mine.numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(paddle.linalg.svdvals(_t(a)).numpy(),
                               np.linalg.svd(a, compute_uv=False), atol=1e-12)
    assert paddle.linalg.svd(_t(a.astype("float32")))[1].dtype == paddle.float32


def test_svd_out_takes_the_results():
    a = RNG.standard_normal((3, 2))
    out = (paddle.zeros([3, 2], "float64"), paddle.zeros([2], "float64"),
           paddle.zeros([2, 2], "float64"))
    u, s, vh = paddle.linalg.svd(_t(a), out=out)
    np.testing.assert_allclose(out[1].numpy(), np.linalg.svd(a)[1], atol=1e-12)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), a, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 3, 3)])
def test_svd_gradient(shape):
    k = min(shape[-2:])
    cu = RNG.standard_normal(shape[:-1] + (k,))
    cv = RNG.standard_normal(shape[:-2] + (k, shape[-1]))

    def all_three(t):
        u, s, vh = paddle.linalg.svd(t)
        return (u * _t(cu)).sum() + (s * s).sum() + (vh * _t(cv)).sum()

    check_grads(all_three, RNG.standard_normal(shape))
    check_grads(paddle.linalg.svdvals, RNG.standard_normal(shape))


def test_svd_full_matrices_gradient_drops_the_undetermined_columns():
    """With full_matrices, U's columns (VH's rows) beyond min(m, n) do not depend
    smoothly on x; as Paddle, their cotangents are dropped, so the gradient is the
    reduced factors' with the first k columns' cotangents."""
    a = RNG.standard_normal((5, 3))
    cu, cv = RNG.standard_normal((5, 5)), RNG.standard_normal((3, 3))
    grads = []
    for full, (gu, gv) in ((True, (cu, cv)), (False, (cu[:, :3], cv))):
        x = paddle.to_tensor(a, stop_gradient=False)
        u, s, vh = paddle.linalg.svd(x, full_matrices=full)
        ((u * _t(gu)).sum() + s.sum() + (vh * _t(gv)).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)


# ---------------------------------------------------------------- pinv, lstsq, rank, cond

def test_pinv_matches_numpy():
    a = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(paddle.linalg.pinv(_t(a)).numpy(), np.linalg.pinv(a),
                               atol=1e-12)
    s = _symmetric(2, 3, 3)
    np.testing.assert_allclose(paddle.linalg.pinv(_t(s), hermitian=True).numpy(),
                               np.linalg.pinv(s, hermitian=True), atol=1e-12)
    d = np.diag([10.0, 1.0, 1e-3])  # 1e-3 is not above rcond * 10 = 1e-2: dropped
    np.testing.assert_allclose(paddle.linalg.pinv(_t(d), rcond=1e-3).numpy(),
                               np.diag([0.1, 1.0, 0.0]))
    np.testing.assert_allclose(_t(-d).pinv(rcond=1e-3, hermitian=True).numpy(),
                               np.diag([-0.1, -1.0, 0.0]))


def test_pinv_gradient():
    check_grads(paddle.linalg.pinv, RNG.standard_normal((2, 4, 3)))
    check_grads(lambda t: paddle.linalg.pinv(t + t.t(), hermitian=True), _symmetric(3, 3))
    # a dropped zero singular value leaves the gradient finite
    x = paddle.to_tensor(np.array([[1.0, 0.0], [0.0, 0.0]]), stop_gradient=False)
    paddle.linalg.pinv(x).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 5, 3)])
def test_lstsq_solution_and_outputs_per_driver(shape):
    """Paddle's rules: residuals (column sums of squared errors) only for m > n with
    gels, gelsd or gelss at full rank; rank int32 but for gels (an empty int64);
    singular values only for gelsd and gelss; the default driver is gelsy."""
    a, b = RNG.standard_normal(shape), RNG.standard_normal(shape[:-1] + (2,))
    expected = np.linalg.pinv(a) @ b
    batch, (m, n) = list(shape[:-2]), shape[-2:]
    tall = m > n
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        solution, residuals, rank, sv = paddle.linalg.lstsq(_t(a), _t(b), driver=driver)
        np.testing.assert_allclose(solution.numpy(), expected, atol=1e-12)
        if tall and driver in ("gels", "gelsd", "gelss"):
            np.testing.assert_allclose(residuals.numpy(),
                                       ((a @ expected - b) ** 2).sum(-2), atol=1e-12)
        else:
            assert residuals.shape == [0]
        if driver == "gels":
            assert rank.shape == [0] and rank.dtype == paddle.int64
        else:
            assert rank.dtype == paddle.int32 and rank.shape == batch
            np.testing.assert_array_equal(rank.numpy(), min(m, n))
        if driver in ("gelsd", "gelss"):
            np.testing.assert_allclose(sv.numpy(), np.linalg.svd(a, compute_uv=False),
                                       atol=1e-12)
        else:
            assert sv.shape == [0] and sv.dtype == paddle.float64


def test_lstsq_rank_deficient_rcond_and_no_gradient():
    d = np.diag([10.0, 1.0, 1e-3])
    solution, residuals, rank, _ = paddle.linalg.lstsq(_t(d), _t(np.ones((3, 1))), rcond=1e-2,
                                                       driver="gelsd")
    np.testing.assert_allclose(solution.numpy().ravel(), [0.1, 1.0, 0.0])
    assert rank.item() == 2
    tall = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1 < n: no residuals
    _, residuals, rank, _ = paddle.linalg.lstsq(_t(tall), _t(np.ones((3, 1))), driver="gelsd")
    assert residuals.shape == [0] and rank.item() == 1
    x = paddle.to_tensor(RNG.standard_normal((4, 2)), stop_gradient=False)
    assert all(t.stop_gradient for t in x.lstsq(_t(np.ones((4, 1)))))
    with pytest.raises(ValueError, match="driver"):
        paddle.linalg.lstsq(x, _t(np.ones((4, 1))), driver="gelsx")
    with pytest.raises(ShapeError, match="matrices"):
        paddle.linalg.lstsq(x, _t(np.ones(4)))


def test_matrix_rank():
    a = RNG.standard_normal((3, 5, 4))
    a[1, :, 3] = a[1, :, 0] + a[1, :, 1]
    a[2] = 0
    rank = paddle.linalg.matrix_rank(_t(a))
    assert rank.dtype == paddle.int64
    np.testing.assert_array_equal(rank.numpy(), np.linalg.matrix_rank(a))
    d = _t(np.diag([10.0, 1.0, 1e-3]))
    # kept: singular values above max(atol, rtol * largest); tol alone is atol
    assert paddle.linalg.matrix_rank(d, tol=1e-3).item() == 2
    assert paddle.linalg.matrix_rank(d, atol=0.5, rtol=1e-4).item() == 2
    assert paddle.linalg.matrix_rank(d, rtol=1e-5).item() == 3
    # rtol left out is eps * max(m, n), also when atol is given
    assert paddle.linalg.matrix_rank(_t(np.diag([1.0, 1e-17])), atol=1e-20).item() == 1
    assert paddle.linalg.matrix_rank(-d, hermitian=True, tol=1e-2).item() == 2
    with pytest.raises(ValueError, match="tol alone"):
        paddle.linalg.matrix_rank(d, tol=0.1, atol=0.1)


@pytest.mark.parametrize("p", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_cond_matches_numpy(p):
    a = RNG.standard_normal((2, 3, 3))
    np.testing.assert_allclose(paddle.linalg.cond(_t(a), p=p).numpy(), np.linalg.cond(a, p=p),
                               rtol=1e-10)
    check_grads(lambda t: t.cond(p), a)


def test_cond_shapes():
    rect = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(paddle.linalg.cond(_t(rect)).numpy(), np.linalg.cond(rect),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="square"):
        paddle.linalg.cond(_t(rect), p="fro")
    assert paddle.linalg.cond(paddle.zeros([2, 0, 0], "float64")).shape == [2]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_agrees_with_eager(backend):
    def f(a, s):
        q, r = paddle.linalg.qr(a)
        w, v = paddle.linalg.eigh(s)
        return (q.sum() + r.mean() + paddle.linalg.svdvals(a).sum() + w.sum() + v.abs().sum()
                + paddle.linalg.pinv(a).sum())

    args = [_t(RNG.standard_normal((2, 4, 3))), _t(_symmetric(3, 3))]
    compiled = paddle.compile(f, backend=backend)
    np.testing.assert_allclose(compiled(*args).numpy(), f(*args).numpy(), rtol=1e-10)
