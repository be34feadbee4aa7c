"""Every eager Tensor operation runs a registered op: the value a call returns is the
array a registered op's kernel produced (seen through dispatch's observer hook),
and the same calls traced by irflow.compile become IR ops that compute the same
values."""
import contextlib

import numpy as np
import pytest

import irflow as paddle
from irflow.dispatch import state
from irflow.ir.registry import is_registered

X = np.random.default_rng(0).uniform(0.5, 2.0, (3, 4)).astype(np.float32)


@contextlib.contextmanager
def observed_ops():
    seen = []
    saved, state.observer = state.observer, lambda name, loc, results: seen.append(
        (name, results))
    try:
        yield seen
    finally:
        state.observer = saved


CALLS = {
    "add": lambda x: x + 1.0, "rsub": lambda x: 2 - x, "mul": lambda x: x * x,
    "div": lambda x: x / 3, "pow": lambda x: x ** 2, "matmul": lambda x: x @ x.T,
    "neg": lambda x: -x, "abs": paddle.abs, "exp": paddle.exp, "log": paddle.log,
    "tanh": paddle.tanh, "sqrt": paddle.sqrt, "isnan": paddle.isnan, "isinf": paddle.isinf,
    "gt": lambda x: x > 1, "eq": lambda x: x == x, "any": lambda x: paddle.any(x > 1),
    "all": lambda x: paddle.all(x > 0), "where": lambda x: paddle.where(x > 1, x, 0.0),
    "sum": lambda x: paddle.sum(x, axis=1), "mean": paddle.mean,
    "max": lambda x: paddle.max(x, 0, keepdim=True), "min": paddle.min, "prod": paddle.prod,
    "argmax": lambda x: paddle.argmax(x, axis=1), "reshape": lambda x: x.reshape([4, 3]),
    "transpose": lambda x: paddle.transpose(x, [1, 0]),
    "concat": lambda x: paddle.concat([x, x], axis=1), "stack": lambda x: paddle.stack([x, x]),
    "astype": lambda x: x.astype("int32"), "getitem": lambda x: x[1:, ::-2],
    "gather": lambda x: x[:, paddle.to_tensor([3, 0])], "zeros_like": paddle.zeros_like,
    "full": lambda x: paddle.full([2, 2], 3.0), "ones": lambda x: paddle.ones([3]),
    "arange": lambda x: paddle.arange(5), "randn": lambda x: paddle.randn([2]),
    "rand": lambda x: paddle.rand([2]),
}


@pytest.mark.parametrize("name", CALLS)
def test_results_come_from_registered_op_kernels(name):
    x = paddle.to_tensor(X)
    with observed_ops() as seen:
        out = CALLS[name](x)
    assert seen, f"{name} ran no op"
    assert all(is_registered(op) for op, _ in seen)
    last_op, results = seen[-1]
    assert any(r is out._value for r in results), f"{name}'s value is not {last_op}'s result"


def test_setitem_runs_registered_ops():
    x = paddle.to_tensor(X)
    with observed_ops() as seen:
        x[0, 1:] = 5.0
    assert [op for op, _ in seen][-1] == "set_slice" and seen[-1][1][0] is x._value


def traced_program(x, i):
    y = x[1:, ::-1] * 2 + paddle.exp(x).sum(axis=0)
    y[0] = 3.0
    y[y > 2.5] = 0.0
    v = x * 1.5
    v[:, i] = 5.0
    scores = paddle.matmul(x, paddle.transpose(x, [1, 0]))
    return (paddle.concat([y, paddle.where(y > 0, y, -y)]), x[:, i], x[i, i], v,
            paddle.argmax(scores, axis=1), paddle.mean(paddle.tanh(x)),
            paddle.stack([paddle.sqrt(x), paddle.log(x)], axis=-1).reshape([3, 8]))


def test_traced_calls_compute_what_eager_calls_compute():
    x, i = paddle.to_tensor(X), paddle.to_tensor([2, 0])
    compiled = paddle.compile(traced_program)
    for got, expected in zip(compiled(x, i), traced_program(x, i)):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    names = {op.name for op in compiled.ir.walk()}
    assert {"slice", "set_slice", "select", "gather", "put_along_axis", "matmul"} <= names
