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
exits with status 1; ``--debug`` shows the traceback instead. See ``docs/cli.md``.
"""
from __future__ import annotations

import sys
from typing import Sequence

from . import dot, dump, opt as opt_command, paddle, passes, report, run
from .common import one_line
from .opt import opt, opt_arguments

COMMANDS = {"dump": dump, "run": run, "report": report, "dot": dot, "passes": passes,
            "opt": opt_command, "paddle": paddle}


def usage() -> str:
    lines = ["usage: irflow COMMAND [options]   (irflow COMMAND --help for its options)",
             "", "commands:"]
    lines += [f"  {name:<8} {module.SUMMARY}" for name, module in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--debug"]:  # irflow --debug COMMAND ...
        argv = argv[1:2] + ["--debug"] + argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    if command is None:
        print(f"irflow: no command {argv[0]!r}\n{usage()}", file=sys.stderr)
        return 2
    args = command.arguments().parse_args(argv[1:])
    try:
        return command.run(args)
    except Exception as e:  # noqa: BLE001  (the command line's one place for every error)
        if args.debug:
            raise
        print(f"irflow {argv[0]}: {one_line(e)}", file=sys.stderr)
        return 1


__all__ = ["COMMANDS", "main", "opt", "opt_arguments"]
