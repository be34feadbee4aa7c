"""Scalar LLVM code for each elementwise op of the registry, with NumPy's semantics.

`EMITTERS` maps an op name to ``emit(s, args, attrs) -> value``, where `s` is the
`ScalarEmitter` (builder, math library, operand and result dtypes). The backend keeps
this table itself, keyed by op name, because ops know no backend (see
docs/architecture.md, "A new backend"). Values are LLVM scalars: ``half``,
``float`` and ``double``; ``i8`` (int8 and uint8, which LLVM does not tell apart:
the emitters pick signed or unsigned instructions by dtype), ``i16``, ``i32``,
``i64``; ``i1`` for bool (stored as one byte); and ``i16`` for bfloat16, its bits,
which only ``cast`` and ``select`` touch (irflow computes nothing in bfloat16).

Where NumPy's result is defined for every input, the code gives the same bits:

- integers wrap around as NumPy's do; uint8 compares, divides, takes remainders,
  maxima and minima unsigned, and widens by zero extension;
- integer ``div`` is floor division and ``mod`` Python's remainder; ``INT_MIN // -1``
  gives ``INT_MIN``, as NumPy does. A zero divisor is an error, as in the
  interpreter (and Paddle): the divisor is made safe first (LLVM's ``sdiv`` would
  trap, so no input can crash the process), the element gets 0, and the emitter
  sets the kernel's *status* byte (`ScalarEmitter.status`), which the caller checks
  after the call and turns into `IntegerDivisionByZero`;
- float ``mod`` is ``fmod`` with NumPy's sign correction (the result has the
  divisor's sign);
- ``maximum``/``minimum``/``relu`` propagate NaN and pick signed zeros as NumPy's
  loops do (``a > b or isnan(a) ? a : b``; float16's loop has ``>=``);
- float-to-int casts of NaN, infinities and out-of-range values give the integer
  minimum, which is what NumPy gives on x86 (LLVM's ``fptosi`` would be poison);
  to int8, int16 and uint8 NumPy converts to int32 first and keeps the low bits
  (300.0 gives 44), and so does the code;
- float16 is NumPy's: each op is computed in float32 and rounded to float16 (see
  `ScalarEmitter.emit`), so a chain rounds after every op as the unfused
  interpreter does; the ops whose float16 loops in NumPy are approximations of
  its own (exp, sin, cos, pow) have no float16 code (`declined`);
- comparisons with NaN are false, except ``ne``;
- ``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf``, ``sin``, ``cos`` come from the
  vectorizable approximations of `irflow.codegen.llvm.mathlib32` (float32:
  float32-native, within 1-2 ulp) and `irflow.codegen.llvm.mathlib` (float64),
  accurate to the dtype's rounding rather than bit-equal to NumPy's SIMD loops;
  ``pow`` and float ``mod`` call libm, ``pow`` of a scalar exponent with NumPy's
  shortcuts (`_pow`).

The emitters write scalar code, which LLVM's loop vectorizer widens; on a
`LaneBuilder` the same emitters compute on vectors directly, lane by lane the scalar
code's results (the fused kernels' rows in lanes, `irflow.codegen.llvm.fused`).
"""
from __future__ import annotations

from llvmlite import binding as llvm, ir

from ...ir.registry import lookup
from ...ir.traits import Fallible
from .mathlib import TOLERANCE, Math
from .mathlib32 import FUNCTIONS as FLOAT32_NATIVE, Math32

HALF, SINGLE, DOUBLE = ir.HalfType(), ir.FloatType(), ir.DoubleType()
LLVM_TYPES = {"f16": HALF, "f32": SINGLE, "f64": DOUBLE, "u8": ir.IntType(8),
              "i8": ir.IntType(8), "i16": ir.IntType(16), "i32": ir.IntType(32),
              "i64": ir.IntType(64), "bool": ir.IntType(1), "bf16": ir.IntType(16)}
MEMORY_TYPES = {**LLVM_TYPES, "bool": ir.IntType(8)}
BITS = {"u8": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "bool": 1}
UNSIGNED = frozenset({"u8", "bool"})
# LLVM turns float16 conversions into calls to compiler-rt, which the JIT cannot
# link, unless the CPU converts itself (F16C); every x86 CPU since 2012 does
HALF_CONVERSIONS = "+f16c" in llvm.get_host_cpu_features().flatten().split(",")
NUMPY_OWN_HALF = frozenset({"exp", "sin", "cos", "pow", "sigmoid"})
"""Ops whose float16 results in NumPy are approximations of their own: its float16
loops (AVX-512 FP16 here; over all 65536 float16 values, a few results differ from
the float32 function rounded to float16 and a few from the correctly rounded value:
docs/llvm.md), and the interpreter's float16 sigmoid, NumPy's float32 exp and
division rounded to float16."""
BFLOAT16_OPS = frozenset({"cast", "select"})  # the ops whose type rules take bfloat16


def is_float(dtype: str) -> bool:
    return dtype in ("f16", "f32", "f64")


def int_range(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype."""
    bits = BITS[dtype]
    if dtype in UNSIGNED:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def icmp(builder: ir.IRBuilder, dtype: str, op: str, x, y):
    """An integer comparison of `dtype`'s values: unsigned for uint8 and bool."""
    if dtype in UNSIGNED:
        return builder.icmp_unsigned(op, x, y)
    return builder.icmp_signed(op, x, y)


def declined(op: str, dtypes) -> str | None:
    """Why the backend has no code for `op` on values of `dtypes` (its operands' and
    result's), or None when it has."""
    if "f16" in dtypes and not HALF_CONVERSIONS:
        return "the host CPU has no float16 conversions (F16C)"
    if "f16" in dtypes and op in NUMPY_OWN_HALF:
        return (f"NumPy's float16 {op} is an approximation of its own, which the LLVM "
                "backend does not reproduce")
    if "bf16" in dtypes and op not in BFLOAT16_OPS:
        return f"'{op}' does not compute in bfloat16"
    return None


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
        """The value of op `name` on `args`, of dtypes `ins`, giving `out`. A float16
        op without code of its own (`HALF_EMITTERS`) is computed as NumPy's float16
        loops compute it: the float32 op on the widened operands, rounded to float16
        (float32 holds more than twice float16's bits, so for +, -, *, / and sqrt
        that is the correctly rounded float16 result too)."""
        self.ins, self.out = tuple(ins), out
        if "f16" not in self.ins and out != "f16":
            return EMITTERS[name](self, args, attrs)
        own = HALF_EMITTERS.get(name)
        if own is not None:
            return own(self, args, attrs)
        wide = [self.b.fpext(a, SINGLE) if d == "f16" else a for a, d in zip(args, ins)]
        single = ["f32" if d == "f16" else d for d in ins]
        y = self.emit(name, wide, single, "f32" if out == "f16" else out, attrs)
        return self.b.fptrunc(y, HALF) if out == "f16" else y

    def half(self, name: str, *args):
        """Float16 op `name` on float16 `args` (composite float16 emitters use it)."""
        return self.emit(name, list(args), ["f16"] * len(args), "f16", {})

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
        """``llvm.<name>`` of the operand's float type (whose short name, ``f32``, is
        LLVM's suffix)."""
        kind = LLVM_TYPES[self.dtype]
        return self.b.call(self.math.intrinsic(f"llvm.{name}.{self.dtype}", kind, [kind]), [x])

    def cmp(self, op: str, x, y):
        """An ordered float comparison, or an int one (unsigned for uint8 and bool)."""
        if self.floating:
            return self.b.fcmp_ordered(op, x, y)
        return icmp(self.b, self.dtype, op, x, y)

    def fail_if(self, condition) -> None:
        """Set the status byte where `condition` (an i1) holds: ``status |= condition``,
        a load, an or and a store that LLVM keeps in a register across the loop."""
        byte = ir.IntType(8)
        old = self.b.load(self.status, typ=byte)
        self.b.store(self.b.or_(old, self.b.zext(condition, byte)), self.status)

    def transcendental(self, name: str, x):
        """A float32-native `Math32` approximation for float32 (see mathlib32);
        otherwise a `Math` one, evaluated in float64 (see mathlib)."""
        if self.dtype == "f32" and name in FLOAT32_NATIVE:
            return getattr(self.math32, name)(x)
        wide = x if self.dtype == "f64" else self.b.fpext(x, ir.DoubleType())
        y = getattr(self.math, name)(wide, TOLERANCE[self.dtype])
        return y if self.dtype == "f64" else self.b.fptrunc(y, ir.FloatType())


def _numpy_max(s: ScalarEmitter, x, y, op: str):
    """NumPy's maximum (op ``>``; its float16 loop's ``>=``) or minimum (``<``, ``<=``):
    x if x op y or x is NaN, else y."""
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
    unsafe = zero
    if s.dtype not in UNSIGNED:
        overflow = b.and_(b.icmp_signed("==", x, s.constant(s.dtype, int_range(s.dtype)[0])),
                          b.icmp_signed("==", y, s.constant(s.dtype, -1)))
        unsafe = b.or_(zero, overflow)
    if s.status is not None:
        s.fail_if(zero)
    return b.select(unsafe, s.constant(s.dtype, 1), y), zero


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
    if s.dtype in UNSIGNED:  # truncation is the floor
        return s.b.select(by_zero, s.zero(), s.b.udiv(x, safe))
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
    if s.dtype in UNSIGNED:
        return b.select(by_zero, s.zero(), b.urem(x, safe))
    r = b.srem(x, safe)
    r = b.select(_floor_adjust(s, r, safe), b.add(r, safe), r)
    return b.select(by_zero, s.zero(), r)


def _abs(s: ScalarEmitter, args, attrs):
    (x,) = args
    if s.floating:
        return s.intrinsic("fabs", x)
    if s.dtype in UNSIGNED:
        return x
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
    """NumPy's astype, as `irflow.ir.dtypes.astype` (the cast kernel) does it:
    bfloat16 through float32."""
    (x,) = args
    src, dst = s.dtype, s.out
    if src == dst:
        return x
    if src == "bf16":
        return _convert(s.b, _single_of_bfloat16(s.b, x), "f32", dst)
    if dst == "bf16":
        return _bfloat16_of_single(s.b, _convert(s.b, x, src, "f32"))
    return _convert(s.b, x, src, dst)


def _convert(b: ir.IRBuilder, x, src: str, dst: str):
    """`x` of dtype `src` converted to `dst` (neither bfloat16) as NumPy converts."""
    kind = LLVM_TYPES[dst]
    if src == dst:
        return x
    if dst == "bool":
        zero = ir.Constant(LLVM_TYPES[src], 0.0 if is_float(src) else 0)
        return (b.fcmp_unordered("!=", x, zero) if is_float(src)
                else b.icmp_unsigned("!=", x, zero))
    if dst == "f16":  # NumPy: doubles round once to float16, the rest through float32
        single = _single_rounded_to_odd(b, x) if src == "f64" else _convert(b, x, src, "f32")
        return b.fptrunc(single, HALF)
    if src == "f16":  # widening is exact; NumPy converts float16 to ints as float32
        return _convert(b, b.fpext(x, SINGLE), "f32", dst)
    if is_float(src) and is_float(dst):
        return b.fpext(x, kind) if dst == "f64" else b.fptrunc(x, kind)
    if is_float(dst):
        return b.uitofp(x, kind) if src in UNSIGNED else b.sitofp(x, kind)
    if is_float(src):
        return _float_to_int(b, x, src, dst)
    if BITS[dst] > BITS[src]:
        return b.zext(x, kind) if src in UNSIGNED else b.sext(x, kind)
    return b.trunc(x, kind) if BITS[dst] < BITS[src] else x


def _float_to_int(b: ir.IRBuilder, x, src: str, dst: str):
    """NumPy's float-to-int conversion on x86: to int64 for int64, else to int32 and
    its low bits kept; NaN, infinities and values out of the range converted to
    give its minimum (what cvttss2si gives; LLVM's ``fptosi`` would be poison)."""
    via = "i64" if dst == "i64" else "i32"
    low = int_range(via)[0]
    inside = b.and_(b.fcmp_ordered(">=", x, ir.Constant(LLVM_TYPES[src], float(low))),
                    b.fcmp_ordered("<", x, ir.Constant(LLVM_TYPES[src], -float(low))))
    value = b.select(inside, b.fptosi(x, LLVM_TYPES[via]), ir.Constant(LLVM_TYPES[via], low))
    return value if via == dst else b.trunc(value, LLVM_TYPES[dst])


def _single_rounded_to_odd(b: ir.IRBuilder, x):
    """The double `x` rounded to float32 toward zero, its last bit set where that is
    inexact: rounding this to float16 rounds `x` once, as NumPy's double-to-half
    conversion does (float32 has more than float16's bits plus two), without the
    compiler-rt call LLVM makes of a double-to-half ``fptrunc``."""
    i32 = ir.IntType(32)
    near = b.fptrunc(x, SINGLE)
    back = b.fpext(near, DOUBLE)
    positive = b.fcmp_ordered(">", x, ir.Constant(DOUBLE, 0.0))
    away = b.select(positive, b.fcmp_ordered(">", back, x), b.fcmp_ordered("<", back, x))
    bits = b.bitcast(near, i32)
    bits = b.select(away, b.sub(bits, ir.Constant(i32, 1)), bits)
    odd = b.bitcast(b.or_(bits, ir.Constant(i32, 1)), SINGLE)
    return b.select(b.fcmp_unordered("==", back, x), near, odd)


def _single_of_bfloat16(b: ir.IRBuilder, bits):
    """The float32 of bfloat16 `bits` (exact: they are its upper half)."""
    i32 = ir.IntType(32)
    return b.bitcast(b.shl(b.zext(bits, i32), ir.Constant(i32, 16)), SINGLE)


def _bfloat16_of_single(b: ir.IRBuilder, x):
    """The bfloat16 bits nearest to float32 `x`, halves to even; NaN gives the quiet
    NaN 0x7FC0 (`irflow.ir.dtypes.to_bfloat16_bits`)."""
    i32 = ir.IntType(32)
    bits = b.bitcast(x, i32)
    odd = b.and_(b.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 1))
    rounded = b.add(bits, b.add(ir.Constant(i32, 0x7FFF), odd))
    upper = b.trunc(b.lshr(rounded, ir.Constant(i32, 16)), ir.IntType(16))
    return b.select(b.fcmp_unordered("uno", x, x), ir.Constant(ir.IntType(16), 0x7FC0), upper)


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
    """libm's pow; for an exponent of one value over the whole loop
    (``scalar_exponent``, `irflow.codegen.llvm.elementwise.pow_attrs`), NumPy's
    shortcuts for -1, 0, 0.5, 1 and 2, bit for bit (sqrt(-inf) is NaN, sqrt(-0.0) is
    -0.0). For a constant exponent LLVM folds the selects away."""
    x, y = args
    b, kind = s.b, LLVM_TYPES[s.dtype]
    value = b.call(s.math.intrinsic(f"llvm.pow.{s.dtype}", kind, [kind, kind]), [x, y])
    if attrs.get("scalar_exponent"):
        one = s.constant(s.dtype, 1.0)
        shortcuts = {-1.0: b.fdiv(one, x), 0.0: one, 0.5: s.intrinsic("sqrt", x), 1.0: x,
                     2.0: b.fmul(x, x)}
        for exponent, shortcut in shortcuts.items():
            value = b.select(b.fcmp_ordered("==", y, s.constant(s.dtype, exponent)),
                             shortcut, value)
    return value


def _isinf(s: ScalarEmitter, args, attrs):
    return s.b.fcmp_ordered("==", s.intrinsic("fabs", args[0]), s.constant(s.dtype, "inf"))


def _isfinite(s: ScalarEmitter, args, attrs):
    return s.b.fcmp_ordered("<", s.intrinsic("fabs", args[0]), s.constant(s.dtype, "inf"))


def _bitwise_not(s: ScalarEmitter, args, attrs):
    """Every bit flipped: xor with all ones (-1; 1 for an i1 bool, so logical not)."""
    return s.b.xor(args[0], s.constant(s.dtype, -1))


def _half_relu(s: ScalarEmitter, args, attrs):
    """np.maximum(x, 0) in float16: relu(-0) is -0."""
    return _numpy_max(s, args[0], s.zero(), ">=")


def _half_rsqrt(s: ScalarEmitter, args, attrs):
    """The interpreter's ``1 / sqrt(x)``: two float16 ops, each rounded."""
    return s.half("div", s.constant("f16", 1.0), s.half("sqrt", args[0]))


def _half_in_double(name: str, through_single: bool):
    """Float16 `name` from `Math`'s float64 approximation (a few float64 ulps), rounded
    to float32 first where NumPy rounds its float32 result (`through_single`: log and
    tanh, whose NumPy results are that double rounding over all float16 values), else
    once (erf: the interpreter rounds math.erf's double)."""
    def emit(s: ScalarEmitter, args, attrs):
        wide = s.b.fpext(s.b.fpext(args[0], SINGLE), DOUBLE)
        y = getattr(s.math, name)(wide, TOLERANCE["f64"])
        single = s.b.fptrunc(y, SINGLE) if through_single else _single_rounded_to_odd(s.b, y)
        return s.b.fptrunc(single, HALF)
    return emit


def can_fail(op: str, dtype: str) -> bool:
    """Whether op `op` on `dtype` can fail (`Fallible`: an integer's zero divisor): a
    kernel holding one has a status byte."""
    return lookup(op).has(Fallible) and not is_float(dtype)


TRANSCENDENTAL = frozenset({"exp", "log", "tanh", "sigmoid", "erf", "sin", "cos", "pow"})
"""The ops computed by a polynomial or rational approximation (`irflow.codegen.llvm.mathlib`):
a body with one vectorizes into several times the code, and takes that much longer to
compile."""

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
    "bitwise_and": lambda s, args, attrs: s.b.and_(*args),
    "bitwise_or": lambda s, args, attrs: s.b.or_(*args),
    "bitwise_xor": lambda s, args, attrs: s.b.xor(*args),
    "bitwise_not": _bitwise_not,
    "select": lambda s, args, attrs: s.b.select(*args),
    "cast": _cast,
}

HALF_EMITTERS = {
    **{name: EMITTERS[name] for name in ("neg", "abs", "select", "stop_gradient", "cast")},
    # NumPy's float16 loops keep x on a tie of zeros: maximum(-0, +0) is -0
    "maximum": lambda s, args, attrs: _numpy_max(s, *args, ">="),
    "minimum": lambda s, args, attrs: _numpy_max(s, *args, "<="),
    "relu": _half_relu,
    "rsqrt": _half_rsqrt,
    "log": _half_in_double("log", through_single=True),
    "tanh": _half_in_double("tanh", through_single=True),
    "erf": _half_in_double("erf", through_single=False),
}
"""The float16 ops with code of their own, not the float32 op rounded: sign and
magnitude bit operations (NaN payloads kept, as NumPy's), NumPy's float16 choices
between zeros, the interpreter's composite kernels op by op, and the functions
computed in float64 and rounded as NumPy rounds them."""


LANE_DECLINED = frozenset({"sin", "cos"})
"""The ops whose scalar code `LaneBuilder` cannot run on vectors: float64 sin and cos
read their reduction table with a scalar index, float32's call a function of their
own beyond `mathlib32.SINCOS_BOUND`."""


def _lifted_binary(name: str):
    method = getattr(ir.IRBuilder, name)

    def binary(self: LaneBuilder, lhs, rhs, *rest, **options):
        return method(self, *self.matched(lhs, rhs), *rest, **options)
    binary.__name__ = name
    return binary


def _lifted_compare(name: str):
    method = getattr(ir.IRBuilder, name)

    def compare(self: LaneBuilder, op: str, lhs, rhs, *rest, **options):
        return method(self, op, *self.matched(lhs, rhs), *rest, **options)
    compare.__name__ = name
    return compare


def _lifted_cast(name: str):
    method = getattr(ir.IRBuilder, name)

    def cast(self: LaneBuilder, value, kind, *rest, **options):
        return method(self, value, self.lifted(value, kind), *rest, **options)
    cast.__name__ = name
    return cast


def _lifting(cls):
    """Give `LaneBuilder` its instructions that take scalars beside vectors."""
    for name in ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "and_", "or_", "xor",
                 "shl", "lshr", "ashr", "fadd", "fsub", "fmul", "fdiv", "frem"):
        setattr(cls, name, _lifted_binary(name))
    for name in ("icmp_signed", "icmp_unsigned", "fcmp_ordered", "fcmp_unordered"):
        setattr(cls, name, _lifted_compare(name))
    for name in ("trunc", "zext", "sext", "fptrunc", "fpext", "fptosi", "fptoui", "sitofp",
                 "uitofp", "bitcast"):
        setattr(cls, name, _lifted_cast(name))
    return cls


@_lifting
class LaneBuilder(ir.IRBuilder):
    """An IR builder on which the scalar emitters (`EMITTERS`, `Math`, `Math32`)
    compute on vectors, one lane per row (`irflow.codegen.llvm.fused`, rows in lanes).

    The emitters write scalar code whose operands are the values they are given and
    constants of their own. Given vectors, an instruction mixing a vector with
    scalars here splats the scalars to the vector's width; a cast of a vector casts
    to a vector of the target type; a call of a scalar intrinsic (``llvm.fabs.f32``)
    on vectors calls its vector form (``llvm.fabs.v16f32``). So lane i of each result
    is what the scalar code computes from lane i of the operands, the same
    instructions in the same order: bit for bit the scalar code's results. Code that
    loads, stores or branches per element (the status byte of an integer division,
    `LANE_DECLINED`) has no such form."""

    def __init__(self, block: ir.Block, lanes: int):
        super().__init__(block)
        self.lanes = lanes

    def splat(self, value):
        """`value` in every lane (a vector as it is)."""
        if isinstance(value.type, ir.VectorType):
            return value
        kind = ir.VectorType(value.type, self.lanes)
        if isinstance(value, ir.Constant):
            return ir.Constant(kind, [value.constant] * self.lanes)
        one = self.insert_element(ir.Constant(kind, ir.Undefined), value,
                                  ir.Constant(ir.IntType(32), 0))
        return self.shuffle_vector(one, ir.Constant(kind, ir.Undefined),
                                   ir.Constant(ir.VectorType(ir.IntType(32), self.lanes),
                                               [0] * self.lanes))

    def matched(self, *values) -> list:
        """`values`, splat to vectors where one of them is a vector."""
        if any(isinstance(v.type, ir.VectorType) for v in values):
            return [self.splat(v) for v in values]
        return list(values)

    def lifted(self, value, kind: ir.Type) -> ir.Type:
        """`kind`, as a vector of `value`'s width if `value` is a vector."""
        if isinstance(value.type, ir.VectorType) and not isinstance(kind, ir.VectorType):
            return ir.VectorType(kind, value.type.count)
        return kind

    def vector_form(self, fn: ir.Function) -> ir.Function:
        """The vector form of scalar intrinsic `fn` (``llvm.<name>.<type>``, every
        argument and the result of that type), declared in the module once."""
        kind = ir.VectorType(fn.function_type.return_type, self.lanes)
        name, _, suffix = fn.name.rpartition(".")
        if not name.startswith("llvm.") or any(
                a != fn.function_type.return_type for a in fn.function_type.args):
            raise TypeError(f"no vector form of {fn.name!r} for the rows in lanes")
        name = f"{name}.v{self.lanes}{suffix}"
        vector = self.module.globals.get(name)
        if vector is None:
            vector = ir.Function(self.module, ir.FunctionType(
                kind, [kind] * len(fn.function_type.args)), name=name)
        return vector

    def call(self, fn, args, *rest, **options):
        if any(isinstance(a.type, ir.VectorType) and a.type != t
               for a, t in zip(args, fn.function_type.args)):
            fn, args = self.vector_form(fn), self.matched(*args)
        return super().call(fn, args, *rest, **options)

    def select(self, cond, lhs, rhs, *rest, **options):
        if isinstance(cond.type, ir.VectorType):
            lhs, rhs = self.splat(lhs), self.splat(rhs)
        else:
            lhs, rhs = self.matched(lhs, rhs)
        return super().select(cond, lhs, rhs, *rest, **options)
