"""``python -m irflow.paddle SCRIPT [ARGS]`` (and ``irflow paddle``): run a Paddle
script on irflow.

The script's own errors are the script's, shown as ``python SCRIPT`` shows them: its
traceback (from the script's frames on, not the runner's) and exit status 1. What
irflow does not provide yet (`UnsupportedPaddleModule`, `UnsupportedPaddleAPI`) is
one line naming the script's line; a missing script is one line too.
"""
from __future__ import annotations

import errno
import os
import runpy
import sys
import traceback
from typing import Sequence

from ..errors import IrflowError, Location
from .hook import PaddleFinder, UnsupportedPaddleAPI, UnsupportedPaddleModule

_IRFLOW = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_RUNPY = os.path.abspath(runpy.__file__)  # where runpy is not frozen

USAGE = "usage: python -m irflow.paddle SCRIPT [ARGS...]   (or: irflow paddle SCRIPT)"


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run the script at `path` as ``__main__`` with ``sys.argv = [path, *args]``, its
    folder first on ``sys.path`` (as ``python SCRIPT`` does) and the ``paddle`` names
    mapped to irflow. Meant for a process of its own: the hook stays for the rest of
    the process, as the script's imports do."""
    if not any(isinstance(f, PaddleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PaddleFinder())
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def run_reporting(path: str, args: Sequence[str] = (), debug: bool = False) -> int:
    """Run the script at `path` (`run_script`) and return the exit status: 0, or 1
    after printing the traceback of the script's own error. A missing script and
    what irflow does not provide raise (an OSError, an `IrflowError` naming the
    script's line), for the caller to report in one line; `debug` re-raises
    everything as it is."""
    if not os.path.isfile(path):
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "a directory, not a script", path)
        raise FileNotFoundError(errno.ENOENT, "no such script", path)
    try:
        run_script(path, args)
    except (UnsupportedPaddleModule, UnsupportedPaddleAPI) as e:
        if debug:
            raise
        raise IrflowError(str(e), _user_line(e.__traceback__)) from e
    except Exception as e:  # noqa: BLE001  (the script's own error)
        if debug:
            raise
        e.with_traceback(_script_frames(e.__traceback__))  # what excepthook shows
        sys.excepthook(type(e), e, e.__traceback__)
        return 1
    return 0


def _script_frames(tb):
    """`tb` from the script's first frame on (the whole of it if none is the script's)."""
    first = tb
    while first is not None and not _users(first.tb_frame.f_code.co_filename):
        first = first.tb_next
    return first or tb


def _user_line(tb) -> Location | None:
    """The innermost line of `tb` outside irflow and Python's import machinery: the
    script's line (or its module's) that asked for what irflow lacks."""
    found = None
    for frame, line in traceback.walk_tb(tb):
        if _users(frame.f_code.co_filename):
            found = Location(frame.f_code.co_filename, line)
    return found


def _users(file: str) -> bool:
    """Whether code of `file` is the user's: not irflow's (this runner, the command
    line) nor Python's machinery (runpy, importlib: frozen modules, "<frozen ...>")."""
    if file.startswith("<"):
        return False
    path = os.path.abspath(file)
    return path != _RUNPY and not path.startswith(_IRFLOW)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    try:
        return run_reporting(argv[0], argv[1:])
    except IrflowError as e:
        where = f"{e.loc}: " if e.loc is not None else ""
        print(f"irflow paddle: {where}{e.message}", file=sys.stderr)
    except OSError as e:
        print(f"irflow paddle: {e.filename}: {e.strerror}", file=sys.stderr)
    return 1
