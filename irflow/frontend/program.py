"""`irflow.compile` / `irflow.jit.to_static`: Layers and functions as compiled programs.

A `CompiledFunction` wraps a Layer or a function. Each call picks a `Program` for
the call's signature (input types, which inputs require a gradient, whether
gradients are recorded, the train/eval flags of the wrapped Layer's tree or of the
Layers a function names and every Layer a trace went through, and the exact values
of the arguments that are None, bools, numbers or strings), tracing and compiling
one on first use:

1. the target's source is converted (`convert.py`) and run on traced inputs, which
   emits IR (`tracer.py`); parameters, buffers and optimizer state become arguments;
2. the IR is verified, kept as ``source_ir``, optimized by the pass pipeline (``ir``;
   what each pass did is ``pass_report``) and compiled to a plan
   (`irflow.codegen.executor`); with ``freeze=True``, an eval-mode program's
   parameters and buffers are constants first, so BatchNorm folds into the Conv2D
   or Linear before it;
3. a call checks its inputs, runs the plan on them and on the current values of the
   state tensors, writes back state updates and gradients, and returns Tensors.

A call of Tensors or arrays alone that an earlier call was made with takes a short
way (`CompiledFunction._call_key`): keyed by everything the program depends on
(the inputs' dtypes, shapes and stop-gradient flags, the grad mode, the train/eval
flags, the stored attributes and gradients present), it finds the program and a
`Plan.runner` for those shapes, so it checks no input again and builds no program
key; the runner checks only the state arguments.

When gradients are recorded and an input, parameter or captured tensor requires
one (training with ``loss.backward()`` outside the compiled code), the call enters
the dynamic graph as one ``call`` op whose VJP runs the program's compiled backward
(see `irflow.ops.call`).

Programs hold the Parameter and buffer objects they were traced with. A Layer counts
the changes of what it registers (`Layer._structure_version`); each call compares the
counts of the layers its programs were traced from (the wrapped Layer's tree and
every layer called while tracing) and, when one changed (``m.fc = nn.Linear(...)``),
drops the programs so that the call traces anew.
"""
from __future__ import annotations

import builtins
import copy
import inspect
import operator
import types
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from ..autograd import _run_hooks
from ..codegen.executor import NUMPY, Lowering, compile_plan
from ..context import current_tracer, grad_enabled
from ..dispatch import apply, user_location, warn_at_user
from ..errors import (ArgumentError, ConversionError, DimMismatch, InputError, IrflowError,
                      ShapeError)
from ..ir import dtypes
from ..ir.core import Function, Module
from ..ir.registry import attr_key
from ..ir.signature import Signature, SignatureMismatch
from ..ir.symbols import FuncRef
from ..ir.types import (Dim, TensorType, bind_shape, is_symbol, solve_dim, substitute,
                        symbols_of)
from ..ir.verifier import verify
from ..passes.autodiff import active_results, vjp_split
from ..passes.freeze import freeze_arguments
from ..passes.manager import (DEFAULT_PIPELINE, INFERENCE_PIPELINE, PassManager, PassReport,
                              split_at_autodiff)
from ..tensor.convert import default_float_dtype
from ..tensor.manipulation import stack, unbind
from ..tensor.random import next_seed
from ..tensor.tensor import Tensor, cleared_gradient, is_cleared_gradient
from .convert import Unconvertible, convert_function
from .jst import converts, to_static_enabled
from .input_spec import InputSpec
from .structure import (CONSTANTS, LEAF, Constant, Container, Pattern, Structure, describe,
                        flatten, unflatten)
from .tensor_array import TensorArray
from .containers import ContainerSnapshot
from .tracer import NUMBER_DTYPES, RunTimeGradient, Tracer

BACKENDS = ("numpy", "llvm")
DEFAULT_BACKEND = "llvm"  # compiled kernels; "numpy" runs the reference semantics alone
_KNOWN_CALLS = 8  # call keys per compiled function that `__call__` takes the short way
_PROGRAM_KEYS = 256  # program keys per compiled function, the oldest dropped beyond
_VARIANTS = 8  # programs kept per key for other values of what their guards read
_VALUES_WARNED = 8  # programs for different values of the non-tensor arguments: warn
_training_in_dict = operator.itemgetter("training")  # a Layer's own flag
_value = operator.attrgetter("_value")
_structure_version = operator.attrgetter("_structure_version")
_UNROLLED = 64  # layers a `_LayerWatch` reads in one generated function, at most


class Program:
    """One traced signature: its IR, its compiled plan, and how its arguments and
    results connect to Tensors."""

    def __init__(self, tracer: Tracer, out_tensors: list[Tensor], pattern: Pattern, pipeline,
                 lists: tuple[int, ...] = (), freeze: bool = False, fuse: bool = True,
                 lowering: Lowering = NUMPY, changed_inputs: Sequence[tuple] = ()):
        """`pipeline`: the passes to run (None: the default, or the inference pipeline
        when parameters are frozen); `freeze`: make the state the program only reads
        constants, unless it computes gradients; `fuse`: run the passes that come
        after autodiff (fusion) too; check mode does not, to compare op by op;
        `lowering`: the backend's kernels (`backend_lowering`); `changed_inputs`:
        (index, traced tensor) of the inputs the code changed in place (``x[i] = v``),
        whose new values each call writes into the caller's tensors."""
        fn = tracer.fn
        b = tracer.scope.builder
        attributes = tracer.attribute_outputs()
        self.attributes = [(layer, name) for layer, name, _ in attributes]
        with b.location(user_location()):
            results = [tracer.value_of(t) for t in out_tensors]
            results += [tracer.value_of(t) for _, _, t in attributes]
            results += [tracer.value_of(t) for _, t in changed_inputs]
        self.changed_inputs = [k for k, _ in changed_inputs]
        # the function's tensors, then Layer attributes, then the inputs changed in place
        self.n_outputs = len(results)
        self.pattern = pattern  # what the function returns, around its tensors
        self.lists = lists      # outputs that are lists the program grew, stacked
        self.state = list(tracer.state)
        self.update_targets = [t for t in self.state if id(t) in tracer.updates]
        results += [tracer.value_of(tracer.updates[id(t)]) for t in self.update_targets]
        grads = {k: g.value if isinstance(g, RunTimeGradient) else g
                 for k, g in tracer.grads.items()}
        zeroed = [k for k, g in grads.items() if g is not None and g is tracer.zero_grads.get(k)]
        self.grad_targets = [tracer.grad_owners[k] for k, g in grads.items()
                             if g is not None and k not in zeroed]
        results += [tracer.value_of(grads[id(t)]) for t in self.grad_targets]
        # gradients the program leaves zero-filled (clear_grad()): set by `_finish`, not
        # computed (param, its zero gradient: read-only, so every call sets the same one)
        self.zeroed_grads = [(tracer.grad_owners[k], cleared_gradient(
            grads[k]._ir.type.dtype.np, grads[k]._ir.type.shape)) for k in zeroed]
        self.cleared_grads = [tracer.grad_owners[k] for k, g in grads.items() if g is None]
        # gradients (and zeros) that exist on some runs only: the indices into
        # grad_targets and zeroed_grads of those whose bool the program returns last
        flags = {k: g.defined for k, g in tracer.grads.items() if isinstance(g, RunTimeGradient)}
        self.flagged_grads = [i for i, p in enumerate(self.grad_targets) if id(p) in flags]
        self.flagged_zeros = [i for i, (p, _) in enumerate(self.zeroed_grads) if id(p) in flags]
        results += [tracer.value_of(flags[id(self.grad_targets[i])]) for i in self.flagged_grads]
        results += [tracer.value_of(flags[id(self.zeroed_grads[i][0])])
                    for i in self.flagged_zeros]
        # the inputs a backward() gave a gradient, which the call adds to the caller's
        # tensors' (`_finish`), then the positions in it of those that exist on some
        # runs only, whose bools the program returns last
        self.input_grads = sorted(tracer.input_grads)
        results += [tracer.value_of(tracer.input_grads[k][0]) for k in self.input_grads]
        self.flagged_inputs = [i for i, k in enumerate(self.input_grads)
                               if tracer.input_grads[k][1] is not True]
        results += [tracer.value_of(tracer.input_grads[self.input_grads[i]][1])
                    for i in self.flagged_inputs]
        self.sets_gradients = bool(self.grad_targets or self.zeroed_grads or
                                   self.input_grads)  # a backward() ran
        self.uses_seed = tracer.seed_arg is not None
        # host code each run makes before and after its plan (`Tracer.on_host`)
        self.before_run = [call for _, call in tracer.before_run]
        self.after_run = [call for _, call in tracer.after_run]
        self.host_owners = list({id(o): o for o, _ in (*tracer.before_run,
                                                       *tracer.after_run)}.values())
        # what `aliased` checks a call against (tensors are compared by identity: an
        # in-place change rebinds a tensor's array, never writes into it)
        self._state_ids = frozenset(map(id, self.state))
        self._updated_ids = frozenset(map(id, self.update_targets))
        self.writes_in_place = bool(self.changed_inputs or self.update_targets)
        # the arguments: inputs, state, the gradients read, then the seed
        self.grad_inputs = [p for p, _ in tracer.grad_inputs.values()]
        self.grad_presence = list(tracer.grad_presence.values())
        self.backward_leaves = list(tracer.backward_leaves.values())  # their hooks ran
        self.changed_numbers = list(dict.fromkeys(tracer.changed_numbers))
        self.number_inputs = [(layer, name) for layer, name, _ in tracer.number_args]
        self.number_types = [arg.type.dtype.np for _, _, arg in tracer.number_args]
        last = [g._ir for _, g in tracer.grad_inputs.values()] + \
            [arg for _, _, arg in tracer.number_args] + \
            ([tracer.seed_arg] if self.uses_seed else [])
        if last:
            moved = {a.index for a in last}
            fn.block.permute_args([i for i in range(len(fn.args)) if i not in moved]
                                  + [a.index for a in last])
        b.ret(*results)
        self.n_inputs = tracer.n_inputs
        self.input_types = [a.type for a in fn.args[:self.n_inputs]]
        self.input_names = [a.name for a in fn.args[:self.n_inputs]]
        # (tensor, the array frozen into the IR) for each state tensor made a constant
        self.frozen: list[tuple[Tensor, np.ndarray]] = []
        if freeze and not self.sets_gradients:
            self._freeze(fn)
        # every tensor whose array the IR holds as a constant, a captured one included
        # (a mask the function names): the program is stale once one has another
        self.fixed = self.frozen + [(t, t._value) for t in tracer.alive]
        # the Python values the trace read, but those the program carries or stores;
        # of irflow's own layers (whose code is not converted), their configuration
        for layer in {id(layer): layer for layer in tracer.layers}.values():
            if not converts(type(layer).forward):
                tracer.reads.configuration(layer)
        self.guards = tracer.reads.guards(
            {(id(layer), name) for layer, name in tracer.numbers}
            | {(id(layer), name) for layer, name, _, _ in tracer.attributes.values()})
        self.checks_staleness = bool(self.fixed or self.guards)
        if pipeline is None:
            pipeline = INFERENCE_PIPELINE if self.frozen else DEFAULT_PIPELINE
        self.pipeline = tuple(pipeline)
        self.lowering = lowering
        module = Module([fn])
        verify(module)
        self.source_ir = module.clone()
        # Autodiff differentiates what the passes before fusion made; the rest runs on
        # the program and on its gradient's halves.
        before, self.after_autodiff = split_at_autodiff(self.pipeline)
        if not fuse:
            self.after_autodiff = []
        first = PassManager(before)
        first.run(module)
        self.pass_report = first.history
        self.differentiable_ir = module
        if self.after_autodiff:
            self.differentiable_ir = module.clone()
            rest = PassManager(self.after_autodiff)
            rest.run(module)
            self.pass_report = PassReport([*first.history, *rest.history])
        self.ir = module
        self.plan = compile_plan(fn, lowering)
        # whether a call writes anything back (`_finish`)
        self._writes_back = bool(self.update_targets or self.grad_targets or self.cleared_grads
                                 or self.zeroed_grads or self.input_grads)
        self._ran = self.plan  # the plan of the last call: this one or a forward half
        # wrt -> (the attributes of its call op, None if no output is active; which
        # outputs are active)
        self._differentiable: dict[tuple, tuple[dict | None, list[bool]]] = {}
        self.fixed_dims: dict[str, tuple] = {}  # symbol -> (size, location): see _trace

    def _freeze(self, fn) -> None:
        """Make constants of the state arguments the program does not update."""
        updated = {id(t) for t in self.update_targets}
        frozen = {self.n_inputs + k: t for k, t in enumerate(self.state) if id(t) not in updated}
        freeze_arguments(fn, {i: t._value for i, t in frozen.items()})
        self.frozen = [(t, t._value) for t in frozen.values()]
        self.state = [t for t in self.state if id(t) in updated]

    def stale(self) -> bool:
        """Whether a tensor the IR holds as a constant has another value now
        (`outdated`), or a Python value the trace read has (`guards`)."""
        return self.outdated() or not self.guards.hold()

    def outdated(self) -> bool:
        """Whether a tensor the IR holds as a constant (a frozen parameter or buffer, a
        captured tensor) has another value now: training, ``set_state_dict`` and
        in-place changes such as ``mask[0] = 0`` rebind a tensor's array, never write
        into it, so such a program never holds again (unlike one whose guards fail,
        whose values may come back)."""
        return bool(self.fixed) and any(t._value is not array for t, array in self.fixed)

    @property
    def memory_plan(self):
        """The memory plan of the last call (`irflow.passes.plan_buffers.MemoryPlan`):
        of the program's plan, or of its forward half when the call was recorded for
        eager autograd."""
        return self._ran.memory_plan

    def run(self, inputs: Sequence[np.ndarray], runner=None, tensors: Sequence = ()) -> list:
        """The outputs for the input arrays; `runner`: a `runner` for inputs of exactly
        these dtypes and shapes, which checks only the other arguments; `tensors`: the
        call's inputs, whose gradients a backward() in the program adds to."""
        self._ran = self.plan
        arrays = self._arguments(inputs)
        if self.uses_seed:
            arrays.append(next_seed()._value)
        outs = self.plan(*arrays) if runner is None else runner(arrays)
        return self._finish(outs, tensors) if self._writes_back else outs

    def _arguments(self, inputs: Sequence[np.ndarray]) -> list:
        """The plan's arguments but the seed: inputs, state, the gradients read, the
        numbers carried."""
        arrays = [*inputs, *map(_value, self.state)]
        if self.grad_inputs:
            arrays += [p._grad._value for p in self.grad_inputs]
        if self.number_inputs:
            arrays += self._numbers_now()
        return arrays

    def runner(self, inputs: Sequence[np.ndarray]):
        """A `Plan.runner` trusting inputs of the dtypes and shapes of `inputs` (the
        caller's cache key), or None: the program draws a seed (making the
        arguments once would draw one), or its other arguments do not fit now (a
        call raises then)."""
        if self.uses_seed:
            return None
        try:
            arrays = self._arguments(inputs)
        except IrflowError:  # a number attribute that is no number now
            return None
        return self.plan.runner(arrays, self.n_inputs)

    def direct(self, runner) -> Callable | None:
        """For calls that enter no dynamic graph (gradients off, or a program that
        sets gradients itself: a training step), by `runner` (see `run`), of a program
        that changes no input, stores no attribute, reads no number or seed and
        returns no grown list: ``call(arrays)`` returning what the function returns,
        the work of `call`, `run`, `_finish` and `returned` in one frame (a batch-1
        call of a small model spent 1.2 µs in them; a training step after another
        framework's, tens of µs). None for other programs."""
        if runner is None or self.changed_inputs or self.attributes or self.number_inputs \
                or self.uses_seed or self.lists or self.input_grads or self.before_run \
                or self.after_run:
            return None
        plan, state, fill, wrap = self.plan, self.state, self.pattern.fill, Tensor._from_array
        if not (self._writes_back or self.grad_inputs):
            def call(arrays: list):
                self._ran = plan
                return fill([wrap(o) for o in runner([*arrays, *map(_value, state)])])
            return call
        arguments, finish = self._arguments, self._finish

        def call_writing_back(arrays: list):
            self._ran = plan
            return fill([wrap(o) for o in finish(runner(arguments(arrays)))])
        return call_writing_back

    def _numbers_now(self) -> list[np.ndarray]:
        """The numbers the program carries (`Tracer.lift_numbers`), as they are now."""
        arrays = []
        for (layer, name), dtype in zip(self.number_inputs, self.number_types):
            value = layer.__dict__.get(name)
            if NUMBER_DTYPES.get(type(value)) is None or (dtype == np.bool_) != isinstance(
                    value, bool):
                traced = "a bool" if dtype == np.bool_ else "a number"
                raise IrflowError(f"the compiled program counts with the attribute '{name}' "
                                  f"of {type(layer).__name__}, {traced} when it was traced; "
                                  f"it is {type(value).__name__} now", user_location())
            arrays.append(np.asarray(value, dtype=dtype))
        return arrays

    def _finish(self, outs: list, tensors: Sequence = ()) -> list:
        """Write back state updates and gradients, the gradients of the call's input
        `tensors` included; the outputs remain."""
        n, k = self.n_outputs, len(self.update_targets)
        for t, v in zip(self.update_targets, outs[n:n + k]):
            t._value = v
        m = n + k + len(self.grad_targets)
        grads, zeroed = zip(self.grad_targets, outs[n + k:m]), self.zeroed_grads
        f = m + len(self.flagged_grads) + len(self.flagged_zeros)
        if self.input_grads:
            i = f + len(self.input_grads)
            self._add_input_grads(tensors, outs[f:i], outs[i:])
        if self.flagged_grads or self.flagged_zeros:
            grads, zeroed = self._on_this_run(list(grads), outs[m:f])
        for p, g in grads:
            if p._grad is None:
                p._grad = Tensor._from_array(g)
            else:
                p._grad._value = g
        for p in self.cleared_grads:
            p._grad = None
        for p, zero in zeroed:
            if p._grad is None:
                p._grad = Tensor._from_array(zero)
            else:
                p._grad._value = zero
        return outs[:n]

    def _add_input_grads(self, tensors: Sequence, grads: list, flags: list) -> None:
        """Add to each input tensor's ``.grad`` what the program's backward() gave it (on
        this run, for one that exists on some runs only), through the hooks registered
        on it, as eager backward() does."""
        exists = [True] * len(grads)
        for i, flag in zip(self.flagged_inputs, flags):
            exists[i] = bool(flag)
        for k, g, there in zip(self.input_grads, grads, exists):
            if there:
                hooks = getattr(tensors[k], "_hooks", None)
                tensors[k]._accumulate_grad(_run_hooks(hooks, g) if hooks else g)

    def _on_this_run(self, grads: list, flags) -> tuple[list, list]:
        """The (parameter, gradient) pairs and the zeroed gradients that exist on this
        run, given the bools the program returned for those that exist on some runs
        only; the parameters of the others get None, as eagerly."""
        flags = iter(flags)
        absent = {id(grads[i][0]) for i in self.flagged_grads if not next(flags)} | \
            {id(self.zeroed_grads[i][0]) for i in self.flagged_zeros if not next(flags)}
        for p, _ in [*grads, *self.zeroed_grads]:
            if id(p) in absent:
                p._grad = None
        return ([(p, g) for p, g in grads if id(p) not in absent],
                [(p, z) for p, z in self.zeroed_grads if id(p) not in absent])

    def returned(self, outputs: list[Tensor]):
        """What the function returns, from the call's outputs (a grown list comes back
        as a Python list of tensors, as eager code returns it)."""
        if not self.lists:
            return self.pattern.fill(outputs)
        return self.pattern.fill([unbind(t) if k in self.lists else t
                                  for k, t in enumerate(outputs)])

    def call(self, inputs: Sequence, arrays: Sequence[np.ndarray], runner=None) -> list[Tensor]:
        """The outputs for the call's `inputs` (Tensors or arrays) and their `arrays`:
        recorded in the dynamic graph when a gradient is, else run directly (by
        `runner`, if given: see `run`)."""
        for k in self.changed_inputs:  # before anything runs, so a refusal changes nothing
            _check_changeable(inputs[k], k)
        if self.writes_in_place:
            self.check_aliasing(inputs)
        for host_call in self.before_run:
            host_call()
        wrt = self.gradient_sources(inputs)
        if wrt:
            outs = self.run_recorded([a if isinstance(a, Tensor) else Tensor._from_array(x)
                                      for a, x in zip(inputs, arrays)], wrt)
        else:
            outs = list(map(Tensor._from_array, self.run(arrays, runner, inputs)))
        for host_call in self.after_run:
            host_call()
        if self.changed_inputs:
            outs, changed = outs[:-len(self.changed_inputs)], outs[-len(self.changed_inputs):]
            for k, new in zip(self.changed_inputs, changed):
                if isinstance(inputs[k], Tensor):  # an array passed in: its copy was the input
                    inputs[k]._value = new._value
        if not self.attributes:
            return outs
        n = len(outs) - len(self.attributes)
        for (layer, name), t in zip(self.attributes, outs[n:]):
            if (layer, name) in self.number_inputs:
                layer._restore_attribute(name, t._value.item())
            else:
                layer._store_output(name, t)
        return outs[:n]

    def aliased(self, inputs: Sequence) -> bool:
        """Whether an input the program changes in place is another input too, or a
        parameter or buffer, or an input is a state tensor the program updates: the
        program computes each from its own argument, where eager code sees one tensor
        change (``a.add_(b)`` called with a and b the same tensor)."""
        ids = list(map(id, inputs))
        for k in self.changed_inputs:
            if ids.count(ids[k]) > 1 or ids[k] in self._state_ids:
                return True
        return not self._updated_ids.isdisjoint(ids)

    def check_aliasing(self, inputs: Sequence) -> None:
        """`aliased`'s calls are refused (InputError), before anything runs."""
        if self.aliased(inputs):
            raise InputError("the compiled code changes a tensor in place that this call "
                             "passes twice (two inputs, or an input that is also a "
                             "parameter or buffer of the model): each compiled argument "
                             "is its own copy, where eager code changes the one tensor. "
                             "Pass a copy (x.clone())", user_location())

    def gradient_sources(self, inputs: Sequence) -> tuple[int, ...]:
        """The arguments (inputs, then state) that require a gradient, if calling now
        should enter the dynamic graph: gradients are recorded and the program does
        not compute gradients itself. Empty otherwise."""
        if not grad_enabled() or self.sets_gradients:
            return ()
        return tuple(i for i, t in enumerate([*inputs, *self.state])
                     if isinstance(t, Tensor) and not t.stop_gradient
                     and t._value.dtype.kind == "f")

    def run_recorded(self, inputs: Sequence[Tensor], wrt: tuple[int, ...]) -> list[Tensor]:
        """Run as one `call` op of the dynamic graph, so that ``backward()`` later runs
        the program's compiled backward. As in eager mode, only the outputs that some
        argument in `wrt` reaches require a gradient."""
        split = self._differentiable.get(wrt)
        if split is None:
            split = self._differentiable[wrt] = self._split(wrt)
        call, active = split
        if call is None:
            return [Tensor._from_array(o) for o in self.run([t._value for t in inputs])]
        operands = [*inputs, *self.state, *(p._grad for p in self.grad_inputs),
                    *map(Tensor._from_array, self._numbers_now())] + \
            ([next_seed()] if self.uses_seed else [])
        self._ran = call["callee"].run
        try:
            outs = apply("call", operands, call)
        except ShapeError:
            _raise_sizes_error(call["callee"], operands)
            raise
        outs = [outs] if isinstance(outs, Tensor) else list(outs)
        n, k = self.n_outputs, len(self.update_targets)
        for t, v in zip(self.update_targets, outs[n:n + k]):
            t._value = v._value
        for t, reached in zip(outs[:n], active):
            if not reached:
                t.stop_gradient, t._node = True, None
        return outs[:n]

    def _split(self, wrt) -> tuple[dict | None, list[bool]]:
        """The attributes of the ``call`` op that runs this program's forward half and
        whose VJP runs its backward half (None if no output is active), and which
        outputs are active. Both halves live in a module the call op refers to, which
        goes when nothing refers to it any more. Fusion runs after autodiff: what is
        differentiated is the program before fusion, and both halves are fused."""
        fn = self.differentiable_ir.main
        active = active_results(fn, wrt)[:self.n_outputs]
        outputs = tuple(k for k, reached in enumerate(active) if reached)
        lowering = [str(p) for p in self.after_autodiff]
        call = differentiable_call(fn, wrt, outputs, lowering, self.lowering) \
            if outputs else None
        return call, active


def _raise_sizes_error(callee: FuncRef, operands: Sequence[Tensor]) -> None:
    """Raise the forward half's own error for `operands`, if it has one. A recorded
    call's result types are substituted with this call's sizes before anything runs,
    so a symbolic size that is negative for them (``x[1:-1]`` of one row: N-2) only
    says "a dim must be non-negative" at the call; the forward half's plan checks its
    sizes before running and names the user's op that made the size. Any other
    failure of it leaves the call's own error to be raised."""
    try:
        callee.run(*[t._value for t in operands])
    except ShapeError as e:
        raise e from None
    except IrflowError:
        return


def differentiable_call(fn: Function, wrt: tuple[int, ...], outputs: tuple[int, ...],
                        lowering=(), kernels: Lowering = NUMPY) -> dict:
    """The attributes of a ``call`` of `fn` that eager autograd can differentiate with
    respect to the operands `wrt` and the results `outputs`: the forward and backward
    halves of a `vjp_split`, in a module the call refers to (it goes when nothing
    refers to it any more), each run by a plan of itself or, with `lowering` (the
    passes that run after autodiff: fusion), of a copy they ran on. Both halves can be
    differentiated again (their `derive` splits them on demand), so gradients of
    gradients work. `kernels`: the backend's lowering the plans use."""
    forward, backward, defined = vjp_split(fn, wrt, outputs)
    module = Module([forward, backward])
    optimized = module
    if lowering:
        optimized = module.clone()
        PassManager(list(lowering)).run(optimized)
    return {"callee": FuncRef(forward.name, module,
                              compile_plan(optimized[forward.name], kernels),
                              _deriver(forward, lowering, kernels)),
            "backward": FuncRef(backward.name, module,
                                compile_plan(optimized[backward.name], kernels),
                                _deriver(backward, lowering, kernels)),
            "wrt": wrt, "outputs": outputs, "defined": defined,
            "residuals": len(forward.result_types) - len(fn.result_types)}


def _deriver(fn: Function, lowering, kernels: Lowering):
    """``derive(wrt)``: a differentiable call of `fn` with respect to the operands `wrt`
    and every result they reach (None if none), made once per `wrt`."""
    made: dict[tuple, dict | None] = {}

    def derive(wrt: tuple[int, ...]) -> dict | None:
        if wrt not in made:
            outputs = tuple(k for k, r in enumerate(active_results(fn, wrt)) if r)
            made[wrt] = differentiable_call(fn, wrt, outputs, lowering, kernels) \
                if outputs else None
        return made[wrt]
    return derive


class _LayerWatch:
    """What picks a compiled function's programs among its layers: `versions`, the
    structure version each layer its programs were traced from had then, and `tree`,
    the wrapped layer and its sublayers. ``flags()`` is the tree's train/eval flags
    (all False under `forcing_eval`, where `jit.save` traces), or None once one of
    those layers changed (its programs are stale). It runs on every call, so for up
    to `_UNROLLED` layers in all it is one generated function reading each attribute
    directly, a third of mapping attribute getters over them, and each layer's flag
    from its ``__dict__``, where the `Layer.training` property keeps it, half the
    time of reading the property; never changed, only replaced."""

    __slots__ = ("versions", "flags")

    def __init__(self, versions: dict, tree: list):
        from ..nn.layer.layers import forced_eval
        self.versions = versions
        traced = tuple(versions)
        own = [vars(layer) for layer in tree]
        if len(traced) + len(tree) <= _UNROLLED:
            make = _flag_reader(len(traced), len(tree))
            self.flags = make(forced_eval, *traced, *versions.values(), *own)
        else:
            self.flags = _flags_mapped(forced_eval, traced, list(versions.values()), own)


@lru_cache(maxsize=None)
def _flag_reader(n_traced: int, n_tree: int):
    """``make(forced_eval, *traced layers, *their versions, *tree layers' __dict__s)``
    making `_LayerWatch.flags`; for one layer traced from and a tree of one::

        def make(forced_eval, l0, v0, d0):
            def flags():
                if l0._structure_version != v0:
                    return None
                if forced_eval():
                    return (False, )
                return (d0["training"], )
            return flags
    """
    params = (["forced_eval"] + [f"l{i}" for i in range(n_traced)]
              + [f"v{i}" for i in range(n_traced)] + [f"d{i}" for i in range(n_tree)])
    changed = " or ".join(f"l{i}._structure_version != v{i}" for i in range(n_traced))
    body = [f"if {changed}:", "    return None"] if n_traced else []
    body += ["if forced_eval():", "    return (" + "False, " * n_tree + ")",
             "return (" + "".join(f"d{i}['training'], " for i in range(n_tree)) + ")"]
    source = (f"def make({', '.join(params)}):\n    def flags():\n"
              + "".join(f"        {line}\n" for line in body) + "    return flags\n")
    namespace: dict = {}
    name = f"<irflow layer flags {n_traced}:{n_tree}>"
    exec(builtins.compile(source, name, "exec"), namespace)  # (`compile` is irflow's here)
    return namespace["make"]


def _flags_mapped(forced_eval, traced: tuple, versions: list[int], own: list[dict]):
    """`_LayerWatch.flags` for very many layers."""
    eval_flags = (False, ) * len(own)

    def flags():
        if list(map(_structure_version, traced)) != versions:
            return None
        if forced_eval():
            return eval_flags
        return tuple(map(_training_in_dict, own))
    return flags


@lru_cache(maxsize=64)
def _key_maker(n_stored: int, n_grads: int, n_state: int, hooked: bool):
    """``make(hooks, flags, mode_key, grad_enabled, float_dtype, Tensor, ndarray,
    cleared, *stored layers, *their attribute names, *gradient parameters, *state
    tensors)`` making `CompiledFunction._call_key`'s reader. A count of -1 stands for
    more than `_UNROLLED`: that kind is then one method giving its tuple, passed in
    place of the items. `hooked`: programs ran parameters' gradient hooks, which
    ``hooks()`` gives (read only then: most compiled functions run no backward()).
    For one parameter whose gradient is read and one state tensor::

        def make(hooks, flags_of, mode_key, grad_enabled, float_dtype, Tensor, ndarray,
                 cleared, g0, s0):
            def key_of(args):
                flags = flags_of()
                if flags is None:
                    flags = mode_key()
                grad = grad_enabled()
                key = (grad, flags, (), (0 if g0._grad is None else 1 if
                       cleared(g0._grad._value) else 2, ), ((s0.stop_gradient, ), ())
                       if grad else (), float_dtype())
                ... the inputs' dtypes, shapes and stop_gradient flags
            return key_of
    """
    def items(prefix: str, count: int) -> list[str]:
        return [f"{prefix}0"] if count < 0 else [f"{prefix}{i}" for i in range(count)]

    layers, names, grads, state = (items("l", n_stored), items("n", max(n_stored, 0)),
                                   items("g", n_grads), items("s", n_state))
    stored = "l0()" if n_stored < 0 else "(" + "".join(
        f"isinstance(l{i}._attribute_or_unset(n{i}), Tensor), " for i in range(n_stored)) + ")"
    present = "g0()" if n_grads < 0 else "(" + "".join(
        f"0 if g{i}._grad is None else 1 if cleared(g{i}._grad._value) else 2, "
        for i in range(n_grads)) + ")"
    stops = "s0()" if n_state < 0 else "(" + "".join(
        f"s{i}.stop_gradient, " for i in range(n_state)) + ")"
    hooks = "hooks()" if hooked else "()"
    params = ["hooks", "flags_of", "mode_key", "grad_enabled", "float_dtype", "Tensor",
              "ndarray", "cleared", *layers, *names, *grads, *state]
    source = f"""def make({', '.join(params)}):
    def key_of(args):
        flags = flags_of()
        if flags is None:
            flags = mode_key()
        grad = grad_enabled()
        key = (grad, flags, {stored}, {present}, ({stops}, {hooks}) if grad else (),
               float_dtype())
        arrays = []
        for a in args:
            if isinstance(a, Tensor):
                array = a._value
                if array is None:  # traced: the slow way asks its tracer
                    return None, arrays
                key += (array.dtype, array.shape, a.stop_gradient)
            elif isinstance(a, ndarray):
                array = a
                key += (array.dtype, array.shape, True)  # as a tensor that stops gradients
            else:
                return None, arrays
            arrays.append(array)
        return key, arrays
    return key_of
"""
    namespace: dict = {}
    name = f"<irflow call key {n_stored}:{n_grads}:{n_state}:{hooked:d}>"
    exec(builtins.compile(source, name, "exec"), namespace)  # (`compile` is irflow's here)
    return namespace["make"]


class CompiledFunction:
    """A Layer or function compiled to programs, one per call signature (a Layer's is
    a `CompiledLayer`)."""

    def __new__(cls, target=None, *args, **kwargs):
        from ..nn.layer.layers import Layer
        if cls is CompiledFunction and isinstance(target, Layer):
            cls = CompiledLayer
        return object.__new__(cls)

    def __init__(self, target, input_spec=None, backend: str = DEFAULT_BACKEND,
                 check: bool = False, pipeline: Sequence[str] | None = None, freeze: bool = False):
        """`pipeline`: the passes run on each program (None: `DEFAULT_PIPELINE`, or
        `INFERENCE_PIPELINE` for a frozen one). `freeze`: in eval mode, the
        parameters and buffers a program only reads become constants of its IR, so
        constant subgraphs on them fold and BatchNorm folds into the Conv2D or Linear
        before it; as constants they get no gradients, and a call whose parameters
        were rebound since compiles anew."""
        from ..nn.layer.layers import Layer
        self._lowering = backend_lowering(backend)
        self.target = target
        self.input_spec = None if input_spec is None else [_spec(s) for s in input_spec]
        self._specs, self._spec_structures = (None, None) if input_spec is None else \
            _flat_inputs(self.input_spec)
        self.backend = backend
        self.check = check
        self.pipeline = None if pipeline is None else tuple(pipeline)
        self.freeze = freeze
        self._programs: dict[Any, Program] = {}
        # per program key, programs traced for it whose guards held no more (`_variant`)
        self._variants: dict[Any, list[Program]] = {}
        # per program key but the non-tensor arguments' values, the values traced for
        self._values_traced: dict[tuple, int] = {}
        self._guard_retraces = 0  # traces made because a value the guards check changed
        self._watched: list[tuple] = []  # (layer, attribute) that programs store
        self._watched_grads: list[Tensor] = []  # parameters whose gradient programs read
        self._watched_state: list[Tensor] = []  # parameters and buffers programs take
        self._watched_hooks: list[Tensor] = []  # parameters whose hooks programs ran
        self._numbers: list[tuple] = []  # (layer, name) of numbers forward changes
        self._last: Program | None = None
        # the layers programs were traced from, their versions then, and the layer's tree
        self._watch: _LayerWatch | None = None
        self._key_of = None  # `_call_key`'s generated reader, made on first use
        # Per-call caches, each filled once per key (a dict's item assignment is atomic,
        # so threads calling at once at worst make the same entry twice):
        self._spec_type_tuple: tuple[TensorType, ...] | None = None  # the spec's types
        self._signatures: dict[tuple, Signature] = {}  # input types -> their check
        self._array_types: dict[tuple, TensorType] = {}  # (dtype, shape) -> its type
        # `_call_key` -> (program, its runner): the calls `__call__` takes the short way
        # (replaced, never changed in place, when full or stale)
        self._known: dict[tuple, tuple[Program, Any, Any]] = {}
        # Last: from here on, attributes that are not the compiled function's own are
        # the layer's (Paddle's to_static(layer) returns the layer itself).
        owner = getattr(target, "__self__", None) if isinstance(target, types.MethodType) \
            else None  # a method of a plain object (a Trainer's step) stands for no layer
        self.layer = target if isinstance(target, Layer) else \
            owner if isinstance(owner, Layer) else None

    # -- the wrapped layer's attributes (parameters(), train(), state_dict(), m.fc = ...)
    def __getattr__(self, name: str):
        layer = self.__dict__.get("layer")
        if layer is not None:
            return getattr(layer, name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value) -> None:
        layer = self.__dict__.get("layer")
        if layer is None or name in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(layer, name, value)

    def __delattr__(self, name: str) -> None:
        layer = self.__dict__.get("layer")
        if layer is None or name in self.__dict__:
            object.__delattr__(self, name)
        else:
            delattr(layer, name)

    def __get__(self, obj, objtype=None):
        """Used as a decorator on a method: compile per instance."""
        if obj is None:
            return self
        bound = obj.__dict__.get(f"__irflow_compiled_{id(self)}")
        if bound is None:
            bound = CompiledFunction(types.MethodType(self.target, obj), self.input_spec,
                                     self.backend, self.check, self.pipeline, self.freeze)
            obj.__dict__[f"__irflow_compiled_{id(self)}"] = bound
        return bound

    # -- the IR
    @property
    def ir(self) -> Module:
        return self._program_for_ir().ir

    @property
    def source_ir(self) -> Module:
        return self._program_for_ir().source_ir

    @property
    def pass_report(self):
        """What each pass of the pipeline did to the last program (a `PassReport`:
        time, ops before and after, the pass's statistics); ``print()`` it."""
        return self._program_for_ir().pass_report

    @property
    def memory_plan(self):
        """The memory plan of the last call: every intermediate's offset in the arena it
        ran in and the totals (`irflow.passes.plan_buffers.MemoryPlan`); None before
        the first call."""
        return None if self._last is None else self._last.memory_plan

    def _program_for_ir(self) -> Program:
        if self._last is None:
            if self.input_spec is None:
                raise IrflowError("this function has not been called yet and has no "
                                  "input_spec, so there is no program to show")
            self._last = self._program(self._spec_types(), self._mode_key(),
                                       tuple(not s.stop_gradient for s in self._specs),
                                       (), self._spec_structures)
        return self._last

    def _inference_program(self) -> Program:
        """The program with every layer it calls in eval mode, which `jit.save` writes
        whatever mode the model is in, as Paddle's does (saved after training without
        ``eval()``, BatchNorm on batch statistics would differ from Paddle's saved
        model, and dropout be refused). It is traced under `forcing_eval`, which no
        other thread sees: the layers' flags are not changed, so a call of the model
        from another thread meanwhile runs in the model's own mode."""
        from ..nn.layer.layers import forcing_eval
        with forcing_eval():
            return self._program_of_mode()

    def _program_of_mode(self) -> Program:
        """The program of the layers' current train/eval flags: the last call's, or, when
        the flags changed since (``model.eval()`` after training, or the eval flags
        they read under `_inference_program`'s `forcing_eval`), the one for the same
        inputs under the current flags."""
        mode = self._mode_key()  # (first: it drops the programs of changed layers)
        program = self._program_for_ir()
        keys = [k for k, p in self._programs.items() if p is program]
        if any(k[1] == mode for k in keys):
            return program
        types_, _, requires, _, extra, structures = keys[0][:6]
        if extra:  # (the key holds no such argument's value to trace with again)
            raise IrflowError(f"{self._name()}: jit.save writes the program of eval mode, "
                              "and the last call, which took arguments beyond the "
                              "input_spec, ran in training mode; call it once after "
                              "eval() first", user_location())
        return self._program(types_, mode, requires, (), structures)

    # -- calling
    def __call__(self, *args, **kwargs):
        """The outputs for the arguments: the short way for a call of Tensors or arrays
        alone that one made before is known by (`_call_key`), else `_call`; while
        another program is traced, `_inlined`; with ``jit.enable_to_static(False)``,
        the target's own code, eagerly."""
        if not to_static_enabled():
            return self.target(*args, **kwargs)
        if current_tracer() is not None:
            return self._inlined(args, kwargs)
        if not kwargs:
            key, arrays = self._call_key(args)
            known = self._known.get(key) if key is not None else None
            if known is not None:
                program, runner, direct = known
                if program.writes_in_place:
                    program.check_aliasing(args)
                if not (program.checks_staleness and program.stale()):
                    if self._last is not program:
                        self._last = program
                    if direct is not None:
                        return direct(arrays)
                    return program.returned(program.call(args, arrays, runner))
        return self._call(args, kwargs)

    def _inlined(self, args: tuple, kwargs: dict):
        """A call made by code being traced (a compiled function calling another, as
        Paddle's nested ``to_static`` allows): the target's code is traced into that
        program, converted as any function traced code calls; its arguments are
        traced values, which a program of its own could not take."""
        from .jst import call
        return call(self.target)(*args, **kwargs)

    def _call_key(self, args: tuple) -> tuple[tuple | None, list]:
        """What a call of Tensors or arrays alone (no nesting, no other values) that
        `_call` made before finds its program by, and the arrays; None for other
        calls. Everything `_program`'s key holds: the inputs' dtypes, shapes and
        whether each requires a gradient (so also their types and `_call`'s checks,
        which passed for these), the grad mode, the train/eval flags (once programs
        of changed layers are dropped), the stored attributes and gradients
        present. Read by one generated function (`_key_reader`), made again when what
        it reads changes (`_watching_changed`)."""
        read = self._key_of
        if read is None:
            read = self._key_of = self._key_reader()
        return read(args)

    def _key_reader(self) -> Callable[[tuple], tuple[tuple | None, list]]:
        """`_call_key` for what is watched now, each watched attribute and tensor read
        inline (up to `_UNROLLED` of a kind; more are read by the method that gives
        their tuple). Read through four methods, they cost a call most after another
        framework's call had left the caches cold: ``benchmarks/issue11.py
        --overhead``, a tiny training step, cold, took 141 µs, 117 with this."""
        watch = self._watch
        stored, grads, state = self._watched, self._watched_grads, self._watched_state
        counts = [len(kind) if len(kind) <= _UNROLLED else -1 for kind in (stored, grads, state)]
        items = ([layer for layer, _ in stored] + [name for _, name in stored]
                 if counts[0] >= 0 else [self._stored_attributes])
        items += grads if counts[1] >= 0 else [self._gradients_present]
        items += state if counts[2] >= 0 else [self._state_stops]
        make = _key_maker(*counts, bool(self._watched_hooks))
        return make(self._hooks_registered, self._mode_key if watch is None else watch.flags,
                    self._mode_key, grad_enabled, default_float_dtype, Tensor, np.ndarray,
                    is_cleared_gradient, *items)

    def _watching_changed(self) -> None:
        """Forget the generated `_call_key` reader: the layers' watch or the watched
        attributes, gradients or state changed."""
        self._key_of = None

    def _remember(self, key: tuple, program: Program, arrays: list) -> None:
        """Let calls of `_call_key` `key` take the short way to `program`."""
        known = self._known
        if len(known) >= _KNOWN_CALLS:
            known = {}
        runner = program.runner(arrays)
        # nothing is recorded with gradients off (the key's first item), nor by a
        # program that computes gradients itself
        recorded = key[0] and not program.sets_gradients
        known[key] = (program, runner, None if recorded else program.direct(runner))
        self._known = known

    def _call(self, args: tuple, kwargs: dict):
        args = self._positional(args, kwargs)
        if self.input_spec is not None and args and isinstance(args[-1], Keywords):
            raise ArgumentError(f"{self._name()}: a compiled call with an input_spec takes "
                                "its inputs positionally, as the input_spec lists them; the "
                                f"keyword argument(s) {', '.join(args[-1].values)} are in "
                                "no input_spec (compile without one to pass them)",
                                user_location())
        n = len(self.input_spec) if self.input_spec is not None else len(args)
        if len(args) < n:
            raise InputError(f"{self._name()} expects {n} input(s), got {len(args)}",
                             user_location())
        leaves, structures = _flat_inputs(args[:n])
        if self.input_spec is not None and structures != self._spec_structures:
            self._structure_error(args[:n], structures)
        arrays = [_as_array(a, i) for i, a in enumerate(leaves)]
        extra = args[n:]
        types_ = self._spec_types() if self.input_spec is not None else \
            self._types_of(arrays)
        self._check_inputs(arrays, types_)
        requires = tuple(isinstance(a, Tensor) and not a.stop_gradient for a in leaves)
        program = self._program(types_, self._mode_key(), requires, extra, structures)
        if program.fixed_dims:
            self._check_inputs(arrays, program.input_types, types_, program.fixed_dims)
        if self._last is not program:  # (an attribute set goes through __setattr__)
            self._last = program
        if self.check:
            return self._checked_call(program, args)
        # the key of the state the program was picked for, not of what the call leaves
        key = None if kwargs or extra or len(leaves) != len(args) else self._call_key(args)[0]
        outs = program.call(leaves, arrays)
        if key is not None:
            self._remember(key, program, arrays)
        return program.returned(outs)

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        """The call's arguments as positional ones, as the Python signature binds them
        (keyword tensors as in Paddle; parameters skipped before a given one take their
        defaults), or an ArgumentError naming the model for arguments it does not take.
        Values for keyword-only parameters and ``**kwargs`` follow as one `Keywords`,
        the last argument, whose values are inputs and constants as a positional
        dict's are; the target gets them back as keywords (`_split_keywords`)."""
        bound = self.__dict__.get("_signature")
        if bound is None:
            fn = self.layer.forward if self.target is self.layer else self.target
            try:
                signature = inspect.signature(fn)
                params = list(signature.parameters.values())
                bound = (signature, params, _max_positional(params))
            except (TypeError, ValueError):  # a builtin or C callable: take args as given
                bound = (False, None, None)
            self.__dict__["_signature"] = bound
        signature, params, most = bound
        if signature is False:
            if kwargs:
                raise ArgumentError(f"{self._name()} takes its inputs positionally",
                                    user_location())
            return args
        if not kwargs:  # missing inputs are InputErrors, below, as for a spec
            if len(args) > most:
                raise ArgumentError(f"{self._name()}{signature} takes at most "
                                    f"{most} positional argument(s), got "
                                    f"{len(args)}", user_location())
            return args
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{self._name()}{signature}: {e}", user_location()) from None
        out, keywords = [], {}
        # (the positional parameters come first in a Python signature)
        last = max((i for i, p in enumerate(params) if p.name in bound.arguments
                    and p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)), default=-1)
        for p in params[:last + 1]:
            if p.kind is p.VAR_POSITIONAL:
                out.extend(bound.arguments.get(p.name, ()))
            else:
                out.append(bound.arguments.get(p.name, p.default))
        for p in params[last + 1:]:
            if p.kind is p.VAR_KEYWORD:
                keywords.update(bound.arguments.get(p.name, {}))
            elif p.kind is p.KEYWORD_ONLY and p.name in bound.arguments:
                keywords[p.name] = bound.arguments[p.name]
        return (*out, Keywords(keywords)) if keywords else tuple(out)

    def _name(self) -> str:
        target = self.layer if self.layer is not None else self.target
        return getattr(target, "__qualname__", type(target).__name__)

    def _spec_types(self) -> tuple[TensorType, ...]:
        """The input types the input_spec gives (made on first use)."""
        types_ = self._spec_type_tuple
        if types_ is None:
            types_ = self._spec_type_tuple = tuple(s.to_type(i) for i, s in enumerate(self._specs))
        return types_

    def _types_of(self, arrays) -> tuple[TensorType, ...]:
        """Without an input_spec, the input types are the arrays' own."""
        known = self._array_types
        types_ = []
        for a in arrays:
            t = known.get((a.dtype, a.shape))
            if t is None:
                t = known[a.dtype, a.shape] = TensorType(dtypes.from_numpy(a), a.shape)
            types_.append(t)
        return tuple(types_)

    def _structure_error(self, args, structures) -> None:
        for i, (a, want) in enumerate(zip(args, self._spec_structures)):
            if flatten(a, constants=True)[1] != want:
                spec = unflatten(want, [Tensor._from_array(None)] * want.n_leaves)
                raise InputError(f"{self._name()}: input {i} should be {describe(spec)} as "
                                 f"its input_spec says, got {describe(a)}", user_location())

    def _mode_key(self):
        """The train/eval flags of the layer's tree, once programs traced from layers
        that changed since are dropped."""
        watch = self._watch
        flags = None if watch is None else watch.flags()
        if flags is None:  # none made yet, or a layer's structure changed: start anew
            if watch is not None:
                self._programs.clear()
                self._variants.clear()
                self._known = {}
                self._last = None
            watch = self._watch = _LayerWatch({}, self._tree())
            self._watching_changed()
            flags = watch.flags()
        return flags

    def _tree(self) -> list:
        """The layers whose train/eval flags pick programs before any trace: the
        wrapped layer and its sublayers; for a function, the Layers it names (a
        global or closed-over ``model``) and their sublayers. `_note_layers` adds
        every layer a trace went through."""
        from ..nn.layer.layers import Layer
        roots = [self.layer] if self.layer is not None else \
            [o for o in _named_objects(self.target) if isinstance(o, Layer)]
        tree = {}
        for root in roots:
            tree.update(dict.fromkeys(root.sublayers(include_self=True)))
        return list(tree)

    def _check_inputs(self, arrays, types_, spec_types=(), fixed=None) -> None:
        """Check the input arrays against `types_`; `fixed` says which symbols of
        `spec_types` the program fixed to a size, and where (for the message)."""
        types_ = tuple(types_)
        signature = self._signatures.get(types_)
        if signature is None:
            signature = self._signatures[types_] = Signature(types_)
        try:
            signature.check(arrays)
        except SignatureMismatch as e:
            i, t, a = e.index, types_[e.index], arrays[e.index]
            names = [s.name or f"input {k}" for k, s in enumerate(self._specs)] \
                if self.input_spec else [f"input {k}" for k in range(len(arrays))]
            if e.kind == "dtype":
                raise InputError(f"{self._name()}: {names[i]} should be {t.dtype.name}, got "
                                 f"{a.dtype}", user_location()) from None
            shown = [d if isinstance(d, int) else None for d in t.shape]
            why = ""
            if fixed:
                seen: dict[str, int] = {}  # the sizes the inputs before it gave the symbols
                for k in range(i):
                    bind_shape(types_[k].shape, arrays[k].shape, seen)
                why = _why_fixed(spec_types, names, i, a.shape, fixed, seen)
            raise InputError(f"{self._name()}: {names[i]} should have shape {shown}, got "
                             f"{list(a.shape)}{why}", user_location()) from None

    def _program(self, types_, mode, requires: tuple[bool, ...], extra=(),
                 structures=None) -> Program:
        """The program for inputs of `types_` (the leaves of arguments nested as
        `structures` say) of which those marked in `requires` require a gradient: the
        trace depends on that and on the grad mode (both decide where
        ``stop_gradient`` set inside the code stops a gradient)."""
        structures = tuple(structures if structures is not None else [LEAF] * len(types_))
        key = (tuple(types_), mode, requires, grad_enabled(), _hashable(extra) if extra else (),
               structures, default_float_dtype())
        before = self._watched_now()
        program = self._programs.get((*key, *before))
        if program is not None and program.stale():
            stale, program = program, self._variant((*key, *before), program)
            if program is None:
                self._count_guard_retraces(stale)
        if program is None:
            program = self._trace(types_, requires, extra, structures, mode)
            for layer, name in program.attributes:
                if (layer, name) not in self._watched:
                    self._watched.append((layer, name))
            watched = {id(p) for p in self._watched_grads}
            self._watched_grads += [p for p in program.grad_presence if id(p) not in watched]
            watched = {id(t) for t in self._watched_state}
            self._watched_state += [t for t in program.state if id(t) not in watched]
            watched = {id(t) for t in self._watched_hooks}
            self._watched_hooks += [t for t in program.backward_leaves if id(t) not in watched]
            self._watching_changed()
            now = self._watched_now()
            # and under the flags of the layers it went through, which the next call's
            # mode holds (`_note_layers`)
            traced = (key[0], self._mode_key(), *key[2:])
            for k in ((*key, *before), (*key, *now), (*traced, *now)):
                self._programs[k] = program
            while len(self._programs) > _PROGRAM_KEYS:  # (a call traces again)
                oldest = next(iter(self._programs))
                del self._programs[oldest]
                self._variants.pop(oldest, None)
            shapes, values = _constants_split(structures)
            if values or extra:
                self._count_values_traced((*key[:4], shapes, key[6]), [*values, *extra])
        return program

    def _variant(self, key: tuple, stale: Program) -> Program | None:
        """A program traced before for `key` whose guards hold now, put back under
        `key` in place of `stale`, which is kept for later unless outdated; None if
        none holds. So a Python value that switches between a few settings (a flag a
        training loop flips) traces once per setting, not on every switch, as
        Paddle's to_static caches a program per guarded value."""
        variants = self._variants.get(key, [])
        found = next((p for p in variants if not p.stale()), None)
        kept = [stale] + [p for p in variants if p is not found]
        # a new list, not one changed in place: calls from other threads may be
        # reading the old one
        self._variants[key] = [p for p in kept if not p.outdated()][:_VARIANTS]
        if found is not None:
            self._programs[key] = found
        return found

    def _count_values_traced(self, others: tuple, extra) -> None:
        """Warn, once, when the non-tensor arguments have taken `_VALUES_WARNED`
        different values with the same inputs (`others`): each value is traced and
        compiled anew, so one that changes on every call (a learning rate, a step
        count passed as a Python number) makes every call compile."""
        count = self._values_traced[others] = self._values_traced.get(others, 0) + 1
        if count != _VALUES_WARNED:
            return
        shown = ", ".join(repr(v) for v in extra)
        warn_at_user(f"{self._name()} was traced for {count} different values of its "
                      f"non-tensor arguments (now {shown}): each value compiles a program "
                      "of its own, so a value that changes from call to call compiles on "
                      "every call; pass it as a tensor (paddle.to_tensor(value)) to compile "
                      "once", stacklevel=4)

    def _count_guard_retraces(self, stale: Program) -> None:
        """Warn, once, when Python values the traces read have changed
        `_VALUES_WARNED` times: each change compiles anew, so a value that changes on
        every call (a step count in a global) compiles on every call."""
        changed = stale.guards.changed()
        if changed is None:
            return
        self._guard_retraces += 1
        if self._guard_retraces != _VALUES_WARNED:
            return
        message = (f"{self._name()} was traced again {self._guard_retraces} times because "
                   f"Python values it reads changed (now {changed}): each change compiles "
                   "the code anew, so a value that changes from call to call compiles on "
                   "every call; pass it as a tensor (paddle.to_tensor(value)) to compile "
                   "once")
        warn_at_user(message, stacklevel=5)

    def _watched_now(self) -> tuple:
        """What programs traced so far depend on beyond their inputs: the stored
        attributes, the gradients present and, with gradients on, which parameters
        stop gradients."""
        return (self._stored_attributes(), self._gradients_present(),
                (self._state_stops(), self._hooks_registered()) if grad_enabled() else ())

    def _state_stops(self) -> tuple[bool, ...]:
        """Each parameter's or buffer's ``stop_gradient`` now: whether a program's
        ``backward()`` computes its gradient was decided when it was traced (a weight
        frozen, or unfrozen, after the first call takes another program)."""
        return tuple(t.stop_gradient for t in self._watched_state)

    def _hooks_registered(self) -> tuple[tuple, ...]:
        """The hooks registered on each parameter a program's ``backward()`` reached
        (`Tensor.register_hook`'s keys): the program runs those it was traced with, so
        a hook registered or removed after the first call takes another program."""
        return tuple(tuple(getattr(t, "_hooks", None) or ()) for t in self._watched_hooks)

    def _gradients_present(self) -> tuple[int, ...]:
        """Whether each parameter whose gradient a program read has none now (0), the
        zero ``clear_grad()`` leaves (1) or another (2): a trace made while ``w.grad``
        was None (the first ``backward()`` makes it) or zero holds only while it is;
        then ``backward()`` accumulates into it."""
        if not self._watched_grads:
            return ()
        return tuple(0 if p._grad is None else 1 if is_cleared_gradient(p._grad._value) else 2
                     for p in self._watched_grads)

    def _stored_attributes(self) -> tuple[bool, ...]:
        """Whether each Layer attribute a program stores holds a tensor now: a trace
        made while ``self.h`` was None (``if self.h is None: self.h = zeros(...)``) holds
        only until the first call has stored a tensor there."""
        if not self._watched:
            return ()
        return tuple(isinstance(layer._attribute_or_unset(name), Tensor)
                     for layer, name in self._watched)

    def _trace(self, types_, requires, extra, structures, mode) -> Program:
        """Trace for input types `types_`. Where a type rule needs a symbolic input dim
        to be a static size, or two input symbols to be equal (a DimMismatch), that
        symbol is fixed to the size (or to the other symbol) in the input types and the
        target traced again, so the program's input check rejects other sizes."""
        fixed, aliases = {}, {}
        while True:
            try:
                program = self._trace_as(types_, requires, extra, structures, mode, aliases)
            except DimMismatch as e:
                alias = run_time_alias(types_, e, aliases)
                if alias is not None:
                    aliases[alias[0]] = (alias[1], e.loc)
                    continue
                symbol, size = symbol_to_fix(types_, e)
                fixed[symbol] = (size, e.loc)
                types_ = [t.with_shape([substitute(d, {symbol: size}) for d in t.shape])
                          for t in types_]
                continue
            if program.changed_numbers:  # counters forward changes: carried, traced again
                self._numbers += program.changed_numbers
                continue
            program.fixed_dims = fixed
            return program

    def _trace_as(self, types_, requires, extra, structures, mode, aliases) -> Program:
        params = _parameter_names(self.layer.forward if self.target is self.layer
                                  else self.target)
        names = _input_names(params, structures, self._specs if self.input_spec else None)
        stop = [not r for r in requires]
        tracer = Tracer(_ir_name(self._name()), self._state_names(), aliases, self._numbers)
        named = _named_objects(self.target)
        with tracer:
            inputs = [tracer.input(t, n, sg) for t, n, sg in zip(types_, names, stop)]
            tracer.lift_numbers()
            arguments = _arguments(structures, inputs)
            positional, keywords = _split_keywords([*arguments, *extra])
            containers = ContainerSnapshot.of([self.layer, *extra, *named], named,
                                              [*positional, *keywords.values()])
            out = self._run_converted(tracer, arguments, extra)
            containers.check(user_location())
            tensors, pattern = Pattern.split(out, _is_tensor)
            lists = tuple(k for k, t in enumerate(tensors) if isinstance(t, TensorArray))
            tensors = [stack(t) if k in lists else t for k, t in enumerate(tensors)]
            tracer.check_texts()
            tracer.settle_shown_flags()
            changed = [(k, t) for k, (t, arg) in enumerate(zip(inputs, tracer.fn.args))
                       if _unstopped(t._ir) is not arg]
            program = Program(tracer, tensors, pattern, self.pipeline, lists,
                              freeze=self.freeze and not any(mode), fuse=not self.check,
                              lowering=self._lowering, changed_inputs=changed)
        self._note_layers([self.layer, *extra, *_named_objects(self.target), *tracer.layers])
        return program

    def _note_layers(self, candidates) -> None:
        """Remember the structure versions of the Layers among `candidates` (and of
        their sublayers): the programs are stale once one changes. The watch is
        replaced whole, so that calls in other threads see matching versions."""
        from ..nn.layer.layers import Layer
        versions = {} if self._watch is None else dict(self._watch.versions)
        for root in candidates:
            if isinstance(root, Layer):
                for layer in root.sublayers(include_self=True):
                    versions[layer] = layer._structure_version
        # the flags of every layer traced through pick programs (a compiled function
        # calling `model` takes another program after `model.eval()`)
        tree = self._tree()
        seen = set(map(id, tree))
        tree += [layer for layer in versions if id(layer) not in seen]
        self._watch = _LayerWatch(versions, tree)
        self._watching_changed()

    def _state_names(self) -> dict[int, str]:
        """IR names for the layer's parameters and buffers: their state_dict keys."""
        if self.layer is None:
            return {}
        named = [*self.layer.named_parameters(), *self.layer.named_buffers()]
        return {id(t): name for name, t in named}

    def _run_converted(self, tracer: Tracer, inputs, extra):
        args, kwargs = _split_keywords([*inputs, *extra])
        if self.layer is not None and self.target is self.layer:
            return self.layer(*args, **kwargs)  # Layer.__call__ converts forward when tracing
        try:
            fn = convert_function(self.target)
        except Unconvertible:  # no source to read (made by exec): traced as it is
            fn = self.target
        else:
            tracer.reads.function(self.target)
        return fn(*args, **kwargs)

    def _checked_call(self, program: Program, args):
        from .check import checked_call
        return checked_call(self, program, args)

    def _eager_call(self, args):
        """The target run as plain eager code (for check=True), arrays as Tensors."""
        args, kwargs = _split_keywords(args)
        return self.target(*[Tensor._from_array(a) if isinstance(a, np.ndarray) else a
                             for a in args], **kwargs)


class CompiledLayer(CompiledFunction):
    """A compiled Layer, which stands for the layer as Paddle's ``to_static(layer)``
    does (it returns the layer itself): ``isinstance(m, nn.Layer)`` and the layer's own
    class hold (so ``net.enc = to_static(net.enc)`` registers it as a sublayer), its
    attributes and methods are the layer's, and so are indexing, ``len``, iteration
    and ``repr`` of a container (``static[0]`` of a Sequential). ``type()`` still tells
    the compiled layer."""

    @property
    def __class__(self):
        return type(self.__dict__["layer"])

    def __getitem__(self, key):
        return self.layer[key]

    def __len__(self) -> int:
        return len(self.layer)

    def __iter__(self):
        return iter(self.layer)

    def __contains__(self, item) -> bool:
        return item in self.layer

    def __bool__(self) -> bool:
        return bool(self.layer)

    def __repr__(self) -> str:
        return repr(self.layer)

    def __deepcopy__(self, memo):
        """A compiled copy of a copy of the layer (``copy.deepcopy(model)`` for an EMA
        model): its programs are traced anew, for the copy's parameters."""
        return CompiledFunction(copy.deepcopy(self.layer, memo), self.input_spec,
                                self.backend, self.check, self.pipeline, self.freeze)


def run_time_alias(types_, e: DimMismatch, aliases: dict) -> tuple[str, Dim] | None:
    """For a rule that needs a size known only at run time (a symbol of the trace's
    own, not an input's: the length of a slice with traced bounds, of a nonzero) to
    equal another size, (that symbol, the size): the trace is made again with the
    symbol's values checked against that size when the program runs (`match_shape`),
    so the program combines them as eager code would when they are equal and raises
    when they are not. None if neither side is such a symbol."""
    inputs = {s for t in types_ for d in t.shape for s in symbols_of(d)}
    own = [d for d in (e.dim, e.size) if isinstance(d, str) and is_symbol(d)
           and d not in inputs and d not in aliases]
    if not own:
        return None
    symbol = max(own, key=lambda d: (len(d), d))  # two of its own: the later one goes
    other = e.size if symbol == e.dim else e.dim
    return symbol, other


def _unstopped(v):
    """`v` before the ``stop_gradient`` ops that setting ``stop_gradient`` put it
    through (which change no value)."""
    while getattr(v, "op", None) is not None and v.op.name == "stop_gradient":
        v = v.op.operand(0)
    return v


def _check_changeable(given, k: int) -> None:
    """Input `k`, which the compiled code changes in place (``x[i] = v``; each call
    writes the new value into the caller's tensor, as eager code changes it), may be
    changed: not if it requires a gradient, as eager code refuses a leaf's change
    (and a program cannot rebind the caller's graph)."""
    if isinstance(given, Tensor) and not given.stop_gradient:
        raise IrflowError(f"input {k} requires a gradient and the compiled code changes it "
                          "in place; work on a copy (x = x.clone()) or pass it with "
                          "stop_gradient=True", user_location())


def symbol_to_fix(types_, e: DimMismatch) -> tuple[str, int | str]:
    """The input symbol and the size (or the other input symbol) that resolve `e`;
    raises `e` if there is none (its dim is not linear in one input symbol, no size
    fits, or a symbol is not an input's)."""
    order = [s for t in types_ for d in t.shape for s in symbols_of(d)]
    if isinstance(e.size, str):  # two symbols: the later input's becomes the earlier's
        if e.dim not in order or e.size not in order:
            raise e
        first, later = sorted((e.dim, e.size), key=order.index)
        return later, first
    solved = solve_dim(e.dim, e.size, {})
    if solved is None or solved[1] is None or solved[0] not in order:
        raise e
    return solved


def _why_fixed(spec_types, names, i: int, actual, fixed: dict, bindings: dict) -> str:
    """Why the axes of input `i` (`actual`) that a fixed symbol of its spec type stands
    for are wrong: fixed to a size, or made the same symbol as an earlier input's."""
    why = ""
    for axis, (d, n) in enumerate(zip(spec_types[i].shape, actual)):
        if d not in fixed:
            continue
        size, loc = fixed[d]
        where = f" ({loc})" if loc else ""
        if isinstance(size, int) and size != n:
            why += (f"; its axis {axis} is unknown in the input_spec, but the program needs "
                    f"{size} there{where}")
        elif isinstance(size, str) and bindings.get(size, n) != n:
            k, other = next((k, a) for k, t in enumerate(spec_types)
                            for a, e in enumerate(t.shape) if e == size)
            why += (f"; its axis {axis} must have the size of axis {other} of {names[k]} "
                    f"({bindings[size]}), because the program combines them{where}")
    return why


def _parameter_names(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _named_objects(fn) -> list:
    """What a function's free variables and global names refer to now."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    objects = []
    for cell in fn.__closure__ or ():
        try:
            objects.append(cell.cell_contents)
        except ValueError:  # a free variable not assigned yet
            pass
    return objects + [fn.__globals__[n] for n in code.co_names if n in fn.__globals__]


def _as_array(a, index: int) -> np.ndarray:
    if isinstance(a, Tensor):
        return a._concrete(f"input {index}")
    if isinstance(a, np.ndarray):
        return a
    raise InputError(f"input {index} should be a Tensor or a NumPy array, got "
                     f"{type(a).__name__}", user_location())


def _constants_split(structures: tuple) -> tuple[tuple, list]:
    """The arguments' `structures` with their Python constants' values left out, and
    those values in order: calls that differ only in those values give the same
    first item."""
    values: list = []

    def shape(s: Structure):
        if s.kind is Constant:
            values.append(s.value)
            return Constant
        return s.kind, s.keys, tuple(shape(c) for c in s.children)

    return tuple(shape(s) for s in structures), values


def _hashable(values) -> tuple:
    """The key of a call's non-tensor arguments, equal only for the same value of the
    same type (`attr_key`): a program traced for 0.0 computes with 0.0, and one for 1
    with 1, though Python's ``==`` says -0.0 and True are those. An unhashable object
    is keyed by its identity, which the key holds (an id alone could be a later
    object's)."""
    out = []
    for v in values:
        key = attr_key(v)
        try:
            hash(key)
        except TypeError:
            key = _Same(v)
        out.append(key)
    return tuple(out)


class _Same:
    """A key equal only to a key of the same object, which it keeps alive."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


class Keywords(Container):
    """The values a compiled call passes for keyword-only parameters and ``**kwargs``
    (``m(x, mask=t)`` for ``forward(self, x, *, mask=None)``), by name: the last of
    the call's arguments as `CompiledFunction._positional` gives them. Flattened as
    a dict is, its tensors are inputs of the program and its None, bools, numbers
    and strings constants of the trace; a kind of its own, its structure differs
    from a positional dict's, so ``f(x, {"a": t})`` and ``f(x, a=t)`` never share a
    program."""

    __slots__ = ("values",)

    def __init__(self, values: dict):
        self.values = values

    def fields(self) -> tuple[tuple, list]:
        return tuple(self.values), list(self.values.values())

    @classmethod
    def rebuild(cls, keys: tuple, children: list) -> "Keywords":
        return cls(dict(zip(keys, children)))


def _split_keywords(args) -> tuple[list, dict]:
    """The positional arguments and the keyword ones of arguments that may end in a
    `Keywords`: what the target is called with."""
    args = list(args)
    if args and isinstance(args[-1], Keywords):
        return args[:-1], dict(args[-1].values)
    return args, {}


def _ir_name(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "program"


def _spec(spec):
    """An input_spec entry with its tensors as `InputSpec`s (entries may be nested
    lists and tuples, for arguments that are lists of tensors; None and other
    `CONSTANTS` are arguments that calls give as that constant)."""
    if isinstance(spec, list | tuple):
        return type(spec)(_spec(s) for s in spec)
    if isinstance(spec, (InputSpec, *CONSTANTS)):
        return spec
    return InputSpec.from_tensor(spec)


def _max_positional(params) -> float:
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return float("inf")
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


_LEAVES = (Tensor, np.ndarray)  # what `flatten` makes leaves of, whatever else it does


def _flat_inputs(args) -> tuple[list, tuple]:
    """The leaves of the positional arguments (the tensors; for an input_spec, its
    InputSpecs; a list of tensors is one argument) and each argument's structure, in
    which None, bools, numbers and strings are constants (`Constant`): a call with
    ``m(x, None, lens)`` traces with that None, and one with a tensor or another
    value there has another structure, so its own program."""
    if all(isinstance(a, _LEAVES) for a in args):  # the common call: tensors only
        return list(args), (LEAF,) * len(args)
    leaves, structures = [], []
    for a in args:
        flat, structure = flatten(a, constants=True)
        leaves += flat
        structures.append(structure)
    return leaves, tuple(structures)


def _input_names(params: list[str], structures, specs) -> list[str]:
    """IR names of the flat inputs: the spec's name, else the parameter's (``xs_0``,
    ``xs_1`` for the tensors of a list argument)."""
    names = []
    for i, structure in enumerate(structures):
        base = params[i] if i < len(params) else f"x{i}"
        if structure.kind is Keywords:  # each keyword's tensors by its name
            names += _input_names(list(structure.keys), structure.children, None)
            continue
        for j in range(structure.n_leaves):
            names.append(base if structure.kind is None else f"{base}_{j}")
    if specs is not None:
        names = [s.name or n for s, n in zip(specs, names)]
    return names


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def _arguments(structures, leaves) -> list:
    """The positional arguments, rebuilt from the flat inputs by their structures."""
    args, start = [], 0
    for structure in structures:
        args.append(unflatten(structure, leaves[start:start + structure.n_leaves]))
        start += structure.n_leaves
    return args



def backend_lowering(backend: str) -> Lowering:
    """The kernels of `backend`: ``"numpy"``, the registry's (the interpreter's
    semantics, run by the executor); ``"llvm"``, compiled kernels for fused and some
    elementwise ops (`irflow.codegen.llvm.lowering`), the NumPy ones elsewhere."""
    if backend == "numpy":
        return NUMPY
    if backend == "llvm":
        from ..codegen.llvm.lowering import LLVMLowering
        return LLVMLowering()
    raise IrflowError(f"unknown backend {backend!r}; available: "
                      + ", ".join(repr(b) for b in BACKENDS))


def compile(target=None, input_spec=None, backend: str = DEFAULT_BACKEND,  # noqa: A001
            check: bool = False, **options):
    """Compile a Layer or function (also usable as a decorator): `backend` is
    ``"llvm"`` (compiled kernels, the default) or ``"numpy"`` (the NumPy executor alone,
    the reference semantics)."""
    if target is None:
        return lambda t: CompiledFunction(t, input_spec, backend, check, **options)
    return CompiledFunction(target, input_spec, backend, check, **options)


__all__ = ["CompiledFunction", "Program", "compile", "ConversionError"]
