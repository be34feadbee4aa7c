"""A region op declared here, in test code only, works in every subsystem.

`demo.for %n, cs..., inits...` runs its body n times: the body takes ``(i, cs...,
carried...)`` and yields the next carried values; the results are the last ones.
Everything irflow needs to know about it is its `RegionOp` interface below: its
region's signature, its value flow, its evaluator and its reverse-mode rule (which
records each iteration's carried values on a stack, as ``while`` does). Nothing in
irflow mentions it, yet it prints, parses, verifies, interprets, executes, goes
through dce and cse, and differentiates.
"""
import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.errors import VerificationError
from irflow.ir import Module, TensorType, parse, verify
from irflow.ir.region_op import Arg, Operand, RegionOp, Result, Yield, check_region
from irflow.ir.registry import OpDef, register
from irflow.ir.traits import ContainerOperands
from irflow.ir.types import StackType
from irflow.passes import PassManager
from irflow.passes.autodiff import grad, vjp_split

I64 = TensorType("i64", [])


def build_for(b, n, consts, inits, body):
    """``demo.for``: ``body(builder, i, *consts, *carried)`` returns the next carried."""
    types = [I64, *(v.type for v in [*consts, *inits])]
    region, _ = b.region(types, body, "yield")
    op = b.create("demo.for", [n, *consts, *inits], regions=[region],
                  result_types=[v.type for v in inits])
    return list(op.results)


class CountedFor(RegionOp):
    regions = ("body",)
    records_residuals = True

    @staticmethod
    def n_consts(op) -> int:
        return len(op.operands) - 1 - len(op.results)

    def verify(self, op):
        if not op.operands or op.operands[0].type != I64:
            raise VerificationError("demo.for needs an i64 trip count first")
        inits = op.operands[1 + self.n_consts(op):]
        if [v.type for v in inits] != list(op.result_types):
            raise VerificationError("demo.for needs an initial value per result")
        check_region(op, 0, "body", [I64, *(v.type for v in op.operands[1:])], "yield",
                     op.result_types)

    def flow(self, op):
        nc = self.n_consts(op)
        for j in range(1, 1 + nc):
            yield Operand(j), Arg(0, j)
        for k in range(len(op.results)):
            slot = 1 + nc + k
            for source in (Operand(slot), Yield(0, k)):
                yield source, Arg(0, slot)
                yield source, Result(k)

    def evaluator(self, op):
        nc = self.n_consts(op)

        def run_loop(args, regions):
            (body,) = regions
            n, consts, carried = int(args[0]), args[1:1 + nc], args[1 + nc:]
            for i in range(n):
                carried = body([np.asarray(i, np.int64), *consts, *carried])
            return carried
        return run_loop

    def forward(self, ad, b, op, mapping):
        nc = self.n_consts(op)
        body = op.regions[0].blocks[0]
        empty = b.create("stack_new", result_types=[StackType(op.result_types)]).result
        operands = [mapping[v] for v in op.operands]

        def step(rb, i, *args):
            *values, stack = args
            stack = rb.stack_push(stack, *values[nc:])
            inner = dict(zip(body.args, [i, *values]))
            for inner_op in body.body_ops():
                rb.insert(inner_op.clone(inner))
            return [inner[v] for v in body.terminator.operands] + [stack]

        results = build_for(b, operands[0], operands[1:1 + nc], [*operands[1 + nc:], empty],
                            step)
        mapping.update(zip(op.results, results))
        return results[-1]

    def backward(self, ad, b, op, ins, out_cts, stack):
        nc, m = self.n_consts(op), len(op.results)
        n, consts = ins[0], ins[1:1 + nc]
        body = op.regions[0].blocks[0]
        active_consts = [j for j in range(nc) if op.operands[1 + j] in ad.active]
        cts = [ct if ct is not None else b.zeros(r.type) for ct, r in zip(out_cts, op.results)]
        sums = [b.zeros(consts[j].type) for j in active_consts]

        def step(rb, i, n_, *args):
            cs, ct, acc, stack_ = args[:nc], args[nc:nc + m], args[nc + m:-1], args[-1]
            rest, *carried = rb.stack_pop(stack_)
            forward_i = rb.sub(rb.sub(n_, rb.constant(1, "int64")), i)
            active = {1 + j for j in active_consts} | {1 + nc + k for k in range(m)}
            _, arg_cts, _ = ad.differentiate_block(rb, body, [forward_i, *cs, *carried], active,
                                                   list(ct))
            new_ct = [g if g is not None else rb.zeros(r.type)
                      for g, r in zip(arg_cts[1 + nc:], op.results)]
            new_acc = [a if arg_cts[1 + j] is None else rb.add(a, arg_cts[1 + j])
                       for a, j in zip(acc, active_consts)]
            return [*new_ct, *new_acc, rest]

        results = build_for(b, n, [n, *consts], [*cts, *sums, stack], step)
        in_cts = [None] * len(ins)
        in_cts[1 + nc:] = results[:m]
        for j, g in zip(active_consts, results[m:m + len(active_consts)]):
            in_cts[1 + j] = g
        return in_cts


register(OpDef("demo.for", None, arity=(1, None), traits=(CountedFor(), ContainerOperands()),
               doc="a counted loop declared by a test"))

PROGRAM = """
func @f(%n: i64, %a: f64[3], %x: f64[3], %unused: f64[3]) -> f64 {
  %y, %z = demo.for %n, %a, %unused, %x, %x : (f64[3], f64[3]) {
  ^body(%i: i64, %c: f64[3], %u: f64[3], %h: f64[3], %w: f64[3]):
    %fi = cast %i {dtype=f64} : f64
    %t = mul %h, %c : f64[3]
    %t2 = mul %h, %c : f64[3]
    %s = sin %t : f64[3]
    %s2 = add %s, %t2 : f64[3]
    %h1 = add %s2, %fi : f64[3]
    %w1 = tanh %w : f64[3]
    yield %h1, %w1
  }
  %r = sum %y : f64
  return %r
}
"""


def reference(n, a, x):
    h = x
    for i in range(n):
        h = np.sin(h * a) + h * a + i
    return h.sum()


def inputs(n=4):
    rng = np.random.default_rng(0)
    return [np.asarray(n, np.int64), *(rng.uniform(-1, 1, 3) for _ in range(3))]


def test_prints_parses_and_verifies():
    module = parse(PROGRAM)
    verify(module)
    text = str(module)
    assert "demo.for %n, %a, %unused, %x, %x : (f64[3], f64[3]) {\n  ^body(%i: i64," in text
    assert str(parse(text)) == text


def test_the_verifier_runs_its_region_checks():
    broken = PROGRAM.replace("yield %h1, %w1", "yield %h1, %fi")
    with pytest.raises(VerificationError, match=r"body region yields \(f64\[3\], f64\) but "
                                                r"demo.for has results \(f64\[3\], f64\[3\]\)"):
        verify(parse(broken))


def test_interpreter_and_executor_run_it():
    module = parse(PROGRAM)
    for n in (0, 1, 5):
        args = inputs(n)
        want = reference(n, args[1], args[2])
        np.testing.assert_allclose(run(module, *args)[0], want, rtol=1e-12)
        np.testing.assert_allclose(compile_plan(module.main)(*args)[0], want, rtol=1e-12)


def test_dce_and_cse_trim_it_through_its_flow():
    module = parse(PROGRAM)
    PassManager("cse,dce", verify_each=True).run(module)
    text = str(module)
    # The dead carried value %z (and its tanh), the unread invariant %unused and the
    # duplicate mul are gone; the trip count and the induction variable stay.
    assert "%y = demo.for %n, %a, %x : f64[3] {\n  ^body(%i: i64, %c: f64[3], %h: f64[3]):" \
        in text
    assert "tanh" not in text and text.count("mul") == 1
    args = inputs()
    np.testing.assert_allclose(run(module, *args)[0], reference(4, args[1], args[2]))


def finite_difference(fn, args, index, eps=1e-6):
    out = np.zeros(3)
    for k in range(3):
        shifted = [a.copy() for a in args]
        shifted[index][k] += eps
        up = run(fn, *shifted)[0]
        shifted[index][k] -= 2 * eps
        out[k] = (up - run(fn, *shifted)[0]) / (2 * eps)
    return out


def test_it_differentiates_through_its_own_rule():
    fn = parse(PROGRAM).main
    g = Module([grad(fn, [1, 2])])
    PassManager("fold,cse,dce", verify_each=True).run(g)
    assert str(g).count("demo.for") == 2  # the recording loop and the backward loop
    args = inputs()
    value, da, dx = run(g, *args)
    np.testing.assert_allclose(value, reference(4, args[1], args[2]), rtol=1e-12)
    np.testing.assert_allclose(da, finite_difference(fn, args, 1), rtol=1e-6)
    np.testing.assert_allclose(dx, finite_difference(fn, args, 2), rtol=1e-6)


def test_its_recording_crosses_a_forward_backward_split():
    fn = parse(PROGRAM).main
    forward, backward, _ = vjp_split(fn, [1], [0])
    args = inputs(3)
    value, *residuals = compile_plan(forward)(*args)
    (da,) = compile_plan(backward)(np.asarray(1.0), *residuals)
    assert any(isinstance(a.type, StackType) for a in backward.args)
    np.testing.assert_allclose(da, finite_difference(fn, args, 1), rtol=1e-6)
