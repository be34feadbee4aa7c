"""Paddle's high-level API: `Model` and its callbacks (``paddle.callbacks``)."""
from . import callbacks
from .model import Model

__all__ = ["Model", "callbacks"]
