"""The generated max pooling and its gradient (`irflow.codegen.llvm.pool`) against the
registry's NumPy kernels, bit for bit (a maximum is exact, and each window's
cotangent lands, unchanged, on its first maximum; where windows overlap, a position
may sum several windows' cotangents, in another order than NumPy's: to float
rounding there): every geometry of kernel, stride,
padding and ceil_mode, ties, NaN and -inf, both float dtypes, an output buffer, the
planes split across threads, and the arrays it leaves to NumPy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.codegen.llvm.pool import Pool
from irflow.ir import Module, TensorType, function
from irflow.ir.registry import lookup
from tests.support.threads import with_threads
from tests.ops.test_conv_pool import pool_geometry


def pool_ops(compiler, x_shape, attrs, dtype="f32"):
    """The generated kernels of max_pool2d and max_pool2d_grad for inputs of
    `x_shape` (a symbolic batch), and the ops."""
    t = TensorType(dtype, ["N", *x_shape[1:]])

    def body(b, x):
        y = b.max_pool2d(x, **attrs)
        return y, b.max_pool2d_grad(x, y, **attrs)
    module = Module([function("f", [t], body)])
    ops = {op.name: op for op in module.walk() if op.name.startswith("max_pool2d")}
    lowering = LLVMLowering(compiler, min_elements=0)
    return {name: lowering.kernel(op) for name, op in ops.items()}, ops


def numpy_of(op):
    kernel = lookup(op.name).kernel
    return lambda *arrays: kernel(*arrays, **op.attrs)


@given(pool_geometry(), st.integers(0, 2**16), st.sampled_from(["f32", "f64"]))
def test_every_geometry_against_numpy(compiler, geometry, seed, dtype):
    x_shape, attrs = geometry
    kernels, ops = pool_ops(compiler, x_shape, attrs, dtype)
    r = np.random.default_rng(seed)
    x = r.integers(0, 4, x_shape).astype(np.float32 if dtype == "f32" else np.float64)  # ties
    y = kernels["max_pool2d"](x)
    np.testing.assert_array_equal(y, numpy_of(ops["max_pool2d"])(x))
    g = r.standard_normal(y.shape).astype(x.dtype)
    got = kernels["max_pool2d_grad"](x, g)
    want = numpy_of(ops["max_pool2d_grad"])(x, g)
    if all(s >= k for s, k in zip(attrs["stride"], attrs["kernel_size"])):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_nan_and_infinities(compiler):
    attrs = {"kernel_size": (2, 2), "stride": (2, 2), "padding": (1, 1, 1, 1)}
    x = np.array([[[[1.0, np.nan, 3.0, 0.0], [np.nan, 2.0, -np.inf, -2.0],
                    [-np.inf, -np.inf, np.inf, 5.0], [0.0, -1.0, np.nan, 7.0]]]], np.float32)
    kernels, ops = pool_ops(compiler, x.shape, attrs)
    np.testing.assert_array_equal(kernels["max_pool2d"](x), numpy_of(ops["max_pool2d"])(x))
    g = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3) + 1
    np.testing.assert_array_equal(kernels["max_pool2d_grad"](x, g),
                                  numpy_of(ops["max_pool2d_grad"])(x, g))


def test_an_output_buffer_and_arrays_left_to_numpy(compiler, monkeypatch):
    attrs = {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 1, 1, 1)}
    kernels, ops = pool_ops(compiler, (2, 3, 9, 11), attrs)
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 11)).astype(np.float32)
    want = numpy_of(ops["max_pool2d"])(x)
    out = np.full(want.shape, np.nan, np.float32)
    assert kernels["max_pool2d"](x, out=out) is out
    np.testing.assert_array_equal(out, want)
    runs = []
    original = Pool.run
    monkeypatch.setattr(Pool, "run", lambda self, *a: runs.append(original(self, *a)) or runs[-1])
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(kernels["max_pool2d"](strided), want)
    np.testing.assert_array_equal(kernels["max_pool2d"](x.astype(np.float64)),
                                  numpy_of(ops["max_pool2d"])(x.astype(np.float64)))
    assert runs == [None, None]


def test_planes_split_across_threads_give_one_threads_bits(compiler, parts):
    attrs = {"kernel_size": (2, 2), "stride": (2, 2), "padding": (0, 0, 0, 0)}
    kernels, _ = pool_ops(compiler, (5, 4, 8, 8), attrs)
    x = np.random.default_rng(2).standard_normal((5, 4, 8, 8)).astype(np.float32)
    g = np.ones((5, 4, 4, 4), np.float32)

    def both():
        return [kernels["max_pool2d"](x), kernels["max_pool2d_grad"](x, g)]
    one = both()
    for got, want in zip(with_threads(3, both), one):
        np.testing.assert_array_equal(got, want)
    assert parts == [1, 1, 3, 3]


@pytest.mark.parametrize("dtype", ["f16"])
def test_other_dtypes_get_no_code(compiler, dtype):
    kernels, _ = pool_ops(compiler, (1, 1, 4, 4), {"kernel_size": (2, 2)}, dtype)
    assert kernels == {"max_pool2d": None, "max_pool2d_grad": None}
