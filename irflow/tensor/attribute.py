"""Tensor attributes as tensors: ``paddle.shape``, ``paddle.numel``."""
from __future__ import annotations

import numpy as np

from ..dispatch import apply
from ..ir import dtypes
from .convert import cast
from .manipulation import stack
from .tensor import Tensor


def shape(input) -> Tensor:  # noqa: A002  (Paddle's name)
    """`input`'s shape as a 1-D int64 tensor. While tracing, symbolic dims are sizes
    computed when the program runs, so the shape stays right for every batch size."""
    if input._value is not None:
        return Tensor._from_array(np.asarray(input._value.shape, dtype=np.int64))
    dims = [d if isinstance(d, Tensor) else Tensor._from_array(np.asarray(d, np.int64))
            for d in input._tracer.dims(input)]
    return stack([cast(d, dtypes.int64) for d in dims])


def numel(x, name=None) -> Tensor:
    """The number of elements of `x` as a 0-D int64 tensor."""
    if x._value is not None:
        return Tensor._from_array(np.asarray(x._value.size, dtype=np.int64))
    return apply("numel", (x,), {})
