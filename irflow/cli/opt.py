"""``irflow opt FILE -p PIPELINE``: IR text (or the IR of a saved program, decided as
``irflow dump`` decides) through a pass pipeline (verifying the input and the IR
after each pass), printed, as ``mlir-opt`` and ``xdsl-opt`` do::

    irflow opt model.irf -p "fold{max-elements=1024},cse,dce"
    irflow opt - -p dce < model.irf          # read standard input
    irflow opt --list-passes
"""
from __future__ import annotations

import argparse
import sys

from ..ir.core import Module
from ..ir.printer import print_module
from ..passes import PassManager
from .common import UsageError, parse_ir, parser, read_module
from .passes import list_passes

SUMMARY = "run a pass pipeline on IR text and print the result (as mlir-opt does)"


def opt(text: str, pipeline: str, filename: str = "<ir>", print_after_all: bool = False,
        locations: bool = False, printer=print) -> str:
    """What ``irflow opt`` prints: `text` parsed, run through `pipeline`, printed."""
    return optimize(parse_ir(text, filename), pipeline, print_after_all, locations, printer)


def optimize(module: Module, pipeline: str, print_after_all: bool = False,
             locations: bool = False, printer=print) -> str:
    """`module` run through `pipeline` (verifying after each pass), printed."""
    PassManager(pipeline, verify_each=True, print_after=print_after_all,
                printer=printer).run(module)
    return print_module(module, locations=locations)


def opt_arguments() -> argparse.ArgumentParser:
    """The command line of ``irflow opt`` (also how pass tests read their RUN lines)."""
    p = parser("opt", "Run a pass pipeline on IR text.")
    p.add_argument("file", nargs="?", help="a file of IR text ('-': standard input) or a "
                                           "saved program, as for irflow dump")
    p.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                   help="passes to run, e.g. 'fold{max-elements=1024},cse,dce'")
    p.add_argument("--print-after-all", action="store_true",
                   help="print the IR after every pass (to standard error)")
    p.add_argument("--locations", action="store_true",
                   help="print each op's source location")
    p.add_argument("--list-passes", action="store_true",
                   help="list the registered passes and exit")
    return p


arguments = opt_arguments


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        list_passes()
        return 0
    if args.file is None:
        raise UsageError("give an IR file, or '-' for standard input")
    module = parse_ir(sys.stdin.read(), "<stdin>") if args.file == "-" else \
        read_module(args.file)
    sys.stdout.write(optimize(module, args.passes, args.print_after_all, args.locations,
                              printer=lambda s: print(s, file=sys.stderr)))
    return 0
