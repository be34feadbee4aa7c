"""Random ops (irflow.ops.random): determinism per seed, the documented generator,
dtypes and (symbolic) shapes, moments with fixed seeds, and the type rules."""
import numpy as np
import pytest

from irflow.codegen import run
from irflow.errors import ShapeError
from irflow.ir import (Builder, Effect, Function, Module, TensorType, dtypes, function, lookup,
                       parse, verify)
from tests.support.opcheck import apply_op

SEED = TensorType("i64", ())


def draw(name, seed, **attrs):
    (out,) = apply_op(name, [np.int64(seed)], **attrs)
    return out


def infer(name, types, **attrs):
    fn = Function("f", types)
    op = Builder(fn.block).create(name, list(fn.args), attrs)
    return op.results[0].type, op.attrs


@pytest.mark.parametrize("name", ["uniform", "normal"])
def test_same_seed_same_values_and_other_seeds_differ(name):
    first = draw(name, 7, shape=(4, 5))
    np.testing.assert_array_equal(first, draw(name, 7, shape=(4, 5)))
    for other in (8, -7, 2**40):
        assert not np.any(first == draw(name, other, shape=(4, 5)))


@pytest.mark.parametrize("name", ["uniform", "normal"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4), (0, 5)])
def test_dtype_and_shape(name, shape):
    assert draw(name, 1, shape=shape).dtype == np.float32
    out = draw(name, 1, shape=shape, dtype="float64")
    assert out.dtype == np.float64 and out.shape == shape


def test_values_come_from_numpy_default_rng():
    """The documented generator: default_rng(seed), drawn in float64; float32 results
    are the float64 ones rounded; a negative seed is its 64-bit pattern."""
    expected = np.random.default_rng(3).uniform(-2.0, 5.0, (6, 7))
    np.testing.assert_array_equal(
        draw("uniform", 3, shape=(6, 7), min=-2.0, max=5.0, dtype="float64"), expected)
    np.testing.assert_array_equal(draw("uniform", 3, shape=(6, 7), min=-2.0, max=5.0),
                                  expected.astype(np.float32))
    expected = np.random.default_rng(2**64 - 5).normal(1.5, 0.5, (6, 7))
    np.testing.assert_array_equal(
        draw("normal", -5, shape=(6, 7), mean=1.5, std=0.5, dtype="float64"), expected)


def test_uniform_range_and_moments():
    out = draw("uniform", 11, shape=(200_000,), min=2.0, max=5.0, dtype="float64")
    assert out.min() >= 2.0 and out.max() < 5.0
    assert out.mean() == pytest.approx(3.5, abs=0.01)
    assert out.var() == pytest.approx(9 / 12, rel=0.01)
    default = draw("uniform", 12, shape=(200_000,))
    assert default.min() >= -1.0 and default.max() <= 1.0
    assert default.mean() == pytest.approx(0.0, abs=0.01)
    assert default.var() == pytest.approx(4 / 12, rel=0.01)


def test_normal_moments():
    out = draw("normal", 13, shape=(400, 500), mean=-3.0, std=2.0)
    assert out.mean() == pytest.approx(-3.0, abs=0.02)
    assert out.std() == pytest.approx(2.0, rel=0.01)
    assert np.mean(np.abs(out + 3.0) < 2.0) == pytest.approx(0.6827, abs=0.005)
    default = draw("normal", 14, shape=(200_000,))
    assert default.mean() == pytest.approx(0.0, abs=0.01)
    assert default.std() == pytest.approx(1.0, rel=0.01)
    assert np.all(draw("normal", 15, shape=(10,), mean=4.0, std=0.0) == 4.0)


def test_symbolic_shapes_are_bound_at_run_time():
    types = [SEED, TensorType("f32", ("N", 3))]

    def body(b, seed, x):
        return b.uniform(seed, shape=("N", 3)), b.normal(seed, shape=("N*2",), dtype="f64")

    module = Module([function("f", types, body)])
    verify(module)
    assert [str(r.type) for r in module.main.block.ops[-1].operands] == ["f32[N,3]",
                                                                        "f64[N*2]"]
    assert str(parse(str(module))) == str(module)
    for n in (1, 5):
        u, z = run(module, np.int64(9), np.zeros((n, 3), np.float32))
        assert u.shape == (n, 3) and z.shape == (2 * n,)
        np.testing.assert_array_equal(u, draw("uniform", 9, shape=(n, 3)))


def test_canonical_attributes_and_declaration():
    out, attrs = infer("uniform", [SEED], shape=[2, "N"], min=0, max=3)
    assert str(out) == "f32[2,N]"
    assert attrs == {"shape": (2, "N"), "dtype": dtypes.float32, "min": 0.0, "max": 3.0}
    assert isinstance(attrs["min"], float)
    _, attrs = infer("normal", [SEED], shape=(4,), dtype="f64")
    assert attrs == {"shape": (4,), "dtype": dtypes.float64, "mean": 0.0, "std": 1.0}
    for name in ("uniform", "normal"):
        opdef = lookup(name)
        assert opdef.effect is Effect.RANDOM and opdef.nondiff and opdef.vjp is None
        assert opdef.shape_attrs == ("shape",)


@pytest.mark.parametrize("name, seed_type, attrs, message", [
    ("uniform", TensorType("f32", ()), {"shape": (2,)}, "the seed must be an i64 scalar, got f32"),
    ("normal", TensorType("i64", (1,)), {"shape": (2,)},
     "the seed must be an i64 scalar, got i64[1]"),
    ("normal", TensorType("i32", ()), {"shape": (2,)}, "the seed must be an i64 scalar, got i32"),
    ("uniform", SEED, {"shape": (2,), "dtype": "int64"}, "dtype must be a float type, got int64"),
    ("normal", SEED, {"shape": (2,), "dtype": "float8"}, "unknown dtype 'float8'"),
    ("uniform", SEED, {"shape": (2,), "min": 1.0, "max": 1.0},
     "min must be less than max, got min=1.0 and max=1.0"),
    ("uniform", SEED, {"shape": (2,), "max": "1"}, "max must be a number, got '1'"),
    ("normal", SEED, {"shape": (2,), "std": -1.0}, "std must be non-negative, got -1.0"),
    ("normal", SEED, {"shape": (2, -1)}, "a dim must be non-negative, got -1"),
    ("normal", SEED, {"shape": 3}, "shape must be a list of dims, got 3"),
    ("uniform", SEED, {}, "uniform requires the attribute 'shape'"),
])
def test_rejects_bad_seeds_and_attributes(name, seed_type, attrs, message):
    with pytest.raises(ShapeError) as info:
        infer(name, [seed_type], **attrs)
    assert info.value.message.startswith(f"{name}: ")
    assert message in info.value.message
