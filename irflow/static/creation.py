"""Variables of static programs made outside any layer: Paddle's
``paddle.static.create_global_var`` (a filled variable, such as a step counter, that
the startup program initializes and programs read and update like a parameter) and
``paddle.static.create_parameter``."""
from __future__ import annotations

import numpy as np

from ..ir import dtypes
from ..names import unique_name
from ..nn.initializer import Constant
from ..nn.param_attr import create_parameter
from ..tensor.tensor import Tensor
from .mode import static_programs


def create_global_var(shape, value, dtype, persistable: bool = False, force_cpu: bool = False,
                      name: str | None = None) -> Tensor:
    """A variable of `shape` and `dtype` that the startup program fills with `value`
    (named `name`, else ``_generated_var_<k>`` as in Paddle). Programs read its value
    in the scope when they run, and a program that assigns to it
    (``paddle.assign(v, output=var)``) updates it there: a persistable variable,
    whatever `persistable` says (Paddle keeps a non-persistable one only for the run
    that computes it, which leaves nothing to read before the first assignment)."""
    programs = static_programs("static.create_global_var")
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise ValueError(f"static.create_global_var: the shape must be known, got {list(shape)}")
    t = Tensor._from_array(dtypes.astype(np.full(dims, value), dtypes.dtype(dtype)))
    t.name = name or unique_name("_generated_var")
    t.persistable = True
    programs.initialize(t, Constant(value))
    return t


__all__ = ["create_global_var", "create_parameter"]
