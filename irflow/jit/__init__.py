"""Paddle's ``paddle.jit``: `to_static`, `save` and `load`."""
from ..frontend.jst import enable_to_static, not_to_static
from ..frontend.program import DEFAULT_BACKEND, CompiledFunction
from .saved import load, save
from .translated import TranslatedLayer


def to_static(function=None, input_spec=None, build_strategy=None, backend=DEFAULT_BACKEND,
              full_graph=True, check=False, **kwargs):
    """Compile a Layer or function into a static program (Paddle's spelling of
    `irflow.compile`); usable as ``to_static(layer)`` or as a decorator."""
    if function is None:
        return lambda fn: CompiledFunction(fn, input_spec, backend, check)
    return CompiledFunction(function, input_spec, backend, check)


__all__ = ["TranslatedLayer", "enable_to_static", "load", "not_to_static", "save",
           "to_static"]
