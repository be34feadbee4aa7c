"""The ``irflow`` command (also ``python -m irflow``)::

    irflow dump model                     # the IR of a program saved by jit.save
    irflow run model --input x=x.npy      # run it on arrays
    irflow dot model --format svg         # draw it (Graphviz)
    irflow report model -o report.md      # a Markdown record of its compile and run
    irflow passes                         # the passes a pipeline can name
    irflow opt model.irf -p fold,cse,dce  # IR text through a pipeline
    irflow paddle train.py --epochs 2     # a script written for Paddle, on irflow

One module per command, each with `arguments()` (its parser) and `run(args)`. An
error prints one line, ``irflow COMMAND: what went wrong``, to standard error and
exits with status 1, or 2 for a usage error (`UsageError`: an unknown command or
option, a bad option value); ``--debug`` shows the traceback instead. When standard
output closes early (``irflow passes | head -1``), the command stops quietly with
status 1. See ``docs/cli.md``.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from . import dot, dump, opt as opt_command, paddle, passes, report, run
from .common import UsageError, one_line
from .opt import opt, opt_arguments

COMMANDS = {"dump": dump, "run": run, "report": report, "dot": dot, "passes": passes,
            "opt": opt_command, "paddle": paddle}


def usage() -> str:
    lines = ["usage: irflow COMMAND [options]   (irflow COMMAND --help for its options)",
             "", "commands:"]
    lines += [f"  {name:<8} {module.SUMMARY}" for name, module in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        status = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # here, so that a closed pipe shows up below
        return status
    except BrokenPipeError:
        # Standard output was closed early (`irflow passes | head -1`): nothing to say.
        # As the Python documentation advises (signal module, "Note on SIGPIPE"):
        # point standard output at devnull, so that flushing it at exit cannot fail
        # again, and exit with status 1.
        _stdout_to_devnull()
        return 1


def _main(argv: list[str]) -> int:
    if argv[:1] == ["--debug"] and len(argv) > 1:  # irflow --debug COMMAND ...
        argv = argv[1:2] + ["--debug"] + argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    if command is None:
        print(f"irflow: no command {argv[0]!r}; the commands: {', '.join(COMMANDS)} "
              "(irflow --help describes them)", file=sys.stderr)
        return 2
    debug = "--debug" in argv[1:]
    try:
        try:
            args = command.arguments().parse_args(argv[1:])
        except SystemExit as e:  # --help: printed
            return e.code if isinstance(e.code, int) else 0
        debug = args.debug
        return command.run(args)
    except BrokenPipeError:
        raise
    except Exception as e:  # noqa: BLE001  (the command line's one place for every error)
        if debug:
            raise
        print(f"irflow {argv[0]}: {one_line(e)}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1


def _stdout_to_devnull() -> None:
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


__all__ = ["COMMANDS", "UsageError", "main", "opt", "opt_arguments"]
