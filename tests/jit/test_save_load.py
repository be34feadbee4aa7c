"""jit.save / jit.load: a saved program runs without its class (in a fresh process
too), reads as the Layer it came from, trains, composes with compiled and static
programs; every kind of damaged file is refused with a LoadError."""
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec
from tests.test_threads import TIMEOUT, Threads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4)).astype("float32")


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1D(8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.bn(self.fc1(x)))
        if paddle.mean(h) > 0:  # a cond in the saved program
            h = h * 2
        return self.fc2(h)


@pytest.fixture
def saved(tmp_path):
    net = Net()
    net.eval()
    path = str(tmp_path / "net")
    paddle.jit.save(net, path, input_spec=[InputSpec([None, 4], "float32", "x")])
    return net, path


def test_the_loaded_layer_reads_and_runs_as_the_saved_one(saved):
    net, path = saved
    loaded = paddle.jit.load(path)
    assert isinstance(loaded, paddle.jit.TranslatedLayer) and not loaded.training
    np.testing.assert_array_equal(loaded(X).numpy(), net(paddle.to_tensor(X)).numpy())
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in net.named_parameters()]
    assert list(loaded.state_dict()) == list(net.state_dict())
    for (name, a), b in zip(loaded.state_dict().items(), net.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert [p.stop_gradient for p in loaded.parameters()] == \
        [p.stop_gradient for p in net.parameters()]
    assert loaded.train() is loaded and loaded.training and loaded.fc1.training
    assert loaded.eval() is loaded and not loaded.training
    assert "func @Net(%x: f32[N,4]" in str(loaded.ir)
    with pytest.raises(paddle.InputError, match=r"x should have shape \[None, 4\], got \[5, 3\]"):
        loaded(X[:, :3])


class Scaled(nn.Layer):
    """State of its own, not in a sublayer: a parameter and a buffer at the top level."""

    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([4])
        self.register_buffer("shift", paddle.to_tensor(np.arange(4, dtype="float32")))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x * self.w + self.shift)


def test_a_layer_with_state_of_its_own_loads(tmp_path):
    net = Scaled()
    net.eval()
    path = str(tmp_path / "scaled")
    paddle.jit.save(net, path, input_spec=[InputSpec([None, 4], "float32", "x")])
    loaded = paddle.jit.load(path)
    np.testing.assert_allclose(loaded(X).numpy(), net(paddle.to_tensor(X)).numpy(), rtol=1e-6)
    assert list(loaded.state_dict()) == list(net.state_dict()) == \
        ["w", "shift", "fc.weight", "fc.bias"]
    assert [n for n, _ in loaded.named_parameters()] == ["w", "fc.weight", "fc.bias"]


def test_outputs_load_in_paddles_order_dicts_by_sorted_key(tmp_path):
    """Paddle flattens a forward's outputs as paddle.utils.flatten does: a dict's
    values by sorted key. Code unpacking the loaded outputs relies on it."""
    class Nested(nn.Layer):
        def forward(self, x):
            return {"b": x * 6, "a": (x + 1, {"z": x * 3, "y": x * 4})}, x * 5

    spec = [InputSpec([None], "float32", "x")]
    paddle.jit.save(Nested(), str(tmp_path / "nested"), input_spec=spec)
    outs = paddle.jit.load(str(tmp_path / "nested"))(paddle.ones([1]))
    assert [o.item() for o in outs] == [2.0, 4.0, 3.0, 6.0, 5.0]  # a[0], a[1]["y"], a[1]["z"], b


class Dropping(Net):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(super().forward(x))


@pytest.mark.parametrize("freeze", [False, True])
@pytest.mark.parametrize("switched", [True, False])
def test_a_model_trained_compiled_saves_its_inference_program(tmp_path, freeze, switched):
    """Trained through its compiled form, then saved, switched to eval or not, without
    a call in eval mode: as Paddle's, the saved program is the inference one
    (BatchNorm on the running statistics, no dropout), not the training program the
    last call ran, and the loaded layer starts in eval mode. The model keeps its mode."""
    net = Dropping()
    static = paddle.jit.to_static(net, input_spec=[InputSpec([None, 4], "float32", "x")])
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    for _ in range(2):
        paddle.mean(static(paddle.to_tensor(X)) ** 2).backward()
        opt.step()
        opt.clear_grad()
    if switched:
        net.eval()
    path = str(tmp_path / "net")
    paddle.jit.save(static, path, freeze=freeze)
    assert [layer.training for layer in net.sublayers(include_self=True)] == [not switched] * 5
    loaded = paddle.jit.load(path)
    assert not loaded.training
    net.eval()
    np.testing.assert_allclose(loaded(X).numpy(), net(paddle.to_tensor(X)).numpy(),
                               rtol=1e-5, atol=1e-6)


class Pausing(nn.Layer):
    """BatchNorm, Dropout and a branch of its own on ``self.training``; its forward
    pauses in the thread `pause_in` (sets `inside`, waits for `go`)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1D(8)
        self.drop = nn.Dropout(0.5)
        self.pause_in = None
        self.inside, self.go = threading.Event(), threading.Event()

    def forward(self, x):
        h = self.drop(self.bn(self.fc(x)))
        if self.training:
            h = h + 1.0
        if threading.current_thread() is self.pause_in:
            self.inside.set()
            assert self.go.wait(TIMEOUT)
        return h


@pytest.mark.parametrize("compiled", [False, True])
def test_a_model_training_in_another_thread_keeps_its_mode_while_it_is_saved(tmp_path,
                                                                            compiled):
    """jit.save traces the inference program without switching the model's layers to
    eval mode: a training step run (eagerly, or through the compiled model) while
    another thread's save is inside its trace computes what it computes without the
    save (dropout, batch statistics, running statistics updated). The saved program
    is the eval-mode one all the same."""
    paddle.seed(0)
    model = Pausing()
    paddle.seed(0)
    twin = Pausing()  # the same weights, never saved
    x = paddle.to_tensor(X)
    run, run_twin = (paddle.jit.to_static(model), paddle.jit.to_static(twin)) if compiled \
        else (model, twin)
    if compiled:  # the training programs, which the calls during the save take
        run(x)
        run_twin(x)
    path = str(tmp_path / "net")

    def save():
        model.pause_in = threading.current_thread()
        paddle.jit.save(run, path, input_spec=None if compiled else
                        [InputSpec([None, 4], "float32", "x")])

    saving = Threads(save)
    try:
        assert model.inside.wait(TIMEOUT)  # the saving thread is inside its trace now
        flags = [layer.training for layer in model.sublayers(include_self=True)]
        outs = []
        for m in (run, run_twin):
            paddle.seed(1)  # the same dropout masks
            outs.append(m(x).numpy())
    finally:
        model.go.set()
        saving.join()
    assert flags == [True] * 4
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(model.bn._mean.numpy(), twin.bn._mean.numpy())
    np.testing.assert_array_equal(model.bn._variance.numpy(), twin.bn._variance.numpy())
    assert [layer.training for layer in model.sublayers(include_self=True)] == [True] * 4
    loaded = paddle.jit.load(path)
    assert not loaded.training
    model.eval()
    np.testing.assert_allclose(loaded(X).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n_blocks", [2, 12])  # a watch of one generated function; mapped
def test_a_deep_model_in_training_mode_saves_its_inference_program(tmp_path, n_blocks):
    """The flags of more layers than one generated function reads read as eval while
    jit.save traces too (else it would save the training program the call ran)."""
    paddle.seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1D(4))
                            for _ in range(n_blocks)])
    static = paddle.jit.to_static(model, input_spec=[InputSpec([None, 4], "float32", "x")])
    static(paddle.to_tensor(X))  # in training mode: the running statistics move
    paddle.jit.save(static, str(tmp_path / "deep"))
    assert model.training and model[0][1].training
    model.eval()
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "deep"))(X).numpy(),
                               model(paddle.to_tensor(X)).numpy(), rtol=1e-5, atol=1e-6)


def test_a_frozen_lstm_saves_and_loads(tmp_path):
    """Freezing keeps the ops of more than one result (a fused LSTM step) in the
    program while it lifts its large constants back into arguments."""
    lstm = nn.LSTM(4, 6)
    lstm.eval()
    path = str(tmp_path / "lstm")
    paddle.jit.save(lstm, path, input_spec=[InputSpec([None, 3, 4])], freeze=True)
    x = RNG.standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(paddle.jit.load(path)(x)[0].numpy(),
                               lstm(paddle.to_tensor(x))[0].numpy(), rtol=1e-5, atol=1e-6)


def test_a_fresh_process_runs_it_without_the_class(saved, tmp_path):
    net, path = saved
    np.save(tmp_path / "x.npy", X)
    script = textwrap.dedent(f"""
        import numpy as np, irflow
        loaded = irflow.jit.load({path!r})
        np.save({str(tmp_path / 'y.npy')!r}, loaded(np.load({str(tmp_path / 'x.npy')!r})).numpy())
        assert "Net" not in [type(m).__name__ for m in loaded.sublayers()]
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60,
                   env={**os.environ, "PYTHONPATH": root})
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), net(paddle.to_tensor(X)).numpy())


def test_a_loaded_layer_fine_tunes_as_the_original_would(saved):
    net, path = saved
    loaded = paddle.jit.load(path)
    loaded.train()
    for model in (net, loaded):
        opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
        loss = paddle.mean(model(paddle.to_tensor(X)) ** 2)
        loss.backward()
        opt.step()
    for a, b in zip(loaded.parameters(), net.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_a_loaded_layer_inside_compiled_and_static_programs(saved):
    net, path = saved
    loaded = paddle.jit.load(path)
    head = nn.Linear(3, 2)
    model = nn.Sequential(loaded, head)
    model.eval()
    want = head(net(paddle.to_tensor(X))).numpy()
    compiled = paddle.jit.to_static(model, input_spec=[InputSpec([None, 4])])
    np.testing.assert_allclose(compiled(X).numpy(), want, rtol=1e-6)
    assert "call" not in str(compiled.ir) and " cond " in str(compiled.ir)
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            y = model(paddle.static.data("x", [-1, 4]))
        (out,) = paddle.static.Executor().run(main, feed={"x": X}, fetch_list=[y])
    finally:
        paddle.disable_static()
    np.testing.assert_allclose(out, want, rtol=1e-6)
    paddle.jit.save(compiled, path + "2")  # saved again: its IR holds the inlined program
    np.testing.assert_allclose(paddle.jit.load(path + "2")(X).numpy(), want, rtol=1e-6)
    paddle.jit.save(loaded, Path(path + "3"))  # with its own input spec
    np.testing.assert_array_equal(paddle.jit.load(Path(path + "3"))(X).numpy(),
                                  loaded(X).numpy())


def test_functions_and_refusals(tmp_path):
    w = paddle.to_tensor(RNG.standard_normal((4, 2)).astype("float32"))
    f = paddle.jit.to_static(lambda x: paddle.matmul(x, w) + 1,
                             input_spec=[InputSpec([None, 4], name="x")])
    paddle.jit.save(f, str(tmp_path / "f"))
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "f"))(X).numpy(),
                               X @ w.numpy() + 1, rtol=1e-6)
    noise = paddle.jit.to_static(lambda x: x + paddle.rand([4]),
                                 input_spec=[InputSpec([None, 4], name="x")])
    with pytest.raises(paddle.IrflowError, match="draws random numbers"):
        paddle.jit.save(noise, str(tmp_path / "d"))
    with pytest.raises(paddle.IrflowError, match="needs an input_spec"):
        paddle.jit.save(paddle.jit.to_static(nn.Linear(2, 2)), str(tmp_path / "l"))


def test_inputs_of_one_name_are_saved_under_distinct_names(tmp_path):
    """Two inputs named ``x`` are saved as ``x`` and ``x_1``, as the program's text
    names them, so ``irflow run --input NAME=...`` can give each (the file named both
    ``x``, which run refuses)."""
    import json

    from irflow.static import InputSpec

    def f(a, b):
        return a * 2 + b

    spec = [InputSpec([2], "float32", name="x"), InputSpec([2], "float32", name="x")]
    paddle.jit.save(paddle.jit.to_static(f, input_spec=spec), str(tmp_path / "m"))
    inputs = json.loads((tmp_path / "m.json").read_text())["inputs"]
    assert [e["name"] for e in inputs] == ["x", "x_1"]
    loaded = paddle.jit.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded(paddle.ones([2]), paddle.full([2], 3.0)).numpy(),
                                  [5.0, 5.0])
