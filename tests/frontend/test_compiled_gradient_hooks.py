"""Gradient hooks registered eagerly (``p.register_hook``) on the tensors a compiled
step's ``backward()`` reaches: eager backward passes a leaf's gradient through its
hooks before accumulating it, and so must the compiled step (they were skipped: a
hook masking a weight's gradient left it training, silently)."""
import numpy as np

import irflow as paddle


def _step_returning_grad(w, opt):
    def step(x):
        loss = (x * w).sum()
        loss.backward()
        g = w.grad * 1.0
        opt.step()
        opt.clear_grad()
        return g
    return step


def _weight(values):
    w = paddle.create_parameter([len(values)], "float32")
    w.set_value(paddle.to_tensor(np.asarray(values, dtype="float32")))
    return w


def test_a_parameter_hook_scales_the_gradient_a_compiled_step_applies():
    x = paddle.to_tensor([3.0, 4.0])
    w = _weight([1.0, 2.0])
    w.register_hook(lambda g: g * 10)
    step = paddle.jit.to_static(_step_returning_grad(w, paddle.optimizer.SGD(0.1, [w])))
    # d(sum(x*w))/dw = x, times 10 by the hook; SGD: w - 0.1 * 10x
    np.testing.assert_allclose(step(x).numpy(), [30.0, 40.0])
    np.testing.assert_allclose(w.numpy(), [1.0 - 3.0, 2.0 - 4.0], rtol=1e-6)


def test_hooks_registered_or_removed_between_compiled_calls_take_effect():
    x = paddle.to_tensor([3.0, 4.0])
    w = _weight([1.0, 2.0])
    step = paddle.compile(_step_returning_grad(w, paddle.optimizer.SGD(0.1, [w])))
    np.testing.assert_allclose(step(x).numpy(), [3.0, 4.0])
    handle = w.register_hook(lambda g: g * 10)
    np.testing.assert_allclose(step(x).numpy(), [30.0, 40.0])
    handle.remove()
    np.testing.assert_allclose(step(x).numpy(), [3.0, 4.0])
    w.register_hook(lambda g: g * 2)
    np.testing.assert_allclose(step(x).numpy(), [6.0, 8.0])


def test_a_hook_masking_a_layers_weight_freezes_it_in_a_compiled_training_step():
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(),
                                 paddle.nn.Linear(8, 3))
    mask = paddle.to_tensor((np.arange(32).reshape(4, 8) % 2).astype("float32"))
    model[0].weight.register_hook(lambda g: g * mask)
    opt = paddle.optimizer.Adam(0.05, parameters=model.parameters())

    @paddle.jit.to_static
    def step(x, y):
        loss = paddle.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    before = model[0].weight.numpy()
    rng = np.random.default_rng(0)
    for _ in range(3):
        step(paddle.to_tensor(rng.standard_normal((6, 4)).astype("float32")),
             paddle.to_tensor(rng.integers(0, 3, 6)))
    after = model[0].weight.numpy()
    masked = mask.numpy() == 0
    np.testing.assert_array_equal(after[masked], before[masked])
    assert np.all(after[~masked] != before[~masked])


def test_an_input_hook_runs_on_the_gradient_a_compiled_backward_gives_it():
    w = _weight([1.0, 2.0])
    x = paddle.to_tensor([3.0, 4.0], stop_gradient=False)
    x.register_hook(lambda g: g * 100)

    def f(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    paddle.compile(f)(x)
    np.testing.assert_allclose(x.grad.numpy(), [100.0, 200.0])  # 100 * w
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 4.0])       # x
