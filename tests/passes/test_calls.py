"""A ``call`` has the effects of the function it calls: the passes that keep effects
(fold, cse, dce, sink-large) see them through calls (`irflow.passes.dce.has_io`).
The CHECK files show cse and dce; this is fold on a call of a compiled program."""
import numpy as np

from irflow.codegen import compile_plan, run
from irflow.ir import parse
from irflow.passes import PassManager

TEXT = """
func @main(%x: f32[2]) -> f32[2] {
  %c = const {value=[1.0, 2.0]} : f32[2]
  %u = call %c {callee=@check} : f32[2]
  %y = add %x, %u : f32[2]
  return %y
}

func @check(%x: f32[2]) -> f32[2] {
  print %x {fmt="checking {}"}
  return %x
}
"""


def test_fold_does_not_run_a_call_with_an_effect_at_compile_time(capsys):
    """A compiled program's call carries the callee's plan (`FuncRef.run`), so fold
    could evaluate it on constant operands: the print would run once, in the pass."""
    module = parse(TEXT)
    call = next(op for op in module.main.walk() if op.name == "call")
    call.attrs["callee"].run = compile_plan(module.functions["check"])
    PassManager(["fold", "dce"], verify_each=True).run(module)
    assert capsys.readouterr().out == ""
    assert "call %c {callee=@check}" in str(module)
    np.testing.assert_array_equal(run(module, np.ones(2, np.float32))[0], [2.0, 3.0])
    assert capsys.readouterr().out.startswith("checking")
