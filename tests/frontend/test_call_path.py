"""The per-call caches of a compiled function (its spec's types, the input checks by
input types, the arrays' types, the calls it knows the short way for) change nothing
a call does: every call still checks its inputs, picks the program for the layer's
current mode and structure, and returns what eager code returns."""
import threading

import numpy as np
import pytest

import irflow
from irflow import nn
from irflow.errors import DTypeError, InputError
from irflow.static import InputSpec
from tests.test_threads import TIMEOUT, run_threads


def _mlp():
    irflow.seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5), nn.Linear(3, 2))


def test_repeated_calls_check_every_input():
    model = _mlp()
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = np.ones((2, 4), np.float32)
    with irflow.no_grad():
        first = static(irflow.to_tensor(x)).numpy()
        for _ in range(3):
            np.testing.assert_array_equal(static(irflow.to_tensor(x)).numpy(), first)
        with pytest.raises(InputError, match=r"should have shape \[None, 4\], got \[2, 5\]"):
            static(irflow.to_tensor(np.ones((2, 5), np.float32)))
        with pytest.raises(InputError, match="should be float32, got float64"):
            static(irflow.to_tensor(np.ones((2, 4))))
        np.testing.assert_array_equal(static(irflow.to_tensor(x)).numpy(), first)


def test_without_a_spec_each_shape_and_dtype_gets_its_program():
    static = irflow.compile(lambda a: a * 2)
    for shape, dtype in [((2,), "float32"), ((3,), "float32"), ((2,), "int64"), ((2,), "float32")]:
        a = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
        out = static(irflow.to_tensor(a))
        assert out.numpy().dtype == dtype and out.shape == list(shape)
        np.testing.assert_array_equal(out.numpy(), a * 2)
    assert len(static._programs) == 3


def test_mode_and_structure_changes_between_calls_are_seen():
    model = _mlp()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = irflow.to_tensor(np.ones((8, 4), np.float32))
    model.eval()
    with irflow.no_grad():
        evaluated = static(x).numpy()
        model.train()
        assert not np.array_equal(static(x).numpy(), evaluated)  # dropout is on
        model.eval()
        np.testing.assert_array_equal(static(x).numpy(), evaluated)
        model[2] = nn.Linear(3, 5)
        assert static(x).shape == [8, 5]


def test_a_returned_structure_around_one_tensor():
    static = irflow.compile(lambda a: (a + 1, None, [a * 2]))
    out = static(irflow.to_tensor(np.ones(2, np.float32)))
    assert out[1] is None and out[0].numpy().tolist() == [2, 2]
    assert out[2][0].numpy().tolist() == [2, 2]


def _known(static) -> int:
    return len(static._known)


def _short_way_only(static, monkeypatch):
    """From here on, a call that does not take the short way fails."""
    def slow(args, kwargs):
        raise AssertionError("the call took the slow way")
    monkeypatch.setitem(static.__dict__, "_call", slow)  # not the layer's attribute


def test_a_repeated_call_takes_the_short_way(monkeypatch):
    model = _mlp()
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        first = static(x).numpy()
        _short_way_only(static, monkeypatch)
        for _ in range(3):
            np.testing.assert_array_equal(static(x).numpy(), first)
            np.testing.assert_array_equal(static(x.numpy()).numpy(), first)  # an array too
    assert _known(static) == 1  # an array is a tensor that requires no gradient


@pytest.mark.parametrize("change", ["train", "shape", "dtype", "requires", "structure"])
def test_what_the_program_depends_on_leaves_the_short_way(change):
    model = _mlp()
    model.eval()
    static = irflow.compile(model)
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        evaluated = static(x).numpy()
        key, _ = static._call_key((x,))
        assert key in static._known
        if change == "train":
            model.train()
        if change == "structure":
            model.add_sublayer("3", nn.ReLU())
        y = {"shape": irflow.to_tensor(np.ones((3, 4), np.float32)),
             "dtype": irflow.to_tensor(np.ones((2, 4), np.float64)),
             "requires": irflow.to_tensor(np.ones((2, 4), np.float32), stop_gradient=False)
             }.get(change, x)
        assert static._call_key((y,))[0] != key
        if change == "dtype":  # float64 through float32 weights: traced anew, refused
            with pytest.raises(DTypeError, match="x is float64 and y is float32"):
                static(y)
            return
        got = static(y).numpy()
        if change == "train":  # dropout is on
            assert not np.array_equal(got, evaluated)
        else:
            np.testing.assert_allclose(got, model(y).numpy(), rtol=1e-6)


def test_grad_mode_leaves_the_short_way():
    model = _mlp()
    model.eval()
    static = irflow.compile(model)
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        assert static(x).stop_gradient
        assert static(x).stop_gradient
    out = static(x)  # recorded for autograd: the parameters require a gradient
    assert not out.stop_gradient
    out.sum().backward()
    assert model[0].weight.grad is not None
    with irflow.no_grad():
        assert static(x).stop_gradient


def test_a_parameter_set_after_the_short_way_is_used():
    model = _mlp()
    model.eval()
    for freeze in (False, True):
        static = irflow.compile(model, freeze=freeze)
        x = irflow.to_tensor(np.ones((2, 4), np.float32))
        with irflow.no_grad():
            static(x)
            static(x)
            model[0].weight.set_value(np.full((4, 3), 0.5, np.float32))
            np.testing.assert_allclose(static(x).numpy(), model(x).numpy(), rtol=1e-6)
        model[0].weight.set_value(np.full((4, 3), 0.25, np.float32))


def test_a_state_tensor_of_another_type_is_refused_as_before():
    model = nn.Linear(4, 3)
    static = irflow.compile(model)
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        static(x)
        static(x)
        model.bias._value = np.zeros(5, np.float32)  # what set_value refuses
        with pytest.raises(InputError, match=r"expected shape \[3\], got \[5\]"):
            static(x)


def test_an_attribute_stored_by_the_first_call_leaves_the_short_way():
    class Lazy(nn.Layer):
        def __init__(self):
            super().__init__()
            self.h = None

        def forward(self, x):
            if self.h is None:
                self.h = irflow.zeros([2])
            self.h = self.h + x
            return self.h

    layer = Lazy()
    static = irflow.compile(layer)
    x = irflow.to_tensor(np.ones(2, np.float32))
    for n in range(1, 5):
        assert static(x).numpy().tolist() == [n, n]
    assert len({id(p) for p in static._programs.values()}) == 2


def test_a_number_attribute_the_program_counts_with_is_read_on_the_short_way():
    class Counting(nn.Layer):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls

    layer = Counting()
    static = irflow.compile(layer)
    x = irflow.to_tensor(np.ones(2, np.float32))
    for n in range(1, 4):
        assert static(x).numpy().tolist() == [n, n]
    layer.calls = 10
    assert static(x).numpy().tolist() == [11, 11]
    assert layer.calls == 11


def test_gradients_appearing_leave_the_short_way():
    irflow.seed(0)
    net = nn.Linear(3, 1)

    def accumulate(x):
        loss = net(x).sum()
        loss.backward()
        return loss

    static = irflow.compile(accumulate, input_spec=[InputSpec([None, 3], "float32")])
    x = irflow.to_tensor(np.ones((2, 3), np.float32))
    for n in range(1, 4):
        static(x)
        np.testing.assert_allclose(net.weight.grad.numpy(), np.full((3, 1), 2.0 * n))
    net.clear_gradients(set_to_zero=False)
    static(x)
    np.testing.assert_allclose(net.weight.grad.numpy(), np.full((3, 1), 2.0))


@pytest.mark.parametrize("clear", [True, False])
def test_a_training_step_takes_the_short_way_in_one_frame(clear, monkeypatch):
    """A step that computes gradients itself enters no dynamic graph, so a known call
    runs its program directly, writing back the weights and the gradients (zero after
    ``clear_grad()``, or accumulated and read by the next step) as eager code does."""
    def make():
        irflow.seed(0)
        net = nn.Linear(3, 2)
        opt = irflow.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())

        def step(x):
            loss = (net(x) ** 2).mean()
            loss.backward()
            opt.step()
            if clear:
                opt.clear_grad()
            return loss
        return net, step
    eager_net, eager_step = make()
    net, step = make()
    static = irflow.compile(step)
    x = irflow.to_tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    for n in range(5):
        if n == 2:  # the gradients' state of the calls from here on is known
            _short_way_only(static, monkeypatch)
            program = static._last
            monkeypatch.setattr(program, "call", None)  # nor `Program.call`: one frame
        np.testing.assert_allclose(static(x).numpy(), eager_step(x).numpy(), rtol=1e-6)
        for p, q in zip(net.parameters(), eager_net.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-6)
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    assert not np.any(net.weight.grad.numpy()) == clear


def test_wrong_inputs_are_refused_as_before_once_calls_are_known():
    model = _mlp()
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    with irflow.no_grad():
        static(irflow.to_tensor(np.ones((2, 4), np.float32)))
        for _ in range(2):
            with pytest.raises(InputError, match=r"should have shape \[None, 4\], got \[2, 5\]"):
                static(irflow.to_tensor(np.ones((2, 5), np.float32)))
            with pytest.raises(InputError, match="expects 1 input"):
                static()


def test_known_calls_of_several_shapes_from_several_threads():
    model = _mlp()
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((n, 4)).astype(np.float32) for n in (1, 2, 3, 5, 1, 2)]
    with irflow.no_grad():
        expected = [model(irflow.to_tensor(a)).numpy() for a in inputs]
    start = threading.Barrier(len(inputs))

    def worker(i):
        def run():
            start.wait(TIMEOUT)
            x = irflow.to_tensor(inputs[i])
            with irflow.no_grad():
                for _ in range(50):
                    np.testing.assert_allclose(static(x).numpy(), expected[i], rtol=1e-6)
        return run

    run_threads(*(worker(i) for i in range(len(inputs))))
    assert 1 <= _known(static) <= 4


def _deep(n_blocks: int):
    """Blocks of Linear, Dropout, inside a Sequential: 2 * `n_blocks` + 1 layers."""
    irflow.seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
                           for _ in range(n_blocks)])


@pytest.mark.parametrize("n_blocks", [2, 40])  # a watch of one generated function; mapped
def test_every_change_of_a_flag_or_a_nested_layer_is_seen(n_blocks):
    model = _deep(n_blocks)
    model.eval()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = irflow.to_tensor(np.ones((64, 4), np.float32))
    with irflow.no_grad():
        evaluated = static(x).numpy()
        model[n_blocks - 1][1].training = True  # one flag, set directly: dropout is on
        assert not np.array_equal(static(x).numpy(), evaluated)
        model[n_blocks - 1][1].training = False
        np.testing.assert_array_equal(static(x).numpy(), evaluated)
        model[n_blocks - 1][0] = nn.Linear(4, 6)  # a nested layer replaced
        assert static(x).shape == [64, 6]
        model[n_blocks - 1].add_sublayer("2", nn.Linear(6, 3))  # one added
        assert static(x).shape == [64, 3]
        np.testing.assert_allclose(static(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_a_layer_called_while_tracing_outside_the_tree_is_watched():
    irflow.seed(0)
    head = nn.Sequential(nn.Linear(4, 2))
    static = irflow.compile(lambda x: head(x))
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        assert static(x).shape == [2, 2]
        head[0] = nn.Linear(4, 7)
        assert static(x).shape == [2, 7]


@pytest.mark.parametrize("n_blocks", [1, 40])  # a state check of one function; mapped
def test_state_of_another_type_is_refused_before_a_kernel_runs(n_blocks):
    model = _deep(n_blocks)
    model.eval()
    static = irflow.compile(model)
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        static(x)
        static(x)
        last = model[n_blocks - 1][0]
        bias = last.bias._value
        last.bias._value = np.zeros(5, np.float32)  # what set_value refuses
        with pytest.raises(InputError, match=r"expected shape \[4\], got \[5\]"):
            static(x)
        last.bias._value = bias.astype(np.float64)
        with pytest.raises(InputError, match="expected dtype float32, got float64"):
            static(x)
        last.bias._value = bias
        # 40 products rounded in another order than NumPy's (the native batch call):
        # outputs of about 1e-3, some near-cancelling, so an absolute bound too
        np.testing.assert_allclose(static(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-8)


def test_set_state_dict_of_another_shape_leaves_the_state_as_it_was():
    model = nn.Linear(4, 3)
    static = irflow.compile(model)
    x = irflow.to_tensor(np.ones((2, 4), np.float32))
    with irflow.no_grad():
        before = static(x).numpy()
        with pytest.warns(UserWarning, match="receives a shape"):
            model.set_state_dict({"weight": np.zeros((4, 5), np.float32),
                                  "bias": np.zeros(5, np.float32)})
        np.testing.assert_array_equal(static(x).numpy(), before)
        model.set_state_dict({"weight": np.ones((4, 3), np.float32),
                              "bias": np.ones(3, np.float32)})
        np.testing.assert_allclose(static(x).numpy(), np.full((2, 3), 5.0))


def test_train_and_eval_from_several_threads_pick_each_mode():
    model = _mlp()
    static = irflow.compile(model, input_spec=[InputSpec([None, 4], "float32")])
    x = irflow.to_tensor(np.ones((256, 4), np.float32))
    model.eval()
    with irflow.no_grad():
        evaluated = static(x).numpy()
    switching = threading.Event()

    def switch():
        for _ in range(50):
            model.train()
            model.eval()
        switching.set()

    def call():
        with irflow.no_grad():
            while not switching.is_set():
                out = static(x).numpy()  # either mode's, never a mix or an error
                assert out.shape == (256, 2)
            np.testing.assert_array_equal(static(x).numpy(), evaluated)

    run_threads(switch, call, call)
