"""`call`: run a function of a module, named by symbol.

    %y, %r = call %x, %w {callee=@forward} : (f32[N,4], f32[N,8])

The callee is a function of the same module (the parser binds ``@forward`` to the
module it reads) or of a module a compiled program owns. The operands must match the
callee's arguments (symbolic dims bind as at a function's entry) and the results
are its results, with those dims substituted.

A compiled Layer called while gradients are recorded enters eager autograd as one
``call`` of the forward half of a `vjp_split`, whose results are the Layer's results
followed by residuals. The attributes ``backward`` (the backward half), ``wrt`` (the
operands that get cotangents), ``outputs`` (the results whose cotangents the
backward takes) and ``residuals`` (how many results are residuals) let its VJP call
the backward half on the output cotangents and the residuals; so ``loss.backward()``
after a compiled forward runs the compiled backward, and one autodiff serves both.
``defined`` lists the positions in ``wrt`` of the gradients that exist only on some
runs (a parameter that only one branch uses): the backward half returns a bool for
each after the gradients, and the VJP gives them as `Defined`, so that eager
``backward()`` leaves such a gradient None where the program did not use it.
"""
from __future__ import annotations

from ..errors import IrflowError, ShapeError, VerificationError
from ..ir.registry import REQUIRED, Defined
from ..ir.symbols import CallOp, FuncRef
from ..ir.traits import ContainerOperands, SparseCotangents
from ..ir.types import Container, TensorType, bind_shape, differentiable, substitute
from ._rules import defop


def _callee(attrs):
    ref = attrs["callee"]
    if not isinstance(ref, FuncRef):
        raise ShapeError(f"call's callee must be a function symbol such as @f, got {ref!r}")
    try:
        return ref.resolve()
    except IrflowError as e:
        raise ShapeError(e.message) from None


def _call_infer(types, attrs):
    fn = _callee(attrs)
    if len(types) != len(fn.args):
        raise ShapeError(f"@{fn.name} takes {len(fn.args)} operands, got {len(types)}")
    bindings: dict[str, int] = dict(attrs["sizes"])
    for i, (t, arg) in enumerate(zip(types, fn.args)):
        expected = arg.type
        if isinstance(expected, Container) or not all(isinstance(d, int) for d in t.shape):
            ok = t == expected
        else:
            ok = t.dtype is expected.dtype and bind_shape(expected.shape, t.shape, bindings)
        if not ok:
            raise ShapeError(f"operand {i} of @{fn.name} is {t}, expected {expected}")
    static = [(a.type.shape, t.shape) for t, a in zip(types, fn.args)
              if isinstance(a.type, TensorType) and t.is_static]
    # once every operand has bound what it can, a dim such as M+N solves for M
    bind_shape(tuple(d for e, _ in static for d in e), tuple(d for _, s in static for d in s),
               bindings)
    out = []
    for r in fn.result_types:
        if isinstance(r, TensorType) and bindings and not r.is_static:
            r = r.with_shape([substitute(d, bindings) for d in r.shape])
        out.append(r)
    return out


def _verify_call(op) -> None:
    if op.attrs["backward"] is not None and not isinstance(op.attrs["backward"], FuncRef):
        raise VerificationError("call's backward must be a function symbol such as @f_grad")


def _call_kernel(*arrays, callee, **unused):
    if callee.run is None:
        raise IrflowError(f"call @{callee.name}: no compiled program is bound to it; run its "
                          "module with the interpreter or the executor")
    results = callee.run(*arrays)
    return results[0] if len(results) == 1 else tuple(results)


def _call_vjp(b, cts, ins, outs, callee, backward, wrt, outputs, residuals, sizes, defined):
    if backward is None or any(ct is not None for ct in cts[len(cts) - residuals:]):
        # no backward half, or gradients reach the residuals (a gradient of a gradient)
        return _derived_vjp(b, cts, ins, callee)
    seeds = [cts[k] if cts[k] is not None else b.zeros(outs[k].type) for k in outputs]
    if len(outputs) > 1:  # whether each exists (`vjp_split`): zeros for a result no
        seeds += [b.constant(cts[k] is not None, "bool") for k in outputs]  # loss reads
    grads = b.create("call", [*seeds, *outs[len(outs) - residuals:]],
                     {"callee": backward}).results
    flags = dict(zip(defined, grads[len(wrt):]))
    in_cts = [None] * len(ins)
    for k, (i, g) in enumerate(zip(wrt, grads)):
        in_cts[i] = Defined(g, flags[k]) if k in flags else g
    return in_cts


def _derived_vjp(b, cts, ins, callee: FuncRef):
    """The VJP of a call whose backward half does not cover the cotangents it gets (a
    compiled backward differentiated again, or residuals that gradients reach): the
    callee's `derive` gives a differentiable call of it with respect to every result,
    which recomputes the results with the residuals its own backward half needs."""
    if callee.derive is None:
        raise IrflowError(f"call @{callee.name} cannot be differentiated: it has no backward "
                          "function and no way to make one")
    attrs = callee.derive(tuple(i for i, v in enumerate(ins) if differentiable(v.type)))
    if attrs is None:  # no result depends on a differentiable operand
        return [None] * len(ins)
    recomputed = b.create("call", ins, attrs).results
    padded = [*cts, *[None] * (len(recomputed) - len(cts))]
    return _call_vjp(b, padded, ins, recomputed, sizes=(), **attrs)


defop("call", _call_infer, _call_kernel, arity=(0, None),
      attrs={"callee": REQUIRED, "backward": None, "wrt": (), "outputs": (), "residuals": 0,
             "sizes": (), "defined": ()},
      vjp=_call_vjp, verify=_verify_call,
      traits=(CallOp(), ContainerOperands(), SparseCotangents()),
      doc="call(xs...) {callee}: the results of function `callee` (a symbol, @name) on xs. "
          "A compiled call in the dynamic graph also names its `backward` function, the "
          "operands it differentiates (`wrt`), the results whose cotangents it takes "
          "(`outputs`) and how many trailing results are `residuals` for it; for each "
          "position of `wrt` listed in `defined` the backward also returns, after the "
          "gradients, a bool that is true where that gradient exists on the run. `sizes` holds "
          "(symbol, size) pairs for result sizes that depend on tensor values, which eager "
          "execution adds once the call has run")
