"""``irflow paddle SCRIPT [ARGS]``: run a script written for Paddle (``import paddle``)
on irflow, unchanged (the runner of `irflow.paddle`).

The script's own errors are the script's, shown as ``python SCRIPT`` shows them: its
traceback (from the script's frames on, not the runner's) and exit status 1. What
irflow does not provide yet (`UnsupportedPaddleModule`, `UnsupportedPaddleAPI`) is
one line naming the script's line; a missing script is one line too."""
from __future__ import annotations

import argparse
import errno
import os
import runpy
import sys
import traceback

from ..errors import IrflowError, Location
from ..paddle import runner
from ..paddle.hook import UnsupportedPaddleAPI, UnsupportedPaddleModule
from .common import parser

SUMMARY = "run a script written for Paddle (import paddle) on irflow"

# The frames that run a script, above its own: this command's, the runner's, runpy's
# (a frozen module: its code names "<frozen runpy>").
_RUNNER_FILES = {os.path.abspath(f) for f in (__file__, runner.__file__, runpy.__file__)} \
    | {"<frozen runpy>"}
_IRFLOW = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def arguments() -> argparse.ArgumentParser:
    p = parser("paddle", "Run a Python script written for Paddle with `paddle` resolving "
                         "to irflow, for that run only.")
    p.add_argument("script", help="the script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return p


def run(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.script):
        if os.path.isdir(args.script):
            raise IsADirectoryError(errno.EISDIR, "a directory, not a script", args.script)
        raise FileNotFoundError(errno.ENOENT, "no such script", args.script)
    try:
        runner.run_script(args.script, args.args)
    except (UnsupportedPaddleModule, UnsupportedPaddleAPI) as e:
        if args.debug:
            raise
        raise IrflowError(str(e), _user_line(e.__traceback__)) from e
    except Exception as e:  # noqa: BLE001  (the script's own error)
        if args.debug:
            raise
        e.with_traceback(_script_frames(e.__traceback__))  # what excepthook shows
        sys.excepthook(type(e), e, e.__traceback__)
        return 1
    return 0


def _script_frames(tb):
    """`tb` from the script's first frame on (the whole of it if none is the script's)."""
    first = tb
    while first is not None and _file(first) in _RUNNER_FILES:
        first = first.tb_next
    return first or tb


def _user_line(tb) -> Location | None:
    """The innermost line of `tb` outside irflow and Python's import machinery: the
    script's line (or its module's) that asked for what irflow lacks."""
    found = None
    for frame, line in traceback.walk_tb(tb):
        file = frame.f_code.co_filename
        if not (file.startswith("<") or os.path.abspath(file).startswith(_IRFLOW)):
            found = Location(file, line)
    return found


def _file(tb) -> str:
    file = tb.tb_frame.f_code.co_filename
    return file if file.startswith("<") else os.path.abspath(file)
