"""Python lists, tuples and dicts of tensors around control flow; list inputs."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn

from .harness import check, ints, randn, spec

SMALL_LARGE = [randn(2, 3, scale=0.1), randn(2, 3, seed=1, scale=3.0)]


def test_append_in_python_loop_then_stack():
    def f(x):
        outs = []
        for i in range(3):
            outs.append(x * float(i + 1))
        return paddle.stack(outs)

    check(f, SMALL_LARGE, spec([None, 3]))


def test_append_in_python_loop_then_concat():
    def f(x):
        parts = []
        for k in [1.0, 2.0]:
            parts.append(paddle.tanh(x * k))
        return paddle.concat(parts, axis=1)

    check(f, SMALL_LARGE, spec([None, 3]))


def test_append_in_tensor_loop_then_stack():
    def f(x, n):
        outs = []
        h = x
        for _ in range(n):
            h = paddle.tanh(h) + 1.0
            outs.append(h)
        return paddle.stack(outs).sum(axis=0)

    check(f, [(randn(2, 3), ints(low=3, high=4)), (randn(2, 3), ints(low=1, high=2))],
          [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "int64")])


def test_append_in_while_loop_then_len():
    def f(x):
        outs = []
        while x.sum() < 20:
            x = x + 1.0
            outs.append(x)
        return x, len(outs)

    check(f, [randn(2, 3), randn(2, 3, shift=5)], spec([None, 3]))


def test_append_in_while_loop_read_last():
    def f(x):
        outs = [x]
        i = 0
        while x.mean() < 3 and i < 10:
            x = x * 2 + 1
            outs.append(x)
            i += 1
        return outs[-1]

    check(f, [randn(2, 3), randn(2, 3, shift=5)], spec([None, 3]))


def test_list_comprehension_over_python_range():
    def f(x):
        ys = [x * float(i) for i in range(4)]
        return sum(ys[1:], ys[0])

    check(f, SMALL_LARGE, spec([None, 3]))


def test_add_n_of_list():
    def f(x):
        ys = [x, x * 2.0, paddle.exp(x)]
        return paddle.add_n(ys)

    check(f, SMALL_LARGE, spec([None, 3]))


def test_list_of_tensors_as_input():
    def f(xs):
        total = xs[0]
        for t in xs[1:]:
            total = total + t
        return total

    a, b, c = randn(2, 3), randn(2, 3, seed=1), randn(2, 3, seed=2)
    check(f, [([a, b, c],)], [[paddle.static.InputSpec([None, 3])] * 3])


def test_two_inputs_unpacked_from_a_tuple():
    def f(x, y):
        a, b = x * 2, y * 3
        a, b = b, a
        return a - b

    check(f, [(randn(2, 3), randn(2, 3, seed=1))], spec([None, 3], [None, 3]))


def test_dict_of_tensors_through_a_branch():
    def f(x):
        d = {"a": x, "b": x * 2}
        if x.mean() > 0:
            d["a"] = d["a"] + d["b"]
        return d["a"]

    check(f, [randn(2, 3, shift=2), randn(2, 3, shift=-2)], spec([None, 3]))


def test_tuple_state_through_a_loop():
    def f(x):
        state = (x, paddle.zeros_like(x))
        for _ in range(3):
            h, c = state
            c = c + paddle.tanh(h)
            h = paddle.sigmoid(c) * h
            state = (h, c)
        return state[0] + state[1]

    check(f, SMALL_LARGE, spec([None, 3]))


def test_tuple_state_through_a_tensor_loop():
    def f(x):
        state = (x, paddle.zeros_like(x))
        while state[1].sum() < 5:
            h, c = state
            c = c + paddle.abs(h) + 0.1
            state = (h, c)
        return state[1]

    check(f, SMALL_LARGE, spec([None, 3]))


def test_list_state_through_a_tensor_loop():
    def f(x):
        hs = [x, x * 2]
        i = paddle.zeros([], "int64")
        while i < 3:
            hs = [hs[1], hs[0] + hs[1]]
            i += 1
        return hs[1]

    check(f, SMALL_LARGE, spec([None, 3]))


def test_layer_list_outputs_collected():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.heads = nn.LayerList([nn.Linear(4, 2) for _ in range(3)])

        def forward(self, x):
            outs = [head(x) for head in self.heads]
            return paddle.concat(outs, axis=-1)

    check(Net(), [randn(2, 4)], spec([None, 4]))


def test_sequential_layers():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    check(net, [randn(2, 4), randn(5, 4, seed=1)], spec([None, 4]))


def test_split_and_unbind():
    def f(x):
        a, b = paddle.split(x, 2, axis=1)
        rows = paddle.unbind(a, axis=0)
        return b * rows[0]

    check(f, [randn(2, 4)], spec([2, 4]))


def test_chunk_then_branch_on_parts():
    def f(x):
        a, b = paddle.chunk(x, 2, axis=-1)
        if a.mean() > b.mean():
            return a
        return b

    check(f, [randn(3, 4) + np.array([3, 3, 0, 0], "float32"),
              randn(3, 4) - np.array([3, 3, 0, 0], "float32")], spec([None, 4]))


def test_list_pop_and_reverse():
    def f(x):
        hs = [x, x + 1, x + 2]
        last = hs.pop()
        hs.reverse()
        return paddle.stack(hs) * last

    check(f, SMALL_LARGE, spec([None, 3]))


def test_tensor_array_api():
    def f(x):
        arr = paddle.tensor.create_array("float32")
        i = paddle.zeros([1], "int64")
        while i < 3:
            paddle.tensor.array_write(x * paddle.cast(i, "float32"), i, array=arr)
            i = paddle.increment(i)
        n = paddle.tensor.array_length(arr)
        return paddle.tensor.array_read(arr, i - 1) * n

    check(f, SMALL_LARGE, spec([None, 3]))


def test_list_index_with_python_int_from_loop():
    def f(x):
        scales = [0.5, 1.0, 2.0]
        out = paddle.zeros_like(x)
        for i in range(len(scales)):
            out = out + x * scales[i]
        return out

    check(f, SMALL_LARGE, spec([None, 3]))


def test_outputs_of_tensor_loop_stacked_along_time():
    def f(x):
        steps = []
        h = paddle.zeros([x.shape[0], 3])
        for t in range(x.shape[1]):
            h = paddle.tanh(h + x[:, t, :])
            steps.append(h)
        return paddle.stack(steps, axis=1)

    check(f, [randn(2, 4, 3), randn(3, 2, 3, seed=1)], spec([None, None, 3]))
