"""Backends: the NumPy interpreter (reference semantics)."""
from .interpreter import Interpreter, run

__all__ = ["Interpreter", "run"]
