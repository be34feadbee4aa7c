"""Pass properties on generated programs (tests/support/programs.py): each pass
leaves verified IR that prints and parses back, and computes what the program
computed before it."""
import numpy as np
from hypothesis import given

from irflow.codegen import compile_plan, run
from irflow.ir import Module, parse
from irflow.ir.registry import Effect, lookup
from irflow.ir.traits import Terminator
from irflow.passes import DEFAULT_PIPELINE, INFERENCE_PIPELINE, PassManager
from irflow.passes.plan_buffers import BufferAssignment
from tests.support.programs import programs, seeds


def run_pipeline(pipeline, program) -> Module:
    """A copy of the program after `pipeline`, verified after each pass."""
    module = parse(str(program.module))
    PassManager(pipeline, verify_each=True).run(module)
    text = str(module)
    assert str(parse(text)) == text, "the result does not round-trip through the text form"
    return module


def assert_same_results(program, module, seed):
    """Bit-identical results: these passes only remove or move work."""
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        for want, got in zip(run(program.module, *inputs), run(module, *inputs)):
            np.testing.assert_array_equal(got, want, strict=True, err_msg=f"N={n}")


def dead_ops(module: Module) -> list[str]:
    """Ops dce promises to remove: pure, not terminators, no result used."""
    return [str(op).splitlines()[0] for op in module.walk()
            if not lookup(op.name).has(Terminator) and lookup(op.name).effect is not Effect.IO
            and not any(r.uses for r in op.results)]


def unread_region_operands(module: Module) -> list[str]:
    """Operands that regions receive unchanged (cond operands after the predicate,
    while invariants) but no region reads, which dce promises to drop."""
    found = []
    for op in module.walk():
        rop = lookup(op.name).region_op
        if rop is None:
            continue
        found += [f"{op.name} operand {i}" for i, args in rop.captures(op)
                  if not any(op.regions[r].blocks[0].args[j].uses for r, j in args.items())]
    return found


@given(programs(), seeds)
def test_dce_keeps_the_results_and_leaves_nothing_dead(program, seed):
    module = run_pipeline(["dce"], program)
    assert_same_results(program, module, seed)
    assert dead_ops(module) == []
    assert unread_region_operands(module) == []
    assert not PassManager(["dce"], verify_each=True).run(module), \
        f"a second dce run changed:\n{module}"


@given(programs(), seeds)
def test_cse_keeps_the_results(program, seed):
    module = run_pipeline(["cse"], program)
    assert_same_results(program, module, seed)
    assert not PassManager(["cse"], verify_each=True).run(module), \
        f"a second cse run changed:\n{module}"


@given(programs(), seeds)
def test_fold_keeps_the_results(program, seed):
    module = run_pipeline(["fold", "dce"], program)
    assert_same_results(program, module, seed)


@given(programs(dtype="float64"), seeds)
def test_the_compile_pipeline_keeps_the_results(program, seed):
    module = run_pipeline(list(DEFAULT_PIPELINE), program)
    assert_same_results(program, module, seed)


@given(programs(), seeds)
def test_fuse_keeps_the_results_bit_for_bit_on_the_interpreter_and_the_executor(program, seed):
    module = run_pipeline(["fuse"], program)
    assert_same_results(program, module, seed)
    plan = compile_plan(module.main)
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        for want, got in zip(run(program.module, *inputs), plan(*inputs)):
            np.testing.assert_array_equal(got, want, strict=True, err_msg=f"N={n}")
    assert not PassManager(["fuse"], verify_each=True).run(module), \
        f"a second fuse run changed:\n{module}"


@given(programs(symbolic=False), seeds)
def test_sink_large_keeps_the_results_and_the_arena(program, seed):
    """With no size limit every op is a candidate, so the pass reorders as much as it
    ever does; on static shapes (the pass leaves symbolic ones alone)."""
    fused = run_pipeline(["fuse"], program)
    before = BufferAssignment(fused.main).plan()
    module = run_pipeline(["fuse", "sink-large{min-bytes=0}"], program)
    assert_same_results(program, module, seed)
    after = BufferAssignment(module.main).plan()
    assert after.arena_bytes <= before.arena_bytes
    assert after.peak_live_bytes <= before.peak_live_bytes
    inputs = program.inputs(seed, None)
    for want, got in zip(run(program.module, *inputs), compile_plan(module.main)(*inputs)):
        np.testing.assert_array_equal(got, want, strict=True)


@given(programs(), seeds)
def test_one_hot_keeps_the_results_bit_for_bit_and_after_fusion(program, seed):
    """The selections compute exactly what the gathers and scatters did (a -0.0 and
    a NaN included); fused, on the interpreter and on the executor."""
    module = run_pipeline(["one-hot"], program)
    assert_same_results(program, module, seed)
    fused = run_pipeline(["one-hot", "fuse"], program)
    assert_same_results(program, fused, seed)
    inputs = program.inputs(seed, None)
    for want, got in zip(run(program.module, *inputs), compile_plan(fused.main)(*inputs)):
        np.testing.assert_array_equal(got, want, strict=True)


@given(programs(dtype="float64"), seeds)
def test_the_compile_pipeline_with_fusion_keeps_the_results_and_leaves_nothing_dead(program,
                                                                                   seed):
    module = run_pipeline([*DEFAULT_PIPELINE, "fuse"], program)
    assert_same_results(program, module, seed)
    assert dead_ops(module) == []


@given(programs(dtype="float64"), seeds)
def test_the_inference_pipeline_keeps_the_results(program, seed):
    """fold-affine reassociates float arithmetic, so to rounding (in float64)."""
    module = run_pipeline([*INFERENCE_PIPELINE, "fuse"], program)
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        for want, got in zip(run(program.module, *inputs), run(module, *inputs)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"N={n}")
