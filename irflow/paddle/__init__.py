"""Running scripts written for Paddle on irflow, unchanged:
``python -m irflow.paddle SCRIPT [ARGS]`` (or ``irflow paddle SCRIPT [ARGS]``).

The runner installs an import hook (`hook.PaddleFinder`) in its own process only,
then runs the script as ``__main__``: ``import paddle``, ``import paddle.nn as nn``,
``from paddle import nn`` and ``import paddle.nn.functional as F`` give irflow's
modules under Paddle's names. Nothing is installed anywhere, so another process's
``import paddle`` (and real Paddle, if installed) is untouched. A Paddle module or
attribute irflow lacks fails with an error naming it (`UnsupportedPaddleAPI`).
"""
from .hook import PaddleFinder, UnsupportedPaddleAPI, UnsupportedPaddleModule
from .runner import main, run_script

__all__ = ["PaddleFinder", "UnsupportedPaddleAPI", "UnsupportedPaddleModule", "main",
           "run_script"]
