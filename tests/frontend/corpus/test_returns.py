"""return inside tensor control flow: early returns, returns from loops, structures."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_outputs, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_early_return_in_if():
    def f(x):
        if x.mean() > 0:
            return x * 2.0
        x = x - 1.0
        return x * x

    check(f, POS_NEG, spec([None, 4]))


def test_return_in_both_branches():
    def f(x):
        if paddle.sum(x) > 0:
            return paddle.exp(x)
        else:
            return paddle.tanh(x)

    check(f, POS_NEG, spec([None, 4]))


def test_return_in_elif():
    def f(x):
        m = x.mean()
        if m > 1:
            return x
        elif m > -1:
            return x * 10
        return -x

    check(f, [randn(2, 4, shift=3), randn(2, 4, scale=0.1), randn(2, 4, shift=-3)],
          spec([None, 4]))


def test_return_in_nested_if():
    def f(x):
        if x.mean() > 0:
            if x.max() > 4:
                return x / 4
            x = x + 1
        return x * 3

    check(f, [randn(2, 4, shift=2, scale=3), randn(2, 4, shift=0.5, scale=0.1),
              randn(2, 4, shift=-2)], spec([None, 4]))


def test_return_tuple_from_branches():
    def f(x):
        if x.mean() > 0:
            return x, x * 2
        return x * 3, x

    check(f, POS_NEG, spec([None, 4]))


def test_return_dict_from_branches():
    def f(x):
        if x.sum() > 0:
            return {"out": x * 2, "aux": x.mean()}
        return {"out": -x, "aux": x.max()}

    check(f, POS_NEG, spec([None, 4]))


def test_return_list_from_branches():
    def f(x):
        if x.sum() > 0:
            return [x, x + 1]
        return [x - 1, x]

    check(f, POS_NEG, spec([None, 4]))


def test_return_nested_tuple():
    def f(x):
        if x.sum() > 0:
            return x, (x * 2, x * 3)
        return -x, (x, x)

    check(f, POS_NEG, spec([None, 4]))


def test_return_from_while_loop():
    def f(x):
        i = 0
        while i < 10:
            x = x * 2.0
            if x.abs().max() > 20:
                return x / 20
            i += 1
        return x

    check(f, [randn(2, 3, scale=0.001), randn(2, 3, scale=2)], spec([None, 3]))


def test_return_from_for_range():
    def f(x):
        for i in range(5):
            x = x + 1.0
            if x.sum() > 10:
                return x * 0.1
        return x

    check(f, [randn(2, 3, shift=-5), randn(2, 3, shift=1)], spec([None, 3]))


def test_return_from_while_true():
    def f(x):
        while True:
            x = x * 0.5
            if x.abs().max() < 0.5:
                return x

    check(f, [randn(2, 3, scale=0.1), randn(2, 3, scale=5)], spec([None, 3]))


def test_return_from_loop_over_blocks():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            for blk in self.blocks:
                x = paddle.tanh(blk(x)) * 3.0
                if x.mean() > 0.5:
                    return x
            return -x

    check(Net(), [randn(2, 4, shift=3), randn(2, 4, shift=-3)], spec([None, 4]))


def test_return_from_loop_over_tensor_rows():
    def f(x):
        for row in x:
            if row.sum() > 5:
                return row
        return x[0] * 0.0

    a = np.array([[1, 1, 1], [3, 3, 3], [0, 0, 0]], "float32")
    check(f, [a, -a], spec([None, 3]))


def test_early_return_in_helper():
    def clamp(h):
        if h.max() < 1.0:
            return h
        return h / h.max()

    def f(x):
        return clamp(x) + clamp(x * 10.0)

    check(f, [randn(2, 3, scale=0.01), randn(2, 3)], spec([None, 3]))


def test_early_return_in_layer_forward():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 4)
            self.fc2 = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc1(x)
            if paddle.mean(h) > 0:
                return F.relu(h)
            h = self.fc2(h)
            return -h

    check(Net(), POS_NEG, spec([None, 4]))


def test_return_python_constant_and_tensor():
    def f(x):
        if x.sum() > 0:
            return x, 1
        return -x, 1

    check(f, POS_NEG, spec([None, 4]))


def test_return_after_loop_with_break():
    def f(x):
        for _ in range(6):
            if x.max() > 8:
                break
            x = x * 2
        if x.mean() < 0:
            return -x
        return x

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-3)], spec([None, 3]))


def test_return_value_computed_in_loop_with_else_return():
    def f(x):
        i = 0
        while i < 4:
            if x.sum() > 100:
                return x
            x = x * 3
            i += 1
        return x * 0.5

    check(f, [randn(2, 3, shift=-2), randn(2, 3, shift=30)], spec([None, 3]))


def test_return_different_dtypes_same_structure():
    def f(x):
        if x.sum() > 0:
            return x.argmax(axis=1)
        return x.argmin(axis=1)

    check_outputs(f, POS_NEG, spec([None, 4]))


def test_return_none_from_one_branch_of_a_python_condition():
    def f(x, training=False):
        out = x * 2
        if training:
            return None
        return out

    check(f, POS_NEG, spec([None, 4]), every_line=False)  # training stays False


def test_return_inside_nested_loops():
    def f(x):
        for i in range(3):
            for j in range(3):
                x = x + 1.0
                if x.mean() > 5:
                    return x
        return x

    check(f, [randn(2, 3, shift=-10), randn(2, 3, shift=4)], spec([None, 3]))


def test_guard_clause_returns_input():
    def f(x):
        if x.abs().sum() == 0:
            return x
        return x / x.abs().sum()

    check(f, [np.zeros([2, 3], "float32"), randn(2, 3)], spec([None, 3]))


def test_return_scalar_loss_from_branches():
    def f(x):
        if x.mean() > 0:
            loss = (x ** 2).mean()
        else:
            loss = x.abs().mean()
        return loss

    check(f, POS_NEG, spec([None, 4]))
