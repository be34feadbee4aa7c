"""``irflow dump PATH``: the IR of a saved program (or of an IR file), as saved or
after the default pipeline."""
from __future__ import annotations

import argparse
import sys

from ..ir.printer import print_module
from ..passes import DEFAULT_PIPELINE, PassManager
from .common import add_path, parser, read_module

SUMMARY = "print the IR of a saved program or IR file, as saved or optimized"


def arguments() -> argparse.ArgumentParser:
    p = parser("dump", "Print the IR of a saved program or an IR file.")
    add_path(p)
    p.add_argument("--stage", choices=("source", "optimized"), default="source",
                   help="the IR as traced and saved (default), or after the default pipeline "
                        f"({','.join(DEFAULT_PIPELINE)}) that loading runs")
    p.add_argument("--print-after-all", action="store_true",
                   help="print the IR as saved and after each pass of the pipeline")
    p.add_argument("--locations", action="store_true",
                   help="print each op's source location (file and line)")
    return p


def run(args: argparse.Namespace) -> int:
    module = read_module(args.path)
    if args.print_after_all:
        print("// -----// IR as saved")
        sys.stdout.write(print_module(module, locations=args.locations))
        PassManager(DEFAULT_PIPELINE, print_after=True).run(module)
        return 0
    if args.stage == "optimized":
        PassManager(DEFAULT_PIPELINE).run(module)
    sys.stdout.write(print_module(module, locations=args.locations))
    return 0
