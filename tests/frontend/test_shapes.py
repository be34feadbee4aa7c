"""Symbolic sizes: `x.shape` of a traced tensor keeps unknown dims as run-time values,
so loops and shape arguments built from it work for every size; dims are polynomials
of the symbols (x[:, 1:] of an axis S1 has S1 - 1 entries); a symbol that must be a
static size is fixed to it and checked when the program is called; and sizes that
depend on tensor values are symbols bound when the program runs."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F
from irflow.static import InputSpec


def compiled_equals_eager(fn, spec, inputs):
    compiled = paddle.compile(fn, input_spec=spec)
    for x in inputs:
        np.testing.assert_allclose(compiled(x).numpy(), fn(x).numpy(), rtol=1e-6)
    return compiled


def test_range_over_a_symbolic_dim_loops_the_right_number_of_times():
    def f(x):
        total = paddle.zeros([3])
        for i in range(x.shape[0]):
            total = total + x[i] * (i + 1.0)
        return total

    compiled = compiled_equals_eager(f, [InputSpec([None, 3])],
                                     [paddle.randn([n, 3]) for n in (1, 2, 5)])
    assert any(op.name == "while" for op in compiled.ir.walk())


def test_shape_arguments_built_from_symbolic_dims():
    def f(x):
        batch = x.shape[0]
        flat = paddle.reshape(x, [batch, -1])
        return flat + paddle.ones([batch, x.shape[1] * x.shape[2]])

    compiled = compiled_equals_eager(f, [InputSpec([None, 2, 3])],
                                     [paddle.randn([n, 2, 3]) for n in (1, 4)])
    assert "f32[N,6]" in str(compiled.ir)


def test_static_dims_stay_python_ints():
    class Head(nn.Layer):
        def forward(self, x):
            assert x.shape[1] == 4  # a static dim: a Python int, checked at conversion
            return x.reshape([-1, x.shape[1] // 2, 2])

    compiled_equals_eager(Head(), [InputSpec([None, 4])], [paddle.randn([3, 4])])


# ---------------------------------------------------------------- polynomial dims

def first_column(x):
    return x[:, 0]


def last_column(x):
    return x[:, -1]


def first_columns(x):
    return x[:, :1]


def all_but_the_first_column(x):
    return x[:, 1:]


def first_row(x):
    return x[0]


def neighbour_differences(x):
    return x[:, 1:] - x[:, :-1]


def padded(x):
    return F.pad(x, [1, 2, 0, 1])


def padded_then_cut(x):
    return paddle.nn.functional.pad(x, [2, 0, 1, 1])[:, 1:-1]


def first_column_times_the_others(x):
    first, others = paddle.split(x, [1, -1], axis=1)
    return first * others


def columns_and_their_sum(x):
    return paddle.concat([x, x[:, 1:], paddle.sum(x, axis=1, keepdim=True)], axis=1)


class Scaled(nn.Layer):
    """`fn(x * w)` with a learnt scale w, so that gradients reach a parameter."""

    def __init__(self, fn):
        super().__init__()
        self.w = paddle.create_parameter([1], "float32",
                                         default_initializer=nn.initializer.Constant(1.5))
        self.fn = fn

    def forward(self, x):
        return self.fn(x * self.w)


def outputs_and_gradients(run, model, *inputs):
    """What `run` (the model, compiled or not) returns and the gradients of a loss on
    it, for the model's parameters and the inputs (which are cleared again)."""
    for x in inputs:
        x.stop_gradient = False
    out = run(*inputs)
    (out * out).sum().backward()
    tensors = [*model.parameters(), *inputs]
    grads = [t.grad.numpy() for t in tensors]
    for t in tensors:
        t.clear_gradient()
    return [out.numpy(), *grads]


def compiled_and_eager_agree(model, spec, *shape_lists):
    """The compiled `model` gives eager's outputs and gradients on inputs of each of
    the shapes (one list of shapes per call)."""
    compiled = paddle.jit.to_static(model, input_spec=spec)
    for shapes in shape_lists:
        inputs = [paddle.randn(s) for s in shapes]
        got = outputs_and_gradients(compiled, model, *inputs)
        want = outputs_and_gradients(model, model, *inputs)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return compiled


@pytest.mark.parametrize("fn", [first_column, last_column, first_columns,
                                all_but_the_first_column, first_row, neighbour_differences,
                                padded, padded_then_cut, first_column_times_the_others,
                                columns_and_their_sum])
def test_indexing_padding_and_joining_axes_of_unknown_size(fn):
    compiled = compiled_and_eager_agree(Scaled(fn), [InputSpec([None, None])],
                                        [[3, 5]], [[2, 2]], [[4, 3]])
    assert compiled.ir.main.args[0].type == paddle.ir.TensorType("f32", ("N", "S1"))


def test_sizes_of_the_results_are_polynomials_of_the_symbols():
    types = {fn.__name__: str(paddle.jit.to_static(fn, input_spec=[InputSpec([None, None])])
                              .ir.main.result_types[0])
             for fn in (first_row, all_but_the_first_column, padded, columns_and_their_sum)}
    assert types == {"first_row": "f32[S1]", "all_but_the_first_column": "f32[N,S1-1]",
                     "padded": "f32[N+3,S1+1]", "columns_and_their_sum": "f32[N,S1*2]"}


class Pair(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w = paddle.create_parameter([3], "float32")

    def forward(self, x, y):
        return paddle.concat([x * self.w, y], axis=0)


def test_concat_of_two_unknown_sizes():
    spec = [InputSpec([None, 3]), InputSpec(["M", 3])]
    compiled = compiled_and_eager_agree(Pair(), spec, [[2, 3], [4, 3]], [[5, 3], [1, 3]])
    assert str(compiled.ir.main.result_types[0]) == "f32[M+N,3]"


class Classifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x))


def test_a_linear_fixes_an_unknown_feature_dim_and_checks_it_at_run_time():
    compiled = compiled_and_eager_agree(Classifier(), [InputSpec([None, None], name="x")],
                                        [[5, 4]], [[2, 4]])
    assert str(compiled.ir.main.args[0].type) == "f32[N,4]"
    with pytest.raises(paddle.InputError, match=r"x should have shape \[None, 4\], got \[5, 6\]"
                                                r"; its axis 1 is unknown in the input_spec, but "
                                                r"the program needs 4 there") as e:
        compiled(paddle.randn([5, 6]))
    assert e.value.loc.file == __file__


def test_broadcasting_an_unknown_dim_against_a_static_one_fixes_it():
    bias = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])

    def shift(x):
        return x[:, 1:] + bias  # the slice has S1 - 1 columns: S1 is 5

    compiled = compiled_equals_eager(shift, [InputSpec([None, None])],
                                     [paddle.randn([2, 5]), paddle.randn([3, 5])])
    assert str(compiled.ir.main.args[0].type) == "f32[N,5]"
    with pytest.raises(paddle.InputError, match=r"should have shape \[None, 5\], got \[2, 4\]"):
        compiled(paddle.randn([2, 4]))


def test_input_symbols_the_program_combines_become_one():
    def add(x, y):
        return x + y

    compiled = paddle.jit.to_static(add, input_spec=[InputSpec([None, None]),
                                                     InputSpec([None, "M"])])
    x, y = paddle.randn([2, 3]), paddle.randn([2, 3])
    np.testing.assert_allclose(compiled(x, y).numpy(), (x + y).numpy())
    assert str(compiled.ir.main.args[0].type) == str(compiled.ir.main.args[1].type)
    with pytest.raises(paddle.InputError, match=r"input 1 should have shape \[None, None\], "
                                                r"got \[2, 5\]; its axis 1 must have the size "
                                                r"of axis 1 of input 0 \(3\)"):
        compiled(x, paddle.randn([2, 5]))


def test_input_symbols_the_program_does_not_relate_stay_apart():
    def pick(x, idx):
        return paddle.gather(x, idx)

    compiled = paddle.jit.to_static(pick, input_spec=[InputSpec([None, 4]),
                                                      InputSpec([None], "int64")])
    x, idx = paddle.randn([5, 4]), paddle.to_tensor([4, 0])
    np.testing.assert_allclose(compiled(x, idx).numpy(), pick(x, idx).numpy())


def test_shapes_computed_from_x_shape_stay_symbolic():
    def f(x):
        n = x.shape[1] - 1
        rows = paddle.arange(x.shape[0]).astype("float32").unsqueeze(1)
        return paddle.zeros([x.shape[0], n + 4]) + F.pad(x[:, :n] * rows, [2, 2])

    compiled = compiled_equals_eager(f, [InputSpec([None, None])],
                                     [paddle.randn([2, 4]), paddle.randn([3, 2])])
    assert str(compiled.ir.main.result_types[0]) == "f32[N,S1+3]"
    assert "range" in str(compiled.ir) and "D1" not in str(compiled.ir)


class Positives(nn.Layer):
    """Sizes that depend on tensor values: the rows after the first, as many as the
    first column has positive entries, and the last that many rows."""

    def __init__(self):
        super().__init__()
        self.w = paddle.create_parameter([3], "float32")

    def forward(self, x):
        k = paddle.sum((x[:, 0] > 0).astype("int64"))
        y = x * self.w
        steps = paddle.arange(k).astype("float32")
        return (y[1:k + 1] * 2).sum() + (y[-k:] ** 2).sum() + steps.sum()


def test_sizes_from_tensor_values_are_symbols_bound_when_the_program_runs():
    compiled = compiled_and_eager_agree(Positives(), [InputSpec([None, 3])],
                                        [[4, 3]], [[7, 3]], [[1, 3]])
    text = str(compiled.ir)
    assert "[D1]" in text and "f32[D2,3]" in text and "f32[D3,3]" in text


def test_a_slice_must_lie_within_an_axis_of_unknown_size():
    def tail(x):
        return x[:, 2:]

    compiled = paddle.jit.to_static(tail, input_spec=[InputSpec([None, None])])
    np.testing.assert_array_equal(compiled(paddle.ones([2, 3])).numpy(), np.ones((2, 1)))
    with pytest.raises(paddle.ShapeError, match=r"the slice 2: of axis 1 reaches outside the "
                                                r"axis, which has 1 elements") as e:
        compiled(paddle.ones([2, 1]))
    assert e.value.loc.line == tail.__code__.co_firstlineno + 1


def test_a_bound_whose_sign_is_known_only_at_run_time_slices_as_python_does():
    def f(x):
        n = x.shape[1]
        return x[:, :-(n - 1)] * 2.0  # x[:, :1], or x[:, :0] when n is 1 (-0 is 0)

    compiled_equals_eager(f, [InputSpec([None, None])],
                          [paddle.randn([2, 3]), paddle.randn([2, 1]), paddle.randn([1, 4])])


def micro_batch_losses(x, y):
    """The same rows of two inputs, taken with bounds computed in the program."""
    lo = paddle.argmax(x[:, 0])
    part = x[lo:lo + 2]
    return (part * 2.0 + y[lo:lo + 2]).sum(axis=1)


def test_sizes_known_only_at_run_time_combine_and_are_checked_when_it_runs():
    """Two slices with traced bounds have lengths of their own (fresh symbols); a rule
    that needs them equal makes the later one checked against the earlier
    (`match_shape`) when the program runs: equal, the program is eager's; not, it
    raises ShapeError naming the line, where a fixed guess would have been wrong."""
    compiled = paddle.compile(micro_batch_losses,
                              input_spec=[InputSpec([None, 3]), InputSpec([None, 3])])
    for n in (4, 6):
        grads = []
        for fn in (compiled, micro_batch_losses):
            x, y = (paddle.to_tensor(rng.standard_normal((n, 3)).astype("float32"),
                                     stop_gradient=False) for rng in
                    (np.random.default_rng(n), np.random.default_rng(n + 1)))
            out = fn(x, y)
            (out ** 2).sum().backward()
            grads.append((out.numpy(), x.grad.numpy(), y.grad.numpy()))
        for got, want in zip(*grads):  # the outputs, and the gradients through the check
            np.testing.assert_allclose(got, want, rtol=1e-6)
    matches = [op for op in compiled.ir.walk() if op.name == "match_shape"]
    assert len(matches) == 1 and matches[0].attrs["needed_at"].endswith(
        f"test_shapes.py:{micro_batch_losses.__code__.co_firstlineno + 4}")
    x = paddle.to_tensor(np.array([[0, 0, 0], [0, 0, 0], [9, 0, 0], [0, 0, 0], [0, 0, 0]],
                                  "float32"))
    y = paddle.zeros([2, 3])  # x[2:4] has two rows, y[2:4] none: eager fails too
    with pytest.raises(ValueError):
        micro_batch_losses(x, y)
    with pytest.raises(paddle.ShapeError, match=r"shape \[0\] where \[2\]"):
        compiled(x, y)


def test_einsum_and_bilinear_over_two_inputs_with_none_batches():
    """Two `None` batch dims one einsum label joins are tied as x + y ties them (einsum
    refused them: "label 'b' names dims of sizes N and N_1")."""
    spec = [InputSpec([None, 16], "float32"), InputSpec([None, 16], "float32")]

    def f(x, y):
        return paddle.einsum("bi,bi->b", x, y)

    compiled = paddle.jit.to_static(f, input_spec=spec)
    x, y = paddle.randn([5, 16]), paddle.randn([5, 16])
    np.testing.assert_allclose(compiled(x, y).numpy(), f(x, y).numpy(), rtol=1e-6)
    bilinear = paddle.nn.Bilinear(4, 5, 3)
    run = paddle.jit.to_static(bilinear, input_spec=[InputSpec([None, 4], "float32"),
                                                    InputSpec([None, 5], "float32")])
    a, b = paddle.randn([7, 4]), paddle.randn([7, 5])
    np.testing.assert_allclose(run(a, b).numpy(), bilinear(a, b).numpy(), rtol=1e-5, atol=1e-6)
