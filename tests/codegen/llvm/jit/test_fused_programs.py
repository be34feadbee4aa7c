"""Differential tests of the LLVM backend on random programs
(`tests/support/programs.py`), control flow included: each program goes through the
compile pipeline with ``fuse``, then runs on a plan with the LLVM lowering (fused
kernels, compiled elementwise ops, NumPy kernels for the rest) and on the
interpreter, the reference semantics, before any pass."""
import numpy as np
from hypothesis import assume, given

from irflow.codegen import compile_plan, run
from irflow.codegen.llvm.fused import FusedKernel
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.ir import parse
from irflow.passes import DEFAULT_PIPELINE, PassManager
from tests.support.programs import programs, seeds


class Counting(LLVMLowering):
    """The lowering, counting the fused ops it compiled."""

    def __init__(self, compiler, min_elements: int = 0):
        super().__init__(compiler, min_elements=min_elements)
        self.fused = 0

    def evaluator(self, op):
        run = super().evaluator(op)
        self.fused += run is not None
        return run

    def out_evaluator(self, op, into):
        run = super().out_evaluator(op, into)
        self.fused += run is not None
        return run


def check_program(compiler, program, seed, dtype_tolerance, min_elements: int = 0):
    module = parse(str(program.module))
    PassManager([*DEFAULT_PIPELINE, "fuse"], verify_each=True).run(module)
    lowering = Counting(compiler, min_elements)
    plan = compile_plan(module.main, lowering)
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        assume(program.evaluate(*inputs).jump_margin > 1e-4)
        want = run(program.module, *inputs)
        got = plan(*inputs)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, f"N={n}"
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, **dtype_tolerance, err_msg=f"N={n}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"N={n}")
    return lowering.fused


@given(programs(dtype="float32"), seeds)
def test_fused_programs_agree_with_the_interpreter(compiler, program, seed):
    # float32 reductions are summed in another order than NumPy's (more accurately)
    fused = check_program(compiler, program, seed, {"rtol": 2e-5, "atol": 2e-5})
    assume(fused > 0)


@given(programs(dtype="float32"), seeds)
def test_fused_programs_compiled_for_size_agree_with_the_interpreter(compiler, program, seed):
    """Every static size below the least compiled: bodies with reductions are
    compiled for size (`jit.SMALL`: scalar loops, scalar reductions), the others run
    NumPy's step."""
    fused = check_program(compiler, program, seed, {"rtol": 2e-5, "atol": 2e-5},
                          min_elements=1 << 40)
    assume(fused > 0)


@given(programs(dtype="float64"), seeds)
def test_fused_float64_programs_agree_with_the_interpreter(compiler, program, seed):
    fused = check_program(compiler, program, seed, {"rtol": 1e-10, "atol": 1e-10})
    assume(fused > 0)


@given(programs(dtype="float16"), seeds)
def test_fused_float16_programs_agree_with_the_interpreter_exactly(compiler, program, seed):
    # float16 ops round after each op as NumPy's loops do, and float16 sums (whose
    # rounding depends on NumPy's loops) are left to NumPy: no tolerance
    check_program(compiler, program, seed, {"rtol": 0, "atol": 0})


def test_the_generator_makes_fused_ops_with_reductions(compiler):
    """The differential tests above see reductions, anchors and control flow."""
    from tests.support.programs import random_program
    kinds = set()
    for seed in range(60):
        module = random_program(seed).module
        PassManager([*DEFAULT_PIPELINE, "fuse"]).run(module)
        for op in module.walk():
            if op.name == "fused":
                kernel = FusedKernel(op, compiler)
                kinds.add("elementwise" if kernel.elementwise is not None else "reduction")
                kinds.add("anchor" if len(op.regions) == 2 else "plain")
                kinds.add("nested" if op.parent.parent is not None
                          and op.parent.parent.parent is not None else "top")
    assert kinds >= {"elementwise", "reduction", "anchor", "plain", "nested"}


def test_a_value_computed_outside_a_kernel_is_not_recomputed_inside_by_other_code(compiler):
    """%1 equals %0 exactly (a product over no axes): were tanh recomputed in the
    kernel by the generated code, an ulp from NumPy's tanh, `gt %1, %0` would flip and
    the result jump (found by a deep hypothesis run)."""
    text = """
func @f(%x: f64[3]) -> f64[3] {
  %0 = tanh %x : f64[3]
  %1 = prod %0 {axis=[]} : f64[3]
  %2 = gt %1, %0 : bool[3]
  %3 = const {value=0.41} : f64
  %4 = select %2, %3, %1 : f64[3]
  %5 = tanh %4 : f64[3]
  return %5
}
"""
    module = parse(text)
    PassManager(DEFAULT_PIPELINE, verify_each=True).run(module)
    plan = compile_plan(module.main, Counting(compiler))
    for seed in range(20):
        x = np.random.default_rng(seed).uniform(-2, 2, 3)
        np.testing.assert_allclose(plan(x)[0], run(parse(text), x)[0], rtol=1e-12)
