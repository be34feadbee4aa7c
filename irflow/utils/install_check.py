"""`run_check`: compile and run a small model through each stage of irflow's compiler,
reporting every stage, as ``paddle.utils.run_check()`` checks a Paddle install.

The stages are the pipeline of ``docs/architecture.md``: trace (Python to IR),
verify, each pass of the default pipeline (with its time), the plan, a run compared
with eager execution, and gradients through the compiled program compared with
eager ones. A stage that fails raises an `IrflowError` naming it.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..codegen.executor import compile_plan
from ..errors import IrflowError
from ..frontend.input_spec import InputSpec
from ..frontend.program import compile as compile_
from ..ir.verifier import verify
from ..nn import Linear, ReLU, Sequential
from ..passes.manager import DEFAULT_PIPELINE, PassManager
from ..static.mode import dynamic_mode
from ..tensor.creation import to_tensor


def run_check() -> None:
    """Check that irflow works: print each stage of compiling and running a small
    model, then that irflow is installed successfully."""
    print("Running verify irflow program ...")
    with dynamic_mode():
        for stage, result in _stages():
            print(f"  {stage:<9} ok  {result}".rstrip())
    print("irflow works well on 1 CPU.")
    print("irflow is installed successfully! Let's start deep learning with irflow now.")


def _stages():
    """(stage, what it gave) for each stage, in order."""
    model = Sequential(Linear(4, 3), ReLU(), Linear(3, 2))
    model.eval()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")
    expected = model(to_tensor(x)).numpy()
    compiled = compile_(model, input_spec=[InputSpec([None, 4], "float32", "x")])

    with _stage("trace"):
        module = compiled.source_ir.clone()
    fn = module.main
    yield "trace", f"@{fn.name}: {len(fn.block.ops)} ops"
    with _stage("verify"):
        verify(module)
    yield "verify", ""
    manager = PassManager(DEFAULT_PIPELINE)
    with _stage("passes"):
        manager.run(module)
    for record in manager.history:
        yield record.name, f"{record.seconds * 1e3:.2f} ms" + (", changed" if record.changed
                                                                else "")
    with _stage("plan"):
        plan = compile_plan(module.main)
    yield "plan", f"{len(module.main.block.ops)} ops"
    state = model.state_dict()
    with _stage("run"):
        out = plan(x, *[state[a.name]._value for a in module.main.args[1:]])[0]
        _same(out, expected, "the compiled output differs from eager execution")
    yield "run", "output matches eager execution"

    with _stage("backward"):
        inputs = [to_tensor(x, stop_gradient=False) for _ in range(2)]
        compiled(inputs[0]).sum().backward()
        grads = [inputs[0].grad.numpy(), *(p.grad.numpy() for p in model.parameters())]
        model.clear_gradients()
        model(inputs[1]).sum().backward()
        eager = [inputs[1].grad.numpy(), *(p.grad.numpy() for p in model.parameters())]
        for g, e in zip(grads, eager):
            _same(g, e, "compiled gradients differ from eager ones")
    yield "backward", "gradients match eager execution"


@contextlib.contextmanager
def _stage(name: str):
    """Reraise what fails inside as an error that names the stage."""
    try:
        yield
    except Exception as e:
        raise IrflowError(f"run_check: the {name} stage failed: {e}") from e


def _same(actual, expected, message: str) -> None:
    if not np.allclose(actual, expected, rtol=1e-5, atol=1e-6):
        raise IrflowError(f"{message} (largest difference "
                          f"{np.max(np.abs(actual - expected)):.3g})")
