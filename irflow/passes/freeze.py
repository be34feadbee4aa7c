"""Freezing: function arguments made constants, and large constants made arguments.

An inference compile freezes the parameters and buffers a program only reads
(`freeze_arguments`): they become ``const`` ops, so that ``fold`` evaluates what
reads only them and ``fold-affine`` folds BatchNorm into the weights before it. The
constants hold the parameters' arrays themselves (irflow never writes into an array),
so a caller can tell whether a parameter changed since by identity.

A saved program keeps its weights beside its text: `externalize_constants` turns
the large constants of a frozen, folded program back into arguments, whose values
the caller stores (`freeze_for_inference` does the three steps for ``jit.save``).
"""
from __future__ import annotations

import numpy as np

from ..errors import IrflowError
from ..ir.builder import Builder
from ..ir.core import Function, Module
from ..ir.rewrite import constant_value
from .manager import PassManager


def freeze_arguments(fn: Function, values: dict[int, np.ndarray]) -> None:
    """Replace each argument ``fn.args[i]`` for i in `values` by a constant holding
    ``values[i]`` (which must have the argument's type), in place."""
    b = Builder.before(fn.block.first_op)
    for i, array in values.items():
        arg = fn.args[i]
        constant = b.constant(array, arg.type.dtype, name=arg.name)
        if constant.type != arg.type:
            raise IrflowError(f"cannot freeze argument %{arg.name} of @{fn.name} ({arg.type}) "
                              f"to a value of type {constant.type}")
        arg.replace_all_uses_with(constant)
    fn.block.erase_args(values)


def externalize_constants(fn: Function, min_elements: int = 64) -> list[tuple[str, np.ndarray]]:
    """Turn every constant of `fn`'s body (its regions keep theirs) with at least
    `min_elements` elements into a new trailing argument, in place; returns their
    names and values, in argument order."""
    lifted = []
    for op in list(fn.block.body_ops()):
        value = constant_value(op.result) if len(op.results) == 1 else None
        if value is None or value.size < min_elements:
            continue
        name = op.result.name or f"constant{len(lifted)}"
        arg = fn.block.add_arg(op.result.type, name)
        op.result.replace_all_uses_with(arg)
        op.erase()
        lifted.append((name, value))
    return lifted


def freeze_for_inference(module: Module, first: int, values,
                         pipeline) -> list[tuple[str, np.ndarray]]:
    """An inference program to save: the arguments of ``module.main`` from index
    `first` on frozen to `values`, `pipeline` run (folding BatchNorm into the
    weights), and the large constants made arguments again. Returns their names and
    values, the weights to store beside the program's text."""
    fn = module.main
    freeze_arguments(fn, {first + k: value for k, value in enumerate(values)})
    PassManager(list(pipeline)).run(module)
    return externalize_constants(fn)
