"""Learning-rate schedulers: values against their formulas and against sequences
recorded from Paddle 3.3.1, the epoch bookkeeping, state dicts and argument checks."""
import math

import pytest

from irflow.optimizer import lr as L


def sequence(scheduler, n):
    out = []
    for _ in range(n):
        out.append(scheduler())
        scheduler.step()
    return out


def test_construction_runs_the_first_step():
    s = L.StepDecay(0.5, step_size=2)
    assert s.last_epoch == 0 and s.last_lr == 0.5 and s() == 0.5 and s.base_lr == 0.5
    s = L.ExponentialDecay(0.5, gamma=0.5, last_epoch=3)  # resuming: epoch 4
    assert s.last_epoch == 4 and s() == pytest.approx(0.5 * 0.5 ** 4)


@pytest.mark.parametrize("step_size, gamma", [(1, 0.5), (3, 0.1), (4, 0.9)])
def test_step_decay(step_size, gamma):
    got = sequence(L.StepDecay(0.8, step_size, gamma), 12)
    assert got == pytest.approx([0.8 * gamma ** (e // step_size) for e in range(12)], rel=1e-15)


def test_multi_step_decay():
    assert sequence(L.MultiStepDecay(1.0, [2, 5], 0.5), 7) == [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]
    got = sequence(L.MultiStepDecay(0.3, (1, 3, 4), 0.2), 6)
    assert got == pytest.approx([0.3, 0.06, 0.06, 0.3 * 0.2 ** 2, 0.3 * 0.2 ** 3, 0.3 * 0.2 ** 3])


def test_exponential_decay():
    assert sequence(L.ExponentialDecay(2.0, 0.7), 8) == \
        pytest.approx([2.0 * 0.7 ** e for e in range(8)], rel=1e-15)


def test_cosine_annealing_follows_paddle_recursion():
    # Recorded from paddle.optimizer.lr.CosineAnnealingDecay(0.5, T_max=3, eta_min=0.1).
    paddle = [0.5, 0.4, 0.20000000000000007, 0.1, 0.19999999999999998, 0.40000000000000024,
              0.5000000000000003, 0.40000000000000036, 0.20000000000000026, 0.1,
              0.19999999999999998, 0.3999999999999996, 0.49999999999999967, 0.3999999999999998]
    assert sequence(L.CosineAnnealingDecay(0.5, T_max=3, eta_min=0.1), 14) == paddle


def test_cosine_annealing_matches_closed_form():
    base, eta_min, t_max = 0.2, 0.01, 5
    got = sequence(L.CosineAnnealingDecay(base, t_max, eta_min), 25)
    closed = [eta_min + (base - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2
              for e in range(25)]
    assert got == pytest.approx(closed, abs=1e-12)


def test_step_to_an_epoch_uses_the_closed_form():
    s = L.CosineAnnealingDecay(0.5, T_max=3, eta_min=0.1)
    s.step(5)
    assert s.last_epoch == 5 and s() == pytest.approx(0.4, abs=1e-15)
    s = L.StepDecay(1.0, 2, 0.5)
    s.step(7)
    assert s.last_epoch == 7 and s() == 0.125


def test_linear_warmup_into_a_scheduler():
    # Recorded from Paddle: LinearWarmup(CosineAnnealingDecay(0.5, T_max=3), 3, 0.0, 0.5).
    paddle = [0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.375, 0.12500000000000006,
              0.0, 0.12499999999999989, 0.375, 0.5]
    got = sequence(L.LinearWarmup(L.CosineAnnealingDecay(0.5, T_max=3), 3, 0.0, 0.5), 10)
    assert got == pytest.approx(paddle, abs=1e-15)


def test_linear_warmup_into_a_constant():
    s = L.LinearWarmup(0.3, warmup_steps=2, start_lr=0.1, end_lr=0.3)
    assert sequence(s, 4) == pytest.approx([0.1, 0.2, 0.3, 0.3])
    assert s.state_dict() == {"last_epoch": 4, "last_lr": 0.3}


def test_state_dict_round_trip():
    s = L.StepDecay(0.5, 2, 0.5)
    sequence(s, 5)
    assert s.state_dict() == {"last_epoch": 5, "last_lr": 0.125}
    fresh = L.StepDecay(0.5, 2, 0.5)
    fresh.set_state_dict(s.state_dict())
    assert fresh.last_epoch == 5 and fresh() == 0.125
    fresh.step()
    s.step()
    assert fresh() == s()


def test_linear_warmup_state_includes_the_inner_scheduler():
    s = L.LinearWarmup(L.StepDecay(0.5, 2), 2, 0.0, 0.5)
    sequence(s, 5)
    state = s.state_dict()
    assert state == {"last_epoch": 5, "last_lr": 0.05,
                     "LinearWarmup_LR": {"last_epoch": 3, "last_lr": 0.05}}
    fresh = L.LinearWarmup(L.StepDecay(0.5, 2), 2, 0.0, 0.5)
    fresh.set_state_dict(state)
    assert fresh.learning_rate.last_epoch == 3 and fresh() == 0.05


def test_set_state_dict_needs_every_key():
    with pytest.raises(RuntimeError, match="last_lr"):
        L.StepDecay(0.5, 2).set_state_dict({"last_epoch": 3})


def test_verbose_prints_each_update(capsys):
    s = L.ExponentialDecay(0.5, 0.5, verbose=True)
    s.step()
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["Epoch 0: ExponentialDecay set learning rate to 0.5.",
                     "Epoch 1: ExponentialDecay set learning rate to 0.25."]


def test_custom_scheduler():
    class Halving(L.LRScheduler):
        def get_lr(self):
            return self.base_lr / 2 ** self.last_epoch

    assert sequence(Halving(1.0), 3) == [1.0, 0.5, 0.25]
    with pytest.raises(NotImplementedError):
        L.LRScheduler(0.1)


@pytest.mark.parametrize("make, error, match", [
    (lambda: L.StepDecay("0.1", 2), TypeError, "float"),
    (lambda: L.StepDecay(-0.1, 2), ValueError, ">= 0"),
    (lambda: L.StepDecay(0.1, 2.0), TypeError, "step_size"),
    (lambda: L.StepDecay(0.1, 0), ValueError, "positive"),
    (lambda: L.StepDecay(0.1, 2, gamma=1.0), ValueError, "gamma"),
    (lambda: L.MultiStepDecay(0.1, 3), TypeError, "milestones"),
    (lambda: L.MultiStepDecay(0.1, [3, 2]), ValueError, "increasing"),
    (lambda: L.ExponentialDecay(0.1, 1.5), ValueError, "gamma"),
    (lambda: L.CosineAnnealingDecay(0.1, 2.5), TypeError, "T_max"),
    (lambda: L.CosineAnnealingDecay(0.1, 0), ValueError, "T_max"),
    (lambda: L.CosineAnnealingDecay(0.1, 3, eta_min="0"), TypeError, "eta_min"),
    (lambda: L.LinearWarmup("x", 2, 0.0, 0.1), TypeError, "learning_rate"),
    (lambda: L.LinearWarmup(0.1, 0, 0.0, 0.1), ValueError, "warmup_steps"),
    (lambda: L.LinearWarmup(0.1, 2, 0.2, 0.1), ValueError, "end_lr"),
])
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()
