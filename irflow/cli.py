"""The ``irflow`` command. ``irflow opt FILE -p PIPELINE`` reads IR text, runs a pass
pipeline on it (verifying the input and the IR after each pass) and prints the
result, as ``mlir-opt`` and ``xdsl-opt`` do::

    irflow opt model.irf -p "fold{max-elements=1024},cse,dce"
    irflow opt - -p dce < model.irf          # read standard input
    irflow opt --list-passes

Also ``python -m irflow opt ...``. Errors (unreadable IR, a failing pass) are printed
to standard error with exit status 1. ``irflow paddle SCRIPT [ARGS]`` runs a script
written for Paddle on irflow (see `irflow.paddle`).
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .errors import IrflowError
from .ir import parse
from .ir.printer import print_module
from .paddle import main as _paddle_main
from .passes import PassManager, available


def opt(text: str, pipeline: str, filename: str = "<ir>", print_after_all: bool = False,
        locations: bool = False, printer=print) -> str:
    """What ``irflow opt`` prints: `text` parsed, run through `pipeline`, printed."""
    module = parse(text, filename)
    PassManager(pipeline, verify_each=True, print_after=print_after_all,
                printer=printer).run(module)
    return print_module(module, locations=locations)


def opt_arguments() -> argparse.ArgumentParser:
    """The command line of ``irflow opt`` (also how pass tests read their RUN lines)."""
    parser = argparse.ArgumentParser(prog="irflow opt",
                                     description="Run a pass pipeline on IR text.")
    parser.add_argument("file", nargs="?", help="the IR file ('-': standard input)")
    parser.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                        help="passes to run, e.g. 'fold{max-elements=1024},cse,dce'")
    parser.add_argument("--print-after-all", action="store_true",
                        help="print the IR after every pass (to standard error)")
    parser.add_argument("--locations", action="store_true",
                        help="print each op's source location")
    parser.add_argument("--list-passes", action="store_true",
                        help="list the registered passes and exit")
    return parser


def _opt_main(argv: Sequence[str]) -> int:
    parser = opt_arguments()
    args = parser.parse_args(argv)
    if args.list_passes:
        for name, description in available().items():
            print(f"{name:<12} {description}")
        return 0
    if args.file is None:
        parser.error("give an IR file, or '-' for standard input")
    try:
        if args.file == "-":
            text, filename = sys.stdin.read(), "<stdin>"
        else:
            with open(args.file, encoding="utf-8") as f:
                text, filename = f.read(), args.file
        result = opt(text, args.passes, filename, args.print_after_all, args.locations,
                     printer=lambda s: print(s, file=sys.stderr))
    except (IrflowError, OSError) as e:
        print(f"irflow opt: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(result)
    return 0


COMMANDS = {"opt": _opt_main, "paddle": _paddle_main}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print("usage: irflow opt FILE -p PIPELINE   (irflow opt --help for more)",
              file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
