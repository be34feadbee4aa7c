"""List ops: type rules, kernels, text form, executor, and gradients against finite
differences, through programs that build lists from tensors and reduce them to a
scalar (a list is never a program's input or output)."""
import numpy as np
import pytest

from irflow.codegen import compile_plan, run
from irflow.errors import ShapeError
from irflow.ir import Builder, Function, Module, TensorType, parse, verify
from irflow.ir.types import ListType
from irflow.passes.autodiff import grad, vjp_split

F64 = TensorType("f64", [3])


def program(body, n_inputs: int = 3) -> Function:
    """``(x0, x1, ...: f64[3]) -> f64``: the scalar `body(b, list_of_xs, *xs)` gives."""
    fn = Function("f", [F64] * n_inputs)
    b = Builder(fn.block)
    items = b.create("list_new", result_types=[ListType(F64)]).result
    for x in fn.args:
        items = b.list_append(items, x)
    b.ret(b.sum(body(b, items, *fn.args)))
    verify(Module([fn]))
    return fn


def index(b, i: int):
    return b.constant(i, "int64")


def check_gradients(fn: Function, seed: int = 0):
    """The gradient program equals central differences of the function, and the
    executor gives what the interpreter gives."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(3) for _ in fn.args]
    g = grad(fn, list(range(len(fn.args))))
    verify(Module([g]))
    value, *grads = run(g, *xs)
    assert np.allclose(compile_plan(g)(*xs)[0], value)
    for i, x in enumerate(xs):
        for j in range(3):
            step = np.zeros(3)
            step[j] = 1e-6
            up = run(fn, *xs[:i], x + step, *xs[i + 1:])[0]
            down = run(fn, *xs[:i], x - step, *xs[i + 1:])[0]
            assert np.isclose(grads[i][j], (up - down) / 2e-6, rtol=1e-5, atol=1e-8), (i, j)


def test_append_get_and_stack():
    def body(b, items, *xs):
        stacked = b.list_stack(items, axis=1, size=3)
        return b.mul(b.tanh(stacked), b.list_get(items, index(b, -1)))

    fn = program(body)
    xs = [np.arange(3.0) + k for k in range(3)]
    stacked = np.stack(xs, axis=1)
    assert np.allclose(run(fn, *xs)[0], np.sum(np.tanh(stacked) * xs[-1]))
    check_gradients(fn)


@pytest.mark.parametrize("op", ["set", "write_existing", "write_new", "pop", "add",
                                "unstack", "zeros_like", "slice_reversed", "slice_tail",
                                "concat", "unslice"])
def test_gradients_of_each_op(op):
    def body(b, items, x0, x1, x2):
        i = index(b, 1)
        if op == "set":
            items = b.list_set(items, i, b.mul(x0, x2))
        elif op == "write_existing":
            items = b.list_write(items, i, b.mul(x0, x2))
        elif op == "write_new":
            items = b.list_write(items, b.list_len(items), b.mul(x0, x2))
        elif op == "pop":
            items, last = b.list_pop(items)
            items = b.list_append(items, b.mul(last, last))
        elif op == "add":
            items = b.list_add(items, items)
        elif op == "unstack":
            items = b.list_unstack(b.list_stack(items, axis=0, size=3), axis=0)
        elif op == "slice_reversed":
            items = b.list_slice(items, index(b, -1), index(b, -4), step=-1)
        elif op == "slice_tail":
            items = b.list_slice(items, i, index(b, 3))
        elif op == "concat":
            items = b.list_concat(items, b.list_slice(items, i, index(b, 3)))
        elif op == "unslice":
            head = b.list_slice(items, index(b, 0), index(b, 2))
            items = b.list_add(items, b.list_unslice(head, index(b, 0), index(b, 2), items))
        else:
            items = b.list_add(items, b.list_zeros_like(items))
        size = {"write_new": 4, "slice_tail": 2, "concat": 5}.get(op, 3)
        return b.sin(b.list_stack(items, axis=0, size=size))

    check_gradients(program(body))


@pytest.mark.parametrize("step", [1, 2, -1, -3])
def test_slice_is_python_slicing_and_unslice_puts_back(step):
    """list_slice gives l[start:stop:step] for bounds in and out of range, negative
    ones included; list_unslice puts a slice's elements back at their positions."""
    xs = [np.full(3, k, np.float64) for k in range(5)]
    for start in range(-7, 8, 2):
        for stop in range(-7, 8, 3):
            fn = Function("f", [F64] * 5)
            b = Builder(fn.block)
            items = b.create("list_new", result_types=[ListType(F64)]).result
            for x in fn.args:
                items = b.list_append(items, x)
            part = b.list_slice(items, index(b, start), index(b, stop), step=step)
            back = b.list_unslice(part, index(b, start), index(b, stop), items, step=step)
            b.ret(b.list_len(part), b.list_stack(back, size=5))
            verify(Module([fn]))
            n, placed = run(fn, *xs)
            taken = list(range(5))[start:stop:step]
            assert n == len(taken), (start, stop)
            assert [int(row[0]) if k in taken else None for k, row in enumerate(placed)] == \
                [k if k in taken else None for k in range(5)]
            assert all(not row.any() for k, row in enumerate(placed) if k not in taken)


def test_list_values_are_not_changed_by_appending():
    def body(b, items, x0, x1, x2):
        longer = b.list_append(items, x0)
        return b.add(b.sum(b.list_stack(longer, size=4)), b.sum(b.list_stack(items, size=3)))

    xs = [np.full(3, k, np.float64) for k in (1.0, 2.0, 3.0)]
    assert run(program(body), *xs)[0] == pytest.approx(3 * (1 + 2 + 3 + 1) + 3 * 6)


def test_a_list_grown_in_a_while_loop_round_trips_and_differentiates():
    text = """
func @f(%x: f64[3], %n: i64) -> f64 {
  %l0 = list_new : list<f64[3]>
  %i0 = const {value=0} : i64
  %i, %l = while %x, %n, %i0, %l0 : (i64, list<f64[3]>) {
  ^cond(%x1: f64[3], %n1: i64, %i1: i64, %l1: list<f64[3]>):
    %c = lt %i1, %n1 : bool
    condition %c
  } {
  ^body(%x1: f64[3], %n1: i64, %i1: i64, %l1: list<f64[3]>):
    %one = const {value=1} : i64
    %i2 = add %i1, %one : i64
    %fi = cast %i2 {dtype="f64"} : f64
    %h = mul %x1, %fi : f64[3]
    %h2 = tanh %h : f64[3]
    %l2 = list_append %l1, %h2 : list<f64[3]>
    yield %i2, %l2
  }
  %s = list_stack %l {size="D1"} : f64[D1,3]
  %r = sum %s : f64
  %q = mul %r, %r : f64
  return %q
}
"""
    module = parse(text)
    assert str(parse(str(module))) == str(module)
    x, n = np.array([0.1, 0.2, 0.3]), np.array(4)

    def reference(x):
        return np.sum([np.tanh(x * (i + 1)) for i in range(4)]) ** 2

    assert run(module, x, n)[0] == pytest.approx(reference(x))
    g = grad(module.main, [0])
    value, dx = compile_plan(g)(x, n)
    fd = [(reference(x + e) - reference(x - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    assert np.allclose(dx, fd, rtol=1e-6)


def with_gradients(fn: Function) -> set[int]:
    """The inputs of `fn` whose gradient exists (eager code leaves the others None),
    from the bools the backward half of `vjp_split` returns."""
    fwd, bwd, flagged = vjp_split(fn, list(range(len(fn.args))), [0])
    residuals = run(fwd, *(np.ones(3) for _ in fn.args))[1:]
    flags = dict(zip(flagged, run(bwd, np.float64(1.0), *residuals)[len(fn.args):]))
    return {k for k in range(len(fn.args)) if flags.get(k, True)}


READS = {  # what the result reads of the list [x0, x1, x2], and the inputs it reaches
    "element -1": (lambda b, items: b.list_get(items, index(b, -1)), {2}),
    "element 0": (lambda b, items: b.list_get(items, index(b, 0)), {0}),
    "a slice": (lambda b, items: b.list_stack(b.list_slice(items, index(b, 1), index(b, 3)),
                                              size=2), {1, 2}),
    "a replaced element": (lambda b, items: b.list_get(
        b.list_set(items, index(b, 0), b.list_get(items, index(b, 2))), index(b, 0)), {2}),
    "what pop leaves": (lambda b, items: b.list_get(b.list_pop(items)[0], index(b, 0)), {0}),
    "the popped element": (lambda b, items: b.list_pop(items)[1], {2}),
    "a concatenation": (lambda b, items: b.list_get(b.list_concat(items, items),
                                                    index(b, 4)), {1}),
    "the stack": (lambda b, items: b.list_stack(items, size=3), {0, 1, 2}),
}


@pytest.mark.parametrize("read", list(READS))
def test_only_the_elements_read_have_gradients(read):
    """Reading one element gives the list a cotangent, zeros elsewhere; the elements
    not read have none, as in eager code, where the list is a Python list."""
    body, reached = READS[read]
    fn = program(lambda b, items, *xs: body(b, items))
    assert with_gradients(fn) == reached
    check_gradients(fn)


def test_list_stop_gradient_passes_the_list_and_stops_its_gradient():
    """Through list_stop_gradient the elements reach the result, and no gradient
    reaches them: only the path around it carries one."""
    def body(b, items, x0, x1, x2):
        stopped = b.create("list_stop_gradient", [items]).result
        return b.add(b.list_stack(stopped, size=3), b.mul(x0, x0))

    fn = program(body)
    xs = [np.arange(3.0) + k for k in range(3)]
    value, *grads = run(grad(fn, [0, 1, 2]), *xs)
    assert value == pytest.approx(sum(x.sum() for x in xs) + 3 * (xs[0] ** 2).sum())
    assert np.allclose(grads[0], 6 * xs[0])
    assert not grads[1].any() and not grads[2].any()


def test_type_rules_and_run_time_errors():
    with pytest.raises(ShapeError, match=r"a list<f64\[3\]> holds f64\[3\], got f64\[2\]"):
        program(lambda b, items, *xs: b.list_append(items, b.slice(
            xs[0], axes=(0,), starts=(0,), stops=(2,))))
    fn = program(lambda b, items, *xs: b.list_get(items, index(b, 5)))
    with pytest.raises(ShapeError, match="index 5 is out of range for a list of length 3"):
        run(fn, *[np.zeros(3)] * 3)
