"""The documentation is tested: every IR example in docs/ir.md parses, verifies and
prints back to itself, every Python example in docs/ir.md and docs/eager.md runs,
and the generated op reference is in sync with the registry.

Code blocks are recognised by their info string: ``mlir`` (a module that must verify
and round-trip), ``mlir invalid`` (a module that parses but fails to verify, followed
by a ``text`` block holding the exact error), ``python`` (run, in page order, in one
namespace per page). Other blocks (``text``) are prose."""
import re
from pathlib import Path

import pytest

import irflow
from irflow.errors import VerificationError
from irflow.ir import parse, verify
from irflow.ops import opdocs
from irflow.ir.printer import print_module
from irflow.ir.registry import OpDef, all_ops
from tests.support.passcheck import check_file

DOCS = Path(__file__).resolve().parents[2] / "docs"
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"[ \t]*//[^\n]*")


def code_blocks(page: str) -> list[tuple[str, str, int]]:
    """``(info string, code, line number)`` of each fenced block of a Markdown page."""
    return [(m.group(1).strip(), m.group(2), page.count("\n", 0, m.start()) + 2)
            for m in _FENCE.finditer(page)]


def page_blocks(name: str) -> list[tuple[str, str, int]]:
    return code_blocks((DOCS / name).read_text(encoding="utf-8"))


def without_comments(text: str) -> str:
    """`text` with its ``//`` comments removed, and the lines that held nothing else."""
    kept = []
    for line in text.splitlines():
        code = _COMMENT.sub("", line).rstrip()
        if code or not line.strip():
            kept.append(code + "\n")
    return "".join(kept)


def _ir_examples(kind: str):
    return [pytest.param(code, id=f"ir.md:{line}")
            for info, code, line in page_blocks("ir.md") if info == kind]


def run_python_blocks(name: str, tmp_path, monkeypatch) -> None:
    """Run the ``python`` blocks of docs/`name` in order, in one namespace, in an
    empty working directory (examples may save files)."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs.{name}"}
    blocks = [(code, line) for info, code, line in page_blocks(name) if info == "python"]
    assert blocks, f"docs/{name} has no python examples"
    for code, line in blocks:
        exec(compile("\n" * (line - 1) + code, str(DOCS / name), "exec"), namespace)


# ---------------------------------------------------------------- docs/ir.md

def test_the_block_reader_finds_fences_and_their_info_strings():
    page = "text\n```mlir invalid\nfunc\n```\n\n```python\nx = 1\n```\n"
    assert code_blocks(page) == [("mlir invalid", "func\n", 3), ("python", "x = 1\n", 7)]


def test_comments_are_stripped_with_the_lines_they_empty():
    assert without_comments("// head\n  %y = neg %x   // note\n\n}\n") == "  %y = neg %x\n\n}\n"


@pytest.mark.parametrize("text", _ir_examples("mlir"))
def test_ir_examples_verify_and_round_trip(text):
    module = parse(text)
    verify(module)
    located = "loc(" in text
    printed = print_module(module, locations=located)
    assert printed.strip("\n") == without_comments(text).strip("\n")
    assert str(parse(printed)) == str(module)


@pytest.mark.parametrize("text", _ir_examples("mlir invalid"))
def test_invalid_ir_examples_fail_with_the_documented_error(text):
    blocks = page_blocks("ir.md")
    index = next(i for i, (info, code, _) in enumerate(blocks)
                 if info == "mlir invalid" and code == text)
    info, expected, _ = blocks[index + 1]
    assert info == "text", "an invalid example must be followed by its error, in a text block"
    with pytest.raises(VerificationError) as error:
        verify(parse(text))
    assert str(error.value) == expected.strip("\n")


def test_ir_page_has_examples_of_cond_and_while():
    names = {op.name for info, code, _ in page_blocks("ir.md") if info == "mlir"
             for op in parse(code).walk()}
    assert {"cond", "while", "condition", "yield", "return"} <= names


def test_ir_python_examples_run(tmp_path, monkeypatch):
    run_python_blocks("ir.md", tmp_path, monkeypatch)


# ---------------------------------------------------------------- the op reference

def test_every_op_has_a_doc():
    assert opdocs.undocumented_ops() == []


def test_generated_op_reference_is_in_sync_with_the_registry():
    page = (DOCS / "ir.md").read_text(encoding="utf-8")
    assert opdocs.generated_section(page) == opdocs.op_reference(), (
        "docs/ir.md's op reference is out of date: run python -m irflow.ops.opdocs")


def test_every_registered_op_has_one_entry_in_its_family():
    reference = opdocs.op_reference()
    irflow_ops = [opdef for opdef in all_ops() if opdocs.family(opdef) is not None]
    assert len(irflow_ops) > 80
    for opdef in irflow_ops:
        assert reference.count(f"\n#### `{opdef.name}`\n") == 1, opdef.name
    grouped = opdocs.families()
    assert sorted(op.name for ops in grouped.values() for op in ops) == \
        sorted(op.name for op in irflow_ops)
    assert [op.name for op in grouped["linalg"]] == ["matmul", "inverse", "det", "slogdet",
                                                     "solve", "cholesky", "qr", "eigh", "svd", "lu"]
    assert "cond" in [op.name for op in grouped["control"]]
    assert list(grouped)[:2] == ["control", "elementwise"]


def test_an_entry_lists_operands_attributes_regions_effect_and_gradient():
    entry = opdocs.op_entry(irflow.ir.lookup("uniform"))
    assert "- operands: 1\n" in entry
    assert ("- attributes: `shape` (required) (a shape; dims may be symbols), "
            "`dtype=f32`, `min=-1.0`, `max=1.0`\n") in entry
    assert "- regions: none\n- effect: random\n" in entry
    assert "- gradient: not differentiable" in entry
    cond = opdocs.op_entry(irflow.ir.lookup("cond"))
    assert "- operands: 1 or more\n" in cond and "- regions: `^then`, `^else`\n" in cond


def test_an_op_without_a_doc_is_refused(monkeypatch):
    # Its type rule comes from an op module, so the reference counts it as irflow's.
    bare = OpDef("undocumented_test_op", irflow.ops.elementwise._unary_rule("float"), arity=1)
    monkeypatch.setattr(opdocs, "all_ops", lambda: [*all_ops(), bare])
    assert opdocs.undocumented_ops() == ["undocumented_test_op"]
    with pytest.raises(ValueError, match="undocumented_test_op"):
        opdocs.op_reference()


def test_markdown_escaping_spares_code_spans_and_code_blocks():
    text = "f32[N*16] is `N*16`, ``a*b``\n\n    stack<f32> * 2\n\nstack<f32>, 0 < 1"
    assert opdocs.markdown_text(text) == \
        "f32[N\\*16] is `N*16`, ``a*b``\n\n    stack<f32> * 2\n\nstack\\<f32>, 0 < 1"


def test_the_command_rewrites_only_the_generated_section(tmp_path, capsys):
    page = tmp_path / "ir.md"
    page.write_text(f"# head\n\n{opdocs.BEGIN}\nstale\n{opdocs.END}\n\ntail\n")
    assert opdocs.main([str(page), "--check"]) == 1
    assert opdocs.main([str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# head\n\n") and text.endswith(f"{opdocs.END}\n\ntail\n")
    assert opdocs.generated_section(text) == opdocs.op_reference()
    assert opdocs.main([str(page), "--check"]) == 0
    assert "out of date" in capsys.readouterr().err


# ---------------------------------------------------------------- docs/passes.md

def test_passes_examples_run(tmp_path, monkeypatch):
    run_python_blocks("passes.md", tmp_path, monkeypatch)


def test_the_check_file_example_passes(tmp_path):
    (example,) = [code for info, code, _ in page_blocks("passes.md") if info == "irf"]
    path = tmp_path / "example.irf"
    path.write_text(example)
    check_file(path)


# ---------------------------------------------------------------- docs/eager.md

def test_eager_walkthrough_examples_run(tmp_path, monkeypatch):
    run_python_blocks("eager.md", tmp_path, monkeypatch)
