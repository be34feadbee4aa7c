"""Paddle's ``paddle.static``: `InputSpec` and `nn` (functional control flow)."""
from . import nn
from ..frontend.input_spec import InputSpec

__all__ = ["InputSpec", "nn"]
