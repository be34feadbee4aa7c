"""What the commands share: their parsers, reading the IR a PATH names, and the one
line an error becomes."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import IrflowError
from ..ir import parse
from ..ir.core import Module
from ..ir.verifier import verify
from ..jit.saved import SUFFIXES, load_program


def parser(command: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"irflow {command}", description=description)
    p.add_argument("--debug", action="store_true",
                   help="on an error, show the Python traceback too")
    return p


def add_path(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a saved program (the path given to jit.save, or one of its "
                                "files) or a file of IR text")


def saved_prefix(path: str) -> str | None:
    """The path jit.save was given, if `path` names a saved program."""
    for suffix in SUFFIXES.values():
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return path if os.path.isfile(path + SUFFIXES["metadata"]) else None


def read_module(path: str) -> Module:
    """The IR `path` names: a saved program, checked as jit.load checks it, or IR text
    (parsed and verified)."""
    prefix = saved_prefix(path)
    if prefix is not None:
        return load_program(prefix)[0].parent
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IrflowError(f"{path}: neither a saved program nor IR text") from None
    module = parse(text, path)
    verify(module)
    return module


def one_line(e: Exception) -> str:
    """`e` as one line: where it happened (unless that is the Python runtime running
    this command) and what happened."""
    if isinstance(e, IrflowError):
        loc = e.loc
        runtime = loc is not None and (loc.file.startswith("<") or os.path.abspath(
            loc.file).startswith((sys.prefix, sys.base_prefix)))
        text = e.message if loc is None or runtime else f"{loc}: {e.message}"
    elif isinstance(e, OSError) and e.filename is not None:
        text = f"{e.filename}: {e.strerror}"
    else:
        text = f"{type(e).__name__}: {e} (an internal error; --debug shows where)"
    return " ".join(text.split())
