"""Passes over the IR: the pass framework, the pass manager and one module per pass.

Importing this package registers every pass; `available()` lists them and
`run(module, pipeline)` runs a pipeline."""
from . import (cse, dce, fold, fold_affine, fuse, one_hot,  # noqa: F401  (registers them)
               plan_buffers, sink_large, strip_stops)
from .framework import Pass, PipelineError, available, make_pass, parse_pipeline, register_pass
from .manager import (DEFAULT_PIPELINE, INFERENCE_PIPELINE, PassError, PassManager, PassRecord,
                      PassReport, run)

__all__ = ["DEFAULT_PIPELINE", "INFERENCE_PIPELINE", "Pass", "PassError", "PassManager",
           "PassRecord", "PassReport", "PipelineError", "available", "make_pass", "parse_pipeline",
           "register_pass", "run"]
