"""Paddle's ``paddle.utils``: `run_check`, which checks the installation, and
`unique_name`, the names of layers and parameters."""
from . import unique_name
from .install_check import run_check

__all__ = ["run_check", "unique_name"]
