"""Passes over the IR: the pass framework, the pass manager and one module per pass.

Importing this package registers every pass; `available()` lists them."""
from . import cse, dce, fold, plan_buffers  # noqa: F401  (registers the passes)
from .framework import Pass, PipelineError, available, make_pass, parse_pipeline, register_pass
from .manager import DEFAULT_PIPELINE, PassError, PassManager

__all__ = ["DEFAULT_PIPELINE", "Pass", "PassError", "PassManager", "PipelineError",
           "available", "make_pass", "parse_pipeline", "register_pass"]
