"""Python values a compiled program read while traced are checked on every call: after
one changes (an attribute, a global, a variable of an enclosing function), the call
traces again and computes what eager code computes, never the old model's answer."""
import collections
import math
import warnings

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.frontend.guards import MAX_ITEMS, frozen

BACKENDS = ["numpy", "llvm"]
SCALE = 2.0


def agree(compiled, model, x):
    got, want = compiled(x).numpy(), model(x).numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


class Configured(nn.Layer):
    """A forward whose constants, loop count, branches and shapes are attributes."""

    def __init__(self):
        super().__init__()
        self.scale, self.steps, self.act, self.extra = 2.0, 2, "relu", False
        self.cfg, self.shape = {"a": 1.0}, (2, 8)

    def forward(self, x):
        y = x * self.scale
        for _ in range(self.steps):
            y = y + 1
        y = F.relu(y) if self.act == "relu" else F.gelu(y)
        if self.extra:
            y = y * 10
        return (y * self.cfg["a"]).reshape(self.shape)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("change", [
    lambda m: setattr(m, "scale", 3.0),
    lambda m: setattr(m, "steps", 5),
    lambda m: setattr(m, "act", "gelu"),
    lambda m: setattr(m, "extra", True),
    lambda m: m.cfg.__setitem__("a", -4.0),
    lambda m: setattr(m, "shape", (4, 4)),
], ids=["float", "loop-count", "str-branch", "bool-branch", "dict-item", "shape"])
def test_an_attribute_changed_after_compiling_is_read_again(backend, change):
    model = Configured()
    compiled = paddle.compile(model, backend=backend)
    x = paddle.to_tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4))
    agree(compiled, model, x)
    change(model)
    agree(compiled, model, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_changed_means_no_new_trace(backend):
    model = Configured()
    model.scale = math.nan  # a NaN equals itself here
    compiled = paddle.compile(model, backend=backend)
    x = paddle.ones([4, 4])
    compiled(x)
    program = compiled._last
    for _ in range(3):
        compiled(x)
    assert compiled._last is program


def test_a_global_and_an_enclosing_variable_are_read_again():
    global SCALE

    def make():
        shift = 1.0

        def f(x):
            return x * SCALE + shift

        def set_shift(value):
            nonlocal shift
            shift = value
        return f, set_shift
    f, set_shift = make()
    compiled = paddle.compile(f)
    x = paddle.to_tensor([1.0, 2.0])
    np.testing.assert_allclose(compiled(x).numpy(), [3.0, 5.0])
    old = SCALE
    try:
        SCALE = 10.0
        np.testing.assert_allclose(compiled(x).numpy(), [11.0, 21.0])
        set_shift(-1.0)
        np.testing.assert_allclose(compiled(x).numpy(), [9.0, 19.0])
    finally:
        SCALE = old


def test_a_replaced_function_and_an_object_attribute_are_read_again():
    class Options:
        alpha = 0.5

    class Model(nn.Layer):
        def __init__(self):
            super().__init__()
            self.activation, self.options = F.relu, Options()

        def forward(self, x):
            return self.activation(x) * self.options.alpha

    model = Model()
    compiled = paddle.compile(model)
    x = paddle.to_tensor([-1.0, 2.0])
    agree(compiled, model, x)
    model.activation = F.sigmoid
    agree(compiled, model, x)
    model.options.alpha = 4.0
    agree(compiled, model, x)


def test_an_int_and_a_float_of_equal_value_trace_apart():
    """``x * 1`` keeps an int tensor int; ``x * 1.0`` makes it float, as eagerly."""
    class Model(nn.Layer):
        def __init__(self):
            super().__init__()
            self.k = 1

        def forward(self, x):
            return x * self.k

    model = Model()
    compiled = paddle.compile(model)
    x = paddle.to_tensor([1, 2])
    agree(compiled, model, x)
    model.k = 1.0
    agree(compiled, model, x)
    assert compiled(x).dtype == paddle.float32


def test_a_number_forward_changes_is_carried_not_guarded():
    """``self.calls += 1`` in forward is the program's input and output: calls keep
    counting and no call traces again."""
    class Counting(nn.Layer):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls

    model = Counting()
    compiled = paddle.compile(model)
    x = paddle.ones([2])
    outs = [float(compiled(x)[0]) for _ in range(4)]
    program = compiled._last
    outs += [float(compiled(x)[0]) for _ in range(2)]
    assert outs[-3:] == [4.0, 5.0, 6.0] and model.calls == 6
    assert compiled._last is program


def test_plain_data_is_compared_by_value_and_exact_type():
    assert frozen([1, (2.0, "a")]) == frozen([1, (2.0, "a")])
    assert frozen(1) != frozen(1.0) != frozen(True)
    assert frozen(0.0) != frozen(-0.0)
    assert frozen(math.nan) == frozen(math.nan)
    assert frozen({"a": 1, "b": 2}) != frozen({"b": 2, "a": 1})  # iteration order differs
    assert frozen({1, 2}) == frozen({2, 1})
    assert frozen(np.float32(0.5)) != frozen(np.float64(0.5))
    t = paddle.ones([1])
    assert frozen([t]) == frozen([t]) != frozen([paddle.ones([1])])  # other objects: by identity
    assert frozen(t) is None
    assert frozen(list(range(MAX_ITEMS + 1))) is None


def test_a_value_changing_on_every_call_is_warned_of_once():
    class Stepped(nn.Layer):
        def __init__(self):
            super().__init__()
            self.step = 0

        def forward(self, x):
            return x * self.step

    model = Stepped()
    compiled = paddle.compile(model)
    x = paddle.ones([2])
    with pytest.warns(RuntimeWarning, match="Python values it reads changed") as caught:
        for step in range(12):
            model.step = step
            assert float(compiled(x)[0]) == step
    assert len([w for w in caught if "Python values" in str(w.message)]) == 1
    assert "step" in str(caught[0].message)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_value_switching_between_settings_traces_once_per_setting(backend):
    """A flag the training loop flips (and a mode string) picks among the programs
    traced for each setting: a switch back traces nothing and warns of nothing."""
    traced = collections.deque()  # (not plain data: guarded by identity)

    class Switched(nn.Layer):
        def __init__(self):
            super().__init__()
            self.flip, self.act = False, "relu"

        def forward(self, x):
            traced.append((self.flip, self.act))
            y = -x if self.flip else x
            return F.relu(y) if self.act == "relu" else F.sigmoid(y)

    model = Switched()
    compiled = paddle.compile(model, backend=backend)
    x = paddle.to_tensor(np.linspace(-1, 1, 8, dtype=np.float32))
    settings = [(False, "relu"), (True, "relu"), (True, "sigmoid"), (False, "sigmoid")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for step in range(12):
            model.flip, model.act = settings[step % 4]
            agree(compiled, model, x)
    assert len(traced) == 12 + 4  # the eager calls, and one trace per setting


def test_a_numpy_array_changed_in_place_or_replaced_is_read_again():
    class Tabled(nn.Layer):
        def __init__(self):
            super().__init__()
            self.table = np.array([3.0, 4.0], dtype=np.float32)

        def forward(self, x):
            return x * paddle.to_tensor(self.table)

    model = Tabled()
    compiled = paddle.compile(model)
    x = paddle.ones([2])
    agree(compiled, model, x)
    model.table[1] = -1.0
    agree(compiled, model, x)
    model.table = np.array([0.5, 0.25], dtype=np.float32)
    agree(compiled, model, x)
    assert frozen(np.zeros(2, np.float32)) != frozen(np.zeros(2, np.float64))
    assert frozen(np.zeros((1, 2))) != frozen(np.zeros((2, 1)))


def test_getattr_reads_are_guarded_too():
    class Named(nn.Layer):
        def __init__(self):
            super().__init__()
            self.factor = 2.0

        def forward(self, x):
            return x * getattr(self, "factor") + getattr(self, "missing", 0.5)

    model = Named()
    compiled = paddle.compile(model)
    x = paddle.ones([2])
    agree(compiled, model, x)
    model.factor = -3.0
    agree(compiled, model, x)


def test_an_attribute_found_missing_is_guarded_until_it_exists():
    class Optional(nn.Layer):
        def forward(self, x):
            if hasattr(self, "bias_value"):
                x = x + self.bias_value
            return x * getattr(self, "gain", 1.0)

    model = Optional()
    compiled = paddle.compile(model)
    x = paddle.ones([2])
    agree(compiled, model, x)
    model.bias_value = 5.0
    agree(compiled, model, x)
    model.gain = -2.0
    agree(compiled, model, x)


def test_a_plain_list_of_layers_and_a_replaced_config_object_are_read_again():
    class Config:
        def __init__(self, alpha):
            self.alpha = alpha

    class Stack(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(2, 2), nn.Linear(2, 2)])
            self.order = [self.blocks[0]]  # a plain list: not registered, not watched
            self.cfg = Config(2.0)

        def forward(self, x):
            for block in self.order:
                x = block(x)
            return x * self.cfg.alpha

    model = Stack()
    compiled = paddle.compile(model)
    x = paddle.to_tensor([[1.0, -1.0]])
    agree(compiled, model, x)
    model.order.append(model.blocks[1])
    agree(compiled, model, x)
    model.cfg = Config(-1.0)
    agree(compiled, model, x)


def test_the_settings_of_irflows_layers_are_read_again():
    """irflow's own layers run unconverted; a program compares the count of changes
    to each one's settings (one comparison per layer)."""
    model = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.1), nn.Dropout(0.5), nn.LayerNorm(4))
    model.eval()
    compiled = paddle.compile(model)
    x = paddle.to_tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    agree(compiled, model, x)
    program = compiled._last
    compiled(x)
    assert compiled._last is program
    model[1]._negative_slope = 0.5
    agree(compiled, model, x)
    model[3]._epsilon = 10.0
    agree(compiled, model, x)
    model.train()
    model[2].p = 0.0
    agree(compiled, model, x)

MASK = paddle.ones([3])


def test_a_global_rebound_to_another_tensor_is_read_again():
    """A tensor a global names is guarded by identity (a Layer's tensors are its
    parameters and buffers, which its structure version covers)."""
    global MASK

    def f(x):
        return x * MASK
    compiled = paddle.compile(f)
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(compiled(x).numpy(), [1.0, 2.0, 3.0])
    old = MASK
    try:
        MASK = paddle.to_tensor([0.0, 1.0, 0.0])
        np.testing.assert_allclose(compiled(x).numpy(), [0.0, 2.0, 0.0])
    finally:
        MASK = old
