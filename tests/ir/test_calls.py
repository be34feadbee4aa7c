"""Functions and calls by symbol: ``call`` names a function of its module, prints,
parses, verifies, runs on the interpreter and the executor, and keeps no table."""
import gc
import weakref

import numpy as np
import pytest

import irflow
from irflow.codegen import compile_plan, run
from irflow.errors import VerificationError
from irflow.ir import Builder, Function, Module, TensorType, parse, verify
from irflow.ir.symbols import FuncRef

TEXT = """func @main(%x: f32[N,4], %w: f32[4]) -> f32[N,4] {
  %a = call %x, %w {callee=@scale} : f32[N,4]
  %b = call %a, %w {callee=@scale} : f32[N,4]
  return %b
}

func @scale(%v: f32[N,4], %s: f32[4]) -> f32[N,4] {
  %r = mul %v, %s : f32[N,4]
  %t = tanh %r : f32[N,4]
  return %t
}
"""


def inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 4)).astype("float32"), rng.standard_normal(4).astype("float32")


def test_calls_print_parse_verify_and_run():
    module = parse(TEXT)
    verify(module)
    assert str(module) == TEXT
    assert module.main.block.first_op.attrs["callee"].module is module
    x, w = inputs()
    want = np.tanh(np.tanh(x * w) * w)
    np.testing.assert_allclose(run(module, x, w)[0], want, rtol=1e-6)
    np.testing.assert_allclose(compile_plan(module.main)(x, w)[0], want, rtol=1e-6)


def test_the_callee_must_exist_and_take_the_operands():
    with pytest.raises(VerificationError, match="there is no function @nothing in the module"):
        verify(parse(TEXT.replace("{callee=@scale} : f32[N,4]\n  %b", "{callee=@nothing} : "
                                  "f32[N,4]\n  %b")))
    with pytest.raises(VerificationError, match=r"operand 1 of @scale is f32\[N,4\], "
                                                r"expected f32\[4\]"):
        verify(parse(TEXT.replace("call %a, %w", "call %a, %a")))


def test_a_clone_calls_its_own_functions():
    module = parse(TEXT)
    copy = module.clone()
    assert copy.main.block.first_op.attrs["callee"].module is copy
    assert str(copy) == TEXT


def test_the_executor_compiles_each_callee_once_and_refuses_recursion():
    module = parse(TEXT)
    plan = compile_plan(module.main)
    assert plan.describe().count("call") == 2
    recursive = TEXT.replace("%t = tanh %r : f32[N,4]", "%t = call %r, %s {callee=@scale} : "
                             "f32[N,4]")
    with pytest.raises(irflow.IrflowError, match="recursive calls are not supported"):
        compile_plan(parse(recursive).main)


def test_a_call_built_with_the_builder():
    t = TensorType("f32", [2])
    callee = Function("neg2", [t])
    b = Builder(callee.block)
    b.ret(b.neg(callee.args[0]))
    main = Function("main", [t])
    module = Module([main, callee])
    b = Builder(main.block)
    b.ret(b.call(main.args[0], callee=FuncRef.to(callee)))
    verify(module)
    assert "call %0 {callee=@neg2} : f32[2]" in str(module)
    np.testing.assert_array_equal(run(module, np.array([1.0, -2.0], "float32"))[0], [-1, 2])


def test_a_reference_keeps_its_module_alive_and_nothing_else_does():
    module = parse(TEXT)
    ref = module.main.block.first_op.attrs["callee"]
    alive = weakref.ref(module)
    del module
    gc.collect()
    assert alive() is ref.module
    del ref
    gc.collect()
    assert alive() is None


def test_a_compiled_call_in_eager_autograd_names_its_halves():
    class Net(irflow.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = irflow.nn.Linear(4, 2)

        def forward(self, x):
            return irflow.tanh(self.fc(x))

    net = Net()
    out = irflow.compile(net)(irflow.to_tensor(inputs()[0]))
    attrs = out._node.prepared.attrs
    forward, backward = attrs["callee"], attrs["backward"]
    assert forward.module is backward.module
    assert sorted(forward.module.functions) == [backward.name, forward.name]
    out.sum().backward()
    assert net.fc.weight.grad is not None
