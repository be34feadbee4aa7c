"""Run-time helpers that converted code calls (`irflow.frontend.convert`).

Each helper looks at its condition or iterable: Python values (and concrete tensors)
keep plain Python semantics; traced tensors turn the statement into IR through the
active `Tracer`. A statement's state is the tuple of its variables' values, in the
order its `Statement` record gives (`params` in, `outputs` out). Values may be nested
tuples, lists and dicts: their leaves are what a ``cond`` yields or a ``while``
carries (`irflow.frontend.structure`).
"""
from __future__ import annotations

import builtins
import dataclasses
import functools
import numbers
import random
import sys
import time
import types
from contextvars import ContextVar
from typing import Callable, Sequence

import numpy as np

from ..dispatch import state as dispatch_state
from ..dispatch import user_location, warn_at_user
from ..errors import ConversionError, Location, ShapeError
from ..ir import dtypes
from ..ir.core import Value
from ..ir.types import Dim, ListType, TensorType, dim_add, dim_mul, shape_str, symbols_of
from ..tensor import random as random_numbers
from ..tensor.tensor import Parameter, Size, Tensor
from .convert import RETURNED, RETVAL, Statement
from .structure import LEAF, Pattern, ReturnValue, describe, flatten, unflatten
from .stand_ins import NumpyView, PythonScalar, python_list
from .tensor_array import GROWN_LISTS, TensorArray, TupleArray
from .sequences import (Enumerated, Fixed, Items, Range, Reversed, Rows, Zipped,
                        elementwise_extreme, length_of, run_sequence)
from .tracer import RunTimeGradient, Tracer, Undefined, is_traced


def ld(load: Callable, name: str):
    """The value of a variable, or `Undefined` if it has none yet."""
    try:
        return load()
    except NameError:
        return Undefined(name, user_location(), "is used before it is assigned")


def is_undefined(value) -> bool:
    return isinstance(value, Undefined)


NO_RETURN_VALUE = Undefined("the return value", None, "is not set: no `return` ran")


def returned_value(value):
    """What a function converted to a single exit returns: None if no `return` ran."""
    return value.value if isinstance(value, ReturnValue) else None


def attr(owner, name: str, *default):
    """``owner.name`` (and ``getattr``) in converted code, read as Python reads it;
    the trace records the value read, which its program's guards check on every call
    (`irflow.frontend.guards`)."""
    value = getattr(owner, name, *default)
    _note_read(owner, name)
    return value


def _note_read(owner, name: str) -> None:
    """Record ``owner.name`` as read by the trace being made, if any."""
    tracer = dispatch_state.tracer
    if tracer is not None:
        tracer.reads.attribute(owner, name)


def item(container, index):
    """``container[index]`` in converted code. A Python list or tuple of tensors
    indexed by a traced integer scalar (a tensor loop's counter), known only when the
    program runs, is stacked and the element taken from the stack (a negative index
    counting from the end, as Python's); everything else is indexed as Python does."""
    if type(container) in (list, tuple) and container and is_traced(index) and \
            index.ndim == 0 and not index.dtype.is_float and not index.dtype.is_bool and \
            all(isinstance(t, Tensor) for t in container):
        from ..tensor.logic import select
        from ..tensor.manipulation import stack
        size = len(container)
        return stack(list(container))[select(index < 0, index + size, index)]
    return container[index]


def updating(owner, name: str):
    """The owner of ``owner.name op= v`` in converted code, returned unchanged once
    the read of ``owner.name`` that the statement makes is recorded: Python reads it
    before the write, and a later read (``if self.calls % k == 0``) would record the
    value this trace wrote, which the program's guards would then find on every call
    (a counter on a plain object counted once)."""
    _note_read(owner, name)
    return owner


def _hasattr(owner, name: str) -> bool:
    """``hasattr`` in converted code: what it found is recorded as `attr` records a read
    (a program traced without the attribute traces again once it exists)."""
    _note_read(owner, name)
    return hasattr(owner, name)


def named(value, name: str):
    """Give a traced value the user's variable name (for the printed IR)."""
    if is_traced(value) and value._ir.name is None:
        value._ir.name = name
    return value


# ---------------------------------------------------------------- operators

def not_(x):
    if isinstance(x, GROWN_LISTS):  # a list grown in a traced loop: empty or not
        return x.length() == 0
    if isinstance(x, Tensor):
        from ..tensor.logic import logical_not
        return logical_not(x)
    return not x


def and_(left: Callable, right: Callable):
    """``a and b``: `b` is evaluated only when needed, also for traced `a` (a cond)."""
    a = left()
    if is_traced(a):
        return _lazy_bool(a, right, take_right_if=True)
    return right() if a else a


def or_(left: Callable, right: Callable):
    a = left()
    if is_traced(a):
        return _lazy_bool(a, right, take_right_if=False)
    return a if a else right()


def _lazy_bool(a: Tensor, right: Callable, take_right_if: bool):
    """A cond choosing an operand, as Python does: ``a and b`` is b where a is true,
    else a (``or`` the other way round). A bool `a` (a comparison: the test of an
    `if` or `while`) gives a bool, `b` cast to bool; any other `a` gives one of the
    operands themselves (``x.sum() or x.max()`` is a float), whose types the cond's
    branches must then share."""
    pred = _predicate(a)
    if a.dtype is dtypes.bool_:
        rhs = (lambda: (_as_bool(right()),)), (lambda: (pred,))
    else:
        rhs = (lambda: (right(),)), (lambda: (a,))
    branches = rhs if take_right_if else rhs[::-1]
    (out,) = _trace_cond(pred, branches, _expression("__jst_bool"))
    return out


def _expression(name: str) -> Statement:
    """The record of a conditional expression: one unnamed output, at the user's line."""
    return Statement("if", user_location(), (), (name,))


def _as_bool(x) -> Tensor:
    from ..tensor.convert import as_tensor, cast
    return _predicate(cast(as_tensor(x), dtypes.bool_))


def ifexp(test, body: Callable, orelse: Callable):
    if is_traced(test):
        (out,) = _trace_cond(_predicate(test), (lambda: (body(),), lambda: (orelse(),)),
                             _expression("__jst_ifexp"))
        return out
    return body() if test else orelse()


def assert_(test, msg: Callable) -> None:
    """``assert test, msg``: checked now for Python values; for a traced condition, an
    `assert` op checks it each time the program runs. A message showing values the
    program knows only then (``f"max {x.max()}"``) is made then, as `print` makes
    its text: the op's operands after the condition fill its fields."""
    if not is_traced(test):
        if not test:
            raise AssertionError(msg())
        return
    loc = user_location()
    text = msg()
    text = f"{loc}: " + (loc.source_line().strip() if text is None else _text(text))
    tensors: list[Tensor] = []
    fmt, shown = _tracer().taken_text(text, tensors)
    from ..dispatch import apply
    apply("assert", [_predicate(test), *tensors],
          {"msg": fmt, **shown} if tensors else {"msg": text})


# ---------------------------------------------------------------- calls

def _print(*args, sep=" ", end="\n", file=None, flush=False):
    """While tracing, `print` becomes a `print` op: it prints each time the program
    runs, in the branch or iteration that reaches it."""
    if dispatch_state.tracer is None or file is not None:
        return builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
    tensors: list[Tensor] = []
    text = sep.join(_text(a) for a in args) + ("" if end == "\n" else end)
    fmt, shown = _tracer().taken_text(text, tensors)
    from ..dispatch import apply
    apply("print", tensors, {"fmt": fmt, **shown})


def _text(value, conversion: str = "") -> str:
    """`value` as print and ``str`` show it (``repr`` with `conversion` "r"); a traced
    tensor in it is a placeholder for its text when the program runs (``x.shape`` of
    a symbolic dim prints as ``paddle.Size([3, 4])``), and so is a parameter or
    buffer: the program prints what it holds then, not the value it had when traced.
    A tensor's text is the tensor's even when it is 0-d: ``format(t, "")`` (an
    f-string's) would be its number. What stands for a Python number or a NumPy
    array (``x.numpy()``) shows as that, as the items of a list do by their repr."""
    if isinstance(value, dict) and _has_run_time_text(value):
        return "{" + ", ".join(f"{_text(k, 'r')}: {_text(v, 'r')}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple) and _has_run_time_text(value):
        inner = ", ".join(_text(v, "r") for v in value)
        if isinstance(value, Size):
            return f"paddle.Size([{inner}])"
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if not _known_when_run(value):
        return builtins.repr(value) if conversion == "r" else str(value)
    if isinstance(value, PythonScalar):
        return format(value, "")
    tracer = _tracer()
    if isinstance(value, NumpyView):
        return tracer.text_of(value, "", "array", conversion)
    if is_traced(value):
        return tracer.text_of(value, "", "tensor")
    text = tracer.text_of(tracer.detach(value), "", "tensor", stop_gradient=value.stop_gradient)
    return "Parameter containing:\n" + text if isinstance(value, Parameter) else text


def formatted(value, conversion: int, spec: str) -> str:
    """An f-string's ``{value!conversion:spec}`` (Python's FORMAT_VALUE) in converted
    code: ``str``, ``repr`` and ``ascii`` of a tensor known only when the program runs
    are its text (`_text`), as they are of a list of them formatted without a spec;
    ``format`` of a tensor is its number when it is 0-d, as eagerly, a 0-d
    parameter's too (without the "Parameter containing" that printing it shows)."""
    if conversion in (ord("s"), ord("r"), ord("a")):
        value = _text(value, "" if conversion == ord("s") else "r") \
            if _has_run_time_text(value) else \
            {ord("s"): str, ord("r"): repr, ord("a"): ascii}[conversion](value)
    elif not spec and _has_run_time_text(value):
        if not isinstance(value, Tensor):
            return _text(value)
        if value.ndim == 0 and not is_traced(value):
            tracer = _tracer()
            return tracer.text_of(tracer.detach(value), "")
    return format(value, spec)


def _str(*args, **kwargs):
    """``str`` in converted code: a tensor's text, as eagerly (see `_text`)."""
    if len(args) == 1 and not kwargs and _has_run_time_text(args[0]):
        return _text(args[0])
    return builtins.str(*args, **kwargs)


def _repr(value) -> str:
    return _text(value, "r") if _has_run_time_text(value) else builtins.repr(value)


def _has_run_time_text(value) -> bool:
    """Whether `value`'s text holds a tensor's that the program knows when it runs
    (nested in lists, tuples and dicts too)."""
    if isinstance(value, dict):
        return any(map(_has_run_time_text, value.values()))
    return _known_when_run(value) or \
        isinstance(value, list | tuple) and any(map(_has_run_time_text, value))


def _known_when_run(value) -> bool:
    """Whether `value` is a tensor whose value the program knows only when it runs: a
    traced one, or a parameter or buffer (an argument of the program, which
    `Tensor.item` and `format` trace)."""
    return isinstance(value, Tensor) and (is_traced(value) or
                                          value._tracing_state() is not None)


def _to_float(x=0.0):
    return _scalar(x, dtypes.float64) if _known_when_run(x) else builtins.float(x)


def _to_int(x=0, *base):
    return _scalar(x, dtypes.int64) if _known_when_run(x) else builtins.int(x, *base)


def _to_bool(x=False):
    return _as_bool(x) if is_traced(x) else builtins.bool(x)


def _scalar(x: Tensor, dtype) -> Tensor:
    from ..tensor.convert import cast
    return cast(x.item(), dtype)


def _vars(*obj):
    """``vars(obj)`` in converted code: a read of ``obj.__dict__``, which the trace
    records as `attr` records one (``vars(self)["scale"]`` is guarded like
    ``self.scale``); ``vars()`` is the converted function's own variables."""
    if not obj:
        return sys._getframe(1).f_locals
    _note_read(obj[0], "__dict__")
    return vars(*obj)


def _range(*args):
    if any(is_traced(a) for a in args):
        return Range(*args)
    return builtins.range(*(a.item() if isinstance(a, Tensor) else a for a in args))


def _enumerate(iterable, start=0):
    seq = run_sequence(iterable)
    return builtins.enumerate(iterable, start) if seq is None else Enumerated(seq, start)


def _reversed(iterable):
    seq = run_sequence(iterable)
    return builtins.reversed(iterable) if seq is None else Reversed(seq)


def _zip(*iterables, **kwargs):
    parts = [run_sequence(x) for x in iterables]
    if all(p is None for p in parts) or kwargs:
        return builtins.zip(*iterables, **kwargs)
    if any(p is None and builtins.len(x) == 0 for p, x in zip(parts, iterables)):
        return iter(())
    return Zipped([p or Fixed(x) for p, x in zip(parts, iterables)])


def _sum(iterable, /, start=0):
    """``sum(outs)`` of a grown list or the rows of a traced tensor: the sum over the
    stacked items (an empty one gives zeros of the item's type)."""
    from ..tensor.manipulation import stack
    seq = run_sequence(iterable)
    if not (isinstance(seq, Rows) or isinstance(seq, Items) and
            isinstance(seq.array, TensorArray)):
        return builtins.sum(iterable, start)
    total = (stack(seq.array) if isinstance(seq, Items) else seq.x).sum(axis=0)
    return total if isinstance(start, int) and start == 0 else start + total


_GROWN = "__jst_grown"  # the list a comprehension over a run-time sequence builds


def listcomp(iterable, element: Callable) -> list:
    """``[element(o) for o in iterable]``: over a sequence whose length only the run
    knows (a grown list, a tensor with a symbolic first dim), a loop that grows a list
    of the elements; else the comprehension itself."""
    seq = run_sequence(iterable)
    if seq is None or isinstance(seq.length(), int):
        return [element(o) for o in iterable]
    loc = user_location()
    stmt = Statement("for", loc, (_GROWN,), (_GROWN,), mutated={_GROWN: loc})

    def body(item, grown):
        grown.append(element(item))
        return (grown,)

    (grown,) = _for_items(seq.length(), seq.item, body, ([],), stmt, None)
    if isinstance(seq, Items):  # as long as the list it maps
        source = _arrays(seq.array)[0]
        for array in _arrays(grown):
            _tracer().as_long_as(array._ir, source._ir)
    return grown


def _arrays(grown) -> list[TensorArray]:
    """The TensorArrays a grown list is: itself, or a TupleArray's fields."""
    return grown.fields_ if isinstance(grown, TupleArray) else [grown]


def _extremum(python: Callable, elementwise: str):
    """``max(a, b, ...)`` / ``min``, or of one list or tuple (``max(x.shape)``), with a
    traced scalar among them: Python's steps, each a cond taking the next argument
    where it compares greater (less) than the one kept, so the result is one of the
    arguments as eager code gives it (the first of equal ones, a NaN kept first; the
    other's gradient None). Arguments of two dtypes (which one eager code returns
    depends on their values) take the elementwise op."""
    def extremum(*args, **kwargs):
        items = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
        if len(items) < 2 or kwargs or not any(is_traced(a) for a in items):
            return python(*args, **kwargs)
        out = items[0]
        for a in items[1:]:
            out = _python_step(out, a, python is builtins.max, elementwise)
        return out
    return extremum


def _python_step(kept, candidate, larger: bool, elementwise: str):
    from ..tensor.convert import as_tensor
    like = kept if isinstance(kept, Tensor) else candidate
    kept, candidate = as_tensor(kept, like=like), as_tensor(candidate, like=like)
    if kept.dtype is not candidate.dtype:
        return elementwise_extreme(kept, candidate, elementwise)
    wins = candidate > kept if larger else candidate < kept
    (out,) = _trace_cond(_predicate(wins), (lambda: (candidate,), lambda: (kept,)),
                         _expression("__jst_extremum"))
    return out


def _truth_of_all(python: Callable, reduce: str):
    """``any(t)`` / ``all(t)`` of a traced 1-D tensor: whether any (all) of its
    elements is true, as a traced bool (Python's iterates the values); of a tensor
    of more dims, an error, as each row's truth value is in eager code."""
    def truth(iterable):
        if isinstance(iterable, TensorArray) or \
                isinstance(iterable, Tensor) and not is_traced(iterable):
            return python(iterable)
        if not is_traced(iterable):
            return _truth_of_items(python, reduce, list(iterable))
        if iterable.ndim != 1:
            raise ConversionError(f"{python.__name__}() of a tensor of shape "
                                  f"{shape_str(iterable._ir.type.shape)} asks the truth "
                                  "value of each row; use paddle.any or paddle.all",
                                  user_location())
        from ..dispatch import apply
        from ..tensor.convert import cast
        return apply(reduce, [cast(iterable, dtypes.bool_)], {"axis": None, "keepdim": False})
    return truth


def _truth_of_items(python: Callable, reduce: str, items: list):
    """``any(x.sum() > 0 for x in xs)``: with a traced item, every item's truth as a
    traced bool, reduced (no item is skipped, which differs from Python only in
    effects of the items' code); else Python's."""
    if not any(is_traced(item) for item in items):
        return python(items)
    from ..dispatch import apply
    from ..tensor.manipulation import stack
    return apply(reduce, [stack([_predicate(item) for item in items])],
                 {"axis": None, "keepdim": False})


def _seed(s):
    """``paddle.seed`` in converted code: while tracing, the program's (`Tracer.reseed`)."""
    if dispatch_state.tracer is None:
        return random_numbers.seed(s)
    _tracer().reseed(s)


_BUILTINS = {builtins.print: _print, builtins.float: _to_float, builtins.int: _to_int,
             builtins.bool: _to_bool, builtins.len: length_of, builtins.range: _range,
             builtins.enumerate: _enumerate, builtins.reversed: _reversed,
             builtins.zip: _zip, builtins.sum: _sum,
             builtins.max: _extremum(builtins.max, "maximum"),
             builtins.min: _extremum(builtins.min, "minimum"),
             builtins.any: _truth_of_all(builtins.any, "any"),
             builtins.all: _truth_of_all(builtins.all, "all"), builtins.getattr: attr,
             builtins.hasattr: _hasattr, builtins.vars: _vars, builtins.str: _str,
             builtins.repr: _repr, random_numbers.seed: _seed}
# Python's own random numbers and clocks: a trace calls them once, and the program
# keeps what they returned
_HOST_RANDOM = (random.Random, np.random.RandomState, np.random.Generator)
_CLOCKS = frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic",
                     "monotonic_ns", "process_time", "process_time_ns"})  # of `time`


def call(fn):
    """What a call in converted code calls: converted user functions, irflow's
    versions of print/float/int/bool/len/range, and everything else unchanged."""
    try:
        replacement = _BUILTINS.get(fn)
    except TypeError:  # unhashable callables
        replacement = None
    if replacement is not None:
        return replacement
    if dispatch_state.tracer is None:
        return fn
    if isinstance(fn, types.MethodType) and fn.__func__ is Tensor.numpy and \
            is_traced(fn.__self__):
        return lambda: NumpyView.of(fn.__self__.detach())  # as eagerly: no gradient
    if isinstance(fn, types.MethodType) and fn.__func__ is Tensor.tolist and \
            is_traced(fn.__self__):
        return lambda: python_list(fn.__self__)
    if isinstance(fn, functools.partial):  # its function converted, as if called itself
        return functools.partial(call(fn.func), *fn.args, **fn.keywords)
    method = _user_call_method(fn)
    if method is not None:
        return call(method)
    _warn_if_host_random(fn)
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if converts(target):
        from .convert import Unconvertible, convert_function
        try:
            converted = convert_function(fn)
        except Unconvertible:  # no source: run it as it is
            return fn
        dispatch_state.tracer.reads.function(target)  # its globals and closure, now
        return converted
    return fn


def _user_call_method(fn) -> types.MethodType | None:
    """``fn.__call__`` of an object (not a function, class or Layer) whose class
    defines it in user code: converted as any user method, so what it reads
    (``self.k`` of a ``Scaler`` held by a Layer) is guarded, not frozen."""
    if isinstance(fn, (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                       type)):
        return None
    from ..nn.layer.layers import Layer
    method = getattr(type(fn), "__call__", None)
    if isinstance(fn, Layer) or not converts(method):
        return None
    return types.MethodType(method, fn)


def _warn_if_host_random(fn) -> None:
    """Warn of a call of Python's or NumPy's random numbers or of a clock in converted
    code: the trace makes it once, and every run of the program reuses the number it
    returned, where eager code draws a new one on every call (Paddle's AST
    ``to_static`` freezes it too)."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, _HOST_RANDOM) or (owner is time and
                                           getattr(fn, "__name__", None) in _CLOCKS):
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
        warn_at_user(f"the compiled code called {name}() while it was traced; it runs "
                     "Python code only then, so every call of the program reuses the "
                     "value that call returned, where eager code gets a new one each "
                     "call. Use paddle.rand / paddle.randn (drawn each run), or pass the "
                     "value as an argument", stacklevel=3)


NOT_TO_STATIC = "_irflow_not_to_static"  # set by paddle.jit.not_to_static


def not_to_static(fn: Callable) -> Callable:
    """``@paddle.jit.not_to_static``: `fn` runs as it is in compiled code, without
    control-flow conversion (its tensor conditions then need Python values)."""
    setattr(fn.__func__ if isinstance(fn, types.MethodType) else fn, NOT_TO_STATIC, True)
    return fn


_to_static: ContextVar[bool] = ContextVar("irflow.to_static", default=True)
to_static_enabled = _to_static.get


def enable_to_static(enable_to_static_bool: bool) -> None:
    """``paddle.jit.enable_to_static(False)``: compiled functions and Layers
    (``to_static``, ``irflow.compile``) run their Python code eagerly when called,
    until it is turned on again. Read at each call, so it applies to those compiled
    before it too, as Paddle's. Paddle's switch is process-wide; irflow's is per
    thread (a context variable, like ``enable_static`` and ``no_grad``): one thread
    debugging eagerly leaves compiled calls in other threads compiled, and a new
    thread starts with compiling on."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static takes a bool, not "
                        f"{type(enable_to_static_bool).__name__}")
    _to_static.set(enable_to_static_bool)


def converts(fn) -> bool:
    """Whether calls of `fn` in traced code run it converted: a Python function of the
    user's (not irflow's own, a library's or one marked ``not_to_static``)."""
    return isinstance(fn, types.FunctionType) and _is_user_code(fn) and \
        not getattr(fn, NOT_TO_STATIC, False)


def _is_user_code(fn: types.FunctionType) -> bool:
    import os
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    filename = fn.__code__.co_filename
    return not (filename.startswith(package) or filename.startswith("<")
                or "site-packages" in filename or fn.__module__ in ("numpy", "builtins"))


# ---------------------------------------------------------------- statements

def if_(test, true_fn: Callable, false_fn: Callable, init: tuple, stmt: Statement,
        outer: tuple = ()):
    """``if``; `outer` holds the values of the names in `stmt.outer` (the same in
    `while_` and `for_`)."""
    if is_traced(test):
        return _trace_cond(_predicate(test), (lambda: true_fn(*_private(init)),
                                              lambda: false_fn(*_private(init))),
                           stmt, _objects(stmt, stmt.params, init, outer))
    return true_fn(*init) if test else false_fn(*init)


def _objects(stmt: Statement, names: Sequence[str], values: Sequence, outer: tuple) -> dict:
    """What a statement starts from, by name: its variables' values, and those of the
    globals and enclosing variables whose objects it changes."""
    return dict(zip(names, values)) | dict(zip(stmt.outer, outer))


def while_(cond_fn: Callable, body_fn: Callable, init: tuple, stmt: Statement,
           trips: Dim | None = None, outer: tuple = ()):
    """``while``; `trips` is the number of iterations as a dim where the loop is known
    to run exactly that many (a ``for`` over ``range(x.shape[0])`` without a break)."""
    values = init
    while True:
        test = cond_fn(*values)
        if is_traced(test):  # from here on the loop runs in the program
            return _trace_while(cond_fn, body_fn, values, stmt,
                                trips=trips if values is init else None, outer=outer)
        if not test:
            return values
        values = body_fn(*values)


def for_(iterable, body_fn: Callable, init: tuple, stmt: Statement,
         stop: Callable | None = None, outer: tuple = ()):
    """``for``: a Python iterable runs in Python; a range with traced bounds or a traced
    tensor becomes a while loop over an index. Once a ``break`` depends on a tensor,
    the remaining iterations of a Python iterable run under a ``cond``."""
    if isinstance(iterable, Range):
        return _for_range(iterable, body_fn, init, stmt, stop, outer)
    seq = run_sequence(iterable)
    if seq is not None:
        return _for_items(seq.length(), seq.item, body_fn, init, stmt, stop, outer)
    if isinstance(iterable, builtins.range):
        return _for_range(Range(iterable.start, iterable.stop, iterable.step), body_fn,
                          init, stmt, stop, outer)
    values = init
    for item in iterable:
        halt = stop(*values) if stop is not None else False
        if is_traced(halt):
            values = _trace_cond(_predicate(not_(halt)), (
                lambda: body_fn(item, *_private(values)), lambda: _private(values)),
                stmt, _objects(stmt, stmt.outputs, values, outer))
        elif halt:
            break
        else:
            values = body_fn(item, *values)
    return values


_INDEX = "__jst_index"


def _for_range(r: Range, body_fn, init, stmt: Statement, stop, outer: tuple = ()):
    step = r.step
    if isinstance(step, numbers.Number) and step == 0:
        raise ConversionError("range() step must not be zero", stmt.loc)

    def cond(i, *values):
        more = (i < r.stop) if not isinstance(step, numbers.Number) or step > 0 else (i > r.stop)
        if stop is None:
            return more
        return and_(lambda: not_(stop(*values)), lambda: more)

    def body(i, *values):
        return (i + step, *body_fn(i, *values))

    indexed = dataclasses.replace(stmt, params=(_INDEX, *stmt.params),
                                  outputs=(_INDEX, *stmt.outputs))
    trips = r.trips() if stop is None else None
    return while_(cond, body, (r.start, *init), indexed, trips, outer)[1:]


def _for_items(length, item_at: Callable, body_fn, init, stmt: Statement, stop,
               outer: tuple = ()):
    """A loop over `item_at(i)` for i in range(length), a traced length."""
    return _for_range(Range(length), lambda i, *values: body_fn(item_at(i), *values),
                      init, stmt, stop, outer)


def _private(values: tuple) -> tuple:
    """Copies of a statement's state for one branch to trace: containers rebuilt and
    tensors re-wrapped, so that in-place changes in one branch (``a[i] = v``,
    ``outs.append(v)``) reach neither the other branch nor the code outside."""
    out = []
    for value in values:
        leaves, structure = flatten(value)
        out.append(unflatten(structure, [_alias(v) for v in leaves]))
    return tuple(out)


def _alias(v):
    if isinstance(v, Tensor):
        t = type(v)._from_array(v._value)
        t._ir, t._tracer, t.stop_gradient = v._ir, v._tracer, v.stop_gradient
        return t
    return v


def _write_back(stmt: Statement, before: dict, name: str, value):
    """A container or tensor the statement changed in place gets the new contents in
    place, so other references to it see them, as in eager code."""
    original = before.get(name)
    if name not in stmt.mutated or original is value:
        return value
    if isinstance(original, Tensor) and isinstance(value, Tensor):
        from ..tensor.manipulation import _rebind
        saved = _alias(original)
        _tracer().changed(lambda: _rebind(original, saved))
        _rebind(original, value)
        return original
    if name in stmt.inside and _rebound_leaves(original, value):
        return original
    if _is_container(original) and type(value) is type(original):
        saved = _contents(original)
        _tracer().changed(lambda: _set_contents(original, saved))
        _set_contents(original, value)
        return original
    return value


def _rebound_leaves(original, value) -> bool:
    """For a container the statement changed only through its elements (``d["k"][i] =
    v``): rebind each tensor it holds to its new value, in place, so that every other
    name for that tensor (``a`` of ``d = {"k": a}``) sees the change, as in eager code;
    False (nothing done) if the two do not have one structure."""
    leaves, structure = flatten(original)
    new_leaves, new_structure = flatten(value)
    if structure != new_structure:
        return False
    from ..tensor.manipulation import _rebind
    for old, new in zip(leaves, new_leaves):
        if isinstance(old, Tensor) and isinstance(new, Tensor) and old is not new:
            saved = _alias(old)
            _tracer().changed(lambda old=old, saved=saved: _rebind(old, saved))
            _rebind(old, new)
    return True


class _Effects:
    """What a statement changes on Python objects other than its own variables: an
    attribute set (``self.h = v``), the contents of a list or dict reached through
    attributes (``self.history.append(v)``) or held by a global or a variable of an
    enclosing function, and a traced tensor such a name or attribute holds changed in
    place (``y.add_(x)`` of an enclosing function's ``y``). After each traced branch
    or loop body these are read and put back as they were, so that every trace starts
    from the same objects; a ``cond`` yields their new values, a loop refuses them (it
    carries variables, not objects). A concrete tensor changed in place is the
    tracer's state instead (`_StateChanges`), and a module is no object a statement
    changes (``nn.utils.clip_grad_norm_`` changes gradients, which are state)."""

    def __init__(self, stmt: Statement, before: dict):
        self.keys, self.lines, self.objects, self.saved = [], [], [], []
        self.loc = stmt.loc
        for (path, attr), line in stmt.effects.items():
            obj = _follow(before, path)
            if not _followed(stmt, path, attr, obj):
                continue
            self.keys.append((path, attr))
            self.lines.append(line)
            self.objects.append(obj)
        self.saved = self._read()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(".".join(path + ((attr,) if attr else ())) for path, attr in self.keys)

    def _read(self) -> tuple:
        return tuple(_contents(obj) if attr is None else getattr(obj, attr, _MISSING)
                     for obj, (_, attr) in zip(self.objects, self.keys))

    def set(self, values) -> None:
        for name, obj, (_, attr), v in zip(self.names, self.objects, self.keys, values):
            if attr is None and isinstance(v, TensorArray):
                raise ConversionError(
                    f"`{name}` is a Python list that the branches of this tensor-dependent "
                    "`if` leave with different lengths. The program runs Python code only "
                    "when it is traced, so it cannot change the list on each call: keep "
                    "the tensors in a local list, or in tensors the function returns.",
                    self.loc)
            if attr is None:
                _set_contents(obj, v)
            elif v is _MISSING:
                if hasattr(obj, attr):
                    delattr(obj, attr)
            elif getattr(obj, attr, _MISSING) is not v:
                setattr(obj, attr, v)

    def run(self, fn: Callable) -> tuple:
        """`fn()`'s results followed by the values it left in the tracked places
        (`Undefined` for an attribute it did not have); everything is put back as it
        was, also if `fn` raises."""
        try:
            out = tuple(fn())
        finally:
            now = self._read()
            self.set(self.saved)
        return out + tuple(Undefined(name, None, "is set in only one branch of this `if`, "
                                     "and the object had no such attribute before it")
                           if v is _MISSING else v for name, v in zip(self.names, now))

    def run_loop_body(self, fn: Callable, stmt: Statement):
        """`fn()` for a loop body, which must leave the tracked places as they were."""
        out = self.run(fn)
        n = len(out) - len(self.keys)
        for name, line, old, new, (_, attr) in zip(self.names, self.lines, self.saved,
                                                    out[n:], self.keys):
            unchanged = (isinstance(new, Undefined) and old is _MISSING) if attr else \
                _same_contents(old, new)
            if not (unchanged or new is old):
                what = f"`{name}` is set" if attr else f"`{name}` is changed in place"
                raise ConversionError(
                    f"{what} inside a tensor-dependent loop at {line.describe()}\nA loop "
                    "carries variables, not objects: keep the value in a local variable and "
                    "store it after the loop.", stmt.loc)
        return out[:n]


_MISSING = object()


def _followed(stmt: Statement, path: tuple, attr: str | None, obj) -> bool:
    """Whether `_Effects` follows the object at `path`: not a variable of the
    statement (the statement gives it back itself), and an object a branch changes
    by running Python code."""
    if obj is _MISSING:
        return False
    if attr is not None:
        return _is_plain_object(obj)
    if len(path) == 1 and path[0] in stmt.mutated:
        return False
    return _is_container(obj) or is_traced(obj)


def _follow(values: dict, path: tuple):
    """The object at `path` (a variable, then attributes), or `_MISSING`."""
    obj = values.get(path[0], _MISSING)
    for attr in path[1:]:
        if obj is _MISSING or isinstance(obj, Undefined):
            return _MISSING
        obj = getattr(obj, attr, _MISSING)
    return _MISSING if isinstance(obj, Undefined) else obj


def _is_plain_object(value) -> bool:
    return hasattr(value, "__dict__") and not isinstance(
        value, Tensor | list | dict | tuple | types.ModuleType | types.FunctionType | type)


def _is_container(value) -> bool:
    return type(value) is list or type(value) is dict


def _contents(obj):
    """What a followed list, dict or traced tensor holds (a tensor: what `_alias` keeps)."""
    if isinstance(obj, Tensor):
        return _alias(obj)
    return list(obj) if type(obj) is list else dict(obj)


def _set_contents(obj, contents) -> None:
    if isinstance(obj, Tensor):
        from ..tensor.manipulation import _rebind
        _rebind(obj, contents)
    elif type(obj) is list:
        obj[:] = contents
    else:
        obj.clear()
        obj.update(contents)


def _same_contents(old, new) -> bool:
    if isinstance(old, Tensor):
        return isinstance(new, Tensor) and old._ir is new._ir
    if type(old) is not type(new) or len(old) != len(new):
        return False
    if type(old) is dict:
        return old.keys() == new.keys() and all(old[k] is new[k] for k in old)
    return all(a is b for a, b in zip(old, new))


# ---------------------------------------------------------------- tracing cond

def _tracer() -> Tracer:
    return dispatch_state.tracer


def _predicate(x) -> Tensor:
    """`x` as a bool scalar tensor: the condition of an `if` or `while` (of a list
    grown in a traced loop, whether it is not empty, as Python's truth of a list)."""
    from ..tensor.convert import as_tensor, cast
    from ..tensor.manipulation import reshape
    if isinstance(x, GROWN_LISTS):
        x = x.length() > 0
    x = as_tensor(x)
    shape = x._ir.type.shape if is_traced(x) else x._value.shape
    if shape:
        if not all(d == 1 for d in shape):
            raise ConversionError(f"a condition must be a single value, but this tensor has "
                                  f"shape {list(d if isinstance(d, int) else -1 for d in shape)};"
                                  " reduce it with paddle.any() or paddle.all()",
                                  user_location())
        x = reshape(x, [])
    return cast(x, dtypes.bool_)


class _Zeros:
    """Zeros of a type: what a branch yields for a return value it does not set (the
    `returned` flag makes sure it is never used)."""

    def __init__(self, t: TensorType):
        self.type = t
        self.stop_gradient = True


def _trace_cond(pred: Tensor, branches: tuple[Callable, Callable], stmt: Statement,
                before: dict | None = None):
    """Trace both branches into the regions of a ``cond``; returns the outputs."""
    _refuse_outer_writes(stmt)
    tracer = _tracer()
    before = before or {}
    effects = _Effects(stmt, before)
    state = _StateChanges(tracer, stmt)
    pred_value = tracer.value_of(pred)
    traced = [tracer.trace_region([], lambda: state.run(lambda: effects.run(fn)), branch=True)
              for fn in branches]
    (then_scope, then_out), (else_scope, else_out) = traced
    then_out, else_out = _unread_after_return(stmt, then_out, else_out)
    then_out, else_out = then_out + state.values[0], else_out + state.values[1]
    names = stmt.outputs + effects.names + state.names
    merged = [_merge(name, a, b, stmt) for name, a, b in zip(names, then_out, else_out)]
    pairs = [leaf for m in merged for leaf in m.pairs]
    yielded = [_yield_values(tracer, scope, [pair[side] for pair in pairs], stmt)
               for side, scope in enumerate((then_scope, else_scope))]
    joined = _joined_types(tracer, merged, yielded, stmt)
    for values, scope in zip(yielded, (then_scope, else_scope)):
        with scope.builder.location(stmt.loc):
            values[:] = [v if v.type == t else scope.builder.as_shape(v, shape=t.shape)
                         for v, t in zip(values, joined)]
            scope.builder.create("yield", values)
    op = tracer.aligned_region_op("cond", [pred_value], [then_scope, else_scope], 0, [],
                                  joined,
                                  [m.ir_name for m in merged for _ in m.pairs])
    results = iter(op.results)
    out = [m.rebuild([tracer.wrap(next(results), a.stop_gradient and b.stop_gradient,
                                  _common_class(a, b)) for a, b in m.pairs]) for m in merged]
    n, m = len(stmt.outputs), len(stmt.outputs) + len(effects.names)
    tracer.changed(lambda: effects.set(effects.saved))
    effects.set(out[n:m])
    state.set(out[m:])
    return tuple(_write_back(stmt, before, name, v) for name, v in zip(stmt.outputs, out[:n]))


def _unread_after_return(stmt: Statement, then_out: tuple, else_out: tuple) -> tuple:
    """The branches' outputs, where a branch that certainly returned (it set the
    `returned` flag to True, or it is the false branch of an ``if not returned``
    guard) leaves a variable unbound, with zeros of the other branch's value: all code
    after a statement that may return runs under such a guard, so that value is never
    read (as for the return value, in `_merge`)."""
    k = stmt.outputs.index(RETURNED) if RETURNED in stmt.outputs else None
    returned = [k is not None and out[k] is True for out in (then_out, else_out)]
    returned[1] = returned[1] or stmt.return_guard
    sides = [list(then_out), list(else_out)]
    for done, side, other in zip(returned, sides, sides[::-1]):
        if done:
            side[:] = [_zeros_like(o) if isinstance(v, Undefined) and
                       not isinstance(o, Undefined) else v for v, o in zip(side, other)]
    return tuple(sides[0]), tuple(sides[1])


class _StateChanges:
    """The state the branches of a ``cond`` change in the tracer: parameters and
    optimizer accumulators an ``opt.step()`` updates, gradients a ``loss.backward()``
    or ``clear_grad()`` sets. Each branch starts from the state before the `if`; the
    cond yields each value either branch changed (the other branch gives the value it
    had), as it yields a variable. A gradient that one branch leaves None (or that
    exists on some runs only in a branch) is yielded with a bool that says whether it
    exists (zeros and false for the None) and becomes a `RunTimeGradient`."""

    def __init__(self, tracer: Tracer, stmt: Statement):
        self.tracer, self.stmt = tracer, stmt
        self.before = tracer.snapshot()
        self.after: list[tuple[dict, dict]] = []
        self.keys: list[tuple[int, int]] = []  # (0 for an update or 1 for a gradient, id)
        self.names: tuple[str, ...] = ()
        self.values: tuple[tuple, tuple] = ((), ())

    def run(self, fn: Callable) -> tuple:
        """`fn()` for one branch; the tracer's state is put back afterwards."""
        try:
            return fn()
        finally:
            self.after.append(self.tracer.snapshot())
            self.tracer.restore(self.before)
            if len(self.after) == 2:
                self._collect()

    def _collect(self) -> None:
        owners = {id(t): t for t in self.tracer.state} | self.tracer.grad_owners
        for kind in (0, 1):
            was = self.before[kind]
            for key in dict.fromkeys(k for branch in self.after for k in branch[kind]):
                if any(branch[kind].get(key, was.get(key)) is not was.get(key)
                       for branch in self.after) or key not in was:
                    self.keys.append((kind, key))
        values = []
        for branch in self.after:
            values.append(tuple(self._value(branch, kind, key, owners[key])
                                for kind, key in self.keys))
        flagged = [i for i, (kind, _) in enumerate(self.keys) if kind == 1 and
                   any(side[i] is None or isinstance(side[i], RunTimeGradient)
                       for side in values) and not all(side[i] is None for side in values)]
        for i in flagged:
            like = next(side[i] for side in values if side[i] is not None)
            like = like.value if isinstance(like, RunTimeGradient) else like
            values = [tuple(_with_flag(v, like) if k == i else v for k, v in enumerate(side))
                      for side in values]
        self.flagged = set(flagged)
        self.values = tuple(values)
        self.names = tuple(self.tracer.state_label(owners[key]) + (".grad" if kind else "")
                           for kind, key in self.keys)

    def _value(self, branch, kind: int, key: int, owner: Tensor):
        if key in branch[kind]:
            return branch[kind][key]
        if key in self.before[kind]:
            return self.before[kind][key]
        return owner if kind == 0 else self.tracer.grad_of(owner)

    def set(self, results) -> None:
        """After the cond: its results are the state."""
        for i, ((kind, key), value) in enumerate(zip(self.keys, results)):
            if kind == 0:
                self.tracer.updates[key] = value
            elif i in self.flagged:
                owner = self.tracer.grad_owners[key]
                self.tracer.grads[key] = RunTimeGradient(
                    *value, self.tracer.state_label(owner), self.stmt.loc,
                    self.tracer.grad_locs.get(key))
            else:
                self.tracer.grads[key] = value


def _with_flag(g, like: Tensor) -> tuple:
    """What a branch yields for a gradient that exists on some runs only: its value
    and whether it exists (zeros of `like`'s type and false for None)."""
    if g is None:
        return _Zeros(_type_of(like)), Tensor._from_array(np.array(False))
    if isinstance(g, RunTimeGradient):
        return g.value, g.defined
    return g, Tensor._from_array(np.array(True))


def _common_class(a, b):
    """The class of a cond result whose branches gave `a` and `b`: a stand-in for a
    Python number when both were."""
    return PythonScalar if isinstance(a, PythonScalar) and isinstance(b, PythonScalar) \
        else None


def _refuse_outer_writes(stmt: Statement) -> None:
    """A tensor-dependent statement cannot change a global or nonlocal variable: the
    program runs its Python code only when it is traced (both branches, one loop
    iteration), never on each call."""
    for name, line in stmt.outer_writes.items():
        raise ConversionError(
            f"`{name}` is a global or nonlocal variable, and this tensor-dependent "
            f"{'loop' if stmt.kind != 'if' else '`if`'} changes it at {line.describe()}\n"
            "A compiled program runs Python code only when it is traced, so it cannot "
            f"change `{name}` on each call: keep the value in a tensor the function "
            "returns, or change it outside the compiled code.", stmt.loc)


class _Merged:
    """One output of a ``cond``: the leaf pairs (then, else) it yields, and the
    pattern that rebuilds the variable's value around the cond's results."""

    def __init__(self, name: str, pattern: Pattern, pairs: list):
        self.name, self.pattern, self.pairs = name, pattern, pairs

    @property
    def ir_name(self) -> str | None:
        return self.name if self.name.isidentifier() and not self.name.startswith("__") \
            else None

    def rebuild(self, results: list):
        return self.pattern.fill(results)


def _yield_values(tracer: Tracer, scope, leaves, stmt: Statement) -> list:
    """The IR values a branch yields for `leaves` (zeros for a `_Zeros`)."""
    saved, tracer.scope = tracer.scope, scope
    try:
        with scope.builder.location(stmt.loc):
            return [_yield_value(tracer, scope, t) for t in leaves]
    finally:
        tracer.scope = saved


def _joined_types(tracer: Tracer, merged: list[_Merged], yielded, stmt: Statement) -> list:
    """The cond's result types: each branch's, where they agree; where only sizes
    differ (``x[:3]`` in one branch, ``x`` of ``N`` rows in the other), a fresh symbol
    for each differing dim, bound from the branch that runs."""
    out, start = [], 0
    for m in merged:
        end = start + len(m.pairs)
        for a, b in zip(yielded[0][start:end], yielded[1][start:end]):
            if a.type == b.type:
                out.append(a.type)
            elif isinstance(a.type, TensorType) and isinstance(b.type, TensorType) and \
                    a.type.dtype is b.type.dtype and a.type.rank == b.type.rank:
                out.append(a.type.with_shape([d if d == e else tracer.fresh_dim()
                                              for d, e in zip(a.type.shape, b.type.shape)]))
            else:
                raise ConversionError(
                    f"{_what(m.name)} is {a.type} after the `if` branch and "
                    f"{b.type} after the `else` branch; both branches must give it the same "
                    "dtype and rank", stmt.loc)
        start = end
    return out


_INTERNAL_NAMES = {RETVAL: "the return value", "__jst_ifexp": "the conditional expression",
                   "__jst_bool": "the `and`/`or` expression", "__jst_cond": "the cond's result",
                   "__jst_index": "the loop index", "__jst_ran": "the loop's ran-once flag",
                   _GROWN: "the list the comprehension makes"}


def _what(name: str) -> str:
    """How an error names a statement's output: the user's variable, or what an
    internal one stands for (never its internal name)."""
    if name.startswith("__"):
        return _INTERNAL_NAMES.get(name, "a value of this statement")
    return f"`{name}`" if "." in name else f"variable '{name}'"


def _merge(name: str, a, b, stmt: Statement) -> _Merged:
    """How the two branches' values of one output combine."""
    if isinstance(a, Undefined) or isinstance(b, Undefined):
        if isinstance(a, Undefined) and isinstance(b, Undefined):
            return _Merged(name, Pattern.split(a, lambda leaf: False)[1], [])
        if name == RETVAL:  # the `returned` flag guards the path that did not return
            a, b = (_zeros_like(b), b) if isinstance(a, Undefined) else (a, _zeros_like(a))
        else:
            raise _one_branch_error(name, stmt)
    a, b = _lists_as_values(a, b, name, stmt)
    leaves_a, sa = flatten(a)
    leaves_b, sb = flatten(b)
    if sa != sb:
        raise _structure_error(name, a, b, stmt)
    leaves, positions, pairs = [], [], []
    where = _returns_at(a, b, stmt)
    for k, (x, y) in enumerate(zip(leaves_a, leaves_b)):
        kind, value = _merge_leaf(name, x, y, stmt, where)
        if kind == "same":
            leaves.append(value)
        else:
            leaves.append(None)
            positions.append(k)
            pairs.append(value)
    return _Merged(name, Pattern(sa, leaves, positions), pairs)


class _ListValue:
    """A Python list that one branch of a ``cond`` leaves, yielded as a list value of
    the IR because the branches leave it with different lengths (``outs.append(h)``
    in one of them): each branch builds it from its elements."""

    def __init__(self, items: list, elem: TensorType):
        self.items, self.elem = items, elem
        self.stop_gradient = all(getattr(t, "stop_gradient", True) for t in items)

    def build(self, tracer: Tracer) -> Value:
        return tracer.value_of(TensorArray.new(tracer, self.elem, self.items))


def _lists_as_values(a, b, name: str, stmt: Statement):
    """`a` and `b` (one output from each branch) with every pair of lists at the same
    place that differ in length, or that a loop grows (a `TensorArray` on one side),
    as list values the cond yields."""
    lists = (list, TensorArray)
    if isinstance(a, lists) and isinstance(b, lists) and (
            isinstance(a, TensorArray) or isinstance(b, TensorArray) or len(a) != len(b)):
        elem = _element_type([a, b], name, stmt)
        return tuple(v if isinstance(v, TensorArray) else _ListValue(v, elem) for v in (a, b))
    if type(a) is type(b) and isinstance(a, list | tuple) and len(a) == len(b):
        pairs = [_lists_as_values(x, y, name, stmt) for x, y in zip(a, b)]
        return _rebuilt(a, [p[0] for p in pairs]), _rebuilt(b, [p[1] for p in pairs])
    if type(a) is dict and type(b) is dict and a.keys() == b.keys():
        pairs = {k: _lists_as_values(a[k], b[k], name, stmt) for k in a}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    return a, b


def _rebuilt(like, items: list):
    """A container of `like`'s kind holding `items`."""
    if isinstance(like, list) or type(like) is tuple:
        return type(like)(items)
    return type(like)(*items)  # a namedtuple


def _element_type(lists, name: str, stmt: Statement) -> TensorType:
    """The one type of the tensors in `lists` (Python lists and TensorArrays)."""
    kinds = set()
    for v in lists:
        if isinstance(v, TensorArray):
            kinds.add(v.elem_type)
            continue
        for t in v:
            kinds.add(_type_of(_as_loop_tensor(t)) if isinstance(t, Tensor | numbers.Number)
                      else type(t).__name__)
    if len(kinds) != 1 or not isinstance(next(iter(kinds)), TensorType):
        raise ConversionError(f"{_what(name)} is a list that the branches of this "
                              "tensor-dependent `if` leave with different lengths, so it "
                              "must hold tensors of one dtype and shape; it holds "
                              + ", ".join(sorted(map(str, kinds))), stmt.loc)
    return kinds.pop()


def _returns_at(a, b, stmt: Statement) -> str:
    """For the values of two `return`s, the text naming both lines, for an error."""
    if not (isinstance(a, ReturnValue) and isinstance(b, ReturnValue)):
        return ""
    lines = sorted({a.line, b.line})
    return "\nThe `return`s: " + ", ".join(Location(stmt.loc.file, n).describe() for n in lines)


def _merge_leaf(name: str, a, b, stmt: Statement, where: str = ""):
    """("same", value) when both branches give one Python value, or ("tensor", (a, b))
    when the cond yields it. `where`: more for an error to say where the values come
    from."""
    from ..tensor.convert import as_tensor
    if isinstance(a, _ListValue | TensorArray) or isinstance(b, _ListValue | TensorArray):
        return "tensor", (a, b)
    if isinstance(a, Tensor | _Zeros) or isinstance(b, Tensor | _Zeros):
        if isinstance(a, _Zeros) or isinstance(b, _Zeros):
            return "tensor", (a, b)
        like = a if isinstance(a, Tensor) else b
        other = b if like is a else a
        if not isinstance(other, Tensor | numbers.Number):
            raise ConversionError(f"{_what(name)} is a tensor in one branch and "
                                  f"a {type(other).__name__} in the other{where}", stmt.loc)
        return "tensor", (as_tensor(a, like=like), as_tensor(b, like=like))
    if a is b or (isinstance(a, numbers.Number | str | type(None)) and type(a) is type(b)
                  and a == b):
        return "same", a
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        dtype = np.float64 if isinstance(a, float) or isinstance(b, float) else np.int64
        return "tensor", (_as_loop_tensor(dtype(a)), _as_loop_tensor(dtype(b)))
    raise ConversionError(f"{_what(name)} takes different Python values in the "
                          f"two branches of a tensor-dependent `if` ({_shown(a)} and "
                          f"{_shown(b)}){where}", stmt.loc)


def _shown(value) -> str:
    """`value` as an error shows it: a function the user wrote by its name and line
    (its repr names the generated function it was made in), anything else its repr."""
    code = getattr(value, "__code__", None)
    if isinstance(value, types.FunctionType) and code is not None:
        return f"the function {value.__name__} of line {code.co_firstlineno}"
    return repr(value)


def _zeros_like(value):
    """`value` with every tensor leaf replaced by zeros of its type."""
    leaves, structure = flatten(value)
    return unflatten(structure, [_Zeros(_type_of(v)) if isinstance(v, Tensor) else v
                                 for v in leaves])


def _type_of(t: Tensor) -> TensorType:
    return t._ir.type if is_traced(t) else TensorType(dtypes.from_numpy(t._value),
                                                      t._value.shape)


def _one_branch_error(name: str, stmt: Statement) -> ConversionError:
    use = stmt.uses.get(name)
    where = f", and it is used after the `if` at {use.describe()}" if use else ""
    python = "AttributeError" if "." in name else "UnboundLocalError"
    return ConversionError(
        f"{_what(name)} is assigned in only one branch of this tensor-dependent `if`"
        f"{where}\nWhen the other branch runs it has no value (Python would raise "
        f"{python}). Assign it before the `if`, or in both branches.", stmt.loc)


def _structure_error(name: str, a, b, stmt: Statement) -> ConversionError:
    if isinstance(a, ReturnValue) and isinstance(b, ReturnValue):
        first, second = sorted((a, b), key=lambda r: r.line)
        file = stmt.loc.file
        return ConversionError(
            "a tensor-dependent `if` decides between two `return`s of different "
            f"structures: {describe(first)} here and {describe(second)} at "
            f"{Location(file, second.line).describe()}\nBoth must return the same nesting of "
            "tuples, lists and dicts.", Location(file, first.line))
    return ConversionError(
        f"{_what(name)} is {describe(a)} after the `if` branch and {describe(b)} after "
        "the `else` branch; both branches must give it the same structure", stmt.loc)


def _yield_value(tracer: Tracer, scope, t):
    if isinstance(t, _Zeros):
        return scope.builder.zeros(_placeholder_type(tracer, t.type))
    if isinstance(t, _ListValue):
        return t.build(tracer)
    return tracer.value_of(t)


def _placeholder_type(tracer: Tracer, t: TensorType) -> TensorType:
    """`t` with 0 for each size only the run knows (a list's length from a loop):
    zeros of that size would need it before the op that computes it runs, and a
    `_Zeros` is never read (the cond joins the sizes into a fresh symbol)."""
    known = tracer.input_symbols()
    return t.with_shape([d if {s for s in symbols_of(d)} <= known else 0 for d in t.shape])


# ---------------------------------------------------------------- tracing while

class _LoopState:
    """A loop's carried variables as leaves: the tensor leaves are what the ``while``
    carries; every other leaf is a Python value that the body must leave unchanged."""

    def __init__(self, values):
        self.before = list(values)
        self.structures, self.leaves, self.owner = [], [], []
        for k, value in enumerate(values):
            leaves, structure = flatten(value)
            self.structures.append(structure)
            self.leaves += leaves
            self.owner += [k] * len(leaves)
        self.carried = [i for i, leaf in enumerate(self.leaves) if isinstance(leaf, Tensor)]

    def values(self, carried: Sequence) -> list:
        """The variables' values with the carried leaves replaced by `carried`."""
        leaves = list(self.leaves)
        for i, v in zip(self.carried, carried):
            leaves[i] = v
        out, start = [], 0
        for structure in self.structures:
            out.append(unflatten(structure, leaves[start:start + structure.n_leaves]))
            start += structure.n_leaves
        return out

    def classes(self) -> list:
        """Per carried leaf, the class its traced values take: a stand-in for a Python
        number where the loop started from one (a counter prints as a number)."""
        return [PythonScalar if isinstance(self.leaves[i], PythonScalar) else None
                for i in self.carried]

    def variables(self, stmt: Statement) -> list[str]:
        """The variable each carried leaf belongs to."""
        return [stmt.outputs[self.owner[i]] for i in self.carried]

    def ir_names(self, stmt: Statement) -> list[str | None]:
        """IR names of the carried leaves: the user's variable, when it is one tensor."""
        return [name if name.isidentifier() and not name.startswith("__")
                and self.structures[self.owner[i]].kind is None else None
                for i, name in zip(self.carried, self.variables(stmt))]


_RAN = "__jst_ran"


def _trace_while(cond_fn: Callable, body_fn: Callable, values: tuple, stmt: Statement,
                 checked: bool = False, trips: Dim | None = None, outer: tuple = ()):
    _refuse_outer_writes(stmt)
    unbound = [n for n, v in zip(stmt.outputs, values) if isinstance(v, Undefined)
               and n in stmt.uses and n != RETVAL]
    if unbound and not checked:
        return _checked_while(cond_fn, body_fn, values, stmt, unbound, outer)
    tracer = _tracer()
    values, growth = _initial_values(tracer, body_fn, list(values), stmt, outer)
    loop = _LoopState(values)
    inits = [tracer.value_of(loop.leaves[i]) for i in loop.carried]
    types_ = [v.type for v in inits]
    names = loop.ir_names(stmt)
    classes = loop.classes()
    cond_scope, test = tracer.trace_region(
        types_, lambda *a: _predicate(cond_fn(*loop.values(a))), names, classes, loop=True)
    _finish(tracer, cond_scope, [test], "condition", stmt)
    effects = _Effects(stmt, _objects(stmt, stmt.outputs, values, outer))
    body_scope, out = tracer.trace_region(types_, lambda *a: effects.run_loop_body(
        lambda: body_fn(*loop.values(a)), stmt), names, classes, loop=True)
    yields = _next_carried(loop, out, stmt)
    seed = _carry_seed(tracer, cond_scope, body_scope, len(inits), stmt)
    if seed is not None:
        inits, types_, names = [*inits, seed[0]], [*types_, seed[0].type], [*names, "seed"]
        yields.append(seed[1])
    _finish(tracer, body_scope, yields, "yield", stmt,
            list(zip(loop.variables(stmt), types_)))
    op = tracer.aligned_region_op("while", [], [cond_scope, body_scope], len(inits), inits,
                                  types_, names)
    results = loop.values([tracer.wrap(r, False, cls) for r, cls in zip(op.results, classes)])
    for (k, *path), (start, per_iteration) in growth.items():  # alike growth, alike long
        size = None if trips is None or per_iteration < 0 else \
            dim_add(start, dim_mul(per_iteration, trips))
        grown = results[k]
        for key in path:
            grown = grown[key]
        for array in _arrays(grown):
            tracer.same_length(array._ir, (op, start, per_iteration) if size is None else size,
                               size)
    before = dict(zip(stmt.outputs, values))
    return tuple(_write_back(stmt, before, name, v) for name, v in zip(stmt.outputs, results))


# Knuth's MMIX linear congruential step: each loop iteration's seed from the last one
_SEED_MULTIPLIER, _SEED_INCREMENT = 6364136223846793005, 1442695040888963407


def _carry_seed(tracer, cond_scope, body_scope, fixed: int, stmt: Statement):
    """When a loop's condition or body draws random numbers, the loop carries their
    seed (after its `fixed` carried values): it starts from a fresh seed of the code
    around the loop, and each iteration yields the next one of a 64-bit linear
    congruential sequence, so each iteration (of each run of an enclosing loop) draws
    anew, as eager code does. Returns (the initial seed, the body's next seed), or
    None when neither region draws."""
    if cond_scope.seed is None and body_scope.seed is None:
        return None
    for scope in (cond_scope, body_scope):
        seed = scope.loop_seed()
        args = scope.block.args
        k = next(i for i, a in enumerate(args) if a is seed)
        order = [i for i in range(len(args)) if i != k]
        order.insert(fixed, k)
        scope.block.permute_args(order)
    b = body_scope.builder
    with b.location(stmt.loc):
        step = b.mul(body_scope.seed, b.constant(_SEED_MULTIPLIER, "int64"))
        following = b.add(step, b.constant(_SEED_INCREMENT, "int64"))
    return tracer.value_of(tracer.next_seed()), tracer.wrap(following)


def _checked_while(cond_fn, body_fn, values, stmt: Statement, unbound: list[str],
                   outer: tuple):
    """A loop that binds variables read after it, which had no value before it: they
    start as zeros, and a carried flag records whether the body ran, so that reading
    them after zero iterations raises UnboundLocalError as in Python."""
    flagged = dataclasses.replace(stmt, params=(*stmt.params, _RAN),
                                  outputs=(*stmt.outputs, _RAN))
    out = _trace_while(lambda *v: cond_fn(*v[:-1]), lambda *v: (*body_fn(*v[:-1]), True),
                       (*values, False), flagged, checked=True, outer=outer)
    from ..dispatch import apply
    for name in unbound:
        use = stmt.uses[name]
        apply("assert", [out[-1]], {
            "msg": f"{use}: {_what(name)} is read here, but the tensor-dependent loop at "
                   f"{stmt.loc} that assigns it ran zero times", "error": "UnboundLocalError"})
    return out[:-1]


def _next_carried(loop: _LoopState, out: Sequence, stmt: Statement) -> list:
    """The carried leaves a body iteration ends with; the other leaves must not have
    changed, and every variable must keep its structure."""
    leaves = []
    for k, (name, value) in enumerate(zip(stmt.outputs, out)):
        new, structure = flatten(value)
        if structure != loop.structures[k]:
            raise _loop_structure_error(name, loop.before[k], value, stmt)
        leaves += new
    carried = set(loop.carried)
    for i, (old, new) in enumerate(zip(loop.leaves, leaves)):
        if i not in carried and new is not old:
            name = stmt.outputs[loop.owner[i]]
            raise ConversionError(
                f"{_what(name)} is {old!r} before the loop and "
                f"{'a tensor' if isinstance(new, Tensor) else repr(new)} after an iteration "
                "of this tensor-dependent loop, which carries only tensors and numbers; "
                "give it a tensor value before the loop (for example paddle.zeros_like)",
                stmt.loc)
    return [leaves[i] for i in loop.carried]


def _loop_structure_error(name: str, before, after, stmt: Statement) -> ConversionError:
    change = stmt.mutated.get(name)
    how = f" (it is changed in place at {change.describe()})" if change else ""
    return ConversionError(
        f"{_what(name)} is {describe(before)} when a loop iteration starts and "
        f"{describe(after)} when it ends{how}; a tensor-dependent loop keeps the structure "
        "of what it carries", stmt.loc)


def _initial_values(tracer, body_fn, values: list, stmt: Statement, outer: tuple):
    """Initial values for loop variables that are Python numbers, not yet assigned, or
    lists: one trial trace of the body (discarded) shows what the loop makes of them.
    A number takes the dtype the loop gives it (``s = 0; s = s + x.sum()`` carries a
    float); a variable first assigned in the body starts as zeros of its type; a list
    whose length the body changes (``outs.append(h)``) becomes a `TensorArray`.
    Returns the values and, for each such list that every iteration grows by the same
    number of elements, its place (the variable's index, then the keys that reach it
    inside dicts and tuples) and (length before the loop, growth per iteration)."""
    start = [v if isinstance(v, Undefined) else _numbers_as_tensors(v) for v in values]
    if all(s is v and not isinstance(v, Undefined) and not _holds_list(v)
           for s, v in zip(start, values)):
        return values, {}
    known = [k for k, v in enumerate(start) if not isinstance(v, Undefined)]
    loop = _LoopState([start[k] for k in known])
    types_ = [tracer.value_of(loop.leaves[i]).type for i in loop.carried]

    def trial(*args):
        trial_values = list(start)
        for k, v in zip(known, loop.values(args)):
            trial_values[k] = _lists_as(_Probe, v)
        return tuple(_lists_as(list, o) for o in body_fn(*trial_values))

    effects = _Effects(stmt, _objects(stmt, stmt.outputs, values, outer))
    scope, out = tracer.trace_region(
        types_, lambda *a: effects.run_loop_body(lambda: trial(*a), stmt), None,
        loop.classes(), loop=True)
    saved, tracer.scope = tracer.scope, scope
    try:
        out_types = [[_loop_type(tracer, leaf, name, stmt) for leaf in flatten(v)[0]]
                     for name, v in zip(stmt.outputs, out)]
    finally:
        tracer.scope = saved
    result, growth = [], {}
    for k, (name, before, v, leaf_types) in enumerate(zip(stmt.outputs, values, out,
                                                           out_types)):
        if isinstance(before, Undefined):
            result.append(_zeros_of(name, v, leaf_types, stmt))
        elif type(before) is list and (isinstance(v, TensorArray) or
                                       isinstance(v, list) and len(v) != len(before)):
            result.append(_tensor_array(tracer, name, before, v, leaf_types, stmt))
            if isinstance(v, list):
                growth[(k,)] = (len(before), len(v) - len(before))
        else:
            result.append(_grown_inside(tracer, name, before, v, leaf_types, stmt,
                                        growth, (k,)))
    return result, growth


def _holds_list(value) -> bool:
    """Whether `value` is a list or holds one in its dicts and tuples."""
    if type(value) is list:
        return True
    if type(value) is dict:
        return any(_holds_list(v) for v in value.values())
    return type(value) is tuple and any(_holds_list(v) for v in value)


def _lists_as(kind: type, value):
    """`value` with each list in it (itself, or in its dicts and tuples) made a
    `kind`: a `_Probe` for a trial iteration, a list again after it."""
    if isinstance(value, list):
        return kind(value)
    if type(value) is dict:
        return {k: _lists_as(kind, v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_lists_as(kind, v) for v in value)
    return value


def _grown_inside(tracer, name: str, before, after, leaf_types, stmt: Statement,
                  growth: dict, place: tuple):
    """`before` (a loop variable's value) as the loop carries it, given its value
    `after` a trial iteration whose leaves have `leaf_types`: each list in its dicts
    and tuples whose length the body changes as a `TensorArray`
    (``hist["h"].append(h)``; its growth recorded in `growth` under its place), Python
    numbers as tensors of the loop's dtype."""
    types = iter(leaf_types)

    def taken(value) -> list:
        return [next(types, None) for _ in flatten(value)[0]]

    def walk(b, a, at: tuple):
        if type(b) is list and (isinstance(a, TensorArray) or
                                isinstance(a, list) and len(a) != len(b)):
            if isinstance(a, list):
                growth[at] = (len(b), len(a) - len(b))
            return _tensor_array(tracer, name, b, a, taken(a), stmt)
        if type(b) is dict and type(a) is dict and list(b) == list(a):
            return {k: walk(b[k], a[k], (*at, k)) for k in b}
        if type(b) is tuple and type(a) is tuple and len(a) == len(b):
            return tuple(walk(x, y, (*at, i)) for i, (x, y) in enumerate(zip(b, a)))
        return _cast_numbers(b, taken(a), flatten(a)[0])
    return walk(before, after, place)


class _Probe(list):
    """A list in a loop body's trial trace: it only has to show that the body changes
    its length and what type goes in, so a read at a traced index gives its last
    element and Paddle's ``array_write`` appends."""

    def __getitem__(self, i):
        if is_traced(i):
            return list.__getitem__(self, -1)
        return list.__getitem__(self, i)

    read = __getitem__

    def write(self, i, x):
        self.append(x)
        return self

    def length(self):
        return len(self)


def _tensor_array(tracer, name: str, before: list, after, leaf_types, stmt: Statement):
    """The `TensorArray` a loop carries for the list `before`, which the body grows
    or shrinks to `after` (its trial value, whose leaves have `leaf_types`): its
    elements must all have one type; or, for a list of tuples of tensors, a
    `TupleArray` of one TensorArray per position."""
    items = [*before, *after] if isinstance(after, list) else []
    structures = {flatten(x)[1] for x in items}
    if len(structures) == 1 and (item := structures.pop()) is not LEAF:
        width = item.n_leaves
        fields = [TensorArray.new(tracer, _one_type(name, leaf_types[j::width], stmt),
                                  [flatten(x)[0][j] for x in before], stmt.loc)
                  for j in range(width)]
        return TupleArray(item, fields)
    elem = _one_type(name, [t.elem if isinstance(t, ListType) else t for t in leaf_types],
                     stmt)
    return TensorArray.new(tracer, elem, before, stmt.loc)


def _one_type(name: str, types_, stmt: Statement) -> TensorType:
    kinds = set(types_)
    if len(kinds) != 1 or None in kinds:
        shown = ", ".join(sorted(str(t) for t in kinds))
        raise ConversionError(f"{_what(name)} is a list that changes length inside a "
                              f"tensor-dependent loop, so it must hold tensors of one dtype "
                              f"and shape; it holds {shown}", stmt.loc)
    return kinds.pop()


def _numbers_as_tensors(value):
    leaves, structure = flatten(value)
    if not any(isinstance(v, numbers.Number) for v in leaves):
        return value
    return unflatten(structure, [_as_loop_tensor(v) if isinstance(v, numbers.Number) else v
                                 for v in leaves])


def _loop_type(tracer, leaf, name: str, stmt: Statement) -> TensorType | None:
    if isinstance(leaf, Tensor | numbers.Number):
        return tracer.value_of(_as_loop_tensor(leaf)).type
    if isinstance(leaf, Undefined):
        raise ConversionError(f"{_what(name)} is used in a tensor-dependent loop "
                              "before it is assigned", stmt.loc)
    return None


def _zeros_of(name: str, value, leaf_types, stmt: Statement):
    """The value a variable first assigned in the loop body starts with: zeros of the
    types the body gives its tensors."""
    from ..tensor.creation import zeros
    known = _tracer().input_symbols()
    leaves, structure = flatten(value)
    out = []
    for leaf, t in zip(leaves, leaf_types):
        if t is None:
            out.append(leaf)
            continue
        if not {s for d in t.shape for s in symbols_of(d)} <= known:
            raise ConversionError(f"{_what(name)} is first assigned inside a "
                                  f"tensor-dependent loop with the type {t}, whose size the "
                                  "loop computes, and used after the loop; assign it before "
                                  "the loop", stmt.loc)
        out.append(zeros(list(t.shape), t.dtype))
    return unflatten(structure, out)


def _cast_numbers(value, leaf_types, after):
    """Python numbers of `value` as tensors of the dtype the loop body gives them,
    stand-ins for numbers only where the body leaves one (`after`: its trial
    iteration's leaves): ``s = 0.0; s = s + x.sum()`` carries a tensor, which `s` is
    in eager code after an iteration, a float32 one."""
    from ..tensor.convert import cast
    leaves, structure = flatten(value)
    out = []
    for leaf, t, next_leaf in zip(leaves, leaf_types, after):
        if isinstance(leaf, numbers.Number):
            leaf = _as_loop_tensor(leaf)
            if not isinstance(next_leaf, PythonScalar):
                leaf = Tensor._from_array(leaf._value)
            if t is not None and leaf.dtype is not t.dtype:
                leaf = cast(leaf, t.dtype)
        out.append(leaf)
    return unflatten(structure, out)


def _as_loop_tensor(v) -> Tensor:
    """A loop variable as a tensor: Python numbers become 0-d tensors (i64 / f64 / bool,
    `NUMBER_DTYPES`: a float is a double, as Python's and as Paddle's ``to_static``
    makes it) that stand for numbers (`PythonScalar`: they print as numbers)."""
    if isinstance(v, Tensor):
        return v
    dtype = np.bool_ if isinstance(v, bool) else np.int64 if isinstance(v, numbers.Integral) \
        else np.float64
    return PythonScalar._from_array(np.asarray(v, dtype=dtype))


def _finish(tracer, scope, outs, terminator: str, stmt: Statement, expected=()):
    """End a loop region with `terminator`; `expected` gives (variable, type) of each
    carried value the body yields."""
    saved, tracer.scope = tracer.scope, scope
    try:
        values = [tracer.value_of(_as_loop_tensor(o)) for o in outs]
        for v, (name, t) in zip(values, expected):
            if v.type != t:
                raise ConversionError(
                    f"{_what(name)} is {t} when a loop iteration starts and "
                    f"{v.type} when it ends; a loop variable keeps its dtype and shape "
                    "(irflow does not yet carry values whose size changes across "
                    "iterations)", stmt.loc)
        with scope.builder.location(stmt.loc):
            scope.builder.create(terminator, values)
    except ShapeError as e:
        raise ConversionError(e.message, stmt.loc) from None
    finally:
        tracer.scope = saved
    return values


# ---------------------------------------------------------------- functional control flow

def cond(pred, true_fn: Callable | None, false_fn: Callable | None):
    """``paddle.static.nn.cond``: the result of `true_fn()` or `false_fn()`; for a traced
    `pred`, both run into the regions of a ``cond`` (results may be nested structures
    of tensors; a missing function returns None)."""
    branches = [call(fn) if fn is not None else (lambda: None) for fn in (true_fn, false_fn)]
    if not is_traced(pred):
        return (branches[0] if pred else branches[1])()
    (out,) = _trace_cond(_predicate(pred), tuple((lambda f=f: (f(),)) for f in branches),
                         _expression("__jst_cond"))
    return out


def while_loop(cond_fn: Callable, body_fn: Callable, loop_vars: Sequence) -> list:
    """``paddle.static.nn.while_loop``: run `body_fn` on the loop variables while
    `cond_fn` of them is true; returns their final values as a list."""
    cond_fn, body_fn = call(cond_fn), call(body_fn)
    names = tuple(f"loop_vars[{i}]" for i in range(len(loop_vars)))
    stmt = Statement("while", user_location(), names, names)

    def body(*values):
        out = body_fn(*values)
        out = tuple(out) if isinstance(out, tuple | list) else (out,)
        if len(out) != len(values):
            raise ConversionError(f"while_loop's body returns {len(out)} values for "
                                  f"{len(values)} loop variables", stmt.loc)
        return out

    return list(while_(cond_fn, body, tuple(loop_vars), stmt))
