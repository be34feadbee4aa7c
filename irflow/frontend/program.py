"""`irflow.compile` / `irflow.jit.to_static`: Layers and functions as compiled programs.

A `CompiledFunction` wraps a Layer or a function. Each call picks a `Program` for
the call's signature (input types, the Layer's train/eval mode, whether gradients
are recorded), tracing and compiling one on first use:

1. the target's source is converted (`convert.py`) and run on traced inputs, which
   emits IR (`tracer.py`); parameters, buffers and optimizer state become arguments;
2. the IR is verified, kept as ``source_ir``, optimized by the pass pipeline (``ir``)
   and compiled to a plan (`irflow.codegen.executor`);
3. a call checks its inputs, runs the plan on them and on the current values of the
   state tensors, writes back state updates and gradients, and returns Tensors.

When gradients are recorded (training with ``loss.backward()`` outside the compiled
code), the call enters the dynamic graph as one ``call`` op whose VJP runs the
program's compiled backward (see `irflow.ops.call`).
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Sequence

import numpy as np

from ..codegen.executor import compile_plan
from ..dispatch import apply, state, user_location
from ..errors import ConversionError, DimMismatch, InputError, IrflowError
from ..ir import dtypes
from ..ir.core import Module
from ..ir.signature import Signature, SignatureMismatch
from ..ir.symbols import FuncRef
from ..ir.types import TensorType, solve_dim, substitute, symbols_of
from ..ir.verifier import verify
from ..passes.autodiff import vjp_split
from ..passes.manager import DEFAULT_PIPELINE, PassManager
from ..tensor.random import next_seed
from ..tensor.tensor import Tensor
from .convert import convert_function
from .input_spec import InputSpec
from .tracer import Tracer

class Program:
    """One traced signature: its IR, its compiled plan, and how its arguments and
    results connect to Tensors."""

    def __init__(self, tracer: Tracer, out_tensors: list[Tensor], structure, pipeline):
        fn = tracer.fn
        b = tracer.scope.builder
        with b.location(user_location()):
            results = [tracer.value_of(t) for t in out_tensors]
        self.n_outputs = len(results)
        self.structure = structure
        self.state = list(tracer.state)
        self.update_targets = [t for t in self.state if id(t) in tracer.updates]
        results += [tracer.value_of(tracer.updates[id(t)]) for t in self.update_targets]
        self.grad_targets = [tracer.grad_owners[k] for k, g in tracer.grads.items()
                             if g is not None]
        results += [tracer.value_of(tracer.grads[id(t)]) for t in self.grad_targets]
        self.cleared_grads = [tracer.grad_owners[k] for k, g in tracer.grads.items() if g is None]
        self.uses_seed = tracer.seed_arg is not None
        if self.uses_seed:  # the seed goes last, after the state
            k = tracer.seed_arg.index
            fn.block.permute_args([i for i in range(len(fn.args)) if i != k] + [k])
        b.ret(*results)
        self.n_inputs = tracer.n_inputs
        self.input_types = [a.type for a in fn.args[:self.n_inputs]]
        self.input_names = [a.name for a in fn.args[:self.n_inputs]]
        module = Module([fn])
        verify(module)
        self.source_ir = module.clone()
        PassManager(list(pipeline)).run(module)
        self.ir = module
        self.plan = compile_plan(fn)
        self._differentiable: dict[tuple, dict] = {}  # wrt -> attributes of its call op
        self.fixed_dims: dict[str, tuple] = {}  # symbol -> (size, location): see _trace

    def run(self, inputs: Sequence[np.ndarray]) -> list:
        arrays = [*inputs, *(t._value for t in self.state)]
        if self.uses_seed:
            arrays.append(next_seed()._value)
        return self._finish(self.plan(*arrays))

    def _finish(self, outs: list) -> list:
        """Write back state updates and gradients; the outputs remain."""
        n, k = self.n_outputs, len(self.update_targets)
        for t, v in zip(self.update_targets, outs[n:n + k]):
            t._value = v
        for p, g in zip(self.grad_targets, outs[n + k:]):
            if p._grad is None:
                p._grad = Tensor._from_array(g)
            else:
                p._grad._value = g
        for p in self.cleared_grads:
            p._grad = None
        return outs[:n]

    @property
    def records_gradients(self) -> bool:
        """Whether calling it now should enter the dynamic graph: gradients are
        recorded and a parameter requires one (and the program does not compute
        gradients itself)."""
        return (state.grad_enabled and not self.grad_targets
                and any(not t.stop_gradient for t in self.state))

    def run_recorded(self, inputs: Sequence[Tensor]) -> list[Tensor]:
        """Run as one `call` op of the dynamic graph, so that ``backward()`` later runs
        the program's compiled backward."""
        wrt = tuple(i for i, t in enumerate([*inputs, *self.state]) if not t.stop_gradient)
        call = self._differentiable.get(wrt)
        if call is None:
            call = self._differentiable[wrt] = self._split(wrt)
        operands = [*inputs, *self.state] + ([next_seed()] if self.uses_seed else [])
        outs = apply("call", operands, call)
        outs = [outs] if isinstance(outs, Tensor) else list(outs)
        n, k = self.n_outputs, len(self.update_targets)
        for t, v in zip(self.update_targets, outs[n:n + k]):
            t._value = v._value
        return outs[:n]

    def _split(self, wrt) -> dict:
        """The attributes of the ``call`` op that runs this program's forward half and
        whose VJP runs its backward half; both live in a module the call op refers to,
        which goes when nothing refers to it any more."""
        fn = self.ir.main
        outputs = tuple(k for k, t in enumerate(fn.result_types[:self.n_outputs])
                        if t.dtype.is_float)
        forward, backward = vjp_split(fn, wrt, outputs)
        module = Module([forward, backward])
        return {"callee": FuncRef(forward.name, module, compile_plan(forward)),
                "backward": FuncRef(backward.name, module, compile_plan(backward)),
                "wrt": wrt, "outputs": outputs,
                "residuals": len(forward.result_types) - len(fn.result_types)}


class CompiledFunction:
    """A Layer or function compiled to programs, one per call signature."""

    def __init__(self, target, input_spec=None, backend: str = "numpy", check: bool = False,
                 pipeline: Sequence[str] = DEFAULT_PIPELINE):
        from ..nn.layer.layers import Layer
        if backend not in ("numpy",):
            raise IrflowError(f"unknown backend {backend!r}; available: 'numpy'")
        self.target = target
        self.layer = target if isinstance(target, Layer) else \
            getattr(target, "__self__", None) if isinstance(target, types.MethodType) else None
        self.input_spec = None if input_spec is None else [
            s if isinstance(s, InputSpec) else InputSpec.from_tensor(s) for s in input_spec]
        self.backend = backend
        self.check = check
        self.pipeline = tuple(pipeline)
        self._programs: dict[Any, Program] = {}
        self._last: Program | None = None
        self._sublayers = None

    # -- the wrapped layer's attributes (parameters(), train(), state_dict(), ...)
    def __getattr__(self, name: str):
        layer = self.__dict__.get("layer")
        if layer is not None:
            return getattr(layer, name)
        raise AttributeError(name)

    def __get__(self, obj, objtype=None):
        """Used as a decorator on a method: compile per instance."""
        if obj is None:
            return self
        bound = obj.__dict__.get(f"__irflow_compiled_{id(self)}")
        if bound is None:
            bound = CompiledFunction(types.MethodType(self.target, obj), self.input_spec,
                                     self.backend, self.check, self.pipeline)
            obj.__dict__[f"__irflow_compiled_{id(self)}"] = bound
        return bound

    # -- the IR
    @property
    def ir(self) -> Module:
        return self._program_for_ir().ir

    @property
    def source_ir(self) -> Module:
        return self._program_for_ir().source_ir

    def _program_for_ir(self) -> Program:
        if self._last is None:
            if self.input_spec is None:
                raise IrflowError("this function has not been called yet and has no "
                                  "input_spec, so there is no program to show")
            self._last = self._program(self._spec_types(), self._mode_key())
        return self._last

    # -- calling
    def __call__(self, *args, **kwargs):
        if kwargs:
            raise IrflowError("compiled functions take their tensor inputs positionally")
        n = len(self.input_spec) if self.input_spec is not None else len(args)
        if len(args) < n:
            raise InputError(f"{self._name()} expects {n} input(s), got {len(args)}",
                             user_location())
        arrays = [_as_array(a, i) for i, a in enumerate(args[:n])]
        extra = args[n:]
        types_ = self._spec_types() if self.input_spec is not None else [
            TensorType(dtypes.from_numpy(a), a.shape) for a in arrays]
        self._check_inputs(arrays, types_)
        program = self._program(types_, self._mode_key(), extra)
        if program.fixed_dims:
            self._check_inputs(arrays, program.input_types, types_, program.fixed_dims)
        self._last = program
        if self.check:
            return self._checked_call(program, args)
        if program.records_gradients:
            tensors = [a if isinstance(a, Tensor) else Tensor._from_array(x)
                       for a, x in zip(args, arrays)]
            return _rebuild(program.structure, program.run_recorded(tensors))
        outs = program.run(arrays)
        return _rebuild(program.structure, [Tensor._from_array(o) for o in outs])

    def _name(self) -> str:
        target = self.layer if self.layer is not None else self.target
        return getattr(target, "__qualname__", type(target).__name__)

    def _spec_types(self) -> list[TensorType]:
        return [s.to_type() for s in self.input_spec]

    def _mode_key(self):
        if self.layer is None:
            return ()
        if self._sublayers is None:
            self._sublayers = [self.layer, *self.layer.sublayers()]
        return tuple(layer.training for layer in self._sublayers)

    def _check_inputs(self, arrays, types_, spec_types=(), fixed=None) -> None:
        """Check the input arrays against `types_`; `fixed` says which symbols of
        `spec_types` the program fixed to a size, and where (for the message)."""
        try:
            Signature(types_).check(arrays)
        except SignatureMismatch as e:
            i, t, a = e.index, types_[e.index], arrays[e.index]
            name = self.input_spec[i].name if self.input_spec and self.input_spec[i].name \
                else f"input {i}"
            if e.kind == "dtype":
                raise InputError(f"{self._name()}: {name} should be {t.dtype.name}, got "
                                 f"{a.dtype}", user_location()) from None
            shown = [d if isinstance(d, int) else None for d in t.shape]
            why = _why_fixed(spec_types[i].shape, a.shape, fixed) if fixed else ""
            raise InputError(f"{self._name()}: {name} should have shape {shown}, got "
                             f"{list(a.shape)}{why}", user_location()) from None

    def _program(self, types_, mode, extra=()) -> Program:
        key = (tuple(types_), mode, _hashable(extra))
        program = self._programs.get(key)
        if program is None:
            program = self._trace(types_, extra)
            self._programs[key] = program
        return program

    def _trace(self, types_, extra) -> Program:
        """Trace for input types `types_`. Where a type rule needs a symbolic input dim
        to be a static size (a DimMismatch), that symbol is fixed to the size in the
        input types and the target traced again, so the program's input check
        rejects other sizes."""
        fixed = {}
        while True:
            try:
                program = self._trace_as(types_, extra)
            except DimMismatch as e:
                symbol, size = _symbol_to_fix(types_, e)
                fixed[symbol] = (size, e.loc)
                types_ = [t.with_shape([substitute(d, {symbol: size}) for d in t.shape])
                          for t in types_]
                continue
            program.fixed_dims = fixed
            return program

    def _trace_as(self, types_, extra) -> Program:
        params = _parameter_names(self.layer.forward if self.target is self.layer
                                  else self.target)
        names = [(s.name if self.input_spec and s.name else
                  params[i] if i < len(params) else f"x{i}") for i, s in
                 enumerate(self.input_spec or [None] * len(types_))]
        stop = [s.stop_gradient if self.input_spec else True
                for s in (self.input_spec or [None] * len(types_))]
        tracer = Tracer(_ir_name(self._name()), self._state_names())
        with tracer:
            inputs = [tracer.input(t, n, sg) for t, n, sg in zip(types_, names, stop)]
            out = self._run_converted(inputs, extra)
            tensors, structure = _flatten(out)
            return Program(tracer, tensors, structure, self.pipeline)

    def _state_names(self) -> dict[int, str]:
        """IR names for the layer's parameters and buffers: their state_dict keys."""
        if self.layer is None:
            return {}
        named = [*self.layer.named_parameters(), *self.layer.named_buffers()]
        return {id(t): name for name, t in named}

    def _run_converted(self, inputs, extra):
        if self.layer is not None and self.target is self.layer:
            return self.layer(*inputs, *extra)  # Layer.__call__ converts forward when tracing
        return convert_function(self.target)(*inputs, *extra)

    def _checked_call(self, program: Program, args):
        from .check import checked_call
        return checked_call(self, program, args)

    def _eager_call(self, args):
        """The target run as plain eager code (for check=True)."""
        tensors = [a if isinstance(a, Tensor) else Tensor._from_array(np.asarray(a))
                   for a in args]
        return self.target(*tensors)


def _symbol_to_fix(types_, e: DimMismatch) -> tuple[str, int]:
    """The input symbol and size that resolve `e`; raises `e` if there is none (its
    dim is not linear in one input symbol, or no size fits)."""
    solved = solve_dim(e.dim, e.size, {})
    if solved is None or solved[1] is None or \
            not any(solved[0] in symbols_of(d) for t in types_ for d in t.shape):
        raise e
    return solved


def _why_fixed(spec_shape, actual, fixed: dict) -> str:
    """Why the axes of `actual` that a fixed symbol of `spec_shape` stands for are wrong."""
    why = ""
    for axis, (d, n) in enumerate(zip(spec_shape, actual)):
        if d in fixed and fixed[d][0] != n:
            size, loc = fixed[d]
            why += (f"; its axis {axis} is unknown in the input_spec, but the program needs "
                    f"{size} there" + (f" ({loc})" if loc else ""))
    return why


def _parameter_names(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _as_array(a, index: int) -> np.ndarray:
    if isinstance(a, Tensor):
        return a._concrete(f"input {index}")
    if isinstance(a, np.ndarray):
        return a
    raise InputError(f"input {index} should be a Tensor or a NumPy array, got "
                     f"{type(a).__name__}", user_location())


def _hashable(values) -> tuple:
    out = []
    for v in values:
        try:
            hash(v)
            out.append(v)
        except TypeError:
            out.append(id(v))
    return tuple(out)


def _ir_name(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "program"


def _flatten(out):
    """The tensors in a (nested) output, and how to rebuild it."""
    if isinstance(out, Tensor):
        return [out], "tensor"
    if isinstance(out, tuple | list):
        tensors, parts = [], []
        for item in out:
            t, s = _flatten(item)
            tensors += t
            parts.append((len(t), s))
        return tensors, (type(out), parts)
    if isinstance(out, dict):
        tensors, parts = [], []
        for key, item in out.items():
            t, s = _flatten(item)
            tensors += t
            parts.append((key, len(t), s))
        return tensors, (dict, parts)
    return [], ("constant", out)


def _rebuild(structure, tensors: list):
    if structure == "tensor":
        return tensors[0]
    kind, parts = structure
    if kind == "constant":
        return parts
    if kind is dict:
        out, i = {}, 0
        for key, n, s in parts:
            out[key] = _rebuild(s, tensors[i:i + n])
            i += n
        return out
    items, i = [], 0
    for n, s in parts:
        items.append(_rebuild(s, tensors[i:i + n]))
        i += n
    return kind(items)


def compile(target=None, input_spec=None, backend: str = "numpy", check: bool = False,  # noqa: A001
            **options):
    """Compile a Layer or function (also usable as a decorator)."""
    if target is None:
        return lambda t: CompiledFunction(t, input_spec, backend, check, **options)
    return CompiledFunction(target, input_spec, backend, check, **options)


__all__ = ["CompiledFunction", "Program", "compile", "ConversionError"]
