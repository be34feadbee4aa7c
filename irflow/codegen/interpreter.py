"""The NumPy interpreter: the reference semantics of the IR.

It walks a function's ops in order, calling each op's registered NumPy kernel; an op
with regions runs through its `RegionOp` evaluator, given callables that interpret
its regions, and a ``call`` interprets the function it names. Symbolic dims are
bound from the actual shapes of the function's arguments (and of each region's
arguments, for sizes that change from one loop iteration to the next, and of op
results, for data-dependent sizes); attributes that hold shapes
(`OpDef.shape_attrs`) get their symbols replaced before the kernel runs.

With ``check=True`` (the default) every result is checked against its IR type, so a
kernel that returns the wrong dtype or shape is caught where it happens.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..errors import IrflowError, ShapeError
from ..ir.core import Block, Function, Module, Operation
from ..ir.registry import lookup
from ..ir.signature import Signature
from ..ir.symbols import CallOp
from ..ir.types import TensorType, bind_shape, eval_shape, is_symbol, shape_str


class Interpreter:
    """`check`: verify each result against its type. `observe(op, results)`, if given,
    is called after each op runs (compile(check=True) uses it to compare with eager)."""

    def __init__(self, check: bool = True, observe=None):
        self.check = check
        self.observe = observe

    def run(self, fn: Function, args: Sequence) -> list[np.ndarray]:
        arrays, bindings = Signature.of(fn).bind(args)
        return self.block(fn.block, arrays, bindings)

    def block(self, block: Block, args: Sequence[np.ndarray], bindings: dict[str, int]) -> list:
        env = dict(zip(block.args, args))
        for op in block.body_ops():
            results = self.op(op, [env[v] for v in op.operands], bindings)
            env.update(zip(op.results, results))
            if self.observe is not None:
                self.observe(op, results)
        return [env[v] for v in block.terminator.operands]

    def region(self, op: Operation, index: int, args: list, bindings: dict[str, int]) -> list:
        block = op.regions[index].blocks[0]
        inner = dict(bindings)
        for param, arg in zip(block.args, args):
            if isinstance(param.type, TensorType) and not bind_shape(param.type.shape, arg.shape,
                                                                     inner):
                # A loop-varying dim: rebind the region's own symbols to this iteration.
                inner.update(_fresh_bindings(param.type, arg))
        return self.block(block, args, inner)

    def op(self, op: Operation, args: list, bindings: dict[str, int]) -> list:
        opdef = lookup(op.name)
        if opdef.region_op is not None:
            regions = [functools.partial(self.region, op, i, bindings=bindings)
                       for i in range(len(op.regions))]
            return list(opdef.region_op.evaluator(op)(args, regions))
        call = opdef.trait(CallOp)
        if call is not None:
            return self.run(call.callee(op), args)
        if op.name == "const":  # the attribute's own array would reach the caller, who
            return [op.attrs["value"].copy()]  # could write into the module's constant
        attrs = op.attrs
        if opdef.shape_attrs:
            attrs = dict(attrs)
            for key in opdef.shape_attrs:
                if attrs[key] is not None:
                    attrs[key] = eval_shape(attrs[key], bindings)
        try:
            out = opdef.kernel(*args, **attrs)
        except IrflowError as e:
            raise e.with_loc(op.loc)
        results = [out] if len(op.results) == 1 else list(out)
        for i, r in enumerate(op.results):
            if isinstance(r.type, TensorType):
                results[i] = np.asarray(results[i])
                if self.check:
                    _check_result(results[i], r.type, bindings, op)
                elif not r.type.is_static:  # a data-dependent size binds its symbol here
                    bind_shape(r.type.shape, results[i].shape, bindings)
        return results


def _fresh_bindings(t: TensorType, array: np.ndarray) -> dict[str, int]:
    return {d: n for d, n in zip(t.shape, array.shape) if is_symbol(d)}


def _check_result(array: np.ndarray, t: TensorType, bindings: dict[str, int],
                  op: Operation) -> None:
    """A kernel result against its IR type (a kernel bug, not the caller's)."""
    what = f"the kernel of '{op.name}'"
    if array.dtype != t.dtype.np:
        raise ShapeError(f"{what}: expected dtype {t.dtype.name}, got {array.dtype}", op.loc)
    if not bind_shape(t.shape, array.shape, bindings):
        raise ShapeError(f"{what}: expected shape {shape_str(t.shape)}, got "
                         f"{shape_str(array.shape)}", op.loc)


def run(ir: Module | Function, *args, function: str | None = None, check: bool = True):
    """Run `ir` (a function, or a module's `function`, its first by default) on NumPy
    arrays; returns the list of results."""
    fn = ir if isinstance(ir, Function) else (ir[function] if function else ir.main)
    return Interpreter(check).run(fn, args)
