"""Shapes (with None dims), len, numel, item, slicing, casts and dtypes."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_outputs, ints, randn, spec

TWO_BATCHES = [randn(2, 4), randn(5, 4, seed=1)]


def test_reshape_with_batch_dim_from_shape():
    def f(x):
        n = x.shape[0]
        return paddle.reshape(x, [n, 2, 2]).sum(axis=-1)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_reshape_with_minus_one():
    def f(x):
        return x.reshape([-1, 2]) * 2.0

    check(f, TWO_BATCHES, spec([None, 4]))


def test_flatten_keeps_the_batch():
    def f(x):
        return paddle.flatten(x, start_axis=1)

    check(f, [randn(2, 3, 4), randn(4, 3, 4, seed=1)], spec([None, 3, 4]))


def test_len_of_a_tensor_in_arithmetic():
    def f(x):
        return x.sum(axis=0) / len(x)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_len_as_condition():
    def f(x):
        if len(x) > 3:
            x = x[:3]
        return x.sum(axis=0)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_shape_comparison_as_condition():
    def f(x):
        if x.shape[0] > 3:
            y = x * 2
        else:
            y = x * 3
        return y

    check(f, TWO_BATCHES, spec([None, 4]))


def test_numel_in_mean():
    def f(x):
        return paddle.sum(x) / x.numel()

    check(f, TWO_BATCHES, spec([None, 4]))


def test_paddle_shape_op():
    def f(x):
        s = paddle.shape(x)
        return paddle.zeros([s[0], 2]) + x[:, :2]

    check(f, TWO_BATCHES, spec([None, 4]))


def test_zeros_of_batch_size():
    def f(x):
        h = paddle.zeros([x.shape[0], 3])
        return paddle.concat([x, h], axis=1)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_first_column():
    def f(x):
        return x[:, 0] * 2

    check(f, TWO_BATCHES, spec([None, 4]))


def test_last_column():
    def f(x):
        return x[:, -1]

    check(f, TWO_BATCHES, spec([None, 4]))


def test_first_row_of_a_symbolic_axis():
    def f(x):
        return x[0] + x[-1]

    check(f, TWO_BATCHES, spec([None, 4]))


def test_slice_of_a_symbolic_axis():
    def f(x):
        return x[1:] - x[:-1]

    check(f, TWO_BATCHES, spec([None, 4]))


def test_slice_on_sequence_axis():
    def f(x):
        return x[:, 1:] * x[:, :1]

    check(f, [randn(2, 5), randn(3, 7, seed=1)], spec([None, None]))


def test_pad_sequence_axis():
    def f(x):
        return F.pad(x, [0, 0, 1, 1], value=0.0)

    check(f, [randn(2, 5), randn(3, 7, seed=1)], spec([None, None]))


def test_linear_on_none_none_input():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)

    check(Net(), [randn(2, 4), randn(3, 4, seed=1)], spec([None, None]))


def test_mean_over_sequence_then_linear():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x.mean(axis=1))

    check(Net(), [randn(2, 5, 3), randn(3, 2, 3, seed=1)], spec([None, None, 3]))


def test_cast_bool_to_float():
    def f(x):
        mask = paddle.cast(x > 0, "float32")
        return x * mask

    check(f, TWO_BATCHES, spec([None, 4]))


def test_astype_to_int_and_back():
    def f(x):
        return (x * 10).astype("int64").astype("float32") / 10

    check_outputs(f, TWO_BATCHES, spec([None, 4]))


def test_cast_to_float64():
    def f(x):
        return paddle.cast(x, "float64") * 2

    check(f, TWO_BATCHES, spec([None, 4]))


def test_int_of_item_as_loop_bound():
    def f(x):
        n = int(x.abs().max().item())
        acc = paddle.zeros_like(x)
        for _ in range(n):
            acc = acc + x
        return acc

    check(f, [randn(2, 4, scale=0.1), randn(2, 4, seed=1, scale=3)], spec([None, 4]))


def test_float_of_tensor_in_arithmetic():
    def f(x):
        m = float(x.mean())
        return x - m

    check(f, TWO_BATCHES, spec([None, 4]))


def test_item_in_arithmetic():
    def f(x):
        return x * x.max().item()

    check(f, TWO_BATCHES, spec([None, 4]))


def test_argmax_returns_int64():
    def f(x):
        return paddle.argmax(x, axis=-1)

    check_outputs(f, TWO_BATCHES, spec([None, 4]))


def test_comparison_returns_bool():
    def f(x, y):
        return x > y, paddle.equal(x, y)

    check_outputs(f, [(randn(2, 4), randn(2, 4, seed=1))], spec([None, 4], [None, 4]))


def test_integer_input_arithmetic():
    def f(ids):
        return (ids * 2 + 1) % 7

    check_outputs(f, [ints(3, 4), ints(2, 4, seed=1)], spec([None, 4], dtype="int64"))


def test_floor_divide_of_ints():
    def f(ids):
        return ids // 3, paddle.floor_divide(ids, paddle.full_like(ids, 2))

    check_outputs(f, [ints(3, 4, low=1)], spec([None, 4], dtype="int64"))


def test_dtype_promotion_int_times_float():
    def f(x, ids):
        return x * paddle.cast(ids, x.dtype)

    check(f, [(randn(2, 4), ints(2, 4))], [paddle.static.InputSpec([None, 4]),
                                          paddle.static.InputSpec([None, 4], "int64")])


def test_unsqueeze_and_squeeze():
    def f(x):
        y = paddle.unsqueeze(x, axis=1)
        return paddle.squeeze(y * 2, axis=1)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_transpose_and_matmul():
    def f(x):
        return paddle.matmul(x, x, transpose_y=True)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_broadcast_with_expand():
    def f(x, b):
        return x + b.expand([x.shape[0], 4])

    check(f, [(randn(3, 4), randn(1, 4, seed=1))], spec([None, 4], [1, 4]))


def test_where_with_scalar_fill():
    def f(x):
        return paddle.where(x > 0, x, paddle.full_like(x, 0.01) * x)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_ones_like_and_full_like():
    def f(x):
        return paddle.ones_like(x) * 2 + paddle.full_like(x, 3.0) * x

    check(f, TWO_BATCHES, spec([None, 4]))


def test_shape_used_after_a_branch():
    def f(x):
        if x.mean() > 0:
            x = x * 2
        return paddle.reshape(x, [x.shape[0] * 2, 2])

    check(f, [randn(2, 4, shift=1), randn(3, 4, shift=-1)], spec([None, 4]))


def test_dim_and_ndim():
    def f(x):
        if x.ndim == 2 and x.dim() == 2:
            return x * 2
        return x

    check(f, TWO_BATCHES, spec([None, 4]), every_line=False)  # a Python condition


def test_gather_rows_by_index_input():
    def f(x, idx):
        return paddle.gather(x, idx)

    check(f, [(randn(5, 4), np.array([4, 0, 2], "int64"))],
          [paddle.static.InputSpec([None, 4]), paddle.static.InputSpec([None], "int64")])


def test_index_with_tensor_from_argmax():
    def f(x):
        k = paddle.argmax(x.sum(axis=1))
        return x[k]

    check(f, TWO_BATCHES, spec([None, 4]))


def test_concat_along_the_symbolic_axis():
    def f(x):
        return paddle.concat([x, x * 2], axis=0).mean(axis=0)

    check(f, TWO_BATCHES, spec([None, 4]))


def test_masked_assignment():
    def f(x):
        y = x.clone()
        y[x < 0] = 0.0
        return y

    check(f, TWO_BATCHES, spec([None, 4]))


def test_setitem_slice():
    def f(x):
        y = paddle.zeros_like(x)
        y[:, 0] = x[:, 1]
        return y

    check(f, TWO_BATCHES, spec([None, 4]))
