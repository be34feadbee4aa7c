"""Paddle's ``paddle.static``: `InputSpec`."""
from ..frontend.input_spec import InputSpec

__all__ = ["InputSpec"]
