"""Scalar LLVM code for each elementwise op of the registry, with NumPy's semantics.

`EMITTERS` maps an op name to ``emit(s, args, attrs) -> value``, where `s` is the
`ScalarEmitter` (builder, math library, operand and result dtypes). The backend keeps
this table itself, keyed by op name, because ops know no backend (see
docs/architecture.md, "A new backend"). Values are LLVM scalars: ``float`` and
``double``, ``i32`` and ``i64``, and ``i1`` for bool (stored as one byte).

Where NumPy's result is defined for every input, the code gives the same bits:

- integer ``div`` is floor division and ``mod`` Python's remainder; ``INT_MIN // -1``
  gives ``INT_MIN``, as NumPy does. A zero divisor is an error, as in the
  interpreter (and Paddle): the divisor is made safe first (LLVM's ``sdiv`` would
  trap, so no input can crash the process), the element gets 0, and the emitter
  sets the kernel's *status* byte (`ScalarEmitter.status`), which the caller checks
  after the call and turns into `IntegerDivisionByZero`;
- float ``mod`` is ``fmod`` with NumPy's sign correction (the result has the
  divisor's sign);
- ``maximum``/``minimum``/``relu`` propagate NaN and pick signed zeros as NumPy's
  loops do (``a > b or isnan(a) ? a : b``);
- float-to-int casts of NaN, infinities and out-of-range values give the integer
  minimum, which is what NumPy gives on x86 (LLVM's ``fptosi`` would be poison);
- comparisons with NaN are false, except ``ne``;
- ``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf``, ``sin``, ``cos`` come from the
  vectorizable approximations of `irflow.codegen.llvm.mathlib32` (float32 exp,
  log, tanh, sigmoid, erf: float32-native, within 1-2 ulp) and
  `irflow.codegen.llvm.mathlib` (the rest, in float64), accurate to the
  dtype's rounding rather than bit-equal to NumPy's SIMD loops; ``pow`` and float
  ``mod`` call libm.
"""
from __future__ import annotations

from llvmlite import ir

from .mathlib import TOLERANCE, Math
from .mathlib32 import FUNCTIONS as FLOAT32_NATIVE, Math32

LLVM_TYPES = {"f32": ir.FloatType(), "f64": ir.DoubleType(), "i32": ir.IntType(32),
              "i64": ir.IntType(64), "bool": ir.IntType(1)}
MEMORY_TYPES = {**LLVM_TYPES, "bool": ir.IntType(8)}
_BITS = {"i32": 32, "i64": 64}


def is_float(dtype: str) -> bool:
    return dtype in ("f32", "f64")


class ScalarEmitter:
    """What an emitter needs: the builder, the math library, and the dtypes of the
    current op's operands (`ins`) and result (`out`), as short names (``f32``)."""

    def __init__(self, builder: ir.IRBuilder, math: Math, status=None):
        self.b = builder
        self.math = math
        self.status = status  # a pointer to the kernel's status byte, if it can fail
        self.math32 = Math32(builder, math.has_fma)
        self.ins: tuple[str, ...] = ()
        self.out: str = ""

    def emit(self, name: str, args, ins, out: str, attrs: dict):
        self.ins, self.out = tuple(ins), out
        return EMITTERS[name](self, args, attrs)

    # helpers the emitters share

    @property
    def dtype(self) -> str:
        """The dtype of the first operand."""
        return self.ins[0]

    @property
    def floating(self) -> bool:
        return is_float(self.ins[0])

    def constant(self, dtype: str, value):
        kind = LLVM_TYPES[dtype]
        if is_float(dtype):
            return ir.Constant(kind, float(value))
        return ir.Constant(kind, int(bool(value)) if dtype == "bool" else int(value))

    def zero(self, dtype: str | None = None):
        return self.constant(dtype or self.dtype, 0)

    def intrinsic(self, name: str, x):
        kind = LLVM_TYPES[self.dtype]
        suffix = "f32" if self.dtype == "f32" else "f64"
        return self.b.call(self.math.intrinsic(f"llvm.{name}.{suffix}", kind, [kind]), [x])

    def cmp(self, op: str, x, y):
        """An ordered float comparison or a signed (unsigned for bool) int one."""
        if self.floating:
            return self.b.fcmp_ordered(op, x, y)
        if self.dtype == "bool":
            return self.b.icmp_unsigned(op, x, y)
        return self.b.icmp_signed(op, x, y)

    def fail_if(self, condition) -> None:
        """Set the status byte where `condition` (an i1) holds: ``status |= condition``,
        a load, an or and a store that LLVM keeps in a register across the loop."""
        byte = ir.IntType(8)
        old = self.b.load(self.status, typ=byte)
        self.b.store(self.b.or_(old, self.b.zext(condition, byte)), self.status)

    def transcendental(self, name: str, x):
        """A float32-native `Math32` approximation for float32 exp, log, tanh,
        sigmoid and erf (see mathlib32); otherwise a `Math` one, evaluated in
        float64 (see mathlib)."""
        if self.dtype == "f32" and name in FLOAT32_NATIVE:
            return getattr(self.math32, name)(x)
        wide = x if self.dtype == "f64" else self.b.fpext(x, ir.DoubleType())
        y = getattr(self.math, name)(wide, TOLERANCE[self.dtype])
        return y if self.dtype == "f64" else self.b.fptrunc(y, ir.FloatType())


def _numpy_max(s: ScalarEmitter, x, y, op: str):
    """NumPy's maximum (op ``>``) or minimum (``<``): x if x op y or x is NaN, else y."""
    pick = s.cmp(op, x, y)
    if s.floating:
        pick = s.b.or_(pick, s.b.fcmp_unordered("uno", x, x))
    return s.b.select(pick, x, y)


def _safe_divisor(s: ScalarEmitter, x, y):
    """(divisor that cannot trap, y == 0): 1 where y is 0, and where x is the integer
    minimum and y is -1 (whose quotient overflows; NumPy gives x, as dividing by 1).
    A zero divisor sets the status byte."""
    b = s.b
    zero = b.icmp_signed("==", y, s.zero())
    minimum = s.constant(s.dtype, -(1 << (_BITS[s.dtype] - 1)))
    overflow = b.and_(b.icmp_signed("==", x, minimum),
                      b.icmp_signed("==", y, s.constant(s.dtype, -1)))
    if s.status is not None:
        s.fail_if(zero)
    return b.select(b.or_(zero, overflow), s.constant(s.dtype, 1), y), zero


def _floor_adjust(s: ScalarEmitter, r, y):
    """Whether a truncated remainder r needs the floor correction (r's sign not y's)."""
    b = s.b
    nonzero = b.icmp_signed("!=", r, s.zero())
    return b.and_(nonzero, b.xor(b.icmp_signed("<", r, s.zero()),
                                 b.icmp_signed("<", y, s.zero())))


def _div(s: ScalarEmitter, args, attrs):
    x, y = args
    if s.floating:
        return s.b.fdiv(x, y)
    safe, by_zero = _safe_divisor(s, x, y)
    q = s.b.sdiv(x, safe)
    r = s.b.srem(x, safe)
    q = s.b.select(_floor_adjust(s, r, safe), s.b.sub(q, s.constant(s.dtype, 1)), q)
    return s.b.select(by_zero, s.zero(), q)


def _mod(s: ScalarEmitter, args, attrs):
    x, y = args
    b = s.b
    if s.floating:
        r = b.frem(x, y)
        negative_r = b.fcmp_ordered("<", r, s.zero())
        negative_y = b.fcmp_ordered("<", y, s.zero())
        fix = b.and_(b.fcmp_ordered("!=", r, s.zero()), b.xor(negative_r, negative_y))
        r = b.select(fix, b.fadd(r, y), r)
        kind = LLVM_TYPES[s.dtype]
        signed_zero = b.call(s.math.intrinsic(f"llvm.copysign.{s.dtype}", kind, [kind, kind]),
                             [s.zero(), y])
        r = b.select(b.fcmp_ordered("==", r, s.zero()), signed_zero, r)
        return r
    safe, by_zero = _safe_divisor(s, x, y)
    r = b.srem(x, safe)
    r = b.select(_floor_adjust(s, r, safe), b.add(r, safe), r)
    return b.select(by_zero, s.zero(), r)


def _abs(s: ScalarEmitter, args, attrs):
    (x,) = args
    if s.floating:
        return s.intrinsic("fabs", x)
    return s.b.select(s.cmp("<", x, s.zero()), s.b.sub(s.zero(), x), x)


def _sign(s: ScalarEmitter, args, attrs):
    (x,) = args
    b = s.b
    one, minus = s.constant(s.dtype, 1), s.constant(s.dtype, -1)
    if s.floating:  # NaN stays NaN, both zeros give +0
        value = b.select(b.fcmp_ordered("==", x, s.zero()), s.zero(), x)
        value = b.select(s.cmp("<", x, s.zero()), minus, value)
        return b.select(s.cmp(">", x, s.zero()), one, value)
    kind = LLVM_TYPES[s.dtype]
    return b.sub(b.zext(s.cmp(">", x, s.zero()), kind), b.zext(s.cmp("<", x, s.zero()), kind))


def _cast(s: ScalarEmitter, args, attrs):
    (x,) = args
    b = s.b
    src, dst = s.dtype, s.out
    kind = LLVM_TYPES[dst]
    if src == dst:
        return x
    if dst == "bool":
        return (b.fcmp_unordered("!=", x, s.zero()) if is_float(src)
                else b.icmp_signed("!=", x, s.zero()))
    if src == "bool":
        return b.uitofp(x, kind) if is_float(dst) else b.zext(x, kind)
    if is_float(src) and is_float(dst):
        return b.fpext(x, kind) if dst == "f64" else b.fptrunc(x, kind)
    if is_float(dst):
        return b.sitofp(x, kind)
    if is_float(src):
        bound = float(1 << (_BITS[dst] - 1))
        inside = b.and_(b.fcmp_ordered(">=", x, s.constant(src, -bound)),
                        b.fcmp_ordered("<", x, s.constant(src, bound)))
        return b.select(inside, b.fptosi(x, kind), ir.Constant(kind, -(1 << (_BITS[dst] - 1))))
    return b.sext(x, kind) if _BITS[dst] > _BITS[src] else b.trunc(x, kind)


def _relu(s: ScalarEmitter, args, attrs):
    return _numpy_max(s, args[0], s.zero(), ">")


def _arith(float_op: str, int_op: str):
    def emit(s: ScalarEmitter, args, attrs):
        return getattr(s.b, float_op if s.floating else int_op)(*args)
    return emit


def _compare(op: str):
    def emit(s: ScalarEmitter, args, attrs):
        x, y = args
        if s.floating and op == "!=":
            return s.b.fcmp_unordered("!=", x, y)  # NaN != anything
        return s.cmp(op, x, y)
    return emit


def _transcendental(name: str):
    return lambda s, args, attrs: s.transcendental(name, args[0])


def _intrinsic(name: str):
    return lambda s, args, attrs: s.intrinsic(name, args[0])


def _neg(s: ScalarEmitter, args, attrs):
    return s.b.fneg(args[0]) if s.floating else s.b.sub(s.zero(), args[0])


def _rsqrt(s: ScalarEmitter, args, attrs):
    return s.b.fdiv(s.constant(s.dtype, 1.0), s.intrinsic("sqrt", args[0]))


def _pow(s: ScalarEmitter, args, attrs):
    kind = LLVM_TYPES[s.dtype]
    return s.b.call(s.math.intrinsic(f"llvm.pow.{s.dtype}", kind, [kind, kind]), list(args))


def _isinf(s: ScalarEmitter, args, attrs):
    return s.b.fcmp_ordered("==", s.intrinsic("fabs", args[0]), s.constant(s.dtype, "inf"))


def _isfinite(s: ScalarEmitter, args, attrs):
    return s.b.fcmp_ordered("<", s.intrinsic("fabs", args[0]), s.constant(s.dtype, "inf"))


FALLIBLE = {"div", "mod"}
"""The ops whose integer forms can fail (by a zero divisor): a kernel holding one has
a status byte."""


def can_fail(op: str, dtype: str) -> bool:
    return op in FALLIBLE and not is_float(dtype)


EMITTERS = {
    "neg": _neg,
    "abs": _abs,
    "sign": _sign,
    "exp": _transcendental("exp"),
    "log": _transcendental("log"),
    "tanh": _transcendental("tanh"),
    "sigmoid": _transcendental("sigmoid"),
    "erf": _transcendental("erf"),
    "sin": _transcendental("sin"),
    "cos": _transcendental("cos"),
    "sqrt": _intrinsic("sqrt"),
    "rsqrt": _rsqrt,
    "floor": _intrinsic("floor"),
    "ceil": _intrinsic("ceil"),
    "round": _intrinsic("roundeven"),  # halves to even, as NumPy
    "relu": _relu,
    "logical_not": lambda s, args, attrs: s.b.xor(args[0], ir.Constant(ir.IntType(1), 1)),
    "stop_gradient": lambda s, args, attrs: args[0],
    "isnan": lambda s, args, attrs: s.b.fcmp_unordered("uno", args[0], args[0]),
    "isinf": _isinf,
    "isfinite": _isfinite,
    "add": _arith("fadd", "add"),
    "sub": _arith("fsub", "sub"),
    "mul": _arith("fmul", "mul"),
    "div": _div,
    "mod": _mod,
    "pow": _pow,
    "maximum": lambda s, args, attrs: _numpy_max(s, *args, ">"),
    "minimum": lambda s, args, attrs: _numpy_max(s, *args, "<"),
    "eq": _compare("=="),
    "ne": _compare("!="),
    "lt": _compare("<"),
    "le": _compare("<="),
    "gt": _compare(">"),
    "ge": _compare(">="),
    "logical_and": lambda s, args, attrs: s.b.and_(*args),
    "logical_or": lambda s, args, attrs: s.b.or_(*args),
    "logical_xor": lambda s, args, attrs: s.b.xor(*args),
    "select": lambda s, args, attrs: s.b.select(*args),
    "cast": _cast,
}
