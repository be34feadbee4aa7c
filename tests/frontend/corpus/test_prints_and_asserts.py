"""print and assert in converted code: printed at run time in the branch taken,
asserts checked at run time with the user's message."""
import numpy as np

import irflow as paddle
import irflow.nn as nn

from .harness import check, check_prints, check_raises_like_eager, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_print_strings_in_branches(capsys):
    def f(x):
        if x.mean() > 0:
            print("positive")
        else:
            print("negative")
        return x

    check_prints(f, POS_NEG, spec([None, 4]), capsys)


def test_print_inside_a_loop(capsys):
    def f(x):
        i = 0
        while x.sum() < 10:
            x = x + 5.0
            print("step")
            i += 1
        return x

    check_prints(f, POS_NEG, spec([None, 4]), capsys)


def test_print_a_tensor(capsys):
    def f(x):
        s = paddle.sum(x)
        print("sum:", s)
        return s

    check_prints(f, [randn(2, 2)], spec([2, 2]), capsys)


def test_print_a_python_value_and_a_shape(capsys):
    def f(x):
        print("features", x.shape[-1], 3.5)
        return x * 2

    check_prints(f, [randn(2, 4)], spec([2, 4]), capsys)


def test_print_with_format_of_a_python_value(capsys):
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.depth = 2

        def forward(self, x):
            for i in range(self.depth):
                print(f"layer {i}")
                x = x * 2
            return x

    check_prints(Net(), [randn(2, 4)], spec([2, 4]), capsys)


def test_assert_that_holds():
    def f(x):
        assert x.min() >= 0, "inputs must be non-negative"
        return paddle.sqrt(x)

    check(f, [np.abs(randn(3, 4)) + 0.1], spec([None, 4]))


def test_assert_that_fails_at_run_time():
    def f(x):
        assert x.min() >= 0, "inputs must be non-negative"
        return paddle.sqrt(x)

    check_raises_like_eager(f, [randn(3, 4)], spec([None, 4]), AssertionError,
                            match="inputs must be non-negative")


def test_assert_on_a_static_shape():
    def f(x):
        assert x.shape[-1] == 4, "expected 4 features"
        return x + 1

    check(f, POS_NEG, spec([None, 4]))


def test_assert_inside_a_loop_fails_at_run_time():
    def f(x):
        for _ in range(3):
            x = x * 10.0
            assert paddle.isfinite(x).all(), "overflow"
        return x

    check_raises_like_eager(f, [np.full([2], 1e37, "float32")], spec([None]),
                            AssertionError, match="overflow")


def test_assert_inside_a_loop_that_holds():
    def f(x):
        for _ in range(3):
            x = x * 10.0
            assert paddle.isfinite(x).all(), "overflow"
        return x

    check(f, POS_NEG, spec([None, 4]))


def test_assert_without_a_message():
    def f(x):
        assert x.sum() > 0
        return x

    check_raises_like_eager(f, [POS_NEG[1]], spec([None, 4]), AssertionError)


def test_assert_inside_a_tensor_branch():
    def f(x):
        if x.mean() > 0:
            assert x.max() < 100, "too large"
            x = x * 2
        return x

    check(f, POS_NEG, spec([None, 4]))
