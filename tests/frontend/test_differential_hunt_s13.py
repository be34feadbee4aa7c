"""Compiled code against eager code: cases found by running small programs eagerly,
with `irflow.compile` (both backends) and with `jit.to_static`, and comparing."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F

BACKENDS = ["numpy", "llvm"]


def _draws_per_iteration(n):
    """Each iteration's draw, stacked: in eager code every paddle.rand draws anew."""
    rows = paddle.zeros([4, 3])
    for i in range(n):
        rows[i] = paddle.rand([3])
    return rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_random_op_in_a_tensor_loop_draws_anew_each_iteration(backend):
    f, n = paddle.compile(_draws_per_iteration, backend=backend), paddle.to_tensor(4)
    paddle.seed(11)
    rows = f(n).numpy()
    assert len({tuple(r) for r in rows}) == 4, rows   # one iteration's seed used to serve all
    paddle.seed(11)
    np.testing.assert_array_equal(f(n).numpy(), rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_ops_in_nested_tensor_loops_and_their_condition_differ(backend):
    def f(n):
        rows = paddle.zeros([4, 2])
        i = paddle.zeros([], "int64")
        while i < n and paddle.rand([]) < 2.0:    # a draw in the condition too
            j = paddle.zeros([], "int64")
            while j < n:
                rows[i * n + j] = paddle.rand([2])
                j += 1
            i += 1
        return rows

    rows = paddle.compile(f, backend=backend)(paddle.to_tensor(2)).numpy()
    assert len({tuple(r) for r in rows}) == 4, rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropout_in_a_tensor_loop_masks_each_iteration_anew_and_its_gradient_agrees(backend):
    def f(x, n):
        outs = paddle.zeros([3, 64])
        for i in range(n):
            outs[i] = F.dropout(x, 0.5)
        return outs

    x = paddle.ones([64])
    x.stop_gradient = False
    outs = paddle.compile(f, backend=backend)(x, paddle.to_tensor(3))
    masks = outs.numpy() != 0
    assert not (masks[0] == masks[1]).all() and not (masks[1] == masks[2]).all()
    outs.sum().backward()
    # d/dx of the kept entries is 1/(1-p) = 2 per iteration that kept them
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * masks.sum(axis=0))


def _leaky_by_mask(x):
    y = x * 1.0
    y[y < 0] = y[y < 0] * 0.1     # a value computed from the mask, written through it
    return (y * y).sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mask_assignment_of_a_value_needing_a_gradient_compiles(backend):
    """The gradient path of a masked write numbers the selected positions, whose count
    is known only at run time: it failed to convert ("a shape needs sizes known when
    the program is compiled") whenever the written value needed a gradient."""
    f = paddle.compile(_leaky_by_mask, backend=backend)
    for data in ([[-1.0, 2.0], [3.0, -4.0]], [[1.0, -2.0, 0.5]]):
        eager_x = paddle.to_tensor(data, stop_gradient=False)
        compiled_x = paddle.to_tensor(data, stop_gradient=False)
        eager, compiled = _leaky_by_mask(eager_x), f(compiled_x)
        eager.backward()
        compiled.backward()
        np.testing.assert_allclose(float(compiled), float(eager), rtol=1e-6)
        values = np.asarray(data, np.float32)
        want = np.where(values < 0, 0.02 * values, 2 * values)   # d(y^2)/dx
        np.testing.assert_allclose(compiled_x.grad.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(eager_x.grad.numpy(), want, rtol=1e-6)


def _inner_products(x):
    return (x.unsqueeze(1) @ x.unsqueeze(2)).squeeze()


@pytest.mark.parametrize("backend", BACKENDS)
def test_squeeze_without_axis_of_a_batch_of_one_raises_instead_of_keeping_it(backend):
    """Eager squeeze() removes every dim of size 1, the batch's too when it is 1 (as
    Paddle's to_static does at run time). A program made for a batch of any size
    kept that dim: a result of shape [1] where eager code gives []. Now such a run
    raises, naming the dim and the fix; other batch sizes run as before."""
    from irflow.errors import ShapeError
    from irflow.static import InputSpec
    f = paddle.compile(_inner_products, backend=backend,
                       input_spec=[InputSpec([None, 3], "float32")])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(f(paddle.to_tensor(x)).numpy(), (x * x).sum(1))
    with pytest.raises(ShapeError, match="squeeze.*dim 0.*give squeeze the axes"):
        f(paddle.to_tensor(x[:1]))
    assert _inner_products(paddle.to_tensor(x[:1])).shape == []


def test_a_generator_over_a_run_time_range_is_refused_by_name():
    """A generator expression over ``range(x.shape[0])`` of a symbolic batch cannot be
    iterated by ``sum()`` while tracing; it raised TypeError naming an internal class."""
    from irflow.errors import ConversionError
    from irflow.static import InputSpec

    def rows_sum(x):
        return sum(x[i] for i in range(x.shape[0]))

    f = paddle.jit.to_static(rows_sum, input_spec=[InputSpec([None, 2], "float32")])
    with pytest.raises(ConversionError, match="write a for loop, or a list comprehension"):
        f(paddle.ones([3, 2]))


step = 0   # a global named like the optimizer's method the step below calls


def test_a_global_named_like_an_attribute_read_is_not_a_guard():
    """Guards watch the globals the code reads; ``co_names`` also holds attribute
    names, so a training loop's global ``step`` (beside ``opt.step()``) was guarded
    and each call, with a new ``step``, traced again."""
    global step
    model = paddle.nn.Linear(4, 1)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())

    @paddle.jit.to_static
    def train(x):
        loss = model(x).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    x = paddle.ones([2, 4])
    for step in range(4):
        train(x)
    assert train._guard_retraces == 0


def _rounded_model():
    paddle.seed(3)
    model = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=model.parameters(),
                                weight_decay=0.01)
    return model, opt


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_through_round_is_zeros_not_none_in_compiled_code(backend):
    """What a backward reaches only through round/floor/ceil/sign gets zeros in eager
    code (and Paddle), so Adam still steps it (its weight decay here); compiled code
    gave it None, and the optimizer left it alone: other parameters after a step."""
    def train(model, opt, x):
        loss = paddle.round(model(x)).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    eager_model, eager_opt = _rounded_model()
    model, opt = _rounded_model()
    step = paddle.compile(lambda x: train(model, opt, x), backend=backend)
    x = paddle.to_tensor([[0.5, -1.0, 2.0]])
    for _ in range(3):
        train(eager_model, eager_opt, x)
        step(x)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-6)
    assert not np.allclose(model.weight.numpy(), _rounded_model()[0].weight.numpy())
