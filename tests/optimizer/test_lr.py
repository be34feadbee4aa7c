"""Learning-rate schedulers: values against their formulas and against sequences
recorded from Paddle 3.3.1, the epoch bookkeeping, state dicts and argument checks."""
import math

import numpy as np
import pytest

import irflow
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


# ---------------------------------------------------------------- the other schedulers

def test_piecewise_decay():
    s = L.PiecewiseDecay([2, 4], [1.0, 0.5, 0.1])
    assert sequence(s, 6) == [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    assert s.base_lr == 0.1  # Paddle's default, unused by the schedule


def test_natural_exp_and_inverse_time_decay():
    assert sequence(L.NaturalExpDecay(0.5, 0.3), 5) == \
        pytest.approx([0.5 * math.exp(-0.3 * e) for e in range(5)], rel=1e-15)
    assert sequence(L.InverseTimeDecay(0.5, 0.3), 5) == \
        pytest.approx([0.5 / (1 + 0.3 * e) for e in range(5)], rel=1e-15)


def test_polynomial_decay():
    got = sequence(L.PolynomialDecay(0.5, decay_steps=4, end_lr=0.1, power=2.0), 7)
    want = [(0.5 - 0.1) * (1 - min(e, 4) / 4) ** 2 + 0.1 for e in range(7)]
    assert got == pytest.approx(want, rel=1e-15)
    # cycle: the horizon grows to the next multiple of decay_steps.
    got = sequence(L.PolynomialDecay(1.0, decay_steps=2, end_lr=0.0, cycle=True), 6)
    assert got == pytest.approx([1.0, 0.5, 0.0, 1 - 3 / 4, 0.0, 1 - 5 / 6], abs=1e-15)


def test_lambda_and_multiplicative_decay():
    assert sequence(L.LambdaDecay(0.5, lambda e: 0.9 ** e), 4) == \
        pytest.approx([0.5, 0.45, 0.405, 0.3645], rel=1e-15)
    s = L.MultiplicativeDecay(1.0, lambda e: 0.5 if e % 2 else 0.8)
    assert sequence(s, 5) == pytest.approx([1.0, 0.5, 0.4, 0.2, 0.16], rel=1e-15)
    s.step(2)
    assert s() == pytest.approx(0.4)


def test_noam_decay_rises_then_decays():
    d_model, warmup = 16, 4
    got = sequence(L.NoamDecay(d_model, warmup, learning_rate=2.0), 9)
    want = [2.0 * d_model ** -0.5 * min(1 if e == 0 else e ** -0.5, e * warmup ** -1.5)
            for e in range(9)]
    assert got == pytest.approx(want, rel=1e-15)
    assert max(got) == got[warmup]


def test_one_cycle_two_phases():
    s = L.OneCycleLR(max_learning_rate=1.0, total_steps=11, divide_factor=4.0,
                     end_learning_rate=0.01, phase_pct=0.2)
    got = sequence(s, 11)  # epochs 0..10, leaving it at 11
    up_end = 0.2 * 11 - 1  # Paddle's phase boundary: step 1.2

    def cos(a, b, pct):
        return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)
    want = [cos(0.25, 1.0, e / up_end) if e <= up_end else cos(1.0, 0.01, (e - up_end) /
                                                               (10 - up_end))
            for e in range(11)]
    assert got == pytest.approx(want, rel=1e-14)
    assert got[0] == 0.25 and got[10] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="total_steps"):
        s.step()  # epoch 12 > total_steps


def test_one_cycle_three_phases_linear():
    s = L.OneCycleLR(1.0, total_steps=10, divide_factor=10.0, end_learning_rate=0.0,
                     phase_pct=0.3, anneal_strategy="linear", three_phase=True)
    got = sequence(s, 10)
    # Phases end at 2.0, 4.0 and 9: 0.1 -> 1.0 -> 0.1 -> 0.0.
    want = [0.1, 0.55, 1.0, 0.55, 0.1, 0.08, 0.06, 0.04, 0.02, 0.0]
    assert got == pytest.approx(want, abs=1e-12)


def test_reduce_on_plateau_waits_patience_then_cools_down():
    s = L.ReduceOnPlateau(1.0, patience=1, cooldown=1, factor=0.5)
    assert s() == 1.0 and s.last_epoch == 0  # no step at construction
    lrs = []
    for metric in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 3.0]:
        s.step(metric)
        lrs.append(s())
    # bad epochs: 0, 0, 1, 2 (reduce), cooldown, 1, 2 (reduce), cooldown (3.0 unseen).
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25]
    assert s.state_dict() == {"cooldown_counter": 0, "best": 4.0, "num_bad_epochs": 0,
                              "last_epoch": 8, "last_lr": 0.25}


def test_reduce_on_plateau_thresholds_modes_and_min_lr():
    s = L.ReduceOnPlateau(1.0, mode="max", patience=0, threshold=0.1, threshold_mode="abs",
                          min_lr=0.3)
    for metric in [1.0, 1.05]:  # 1.05 is not above 1.0 + 0.1: a bad epoch
        s.step(np.float32(metric))
    assert s() == pytest.approx(0.3)  # 0.1 would be below min_lr
    s = L.ReduceOnPlateau(1.0, patience=0, threshold=0.1)  # rel: below best * 0.9
    s.step(irflow.to_tensor([10.0]))
    s.step(9.5)
    assert s() == pytest.approx(0.1)
    with pytest.raises(ValueError, match="one metric"):
        s.step(np.ones(3))
    with pytest.raises(TypeError, match="metrics"):
        s.step("low")


def test_reduce_on_plateau_drives_an_optimizer():
    p = irflow.Parameter(np.ones(2), name="p")
    s = L.ReduceOnPlateau(0.5, patience=0)
    opt = irflow.optimizer.SGD(s, parameters=[p])
    s.step(1.0)
    s.step(2.0)
    assert opt.get_lr() == pytest.approx(0.05)
    p.grad = np.ones(2)
    opt.step()
    np.testing.assert_allclose(p.numpy(), 0.95)


def test_cyclic_lr_triangles():
    got = sequence(L.CyclicLR(0.1, 0.5, step_size_up=2), 9)
    assert got == pytest.approx([0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1], abs=1e-12)
    # triangular2 halves the amplitude each cycle; up 1 step, down 3.
    got = sequence(L.CyclicLR(0.0, 0.8, 1, step_size_down=3, mode="triangular2"), 9)
    assert got == pytest.approx([0.0, 0.8, 0.8 * 2 / 3, 0.8 / 3, 0.0, 0.4, 0.4 * 2 / 3,
                                 0.4 / 3, 0.0], abs=1e-12)
    got = sequence(L.CyclicLR(0.0, 1.0, 1, mode="exp_range", exp_gamma=0.5), 4)
    assert got == pytest.approx([0.0, 0.5, 0.0, 0.125], abs=1e-12)  # scaled by 0.5 ** step


def test_linear_lr_reaches_the_end_factor_and_stays():
    got = sequence(L.LinearLR(1.0, total_steps=4, start_factor=0.2, end_factor=1.0), 7)
    assert got == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0], rel=1e-12)


def test_cosine_annealing_warm_restarts():
    def cos(t, period):
        return 0.1 + (1.0 - 0.1) * (1 + math.cos(math.pi * t / period)) / 2
    got = sequence(L.CosineAnnealingWarmRestarts(1.0, T_0=2, T_mult=2, eta_min=0.1), 8)
    # Periods of 2, then 4, then 8 epochs.
    want = [cos(0, 2), cos(1, 2), cos(0, 4), cos(1, 4), cos(2, 4), cos(3, 4), cos(0, 8),
            cos(1, 8)]
    assert got == pytest.approx(want, rel=1e-12)
    s = L.CosineAnnealingWarmRestarts(1.0, T_0=2, T_mult=2, eta_min=0.1)
    s.step(7)  # in the third period (epochs 6..13)
    assert s() == pytest.approx(cos(1, 8)) and s.last_epoch == 7


@pytest.mark.parametrize("make, error, match", [
    (lambda: L.PiecewiseDecay([], [1.0]), ValueError, "boundary"),
    (lambda: L.CyclicLR(0.1, 0.5, 0), ValueError, "step_size_up"),
    (lambda: L.CyclicLR(0.1, 0.5, 2, mode="sine"), ValueError, "mode"),
    (lambda: L.LinearLR(0.1, 5, start_factor=0.0), ValueError, "start_factor"),
    (lambda: L.CosineAnnealingWarmRestarts(0.1, T_0=2, T_mult=0), ValueError, "T_mult"),
    (lambda: L.PiecewiseDecay([2], [1.0]), ValueError, "one value more"),
    (lambda: L.PolynomialDecay(0.1, 0), ValueError, "decay_steps"),
    (lambda: L.PolynomialDecay(0.1, 3, power=0.0), ValueError, "power"),
    (lambda: L.LambdaDecay(0.1, 0.5), TypeError, "lr_lambda"),
    (lambda: L.NoamDecay(0, 10), ValueError, "d_model"),
    (lambda: L.OneCycleLR(0.1, 0), ValueError, "total_steps"),
    (lambda: L.OneCycleLR(0.1, 10, phase_pct=1), TypeError, "phase_pct"),
    (lambda: L.OneCycleLR(0.1, 10, phase_pct=0.6, three_phase=True), ValueError, "phase_pct"),
    (lambda: L.OneCycleLR(0.1, 10, anneal_strategy="step"), ValueError, "anneal_strategy"),
    (lambda: L.ReduceOnPlateau(0.1, mode="lowest"), ValueError, "mode"),
    (lambda: L.ReduceOnPlateau(0.1, factor=1.0), ValueError, "factor"),
    (lambda: L.ReduceOnPlateau(0.1, threshold_mode="pct"), ValueError, "threshold_mode"),
    (lambda: L.NaturalExpDecay(0.1, 0.0), ValueError, "gamma"),
])
def test_bad_arguments_of_the_other_schedulers(make, error, match):
    with pytest.raises(error, match=match):
        make()
