"""``Tensor.data`` and ``detach()`` of a leaf share the tensor's storage, as Paddle
3.3.1's do (checked side by side): a change in place through either is a change of the tensor
(weight clipping ``p.data.clamp_(-c, c)``, EMA ``p.data.mul_(d)``, ``p.data.copy_(q)``),
and a change of the tensor shows in them. ``x.data = t`` gives x t's value, shape and
dtype included, keeping x what it was (a Parameter stays one, with its name and
gradient settings). ``.data`` did not exist; ``detach()`` was a copy, so
``x.detach().add_(1)`` left x as it was. Also ``copy.deepcopy`` of a tensor: Paddle's
is a new leaf without the gradient (a parameter's named ``<name>_deepcopy_N``)."""
import copy
import gc
import weakref

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import ArgumentError, ConversionError, IrflowError
from irflow.tensor.tensor import Parameter


def _param(values):
    p = paddle.create_parameter([len(values)], "float32")
    p.set_value(np.asarray(values, np.float32))
    return p


@pytest.mark.parametrize("change, want", [
    (lambda d: d.clamp_(-1.0, 1.0), [1.0, -1.0, 0.5]),
    (lambda d: d.fill_(0.25), [0.25, 0.25, 0.25]),
    (lambda d: d.mul_(paddle.to_tensor(2.0)), [6.0, -8.0, 1.0]),
    (lambda d: d.copy_(paddle.to_tensor([7.0, 8.0, 9.0])), [7.0, 8.0, 9.0]),
    (lambda d: d.__setitem__(0, 5.0), [5.0, -4.0, 0.5]),
    (lambda d: d.set_value(np.zeros(3, np.float32)), [0.0, 0.0, 0.0]),
], ids=["clamp_", "fill_", "mul_", "copy_", "setitem", "set_value"])
@pytest.mark.parametrize("share", [lambda p: p.data, lambda p: p.detach()],
                         ids=["data", "detach"])
def test_a_change_in_place_through_data_or_detach_changes_the_parameter(change, want, share):
    p = _param([3.0, -4.0, 0.5])
    change(share(p))  # with gradients recorded: the shared tensor stops them
    np.testing.assert_array_equal(p.numpy(), want)
    assert isinstance(p, Parameter) and not p.stop_gradient and p.is_leaf


def test_data_stops_gradients_and_reads_the_value():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    d = x.data
    assert d.stop_gradient and d is not x and not x.stop_gradient
    np.testing.assert_array_equal(d.numpy(), [1.0, 2.0])
    assert (d * 3).stop_gradient


def test_a_change_of_the_tensor_shows_in_what_detach_gave():
    """An optimizer's step and set_value change the parameter in place, as Paddle's."""
    lin = paddle.nn.Linear(2, 1, bias_attr=False)
    lin.weight.set_value(np.array([[1.0], [2.0]], np.float32))
    d = lin.weight.detach()
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=lin.parameters())
    lin(paddle.to_tensor([[1.0, 3.0]])).sum().backward()
    opt.step()
    np.testing.assert_array_equal(d.numpy(), [[0.5], [0.5]])
    lin.weight.set_value(np.array([[4.0], [5.0]], np.float32))
    np.testing.assert_array_equal(d.numpy(), [[4.0], [5.0]])


def test_reshape_through_detach_reshapes_the_tensor():
    """Paddle 3.3.1: ``x.detach().reshape_([3, 2])`` makes x of shape [3, 2]."""
    x = paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    x.detach().reshape_([3, 2])
    assert x.shape == [3, 2]
    np.testing.assert_array_equal(x.numpy(), np.arange(6).reshape(3, 2))


def test_what_an_intermediate_gives_shares_nothing_and_keeps_no_graph():
    """An intermediate of the dynamic graph gives a tensor of its value alone (Paddle's
    would share its storage): held, it would keep the graph and every activation
    saved for backward alive, as a log of ``loss.detach()`` or ``loss.data`` does for
    a whole run."""
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * 2
    y.data.add_(paddle.to_tensor(1.0))
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    loss = (y * y).sum()
    held, alive = [loss.detach(), loss.data], weakref.ref(loss)
    del loss
    gc.collect()
    assert alive() is None
    assert [float(t) for t in held] == [20.0, 20.0]


def test_a_gradient_through_what_detach_gave_stays_its_own():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    d = x.detach()
    d.stop_gradient = False
    (d * 2).sum().backward()
    np.testing.assert_array_equal(d.grad.numpy(), [2.0, 2.0])
    assert x.grad is None


def test_assigning_data_keeps_the_parameter():
    """Paddle 3.3.1: ``p.data = t`` keeps p the same Parameter (name, trainable) with
    t's value, even of another shape and dtype."""
    lin = paddle.nn.Linear(2, 3)
    p = lin.weight
    name = p.name
    p.data = paddle.full([2, 3], 2.0)
    assert lin.weight is p and p.name == name and p.trainable and p.is_leaf
    np.testing.assert_array_equal(p.numpy(), np.full([2, 3], 2.0))
    p.data = paddle.full([4, 3], 1.5, dtype="float64")
    assert p.shape == [4, 3] and p.dtype == paddle.float64
    np.testing.assert_array_equal(p.numpy(), np.full([4, 3], 1.5))


def test_assigning_data_from_a_tensor_that_requires_grad_keeps_the_leaf():
    p = _param([1.0, 2.0])
    w = paddle.to_tensor([1.0, 1.0], stop_gradient=False)
    p.data = w * 3
    assert p.is_leaf and not p.stop_gradient
    np.testing.assert_array_equal(p.numpy(), [3.0, 3.0])


def test_assigning_data_refuses_what_paddle_refuses_or_would_tie():
    p, q = _param([1.0, 2.0]), _param([3.0, 4.0])
    with pytest.raises(ArgumentError, match="takes a Tensor"):
        p.data = np.ones(2, np.float32)  # Paddle 3.3.1: ValueError, must be Tensor
    with pytest.raises(IrflowError, match="share storage"):
        p.data = q.data  # in Paddle p then changes with q's every update
    with pytest.raises(IrflowError, match="share storage"):
        p.data = q
    np.testing.assert_array_equal(p.numpy(), [1.0, 2.0])


def test_a_copy_of_data_is_not_shared():
    x = paddle.to_tensor([1.0, 2.0])
    a = x.data.numpy()
    a[0] = 9.0
    c = x.data.clone()
    c.fill_(0.0)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_deepcopy_of_a_tensor_is_a_leaf_without_the_gradient():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (x * 2).sum().backward()
    c = copy.deepcopy(x)
    assert c.grad is None and c.is_leaf and not c.stop_gradient
    y = x * 3
    cy = copy.deepcopy(y)
    assert cy.is_leaf
    np.testing.assert_array_equal(cy.numpy(), [3.0, 6.0])
    with paddle.no_grad():
        cy.fill_(0.0)
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])


def test_deepcopy_of_a_parameter_is_renamed_and_keeps_its_settings():
    """Paddle 3.3.1: ``linear_0.w_0`` is copied as ``linear_0.w_0_deepcopy_N``."""
    p = _param([1.0, 2.0])
    p.optimize_attr["learning_rate"] = 0.5
    p.need_clip = False
    (p * p).sum().backward()
    c = copy.deepcopy(p)
    assert type(c) is type(p) and c.name.startswith(p.name + "_deepcopy_")
    assert c.grad is None and c.trainable and c.persistable and not c.need_clip
    assert c.optimize_attr == {"learning_rate": 0.5} and c.optimize_attr is not p.optimize_attr
    c.set_value(np.zeros(2, np.float32))
    np.testing.assert_array_equal(p.numpy(), [1.0, 2.0])


def _clipped_training(backend):
    """Three SGD steps with weight clipping and a bias decay through ``.data``."""
    def make():
        m = paddle.nn.Linear(2, 2)
        m.weight.set_value(np.array([[3.0, -3.0], [0.5, -0.2]], np.float32))
        m.bias.set_value(np.array([1.0, 2.0], np.float32))
        return m, paddle.optimizer.SGD(0.1, parameters=m.parameters())

    def step_of(m, opt):
        def step(x):
            loss = m(x).sum()
            loss.backward()
            opt.step()
            opt.clear_grad()
            for p in m.parameters():
                p.data.clamp_(-1.0, 1.0)
            m.bias.data.mul_(paddle.to_tensor(0.5))
            return loss
        return step

    eager, compiled = make(), make()
    run_eager = step_of(*eager)
    run_compiled = paddle.jit.to_static(step_of(*compiled), backend=backend)
    x = paddle.ones([3, 2])
    for _ in range(3):
        np.testing.assert_allclose(run_compiled(x).numpy(), run_eager(x).numpy(), rtol=1e-6)
    return eager[0], compiled[0]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_weight_clipping_through_data_in_a_compiled_step_equals_eager(backend):
    eager, compiled = _clipped_training(backend)
    # first step: w - 0.1 * 3 per element, clipped; the bias (1, 2) - 0.3, clipped, halved
    for p, q in zip(eager.parameters(), compiled.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-6)
    assert np.abs(eager.weight.numpy()).max() <= 1.0


def test_one_eager_step_of_clipping_by_hand():
    """The numbers the compiled comparison relies on, from the SGD formula: x = ones,
    loss = sum(x W + b) has gradient 3 for each weight and bias element."""
    m = paddle.nn.Linear(2, 2)
    m.weight.set_value(np.array([[3.0, -3.0], [0.5, -0.2]], np.float32))
    m.bias.set_value(np.array([1.0, 2.0], np.float32))
    opt = paddle.optimizer.SGD(0.1, parameters=m.parameters())
    m(paddle.ones([3, 2])).sum().backward()
    opt.step()
    for p in m.parameters():
        p.data.clamp_(-1.0, 1.0)
    m.bias.data.mul_(paddle.to_tensor(0.5))
    np.testing.assert_allclose(m.weight.numpy(), [[1.0, -1.0], [0.2, -0.5]], rtol=1e-6)
    np.testing.assert_allclose(m.bias.numpy(), [0.35, 0.5], rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_data_of_an_intermediate_in_compiled_code_equals_eager(backend):
    def f(x):
        y = x * 2
        y.detach().add_(paddle.to_tensor(1.0))
        z = x * 3
        z.data = x * 10
        return y + 0, z + 0

    x = paddle.to_tensor([1.0, 2.0])
    for want, got in zip(f(x), paddle.jit.to_static(f, backend=backend)(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(f(x)[0].numpy(), [3.0, 5.0])


def test_a_shape_change_through_detach_in_compiled_code_is_refused():
    def f(x):
        y = x * 2
        y.detach().reshape_([2, 1])
        return y

    assert f(paddle.ones([2])).shape == [2, 1]
    with pytest.raises(ConversionError, match="keeps a tensor's shape"):
        paddle.jit.to_static(f)(paddle.ones([2]))


def test_deepcopy_of_what_detach_gave_shares_nothing():
    x = paddle.to_tensor([1.0, 2.0])
    c = copy.deepcopy(x.detach())
    c.fill_(0.0)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(c.numpy(), [0.0, 0.0])
