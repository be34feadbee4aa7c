"""The ``irflow opt`` command: a file through a pipeline, printed; errors on stderr."""
import io
import subprocess
import sys
import tomllib
from pathlib import Path

from irflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEXT = """func @f(%x: f32[4]) -> f32[4] {
  %a = test.neg %x : f32[4]
  %b = test.neg %a : f32[4]
  %c = test.op %b : f32[4]
  return %c
}
"""
FOLDED = """func @f(%x: f32[4]) -> f32[4] {
  %c = test.op %x : f32[4]
  return %c
}
"""


def test_a_file_through_a_pipeline(tmp_path, capsys):
    path = tmp_path / "f.irf"
    path.write_text(TEXT)
    assert main(["opt", str(path), "-p", "fold,dce"]) == 0
    assert capsys.readouterr().out == FOLDED


def test_standard_input_and_printing_after_each_pass(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(TEXT))
    assert main(["opt", "-", "-p", "fold,dce", "--print-after-all"]) == 0
    out, err = capsys.readouterr()
    assert out == FOLDED
    assert "// -----// IR after fold (changed)" in err and "// -----// IR after dce" in err


def test_errors_go_to_stderr_with_status_1(tmp_path, capsys):
    path = tmp_path / "f.irf"
    path.write_text(TEXT.replace("test.op %b", "test.op %nowhere"))
    assert main(["opt", str(path), "-p", "dce"]) == 1
    assert "use of undefined value %nowhere" in capsys.readouterr().err
    path.write_text(TEXT)
    assert main(["opt", str(path), "-p", "dce,nothing"]) == 1
    assert "unknown pass 'nothing'" in capsys.readouterr().err
    assert main(["opt", str(tmp_path / "missing.irf")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_listing_the_passes(capsys):
    assert main(["opt", "--list-passes"]) == 0
    assert "fold         Evaluate ops on constants" in capsys.readouterr().out


def test_python_dash_m_and_the_console_script(tmp_path):
    path = tmp_path / "f.irf"
    path.write_text(TEXT)
    done = subprocess.run([sys.executable, "-m", "irflow", "opt", str(path), "-p", "fold,dce"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout == FOLDED
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"irflow": "irflow.cli:main"}
