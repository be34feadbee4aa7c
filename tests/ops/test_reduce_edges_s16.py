"""`max_or_neg_inf` (irflow.ops.reduce), the shift softmax and logsumexp subtract over
an axis whose size is symbolic: `max` where the axis has elements, -inf over an empty
one (where `max` refuses it); its type rule, kernel, text form and a saved program
that reaches it with an empty axis."""
import re

import numpy as np
import pytest

import irflow
from irflow.codegen import run
from irflow.errors import ShapeError
from irflow.ir import Module, TensorType, function, lookup, parse, print_module
from irflow.static import InputSpec
from tests.support.opcheck import apply_op


def infer(types, **attrs):
    opdef = lookup("max_or_neg_inf")
    return opdef.result_types(types, opdef.complete_attrs(attrs, types))[0]


def test_type_rule_takes_floats_and_empty_axes():
    assert str(infer([TensorType("f32", ("N", "M"))], axis=1, keepdim=True)) == "f32[N,1]"
    assert str(infer([TensorType("f64", (0, 3))], axis=0)) == "f64[3]"
    assert str(infer([TensorType("f16", ("N", 3))])) == "f16"
    with pytest.raises(ShapeError, match=re.escape("must be float typed, got i32[2]")):
        infer([TensorType("i32", (2,))])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("axis, keepdim", [(None, False), ((1,), True), ((0, 2), False)])
def test_kernel_is_max_where_the_axis_has_elements(dtype, axis, keepdim):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
    x[1, 2, 3] = np.inf
    x[0, 1, 0] = np.nan
    (got,) = apply_op("max_or_neg_inf", [x], axis=axis, keepdim=keepdim)
    (want,) = apply_op("max", [x], axis=axis, keepdim=keepdim)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_kernel_is_neg_inf_over_an_empty_axis():
    x = np.zeros((2, 0, 3), np.float32)
    (got,) = apply_op("max_or_neg_inf", [x], axis=(1,), keepdim=True)
    np.testing.assert_array_equal(got, np.full((2, 1, 3), -np.inf, np.float32))
    (whole,) = apply_op("max_or_neg_inf", [x])
    assert whole.shape == () and whole == -np.inf
    (none,) = apply_op("max_or_neg_inf", [np.zeros((0, 3), np.float32)], axis=(1,))
    assert none.shape == (0,)


def test_a_symbolic_axis_is_neg_inf_when_empty_at_run_time():
    fn = function("f", [TensorType("f32", ("N", "M"))],
                  lambda b, x: b.max_or_neg_inf(x, axis=(1,), keepdim=True))
    np.testing.assert_array_equal(run(fn, np.zeros((2, 0), np.float32))[0],
                                  np.full((2, 1), -np.inf, np.float32))
    np.testing.assert_array_equal(run(fn, np.array([[1, 5, 2]], np.float32))[0], [[5]])


def test_it_prints_and_parses_back_and_is_not_differentiable():
    fn = function("f", [TensorType("f32", ("N", 4))],
                  lambda b, x: b.max_or_neg_inf(x, axis=-1, keepdim=True))
    text = print_module(Module([fn]))
    assert "max_or_neg_inf %0 {axis=[1], keepdim=true} : f32[N,1]" in text
    assert print_module(parse(text)) == text
    assert lookup("max_or_neg_inf").nondiff


def test_a_saved_softmax_over_a_symbolic_axis_runs_on_an_empty_one(tmp_path):
    class Scores(irflow.nn.Layer):
        def forward(self, x):
            return irflow.nn.functional.softmax(x, axis=0), irflow.logsumexp(x, axis=0)

    path = str(tmp_path / "scores")
    irflow.jit.save(Scores(), path, input_spec=[InputSpec([None, 3], "float32")])
    loaded = irflow.jit.load(path)
    probs, lse = loaded(irflow.zeros([0, 3]))
    assert probs.shape == [0, 3]
    np.testing.assert_array_equal(lse.numpy(), np.full(3, -np.inf, np.float32))
    x = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 0.5]], np.float32)
    probs, lse = loaded(irflow.to_tensor(x))
    np.testing.assert_allclose(probs.numpy(), np.exp(x) / np.exp(x).sum(0), rtol=1e-6)
    np.testing.assert_allclose(lse.numpy(), np.log(np.exp(x).sum(0)), rtol=1e-6)
