"""``python -m irflow.paddle SCRIPT [ARGS]``: run a Paddle script on irflow."""
from __future__ import annotations

import os
import runpy
import sys
from typing import Sequence

from .hook import PaddleFinder

USAGE = "usage: python -m irflow.paddle SCRIPT [ARGS...]   (or: irflow paddle SCRIPT)"


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run the script at `path` as ``__main__`` with ``sys.argv = [path, *args]``, its
    folder first on ``sys.path`` (as ``python SCRIPT`` does) and the ``paddle`` names
    mapped to irflow. Meant for a process of its own: the hook stays for the rest of
    the process, as the script's imports do."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such script: {path}")
    if not any(isinstance(f, PaddleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PaddleFinder())
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    try:
        run_script(argv[0], argv[1:])
    except FileNotFoundError as e:
        print(f"irflow paddle: {e}", file=sys.stderr)
        return 2
    return 0
