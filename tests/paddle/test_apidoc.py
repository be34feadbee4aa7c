"""docs/api.md: generated from the modules, up to date, and true: every API it lists
resolves in a script run by python -m irflow.paddle."""
import os
import re
import subprocess
import sys

from irflow.paddle import apidoc

from .test_runner import ROOT, TIMEOUT

ROW = re.compile(r"^\| `(paddle[\w.]*)", re.MULTILINE)


def test_the_page_is_up_to_date():
    assert apidoc.DEFAULT_PATH.read_text(encoding="utf-8") == apidoc.api_page(), (
        "docs/api.md is out of date: run python -m irflow.paddle.apidoc")


def test_the_page_lists_the_training_apis():
    names = set(ROW.findall(apidoc.api_page()))
    assert {"paddle.Model", "paddle.io.DataLoader", "paddle.io.DistributedBatchSampler",
            "paddle.optimizer.Lamb", "paddle.optimizer.lr.OneCycleLR",
            "paddle.metric.accuracy", "paddle.callbacks.EarlyStopping", "paddle.nn.Linear",
            "paddle.Tensor.backward", "paddle.nn.functional.relu"} <= names
    assert not names & {"paddle.compile", "paddle.IrflowError", "paddle.ir"}  # irflow's own


def test_a_row_shows_paddle_argument_names_and_the_docstring():
    page = apidoc.api_page()
    assert ("| `paddle.optimizer.RMSProp(learning_rate, rho=0.95, epsilon=1e-06, "
            "momentum=0.0, centered=False, parameters=None, weight_decay=None, "
            "grad_clip=None, name=None)` | class | Paddle's ``paddle.optimizer.RMSProp``, "
            "with the accumulators") in page


def test_every_listed_api_resolves_under_the_runner(tmp_path):
    names = ROW.findall(apidoc.api_page())
    script = tmp_path / "resolve.py"
    script.write_text("import sys, paddle\nmissing = []\n"
                      "for name in sys.argv[1:]:\n"
                      "    obj = paddle\n"
                      "    try:\n"
                      "        for part in name.split('.')[1:]:\n"
                      "            obj = getattr(obj, part)\n"
                      "    except AttributeError:\n"
                      "        missing.append(name)\n"
                      "print(len(sys.argv) - 1, missing)\n")
    result = subprocess.run([sys.executable, "-m", "irflow.paddle", str(script), *names],
                            capture_output=True, text=True, timeout=TIMEOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout == f"{len(names)} []\n", result.stderr


def test_check_reports_a_stale_page(tmp_path, capsys):
    page = tmp_path / "api.md"
    page.write_text("stale\n")
    assert apidoc.main([str(page), "--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert apidoc.main([str(page)]) == 0 and apidoc.main([str(page), "--check"]) == 0
