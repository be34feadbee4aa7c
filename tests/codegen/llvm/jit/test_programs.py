"""Differential tests: the elementwise chains of random programs
(`tests/support/programs.py`), control flow included, compiled into kernels, agree
with the interpreter, the reference semantics.

Each maximal run of consecutive elementwise ops (and constants) in any block, at any
depth of ``cond``/``while`` nesting, whose results all span one domain, is outlined
into a function of its own; the interpreter runs the whole program recording every
value, and the chain's kernel and the interpreter then run on the values it read.
"""
import numpy as np
from hypothesis import assume, given

from irflow.codegen import Interpreter
from irflow.codegen.llvm import ElementwiseFunction, Unsupported
from irflow.codegen.llvm.scalar import EMITTERS
from irflow.ir import Function
from irflow.ir.builder import Builder
from irflow.ir.registry import lookup
from irflow.ir.traits import Elementwise
from irflow.ir.types import TensorType
from tests.support.programs import programs, seeds


def chainable(op) -> bool:
    return op.name == "const" or (lookup(op.name).has(Elementwise) and op.name in EMITTERS)


def chains(block):
    """Maximal runs of chainable ops in `block` and, recursively, its regions."""
    run = []
    for op in block.body_ops():
        if chainable(op):
            run.append(op)
            continue
        if run:
            yield run
        run = []
        for region in op.regions:
            yield from chains(region.blocks[0])
    if run:
        yield run


def outline(run):
    """(function, its inputs, its outputs) of the ops of `run`, or None."""
    members = set(run)
    inputs, seen = [], set()
    for op in run:
        for v in op.operands:
            if getattr(v, "op", None) not in members and v not in seen:
                seen.add(v)
                inputs.append(v)
    outputs = [r for op in run if op.name != "const" for r in op.results
               if any(u.op not in members for u in r.uses)]
    if not outputs or not all(isinstance(v.type, TensorType) for v in inputs):
        return None
    fn = Function("chain", [v.type for v in inputs])
    mapping = dict(zip(inputs, fn.args))
    for op in run:
        fn.block.append(op.clone(mapping))
    Builder(fn.block).ret(*[mapping[v] for v in outputs])
    return fn, inputs, outputs


class Recorder(Interpreter):
    """The interpreter, keeping the last value of every block argument and result."""

    def __init__(self):
        super().__init__(observe=lambda op, results: self.values.update(zip(op.results, results)))
        self.values = {}

    def block(self, block, args, bindings):
        self.values.update(zip(block.args, args))
        return super().block(block, args, bindings)


@given(programs(dtype="float32"), seeds)
def test_chains_of_random_programs_agree_with_the_interpreter(compiler, program, seed):
    inputs = program.inputs(seed, program.sizes[0])
    expected = program.evaluate(*inputs)
    assume(expected.jump_margin > 1e-4)
    recorder = Recorder()
    recorder.run(program.module.main, inputs)
    compiled = 0
    for run in chains(program.module.main.block):
        outlined = outline(run)
        if outlined is None:
            continue
        fn, ins, outs = outlined
        if any(v not in recorder.values for v in ins):
            continue  # a region that never ran
        args = [recorder.values[v] for v in ins]
        try:
            kernel = ElementwiseFunction(fn, compiler)
        except Unsupported:
            continue  # outputs of different shapes: not one kernel
        want = Interpreter().run(fn, args)
        with np.errstate(all="ignore"):
            got = kernel(*args)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(g, w)
        compiled += 1
    assume(compiled > 0)
