"""The CHECK-file matcher (tests/support/filecheck.py): what each directive accepts
and refuses, and what a failure shows."""
import pytest

from tests.support.filecheck import CheckFailure, check, read_directives

OUTPUT = """\
func @f(%x: f32[4]) -> f32[4] {
  %a = exp %x : f32[4]
  %b = tanh %a : f32[4]
  return %b
}

func @g(%x: f32[4]) -> f32[4] {
  %c = neg %x : f32[4]
  return %c
}
"""


def run(checks: str):
    check(OUTPUT, read_directives(checks), "t.irf")


def test_directives_in_order():
    run("""
// CHECK: %a = exp %x
// CHECK-NEXT: %b = tanh %a
// CHECK-NOT: neg
// CHECK: return %b""")


def test_spaces_and_regexes():
    run("// CHECK: %a   =   exp {{%[a-z]+}} : f32[{{[0-9]+}}]")


def test_check_next_must_be_the_next_line():
    with pytest.raises(CheckFailure, match=r"t.irf:3: CHECK-NEXT: return %b\n"
                                           r"  the next line does not match"):
        run("// CHECK: %a = exp\n//\n// CHECK-NEXT: return %b")


def test_check_not_between_matches():
    with pytest.raises(CheckFailure, match=r"CHECK-NOT: tanh\n  output line 3 contains"):
        run("// CHECK: exp\n// CHECK-NOT: tanh\n// CHECK: return")


def test_labels_keep_checks_inside_their_function():
    run("// CHECK-LABEL: func @f\n// CHECK: return %b\n// CHECK-LABEL: func @g\n"
        "// CHECK: neg")
    with pytest.raises(CheckFailure, match="no later line matches"):
        run("// CHECK-LABEL: func @f\n// CHECK: neg\n// CHECK-LABEL: func @g")
    with pytest.raises(CheckFailure, match="CHECK-NOT: neg"):
        run("// CHECK-LABEL: func @g\n// CHECK-NOT: neg")


def test_a_failure_shows_the_closest_line_as_a_diff_and_the_annotated_output():
    with pytest.raises(CheckFailure) as failure:
        run("// CHECK-LABEL: func @f\n// CHECK: %b = tanh %x")
    text = str(failure.value)
    assert "closest output line 3, as a diff from the directive:" in text
    assert "    - %b = tanh %x\n" in text and "    + %b = tanh %a : f32[4]\n" in text
    assert "   1 | func @f(%x: f32[4]) -> f32[4] {    <- CHECK-LABEL at line 1" in text
    assert ">>  2 |   %a = exp %x : f32[4]" in text


def test_a_file_without_checks_is_an_error():
    with pytest.raises(CheckFailure, match="no CHECK lines"):
        run("// nothing to check")
