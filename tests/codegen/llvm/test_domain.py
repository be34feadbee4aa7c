"""Loop planning over broadcast domains and kernel specs, without the JIT."""
from irflow.codegen.llvm import Instr, KernelSpec, plan_domain
from irflow.ir import dtypes
from irflow.ir.types import TensorType


def t(*shape):
    return TensorType(dtypes.float32, shape)


def test_equal_shapes_merge_into_one_flat_loop():
    domain, masks = plan_domain([t(4096, 1024), t(4096, 1024), t()])
    assert domain.groups == ((0, 1),)
    assert masks == ((False,), (False,), (True,))


def test_a_row_vector_keeps_two_loops():
    domain, masks = plan_domain([t("N", 8), t(8)])
    assert domain.groups == ((0,), (1,))
    assert masks == ((False, False), (True, False))
    assert domain.sources == ((0, 0), (0, 1))
    assert domain.expect == ((0, 1), (1,))


def test_static_unit_dims_are_dropped_and_their_neighbours_merge():
    domain, masks = plan_domain([t(3, 1, 5), t(3, 1, 5)])
    assert domain.groups == ((0, 2),)
    assert domain.sources == ((0, 0), None, (0, 2))


def test_a_column_broadcast():
    domain, masks = plan_domain([t(6, 1), t(1, 7)])
    assert domain.groups == ((0,), (1,))
    assert masks == ((False, True), (True, False))
    assert domain.expect == ((0, None), (None, 1))


def test_scalar_domain_is_one_iteration():
    domain, masks = plan_domain([t(), t()])
    assert domain.groups == ((),) and masks == ((True,), (True,))


def test_specs_are_values():
    body = (Instr("mul", (0, 0), "f32"),)
    a = KernelSpec(("f32",), ((False,),), body, (1,), 1)
    b = KernelSpec(("f32",), ((False,),), body, (1,), 1)
    assert a == b and hash(a) == hash(b)
    assert "%1 = mul %0, %0 : f32" in a.text()
