"""The NumPy interpreter on nested control flow, checked against plain Python+NumPy."""
import numpy as np
import pytest

from irflow.codegen import run
from irflow.errors import InputError
from irflow.ir import parse

COLLATZ_LIKE = """\
func @f(%x: f32[N,3], %limit: f32) -> (f32[N,3], i64) {
  %i0 = const {value=0} : i64
  %r, %steps = while %limit, %x, %i0 : (f32[N,3], i64) {
  ^cond(%lim: f32, %v: f32[N,3], %i: i64):
    %a = abs %v : f32[N,3]
    %m = max %a : f32
    %k = lt %m, %lim : bool
    condition %k
  } {
  ^body(%lim: f32, %v: f32[N,3], %i: i64):
    %s = sum %v : f32
    %zero = const {value=0.0} : f32
    %p = gt %s, %zero : bool
    %v1 = cond %p, %v : f32[N,3] {
    ^then(%u: f32[N,3]):
      %two = const {value=2.0} : f32
      %w = mul %u, %two : f32[N,3]
      yield %w
    } {
    ^else(%u: f32[N,3]):
      %three = const {value=-3.0} : f32
      %w = mul %u, %three : f32[N,3]
      yield %w
    }
    %one = const {value=1} : i64
    %i1 = add %i, %one : i64
    yield %v1, %i1
  }
  return %r, %steps
}
"""


def _reference(x, limit):
    steps = 0
    while np.abs(x).max() < limit:
        x = x * 2 if x.sum() > 0 else x * -3
        steps += 1
    return x, steps


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_nested_in_while_matches_python(n, sign):
    module = parse(COLLATZ_LIKE)
    x = (sign * np.random.default_rng(n).random((n, 3)) + 0.01).astype(np.float32)
    limit = np.float32(50.0)
    out, steps = run(module, x, limit)
    ref, ref_steps = _reference(x, limit)
    assert steps == ref_steps and steps.dtype == np.int64
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_inputs_are_checked_against_the_signature():
    module = parse(COLLATZ_LIKE)
    with pytest.raises(InputError, match=r"argument 0 \(%x\): expected shape \[N, 3\], got \[2, 4\]"):
        run(module, np.zeros((2, 4), np.float32), np.float32(1))
    with pytest.raises(InputError, match="expected dtype float32, got float64"):
        run(module, np.zeros((2, 3)), np.float32(1))
    with pytest.raises(InputError, match="takes 2 argument"):
        run(module, np.zeros((2, 3), np.float32))


def test_a_symbol_must_mean_one_size_per_call():
    module = parse("func @f(%x: f32[N], %y: f32[N]) -> f32[N] {\n"
                   "  %z = add %x, %y : f32[N]\n  return %z\n}\n")
    np.testing.assert_allclose(run(module, np.ones(3, np.float32), np.ones(3, np.float32))[0], 2)
    with pytest.raises(InputError, match=r"argument 1 \(%y\): expected shape \[N\], got \[4\]"):
        run(module, np.ones(3, np.float32), np.ones(4, np.float32))


def test_while_that_never_runs_returns_its_initial_values():
    module = parse(COLLATZ_LIKE)
    x = np.full((2, 3), 100.0, np.float32)
    out, steps = run(module, x, np.float32(1.0))
    assert steps == 0
    np.testing.assert_array_equal(out, x)
