"""Compiled code that eager code runs without trouble:

- a variable that only the paths which did not `return` bind, read after the `if`
  (the other paths never reach the read);
- a `return` inside a tensor-dependent loop that runs zero times, followed by a
  `return` after the loop;
- ``paddle.assign(v, y)`` and ``y.set_value(v)`` on a tensor `y` the program
  computes, in straight code, branches and loops, with the gradients eager code gives;
- Python's ``any``/``all`` of a generator of tensor conditions;
- a function a ``functools.wraps`` decorator made, and a compiled function that
  compiled code calls.

Each compiled result is compared with the same function run eagerly, and with the
value the rule in its comment gives."""
import functools

import numpy as np
import pytest

import irflow as paddle


def tensor(values, stop_gradient=True):
    return paddle.to_tensor(np.array(values, dtype="float32"), stop_gradient=stop_gradient)


def nested_early_returns(x):
    if x.sum() > 0:
        if x.max() > 5:
            return x * 100
        y = x + 1
    else:
        return x - 100
    return y * 2


def early_returns_in_an_elif_chain(x):
    if x.sum() > 10:
        return x * 10
    elif x.sum() > 5:
        z = x * 5
    elif x.sum() > 0:
        return x
    else:
        z = -x
    return z + 1


@pytest.mark.parametrize("values, want", [
    ([1.0, 2.0], [4.0, 6.0]),           # (x + 1) * 2
    ([1.0, 9.0], [100.0, 900.0]),       # x * 100
    ([-1.0, -2.0], [-101.0, -102.0]),   # x - 100
])
def test_a_variable_bound_only_where_no_return_ran_is_read_after_the_if(values, want):
    compiled = paddle.jit.to_static(nested_early_returns)
    np.testing.assert_allclose(compiled(tensor(values)).numpy(), want)
    np.testing.assert_allclose(nested_early_returns(tensor(values)).numpy(), want)


@pytest.mark.parametrize("values, want", [
    ([6.0, 6.0], [60.0, 60.0]),     # x * 10
    ([3.0, 3.0], [16.0, 16.0]),     # x * 5 + 1
    ([1.0, 1.0], [1.0, 1.0]),       # x
    ([-1.0, -1.0], [2.0, 2.0]),     # -x + 1
])
def test_early_returns_between_the_arms_of_an_elif_chain(values, want):
    compiled = paddle.jit.to_static(early_returns_in_an_elif_chain)
    np.testing.assert_allclose(compiled(tensor(values)).numpy(), want)


def test_gradients_of_a_method_with_an_early_return_in_the_else_branch():
    class Net(paddle.nn.Layer):
        def forward(self, x):
            if x.mean() > 0:
                out = x.exp()
            else:
                return x.abs()
            return out.log1p()

    compiled = paddle.jit.to_static(Net())
    x = tensor([1.0, 2.0], stop_gradient=False)
    compiled(x).sum().backward()
    # d/dx log(1 + e^x) = e^x / (1 + e^x)
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)
    x = tensor([-1.0, -2.0], stop_gradient=False)
    compiled(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -1.0])  # d|x|/dx for x < 0


def return_inside_a_tensor_loop(x):
    while x.sum() < 100:
        x = x * 2
        if x.max() > 30:
            return x, 1
    return x, 0


@pytest.mark.parametrize("values", [[1.0, 2.0], [1.0, 40.0], [101.0, 0.0]])
def test_a_tensor_loop_with_a_return_may_run_zero_times(values):
    """[101, 0] does not enter the loop: the `return` after it gives the value."""
    compiled = paddle.jit.to_static(return_inside_a_tensor_loop)
    got_x, got_flag = compiled(tensor(values))
    want_x, want_flag = return_inside_a_tensor_loop(tensor(values))
    np.testing.assert_allclose(got_x.numpy(), want_x.numpy())
    assert int(got_flag) == want_flag


def assign_in_place_in_each_kind_of_statement(x, n):
    y = x * 1
    for _ in range(2):
        paddle.assign(y * 2, y)
    if x.sum() > 0:
        paddle.assign(y + 1, y)
    i = 0
    while i < n:
        paddle.assign(y + x, y)
        i += 1
    return y


@pytest.mark.parametrize("values", [[1.0, 2.0], [-1.0, -2.0]])
def test_assign_into_a_computed_tensor_in_code_branches_and_loops(values):
    """y = 4x, plus 1 when sum(x) > 0, plus n * x."""
    compiled = paddle.jit.to_static(assign_in_place_in_each_kind_of_statement)
    x = np.array(values, dtype="float32")
    want = 4 * x + (1 if x.sum() > 0 else 0) + 3 * x
    got = compiled(tensor(values), paddle.to_tensor(3))
    np.testing.assert_allclose(got.numpy(), want)
    np.testing.assert_allclose(
        assign_in_place_in_each_kind_of_statement(tensor(values), paddle.to_tensor(3)).numpy(),
        want)


def assign_a_value_requiring_a_gradient(x, w):
    y = x * 1
    paddle.assign(w * 2, y)
    return (y * 3).sum()


def assign_a_constant_into_a_value_requiring_a_gradient(x, w):
    y = w * 2
    paddle.assign(x * 5, y)
    return (y * 3).sum()


def set_value_from_a_value_requiring_a_gradient(x, w):
    y = x * w
    y.set_value(w * 5)
    return (y * 3).sum()


@pytest.mark.parametrize("fn, want_loss, want_grad", [
    # y becomes a copy of 2w: loss = sum(6w), d/dw = 6
    (assign_a_value_requiring_a_gradient, 12.0, [6.0, 6.0]),
    # y takes the value 5x, its gradient still flowing to 2w: d/dw = 6
    (assign_a_constant_into_a_value_requiring_a_gradient, 45.0, [6.0, 6.0]),
    # set_value never passes a gradient to its value: y = x*w's gradient, 3x
    (set_value_from_a_value_requiring_a_gradient, 30.0, [3.0, 6.0]),
])
def test_gradients_through_assign_and_set_value_as_eagerly(fn, want_loss, want_grad):
    for run in (paddle.jit.to_static(fn), fn):
        w = tensor([1.0, 1.0], stop_gradient=False)
        loss = run(tensor([1.0, 2.0]), w)
        loss.backward()
        np.testing.assert_allclose(float(loss), want_loss)
        np.testing.assert_allclose(w.grad.numpy(), want_grad)


def test_assign_into_a_tensor_holding_inf_gives_the_new_value():
    """The gradient path kept through the old value must not add inf - inf."""
    def f(x, w):
        y = w * float("inf")
        paddle.assign(x, y)
        return y * 3

    got = paddle.jit.to_static(f)(tensor([1.0, 2.0]), tensor([1.0, 1.0], stop_gradient=False))
    np.testing.assert_allclose(got.numpy(), [3.0, 6.0])


def any_and_all_of_generators(xs):
    some = any(x.sum() > 3 for x in xs)
    every = all(x.sum() > 3 for x in xs)
    if some and not every:
        return xs[0] * 2
    return xs[0]


@pytest.mark.parametrize("first, want", [
    ([1.0, 2.0], [2.0, 4.0]),   # sums 3 and 7: some but not all exceed 3
    ([5.0, 2.0], [5.0, 2.0]),   # sums 7 and 7: all do
])
def test_any_and_all_of_a_generator_of_tensor_conditions(first, want):
    compiled = paddle.jit.to_static(any_and_all_of_generators)
    got = compiled([tensor(first), tensor([3.0, 4.0])])
    np.testing.assert_allclose(got.numpy(), want)


def add_one_after(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x) + 1
    return wrapper


@add_one_after
def doubled_if_positive(x):
    if x.sum() > 0:
        return x * 2
    return x


@pytest.mark.parametrize("values, want", [
    ([1.0, 2.0], [3.0, 5.0]),       # 2x + 1
    ([-1.0, -2.0], [0.0, -1.0]),    # x + 1
])
def test_a_function_made_by_a_functools_wraps_decorator_keeps_the_wrappers_code(values, want):
    """The wrapper's ``+ 1`` is part of the function compiled: its source, not the
    source ``__wrapped__`` leads to."""
    got = paddle.jit.to_static(doubled_if_positive)(tensor(values))
    np.testing.assert_allclose(got.numpy(), want)
    np.testing.assert_allclose(doubled_if_positive(tensor(values)).numpy(), want)


def test_a_compiled_function_called_by_compiled_code_is_traced_into_its_program():
    @paddle.jit.to_static
    def inner(x):
        if x.mean() > 0:
            return x * 3
        return x

    @paddle.jit.to_static
    def outer(x):
        return inner(x) + inner(-x)

    x = tensor([1.0, 2.0], stop_gradient=False)
    got = outer(x)
    np.testing.assert_allclose(got.numpy(), [2.0, 4.0])  # 3x + (-x) for mean(x) > 0
    got.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
