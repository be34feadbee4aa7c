"""Pass-level test support: textual IR in, the pass, textual IR out, and the
interpreter run on the IR before and after to show the pass kept its meaning."""
from __future__ import annotations

import numpy as np

from irflow.codegen import run
from irflow.ir import Function, Module, TensorType, parse, verify
from irflow.passes import PassManager


def random_inputs(fn: Function, rng: np.random.Generator, sizes: dict[str, int] | None = None):
    """Arrays matching `fn`'s argument types; symbolic dims take `sizes` (default 3)."""
    sizes = sizes or {}
    arrays = []
    for arg in fn.args:
        t: TensorType = arg.type
        shape = tuple(d if isinstance(d, int) else sizes.get(d, 3) for d in t.shape)
        if t.dtype.is_float:
            arrays.append(rng.standard_normal(shape).astype(t.dtype.np))
        elif t.dtype.is_int:
            arrays.append(rng.integers(0, 4, shape).astype(t.dtype.np))
        else:
            arrays.append(rng.random(shape) < 0.5)
    return arrays


def round_trip(module: Module) -> None:
    text = str(module)
    assert str(parse(text)) == text, "print/parse round trip changed the text"


def apply_pipeline(pipeline, text: str) -> Module:
    module = parse(text)
    verify(module)
    round_trip(module)
    PassManager(pipeline, verify_each=True).run(module)
    round_trip(module)
    return module


def check_pass(pipeline, before: str, after: str, trials: int = 3, seed: int = 0) -> Module:
    """Run `pipeline` on `before`; the result must print as `after` (both normalized
    through the parser) and compute what `before` computes."""
    module = apply_pipeline(pipeline, before)
    assert str(module) == str(parse(after)), f"got:\n{module}"
    check_same_results(parse(before), module, trials, seed)
    return module


def check_same_results(reference: Module, candidate: Module, trials: int = 3, seed: int = 0,
                       rtol: float = 1e-5, atol: float = 1e-6) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        inputs = random_inputs(reference.main, rng)
        for want, got in zip(run(reference, *inputs), run(candidate, *inputs)):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
