"""The irflow command: dump, run, dot and passes on saved programs and IR files, each
error one line on standard error with status 1, or 2 for a usage error (a traceback
only with --debug); a closed standard output ends a command quietly; a Paddle
script's own error is its traceback."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.cli import COMMANDS, main
from irflow.ir import parse
from irflow.passes import DEFAULT_PIPELINE, PassManager, available
from irflow.static import InputSpec
from tests.support.sessions import check_console_session, check_python_session, environment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")


class Branchy(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = self.fc(x)
        if paddle.mean(y) > 0:
            y = y * 2
        return y


@pytest.fixture
def saved(tmp_path):
    model = Branchy()
    model.eval()
    path = str(tmp_path / "model")
    paddle.jit.save(model, path, input_spec=[InputSpec([None, 4], name="x")])
    np.save(tmp_path / "x.npy", X)
    return model, path, str(tmp_path / "x.npy")


def fails(argv, capsys, message: str, status: int = 1) -> None:
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"irflow {argv[0]}: ") and message in err, err


def test_dump_prints_the_ir_as_saved_or_optimized(saved, capsys):
    _, path, _ = saved
    with open(path + ".irflow") as f:
        as_saved = str(parse(f.read()))
    assert main(["dump", path]) == 0
    assert capsys.readouterr().out == as_saved
    assert main(["dump", path + ".irflow", "--locations"]) == 0
    assert 'loc("' in capsys.readouterr().out
    optimized = parse(as_saved)
    PassManager(DEFAULT_PIPELINE).run(optimized)
    assert main(["dump", path + ".json", "--stage", "optimized"]) == 0
    assert capsys.readouterr().out == str(optimized)
    assert main(["dump", path, "--print-after-all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("// -----// IR as saved\n" + as_saved)
    assert all(f"// -----// IR after {p}" in out for p in DEFAULT_PIPELINE)


def test_dump_reads_ir_files_and_refuses_the_rest(saved, tmp_path, capsys):
    _, path, x = saved
    ir = tmp_path / "f.irf"
    ir.write_text("func @f(%a: f32[2]) -> f32[2] {\n  %b = neg %a : f32[2]\n  return %b\n}\n")
    assert main(["dump", str(ir)]) == 0 and "%b = neg %a" in capsys.readouterr().out
    fails(["dump", x], capsys, "neither a saved program nor IR text")
    fails(["dump", str(tmp_path / "none")], capsys, "No such file or directory")
    with open(path + ".irflow", "a") as f:
        f.write(" ")
    fails(["dump", path], capsys, "model.irflow: longer")


def test_run_prints_or_writes_the_outputs(saved, tmp_path, capsys):
    model, path, x = saved
    want = model(paddle.to_tensor(X)).numpy()
    assert main(["run", path, "--input", f"x={x}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("output_0: float32[3, 2]\n[[")
    out_file = str(tmp_path / "out.npz")
    assert main(["run", path, "-i", f"x={x}", "-o", out_file]) == 0
    assert capsys.readouterr().out == f"wrote {out_file}: output_0 float32[3, 2]\n"
    with np.load(out_file) as written:
        np.testing.assert_array_equal(written["output_0"], want)


def test_run_errors(saved, tmp_path, capsys):
    _, path, x = saved
    np.save(tmp_path / "wide.npy", np.ones((3, 5), "float32"))
    for argv, message in [
        (["run", path], "no --input for 'x'; the program's inputs: x (float32[None, 4])"),
        (["run", path, "--input", f"X={x}"], "the program has no input 'X'; its inputs: x"),
        (["run", path, "--input", x], "write NAME=FILE.npy"),
        (["run", path, "--input", f"x={x}", "--input", f"x={x}"], "--input x is given twice"),
        (["run", path, "--input", f"x={tmp_path / 'wide.npy'}"],
         "x should have shape [None, 4], got [3, 5]"),
        (["run", path, "--input", f"x={tmp_path / 'no.npy'}"], "no.npy: no such file"),
        (["run", path, "--input", f"x={path}.json"], "model.json: the file is not a .npy array"),
        (["run", str(tmp_path / "nothing"), "--input", f"x={x}"], "no saved program there"),
        (["run", path, "--input", f"x={x}", "--backend", "gpu"], "unknown backend 'gpu'"),
    ]:
        fails(argv, capsys, message)
    with pytest.raises(paddle.InputError):
        main(["run", path, "--debug"])


def test_passes_lists_every_pass_and_the_default_pipeline(capsys):
    assert main(["passes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:len(available())]] == list(available())
    assert out[-1] == f"default pipeline (irflow.compile, jit.load): {','.join(DEFAULT_PIPELINE)}"


def test_dot_writes_graphviz_text_with_regions_as_clusters(saved, tmp_path, capsys):
    _, path, _ = saved
    assert main(["dot", path]) == 0
    text = capsys.readouterr().out
    assert text.startswith("digraph irflow {") and text.rstrip().endswith("}")
    assert 'label="func @Branchy"' in text and "cond ^then" in text and "cond ^else" in text
    assert text.count("subgraph cluster_") == 3
    assert main(["dot", path, "-o", str(tmp_path / "g.dot"), "--stage", "optimized"]) == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph irflow {")


def test_dot_renders_with_graphviz_or_says_how_to_install_it(saved, tmp_path, capsys,
                                                             monkeypatch):
    _, path, _ = saved
    if shutil.which("dot"):
        svg = str(tmp_path / "g.svg")
        assert main(["dot", path, "--format", "svg", "-o", svg]) == 0
        assert "<svg" in open(svg).read() and capsys.readouterr().out == f"wrote {svg}\n"
    monkeypatch.setenv("PATH", str(tmp_path))
    fails(["dot", path, "--format", "png"], capsys,
          "--format png needs Graphviz's `dot` program, which is not installed: install "
          "Graphviz (apt install graphviz")


def test_usage_and_internal_errors(capsys, monkeypatch):
    assert main([]) == 2 and "usage: irflow COMMAND" in capsys.readouterr().err
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n  {name:<8} {module.SUMMARY}" in out for name, module in COMMANDS.items())

    def broken(args):
        raise TypeError("a bug")
    monkeypatch.setattr(COMMANDS["passes"], "run", broken)
    fails(["passes"], capsys, "TypeError: a bug (an internal error; --debug shows where)")
    with pytest.raises(TypeError):
        main(["--debug", "passes"])


def test_usage_errors_are_one_line_with_status_2(tmp_path, capsys):
    assert main(["profile"]) == 2
    assert capsys.readouterr().err == (
        "irflow: no command 'profile'; the commands: " + ", ".join(COMMANDS)
        + " (irflow --help describes them)\n")
    ir = str(tmp_path / "f.irf")
    for argv, message in [
        (["dump", ir, "--stage", "bogus"], "irflow dump: argument --stage: invalid choice: "
         "'bogus' (choose from 'source', 'optimized') (irflow dump --help lists the options)"),
        (["dot", ir, "--format", "bmp"], "argument --format: invalid choice: 'bmp'"),
        (["dump"], "the following arguments are required: path"),
        (["passes", "--verbose"], "unrecognized arguments: --verbose"),
        (["opt"], "irflow opt: give an IR file, or '-' for standard input"),
        (["report", ir, "--batch", "0"], "--batch must be a positive integer, got '0'"),
    ]:
        fails(argv, capsys, message, status=2)
    assert main(["dump", "--help"]) == 0 and "usage: irflow dump" in capsys.readouterr().out


def test_a_closed_standard_output_ends_a_command_quietly(saved, capsys, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["passes"]) == 1
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command", ["passes", "run"])
def test_piping_into_a_closed_pipe_prints_nothing(saved, command):
    """`irflow passes | head -1`, made certain: the reading end is closed before the
    command writes, so every write meets a broken pipe (flushing at exit too)."""
    _, path, x = saved
    argv = ["passes"] if command == "passes" else ["run", path, "--input", f"x={x}"]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "irflow", *argv], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=environment(),
                              timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (1, "")


def test_run_writes_no_directories_and_no_directory(saved, tmp_path, capsys):
    _, path, x = saved
    missing = tmp_path / "nonexistent"
    fails(["run", path, "-i", f"x={x}", "-o", str(missing / "o.npz")], capsys,
          f"irflow run: --output {missing / 'o.npz'}: the directory {missing} does not exist")
    assert not missing.exists()
    fails(["run", path, "-i", f"x={x}", "-o", str(tmp_path)], capsys,
          f"irflow run: --output {tmp_path}: is a directory; name a file to write")
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    fails(["run", path, "-i", f"x={x}", "-o", f"{x}/o.npz"], capsys,
          f"--output {x}/o.npz: {x} is not a directory")
    fails(["report", path, "-o", str(missing / "r.md")], capsys,
          f"irflow report: --output {missing / 'r.md'}: the directory {missing} does not exist")
    fails(["dot", path, "-o", str(tmp_path)], capsys, f"--output {tmp_path}: is a directory")


BAD_IR = "func @f(%a: f32[2]) -> f32[2] {\n  %b = neg %a %zz: f32[2]\n  return %b\n}\n"
GOOD_IR = "func @f(%a: f32[2]) -> f32[2] {\n  %b = neg %a : f32[2]\n  return %b\n}\n"


@pytest.mark.parametrize("command", ["dump", "opt", "dot"])
def test_a_syntax_error_names_the_file(tmp_path, capsys, command):
    bad = tmp_path / "bad.ir"
    bad.write_text(BAD_IR)
    fails([command, str(bad)], capsys, f"irflow {command}: {bad}, line 2, column 3: neg names "
                                       "1 result(s) but gives 0 type(s) (found '%b')")


def test_dump_and_opt_take_an_irflow_file_without_metadata_for_ir_text(saved, tmp_path,
                                                                       capsys):
    text = tmp_path / "g.irflow"
    text.write_text(GOOD_IR)
    for argv in (["dump", str(text)], ["opt", str(text)], ["opt", str(text), "-p", "dce"]):
        assert main(argv) == 0 and capsys.readouterr().out == GOOD_IR, argv
    fails(["run", str(text)], capsys, f"{text}: not a saved program; run needs the input spec")
    # With its metadata beside it, it is a saved program, for every command.
    _, path, _ = saved
    with open(path + ".irflow") as f:
        as_saved = str(parse(f.read()))
    for argv in (["dump", path + ".irflow"], ["opt", path + ".irflow"], ["opt", path]):
        assert main(argv) == 0 and capsys.readouterr().out == as_saved, argv
    os.remove(path + ".json")
    fails(["run", path + ".pdiparams.npz"], capsys, "model.json: missing")


def run_script(tmp_path, source, *args):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "irflow", "paddle", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=environment())


def test_a_paddle_scripts_error_is_its_own_traceback(tmp_path):
    done = run_script(tmp_path, """\
        import paddle

        def check(x):
            raise ValueError("bug in my script")

        check(paddle.to_tensor(1.0))
        """, "script.py")
    assert done.returncode == 1, done.stderr
    assert done.stderr == textwrap.dedent("""\
        Traceback (most recent call last):
          File "script.py", line 6, in <module>
            check(paddle.to_tensor(1.0))
          File "script.py", line 4, in check
            raise ValueError("bug in my script")
        ValueError: bug in my script
        """)
    debug = run_script(tmp_path, "raise ValueError('bug')\n", "--debug", "script.py")
    assert debug.returncode == 1 and "irflow/paddle/runner.py" in debug.stderr


def test_a_paddle_script_that_is_missing_or_asks_for_what_irflow_lacks(tmp_path):
    missing = run_script(tmp_path, "", "nope.py")
    assert (missing.returncode, missing.stderr) == (1, "irflow paddle: nope.py: no such script\n")
    module = run_script(tmp_path, "import paddle\nimport paddle.nothere\n", "script.py")
    assert (module.returncode, module.stderr) == (1, (
        "irflow paddle: script.py:2: No module named 'paddle.nothere': irflow does not provide "
        "this Paddle module yet (docs/api.md lists what it provides)\n"))
    (tmp_path / "helper.py").write_text("import paddle\n\nx = paddle.nothing_here\n")
    api = run_script(tmp_path, "import helper\n", "script.py")
    assert api.returncode == 1 and api.stderr.startswith("irflow paddle: ") and \
        api.stderr.endswith("helper.py:3: paddle.nothing_here: irflow does not provide this "
                             "Paddle API yet (docs/api.md lists what it provides)\n"), api.stderr


def test_the_session_of_docs_cli_runs_as_shown(tmp_path):
    """Also the test of ``python -m irflow``, which the session's ``irflow`` stands for."""
    page = Path(ROOT) / "docs" / "cli.md"
    check_python_session(page, tmp_path)
    check_console_session(page, tmp_path)
