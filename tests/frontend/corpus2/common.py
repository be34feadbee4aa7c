"""What the second corpus needs beyond the first corpus's harness (which it reuses):

- `check_fails_in(helper, ...)`: like `check_fails`, but the line the message must
  name is in `helper` (a function or method the program calls), not in the target;
- `check_twins(make, calls, spec)`: for programs with state that survives a call (a
  recurrent state kept on ``self``, a training step that updates parameters, running
  statistics): two copies built by `make` with the same parameters, one run eagerly
  and one compiled, call after call; every call's outputs and the final parameters
  (and buffers) must agree.
"""
from __future__ import annotations

import numpy as np

import irflow as paddle

from ..corpus import harness
from ..corpus.harness import (MODES, PADDLE, ConversionError, OutputMismatch,  # noqa: F401
                              _compare_outputs, _paddle_fails, _tensors, check,
                              check_fails, check_message, check_outputs, check_prints,
                              check_raises_like_eager, compiled, full, ints, randn,
                              reset_parameters, spec, uniform)


def check_fails_in(helper, target, inputs, input_spec=None, at=None, match=None,
                   error=None):
    """`target` compiled raises `error` (ConversionError by default) whose message
    names the line of `helper` that contains `at`."""
    error = error or ConversionError
    calls = harness._as_inputs(inputs)
    if harness._is_layer(target):
        reset_parameters(target)
        target.eval()
    if PADDLE:
        eager = []
        for arrays in calls:
            try:
                eager.append(target(*_tensors(arrays, False)))
            except Exception as e:  # noqa: BLE001
                eager.append(e)
        _paddle_fails(target, calls, eager, input_spec)
        return
    for mode in MODES:
        fn = compiled(target, input_spec, mode)
        for arrays in calls:
            try:
                out = fn(*_tensors(arrays, False))
            except error as e:
                message = str(e)
            else:
                raise AssertionError(f"{mode}: expected {error.__name__}, got {out!r}")
            check_message(message, helper, at, match)


def _state(layer):
    return {k: np.array(v.numpy()) for k, v in layer.state_dict().items()}


def check_twins(make, calls, input_spec, grad_inputs=False, compile_what=None,
                modes=MODES):
    """`make()` builds a (layer, step) pair: `step` is what gets compiled (the layer
    itself, or a function closing over it and its optimizer). For each mode a fresh
    eager pair and a fresh compiled pair, with the same parameters, run the same calls
    in order; each call's outputs and, at the end, every entry of the layers'
    state_dict must agree."""
    calls = harness._as_inputs(calls)
    for mode in modes:
        eager_layer, eager_step = make()
        comp_layer, comp_step = make()
        reset_parameters(eager_layer)
        comp_layer.set_state_dict(eager_layer.state_dict())
        fn = compiled(comp_step, input_spec, mode)
        for k, arrays in enumerate(calls):
            want = eager_step(*_tensors(arrays, grad_inputs))
            got = fn(*_tensors(arrays, grad_inputs))
            _compare_outputs(got, want, f"{mode}, call {k}")
        want_state, got_state = _state(eager_layer), _state(comp_layer)
        for key, w in want_state.items():
            try:
                np.testing.assert_allclose(got_state[key], w, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{mode}: {key} after the calls")
            except AssertionError as e:
                raise OutputMismatch(str(e)) from None


def check_converts_or_fails(target, inputs, input_spec=None, at=None, **kw):
    """Either the compiled program equals eager (outputs and gradients, as `check`),
    or it raises a ConversionError naming the user's line containing `at`; never an
    other error, and never a wrong answer."""
    if PADDLE:
        check(target, inputs, input_spec, **kw)
        return
    for mode in MODES:
        try:
            check(target, inputs, input_spec, modes=(mode,), **kw)
        except ConversionError as e:
            check_message(str(e), target, at)
