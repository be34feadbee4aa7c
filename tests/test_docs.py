"""Every page's code runs: README.md and docs/*.md. The ``python`` blocks of a page
run in page order in one namespace (a page builds its examples up), from the page
itself so that tracebacks and compiled code point at its lines; ``mlir`` and ``irf``
blocks are checked by tests/ir/test_docs.py, which also runs the Python of the pages
it covers. Every other block is ``text`` (diagrams, printed output) or the README's
``bash`` set-up, which must be what CI runs. Paths the pages name exist in the
repository, and no page points outside it."""
import re
from pathlib import Path

import pytest

import irflow

from tests.ir.test_docs import DOCS, code_blocks, run_python_blocks

ROOT = DOCS.parent
PAGES = {"README.md": ROOT / "README.md",
         **{p.name: p for p in sorted(DOCS.glob("*.md"))}}
RUN_BY_IR_TESTS = {"ir.md", "passes.md", "eager.md"}  # tests/ir/test_docs.py
KINDS = {"python", "mlir", "mlir invalid", "irf", "text", "bash",
         "console"}  # console: a shell session tests/support/sessions.py runs
PATH = re.compile(r"`((?:irflow|docs|tests|benchmarks)/[\w./<>*-]*)`")


def blocks(name):
    return code_blocks(PAGES[name].read_text(encoding="utf-8"))


def relative(name: str) -> str:
    """The page's name as `run_python_blocks` takes it (relative to docs/)."""
    return "../README.md" if name == "README.md" else name


def pages_with_python():
    return [n for n in PAGES if any(info == "python" for info, _, _ in blocks(n))]


@pytest.mark.parametrize("name", [n for n in pages_with_python() if n not in RUN_BY_IR_TESTS])
def test_python_examples_run(name, tmp_path, monkeypatch):
    run_python_blocks(relative(name), tmp_path, monkeypatch)


def test_every_page_with_python_is_run():
    assert {"README.md", "compile.md", "autodiff.md"} <= set(pages_with_python())
    assert RUN_BY_IR_TESTS <= set(pages_with_python())


@pytest.mark.parametrize("name", list(PAGES))
def test_every_block_says_what_it_holds(name):
    unknown = [(line, info) for info, _, line in blocks(name) if info not in KINDS]
    assert unknown == [], f"{name}: blocks without a known language (use text for output)"


def test_the_readme_set_up_is_what_ci_runs():
    (setup,) = [code for info, code, _ in blocks("README.md") if info == "bash"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in setup.strip().splitlines():
        assert command.split()[0] in ("pip", "python") and command in ci, command


def test_the_readme_says_the_python_version_and_what_the_llvm_backend_does():
    text = PAGES["README.md"].read_text(encoding="utf-8")
    assert "Python 3.11 or later" in text
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()
    # irflow.compile selects it by name, and the README says what the default is
    assert irflow.compile(lambda x: x, backend="llvm")(irflow.ones([2])).numpy().tolist() \
        == [1.0, 1.0]
    assert irflow.compile(lambda x: x).backend == "llvm"
    flat = " ".join(text.split())
    assert "`irflow.compile(model)` runs the LLVM backend by default" in flat
    assert '`backend="numpy"` runs the NumPy executor alone' in flat


@pytest.mark.parametrize("name", list(PAGES))
def test_named_paths_exist_inside_the_repository(name):
    text = PAGES[name].read_text(encoding="utf-8")
    missing = [p for p in PATH.findall(text)
               if not any(c in p for c in "<*") and not (ROOT / p).exists()]
    assert missing == [], f"{name} names paths that do not exist: {missing}"
    outside = re.findall(r"\]\((?:\.\./|/|[a-z]+://)[^)]*\)|`(?:\.\./|/work/)[^`]*`", text)
    assert outside == [], f"{name} points outside the repository: {outside}"
