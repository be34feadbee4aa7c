"""Comparisons, logical ops and NaN/Inf tests; `where` selects by a condition."""
from __future__ import annotations

import numbers

from ..dispatch import apply
from ..ir import dtypes
from .convert import as_tensor, cast, default_dtype_of, promote, python_number_of, to_array
from .tensor import Tensor

BFLOAT16_ARRAY_DTYPE = dtypes.bfloat16.np  # the NumPy dtype a bfloat16 tensor's value has


def _compare(op: str):
    """Comparison `op` of x and y after promotion. Two bfloat16 operands are compared
    in float32, as Paddle's bfloat16 kernels compare: irflow's ops store bfloat16 but
    do not compute in it, and widening a bfloat16 to float32 is exact, so the result
    is the same."""
    def fn(x, y, name=None) -> Tensor:
        a, b = promote(x, y)
        value = a._value  # the dtype read cheaply: masks like x > 0 are eager's hot path
        if (value.dtype == BFLOAT16_ARRAY_DTYPE if value is not None
                else a.dtype is dtypes.bfloat16):
            a, b = cast(a, dtypes.float32), cast(b, dtypes.float32)
        return apply(op, (a, b))
    fn.__name__ = op
    return fn


equal = _compare("eq")
not_equal = _compare("ne")
less_than = _compare("lt")
less_equal = _compare("le")
greater_than = _compare("gt")
greater_equal = _compare("ge")


def _logical(op: str):
    def fn(x, y, out=None, name=None) -> Tensor:
        x, y = promote(x, y)
        return apply(op, (cast(x, dtypes.bool_), cast(y, dtypes.bool_)))
    fn.__name__ = op
    return fn


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


def logical_not(x, out=None, name=None) -> Tensor:
    return apply("logical_not", (cast(as_tensor(x), dtypes.bool_),))


def _check_integral(op: str, x: Tensor) -> None:
    """Bitwise ops take int or bool tensors only, as Paddle's (it has no float
    kernels): a float operand is the caller's mistake, not something to cast away."""
    if x.dtype.kind not in ("int", "bool"):
        raise TypeError(f"paddle.{op} takes int or bool tensors (as in Paddle), got "
                        f"{x.dtype.name}; cast it with .astype('int64') or compare it")


def _bitwise(op: str):
    """Paddle's bitwise op `op` (also ``&``, ``|``, ``^``): bit by bit on ints, keeping
    their dtype, logical on bools. A Python int or bool becomes the tensor's dtype, as
    in Paddle's ``2 & mask``: a bool tensor reads it as a bool (nonzero is True), where
    arithmetic would make it int64."""
    def fn(x, y, out=None, name=None) -> Tensor:
        x, y = promote(*_int_scalar_as_tensor_dtype(x, y))
        _check_integral(op, x)
        return apply(op, (x, y))
    fn.__name__ = op
    fn.__doc__ = f"x {_BITWISE_SYMBOLS[op]} y bit by bit on int tensors, logically on bools."
    return fn


def _int_scalar_as_tensor_dtype(x, y) -> tuple:
    """x and y, a Python integer (or bool) among them cast to the other's dtype."""
    if isinstance(x, Tensor) and isinstance(y, numbers.Integral):
        return x, cast(as_tensor(y, like=x), x.dtype)
    if isinstance(y, Tensor) and isinstance(x, numbers.Integral):
        return cast(as_tensor(x, like=y), y.dtype), y
    return x, y


_BITWISE_SYMBOLS = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
bitwise_and = _bitwise("bitwise_and")
bitwise_or = _bitwise("bitwise_or")
bitwise_xor = _bitwise("bitwise_xor")


def bitwise_left_shift(x, y, is_arithmetic=True, out=None, name=None) -> Tensor:
    """x << y of integer tensors of one dtype (a Python int y, or x, takes the other's
    dtype), as Paddle's: the bits shifted out are lost (the result wraps), and a count
    below 0 or of the width or more gives 0. `is_arithmetic` changes nothing on the
    left."""
    from .math import multiply
    x, y, bits = _shift_operands("bitwise_left_shift", x, y)
    inside = logical_and(greater_equal(y, 0), less_than(y, bits))
    shifted = multiply(x, _powers_of_two(select(inside, y, 0), x))
    return select(inside, shifted, _zero_of(x))


def bitwise_right_shift(x, y, is_arithmetic=True, out=None, name=None) -> Tensor:
    """x >> y of integer tensors of one dtype, as Paddle's: arithmetic (the sign bit
    copied in; a count below 0 or of the width or more leaves -1 or 0) or, with
    ``is_arithmetic=False`` or an unsigned dtype, logical (zeros shifted in; such a
    count gives 0)."""
    from .math import floor_divide, subtract
    x, y, bits = _shift_operands("bitwise_right_shift", x, y)
    signed = x.dtype.np.kind == "i"
    zero = _zero_of(x)
    # the floor of x / 2**y is the arithmetic shift while 2**y fits the dtype
    fits = logical_and(greater_equal(y, 0), less_than(y, bits - 1 if signed else bits))
    shifted = floor_divide(x, _powers_of_two(select(fits, y, 0), x))
    if not signed:
        return select(fits, shifted, zero)
    arithmetic = select(fits, shifted, select(less_than(x, 0), subtract(zero, 1), zero))
    if is_arithmetic:
        return arithmetic
    # logical: the arithmetic shift with the copied sign bits cleared (2**(bits - y) - 1
    # wraps to the dtype's largest value for y = 1)
    inside = logical_and(greater_equal(y, 1), less_than(y, bits))
    kept = subtract(_powers_of_two(select(inside, subtract(as_tensor(bits, like=y), y), 0), x),
                    1)
    logical = select(inside, bitwise_and(arithmetic, kept), zero)
    return select(equal(y, 0), x, logical)


def _shift_operands(op: str, x, y) -> tuple[Tensor, Tensor, int]:
    """x and y of one integer dtype (not bool: Paddle has no such kernel) and its
    width in bits."""
    x, y = _int_scalar_as_tensor_dtype(x, y)
    x, y = as_tensor(x), as_tensor(y)
    for t in (x, y):
        if t.dtype.kind != "int":
            raise TypeError(f"paddle.{op} takes int tensors (as in Paddle), got "
                            f"{t.dtype.name}")
    if x.dtype is not y.dtype:
        raise TypeError(f"paddle.{op} takes two tensors of one dtype (as in Paddle), got "
                        f"{x.dtype.name} and {y.dtype.name}")
    return x, y, x.dtype.np.itemsize * 8


def _powers_of_two(counts: Tensor, like: Tensor) -> Tensor:
    """2 ** counts in `like`'s dtype (wrapping, as its arithmetic does)."""
    from .math import pow as power
    return power(cast(as_tensor(2, like=like), like.dtype), counts)


def _zero_of(x: Tensor) -> Tensor:
    """0 as a 0-D tensor of x's dtype."""
    return cast(as_tensor(0, like=x), x.dtype)


def bitwise_not(x, out=None, name=None) -> Tensor:
    """~x: every bit flipped on int tensors (-x - 1 for signed ones), not x on bools."""
    x = as_tensor(x)
    _check_integral("bitwise_not", x)
    return apply("bitwise_not", (x,))


def _float_test(op: str):
    """isnan, isinf or isfinite: a bfloat16 tensor is tested in float32 (exact), as
    irflow's ops store bfloat16 but do not compute in it."""
    def fn(x, name=None) -> Tensor:
        x = as_tensor(x)
        if x.dtype is dtypes.bfloat16:
            x = cast(x, dtypes.float32)
        if not x.dtype.is_float:  # integers are never NaN or infinite
            return apply("ne" if op != "isfinite" else "eq", (x, x))
        return apply(op, (x,))
    fn.__name__ = op
    return fn


isnan = _float_test("isnan")
isinf = _float_test("isinf")
isfinite = _float_test("isfinite")


def select(condition, x, y) -> Tensor:
    """x where the bool `condition` holds, else y (all three broadcast), for irflow's
    own code: a Python number meets the tensor as in arithmetic, taking its dtype
    (``select(x > 0, x, 0.0)`` of a float16 x is float16, as Paddle's kernels keep an
    activation's dtype), where the public `where` makes it a tensor of its own first,
    as Paddle's does."""
    condition = as_tensor(condition)
    if not condition.dtype.is_bool:
        raise TypeError(f"where: the condition must be a bool tensor (as in Paddle), got "
                        f"{condition.dtype.name}; compare it, e.g. x != 0")
    x, y = promote(x, y)
    return apply("select", (condition, x, y))


def where(condition, x=None, y=None, name=None) -> Tensor:
    """x where condition holds, else y (all three broadcast). With the condition
    alone: the coordinates where it holds, one 1-D tensor per axis (`nonzero`).

    Dtypes as in Paddle: a value that is not a tensor (a Python or NumPy scalar)
    counts as the tensor `paddle.to_tensor` makes of it (a Python float one of the
    default float dtype, an int int64, a bool bool), and x and y then meet as two
    tensors do, whatever their ranks: only two float dtypes promote. So a float16
    tensor and 1.5 give float32, and an int with a float tensor, or with an int32
    one, is an error. A Python number is rounded once, to the result's dtype (Paddle
    rounds 1.1 to float32 first, also for a float64 result)."""
    if x is None and y is None:
        from .search import nonzero
        return nonzero(condition, as_tuple=True)
    if x is None or y is None:
        raise ValueError(f"where: give both x and y or neither (as in Paddle), got only "
                         f"{'x' if y is None else 'y'}")
    dx, dy = _where_operand_dtype(x), _where_operand_dtype(y)
    common = dx if dx is dy else _where_dtype(dx, dy)
    return select(condition, _in_dtype(x, common), _in_dtype(y, common))


def _where_operand_dtype(value) -> dtypes.DType:
    """The dtype Paddle's `where` sees for operand `value`: a tensor's own, else that
    of the tensor `paddle.to_tensor` makes of it; a traced stand-in for a Python
    number (``t.item()`` in a compiled program) counts as that number."""
    if not isinstance(value, Tensor):
        return dtypes.dtype(to_array(value).dtype)
    if value.python_number:
        return default_dtype_of(python_number_of(value))
    return value.dtype


def _in_dtype(value, dtype: dtypes.DType) -> Tensor:
    """`value` (a tensor, or a value `paddle.to_tensor` takes) as a tensor of `dtype`."""
    if isinstance(value, Tensor):
        return cast(value, dtype)
    return Tensor._from_array(to_array(value, dtype))


def _where_dtype(dx: dtypes.DType, dy: dtypes.DType) -> dtypes.DType:
    """The dtype two different dtypes meet at in Paddle's `where`: the wider of two
    floats (float16 and bfloat16 at float32); any other mix is Paddle's TypeError."""
    floating = [d for d in (dx, dy) if d.is_float or d is dtypes.bfloat16]
    if len(floating) == 2:
        if dx.np.itemsize == dy.np.itemsize:  # float16 and bfloat16
            return dtypes.float32
        return dx if dx.np.itemsize > dy.np.itemsize else dy
    raise TypeError(f"where: x is {dx.name} and y is {dy.name}, which do not mix: as in "
                    f"Paddle, only two float dtypes promote, and a Python number is a "
                    f"tensor of its own first (a float of the default float dtype, an int "
                    f"int64, a bool bool); cast one with .astype(), or give a float tensor "
                    f"a float number (0.0, not 0)")


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None) -> Tensor:
    """|x - y| <= atol + rtol * |y| elementwise; equal infinities are close, NaN is
    close to NaN only with `equal_nan`."""
    x, y = promote(x, y)
    if not x.dtype.is_float:
        raise TypeError(f"isclose needs float tensors (as in Paddle), got {x.dtype.name}")
    return _close(x, y, rtol, atol, equal_nan)


def _close(x: Tensor, y: Tensor, rtol, atol, equal_nan) -> Tensor:
    from .math import abs, multiply, subtract
    same = equal(x, y)  # also inf == inf, whose difference would be NaN: compare 0 - 0
    zero = as_tensor(0, like=x)
    difference = subtract(select(same, zero, x), select(same, zero, y))
    close = logical_or(less_equal(abs(difference), abs(multiply(y, rtol)) + atol), same)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None) -> Tensor:
    from .math import all
    x, y = promote(x, y)
    if not x.dtype.is_float:
        x, y = cast(x, dtypes.float64), cast(y, dtypes.float64)
    return all(_close(x, y, rtol, atol, equal_nan))


def equal_all(x, y, name=None) -> Tensor:
    """True when x and y have one shape and equal elements, as Paddle's: tensors of
    different shapes are unequal (a [2] tensor of ones and a [1] one are not equal),
    never broadcast. (While tracing, symbolic dims that may differ are compared
    elementwise, which makes the program require them equal.)"""
    from .manipulation import exact_shape
    from .math import all
    x, y = as_tensor(x), as_tensor(y)
    if _surely_different(exact_shape(x), exact_shape(y)):
        return as_tensor(False)
    return all(equal(x, y))


def _surely_different(a: tuple, b: tuple) -> bool:
    """Whether shapes `a` and `b` differ whatever sizes their symbols take."""
    return len(a) != len(b) or any(isinstance(m, int) and isinstance(n, int) and m != n
                                   for m, n in zip(a, b))


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def isin(x, test_x, assume_unique=False, invert=False, name=None) -> Tensor:
    """Whether each element of x equals some element of `test_x` (of any shape): a
    bool tensor of x's shape, negated with `invert`. NaN equals nothing, as in Paddle.
    Every element is compared with every test value (memory: x's size times
    test_x's), which traces like any composition; `assume_unique` is only a hint
    that lets Paddle skip a step, and changes nothing here."""
    from .manipulation import reshape, unsqueeze
    from .math import any
    x, test_x = promote(x, test_x)
    found = any(equal(unsqueeze(x, -1), reshape(test_x, [-1])), axis=-1)
    return logical_not(found) if invert else found
