"""Sessions in the documentation, run as a user would paste them and compared with
what the page says they print.

- A page's ``python`` blocks run in order as one script, in a fresh process (each
  at its own lines of the page, so that a location printed is the page's); a
  ``text`` block right after a ``python`` block is what that block prints.
- A ``console`` block is a shell session, run in one bash (with ``irflow`` meaning
  this checkout's ``python -m irflow``): the lines after each ``$ command`` up to
  the next are its output (standard output and error).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.ir.test_docs import code_blocks

ROOT = Path(__file__).resolve().parents[2]
_MARK = "<<irflow-docs-block>>"


def environment() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def check_python_session(page: Path, cwd: Path) -> None:
    blocks = code_blocks(page.read_text(encoding="utf-8"))
    python = [i for i, (info, _, _) in enumerate(blocks) if info == "python"]
    assert python, f"{page.name} has no python blocks"
    # One script in which each block keeps its lines of the page (the fence above it
    # prints a marker), saved under the page's name: what it prints names the page's
    # lines, and irflow can read the source of what it converts.
    lines: list[str] = []
    for i in python:
        _, code, line = blocks[i]
        lines += [""] * (line - 2 - len(lines)) + [f"print({_MARK!r})"] + code.splitlines()
    (cwd / page.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = f"exec(compile(open({page.name!r}).read(), {page.name!r}, 'exec'))"
    done = subprocess.run([sys.executable, "-c", run], cwd=cwd, env=environment(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{page.name}: the session failed:\n{done.stderr}"
    outputs = done.stdout.split(_MARK + "\n")[1:]
    assert len(outputs) == len(python), done.stdout
    for i, out in zip(python, outputs):
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if following is not None and following[0] == "text":
            assert out == following[1], \
                f"{page.name}:{blocks[i][2]}: the block prints\n{out}\nnot\n{following[1]}"


def check_console_session(page: Path, cwd: Path) -> None:
    sessions = [(code, line) for info, code, line in code_blocks(
        page.read_text(encoding="utf-8")) if info == "console"]
    assert sessions, f"{page.name} has no console blocks"
    for code, line in sessions:
        commands = _commands(code)
        script = f"irflow() {{ {sys.executable} -m irflow \"$@\"; }}\n" + "".join(
            f"status=$?; echo '{_MARK}'; (exit $status)\n{command}\n"  # keeps $?
            for command, _ in commands)
        done = subprocess.run(["bash", "-c", script], cwd=cwd, env=environment(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
        outputs = done.stdout.split(_MARK + "\n")[1:]
        assert len(outputs) == len(commands), done.stdout
        for (command, expected), out in zip(commands, outputs):
            assert out == expected, f"{page.name}:{line}: $ {command}\nprints\n{out}\nnot\n" \
                                    f"{expected}"


def _commands(session: str) -> list[tuple[str, str]]:
    commands = []
    for line in session.splitlines(keepends=True):
        if line.startswith("$ "):
            commands.append([line[2:].rstrip("\n"), ""])
        else:
            commands[-1][1] += line
    return [(c, out) for c, out in commands]
