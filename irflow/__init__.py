"""irflow: Paddle-style dynamic-graph models compiled through an SSA IR."""
from . import ops as _ops  # noqa: F401  (registers every op)
from . import codegen, ir
from .errors import (ConversionError, InputError, IrflowError, ParseError, ShapeError,
                     VerificationError)
from .ir.dtypes import bool_ as bool  # noqa: A001  (Paddle spells it paddle.bool)
from .ir.dtypes import float32, float64, int32, int64

__all__ = ["ConversionError", "InputError", "IrflowError", "ParseError", "ShapeError",
           "VerificationError", "bool", "codegen", "float32", "float64", "int32", "int64",
           "ir"]
