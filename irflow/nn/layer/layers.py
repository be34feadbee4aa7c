"""`Layer`: Paddle's ``nn.Layer``, the base class of every model and layer.

Assigning an attribute registers it by the value's kind, exactly as in Paddle:
a `Parameter` goes to ``_parameters``, a `Layer` to ``_sub_layers``, any other
Tensor to ``_buffers`` (as a non-persistable buffer unless `register_buffer` said
otherwise); everything else is a plain attribute. The registries keep assignment
order, which is the order of `named_parameters()` and of `state_dict()` (per layer:
parameters, then persistable buffers, then each sublayer's entries under its name).

Calling a layer runs `forward`; with forward hooks registered it runs them around
it. The call path has no per-call introspection, because eager training steps call
layers many times per step.

Every change of what a layer registers (a parameter, sublayer, buffer or forward
hook assigned, replaced, added or removed) increments its ``_structure_version``, so that a compiled
program traced from it can tell in O(1) per layer that it is out of date.

``training`` is the layer's own flag (kept in its ``__dict__``, as Paddle's plain
attribute is), read through a property so that `forcing_eval` can make every layer
read as in eval mode in one thread alone: `jit.save` traces the inference program
under it while a training loop in another thread keeps its layers' modes.
"""
from __future__ import annotations

import itertools
import re
import warnings
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

import numpy as np

from ...context import current_tracer
from ...device import CPUPlace
from ...dispatch import user_location
from ...errors import ArgumentError, ConversionError, DTypeError
from ...ir import dtypes
from ...tensor.convert import default_float_dtype
from ...tensor.tensor import Parameter, Tensor
from ..param_attr import create_parameter, unique_name

_forced_eval: ContextVar[bool] = ContextVar("irflow.nn.forced_eval", default=False)
forced_eval = _forced_eval.get  # whether `forcing_eval` is active in this thread


@contextmanager
def forcing_eval():
    """Inside the ``with`` block, every Layer's ``training`` reads False in this thread
    (this context) alone, whatever its own flag, which nothing changes: other threads
    see the layers' modes as they are. Setting ``training`` (``train()``) inside the
    block sets the layer's own flag, which the block still hides."""
    token = _forced_eval.set(True)
    try:
        yield
    finally:
        _forced_eval.reset(token)


_FIRST_CAP = re.compile("(.)([A-Z][a-z]+)")
_ALL_CAP = re.compile("([a-z])([A-Z])")


def _camel_to_snake(name: str) -> str:
    """``BatchNorm2D`` -> ``batch_norm2d``, ``ReLU`` -> ``re_lu`` (Paddle's rule)."""
    return _ALL_CAP.sub(r"\1_\2", _FIRST_CAP.sub(r"\1_\2", name)).lower()


class HookRemoveHelper:
    """The handle `register_forward_*_hook` returns; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: OrderedDict, layer: "Layer"):
        self._hooks_ref = weakref.ref(hooks)
        self._layer_ref = weakref.ref(layer)
        self._hook_id = next(HookRemoveHelper._ids)

    def remove(self) -> None:
        hooks, layer = self._hooks_ref(), self._layer_ref()
        removed = hooks is not None and hooks.pop(self._hook_id, None) is not None
        if removed and layer is not None:
            layer._structure_changed()


_UNSET = object()  # an attribute a Layer does not have
# What every Layer holds in its __dict__ (set by `Layer.__init__`, `_structure_changed`
# and `_configured`), not a layer's configuration: setting any other attribute that is
# no Parameter, sublayer or buffer counts in `_config_version`
BASE_ATTRIBUTES = frozenset({
    "training", "_full_name", "_dtype", "_parameters", "_buffers",
    "_non_persistable_buffer_names_set", "_sub_layers", "_forward_pre_hooks",
    "_forward_post_hooks", "_structure_version", "_config_version"})


def _holds_traced(value) -> bool:
    """Whether a (nested) tuple, list or dict holds a traced tensor."""
    if isinstance(value, Tensor):
        return value._value is None
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list | tuple):
        return False
    return any(_holds_traced(v) for v in value)


def _traced(fn):
    """While a program is traced, a user-written forward (or hook) runs converted, so
    that its tensor-dependent control flow becomes IR (irflow's own layers need no
    conversion)."""
    if current_tracer() is None:
        return fn
    from ...frontend.jst import call
    return call(fn)


def _check_loadable(key: str, value, target: Tensor) -> None:
    """Raise unless `value` is a Tensor or NumPy array of `target`'s dtype, which is
    what Paddle's set_state_dict loads (it refuses other dtypes rather than cast)."""
    if isinstance(value, Tensor):
        dtype = value.dtype
    elif isinstance(value, np.ndarray):
        dtype = dtypes.from_numpy(value)
    else:
        raise ArgumentError(f"set_state_dict: the value of '{key}' is a "
                            f"{type(value).__name__}; Paddle loads Tensors and NumPy "
                            "arrays (convert it with np.asarray)")
    if dtype is not target.dtype:
        raise DTypeError(f"set_state_dict: '{key}' is {target.dtype.name} but the value "
                         f"given for it is {dtype.name}; Paddle loads values of the "
                         f"parameter's dtype only (cast it first: "
                         f"value.astype('{target.dtype.name}'))")


_DEVICE_NAME = re.compile(r"(cpu|gpu|xpu|npu|dcu|ipu|mlu|gpu_pinned|xpu_pinned)(:\d+)?")
"""The device names Paddle's ``Layer.to`` takes."""


def _excluded(excluded_layers, keep_batch_norm: bool = False) -> tuple:
    """The Layer classes that `float` and its kind leave as they are, as Paddle's
    `excluded_layers` names them: one class or a list of them; None is none, or
    ``nn.BatchNorm`` with `keep_batch_norm`."""
    if excluded_layers is None:
        from .norm import BatchNorm
        return (BatchNorm,) if keep_batch_norm else ()
    if isinstance(excluded_layers, type):
        return (excluded_layers,)
    if isinstance(excluded_layers, list | tuple):
        return tuple(excluded_layers)
    raise TypeError(f"excluded_layers should be type nn.Layer or list, but got "
                    f"{type(excluded_layers).__name__}.")


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:1] + [" " * spaces + line for line in lines[1:]])


class Layer:
    """Base class of layers and models: subclass it, create sublayers and parameters
    in ``__init__`` and write the computation in ``forward``."""

    _structure_version = 0

    def __init__(self, name_scope: str | None = None, dtype=None):
        self.training = True
        self._full_name = unique_name(name_scope or _camel_to_snake(type(self).__name__))
        self._dtype = dtype if dtype is not None else default_float_dtype().name
        self._parameters: OrderedDict = OrderedDict()
        self._buffers: OrderedDict = OrderedDict()
        self._non_persistable_buffer_names_set: set = set()
        self._sub_layers: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()
        self._forward_post_hooks: OrderedDict = OrderedDict()

    # ------------------------------------------------------------ calling

    def __call__(self, *inputs, **kwargs):
        tracer = current_tracer()
        if tracer is not None:
            tracer.layers.append(self)  # the program depends on this layer's structure
        if self._forward_pre_hooks or self._forward_post_hooks:
            return self._call_with_hooks(inputs, kwargs)
        if tracer is not None:
            return _traced(self.forward)(*inputs, **kwargs)
        return self.forward(*inputs, **kwargs)

    def _call_with_hooks(self, inputs: tuple, kwargs: dict):
        """A pre-hook may replace the inputs (a non-tuple result becomes the only
        input), a post-hook the outputs; None keeps them."""
        for hook in list(self._forward_pre_hooks.values()):
            result = _traced(hook)(self, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        outputs = _traced(self.forward)(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            result = _traced(hook)(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    def forward(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False
                                  ) -> HookRemoveHelper:
        """Run ``hook(layer, inputs)`` before each forward; it may return new inputs."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_post_hook(self, hook: Callable, *, prepend: bool = False
                                   ) -> HookRemoveHelper:
        """Run ``hook(layer, inputs, outputs)`` after each forward; it may return new
        outputs."""
        return self._add_hook(self._forward_post_hooks, hook, prepend)

    register_forward_hook = register_forward_post_hook

    def _add_hook(self, hooks: OrderedDict, hook: Callable, prepend: bool) -> HookRemoveHelper:
        handle = HookRemoveHelper(hooks, self)
        hooks[handle._hook_id] = hook
        if prepend:
            hooks.move_to_end(handle._hook_id, last=False)
        self._structure_changed()
        return handle

    # ------------------------------------------------------------ modes

    @property
    def training(self) -> bool:
        """Whether the layer is in training mode (`train()`, `eval()`); False in every
        layer inside `forcing_eval`."""
        try:
            mode = self.__dict__["training"]
        except KeyError:
            # a forward that sets the flag is traced with it as an argument of the
            # program, a buffer meanwhile (`Tracer.lift_numbers`): `__getattr__` finds it
            raise AttributeError("training") from None
        return mode and not forced_eval()

    @training.setter
    def training(self, mode: bool) -> None:
        self.__dict__["training"] = mode

    def train(self, mode: bool = True) -> "Layer":
        """Training mode for this layer and every sublayer (Dropout drops, BatchNorm
        uses and updates batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for layer in self.sublayers(include_self=True):
            layer.training = mode
        return self

    def eval(self) -> "Layer":
        return self.train(False)

    # ------------------------------------------------------------ attribute registration

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Tensor) and value._value is None:  # traced: the program's
            tracer = current_tracer()
            if tracer is not None:
                return tracer.store_attribute(self, name, value)
        if isinstance(value, list | tuple | dict) and current_tracer() is not None \
                and _holds_traced(value):
            # a program carries a Tensor attribute to the next call, not a container:
            # kept, the traced tensors would be read as stale values (or fail) later
            raise ConversionError(
                f"forward stores a {type(value).__name__} holding traced tensors in "
                f"`{type(self).__name__}.{name}`; a compiled call carries only a Tensor "
                "attribute to the next call: store each tensor in its own attribute "
                f"(`self.{name}_h, self.{name}_c = ...`) or return them", user_location())
        d = self.__dict__
        params, layers, buffers = d.get("_parameters"), d.get("_sub_layers"), d.get("_buffers")
        if isinstance(value, Parameter):
            self._register(params, name, value, d, buffers, layers)
        elif params is not None and name in params:
            self._clear(params, name, value, "parameter", "Parameter")
        elif isinstance(value, Layer):
            self._register(layers, name, value, d, params, buffers)
        elif layers is not None and name in layers:
            self._clear(layers, name, value, "sublayer", "Layer")
        elif isinstance(value, Tensor):
            if buffers is not None and name not in buffers:
                self._non_persistable_buffer_names_set.add(name)
            self._register(buffers, name, value, d, params, layers)
        elif buffers is not None and name in buffers and buffers[name] is not None \
                and buffers[name]._value is None:  # a traced value a program stores here
            tracer = current_tracer()
            if not (isinstance(value, int | float) and tracer is not None
                    and tracer.note_number(self, name, value)):
                self._restore_attribute(name, value)
        elif buffers is not None and name in buffers:
            self._clear(buffers, name, value, "buffer", "Tensor")
        else:
            if isinstance(value, int | float):
                tracer = current_tracer()
                # a counter or flag forward keeps (self.n += 1)
                if tracer is not None and tracer.note_number(self, name, value):
                    return
            if name not in BASE_ATTRIBUTES:
                self._configured()
            object.__setattr__(self, name, value)

    def _register(self, store, name: str, value, *others) -> None:
        if store is None:
            raise ValueError("super().__init__() should be called first")
        for other in others:
            if other is not None:
                other.pop(name, None)
        if store.get(name) is not value:
            store[name] = value
            self._structure_changed()

    def _clear(self, store, name: str, value, what: str, kind: str) -> None:
        if value is not None:
            raise TypeError(f"assignment to {what} '{name}' should be of type {kind} or "
                            f"None, but got '{type(value).__name__}'")
        if store[name] is not None:
            store[name] = None
            self._structure_changed()

    def _attribute_or_unset(self, name: str):
        """Attribute `name`, or `_UNSET` (see `Tracer.store_attribute`)."""
        d = self.__dict__
        for store in (d["_buffers"], d["_parameters"], d["_sub_layers"], d):
            if name in store:
                return store[name]
        return _UNSET

    def _restore_attribute(self, name: str, value) -> None:
        """Put back what attribute `name` was before a program was traced (a tensor
        as a buffer, `_UNSET` for none). Not a structure change."""
        d = self.__dict__
        buffers = d["_buffers"]
        if isinstance(value, Tensor):
            d.pop(name, None)
            if name not in buffers:
                self._non_persistable_buffer_names_set.add(name)
            buffers[name] = value
            return
        buffers.pop(name, None)
        self._non_persistable_buffer_names_set.discard(name)
        if value is _UNSET:
            d.pop(name, None)
        else:
            d[name] = value

    def _store_output(self, name: str, tensor: Tensor) -> None:
        """Attribute `name` takes the tensor a compiled call computed for it. A tensor
        already there takes the new value in place, because the program reads that
        object as state on the next call (a recurrent ``self.h``)."""
        current = self._attribute_or_unset(name)
        if isinstance(current, Tensor) and current._value is not None:
            from ...tensor.manipulation import _rebind
            _rebind(current, tensor)
        else:
            self._restore_attribute(name, tensor)

    def _structure_changed(self) -> None:
        self.__dict__["_structure_version"] = self._structure_version + 1

    def _configured(self) -> None:
        """An attribute of the layer's own was set (``dropout.p = 0.2``): a compiled
        program that called one of irflow's layers holds its settings, and compares
        this count, not each setting, on every call (`irflow.frontend.guards`)."""
        d = self.__dict__
        d["_config_version"] = d.get("_config_version", 0) + 1

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_sub_layers", "_buffers"):
            registry = d.get(store)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._sub_layers:
            del self._sub_layers[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistable_buffer_names_set.discard(name)
        else:
            return object.__delattr__(self, name)
        self._structure_changed()

    def add_sublayer(self, name: str, sublayer: "Layer | None") -> "Layer | None":
        if not (sublayer is None or isinstance(sublayer, Layer)):
            raise TypeError(f"add_sublayer expects a Layer, got {type(sublayer).__name__}")
        self._sub_layers[str(name)] = sublayer
        self._structure_changed()
        return sublayer

    def add_parameter(self, name: str, parameter: Parameter | None) -> Parameter | None:
        """Register `parameter` (or None) as ``self.<name>``; a name that is already
        an attribute other than a parameter (a sublayer, a buffer, a method) is an
        error, as in Paddle."""
        if "_parameters" not in self.__dict__:
            raise RuntimeError("super().__init__() should be called first")
        if not isinstance(name, str):
            raise TypeError(f"The name of parameter should be a string, but received "
                            f"{type(name).__name__}.")
        if "." in name or not name:
            raise KeyError(f"invalid parameter name {name!r}: it must be non-empty and "
                           "contain no '.'")
        if name not in self._parameters and hasattr(self, name):
            raise KeyError(f"The parameter '{name}' already exists.")
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"parameter assignment requires Parameter or None, but got "
                            f"'{type(parameter).__name__}'")
        if parameter is None:
            self._parameters[name] = None
            self._structure_changed()
        else:
            setattr(self, name, parameter)
        return parameter

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """`add_parameter`, returning None (Paddle's PyTorch-style name)."""
        self.add_parameter(name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistable: bool = True
                        ) -> None:
        """Register a state tensor that is not trained; persistable buffers are part
        of `state_dict()`."""
        if "_buffers" not in self.__dict__:
            raise ValueError("super().__init__() should be called first")
        if not isinstance(name, str):
            raise TypeError(f"The name of buffer should be a string, but received "
                            f"{type(name).__name__}.")
        if "." in name or not name:
            raise KeyError(f"invalid buffer name {name!r}: it must be non-empty and contain "
                           "no '.'")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists.")
        if tensor is not None and (not isinstance(tensor, Tensor) or isinstance(tensor,
                                                                                 Parameter)):
            raise TypeError(f"The registered buffer should be a Tensor, but received "
                            f"{type(tensor).__name__}.")
        self._buffers[name] = tensor
        self._structure_changed()
        if tensor is not None:
            tensor.persistable = persistable
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)

    def create_parameter(self, shape, attr=None, dtype=None, is_bias: bool = False,
                         default_initializer=None) -> Parameter | None:
        """A new Parameter named after this layer (``linear_0.w_0``); see
        `irflow.nn.param_attr.create_parameter`. Assign it to register it."""
        return create_parameter(shape, dtype or self._dtype, attr=attr, is_bias=is_bias,
                                default_initializer=default_initializer,
                                prefix=self._full_name)

    # ------------------------------------------------------------ traversal

    def named_sublayers(self, prefix: str = "", include_self: bool = False,
                        layers_set: set | None = None) -> Iterator[tuple[str, "Layer"]]:
        """(dotted name, layer) of every sublayer, depth first, each layer once."""
        if layers_set is None:
            layers_set = set()
        if include_self and self not in layers_set:
            layers_set.add(self)
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            yield from layer.named_sublayers(prefix + ("." if prefix else "") + key, True,
                                             layers_set)

    def sublayers(self, include_self: bool = False) -> list["Layer"]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[tuple[str, "Layer"]]:
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and layer not in seen:
                seen.add(layer)
                yield name, layer

    def children(self) -> Iterator["Layer"]:
        for _, layer in self.named_children():
            yield layer

    def _named_members(self, store: str, prefix: str, include_sublayers: bool):
        layers = (self.named_sublayers(prefix, include_self=True) if include_sublayers
                  else [(prefix, self)])
        seen = set()
        for layer_prefix, layer in layers:
            for key, value in getattr(layer, store).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield layer_prefix + ("." if layer_prefix else "") + key, value

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter), each parameter once (shared ones under their first
        name)."""
        return self._named_members("_parameters", prefix, include_sublayers)

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, include_sublayers)

    def buffers(self, include_sublayers: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn: Callable[["Layer"], None]) -> "Layer":
        """Call `fn` on every sublayer (children before parents) and then on self."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    def full_name(self) -> str:
        return self._full_name

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        for p in self.parameters():
            if p.trainable:
                p.clear_gradient(set_to_zero)

    # ------------------------------------------------------------ state

    def state_dict(self, *args, **kwargs) -> OrderedDict:
        """Parameters and persistable buffers by dotted name: per layer its parameters,
        then its buffers, then its sublayers'. Paddle's two signatures: its own,
        ``(destination=None, include_sublayers=True, structured_name_prefix="",
        include_non_persistable_buffer=False, use_hook=True, keep_vars=True)``, and
        PyTorch's ``(destination=None, prefix="", keep_vars=False)``, which a string
        second argument or ``prefix=`` selects, as in Paddle. With `keep_vars` the
        values are the tensors themselves, else each one's `detach()`, which shares
        its storage (as Paddle's). `use_hook` is accepted: irflow has no state dict
        hooks."""
        if len(args) >= 2 and isinstance(args[1], str) or "prefix" in kwargs:
            return self._state_dict_like_torch(*args, **kwargs)
        return self._state_dict(*args, **kwargs)

    def _state_dict_like_torch(self, destination=None, prefix: str = "",
                               keep_vars: bool = False) -> OrderedDict:
        return self._state_dict(destination, structured_name_prefix=prefix,
                                keep_vars=keep_vars)

    def _state_dict(self, destination: dict | None = None, include_sublayers: bool = True,
                    structured_name_prefix: str = "",
                    include_non_persistable_buffer: bool = False, use_hook: bool = True,
                    keep_vars: bool = True) -> OrderedDict:
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[structured_name_prefix + name] = \
                    param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and (include_non_persistable_buffer or
                                       name not in self._non_persistable_buffer_names_set):
                destination[structured_name_prefix + name] = \
                    buffer if keep_vars else buffer.detach()
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    layer._state_dict(destination, True, f"{structured_name_prefix}{name}.",
                                      include_non_persistable_buffer, use_hook, keep_vars)
        return destination

    def set_state_dict(self, state_dict: dict, use_structured_name: bool = True
                       ) -> tuple[list[str], list[str]]:
        """Copy values (Tensors or NumPy arrays) from `state_dict` into this layer's
        parameters and persistable buffers. Entries that are missing or have the
        wrong shape are skipped with a warning, as in Paddle. A value of another
        dtype (float64 for a float32 parameter), or of another kind (a list), is an
        error, as in Paddle, raised before anything is loaded. Returns
        ``(missing_keys, unexpected_keys)``."""
        missing, matched, updates = [], set(), []
        for key, target in self._state_dict().items():
            name = key if use_structured_name else target.name
            value = state_dict.get(name)
            if value is None:
                missing.append(name)
                warnings.warn(f"Skip loading for {key}. {name} is not found in the provided "
                              "dict.", stacklevel=2)
                continue
            shape = list(np.shape(getattr(value, "_value", value)))
            if shape != target.shape:
                missing.append(name)
                warnings.warn(f"Skip loading for {key}. {name} receives a shape {shape}, but "
                              f"the expected shape is {list(target.shape)}.", stacklevel=2)
                continue
            _check_loadable(key, value, target)
            matched.add(name)
            updates.append((target, value))
        for target, value in updates:
            target.set_value(value)
        return missing, [k for k in state_dict if k not in matched]

    set_dict = set_state_dict
    load_dict = set_state_dict

    def to(self, device=None, dtype=None, blocking=None) -> "Layer":
        """irflow runs on the CPU only, so a `device` (a name such as ``"cpu"`` or
        ``"gpu:0"``, or a place) is accepted and ignored; anything else there (a dtype
        name passed first, ``to("float64")``) is an error, as in Paddle, not a layer
        left as it was. `dtype` converts every float parameter and buffer."""
        if device is not None and not isinstance(device, CPUPlace) and not (
                isinstance(device, str) and _DEVICE_NAME.fullmatch(device)):
            raise ValueError(f"Layer.to: device should be a device name such as 'cpu' or "
                             f"'gpu:0', or a place, but got {device!r}")
        if dtype is not None:
            self.astype(dtype)
        return self

    def astype(self, dtype) -> "Layer":
        """Cast every float parameter and buffer to `dtype` (integer buffers, such as
        indices, keep theirs)."""
        return self._cast_floats(dtypes.dtype(dtype), ())

    def float(self, excluded_layers=None) -> "Layer":
        """Cast every float parameter and buffer to float32, except in layers of the
        types `excluded_layers` names (a Layer class or a list of them)."""
        return self._cast_floats(dtypes.float32, _excluded(excluded_layers))

    def float16(self, excluded_layers=None) -> "Layer":
        """`float` to float16; by default BatchNorm layers keep their dtype, as in
        Paddle."""
        return self._cast_floats(dtypes.float16, _excluded(excluded_layers, keep_batch_norm=True))

    def bfloat16(self, excluded_layers=None) -> "Layer":
        """`float` to bfloat16; by default BatchNorm layers keep their dtype, as in
        Paddle."""
        return self._cast_floats(dtypes.bfloat16,
                                 _excluded(excluded_layers, keep_batch_norm=True))

    def double(self) -> "Layer":
        """Cast every float parameter and buffer to float64. (Paddle's casts integer
        buffers too, contrary to its documentation; irflow's keeps them.)"""
        return self._cast_floats(dtypes.float64, ())

    def half(self) -> "Layer":
        """Cast every float parameter and buffer to float16 (see `double`)."""
        return self._cast_floats(dtypes.float16, ())

    def _cast_floats(self, dtype: dtypes.DType, excluded: tuple) -> "Layer":
        """Cast the float parameters and buffers of this layer and its sublayers, but
        those of layers of the types `excluded`, in place: each stays the same object,
        so that an optimizer or another layer holding it sees the new dtype."""
        for layer in self.sublayers(include_self=True):
            if type(layer) in excluded:
                continue
            layer._dtype = dtype.name
            tensors = [*layer._parameters.values(), *layer._buffers.values()]
            for tensor in tensors:
                if tensor is not None and tensor.dtype.is_float:
                    tensor._value = dtypes.astype(tensor._value, dtype)
        return self

    # ------------------------------------------------------------ printing

    def extra_repr(self) -> str:
        """This layer's settings, printed inside its parentheses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = [f"({name}): {_indent(repr(layer), 2)}"
                    for name, layer in self._sub_layers.items()]
        text = type(self).__name__ + "("
        extra_lines = extra.split("\n") if extra else []
        if len(extra_lines) > 1:
            text += "\n  " + "\n  ".join(extra_lines) + "\n"
        elif extra_lines:
            text += extra_lines[0]
        if children:
            text += "\n  " + "\n  ".join(children) + "\n"
        return text + ")"
