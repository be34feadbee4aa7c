"""``irflow passes``: the registered passes, and the pipeline compiles run."""
from __future__ import annotations

import argparse

from ..passes import DEFAULT_PIPELINE, available
from .common import parser

SUMMARY = "list the passes (names for -p pipelines) and the default pipeline"


def arguments() -> argparse.ArgumentParser:
    return parser("passes", "List the registered passes, with what each does.")


def list_passes() -> None:
    for name, description in available().items():
        print(f"{name:<12} {description}")


def run(args: argparse.Namespace) -> int:
    list_passes()
    print(f"\ndefault pipeline (irflow.compile, jit.load): {','.join(DEFAULT_PIPELINE)}")
    return 0
