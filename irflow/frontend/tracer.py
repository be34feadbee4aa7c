"""The tracer: while a Layer's converted `forward` runs, Tensor operations become IR.

`irflow.dispatch.apply` hands every op to the active `Tracer`, which emits it into the
block being traced (a `Scope`). Tensors that stand for IR values are *traced*
(``_value is None``). Concrete tensors met along the way enter the program as:

- **state** (function arguments): tensors with ``persistable=True``, which are the
  parameters, buffers and optimizer accumulators, and anything `set_value` updates;
  so training can change them and ``set_state_dict`` after compiling is honoured;
  also every buffer of the compiled Layer, and captured tensors that require a
  gradient (which a compiled call inside eager autograd then gives them);
- **constants** otherwise (Python scalars, tensors made from data in `forward`).

Regions are closed: when code traced into a region uses a value of an enclosing
scope, the scope adds a block argument for it and remembers the outer value, which
becomes an operand of the region's op (`Scope.get`). `trace_cond` and `trace_while`
build the structured ops from Python callables; the AST conversion in
`irflow.frontend.convert` calls them for ``if``/``while``/``for`` on tensors.

State updates (``set_value``), gradients (``param.grad``) and random seeds are
tracked here too, and become extra results and arguments of the program.
"""
from __future__ import annotations

import re
from contextlib import contextmanager, nullcontext
from typing import Callable, Sequence

import numpy as np

from ..autograd import _run_hooks
from ..dispatch import state, user_location
from ..errors import (ConversionError, DimMismatch, IrflowError, Location, ShapeError,
                      SymbolicShapeError)
from ..ir import dtypes
from ..ir.builder import Builder
from ..ir.core import Block, BlockArg, Function, Operation, Region, Value
from ..ir.region_op import Arg, Operand, Result
from ..ir.registry import lookup
from ..ir.types import (Dim, ListType, TensorType, differentiable, shape_str, substitute,
                        substitute_type, symbols_of)
from ..tensor import random as random_numbers
from ..tensor.tensor import RunTimeSize, Size, Tensor, is_cleared_gradient
from .guards import Reads
from .stand_ins import NumpyView, PythonScalar
from .tensor_array import TensorArray


def is_traced(x) -> bool:
    """Whether `x` is a tensor of the program being traced (it holds no value)."""
    return isinstance(x, Tensor) and x._value is None


class Undefined:
    """A variable that has no value on some path (assigned in one branch only, or
    first assigned inside a loop that may run zero times). Using it is an error that
    says where it came from."""

    def __init__(self, name: str, loc: Location | None = None, why: str = "is not defined"):
        self.name, self.loc, self.why = name, loc, why

    def _fail(self, *args, **kwargs):
        raise ConversionError(f"variable '{self.name}' {self.why}", self.loc)

    __getattr__ = _fail
    __call__ = __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = _fail
    __truediv__ = __matmul__ = __getitem__ = __bool__ = __iter__ = __len__ = _fail


UNDEFINED = Undefined("?")
# the Python values a Layer attribute forward changes may hold, carried as 0-d tensors
NUMBER_DTYPES = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64}


class RunTimeGradient:
    """A parameter's gradient that exists on some runs of the program only: the
    parameter is used only in a branch of a tensor-dependent `if` or in a loop that
    may run zero times, or ``backward()`` runs in one branch of an `if` only. Eager
    code leaves it None on the other runs, and an optimizer skips a parameter whose
    gradient is None (no weight decay, no moments), so `value` (the gradient, zeros
    where it does not exist) goes with `defined`, the traced bool that says whether it
    exists: an optimizer's update of the parameter takes effect only where it is true
    (`Tracer.gradient`), ``clear_grad()`` keeps it, and the program writes the
    gradient back only where it is true (`Program._finish`). Reading ``p.grad`` is an
    error: in compiled code it cannot be None on some runs only."""

    def __init__(self, value: Tensor, defined: Tensor, label: str, loc: Location | None,
                 computed_at: Location | None):
        self.value, self.defined, self.label, self.loc = value, defined, label, loc
        self.computed_at = computed_at

    def error(self) -> ConversionError:
        where = "".join(f"\n{what}: {loc.describe()}" for what, loc in
                        (("The gradient", self.computed_at), ("The `if`", self.loc)) if loc)
        return ConversionError(
            f"the gradient of {self.label} exists on some runs of the program only (the "
            "parameter is used only in a branch of a tensor-dependent `if` or in a loop "
            "that may not run, or the gradient is computed in one branch only), and is "
            "None on the others, as in eager code; compiled code cannot read it. "
            "optimizer.step() and clear_grad() handle such gradients; read it after the "
            f"compiled call instead{where}", user_location())


def owner_block(v: Value) -> Block:
    return v.block if isinstance(v, BlockArg) else v.op.parent


class Scope:
    """One block being traced: the function body or a region of a cond/while."""

    def __init__(self, block: Block, parent: "Scope | None", branch: bool = False,
                 loop: bool = False):
        self.block = block
        self.parent = parent
        self.branch = branch                        # a cond's branch (not a loop's region)
        self.loop = loop                            # a while's condition or body
        self.builder = Builder(block)
        self.captured: dict[Value, BlockArg] = {}  # any outer value -> its argument here
        self.outer: list[Value] = []                # per captured argument, the parent's value
        self.constants: dict[int, Value] = {}       # id of a concrete tensor -> its const
        self.seed: BlockArg | None = None           # a loop region's carried seed
        self.sizes: dict[tuple, Tensor] = {}        # (value, axis) -> its size (Tracer.dims)

    def loop_seed(self) -> BlockArg:
        """This loop region's random seed argument, added at its first use."""
        if self.seed is None:
            self.seed = self.block.add_arg(TensorType(dtypes.int64, ()), "seed")
        return self.seed

    def get(self, v: Value) -> Value:
        """`v` usable in this block, captured as a block argument if defined outside."""
        if owner_block(v) is self.block:
            return v
        found = self.captured.get(v)
        if found is not None:
            return found
        if self.parent is None:
            raise _escaped(v)
        outer = self.parent.get(v)
        arg = self.block.add_arg(v.type, v.name)
        self.captured[v] = arg
        self.outer.append(outer)
        return arg


def _escaped(v: Value) -> ConversionError:
    """The error for a tensor used outside the branch or loop body that computed it."""
    op = v.op if not isinstance(v, BlockArg) else None
    where = f" (computed at {op.loc})" if op is not None and op.loc is not None else ""
    return ConversionError(
        f"a tensor computed inside a tensor-dependent `if` or loop{where} is used here, "
        "outside it. It left the branch or loop through a side effect that conversion "
        "cannot carry (a list it was appended to, an attribute or dict entry it was "
        "stored in, a function that changed an object); assign it to a variable in the "
        "branch or loop instead", user_location())


_SAMPLE_SIZE = 720720  # divisible by 1 to 16: what reshapes and strides of a size need


def _summed(b: Builder, gradients: Sequence[Value | None]) -> Value | None:
    """The sum of the gradients that exist (None if none does)."""
    found = [g for g in gradients if g is not None]
    total = found[0] if found else None
    for g in found[1:]:
        total = b.accumulate(total, g)
    return total


def _values_by_tensor(sources: dict[Value, Tensor]) -> list[tuple[Tensor, list[Value]]]:
    """Each state tensor of `sources` (its values -> it) with its values, in order."""
    grouped: dict[int, tuple[Tensor, list[Value]]] = {}
    for v, t in sources.items():
        grouped.setdefault(id(t), (t, []))[1].append(v)
    return list(grouped.values())


def _hooked(t: Tensor, grad: Tensor) -> Tensor:
    """The gradient a ``backward()`` gave parameter `t`, through the hooks registered on
    it (``p.register_hook``), as eager backward passes a leaf's whole gradient of one
    backward through them before accumulating it. The hooks run as the program is
    traced, so a program holds the hooks registered then (`CompiledFunction` traces
    again when they change)."""
    hooks = getattr(t, "_hooks", None)
    return _run_hooks(hooks, grad) if hooks else grad


def _for_sizes(e: ShapeError, name: str, values, attrs) -> ShapeError:
    """`e` (a type rule refusing operands with symbolic dims) as a
    `SymbolicShapeError` when the rule accepts them once the symbols are sizes (each a
    different large one, or all one: sizes divisible by what reshapes need): the
    failure is the symbols', so the program does not convert, where eager code runs.
    Else `e`, a shape error eager code would raise too (and a `DimMismatch`, which
    the caller resolves by tracing again)."""
    if isinstance(e, DimMismatch):
        return e
    shape_attrs = [v for k, v in (attrs or {}).items() if k in lookup(name).shape_attrs]
    symbols = sorted({s for v in values if isinstance(v.type, TensorType)
                      for d in v.type.shape for s in symbols_of(d)} |
                     {s for shape in shape_attrs for d in shape for s in symbols_of(d)})
    samples = ({s: _SAMPLE_SIZE * (k + 1) for k, s in enumerate(symbols)},
               dict.fromkeys(symbols, _SAMPLE_SIZE))
    if not symbols or not any(_accepts(name, values, attrs, sizes) for sizes in samples):
        return e
    return SymbolicShapeError(f"{e.message}\nWith sizes in place of {', '.join(symbols)} "
                              "this would hold: the sizes are known only when the program "
                              "runs, and irflow cannot decide it for every size", e.loc)


def _accepts(name: str, values, attrs, sizes: dict) -> bool:
    """Whether op `name`'s type rule accepts `values`' types and `attrs` with the
    symbols replaced by `sizes`."""
    opdef = lookup(name)
    types_ = [substitute_type(v.type, sizes) for v in values]
    sized = {k: (tuple(substitute(d, sizes) for d in v) if k in opdef.shape_attrs else v)
             for k, v in (attrs or {}).items()}
    try:
        opdef.result_types(types_, opdef.complete_attrs(sized, types_))
    except (ShapeError, TypeError, ValueError):
        return False
    return True


def _of_numbers(inputs) -> bool:
    """Whether an op's inputs are what eager code has as Python numbers (stand-ins
    and 0-d constants), at least one a stand-in: its result is one too."""
    return any(isinstance(t, PythonScalar) for t in inputs) and all(
        isinstance(t, PythonScalar) or (t._value is not None and t._value.ndim == 0)
        for t in inputs)


def _result_class(inputs):
    """The stand-in class of an op's results: a Python number's for an op of numbers
    (`_of_numbers`), a NumPy array's for an op of arrays (``x.numpy()[0]``,
    ``x.numpy().sum()``: stand-ins and constants), else None (a tensor)."""
    if _of_numbers(inputs):
        return PythonScalar
    if any(isinstance(t, NumpyView) for t in inputs) and all(
            isinstance(t, NumpyView) or t._value is not None for t in inputs):
        return NumpyView
    return None


def _ops_within(block: Block):
    """The ops of `block` and of the regions within them."""
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _ops_within(inner)


def _active_values(block: Block, active: set[Value]) -> set[Value]:
    """`active` (values that require a gradient) with every float value of `block`
    that depends on one through ops that carry gradients; into and out of regions
    as their op's flow says, to a fixpoint (a loop's carried values)."""
    for op in block.ops:
        if not op.regions:
            if not lookup(op.name).nondiff and any(v in active for v in op.operands):
                active.update(r for r in op.results if differentiable(r.type))
            continue
        edges = list(lookup(op.name).region_op.flow(op))
        while True:
            before = len(active)
            for source, target in edges:
                if _at(op, source) in active and differentiable(_at(op, target).type):
                    active.add(_at(op, target))
            for region in op.regions:
                _active_values(region.blocks[0], active)
            if len(active) == before:
                break
    return active


def _at(op: Operation, position) -> Value:
    """The value at a position of region op `op`'s flow (`irflow.ir.region_op`)."""
    if isinstance(position, Operand):
        return op.operands[position.index]
    if isinstance(position, Result):
        return op.results[position.index]
    block = op.regions[position.region].blocks[0]
    if isinstance(position, Arg):
        return block.args[position.index]
    return block.terminator.operands[position.index]


class _TopLevel:
    """``with``: the tracer emits into the function's own block (`Tracer._at_top_level`)."""

    def __init__(self, tracer: "Tracer"):
        self.tracer = tracer

    def __enter__(self):
        self.saved = scope = self.tracer.scope
        while scope.parent is not None:
            scope = scope.parent
        self.tracer.scope = scope

    def __exit__(self, *exc):
        self.tracer.scope = self.saved
        return False


class Tracer:
    """Records Tensor operations as IR into `self.fn`."""

    # A compiled program reads its parameters and buffers when it runs, so what they
    # hold while it is traced is no value of it: ``item()`` traces, ``numpy()`` refuses
    # (`Tensor._tracing_state`). A static program's parameters hold the values its
    # Executor starts from, which code building the program may read.
    state_known_when_traced = False

    def __init__(self, name: str, state_names: dict[int, str] | None = None,
                 aliases: dict | None = None, numbers: Sequence[tuple] = ()):
        self.fn = Function(name)
        self.numbers = list(numbers)      # (layer, name): see lift_numbers
        self.number_args: list[tuple] = []
        self.changed_numbers: list[tuple] = []  # see note_number
        # symbol of the trace's own -> (the size it is checked to equal, where a rule
        # needed that): see `irflow.frontend.program.run_time_alias`
        self.aliases: dict[str, tuple] = aliases or {}
        self.state_names = state_names or {}  # id(tensor) -> name in the IR
        self.scope = Scope(self.fn.block, None)
        self.n_inputs = 0
        self.traced_inputs: list[tuple[BlockArg, Tensor]] = []  # each input's arg and tensor
        # input index -> (the traced gradient ``backward()`` gave it, the traced bool
        # that says whether it exists, or True): see `backward`
        self.input_grads: dict[int, tuple[Tensor, Tensor | bool]] = {}
        self.state: list[Tensor] = []                 # lifted concrete tensors, in arg order
        self.state_args: dict[int, BlockArg] = {}
        self.updates: dict[int, Tensor] = {}          # id -> traced new value (set_value)
        self.update_history: dict[int, list[Tensor]] = {}  # id -> every value set, in order
        self.grads: dict[int, Tensor | None] = {}     # id(param) -> traced grad
        self.grad_owners: dict[int, Tensor] = {}
        self.grad_locs: dict[int, Location | None] = {}  # where each gradient was last set
        self.grad_inputs: dict[int, tuple[Tensor, Tensor]] = {}  # id(param) -> (it, its arg)
        self.grad_presence: dict[int, Tensor] = {}    # params whose gradient was read
        self.backward_leaves: dict[int, Tensor] = {}  # params a backward() reached
        self.differentiated: set = set()  # the IR values backward() was called on
        self.zero_grads: dict[int, Tensor] = {}       # id(param) -> its gradient, known zero
        self.seed_arg: BlockArg | None = None
        self.fixed_seed: Value | None = None          # see reseed()
        self.seed_count = 0
        self.alive: list[Tensor] = []
        self.fresh_dims = 0                           # symbols fresh_dim made
        self.differentiable: set[Value] = set()       # traced values that require a grad
        self.undo: list[Callable[[], None]] = []      # see changed()
        self.attributes: dict[tuple, tuple] = {}      # see store_attribute()
        self.list_sizes: dict[object, Dim] = {}       # see list_size()
        self.list_lengths: dict[Value, object] = {}   # see same_length()
        self.texts: dict[str, tuple] = {}             # see text_of()
        self.escaped: dict[int, tuple] = {}           # see trace_region()
        self.stopped_values: dict[Value, Value] = {}  # value -> its stop_gradient
        self.layers: list = []                        # Layers called: the program depends on them
        self.reads = Reads()                          # Python values read: the guards
        # train-mode value -> its test-mode twin, kept only by a static program (for
        # clone(for_test=True)); a compiled function traces one mode
        self.twins: dict[Value, Value] | None = None
        # (object, call) of host code each run makes before or after its plan: see on_host
        self.before_run: list[tuple[object, Callable[[], None]]] = []
        self.after_run: list[tuple[object, Callable[[], None]]] = []

    # -- entering and leaving
    def __enter__(self) -> "Tracer":
        if state.tracer is not None:
            raise ConversionError("irflow.compile cannot run while another program is "
                                  "being traced", user_location())
        state.tracer = self
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        state.tracer = None
        swallowed = self._swallowed_escape(exc)
        if exc_type is not None or swallowed or self.changed_numbers:  # a failed compile,
            for undo in reversed(self.undo):      # or one traced again: the user's objects
                undo()                            # as they were
        for layer, name, before, _ in self.attributes.values():  # never a traced tensor
            layer._restore_attribute(name, before)
        if swallowed is not None:
            raise swallowed
        return False

    def _swallowed_escape(self, exc) -> ConversionError | None:
        """The error for an exception that left a tensor-dependent branch or loop body
        while it was traced (see `trace_region`) and that the user's code caught: the
        trace went on down the ``except`` path, which the program would then take on
        every run, where eager code takes it only on the runs that reach the `raise`
        (Paddle 3.3.1's to_static does so silently). None when nothing was caught;
        an exception that ends the trace uncaught carries a note saying why it was
        raised although its branch may not be the one a run takes."""
        chain = set()
        while exc is not None and id(exc) not in chain:  # exc and what it was raised from
            chain.add(id(exc))
            exc = exc.__cause__ or exc.__context__
        for caught, loc in self.escaped.values():
            if id(caught) not in chain:
                return ConversionError(
                    f"{caught!r} was raised in a branch or loop body of this "
                    "tensor-dependent statement while irflow traced it, and the code "
                    "around it caught it: a compiled program would take the `except` "
                    "path on every run, where eager code takes it only on the runs that "
                    "reach the `raise`. Raise outside tensor-dependent control flow, or "
                    "check with `assert`", loc)
            if not isinstance(caught, IrflowError):
                caught.add_note(f"(raised while irflow traced the tensor-dependent `if` or "
                                f"loop at {loc}: a compiled program runs the code of every "
                                "branch when it is traced, and cannot raise when one is "
                                "taken; use `assert`, which checks when it runs)")
        return None

    def store_attribute(self, layer, name: str, value: Tensor) -> None:
        """``self.h = t`` with a traced `t` in a Layer's forward: the value becomes an
        output of the program, and each call stores the tensor it computed there (so
        the Layer never keeps a traced tensor). Inside tensor-dependent control flow
        the statement's own machinery decides (`jst._Effects`)."""
        key = (id(layer), name)
        if self.scope.parent is None:
            before = self.attributes[key][2] if key in self.attributes else \
                layer._attribute_or_unset(name)
            self.attributes[key] = (layer, name, before, value)
        layer._restore_attribute(name, value)

    def note_number(self, layer, name: str, value) -> bool:
        """``self.n = value`` (a Python number or bool) in a Layer's forward, where `n`
        held another: Python code runs only when the program is traced, so the program
        must carry `n` (`numbers`) for each call to count (or flag) as eager code does.
        Once it carries `n`, the value forward leaves there is the program's output
        for it, so a plain assignment at the top level (``self.scale = 1.0``) is stored
        as a constant of the program (inside tensor-dependent control flow the
        statement's own machinery merges it); returns whether it was stored here.
        A Layer's ``training`` flag is not carried: see `note_mode`."""
        if name == "training":
            self.note_mode(layer, value)
            return False
        if (layer, name) in self.numbers:
            if self.scope.parent is not None:
                return False
            constant = Tensor._from_array(np.asarray(value, NUMBER_DTYPES[type(value)].np))
            self.store_attribute(layer, name, PythonScalar.of(self.wrap(self.value_of(constant))))
            return True
        old = layer.__dict__.get(name)
        if type(old) in NUMBER_DTYPES and old != value:
            self.changed_numbers.append((layer, name))
            self.changed(lambda: layer.__dict__.__setitem__(name, old))
        return False

    def note_mode(self, layer, mode: bool) -> None:
        """``model.train()`` or ``model.eval()`` in traced code (a training step that
        starts with ``model.train()`` after an evaluation): the program was picked by
        the modes its call starts with, so the rest of the trace reads the new mode as
        the Python bool eager code reads (carried as a number, it would be a traced
        bool that ``if self.training`` in Dropout cannot test). Each run sets it after
        its plan, as eager code leaves it."""
        old = layer.__dict__.get("training")
        if old == mode:
            return
        self.on_host(layer, lambda: setattr(layer, "training", mode), False,
                     f"{type(layer).__name__}.train()")
        self.changed(lambda: layer.__dict__.__setitem__("training", old))

    def lift_numbers(self) -> None:
        """Each Layer attribute of `numbers` (a Python number or bool forward changes)
        as an argument of the program, a 0-d tensor of its Python type's dtype
        (`NUMBER_DTYPES`: a float is a double, as Python's) standing for what it holds
        when the program runs; what forward leaves there is an output that each call
        stores back as a Python value."""
        for layer, name in self.numbers:
            dtype = NUMBER_DTYPES[type(layer.__dict__[name])]
            arg = self.fn.block.add_arg(TensorType(dtype, ()), name)
            self.number_args.append((layer, name, arg))
            self.store_attribute(layer, name, PythonScalar.of(self.wrap(arg)))

    def attribute_outputs(self) -> list[tuple]:
        """(layer, name, traced value) of each Layer attribute the program sets (and
        that nothing replaced after)."""
        return [(layer, name, value) for layer, name, _, value in self.attributes.values()
                if layer._attribute_or_unset(name) is value]

    def on_host(self, owner, call: Callable[[], None], before: bool, what: str) -> None:
        """Traced code called `what` (a learning-rate scheduler's ``step()``) for its
        effect on the Python object `owner`: host arithmetic, which the program cannot
        hold and tracing would run only once. Each run of the program makes `call`
        instead, before its plan when `before` (the effect comes before anything the
        plan reads of it: the optimizer's learning rate, read as an input) and after
        it otherwise, in the order traced. Tracing itself does not call it, so the
        first call takes effect as each later one does. Inside tensor-dependent
        control flow, which decides only when the program runs, it is an error."""
        if self.scope.parent is not None:
            raise ConversionError(f"{what} inside tensor-dependent control flow is not "
                                  "supported in compiled code (it is host code, made on "
                                  "every run); call it outside the `if` or loop",
                                  user_location())
        (self.before_run if before else self.after_run).append((owner, call))

    def reads_state(self, t: Tensor) -> bool:
        """Whether the program takes the state tensor `t` as an input so far."""
        return id(t) in self.state_args

    def runs_after(self, owner) -> bool:
        """Whether the program changes `owner` after its plan (`on_host`)."""
        return any(o is owner for o, _ in self.after_run)

    def changed(self, undo: Callable[[], None]) -> None:
        """Conversion changed a Python object of the user's (wrote a branch's result
        back into a list, set an attribute); `undo` puts it back if tracing fails."""
        self.undo.append(undo)

    def input(self, t: TensorType, name: str, stop_gradient: bool = True) -> Tensor:
        """A traced Tensor for the program's next input argument."""
        arg = self.fn.block.add_arg(t, name)
        self.n_inputs += 1
        tensor = self.wrap(arg, stop_gradient)
        self.traced_inputs.append((arg, tensor))
        return tensor

    def wrap(self, v: Value, stop_gradient: bool = True, cls=None) -> Tensor:
        """The traced tensor for `v`: of class `cls` (a stand-in for a Python value), a
        `TensorArray` for a list, else a `Tensor`."""
        cls = cls or (TensorArray if isinstance(v.type, ListType) else Tensor)
        t = cls._from_array(None)
        t._ir, t._tracer, t.stop_gradient = v, self, stop_gradient
        if not stop_gradient:
            self.differentiable.add(v)
        return t

    # -- ops
    def apply(self, name: str, inputs: Sequence[Tensor], attrs: dict):
        """Emit op `name`. Under ``no_grad()`` its inputs that require a gradient enter
        through ``stop_gradient``, so that the program's own autodiff agrees with eager
        code that recorded nothing."""
        grad = state.grad_enabled
        values = [self.value_of(t, stop=not (grad or t.stop_gradient)) for t in inputs]
        loc = user_location()
        with self.scope.builder.location(loc):
            try:
                op = self.scope.builder.create(name, values, attrs)
            except ShapeError as e:
                raise _for_sizes(e, name, values, attrs) from None
            results = [self.matched(r) for r in op.results]
        requires = grad and not op.opdef.nondiff and any(not t.stop_gradient for t in inputs)
        cls = _result_class(inputs)
        outs = [self.wrap(r, not (requires and isinstance(r.type, TensorType)
                                  and r.type.dtype.is_float),
                          cls if cls is NumpyView or cls is PythonScalar and
                          r.type == TensorType(r.type.dtype, ()) else None)
                for r in results]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def value_of(self, t: Tensor, stop: bool = False) -> Value:
        """The IR value standing for `t` in the current scope; with `stop`, through a
        ``stop_gradient``. A traced tensor whose ``stop_gradient`` the user set to True
        after it was computed is rebound to its stopped value here, at its next use."""
        if t._value is None:
            if t._tracer is not self:
                raise ConversionError("a tensor traced by another program was used here",
                                      user_location())
            if t.stop_gradient and t._ir in self.differentiable:
                t._ir = self.stopped(t._ir)
            return self.scope.get(self.stopped(t._ir) if stop else t._ir)
        updated = self.updates.get(id(t))
        if updated is not None:
            return self.value_of(updated, stop)
        if self.is_state(t):
            arg = self.lift(t)
            return self.scope.get(self.stopped(arg) if stop else arg)
        const = self.scope.constants.get(id(t))
        if const is None:
            with self.scope.builder.location(user_location()):
                const = self.scope.builder.constant(t._value)
            self.scope.constants[id(t)] = const
            self.alive.append(t)  # const caches are keyed by id(): keep the id unique
        return const

    def is_state(self, t: Tensor) -> bool:
        """Whether tensor `t`, which has a value, is an argument of the program (a
        parameter, a buffer, a tensor that requires a gradient), not a constant."""
        return t.persistable or not t.stop_gradient or id(t) in self.state_names

    def matched(self, v: Value) -> Value:
        """`v`, or where its type has a size of the trace's own that a rule needs equal
        to another (`aliases`), `v` through a ``match_shape`` to that size, checked
        when the program runs."""
        if not self.aliases or not isinstance(v.type, TensorType):
            return v
        hit = {s: self.aliases[s] for d in v.type.shape for s in symbols_of(d)
               if s in self.aliases}
        if not hit:
            return v
        shape = [substitute(d, {s: size for s, (size, _) in hit.items()}) for d in v.type.shape]
        needed_at = next((str(loc) for _, loc in hit.values() if loc is not None), "")
        return self.scope.builder.create("match_shape", [v],
                                         {"shape": shape, "needed_at": needed_at}).result

    def stopped(self, v: Value) -> Value:
        """`v` through a ``stop_gradient`` op, emitted once per value in the block that
        defines `v`, so that it can stand for `v` wherever `v` is visible."""
        found = self.stopped_values.get(v)
        if found is None:
            scope = self.scope
            while owner_block(v) is not scope.block:
                scope = scope.parent
            name = "list_stop_gradient" if isinstance(v.type, ListType) else "stop_gradient"
            with scope.builder.location(user_location()):
                found = scope.builder.create(name, [v]).results[0]
            self.stopped_values[v] = found
        return found

    def lift(self, t: Tensor) -> BlockArg:
        """The function argument for the state tensor `t`, added on first use."""
        arg = self.state_args.get(id(t))
        if arg is None:
            arg = self.fn.block.add_arg(TensorType(dtypes.from_numpy(t._value), t._value.shape),
                                        self.state_names.get(id(t), t.name))
            self.state_args[id(t)] = arg
            self.state.append(t)
        return arg

    # -- symbolic sizes
    def dims(self, t: Tensor) -> list:
        """`t`'s shape: ints for static dims, and for each symbolic dim an i64 scalar
        computed when the program runs (``numel`` of that axis), which shape arguments
        read back as the symbol (see `irflow.tensor.convert.traced_dim`)."""
        return [d if isinstance(d, int) else self._size(t, axis)
                for axis, d in enumerate(t._ir.type.shape)]

    def _size(self, t: Tensor, axis: int) -> Tensor:
        """The size of `t`'s symbolic axis, one ``numel`` per value, axis and block
        (code asks for ``x.shape`` often; each op would be a use of `x` until dce)."""
        key = (self.value_of(t), axis)
        found = self.scope.sizes.get(key)
        if found is None:
            found = self.scope.sizes[key] = PythonScalar.of(
                self.apply("numel", [t], {"axis": (axis,)}))
        return found

    def input_symbols(self) -> set[str]:
        """The symbols of the program's inputs: sizes known from the start of a call."""
        return {s for a in self.fn.block.args if isinstance(a.type, TensorType)
                for d in a.type.shape for s in symbols_of(d)}

    def list_size(self, v: Value) -> Dim:
        """The dim for the length of the list `v` when it is stacked: a fresh symbol per
        list value, or per set of lists known to be alike long (`same_length`), so that
        two stacks of them have one shape; or the length a loop is known to give it."""
        key = self.list_lengths.get(v, v)
        found = self.list_sizes.get(key)
        if found is None:
            found = self.list_sizes[key] = self.fresh_dim()
        return found

    def as_long_as(self, v: Value, other: Value) -> None:
        """The list `v` has the length of the list `other`."""
        self.list_lengths[v] = self.list_lengths.get(other, other)

    def same_length(self, v: Value, key, size: Dim | None = None) -> None:
        """The lists given one `key` have one length (a loop grew them alike), which is
        `size` where that is known (a loop of a known trip count grew them)."""
        self.list_lengths[v] = key
        if size is not None:
            self.list_sizes.setdefault(key, size)

    def fresh_dim(self) -> str:
        """A new symbol for a size that depends on tensor values (bound when the
        program runs, from the result of the op whose size it is)."""
        taken = self.input_symbols()
        while True:
            self.fresh_dims += 1
            if f"D{self.fresh_dims}" not in taken:
                return f"D{self.fresh_dims}"

    # -- tensor hooks (called by Tensor methods while tracing)
    def shape_of(self, t: Tensor) -> list:
        """``t.shape``: each symbolic dim is an i64 scalar computed when the program
        runs, so ``range(x.shape[0])`` loops the right number of times and
        ``reshape(x, [x.shape[0], -1])`` keeps the symbol, in converted code and in
        code irflow does not convert alike. Paddle's -1 would make ``x.shape[0] // 2``
        a wrong number, silently. A `Size`, as eagerly (a `RunTimeSize`, which compares
        as a traced bool, where a size is traced)."""
        dims = self.dims(t)
        return RunTimeSize(dims) if any(isinstance(d, Tensor) for d in dims) else Size(dims)

    def numel(self, t: Tensor):
        """``t.size``: an int when every dim is static, else an i64 scalar computed
        when the program runs, so it stays right for every size."""
        shape = t._ir.type.shape
        if all(isinstance(d, int) for d in shape):
            return int(np.prod(shape))
        return PythonScalar.of(self.apply("numel", [t], {}))

    def concrete(self, t: Tensor, what: str):
        raise ConversionError(f"{what} needs the tensor's value, which a compiled program "
                              "only knows when it runs; keep the computation in tensor ops",
                              user_location())

    def item(self, t: Tensor, index):
        """``.item()`` on a traced tensor stays symbolic: a 0-d traced tensor that,
        like the Python number eager code gets, carries no gradient and has Python's
        dtype for it (a float is a double: ``t.item() * 0.1`` rounds as in Python).
        ``item(i)`` takes element i of the flattened tensor, ``item(i, j)`` element
        ``[i, j]``, as NumPy's."""
        from ..tensor.convert import cast, python_number_dtype
        from ..tensor.manipulation import getitem, reshape
        if len(index) == 1:
            t = getitem(reshape(t, [-1]), index[0])
        elif index:
            t = getitem(t, tuple(index))
        elif t._ir.type.rank:
            t = reshape(t, [])
        return PythonScalar.of(cast(self.detach(t), python_number_dtype(t.dtype)))

    def to_bool(self, t: Tensor) -> bool:
        raise ConversionError(
            "the truth value of a traced tensor is known only when the program runs. irflow "
            "converts `if`, `while` and `for` on tensors in code whose source it can read; "
            "this use (an `assert`, a conversion inside a library, or a function irflow "
            "could not convert) needs a Python value", user_location())

    def iterate(self, t: Tensor):
        n = t._ir.type.shape[0] if t._ir.type.rank else None
        if not isinstance(n, int):
            raise ConversionError("iterating over a tensor with a symbolic first dim is only "
                                  "supported in a converted `for` loop", user_location())
        return (t[i] for i in range(n))

    def detach(self, t: Tensor) -> Tensor:
        """``t.detach()``: a traced tensor's value through a ``stop_gradient``; for a
        state tensor, what it holds when the program runs (its value set earlier in
        the call, or its argument), stopped; other tensors with a value are constants."""
        if t._value is None:
            return self.wrap(self.stopped(t._ir))
        updated = self.updates.get(id(t))
        if updated is not None:
            return self.detach(updated)
        if self.is_state(t):
            return self.wrap(self.stopped(self.lift(t)))
        return Tensor._from_array(t._value)

    # -- text
    def text_of(self, t: Tensor, spec: str, shown: str | None = None, conversion: str = "",
                stop_gradient: bool | None = None) -> str:
        """``f"{t:.3f}"`` of a traced `t`: the text exists only when the program runs, so
        this is a placeholder that `print` replaces by a format field (`taken_text`).
        A placeholder that no print takes is an error when tracing ends
        (`check_texts`): the text would be wrong anywhere else. `shown` says what the
        text is of: "number", the Python number `t` holds; "array", the NumPy array
        (``t.numpy()``); or "tensor", the tensor's text, saying ``stop_gradient`` as
        `stop_gradient` (by default `t`'s) does. By default it is what
        ``format(t, spec)`` gives eagerly: the number for a spec or a 0-d tensor
        (``f"loss {loss}"`` shows ``loss 0.25``), which ``print(t)`` does not use.
        `conversion`: the field's ("r" for ``repr``)."""
        if shown is None:
            shown = "number" if spec or t._ir.type.rank == 0 else "tensor"
        field = "{" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if stop_gradient is None:
            stop_gradient = t.stop_gradient
        marker = f"\ue000{len(self.texts)}\ue001"
        self.texts[marker] = (t, field, shown, stop_gradient, user_location())
        return marker

    def taken_text(self, text: str, tensors: list) -> tuple[str, dict]:
        """`text` as the format of a `print` op (or an `assert`'s message): its
        placeholders become fields for the tensors (added to `tensors`), the rest
        escaped. Returns the format and the op's attributes that say how each tensor
        is shown (`irflow.ops.control.format_text`)."""
        out, shown = [], {"scalars": [], "arrays": [], "grads": []}
        for part in re.split("(\ue000\\d+\ue001)", text):
            found = self.texts.pop(part, None)
            if found is None:
                out.append(part.replace("{", "{{").replace("}", "}}"))
                continue
            t, field, kind, stop_gradient, _ = found
            if kind != "tensor" or not stop_gradient:
                shown[{"number": "scalars", "array": "arrays"}.get(kind, "grads")].append(
                    len(tensors))
            tensors.append(t)
            out.append(field)
        return "".join(out), {key: tuple(v) for key, v in shown.items()}

    def check_texts(self) -> None:
        """Text made from a traced value must have been printed (see `text_of`)."""
        for *_, loc in self.texts.values():
            raise ConversionError("a value known only when the program runs was made into "
                                  "text here, and that text is used other than by print(); "
                                  "keep the value a tensor, or print it", loc)

    def settle_shown_flags(self) -> None:
        """Narrow each op's ``grads`` (the operands a print or an assert message shows
        as requiring a gradient) to the values that do: a float depending on a
        parameter or an input that requires a gradient, through ops that carry
        gradients. Tracing takes a loop's float values to require one (an iteration
        may make them depend on a parameter), where eager code's flag says whether
        one did."""
        sources = {self.state_args[id(t)] for t in self.state if not t.stop_gradient}
        sources |= {arg for arg, t in self.traced_inputs if not t.stop_gradient}
        active = _active_values(self.fn.block, sources)
        for op in _ops_within(self.fn.block):
            grads = op.attrs.get("grads")
            if grads:
                op.attrs["grads"] = tuple(i for i in grads if op.operands[i] in active)

    def describe(self, t: Tensor) -> str:
        return f"Tensor(traced, shape={shape_str(t._ir.type.shape)}, dtype={t.dtype.name})"

    def set_value(self, t: Tensor, value) -> None:
        """``t.set_value(v)`` while tracing: a state update, returned by the program;
        for a tensor the program computes, `set_traced`."""
        if t._value is None:
            return self.set_traced(t, value)
        from ..tensor.convert import as_tensor, cast
        new = cast(as_tensor(value, like=t), dtypes.from_numpy(t._value))
        new = self._assigned(new)
        if new._ir.type.shape != t._value.shape:
            raise ShapeError("set_value: the new value has shape "
                             f"{shape_str(new._ir.type.shape)} but the "
                             f"tensor has shape {list(t._value.shape)}", user_location())
        self._check_state_change("set_value (or an optimizer's step())")
        self.lift(t)
        self.updates[id(t)] = new
        self.update_history.setdefault(id(t), []).append(new)

    def set_traced(self, t: Tensor, value) -> None:
        """``t.set_value(v)`` on a tensor the program computes: as eagerly, `t` takes
        v's value (cast to its dtype), no gradient reaches `v`, and one reaching `t`
        still flows to what `t` was made from, through ``t - stop(t)``, which is zero
        (where `t` is finite, so that an inf in `t` leaves the value `v`)."""
        from ..tensor.convert import as_tensor, cast
        from ..tensor.creation import zeros_like
        from ..tensor.logic import isfinite, select
        from ..tensor.manipulation import _rebind
        new = cast(as_tensor(value, like=t), t.dtype).detach()
        if new._ir.type.shape != t._ir.type.shape:
            raise ShapeError(f"set_value: the new value has shape "
                             f"{shape_str(new._ir.type.shape)} but the tensor has shape "
                             f"{shape_str(t._ir.type.shape)}", user_location())
        if not t.stop_gradient:
            through = t - t.detach()
            new = new + select(isfinite(t), through, zeros_like(through))
        _rebind(t, new)

    def _assigned(self, new: Tensor) -> Tensor:
        """`new` as a state tensor's new value: an assignment, which no gradient goes
        through (as eagerly), so that what reads it differentiates with respect to it
        alone (`_values_had`); an update computed from a gradient would otherwise
        reach the parameters through it. A program in which nothing requires a
        gradient (a startup program) needs no stop."""
        value = self.value_of(new)
        return self.wrap(self.stopped(value) if self.differentiable else value)

    def _check_state_change(self, what: str) -> None:
        """State (parameters, gradients) may change at the top level and in the
        branches of a tensor-dependent `if`, which yields it; a loop would have to
        carry it."""
        scope = self.scope
        while scope.parent is not None:
            if not scope.branch:
                raise ConversionError(f"{what} inside a tensor-dependent loop is not "
                                      "supported; call it after the loop", user_location())
            scope = scope.parent

    def snapshot(self) -> tuple[dict, dict]:
        """The state updates and gradients as they are now (see `restore`)."""
        return dict(self.updates), dict(self.grads)

    def restore(self, snapshot: tuple[dict, dict]) -> None:
        self.updates, self.grads = dict(snapshot[0]), dict(snapshot[1])

    def state_label(self, t: Tensor) -> str:
        """How errors name the state tensor `t`."""
        return self.state_names.get(id(t)) or t.name or "a parameter"

    # -- gradients
    def grad_of(self, t: Tensor):
        """``t.grad`` while tracing: what the program set it to, else the gradient the
        parameter has when the program runs (an argument: a compiled ``backward()``
        accumulates into it, as eager code does), or None. Which of its parameters
        have a gradient is part of what a program assumes (`grad_presence`)."""
        g = self._gradient(t)
        if isinstance(g, RunTimeGradient):
            raise g.error()
        return g

    def gradient(self, t: Tensor) -> tuple[Tensor | None, Tensor | None]:
        """``t.grad`` for an optimizer's step: (the gradient or None, None), or for a
        gradient that exists on some runs only, (its value, the traced bool that says
        whether it exists), under which the step must update (`updates_where`)."""
        g = self._gradient(t)
        if isinstance(g, RunTimeGradient):
            return g.value, g.defined
        return g, None

    def _gradient(self, t: Tensor):
        """`grad_of`, a `RunTimeGradient` included."""
        if id(t) in self.grads:
            return self.grads[id(t)]
        if not t.stop_gradient and any(t is tensor for _, tensor in self.traced_inputs):
            raise ConversionError("the compiled code reads or changes the gradient of one of "
                                  "its inputs, which only the caller's tensor holds: read "
                                  "it after the call, or compute it with paddle.grad",
                                  user_location())
        self.grad_presence[id(t)] = t
        if t._grad is None:
            return None
        if is_cleared_gradient(t._grad._value):
            return self._zero_grad(t)
        found = self.grad_inputs.get(id(t))
        if found is None:
            arg = self.fn.block.add_arg(TensorType(dtypes.from_numpy(t._grad._value),
                                                   t._grad._value.shape),
                                        f"{self.state_label(t)}@GRAD")
            found = self.grad_inputs[id(t)] = (t, self.wrap(arg))
        return found[1]

    def _zero_grad(self, t: Tensor) -> Tensor:
        """The gradient of `t` when it is ``clear_grad()``'s zero: a zero constant at the
        start of the function, not an argument, so the program reads no array of zeros
        and ``backward()`` replaces it instead of adding to it (as eager code does)."""
        found = self.zero_grads.get(id(t))
        if found is None:
            array = t._grad._value
            first = next(iter(self.fn.block.ops), None)
            b = Builder(self.fn.block) if first is None else Builder.before(first)
            b.loc = None
            zero = b.zeros(TensorType(dtypes.from_numpy(array), array.shape))
            found = self.zero_grads[id(t)] = self.wrap(zero)
        return found

    def set_grad(self, t: Tensor, g) -> None:
        self._check_state_change("setting a gradient (backward(), clear_grad())")
        self.grads[id(t)] = g
        self.grad_owners[id(t)] = t
        self.grad_locs[id(t)] = user_location()

    def replace_grad(self, t: Tensor, value: Tensor) -> None:
        """Make `value` (computed from it: clipped) `t`'s gradient, which exists where
        the one it replaces did."""
        g = self._gradient(t)
        if isinstance(g, RunTimeGradient):
            value = RunTimeGradient(value, g.defined, g.label, g.loc, g.computed_at)
        self.set_grad(t, value)

    def clear_grad(self, t: Tensor, set_to_zero: bool) -> None:
        """``t.clear_gradient(set_to_zero)`` while tracing; a gradient that exists on
        some runs only is zero on those (and None on the others), as eagerly."""
        g = self._gradient(t)
        if g is None:
            return
        if not set_to_zero:
            self.set_grad(t, None)
            return
        from ..tensor.creation import zeros_like
        value = g.value if isinstance(g, RunTimeGradient) else g
        zero = self.zero_grads[id(t)] = zeros_like(value)
        self.set_grad(t, zero if not isinstance(g, RunTimeGradient) else
                      RunTimeGradient(zero, g.defined, g.label, g.loc, g.computed_at))

    @contextmanager
    def updates_where(self, defined: Tensor, tensors: Sequence[Tensor]):
        """``with``: the updates made inside (an optimizer's step of one parameter whose
        gradient exists on some runs only) to the state `tensors` take effect only
        where the traced bool `defined` is true; elsewhere each keeps its value, as
        eager code skips a parameter without a gradient."""
        before = {id(t): self.updates.get(id(t)) for t in tensors}
        yield
        for t in tensors:
            new, old = self.updates.get(id(t)), before[id(t)]
            if new is not old:
                kept = old if old is not None else self.wrap(self.lift(t))
                chosen = self._assigned(self.apply("select", [defined, new, kept], {}))
                self.updates[id(t)] = chosen
                self.update_history[id(t)].append(chosen)

    def _block_computing(self, inputs) -> Block | None:
        """The block being traced, inside a region, when it computes every tensor of
        `inputs` (or has it as a loop's carried value): a gradient with respect to them
        is then exactly that of the block's own ops, because what the block captures
        from outside was computed before them."""
        scope = self.scope
        if scope.parent is None:
            return None
        captured = set(scope.captured.values())
        local = all(t._value is None and t._tracer is self and t._ir not in captured
                    and owner_block(t._ir) is scope.block for t in inputs)
        return scope.block if local else None

    def _at_top_level(self, tensors, what: str) -> "_TopLevel":
        """The context in which `what` (backward(), paddle.grad) builds its gradient
        computation: the function's own block, before any tensor-dependent `if` being
        traced, since the gradient differentiates the program's top-level ops. So the
        tensors it differentiates must be computed there."""
        self._check_state_change(what)
        for t in tensors:
            if t is not None and t._value is None and t._tracer is self and \
                    owner_block(t._ir) is not self.fn.block:
                raise ConversionError(f"{what} inside a tensor-dependent `if` differentiates "
                                      "what is computed before the `if`; this tensor is "
                                      "computed inside it: compute it before the `if`",
                                      user_location())
        return _TopLevel(self)

    def backward(self, loss: Tensor, grad_tensor=None) -> None:
        """``loss.backward()`` while tracing: append the gradient computation to the
        program and make each parameter's ``.grad`` the (accumulated) traced gradient."""
        from ..passes.autodiff import append_gradients
        updated = [self.updates.get(id(t)) for t in self.state if not t.stop_gradient]
        with self._at_top_level([loss, grad_tensor, *updated], "backward()"):
            loss_value = self.value_of(loss)
            self.differentiated.add(loss_value)
            b = self.scope.builder
            with b.location(user_location()):
                seed = self.value_of(grad_tensor) if grad_tensor is not None else \
                    b.ones(loss_value.type)
            sources = {}  # every value of each parameter, as `_values_had` says
            for t in self.state:
                if not t.stop_gradient:
                    for v in self._values_had(t):
                        sources[v] = t
            inputs = {arg: k for k, (arg, t) in enumerate(self.traced_inputs)
                      if not t.stop_gradient}
            ops = list(self.fn.block.ops)
            with b.location(user_location()):
                cts = append_gradients(b, ops, [*sources, *inputs], [(loss_value, seed)])
                state_grads = [(t, _summed(b, [cts.get(v) for v in values]),
                                cts.any_defined(values))
                               for t, values in _values_by_tensor(sources)]
            grads = {arg: self.wrap(cts.get(arg)) for arg in inputs
                     if cts.get(arg) is not None}
        for t, grad, defined in state_grads:
            if grad is not None:
                self.backward_leaves[id(t)] = t
                # a leaf's .grad, a constant to what reads it (as eagerly)
                self._accumulate(t, _hooked(t, self.wrap(self.stopped(grad))), defined)
        for arg, k in inputs.items():
            if arg in grads:
                self._add_input_grad(k, grads[arg], cts.defined_of(arg))

    def was_differentiated(self, t: Tensor) -> bool:
        """Whether ``backward()`` ran on `t` in this trace (``Optimizer.minimize``
        differentiates a loss only if it has not)."""
        return t._tracer is self and self.value_of(t) in self.differentiated

    def _add_input_grad(self, k: int, grad: Tensor, defined) -> None:
        """Add what ``backward()`` gave input `k` to what earlier ones did. The program
        returns the sum (and whether it exists, for one that exists on some runs only),
        which the call adds to the caller's tensor's ``.grad`` (`Program._finish`), as
        eager code accumulates: the gradient the tensor has is the caller's, so the
        program does not read it."""
        from ..tensor.logic import logical_or
        from ..tensor.math import add
        if self.scope.parent is not None:
            raise ConversionError("backward() inside a tensor-dependent `if`, reaching an "
                                  "input of the compiled function that requires a gradient, "
                                  "is not supported; call it after the `if`",
                                  user_location())
        if defined is not True:
            defined = self.wrap(defined)
        old = self.input_grads.get(k)
        if old is not None:
            grad = add(old[0], grad)
            defined = True if old[1] is True or defined is True else \
                logical_or(old[1], defined)
        self.input_grads[k] = (grad, defined)

    def _values_had(self, t: Tensor) -> list[Value]:
        """The values state tensor `t` has had in the program so far: its argument, then
        each one an update set (an optimizer's ``step()``), those computed at the top
        level. Eager autograd gives a parameter the gradient of every use of it, before
        and after an update (``la.backward(); o1.step(); lb.backward()`` with `lb`
        computed before the step): ``backward()`` sums the gradients with respect to
        each. An update is an assignment that gradients do not go through
        (`set_value`), so no value reaches another and none is counted twice."""
        later = [self.value_of(u) for u in self.update_history.get(id(t), ())
                 if owner_block(u._ir) is self.fn.block]
        return list(dict.fromkeys([self.state_args[id(t)], *later]))

    def _accumulate(self, t: Tensor, grad: Tensor, defined) -> None:
        """Add the gradient `grad` that ``backward()`` computed to `t`'s, as eagerly:
        it replaces None or the zero ``clear_grad()`` leaves. `defined`: whether `grad`
        exists (True, or a bool value of the IR when only the run can tell: then so
        does `t`'s gradient, unless it had one)."""
        from ..tensor.logic import logical_or
        from ..tensor.math import add
        old = self._gradient(t)
        old_value = old.value if isinstance(old, RunTimeGradient) else old
        if old_value is not None and old_value is not self.zero_grads.get(id(t)):
            grad = add(old_value, grad)
        if old is None and defined is not True:
            grad = RunTimeGradient(grad, self.wrap(defined), self.state_label(t), None,
                                   user_location())
        elif isinstance(old, RunTimeGradient) and defined is not True:
            grad = RunTimeGradient(grad, logical_or(old.defined, self.wrap(defined)),
                                   old.label, old.loc, user_location())
        self.set_grad(t, grad)

    def grad(self, outputs, inputs, grad_outputs, create_graph: bool, allow_unused: bool,
             no_grad_vars=()):
        """``paddle.grad`` while tracing: the gradient computation is appended to the
        program; the gradients are traced tensors (differentiable again with
        `create_graph`). `no_grad_vars` pass no gradient: tensors the differentiated
        ops compute (or inputs), which they then read as constants."""
        from ..passes.autodiff import append_gradients
        given = list(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
        block = self._block_computing(inputs)
        context = nullcontext() if block is not None else \
            self._at_top_level([*outputs, *inputs, *given], "paddle.grad")
        with context:
            b = self.scope.builder
            with b.location(user_location()):
                seeds = []
                for out, g in zip(outputs, given):
                    v = self.value_of(out)
                    seeds.append((v, self.value_of(g) if g is not None else b.ones(v.type)))
                # a parameter updated before (a static program's second minimize):
                # every value it has had, as backward() (`_values_had`)
                had = [self._values_had(t) if block is None and t._value is not None
                       and id(t) in self.update_history else [self.value_of(t)]
                       for t in inputs]
                sources = list(dict.fromkeys(v for values in had for v in values))
                ops = list((block or self.fn.block).ops)
                cts = append_gradients(b, ops, sources, seeds,
                                       self._blocked(no_grad_vars, ops, sources))
                summed = [_summed(b, [cts.get(v) for v in values]) for values in had]
            result = []
            for i, g in enumerate(summed):
                if g is None and not allow_unused:
                    raise ConversionError(f"input {i} of grad() is not used to compute the "
                                          "outputs; pass allow_unused=True to get None for "
                                          "it", user_location())
                # without create_graph a gradient is a constant to what follows, as
                # eagerly: differentiating it again must not reach its computation
                result.append(None if g is None else
                              self.wrap(g if create_graph else self.stopped(g),
                                        not create_graph))
        return result

    def _blocked(self, no_grad_vars, ops, sources) -> frozenset:
        """The values of `no_grad_vars` that `ops` compute or that are `sources` (which
        `append_gradients` then reads as constants); one computed elsewhere (inside a
        branch or loop, whose own rules would still pass its gradient) is refused."""
        blocked = set()
        computed = {r for op in ops for r in op.results} | set(sources)
        for t in no_grad_vars:
            if t._value is not None:
                continue  # a concrete tensor: nothing the program differentiates
            v = self.value_of(t)
            if v not in computed:
                raise ConversionError("paddle.grad's no_grad_vars in compiled code takes "
                                      "tensors computed at the level of the grad() call, not "
                                      "inside a tensor-dependent branch or loop; detach it "
                                      "where it is computed (t.detach()) instead",
                                      user_location())
            blocked.add(v)
        return frozenset(blocked)

    # -- random numbers
    def next_seed(self) -> Tensor:
        """A distinct seed for each random op: the seed of the innermost loop (else the
        program's seed argument) plus a counter."""
        scope = self.scope
        base = scope.get(self._seed_base())
        self.seed_count += 1
        b = scope.builder
        with b.location(user_location()):
            return self.wrap(b.add(base, b.constant(self.seed_count * 7919, "int64")))

    def reseed(self, value: int) -> None:
        """``paddle.seed(value)`` in traced code: eager code draws the same numbers
        after it on every call, so the random ops after it draw from a constant made
        from `value` instead of the seed each run passes, and each run reseeds the
        global generator after its plan, as the eager call leaves it seeded (reseeding
        only while tracing, each run drew other numbers)."""
        self.on_host(random_numbers, lambda: random_numbers.seed(value), False,
                     "paddle.seed()")
        stream = np.random.default_rng(int(value))
        self.fixed_seed = self.scope.builder.constant(int(stream.integers(0, 2**62)), "int64")

    def _seed_base(self) -> Value:
        """The seed the innermost enclosing loop region carries (made its argument at
        its first use; `jst` makes it a carried value that each iteration changes, so
        that each iteration draws anew, as eager code does), else the program's."""
        scope = self.scope
        while scope is not None and not scope.loop:
            scope = scope.parent
        if scope is not None:
            return scope.loop_seed()
        if self.fixed_seed is not None:
            return self.fixed_seed
        if self.seed_arg is None:
            self.seed_arg = self.fn.block.add_arg(TensorType(dtypes.int64, ()), "seed")
        return self.seed_arg

    # -- structured control flow
    def trace_region(self, arg_types: Sequence[TensorType], body: Callable[..., list],
                     names: Sequence[str | None] | None = None, classes=None,
                     branch: bool = False, loop: bool = False):
        """Run `body` on traced tensors (of `classes`, where given) for fresh block
        arguments of `arg_types`; returns (scope, what body returned). The arguments are
        a loop's carried values: any iteration may make them depend on a parameter, so
        float ones are taken to require a gradient. `branch`: the region is a branch of
        a cond, where state may change (the cond yields it). `loop`: the condition
        or body of a while, whose random ops draw from a seed it carries."""
        scope = Scope(Block(), self.scope, branch, loop)
        names = list(names or [None] * len(arg_types))
        classes = list(classes or [None] * len(arg_types))
        args = [scope.block.add_arg(t, n) for t, n in zip(arg_types, names)]
        saved, self.scope = self.scope, scope
        try:
            result = body(*[self.wrap(a, not differentiable(a.type), cls)
                            for a, cls in zip(args, classes)])
        except DimMismatch:  # traced again with the symbols related
            raise
        except Exception as e:  # what the run would raise only where it reaches it
            self.escaped.setdefault(id(e), (e, user_location()))
            raise
        finally:
            self.scope = saved
        return scope, result

    def aligned_region_op(self, name: str, leading: Sequence[Value], scopes: Sequence[Scope],
                          fixed: int, carried_inits: Sequence[Value], result_types,
                          names) -> Operation:
        """Create `name` with operands ``leading + captures + carried_inits``. Each scope's
        block starts with `fixed` arguments for the carried values; its captures are
        reordered so that every block takes ``(captures..., carried...)`` in one order."""
        union: list[Value] = []
        for scope in scopes:
            for v in scope.outer:
                if v not in union:
                    union.append(v)
        regions = []
        for scope in scopes:
            block = scope.block
            position = {v: fixed + i for i, v in enumerate(scope.outer)}
            for v in union:
                if v not in position:
                    position[v] = len(block.args)
                    block.add_arg(v.type, v.name)
            block.permute_args([position[v] for v in union] + list(range(fixed)))
            regions.append(Region([block]))
        op = Operation(name, [*leading, *union, *carried_inits], result_types, {}, regions,
                       user_location(), names)
        self.scope.builder.insert(op)
        return op


__all__ = ["Scope", "Tracer", "UNDEFINED", "Undefined", "owner_block"]
