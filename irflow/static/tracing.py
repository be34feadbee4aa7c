"""`ProgramTracer`: the frontend's tracer, kept open for a static-graph `Program`.

Compiling a function traces it in one go; a static program is traced as the user
writes it, one ``static.data``, layer or op at a time, until an `Executor` runs it.
This tracer adds what that needs:

- **Inputs at any time.** ``static.data`` may come after ops that lifted parameters
  as state arguments; inputs are inserted before the state, so a program always
  reads ``(inputs..., state..., seed)``.
- **Unknown dims resolved in place.** ``-1``/``None`` dims are symbols, one per
  input and axis (as `InputSpec` makes them). Where a type rule needs one to be a
  static size, or two to be equal (a `DimMismatch`: labels ``[N_1]`` against logits
  ``[N, 10]``), `compile` would trace again; a static program cannot be re-run, so
  the symbol is replaced by the size (or the other symbol) in every type and shape
  attribute built so far, and the op retried. The executor's feed check then
  enforces the equality and names the line that needed it.
- **Test-mode twins.** An op whose training behaviour differs (Paddle's ``is_test``
  ops: ``nn.functional.dropout`` and ``batch_norm`` in training, so ``nn.Dropout``,
  ``nn.BatchNorm*`` and ``static.nn.batch_norm``) also builds its test-mode result
  (`irflow.nn.functional.common.test_twins`); ``clone(for_test=True)`` keeps
  the forward (the ops before the first gradient computation, which ``minimize``
  appends), without state updates, each value replaced by its twin.
- **Paddle's static semantics of updates.** ``set_value`` of a value known now sets
  it in the scope once (Paddle's ``Variable.set_value``), not at every run; and a
  parameter that a run does not reach (a ``cond`` branch not taken) has a zero
  gradient there, which ``minimize`` applies, where eager code has None and skips it.
"""
from __future__ import annotations

import contextlib
from functools import partial

from ..dispatch import user_location
from ..errors import DimMismatch, IrflowError, Location, ShapeError
from ..frontend.input_spec import InputSpec
from ..frontend.program import symbol_to_fix
from ..frontend.tracer import RunTimeGradient, Scope, Tracer
from ..ir.builder import Builder
from ..ir.core import BlockArg, OpResult, Value
from ..ir.sizes import substitute_symbols
from ..tensor.tensor import Parameter, Tensor
from .scope import global_scope


class ProgramTracer(Tracer):
    """The tracer of one static program (see the module docstring)."""

    state_known_when_traced = True

    def __init__(self, name: str):
        super().__init__(name)
        self.inputs: dict[str, BlockArg] = {}          # static.data name -> argument
        self.declared: dict[BlockArg, tuple] = {}      # input -> its shape as first typed
        self.fixed: dict[str, tuple] = {}              # symbol -> (size or symbol, Location)
        self.forward_ops: int | None = None            # ops before the first backward()
        self.twins: dict[Value, Value] = {}            # train-mode value -> test-mode value
        self.retyped = 0                               # how many symbols were resolved
        self.created: list[Parameter] = []             # see note_created
        self.program = lambda: None                    # (weakly) the Program it builds
        self.named: dict[str, Tensor] = {}             # fetchable by name: gradients

    def data(self, name: str, shape, dtype) -> Tensor:
        """A traced tensor for a new input `name` of `shape` (``-1``/None unknown)."""
        if name in self.inputs:
            raise IrflowError(f"static.data: the program already has an input named {name!r}",
                              user_location())
        t = InputSpec(shape, dtype, name).to_type(len(self.inputs))
        arg = self.fn.block.insert_arg(len(self.inputs), t, name)
        self.n_inputs += 1
        self.inputs[name] = arg
        self.declared[arg] = t.shape
        t = self.wrap(arg)
        t.name = name
        return t

    def note_created(self, param: Parameter) -> None:
        """`param` was created (or shared by name) while this program was current: it
        is one of the program's parameters before any op reads it, as in Paddle."""
        if all(p is not param for p in self.created):
            self.created.append(param)

    def parameters(self) -> list[Parameter]:
        """The Parameters created in the program, in creation order (Paddle's), then
        the others it reads (a Layer built in dynamic mode), in the order it first read
        them."""
        created = {id(p) for p in self.created}
        return [*self.created,
                *(t for t in self.state if isinstance(t, Parameter) and id(t) not in created)]

    # -- ops, with unknown input dims resolved as the program needs them
    def apply(self, name, inputs, attrs):
        return self.resolving(lambda: super(ProgramTracer, self).apply(name, inputs, attrs))

    def resolving(self, build):
        """`build()`, which adds ops to the program, retried after each unknown input
        dim it needs fixed (a `DimMismatch`) is fixed."""
        while True:
            try:
                return build()
            except DimMismatch as e:
                self._resolve(e)

    def _resolve(self, e: DimMismatch) -> None:
        """Fix the input symbol `e` names to the size (or input symbol) it needs,
        everywhere; raises `e` when it names no input symbol."""
        symbol, size = symbol_to_fix([a.type for a in self.inputs.values()], e)
        self.fixed[symbol] = (size, e.loc)
        self.retyped += 1
        scope = self.scope
        while scope is not None:  # the blocks being traced: the function, open regions
            substitute_symbols(scope.block, {symbol: size})
            scope = scope.parent

    def grad(self, outputs, inputs, grad_outputs, create_graph: bool, allow_unused: bool,
             no_grad_vars=()):
        """``paddle.grad`` (``static.gradients``): each output gradient given as a
        variable first takes its output's unknown dims (``target_gradients`` fed
        with a ``-1`` batch of their own), which the feed check then enforces."""
        for i, (out, given) in enumerate(zip(outputs, grad_outputs or ())):
            if given is not None and given._value is None and out._value is None:
                self.resolving(partial(_same_dims, out, given, i))
        return super().grad(outputs, inputs, grad_outputs, create_graph, allow_unused,
                            no_grad_vars)

    @contextlib.contextmanager
    def blocking(self, tensors):
        """Inside the ``with`` block, no gradient flows through those of `tensors` that
        this program computes (Paddle's ``no_grad_set``; inputs and parameters are
        leaves anyway). While the gradients are appended, the ops reading such a value
        read it through a ``stop_gradient``; afterwards they read it directly again,
        so that gradients appended later go through it."""
        values = list(dict.fromkeys(t._ir for t in tensors if t._value is None and
                                    t._tracer is self and isinstance(t._ir, OpResult)))
        stops = [_stopped_for_readers(v) for v in values]
        try:
            yield
        finally:
            for v, stop in zip(values, stops):
                stop.replace_all_uses_with(v)
                stop.op.erase()

    def backward(self, loss, grad_tensor=None) -> None:
        """The backward pass a static ``minimize`` appends: gradients of its own, as
        Paddle's append_backward makes them, not added to those of an earlier
        ``minimize`` of the program (a second optimizer's loss on a shared layer)."""
        if self.forward_ops is None:
            self.forward_ops = len(self.fn.block.ops)
        self.grads = {}
        super().backward(loss, grad_tensor)

    def set_value(self, t: Tensor, value) -> None:
        """``var.set_value(value)``: a value the program computes (an optimizer's
        update, batch norm's statistics) is an update the program makes each run; a
        value known now (an array, a Tensor with a value) is set in the current scope
        now, as Paddle's ``Variable.set_value`` does: ``layer.weight.set_value(w)``
        or a layer's ``set_state_dict`` sets the weight once, rather than resetting
        it at every run of the program being built."""
        if t._value is not None and not (isinstance(value, Tensor) and value._value is None):
            global_scope().assign(t, value)
            return
        super().set_value(t, value)

    def initial_value(self, t: Tensor, value: Tensor) -> None:
        """Have this (startup) program give variable `t` the value `value` when it
        runs, a constant too."""
        super().set_value(t, value)

    def gradient(self, t: Tensor) -> tuple[Tensor | None, None]:
        """A parameter's gradient for ``minimize``: Paddle's static graph differentiates
        both branches of a ``static.nn.cond`` (and a ``while_loop`` that may not run),
        so a parameter used only where a run does not go has a zero gradient on that
        run, with which the optimizer updates it (Adam's moments decay, its beta powers
        advance, weight decay applies), where eager code would skip it."""
        g = self._gradient(t)
        return (g.value if isinstance(g, RunTimeGradient) else g), None

    def version(self) -> tuple:
        """Changes whenever the program does: ops are only ever appended to its block,
        arguments added, updates set, and types changed by `_resolve`."""
        return (len(self.fn.block.ops), len(self.fn.block.args), self.retyped,
                tuple(map(id, self.updates.values())))

    def clone(self, for_test: bool) -> tuple["ProgramTracer", dict[Value, Value]]:
        """A copy of the program built so far, and the map from this program's values
        to the copy's. `for_test`: only the forward, without state updates, with
        test-mode twins in place of their train-mode values."""
        copy = ProgramTracer(self.fn.name)
        mapping: dict[Value, Value] = {}
        copy.fn.body = self.fn.body.clone(mapping)
        copy.scope = Scope(copy.fn.block, None)
        copy.n_inputs, copy.fixed, copy.retyped = self.n_inputs, dict(self.fixed), self.retyped
        copy.created = list(self.created)
        copy.named = {} if for_test else dict(self.named)  # (fetched through the aliases)
        copy.inputs = {name: mapping[a] for name, a in self.inputs.items()}
        copy.declared = {mapping[a]: shape for a, shape in self.declared.items()}
        copy.state = list(self.state)
        copy.state_args = {k: mapping[a] for k, a in self.state_args.items()}
        copy.seed_arg = mapping.get(self.seed_arg)
        copy.seed_count = self.seed_count
        if not for_test:
            copy.updates = {k: copy.wrap(mapping[t._ir]) for k, t in self.updates.items()}
            copy.twins = {mapping[a]: mapping[b] for a, b in self.twins.items()}
            copy.forward_ops = self.forward_ops
            return copy, mapping
        block = copy.fn.block
        for _ in range(len(block.ops) - (self.forward_ops or len(block.ops))):
            block.terminator.erase()  # the backward and the updates, last first
        for train, test in self.twins.items():
            mapping[train].replace_all_uses_with(mapping[test])
            mapping[train] = mapping[test]
        unread = {a for a in block.args[copy.n_inputs:] if not a.uses}
        block.erase_args([a.index for a in unread])  # optimizer state, a dropped draw's seed
        copy.state = [t for t in self.state if copy.state_args[id(t)] not in unread]
        copy.state_args = {id(t): copy.state_args[id(t)] for t in copy.state}
        copy.seed_arg = None if copy.seed_arg in unread else copy.seed_arg
        return copy, mapping

    def shape_of(self, t: Tensor) -> list[int]:
        """A variable's shape as Paddle's static graph gives it: -1 for a dim the feed
        decides."""
        return [d if isinstance(d, int) else -1 for d in t._ir.type.shape]

    def concrete(self, t: Tensor, what: str):
        raise IrflowError(f"{what} needs a value, and a variable of a static program has one "
                          "only when an Executor runs it: fetch it (exe.run(program, feed, "
                          "fetch_list=[...]))", user_location())

    def to_bool(self, t: Tensor) -> bool:
        raise IrflowError("a variable of a static program has no truth value while the "
                          "program is built; branch and loop on it with "
                          "paddle.static.nn.cond and paddle.static.nn.while_loop",
                          user_location())

    def describe(self, t: Tensor) -> str:
        name = f"name={t.name!r}, " if t.name else ""
        return f"Variable({name}shape={self.shape_of(t)}, dtype={t.dtype.name})"

    def why_fixed(self, arg: BlockArg, fed: dict[str, tuple]) -> str:
        """Why input `arg` needs the sizes its unknown dims now have, for feed errors:
        the line that needs a static size there, or that combines it with another
        input's (whose shape in this feed `fed` gives)."""
        why = []
        for axis, symbol in enumerate(self.declared[arg]):
            size, loc = self.fixed.get(symbol, (None, None))
            if isinstance(size, int):
                why.append(f"its axis {axis} is -1 in static.data, but the program needs "
                           f"{size} there{_at(loc)}")
            elif size is not None:
                name, other = next((n, i) for n, a in self.inputs.items()
                                   for i, d in enumerate(self.declared[a]) if d == size)
                given = f" ({fed[name][other]})" if name in fed else ""
                why.append(f"its axis {axis} must equal axis {other} of '{name}'{given}, "
                           f"because the program combines them{_at(loc)}")
        return "".join("; " + w for w in why)


def _stopped_for_readers(v: OpResult) -> Value:
    """A ``stop_gradient`` of `v`, right after the op that computes it, which every op
    reading `v` reads instead."""
    readers = [(use.op, use.index) for use in v.uses]
    op = v.op
    b = Builder.before(op.next) if op.next is not None else Builder(op.parent, op.loc)
    stop = b.create("stop_gradient", [v]).results[0]
    for reader, index in readers:
        reader.set_operand(index, stop)
    return stop


def _same_dims(output: Tensor, given: Tensor, index: int) -> None:
    """Check that `given`, the gradient of `output`, has its shape: a `DimMismatch` for
    the first axis where the two differ by an unknown dim, to be resolved; a
    `ShapeError` where they cannot agree."""
    want, got = output._ir.type.shape, given._ir.type.shape
    if len(want) != len(got) or any(isinstance(a, int) and isinstance(b, int) and a != b
                                    for a, b in zip(want, got)):
        shape = output._tracer.shape_of
        raise ShapeError(f"the gradient given for output {index} has shape "
                         f"{shape(given)}, the output {shape(output)}", user_location())
    for a, b in zip(want, got):
        if a != b:
            dim, size = (a, b) if isinstance(b, int) else (b, a)
            raise DimMismatch(f"the gradient given for output {index} needs its dim {b} "
                              f"equal to the output's {a}", dim, size, user_location())


def _at(loc: Location | None) -> str:
    return f" ({loc})" if loc is not None else ""
