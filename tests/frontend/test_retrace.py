"""Changing what a compiled Layer is made of (replacing, adding or removing a sublayer,
a Parameter or a buffer) makes the next call trace anew: the compiled result and its
gradients follow the eager model, never the old weights."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.nn.initializer import Constant

# Net counts its traces in a Python list, which compiled calls then warn of changing
pytestmark = pytest.mark.filterwarnings("ignore:the compiled code changed a Python list")


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.w = self.create_parameter([2])
        self.extra = None
        self.traces = []

    def forward(self, x):
        self.traces.append(1)  # Python code runs once per trace
        h = self.fc(x) * self.w
        if self.extra is not None:
            h = self.extra(h)
        return h


def x_data(seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal((4, 3)).astype(np.float32))


def check(static, model, x):
    np.testing.assert_allclose(static(x).numpy(), model(x).numpy(), rtol=1e-6, atol=1e-6)


def constant_parameter(shape, value):
    return paddle.create_parameter(shape, "float32", default_initializer=Constant(value))


@pytest.mark.parametrize("change", [
    lambda m: setattr(m, "fc", nn.Linear(3, 2)),
    lambda m: setattr(m, "w", constant_parameter([2], 3.0)),
    lambda m: setattr(m.fc, "weight", constant_parameter([3, 2], 0.5)),
    lambda m: setattr(m, "extra", nn.Linear(2, 2)),
    lambda m: m.add_sublayer("fc", nn.Linear(3, 2)),
    lambda m: m.add_parameter("w", constant_parameter([2], -1.0)),
], ids=["sublayer", "parameter", "sublayer-parameter", "added-sublayer", "add_sublayer",
        "add_parameter"])
def test_structural_change_after_compiling_retraces(change):
    paddle.seed(0)
    model = Net()
    static = paddle.jit.to_static(model)
    x = x_data()
    check(static, model, x)
    change(model)
    check(static, model, x)


def test_removing_a_sublayer_retraces():
    model = Net()
    model.extra = nn.Linear(2, 2)
    static = paddle.jit.to_static(model)
    x = x_data()
    check(static, model, x)
    model.extra = None
    check(static, model, x)


def test_changing_the_layer_through_the_compiled_object():
    model = Net()
    static = paddle.jit.to_static(model)
    x = x_data()
    static(x)
    static.fc = nn.Linear(3, 2)
    assert model.fc is static.fc
    check(static, model, x)
    del static.extra
    assert "extra" not in model.__dict__
    with pytest.raises(AttributeError):
        model.extra


class Scaled(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", paddle.to_tensor([2.0, 3.0]))

    def forward(self, x):
        return x * self.scale


def test_buffer_replaced_by_register_buffer():
    model = Scaled()
    static = paddle.jit.to_static(model)
    x = paddle.ones([2])
    check(static, model, x)
    model.register_buffer("scale", paddle.to_tensor([5.0, 7.0]))
    check(static, model, x)
    np.testing.assert_allclose(static(x).numpy(), [5.0, 7.0])


def test_non_persistable_buffer_set_value_is_seen():
    model = Scaled()
    model.register_buffer("scale", paddle.to_tensor([2.0, 3.0]), persistable=False)
    static = paddle.jit.to_static(model)
    x = paddle.ones([2])
    static(x)
    model.scale.set_value(paddle.to_tensor([4.0, 1.0]))
    np.testing.assert_allclose(static(x).numpy(), [4.0, 1.0])


def test_value_changes_do_not_retrace():
    model = Net()
    static = paddle.jit.to_static(model)
    x = x_data()
    static(x)
    model.set_state_dict(Net().state_dict())
    model.w.set_value(paddle.to_tensor([1.5, -2.0]))
    model.fc = model.fc  # the same sublayer again
    model.eval()
    model.train()
    check(static, model, x)
    assert len(model.traces) == 2  # one trace; `check` ran the eager forward once


def test_training_after_replacing_a_sublayer_updates_the_new_one():
    paddle.seed(1)
    model = Net()
    static = paddle.jit.to_static(model)
    x = x_data()
    paddle.sum(static(x)).backward()
    old = model.fc
    model.fc = nn.Linear(3, 2)
    model.clear_gradients(set_to_zero=False)
    old.clear_gradients(set_to_zero=False)
    paddle.sum(static(x) ** 2).backward()
    got = model.fc.weight.grad.numpy().copy()
    assert old.weight.grad is None
    model.clear_gradients(set_to_zero=False)
    paddle.sum(model(x) ** 2).backward()
    np.testing.assert_allclose(got, model.fc.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_containers_retrace_when_their_layers_change():
    paddle.seed(2)
    layers = nn.LayerList([nn.Linear(3, 3), nn.Linear(3, 3)])

    class Stack(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = layers

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    model = Stack()
    static = paddle.jit.to_static(model)
    x = x_data()
    check(static, model, x)
    layers.append(nn.Linear(3, 3))
    check(static, model, x)
    del layers[0]
    check(static, model, x)
    layers[1] = nn.Linear(3, 3)
    check(static, model, x)


def test_layer_dict_pop_and_clear_retrace():
    table = nn.LayerDict({"a": nn.Linear(3, 3), "b": nn.Linear(3, 3)})

    def apply_all(x):
        for key in table:
            x = table[key](x)
        return x

    static = paddle.jit.to_static(apply_all)
    x = x_data()
    np.testing.assert_allclose(static(x).numpy(), apply_all(x).numpy(), rtol=1e-6)
    table.pop("a")
    np.testing.assert_allclose(static(x).numpy(), apply_all(x).numpy(), rtol=1e-6)
    table.clear()
    np.testing.assert_allclose(static(x).numpy(), x.numpy())


def test_layer_used_by_a_compiled_function():
    paddle.seed(3)
    fc = nn.Linear(3, 2)

    def f(x):
        return paddle.tanh(fc(x))

    static = paddle.jit.to_static(f)
    x = x_data()
    static(x)
    fc.weight = constant_parameter([3, 2], 0.25)
    np.testing.assert_allclose(static(x).numpy(), f(x).numpy(), rtol=1e-6)


def test_forward_hooks_added_or_removed_after_compiling():
    model = Scaled()
    static = paddle.jit.to_static(model)
    x = paddle.ones([2])
    static(x)
    handle = model.register_forward_post_hook(lambda layer, inputs, out: out + 1.0)
    np.testing.assert_allclose(static(x).numpy(), [3.0, 4.0])
    pre = model.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 2.0,))
    check(static, model, x)
    handle.remove()
    pre.remove()
    np.testing.assert_allclose(static(x).numpy(), [2.0, 3.0])


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_train_eval_of_a_layer_a_compiled_function_calls(backend):
    """A compiled function keys its programs on the train/eval flags of the layers
    it calls, as a compiled Layer does on its own: `model.eval()` after compiling
    must not keep running the training program (batch statistics, running stats
    updated)."""
    paddle.seed(0)
    holder = type("Holder", (), {})()
    holder.model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1D(3))
    model = holder.model

    def direct(x):  # names the layer
        return model(x)

    def indirect(x):  # reaches it through another object: known once traced
        return holder.model(x)

    x = x_data()
    for f in (direct, indirect):
        static = paddle.compile(f, backend=backend)
        for mode in ("train", "train", "eval", "train", "eval"):
            getattr(model, mode)()
            before = model[1]._mean.numpy().copy()
            got = static(x).numpy()
            after = model[1]._mean.numpy().copy()
            model[1]._mean.set_value(before)
            np.testing.assert_allclose(got, f(x).numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(after, model[1]._mean.numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_non_tensor_arguments_equal_only_by_python_equality_get_their_own_program(backend):
    """A program traced for 0.0 multiplies by 0.0 and one for 1 tests `k is True` as
    False: -0.0 and True (equal to those by ``==``) must not reuse them."""
    x = paddle.to_tensor(np.array([1.0, 2.0], np.float32))

    def scale(x, s):
        return x * s

    def pick(x, k):
        return x.sum() * (2 if k is True else 3)

    for f, first, second in ((scale, 0.0, -0.0), (pick, 1, True), (pick, 1.0, 1)):
        static = paddle.compile(f, backend=backend)
        static(x, first)
        got, want = static(x, second).numpy(), f(x, second).numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
