"""if / elif / else on tensors, logical operators and conditional expressions."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_outputs, ints, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]
THREE_WAYS = [randn(2, 4, shift=3.0), randn(2, 4, seed=1, scale=0.1),
              randn(2, 4, seed=2, shift=-3.0)]


def test_if_else_on_mean():
    def f(x):
        if paddle.mean(x) > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        return y

    check(f, POS_NEG, spec([None, 4]))


def test_one_armed_if():
    def f(x):
        y = x + 1.0
        if paddle.sum(x) < 0:
            y = y * y
        return y

    check(f, POS_NEG, spec([None, 4]))


def test_if_elif_else():
    def f(x):
        m = x.mean()
        if m > 1.0:
            out = paddle.exp(x)
        elif m > -1.0:
            out = paddle.tanh(x)
        else:
            out = -x
        return out

    check(f, THREE_WAYS, spec([None, 4]))


def test_long_elif_chain():
    def f(x):
        s = paddle.sum(x)
        if s > 10:
            y = x * 4
        elif s > 0:
            y = x * 3
        elif s > -10:
            y = x * 2
        else:
            y = x
        return y

    check(f, [randn(3, 4, shift=5), randn(3, 4, scale=0.1, shift=0.3),
              randn(3, 4, scale=0.1, shift=-0.3), randn(3, 4, shift=-5)], spec([None, 4]))


def test_nested_if():
    def f(x):
        if x.mean() > 0:
            if x.max() > 3.0:
                y = x / 3.0
            else:
                y = x * 3.0
        else:
            y = -x
        return y

    check(f, [randn(2, 4, shift=2, scale=3), randn(2, 4, shift=0.5, scale=0.1),
              randn(2, 4, shift=-2)], spec([None, 4]))


def test_if_compares_two_inputs():
    def f(x, y):
        if paddle.sum(x) > paddle.sum(y):
            z = x - y
        else:
            z = y - x
        return z

    a, b = randn(3, 4), randn(3, 4, seed=1)
    check(f, [(a, b), (b, a)], spec([None, 4], [None, 4]))


def test_if_on_item():
    def f(x):
        if x.mean().item() > 0:
            x = x + 1
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_if_on_float():
    def f(x):
        if float(paddle.max(x)) > 2.5:
            x = x / 2.0
        return x

    check(f, [randn(3, 4, shift=2), randn(3, 4, shift=-2)], spec([None, 4]))


def test_if_on_one_element_tensor_of_shape_1():
    def f(x):
        s = paddle.sum(x, axis=[0, 1], keepdim=False).reshape([1])
        if s > 0:
            x = x * 2
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_if_on_any():
    def f(x):
        if paddle.any(x > 3.0):
            x = paddle.clip(x, -3.0, 3.0)
        return x

    check(f, [randn(3, 4, scale=3), randn(3, 4, scale=0.1)], spec([None, 4]))


def test_if_on_all():
    def f(x):
        if paddle.all(x > 0):
            y = paddle.log(x)
        else:
            y = x
        return y

    check(f, [randn(3, 4, scale=0.1, shift=2), randn(3, 4)], spec([None, 4]))


def test_if_on_method_any():
    def f(x):
        if (x < -1).any():
            x = paddle.abs(x)
        return x

    check(f, [randn(3, 4, seed=3), randn(3, 4, scale=0.1, shift=1)], spec([None, 4]))


def test_if_on_equal_all():
    def f(x, y):
        if paddle.equal_all(x, y):
            z = x * 2
        else:
            z = x + y
        return z

    a, b = randn(2, 3), randn(2, 3, seed=1)
    check(f, [(a, a), (a, b)], spec([None, 3], [None, 3]))


def test_if_on_integer_input():
    def f(x, n):
        if n > 2:
            x = x * 2.0
        return x

    check(f, [(randn(2, 3), ints(low=3, high=4)), (randn(2, 3), ints(low=0, high=1))],
          [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "int64")])


def test_if_assigns_several_variables():
    def f(x):
        if paddle.mean(x) > 0:
            a = x * 2
            b = x + 1
        else:
            a = x - 1
            b = x * x
        return a + b

    check(f, POS_NEG, spec([None, 4]))


def test_if_updates_one_of_two_variables():
    def f(x):
        a = x
        b = x * 2
        if x.sum() > 0:
            b = b * 3
        return a, b

    check(f, POS_NEG, spec([None, 4]))


def test_branch_local_temporary():
    def f(x):
        if x.mean() > 0:
            t = paddle.exp(x)
            y = t / paddle.sum(t)
        else:
            y = x
        return y

    check(f, POS_NEG, spec([None, 4]))


def test_if_with_python_condition_on_shape():
    def f(x):
        if x.shape[-1] == 4:
            x = x * 2
        else:
            x = x * 3
        return x

    check(f, POS_NEG, spec([None, 4]), every_line=False)  # a Python condition


def test_if_on_none_argument():
    def f(x, bias=None):
        if bias is not None:
            x = x + bias
        return x * 2

    check(f, POS_NEG, spec([None, 4]), every_line=False)  # no bias given


def test_and_of_two_tensor_conditions():
    def f(x):
        if x.mean() > 0 and x.max() > 2.0:
            x = x - 2.0
        return x

    check(f, [randn(3, 4, shift=1), randn(3, 4, shift=1, scale=0.1),
              randn(3, 4, shift=-1)], spec([None, 4]))


def test_or_of_two_tensor_conditions():
    def f(x):
        if x.min() < -2.0 or x.max() > 2.0:
            y = paddle.tanh(x)
        else:
            y = x
        return y

    check(f, [randn(3, 4, scale=3), randn(3, 4, scale=0.1)], spec([None, 4]))


def test_not_of_a_tensor_condition():
    def f(x):
        if not x.sum() > 0:
            x = -x
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_and_with_python_flag():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.use_gate = True

        def forward(self, x):
            h = self.fc(x)
            if self.use_gate and paddle.mean(h) > 0:
                h = F.sigmoid(h) * h
            return h

    check(Net(), POS_NEG, spec([None, 4]))


def test_logical_and_op_as_condition():
    def f(x):
        c = paddle.logical_and(x.mean() > 0, x.min() > -5.0)
        if c:
            x = x * 0.5
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_chained_comparison():
    def f(x):
        m = x.mean()
        if -1.0 < m < 1.0:
            x = x * 10
        return x

    check(f, [randn(2, 4, scale=0.1), randn(2, 4, shift=3)], spec([None, 4]))


def test_conditional_expression():
    def f(x):
        y = x * 2 if x.mean() > 0 else x * -3
        return y

    check(f, POS_NEG, spec([None, 4]))


def test_conditional_expression_in_return():
    def f(x):
        return F.relu(x) if paddle.sum(x) > 0 else paddle.exp(x)

    check(f, POS_NEG, spec([None, 4]))


def test_tensor_and_or_value():
    def f(x):
        s = x.sum()
        flag = (s > 0) and (x.max() > 1.0)
        return paddle.cast(flag, "float32") + x

    check(f, [randn(2, 3, shift=2), randn(2, 3, shift=-2)], spec([None, 3]))


def test_if_on_layer_training_flag():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            h = self.fc(x)
            if self.training:
                h = h * 0.5
            if h.mean() > 0:
                h = F.relu(h)
            return h

    check(Net(), POS_NEG, spec([None, 4]))
    check(Net(), POS_NEG, spec([None, 4]), train=False, every_line=False)


def test_layer_with_branch_between_two_sublayers():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.small = nn.Linear(4, 2)
            self.large = nn.Linear(4, 2)

        def forward(self, x):
            if paddle.mean(x) > 0:
                return self.large(x)
            return self.small(x)

    check(Net(), POS_NEG, spec([None, 4]))


def test_if_in_a_helper_function():
    def gate(h):
        if paddle.max(h) > 1.0:
            h = h / paddle.max(h)
        return h

    def f(x):
        return gate(x) + gate(x * 0.1)

    check(f, [randn(2, 4, shift=3), randn(2, 4, scale=0.1)], spec([None, 4]))


def test_if_in_a_helper_method():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def norm(self, h):
            if h.abs().max() > 1.0:
                h = h / h.abs().max()
            return h

        def forward(self, x):
            return self.norm(self.fc(x) * 5.0)

    check(Net(), POS_NEG, spec([None, 4]))


def test_if_inside_elif_with_integer_ops():
    def f(x):
        k = paddle.argmax(x.sum(axis=0))
        if k == 0:
            y = x[:, 0]
        elif k == 1:
            y = x[:, 1]
        else:
            y = x[:, 2]
        return y

    a = randn(3, 3)
    check(f, [a + 5 * np.eye(3, dtype="float32")[k] for k in range(3)], spec([None, 3]))


def test_branches_with_integer_result():
    def f(x):
        if x.sum() > 0:
            n = paddle.argmax(x, axis=1)
        else:
            n = paddle.argmin(x, axis=1)
        return n

    check_outputs(f, POS_NEG, spec([None, 4]))


def test_if_on_bool_input():
    def f(x, flag):
        if flag:
            x = x + 1.0
        return x

    check(f, [(randn(2, 3), True), (randn(2, 3), False)],
          [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "bool")])


def test_if_else_both_return_tuples():
    def f(x):
        if x.mean() > 0:
            a, b = x, x * 2
        else:
            a, b = x * 3, x
        return a - b

    check(f, POS_NEG, spec([None, 4]))


def test_if_builds_a_mask_with_where():
    def f(x):
        if x.max() > 0:
            y = paddle.where(x > 0, x, paddle.zeros_like(x))
        else:
            y = paddle.ones_like(x)
        return y

    check(f, [randn(3, 4), randn(3, 4, shift=-9)], spec([None, 4]))


def test_comparison_result_as_variable():
    def f(x):
        positive = x.mean() > 0
        if positive:
            x = x + 1
        else:
            x = x - 1
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_python_numbers_assigned_in_branches():
    def f(x):
        if x.mean() > 0:
            scale, shift = 2.0, 1
        else:
            scale, shift = 0.5, -1
        return x * scale + shift

    check(f, POS_NEG, spec([None, 4]))


def test_flag_from_a_branch_used_in_a_later_if():
    def f(x):
        clipped = False
        if x.max() > 2.0:
            x = paddle.clip(x, max=2.0)
            clipped = True
        if clipped:
            x = x * 0.5
        return x

    check(f, [randn(3, 4, shift=1.0), randn(3, 4, scale=0.1)], spec([None, 4]))


def test_if_on_numpy_of_a_sum():
    def f(x):
        if paddle.sum(x).numpy() > 0:
            x = x * 2.0
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_if_on_bool_of_a_tensor():
    def f(x):
        if bool(x.mean() > 0):
            return x + 1.0
        return x - 1.0

    check(f, POS_NEG, spec([None, 4]))


def test_static_nn_cond():
    def f(x):
        return paddle.static.nn.cond(x.mean() > 0, lambda: x * 2.0, lambda: x - 1.0)

    check(f, POS_NEG, spec([None, 4]))


def test_lambda_with_conditional_expression():
    def f(x):
        act = lambda h: paddle.tanh(h) if h.mean() > 0 else h * 0.1  # noqa: E731
        return act(x) + act(-x)

    check(f, POS_NEG, spec([None, 4]))


def test_compile_a_lambda():
    fn = lambda x: paddle.where(x > 0, x, x * 0.1) * 2.0  # noqa: E731
    check(fn, POS_NEG, spec([None, 4]), every_line=False)


def test_not_to_static_helper_runs_as_python():
    @paddle.jit.not_to_static
    def describe(n):
        return n * 2

    def f(x):
        k = describe(x.shape[-1])
        if x.mean() > 0:
            x = x * k
        return x

    check(f, POS_NEG, spec([None, 4]))
