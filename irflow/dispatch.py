"""`apply`: the one entry point through which every Tensor operation runs an op.

Eagerly (no tracer active) `apply` runs the op's registered NumPy kernel at once and,
while gradients are enabled and an input requires one, records a `Node` of the
dynamic graph for `backward()` (`irflow.autograd`). While a tracer is active (the
frontend converting a Layer to IR) the same call emits an IR operation instead.
Either way the op's one declaration in the registry is what runs, so eager and
compiled code agree. Grad mode and the tracer are those of the calling thread
(`irflow.context`).

Layering: this module sits above the Tensor class (it wraps kernel results in
Tensors) and below everything that runs ops: the tensor API, autograd, nn, frontend.

The eager path is hot: everything that depends only on the op, its attributes and
its operands' dtypes and shapes (canonical attributes, result types, the kernel) is
computed once and cached under that key.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from typing import Sequence

import numpy as np

from .context import current_observer, current_tracer, grad_enabled, set_grad_mode, state
from .errors import IrflowError, Location, ShapeError
from .ir.registry import canonical_attr, lookup
from .ir.types import TensorType, bind_shape
from .ir import dtypes
from .tensor.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# irflow's frames, and NumPy's, which user code calls with tensors (``np.prod(x.shape)``
# converting a traced size): neither is the user's line
_NOT_USER = (_PACKAGE_DIR, os.path.dirname(os.path.abspath(np.__file__)))


def user_location() -> Location | None:
    """The innermost stack frame outside irflow (and NumPy): the user's line."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_NOT_USER):
            return Location(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def warn_at_user(message: str, stacklevel: int) -> None:
    """A RuntimeWarning at the user's line that made the call (`stacklevel` frames up
    when none is found)."""
    location = user_location()
    if location is None:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
    else:
        warnings.warn_explicit(message, RuntimeWarning, location.file, location.line)


class Prepared:
    """What a call of one op on operands of given dtypes and shapes needs, cached."""

    __slots__ = ("opdef", "kernel", "attrs", "attrs_key", "result_types", "single",
                 "grad_results", "tensor_results", "records", "unsized")

    def __init__(self, opdef, attrs: dict, result_types):
        self.opdef = opdef
        self.attrs = attrs
        self.attrs_key = attrs_key(attrs)
        self.kernel = functools.partial(opdef.kernel, **attrs) if attrs else opdef.kernel
        self.result_types = result_types
        self.single = len(result_types) == 1
        # Which results can carry a gradient: float results of differentiable ops.
        self.grad_results = tuple(not opdef.nondiff and isinstance(t, TensorType)
                                  and t.dtype.is_float for t in result_types)
        self.tensor_results = tuple(isinstance(t, TensorType) for t in result_types)
        self.records = any(self.grad_results)
        # Result sizes the kernel decides (a compiled call): known once it has run.
        self.unsized = any(isinstance(t, TensorType) and not t.is_static for t in result_types)


class Node:
    """One recorded op of the dynamic graph. `sources` pins down, per input, what the
    op read when it ran: the producing node and output index, and the array; so a
    tensor rebound later (``x[0] = 1``, an optimizer step) does not change the graph.
    `mark` and `index` are scratch space for the walk that collects a `Graph`
    (`irflow.autograd`); `hooks` holds the gradient hooks of its outputs."""

    __slots__ = ("prepared", "inputs", "sources", "outputs", "freed", "mark", "index", "hooks",
                 "differentiated")

    def __init__(self, prepared: Prepared, inputs, outputs: list):
        self.prepared = prepared
        self.inputs = tuple(inputs)
        # A tensor marked stop_gradient after it was made is a constant from here on.
        self.sources = tuple([(None if t.stop_gradient else t._node, t._index, t._value)
                              for t in inputs])
        self.outputs = outputs
        self.freed = False
        self.mark = 0
        self.index = 0
        self.hooks = None  # {output index: {id: hook}}, from Tensor.register_hook
        self.differentiated = False  # a backward() ran from one of its outputs

    def free(self) -> None:
        self.inputs = self.sources = ()
        self.outputs = []
        self.freed = True


_CACHE: dict = {}
_CACHE_LIMIT = 8192


def attrs_key(attrs: dict) -> tuple:
    return tuple(attrs.items())


def prepare(name: str, arrays: Sequence[np.ndarray], attrs: dict) -> Prepared:
    """Canonical attributes and result types of `name` on `arrays` (cached, unless an
    attribute is an array, as in the ``const`` ops a recorded backward runs)."""
    try:
        key = (name, tuple(attrs.items()) if attrs else (),
               tuple([(a.dtype, a.shape) for a in arrays]))
        found = _CACHE.get(key)
    except TypeError:  # an unhashable attribute value such as a list: canonicalize first
        attrs = {k: canonical_attr(v) for k, v in attrs.items()}
        try:
            key = (name, tuple(attrs.items()), tuple((a.dtype, a.shape) for a in arrays))
            found = _CACHE.get(key)
        except TypeError:
            key = found = None
    if found is not None:
        return found
    opdef = lookup(name)
    types = [TensorType(dtypes.from_numpy(a), a.shape) for a in arrays]
    try:
        full = opdef.complete_attrs(attrs, types)
        result_types = opdef.result_types(types, full)
    except ShapeError as e:
        raise ShapeError(f"{name}: {e.message}", user_location()) from None
    prepared = Prepared(opdef, full, result_types)
    if key is not None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = prepared
    return prepared


def _sizes(prepared: Prepared, out) -> tuple:
    """The (symbol, size) pairs that the kernel's results `out` give the symbolic dims
    of the prepared result types."""
    bindings: dict[str, int] = {}
    for t, a in zip(prepared.result_types, [out] if prepared.single else out):
        if isinstance(t, TensorType):
            bind_shape(t.shape, np.shape(a), bindings)
    return tuple(sorted(bindings.items()))


def apply(name: str, inputs: Sequence, attrs: dict | None = None):
    """Run op `name` on Tensors `inputs`: one Tensor, or a tuple for multi-result ops."""
    tracer = current_tracer()
    if tracer is not None:
        return tracer.apply(name, inputs, attrs or {})
    arrays = [t._value for t in inputs]
    prepared = prepare(name, arrays, attrs)
    try:
        out = prepared.kernel(*arrays)
    except IrflowError as e:
        raise e.with_loc(user_location())
    if prepared.unsized:
        prepared = prepare(name, arrays, {**(attrs or {}), "sizes": _sizes(prepared, out)})
    if prepared.single:
        if type(out) is not np.ndarray and prepared.tensor_results[0]:
            out = np.asarray(out)
        results = [Tensor._from_array(out)]
    else:
        results = [Tensor._from_array(np.asarray(a) if type(a) is not np.ndarray and is_tensor
                                      else a)
                   for a, is_tensor in zip(out, prepared.tensor_results)]
    observer = current_observer()
    if observer is not None:
        observer(name, user_location(), [t._value for t in results])
    if grad_enabled() and prepared.records:
        for t in inputs:
            if not t.stop_gradient:
                _record(prepared, inputs, results)
                break
    return results[0] if prepared.single else tuple(results)


def _record(prepared: Prepared, inputs, results) -> None:
    node = Node(prepared, inputs, [t._value for t in results])
    for i, tensor in enumerate(results):
        if prepared.grad_results[i]:
            tensor.stop_gradient = False
            tensor._node = node
            tensor._index = i


class no_grad:
    """``with irflow.no_grad():`` (or ``@irflow.no_grad()``): run without recording
    the dynamic graph, so results have ``stop_gradient=True``."""

    def __enter__(self):
        self._saved = grad_enabled()
        set_grad_mode(False)
        return self

    def __exit__(self, *exc):
        set_grad_mode(self._saved)
        return False

    def __call__(self, fn):
        return _decorate(fn, type(self))


def _decorate(fn, mode):
    """`fn` run inside ``with mode():``. A generator function's whole iteration is
    (Paddle's rule): the mode set when it runs would otherwise end at its first yield."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            with mode():
                yield from fn(*args, **kwargs)
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mode():
            return fn(*args, **kwargs)
    return wrapper


class enable_grad(no_grad):
    """The opposite of `no_grad`: record the dynamic graph inside the block."""

    def __enter__(self):
        self._saved = grad_enabled()
        set_grad_mode(True)
        return self


def is_grad_enabled() -> bool:
    return state.grad_enabled


class set_grad_enabled(no_grad):
    """``set_grad_enabled(False)`` sets the grad mode at once, as a call; as a
    context manager (``with set_grad_enabled(False):``) it also puts back the mode
    it found when the block ends, and as a decorator it sets the mode for each call
    of the function only, as Paddle's does."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._saved = state.grad_enabled
        state.grad_enabled = self._mode

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.grad_enabled = self._saved  # decorating sets no mode; calls do
        return _decorate(fn, functools.partial(type(self), self._mode))
