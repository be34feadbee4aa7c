"""Element types of tensors.

A `DType` has three spellings: Paddle's name (``float32``), the short form the IR text
uses (``f32``) and a NumPy dtype. `dtype()` turns any of them into the one `DType`
object, so the rest of irflow compares dtypes with ``is`` or ``==``.

NumPy has no bfloat16. As in Paddle (whose ``numpy()`` of a bfloat16 tensor gives
uint16), a bfloat16 array holds the raw 16 bits as uint16: the upper half of the
float32 with the same sign, exponent and leading 7 mantissa bits. `astype` (with
`to_bfloat16_bits` and `from_bfloat16_bits`) converts values of any dtype to any
other: the `cast` kernel and the tensor API use it. A bfloat16 tensor is storage:
it can be cast, reshaped, sliced, joined and saved, and the ops that compute refuse
it (its kind is "bfloat16", which no arithmetic type rule accepts) with a message
that says to cast to float32 first. The elementwise math functions and operators
(``x * 2``, ``x / y``, ``paddle.exp``) and the sums and means of the tensor API cast
bfloat16 operands to float32, compute, and round the result back to bfloat16, as
Paddle's bfloat16 kernels do; a Python number meets a bfloat16 tensor as its value
in bfloat16, and another float tensor promotes it (``bf16 * f32`` is float32). A
uint16 NumPy array is read as bfloat16, as Paddle's ``to_tensor`` does.
"""
from __future__ import annotations

import numpy as np


class DType:
    __slots__ = ("name", "short", "np", "kind")

    def __init__(self, name: str, short: str, np_dtype, kind: str):
        self.name = name
        self.short = short
        self.np = np.dtype(np_dtype)
        self.kind = kind  # "float", "int", "bool", or "bfloat16" (storage only)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    def __repr__(self) -> str:
        return f"paddle.{self.name}"

    def __str__(self) -> str:
        return f"paddle.{self.name}"

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self is other
        try:
            return dtype(other) is self
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (dtype, (self.name,))


float16 = DType("float16", "f16", np.float16, "float")
bfloat16 = DType("bfloat16", "bf16", np.uint16, "bfloat16")
float32 = DType("float32", "f32", np.float32, "float")
float64 = DType("float64", "f64", np.float64, "float")
uint8 = DType("uint8", "u8", np.uint8, "int")
int8 = DType("int8", "i8", np.int8, "int")
int16 = DType("int16", "i16", np.int16, "int")
int32 = DType("int32", "i32", np.int32, "int")
int64 = DType("int64", "i64", np.int64, "int")
bool_ = DType("bool", "bool", np.bool_, "bool")

ALL = (float32, float64, int32, int64, bool_, float16, bfloat16, uint8, int8, int16)
_BY_NAME = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d
    _BY_NAME[f"paddle.{_d.name}"] = _d
_BY_NP = {d.np: d for d in ALL}


_NUMPY_NAMES = {"float": float64, "double": float64, "half": float16, "int": int64,
                "long": int64}
"""The names NumPy gives these dtypes, which Paddle reads through np.dtype
(``x.astype('float')`` is float64)."""


def dtype(x) -> DType:
    """The `DType` for a DType, a name (``"float32"``, ``"f32"``, NumPy's ``"float"``),
    a NumPy dtype or a Python type (``float`` means float64 as in Paddle, which reads
    it through np.dtype; ``int`` int64, ``bool`` bool)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        found = _BY_NAME.get(x) or _NUMPY_NAMES.get(x)
        if found is None:
            raise TypeError(f"unknown dtype {x!r}; expected one of "
                            f"{', '.join(d.name for d in ALL)}")
        return found
    if x is float:
        return float64
    if x is int:
        return int64
    if x is bool:
        return bool_
    try:
        npd = np.dtype(x)
    except TypeError:
        raise TypeError(f"cannot interpret {x!r} as a dtype") from None
    found = _BY_NP.get(npd)
    if found is None:
        raise TypeError(f"dtype {npd} is not supported; expected one of "
                        f"{', '.join(d.name for d in ALL)}")
    return found


def from_numpy(array: np.ndarray) -> DType:
    found = _BY_NP.get(array.dtype)
    return found if found is not None else dtype(array.dtype)


def to_bfloat16_bits(array: np.ndarray) -> np.ndarray:
    """The bfloat16 bits (uint16) nearest to each value, rounding half to even as
    Paddle does; NaN stays a (quiet) NaN."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32)
    rounded = bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    out = (rounded >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(array, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), out) if nan.any() else out


def from_bfloat16_bits(bits: np.ndarray) -> np.ndarray:
    """The float32 values of bfloat16 bits (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def astype(values, target: DType) -> np.ndarray:
    """`values` (an array, or anything np.asarray takes) as a row-major array of
    `target` of its own (NumPy's astype keeps a broadcast view's layout), converting
    to and from bfloat16's bits where needed. Out-of-range float-to-int values wrap
    as NumPy's casts do (and Paddle's), without NumPy's warning."""
    array = np.asarray(values)
    if array.dtype == bfloat16.np:
        if target is bfloat16:
            return array.copy(order="C")
        array = from_bfloat16_bits(array)
    if target is bfloat16:  # not np.ascontiguousarray, which makes a 0-d array 1-d
        return np.asarray(to_bfloat16_bits(array), order="C")
    with np.errstate(invalid="ignore", over="ignore"):
        return array.astype(target.np, order="C")
