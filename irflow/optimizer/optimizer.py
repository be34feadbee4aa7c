"""`Optimizer`: the base of Paddle's dynamic-graph optimizers (SGD, Momentum, Adam, ...).

The frontend compiles a whole training step (forward, backward and ``step()``) into
one IR program by tracing, so an update is written the way the tracer can see it:

- It computes with irflow tensor functions (``add``, ``multiply``, ``sqrt``, ...) under
  ``no_grad``, never with NumPy directly, and stores results with ``set_value`` (on the
  parameter and on each piece of optimizer state), the hook the tracer records as a
  state update.
- All state lives in persistable Tensors: Paddle's accumulators (``moment1``,
  ``beta1_pow_acc``, ``velocity``, ...) and the learning rate. A traced program takes
  them as inputs and returns their new values.
- The learning rate an update reads is a persistable 0-d tensor per parameter dtype
  and learning-rate scale. Its value is written on the host (not through
  ``set_value``, so never traced as a constant) whenever the rate may have changed:
  on construction, ``set_lr``, a bound scheduler's change of ``last_lr`` and at the
  start of every ``step()``. A scheduler thus changes the rate of a compiled step
  without recompiling it.

As in Paddle, a parameter's accumulators are made at its first update, with the
shapes and names Paddle gives them, so that checkpoints go both ways: a fresh
optimizer's ``state_dict()`` is empty, and a parameter that never had a gradient
has no state. Made while a step is traced, they are concrete tensors with their
initial values, which the program takes as inputs like any other state.

A compiled step may not know whether a parameter has a gradient until it runs: a
parameter used only in one branch of a tensor-dependent ``if`` (or in a loop that
may run zero times) has none on the runs that do not use it, and eager code skips
it then. The tracer gives such a gradient with a traced bool (`_gradient`), and the
parameter's update, its accumulators' included, takes effect only where that bool
is true (`Tracer.updates_where`); programs without such parameters are unchanged.
How many such updates have taken effect is state too (`_Slot.update_count`), so
that ``state_dict()`` shows the parameter's state only once eager code would have it.

A float16 parameter is updated in float32 where Paddle does so (see `_Slot.work`):
with ``multi_precision=True`` on a float32 master copy of it, which the update
changes and the parameter is rounded from (``state_dict()["master_weights"]``); and
without, by optimizers whose moments Paddle keeps in float32 for it (Adam, AdamW,
Adamax, Lamb, NAdam: `_float32_moments`) on a float32 copy made at each update. In
float16, ``grad * grad`` underflows to 0 for gradients below about 2.4e-4, and
Adam's step ``moment1 / (sqrt(moment2) + epsilon)`` would then be ``grad / epsilon``.

Everything that depends only on the configuration (parameter groups, per-parameter
learning-rate scale and regularizer, constants) is resolved once, at construction,
into one `_Slot` per parameter, so ``step()`` is a plain loop over slots. Like
Paddle, the update of a parameter uses its gradient after clipping and
regularization, and leaves ``param.grad`` itself unchanged.

One difference from Paddle on purpose: Paddle passes hyperparameters (``momentum``,
``rho``, ``epsilon``, ``beta1``, ...) to its kernels as float32 attributes, so a
float64 parameter is updated with their float32 roundings (momentum
0.899999976...); irflow computes a float64 parameter's update with the exact
values given, and a float32 one's with their float32 roundings, as Paddle.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..context import current_static, current_tracer
from ..dispatch import no_grad
from ..errors import IrflowError
from ..ir.dtypes import float16, float32
from ..names import unique_name
from ..tensor.convert import cast
from ..tensor.tensor import Tensor
from ._ops import add, constant
from .clip import ClipGradBase
from .lr import (LambdaDecay, LRScheduler, check_rate_current, note_read,
                 on_host_each_run)
from .regularizer import L2Decay, WeightDecayRegularizer

__all__ = ["Optimizer"]

_ONE_UPDATE = constant(1, np.int64)  # counts an update in `_Slot.update_count`


class _Slot:
    """One parameter as its optimizer sees it: its configuration, resolved at
    construction, and its state, made at its first update (`Optimizer._make_state`)."""

    __slots__ = ("param", "dtype", "lr", "regularizer", "options", "consts", "prefix",
                 "state", "update_count", "work", "master")

    def __init__(self, param, dtype, lr: Tensor, regularizer, options: dict, consts: dict,
                 prefix: str, master: bool):
        self.param = param
        self.dtype = dtype              # of the update: the parameter's, or float32
        self.lr = lr                    # persistable 0-d learning rate (scaled, in `dtype`)
        self.regularizer = regularizer  # WeightDecayRegularizer or None
        self.options = options          # the group's hyperparameters
        self.consts = consts            # name -> 0-d constant tensor in the param dtype
        self.prefix = prefix            # names the state: <prefix>_<accumulator>_0
        self.state: dict | None = None  # accumulator name -> persistable Tensor, once made
        # None, or for state a compiled step made for a gradient that exists on some
        # runs only: how many updates of the parameter have taken effect since (a
        # persistable int64; loaded state counts as one)
        self.update_count: Tensor | None = None
        # None, or for a parameter updated in another dtype (`dtype`), the persistable
        # tensor in that dtype the update changes, made with the state: a master weight
        # (`master`: kept across updates) or a copy of the parameter made at each update
        self.work: Tensor | None = None
        self.master = master

    @property
    def target(self) -> Tensor:
        """The tensor an update reads and writes in place of the parameter."""
        return self.param if self.work is None else self.work

    @property
    def has_state(self) -> bool:
        """Whether the parameter has state as eager code sees it: an update of it has
        taken effect (or its state was loaded); a master weight is state too."""
        count = self.update_count
        made = bool(self.state) or (self.master and self.work is not None)
        return made and (count is None or bool(count._value > 0))


class _ConstantRate:
    """An optimizer's constant learning rate as host state: what ``set_lr`` inside
    compiled code changes on each run of the program (`lr.on_host_each_run`), with the
    ``state_dict`` that a checked call (``check=True``) saves and puts back around its
    eager run (the optimizer's own has no entry for a constant rate, as in Paddle)."""

    __slots__ = ("optimizer", "host_label")

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.host_label = type(optimizer).__name__

    def state_dict(self) -> dict:
        return {"learning_rate": self.optimizer._learning_rate}

    def set_state_dict(self, state: dict) -> None:
        self.optimizer._set_lr(state["learning_rate"])


class _Group:
    __slots__ = ("slots", "grad_clip")

    def __init__(self, slots: list, grad_clip):
        self.slots = slots
        self.grad_clip = grad_clip


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def as_regularizer(weight_decay):
    """A ``weight_decay`` argument as a regularizer: None, a number (L2 decay with that
    coefficient; 0 means none) or a `WeightDecayRegularizer`."""
    if weight_decay is None or isinstance(weight_decay, WeightDecayRegularizer):
        return weight_decay
    if _is_number(weight_decay):
        return L2Decay(float(weight_decay)) if weight_decay != 0 else None
    raise TypeError(f"weight_decay must be a float, an L1Decay/L2Decay or None, not "
                    f"{type(weight_decay).__name__}")


def _needs_backward(loss: Tensor) -> bool:
    """Whether `minimize` must differentiate `loss`: unless ``loss.backward()`` already
    ran on it (eagerly, or earlier in the compiled function being traced), whether its
    graph was kept (``retain_graph``) or not; always for a static-graph loss (as
    static-graph ``minimize`` appends the backward pass)."""
    if loss._value is None:
        tracer = current_tracer()
        return current_static() is not None or not tracer.was_differentiated(loss)
    node = loss._node
    return node is not None and not node.freed and not node.differentiated


class Optimizer:
    """Paddle's optimizer base class. Subclasses pass their per-group hyperparameters
    and defaults (``defaults``) and define the state of a parameter (`_accumulators`),
    the constants of its update (`_constants`) and the update itself (`_update`)."""

    # whether Paddle keeps the moments of a float16 parameter in float32 (and so
    # updates it in float32) even without multi_precision
    _float32_moments = False

    def __init__(self, learning_rate, parameters=None, weight_decay=None, grad_clip=None,
                 name: str | None = None, defaults: dict | None = None,
                 multi_precision: bool = False):
        if parameters is None and current_static() is None:
            raise IrflowError("an optimizer needs `parameters` (e.g. model.parameters()) "
                              "in dynamic-graph mode")
        if isinstance(parameters, Tensor):
            raise TypeError("`parameters` must be a list of tensors (or of parameter-group "
                            "dicts), not a single tensor")
        if isinstance(parameters, dict):
            raise TypeError("`parameters` must be a list; to give parameter groups, pass a "
                            "list of dicts")
        if not (_is_number(learning_rate) or isinstance(learning_rate, LRScheduler)):
            raise TypeError(f"learning_rate must be a float or an LRScheduler, not "
                            f"{type(learning_rate).__name__}")
        if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
            raise TypeError("grad_clip must be a ClipGradByGlobalNorm, ClipGradByNorm or "
                            "ClipGradByValue")
        self._name = name
        self._multi_precision = bool(multi_precision)
        self._learning_rate = learning_rate if isinstance(learning_rate, LRScheduler) \
            else float(learning_rate)
        self._grad_clip = grad_clip
        self.regularization = as_regularizer(weight_decay)
        self._hyper_types = {k: type(v) for k, v in (defaults or {}).items()}
        self._default_dict = {"weight_decay": weight_decay, "grad_clip": grad_clip,
                              **(defaults or {})}
        self._lr_tensors: dict = {}
        self._consts: dict = {}
        self._lr_value = None
        self._constant_rate = _ConstantRate(self)
        # what set_state_dict gave for state not made yet (Paddle's accumulators holder)
        self._loaded: dict = {}
        self._loaded_masters: dict = {}  # the same for master weights, by parameter name
        # Without `parameters` (static-graph mode) `minimize` gives them: those of the
        # loss's program.
        self._parameter_list = None
        self._param_groups, self._groups, self._slots = [], [], []
        if isinstance(self._learning_rate, LRScheduler):
            self._learning_rate._bind(self)
        if parameters is not None:
            self._set_parameters(list(parameters))

    def _set_parameters(self, parameters: list, startup=None) -> None:
        """Resolve the parameters (or parameter groups) into slots. In static-graph
        mode the startup program (`startup`, else the current one) also gives the
        optimizer's state its initial values, as Paddle's does."""
        if not parameters:
            raise ValueError("the optimizer got an empty parameter list")
        self._parameter_list = parameters
        grouped = isinstance(parameters[0], dict)
        self._param_groups = [self._group_dict(g) for g in parameters] if grouped \
            else parameters
        self._groups = self._resolve_groups(grouped)
        self._slots = [s for g in self._groups for s in g.slots]
        self._refresh_lr()
        static = startup or current_static()
        if static is not None:  # the startup program initializes the state it makes
            for slot in self._slots:
                if not slot.param.stop_gradient:
                    self._make_state(slot, None)
                    for t in self._state_tensors(slot):
                        static.initialize(t)

    # ------------------------------------------------------------ construction

    def _group_dict(self, group) -> dict:
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError("each parameter group must be a dict with a 'params' entry")
        group = dict(group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError("the parameters of a group must be in an ordered collection "
                            "(a list), not a set")
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for key, value in self._default_dict.items():
            group.setdefault(key, value)
        return group

    def _resolve_groups(self, grouped: bool) -> list[_Group]:
        if grouped:
            configs = [(g["params"], g, True) for g in self._param_groups]
        else:
            configs = [(self._parameter_list, self._default_dict, False)]
        params = [p for ps, _, _ in configs for p in ps]
        self._check_params(params)
        names = self._state_prefixes(params)
        groups, i = [], 0
        for ps, options, in_group in configs:
            if options.get("grad_clip") is not None and \
                    not isinstance(options["grad_clip"], ClipGradBase):
                raise TypeError("a group's grad_clip must be a ClipGradByGlobalNorm, "
                                "ClipGradByNorm or ClipGradByValue")
            options = {**options, **{k: convert(options[k])
                                     for k, convert in self._hyper_types.items()}}
            slots = []
            for p in ps:
                slots.append(self._make_slot(p, options, in_group, names[i]))
                i += 1
            groups.append(_Group(slots, options.get("grad_clip")))
        return groups

    @staticmethod
    def _check_params(params) -> None:
        seen = set()
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"an optimizer updates tensors; got a "
                                f"{type(p).__name__} among the parameters")
            if not p.dtype.is_float:
                storage = (" (bfloat16 is a storage type in irflow, without arithmetic: "
                           "cast the parameters to float32 to train them)"
                           if p.dtype.name == "bfloat16" else "")
                raise TypeError(f"an optimizer updates float tensors; parameter "
                                f"{p.name or ''} has dtype {p.dtype.name}{storage}")
            if id(p) in seen:
                raise ValueError(f"parameter {p.name or ''} appears more than once among "
                                 "the optimizer's parameters (or in more than one group)")
            seen.add(id(p))

    @staticmethod
    def _state_prefixes(params) -> list[str]:
        """The names that prefix each parameter's state in the state dict: the
        parameters' names as in Paddle (``linear_0.w_0_moment1_0``), or their positions
        (``param_3``) unless every parameter has a distinct name."""
        names = [p.name for p in params]
        if None not in names and len(set(names)) == len(names):
            return names
        return [f"param_{i}" for i in range(len(params))]

    def _make_slot(self, param, options: dict, in_group: bool, prefix: str) -> _Slot:
        scale = float(options.get("learning_rate", 1.0)) if in_group else \
            float((getattr(param, "optimize_attr", None) or {}).get("learning_rate", 1.0))
        scale *= self._lr_ratio(param)
        master = self._multi_precision and param.dtype is float16
        dtype = float32 if master or (self._float32_moments and param.dtype is float16) \
            else param.dtype
        lr = self._lr_tensor(dtype, scale)
        options = self._slot_options(param, options)
        key = (id(options), dtype)  # one set of constants per group and dtype
        consts = self._consts.get(key)
        if consts is None:
            consts = self._consts[key] = {
                k: constant(v, dtype.np) for k, v in self._constants(options, dtype.np).items()}
        return _Slot(param, dtype, lr, self._regularizer(param, options, in_group), options,
                     consts, prefix, master)

    def _lr_ratio(self, param) -> float:
        """A per-parameter factor on the learning rate (AdamW's ``lr_ratio``)."""
        return 1.0

    def _slot_options(self, param, options: dict) -> dict:
        """The hyperparameters of `param`: its group's, unless a subclass adjusts them
        per parameter (AdamW's ``apply_decay_param_fun``)."""
        return options

    def _regularizer(self, param, options: dict, in_group: bool):
        """The regularizer whose term is added to `param`'s gradient: the parameter's
        own, else the optimizer's. In a parameter group, the group's ``weight_decay``
        is the parameter's own (Paddle assigns it to the group's parameters), so a
        group whose ``weight_decay`` is None gets the optimizer's, as in Paddle."""
        own = options.get("weight_decay") if in_group else getattr(param, "regularizer", None)
        return as_regularizer(own) if own is not None else self.regularization

    def _lr_tensor(self, dtype, scale: float) -> Tensor:
        key = (dtype, scale)
        t = self._lr_tensors.get(key)
        if t is None:
            t = Tensor._from_array(np.zeros((), dtype=dtype.np))
            name = "learning_rate" if scale == 1.0 else f"learning_rate_x{scale:g}"
            # a static program's variables are saved by name, so each optimizer's is its
            # own there (learning_rate_0, learning_rate_1), as Paddle names them
            t.name = unique_name(name) if current_static() is not None else name
            t.persistable = True
            self._lr_tensors[key] = t
        return t

    # ------------------------------------------------------------ subclass hooks

    def _accumulators(self, param, options: dict) -> list[tuple[str, np.ndarray]]:
        """(name, initial array) of each state tensor `param` needs, in the shape and
        dtype Paddle gives it (`filled`)."""
        return []

    def _constants(self, options: dict, dtype: np.dtype) -> dict:
        """The 0-d constants `_update` uses, by name: values computed in the parameter's
        `dtype` (``1 - beta1`` rounds as in Paddle's kernels)."""
        return {}

    def _update(self, slot: _Slot, grad: Tensor) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _update")

    def _regularized(self, slot: _Slot, grad: Tensor) -> Tensor:
        if slot.regularizer is None:
            return grad
        return add(grad, slot.regularizer(slot.target, grad))

    # ------------------------------------------------------------ learning rate

    def get_lr(self) -> float:
        """The current learning rate (the scheduler's, if one is used); read by compiled
        code, a guard of its program (`lr.note_read`)."""
        note_read(self, "_learning_rate")
        if isinstance(self._learning_rate, float):
            return self._learning_rate
        return self._learning_rate()

    def _current_lr(self) -> float:
        """`get_lr` for the optimizer's own use, which reads the rate from its tensors in
        compiled code (no guard)."""
        if isinstance(self._learning_rate, float):
            return self._learning_rate
        return self._learning_rate.last_lr

    def set_lr(self, value: float) -> None:
        """Set a constant learning rate (not allowed while a scheduler drives it).
        Inside compiled code each run of the program sets it, as a scheduler's step
        (`lr.on_host_each_run`): before its plan, or after it once an update read the
        rate (``opt.step(); opt.set_lr(...)``), so that update uses the rate before."""
        if not _is_number(value):
            raise TypeError(f"set_lr takes a float, not {type(value).__name__}")
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError("this optimizer's learning rate is an LRScheduler; set_lr "
                               "would conflict with it")
        value = float(value)
        if not on_host_each_run(self._constant_rate, lambda: self._set_lr(value),
                                "set_lr()", (self,)):
            self._set_lr(value)

    def _set_lr(self, value: float) -> None:
        self._learning_rate = value
        self._refresh_lr()

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"set_lr_scheduler takes an LRScheduler, not "
                            f"{type(scheduler).__name__}")
        if isinstance(self._learning_rate, LRScheduler):
            self._learning_rate._unbind(self)
        self._learning_rate = scheduler
        scheduler._bind(self)
        self._refresh_lr()

    def _refresh_lr(self) -> None:
        """Write the current rate into the learning-rate tensors, if it changed. Host
        side: the tensors' values are replaced without `set_value`, so a traced step
        reads them as inputs rather than recording the rate as a constant."""
        lr = self._current_lr()
        if lr == self._lr_value:
            return
        self._lr_value = lr
        for (dtype, scale), t in self._lr_tensors.items():
            t._value = np.asarray(lr * scale, dtype=dtype.np)

    # ------------------------------------------------------------ stepping

    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient (and ``stop_gradient=False``)."""
        self._apply(None)

    def _apply(self, only: set[int] | None) -> None:
        if isinstance(self._learning_rate, LRScheduler):
            check_rate_current(self._learning_rate)
        check_rate_current(self._constant_rate, "set_lr()")
        self._refresh_lr()
        for group in self._groups:
            self._step_group(group, only)

    def _step_group(self, group: _Group, only) -> None:
        triples = []
        for slot in group.slots:
            p = slot.param
            if p.stop_gradient or (only is not None and id(p) not in only):
                continue
            grad, defined = _gradient(p)
            if grad is not None:
                if grad.dtype is not slot.dtype:  # a gradient assigned by hand
                    grad = cast(grad, slot.dtype)
                triples.append((slot, grad, defined))
        if not triples:
            return
        if group.grad_clip is not None:  # a missing gradient's zeros add nothing to a norm
            clipped = group.grad_clip([(s.param, g) for s, g, _ in triples])
            triples = [(s, g, d) for (s, _, d), (_, g) in zip(triples, clipped)]
        for slot, grad, defined in triples:
            if slot.state is None:
                self._make_state(slot, defined)
            if defined is None:
                self._update_counted(slot, grad)
            else:
                changed = [slot.param, *self._state_tensors(slot)]
                if slot.update_count is not None:
                    changed.append(slot.update_count)
                with current_tracer().updates_where(defined, changed):
                    self._update_counted(slot, grad)

    def _update_counted(self, slot: _Slot, grad: Tensor) -> None:
        """Update `slot`, counting the update in `_Slot.update_count` if it has one."""
        count = slot.update_count
        if count is not None:
            count.set_value(add(count, _ONE_UPDATE))
        work = slot.work
        if work is not None and not slot.master:
            work.set_value(cast(slot.param, slot.dtype))
        self._update(slot, self._regularized(slot, grad))
        if work is not None:
            slot.param.set_value(cast(work, slot.param.dtype))

    @staticmethod
    def _state_tensors(slot: _Slot) -> list[Tensor]:
        """The tensors an update of `slot` changes besides the parameter."""
        tensors = list(slot.state.values())
        return tensors if slot.work is None else [*tensors, slot.work]

    def _make_state(self, slot: _Slot, defined: Tensor | None) -> None:
        """Make `slot`'s state tensors, at the parameter's first update, as Paddle
        does: with what `set_state_dict` gave for them before they existed, else their
        initial values; if it gave anything, it must give them all (a checkpoint of
        other parameter names would otherwise train on from fresh state). With
        `defined` (the traced bool of a gradient that exists on some runs only) the
        update may not take effect on the program's first runs, so it also makes
        `_Slot.update_count`, which says when one has."""
        if slot.dtype is not slot.param.dtype:
            slot.work = self._make_work(slot)
        slot.state = {}
        for acc, initial in self._accumulators(slot.target, slot.options):
            name = f"{slot.prefix}_{self._name}_{acc}_0" if self._name else \
                f"{slot.prefix}_{acc}_0"
            if self._loaded:
                if name not in self._loaded:
                    raise KeyError(f"optimizer state '{name}' is missing from the state dict "
                                   "given to set_state_dict (state is matched by parameter "
                                   "name)")
                initial = _state_array(name, initial, self._loaded.pop(name))
            slot.state[acc] = _persistable(initial, name)
        if defined is not None and (slot.state or slot.work is not None):
            slot.update_count = _persistable(np.zeros((), np.int64),
                                             f"{slot.prefix}_update_count")

    def _make_work(self, slot: _Slot) -> Tensor:
        """`slot`'s `_Slot.work`: its parameter in the update's dtype, or the master
        weight `set_state_dict` gave for it (Paddle's ``<param>_fp32_master_0``)."""
        param = slot.param
        initial = param._value.astype(slot.dtype.np)
        if slot.master and param.name in self._loaded_masters:
            initial = _state_array(f"master weight of {param.name}", initial,
                                   self._loaded_masters.pop(param.name))
        return _persistable(initial, f"{param.name or slot.prefix}_fp32_master_0")

    def minimize(self, loss: Tensor, startup_program=None, parameters=None,
                 no_grad_set=None):
        """Differentiate `loss` (unless ``loss.backward()`` already ran) and take a step
        on `parameters` (default: all), leaving out `no_grad_set`. Returns
        ``(optimize_ops, params_grads)`` as Paddle does; there are no ops in
        dynamic-graph mode. In static-graph mode this appends the gradient
        computation and the updates to the loss's program; an optimizer made without
        `parameters` takes that program's trainable parameters."""
        if self._parameter_list is None:
            static = current_static()
            if static is None:
                raise IrflowError("this optimizer was made without `parameters` in "
                                  "static-graph mode; call minimize(loss) in that mode too")
            self._set_parameters(static.parameters(loss), startup_program)
        if _needs_backward(loss):
            loss.backward()
        chosen = self._chosen(parameters, no_grad_set)
        params_grads = [(s.param, grad) for s in self._slots
                        if id(s.param) in chosen and not s.param.stop_gradient
                        and (grad := _gradient(s.param)[0]) is not None]
        with no_grad():
            self._apply(chosen)
        static = current_static()
        if static is not None and self not in static.main._optimizers:
            # the program reads this optimizer's learning-rate variables at each run;
            # `SGD(sched).minimize(loss)` keeps no other reference to the optimizer,
            # and a scheduler refreshes only optimizers still alive
            static.main._optimizers.append(self)
        return [], params_grads

    def _chosen(self, parameters, no_grad_set) -> set[int]:
        def matches(p, selection) -> bool:
            return any(q is p or (isinstance(q, str) and q == p.name) for q in selection)
        params = [s.param for s in self._slots]
        if parameters is not None:
            params = [p for p in params if matches(p, parameters)]
        if no_grad_set is not None:
            params = [p for p in params if not matches(p, no_grad_set)]
        return {id(p) for p in params}

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Reset the gradients of the parameters: zero-filled (Paddle 3's default) or
        dropped (``set_to_zero=False``)."""
        for slot in self._slots:
            if not slot.param.stop_gradient:
                slot.param.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.clear_grad(set_to_zero=not set_to_none)

    # ------------------------------------------------------------ state

    def state_dict(self) -> dict:
        """The optimizer's state tensors by name (``<param name>_<accumulator>_0``,
        grouped by accumulator as in Paddle), the master weights of `multi_precision`
        by parameter name under ``"master_weights"`` and, with a scheduler, its state
        under ``"LR_Scheduler"``. The values are the live tensors. As in Paddle, only the
        parameters updated so far have state (`_Slot.has_state`); what
        `set_state_dict` gave for the others' state, which their first updates will
        make from it, follows as it was given, so that saving right after loading
        keeps the checkpoint whole."""
        slots = [s for s in self._slots if s.has_state]
        accumulators = dict.fromkeys(acc for s in slots for acc in s.state)
        state = {s.state[acc].name: s.state[acc] for acc in accumulators for s in slots
                 if acc in s.state}
        state.update({k: v for k, v in self._loaded.items() if k not in state})
        masters = {s.param.name: s.work for s in slots if s.master}
        masters.update({k: v for k, v in self._loaded_masters.items() if k not in masters})
        if masters:
            state["master_weights"] = masters
        if isinstance(self._learning_rate, LRScheduler):
            state["LR_Scheduler"] = self._learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        """Load state saved by `state_dict` (tensors or arrays, matched by name), as
        Paddle does: the state of every parameter updated so far must be in it; the
        rest is kept for the parameters' first updates, which make their state from it
        (`_make_state`). Paddle's shapes load, and so do irflow's checkpoints that
        kept beta powers 0-d (`_state_array`), and master weights by parameter name.
        Nothing changes unless all of it loads."""
        loaded = {k: v for k, v in state_dict.items()
                  if k not in ("LR_Scheduler", "master_weights")}
        loads = [(slot, [_state_array(t.name, t._value, loaded[t.name])
                         for t in slot.state.values()])
                 for slot in self._slots if self._loads_into(slot, loaded)]
        masters = dict(state_dict.get("master_weights") or {})
        master_loads = [(slot.work, _state_array(slot.work.name, slot.work._value,
                                                 masters.pop(slot.param.name)))
                        for slot in self._slots
                        if slot.master and slot.work is not None and slot.param.name in masters]
        self._load_scheduler(state_dict)
        for slot, arrays in loads:
            for t, array in zip(slot.state.values(), arrays):
                t.set_value(Tensor._from_array(array))
            count = slot.update_count
            if count is not None and not count._value:
                count.set_value(_ONE_UPDATE)
        for work, array in master_loads:
            work.set_value(Tensor._from_array(array))
        self._loaded = loaded
        self._loaded_masters = masters
        self._refresh_lr()

    @staticmethod
    def _loads_into(slot: _Slot, loaded: dict) -> bool:
        """Whether `loaded` fills `slot`'s state tensors: those of a parameter updated
        so far must all be in it, and so must those a compiled step made for an update
        that has not taken effect yet, unless `loaded` is empty (their first update
        would need them, as `_make_state` does)."""
        if not slot.state:
            return False
        missing = [t.name for t in slot.state.values() if t.name not in loaded]
        if missing and (slot.has_state or loaded):
            raise KeyError(f"optimizer state '{missing[0]}' is missing from the state dict "
                           "(state is matched by parameter name)")
        return not missing

    load_state_dict = set_state_dict

    def _load_scheduler(self, state_dict: dict) -> None:
        """Load the scheduler's state from ``state_dict["LR_Scheduler"]``, which Paddle
        lets a LambdaDecay go without (its state is the lambda's, which no dict holds)."""
        if not isinstance(self._learning_rate, LRScheduler):
            return
        lr_state = state_dict.get("LR_Scheduler")
        if lr_state is None and not isinstance(self._learning_rate, LambdaDecay):
            raise KeyError("the state dict has no 'LR_Scheduler' entry for this "
                           "optimizer's learning-rate scheduler")
        if lr_state:
            self._learning_rate.set_state_dict(lr_state)


def _gradient(param: Tensor) -> tuple[Tensor | None, Tensor | None]:
    """``param.grad``, and None; or while a program is traced in which that gradient
    exists on some runs only, its value and the traced bool that says whether it
    exists (see the module's docstring)."""
    tracer = current_tracer()
    if tracer is None:
        return param.grad, None
    return tracer.gradient(param)


def filled(param: Tensor, value, shape=None, dtype=None) -> np.ndarray:
    """The initial array of an accumulator of `param`: `value` everywhere, in the
    parameter's shape and dtype unless `shape` or `dtype` (a NumPy dtype) is given, as
    Paddle's ``_add_accumulator(fill_value, shape, dtype)``."""
    return np.full(param._value.shape if shape is None else shape, value,
                   dtype=param.dtype.np if dtype is None else dtype)


def _persistable(array: np.ndarray, name: str) -> Tensor:
    t = Tensor._from_array(array)
    t.name = name
    t.persistable = True
    return t


def _state_array(name: str, like: np.ndarray, value) -> np.ndarray:
    """`value` from a state dict as the array of the state tensor `name`, whose
    current (or initial) array is `like`: its shape, converted to its dtype. One value
    loads into a state of one element whatever the two shapes are (irflow kept Adam's
    beta powers 0-d, Paddle keeps them [1]), and a 0-d value fills a state of any
    shape (irflow kept NAdam's and RAdam's powers 0-d, Paddle in the parameter's
    shape). A tensor's array is never mutated in place, so it is shared; anything
    else is copied, so that the caller changing it later cannot change the state."""
    array = value._concrete("set_state_dict") if isinstance(value, Tensor) else np.array(value)
    if array.shape != like.shape:
        if array.size == 1 == like.size:
            array = array.reshape(like.shape)
        elif array.ndim == 0:
            array = np.full(like.shape, array)
        else:
            raise ValueError(f"optimizer state '{name}' has shape {list(like.shape)}, "
                             f"the state dict gives shape {list(array.shape)}")
    return array.astype(like.dtype, copy=False)
