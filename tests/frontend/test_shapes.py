"""Symbolic sizes in converted code: `x.shape` of a traced tensor keeps unknown dims
as run-time values, so loops and shape arguments built from it work for every size."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
from irflow.static import InputSpec


def compiled_equals_eager(fn, spec, inputs):
    compiled = paddle.compile(fn, input_spec=spec)
    for x in inputs:
        np.testing.assert_allclose(compiled(x).numpy(), fn(x).numpy(), rtol=1e-6)
    return compiled


def test_range_over_a_symbolic_dim_loops_the_right_number_of_times():
    def f(x):
        total = paddle.zeros([3])
        for i in range(x.shape[0]):
            total = total + x[i] * (i + 1.0)
        return total

    compiled = compiled_equals_eager(f, [InputSpec([None, 3])],
                                     [paddle.randn([n, 3]) for n in (1, 2, 5)])
    assert any(op.name == "while" for op in compiled.ir.walk())


def test_shape_arguments_built_from_symbolic_dims():
    def f(x):
        batch = x.shape[0]
        flat = paddle.reshape(x, [batch, -1])
        return flat + paddle.ones([batch, x.shape[1] * x.shape[2]])

    compiled = compiled_equals_eager(f, [InputSpec([None, 2, 3])],
                                     [paddle.randn([n, 2, 3]) for n in (1, 4)])
    assert "f32[N,6]" in str(compiled.ir)


def test_static_dims_stay_python_ints():
    class Head(nn.Layer):
        def forward(self, x):
            assert x.shape[1] == 4  # a static dim: a Python int, checked at conversion
            return x.reshape([-1, x.shape[1] // 2, 2])

    compiled_equals_eager(Head(), [InputSpec([None, 4])], [paddle.randn([3, 4])])
