"""Reducing the learning rate on a plateau, as PaddlePaddle 3.3.1 does it: the
scheduler ``paddle.optimizer.lr.ReduceOnPlateau`` and the callback
``paddle.callbacks.ReduceLROnPlateau``. Expected values were printed by running the
same calls under Paddle 3.3.1 on the CPU."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.callbacks import ReduceLROnPlateau
from irflow.io import Dataset
from irflow.optimizer.lr import ReduceOnPlateau

SEQUENCE = [1.0, 0.99, 0.995, 0.98, 1.2, 0.97, 0.971, 0.9703, 0.9702, 0.96, 0.96, 0.96, 0.5]


def _rates(scheduler, metrics) -> list:
    rates = []
    for m in metrics:
        scheduler.step(m)
        rates.append(scheduler.last_lr)
    return rates


# ---------------------------------------------------------------- the scheduler

@pytest.mark.parametrize("as_metric", [float, lambda m: paddle.to_tensor(m, dtype="float32"),
                                       lambda m: np.array([m], dtype=np.float32), np.float32])
def test_mode_min_rel_with_cooldown_and_min_lr_steps_as_paddle(as_metric):
    """0.9702 lies on the bound 0.98 * (1 - 0.01): the float32 metrics compute it in
    float32, as Paddle's Tensor arithmetic does (float64 arithmetic on their values
    would call the step an improvement), and reach Paddle's rates too."""
    scheduler = ReduceOnPlateau(0.1, mode="min", factor=0.5, patience=0, threshold=0.01,
                                threshold_mode="rel", cooldown=1, min_lr=0.01, epsilon=1e-3)
    # paddle 3.3.1: the same rates for Python floats and float32 tensors
    assert _rates(scheduler, [as_metric(m) for m in SEQUENCE]) == [
        0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125, 0.01, 0.01, 0.01, 0.01, 0.01]
    state = scheduler.state_dict()
    assert (state["cooldown_counter"], state["num_bad_epochs"], state["last_epoch"],
            state["last_lr"]) == (0, 0, 13, 0.01)


def test_state_dict_keeps_the_metric_as_paddle_does():
    """A Tensor's best is saved as a float, an array's as the array (Paddle's
    state_dict converts Tensors only)."""
    scheduler = ReduceOnPlateau(0.1)
    scheduler.step(paddle.to_tensor(0.96, dtype="float32"))
    assert scheduler.state_dict()["best"] == 0.9599999785423279   # paddle 3.3.1
    scheduler.step(paddle.to_tensor([0.5], dtype="float32"))       # Paddle fails on [1]
    assert scheduler.state_dict()["best"] == 0.5
    scheduler = ReduceOnPlateau(0.1)
    scheduler.step(np.array([3.2], dtype=np.float32))
    best = scheduler.state_dict()["best"]
    assert isinstance(best, np.ndarray) and best.dtype == np.float32


def test_mode_max_abs_steps_as_paddle():
    scheduler = ReduceOnPlateau(1.0, mode="max", factor=0.5, patience=2, threshold=0.05,
                                threshold_mode="abs", min_lr=0.2)
    metrics = [2.0, 2.02, 2.01, 2.0, 1.9, 3.0, 3.0, 3.0, 3.0, 3.1, 3.14, 3.2]
    # paddle 3.3.1, float32 arrays as metrics
    assert _rates(scheduler, [np.array([m], np.float32) for m in metrics]) == [
        1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25]


def test_a_reloaded_scheduler_goes_on_as_the_saved_one():
    metrics = [paddle.to_tensor(m, dtype="float32") for m in SEQUENCE]
    kwargs = dict(factor=0.5, patience=0, threshold=0.01, cooldown=1, min_lr=0.01,
                  epsilon=1e-3)
    whole = ReduceOnPlateau(0.1, **kwargs)
    expected = _rates(whole, metrics)
    first = ReduceOnPlateau(0.1, **kwargs)
    rates = _rates(first, metrics[:5])
    second = ReduceOnPlateau(0.1, **kwargs)
    second.set_state_dict(first.state_dict())
    assert rates + _rates(second, metrics[5:]) == expected


@pytest.mark.parametrize("metric, error, message", [
    (paddle.to_tensor([1.0, 2.0]), ValueError, "takes one metric value; got 2 values"),
    ("0.5", TypeError, "metrics must be a number, a Tensor or a NumPy array, not str"),
])
def test_metrics_must_be_one_number(metric, error, message):
    with pytest.raises(error, match=message):
        ReduceOnPlateau(0.1).step(metric)


# ---------------------------------------------------------------- the callback

class _Holder:
    """What the callback reads of a `paddle.Model`: its optimizer."""

    def __init__(self, learning_rate=0.1):
        lin = nn.Linear(1, 1)
        self._optimizer = paddle.optimizer.SGD(learning_rate, parameters=lin.parameters())


def _evaluate(callback, monitor, values, learning_rate=0.1) -> list:
    holder = _Holder(learning_rate)
    callback.set_model(holder)
    callback.on_train_begin()
    rates = []
    for value in values:
        callback.on_eval_end({monitor: value})
        rates.append(holder._optimizer.get_lr())
    return rates


LOSSES = [[1.0], [0.9], [0.95], [0.9], [0.91], [0.85], [0.85], [0.86], [0.87], [0.88], [0.5],
          [0.6], [0.7], [0.8], [0.9], [1.0], [1.1]]
ACCURACIES = [0.5, 0.6, 0.6, 0.59, 0.65, 0.65, 0.64, 0.63, 0.62, 0.7, 0.69, 0.68, 0.67, 0.66,
              0.65]


def test_callback_on_the_loss_reduces_and_prints_as_paddle(capsys):
    callback = ReduceLROnPlateau(patience=1, factor=0.5, min_delta=0.01, min_lr=0.02)
    rates = _evaluate(callback, "loss", LOSSES)
    # paddle 3.3.1: the rates, the lines printed and the counters
    assert rates == [0.1, 0.1, 0.05, 0.025, 0.02] + [0.02] * 12
    assert capsys.readouterr().out == (
        "\nEpoch 3: ReduceLROnPlateau reducing learning rate to 0.05.\n"
        "\nEpoch 4: ReduceLROnPlateau reducing learning rate to 0.025.\n"
        "\nEpoch 5: ReduceLROnPlateau reducing learning rate to 0.02.\n")
    assert (callback.epoch, callback.wait, callback.cooldown_counter, callback.best) == \
        (17, 6, 0, 0.5)


@pytest.mark.parametrize("mode, expected", [
    # paddle 3.3.1: 'auto' on "acc" is 'max'
    ("auto", [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.025, 0.0125,
              0.0125, 0.0125, 0.00625]),
    ("min", [0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125,
             0.00625, 0.00625, 0.00625, 0.003125]),
])
def test_callback_on_accuracy_with_cooldown_as_paddle(mode, expected):
    callback = ReduceLROnPlateau(monitor="acc", mode=mode, patience=2, cooldown=2,
                                 factor=0.5, min_delta=0.01, verbose=0)
    assert _evaluate(callback, "acc", ACCURACIES) == expected


def test_callback_with_an_unknown_mode_warns_and_uses_auto():
    with pytest.warns(UserWarning, match="mode 'weird' is unknown; it uses 'auto'"):
        callback = ReduceLROnPlateau(monitor="acc", mode="weird", patience=2, cooldown=2,
                                     factor=0.5, min_delta=0.01, verbose=0)
    assert callback.mode == "auto"
    assert _evaluate(callback, "acc", ACCURACIES)[-1] == 0.00625   # paddle 3.3.1


def test_callback_leaves_a_rate_at_min_lr_in_float32():
    """Paddle compares the rate with ``np.float32(min_lr)``: a rate equal to min_lr
    in float32 (1e-8 + 1e-17) is not reduced."""
    callback = ReduceLROnPlateau(patience=0, min_lr=1e-8, verbose=0)
    assert _evaluate(callback, "loss", [[1.0], [1.0]], learning_rate=1e-8 + 1e-17) == \
        [1e-8 + 1e-17] * 2


def test_callback_needs_the_monitor_and_a_float_rate():
    callback = ReduceLROnPlateau(monitor="acc", verbose=0)
    callback.set_model(_Holder())
    with pytest.warns(UserWarning, match=r"monitors 'acc', which the evaluation did not log "
                                         r"\(it logged \['loss'\]\)"):
        callback.on_eval_end({"loss": [1.0]})
    holder = _Holder(paddle.optimizer.lr.StepDecay(0.1, step_size=1))
    callback.set_model(holder)
    with pytest.warns(UserWarning, match="the model's optimizer has StepDecay"):
        callback.on_eval_end({"acc": 0.5})
    assert callback.epoch == 0
    with pytest.raises(ValueError, match="factor must be < 1.0"):
        ReduceLROnPlateau(factor=1.0)


class _Points(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((n, 4)).astype("float32")
        self.y = rng.standard_normal((n, 1)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def test_callback_in_model_fit_reduces_after_evaluations_that_do_not_improve():
    paddle.seed(0)
    model = paddle.Model(nn.Linear(4, 1))
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  lambda out, y: (out * 0).sum() + 1.0)   # a loss that never improves
    callback = ReduceLROnPlateau(patience=1, factor=0.5, verbose=0)
    model.fit(_Points(8), _Points(4), epochs=4, batch_size=4, verbose=0,
              callbacks=[callback])
    # the first evaluation sets best; each later one reduces (patience 1)
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** 3)
