"""The recorded dynamic graph: backward() and paddle.grad, as in Paddle 3 (checked
against PaddlePaddle 3.3). Gradients are compared with central differences in
float64; what Paddle does (stop_gradient, accumulation, zero-filled grads after
clear_gradient, freeing the graph, paddle.grad's options) is written out here as
the expected behaviour; and the recorded graph must not grow over training steps."""
import gc
import weakref

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.autograd import GraphError, Node
from tests.nn.gradcheck import check_grads


def leaf(values, dtype="float64"):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=False)


# ---------------------------------------------------------------- backward()

def test_gradients_of_a_composite_function_match_finite_differences():
    rng = np.random.default_rng(0)

    def net(x, w, b):
        h = paddle.tanh(x @ w + b)
        return paddle.mean(paddle.exp(-h * h) * paddle.sqrt(x.abs().sum(axis=1, keepdim=True)
                                                            + 1.0), axis=0)

    check_grads(net, rng.standard_normal((5, 3)), rng.standard_normal((3, 4)),
                rng.standard_normal(4))


def test_backward_fills_grads_of_leaves_only():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = x * w
    y = (h * h).sum()
    assert x.is_leaf and not h.is_leaf and not h.stop_gradient and not y.stop_gradient
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0 * 3.0 ** 2, 2.0 * 4.0 ** 2]))
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.array([3.0 * 1.0 ** 2, 4.0 * 2.0 ** 2]))
    assert h.grad is None and y.grad is None                     # non-leaves: None
    assert x.grad.shape == x.shape and x.grad.dtype == x.dtype


def test_a_tensor_used_twice_collects_both_paths():
    x = leaf([3.0])
    (x * x + x).sum().backward()
    assert x.grad.item() == 7.0


def test_backward_of_a_non_scalar_seeds_ones_or_the_given_gradient():
    x = leaf([1.0, 2.0, 3.0])
    (x * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
    x.clear_gradient()
    (x * 2).backward(paddle.to_tensor([1.0, 0.0, -1.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.0, -2.0])
    with pytest.raises(GraphError, match="shape"):
        (x * 2).backward(paddle.to_tensor([1.0, 2.0]))


def test_stop_gradient_is_honoured():
    x = leaf([1.0, 2.0])
    c = paddle.to_tensor([3.0, 4.0], dtype="float64")             # stop_gradient=True
    frozen = paddle.to_tensor([5.0, 6.0], dtype="float64", stop_gradient=False)
    frozen.stop_gradient = True
    assert (c * c).stop_gradient and not (c * x).stop_gradient
    (x * c + frozen * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 10.0])
    assert c.grad is None and frozen.grad is None


def test_integer_and_comparison_results_stop_gradients():
    x = leaf([1.0, 3.0, 2.0])
    for result in (paddle.argmax(x), x > 1, x.astype("int64"), paddle.isnan(x)):
        assert result.stop_gradient


def test_detach_cuts_the_graph():
    x = leaf([1.0, 2.0])
    d = (x * 2).detach()
    assert d.stop_gradient and d.is_leaf
    (d * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])       # only the direct path


def test_setting_stop_gradient_on_an_intermediate_cuts_the_graph():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.stop_gradient = True
    (y * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_no_grad_and_enable_grad():
    x = leaf([1.0, 2.0])
    with paddle.no_grad():
        assert not paddle.is_grad_enabled()
        y = x * 2
        with paddle.enable_grad():
            z = x * 2
    assert paddle.is_grad_enabled()
    assert y.stop_gradient and y.is_leaf and not z.stop_gradient

    @paddle.no_grad()
    def double(t):
        return t * 2

    assert double(x).stop_gradient and paddle.is_grad_enabled()

    @paddle.enable_grad()
    def triple(t):
        return t * 3

    with paddle.no_grad():
        assert not triple(x).stop_gradient
    with pytest.raises(ZeroDivisionError):
        with paddle.no_grad():
            1 / 0
    assert paddle.is_grad_enabled()                             # restored after an error
    paddle.set_grad_enabled(False)
    try:
        assert (x * 2).stop_gradient
    finally:
        paddle.set_grad_enabled(True)
    with paddle.set_grad_enabled(False):
        assert (x * 2).stop_gradient
        with paddle.set_grad_enabled(True):
            assert not (x * 2).stop_gradient
        assert (x * 2).stop_gradient
    assert paddle.is_grad_enabled()

    @paddle.set_grad_enabled(False)
    def untracked(t):
        return t * 2

    assert paddle.is_grad_enabled()                             # decorating sets no mode
    assert untracked(x).stop_gradient and not (x * 2).stop_gradient


def test_gradients_accumulate_until_cleared():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    grad = x.grad
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(grad.numpy(), [5.0, 5.0])        # the same gradient tensor
    x.clear_gradient()
    # Paddle 3: a cleared gradient is a zero-filled tensor of the same shape and dtype.
    assert x.grad is not None and x.grad.shape == [2] and x.grad.dtype == paddle.float64
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    (x * 4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    x.clear_grad()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    x.clear_gradient(False)                                       # set_to_zero=False: None
    assert x.grad is None
    (x * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])
    x.grad = None
    assert x.grad is None


def test_layer_and_optimizer_clear_to_zeros():
    model = nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    paddle.sum(model(paddle.ones([4, 3]))).backward()
    opt.clear_grad()
    for p in model.parameters():
        assert p.grad is not None and not np.any(p.grad.numpy())
    paddle.sum(model(paddle.ones([4, 3]))).backward()
    model.clear_gradients()
    assert all(not np.any(p.grad.numpy()) for p in model.parameters())


def test_the_graph_is_freed_after_backward_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GraphError, match="retain_graph=True"):
        y.backward()
    h = paddle.exp(x)                        # a shared part is freed with the first graph
    (h * 2).sum().backward()
    with pytest.raises(GraphError, match="freed"):
        (h * 3).sum().backward()
    x.clear_gradient()
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])       # accumulated twice
    with pytest.raises(GraphError):
        y.backward()


def test_backward_without_anything_requiring_a_gradient_warns_and_does_nothing():
    """As in Paddle 3.3.1, where it is silent: a loss of frozen parameters or an int
    tensor runs no backward (a warning says so); among several roots, those that
    require a gradient are differentiated."""
    x = paddle.to_tensor([1.0, 2.0])
    for loss in ((x * 2).sum(), paddle.to_tensor([1, 2]).sum()):
        with pytest.warns(RuntimeWarning, match="requires no gradient does nothing"):
            loss.backward()
    assert x.grad is None
    w = leaf([1.0, 2.0])
    paddle.autograd.backward([(w * 3).sum(), (x * 2).sum()],
                             [paddle.to_tensor(2.0), paddle.to_tensor(5.0)])
    np.testing.assert_allclose(w.grad.numpy(), [6.0, 6.0])
    assert x.grad is None


# ---------------------------------------------------------------- paddle.grad

def test_grad_returns_gradients_without_touching_grad_attributes():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x ** 3 * w).sum()
    result = paddle.grad(y, x)
    assert isinstance(result, list) and len(result) == 1
    np.testing.assert_allclose(result[0].numpy(), 3 * np.array([1.0, 4.0]) * [3.0, 4.0])
    assert result[0].stop_gradient
    assert x.grad is None and w.grad is None


def test_grad_with_respect_to_an_intermediate_tensor():
    x = leaf([1.0, 2.0])
    h = x * 2
    (gh,) = paddle.grad((h * h).sum(), h)
    np.testing.assert_allclose(gh.numpy(), [4.0, 8.0])
    assert x.grad is None


def test_grad_with_respect_to_a_leaf_and_an_intermediate_of_it():
    x = leaf([1.0, 2.0])
    h = x * x
    gx, gh = paddle.grad((h * 3 + x).sum(), [x, h])
    np.testing.assert_allclose(gh.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(gx.numpy(), 1 + 6 * np.array([1.0, 2.0]))


def test_grad_outputs_weight_the_outputs():
    x = leaf([1.0, 2.0])
    (g,) = paddle.grad(x * x, x, grad_outputs=paddle.to_tensor([1.0, 10.0], dtype="float64"))
    np.testing.assert_allclose(g.numpy(), [2.0, 40.0])
    y1, y2 = (x * 2).sum(), (x * x).sum()
    (g,) = paddle.grad([y1, y2], [x], grad_outputs=[paddle.to_tensor(2.0, dtype="float64"),
                                                    None])
    np.testing.assert_allclose(g.numpy(), [4.0 + 2.0, 4.0 + 4.0])   # None: ones


def test_grad_of_several_outputs_sums_them():
    x = leaf([1.0, 2.0])
    (g,) = paddle.grad([(x ** 2).sum(), (x * 3).sum()], x)
    np.testing.assert_allclose(g.numpy(), [5.0, 7.0])


def test_grad_allow_unused():
    x, z = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    with pytest.raises(GraphError, match="allow_unused"):
        paddle.grad((x * 3).sum(), [x, z])
    gx, gz = paddle.grad((x * 3).sum(), [x, z], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [3.0, 3.0])
    assert gz is None


def test_grad_leaves_the_graph_in_place():
    """Paddle 3.3's paddle.grad never frees the graph, whatever retain_graph says: a
    second paddle.grad, or a backward(), through the same tensors works (and gives the
    same values); only backward() frees."""
    x = leaf([1.0, 2.0])
    h = paddle.exp(x)
    y = (h * h).sum()
    for retain in (None, False, True):
        (g,) = paddle.grad(y, x, retain_graph=retain)
        np.testing.assert_allclose(g.numpy(), 2 * np.exp([2.0, 4.0]), rtol=1e-12)
    (g,) = paddle.grad((h * 3).sum(), x, retain_graph=False)   # shares h with y
    np.testing.assert_allclose(g.numpy(), 3 * np.exp([1.0, 2.0]), rtol=1e-12)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([2.0, 4.0]), rtol=1e-12)
    with pytest.raises(GraphError, match="freed"):
        paddle.grad(y, x)


def test_grad_of_a_tensor_not_requiring_gradients_is_an_error():
    x = paddle.to_tensor([1.0, 2.0])
    with pytest.raises(GraphError):
        paddle.grad((x * 2).sum(), x)


def test_create_graph_gives_differentiable_gradients():
    x = leaf([1.0, 2.0])
    (g,) = paddle.grad((x * x * x).sum(), x, create_graph=True)
    assert not g.stop_gradient
    np.testing.assert_allclose(g.numpy(), 3 * np.array([1.0, 4.0]))
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * np.array([1.0, 2.0]))


@pytest.mark.parametrize("fn, d1, d2", [
    (lambda x: x ** 3, lambda a: 3 * a ** 2, lambda a: 6 * a),
    (paddle.tanh, lambda a: 1 - np.tanh(a) ** 2,
     lambda a: -2 * np.tanh(a) * (1 - np.tanh(a) ** 2)),
])
def test_second_derivatives_with_create_graph(fn, d1, d2):
    a = np.array([0.5, -1.0, 2.0])
    x = leaf(a)
    (g,) = paddle.grad(fn(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), d1(a))
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), d2(a), rtol=1e-6)
    x2 = leaf(a)                                  # a gradient penalty, through backward()
    (g,) = paddle.grad(fn(x2).sum(), x2, create_graph=True)
    (g * g).sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), 2 * d1(a) * d2(a), rtol=1e-6)


def test_grad_no_grad_vars_stop_gradients_through_them():
    """Paddle's no_grad_vars: gradients do not flow through them, and an input among
    them has none."""
    x, w = leaf([1.0, 2.0]), leaf([5.0, 6.0])
    h = x * 3
    (blocked,) = paddle.grad((h * x).sum(), x, no_grad_vars=[h])
    (reference,) = paddle.grad((h.detach() * x).sum(), x)
    np.testing.assert_allclose(blocked.numpy(), reference.numpy())
    (single,) = paddle.grad((h * x).sum(), x, no_grad_vars=h)
    np.testing.assert_allclose(single.numpy(), reference.numpy())
    gx, gw = paddle.grad((w * x).sum() + (w * w).sum(), [x, w], no_grad_vars=[w],
                         allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), w.numpy())
    assert gw is None
    (g,) = paddle.grad((h * x).sum(), x, no_grad_vars=[h], create_graph=True)
    (g_of_x,) = paddle.grad(g.sum(), x)          # g is h, still a function of x (as Paddle)
    (reference,) = paddle.grad(h.sum(), x)
    np.testing.assert_allclose(g_of_x.numpy(), reference.numpy())


def test_grad_of_an_input_that_stops_gradients_is_none():
    x, c = leaf([1.0, 2.0]), paddle.to_tensor([3.0, 4.0])
    y = (x * c).sum()
    gx, gc = paddle.grad(y, [x, c], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), c.numpy())
    assert gc is None
    with pytest.raises(GraphError, match="stop_gradient"):
        paddle.grad(y, [x, c])
    h = x * 2
    h.stop_gradient = True
    assert paddle.grad((h * x).sum(), [x, h], allow_unused=True)[1] is None


def test_grad_runs_the_hooks_of_intermediate_tensors_as_backward_does():
    """A hook on an intermediate tensor changes what paddle.grad returns (also for that
    tensor itself, as in Paddle); a leaf's hooks run in backward() only."""
    def run(fn):
        x = leaf([1.0, 2.0])
        x.register_hook(lambda g: g * 100)
        h = x * 2
        h.register_hook(lambda g: g * 10)
        return x, h, fn(x, h, (h * h).sum() + x.sum())

    _, _, (gh, gx) = run(lambda x, h, y: paddle.grad(y, [h, x]))
    x, h, _ = run(lambda x, h, y: y.backward())
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy() / 100)
    np.testing.assert_allclose(gh.numpy(), 10 * 2 * h.numpy())


def test_create_graph_differentiates_what_hooks_compute():
    """A hook returning g * w under create_graph=True: the gradient's own gradient with
    respect to w matches central differences of the first-order, hooked gradient."""
    def hooked_grad(w_values, create_graph=False):
        x, w = leaf([1.0, 2.0]), leaf(w_values)
        h = x * x
        h.register_hook(lambda g: g * w)
        (g,) = paddle.grad((h * h).sum(), x, create_graph=create_graph)
        return w, g

    a, eps = np.array([0.5, 3.0]), 1e-6
    w, g = hooked_grad(a, create_graph=True)
    np.testing.assert_allclose(g.numpy(), hooked_grad(a)[1].numpy())
    g.sum().backward()
    numeric = [(hooked_grad(a + eps * e)[1].numpy().sum()
                - hooked_grad(a - eps * e)[1].numpy().sum()) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(w.grad.numpy(), numeric, rtol=1e-6)


def test_grad_outputs_that_require_a_gradient_are_differentiated_with_create_graph():
    x, v = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (g,) = paddle.grad(x ** 2, x, grad_outputs=v, create_graph=True)
    (g * g).sum().backward()
    x2, v2 = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ((2 * x2 * v2) ** 2).sum().backward()                     # the same, written out
    np.testing.assert_allclose(v.grad.numpy(), v2.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())


def test_create_graph_records_gradients_even_under_no_grad():
    x = leaf([1.0, 2.0])
    y = (x ** 3).sum()
    with paddle.no_grad():
        (g,) = paddle.grad(y, x, create_graph=True)
    assert not g.stop_gradient
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())


def test_no_grad_on_a_generator_function_covers_its_iteration():
    """As Paddle's decorator: the mode holds from the first next() to the last."""
    x = leaf([1.0, 2.0])

    @paddle.no_grad()
    def doubles():
        yield x * 2
        yield x * 2

    assert all(t.stop_gradient for t in doubles())
    assert paddle.is_grad_enabled()


# ---------------------------------------------------------------- memory

def _live_nodes() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Node)


def test_the_recorded_graph_does_not_grow_over_training_steps():
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    x, y = paddle.randn([16, 4]), paddle.randn([16, 2])
    baseline = _live_nodes()
    counts, intermediates = [], []
    for _ in range(12):
        out = model(x)
        intermediates.append(weakref.ref(out))
        loss = paddle.mean((out - y) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        counts.append(_live_nodes() - baseline)
    assert counts[-1] <= counts[1] <= 2, counts     # only this step's output and loss nodes
    assert all(ref() is None for ref in intermediates[:-1])   # old steps' tensors are gone
    del out
    gc.collect()
    assert intermediates[-1]() is None       # backward freed the graph the loss still holds
    del loss
    assert _live_nodes() == baseline


def test_a_graph_that_is_never_differentiated_is_freed_with_its_tensors():
    x = leaf(np.ones((3, 3)))
    baseline = _live_nodes()
    for _ in range(10):
        y = paddle.tanh(x @ x) * 2
        paddle.sum(y)
    assert _live_nodes() - baseline == 3                       # y's graph: matmul, tanh, mul
    del y
    assert _live_nodes() == baseline


def test_a_change_in_place_under_no_grad_keeps_the_tensor_in_the_graph():
    """As in Paddle: the hand-written SGD step changes a leaf that requires a gradient
    (it stays one, and the next backward differentiates at its new value), and an
    intermediate changed in place still passes gradients on to what it was made from."""
    w = paddle.to_tensor([1.0, -2.0], stop_gradient=False)
    for _ in range(2):
        (w * w).sum().backward()
        with paddle.no_grad():
            w.subtract_(0.25 * w.grad)
        w.clear_grad()
    assert not w.stop_gradient and w.is_leaf
    np.testing.assert_allclose(w.numpy(), np.array([1.0, -2.0]) * 0.5 ** 2)
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    v = paddle.to_tensor([3.0, 5.0], stop_gradient=False)
    h = x * 2
    with paddle.no_grad():
        h.add_(paddle.to_tensor([10.0, 10.0]))
    (h * v).sum().backward()
    assert not h.stop_gradient
    np.testing.assert_allclose(x.grad.numpy(), 2 * v.numpy())
    np.testing.assert_allclose(v.grad.numpy(), 2 * x.numpy() + 10)
