"""Elementwise IR to kernels: `lower_elementwise` makes the `KernelSpec` of a chain of
elementwise ops, and `ElementwiseFunction` compiles a function made only of such ops
(and constants) into one kernel.

Values of smaller shapes than the domain (a ``[C]`` bias scaled before it is added
to ``[N,C]``) are recomputed per element, which costs less than a pass over memory;
0-d constants become immediates in the code, larger constants extra inputs.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import IrflowError, ShapeError
from ...ir.core import Function, Operation, Value
from ...ir.registry import lookup
from ...ir.signature import Signature
from ...ir.traits import Elementwise
from ...ir.types import TensorType
from .compiler import Compiler, default_compiler
from .kernel import Instr, Kernel, KernelSpec, plan_domain
from .scalar import EMITTERS, LLVM_TYPES, declined


class Unsupported(IrflowError):
    """The IR is not something this backend compiles into a kernel."""


def lower_elementwise(ops: Sequence[Operation], inputs: Sequence[Value],
                      outputs: Sequence[Value]):
    """``(spec, domain, constants)`` for `ops` (in order) computing `outputs` from
    `inputs`: `constants` are the arrays of non-scalar ``const`` ops, which follow
    `inputs` as kernel arguments. Every output must span the whole domain."""
    for v in [*inputs, *(r for op in ops for r in op.results)]:
        if v.type.dtype.short not in LLVM_TYPES:
            raise Unsupported(f"the LLVM backend has no kernels for {v.type.dtype.name} yet "
                              f"(a value of type {v.type})")
    number: dict[Value, int] = {}
    types: list[TensorType] = []
    constants: list[np.ndarray] = []
    instrs: list[Instr] = []
    for v in inputs:
        number[v] = len(types)
        types.append(v.type)
    pending = []  # body ops, lowered once every input (constants too) is numbered
    for op in ops:
        if op.name == "const" and op.result.type.rank > 0:
            number[op.result] = len(types)
            types.append(op.result.type)
            constants.append(np.asarray(op.attrs["value"], op.result.type.dtype.np))
        else:
            pending.append(op)
    n_inputs = len(types)
    try:
        domain, masks = plan_domain(types)
    except ShapeError as e:
        raise Unsupported(f"the chain's inputs span no one domain: {e.message}") from None
    shape = domain.shape
    for op in pending:
        if op.name == "const":
            instrs.append(Instr("const", (), op.result.type.dtype.short,
                                (("value", np.asarray(op.attrs["value"]).item()),)))
        else:
            opdef = lookup(op.name, op.loc)
            if not opdef.has(Elementwise) or op.name not in EMITTERS:
                raise Unsupported(f"'{op.name}' is not an elementwise op with a scalar "
                                  "emitter", op.loc)
            check_dtypes(op)
            if any(v not in number for v in op.operands):
                raise Unsupported(f"'{op.name}' reads a value computed outside the chain",
                                  op.loc)
            extra = pow_attrs(op.operand(1).type.shape, shape) if op.name == "pow" else ()
            instrs.append(Instr(op.name, tuple(number[v] for v in op.operands),
                                op.result.type.dtype.short, tuple(sorted(
                                    [*((k, _attr(v)) for k, v in op.attrs.items()), *extra]))))
        number[op.result] = n_inputs + len(instrs) - 1
    stored = []
    for v in outputs:
        if v.type.shape != shape:
            raise Unsupported(f"an output of shape {list(v.type.shape)} does not span the "
                              f"kernel's domain {list(shape)}")
        if number[v] < n_inputs:  # an input returned as it is: copy it
            instrs.append(Instr("stop_gradient", (number[v],), v.type.dtype.short))
            stored.append(n_inputs + len(instrs) - 1)
        else:
            stored.append(number[v])
    spec = KernelSpec(tuple(t.dtype.short for t in types), masks, tuple(instrs),
                      tuple(stored), len(domain.groups))
    return spec, domain, constants


def check_dtypes(op: Operation) -> None:
    """Raise `Unsupported` where the backend has no code for `op` on its operands'
    and results' dtypes (`irflow.codegen.llvm.scalar.declined`)."""
    reason = declined(op.name, [v.type.dtype.short for v in (*op.operands, *op.results)])
    if reason is not None:
        raise Unsupported(reason, op.loc)


def pow_attrs(exponent, domain) -> tuple[tuple[str, bool], ...]:
    """The attributes of a ``pow`` instruction whose exponent spans `exponent` in the
    kernel's `domain`. NumPy's power loop, where the exponent's stride is 0, takes
    shortcuts for an exponent of -1, 0, 0.5, 1 and 2 (1/x, 1, sqrt, x, x*x: sqrt(-inf)
    is NaN and sqrt(-0.0) is -0.0 where pow gives inf and 0.0). So an exponent of one
    value for the whole domain (a constant, a size-1 array) gets ``scalar_exponent``,
    whose code takes the same shortcuts; one spanning the domain's innermost axis
    (of a static size above 1: NumPy's inner loop) gets none. One broadcast along
    that axis has stride 0 in some of NumPy's inner loops and not in others, as its
    iterator splits and buffers them, so no code gives NumPy's result: `Unsupported`."""
    if all(d == 1 for d in exponent):
        return (("scalar_exponent", True),)
    padded = (1,) * (len(domain) - len(exponent)) + tuple(exponent)
    inner = [(d, e) for d, e in zip(domain, padded) if d != 1]
    if padded == tuple(domain) or inner and isinstance(inner[-1][0], int) \
            and inner[-1][1] == inner[-1][0]:
        return ()
    raise Unsupported(f"pow's exponent of shape {list(exponent)} is broadcast along the "
                      f"innermost axis of {list(domain)}: NumPy's power takes its "
                      "shortcuts for a scalar exponent in some loops of such a call only")


def _attr(value):
    """Attributes as plain hashable data (a cast's dtype by its short name)."""
    return getattr(value, "short", value)


class ElementwiseFunction:
    """A function whose ops are all elementwise or ``const``, as one kernel:
    ``ElementwiseFunction(fn)(*arrays)`` returns the list of results, as
    `irflow.codegen.run(fn, *arrays)` does. Arguments are checked against the
    function's signature first."""

    def __init__(self, fn: Function, compiler: Compiler | None = None):
        ops = list(fn.block.body_ops())
        if any(op.regions for op in ops):
            raise Unsupported(f"@{fn.name} has ops with regions")
        outputs = list(fn.block.terminator.operands)
        used = {v for op in ops for v in op.operands} | set(outputs)
        self._inputs = tuple(i for i, a in enumerate(fn.args) if a in used)
        spec, domain, constants = lower_elementwise(
            ops, [fn.args[i] for i in self._inputs], outputs)
        self.kernel: Kernel = (compiler or default_compiler()).kernel(spec, domain)
        self._constants = constants
        self.signature = Signature.of(fn)

    def __call__(self, *args) -> list[np.ndarray]:
        arrays = self.signature.check(args)
        return self.kernel(*[arrays[i] for i in self._inputs], *self._constants)
