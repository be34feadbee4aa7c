"""cse merges equal pure ops; fold evaluates constants and removes identities."""
from tests.support.passcheck import check_pass


def test_cse_merges_equal_pure_ops_and_keeps_io():
    check_pass(["cse"], """
func @f(%x: f32[4]) -> f32[4] {
  %a = exp %x : f32[4]
  %b = exp %x : f32[4]
  %c = add %a, %b : f32[4]
  %d = sum %c {axis=[0]} : f32
  %e = sum %c : f32
  %s = add %d, %e : f32
  %t = mul %c, %s : f32[4]
  return %t
}""", """
func @f(%x: f32[4]) -> f32[4] {
  %a = exp %x : f32[4]
  %c = add %a, %a : f32[4]
  %d = sum %c : f32
  %s = add %d, %d : f32
  %t = mul %c, %s : f32[4]
  return %t
}""")


def test_cse_works_inside_each_region_separately():
    check_pass(["cse"], """
func @f(%p: bool, %x: f32) -> f32 {
  %a = exp %x : f32
  %y = cond %p, %x : f32 {
  ^then(%u: f32):
    %b = exp %u : f32
    %c = exp %u : f32
    %d = add %b, %c : f32
    yield %d
  } {
  ^else(%u: f32):
    yield %u
  }
  %z = add %a, %y : f32
  return %z
}""", """
func @f(%p: bool, %x: f32) -> f32 {
  %a = exp %x : f32
  %y = cond %p, %x : f32 {
  ^then(%u: f32):
    %b = exp %u : f32
    %d = add %b, %b : f32
    yield %d
  } {
  ^else(%u: f32):
    yield %u
  }
  %z = add %a, %y : f32
  return %z
}""")


def test_fold_evaluates_constant_expressions():
    check_pass(["fold", "dce"], """
func @f(%x: f32[2]) -> f32[2] {
  %a = const {value=[1.0, 2.0]} : f32[2]
  %b = const {value=3.0} : f32
  %c = mul %a, %b : f32[2]
  %d = exp %c : f32[2]
  %y = add %x, %d : f32[2]
  return %y
}""", """
func @f(%x: f32[2]) -> f32[2] {
  %d = const {value=[20.085537, 403.42877]} : f32[2]
  %y = add %x, %d : f32[2]
  return %y
}""")


def test_fold_removes_identities():
    check_pass(["fold", "dce"], """
func @f(%x: f32[2,3]) -> f32[2,3] {
  %one = const {value=1.0} : f32
  %zero = const {value=0.0} : f32
  %a = mul %x, %one : f32[2,3]
  %b = add %zero, %a : f32[2,3]
  %c = reshape %b {shape=[2, 3]} : f32[2,3]
  %d = transpose %c {perm=[0, 1]} : f32[2,3]
  %e = neg %d : f32[2,3]
  %g = neg %e : f32[2,3]
  %h = cast %g {dtype=f32} : f32[2,3]
  return %h
}""", """
func @f(%x: f32[2,3]) -> f32[2,3] {
  return %x
}""")


def test_fold_keeps_ops_that_broadcast():
    # x * 1 where 1 is f32[2,3] and x is f32[3]: the result is not x's type.
    text = """
func @f(%x: f32[3]) -> f32[2,3] {
  %one = const {value=[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]} : f32[2,3]
  %a = mul %x, %one : f32[2,3]
  return %a
}"""
    check_pass(["fold"], text, text)


def test_fold_bypasses_broadcasts_that_elementwise_ops_do_anyway():
    check_pass(["fold", "dce"], """
func @f(%s: f32, %x: f32[N,4]) -> f32[N,4] {
  %r = reshape %s {shape=[1, 1]} : f32[1,1]
  %b = broadcast_to %r {shape=[N, 4]} : f32[N,4]
  %y = mul %b, %x : f32[N,4]
  return %y
}""", """
func @f(%s: f32, %x: f32[N,4]) -> f32[N,4] {
  %r = reshape %s {shape=[1, 1]} : f32[1,1]
  %y = mul %r, %x : f32[N,4]
  return %y
}""")


def test_fold_merges_chained_reshapes():
    check_pass(["fold", "dce"], """
func @f(%x: f32[N,4,4]) -> f32[N,16] {
  %a = reshape %x {shape=[N, 2, 8]} : f32[N,2,8]
  %b = reshape %a {shape=[N, 16]} : f32[N,16]
  return %b
}""", """
func @f(%x: f32[N,4,4]) -> f32[N,16] {
  %b = reshape %x {shape=[N, 16]} : f32[N,16]
  return %b
}""")
