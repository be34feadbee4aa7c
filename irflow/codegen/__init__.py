"""Backends: the NumPy interpreter (reference semantics) and the executor, which
compiles a function into a flat plan of pre-bound kernel steps."""
from .executor import Plan, compile_plan
from .interpreter import Interpreter, run

__all__ = ["Interpreter", "Plan", "compile_plan", "run"]
