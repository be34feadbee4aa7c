"""Fixes from the s13 hunts: bfloat16 comparisons and clip, softmax / log_softmax /
logsumexp over an empty axis, float64 digamma accuracy, an optimizer's state dict
right after loading, and the types of `paddle.summary`'s counts."""
import contextlib
import io
import math

import numpy as np
import pytest

import irflow as paddle

F = paddle.nn.functional


# ---------------------------------------------------------------- bfloat16 comparisons

def _bf16(values):
    return paddle.to_tensor(values, dtype="float32").astype("bfloat16")


def _as_bf16_number(v: float) -> float:
    """v rounded to bfloat16, as a Python float: a scalar meets a bfloat16 tensor in
    its dtype, so this is the number it is compared with."""
    return _bf16([v]).astype("float32").item()


@pytest.mark.parametrize("op", ["__gt__", "__ge__", "__lt__", "__le__", "__eq__", "__ne__"])
@pytest.mark.parametrize("scalar", [1, 1.5, 1.2, -2])
def test_bfloat16_compares_with_a_scalar_rounded_to_bfloat16(op, scalar):
    x = _bf16([1.5, -2.0, 3.0, 1.2])
    values = x.astype("float32").numpy()
    out = getattr(x, op)(scalar)
    assert out.dtype == paddle.bool
    np.testing.assert_array_equal(
        out.numpy(), getattr(values, op)(np.float32(_as_bf16_number(scalar))))


def test_bfloat16_compares_with_bfloat16_tensors_and_functions():
    x = _bf16([1.5, -2.0, 3.0])
    values = x.astype("float32").numpy()
    np.testing.assert_array_equal((x <= x[0]).numpy(), values <= values[0])
    np.testing.assert_array_equal((x < x).numpy(), [False] * 3)
    np.testing.assert_array_equal(paddle.equal(x, _bf16([1.5, 0, 3])).numpy(),
                                  [True, False, True])
    np.testing.assert_array_equal(paddle.greater_equal(x, 1.5).numpy(), values >= 1.5)


def test_bfloat16_compare_traced():
    f = paddle.jit.to_static(lambda x: x > 1)
    x = _bf16([1.5, -2.0, 3.0])
    np.testing.assert_array_equal(f(x).numpy(), [True, False, True])


@pytest.mark.parametrize("low,high", [(-1, 1), (0, None), (None, 1.25), (-1.1, 1.1)])
def test_bfloat16_clip_keeps_bfloat16_with_bounds_rounded_to_it(low, high):
    x = _bf16([1.5, -2.0, 3.0, 0.5])
    out = paddle.clip(x, low, high)
    assert out.dtype == paddle.bfloat16
    bound = (lambda b: None if b is None else _as_bf16_number(b))
    expected = np.clip(x.astype("float32").numpy(), bound(low), bound(high))
    np.testing.assert_array_equal(out.astype("float32").numpy(), expected)


# ---------------------------------------------------------------- empty softmax axis

@pytest.mark.parametrize("shape,axis", [([0, 4], 0), ([2, 0], 1), ([2, 0, 3], 1), ([0], 0)])
def test_softmax_and_log_softmax_over_an_empty_axis_are_empty(shape, axis):
    x = paddle.zeros(shape)
    for fn in (F.softmax, F.log_softmax):
        out = fn(x, axis=axis)
        assert out.shape == shape and out.dtype == paddle.float32


@pytest.mark.parametrize("shape,axis,keepdim", [([0, 4], 0, False), ([2, 0], 1, True),
                                                ([2, 0, 3], 1, False), ([0], 0, False),
                                                ([2, 0], None, False), ([2, 0], [0, 1], True)])
def test_logsumexp_over_an_empty_axis_is_minus_inf(shape, axis, keepdim):
    """log of an empty sum of exponentials: log(0) = -inf, shaped as any reduction."""
    x = paddle.zeros(shape, dtype="float64")
    out = paddle.logsumexp(x, axis=axis, keepdim=keepdim)
    expected = np.sum(np.zeros(shape), axis=None if axis is None else tuple(np.atleast_1d(axis)),
                      keepdims=keepdim)
    assert out.shape == list(expected.shape) and out.dtype == paddle.float64
    np.testing.assert_array_equal(out.numpy(), np.full(expected.shape, -np.inf))


def test_empty_axis_gradients_are_empty():
    x = paddle.zeros([2, 0])
    x.stop_gradient = False
    (paddle.logsumexp(x, axis=1).sum() + F.softmax(x, axis=1).sum()).backward()
    assert x.grad.shape == [2, 0]


def test_empty_axis_compiled_with_a_static_shape():
    spec = [paddle.static.InputSpec([0, 4], "float32")]
    f = paddle.jit.to_static(lambda x: (F.softmax(x, axis=0), paddle.logsumexp(x, axis=0)),
                             input_spec=spec)
    soft, lse = f(paddle.zeros([0, 4]))
    assert soft.shape == [0, 4]
    np.testing.assert_array_equal(lse.numpy(), [-np.inf] * 4)


# ---------------------------------------------------------------- digamma accuracy

_EULER = 0.57721566490153286061


def _psi_half_integer(n: int) -> float:
    """psi(n + 1/2) = -gamma - 2 ln 2 + sum_{k=1..n} 2 / (2k - 1)."""
    return -_EULER - 2 * math.log(2) + math.fsum(2 / (2 * k - 1) for k in range(1, n + 1))


def _psi_integer(n: int) -> float:
    """psi(n) = -gamma + H_(n-1)."""
    return -_EULER + math.fsum(1 / k for k in range(1, n))


_CLOSED_FORMS = [
    (1.0, _psi_integer(1)), (2.0, _psi_integer(2)), (6.0, _psi_integer(6)),
    (9.0, _psi_integer(9)),
    (0.5, _psi_half_integer(0)), (1.5, _psi_half_integer(1)), (6.5, _psi_half_integer(6)),
    (0.25, -_EULER - math.pi / 2 - 3 * math.log(2)),
    (0.75, -_EULER + math.pi / 2 - 3 * math.log(2)),
    # reflection: psi(1/2 - n) = psi(1/2 + n), as cot(pi (n + 1/2)) = 0
    (-0.5, _psi_half_integer(1)), (-2.5, _psi_half_integer(3)),
]


@pytest.mark.parametrize("x,expected", _CLOSED_FORMS)
def test_digamma_float64_is_exact_to_rounding_at_closed_forms(x, expected):
    """Within a few float64 ulps of the terms psi is summed from (about 3 in size):
    the recurrence's sum of 1/x and the series' logarithm cancel near psi's root."""
    out = paddle.digamma(paddle.to_tensor([x], dtype="float64")).item()
    assert abs(out - expected) <= 1e-15 * max(abs(expected), 1)


@pytest.mark.parametrize("x", [-16.9994, -3.0000001, -0.9999])
def test_digamma_near_negative_poles_follows_the_reflection(x):
    """psi(x) = psi(1 - x) - pi / tan(pi r), with r = x less its nearest integer
    (exact): psi(1 - x) is at positive arguments, checked above."""
    r = x - round(x)
    pair = paddle.digamma(paddle.to_tensor([x, 1 - x], dtype="float64")).numpy()
    expected = pair[1] - math.pi / math.tan(math.pi * r)
    assert abs(pair[0] - expected) <= 1e-15 * abs(expected)


def test_digamma_at_the_poles_and_signed_zeros():
    x = paddle.to_tensor([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan], dtype="float64")
    np.testing.assert_array_equal(paddle.digamma(x).numpy(),
                                  [-np.inf, np.inf, np.nan, np.nan, np.inf, np.nan, np.nan])


# ---------------------------------------------------------------- optimizer state dict

def _adam_state_after_one_step():
    paddle.seed(0)
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters())
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()
    opt.clear_grad()
    return lin, {k: v.numpy().copy() for k, v in opt.state_dict().items()}


def test_state_dict_right_after_loading_lists_the_loaded_state():
    lin, saved = _adam_state_after_one_step()
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters())
    opt.set_state_dict(saved)
    again = opt.state_dict()
    assert sorted(again) == sorted(saved)
    for name, value in again.items():
        np.testing.assert_array_equal(np.asarray(value), saved[name])


def test_saving_again_after_loading_resumes_as_the_original():
    lin, saved = _adam_state_after_one_step()
    weight = lin.weight.numpy().copy()
    steps = []
    for state in (saved, None):
        lin.weight.set_value(weight)
        opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters())
        if state is None:  # a checkpoint saved right after loading the first one
            loader = paddle.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters())
            loader.set_state_dict(saved)
            state = {k: np.asarray(v).copy() for k, v in loader.state_dict().items()}
        opt.set_state_dict(state)
        lin(paddle.ones([1, 2])).sum().backward()
        opt.step()
        opt.clear_grad()
        steps.append(lin.weight.numpy().copy())
    np.testing.assert_array_equal(steps[0], steps[1])


# ---------------------------------------------------------------- summary types

def _summary(net, size):
    with contextlib.redirect_stdout(io.StringIO()):
        return paddle.summary(net, size)


def test_summary_counts_are_numpy_int64_as_paddle_counts_them_with_np_prod():
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.ReLU(), paddle.nn.Linear(3, 2))
    net[0].weight.stop_gradient = True
    totals = _summary(net, (1, 4))
    assert totals == {"total_params": 4 * 3 + 3 + 3 * 2 + 2, "trainable_params": 3 + 3 * 2 + 2}
    assert all(type(v) is np.int64 for v in totals.values())

