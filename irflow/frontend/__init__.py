"""The frontend: tracing and AST conversion of Layers and functions into IR."""
from .input_spec import InputSpec
from .program import CompiledFunction, compile

__all__ = ["CompiledFunction", "InputSpec", "compile"]
