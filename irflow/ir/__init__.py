"""irflow's intermediate representation: types, core data structures, the op
registry, a builder, the text form (printer and parser) and the verifier."""
from ..errors import ParseError, ShapeError, UnknownOpError, VerificationError
from . import dtypes
from .builder import Builder, function
from .core import Block, BlockArg, Function, Module, Operation, OpResult, Region, Use, Value
from .dtypes import DType
from .parser import parse
from .printer import print_module
from .registry import REQUIRED, Effect, OpDef, all_ops, is_registered, lookup, register
from .types import Dim, TensorType, broadcast_shapes
from .verifier import verify

__all__ = [
    "Block", "BlockArg", "Builder", "DType", "Dim", "Effect", "Function", "Module", "OpDef",
    "OpResult", "Operation", "ParseError", "REQUIRED", "Region", "ShapeError", "TensorType",
    "UnknownOpError", "Use", "Value", "VerificationError", "all_ops", "broadcast_shapes",
    "dtypes", "function", "is_registered", "lookup", "parse", "print_module", "register",
    "verify",
]
