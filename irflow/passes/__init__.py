"""Passes over the IR, each registered under a name, and the pass manager."""
from . import dce  # noqa: F401  (registers the pass)
from .manager import PassManager, get_pass, register_pass, registered_passes, run_passes

__all__ = ["PassManager", "get_pass", "register_pass", "registered_passes", "run_passes"]
