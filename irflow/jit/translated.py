"""`TranslatedLayer`: a loaded program as a Layer, without the class it was saved from.

Its parameters and buffers are registered under their saved names (``fc1.weight``
in a sublayer ``fc1``), so ``named_parameters()``, ``state_dict()`` and
``set_state_dict()`` read as the original Layer's did. Its `forward` *inlines* the
loaded function into whatever program is being traced: the function's ops are
copied into the current block, its signature's symbols bound to the dims of the
values passed in (a dim the program needs static, or two it needs equal, is a
`DimMismatch`, which the caller resolves as for any op). Called eagerly, the Layer
runs through `irflow.compile` of itself, so a call is a compiled plan, a gradient
flows back through the program's own autodiff (fine-tuning with ``train()``), and
a loaded Layer can be part of another compiled model or static program.
"""
from __future__ import annotations

import numpy as np

from ..context import current_tracer, grad_enabled
from ..errors import DimMismatch, InputError, ShapeError
from ..frontend.input_spec import InputSpec
from ..frontend.program import DEFAULT_BACKEND, CompiledFunction
from ..ir.core import Block, Function, Module, Value
from ..ir.sizes import substitute_symbols
from ..ir.types import (ListType, StackType, TensorType, differentiable, is_symbol, substitute,
                        symbols_of)
from ..nn.layer.layers import Layer
from ..tensor.convert import as_tensor
from ..tensor.tensor import Parameter, Tensor


class TranslatedLayer(Layer):
    """Paddle's ``paddle.jit.TranslatedLayer``: what `jit.load` returns. Call it as the
    saved Layer; `ir` is the loaded program."""

    def __init__(self, function: Function, inputs: list[dict], state: list[tuple],
                 training: bool = False, backend: str = DEFAULT_BACKEND):
        super().__init__()
        self._function = function
        self._state = [self._add_saved(*entry) for entry in state]
        self._input_spec = [InputSpec(e["shape"], e["dtype"], e["name"]) for e in inputs]
        # kept outside the layer's structure: a compiled layer passes for its layer, and
        # as a sublayer of itself would make every traversal endless
        self.__dict__["_compiled"] = CompiledFunction(self, self._input_spec, backend)
        self.train(training)

    @property
    def ir(self) -> Module:
        return self._function.parent

    @property
    def input_spec(self) -> list[InputSpec]:
        """The inputs the program takes, by name, dtype and shape (None: any size)."""
        return list(self._input_spec)

    def _add_saved(self, name: str, kind: str, trainable: bool, array: np.ndarray) -> Tensor:
        """Register the state tensor `name` (``block.0.weight``) in sublayers named by
        its dotted prefix."""
        *path, leaf = name.split(".")
        owner = self
        for part in path:
            owner = owner._sub_layers.get(part) or owner.add_sublayer(part, Layer())
        if kind == "parameter":
            t = Parameter(array, name=name, trainable=trainable)
            owner.add_parameter(leaf, t)
        else:
            t = Tensor._from_array(array)
            t.name = name
            owner.register_buffer(leaf, t)
        return t

    def __call__(self, *inputs):
        if current_tracer() is None:
            return self._compiled(*inputs)
        return super().__call__(*inputs)

    def forward(self, *inputs):
        """The loaded function inlined into the program being traced."""
        if len(inputs) != len(self._input_spec):
            raise InputError(f"the loaded program takes {len(self._input_spec)} input(s) "
                             f"({', '.join(s.name for s in self._input_spec)}), got "
                             f"{len(inputs)}")
        outs = inline(self._function, [*map(as_tensor, inputs), *self._state])
        return outs[0] if len(outs) == 1 else outs

    def program(self) -> Module:
        """The loaded program (Paddle's ``TranslatedLayer.program()``)."""
        return self.ir


def inline(fn: Function, operands: list[Tensor]) -> list[Tensor]:
    """The results of `fn` on `operands`, its ops copied into the block the active
    tracer is tracing."""
    tracer = current_tracer()
    values = [tracer.value_of(t) for t in operands]
    bindings = _bindings(fn, values)
    body = fn.body.clone().blocks[0]
    fresh = {s: tracer.fresh_dim() for s in sorted(_symbols(body)) if s not in bindings}
    substitute_symbols(body, {**bindings, **fresh})
    for arg, v in zip(body.args, values):
        arg.replace_all_uses_with(v)
    builder = tracer.scope.builder
    for op in list(body.body_ops()):
        builder.insert(op.detach())
    results = list(body.terminator.operands)
    body.terminator.drop_operands()
    requires = grad_enabled() and any(not t.stop_gradient for t in operands)
    return [tracer.wrap(v, not (requires and differentiable(v.type))) for v in results]


def _bindings(fn: Function, values: list[Value]) -> dict:
    """The dims of `values` that `fn`'s signature symbols stand for."""
    bindings: dict = {}
    for i, (arg, v) in enumerate(zip(fn.args, values)):
        want, got = arg.type, v.type
        if want.dtype is not got.dtype or want.rank != got.rank:
            raise ShapeError(f"argument {i} (%{arg.name}) of the loaded program is {want}, "
                             f"got {got}")
        for e, d in zip(want.shape, got.shape):
            if is_symbol(e) and e not in bindings:
                bindings[e] = d
                continue
            needed = substitute(e, bindings)
            if needed == d:
                continue
            message = f"argument {i} (%{arg.name}) of the loaded program is {want}, got {got}"
            if is_symbol(d) and (isinstance(needed, int) or is_symbol(needed)):
                raise DimMismatch(message, d, needed)
            raise ShapeError(message)
    return bindings


def _symbols(block: Block) -> set[str]:
    """Every symbol in the types of `block` (and of the regions in it)."""
    found: set[str] = set()

    def add(t) -> None:
        if isinstance(t, TensorType):
            found.update(s for d in t.shape for s in symbols_of(d))
        elif isinstance(t, ListType):
            add(t.elem)
        elif isinstance(t, StackType):
            for e in t.elems:
                add(e)

    for arg in block.args:
        add(arg.type)
    for op in block.walk():
        for r in op.results:
            add(r.type)
        for region in op.regions:
            for arg in region.blocks[0].args:
                add(arg.type)
    return found


__all__ = ["TranslatedLayer", "inline"]
