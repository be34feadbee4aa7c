"""Compiled code against eager code on patterns of held-out user programs: a training
step that calls ``model.train()`` after an evaluation, and counters kept on plain
objects (``self.state.calls += 1``) that pick a branch."""
import types

import numpy as np

import irflow as paddle
import irflow.nn as nn


def test_train_inside_a_compiled_step_after_eval_switches_dropout_on():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))

    def step(x):
        model.train()
        return model(x)

    compiled = paddle.compile(step, backend="numpy")
    x = paddle.ones([8, 4])
    for _ in range(2):
        model.eval()
        y = compiled(x).numpy()
        # as eager code leaves it: the call switched every layer to training
        assert model.training and model[1].training
        # Dropout(0.5) in training zeroes about half of the 32 elements; evaluation none
        assert 0 < (y == 0).sum() < 32


def test_eval_then_train_inside_one_compiled_call():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))

    def both(x):
        model.eval()
        a = model(x)
        model.train()
        return a, model(x)

    compiled = paddle.compile(both, backend="numpy")
    x = paddle.ones([8, 4])
    model.eval()
    expected = model(x).numpy()  # evaluation: Dropout is the identity
    a, b = compiled(x)
    np.testing.assert_allclose(a.numpy(), expected, rtol=1e-6)
    assert model.training and (b.numpy() == 0).any()


def test_augmented_assignment_on_a_plain_object_counts_every_call():
    class Counted(nn.Layer):
        def __init__(self):
            super().__init__()
            self.state = types.SimpleNamespace(calls=0)

        def forward(self, x):
            self.state.calls += 1
            if self.state.calls % 3 == 0:
                x = x * 3
            return x

    model = Counted()
    compiled = paddle.compile(model, backend="numpy")
    x = paddle.ones([1])
    got = [float(compiled(x).numpy()[0]) for _ in range(6)]
    # every third call triples, as eager code counts
    assert got == [1.0, 1.0, 3.0, 1.0, 1.0, 3.0]
    assert model.state.calls == 6


def test_a_method_of_a_plain_object_compiles():
    """``paddle.jit.to_static(trainer.step)`` where the trainer is no Layer: its model
    is found through the trace (the owner stood for a layer, and the call failed with
    an AttributeError for `sublayers`)."""
    class Trainer:
        def __init__(self):
            self.model = paddle.nn.Linear(2, 1)
            self.opt = paddle.optimizer.SGD(0.1, parameters=self.model.parameters())

        def step(self, x):
            loss = self.model(x).sum()
            loss.backward()
            self.opt.step()
            self.opt.clear_grad()
            return loss

    eager, compiled = Trainer(), Trainer()
    compiled.model.set_state_dict(eager.model.state_dict())
    step = paddle.jit.to_static(compiled.step)
    x = paddle.to_tensor(np.ones((3, 2), np.float32))
    for _ in range(3):
        np.testing.assert_allclose(float(step(x)), float(eager.step(x)), rtol=1e-6)
    np.testing.assert_allclose(compiled.model.weight.numpy(), eager.model.weight.numpy(),
                               rtol=1e-6)


def test_a_list_of_tensors_indexed_by_a_loop_counter():
    """``table[i]`` with `i` a tensor loop's counter (and ``table[i - 3]``, negative):
    the list is stacked and the element gathered when the program runs, as eagerly;
    gradients reach what the list was made from."""
    def f(x, n):
        table = [x * 1.0, x * 2.0, x * 3.0]
        i = paddle.to_tensor(0)
        acc = x * 0
        while i < n:
            acc = acc + table[i] + table[i - 3] * 0.5
            i = i + 1
        return acc + table[-1]

    results = []
    for fn in (f, paddle.jit.to_static(f)):
        x = paddle.to_tensor(np.array([1.0, 2.0], np.float32), stop_gradient=False)
        out = fn(x, paddle.to_tensor(3))
        out.sum().backward()
        results.append((out.numpy(), x.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    np.testing.assert_allclose(want, [12.0, 24.0])
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got_grad, want_grad)
