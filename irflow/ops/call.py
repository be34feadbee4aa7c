"""`call`: run a compiled program as one op of the dynamic graph.

When a compiled Layer is called while gradients are recorded, the call enters eager
autograd as a single ``call {program=k}`` op. Program k is the forward half of a
`vjp_split`: it returns the Layer's results followed by residuals, and its VJP is a
``call`` of the backward half on the output cotangents and those residuals. So
``loss.backward()`` after a compiled forward runs the compiled backward, and the one
autodiff transform serves both.

Programs live in a process-local table: ``call`` ops are built by the frontend for
the dynamic graph and are never printed to or read from files.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ShapeError
from ..ir.core import Function
from ..ir.registry import REQUIRED
from ..ir.traits import StackOperands
from ..ir.types import StackType, TensorType, bind_shape, eval_shape
from ._rules import defop


@dataclass
class CallTarget:
    fn: Function
    plan: object
    backward: int | None = None      # program id of the backward half
    wrt: tuple[int, ...] = ()        # operands that get cotangents
    outputs: tuple[int, ...] = ()    # results whose cotangents the backward takes
    n_residuals: int = 0


_PROGRAMS: list[CallTarget] = []


def register_program(fn: Function, plan, **vjp) -> int:
    _PROGRAMS.append(CallTarget(fn, plan, **vjp))
    return len(_PROGRAMS) - 1


def _target(attrs) -> CallTarget:
    index = attrs["program"]
    if not isinstance(index, int) or not 0 <= index < len(_PROGRAMS):
        raise ShapeError(f"no compiled program {index!r} in this process")
    return _PROGRAMS[index]


def _call_infer(types, attrs):
    fn = _target(attrs).fn
    if len(types) != len(fn.args):
        raise ShapeError(f"program @{fn.name} takes {len(fn.args)} operands, got {len(types)}")
    bindings: dict[str, int] = {}
    for i, (t, arg) in enumerate(zip(types, fn.args)):
        expected = arg.type
        if isinstance(expected, StackType) or not all(isinstance(d, int) for d in t.shape):
            ok = t == expected
        else:
            ok = t.dtype is expected.dtype and bind_shape(expected.shape, t.shape, bindings)
        if not ok:
            raise ShapeError(f"operand {i} of @{fn.name} is {t}, expected {expected}")
    out = []
    for r in fn.result_types:
        if isinstance(r, TensorType) and bindings and not r.is_static:
            r = TensorType(r.dtype, eval_shape(r.shape, bindings))
        out.append(r)
    return out


def _call_kernel(*arrays, program):
    results = _PROGRAMS[program].plan(*arrays)
    return results[0] if len(results) == 1 else tuple(results)


def _call_vjp(b, cts, ins, outs, program):
    target = _PROGRAMS[program]
    if target.backward is None:
        raise ShapeError(f"program @{target.fn.name} has no backward program (gradients of "
                         "gradients of compiled calls are not supported)")
    seeds = [cts[k] if cts[k] is not None else b.zeros(outs[k].type) for k in target.outputs]
    residuals = outs[len(outs) - target.n_residuals:]
    grads = b.create("call", [*seeds, *residuals], {"program": target.backward}).results
    in_cts = [None] * len(ins)
    for i, g in zip(target.wrt, grads):
        in_cts[i] = g
    return in_cts


defop("call", _call_infer, _call_kernel, arity=(0, None), attrs={"program": REQUIRED},
      vjp=_call_vjp, traits=(StackOperands(),),
      doc="run compiled program `program` (a process-local id) on the operands; used by "
          "the frontend to put a compiled call into the dynamic graph")
