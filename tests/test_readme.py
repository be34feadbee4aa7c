"""The README's Python snippets run as written (from a file, as a user would)."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_snippets_run(tmp_path):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for i, block in enumerate(blocks):
        script = tmp_path / f"readme_{i}.py"
        script.write_text(block)
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                cwd=tmp_path, timeout=120)
        assert result.returncode == 0, f"README block {i} failed:\n{result.stderr}"
