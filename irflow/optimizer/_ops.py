"""The ops update rules are written with: `irflow.dispatch.apply` on operands that
already share one dtype. The public math functions (`irflow.add`, ...) first promote
their operands (Python scalars to tensors, mixed dtypes to the wider one); an update
rule's operands are the parameter, its gradient and state, and 0-d constants made
once in the parameter's dtype, so skipping that step halves the cost of each op of
``step()`` without changing what is computed, eagerly or traced."""
from __future__ import annotations

import numpy as np

from ..dispatch import apply
from ..tensor.tensor import Tensor


def add(x: Tensor, y: Tensor) -> Tensor:
    return apply("add", (x, y))


def sub(x: Tensor, y: Tensor) -> Tensor:
    return apply("sub", (x, y))


def mul(x: Tensor, y: Tensor) -> Tensor:
    return apply("mul", (x, y))


def div(x: Tensor, y: Tensor) -> Tensor:
    return apply("div", (x, y))


def maximum(x: Tensor, y: Tensor) -> Tensor:
    return apply("maximum", (x, y))


def sqrt(x: Tensor) -> Tensor:
    return apply("sqrt", (x,))


def absolute(x: Tensor) -> Tensor:
    return apply("abs", (x,))


def norm(x: Tensor) -> Tensor:
    """The 0-d L2 norm of every element of `x`."""
    return sqrt(apply("sum", (mul(x, x),)))


def gt(x: Tensor, y: Tensor) -> Tensor:
    return apply("gt", (x, y))


def lt(x: Tensor, y: Tensor) -> Tensor:
    return apply("lt", (x, y))


def minimum(x: Tensor, y: Tensor) -> Tensor:
    return apply("minimum", (x, y))


def mod(x: Tensor, y: Tensor) -> Tensor:
    return apply("mod", (x, y))


def sign(x: Tensor) -> Tensor:
    return apply("sign", (x,))


def reshape(x: Tensor, shape) -> Tensor:
    return apply("reshape", (x,), {"shape": tuple(shape)})


def logical_and(x: Tensor, y: Tensor) -> Tensor:
    return apply("logical_and", (x, y))


def select(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return apply("select", (condition, x, y))


def constant(value, dtype) -> Tensor:
    """A 0-d constant of `dtype` (a NumPy dtype)."""
    return Tensor._from_array(np.asarray(value, dtype=dtype))


def neg(x: Tensor) -> Tensor:
    return apply("neg", (x,))


def power(x: Tensor, y: Tensor) -> Tensor:
    return apply("pow", (x, y))


def shaped_like(x: Tensor, param: Tensor) -> Tensor:
    """`x`, the new value of `param`, in `param`'s shape: broadcasting against state
    that Paddle keeps as [1] (Adam's beta powers) makes a 0-d parameter's value [1]."""
    return x if x.ndim == param.ndim else reshape(x, param.shape)


def row(x: Tensor, index: Tensor) -> Tensor:
    """``x[index]`` for a 0-d int `index`."""
    return apply("gather", (x, index), {"axis": 0})


def with_row(x: Tensor, index: Tensor, value: Tensor) -> Tensor:
    """`x` with ``x[index]`` replaced by `value`, for a 0-d int `index`."""
    index = reshape(index, [1] * x.ndim)
    return apply("put_along_axis", (x, index, value), {"axis": 0})
