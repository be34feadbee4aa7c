"""irflow's intermediate representation: types, core data structures, the op
registry with its traits and interfaces (region ops, calls), rewrite patterns, a
builder, the text form (printer and parser), the verifier and argument checks."""
from ..errors import ParseError, ShapeError, UnknownOpError, VerificationError
from . import dtypes
from .builder import Builder, function
from .core import Block, BlockArg, Function, Module, Operation, OpResult, Region, Use, Value
from .dtypes import DType
from .parser import parse
from .printer import print_module
from .region_op import RegionOp
from .registry import REQUIRED, Effect, OpDef, all_ops, is_registered, lookup, register
from .rewrite import Pattern, Rewriter, apply_patterns
from .signature import Signature
from .symbols import CallOp, FuncRef
from .traits import (Affine, Contraction, ContainerOperands, Elementwise, Reduction, Terminator,
                     Trait, View)
from .types import Dim, TensorType, broadcast_shapes
from .verifier import verify

__all__ = [
    "Block", "BlockArg", "Builder", "CallOp", "DType", "Dim", "Effect", "Elementwise",
    "FuncRef", "Function", "Module", "OpDef", "OpResult", "Operation", "ParseError",
    "Pattern", "REQUIRED", "Region", "RegionOp", "Rewriter", "ShapeError", "Signature",
    "ContainerOperands", "TensorType", "Terminator", "Trait", "UnknownOpError", "Use", "Value",
    "VerificationError", "View", "all_ops", "apply_patterns", "broadcast_shapes", "dtypes",
    "function", "is_registered", "lookup", "parse", "print_module", "register", "verify",
    "Affine", "Contraction", "Reduction",
]
