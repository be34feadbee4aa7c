"""while / for loops on tensors, with break and continue."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, ints, randn, spec, uniform

SMALL_LARGE = [randn(2, 3, scale=0.1), randn(2, 3, seed=1, scale=3.0)]


def test_while_doubles_until_large():
    def f(x):
        while paddle.sum(paddle.abs(x)) < 100.0:
            x = x * 2.0
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_with_python_counter_and_tensor_condition():
    def f(x):
        i = 0
        while i < 10 and x.mean() < 5.0:
            x = x + 1.0
            i += 1
        return x, i

    check(f, [randn(2, 3), randn(2, 3, shift=-20)], spec([None, 3]))


def test_while_counts_steps_in_a_tensor():
    def f(x):
        steps = paddle.zeros([], "int64")
        while x.max() > 1.0:
            x = x / 2.0
            steps += 1
        return x, steps

    check(f, [randn(2, 3, scale=10), randn(2, 3, scale=0.1)], spec([None, 3]))


def test_while_with_break():
    def f(x):
        i = 0
        while i < 20:
            x = x * 1.5
            if x.abs().max() > 10.0:
                break
            i += 1
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_true_with_break():
    def f(x):
        while True:
            x = x * 0.5
            if paddle.max(paddle.abs(x)) < 0.1:
                break
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_with_continue():
    def f(x):
        i = paddle.zeros([], "int64")
        total = paddle.zeros_like(x)
        while i < 6:
            i += 1
            if i % 2 == 0:
                continue
            total = total + x * paddle.cast(i, "float32")
        return total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_for_range_python_int():
    def f(x):
        for _ in range(3):
            x = paddle.tanh(x) + 0.5
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_for_range_with_tensor_bound():
    def f(x, n):
        for i in range(n):
            x = x + float(i)
        return x

    check(f, [(randn(2, 3), ints(low=3, high=4)), (randn(2, 3), ints(low=0, high=1))],
          [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "int64")])


def test_for_range_with_start_stop_step():
    def f(x):
        n = paddle.cast(paddle.sum(x > 0), "int64")
        acc = paddle.zeros([3])
        for i in range(1, n, 2):
            acc = acc + x[0] * float(i)
        return acc

    check(f, [randn(2, 3, shift=3), randn(2, 3, shift=-3)], spec([None, 3]))


def test_for_range_with_break_on_tensor():
    def f(x):
        for i in range(10):
            x = x * 2.0
            if x.sum() > 50.0:
                break
        return x

    check(f, [full32([2, 3], 1.0), full32([2, 3], -1.0)], spec([None, 3]))


def test_for_range_with_continue_on_tensor():
    def f(x):
        out = paddle.zeros_like(x)
        for i in range(4):
            h = x * float(i)
            if h.mean() < 0:
                continue
            out = out + h
        return out

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-3)], spec([None, 3]))


def test_loop_temporary_is_not_carried():
    def f(x, w):
        h = x
        for _ in range(20):
            hn = paddle.tanh(paddle.matmul(h, w) + x)
            d = paddle.max(paddle.abs(hn - h))
            h = hn
            if d < 1e-4:
                break
        return h

    w = randn(3, 3, seed=4, scale=0.3)
    check(f, [(randn(2, 3), w), (randn(2, 3, seed=2), w)], spec([None, 3], [3, 3]))


def test_fixed_point_while_loop():
    def f(x, w):
        h = paddle.zeros_like(x)
        diff = paddle.to_tensor(1.0)
        steps = 0
        while diff > 1e-5 and steps < 50:
            hn = paddle.tanh(paddle.matmul(h, w) + x)
            diff = paddle.max(paddle.abs(hn - h))
            h = hn
            steps += 1
        return h

    w = randn(3, 3, seed=4, scale=0.3)
    check(f, [(randn(2, 3), w), (randn(2, 3, seed=2, scale=0.01), w)], spec([None, 3], [3, 3]))


def test_newton_square_root():
    def f(a):
        x = paddle.ones_like(a)
        for _ in range(30):
            nx = 0.5 * (x + a / x)
            if paddle.max(paddle.abs(nx - x)) < 1e-6:
                break
            x = nx
        return x

    check(f, [uniform(4, low=0.5, high=9.0), uniform(4, low=1.0, high=1.1)], spec([None]))


def test_nested_loops():
    def f(x):
        for i in range(3):
            j = 0
            while j < 2 and x.sum() < 100.0:
                x = x + float(i)
                j += 1
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_nested_tensor_loops():
    def f(x):
        i = paddle.zeros([], "int64")
        while i < 3:
            j = paddle.zeros([], "int64")
            while j < i:
                x = x * 1.1
                j += 1
            i += 1
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_if_inside_while():
    def f(x):
        k = 0
        while k < 5:
            if x.mean() > 0:
                x = x - 1.0
            else:
                x = x + 0.5
            k += 1
        return x

    check(f, [randn(2, 3, shift=3), randn(2, 3, shift=-3)], spec([None, 3]))


def test_loop_over_tensor_rows():
    def f(x):
        total = paddle.zeros([3])
        for row in x:
            total = total + row * row
        return total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_loop_over_tensor_rows_with_break():
    def f(x):
        total = paddle.zeros([3])
        for row in x:
            if row.sum() < 0:
                break
            total = total + row
        return total

    a = np.array([[1, 2, 3], [1, 1, 1], [-5, 0, 0], [9, 9, 9]], "float32")
    check(f, [a, np.abs(a)], spec([None, 3]))


def test_loop_over_layer_list():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.layers = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            for layer in self.layers:
                x = F.relu(layer(x)) + x
            return x

    check(Net(), [randn(2, 4), randn(3, 4, seed=1)], spec([None, 4]))


def test_enumerate_layer_list_with_tensor_break():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(4, 4) for _ in range(4)])

        def forward(self, x):
            for i, blk in enumerate(self.blocks):
                x = paddle.tanh(blk(x)) * 2.0
                if x.mean() > 0.3:
                    break
            return x

    check(Net(), [randn(2, 4, shift=2), randn(2, 4, shift=-2)], spec([None, 4]))


def test_zip_over_python_lists():
    def f(x):
        for scale, shift in zip([1.0, 2.0, 3.0], [0.1, 0.2, 0.3]):
            x = x * scale + shift
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_loop_counter_used_after_the_loop():
    def f(x):
        i = paddle.zeros([], "int64")
        while x.sum() < 10.0:
            x = x + 1.0
            i = i + 1
        return x / paddle.cast(i + 1, "float32")

    check(f, [randn(2, 3), randn(2, 3, shift=5)], spec([None, 3]))


def test_augmented_assignments_in_loop():
    def f(x):
        s = paddle.zeros([], "float32")
        n = 0
        while s < 10.0:
            s += x.abs().sum()
            n += 1
        return s, n

    check(f, SMALL_LARGE, spec([None, 3]))


def test_loop_over_symbolic_batch_size():
    def f(x):
        out = paddle.zeros([3])
        for i in range(x.shape[0]):
            out = out + x[i] * float(1)
        return out

    check(f, [randn(2, 3), randn(5, 3, seed=1)], spec([None, 3]))


def test_fill_constant_counter_idiom():
    def f(x):
        i = paddle.full([1], 0, "int64")
        n = paddle.full([1], 4, "int64")
        while i < n:
            x = x * 1.5
            i = i + 1
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_for_over_a_zero_d_tensor_bound():
    def f(x):
        n = paddle.full([], 3, "int64")
        for _ in range(n):
            x = paddle.sin(x) + x
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_condition_on_tensor_from_data():
    def f(x):
        y = x
        while paddle.mean(y) < paddle.mean(x) + 3.0:
            y = y + paddle.abs(x) + 0.1
        return y

    check(f, SMALL_LARGE, spec([None, 3]))


def test_layer_refines_until_converged():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = x
            for _ in range(8):
                new_h = 0.5 * h + 0.5 * paddle.tanh(self.fc(h))
                if paddle.max(paddle.abs(new_h - h)) < 0.05:
                    break
                h = new_h
            return h

    check(Net(), [randn(2, 4, scale=0.01), randn(3, 4, seed=1, scale=2.0)], spec([None, 4]))


def test_while_loop_in_layer_with_max_steps_attribute():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.max_steps = 5

        def forward(self, x):
            step = 0
            h = self.fc(x)
            while step < self.max_steps and paddle.max(h) < 4.0:
                h = h + F.relu(self.fc(h))
                step += 1
            return h

    check(Net(), [randn(2, 4), randn(2, 4, seed=1, shift=10)], spec([None, 4]))


def test_loop_variable_of_int_dtype_and_float_value():
    def f(x):
        k = paddle.to_tensor(0)
        total = paddle.zeros_like(x)
        while k < 3:
            total = total + x * paddle.cast(k, x.dtype)
            k = k + 1
        return total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_loop_with_two_breaks():
    def f(x):
        for i in range(10):
            if x.max() > 50:
                break
            x = x * 2.0
            if x.min() < -50:
                break
        return x

    check(f, [full32([2, 3], 1.0), full32([2, 3], -1.0)], spec([None, 3]))


def test_while_else_clause():
    def f(x):
        i = 0
        while i < 3:
            x = x + 1.0
            i += 1
        else:
            x = x * 2.0
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def full32(shape, value):
    return np.full(shape, value, "float32")


def test_static_nn_while_loop():
    def f(x):
        i = paddle.full([1], 0, "int64")
        ten = paddle.full([1], 4, "int64")

        def cond(i, h):
            return i < ten

        def body(i, h):
            return [i + 1, h * 1.5 + 0.1]

        i, h = paddle.static.nn.while_loop(cond, body, [i, x])
        return h

    check(f, SMALL_LARGE, spec([None, 3]))


def test_increment_counter():
    def f(x):
        i = paddle.zeros([1], "int64")
        while i < 3:
            x = x + 1.0
            i = paddle.increment(i)
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_fill_constant_bound():
    def f(x):
        i = paddle.tensor.fill_constant(shape=[1], dtype="int64", value=0)
        n = paddle.tensor.fill_constant(shape=[1], dtype="int64", value=3)
        while i < n:
            x = paddle.tanh(x) + 1.0
            i += 1
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_for_over_numpy_rows():
    def f(x):
        total = 0.0
        for v in x.numpy():
            total = total + v.sum()
        return x * 0 + total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_int_of_a_tensor_as_loop_bound():
    def f(x):
        n = int(paddle.sum(x > 0))
        for _ in range(n):
            x = x * 0.9
        return x

    check(f, SMALL_LARGE, spec([None, 3]))
