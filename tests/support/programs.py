"""Random well-typed IR programs, each with an independent NumPy reference, for
differential testing of the interpreter, the passes, autodiff and the backends.

Usage::

    from hypothesis import assume, given
    from tests.support.programs import programs, seeds

    @given(programs(dtype="float32"), seeds)
    def test_backend(program, seed):
        for n in program.sizes:                     # several sizes for the batch dim N
            inputs = program.inputs(seed, n)
            expected = program.evaluate(*inputs)    # plain NumPy and Python control flow
            assume(expected.jump_margin > 1e-4)     # no branch decided by rounding
            got = my_backend(program.module, *inputs)
            ...

API
---
``programs(dtype="float32", smooth_only=False, max_depth=2, max_ops=12, symbolic=None,
scalar_output=False)`` is a hypothesis strategy of `Program`; ``random_program(seed,
**options)`` draws one from the same generator with a NumPy Generator instead (no
hypothesis: for coverage statistics, benchmarks and fuzzing loops).

- ``dtype``: the float type of the arguments and of all the arithmetic
  ("float32" for semantics tests, "float64" for gradient tests).
- ``smooth_only``: no kinks or jumps in the data path (no relu, abs, maximum, minimum,
  select, max/min reductions, floor/ceil/sign, casts to integers): the results are
  differentiable everywhere except where a ``cond`` predicate or a ``while`` condition
  changes its decision.
- ``max_depth``: how deeply ``cond`` and ``while`` regions may nest (2: a cond in a
  while body, a while in a cond branch, ...).
- ``max_ops``: the number of generation steps over the whole program (one step
  emits one op, or a few for an op that needs prepared operands, or a whole
  ``cond``/``while`` whose regions use steps of their own).
- ``symbolic``: whether the arguments have the symbolic batch dim ``N`` (None: drawn).
- ``scalar_output``: the function returns one scalar, a weighted sum of one or two
  of its values (what a loss looks like, for `grad`).

A `Program` has ``module`` (one function, ``@f``), ``sizes`` (the values to bind
``N`` to: `SIZES`, or ``(None,)``), ``inputs(seed, n)`` (arrays for the arguments:
floats uniform in [-2, 2], the range the generator's bounds assume, i64 scalars in
[0, 3]), ``evaluate(*arrays, frozen=None)`` (the reference, an `Evaluation`),
``ops`` (the op names in the module), ``float_args`` (indices of the float
arguments), ``symbolic`` and ``dtype``. Its repr is the IR text, so hypothesis
reports a failing program readably.

How values stay tame: the generator tracks an interval holding every value each
op can produce (given inputs in [-2, 2] and N <= max(SIZES)) and squashes (tanh,
sigmoid or a scaling constant) whatever could leave [-8, 8]. ``exp`` gets an input
in [-2, 2]; ``sqrt``, ``log``, ``rsqrt``, the base of ``pow`` and every denominator
are built to be >= 0.2 in magnitude; every ``while`` loop counts its trips and stops
at a limit that is a constant in [0, 3] or a small i64 scalar (the argument,
another loop's count), often also on a data condition. Nothing overflows (the
reference runs under ``np.errstate(over/divide/invalid="raise")``) and float32
results agree with the reference to about 1e-6.

Ops emitted: const; neg, exp, tanh, sigmoid, sin, cos, erf, sqrt, log, rsqrt,
stop_gradient; add, sub, mul, div, pow with broadcasting; sum, mean, prod with
every form of `axis` and `keepdim`; matmul (vectors, batches, transpose flags, a
symbolic contracted dim); reshape (with -1 and merged symbolic dims), transpose,
broadcast_to, unsqueeze, squeeze, slice, set_slice, concat, stack, gather,
scatter_add, take_along_axis, put_along_axis, pad; comparisons, mod and logical
ops in predicates; cond and while, nested; and, unless ``smooth_only``, relu, abs,
floor, ceil, sign, maximum, minimum, select, max, min and casts to ints and from
bools (float32 programs also cast through float64, smooth or not). Attributes
are written as a user might (negative axes, ints for one axis, defaults spelled
out) so that canonicalization is exercised too.

What the reference records: `Evaluation.events` lists every discrete decision of
the computation (branch taken, trip count, masks of relu/abs/maximum/comparisons,
positions of max/min, values of integer casts and floor/ceil/sign), so two inputs
with equal events lie in one smooth piece of the program (what a finite-difference
check needs). `Evaluation.jump_margin` is the smallest relative distance, over all
the decisions that make the result jump (predicates, loop conditions, compares for
select, integer casts, floor/ceil/sign), between the deciding quantity and its
threshold; when it is tiny, a rounding difference may legitimately flip a decision.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

from irflow.ir import Builder, Module, TensorType, Value, dtypes
from irflow.ir.builder import function

LIMIT = 8.0          # every float value of the program dtype stays within [-LIMIT, LIMIT]
INPUT_BOUND = 2.0    # float inputs are drawn from [-INPUT_BOUND, INPUT_BOUND]
SIZES = (1, 2, 5)    # the values tests bind the symbolic dim N to
SYMBOL = "N"
MAX_RANK = 3
_NAME_HINTS = ("h", "y", "x0", "h_1", "acc")

seeds = st.integers(0, 2 ** 32 - 1)
"""A strategy of seeds for `Program.inputs`."""


# ---------------------------------------------------------------- public API

class Evaluation:
    """What the reference computed: `outputs`, the discrete `events` of the
    computation, its `jump_margin` (see the module docstring) and the results of
    its stop_gradient ops in order (`frozen`, see `Program.evaluate`)."""

    def __init__(self, outputs: list[np.ndarray], events: tuple, jump_margin: float,
                 frozen: list[np.ndarray]):
        self.outputs = outputs
        self.events = events
        self.jump_margin = jump_margin
        self.frozen = frozen


class Program:
    """A generated module and its independent NumPy reference."""

    def __init__(self, module: Module, reference: "_RefBlock", symbolic: bool, dtype):
        self.module = module
        self._reference = reference
        self.symbolic = symbolic
        self.dtype = dtype

    @property
    def function(self):
        return self.module.main

    @property
    def sizes(self) -> tuple:
        return SIZES if self.symbolic else (None,)

    @property
    def ops(self) -> frozenset[str]:
        return frozenset(op.name for op in self.module.walk())

    @property
    def float_args(self) -> list[int]:
        return [i for i, a in enumerate(self.function.args) if a.type.dtype.is_float]

    def inputs(self, seed: int | np.random.Generator, n: int | None = None) -> list[np.ndarray]:
        """Arguments for the function, with ``N = n`` (default: the first of `SIZES`)."""
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        sizes = {SYMBOL: SIZES[0] if n is None else n}
        arrays = []
        for arg in self.function.args:
            t: TensorType = arg.type
            shape = _concrete(t.shape, sizes)
            if t.dtype.is_float:
                arrays.append(rng.uniform(-INPUT_BOUND, INPUT_BOUND, shape).astype(t.dtype.np))
            else:
                arrays.append(rng.integers(0, 4, shape).astype(t.dtype.np))
        return arrays

    def evaluate(self, *arrays, frozen: list[np.ndarray] | None = None) -> Evaluation:
        """Run the reference: plain NumPy per op and Python control flow. With
        `frozen` (the `Evaluation.frozen` of another evaluation), each stop_gradient
        gives what it gave there, so that finite differences see its result as the
        constant its zero gradient says it is."""
        sizes = {SYMBOL: arrays[0].shape[0]} if self.symbolic else {}
        trace = _Trace(sizes, frozen)
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            outputs = self._reference(trace, list(arrays))
        return Evaluation(outputs, tuple(trace.events), trace.margin, trace.frozen)

    def __repr__(self) -> str:
        return f"Program(symbolic={self.symbolic}):\n{self.module}"


@st.composite
def programs(draw, dtype="float32", smooth_only: bool = False, max_depth: int = 2,
             max_ops: int = 12, symbolic: bool | None = None,
             scalar_output: bool = False) -> Program:
    """A hypothesis strategy of `Program`s; see the module docstring."""
    choices = _Choices(lambda lo, hi: draw(st.integers(lo, hi)))
    return _Generator(choices, dtype, smooth_only, max_depth, max_ops, symbolic,
                      scalar_output).program()


def random_program(seed: int, dtype="float32", smooth_only: bool = False, max_depth: int = 2,
                   max_ops: int = 12, symbolic: bool | None = None,
                   scalar_output: bool = False) -> Program:
    """The generator of `programs`, driven by ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    choices = _Choices(lambda lo, hi: int(rng.integers(lo, hi + 1)))
    return _Generator(choices, dtype, smooth_only, max_depth, max_ops, symbolic,
                      scalar_output).program()


# ---------------------------------------------------------------- decisions

class _Choices:
    """Where the generator's structural decisions come from. Every decision is an
    integer whose smallest value is the simplest choice (no optional op, the first
    option, the most recent value), so hypothesis shrinks towards small programs."""

    def __init__(self, integer: Callable[[int, int], int]):
        self.integer = integer

    def chance(self, percent: int) -> bool:
        return self.integer(0, 99) >= 100 - percent

    def pick(self, options: Sequence):
        return options[self.integer(0, len(options) - 1)]

    def recent(self, options: Sequence):
        """Any option, the last ones (the most recently computed values) first."""
        return options[len(options) - 1 - self.integer(0, len(options) - 1)]

    def weighted(self, options: Sequence[tuple[int, object]]):
        r = self.integer(0, sum(w for w, _ in options) - 1)
        for w, option in options:
            if r < w:
                return option
            r -= w
        raise AssertionError("unreachable")

    def distinct(self, options: Sequence, count: int) -> list:
        pool = list(options)
        picked = []
        for _ in range(min(count, len(pool))):
            picked.append(pool.pop(len(pool) - 1 - self.integer(0, len(pool) - 1)))
        return picked


# ---------------------------------------------------------------- shapes

def _concrete(shape, sizes: dict[str, int]) -> tuple[int, ...]:
    """A shape with its symbolic dims (``N``, ``N*12``) evaluated."""
    out = []
    for d in shape:
        if isinstance(d, str):
            n = 1
            for part in d.split("*"):
                n *= int(part) if part.isdigit() else sizes[part]
            d = n
        out.append(d)
    return tuple(out)


def _count_range(dims) -> tuple[int, int]:
    """The least and the largest element count of `dims`, for N in [1, max(SIZES)]."""
    return (math.prod(_concrete(dims, {SYMBOL: 1})),
            math.prod(_concrete(dims, {SYMBOL: max(SIZES)})))


def _broadcast(a, b):
    """NumPy broadcasting of two shapes whose dims may be symbols: dims combine
    when equal or when one is 1. None when they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            return None
    return tuple(reversed(out))


def _as_x(shape, transpose: bool):
    """(batch, contracted dim) of matmul's x: a 1-D x is a row."""
    if len(shape) == 1:
        return (), shape[0]
    return shape[:-2], shape[-2] if transpose else shape[-1]


def _as_y(shape, transpose: bool):
    """(batch, contracted dim) of matmul's y: a 1-D y is a column."""
    if len(shape) == 1:
        return (), shape[0]
    return shape[:-2], shape[-1] if transpose else shape[-2]


def _along(a: np.ndarray, index: np.ndarray, axis: int):
    """(the NumPy index that take_along_axis(a, index, axis) reads, its shape): the
    index broadcast to a's shape with the index's size at `axis`."""
    shape = a.shape[:axis] + (index.shape[axis],) + a.shape[axis + 1:]
    grids = list(np.ix_(*(np.arange(n) for n in shape)))
    grids[axis] = np.broadcast_to(index, shape)
    return tuple(grids), shape


def _matmul_rank(x_shape, y_shape, batch) -> int:
    return len(batch) + (len(x_shape) > 1) + (len(y_shape) > 1)


# ---------------------------------------------------------------- intervals

def _corners(f, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The interval of f(x, y) for f monotone in each argument on the intervals."""
    values = [f(x, y) for x in a for y in b]
    return min(values), max(values)


def _sigmoid_scalar(x: float) -> float:
    return 0.5 * (1 + math.tanh(x / 2))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function in x's dtype, without ``exp(-x)`` overflowing for a
    very negative x (float16's range ends at 65504: ``exp(12)`` is past it)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# name: (NumPy reference, interval of the result from the operand's (lo, hi))
_UNARY = {
    "neg": (np.negative, lambda lo, hi: (-hi, -lo)),
    "exp": (np.exp, lambda lo, hi: (math.exp(lo), math.exp(hi))),
    "tanh": (np.tanh, lambda lo, hi: (math.tanh(lo), math.tanh(hi))),
    "sigmoid": (lambda x: _sigmoid(x),
                lambda lo, hi: (_sigmoid_scalar(lo), _sigmoid_scalar(hi))),
    "sin": (np.sin, lambda lo, hi: (-1.0, 1.0)),
    "cos": (np.cos, lambda lo, hi: (-1.0, 1.0)),
    "erf": (lambda x: np.vectorize(math.erf, otypes=[x.dtype])(x),
            lambda lo, hi: (math.erf(lo), math.erf(hi))),
    "sqrt": (np.sqrt, lambda lo, hi: (math.sqrt(lo), math.sqrt(hi))),
    "log": (np.log, lambda lo, hi: (math.log(lo), math.log(hi))),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda lo, hi: (1 / math.sqrt(hi), 1 / math.sqrt(lo))),
    "abs": (np.abs, lambda lo, hi: (0.0, max(-lo, hi))),
    "relu": (lambda x: np.where(x > 0, x, x.dtype.type(0)),
             lambda lo, hi: (max(lo, 0.0), max(hi, 0.0))),
    "floor": (np.floor, lambda lo, hi: (math.floor(lo), math.floor(hi))),
    "ceil": (np.ceil, lambda lo, hi: (math.ceil(lo), math.ceil(hi))),
    "round": (np.round, lambda lo, hi: (round(lo), round(hi))),
    "sign": (np.sign, lambda lo, hi: (-1.0, 1.0)),
    "logical_not": (np.logical_not, None),
}

_BINARY = {
    "add": (np.add, lambda a, b: (a[0] + b[0], a[1] + b[1])),
    "sub": (np.subtract, lambda a, b: (a[0] - b[1], a[1] - b[0])),
    "mul": (np.multiply, lambda a, b: _corners(lambda x, y: x * y, a, b)),
    "div": (lambda x, y: x / y, lambda a, b: _corners(lambda x, y: x / y, a, b)),
    "pow": (np.power, lambda a, b: _corners(lambda x, y: x ** y, a, b)),
    "maximum": (np.maximum, lambda a, b: (max(a[0], b[0]), max(a[1], b[1]))),
    "minimum": (np.minimum, lambda a, b: (min(a[0], b[0]), min(a[1], b[1]))),
    "mod": (np.mod, None),
    "gt": (np.greater, None),
    "lt": (np.less, None),
    "ge": (np.greater_equal, None),
    "le": (np.less_equal, None),
    "eq": (np.equal, None),
    "ne": (np.not_equal, None),
    "logical_and": (np.logical_and, None),
    "logical_or": (np.logical_or, None),
    "logical_xor": (np.logical_xor, None),
}


# ---------------------------------------------------------------- what the reference records

def _observe_sign_pattern(kind):
    def observe(trace, out, x):
        trace.mask(kind, x > 0)
    return observe


def _observe_sign(trace, out, x):
    trace.mask("sign", x > 0)
    trace.jump(np.abs(x), 0.0)


def _observe_rounding(kind):
    def observe(trace, out, x):
        trace.values(kind, out)
        trace.jump(np.abs(x - np.round(x)), np.abs(x))
    return observe


def _observe_round(trace, out, x):
    """Rounding to the nearest integer jumps at every half-integer."""
    trace.values("round", out)
    trace.jump(np.abs(x - np.floor(x) - 0.5), np.abs(x))


def _observe_trunc(trace, out, x):
    """Truncation to an integer jumps at every nonzero integer."""
    trace.values("trunc", out)
    nearest = np.round(x)
    trace.jump(np.where(nearest == 0, 1 - np.abs(x), np.abs(x - nearest)), np.abs(x))


def _observe_extremum(kind, np_fn, axes):
    """Where the maxima (minima) are: the elements the gradient goes to."""
    def observe(trace, out, x):
        trace.mask(kind, x == np_fn(x, axis=axes, keepdims=True))
    return observe


def _observe_compare(trace, out, x, y, ties: bool = False):
    if x.dtype.kind == "f":
        trace.mask("compare", out)
        trace.jump(np.abs(x - y), np.maximum(np.abs(x), np.abs(y)), ties)


def _observe_reductions_compare(trace, out, x, y):
    """A compare of reductions of two distinct values (the mean of x against the mean
    of [x, x]): a tie there is rounding's (NumPy's pairwise float32 sums tie where a
    float64 accumulation need not), so it counts as a jump."""
    _observe_compare(trace, out, x, y, ties=True)


_OBSERVE = {
    "relu": _observe_sign_pattern("relu"), "abs": _observe_sign_pattern("abs"),
    "sign": _observe_sign,
    "floor": _observe_rounding("floor"), "ceil": _observe_rounding("ceil"),
    "round": _observe_round,
    "maximum": lambda trace, out, x, y: trace.mask("maximum", x >= y),
    "minimum": lambda trace, out, x, y: trace.mask("minimum", x <= y),
    **{name: _observe_compare for name in ("gt", "lt", "ge", "le")},
}


class _Trace:
    def __init__(self, sizes: dict[str, int], frozen: list | None = None):
        self.sizes = sizes
        self.events: list = []
        self.margin = math.inf
        self.replay = frozen
        self.frozen: list = []

    def stop_gradient(self, x: np.ndarray) -> np.ndarray:
        """x, or when replaying, what the same stop_gradient gave in the evaluation
        whose `frozen` values are replayed."""
        k = len(self.frozen)
        if self.replay is not None and k < len(self.replay) and self.replay[k].shape == x.shape:
            x = self.replay[k]
        self.frozen.append(x)
        return x

    def event(self, *payload) -> None:
        self.events.append(payload)

    def mask(self, kind: str, mask) -> None:
        mask = np.asarray(mask, dtype=bool)
        self.events.append((kind, mask.shape, mask.tobytes()))

    def values(self, kind: str, array) -> None:
        self.events.append((kind, array.shape, array.tobytes()))

    def jump(self, distance, scale, ties: bool = False) -> None:
        """Exact ties (distance 0) are left out unless `ties`: they come from values
        computed the same way (x against a reshape of x, relu's zeros against 0,
        integer casts), which every implementation ties exactly too."""
        distance = np.asarray(distance, dtype=np.float64)
        relative = np.broadcast_to(distance / (1 + np.asarray(scale)), distance.shape)
        if not ties:
            relative = relative[distance > 0]
        if relative.size:
            self.margin = min(self.margin, float(np.min(relative)))


# ---------------------------------------------------------------- the reference

class _Var:
    """A generated value: its IR value and, for floats, an interval [lo, hi] that
    holds every element it can take."""

    __slots__ = ("value", "lo", "hi")

    def __init__(self, value: Value, lo: float = 0.0, hi: float = 0.0):
        self.value = value
        self.lo = float(lo)
        self.hi = float(hi)

    @property
    def type(self) -> TensorType:
        return self.value.type

    @property
    def shape(self) -> tuple:
        return self.value.type.shape

    @property
    def rank(self) -> int:
        return self.value.type.rank

    @property
    def bound(self) -> float:
        return max(-self.lo, self.hi)


class _RefBlock:
    """The reference of one block: steps ``(results, operands, fn)`` where
    ``fn(trace, *operand arrays)`` returns the result array, or a list of them
    (control flow)."""

    def __init__(self, params: list[_Var]):
        self.params = params
        self.steps: list = []
        self.results: list[_Var] = []

    def add(self, outs: list[_Var], ins: list[_Var], fn) -> None:
        self.steps.append((outs, ins, fn))

    def __call__(self, trace: _Trace, arrays: list) -> list:
        env = dict(zip(self.params, arrays))
        for outs, ins, fn in self.steps:
            got = fn(trace, *(env[v] for v in ins))
            env.update(zip(outs, got if isinstance(got, list) else [got]))
        return [env[v] for v in self.results]


# ---------------------------------------------------------------- generation

class _Scope:
    """A block being generated: its builder, its reference and the values its ops
    may use (floats of the program dtype within [-LIMIT, LIMIT], and int scalars
    for predicates and loop bounds)."""

    def __init__(self, gen: "_Generator", b: Builder, params: list[_Var], depth: int):
        self.gen = gen
        self.c = gen.c
        self.b = b
        self.depth = depth
        self.params = params
        self.ref = _RefBlock(params)
        self.floats: list[_Var] = []
        self.ints: list[_Var] = []
        for v in params:
            self.keep(v)

    def keep(self, v: _Var) -> None:
        t = v.type
        if t.dtype is self.gen.dtype and v.bound <= LIMIT:
            self.floats.append(v)
        elif t.dtype.is_int and t.rank == 0:
            self.ints.append(v)

    # -- emitting ops
    def op(self, name: str, operands: list[_Var], ref=None, lo=0.0, hi=0.0, step=None,
           observe=None, **attrs) -> _Var:
        """Emit `name`; its reference is ``ref(*arrays)`` (or ``step(trace, *arrays)``
        when it needs the symbol sizes), followed by ``observe(trace, out, *arrays)``."""
        hint = self.c.pick(_NAME_HINTS) if self.c.chance(10) else None
        value = self.b.create(name, [v.value for v in operands], attrs,
                              names=[hint] if hint else None).result
        var = _Var(value, lo, hi)
        compute = step if step is not None else (lambda trace, *arrays: ref(*arrays))

        def reference(trace, *arrays):
            out = np.asarray(compute(trace, *arrays))
            if observe is not None:
                observe(trace, out, *arrays)
            return out

        self.ref.add([var], list(operands), reference)
        self.keep(var)
        return var

    def unop(self, name: str, x: _Var) -> _Var:
        ref, interval = _UNARY[name]
        lo, hi = interval(x.lo, x.hi) if interval else (0.0, 0.0)
        return self.op(name, [x], ref, lo, hi, observe=_OBSERVE.get(name))

    def binop(self, name: str, x: _Var, y: _Var) -> _Var:
        ref, interval = _BINARY[name]
        lo, hi = interval((x.lo, x.hi), (y.lo, y.hi)) if interval else (0.0, 0.0)
        return self.op(name, [x, y], ref, lo, hi, observe=_OBSERVE.get(name))

    def const(self, value, dtype=None) -> _Var:
        dtype = dtypes.dtype(dtype) if dtype is not None else self.gen.dtype
        array = np.asarray(value, dtype=dtype.np)
        var = _Var(self.b.constant(array, dtype),
                   float(array.min()) if array.size else 0.0,
                   float(array.max()) if array.size else 0.0)
        self.ref.add([var], [], lambda trace: array)
        return var

    def random_const(self, shape, scale: float = 1.5) -> _Var:
        return self.const(self.gen.rng.uniform(-scale, scale, shape))

    # -- choosing operands
    def pick_float(self, min_rank: int = 0, max_rank: int = MAX_RANK) -> _Var | None:
        found = [v for v in self.floats if min_rank <= v.rank <= max_rank]
        return self.c.recent(found) if found else None

    def operand_for(self, x: _Var, into: bool = False, other: bool = False) -> _Var:
        """A value that broadcasts with x (into x's shape when `into`): a value in
        scope (not x itself when `other`) or a constant."""
        def fits(v):
            if other and v is x:
                return False
            shape = _broadcast(x.shape, v.shape)
            return shape is not None and len(shape) <= MAX_RANK and (not into or shape == x.shape)
        found = [v for v in self.floats if fits(v)]
        if found and self.c.chance(60):
            return self.c.recent(found)
        return self.random_const(self.const_shape(x.shape))

    def const_shape(self, shape) -> tuple:
        """A static shape that broadcasts into `shape`: a suffix of it, some dims 1."""
        rank = self.c.integer(0, len(shape))
        return tuple(d if isinstance(d, int) and not self.c.chance(30) else 1
                     for d in shape[len(shape) - rank:])

    # -- keeping values tame
    def squash(self, x: _Var, limit: float) -> _Var:
        """x, or x mapped into [-limit, limit] by tanh, sigmoid or a scale. (The
        reference's sigmoid, 1 / (1 + exp(-x)), would overflow float32 below -88.)"""
        if x.bound <= limit:
            return x
        forms = [(2, "scale")] + ([(2, "tanh")] if limit >= 1 else []) + (
            [(1, "sigmoid")] if limit >= 1 and x.bound <= 80 else [])
        form = self.c.weighted(forms)
        if form == "scale":
            return self.binop("mul", x, self.const(0.999 * limit / x.bound))
        return self.unop(form, x)

    def tame(self, x: _Var) -> _Var:
        return self.squash(x, LIMIT)


class _Generator:
    """Builds one program: the IR through a `Builder` and, op by op, its reference.
    Emitters (`unary`, `binary`, `reduce`, ..., `cond`, `while_loop`) each add one
    op, or a few, to a `_Scope`."""

    def __init__(self, choices: _Choices, dtype, smooth_only: bool, max_depth: int,
                 max_ops: int, symbolic: bool | None, scalar_output: bool):
        self.c = choices
        self.dtype = dtypes.dtype(dtype)
        self.smooth = smooth_only
        self.max_depth = max_depth
        self.max_ops = max_ops
        self.budget = max_ops
        self.symbolic = symbolic
        self.scalar_output = scalar_output
        self.symbolic_program = False
        # Constants come from a NumPy generator, so that no value sits on a kink or
        # a branch boundary by construction (hypothesis favours 0 and round numbers).
        self.rng = np.random.default_rng(choices.integer(0, 2 ** 32 - 1))

    # ------------------------------------------------------------ the function
    def program(self) -> Program:
        symbolic = self.c.chance(50) if self.symbolic is None else self.symbolic
        self.symbolic_program = symbolic
        types, names = self.arg_types(symbolic)
        built = {}

        def body(b: Builder, *args):
            params = [_Var(a, -INPUT_BOUND, INPUT_BOUND) for a in args]
            scope = _Scope(self, b, params, 0)
            self.fill(scope, self.c.integer(1, max(1, self.budget)))
            scope.ref.results = self.outputs(scope)
            built["ref"] = scope.ref
            return [v.value for v in scope.ref.results]

        fn = function("f", types, body, names)
        return Program(Module([fn]), built["ref"], symbolic, self.dtype)

    def arg_types(self, symbolic: bool):
        def dims(rank):
            if rank > 1 and self.c.chance(30):  # square: a reduction's result broadcasts
                return [self.c.integer(2, 4)] * rank  # back along another axis too
            return [self.c.integer(1, 4) for _ in range(rank)]
        base = ([SYMBOL] if symbolic else []) + dims(self.c.integer(0, 2 if symbolic else 3))
        shapes = [base]
        for _ in range(self.c.integer(0, 2)):
            form = self.c.weighted([(2, "same"), (2, "suffix"), (2, "ones"), (1, "fresh")])
            if form == "same":
                shapes.append(list(base))
            elif form == "suffix":
                shapes.append(base[self.c.integer(0, len(base)):])
            elif form == "ones":
                shapes.append([1 if self.c.chance(50) else d for d in base])
            else:
                lead = [SYMBOL] if symbolic and self.c.chance(50) else []
                shapes.append(lead + dims(self.c.integer(0, MAX_RANK - len(lead))))
        types = [TensorType(self.dtype, s) for s in shapes]
        names = [f"x{i}" for i in range(len(types))]
        if self.c.chance(30):
            types.append(TensorType(dtypes.int64, ()))
            names.append("n")
        return types, names

    def outputs(self, scope: _Scope) -> list[_Var]:
        computed = [v for v in scope.floats if v not in scope.params] or scope.floats
        outs = [self.c.recent(computed) for _ in range(self.c.integer(1, 2))]
        if not self.scalar_output:
            return outs
        terms = []
        for out in outs:
            weights = scope.random_const(tuple(d if isinstance(d, int) else 1 for d in out.shape))
            terms.append(self.total(scope, scope.binop("mul", out, weights), "sum"))
        loss = terms[0] if len(terms) == 1 else scope.binop("add", terms[0], terms[1])
        return [loss]

    # ------------------------------------------------------------ blocks
    def fill(self, scope: _Scope, steps: int) -> None:
        for _ in range(steps):
            if self.budget <= 0:
                return
            self.budget -= 1
            emit = self.c.weighted(self.emitters(scope))
            emit(scope)

    def emitters(self, scope: _Scope):
        table = [(4, self.unary), (5, self.binary), (3, self.reduce), (2, self.matmul),
                 (4, self.shape_op)]
        if not self.smooth:
            table.append((1, self.select))
        if not self.smooth or self.dtype is dtypes.float32:
            table.append((1, self.cast))
        if scope.depth < self.max_depth:
            table += [(2, self.cond), (2, self.while_loop)]
        return table

    def nested_steps(self) -> int:
        return self.c.integer(0, min(self.budget, max(1, self.max_ops // 2)))

    def fit(self, scope: _Scope, t: TensorType) -> _Var:
        """A tame value of type `t` to yield: one computed in the block, else one of
        the block's arguments of that type combined with something."""
        computed = [v for v in scope.floats if v.type == t and v not in scope.params]
        if computed and self.c.chance(80):
            return self.c.recent(computed)
        base = self.c.recent([v for v in scope.floats if v.type == t])
        if self.c.chance(50):
            out = scope.unop(self.c.pick(["tanh", "sin", "neg"]), base)
        else:
            out = scope.binop(self.c.pick(["add", "mul", "sub"]), base,
                              scope.operand_for(base, into=True))
        return scope.tame(out)

    # ------------------------------------------------------------ elementwise
    def unary(self, s: _Scope) -> _Var:
        table = [(3, "tanh"), (2, "neg"), (2, "exp"), (2, "sigmoid"), (1, "sin"), (1, "cos"),
                 (1, "erf"), (1, "sqrt"), (1, "log"), (1, "rsqrt"), (1, "stop_gradient")]
        if not self.smooth:
            table += [(2, "relu"), (2, "abs"), (1, "floor"), (1, "ceil"), (1, "round"),
                      (1, "sign")]
        name = self.c.weighted(table)
        x = s.pick_float()
        if x is None:
            name, x = "tanh", s.pick_float()
        if name == "stop_gradient":
            return s.op(name, [x], lo=x.lo, hi=x.hi, step=lambda trace, a: trace.stop_gradient(a))
        if name == "exp":
            x = s.squash(x, 2.0)
        elif name in ("sqrt", "log", "rsqrt"):
            x = self.positive(s, x)
        return s.tame(s.unop(name, x))

    def positive(self, s: _Scope, x: _Var) -> _Var:
        """A value computed from x that is >= 0.2 everywhere."""
        forms = [(2, "square"), (2, "sigmoid"), (1, "exp")] + ([] if self.smooth else [(1, "abs")])
        form = self.c.weighted(forms)
        if form == "exp":
            return s.unop("exp", s.squash(x, 1.5))
        shift = s.const(self.rng.uniform(0.5, 1.5))
        if form == "square":
            x = s.squash(x, 2.0)
            square = s.binop("mul", x, x)
            square.lo = 0.0 if x.lo <= 0 <= x.hi else min(x.lo ** 2, x.hi ** 2)
            return s.binop("add", square, shift)
        return s.binop("add", s.unop(form, x), shift)

    def binary(self, s: _Scope) -> _Var:
        x = s.pick_float()
        table = [(3, "add"), (2, "sub"), (3, "mul"), (2, "div"), (1, "pow")]
        if not self.smooth:
            table += [(1, "maximum"), (1, "minimum")]
        name = self.c.weighted(table)
        y = s.operand_for(x)
        if self.c.chance(50):
            x, y = y, x
        if name == "div":
            y = self.positive(s, y)
            if self.c.chance(30):
                y = s.unop("neg", y)
        elif name == "pow":
            x, y = self.positive(s, x), s.squash(y, 2.0)
        return s.tame(s.binop(name, x, y))

    def compare(self, s: _Scope, x: _Var) -> _Var:
        """A bool mask of x's shape: x compared with another value or a constant."""
        threshold = s.operand_for(x, into=True, other=True)
        mask = s.binop(self.c.pick(["gt", "lt", "ge", "le"]), x, threshold)
        return s.unop("logical_not", mask) if self.c.chance(25) else mask

    def select(self, s: _Scope) -> _Var:
        x = s.pick_float()
        mask = self.compare(s, x)
        other = s.operand_for(x, into=True)
        a, b = (x, other) if self.c.chance(50) else (other, x)
        return s.op("select", [mask, a, b], np.where, min(a.lo, b.lo), max(a.hi, b.hi))

    def cast(self, s: _Scope) -> _Var:
        x = s.pick_float()
        forms = [(2, "wider")] if self.dtype is dtypes.float32 else []
        if not self.smooth:
            forms += [(2, "trunc"), (1, "step")]
        form = self.c.weighted(forms)
        np_dtype = self.dtype.np
        if form == "wider":
            wide = s.op("cast", [x], lambda a: a.astype(np.float64), x.lo, x.hi,
                        dtype=dtypes.float64)
            scaled = s.binop("mul", wide, s.const(self.rng.uniform(0.5, 1.5), dtypes.float64))
            return s.tame(s.op("cast", [scaled], lambda a: a.astype(np_dtype), scaled.lo,
                               scaled.hi, dtype=self.dtype))
        if form == "trunc":
            int_type = self.c.pick([dtypes.int64, dtypes.int32])
            small = s.squash(x, 1.5)
            ints = s.op("cast", [small], lambda a: a.astype(int_type.np),
                        observe=_observe_trunc, dtype=int_type)
            return s.op("cast", [ints], lambda a: a.astype(np_dtype), -1.5, 1.5,
                        dtype=self.dtype)
        mask = self.compare(s, x)
        return s.op("cast", [mask], lambda a: a.astype(np_dtype), 0.0, 1.0, dtype=self.dtype)

    # ------------------------------------------------------------ reductions
    def reduce(self, s: _Scope) -> _Var:
        x = s.pick_float()
        table = [(3, "sum"), (3, "mean"), (1, "prod")]
        if not self.smooth:
            table += [(2, "max"), (2, "min")]
        name = self.c.weighted(table)
        if name == "prod":
            x = s.squash(x, 1.0)
        attr, axes = self.axis_attr(x.rank)
        keepdim = self.c.chance(40)
        lo, hi = x.lo, x.hi
        if name == "sum":
            counts = _count_range([x.shape[a] for a in axes])
            lo, hi = min(lo * n for n in counts), max(hi * n for n in counts)
        elif name == "prod":
            lo, hi = -1.0, 1.0
        np_fn = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max,
                 "min": np.min}[name]
        observe = _observe_extremum(name, np_fn, axes) if name in ("max", "min") else None
        out = s.op(name, [x], lambda a: np_fn(a, axis=axes, keepdims=keepdim), lo, hi,
                   observe=observe, axis=attr, keepdim=keepdim)
        return s.tame(out)

    def axis_attr(self, rank: int):
        """(the `axis` attribute as a user might write it, the axes it reduces)."""
        if rank == 0:
            return None, ()
        form = self.c.weighted([(2, "all"), (3, "one"), (1, "some"), (1, "none")])
        if form == "all":
            return (None if self.c.chance(70) else tuple(range(rank))), tuple(range(rank))
        if form == "none":
            return (), ()
        count = 1 if form == "one" else self.c.integer(1, rank)
        axes = sorted(self.c.distinct(range(rank), count))
        written = [a - rank if self.c.chance(30) else a for a in axes]
        if form == "one" and self.c.chance(50):
            return written[0], tuple(axes)
        return tuple(written), tuple(axes)

    # ------------------------------------------------------------ matmul
    def matmul(self, s: _Scope) -> _Var:
        x = s.pick_float(min_rank=1)
        if x is None:
            return self.unary(s)
        tx = x.rank >= 2 and self.c.chance(30)
        x_batch, k = _as_x(x.shape, tx)
        found = []
        for v in s.floats:
            for ty in ((False, True) if v.rank >= 2 else (False,)) if v.rank else ():
                y_batch, ky = _as_y(v.shape, ty)
                batch = _broadcast(x_batch, y_batch)
                if ky == k and batch is not None and _matmul_rank(x.shape, v.shape, batch) <= 3:
                    found.append((v, ty))
        if found and self.c.chance(50):
            y, ty = self.c.recent(found)
        elif isinstance(k, int):
            y, ty = self.matmul_weight(s, x, k)
        else:  # a symbolic contracted dim: x with itself, x @ x^T or x^T @ x
            y, ty = x, not tx and x.rank >= 2
        kmax = _count_range([k])[1]
        bound = x.bound * y.bound * kmax

        def ref(a, b):
            if tx and a.ndim > 1:
                a = np.swapaxes(a, -1, -2)
            if ty and b.ndim > 1:
                b = np.swapaxes(b, -1, -2)
            return np.matmul(a, b)

        attrs = {}
        if tx or self.c.chance(20):
            attrs["transpose_x"] = tx
        if ty or self.c.chance(20):
            attrs["transpose_y"] = ty
        return s.tame(s.op("matmul", [x, y], ref, -bound, bound, **attrs))

    def matmul_weight(self, s: _Scope, x: _Var, k: int):
        """A constant y for x @ y with contracted dim k: a vector, a matrix or a
        batch of matrices, maybe stored transposed."""
        n = self.c.integer(1, 4)
        form = self.c.weighted([(3, "matrix"), (1, "vector"), (1, "batch")])
        if form == "vector":
            return s.random_const((k,), 1.0), False
        ty = self.c.chance(30)
        matrix = (n, k) if ty else (k, n)
        if form == "batch" and x.rank >= 2:
            x_batch = _as_x(x.shape, False)[0]
            if not x_batch:
                return s.random_const((self.c.integer(2, 3),) + matrix, 1.0), ty
            if len(x_batch) == 1:
                lead = x_batch[0] if isinstance(x_batch[0], int) and self.c.chance(50) else 1
                return s.random_const((lead,) + matrix, 1.0), ty
        return s.random_const(matrix, 1.0), ty

    # ------------------------------------------------------------ shapes
    def shape_op(self, s: _Scope) -> _Var:
        x = s.pick_float()
        table = [(3, self.reshape), (1, self.unsqueeze), (1, self.squeeze), (1, self.pad)]
        if x.rank >= 2:
            table.append((2, self.transpose))
        if x.rank >= 1:
            table += [(2, self.slice), (1, self.set_slice), (1, self.concat), (1, self.gather),
                      (1, self.scatter_add), (1, self.take_along_axis), (1, self.put_along_axis)]
        if x.rank <= 2:
            table += [(1, self.stack)]
        if x.rank < MAX_RANK or 1 in x.shape:
            table.append((2, self.broadcast_to))
        return self.c.weighted(table)(s, x)

    def reshape(self, s: _Scope, x: _Var) -> _Var:
        syms = [d for d in x.shape if isinstance(d, str)]
        static = math.prod(d for d in x.shape if isinstance(d, int))
        if syms and static > 1 and self.c.chance(30):
            factor = self.c.pick([f for f in range(2, static + 1) if static % f == 0])
            syms[0], static = f"{syms[0]}*{factor}", static // factor
        free = MAX_RANK - len(syms)
        parts = self.c.integer(1 if static > 1 else 0, max(1 if static > 1 else 0, free))
        target = self.factors(static, parts)
        for sym in syms:
            target.insert(self.c.integer(0, len(target)), sym)
        if target and self.c.chance(30):
            target[self.c.integer(0, len(target) - 1)] = -1
        target = tuple(target)

        def step(trace, a):
            return a.reshape(_concrete(target, trace.sizes))
        return s.op("reshape", [x], lo=x.lo, hi=x.hi, step=step, shape=target)

    def factors(self, n: int, parts: int) -> list[int]:
        """`parts` ints (in a random order) whose product is n."""
        out = []
        for _ in range(parts - 1):
            d = self.c.pick([d for d in range(1, n + 1) if n % d == 0])
            out.append(d)
            n //= d
        return out + [n] if parts else []

    def transpose(self, s: _Scope, x: _Var) -> _Var:
        perm = self.c.distinct(range(x.rank), x.rank)
        written = tuple(p - x.rank if self.c.chance(20) else p for p in perm)
        return s.op("transpose", [x], lambda a: np.transpose(a, perm), x.lo, x.hi,
                    perm=written)

    def broadcast_to(self, s: _Scope, x: _Var) -> _Var:
        options = [2, 3, 4] + ([SYMBOL] if self.symbolic_program else [])
        lead = [self.c.pick(options) for _ in range(self.c.integer(0, MAX_RANK - x.rank))]
        kept = []
        for d in x.shape:
            if d == 1 and self.c.chance(60):
                kept.append(self.c.pick(options))
            else:
                kept.append(-1 if self.c.chance(20) else d)
        target = tuple(lead + kept)

        def step(trace, a):
            lead_n = len(target) - a.ndim
            shape = [a.shape[i - lead_n] if d == -1 else d for i, d in enumerate(target)]
            return np.broadcast_to(a, _concrete(shape, trace.sizes))
        return s.op("broadcast_to", [x], lo=x.lo, hi=x.hi, step=step, shape=target)

    def unsqueeze(self, s: _Scope, x: _Var) -> _Var:
        if x.rank >= MAX_RANK:
            return self.squeeze(s, x)
        rank = x.rank + self.c.integer(1, MAX_RANK - x.rank)
        positions = sorted(self.c.distinct(range(rank), rank - x.rank))
        written = [p - rank if self.c.chance(30) else p for p in positions]
        attr = written[0] if len(written) == 1 and self.c.chance(50) else tuple(written)

        def step(trace, a):
            dims = iter(a.shape)
            return a.reshape([1 if i in positions else next(dims) for i in range(rank)])
        return s.op("unsqueeze", [x], lo=x.lo, hi=x.hi, step=step, axis=attr)

    def squeeze(self, s: _Scope, x: _Var) -> _Var:
        """Listed static dims that are not 1 stay, as in Paddle."""
        static = [i for i, d in enumerate(x.shape) if isinstance(d, int)]
        if static and self.c.chance(60):
            listed = sorted(self.c.distinct(static, self.c.integer(1, len(static))))
            attr = tuple(listed)
        else:
            listed, attr = static, None
        removed = {i for i in listed if x.shape[i] == 1}

        def step(trace, a):
            return a.reshape([d for i, d in enumerate(a.shape) if i not in removed])
        return s.op("squeeze", [x], lo=x.lo, hi=x.hi, step=step, axis=attr)

    def slice_spec(self, x: _Var):
        """The attributes of a random non-empty slice of x, and the NumPy index they
        stand for."""
        axes = sorted(self.c.distinct(range(x.rank), self.c.integer(1, x.rank)))
        bounds = [self.slice_bounds(x.shape[a]) for a in axes]
        index = [slice(None)] * x.rank
        for a, bound in zip(axes, bounds):
            index[a] = slice(*bound)
        written = [a - x.rank if self.c.chance(20) else a for a in axes]
        attrs = dict(axes=tuple(written), starts=tuple(b[0] for b in bounds),
                     stops=tuple(b[1] for b in bounds))
        steps = tuple(b[2] for b in bounds)
        if any(step != 1 for step in steps) or self.c.chance(20):
            attrs["steps"] = steps
        return attrs, tuple(index)

    def slice(self, s: _Scope, x: _Var) -> _Var:
        attrs, index = self.slice_spec(x)
        return s.op("slice", [x], lambda a: a[index], x.lo, x.hi, **attrs)

    def set_slice(self, s: _Scope, x: _Var) -> _Var:
        attrs, index = self.slice_spec(x)
        part = s.op("slice", [x], lambda a: a[index], x.lo, x.hi, **attrs)
        update = self.same_type(s, part)

        def ref(a, u):
            out = a.copy()
            out[index] = u
            return out
        return s.op("set_slice", [x, update], ref, min(x.lo, update.lo), max(x.hi, update.hi),
                    **attrs)

    def same_type(self, s: _Scope, x: _Var) -> _Var:
        """Another value of x's type: one in scope, or a function of x."""
        found = [v for v in s.floats if v.type == x.type and v is not x]
        if found and self.c.chance(50):
            return self.c.recent(found)
        return s.unop(self.c.pick(["tanh", "sin", "neg"]), x)

    def slice_bounds(self, dim):
        """(start, stop, step) of a non-empty Python slice of an axis of size `dim`;
        a symbolic axis is kept whole or reversed whole."""
        if isinstance(dim, str):
            return self.c.pick([(0, None, 1), (None, None, -1), (0, 2 ** 31 - 1, 1)])
        while True:
            step = self.c.pick([1, 1, 2, -1, -2])
            start = self.c.pick([None, *range(-dim - 1, dim + 1)])
            stop = self.c.pick([None, *range(-dim - 1, dim + 2)])
            if len(range(*slice(start, stop, step).indices(dim))):
                return start, stop, step

    def concat(self, s: _Scope, x: _Var) -> _Var:
        axis = self.c.integer(0, x.rank - 1)
        operands = [x]
        if isinstance(x.shape[axis], int):
            def fits(v):
                return (v.rank == x.rank and isinstance(v.shape[axis], int) and all(
                    a == b for i, (a, b) in enumerate(zip(v.shape, x.shape)) if i != axis))
            for _ in range(self.c.integer(1, 2)):
                found = [v for v in s.floats if fits(v)]
                operands.append(self.c.recent(found))
        if len(operands) > 1 and self.c.chance(50):
            operands.reverse()
        written = axis - x.rank if self.c.chance(20) else axis
        return s.op("concat", operands, lambda *a: np.concatenate(a, axis=axis),
                    min(v.lo for v in operands), max(v.hi for v in operands), axis=written)

    def stack(self, s: _Scope, x: _Var) -> _Var:
        found = [v for v in s.floats if v.type == x.type]
        operands = [x] + [self.c.recent(found) for _ in range(self.c.integer(0, 2))]
        axis = self.c.integer(0, x.rank)
        written = axis - x.rank - 1 if self.c.chance(20) else axis
        return s.op("stack", operands, lambda *a: np.stack(a, axis=axis),
                    min(v.lo for v in operands), max(v.hi for v in operands), axis=written)

    def gather_index(self, s: _Scope, x: _Var):
        """(axis, an int constant of indices into x along it) for gather and
        scatter_add; negative indices count from the end."""
        axis = self.c.integer(0, x.rank - 1)
        dim = x.shape[axis]
        lo, hi = (-dim, dim) if isinstance(dim, int) else (-1, 1)  # N >= 1
        rank = self.c.integer(0, min(2, MAX_RANK - x.rank + 1))
        shape = tuple(self.c.integer(1, 3) for _ in range(rank))
        return axis, s.const(self.rng.integers(lo, hi, shape), self.int_type())

    def int_type(self):
        return self.c.pick([dtypes.int64, dtypes.int32])

    def gather(self, s: _Scope, x: _Var) -> _Var:
        axis, index = self.gather_index(s, x)
        where = (slice(None),) * axis
        written = axis - x.rank if self.c.chance(20) else axis
        return s.op("gather", [x, index], lambda a, i: a[where + (i,)], x.lo, x.hi,
                    axis=written)

    def scatter_add(self, s: _Scope, x: _Var) -> _Var:
        axis, index = self.gather_index(s, x)
        where = (slice(None),) * axis
        picked = s.op("gather", [x, index], lambda a, i: a[where + (i,)], x.lo, x.hi,
                      axis=axis)
        updates = self.same_type(s, picked)

        def ref(a, i, u):
            out = a.copy()
            np.add.at(out, where + (i,), u)
            return out
        size = math.prod(index.shape)
        return s.tame(s.op("scatter_add", [x, index, updates], ref,
                           x.lo + size * min(updates.lo, 0), x.hi + size * max(updates.hi, 0),
                           axis=axis))

    def along_index(self, s: _Scope, x: _Var, distinct: bool):
        """(axis, an int constant `index` of x's rank for take/put_along_axis: k
        positions along the axis, other dims x's or 1). With `distinct`, the
        positions in each line along the axis differ."""
        axis = self.c.integer(0, x.rank - 1)
        dim = x.shape[axis]
        shape = [d if isinstance(d, int) and self.c.chance(60) else 1 for d in x.shape]
        if not isinstance(dim, int):
            shape[axis] = self.c.integer(1, 1 if distinct else 3)
            values = np.zeros(shape, dtype=np.int64)  # N >= 1: only 0 is always in range
        elif distinct:
            shape[axis] = dim
            order = np.argsort(self.rng.random(shape), axis=axis)
            values = np.take(order, np.arange(self.c.integer(1, dim)), axis=axis)
        else:
            shape[axis] = self.c.integer(1, 3)
            values = self.rng.integers(-dim, dim, shape)
        return axis, s.const(values, self.int_type())

    def take_along_axis(self, s: _Scope, x: _Var) -> _Var:
        axis, index = self.along_index(s, x, distinct=False)
        return s.op("take_along_axis", [x, index], lambda a, i: a[_along(a, i, axis)[0]],
                    x.lo, x.hi, axis=axis)

    def put_along_axis(self, s: _Scope, x: _Var) -> _Var:
        reduce = self.c.pick(["assign", "add"])
        axis, index = self.along_index(s, x, distinct=reduce == "assign")
        target = x.shape[:axis] + (index.shape[axis],) + x.shape[axis + 1:]
        found = [v for v in s.floats if _broadcast(target, v.shape) == target]
        if found and self.c.chance(50):
            values = self.c.recent(found)
        else:
            values = s.random_const(s.const_shape(target))

        def ref(a, i, v):
            where, shape = _along(a, i, axis)
            out = a.copy()
            if reduce == "add":
                np.add.at(out, where, np.broadcast_to(v, shape))
            else:
                out[where] = np.broadcast_to(v, shape)
            return out
        k = index.shape[axis]
        if reduce == "add":
            lo, hi = x.lo + k * min(values.lo, 0), x.hi + k * max(values.hi, 0)
        else:
            lo, hi = min(x.lo, values.lo), max(x.hi, values.hi)
        attrs = {"axis": axis}
        if reduce == "add" or self.c.chance(20):
            attrs["reduce"] = reduce
        return s.tame(s.op("put_along_axis", [x, index, values], ref, lo, hi, **attrs))

    def pad(self, s: _Scope, x: _Var) -> _Var:
        pads = tuple((self.c.integer(0, 2), self.c.integer(0, 1)) if isinstance(d, int)
                     else (0, 0) for d in x.shape)
        value = float(np.float32(self.rng.uniform(-1, 1))) if self.c.chance(50) else 0.0
        attrs = {"pads": pads}
        if value or self.c.chance(20):
            attrs["value"] = value
        return s.op("pad", [x], lambda a: np.pad(a, pads, constant_values=value) if pads else a,
                    min(x.lo, value), max(x.hi, value), **attrs)

    # ------------------------------------------------------------ control flow
    def predicate(self, s: _Scope, nested: bool = False) -> _Var:
        """A bool scalar computed from data (a reduction against a threshold, two
        means), from an int scalar, or a logical combination of those."""
        kinds = [(3, "data")] + ([(1, "pair")] if len(s.floats) > 1 else []) + (
            [(2, "int")] if s.ints else [])
        if not nested:
            kinds.append((1, "combine"))
        kind = self.c.weighted(kinds)
        if kind == "data":
            pred = s.binop(self.c.pick(["gt", "lt", "ge", "le"]), self.total(s, s.pick_float()),
                           s.const(self.rng.normal(0.0, 1.0)))
        elif kind == "pair":
            a, b = self.c.distinct(s.floats, 2)
            pred = s.op("gt", [self.total(s, a, "mean"), self.total(s, b, "mean")],
                        np.greater, observe=_observe_reductions_compare)
        elif kind == "int":
            i = self.c.recent(s.ints)
            if self.c.chance(50):
                parity = s.binop("mod", i, s.const(2, i.type.dtype))
                pred = s.binop("eq", parity, s.const(0, i.type.dtype))
            else:
                pred = s.binop(self.c.pick(["gt", "ne"]), i,
                               s.const(self.c.integer(0, 2), i.type.dtype))
        else:
            pred = s.binop(self.c.pick(["logical_and", "logical_or", "logical_xor"]),
                           self.predicate(s, True), self.predicate(s, True))
        return s.unop("logical_not", pred) if self.c.chance(15) else pred

    def total(self, s: _Scope, x: _Var, name: str | None = None) -> _Var:
        """A scalar summary of x: its sum or mean (or max, min)."""
        if name is None:
            name = self.c.pick(["sum", "mean"] + ([] if self.smooth else ["max", "min"]))
        fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[name]
        lo, hi = x.lo, x.hi
        if name == "sum":
            count = _count_range(x.shape)[1]
            lo, hi = min(lo, lo * count), max(hi, hi * count)
        return s.op(name, [x], lambda a: fn(a), lo, hi)

    def cond(self, s: _Scope) -> list[_Var]:
        pred = self.predicate(s)
        operands = self.c.distinct(s.floats, self.c.integer(1, 3))
        if s.ints and self.c.chance(30):
            operands.append(self.c.recent(s.ints))
        float_types = [v.type for v in operands if v.type.dtype is self.dtype]
        out_types = [self.c.pick(float_types) for _ in range(self.c.integer(1, 2))]
        branches = []

        def branch(rb: Builder, *args):
            sub = _Scope(self, rb, [_Var(a, v.lo, v.hi) for a, v in zip(args, operands)],
                         s.depth + 1)
            self.fill(sub, self.nested_steps())
            sub.ref.results = [self.fit(sub, t) for t in out_types]
            branches.append(sub.ref)
            return [v.value for v in sub.ref.results]

        values = s.b.cond(pred.value, [v.value for v in operands], branch, branch)
        then_ref, else_ref = branches
        results = [_Var(v, min(a.lo, b.lo), max(a.hi, b.hi))
                   for v, a, b in zip(values, then_ref.results, else_ref.results)]

        def step(trace, p, *arrays):
            trace.event("cond", bool(p))
            return (then_ref if p else else_ref)(trace, list(arrays))

        s.ref.add(results, [pred, *operands], step)
        for v in results:
            s.keep(v)
        return results

    def while_loop(self, s: _Scope) -> list[_Var]:
        carried = self.c.distinct(s.floats, self.c.integer(1, 2))
        invariants = self.c.distinct(s.floats, self.c.integer(0, 2))
        limits = [v for v in s.ints if v.type.dtype is dtypes.int64]
        limit_operand = self.c.recent(limits) if limits and self.c.chance(40) else None
        if limit_operand is not None:
            invariants.append(limit_operand)
        zero = s.const(0, dtypes.int64)
        operands = [*invariants, zero, *carried]
        n_consts = len(invariants)
        trip_limit = self.c.integer(0, 3)
        regions = {}

        def params(args):
            inits = [_Var(a, v.lo, v.hi) for a, v in zip(args, operands)]
            for v in inits[n_consts + 1:]:
                v.lo, v.hi = min(v.lo, -LIMIT), max(v.hi, LIMIT)
            return inits

        def cond_region(rb: Builder, *args):
            sub = _Scope(self, rb, params(args), s.depth + 1)
            counter = sub.params[n_consts]
            limit = (sub.params[n_consts - 1] if limit_operand is not None
                     else sub.const(trip_limit, dtypes.int64))
            keep_going = sub.binop("lt", counter, limit)
            if self.c.chance(70):
                data = self.predicate(sub, nested=True)
                pair = [keep_going, data] if self.c.chance(50) else [data, keep_going]
                keep_going = sub.binop("logical_and", *pair)
            sub.ref.results = [keep_going]
            regions["cond"] = sub.ref
            return keep_going.value

        def body_region(rb: Builder, *args):
            sub = _Scope(self, rb, params(args), s.depth + 1)
            counter = sub.params[n_consts]
            next_count = sub.binop("add", counter, sub.const(1, dtypes.int64))
            self.fill(sub, self.nested_steps())
            sub.ref.results = [next_count] + [self.fit(sub, v.type) for v in carried]
            regions["body"] = sub.ref
            return [v.value for v in sub.ref.results]

        values = s.b.while_loop([v.value for v in invariants],
                                [zero.value] + [v.value for v in carried],
                                cond_region, body_region)
        results = [_Var(values[0])] + [_Var(v, -LIMIT, LIMIT) for v in values[1:]]

        def step(trace, *arrays):
            consts, state = list(arrays[:n_consts]), list(arrays[n_consts:])
            trips = 0
            while regions["cond"](trace, consts + state)[0]:
                state = regions["body"](trace, consts + state)
                trips += 1
            trace.event("while", trips)
            return state

        s.ref.add(results, operands, step)
        for v in results:
            s.keep(v)
        return results
