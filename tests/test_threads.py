"""Threads: grad mode and the tracer belong to the thread that set them, and one
compiled program serves several threads at once. Events order the threads so that
the overlaps under test always happen."""
import threading

import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

TIMEOUT = 30


class Threads:
    """Targets run each in its own thread; `join` re-raises the first exception one
    raised."""

    def __init__(self, *targets):
        self.errors = []
        self.threads = [threading.Thread(target=self._guarded, args=(t,)) for t in targets]
        for t in self.threads:
            t.start()

    def _guarded(self, target):
        try:
            target()
        except BaseException as e:  # noqa: BLE001  (re-raised by join, in the test's thread)
            self.errors.append(e)

    def join(self):
        for t in self.threads:
            t.join(TIMEOUT)
            assert not t.is_alive(), "a thread did not finish"
        if self.errors:
            raise self.errors[0]


def run_threads(*targets):
    Threads(*targets).join()


def test_no_grad_in_one_thread_leaves_another_recording():
    inside, checked = threading.Event(), threading.Event()
    results = {}

    def without_gradients():
        with paddle.no_grad():
            inside.set()
            assert checked.wait(TIMEOUT)
            x = paddle.ones([2])
            x.stop_gradient = False
            results["no_grad"] = (x * 2).stop_gradient

    def with_gradients():
        assert inside.wait(TIMEOUT)
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        paddle.sum(x * x).backward()
        results["grad"] = x.grad.numpy()
        results["enabled"] = paddle.is_grad_enabled()
        checked.set()

    run_threads(without_gradients, with_gradients)
    assert results["no_grad"] is True
    assert results["enabled"] is True
    np.testing.assert_allclose(results["grad"], [2.0, 4.0])
    assert paddle.is_grad_enabled()


def test_a_new_thread_records_gradients_even_if_its_parent_does_not():
    seen = []
    with paddle.no_grad():
        run_threads(lambda: seen.append(paddle.is_grad_enabled()))
    assert seen == [True]


class Waiting(nn.Layer):
    """A model whose forward, while being traced, waits until told to go on."""

    def __init__(self, tracing: threading.Event, go: threading.Event):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.tracing, self.go = tracing, go

    def forward(self, x):
        h = F.relu(self.fc(x))
        self.tracing.set()
        assert self.go.wait(TIMEOUT)
        return h * 2.0


def mlp(seed):
    paddle.seed(seed)  # the generator is process-wide: build models in one thread
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def train(model, seed):
    """Three eager SGD steps: the losses and the final weights."""
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(3):
        x = paddle.to_tensor(rng.standard_normal((5, 4)).astype(np.float32))
        y = paddle.to_tensor(rng.integers(0, 2, 5))
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


def test_compiling_while_other_threads_train_eagerly():
    expected = [train(mlp(seed), seed) for seed in (1, 2)]
    models = {seed: mlp(seed) for seed in (1, 2)}
    tracing, go = threading.Event(), threading.Event()
    paddle.seed(0)
    model = Waiting(tracing, go)
    x = paddle.randn([2, 4])
    got = {}

    def compile_model():
        got["compiled"] = paddle.jit.to_static(model)(x).numpy()

    compiling = Threads(compile_model)
    try:
        assert tracing.wait(TIMEOUT)  # the compiling thread is inside its trace now
        run_threads(lambda: got.setdefault(1, train(models[1], 1)),
                    lambda: got.setdefault(2, train(models[2], 2)))
    finally:
        go.set()
        compiling.join()
    for seed, (losses, params) in zip((1, 2), expected):
        np.testing.assert_allclose(got[seed][0], losses, rtol=1e-6)
        for p, q in zip(got[seed][1], params):
            np.testing.assert_allclose(p, q, rtol=1e-6)
    np.testing.assert_allclose(got["compiled"], model(x).numpy(), rtol=1e-6)


def test_one_compiled_program_called_from_several_threads_at_once():
    paddle.seed(3)
    model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 6))
    static = paddle.jit.to_static(model)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(4)]
    expected = []
    for a in inputs:
        x = paddle.to_tensor(a, stop_gradient=False)
        out = model(x)
        (g,) = paddle.grad(paddle.sum(out * out), x)
        expected.append((out.numpy(), g.numpy()))
    start = threading.Barrier(len(inputs))
    got = [None] * len(inputs)

    def worker(i):
        def run():
            start.wait(TIMEOUT)
            for _ in range(20):
                x = paddle.to_tensor(inputs[i], stop_gradient=False)
                out = static(x)
                (g,) = paddle.grad(paddle.sum(out * out), x)
                got[i] = (out.numpy(), g.numpy())
                np.testing.assert_allclose(got[i][0], expected[i][0], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(got[i][1], expected[i][1], rtol=1e-5, atol=1e-6)
        return run

    run_threads(*(worker(i) for i in range(len(inputs))))
    assert all(g is not None for g in got)
