"""Properties of generated programs (tests/support/programs.py): the text form
round-trips exactly, the verifier accepts every program and its parsed copy, and the
interpreter computes what an independent NumPy reference computes."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from irflow.codegen import run
from irflow.ir import parse, verify
from tests.support.programs import programs, seeds

TOLERANCES = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-12)}
JUMP_MARGIN = {"float32": 1e-4, "float64": 1e-9}

any_dtype = st.sampled_from(["float32", "float64"])


@given(st.data(), any_dtype)
def test_text_round_trips_exactly_and_verifies(data, dtype):
    program = data.draw(programs(dtype=dtype))
    text = str(program.module)
    parsed = parse(text)
    assert str(parsed) == text
    verify(program.module)
    verify(parsed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data(), seed=seeds)
def test_interpreter_agrees_with_the_numpy_reference(dtype, data, seed):
    program = data.draw(programs(dtype=dtype))
    parsed = parse(str(program.module))
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        expected = program.evaluate(*inputs)
        assume(expected.jump_margin > JUMP_MARGIN[dtype])
        got = run(program.module, *inputs)
        assert len(got) == len(expected.outputs)
        for g, want in zip(got, expected.outputs):
            np.testing.assert_allclose(g, want, strict=True, err_msg=f"N={n}",
                                       **TOLERANCES[dtype])
        for g, again in zip(got, run(parsed, *inputs)):
            np.testing.assert_array_equal(again, g, strict=True,
                                          err_msg="the parsed copy computes otherwise")


def test_erf_of_a_scalar():
    module = parse("""
func @f(%x: f32) -> f32 {
  %y = erf %x : f32
  return %y
}""")
    (y,) = run(module, np.float32(0.5))
    np.testing.assert_allclose(y, np.float32(0.5204999), rtol=1e-6, strict=True)
