"""Paddle's ``paddle.utils``: `run_check`, which checks the installation."""
from .install_check import run_check

__all__ = ["run_check"]
