"""The corpus harness: run a user's program eagerly and compiled, and compare.

`check(target, inputs, spec)` runs a function or an `nn.Layer` eagerly on each input
tuple, then compiles it with ``paddle.jit.to_static`` and with ``irflow.compile``
(both with the same `InputSpec`s) and runs the compiled program on the same inputs:

- outputs must have the same structure (tuples, lists, dicts), dtypes, shapes and
  values as eager ones;
- the gradients of a scalar loss, ``sum(out_i * c_i)`` over the float outputs with
  fixed cotangents ``c_i``, taken *through the compiled call*, must equal eager ones,
  for the Layer's parameters and for every float input (inputs are given
  ``stop_gradient=False`` unless ``grad_inputs=False``).

`check_fails(target, inputs, spec, at=...)` is for programs that must not convert:
the compiled call raises `irflow.ConversionError` (or the given type), its message
names the user's file and the line containing ``at``, and no internal name
(``__jst``), ``Undefined`` object or "internal error" reaches the user.

Parameters are reset from a fixed NumPy stream before each check, so the eager
numbers do not depend on the framework's initializers. The same files run against
real PaddlePaddle (`benchmarks/corpus_paddle_bar.py`, by hand): there ``irflow`` is
PaddlePaddle itself, "compiled" means Paddle's own ``to_static`` and the harness only
records how that compares with Paddle's eager mode.
"""
from __future__ import annotations

import inspect
import os
import re
import sys

import numpy as np

import irflow as paddle

PADDLE = os.environ.get("CORPUS_PADDLE") == "1"   # set by benchmarks/corpus_paddle_bar.py
MODES = ("to_static",) if PADDLE else ("to_static", "compile")
INTERNAL = ("__jst", "undefined", "internal error")

if PADDLE:
    class ConversionError(Exception):
        """Real Paddle has no such type; nothing raises it."""
else:
    ConversionError = paddle.ConversionError

RTOL, ATOL = 1e-5, 1e-6


class OutputMismatch(AssertionError):
    """A compiled output differs from the eager one (or is an internal object)."""


class GradientMismatch(AssertionError):
    """The outputs agree, but a gradient through the compiled call does not."""


class EagerFailed(Exception):
    """Under real Paddle: the eager program itself fails (an API irflow has and Paddle
    spells differently), so there is nothing to compare with."""
GRAD_RTOL, GRAD_ATOL = 1e-4, 1e-5


# ---------------------------------------------------------------- inputs

def randn(*shape, seed=0, scale=1.0, shift=0.0, dtype="float32"):
    """A NumPy array of normal numbers (a fixed stream per seed)."""
    rng = np.random.RandomState(seed)
    return (rng.standard_normal(shape) * scale + shift).astype(dtype)


def uniform(*shape, low=-1.0, high=1.0, seed=0, dtype="float32"):
    rng = np.random.RandomState(seed)
    return rng.uniform(low, high, shape).astype(dtype)


def ints(*shape, low=0, high=10, seed=0, dtype="int64"):
    rng = np.random.RandomState(seed)
    return rng.randint(low, high, shape).astype(dtype)


def full(shape, value, dtype="float32"):
    return np.full(shape, value, dtype)


def spec(*shapes, dtype="float32"):
    """InputSpecs from shapes, e.g. ``spec([None, 4], [None])``."""
    return [paddle.static.InputSpec(list(s), dtype) for s in shapes]


def _array(a):
    if isinstance(a, paddle.Tensor):
        return np.array(a.numpy())
    return np.asarray(a)


def _as_inputs(inputs):
    """Each element of `inputs` is one call: a tuple of arrays (or a single array)."""
    calls = []
    for args in inputs:
        if not isinstance(args, tuple | list):
            args = (args,)
        calls.append([_arg(a) for a in args])
    return calls


def _arg(a):
    """An input: an array, or a list of arrays (a list-of-tensors input)."""
    if isinstance(a, list):
        return [_arg(x) for x in a]
    return _array(a)


def _tensors(arrays, grad_inputs):
    """Fresh tensors for one call (lists stay lists); float ones require a gradient
    when `grad_inputs`."""
    out = []
    for a in arrays:
        if isinstance(a, list):
            out.append(_tensors(a, grad_inputs))
            continue
        t = paddle.to_tensor(a)
        t.stop_gradient = not (grad_inputs and a.dtype.kind == "f")
        out.append(t)
    return out


def _leaf_tensors(tensors):
    for t in tensors:
        if isinstance(t, list):
            yield from _leaf_tensors(t)
        else:
            yield t


# ---------------------------------------------------------------- parameters

def reset_parameters(layer, seed=1234):
    """Give every parameter values from a fixed NumPy stream (so eager results do not
    depend on the framework's initializers)."""
    rng = np.random.RandomState(seed)
    for name, p in sorted(layer.named_parameters(), key=lambda kv: kv[0]):
        if p.stop_gradient:  # BatchNorm's running statistics keep their values
            continue
        shape = list(p.shape)
        fan_in = shape[0] if len(shape) >= 2 else max(shape[0] if shape else 1, 1)
        if len(shape) == 4:  # conv: [out, in, kh, kw]
            fan_in = shape[1] * shape[2] * shape[3]
        bound = 1.0 / np.sqrt(fan_in)
        p.set_value(rng.uniform(-bound, bound, shape).astype(np.dtype(_np_dtype(p))))


def _np_dtype(t):
    return np.array(t.numpy()).dtype


def _is_layer(target):
    return isinstance(target, paddle.nn.Layer)


def _parameters(target):
    return list(target.parameters()) if _is_layer(target) else []


# ---------------------------------------------------------------- outputs

def _flatten(out, path="out"):
    """[(path, leaf)] of a nested output."""
    if isinstance(out, tuple | list):
        items = []
        for i, o in enumerate(out):
            items += _flatten(o, f"{path}[{i}]")
        return items
    if isinstance(out, dict):
        items = []
        for k in out:
            items += _flatten(out[k], f"{path}[{k!r}]")
        return items
    return [(path, out)]


def _structure(out):
    if isinstance(out, tuple | list):
        return (type(out).__name__, [_structure(o) for o in out])
    if isinstance(out, dict):
        return ("dict", [(k, _structure(v)) for k, v in out.items()])
    if isinstance(out, paddle.Tensor):
        return "tensor"
    if isinstance(out, bool | int | float | np.number | np.bool_):
        return "number"
    if out is None:
        return "None"
    return f"other:{type(out).__name__}"


def _compare_outputs(got, want, where):
    try:
        _compare_structures(got, want, where)
    except AssertionError as e:
        raise OutputMismatch(str(e)) from None


def _compare_structures(got, want, where):
    assert not any(bad in repr(type(leaf)).lower() for _, leaf in _flatten(got)
                   for bad in INTERNAL), f"{where}: an internal object reached the user: {got!r}"
    gs, ws = _structure(got), _structure(want)
    if gs != ws:
        assert _loose_structure(gs) == _loose_structure(ws), \
            f"{where}: output structure {gs} != eager {ws}"
    for (path, g), (_, w) in zip(_flatten(got), _flatten(want)):
        _compare_leaf(g, w, f"{where} {path}")


def _loose_structure(s):
    """Numbers and one-element tensors are interchangeable (a compiled `len(x)` may be
    a tensor)."""
    if s in ("tensor", "number"):
        return "value"
    if isinstance(s, tuple):
        kind, parts = s
        if kind == "dict":
            return kind, [(k, _loose_structure(v)) for k, v in parts]
        return kind, [_loose_structure(p) for p in parts]
    return s


def _compare_leaf(g, w, where):
    if w is None or isinstance(w, str):
        assert g == w, f"{where}: {g!r} != eager {w!r}"
        return
    ga, wa = _array(g), _array(w)
    if isinstance(g, paddle.Tensor) and isinstance(w, paddle.Tensor):
        assert list(ga.shape) == list(wa.shape), \
            f"{where}: shape {list(ga.shape)} != eager {list(wa.shape)}"
        assert ga.dtype == wa.dtype, f"{where}: dtype {ga.dtype} != eager {wa.dtype}"
    else:
        assert ga.size == 1 and wa.size == 1, f"{where}: {g!r} != eager {w!r}"
    if wa.dtype.kind == "f":
        np.testing.assert_allclose(ga.astype(wa.dtype), wa, rtol=RTOL, atol=ATOL,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(ga, wa, err_msg=where)


# ---------------------------------------------------------------- gradients

def _cotangent(shape, index):
    rng = np.random.RandomState(100 + index)
    return rng.uniform(0.5, 1.5, shape).astype("float32")


def _loss(out):
    """sum(out_i * c_i) over the float tensor outputs that require a gradient."""
    loss = None
    for i, (_, leaf) in enumerate(_flatten(out)):
        if not isinstance(leaf, paddle.Tensor) or _array(leaf).dtype.kind != "f":
            continue
        if leaf.stop_gradient:
            continue
        c = paddle.to_tensor(_cotangent(list(leaf.shape), i).astype(_array(leaf).dtype))
        term = paddle.sum(leaf * c)
        loss = term if loss is None else loss + paddle.cast(term, loss.dtype)
    return loss


def _float_leaves(out):
    return [leaf for _, leaf in _flatten(out) if isinstance(leaf, paddle.Tensor)
            and _array(leaf).dtype.kind == "f"]


def _gradients(params, tensors, out):
    """Backward of the loss; the gradients of the parameters and of the inputs that
    require one (None where none arrived), then cleared."""
    loss = _loss(out)
    if loss is None:
        return None
    loss.backward()
    grads = {}
    for i, p in enumerate(params):
        grads[f"parameter {getattr(p, 'name', i)} ({i})"] = \
            None if p.grad is None else _array(p.grad)
    for i, t in enumerate(_leaf_tensors(tensors)):
        if not t.stop_gradient:
            grads[f"input {i}"] = None if t.grad is None else _array(t.grad)
    for p in params:
        p.clear_gradient()
    return grads


def _compare_gradients(got, want, where):
    try:
        _compare_gradient_values(got, want, where)
    except AssertionError as e:
        raise GradientMismatch(str(e)) from None


def _compare_gradient_values(got, want, where):
    if want is None:
        return
    assert got is not None, (f"{where}: the compiled outputs do not require a gradient "
                             f"(eager ones do), so loss.backward() has nothing to do")
    for key, w in want.items():
        g = got.get(key)
        if w is None and not PADDLE:  # no op that used it ran: None, as eagerly
            assert g is None, f"{where}: a gradient for {key} (eager has none)"
            continue
        if w is None:  # Paddle's to_static gives zeros there
            w = np.zeros_like(g) if g is not None else None
        if g is None and w is not None:
            assert not np.any(w), f"{where}: no gradient for {key} (eager has one)"
            continue
        if w is None:
            continue
        np.testing.assert_allclose(g, w, rtol=GRAD_RTOL, atol=GRAD_ATOL,
                                   err_msg=f"{where}: gradient of {key}")


# ---------------------------------------------------------------- compiling

def compiled(target, input_spec, mode):
    if mode == "to_static":
        return paddle.jit.to_static(target, input_spec=input_spec)
    return paddle.compile(target, input_spec=input_spec)


def _call(fn, arrays, grad_inputs, params):
    tensors = _tensors(arrays, grad_inputs)
    out = fn(*tensors)
    return out, tensors


def check(target, inputs, input_spec=None, grads=True, grad_inputs=True, train=True,
          reset=True, modes=MODES, every_line=True):
    """Eager vs compiled: outputs on every input, and gradients of a scalar loss
    through the compiled call. Layers run in train mode (as when training) unless
    ``train=False``. The eager runs must execute every line of the program (so that
    every branch is compared) unless ``every_line=False``. Returns the last compiled
    callable."""
    calls = _as_inputs(inputs)
    if _is_layer(target):
        if reset:
            reset_parameters(target)
        target.train() if train else target.eval()
    params = _parameters(target)
    _drop_gradients(params)

    eager = []
    try:
        with _LineCoverage(target) as covered:
            for arrays in calls:
                out, tensors = _call(target, arrays, grad_inputs, params)
                g = _gradients(params, tensors, out) if grads else None
                eager.append((out, g))
    except Exception as e:
        if PADDLE:
            raise EagerFailed(f"eager: {type(e).__name__}: {e}") from e
        raise
    if every_line and not PADDLE:
        covered.check()
    _record_eager(calls, eager)

    # every output first (an OutputMismatch), then every gradient (a GradientMismatch)
    fns = [compiled(target, input_spec, mode) for mode in modes]
    for mode, fn in zip(modes, fns):
        for k, (arrays, (want, _)) in enumerate(zip(calls, eager)):
            got, _ = _call(fn, arrays, grad_inputs, params)
            _compare_outputs(got, want, f"{mode}, input {k}")
    if grads:
        for mode, fn in zip(modes, fns):
            _drop_gradients(params)  # as the eager runs began: which are None matters
            for k, (arrays, (_, want_grads)) in enumerate(zip(calls, eager)):
                got, tensors = _call(fn, arrays, grad_inputs, params)
                _compare_gradients(_gradients(params, tensors, got), want_grads,
                                   f"{mode}, input {k}")
    return fns[-1]


def _drop_gradients(params) -> None:
    for p in params:
        p.clear_gradient(set_to_zero=False)


def check_outputs(target, inputs, input_spec=None, **kw):
    """`check` without gradients (integer results, or programs under no_grad)."""
    return check(target, inputs, input_spec, grads=False, **kw)


class _LineCoverage:
    """The lines of the program's function (a Layer's forward) that the eager runs
    execute; `check` fails when the inputs leave one of them out."""

    def __init__(self, target):
        fn = inspect.unwrap(target.forward if _is_layer(target) else target)
        self.code = getattr(fn, "__code__", None)
        self.seen = set()

    def _trace(self, frame, event, arg):
        if frame.f_code is self.code:
            return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "line":
            self.seen.add(frame.f_lineno)
        return self._local

    def __enter__(self):
        self.previous = sys.gettrace()
        if self.code is not None:
            sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.previous)

    def check(self):
        if self.code is None:
            return
        lines = {line for _, _, line in self.code.co_lines() if line is not None}
        lines.discard(self.code.co_firstlineno)
        missed = sorted(lines - self.seen)
        assert not missed, (f"the inputs never run line(s) {missed} of "
                            f"{self.code.co_name} ({self.code.co_filename}): add an input "
                            f"that takes that path")


# ---------------------------------------------------------------- failures

def line_of(target, text):
    """The file and line number of the first source line of `target` containing `text`."""
    fn = target.forward if _is_layer(target) else target
    fn = inspect.unwrap(fn)
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return os.path.abspath(inspect.getsourcefile(fn)), first + i
    raise AssertionError(f"{text!r} is not in the source of {fn.__qualname__}")


def check_fails(target, inputs, input_spec=None, at=None, match=None, error=None,
                modes=MODES):
    """The compiled program raises `error` (ConversionError by default) naming the
    user's line containing `at`; no internal names in the message."""
    error = error or ConversionError
    calls = _as_inputs(inputs)
    if _is_layer(target):
        reset_parameters(target)
        target.eval()
    eager = []
    for arrays in calls:
        try:
            eager.append(target(*_tensors(arrays, False)))
        except Exception as e:  # noqa: BLE001  (the eager path may fail too: recorded)
            eager.append(e)
    if PADDLE:
        _paddle_fails(target, calls, eager, input_spec)
        return
    for mode in modes:
        fn = compiled(target, input_spec, mode)
        for arrays in calls:
            try:
                out = fn(*_tensors(arrays, False))
            except error as e:
                message = str(e)
            else:
                raise AssertionError(f"{mode}: expected {error.__name__}, got {out!r}")
            check_message(message, target, at, match)


def check_message(message, target=None, at=None, match=None):
    lowered = message.lower()
    for bad in INTERNAL:
        assert bad not in lowered, f"internal text {bad!r} in the message:\n{message}"
    for text in ([at] if isinstance(at, str) else at or []):
        file, line = line_of(target, text)
        assert f"{file}:{line}" in message, f"the message does not name {file}:{line}:\n{message}"
    if match is not None:
        assert re.search(match, message), f"{match!r} not in the message:\n{message}"


def _paddle_fails(target, calls, eager, input_spec):
    """Paddle's to_static on a program irflow must reject: right if it raises, or if it
    gives the eager answer where eager has one."""
    fn = compiled(target, input_spec, "to_static")
    for arrays, want in zip(calls, eager):
        try:
            got = fn(*_tensors(arrays, False))
        except Exception:  # noqa: BLE001
            continue
        if isinstance(want, Exception):
            raise AssertionError(f"Paddle returned {got!r} where eager raises {want!r}")
        _compare_outputs(got, want, "to_static")


def check_raises_like_eager(target, inputs, input_spec, error, match=None):
    """Eager raises `error` at run time (an assert); so does every compiled program,
    with the user's message and no internal names."""
    calls = _as_inputs(inputs)
    for arrays in calls:
        try:
            target(*_tensors(arrays, False))
        except error:
            pass
        else:
            raise AssertionError(f"eager does not raise {error.__name__}")
    for mode in MODES:
        fn = compiled(target, input_spec, mode)
        for arrays in calls:
            try:
                out = fn(*_tensors(arrays, False))
            except error as e:
                if not PADDLE:
                    check_message(str(e), match=match)
            else:
                raise AssertionError(f"{mode}: expected {error.__name__}, got {out!r}")


# ---------------------------------------------------------------- prints

def check_prints(target, inputs, input_spec, capsys):
    """What the program prints (and returns) compiled equals what it prints eagerly,
    call by call."""
    calls = _as_inputs(inputs)
    capsys.readouterr()
    want = []
    for arrays in calls:
        out = target(*_tensors(arrays, False))
        want.append((capsys.readouterr().out, out))
    for mode in MODES:
        fn = compiled(target, input_spec, mode)
        capsys.readouterr()
        for k, (arrays, (text, out)) in enumerate(zip(calls, want)):
            got = fn(*_tensors(arrays, False))
            printed = capsys.readouterr().out
            if printed != text:
                raise OutputMismatch(f"{mode}, input {k}: printed {printed!r}, eager {text!r}")
            _compare_outputs(got, out, f"{mode}, input {k}")


# ---------------------------------------------------------------- eager log

_EAGER_LOG = {}


def _record_eager(calls, eager):
    """With CORPUS_DUMP set, keep eager outputs by test id (irflow vs Paddle eager)."""
    if not os.environ.get("CORPUS_DUMP"):
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
    for k, (out, _) in enumerate(eager):
        for path, leaf in _flatten(out):
            try:
                _EAGER_LOG[f"{test}#{k}#{path}"] = _array(leaf)
            except Exception:  # noqa: BLE001
                pass


def dump_eager_log():
    path = os.environ.get("CORPUS_DUMP")
    if path and _EAGER_LOG:
        np.savez(path, **_EAGER_LOG)

