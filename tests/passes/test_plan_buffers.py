"""Buffer planning (irflow/passes/plan_buffers.py): plans checked by an independent
checker on generated programs and their gradients, the totals on the programs the
planner is judged by, and the rules the CHECK file (plan-buffers.irf) does not show.
"""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given

import irflow as paddle
import irflow.nn as nn
from irflow.codegen import compile_plan, run
from irflow.ir import Module, TensorType, function, parse
from irflow.passes import DEFAULT_PIPELINE, PassManager, PipelineError, available
from irflow.passes.autodiff import grad
from irflow.passes.plan_buffers import ALIGNMENT, BufferAssignment, MemoryPlan, PlanBuffers
from tests.support.arenacheck import Overlap, check_plan
from tests.support.programs import programs, seeds


def plans_of(fn, program):
    """(inputs, memory plan) for each size of `program`'s symbolic dim."""
    assignment = BufferAssignment(fn)
    for n in program.sizes:
        yield program.inputs(0, n), assignment.plan({} if n is None else {"N": n})


@given(programs(max_depth=3, max_ops=16), seeds)
def test_no_two_live_values_share_memory_and_plans_compute_what_the_interpreter_does(
        program, seed):
    plan = compile_plan(program.function)
    assignment = BufferAssignment(program.function)
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        check_plan(program.function, inputs, assignment.plan({} if n is None else {"N": n}))
        for got, want in zip(plan(*inputs), run(program.function, *inputs)):
            np.testing.assert_array_equal(got, want, strict=True)


@given(programs(max_depth=3, max_ops=16), seeds)
def test_the_default_pipeline_plans_fused_results_soundly_into_the_arena(program, seed):
    module = Module([program.function.clone()])
    PassManager(DEFAULT_PIPELINE, verify_each=True).run(module)
    fused = module.main
    plan = compile_plan(fused)
    assignment = BufferAssignment(fused)
    for n in program.sizes:
        inputs = program.inputs(seed, n)
        check_plan(fused, inputs, assignment.plan({} if n is None else {"N": n}))
        for got, want in zip(plan(*inputs), run(program.function, *inputs)):
            np.testing.assert_array_equal(got, want, strict=True)


@given(programs(dtype="float64", scalar_output=True), seeds)
def test_gradient_programs_are_planned_soundly(program, seed):
    g = grad(program.function, program.float_args)
    assignment = BufferAssignment(g)
    for n in program.sizes:
        check_plan(g, program.inputs(seed, n), assignment.plan({} if n is None else {"N": n}))


def test_the_checker_finds_values_written_over_while_live():
    fn = parse("""
func @f(%x: f32[16], %w: f32[16,16]) -> f32 {
  %a = exp %x : f32[16]
  %b = sin %x : f32[16]
  %c = add %a, %b : f32[16]
  %m = matmul %c, %w : f32[16]
  %s = sum %m : f32
  return %s
}""").main
    args = np.ones(16, np.float32), np.eye(16, dtype=np.float32)
    assignment = BufferAssignment(fn)
    a, b, c, m = (op.result for op in list(fn.block.ops)[:4])
    check_plan(fn, args, assignment.plan())

    def moved(value, onto):
        plan = assignment.plan()
        plan.offsets[assignment.buffer_of[value]] = plan.offset(onto)
        return plan
    with pytest.raises(Overlap, match=r"%a \(bytes 0-64\) is read by 'add' after %b was "
                                      r"written over it"):
        check_plan(fn, args, moved(b, a))
    with pytest.raises(Overlap, match=r"'matmul' writes %m \(bytes 0-64\) over its operand %c"):
        check_plan(fn, args, moved(m, c))


# ---------------------------------------------------------------- what it is judged by

def test_a_deep_elementwise_chain_runs_in_its_peak():
    def chain(b, x):
        y = x
        for i in range(40):
            y = [b.tanh, b.exp, b.sin, b.neg][i % 4](y)
            y = b.add(b.mul(y, b.constant(0.5, "float32")), y) if i % 5 == 0 else y
        return b.sum(y)
    fn = function("chain", [TensorType("f32", (256, 256))], chain)
    plan = BufferAssignment(fn).plan()
    # one buffer, two where y * 0.5 + y needs y and the product at once
    assert plan.arena_bytes == plan.peak_live_bytes == 2 * 256 * 256 * 4
    assert plan.naive_bytes > 20 * plan.arena_bytes


def mlp(width: int, depth: int = 8):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers)


def forward_and_gradient(batch: int, width: int):
    """An 8-layer MLP's forward program (compiled without gradients, so it returns
    no residuals) and the gradient program of its mean square, both through the
    default pipeline, with inputs for each."""
    model = mlp(width)
    compiled = paddle.compile(model)
    x = paddle.randn([batch, width])
    with paddle.no_grad():
        compiled(x)
    forward = compiled.ir.main
    loss = paddle.compile(lambda x: paddle.mean(model(x) ** 2), pipeline=UNFUSED)
    loss(x)
    fn = loss.ir.main
    module = Module([grad(fn, list(range(len(fn.args))))])
    PassManager(DEFAULT_PIPELINE, verify_each=True).run(module)
    params = [p.numpy() for p in model.parameters()]
    return forward, module.main, [x.numpy(), *params]


# The unfused pipeline: the planner judged on programs whose every op is planned.
UNFUSED = ["fold", "cse", "dce"]


@pytest.mark.parametrize("batch, width", [(64, 256), (16, 512), (512, 64)])
def test_an_mlp_forward_and_its_gradient_need_a_fraction_of_the_naive_bytes(batch, width):
    forward, backward, inputs = forward_and_gradient(batch, width)
    for fn in forward, backward:
        fused = [op for op in fn.walk() if op.name == "fused"]
        assert len(fused) >= 8  # the default pipeline fused the layers
        assignment = BufferAssignment(fn)
        plan = assignment.plan()
        # every fused result that is not returned is in the arena
        assert all(r in assignment.buffer_of for op in fused for r in op.results
                   if assignment.allocated.get(r) != "returned")
        assert plan.arena_bytes == plan.peak_live_bytes
        assert plan.arena_bytes <= 0.4 * plan.naive_bytes
        check_plan(fn, inputs, plan)
        got, want = compile_plan(fn)(*inputs), run(fn, *inputs)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, strict=True)


def test_an_mlp_forward_call_allocates_no_intermediate_buffer():
    forward, _, inputs = forward_and_gradient(64, 256)
    plan = compile_plan(forward)
    want = plan(*inputs)[0]
    tracemalloc.start()
    try:
        got = plan(*inputs)[0]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the returned array is the only one of a layer's size (besides it, NumPy's ufunc
    # loops take a buffer of 8192 elements to broadcast the bias): seven more layers
    # ran their matmuls and epilogues in the arena
    assert got.nbytes <= peak < 2 * got.nbytes
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, run(forward, *inputs)[0], strict=True)


def test_a_deep_chain_of_matmul_epilogues_runs_in_its_peak():
    w = np.linspace(-0.1, 0.1, 64 * 64, dtype=np.float32).reshape(64, 64)

    def chain(b, x, w):
        y = x
        for i in range(12):
            y = b.matmul(y, w)
            for j in range(4):
                y = [b.tanh, b.exp, b.sin, b.neg][(i + j) % 4](y)
        return b.sum(y)
    module = Module([function("chain", [TensorType("f32", (256, 64)),
                                        TensorType("f32", (64, 64))], chain)])
    PassManager(DEFAULT_PIPELINE, verify_each=True).run(module)
    fn = module.main
    assert sum(op.name == "fused" for op in fn.walk()) == 12
    plan = BufferAssignment(fn).plan()
    assert plan.arena_bytes == plan.peak_live_bytes == 2 * 256 * 64 * 4
    x = np.linspace(-1, 1, 256 * 64, dtype=np.float32).reshape(256, 64)
    check_plan(fn, (x, w), plan)
    assert compile_plan(fn)(x, w)[0] == run(fn, x, w)[0]


def test_a_training_step_is_planned_too():
    model = mlp(128)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())

    @paddle.compile(pipeline=UNFUSED)
    def step(x):
        loss = paddle.mean(model(x) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    step(paddle.randn([256, 128]))
    plan = step.memory_plan
    assert plan.arena_bytes <= 0.4 * plan.naive_bytes
    assert "returned" in plan.assignment.allocated.values()  # the new parameters


# ---------------------------------------------------------------- rules

def test_a_value_read_through_two_operands_is_written_over_only_where_allowed():
    # select may write over its last operand only: with both of its value operands
    # the same %a, it cannot reuse %a's buffer; mul can.
    fn = parse("""
func @f(%x: f32[16], %p: bool[16]) -> f32 {
  %a = exp %x : f32[16]
  %b = select %p, %a, %a : f32[16]
  %c = mul %b, %b : f32[16]
  %s = sum %c : f32
  return %s
}""").main
    a, b, c = (op.result for op in list(fn.block.ops)[:3])
    plan = BufferAssignment(fn).plan()
    assert plan.offset(b) != plan.offset(a) and plan.offset(c) == plan.offset(b)


def test_set_slice_writes_in_place_over_the_tensor_it_updates():
    fn = parse("""
func @f(%x: f32[8], %u: f32[2]) -> f32 {
  %a = exp %x : f32[8]
  %b = set_slice %a, %u {axes=[0], starts=[2], stops=[4]} : f32[8]
  %s = sum %b : f32
  return %s
}""").main
    a, b = (op.result for op in list(fn.block.ops)[:2])
    plan = BufferAssignment(fn).plan()
    assert plan.offset(a) == plan.offset(b)
    x, u = np.arange(8, dtype=np.float32), np.ones(2, np.float32)
    assert compile_plan(fn)(x, u)[0] == run(fn, x, u)[0]


def test_a_call_may_return_its_argument():
    fn = parse("""
func @f(%x: f32[16]) -> f32 {
  %a = exp %x : f32[16]
  %r = call %a {callee=@identity} : f32[16]
  %b = sin %x : f32[16]
  %c = add %r, %b : f32[16]
  %s = sum %c : f32
  return %s
}
func @identity(%y: f32[16]) -> f32[16] {
  return %y
}""").main
    a, _, b = (op.result for op in list(fn.block.ops)[:3])
    plan = BufferAssignment(fn).plan()
    assert plan.offset(b) != plan.offset(a)  # %a lives on as %r
    x = np.linspace(0, 1, 16, dtype=np.float32)
    assert compile_plan(fn)(x)[0] == run(fn, x)[0]


def test_sizes_are_aligned_and_planned_per_binding():
    fn = parse("""
func @f(%x: f32[N,3]) -> f32 {
  %a = exp %x : f32[N,3]
  %b = matmul %a, %x {transpose_y=true} : f32[N,N]
  %s = sum %b : f32
  return %s
}""").main
    assignment = BufferAssignment(fn)
    assert assignment.symbols == ("N",)
    small, large = assignment.plan({"N": 1}), assignment.plan({"N": 10})
    assert small.arena_bytes == 2 * ALIGNMENT
    assert large.arena_bytes == 128 + 448  # 120 and 400 bytes, rounded up
    assert all(offset % ALIGNMENT == 0 for offset in large.offsets)
    with pytest.raises(PipelineError, match=r"@f: the buffer sizes depend on N"):
        assignment.plan()


def test_the_pass_reports_its_statistics_and_reads_its_sizes():
    module = parse("""
func @f(%x: f32[N]) -> f32 {
  %a = exp %x : f32[N]
  %b = sin %a : f32[N]
  %s = sum %b : f32
  return %s
}""")
    planner = PlanBuffers(sizes="N=32")
    PassManager([planner]).run(module)
    assert isinstance(planner.plans["f"], MemoryPlan)
    assert planner.statistics() == {"bytes-planned": 128, "peak-live-bytes": 128,
                                    "naive-bytes": 256}
    text = str(module)
    assert "%a = exp %x {plan.offset=0} : f32[N]" in text
    assert str(parse(text)) == text  # annotations read back
    PassManager("plan-buffers").run(module)  # planned again: replaced, not added to
    assert "plan.offset" not in str(module) and "plan.unsized=[N]" in str(module)
    with pytest.raises(PipelineError, match=r"sizes are written N=4;M=2, got 'N'"):
        PassManager("plan-buffers{sizes=N}")


def test_a_fused_kernel_that_fills_its_body_argument_itself_plans_nothing_inside():
    # The anchor's result enters the body without a flow edge, and every edge keeps
    # its type (the sum is a scalar, as the result): the matmul inside is the
    # kernel's own memory all the same, never arena memory.
    module = parse("""
func @f(%x: f32[4,16], %w: f32[16,16]) -> f32 {
  %e = exp %x : f32[4,16]
  %s = fused %e, %w {axes=[0, 1]} : f32 {
  ^anchor(%a: f32[4,16], %b: f32[16,16]):
    %m = matmul %a, %b : f32[4,16]
    yield %m
  } {
  ^body(%m_1: f32):
    %t = reduce %m_1 {kind="sum"} : f32
    yield %t
  }
  return %s
}""")
    PassManager("plan-buffers", verify_each=True).run(module)
    text = str(module)
    assert '%m = matmul %a, %b {plan.allocated="inside a kernel\'s regions"}' in text
    x, w = np.ones((4, 16), np.float32), np.eye(16, dtype=np.float32)
    check_plan(module.main, (x, w), BufferAssignment(module.main).plan())
    assert compile_plan(module.main)(x, w)[0] == run(module, x, w)[0]


def test_a_compiled_pipeline_that_plans_reports_it_after_fusion():
    w = paddle.randn([16, 16])

    def f(x):  # exp's result and the fused matmul epilogue's are planned, live at once;
        # the epilogue's matmul computes into its result's buffer (counted there too)
        return paddle.matmul(paddle.tanh(paddle.matmul(paddle.exp(x), w)) * 2, w)

    compiled = paddle.compile(f, input_spec=[paddle.static.InputSpec([4, 16])],
                              pipeline=[*DEFAULT_PIPELINE, "plan-buffers"])
    compiled(paddle.randn([4, 16]))
    report = compiled.pass_report
    assert [r.name for r in report] == ["fold", "cse", "dce", "strip-stops", "one-hot",
                                        "fuse", "sink-large", "plan-buffers"]
    assert report["fuse"].statistics["fused-ops"] == 1
    assert report["plan-buffers"].statistics == {
        "bytes-planned": 512, "peak-live-bytes": 512, "naive-bytes": 768}
    assert compiled.memory_plan.arena_bytes == 512  # the executor's plan is the same
    assert "plan-buffers" in available()
