"""``irflow paddle SCRIPT [ARGS]``: run a script written for Paddle (``import paddle``)
on irflow, unchanged (the runner of `irflow.paddle`, which says how errors are
reported)."""
from __future__ import annotations

import argparse

from ..paddle import runner
from .common import parser

SUMMARY = "run a script written for Paddle (import paddle) on irflow"


def arguments() -> argparse.ArgumentParser:
    p = parser("paddle", "Run a Python script written for Paddle with `paddle` resolving "
                         "to irflow, for that run only.")
    p.add_argument("script", help="the script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return p


def run(args: argparse.Namespace) -> int:
    return runner.run_reporting(args.script, args.args, args.debug)
