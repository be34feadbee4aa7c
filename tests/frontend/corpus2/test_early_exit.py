"""Early returns inside loops over tensor ranges, while loops with several break
conditions, for/else and while/else, loop variables read after the loop."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import check, check_outputs, ints, randn, spec

ROWS = np.array([[1, 1, 1], [3, 3, 3], [-2, 0, 0], [5, 5, 5]], "float32")
INT_SPEC = paddle.static.InputSpec([], "int64")


def test_return_row_index_from_symbolic_range():
    def f(x):
        for i in range(x.shape[0]):
            if x[i].sum() > 5:
                return x[i] * float(1), i
        return x[0] * 0.0, -1

    check(f, [ROWS, -ROWS], spec([None, 3]))


def test_return_from_range_of_tensor_bound():
    def f(x, n):
        for i in range(n):
            x = x * 1.5
            if x.max() > 4.0:
                return x - 4.0
        return x

    check(f, [(randn(2, 3, shift=1), ints(low=6, high=7)),
              (randn(2, 3, scale=0.1), ints(low=2, high=3))],
          [paddle.static.InputSpec([None, 3]), INT_SPEC])


def test_while_with_three_break_conditions():
    def f(x):
        i = 0
        while True:
            x = x * 1.3 + 0.1
            i += 1
            if x.max() > 10.0:
                break
            if x.min() < -10.0:
                break
            if i >= 6:
                break
        return x, i

    check(f, [randn(2, 3, shift=5), randn(2, 3, shift=-5), randn(2, 3, scale=0.01)],
          spec([None, 3]))


def test_while_condition_with_and_of_three():
    def f(x):
        i = paddle.zeros([], "int64")
        while i < 8 and x.max() < 5.0 and x.min() > -5.0:
            x = x * 1.5
            i += 1
        return x, i

    check(f, [randn(2, 3, scale=0.5), randn(2, 3, scale=20)], spec([None, 3]))


def test_while_condition_with_or():
    def f(x):
        i = 0
        while i < 2 or x.sum() < 0:
            x = x + 1.0
            i += 1
            if i > 20:
                break
        return x

    check(f, [randn(2, 3, shift=-3), randn(2, 3, shift=3), randn(2, 3, shift=-30)],
          spec([None, 3]))


def test_break_from_inner_loop_only():
    def f(x):
        total = paddle.zeros([])
        for i in range(3):
            for j in range(4):
                total = total + x.sum() * float(j)
                if total > 10.0:
                    break
            total = total - 1.0
        return total

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-1)], spec([None, 3]))


def test_continue_and_break_in_one_loop():
    def f(x):
        acc = paddle.zeros_like(x)
        for i in range(10):
            x = x * -1.2
            if x.mean() < 0:
                continue
            acc = acc + x
            if acc.max() > 5.0:
                break
        return acc

    check(f, [randn(2, 3, shift=1), randn(2, 3, scale=0.01)], spec([None, 3]))


def test_for_else_with_tensor_break():
    def f(x):
        for _ in range(4):
            x = x * 2.0
            if x.max() > 10.0:
                break
        else:
            x = -x
        return x

    check(f, [randn(2, 3, shift=3), randn(2, 3, scale=0.01)], spec([None, 3]))


def test_while_else_with_tensor_break():
    def f(x):
        i = 0
        while i < 4:
            x = x + 1.0
            if x.min() > 3.0:
                break
            i += 1
        else:
            x = x * 10.0
        return x

    check(f, [randn(2, 3, shift=2, scale=0.1), randn(2, 3, shift=-20)], spec([None, 3]))


def test_loop_index_read_after_tensor_break():
    def f(x):
        for i in range(10):
            x = x * 2.0
            if x.abs().sum() > 30.0:
                break
        return x / float(i + 1), i

    check(f, [randn(2, 3), randn(2, 3, scale=1e-4)], spec([None, 3]))


def test_loop_index_read_after_symbolic_range():
    def f(x):
        last = 0
        for i in range(x.shape[0]):
            last = i
        return x * float(last)

    check(f, [randn(2, 3), randn(4, 3, seed=1)], spec([None, 3]))


def test_return_loop_counter_of_while():
    def f(x):
        k = 0
        while x.abs().max() > 0.1:
            x = x * 0.5
            k += 1
        return k

    check_outputs(f, [randn(2, 3, scale=5), randn(2, 3, scale=0.01)], spec([None, 3]))


def test_while_true_with_two_returns():
    def f(x):
        i = 0
        while True:
            x = x * 1.5
            i += 1
            if x.max() > 5.0:
                return x, i
            if i == 5:
                return x * 0.0, i

    check(f, [randn(2, 3, shift=2), randn(2, 3, scale=0.01, shift=-1)], spec([None, 3]))


def test_return_in_else_branch_inside_loop():
    def f(x):
        for _ in range(5):
            if x.mean() < 2.0:
                x = x + 1.0
            else:
                return x * 2.0
        return -x

    check(f, [randn(2, 3, shift=0.5), randn(2, 3, shift=-10)], spec([None, 3]))


def test_break_on_item_value():
    def f(x):
        for _ in range(8):
            x = x * 1.7
            if x.abs().max().item() > 3.0:
                break
        return x

    check(f, [randn(2, 3), randn(2, 3, scale=1e-4)], spec([None, 3]))


def test_break_on_numpy_all():
    def f(x):
        while True:
            x = x + 0.5
            if (x.numpy() > 0).all():
                break
        return x

    check(f, [randn(2, 3, shift=-2), randn(2, 3, shift=5)], spec([None, 3]))


def test_static_loop_with_tensor_break_and_counter():
    def f(x):
        used = 0
        for scale in [2.0, 3.0, 4.0]:
            x = x * scale
            used += 1
            if x.abs().max() > 10.0:
                break
        return x, used

    check(f, [randn(2, 3), randn(2, 3, scale=1e-3)], spec([None, 3]))


def test_return_from_sublayer_loop_inside_tensor_while():
    class Block(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, h):
            for _ in range(3):
                h = paddle.tanh(self.fc(h)) * 2.0
                if h.sum() > 1.0:
                    return h
            return h * 0.5

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            i = 0
            while i < 3 and x.abs().sum() < 50.0:
                x = x + self.block(x)
                i += 1
            return x

    check(Net(), [randn(2, 3, shift=2), randn(2, 3, shift=-2), randn(2, 3, scale=60)],
          spec([None, 3]))


def test_return_inside_loop_under_no_grad():
    def f(x):
        with paddle.no_grad():
            for _ in range(4):
                x = x * 2.0
                if x.max() > 5.0:
                    return x
        return x + 1.0

    check_outputs(f, [randn(2, 3, shift=2), randn(2, 3, scale=0.01, shift=-2)],
                  spec([None, 3]))


def test_find_first_negative_row_with_while():
    def f(x):
        i = 0
        n = x.shape[0]
        while i < n and x[i].min() >= 0:
            i += 1
        return i

    a = np.abs(ROWS)
    b = a.copy()
    b[2, 1] = -1.0
    check_outputs(f, [a, b], spec([None, 3]))


def test_early_return_on_convergence_with_tolerance_argument():
    def solve(a, b, tol=1e-6):
        x = paddle.zeros_like(b)
        for it in range(100):
            r = b - a * x
            if paddle.max(paddle.abs(r)) < tol:
                return x, it
            x = x + 0.5 * r / a
        return x, 100

    def f(a, b):
        return solve(a, b)

    check(f, [(np.full([3], 2.0, "float32"), randn(3)), (np.full([3], 1.0, "float32"),
                                                          np.zeros([3], "float32"))],
          spec([None], [None]), every_line=False)


def test_break_then_continue_in_nested_tensor_loops():
    def f(x):
        out = paddle.zeros([])
        i = paddle.zeros([], "int64")
        while i < 3:
            i += 1
            j = paddle.zeros([], "int64")
            while j < 3:
                j += 1
                if j == i:
                    continue
                out = out + x.sum() * paddle.cast(j, "float32")
                if out > 4.0:
                    break
        return out

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-1)], spec([None, 3]))


def test_return_from_enumerate_over_tensor():
    def f(x):
        for i, row in enumerate(x):
            if row.max() > 4.0:
                return row, i
        return x[-1], -1

    check(f, [ROWS, ROWS * 0.1], spec([None, 3]))


def test_zip_over_two_tensors_with_break():
    def f(x, y):
        acc = paddle.zeros([3])
        for a, b in zip(x, y):
            if (a * b).sum() < 0:
                break
            acc = acc + a * b
        return acc

    check(f, [(ROWS, np.abs(ROWS)), (np.abs(ROWS), np.abs(ROWS))], spec([None, 3], [None, 3]))


def test_reverse_range_over_symbolic_length():
    def f(x):
        h = paddle.zeros([x.shape[0], 3])
        for t in range(x.shape[1] - 1, -1, -1):
            h = paddle.tanh(h + x[:, t])
            if h.abs().max() > 0.95:
                break
        return h

    check(f, [randn(2, 4, 3, scale=0.1), randn(2, 3, 3, seed=1, scale=10)],
          spec([None, None, 3]))
