"""assert and print as people sprinkle them: shape checks on symbolic dims, messages
with f-strings, prints of shapes and values inside loops and helpers."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn

from .common import check, check_prints, check_raises_like_eager, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_assert_batch_sizes_match_holds():
    def f(x, y):
        assert x.shape[0] == y.shape[0], "batch sizes differ"
        return x + y

    check(f, [(randn(2, 4), randn(2, 4, seed=1)), (randn(3, 4), randn(3, 4, seed=1))],
          spec([None, 4], [None, 4]))


def test_assert_batch_sizes_match_fails():
    def f(x, y):
        assert x.shape[0] == y.shape[0], "batch sizes differ"
        return x.sum() + y.sum()

    check_raises_like_eager(f, [(randn(2, 4), randn(3, 4, seed=1))],
                            spec([None, 4], [None, 4]), AssertionError,
                            match="batch sizes differ")


def test_assert_with_fstring_message_of_python_value():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.dim = 4

        def forward(self, x):
            assert x.shape[-1] == self.dim, f"expected {self.dim} features"
            assert not paddle.isnan(x).any(), "nan in input"
            return x * 2.0

    check(Net(), POS_NEG, spec([None, 4]))


def test_assert_not_nan_fails():
    def f(x):
        y = paddle.log(x)
        assert not paddle.isnan(y).any(), "log of a negative number"
        return y

    check_raises_like_eager(f, [np.array([1.0, -1.0], "float32")], spec([None]),
                            AssertionError, match="log of a negative number")


def test_assert_inside_symbolic_range_loop_fails():
    def f(x):
        for i in range(x.shape[0]):
            assert x[i].sum() > 0, "every row must sum to a positive number"
        return x

    a = np.abs(randn(3, 4))
    a[2] = -1.0
    check_raises_like_eager(f, [a], spec([None, 4]), AssertionError,
                            match="every row must sum")


def test_assert_isinstance_of_tensor():
    def f(x):
        assert isinstance(x, paddle.Tensor)
        return x + 1.0

    check(f, POS_NEG, spec([None, 4]))


def test_print_inside_helper_called_from_loop(capsys):
    def log_step(i, h):
        if h.mean() > 0:
            print("step", i, "positive")
        return h * 0.5

    def f(x):
        for i in range(3):
            x = log_step(i, x - 1.0)
        return x

    check_prints(f, POS_NEG, spec([None, 4]), capsys)


def test_print_of_item_value(capsys):
    def f(x):
        loss = (x ** 2).mean()
        print("loss:", loss.item())
        return loss

    check_prints(f, [np.full([2, 2], 0.5, "float32")], spec([None, 2]), capsys)


def test_print_of_symbolic_shape(capsys):
    def f(x):
        print("input shape", x.shape)
        return x * 2

    check_prints(f, [randn(2, 4), randn(3, 4, seed=1)], spec([None, 4]), capsys)


def test_print_fstring_of_float_of_tensor(capsys):
    def f(x):
        m = float(x.mean())
        print(f"mean={m:.3f}")
        return x - m

    check_prints(f, [np.full([2, 2], 0.25, "float32")], spec([None, 2]), capsys)


def test_print_loop_counter_after_tensor_loop(capsys):
    def f(x):
        n = 0
        while x.sum() < 10:
            x = x + 3.0
            n += 1
        print("iterations:", n)
        return x

    check_prints(f, [np.zeros([2, 2], "float32"), np.full([2, 2], 5.0, "float32")],
                 spec([None, 2]), capsys)


def test_print_in_else_of_a_tensor_branch_only(capsys):
    def f(x):
        if x.mean() > 0:
            y = x * 2
        else:
            print("negative input, clipping")
            y = paddle.zeros_like(x)
        return y

    check_prints(f, POS_NEG, spec([None, 4]), capsys)
