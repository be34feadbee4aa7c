"""Checks for one registered op: its type rule against its kernel, and its VJP rule
against central finite differences of its kernel.

`check_op_vjp` builds the IR function ``(operands..., cotangents...) -> operand
cotangents`` from the op's VJP rule, verifies it, runs it on the interpreter and
compares with finite differences of ``sum(cotangent * kernel(operands))``.
"""
from __future__ import annotations

import numpy as np

from irflow.codegen import run
from irflow.ir import Builder, Function, Module, TensorType, lookup, verify
from irflow.ir.dtypes import from_numpy


def apply_op(name: str, arrays, **attrs) -> list[np.ndarray]:
    """Build a one-op function, verify it and interpret it (type rule and kernel
    checked against each other by the interpreter)."""
    fn = Function(name, types_of(arrays))
    b = Builder(fn.block)
    op = b.create(name, fn.args, attrs)
    b.ret(*op.results)
    verify(Module([fn]))
    return run(fn, *arrays)


def types_of(arrays) -> list[TensorType]:
    return [TensorType(from_numpy(np.asarray(a)), np.shape(a)) for a in arrays]


def vjp_function(name: str, types, attrs: dict) -> Function:
    """``(operands..., cotangents...) -> operand cotangents`` from `name`'s VJP rule
    (zeros where it gives None); `types` may hold symbolic dims."""
    fn = Function(f"{name}_vjp", types)
    b = Builder(fn.block)
    op = b.create(name, fn.args, attrs)
    cts = [fn.block.add_arg(r.type, f"ct{i}") for i, r in enumerate(op.results)]
    grads = lookup(name).vjp(b, cts, list(op.operands), list(op.results), **op.attrs)
    assert len(grads) == len(types), f"{name}'s VJP returned {len(grads)} cotangents"
    outs = []
    for g, a in zip(grads, fn.args):
        if g is None:
            g = b.broadcast_to(b.constant(0, a.type.dtype), shape=a.type.shape)
        assert g.type == a.type, f"{name}'s VJP gives {g.type} for an operand of {a.type}"
        outs.append(g)
    b.ret(*outs)
    verify(Module([fn]))
    return fn


def check_op_vjp(name: str, arrays, attrs: dict | None = None, wrt=None,
                 rtol: float = 1e-6, atol: float = 1e-9, eps: float = 1e-6, seed: int = 0):
    """Compare the VJP rule of `name` with central differences, in float64.
    `wrt`: indices of the operands to check (default: every float operand)."""
    attrs = attrs or {}
    arrays = [np.asarray(a) for a in arrays]
    kernel = lookup(name).kernel
    outs = apply_op(name, arrays, **attrs)
    full_attrs = lookup(name).complete_attrs(attrs, types_of(arrays))
    rng = np.random.default_rng(seed)
    cts = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    fn = vjp_function(name, types_of(arrays), attrs)
    grads = run(fn, *arrays, *cts)
    wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if wrt is None else wrt

    def objective(xs):
        res = kernel(*xs, **full_attrs)
        res = [res] if len(outs) == 1 else list(res)
        return sum(float(np.sum(c * r)) for c, r in zip(cts, res) if c.dtype.kind == "f")

    for i in wrt:
        fd = np.zeros(arrays[i].shape)
        flat = fd.reshape(-1)
        for k in range(arrays[i].size):
            xs = [a.copy() for a in arrays]
            xs[i].reshape(-1)[k] += eps
            up = objective(xs)
            xs[i].reshape(-1)[k] -= 2 * eps
            down = objective(xs)
            flat[k] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[i], fd, rtol=rtol, atol=atol,
                                   err_msg=f"VJP of {name} w.r.t. operand {i}")
    return grads
