"""The harness itself can fail: a wrong output, a wrong or missing gradient, a path
the inputs never take, an error message without the user's line or with an internal
name are all caught."""
import pytest

import irflow as paddle
import irflow.nn as nn

from . import harness
from .harness import (GradientMismatch, OutputMismatch, check, check_fails, check_message,
                      randn, spec)

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def sabotage(monkeypatch, wrap):
    real = harness.compiled
    monkeypatch.setattr(harness, "compiled", lambda t, s, m: wrap(real(t, s, m)))


def test_a_wrong_output_is_caught(monkeypatch):
    sabotage(monkeypatch, lambda fn: lambda *a: fn(*a) * 1.01)
    with pytest.raises(OutputMismatch):
        check(nn.Linear(4, 2), POS_NEG, spec([None, 4]))


def test_a_wrong_structure_is_caught(monkeypatch):
    sabotage(monkeypatch, lambda fn: lambda *a: (fn(*a),))
    with pytest.raises(OutputMismatch, match="structure"):
        check(nn.Linear(4, 2), POS_NEG, spec([None, 4]))


def test_a_wrong_gradient_is_caught(monkeypatch):
    def scaled_gradient(fn):
        def call(*args):
            out = fn(*args)
            return out + out * 0.01 - out.detach() * 0.01  # same value, 1.01 x gradient
        return call

    sabotage(monkeypatch, scaled_gradient)
    with pytest.raises(GradientMismatch):
        check(nn.Linear(4, 2), POS_NEG, spec([None, 4]))


def test_a_missing_gradient_is_caught(monkeypatch):
    sabotage(monkeypatch, lambda fn: lambda *a: fn(*a).detach())
    with pytest.raises(GradientMismatch, match="do not require a gradient"):
        check(nn.Linear(4, 2), POS_NEG, spec([None, 4]))


def test_a_path_the_inputs_never_take_is_caught():
    def f(x):
        if x.mean() > 100:
            x = x * 2
        return x

    with pytest.raises(AssertionError, match="never run line"):
        check(f, POS_NEG, spec([None, 4]), grads=False)


def test_a_program_that_converts_fails_check_fails():
    def f(x):
        return x * 2

    with pytest.raises(AssertionError, match="expected ConversionError"):
        check_fails(f, POS_NEG, spec([None, 4]))


def test_messages_must_name_the_line_and_hide_internal_names():
    def f(x):
        return x

    file, line = harness.line_of(f, "return x")
    check_message(f"{file}:{line}\n    return x\nbad", f, at="return x")
    with pytest.raises(AssertionError, match="does not name"):
        check_message("bad", f, at="return x")
    for internal in ("__jst_flag", "Undefined", "internal error"):
        with pytest.raises(AssertionError, match="internal text"):
            check_message(f"{file}:{line} {internal}", f, at="return x")


def test_eager_parameters_come_from_a_fixed_stream():
    a, b = nn.Linear(4, 2), nn.Linear(4, 2)
    harness.reset_parameters(a)
    harness.reset_parameters(b)
    x = paddle.to_tensor(POS_NEG[0])
    assert (a(x).numpy() == b(x).numpy()).all()
