"""Element types of tensors.

A `DType` has three spellings: Paddle's name (``float32``), the short form the IR text
uses (``f32``) and a NumPy dtype. `dtype()` turns any of them into the one `DType`
object, so the rest of irflow compares dtypes with ``is`` or ``==``.
"""
from __future__ import annotations

import numpy as np


class DType:
    __slots__ = ("name", "short", "np", "kind")

    def __init__(self, name: str, short: str, np_dtype, kind: str):
        self.name = name
        self.short = short
        self.np = np.dtype(np_dtype)
        self.kind = kind  # "float", "int" or "bool"

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


float32 = DType("float32", "f32", np.float32, "float")
float64 = DType("float64", "f64", np.float64, "float")
int32 = DType("int32", "i32", np.int32, "int")
int64 = DType("int64", "i64", np.int64, "int")
bool_ = DType("bool", "bool", np.bool_, "bool")

ALL = (float32, float64, int32, int64, bool_)
_BY_NAME = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d
    _BY_NAME[f"paddle.{_d.name}"] = _d
_BY_NP = {d.np: d for d in ALL}


def dtype(x) -> DType:
    """The `DType` for a DType, a name (``"float32"``, ``"f32"``), a NumPy dtype or a
    Python type (``float`` means float32 as in Paddle, ``int`` int64, ``bool`` bool)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        found = _BY_NAME.get(x)
        if found is None:
            raise TypeError(f"unknown dtype {x!r}; expected one of "
                            f"{', '.join(d.name for d in ALL)}")
        return found
    if x is float:
        return float32
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
