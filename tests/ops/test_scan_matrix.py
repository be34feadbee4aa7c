"""The ops of issue 13's tensor API, at the op level: argsort, nonzero, unique,
cumsum, cumprod (and its exact gradient op), tril, triu, einsum and roll. Kernels
against NumPy, type rules, and every VJP against central finite differences."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ShapeError
from irflow.ir import TensorType, lookup
from tests.nn.gradcheck import check_grads

RNG = np.random.default_rng(3)


def t(a, **kw):
    return paddle.to_tensor(a, **kw)


def op(name, *xs, **attrs):
    from irflow.dispatch import apply
    return apply(name, [t(x) for x in xs], attrs)


def infer(name, types, **attrs):
    opdef = lookup(name)
    return opdef.result_types(types, opdef.complete_attrs(attrs, types))


# ---------------------------------------------------------------- argsort, nonzero, unique

def test_argsort_is_stable_both_ways():
    x = np.array([[3., 1., 2., 1.], [0., 5., 5., -1.]])
    np.testing.assert_array_equal(op("argsort", x).numpy(), np.argsort(x, kind="stable"))
    # descending: ties keep their original order (Paddle's [[0, 2, 1, 3], [1, 2, 0, 3]])
    np.testing.assert_array_equal(op("argsort", x, descending=True).numpy(),
                                  [[0, 2, 1, 3], [1, 2, 0, 3]])
    np.testing.assert_array_equal(op("argsort", x, axis=0, descending=True).numpy(),
                                  [[0, 1, 1, 0], [1, 0, 0, 1]])
    u = np.array([200, 3, 255], np.uint8)  # no negation trick that would wrap around
    np.testing.assert_array_equal(op("argsort", u, descending=True).numpy(), [2, 0, 1])


def test_nonzero_and_unique_sizes_are_attributes():
    (out,) = infer("nonzero", [TensorType("f32", ("N", 3))], size="D1")
    assert out == TensorType("i64", ("D1", 2))
    values, index, inverse, counts = infer("unique", [TensorType("i32", ("N", 3))], size="D1")
    assert values == TensorType("i32", ("D1",)) and inverse == TensorType("i64", ("N*3",))
    assert index == counts == TensorType("i64", ("D1",))
    values, _, inverse, _ = infer("unique", [TensorType("f32", (4, 3))], axis=-1, size=2)
    assert values == TensorType("f32", (4, 2)) and inverse == TensorType("i64", (3,))
    with pytest.raises(ShapeError, match="expected 3 nonzero elements, found 2"):
        op("nonzero", np.array([1, 0, 2]), size=3)


def test_unique_kernel_matches_numpy():
    x = np.array([[3, 1], [3, 0]])
    values, index, inverse, counts = op("unique", x, size=3)
    v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, want in [(values, v), (index, i), (inverse, inv.reshape(-1)), (counts, c)]:
        np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------- scans

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod_match_numpy(axis):
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(op("cumsum", x, axis=axis).numpy(), np.cumsum(x, axis))
    np.testing.assert_allclose(op("cumsum", x, axis=axis, reverse=True).numpy(),
                               np.flip(np.cumsum(np.flip(x, axis), axis), axis))
    np.testing.assert_allclose(op("cumprod", x, axis=axis).numpy(), np.cumprod(x, axis))
    i = np.array([[1, 2], [3, 4]], np.int32)
    assert op("cumsum", i, axis=0).numpy().dtype == np.int32


@pytest.mark.parametrize("axis", [0, 1])
def test_scan_gradients(axis):
    x = RNG.standard_normal((3, 4))
    check_grads(lambda a: op_t("cumsum", a, axis=axis), x)
    check_grads(lambda a: op_t("cumsum", a, axis=axis, reverse=True), x)
    check_grads(lambda a: op_t("cumprod", a, axis=axis), x)


def test_cumprod_gradient_is_exact_at_zeros():
    """Dividing by x would give NaN here; the recurrence gives the true gradient."""
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    check_grads(lambda a: op_t("cumprod", a, axis=0), x)
    g = op("cumprod_grad", x, np.ones(5), axis=0).numpy()
    # d/dx1 of sum(cumprod) = x0 + x0*x2 + x0*x2*x3 + x0*x2*x3*x4 = 2 + 6 + 0 + 0
    assert g[1] == 8.0 and np.isfinite(g).all()


def op_t(name, *xs, **attrs):
    from irflow.dispatch import apply
    return apply(name, list(xs), attrs)


# ---------------------------------------------------------------- tril, triu, roll

@pytest.mark.parametrize("diagonal", [-1, 0, 2])
def test_triangles(diagonal):
    x = RNG.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(op("tril", x, diagonal=diagonal).numpy(), np.tril(x, diagonal))
    np.testing.assert_array_equal(op("triu", x, diagonal=diagonal).numpy(), np.triu(x, diagonal))
    check_grads(lambda a: op_t("tril", a, diagonal=diagonal), x)
    check_grads(lambda a: op_t("triu", a, diagonal=diagonal), x)
    with pytest.raises(ShapeError, match="rank >= 2"):
        infer("tril", [TensorType("f32", (3,))])


def test_roll():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(op("roll", x, shifts=(1,)).numpy(),
                                  np.roll(x.reshape(-1), 1).reshape(3, 4))
    np.testing.assert_array_equal(op("roll", x, shifts=(1, -1), axis=(0, 1)).numpy(),
                                  np.roll(x, (1, -1), (0, 1)))
    check_grads(lambda a: op_t("roll", a, shifts=(2, 1), axis=(1, 0)), x)
    with pytest.raises(ShapeError, match="2 shift"):
        infer("roll", [TensorType("f32", (3, 4))], shifts=(1, 2), axis=(0,))


# ---------------------------------------------------------------- einsum

@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,kj", [(2, 3), (4, 3)]),               # implicit output: sorted single labels
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 2)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij->j", [(3, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ijk,k->", [(2, 3, 4), (4,)]),              # a label only one operand has (i, j)
])
def test_einsum_values_and_gradients(equation, shapes):
    xs = [RNG.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(paddle.einsum(equation, *[t(x) for x in xs]).numpy(),
                               np.einsum(equation, *xs), rtol=1e-10)
    check_grads(lambda *a: paddle.einsum(equation, *a), *xs)


def test_einsum_canonical_form_and_errors():
    types = [TensorType("f32", ("N", 2, 3)), TensorType("f32", ("N", 3, 4))]
    opdef = lookup("einsum")
    assert opdef.complete_attrs({"equation": "...ij, ...jk"}, types)["equation"] == \
        "Aij,Ajk->Aik"
    assert infer("einsum", types, equation="bij,bjk->bik") == (TensorType("f32", ("N", 2, 4)),)
    with pytest.raises(ShapeError, match="names dims of sizes 3 and 4"):
        infer("einsum", types, equation="bij,bkj->bik")
    with pytest.raises(ShapeError, match="2 operand"):
        infer("einsum", types[:1], equation="ij,jk->ik")
    with pytest.raises(ShapeError, match="appears in no operand"):
        infer("einsum", types, equation="bij,bjk->bz")
    trace = paddle.einsum("ii", t(np.eye(3)))  # forward allows a diagonal
    assert float(trace) == 3.0
    x = t(np.eye(3), stop_gradient=False)
    paddle.einsum("ii->i", x).sum().backward()  # the gradient lands on the diagonal
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))
