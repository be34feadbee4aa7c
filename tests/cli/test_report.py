"""``irflow report``: a Markdown record of a saved program's compile and run, whose
sections hold what the compiler really did (pass names in order, fused ops with the
model's source lines, the bytes of the MemoryPlan the calls ran in)."""
import inspect
import os
import re

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.cli import main
from irflow.cli.report import load_saved, measure, random_inputs, symbol_sizes
from irflow.jit.saved import VERSION
from irflow.passes import PassManager
from irflow.static import InputSpec

class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16, bias_attr=False)
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        e = self.embed(x)
        h = self.fc1(e)
        h = F.gelu(self.norm(h))
        return self.fc2(h)


class Branchy(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x)
        if paddle.mean(y) > 0:
            y = F.relu(y)
        return y


def line_of(text: str) -> str:
    """``FILE:N`` of the line of the models above holding `text`, as the report names
    a location (this file relative to the current directory)."""
    found = []
    for model in (MLP, Branchy):
        lines, start = inspect.getsourcelines(model)
        found += [start + i for i, line in enumerate(lines) if text in line]
    (n,) = found
    return f"{os.path.relpath(__file__)}:{n}"


def save(tmp_path, layer, shape, name):
    paddle.seed(0)
    model = layer()
    model.eval()
    path = str(tmp_path / name)
    paddle.jit.save(model, path, input_spec=[InputSpec(shape, "float32", "x")])
    return path


@pytest.fixture
def mlp(tmp_path):
    return save(tmp_path, MLP, [None, 8], "mlp")


@pytest.fixture
def branchy(tmp_path):
    return save(tmp_path, Branchy, [None, 4], "branchy")


def report(capsys, *argv) -> str:
    assert main(["report", *argv]) == 0
    return capsys.readouterr().out


def section(text: str, title: str) -> str:
    """The text of the ``## title`` section."""
    match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section {title!r} in\n{text}"
    return match.group(1)


def test_the_report_has_its_sections_in_order(mlp, capsys):
    text = report(capsys, mlp)
    titles = re.findall(r"^## (.*)$", text, re.M)
    assert titles == ["Model", "Machine", "Passes", "Fusion", "Memory plan", "Kernel times"]
    assert text.startswith("# irflow report: @MLP\n")


def test_model_section_states_the_saved_metadata_and_parameters(mlp, capsys):
    model = section(report(capsys, mlp), "Model")
    assert f"`irflow.jit` version {VERSION}; function `@MLP`; saved in eval mode" in model
    assert "| `x` | float32 | [None, 8] | `f32[N,8]` |" in model
    # 8*16 + 16*32 + 32 + 32 + 32 + 32*4 + 4 values of float32
    values = 8 * 16 + 16 * 32 + 32 * 3 + 32 * 4 + 4
    assert f"parameters: {values} values in 7 arrays, {values * 4} bytes" in model
    assert "| `fc1.weight` | parameter | float32[16, 32] | 512 | 2048 |" in model
    machine = section(report(capsys, mlp), "Machine")
    assert f"NumPy {np.__version__}" in machine and f"irflow {paddle.__version__}" in machine


def test_passes_are_listed_in_pipeline_order_with_their_op_counts(mlp, capsys):
    passes = section(report(capsys, mlp, "--pipeline", "dce,fold,cse,fuse"), "Passes")
    rows = re.findall(r"^\| `([^`]+)` \| .*? \| (\d+) → (\d+) \|", passes, re.M)
    assert [name for name, _, _ in rows] == ["dce", "fold", "cse", "fuse"]
    module = load_saved(mlp).function.parent
    manager = PassManager("dce,fold,cse,fuse")
    manager.run(module)
    assert [(r.name, str(r.ops_before), str(r.ops_after)) for r in manager.history] == rows
    fuse = manager.history["fuse"]
    (row,) = [line for line in passes.splitlines() if line.startswith("| `fuse` |")]
    assert ", ".join(f"{k}={v}" for k, v in fuse.statistics.items()) in row
    top = ", ".join(f"{k} {n}" for k, n in list(fuse.kinds_after.items())[:4])
    assert f"| yes | {top}, … |" in row and fuse.kinds_after["fused"] == 2


def test_fusion_names_each_fused_op_with_the_source_lines_of_its_ops(mlp, capsys):
    fusion = section(report(capsys, mlp), "Fusion")
    assert f"### `%h_1` = fused, at {line_of('h = F.gelu(self.norm(h))')}" in fusion
    assert (f"| {line_of('h = self.fc1(e)')} | `h = self.fc1(e)` | matmul, add |") in fusion
    assert (f"| {line_of('h = F.gelu(self.norm(h))')} | `h = F.gelu(self.norm(h))` | "
            "reduce mean ×2, sub, mul ×6, add ×3, rsqrt, erf |") in fusion
    assert f"| {line_of('return self.fc2(h)')} | `return self.fc2(h)` | matmul, add |" in fusion
    # the bias-free first layer is a lone matmul: no kernel of two ops
    not_fused = fusion.split("### Not fused")[1]
    assert (f"| `%e = matmul` | {line_of('e = self.embed(x)')} | `e = self.embed(x)` | "
            "contraction, but no group of two ops or more formed with it |") in not_fused


def test_an_if_on_a_tensor_is_reported_unfused_with_its_branch(branchy, capsys):
    text = report(capsys, branchy)
    not_fused = section(text, "Fusion").split("### Not fused")[1]
    assert (f"| `%y_1_1 = cond` | {line_of('if paddle.mean(y) > 0:')} | "
            "`if paddle.mean(y) > 0:` | has regions") in not_fused
    assert f"| `%y_3 = relu` | {line_of('y = F.relu(y)')} |" in not_fused
    times = section(text, "Kernel times")
    assert "| `cond` | 1 | 1 |" in times and "| `fused` | 1 | 1 |" in times


@pytest.mark.parametrize("pipeline", ["fold,cse,dce,fuse", "fold,cse,dce"])
def test_memory_numbers_are_those_of_the_plan_the_calls_ran_in(mlp, capsys, pipeline):
    memory = section(report(capsys, mlp, "--pipeline", pipeline, "--batch", "3"),
                     "Memory plan")
    saved = load_saved(mlp)
    PassManager(pipeline).run(saved.function.parent)
    sizes = symbol_sizes(saved.function, 3)
    assert sizes == {"N": 3} and "for N=3 (each symbolic dim" in memory
    arrays = random_inputs(saved, sizes, 0) + [a for *_, a in saved.state]
    plan = measure(saved.function, arrays, 1).memory
    for label, n in [("naive", plan.naive_bytes), ("peak live", plan.peak_live_bytes),
                     ("arena", plan.arena_bytes)]:
        assert re.search(rf"^\| {label} .*\| {n} bytes", memory, re.M), (label, n, memory)
    assert plan.arena_bytes > 0
    largest = max(plan.nbytes)
    assert re.search(rf"^\| \d+ \| {largest} \| \d+ \| `f32\[N,32\]` \|", memory, re.M)
    if pipeline.endswith("fuse"):
        assert re.search(r"Fused ops write \d+ of their results into the arena", memory)


def test_kernel_times_cover_every_step_and_say_how_they_were_measured(mlp, capsys):
    times = section(report(capsys, mlp, "--repeat", "3"), "Kernel times")
    assert "once to warm up, then 3 times; times are medians" in times
    assert re.search(r"A whole call: \*\*[\d.]+ (µs|ms|s)\*\*", times)
    kinds = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|", times, re.M)
    assert sorted(kinds) == [("fused", "2", "2"), ("matmul", "1", "1")]
    assert re.search(rf"^\| `%h_1` \| {line_of('h = F.gelu(self.norm(h))')} \| 16 \|", times,
                     re.M)


def test_random_inputs_follow_the_spec_and_the_seed(mlp):
    saved = load_saved(mlp)
    (x,) = random_inputs(saved, {"N": 5}, seed=1)
    assert x.dtype == np.float32 and x.shape == (5, 8)
    np.testing.assert_array_equal(x, random_inputs(saved, {"N": 5}, seed=1)[0])
    assert not np.array_equal(x, random_inputs(saved, {"N": 5}, seed=2)[0])


def test_output_file(mlp, tmp_path, capsys):
    out = tmp_path / "report.md"
    assert main(["report", mlp + ".json", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert out.read_text(encoding="utf-8").startswith("# irflow report: @MLP\n")


def fails(argv, capsys, message: str, status: int = 1) -> None:
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("irflow report: ") and message in err, err


def test_errors_are_one_line(mlp, tmp_path, capsys):
    fails(["report", str(tmp_path / "none")], capsys, "none: no saved program there")
    for value in ["0", "-2", "many"]:
        fails(["report", mlp, "--batch", value], capsys,
              f"--batch must be a positive integer, got '{value}'", status=2)  # usage errors
    fails(["report", mlp, "--repeat", "0"], capsys, "--repeat must be a positive integer",
          status=2)
    fails(["report", mlp, "--pipeline", "fold,nope"], capsys, "nope")
    ir = tmp_path / "f.irf"
    ir.write_text("func @f(%a: f32[2]) -> f32[2] {\n  return %a\n}\n")
    fails(["report", str(ir)], capsys, "f.irf: not a saved program")
    with open(mlp + ".pdiparams.npz", "r+b") as f:
        f.truncate(100)
    fails(["report", mlp], capsys, "mlp.pdiparams.npz: truncated")
    with pytest.raises(paddle.LoadError):
        main(["report", mlp, "--debug"])
