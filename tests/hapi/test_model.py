"""paddle.Model: fit/evaluate/predict against eager loops and NumPy, the compiled
training step against eager training, callbacks, progress output, save/load."""
import io
import json
import os

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.callbacks import EarlyStopping, LRScheduler, ModelCheckpoint, VisualDL
from irflow.frontend.program import CompiledFunction
from irflow.hapi.progressbar import ProgressBar
from irflow.io import DataLoader, Dataset
from irflow.static import InputSpec


class Points(Dataset):
    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, 4)).astype("float32")
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).astype("int64")[:, None]

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def net(seed=0):
    paddle.seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


SPECS = ([InputSpec([None, 4], "float32", "x")], [InputSpec([None, 1], "int64", "label")])


def prepared(network, specs=SPECS, optimizer="Adam", **kwargs):
    model = paddle.Model(network, *specs) if specs else paddle.Model(network)
    opt = getattr(paddle.optimizer, optimizer)(learning_rate=0.05,
                                               parameters=model.parameters(), **kwargs)
    model.prepare(opt, nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model


def test_compiled_fit_is_one_program_and_matches_eager_fit():
    compiled, eager = prepared(net()), prepared(net(), specs=None)
    for m in (compiled, eager):
        m.fit(Points(40), epochs=2, batch_size=8, shuffle=False, verbose=0)
    step = compiled._steps["train"]
    assert isinstance(step, CompiledFunction) and not isinstance(eager._steps["train"],
                                                                   CompiledFunction)
    ops = [op.name for op in step.ir.walk()]
    assert "matmul" in ops and "sqrt" in ops  # forward, backward and Adam in one program
    for p, q in zip(compiled.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_fit_matches_a_hand_written_loop_with_sgd():
    data = Points(12)
    model = prepared(net(1), optimizer="SGD")
    model.fit(data, batch_size=4, epochs=1, shuffle=False, verbose=0)
    ref = net(1)
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=ref.parameters())
    for xb, yb in DataLoader(data, batch_size=4):
        loss = nn.CrossEntropyLoss()(ref(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-7)


def test_fit_shuffles_each_epoch_as_paddle_does():
    # Paddle batches a Dataset with a DistributedBatchSampler of one rank: epoch e is
    # permuted by NumPy's RandomState(e).
    seen = []

    class Recording(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1, 2)

        def forward(self, x):
            seen.append(x.numpy()[:, 0].astype(int).tolist())
            return self.fc(x)

    model = paddle.Model(Recording())
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    data = paddle.io.TensorDataset([paddle.arange(6, dtype="float32").reshape([6, 1]),
                                    paddle.zeros([6, 1], "int64")])
    model.fit(data, epochs=2, batch_size=4, verbose=0)
    for epoch in range(2):
        order = list(range(6))
        np.random.RandomState(epoch).shuffle(order)
        assert seen[2 * epoch:2 * epoch + 2] == [order[:4], order[4:]]


def test_gradient_accumulation_applies_the_summed_gradients():
    data = Points(8)
    model = prepared(net(2), optimizer="SGD")
    model.fit(data, batch_size=4, shuffle=False, verbose=0, accumulate_grad_batches=2)
    ref = net(2)
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=ref.parameters())
    for xb, yb in DataLoader(data, batch_size=4):
        nn.CrossEntropyLoss()(ref(xb), yb).backward()  # both batches' gradients add up
    opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-7)


def test_eval_schedule_and_num_iters(capsys):
    model = prepared(net())
    model.fit(Points(8), Points(4), epochs=3, batch_size=4, eval_freq=2, verbose=2)
    out = capsys.readouterr().out
    # Paddle evaluates after the epochs e with e % eval_freq == 0: 0 and 2.
    assert out.count("Eval begin...") == 2
    model.fit(Points(8), epochs=5, batch_size=4, num_iters=3, verbose=2, log_freq=1)
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and out.count("step ") == 3 and model.stop_training


def test_linear_regression_step_against_numpy():
    paddle.seed(0)
    layer = nn.Linear(2, 1)
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    model = paddle.Model(layer, [InputSpec([None, 2])], [InputSpec([None, 1])])
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()), nn.MSELoss())
    x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
    y = np.array([[1.0], [0.0]], "float32")
    (loss,) = model.train_batch([x], [y])
    err = x @ w0 + b0 - y
    assert loss == pytest.approx(np.mean(err ** 2), rel=1e-6)
    np.testing.assert_allclose(layer.weight.numpy(), w0 - 0.1 * x.T @ err, rtol=1e-6)
    np.testing.assert_allclose(layer.bias.numpy(), b0 - 0.1 * err.sum(0), rtol=1e-6)


def test_evaluate_and_predict():
    model = prepared(net())
    data = Points(10)
    result = model.evaluate(data, batch_size=4, verbose=0)
    logits = model.network(paddle.to_tensor(data.x)).numpy()
    assert result["acc"] == pytest.approx(np.mean(logits.argmax(1) == data.y[:, 0]))
    last = nn.CrossEntropyLoss()(paddle.to_tensor(logits[8:]), paddle.to_tensor(data.y[8:]))
    assert result["loss"] == [pytest.approx(last.item(), rel=1e-5)]  # Paddle: the last batch
    batches = model.predict(data, batch_size=4, verbose=0)
    assert len(batches) == 1 and [b.shape for b in batches[0]] == [(4, 2), (4, 2), (2, 2)]
    (stacked,) = model.predict(data, batch_size=4, stack_outputs=True, verbose=0)
    np.testing.assert_allclose(stacked, logits, rtol=1e-5, atol=1e-6)


def test_progress_lines_when_not_a_terminal(capsys):
    model = prepared(net())
    model.fit(Points(20), Points(8), epochs=2, batch_size=5, log_freq=2, verbose=2)
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "Epoch 1/2"
    steps = [line for line in out if line.startswith("step ")]
    assert [s.split(" - ")[0] for s in steps[:3]] == ["step 2/4", "step 4/4", "step 2/2"]
    assert " - loss: " in steps[0] and " - acc: " in steps[0] and steps[0].endswith("/step")
    assert "Eval begin..." in out and "Eval samples: 8" in out and "\r" not in "".join(out)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal():
    screen = Terminal()
    bar = ProgressBar(4, file=screen)
    bar.update(1, [("loss", 0.5), ("acc", [0.25])])
    bar.update(4, [("loss", 0.25), ("acc", [0.5])])
    first, last = screen.getvalue().split("\r")[1:]
    assert first.startswith("step 1/4 [======>" + "." * 23 + "]")
    assert "loss: 0.5000 - acc: 0.2500" in first and "ETA: " in first
    # The last draw ends the line and blanks what the longer first one left.
    assert "ETA" not in last and last.rstrip(" \n").endswith("/step") and last[-1] == "\n"
    assert "[" + "=" * 30 + "]" in last


def test_early_stopping_checkpoints_scheduler_and_visualdl(tmp_path):
    sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
    model = paddle.Model(net(), *SPECS)
    model.prepare(paddle.optimizer.SGD(sched, parameters=model.parameters()),
                  nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    stop = EarlyStopping(monitor="acc", patience=0, verbose=0, baseline=2.0)  # unreachable
    log_dir = tmp_path / "vdl"
    model.fit(Points(12), Points(4), epochs=5, batch_size=4, verbose=0,
              save_dir=str(tmp_path / "ck"), callbacks=[stop, VisualDL(str(log_dir))])
    assert model.stop_training and sorted(os.listdir(tmp_path / "ck")) == \
        ["0.pdopt", "0.pdparams", "final.pdopt", "final.pdparams"]
    assert sched.last_epoch == 3  # stepped after each of the 3 batches of one epoch
    records = [json.loads(line) for line in open(log_dir / "scalars.jsonl")]
    assert [r["mode"] for r in records] == ["train"] * 3 + ["eval"]
    assert set(records[0]) == {"mode", "step", "epoch", "loss", "acc"}


class CountsEvaluations(paddle.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.evaluations = 0

    def on_eval_end(self, logs=None):
        self.evaluations += 1


# Evaluations run before EarlyStopping stopped a 6-epoch fit of a Linear(1, 1) on
# y = 3x (its MSE falls every epoch), as Paddle 3.3.1 runs them: it stops once
# `patience` evaluations in a row did not improve, so patience=0 stops after the
# first, and 'max' on a falling loss improves only at the first evaluation.
@pytest.mark.parametrize("mode, patience, evaluations", [
    ("min", 0, 1), ("min", 1, 6), ("max", 0, 1), ("max", 1, 2), ("max", 2, 3)])
def test_early_stopping_stops_after_patience_evaluations_as_paddle(capsys, mode, patience,
                                                                   evaluations):
    x = np.linspace(-1, 1, 40, dtype="float32").reshape(40, 1)
    data = paddle.io.TensorDataset([paddle.to_tensor(x), paddle.to_tensor(3 * x)])
    line = nn.Linear(1, 1)
    line.weight.set_value(np.zeros((1, 1), "float32"))
    line.bias.set_value(np.zeros((1,), "float32"))
    model = paddle.Model(line)
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()), nn.MSELoss())
    stop, count = EarlyStopping(monitor="loss", mode=mode, patience=patience), \
        CountsEvaluations()
    model.fit(data, data, batch_size=40, epochs=6, verbose=0, shuffle=False,
              callbacks=[stop, count])
    assert count.evaluations == stop.stopped_epoch == evaluations
    stopped = evaluations < 6
    assert model.stop_training == stopped
    assert capsys.readouterr().out == (f"Epoch {evaluations}: Early stopping.\n"
                                       if stopped else "")


def test_one_callback_without_a_list_and_a_monitor_never_logged():
    """Paddle takes callbacks=cb as [cb], and an EarlyStopping whose monitor the
    evaluation does not log warns and lets training run (it raised here)."""
    model = paddle.Model(net())
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    count = CountsEvaluations()
    model.fit(Points(8), Points(4), epochs=2, batch_size=4, verbose=0, callbacks=count)
    assert count.evaluations == 2
    stop = EarlyStopping(monitor="acc", verbose=0)
    with pytest.warns(UserWarning, match=r"monitors 'acc', which the evaluation did not "
                                         r"log \(it logged \[.*'loss'"):
        model.fit(Points(8), Points(4), epochs=2, batch_size=4, verbose=0, callbacks=stop)
    assert not model.stop_training


def test_lr_scheduler_by_epoch_and_reduce_on_plateau():
    plateau = paddle.optimizer.lr.ReduceOnPlateau(0.1, patience=0, factor=0.5)
    model = paddle.Model(net())
    model.prepare(paddle.optimizer.SGD(plateau, parameters=model.parameters()),
                  lambda out, y: (out * 0).sum() + 1.0)  # a loss that never improves
    model.fit(Points(8), epochs=3, batch_size=4, verbose=0,
              callbacks=[LRScheduler(by_step=False, by_epoch=True)])
    assert plateau() == pytest.approx(0.1 * 0.5 ** 2)


def test_save_and_load_round_trip(tmp_path):
    model = prepared(net())
    model.fit(Points(8), batch_size=4, verbose=0)
    path = str(tmp_path / "m" / "ck")
    model.save(path)
    fresh = prepared(net(5))
    fresh.load(path)
    for p, q in zip(model.parameters(), fresh.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    # as in Paddle, the loaded optimizer state fills the state the next step makes, and
    # state_dict() lists it meanwhile (so saving again keeps it)
    assert len(fresh._optimizer.state_dict()) == len(model._optimizer.state_dict())
    data = Points(4)
    batch = [np.stack([data[i][k] for i in range(4)]) for k in range(2)]
    model.train_batch([batch[0]], [batch[1]])
    fresh.train_batch([batch[0]], [batch[1]])
    saved, loaded = model._optimizer.state_dict(), fresh._optimizer.state_dict()
    assert len(saved) == len(loaded) == 4 * 4  # moments and powers of 4 parameters
    for v, w in zip(saved.values(), loaded.values()):  # same order, other unique names
        np.testing.assert_array_equal(v.numpy(), w.numpy())
    for p, q in zip(model.parameters(), fresh.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def two_layers(out_features=1, seed=0):
    paddle.seed(seed)
    return nn.Sequential(nn.Linear(2, 3), nn.Linear(3, out_features))


def adam_model(network):
    model = paddle.Model(network)
    model.prepare(paddle.optimizer.Adam(0.1, parameters=model.parameters()), nn.MSELoss())
    return model


def arrays(state):
    """A state dict's tensors as NumPy copies (nested dicts, a scheduler's, left out)."""
    return {k: np.array(v.numpy() if isinstance(v, paddle.Tensor) else v)
            for k, v in state.items() if not isinstance(v, dict)}


def stepped_adam_model(network):
    """`adam_model(network)` after one training step, so that its optimizer has state
    (made at the first step, as in Paddle)."""
    model = adam_model(network)
    outputs = network[-1].weight.shape[1]
    model.train_batch([np.ones((2, 2), "float32")], [np.zeros((2, outputs), "float32")])
    return model


@pytest.fixture
def checkpoint(tmp_path):
    """A trained Sequential(Linear(2, 3), Linear(3, 1)) with Adam, saved: (path, its
    state dict)."""
    model = adam_model(two_layers())
    model.train_batch([np.ones((2, 2), "float32")], [np.zeros((2, 1), "float32")])
    path = str(tmp_path / "ck")
    model.save(path)
    return path, arrays(model.network.state_dict())


# Paddle 3.3.1 raises these for the first entry (in state-dict order) that the file
# lacks or holds with another shape, and leaves every parameter as it was.
@pytest.mark.parametrize("make_network, message", [
    (lambda: two_layers(out_features=2, seed=1),
     "1.weight receives a shape [3, 1], but the expected shape is [3, 2]."),
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1), nn.Linear(1, 1)),
     "2.weight is not found in the providing file.")], ids=["shape", "missing"])
def test_load_raises_on_a_mismatch_before_changing_anything(checkpoint, make_network,
                                                            message):
    path, _ = checkpoint
    network = make_network()
    model = stepped_adam_model(network)
    before, opt_before = arrays(network.state_dict()), arrays(model._optimizer.state_dict())
    assert opt_before
    with pytest.raises(ValueError) as raised:
        model.load(path)
    assert str(raised.value) == message
    after, opt_after = arrays(network.state_dict()), arrays(model._optimizer.state_dict())
    assert before.keys() == after.keys() and opt_before.keys() == opt_after.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    for k in opt_before:
        np.testing.assert_array_equal(opt_before[k], opt_after[k])


def test_load_with_skip_mismatch_warns_keeps_the_mismatched_and_resets_the_optimizer(
        checkpoint):
    path, saved = checkpoint
    network = two_layers(out_features=2, seed=1)
    model = stepped_adam_model(network)
    before, opt_before = arrays(network.state_dict()), arrays(model._optimizer.state_dict())
    assert opt_before
    with pytest.warns(UserWarning) as warned:
        model.load(path, skip_mismatch=True)
    # Paddle 3.3.1's warnings; it loads the matching entries and not the optimizer.
    assert [str(w.message) for w in warned] == [
        "Skip loading for 1.weight. 1.weight receives a shape [3, 1], but the expected "
        "shape is [3, 2].",
        "Skip loading for 1.bias. 1.bias receives a shape [1], but the expected shape "
        "is [2]."]
    after = arrays(network.state_dict())
    for k in ("0.weight", "0.bias"):
        np.testing.assert_array_equal(after[k], saved[k])
    for k in ("1.weight", "1.bias"):
        np.testing.assert_array_equal(after[k], before[k])
    opt_after = arrays(model._optimizer.state_dict())
    for k in opt_before:
        np.testing.assert_array_equal(opt_before[k], opt_after[k])


def test_load_ignores_entries_the_network_lacks(checkpoint):
    path, saved = checkpoint
    network = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1, bias_attr=False))
    adam_model(network).load(path)
    for k, v in arrays(network.state_dict()).items():
        np.testing.assert_array_equal(v, saved[k])


def test_summary_uses_the_input_specs(capsys):
    totals = prepared(net()).summary()
    assert totals == {"total_params": 58, "trainable_params": 58}
    out = capsys.readouterr().out
    assert "Linear-" in out and "Total params: 58" in out


def test_checkpoint_callback_alone(tmp_path):
    model = prepared(net())
    model.fit(Points(4), batch_size=4, epochs=2, verbose=0,
              callbacks=[ModelCheckpoint(save_freq=2, save_dir=str(tmp_path))])
    assert sorted(os.listdir(tmp_path)) == ["0.pdopt", "0.pdparams", "final.pdopt",
                                            "final.pdparams"]


# The checkpoints Paddle 3.3.1 writes and the lines it prints (at verbose=0) for
# fit(save_dir, save_freq) over `epochs` epochs: after each epoch % save_freq == 0.
@pytest.mark.parametrize("save_freq, epochs, names", [
    (2, 5, ["0", "2", "4", "final"]), (3, 4, ["0", "3", "final"]),
    (1, 2, ["0", "1", "final"])])
def test_fit_saves_checkpoints_at_paddles_epochs(tmp_path, capsys, save_freq, epochs,
                                                   names):
    model = prepared(net())
    model.fit(Points(4), batch_size=4, epochs=epochs, verbose=0, save_dir=str(tmp_path),
              save_freq=save_freq)
    assert sorted(os.listdir(tmp_path)) == sorted(n + ext for n in names
                                                  for ext in (".pdopt", ".pdparams"))
    assert capsys.readouterr().out.splitlines() == [
        f"save checkpoint at {tmp_path / n}" for n in names]


def test_errors_say_what_is_missing():
    model = paddle.Model(net())
    with pytest.raises(RuntimeError, match="prepare"):
        model.train_batch([np.ones((1, 4), "float32")], [np.zeros((1, 1), "int64")])
    with pytest.raises(TypeError, match="Metric"):
        model.prepare(None, nn.CrossEntropyLoss(), metrics=["acc"])
    with pytest.raises(TypeError, match="InputSpec"):
        paddle.Model(net(), inputs=[[None, 4]])


class ReadsNumpy(nn.Layer):
    """Eager-only code: the forward reads a tensor's values into NumPy."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = self.fc(x)
        return h / float(np.abs(h.numpy()).max())


def test_a_network_that_does_not_compile_trains_eagerly_with_a_warning():
    def trained(specs):
        paddle.seed(3)
        model = paddle.Model(ReadsNumpy(), *specs)
        model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                      nn.CrossEntropyLoss())
        data = Points(8)
        losses = [model.train_batch([data.x], [data.y])[0] for _ in range(2)]
        return losses, [p.numpy() for p in model.parameters()]
    with pytest.warns(UserWarning, match="train step does not compile, so it runs eagerly"):
        losses, params = trained(SPECS)
    want_losses, want_params = trained(())
    np.testing.assert_array_equal(losses, want_losses)  # the failed trace changed nothing
    for p, q in zip(params, want_params):
        np.testing.assert_array_equal(p, q)


def test_a_model_trains_after_enable_static_as_in_dynamic_mode():
    """After paddle.enable_static() a Model still trains, evaluates and predicts (its
    steps are compiled programs in both modes): the same numbers as in dynamic mode
    from the same weights."""
    def run(static: bool):
        if static:
            paddle.enable_static()
        try:
            network = net()
            model = paddle.Model(network, *SPECS)
            model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                          nn.CrossEntropyLoss(), paddle.metric.Accuracy())
            model.fit(Points(12), Points(4), epochs=2, batch_size=4, verbose=0, shuffle=False)
            logs = model.evaluate(Points(4), batch_size=4, verbose=0)
            predicted = model.predict(Points(4), batch_size=4, verbose=0)
            return logs, predicted, [p.numpy() for p in network.parameters()]
        finally:
            paddle.disable_static()

    dynamic, static = run(False), run(True)
    assert static[0] == dynamic[0]
    np.testing.assert_array_equal(np.concatenate(static[1][0]), np.concatenate(dynamic[1][0]))
    for s, d in zip(static[2], dynamic[2]):
        np.testing.assert_array_equal(s, d)
