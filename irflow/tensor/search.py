"""Searching: argmax/argmin."""
from __future__ import annotations

from ..dispatch import apply
from ..ir import dtypes
from .convert import as_tensor
from .tensor import Tensor


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    out = apply("argmax", (as_tensor(x),), {"axis": axis, "keepdim": bool(keepdim)})
    return out if dtypes.dtype(dtype) is dtypes.int64 else out.astype(dtype)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    out = apply("argmin", (as_tensor(x),), {"axis": axis, "keepdim": bool(keepdim)})
    return out if dtypes.dtype(dtype) is dtypes.int64 else out.astype(dtype)
