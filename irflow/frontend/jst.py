"""Run-time helpers that converted code calls (`irflow.frontend.convert`).

Each helper looks at its condition or iterable: Python values (and concrete tensors)
keep plain Python semantics; traced tensors turn the statement into IR through the
active `Tracer`. The state of a statement is a tuple of the values of the variables
it assigns, in the order of `names`.
"""
from __future__ import annotations

import builtins
import numbers
import types
from typing import Callable, Sequence

import numpy as np

from ..dispatch import state as dispatch_state
from ..dispatch import user_location
from ..errors import ConversionError, ShapeError
from ..ir import dtypes
from ..ir.types import TensorType
from ..tensor.tensor import Tensor
from .convert import FLAG_PREFIX
from .tracer import Tracer, Undefined


def is_traced(x) -> bool:
    return isinstance(x, Tensor) and x._value is None


def ld(load: Callable, name: str):
    """The value of a variable, or `Undefined` if it has none yet."""
    try:
        return load()
    except NameError:
        return Undefined(name, user_location(), "is used before it is assigned")


NO_RETURN_VALUE = Undefined("the return value", None, "is not set: no `return` ran")


def returned_value(value):
    """What a function converted to a single exit returns: None if no `return` ran."""
    return None if isinstance(value, Undefined) else value


def named(value, name: str):
    """Give a traced value the user's variable name (for the printed IR)."""
    if is_traced(value) and value._ir.name is None:
        value._ir.name = name
    return value


# ---------------------------------------------------------------- operators

def not_(x):
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
    pred = _predicate(a)
    rhs = (lambda: _as_bool(right())), (lambda: pred)
    then_fn, else_fn = rhs if take_right_if else rhs[::-1]
    (out,) = _trace_cond(pred, lambda: (then_fn(),), lambda: (else_fn(),), ("__jst_bool",))
    return out


def _as_bool(x) -> Tensor:
    from ..tensor.convert import as_tensor, cast
    return _predicate(cast(as_tensor(x), dtypes.bool_))


def ifexp(test, body: Callable, orelse: Callable):
    if is_traced(test):
        (out,) = _trace_cond(_predicate(test), lambda: (body(),), lambda: (orelse(),),
                             ("__jst_ifexp",))
        return out
    return body() if test else orelse()


def assert_(test, msg=None) -> None:
    """Assertions on Python values run; on traced values they cannot (no value yet)."""
    if not is_traced(test):
        assert test, msg


# ---------------------------------------------------------------- calls

def _print(*args, sep=" ", end="\n", file=None, flush=False):
    """While tracing, `print` becomes a `print` op: it prints each time the program
    runs, in the branch or iteration that reaches it."""
    if dispatch_state.tracer is None or file is not None:
        return builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
    tensors = [a for a in args if is_traced(a)]
    fmt = sep.join("{}" if is_traced(a) else str(a).replace("{", "{{").replace("}", "}}")
                   for a in args) + ("" if end == "\n" else end)
    from ..dispatch import apply
    apply("print", tensors, {"fmt": fmt})


def _to_float(x=0.0):
    return _scalar(x, dtypes.float32) if is_traced(x) else builtins.float(x)


def _to_int(x=0, *base):
    return _scalar(x, dtypes.int64) if is_traced(x) else builtins.int(x, *base)


def _to_bool(x=False):
    return _as_bool(x) if is_traced(x) else builtins.bool(x)


def _scalar(x: Tensor, dtype) -> Tensor:
    from ..tensor.convert import cast
    return cast(x.item(), dtype)


def _len(x):
    if is_traced(x):
        shape = x._ir.type.shape
        if shape and isinstance(shape[0], int):
            return shape[0]
        from ..dispatch import apply
        return apply("numel", (x,), {"axis": (0,)})
    return builtins.len(x)


def shape_of(x):
    """``x.shape`` in converted code: for a traced tensor, its symbolic dims are i64
    scalars computed when the program runs (``numel`` of that axis) instead of Paddle's
    -1, so ``range(x.shape[0])`` loops the right number of times and
    ``reshape(x, [x.shape[0], -1])`` keeps the symbol."""
    if not is_traced(x):
        return x.shape
    from ..dispatch import apply
    dims = []
    for axis, d in enumerate(x._ir.type.shape):
        if isinstance(d, int):
            dims.append(d)
        else:
            size = apply("numel", (x,), {"axis": (axis,)})
            _tracer().name_dim(size, d)
            dims.append(size)
    return dims


class RangeSpec:
    """``range(start, stop, step)`` whose bounds may be traced tensors."""

    def __init__(self, *args):
        self.start, self.stop, self.step = (0, args[0], 1) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) > 2 else 1)


def _range(*args):
    if any(is_traced(a) for a in args):
        return RangeSpec(*args)
    return builtins.range(*(a.item() if isinstance(a, Tensor) else a for a in args))


_BUILTINS = {builtins.print: _print, builtins.float: _to_float, builtins.int: _to_int,
             builtins.bool: _to_bool, builtins.len: _len, builtins.range: _range}


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
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if isinstance(target, types.FunctionType) and _is_user_code(target):
        from .convert import Unconvertible, convert_function
        try:
            return convert_function(fn)
        except Unconvertible:  # a lambda, or no source: run it as it is
            return fn
    return fn


def _is_user_code(fn: types.FunctionType) -> bool:
    import os
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    filename = fn.__code__.co_filename
    return not (filename.startswith(package) or filename.startswith("<")
                or "site-packages" in filename or fn.__module__ in ("numpy", "builtins"))


# ---------------------------------------------------------------- statements

def if_(test, true_fn: Callable, false_fn: Callable, init: tuple, names: tuple):
    if is_traced(test):
        return _trace_cond(_predicate(test), lambda: true_fn(*init), lambda: false_fn(*init),
                           names)
    return true_fn(*init) if test else false_fn(*init)


def while_(cond_fn: Callable, body_fn: Callable, init: tuple, names: tuple):
    values = init
    while True:
        test = cond_fn(*values)
        if is_traced(test):  # from here on the loop runs in the program
            return _trace_while(cond_fn, body_fn, values, names)
        if not test:
            return values
        values = body_fn(*values)


def for_(iterable, body_fn: Callable, init: tuple, names: tuple, stop: Callable | None = None):
    """``for``: a Python iterable runs in Python; a range with traced bounds or a traced
    tensor becomes a while loop over an index."""
    if isinstance(iterable, RangeSpec):
        return _for_range(iterable, body_fn, init, names, stop)
    if is_traced(iterable):
        return _for_tensor(iterable, body_fn, init, names, stop)
    if isinstance(iterable, builtins.range):
        return _for_range(RangeSpec(iterable.start, iterable.stop, iterable.step), body_fn,
                          init, names, stop)
    values = init
    for item in iterable:
        if stop is not None:
            halt = stop(*values)
            if is_traced(halt):
                raise ConversionError("`break` on a tensor condition inside a loop over a "
                                      "Python iterable is not supported; loop over a range",
                                      user_location())
            if halt:
                break
        values = body_fn(item, *values)
    return values


_INDEX = "__jst_index"


def _for_range(r: RangeSpec, body_fn, init, names, stop):
    step = r.step
    if isinstance(step, numbers.Number) and step == 0:
        raise ConversionError("range() step must not be zero", user_location())

    def cond(i, *values):
        more = (i < r.stop) if not isinstance(step, numbers.Number) or step > 0 else (i > r.stop)
        if stop is None:
            return more
        return and_(lambda: not_(stop(*values)), lambda: more)

    def body(i, *values):
        return (i + step, *body_fn(i, *values))

    return while_(cond, body, (r.start, *init), (_INDEX, *names))[1:]


def _for_tensor(x: Tensor, body_fn, init, names, stop):
    """``for row in x``: rows x[i] for i in range(len(x))."""
    from ..tensor.manipulation import getitem
    return _for_range(RangeSpec(_len(x)), lambda i, *values: body_fn(getitem(x, i), *values),
                      init, names, stop)


# ---------------------------------------------------------------- tracing cond and while

def _tracer() -> Tracer:
    return dispatch_state.tracer


def _predicate(x: Tensor) -> Tensor:
    """`x` as a bool scalar tensor: the condition of an `if` or `while`."""
    from ..tensor.convert import as_tensor, cast
    from ..tensor.manipulation import reshape
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


def _trace_cond(pred: Tensor, true_fn: Callable, false_fn: Callable, names: Sequence[str]):
    tracer = _tracer()
    loc = user_location()
    pred_value = tracer.value_of(pred)
    then_scope, then_out = tracer.trace_region([], lambda: tuple(true_fn()))
    else_scope, else_out = tracer.trace_region([], lambda: tuple(false_fn()))
    merged, yields = [], ([], [])
    for name, a, b in zip(names, then_out, else_out):
        kind, value = _merge(name, a, b, loc)
        merged.append((kind, value))
        if kind == "tensor":
            yields[0].append(value[0])
            yields[1].append(value[1])
    yielded = []
    for scope, outs in ((then_scope, yields[0]), (else_scope, yields[1])):
        saved, tracer.scope = tracer.scope, scope
        try:
            with scope.builder.location(loc):
                values = [_yield_value(tracer, scope, t) for t in outs]
        finally:
            tracer.scope = saved
        yielded.append(values)
        with scope.builder.location(loc):
            scope.builder.create("yield", values)
    _check_same_types(names, merged, yielded, loc)
    result_names = [n for n, (kind, _) in zip(names, merged) if kind == "tensor"]
    op = tracer.aligned_region_op("cond", [pred_value], [then_scope, else_scope], 0, [],
                                  [v.type for v in yielded[0]],
                                  [n if not n.startswith("__") else None for n in result_names])
    results = iter(op.results)
    out = []
    for (kind, value), name in zip(merged, names):
        if kind == "tensor":
            stop = value[0].stop_gradient and value[1].stop_gradient
            out.append(tracer.wrap(next(results), stop))
        else:
            out.append(value)
    return tuple(out)


def _merge(name: str, a, b, loc):
    """How the two branches' values of one variable combine: ("tensor", (a, b)) to
    yield, or ("same", value) when both are the same Python value."""
    from ..tensor.convert import as_tensor
    a_undef, b_undef = isinstance(a, Undefined), isinstance(b, Undefined)
    if a_undef or b_undef:
        if a_undef and b_undef:
            return "same", a
        if name.startswith(FLAG_PREFIX):  # a return value: the flag guards the other path
            present = b if a_undef else a
            if isinstance(present, Tensor):
                filler = _Zeros(present._ir.type if is_traced(present) else
                                TensorType(dtypes.from_numpy(present._value),
                                           present._value.shape))
                return "tensor", (filler, present) if a_undef else (present, filler)
            return "same", present
        return "same", Undefined(name, loc, "is assigned in only one branch of this `if`, "
                                            "so it has no value when the other runs")
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        like = a if isinstance(a, Tensor) else b
        if not isinstance(a, Tensor | numbers.Number) or not isinstance(b, Tensor | numbers.Number):
            raise ConversionError(f"variable '{name}' is a tensor in one branch and a "
                                  f"{type(b if like is a else a).__name__} in the other", loc)
        return "tensor", (as_tensor(a, like=like), as_tensor(b, like=like))
    if isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b) and \
            any(isinstance(v, Tensor) for v in (*a, *b)):
        raise ConversionError(f"variable '{name}' holds a {type(a).__name__} of tensors that "
                              "changes in a tensor-dependent `if`; assign its tensors to "
                              "separate variables", loc)
    if a is b or (isinstance(a, numbers.Number | str | type(None)) and type(a) is type(b)
                  and a == b):
        return "same", a
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        like = Tensor._from_array(np.asarray(a if isinstance(a, float) else b,
                                             dtype=np.float32 if isinstance(a, float) or
                                             isinstance(b, float) else np.int64))
        return "tensor", (as_tensor(a, like=like), as_tensor(b, like=like))
    raise ConversionError(f"variable '{name}' takes different Python values in the two "
                          f"branches of a tensor-dependent `if` ({a!r} and {b!r})", loc)


class _Zeros:
    """Zeros of a type: what a branch yields for a return value it does not set."""

    def __init__(self, t: TensorType):
        self.type = t
        self.stop_gradient = True


def _yield_value(tracer: Tracer, scope, t):
    if isinstance(t, _Zeros):
        return scope.builder.zeros(t.type)
    return tracer.value_of(t)


def _check_same_types(names, merged, yielded, loc) -> None:
    tensor_names = [n for n, (kind, _) in zip(names, merged) if kind == "tensor"]
    for name, a, b in zip(tensor_names, yielded[0], yielded[1]):
        if a.type != b.type:
            raise ConversionError(f"variable '{name}' is {a.type} after the `if` branch and "
                                  f"{b.type} after the `else` branch; both branches must give "
                                  "it the same dtype and shape", loc)


def _trace_while(cond_fn: Callable, body_fn: Callable, init: tuple, names: Sequence[str]):
    tracer = _tracer()
    loc = user_location()
    values = list(init)
    carried = [i for i, v in enumerate(values)
               if isinstance(v, Tensor | numbers.Number | Undefined)]
    if any(isinstance(values[i], numbers.Number | Undefined) for i in carried):
        values = _initial_values(tracer, body_fn, values, carried, names, loc)
    inits = [tracer.value_of(values[i]) for i in carried]
    types_ = [v.type for v in inits]

    arg_names = _names(names, carried)
    cond_scope, test = tracer.trace_region(
        types_, lambda *a: cond_fn(*_substitute(values, carried, a)), arg_names)
    _finish(tracer, cond_scope, [_predicate(test)], "condition", loc)
    body_scope, out = tracer.trace_region(
        types_, lambda *a: body_fn(*_substitute(values, carried, a)), arg_names)
    for i, v in enumerate(out):
        if i not in carried and v is not values[i]:
            raise ConversionError(f"variable '{names[i]}' changes inside a tensor-dependent "
                                  f"loop but is not a tensor or number ({type(v).__name__})", loc)
    _finish(tracer, body_scope, [out[i] for i in carried], "yield", loc,
            [names[i] for i in carried], types_)
    op = tracer.aligned_region_op("while", [], [cond_scope, body_scope], len(carried), inits,
                                  types_, arg_names)
    result = list(values)
    for i, r in zip(carried, op.results):
        result[i] = tracer.wrap(r, stop_gradient=False)
    return tuple(result)


def _names(names, indices):
    """IR name hints for the user's variables (none for irflow's own)."""
    return [names[i] if not names[i].startswith("__") else None for i in indices]


def _substitute(values, indices, replacements) -> list:
    out = list(values)
    for i, r in zip(indices, replacements):
        out[i] = r
    return out


def _initial_values(tracer, body_fn, values, carried, names, loc) -> list:
    """Initial tensors for loop variables that are Python numbers or not yet assigned:
    one trial trace of the body (discarded) shows what the loop makes of them. A number
    takes the dtype the loop gives it (``s = 0; s = s + x.sum()`` carries a float); a
    variable first assigned in the body starts as zeros of its type."""
    start = list(values)
    for i in carried:
        if isinstance(start[i], numbers.Number):
            start[i] = _as_loop_tensor(start[i])
    known = [i for i in carried if not isinstance(start[i], Undefined)]
    known_types = [tracer.value_of(start[i]).type for i in known]
    scope, out = tracer.trace_region(
        known_types, lambda *a: body_fn(*_substitute(start, known, a)))
    from ..tensor.convert import cast
    from ..tensor.creation import zeros
    for i in carried:
        v = out[i]
        if not isinstance(v, Tensor | numbers.Number):
            raise ConversionError(f"variable '{names[i]}' becomes a {type(v).__name__} inside a "
                                  "tensor-dependent loop", loc)
        saved, tracer.scope = tracer.scope, scope
        try:
            t = tracer.value_of(_as_loop_tensor(v)).type
        finally:
            tracer.scope = saved
        if isinstance(values[i], Undefined):
            if not t.is_static:
                raise ConversionError(f"variable '{names[i]}' is first assigned inside a "
                                      f"tensor-dependent loop with the symbolic type {t}; "
                                      "assign it before the loop", loc)
            start[i] = zeros(list(t.shape), t.dtype)
        elif isinstance(values[i], numbers.Number) and start[i].dtype is not t.dtype:
            start[i] = cast(start[i], t.dtype)
    return start


def _as_loop_tensor(v) -> Tensor:
    """A loop variable as a tensor: Python numbers become 0-d tensors (i64 / f32 / bool)."""
    if isinstance(v, Tensor):
        return v
    dtype = np.bool_ if isinstance(v, bool) else np.int64 if isinstance(v, numbers.Integral) \
        else np.float32
    return Tensor._from_array(np.asarray(v, dtype=dtype))


def _finish(tracer, scope, outs, terminator, loc, names=None, types_=None):
    saved, tracer.scope = tracer.scope, scope
    try:
        values = [tracer.value_of(_as_loop_tensor(o)) for o in outs]
        if types_ is not None:
            for name, v, t in zip(names, values, types_):
                if v.type != t:
                    raise ConversionError(
                        f"variable '{name}' is {t} when a loop iteration starts and {v.type} "
                        "when it ends; a loop variable keeps its dtype and shape (irflow does "
                        "not yet carry values whose size changes across iterations)", loc)
        with scope.builder.location(loc):
            scope.builder.create(terminator, values)
    except ShapeError as e:
        raise ConversionError(e.message, loc) from None
    finally:
        tracer.scope = saved
    return values
