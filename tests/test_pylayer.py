"""`paddle.autograd.PyLayer`: hand-written gradients in the dynamic graph. Gradients
are checked against central differences (`check_grads`) and against PaddlePaddle
3.3.1's numbers for the classic examples (printed by running the same code under
Paddle on the CPU, pasted below); the rules for what backward receives and returns
are Paddle's, as its PyLayer behaves."""
import gc
import weakref

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow import autograd
from irflow.autograd import GraphError, PyLayer, PyLayerContext, PyLayerError
from irflow.errors import ConversionError
from tests.nn.gradcheck import check_grads


def leaf(values, dtype="float64"):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=False)


class CusTanh(PyLayer):
    """Paddle's documentation example."""

    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class STE(PyLayer):
    """A straight-through estimator: rounds, and passes the gradient where |x| <= 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.round(x)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * (paddle.abs(x) <= 1.0).astype(dy.dtype)


class TwoOut(PyLayer):
    """Two inputs, two outputs and a number argument kept on the context."""

    @staticmethod
    def forward(ctx, x, y, scale):
        ctx.save_for_backward(x, y)
        ctx.scale = scale
        return x * y * scale, x + y

    @staticmethod
    def backward(ctx, da, db):
        x, y = ctx.saved_tensor()
        return da * y * ctx.scale + db, da * x * ctx.scale + db


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensor()
        return g * 3 * x * x


# ---------------------------------------------------------------- Paddle's numbers

def test_custom_tanh_gives_paddles_gradient():
    data = leaf([[0.5, -1.25, 2.0], [-0.125, 0.75, -3.0]])
    z = CusTanh.apply(data)
    assert not z.stop_gradient
    z.mean().backward()
    # paddle 3.3.1, CPU: the same code
    expected = [[0.1310746221609879, 0.04673581103007211, 0.011775137475527404],
                [0.1640893884917322, 0.09943096804688857, 0.0016443395275733685]]
    np.testing.assert_allclose(data.grad.numpy(), expected, rtol=1e-15)


def test_straight_through_estimator_gives_paddles_gradient():
    x = paddle.to_tensor([[0.3, -0.8], [1.5, 0.45], [-0.2, 0.9]], dtype="float32")
    w = paddle.to_tensor([[0.7, -1.2, 0.4], [0.25, 0.6, -0.9]], dtype="float32",
                         stop_gradient=False)
    t = paddle.to_tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], dtype="float32")
    h = paddle.matmul(x, w)
    loss = ((STE.apply(h) - t) ** 2).sum() + (h * h).mean()
    loss.backward()
    # paddle 3.3.1, CPU: loss 15.727705955505371 and this w.grad
    assert loss.item() == pytest.approx(15.727705955505371, rel=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), [[0.38438889384269714, -2.200666666030884,
                                                 -1.4394443035125732],
                                                [0.13147221505641937, 5.1523332595825195,
                                                 -6.407833099365234]], rtol=1e-5)


def test_a_layer_with_two_outputs_gives_paddles_gradients():
    x, y = leaf([1.5, -2.0, 0.25]), leaf([0.5, 3.0, -1.0])
    a, b = TwoOut.apply(x, y, 2.0)
    (paddle.sin(a) * b).sum().backward()
    # paddle 3.3.1, CPU
    np.testing.assert_allclose(x.grad.numpy(), [1.1389693899394602, 5.599696670395388,
                                                0.8369483042313561], rtol=1e-14)
    np.testing.assert_allclose(y.grad.numpy(), [1.4219181966102719, -2.8388429169295337,
                                                -0.8085189993130928], rtol=1e-14)


def test_an_output_the_loss_does_not_use_gets_zeros():
    x, y = leaf([1.5, -2.0, 0.25]), leaf([0.5, 3.0, -1.0])
    a, _ = TwoOut.apply(x, y, 2.0)
    (a * 3.0).sum().backward()
    # paddle 3.3.1, CPU: db is zeros
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 18.0, -6.0])
    np.testing.assert_allclose(y.grad.numpy(), [9.0, -12.0, 1.5])


# ---------------------------------------------------------------- finite differences

def test_layers_in_a_graph_match_finite_differences():
    rng = np.random.default_rng(1)

    def net(x, w, v):
        h = x @ w
        a, b = TwoOut.apply(CusTanh.apply(h), v, 0.5)   # a layer fed by a layer
        return paddle.exp(-a * a) + Cube.apply(b) * h   # and a path around them

    check_grads(net, rng.standard_normal((3, 4)), rng.standard_normal((4, 2)) * 0.5,
                rng.standard_normal((3, 2)))


def test_a_tensor_feeding_a_layer_twice_and_the_loss_directly():
    def net(x):
        a, b = TwoOut.apply(x, x, 1.5)
        return a + b * x
    check_grads(net, np.array([0.3, -1.2, 2.0]))


# ---------------------------------------------------------------- paddle.grad

def test_grad_through_a_layer_to_leaves_and_intermediates():
    x = leaf([0.3, -0.7])
    h = x * 2
    out = CusTanh.apply(h) * h
    gh, gx = paddle.grad(out.sum(), [h, x])
    t = np.tanh(2 * x.numpy())
    np.testing.assert_allclose(gh.numpy(), (1 - t ** 2) * 2 * x.numpy() + t)
    np.testing.assert_allclose(gx.numpy(), 2 * gh.numpy())
    assert gx.stop_gradient and x.grad is None


def test_grad_with_respect_to_a_layers_output():
    x = leaf([0.3, -0.7])
    y = CusTanh.apply(x)
    gy, gx = paddle.grad((y * y).sum(), [y, x])
    np.testing.assert_allclose(gy.numpy(), 2 * np.tanh(x.numpy()))
    np.testing.assert_allclose(gx.numpy(), gy.numpy() * (1 - np.tanh(x.numpy()) ** 2))


def test_gradients_of_gradients_flow_through_the_backward():
    """With create_graph, backward runs recorded; the output CusTanh saved is the
    output, so its second derivative is -2 t (1 - t^2), as in Paddle."""
    x = leaf([0.3, -0.7])
    (g,) = paddle.grad(CusTanh.apply(x).sum(), x, create_graph=True)
    assert not g.stop_gradient
    (gg,) = paddle.grad(g.sum(), x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(g.numpy(), 1 - t ** 2)
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t ** 2))
    (g3,) = paddle.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg3,) = paddle.grad(g3.sum(), x)
    np.testing.assert_allclose(gg3.numpy(), 6 * x.numpy())   # paddle 3.3.1: [6*x]


def test_backward_runs_without_recording_unless_create_graph():
    modes = []

    class Spy(PyLayer):
        @staticmethod
        def forward(ctx, x):
            modes.append(("forward", paddle.is_grad_enabled()))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            modes.append(("backward", paddle.is_grad_enabled()))
            return g * 2

    x = leaf([1.0])
    Spy.apply(x).sum().backward()
    paddle.grad(Spy.apply(x).sum(), x, create_graph=True)
    assert modes == [("forward", False), ("backward", False),
                     ("forward", False), ("backward", True)]


def test_an_input_reached_only_through_a_layer_is_used():
    x, unused = leaf([1.0, 2.0]), leaf([3.0])
    (g,) = paddle.grad(Cube.apply(x * 1.0).sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    with pytest.raises(GraphError, match="input 1 of grad"):
        paddle.grad(Cube.apply(x).sum(), [x, unused])
    assert paddle.grad(Cube.apply(x).sum(), [x, unused], allow_unused=True)[1] is None


# ---------------------------------------------------------------- arguments and results

def test_lists_and_keyword_tensors_take_gradients_by_slot():
    class ListIn(PyLayer):
        @staticmethod
        def forward(ctx, xs, z, w=None):
            return xs[0] * xs[1] * z * w

        @staticmethod
        def backward(ctx, g):
            return [g, g * 2], g * 3, g * 4

    x, y, z, w = (leaf([1.0, 3.0]) for _ in range(4))
    ListIn.apply([x, y], z, w=w).sum().backward()
    # paddle 3.3.1: a list argument takes a list of gradients
    for t, scale in ((x, 1), (y, 2), (z, 3), (w, 4)):
        np.testing.assert_allclose(t.grad.numpy(), [scale, scale])


def test_results_keep_their_structure_and_lists_get_lists_of_gradients():
    received = []

    class Nested(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2, [x * 3, x * 4], "note"

        @staticmethod
        def backward(ctx, g, gs):
            received.append((g.numpy(), [h.numpy() for h in gs]))
            return g * 2 + gs[0] * 3 + gs[1] * 4

    x = leaf([1.0, 2.0])
    a, (b, c), note = Nested.apply(x)
    assert note == "note" and not b.stop_gradient
    (a + 2 * c).sum().backward()
    np.testing.assert_allclose(received[0][0], [1.0, 1.0])
    np.testing.assert_allclose(received[0][1], [[0.0, 0.0], [2.0, 2.0]])
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])


def test_non_differentiable_outputs_stop_gradients_and_receive_zeros():
    received = []

    class NonDiff(PyLayer):
        @staticmethod
        def forward(ctx, x):
            a, b = x + x, x + x + x
            ctx.mark_non_differentiable(a)
            return a, b, paddle.argmax(x)

        @staticmethod
        def backward(ctx, ga, gb, gi):
            received.append((ga.numpy(), gb.numpy(), gi.numpy()))
            return gb

    x = leaf([1.0])
    a, b, i = NonDiff.apply(x)
    assert a.stop_gradient and not b.stop_gradient and i.stop_gradient
    (a + b).sum().backward()
    # paddle 3.3.1: zeros for a, ones for b, and x.grad [1.]
    ga, gb, gi = received[0]
    assert ga.tolist() == [0.0] and gb.tolist() == [1.0] and gi.dtype == np.int64
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_without_materialized_grads_missing_ones_are_none():
    received = []

    class NoMat(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x + x + x, x + x

        @staticmethod
        def backward(ctx, g, g2):
            received.append(g2)
            return g

    x = leaf([1.0])
    NoMat.apply(x)[0].backward()
    assert received == [None]
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_nothing_is_recorded_without_an_input_that_requires_a_gradient():
    assert CusTanh.apply(paddle.to_tensor([1.0, 2.0])).stop_gradient
    x = leaf([1.0, 2.0])
    with paddle.no_grad():
        assert CusTanh.apply(x).stop_gradient
    saved = []

    class Saves(PyLayer):
        @staticmethod
        def forward(ctx, x):
            saved.append(ctx.saved_tensor())
            return x * 2

    Saves.apply(x)
    assert saved == [None]   # saved_tensor() before save_for_backward, as in Paddle


def test_an_input_returned_as_it_is_becomes_a_new_output():
    class Same(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = leaf([1.0, 2.0])
    w = x * 1
    y = Same.apply(w)
    assert y is not w and w._node is not y._node
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])   # paddle 3.3.1: [10., 10.]
    x.clear_gradient()
    (Same.apply(x) * 2).sum().backward()                       # a leaf: Paddle refuses it
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])


def test_returned_gradients_for_inputs_that_need_none():
    class Product(PyLayer):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensor()
            return g * y, g * x

    x, y = leaf([1.0, 2.0]), paddle.to_tensor([3.0, 4.0], dtype="float64")
    Product.apply(x, y).sum().backward()   # y's gradient is ignored (Paddle raises)
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    assert y.grad is None

    class Partial(PyLayer):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, None

    x, y = leaf([1.0]), leaf([2.0])
    Partial.apply(x, y).sum().backward()   # None: no gradient, as in Paddle
    assert x.grad.numpy().tolist() == [1.0] and y.grad is None


def test_a_gradient_of_another_float_dtype_is_cast_to_the_inputs():
    class Wide(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.astype("float64") * 2

    x = leaf([1.0], dtype="float32")
    Wide.apply(x).sum().backward()
    assert x.grad.dtype == paddle.float32 and x.grad.numpy().tolist() == [2.0]


def test_hooks_on_an_output_change_what_backward_receives():
    received = []

    class Spy(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            received.append(g.numpy())
            return g * 2

    x = leaf([1.0, 2.0])
    y = Spy.apply(x)
    y.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    np.testing.assert_allclose(received[0], [30.0, 30.0])
    np.testing.assert_allclose(x.grad.numpy(), [60.0, 60.0])


# ---------------------------------------------------------------- errors

def _wrong(backward):
    layer = type("Wrong", (PyLayer,), {"forward": staticmethod(lambda ctx, x, y: x * y),
                                       "backward": staticmethod(backward)})
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    return layer.apply(x, y).sum()


@pytest.mark.parametrize("backward, message", [
    (lambda ctx, g: (g, g, g), "Wrong.backward returned 3 gradients, but forward took 2"),
    (lambda ctx, g: g, "no gradient for tensor input 1 of forward, which requires one"),
    (lambda ctx, g: (g, paddle.ones([3], dtype="float64")),
     r"shape \[3\] for tensor input 1 of forward, whose shape is \[2\]"),
    (lambda ctx, g: (g, g.numpy()), "returned a ndarray as the gradient of tensor input 1"),
    (lambda ctx, g: [g, g], "returned a list as the gradient of tensor input 0"),
])
def test_backward_returning_what_does_not_fit_forward_is_an_error(backward, message):
    loss = _wrong(backward)
    with pytest.raises(PyLayerError, match=message):
        loss.backward()


def test_a_list_argument_needs_a_list_of_as_many_gradients():
    class ListIn(PyLayer):
        @staticmethod
        def forward(ctx, xs):
            return xs[0] * xs[1]

        @staticmethod
        def backward(ctx, g):
            return [g]

    loss = ListIn.apply([leaf([1.0]), leaf([2.0])]).sum()
    with pytest.raises(PyLayerError, match="a list of 2 tensors: return a list of 2"):
        loss.backward()


def test_a_layer_without_backward_says_so():
    class NoBackward(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="backward"):
        NoBackward.apply(leaf([1.0])).sum().backward()


# ---------------------------------------------------------------- the graph's life

def test_backward_frees_the_layer_and_what_it_saved():
    class SavesTemporary(PyLayer):
        @staticmethod
        def forward(ctx, x):
            t = x * 3
            ctx.save_for_backward(t)
            saved.append(weakref.ref(t))
            return t * 2

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensor()
            return g * 6

    saved = []
    x = leaf([1.0])
    y = SavesTemporary.apply(x)
    y.sum().backward()
    gc.collect()
    assert saved[0]() is None
    with pytest.raises(GraphError, match="freed"):
        y.sum().backward()


def test_retain_graph_runs_the_backward_again():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * x.numpy() ** 2)


def test_training_steps_reuse_the_compiled_backward_programs():
    """The graph before and after a layer is cached by structure like any other, and
    a training loop computes what the same model with paddle.tanh computes."""
    paddle.seed(3)
    custom, plain = nn.Linear(4, 3), nn.Linear(4, 3)
    plain.set_state_dict(custom.state_dict())
    opts = [paddle.optimizer.SGD(0.1, parameters=m.parameters()) for m in (custom, plain)]
    x = paddle.randn([8, 4])
    sizes = []
    for step in range(5):
        for model, opt, act in ((custom, opts[0], CusTanh.apply), (plain, opts[1], paddle.tanh)):
            loss = (act(model(x)) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
        sizes.append(len(autograd._PROGRAMS))
    assert sizes[1] == sizes[-1]
    np.testing.assert_allclose(custom.weight.numpy(), plain.weight.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- compiled code

class _Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return CusTanh.apply(self.fc(x))


def test_compiled_code_runs_a_layer_that_needs_no_gradient():
    net = _Net()
    net.eval()
    x = paddle.randn([4, 3])
    with paddle.no_grad():
        eager = net(x)
        compiled = paddle.compile(net, backend="numpy")(x)
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-6)


def test_compiled_code_that_differentiates_a_layer_is_a_conversion_error():
    net = _Net()

    @paddle.jit.to_static
    def step(x):
        loss = net(x).sum()
        loss.backward()
        return loss

    with pytest.raises(ConversionError, match="PyLayer CusTanh cannot be differentiated "
                                              "in compiled code"):
        step(paddle.randn([4, 3]))


def test_the_context_is_a_pylayer_context():
    kinds = []

    class Kind(PyLayer):
        @staticmethod
        def forward(ctx, x):
            kinds.append(isinstance(ctx, PyLayerContext))
            return x

    Kind.apply(paddle.to_tensor([1.0]))
    assert kinds == [True]
