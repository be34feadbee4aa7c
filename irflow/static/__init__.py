"""Paddle's ``paddle.static``: the static-graph API over irflow's IR and executor.

A `Program` is an IR function built by tracing the ops the user's code runs while
it is the current program (`program_guard`, after ``paddle.enable_static()``); an
`Executor` compiles it for what it fetches and runs it. See ``docs/static.md``.
`InputSpec` describes the inputs of compiled functions (``paddle.jit.to_static``).
"""
from . import nn
from ..frontend.input_spec import InputSpec
from ..tensor.convert import default_float_dtype
from .backward import append_backward, gradients
from .executor import Executor
from .io import (load, load_inference_model, load_program_state, save, save_inference_model,
                 set_program_state)
from .mode import (default_main_program, default_startup_program, disable_static,
                   enable_static, in_dynamic_mode, program_guard, static_programs)
from .program import Block, Program
from .scope import Scope, global_scope, scope_guard


def data(name: str, shape, dtype=None, lod_level: int = 0):
    """An input of the current main program: `name`, `shape` (``-1`` or None where
    the size is known only when the program runs) and `dtype` (default: the default
    float dtype, `paddle.get_default_dtype()`)."""
    return static_programs("static.data").main._tracer.data(name, shape,
                                                             dtype or default_float_dtype())


__all__ = ["Block", "Executor", "InputSpec", "Program", "Scope", "append_backward", "data",
           "default_main_program", "default_startup_program", "disable_static",
           "enable_static", "global_scope", "gradients", "in_dynamic_mode", "load",
           "load_inference_model",
           "load_program_state", "nn", "program_guard", "save", "save_inference_model",
           "scope_guard", "set_program_state"]
