"""Paddle's own control-flow API around dynamic code: paddle.static.nn.cond and
while_loop (nested, tuples, closures), tensor arrays, increment, assign."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import check, check_outputs, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]
SMALL_LARGE = [randn(2, 3, scale=0.1), randn(2, 3, seed=1, scale=3.0)]


def test_cond_returning_a_tuple():
    def f(x):
        a, b = paddle.static.nn.cond(x.mean() > 0,
                                     lambda: (x * 2.0, x.sum()),
                                     lambda: (x - 1.0, x.max()))
        return a * b

    check(f, POS_NEG, spec([None, 4]))


def test_nested_static_cond():
    def f(x):
        def pos():
            return paddle.static.nn.cond(x.max() > 3.0, lambda: x / 3.0, lambda: x * 3.0)

        return paddle.static.nn.cond(x.mean() > 0, pos, lambda: -x)

    check(f, [randn(3, 4, shift=2, scale=3), randn(3, 4, shift=0.5, scale=0.1),
              randn(3, 4, shift=-2)], spec([None, 4]))


def test_cond_with_named_functions():
    def f(x, y):
        def true_fn():
            return paddle.add(x, y)

        def false_fn():
            return paddle.subtract(x, y)

        return paddle.static.nn.cond(paddle.less_than(x.sum(), y.sum()), true_fn, false_fn)

    a, b = POS_NEG
    check(f, [(a, b), (b, a)], spec([None, 4], [None, 4]))


def test_while_loop_with_three_loop_vars():
    def f(x):
        def cond(i, s, h):
            return i < 5

        def body(i, s, h):
            h = paddle.tanh(h) + 0.5
            return [i + 1, s + h.sum(), h]

        i = paddle.full([1], 0, "int64")
        s = paddle.zeros([1])
        i, s, h = paddle.static.nn.while_loop(cond, body, [i, s, x])
        return s, h

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_loop_cond_reads_a_closure():
    def f(x):
        limit = x.abs().sum() * 4.0

        def cond(h):
            return h.abs().sum() < limit

        def body(h):
            return [h * 1.5 + 0.01]

        (h,) = paddle.static.nn.while_loop(cond, body, [x])
        return h

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_loop_body_returns_a_tuple():
    def f(x):
        i = paddle.full([1], 0, "int64")
        out = paddle.static.nn.while_loop(lambda i, h: i < 3,
                                          lambda i, h: (i + 1, h * 2.0), [i, x])
        return out[1]

    check(f, SMALL_LARGE, spec([None, 3]))


def test_while_loop_in_a_layer_with_parameters():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            i = paddle.zeros([1], "int64")

            def body(i, h):
                return [i + 1, paddle.tanh(self.fc(h))]

            _, h = paddle.static.nn.while_loop(lambda i, h: i < 3, body, [i, x])
            return h

    check(Net(), SMALL_LARGE, spec([None, 3]))


def test_array_write_in_python_loop_and_read_back():
    def f(x):
        arr = paddle.tensor.create_array("float32")
        for k in range(3):
            i = paddle.full([1], k, "int64")
            paddle.tensor.array_write(x * float(k + 1), i, array=arr)
        total = paddle.tensor.array_read(arr, paddle.full([1], 0, "int64"))
        for k in range(1, 3):
            total = total + paddle.tensor.array_read(arr, paddle.full([1], k, "int64"))
        return total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_array_length_as_loop_bound():
    def f(x):
        arr = paddle.tensor.create_array("float32")
        i = paddle.zeros([1], "int64")
        h = x
        while h.abs().sum() < 20.0:
            h = h * 2.0 + 0.1
            paddle.tensor.array_write(h, i, array=arr)
            i = i + 1
        n = paddle.tensor.array_length(arr)
        j = paddle.zeros([1], "int64")
        acc = paddle.zeros_like(x)
        while j < n:
            acc = acc + paddle.tensor.array_read(arr, j)
            j = j + 1
        return acc

    check(f, SMALL_LARGE, spec([None, 3]))


def test_increment_with_value_two():
    def f(x):
        i = paddle.zeros([1], "int64")
        while i < 6:
            x = x + 1.0
            i = paddle.increment(i, value=2)
        return x

    check(f, SMALL_LARGE, spec([None, 3]))


def test_assign_inside_a_loop():
    def f(x):
        best = paddle.assign(x)
        for _ in range(3):
            x = x * -1.5
            if x.sum() > best.sum():
                best = paddle.assign(x)
        return best

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-1)], spec([None, 3]))


def test_cond_inside_a_python_for():
    def f(x):
        for k in range(3):
            x = paddle.static.nn.cond(x.sum() > 0, lambda: x - float(k), lambda: x + 1.0)
        return x

    check(f, [randn(2, 3, shift=3), randn(2, 3, shift=-3)], spec([None, 3]))


def test_fill_constant_then_cast_counter():
    def f(x):
        step = paddle.tensor.fill_constant([1], "int32", 0)
        total = paddle.zeros_like(x)
        while step < 3:
            total = total + x * step.astype("float32")
            step = step + 1
        return total

    check(f, SMALL_LARGE, spec([None, 3]))


def test_add_n_of_loop_outputs():
    def f(x):
        outs = []
        for k in range(3):
            outs.append(paddle.static.nn.cond(x.mean() > 0, lambda: x * float(k),
                                              lambda: -x))
        return paddle.add_n(outs)

    check(f, [randn(2, 3, shift=3), randn(2, 3, shift=-3)], spec([None, 3]))
