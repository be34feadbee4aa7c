"""``irflow dot PATH``: Graphviz text of the IR, or (``--format svg|png``) a picture
rendered by Graphviz's ``dot`` program when it is installed."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from ..errors import IrflowError
from ..ir.dot import to_dot
from ..passes import DEFAULT_PIPELINE, PassManager
from .common import add_path, check_output, parser, read_module

SUMMARY = "write Graphviz text of the IR, with regions as clusters (--format svg|png renders it)"
INSTALL = ("install Graphviz (apt install graphviz, brew install graphviz or conda install "
           "graphviz), or leave out --format to get the Graphviz text")


def arguments() -> argparse.ArgumentParser:
    p = parser("dot", "Write the IR as a Graphviz graph, nested regions as clusters.")
    add_path(p)
    p.add_argument("--output", "-o", metavar="FILE",
                   help="where to write (default: standard output for the text, "
                        "NAME.svg or NAME.png in the current directory for a picture)")
    p.add_argument("--format", choices=("dot", "svg", "png"), default="dot",
                   help="Graphviz text (default), or a picture drawn by Graphviz's dot")
    p.add_argument("--stage", choices=("source", "optimized"), default="source",
                   help="the IR as saved (default) or after the default pipeline")
    return p


def run(args: argparse.Namespace) -> int:
    if args.output is not None:
        check_output(args.output)
    module = read_module(args.path)
    if args.stage == "optimized":
        PassManager(DEFAULT_PIPELINE).run(module)
    text = to_dot(module)
    if args.format == "dot":
        if args.output is None:
            sys.stdout.write(text)
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        return 0
    program = shutil.which("dot")
    if program is None:
        raise IrflowError(f"--format {args.format} needs Graphviz's `dot` program, which is "
                          f"not installed: {INSTALL}")
    output = args.output or f"{_stem(args.path)}.{args.format}"
    done = subprocess.run([program, f"-T{args.format}", "-o", output], input=text.encode(),
                          capture_output=True)
    if done.returncode:
        raise IrflowError(f"Graphviz's dot failed: {done.stderr.decode(errors='replace')}")
    print(f"wrote {output}")
    return 0


def _stem(path: str) -> str:
    name = os.path.basename(path.rstrip("/"))
    return name.split(".")[0] or "ir"
