"""What the commands share: their parsers, reading the IR a PATH names, checking an
output path, and the one line an error becomes."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import IrflowError, ParseError
from ..ir import parse
from ..ir.core import Module
from ..ir.verifier import verify
from ..jit.saved import SUFFIXES, load_program
from ..serialization import write_file

METADATA = SUFFIXES["metadata"]


class UsageError(IrflowError):
    """A command line that is wrong on its own (an unknown option or command, a bad
    option value, a missing argument): one line, and exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are `UsageError`s (the caller prints them as
    one line), not a usage block and `SystemExit(2)`."""

    def error(self, message: str):
        raise UsageError(f"{message} ({self.prog} --help lists the options)")


def parser(command: str, description: str) -> argparse.ArgumentParser:
    p = Parser(prog=f"irflow {command}", description=description)
    p.add_argument("--debug", action="store_true",
                   help="on an error, show the Python traceback too")
    return p


def add_path(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a saved program (the path given to jit.save, or one of its "
                                "files) or a file of IR text")


def saved_prefix(path: str) -> str | None:
    """The path jit.save was given, if `path` names a saved program: that path, or one
    of the files jit.save writes. A file named like the program's IR (``*.irflow``)
    with no metadata (``.json``) beside it is a file of IR text, not a saved program;
    None then, and for any other file. Every command decides with this."""
    for role, suffix in SUFFIXES.items():
        if path.endswith(suffix):
            prefix = path[:-len(suffix)]
            if role != "program" or os.path.isfile(prefix + METADATA):
                return prefix
    return path if os.path.isfile(path + METADATA) else None


def saved_program(path: str, why: str) -> str:
    """The path jit.save was given, for a command that needs a saved program (`why`
    says what for): a file of IR text is refused here; a path with nothing there goes
    on to loading, which says what jit.save would have written."""
    prefix = saved_prefix(path)
    if prefix is None and os.path.isfile(path):
        raise IrflowError(f"{path}: not a saved program; {why}")
    return path if prefix is None else prefix


def parse_ir(text: str, filename: str) -> Module:
    """IR text parsed; a syntax error names the file (``bad.ir, line 2, column 13:``)."""
    try:
        return parse(text, filename)
    except ParseError as e:
        if e.loc is not None:
            raise
        sep = ", " if e.message.startswith("line ") else ": "
        raise ParseError(f"{filename}{sep}{e.message}") from None


def read_module(path: str) -> Module:
    """The IR `path` names: a saved program, checked as jit.load checks it, or IR text
    (parsed and verified); `saved_prefix` decides which."""
    prefix = saved_prefix(path)
    if prefix is not None:
        return load_program(prefix)[0].parent
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IrflowError(f"{path}: neither a saved program nor IR text") from None
    module = parse_ir(text, path)
    verify(module)
    return module


def check_output(path: str, option: str = "--output") -> None:
    """Refuse an output file that cannot be written: a directory, or a file in a
    directory that does not exist (no command creates directories)."""
    if os.path.isdir(path):
        raise IrflowError(f"{option} {path}: is a directory; name a file to write")
    directory = os.path.dirname(path) or os.curdir
    if not os.path.isdir(directory):
        problem = (f"{directory} is not a directory" if os.path.exists(directory) else
                   f"the directory {directory} does not exist (irflow creates none)")
        raise IrflowError(f"{option} {path}: {problem}")


def write_output(path: str, write) -> None:
    """Write an output file by ``write(binary_file)``. A regular file (new or not) is
    written beside and renamed into place (`write_file`), through a symbolic link to
    one (the link stays a link); anything else that exists, a device (``/dev/stdout``)
    or a FIFO, is written into: renaming over it would replace it with a file. A
    failed write (a full disk) is an `OSError` naming `path`."""
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "wb") as f:
                write(f)
        else:
            write_file(os.path.realpath(path), write)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None


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
    elif isinstance(e, MemoryError):  # a size the input or an option asked for, not a bug
        text = f"out of memory{f' ({e})' if str(e) else ''}"
    else:
        text = f"{type(e).__name__}: {e} (an internal error; --debug shows where)"
    return " ".join(text.split())
