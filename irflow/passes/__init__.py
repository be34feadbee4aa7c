"""Passes over the IR, each registered under a name, and the pass manager."""
from . import cse, dce, fold  # noqa: F401  (registers the passes)
from .manager import PassManager, get_pass, register_pass, registered_passes, run_passes

__all__ = ["PassManager", "get_pass", "register_pass", "registered_passes", "run_passes"]
