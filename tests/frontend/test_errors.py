"""Conversion and run-time errors of compiled programs name the user's code."""
import os

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ConversionError, InputError, ShapeError
from irflow.frontend.check import CheckError
from irflow.static import InputSpec

THIS_FILE = os.path.abspath(__file__)


def line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_variable_assigned_in_one_branch_only_is_a_clear_error():
    def f(x):
        if paddle.sum(x) > 0:
            y = x * 2.0
        return y + 1.0

    compiled = paddle.compile(f, input_spec=[InputSpec([None, 3])])
    with pytest.raises(ConversionError) as info:
        compiled(paddle.ones([2, 3]))
    message = str(info.value)
    assert "variable 'y' is assigned in only one branch" in message
    assert f"{THIS_FILE}:{line_of(f, 'if paddle.sum')}" in message


def test_loop_variable_changing_shape_is_a_clear_error():
    def f(x):
        while paddle.sum(x) < 100.0:
            x = paddle.concat([x, x], axis=0)
        return x

    compiled = paddle.compile(f, input_spec=[InputSpec([4])])
    with pytest.raises(ConversionError, match=r"variable 'x' is f32\[4\] when a loop iteration "
                                              r"starts and f32\[8\] when it ends"):
        compiled(paddle.ones([4]))


def test_shape_error_inside_a_model_names_the_users_line():
    class Bad(nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([5, 2])

        def forward(self, x):
            h = x * 2.0
            return paddle.matmul(h, self.w)

    compiled = paddle.compile(Bad(), input_spec=[InputSpec([None, 4])])
    with pytest.raises(ShapeError) as info:
        compiled(paddle.ones([2, 4]))
    message = str(info.value)
    assert f"{THIS_FILE}:{line_of(Bad.forward, 'return paddle.matmul')}" in message
    assert "return paddle.matmul(h, self.w)" in message
    assert "x's columns (4) do not match y's rows (5)" in message


def test_a_rule_that_symbolic_sizes_fail_is_a_conversion_error_eager_errors_are_not():
    """Where a shape rule fails only because sizes are symbols (a stride on an axis of
    unknown length, a -1 that is a polynomial only for some sizes), the program does
    not convert: a ConversionError naming the line. A shape error eager code would
    raise too (4 columns into a matmul of 5 rows, with a batch of N) stays a plain
    ShapeError."""
    def strided(x):
        return x[:, ::2] + 1.0

    def paired(x):
        return paddle.reshape(x, [-1, 2, 3]).sum(axis=1)

    for fn, text in ((strided, "x[:, ::2]"), (paired, "paddle.reshape")):
        compiled = paddle.compile(fn, input_spec=[InputSpec([None, None]) if fn is strided
                                                  else InputSpec([None, 3])])
        with pytest.raises(ConversionError, match="known only when the program runs") as info:
            compiled(paddle.ones([4, 4]) if fn is strided else paddle.ones([4, 3]))
        assert isinstance(info.value, ShapeError)
        assert f"{THIS_FILE}:{line_of(fn, text)}" in str(info.value)
    assert not issubclass(type(_matmul_error()), ConversionError)


def _matmul_error() -> ShapeError:
    def wrong(x, w):
        return paddle.matmul(x, w)

    compiled = paddle.compile(wrong, input_spec=[InputSpec([None, 4]), InputSpec([5, 2])])
    with pytest.raises(ShapeError) as info:
        compiled(paddle.ones([2, 4]), paddle.ones([5, 2]))
    return info.value


def test_truth_value_of_a_tensor_outside_converted_code():
    namespace = {"paddle": paddle}  # a function without source, as made by a library
    exec("def flip(x):\n    return x if paddle.sum(x) > 0 else -x", namespace)
    flip = namespace["flip"]

    def f(x):
        return flip(x)

    compiled = paddle.compile(f, input_spec=[InputSpec([3])])
    with pytest.raises(ConversionError, match="truth value of a traced tensor"):
        compiled(paddle.ones([3]))


def test_condition_must_be_one_value():
    def f(x):
        if x > 0:
            x = x + 1.0
        return x

    compiled = paddle.compile(f, input_spec=[InputSpec([None, 3])])
    with pytest.raises(ConversionError, match=r"condition must be a single value.*shape "
                                              r"\[-1, 3\].*paddle.any\(\)"):
        compiled(paddle.ones([2, 3]))


def test_inputs_are_checked_against_the_spec():
    compiled = paddle.compile(nn.Linear(4, 2), input_spec=[InputSpec([None, 4], name="image")])
    with pytest.raises(InputError, match=r"image should have shape \[None, 4\], got \[2, 5\]"):
        compiled(paddle.ones([2, 5]))
    with pytest.raises(InputError, match="image should be float32, got float64"):
        compiled(np.ones([2, 4]))
    with pytest.raises(InputError, match="expects 1 input"):
        compiled()


def test_numpy_functions_on_a_traced_tensor_explain_why_they_cannot():
    def f(x):
        return paddle.to_tensor(np.tanh(x.numpy()))

    with pytest.raises(ConversionError, match=r"NumPy's tanh\(\) needs the values of .numpy"):
        paddle.compile(f, input_spec=[InputSpec([3])])(paddle.ones([3]))


def test_check_mode_names_the_first_op_that_differs():
    def f(x):
        h = paddle.exp(x)
        y = h * 2.0
        return paddle.sum(y)

    compiled = paddle.compile(f, input_spec=[InputSpec([None, 3])], check=True)
    x = paddle.randn([2, 3])
    np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)
    program = compiled._last
    const = next(op for op in program.ir.walk() if op.name == "const"
                 and op.attrs["value"].item() == 2.0)
    const.attrs["value"] = np.asarray(3.0, np.float32)  # sabotage the compiled program
    from irflow.codegen import compile_plan
    program.plan = compile_plan(program.ir.main)
    with pytest.raises(CheckError) as info:
        compiled(x)
    message = str(info.value)
    assert "first at op 'mul'" in message
    assert f"{THIS_FILE}:{line_of(f, 'y = h * 2.0')}" in message


def test_a_shape_from_an_input_tensor_is_a_conversion_error():
    """An input's values as a shape (``paddle.zeros(s)``) are known only when the
    program runs: a ConversionError naming the line, not an internal error."""
    def zeros_of(x, s):
        return paddle.zeros(s) + x.sum()

    compiled = paddle.compile(zeros_of, input_spec=[InputSpec([None, 3]),
                                                    InputSpec([2], "int64")])
    with pytest.raises(ConversionError, match="a shape given as a tensor") as info:
        compiled(paddle.ones([2, 3]), paddle.to_tensor([2, 2]))
    assert f"{THIS_FILE}:{line_of(zeros_of, 'paddle.zeros(s)')}" in str(info.value)
