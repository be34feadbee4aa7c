"""Paddle's ``paddle.static``: the static-graph API over irflow's IR and executor.

A `Program` is an IR function built by tracing the ops the user's code runs while
it is the current program (`program_guard`, after ``paddle.enable_static()``); an
`Executor` compiles it for what it fetches and runs it. See ``docs/static.md``.
`InputSpec` describes the inputs of compiled functions (``paddle.jit.to_static``).
"""
import contextlib
import os

from . import nn
from ..device import CPUPlace
from ..frontend.input_spec import InputSpec
from ..metric import accuracy
from ..tensor.convert import default_float_dtype
from ..tensor.tensor import Parameter, Tensor
from .backward import append_backward, gradients
from .creation import create_global_var, create_parameter
from .executor import BuildStrategy, CompiledProgram, Executor
from .io import (load, load_inference_model, load_program_state, save, save_inference_model,
                 set_program_state)
from .mode import (default_main_program, default_startup_program, disable_static,
                   enable_static, in_dynamic_mode, program_guard, static_programs)
from .printing import Print
from .program import Block, Program
from .scope import Scope, global_scope, scope_guard


def data(name: str, shape, dtype=None, lod_level: int = 0):
    """An input of the current main program: `name`, `shape` (``-1`` or None where
    the size is known only when the program runs) and `dtype` (default: the default
    float dtype, `paddle.get_default_dtype()`)."""
    return static_programs("static.data").main._tracer.data(name, shape,
                                                             dtype or default_float_dtype())


#: a static program's variables are Tensors (``isinstance(x, paddle.static.Variable)``)
Variable = Tensor


def cpu_places(device_count: int | None = None) -> list:
    """`device_count` CPU places (default: the ``CPU_NUM`` environment variable, else
    1), as Paddle lists them; irflow runs a program on one of them."""
    count = device_count if device_count is not None else int(os.environ.get("CPU_NUM", 1))
    return [CPUPlace() for _ in range(count)]


@contextlib.contextmanager
def name_scope(prefix: str | None = None):
    """Paddle's prefix for the names of the ops built inside the ``with`` block, which
    only names them for its debugging output; irflow's IR does not name ops, so the
    block runs as it is."""
    yield


__all__ = ["Block", "BuildStrategy", "CompiledProgram", "Executor", "InputSpec", "Parameter",
           "Print", "Program", "Scope", "Variable", "accuracy", "append_backward", "cpu_places",
           "create_global_var", "create_parameter", "data", "default_main_program",
           "default_startup_program", "disable_static", "enable_static", "global_scope",
           "gradients", "in_dynamic_mode", "load", "load_inference_model",
           "load_program_state", "name_scope", "nn", "program_guard", "save",
           "save_inference_model", "scope_guard", "set_program_state"]
