"""How a tensor's value is shown: ``Tensor(shape=[2], dtype=float32, ...)``.

Shared by `Tensor.__repr__` and by the ``print`` op of compiled programs, so that
``print(x)`` shows the same text eagerly and compiled. It lives with the ops, below
the Tensor class, because the ``print`` kernel may not import what is above it.
"""
from __future__ import annotations

import numpy as np

from ..ir import dtypes

PLACE = "Place(cpu)"


def tensor_text(value: np.ndarray, stop_gradient: bool = True) -> str:
    prefix = "       "
    dtype = dtypes.from_numpy(value)
    if dtype is dtypes.bfloat16:  # the values the bits stand for, as Paddle prints them
        value = dtypes.from_bfloat16_bits(value)
    body = np.array2string(value, precision=8, separator=", ", prefix=prefix,
                           floatmode="maxprec_equal" if value.dtype.kind == "f" else "maxprec",
                           suppress_small=True)
    return (f"Tensor(shape={list(value.shape)}, dtype={dtype.name}, place={PLACE}, "
            f"stop_gradient={stop_gradient},\n{prefix}{body})")
