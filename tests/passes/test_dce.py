"""dce: removes unused pure ops, unused cond results and operands, dead while state."""
from tests.support.passcheck import check_pass


def test_unused_ops_go_and_used_ones_stay():
    check_pass(["dce"], """
func @f(%x: f32[4]) -> f32[4] {
  %a = exp %x : f32[4]
  %b = neg %a : f32[4]
  %c = tanh %x : f32[4]
  return %c
}""", """
func @f(%x: f32[4]) -> f32[4] {
  %c = tanh %x : f32[4]
  return %c
}""")


def test_unused_cond_result_and_captured_operand_are_dropped():
    check_pass(["dce"], """
func @f(%p: bool, %x: f32[4], %y: f32[4]) -> f32[4] {
  %r, %s = cond %p, %x, %y : (f32[4], f32[4]) {
  ^then(%a: f32[4], %b: f32[4]):
    %e = exp %a : f32[4]
    %t = tanh %b : f32[4]
    yield %e, %t
  } {
  ^else(%a: f32[4], %b: f32[4]):
    %n = neg %a : f32[4]
    yield %n, %b
  }
  return %r
}""", """
func @f(%p: bool, %x: f32[4], %y: f32[4]) -> f32[4] {
  %r = cond %p, %x : f32[4] {
  ^then(%a: f32[4]):
    %e = exp %a : f32[4]
    yield %e
  } {
  ^else(%a: f32[4]):
    %n = neg %a : f32[4]
    yield %n
  }
  return %r
}""")


def test_cond_with_no_used_results_disappears():
    check_pass(["dce"], """
func @f(%p: bool, %x: f32[4]) -> f32[4] {
  %r = cond %p, %x : f32[4] {
  ^then(%a: f32[4]):
    yield %a
  } {
  ^else(%a: f32[4]):
    %n = neg %a : f32[4]
    yield %n
  }
  return %x
}""", """
func @f(%p: bool, %x: f32[4]) -> f32[4] {
  return %x
}""")


WHILE = """
func @f(%x: f32[4], %n: i64, %unused: f32) -> f32[4] {
  %i0 = const {value=0} : i64
  %i, %v, %w = while %n, %unused, %i0, %x, %x : (i64, f32[4], f32[4]) {
  ^cond(%m: i64, %u: f32, %j: i64, %a: f32[4], %b: f32[4]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %u: f32, %j: i64, %a: f32[4], %b: f32[4]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %a1 = tanh %a : f32[4]
    %b1 = add %b, %a : f32[4]
    yield %j1, %a1, %b1
  }
  return %v
}"""


def test_while_drops_dead_carried_values_and_unused_invariants():
    # %w is never used after the loop and feeds nothing else: it goes, with %unused.
    # %i is unused after the loop but the condition reads it: it stays.
    check_pass(["dce"], WHILE, """
func @f(%x: f32[4], %n: i64, %unused: f32) -> f32[4] {
  %i0 = const {value=0} : i64
  %i, %v = while %n, %i0, %x : (i64, f32[4]) {
  ^cond(%m: i64, %j: i64, %a: f32[4]):
    %k = lt %j, %m : bool
    condition %k
  } {
  ^body(%m: i64, %j: i64, %a: f32[4]):
    %one = const {value=1} : i64
    %j1 = add %j, %one : i64
    %a1 = tanh %a : f32[4]
    yield %j1, %a1
  }
  return %v
}""")


def test_carried_value_feeding_a_needed_one_stays():
    text = WHILE.replace("%a1 = tanh %a : f32[4]", "%a1 = tanh %b : f32[4]")
    check_pass(["dce"], text, text.replace(", %unused: f32) -> f32[4]", ", %unused: f32) -> f32[4]")
               .replace("while %n, %unused, %i0", "while %n, %i0")
               .replace("%m: i64, %u: f32,", "%m: i64,"))
