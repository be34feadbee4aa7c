"""Pass objects, pipeline strings and the pass manager: options, verification of the
input and after each pass, errors that name the failing pass, printing, and the
report of what each pass did."""
import pytest

from irflow.errors import VerificationError
from irflow.ir import Module, parse
from irflow.passes import (Pass, PassError, PassManager, PipelineError, available, make_pass,
                           parse_pipeline, register_pass, run)

TEXT = """
func @f(%x: f32[4]) -> f32[4] {
  %a = test.op %x : f32[4]
  %b = test.neg %x : f32[4]
  return %a
}
"""


@register_pass
class RaisesKeyError(Pass):
    """A pass with a bug: it looks up a name that is not there."""

    name = "test-raises"

    def run(self, module):
        return {}["missing"]


@register_pass
class BreaksTheIR(Pass):
    """A pass with a bug: it erases an op whose result is returned."""

    name = "test-breaks"

    def run(self, module):
        block = module.main.block
        block.first_op.detach()
        return True


def test_pipeline_strings_carry_options():
    passes = parse_pipeline("fold{max-elements=1024},cse, dce")
    assert [p.name for p in passes] == ["fold", "cse", "dce"]
    assert passes[0].max_elements == 1024
    assert [str(p) for p in passes] == ["fold{max-elements=1024}", "cse", "dce"]
    assert str(make_pass("fold")) == "fold"
    assert [str(p) for p in parse_pipeline(["dce", "fold{max-elements=8}", make_pass("cse")])] \
        == ["dce", "fold{max-elements=8}", "cse"]


@pytest.mark.parametrize("pipeline, message", [
    ("dce,frobnicate", "unknown pass 'frobnicate'; known passes: .*cse, dce, fold"),
    ("fold{max=3}", "pass 'fold' has no option 'max'; its options: max-elements"),
    ("fold{max-elements=many}", "option max-elements of pass 'fold' takes an int, got 'many'"),
    ("fold{max-elements}", "option 'max-elements' of pass 'fold' needs a value"),
    ("dce;cse", "cannot read the pipeline 'dce;cse' at column 1"),
])
def test_pipeline_errors_say_what_is_wrong(pipeline, message):
    with pytest.raises(PipelineError, match=message.replace("{", r"\{")):
        parse_pipeline(pipeline)


def test_every_pass_is_listed_with_its_description():
    listed = available()
    assert listed["dce"].startswith("Remove ops whose results nothing needs")
    assert {"cse", "dce", "fold"} <= set(listed)


def test_a_failing_pass_names_itself_and_the_passes_before_it():
    module = parse(TEXT)
    with pytest.raises(PassError, match=r"pass 'test-raises' failed \(passes run: dce, "
                                        r"fold\{max-elements=4\}\): KeyError: 'missing'") as e:
        PassManager("dce,fold{max-elements=4},test-raises").run(module)
    assert isinstance(e.value.__cause__, KeyError)
    with pytest.raises(PassError, match=r"pass 'test-raises' failed \(the first pass\)"):
        PassManager("test-raises").run(parse(TEXT))


def test_ir_a_pass_breaks_is_caught_right_after_it():
    with pytest.raises(VerificationError, match=r"after pass 'test-breaks' \(passes run: dce, "
                                                r"test-breaks\): .*operand 0 \(%a\) is not "
                                                r"defined in this function"):
        PassManager("dce,test-breaks,cse", verify_each=True).run(parse(TEXT))


def test_the_input_is_verified_first():
    module = parse(TEXT)
    module.main.block.first_op.detach()
    with pytest.raises(VerificationError, match="the input of the pipeline is invalid"):
        PassManager("dce").run(module)


def test_history_and_printing_after_each_pass():
    printed = []
    manager = PassManager("dce,cse", print_after=True, printer=printed.append)
    assert manager.run(parse(TEXT)) is True
    assert [(r.name, r.changed) for r in manager.history] == [("dce", True), ("cse", False)]
    assert printed[0].startswith("// -----// IR after dce (changed)\nfunc @f")
    assert "test.neg" not in printed[0]
    assert printed[1].startswith("// -----// IR after cse\n")


def test_an_empty_pipeline_only_verifies():
    module = parse(TEXT)
    assert PassManager("").run(module) is False
    assert isinstance(module, Module)


def test_run_verifies_runs_in_place_and_returns_the_module():
    module = parse(TEXT)
    assert run(module, ["dce"]) is module
    assert "test.neg" not in str(module)
    broken = parse(TEXT)
    with pytest.raises(VerificationError, match=r"after pass 'test-breaks'"):
        run(broken, "test-breaks")


def test_printing_after_the_passes_named():
    printed = []
    run(parse(TEXT), "fold,dce,cse", print_after=["dce"], printer=printed.append)
    assert len(printed) == 1 and printed[0].startswith("// -----// IR after dce (changed)")


def test_the_report_gives_time_ops_and_each_pass_statistics():
    text = """
func @f(%x: f32[N,4], %w: f32[4]) -> f32[N,4] {
  %dead = exp %x : f32[N,4]
  %a = mul %x, %w : f32[N,4]
  %b = tanh %a : f32[N,4]
  %c = add %b, %x : f32[N,4]
  return %c
}
"""
    manager = PassManager("dce,fuse")
    manager.run(parse(text))
    report = manager.history
    assert (report["dce"].ops_before, report["dce"].ops_after, report["dce"].ops_removed) \
        == (4, 3, 1)
    assert report["fuse"].statistics == {"fused-ops": 1, "ops-fused": 3, "ops-recomputed": 0}
    assert report["dce"].kinds_after == {"mul": 1, "tanh": 1, "add": 1}
    # ops in regions count (a fused op's body), terminators do not
    assert report["fuse"].kinds_after == {"fused": 1, "mul": 1, "tanh": 1, "add": 1}
    assert sum(report["fuse"].kinds_after.values()) == report["fuse"].ops_after
    assert all(r.seconds >= 0 for r in report) and report.seconds >= report["dce"].seconds
    with pytest.raises(KeyError, match="no pass 'cse' ran; the pipeline ran dce, fuse"):
        report["cse"]
    printed = []
    run(parse(text), "dce,fuse", report=True, printer=printed.append)
    lines = printed[0].splitlines()
    assert lines[0].split() == ["pass", "time", "ops", "changed", "statistics"]
    assert lines[1].split()[0] == "dce" and "4 -> 3" in lines[1]
    assert lines[2].split()[0] == "fuse" and lines[2].endswith(
        "fused-ops=1 ops-fused=3 ops-recomputed=0")
    assert lines[3].startswith("total")


def test_the_passes_of_this_issue_are_listed():
    listed = available()
    assert listed["fuse"].startswith("Fuse elementwise ops, reductions and contraction")
    assert listed["fold-affine"].startswith("Fold per-channel scales and shifts")
