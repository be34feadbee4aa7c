"""Conversion of the code people write, compiled versus eager: what a branch yields
and a loop carries (liveness), structures, returns, asserts, no_grad, reads of values
in conditions, and Paddle's control-flow APIs."""
import inspect
import os

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.errors import ConversionError
from irflow.static import InputSpec

THIS_FILE = os.path.abspath(__file__)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def leaves(out):
    if isinstance(out, dict):
        return [t for v in out.values() for t in leaves(v)]
    if isinstance(out, tuple | list):
        return [t for v in out for t in leaves(v)]
    return [out]


def assert_same(compiled_out, eager_out):
    got, want = leaves(compiled_out), leaves(eager_out)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def check_function(fn, *inputs, spec=None):
    """`fn` compiled gives what it gives eagerly, on each tuple of inputs."""
    compiled = paddle.compile(fn, input_spec=spec)
    for args in inputs:
        assert_same(compiled(*args), fn(*args))
    return compiled


def check_layer_gradients(layer, x):
    """Outputs and parameter gradients of sum(out**2) through the compiled layer equal
    eager ones (None where eager has none: a parameter no code that ran used)."""
    compiled = paddle.compile(layer)
    params = list(layer.parameters())
    out = compiled(x)
    assert_same(out, layer(x))
    paddle.sum(out ** 2).backward()
    got = [None if p.grad is None else p.grad.numpy().copy() for p in params]
    layer.clear_gradients()
    paddle.sum(layer(x) ** 2).backward()
    for g, p in zip(got, params):
        assert (g is None) == (p.grad is None)
        if g is not None:
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-5)
    layer.clear_gradients()


POS, NEG = paddle.ones([2, 3]), -paddle.ones([2, 3])


# ---------------------------------------------------------------- one-branch variables

def test_a_variable_bound_in_one_branch_and_returned_is_a_conversion_error():
    def f(x):
        if paddle.mean(x) > 0:
            y = x * 2
        return y

    with pytest.raises(ConversionError) as info:
        paddle.compile(f)(POS)
    message = str(info.value)
    assert "variable 'y' is assigned in only one branch" in message
    assert f"{THIS_FILE}:{line_of(f, 'if paddle.mean')}" in message
    assert f"{THIS_FILE}:{line_of(f, 'return y')}" in message
    assert "Undefined" not in message and "__jst" not in message


def test_a_one_branch_variable_not_used_after_the_if_needs_no_value():
    def f(x):
        if paddle.mean(x) > 0:
            tmp = x * 2
            x = tmp + 1
        return x

    check_function(f, (POS,), (NEG,))


def test_a_one_branch_variable_under_a_python_condition_keeps_python_semantics():
    def f(x, flag):
        if flag:
            y = x * 2
        return y

    compiled = paddle.compile(f, input_spec=[InputSpec([2, 3])])  # flag: a Python value
    assert_same(compiled(POS, True), f(POS, True))
    with pytest.raises(UnboundLocalError):
        compiled(POS, False)


def test_branch_temporaries_may_differ_in_shape_between_branches():
    def f(x):
        if paddle.mean(x) > 0:
            t = paddle.sum(x)
            y = x * t
        else:
            t = x * 3
            y = t - 1
        return y

    check_function(f, (POS,), (NEG,))


# ---------------------------------------------------------------- what loops carry

def test_fixed_point_loop_carries_no_temporaries_and_differentiates():
    class FixedPoint(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = x
            d = paddle.to_tensor(1.0)
            while d > 1e-5:
                hn = paddle.tanh(self.fc(h) * 0.5)
                d = paddle.max(paddle.abs(hn - h))
                h = hn
            return h

    paddle.seed(0)
    layer = FixedPoint()
    check_layer_gradients(layer, paddle.randn([3, 4]))
    loop = next(op for op in paddle.compile(layer, input_spec=[InputSpec([None, 4])])
                .source_ir.walk() if op.name == "while")
    assert sorted(v.name for v in loop.results) == ["d", "h"]  # not hn


def test_loop_body_temporaries_of_a_symbolic_shape_are_not_carried():
    def f(x):
        i = 0
        while i < paddle.to_tensor(3):
            step = x * 0.5
            x = x + step
            i += 1
        return x

    check_function(f, (POS,), spec=[InputSpec([None, 3])])


def test_a_variable_first_bound_in_a_loop_and_used_after_starts_as_zeros():
    def f(x, n):
        for i in range(n):
            last = x * i
        return last

    compiled = paddle.compile(f)
    n = paddle.to_tensor(4)
    assert_same(compiled(POS, n), f(POS, n))


def test_tuple_state_is_carried_leaf_by_leaf():
    def f(x):
        state = (x, x * 2)
        for _ in range(paddle.to_tensor(3)):
            h, c = state
            state = (h + c, c * 0.5)
        return state

    check_function(f, (POS,))


# ---------------------------------------------------------------- conditions of shape [1]

def test_while_and_range_with_one_element_tensors():
    def counter(x):
        i = paddle.full([1], 0, dtype="int64")
        n = paddle.full([1], 5, dtype="int64")
        while i < n:
            x = x + 1
            i = i + 1
        return x

    def bound(x):
        n = paddle.full([1], 4, dtype="int64")
        for _ in range(n):
            x = x * 1.5
        return x

    check_function(counter, (POS,))
    check_function(bound, (POS,))


def test_increment_in_a_tensor_loop():
    def f(x):
        i = paddle.tensor.fill_constant([1], "int64", 0)
        n = paddle.full([1], 3, dtype="int64")
        while i < n:
            x = x * 2
            paddle.increment(i)
        return x, i

    check_function(f, (POS,))


# ---------------------------------------------------------------- structures and returns

def test_returning_tuples_and_dicts_from_a_tensor_if():
    def f(x):
        if paddle.mean(x) > 0:
            return x * 2, {"a": x + 1, "b": [x, x * 3]}
        return x, {"a": x - 1, "b": [-x, x]}

    check_function(f, (POS,), (NEG,))


def test_returns_of_different_structures_name_both_lines():
    def f(x):
        if paddle.mean(x) > 0:
            return x * 2, x
        return x

    with pytest.raises(ConversionError) as info:
        paddle.compile(f)(POS)
    message = str(info.value)
    assert f"{THIS_FILE}:{line_of(f, 'return x * 2, x')}" in message
    assert f"{THIS_FILE}:{line_of(f, 'return x' + chr(10))}" in message
    assert "tuple(tensor, tensor)" in message and "tensor at" in message
    assert "__jst" not in message


def test_return_inside_a_tensor_while_loop():
    def f(x):
        i = paddle.to_tensor(0)
        while i < 10:
            x = x * 2
            if paddle.sum(x) > 20:
                return x, i
            i += 1
        return x, i

    check_function(f, (POS,), (POS * 0.01,))


def test_early_exit_from_a_loop_over_layers():
    class Blocks(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(3, 3) for _ in range(4)])

        def forward(self, x):
            for block in self.blocks:
                x = paddle.tanh(block(x))
                if paddle.mean(x) > 0.2:
                    return x * 2
            return x

    paddle.seed(3)
    layer = Blocks()
    for x in (POS, NEG, paddle.randn([2, 3])):
        check_layer_gradients(layer, x)


def test_break_from_a_loop_over_a_python_list():
    def f(x):
        for k in [1.0, 2.0, 3.0]:
            x = x * k
            if paddle.mean(x) > 1.5:
                break
        return x

    check_function(f, (POS,), (POS * 0.1,), (NEG,))


# ---------------------------------------------------------------- in-place changes

def test_list_and_dict_changes_in_tensor_branches():
    def f(x):
        outs, d = [], {"a": x}
        if paddle.mean(x) > 0:
            outs.append(x * 2)
            d["a"] = x + 1
        else:
            outs.append(x)
        return paddle.stack(outs), d["a"]

    check_function(f, (POS,), (NEG,))


def test_setitem_in_a_branch_stays_in_that_branch():
    def f(x):
        y = x * 1
        if paddle.mean(x) > 0:
            y[0] = 5.0
        return y

    check_function(f, (POS,), (NEG,))


def test_attributes_set_in_tensor_branches():
    class Keep(nn.Layer):
        def forward(self, x):
            if paddle.mean(x) > 0:
                self.state = x * 2
            else:
                self.state = x - 1
            return self.state

    layer = Keep()
    check_function(layer, (POS,), (NEG,))


def test_attribute_set_in_a_tensor_loop_names_the_attribute():
    class Keep(nn.Layer):
        def forward(self, x):
            i = 0
            while i < paddle.to_tensor(3):
                self.state = x * i
                i += 1
            return x

    layer = Keep()
    with pytest.raises(ConversionError) as info:
        paddle.compile(layer)(POS)
    assert "`self.state` is set inside a tensor-dependent loop" in str(info.value)
    assert f"{THIS_FILE}:{line_of(Keep.forward, 'self.state = x * i')}" in str(info.value)
    assert "state" not in vars(layer) and "state" not in layer._buffers  # put back


def test_lists_grown_in_tensor_loops():
    def f(x, n):
        outs, tokens = [], []
        i = 0
        while i < n:
            x = paddle.tanh(x * 1.5 + 0.1)
            outs.append(x)
            if paddle.mean(x) > 0:
                tokens.append(paddle.argmax(x))
            else:
                tokens.append(paddle.argmin(x))
            i += 1
        total = paddle.zeros_like(x)
        for o in outs:
            total = total + o
        return paddle.stack(outs, axis=1), paddle.concat(outs), outs[-1], tokens, total

    compiled = paddle.compile(f)
    for x, n in ((paddle.randn([2, 3]), 4), (paddle.ones([2, 3]), 1)):
        n = paddle.to_tensor(n)
        got, want = compiled(x, n), f(x, n)
        assert len(got[3]) == len(want[3])  # a Python list again, of this call's length
        assert_same(got, want)


def test_gradients_flow_through_a_list_grown_in_a_loop():
    class Collect(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            outs = []
            h = x
            while paddle.max(paddle.abs(h)) < 4.0 and len(outs) < 6:
                h = self.fc(h) * 1.5 + 0.5
                outs.append(h)
            return paddle.stack(outs).sum(axis=0)

    paddle.seed(2)
    check_layer_gradients(Collect(), paddle.randn([2, 3]))


def test_paddle_tensor_arrays_in_a_tensor_loop():
    def f(x):
        arr = paddle.tensor.create_array("float32")
        i = paddle.zeros([1], "int64")
        while i < 3:
            paddle.tensor.array_write(x * paddle.cast(i, "float32"), i, array=arr)
            i = paddle.increment(i)
        n = paddle.tensor.array_length(arr)
        return paddle.tensor.array_read(arr, n - 1)

    check_function(f, (POS,), (NEG,))


def test_a_list_of_mixed_types_grown_in_a_loop_names_the_list():
    def f(x, n):
        outs = []
        i = 0
        while i < n:
            outs.append(x)
            outs.append(x[:1])
            i += 1
        return outs

    with pytest.raises(ConversionError) as info:
        paddle.compile(f, input_spec=[InputSpec([2, 3]), InputSpec([], "int64")])(
            POS, paddle.to_tensor(3))
    assert "variable 'outs' is a list that changes length" in str(info.value)


# ---------------------------------------------------------------- assert and gradients

def test_assert_on_a_tensor_checks_each_call():
    def f(x):
        assert paddle.mean(x) > 0, "mean must be positive"
        return x * 2

    compiled = paddle.compile(f)
    assert_same(compiled(POS), f(POS))
    with pytest.raises(AssertionError) as info:
        compiled(NEG)
    assert "mean must be positive" in str(info.value)
    assert f"{THIS_FILE}:{line_of(f, 'assert paddle.mean')}" in str(info.value)


def test_assert_without_a_message_shows_the_source():
    def f(x):
        assert paddle.all(x > 0)
        return x

    with pytest.raises(AssertionError, match=r"assert paddle.all\(x > 0\)"):
        paddle.compile(f)(NEG)


@pytest.mark.parametrize("how", ["no_grad", "detach", "stop_gradient"])
def test_gradients_stop_where_eager_code_stops_them(how):
    class Stop(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            h = self.fc(x)
            if how == "no_grad":
                with paddle.no_grad():
                    s = paddle.mean(h * h)
            elif how == "detach":
                s = paddle.mean(h * h).detach()
            else:
                s = paddle.mean(h * h)
                s.stop_gradient = True
            i = 0
            while i < paddle.to_tensor(2):
                with paddle.no_grad():
                    s = s + paddle.mean(h)
                h = h * s
                i += 1
            return h

    paddle.seed(1)
    check_layer_gradients(Stop(), paddle.randn([2, 3]))


# ---------------------------------------------------------------- values in conditions

def test_item_float_int_bool_and_numpy_in_conditions():
    def f(x):
        if x.mean().item() > 0 and float(x.sum()) > -100.0:
            x = x + 1
        if x.numpy()[0, 0] > 1.5:
            x = x * 2
        if x.item(1) > 0:
            x = x - 0.5
        if bool(x.mean() > 0):
            x = x * 3
        for _ in range(int(x.shape[0])):
            x = x + 1
        return x

    check_function(f, (POS,), (NEG,))


def test_iterating_over_numpy_rows():
    def f(x):
        s = paddle.zeros([3])
        for row in x.numpy():
            s = s + row
        return s

    check_function(f, (paddle.randn([4, 3]),), spec=[InputSpec([None, 3])])


def test_bool_of_several_values_names_the_line():
    def f(x):
        if bool(x):
            x = x + 1
        return x

    with pytest.raises(ConversionError, match=r"condition must be a single value") as info:
        paddle.compile(f)(POS)
    assert f"{THIS_FILE}:{line_of(f, 'if bool(x)')}" in str(info.value)


# ---------------------------------------------------------------- Paddle's APIs

def test_static_nn_cond_and_while_loop():
    def f(x):
        y = paddle.static.nn.cond(paddle.mean(x) > 0, lambda: x * 2, lambda: x - 1)
        i = paddle.full([1], 0, "int64")
        limit = paddle.full([1], 4, "int64")
        i, y = paddle.static.nn.while_loop(lambda i, y: i < limit,
                                           lambda i, y: [i + 1, y * 1.5], [i, y])
        return y

    check_function(f, (POS,), (NEG,))


def test_shape_add_n_and_lambdas():
    def f(x):
        flip = lambda t: t if paddle.mean(t) > 0 else -t  # noqa: E731
        n = paddle.shape(x)[0].astype("float32")
        return paddle.add_n([flip(x), x * n])

    check_function(f, (POS,), (NEG,), spec=[InputSpec([None, 3])])
    check_function(lambda x: x * 2 if paddle.mean(x) > 0 else x, (POS,), (NEG,))


def test_not_to_static_runs_a_function_unconverted():
    @paddle.jit.not_to_static
    def helper(x):
        if paddle.mean(x) > 0:  # needs a Python value: not converted
            return x
        return -x

    def f(x):
        return helper(x)

    with pytest.raises(ConversionError, match="truth value of a traced tensor"):
        paddle.compile(f)(POS)


def test_forward_hooks_are_converted_too():
    layer = nn.Linear(3, 3)

    def scale_positive(layer, inputs):
        x = inputs[0]
        if float(x.mean()) > 0:
            return (x * 2,)
        return (x,)

    layer.register_forward_pre_hook(scale_positive)
    check_function(layer, (POS,), (NEG,))


def test_paddle_grad_inside_compiled_code():
    def input_gradient(x):
        x.stop_gradient = False
        y = paddle.sum(paddle.tanh(x) * x)
        (g,) = paddle.grad([y], [x])
        if paddle.mean(g) > 0.5:
            g = g * 2
        return g

    check_function(input_gradient, (paddle.randn([5]),), (paddle.ones([5]) * 3,))


def test_gradient_penalty_with_create_graph_trains_through_the_compiled_call():
    class Critic(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x):
            x.stop_gradient = False
            y = paddle.tanh(self.fc(x))
            (gx,) = paddle.grad([paddle.sum(y)], [x], create_graph=True)
            return paddle.sum(y) + paddle.sum(gx ** 2)

    paddle.seed(0)
    check_layer_gradients(Critic(), paddle.randn([4, 3]))


def test_enumerate_and_max_of_traced_values():
    def f(x):
        s = paddle.zeros([3])
        for i, row in enumerate(x):
            s = s + row * i
        return s * max(paddle.mean(x), 0.5) + min(paddle.sum(x), 1.0)

    check_function(f, (paddle.randn([4, 3]),), (paddle.ones([2, 3]),),
                   spec=[InputSpec([None, 3])])


def test_containers_reached_through_attributes():
    class Cache(nn.Layer):
        def __init__(self):
            super().__init__()
            self.cache = {}
            self.history = []

        def forward(self, x):
            if paddle.mean(x) > 0:
                self.cache["h"] = x * 2
            else:
                self.cache["h"] = x - 1
            i = 0
            while i < paddle.to_tensor(2):
                self.history.append(x)
                i += 1
            return self.cache["h"]

    layer = Cache()
    with pytest.raises(ConversionError) as info:
        paddle.compile(layer)(POS)
    message = str(info.value)
    assert "`self.history` is changed in place inside a tensor-dependent loop" in message
    assert f"{THIS_FILE}:{line_of(Cache.forward, 'self.history.append')}" in message
    assert layer.history == [] and layer.cache == {}  # put back as they were


def test_errors_never_name_internal_variables():
    def f(x):
        return x if paddle.mean(x) > 0 else x.astype("int64")

    with pytest.raises(ConversionError) as info:
        paddle.compile(f)(POS)
    assert "the conditional expression is f32[2,3] after the `if` branch and i64[2,3]" \
        in str(info.value)
    assert "__jst" not in str(info.value)


def test_branches_may_give_a_value_different_sizes():
    def truncate(x):
        if len(x) > 3:
            x = x[:3]
        return x * 2

    compiled = check_function(truncate, (paddle.randn([5, 4]),), (paddle.randn([2, 4]),),
                              spec=[InputSpec([None, 4])])
    x = paddle.randn([6, 4])
    x.stop_gradient = False
    paddle.sum(compiled(x) ** 2).backward()
    got = x.grad.numpy().copy()
    x.clear_grad()
    paddle.sum(truncate(x) ** 2).backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-6)


def test_a_variable_bound_only_by_a_loop_is_unbound_after_zero_iterations():
    def f(x, n):
        for i in range(n):
            last = x * i
        return last

    compiled = paddle.compile(f)
    n = paddle.to_tensor(3)
    assert_same(compiled(POS, n), f(POS, n))
    with pytest.raises(UnboundLocalError) as info:
        compiled(POS, paddle.to_tensor(0))
    assert f"{THIS_FILE}:{line_of(f, 'return last')}" in str(info.value)


def test_none_before_a_tensor_loop_is_a_clear_error():
    def f(x):
        best = None
        while paddle.sum(x) < 10:
            x = x + 1
            best = x
        return best

    with pytest.raises(ConversionError, match="'best' is None before the loop and a tensor"):
        paddle.compile(f)(POS)


def test_numel_and_size_of_a_symbolic_shape_are_computed_at_run_time():
    def f(x):
        return x.sum() / x.numel() + x.sum() / x.size + paddle.numel(x).astype("float32")

    check_function(f, (paddle.randn([2, 3]),), (paddle.randn([5, 3]),),
                   spec=[InputSpec([None, 3])])


def test_lists_of_tensors_as_inputs():
    def f(xs, scale):
        total = xs[0] * scale
        for t in xs[1:]:
            if paddle.mean(t) > 0:
                total = total + t
        return {"sum": total, "n": len(xs)}

    xs = [paddle.randn([2, 3]) for _ in range(3)]
    spec = [[InputSpec([None, 3])] * 3, InputSpec([1])]
    compiled = paddle.compile(f, input_spec=spec)
    scale = paddle.to_tensor([2.0])
    out = compiled(xs, scale)
    assert out["n"] == 3
    assert_same(out["sum"], f(xs, scale)["sum"])
    with pytest.raises(paddle.InputError, match="input 0 should be list\\(tensor, tensor, "
                                                "tensor\\) as its input_spec says"):
        compiled(xs[:2], scale)


def test_a_function_without_source_is_traced_as_it_is():
    namespace = {"paddle": paddle}
    exec("def double(x):\n    return x * 2", namespace)
    check_function(namespace["double"], (POS,))


def test_a_function_without_source_computes_with_symbolic_sizes():
    """Without conversion, ``x.shape`` still gives sizes the run computes: Paddle's -1
    for a None dim would make half of a batch -1 rows short of it, silently."""
    namespace = {"paddle": paddle}
    exec("def first_half(x):\n    half = x.shape[0] // 2\n"
         "    return x[:half] * 2.0 + x.shape[1]", namespace)
    compiled = check_function(namespace["first_half"],
                              *[(paddle.randn([n, 3]),) for n in (4, 5, 1)],
                              spec=[InputSpec([None, 3])])
    assert "numel" in str(compiled.ir)


def test_tensors_stored_on_a_layer_are_outputs_of_each_call():
    class Recurrent(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.h = paddle.zeros([1, 4])

        def forward(self, x):
            self.h = paddle.tanh(self.fc(x) + self.h)
            self.last_input = x * 1.0
            return self.h * 2

    paddle.seed(0)
    eager, compiled_layer = Recurrent(), Recurrent()
    compiled_layer.set_state_dict(eager.state_dict())
    compiled = paddle.compile(compiled_layer)
    traced = []
    for _ in range(4):
        x = paddle.randn([1, 4])
        assert_same(compiled(x), eager(x))
        assert_same(compiled_layer.h, eager.h)  # a concrete tensor, never a traced one
        assert_same(compiled_layer.last_input, x)
        traced.append(len({id(p) for p in compiled._programs.values()}))
    assert traced == [1, 2, 2, 2]  # again once last_input exists, then never


def test_an_object_changed_in_a_loop_over_a_tensor_range_names_it():
    class Keep(nn.Layer):
        def __init__(self):
            super().__init__()
            self.history = []

        def forward(self, x, n):
            for _ in range(n):
                x = x * 2
                self.history.append(x)
            return x

    with pytest.raises(ConversionError, match="`self.history` is changed in place"):
        paddle.compile(Keep())(POS, paddle.to_tensor(3))


def test_gradients_of_gradients_through_a_compiled_call():
    class Critic(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            h = paddle.tanh(self.fc(x))
            if paddle.mean(h) > 0:
                h = h * h
            return paddle.sum(h ** 3)

    paddle.seed(4)
    critic = Critic()
    compiled = paddle.compile(critic, input_spec=[InputSpec([None, 4])])
    results = []
    for fn in (compiled, critic):
        x = paddle.to_tensor(np.linspace(-2, 2, 12).reshape(3, 4).astype("float32"))
        x.stop_gradient = False
        (g,) = paddle.grad(fn(x), x, create_graph=True)
        penalty = paddle.sum(g * g)
        (gg,) = paddle.grad(penalty, x, retain_graph=True)
        penalty.backward()
        results.append((gg.numpy(), critic.fc.weight.grad.numpy().copy()))
        critic.clear_gradients()
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_state_created_lazily_on_the_first_call_is_traced_again_once():
    class Lazy(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.h = None

        def forward(self, x):
            if self.h is None:
                self.h = paddle.zeros([x.shape[0], 4])
            self.h = paddle.tanh(self.fc(x) + self.h)
            return self.h * 2

    paddle.seed(0)
    eager, compiled_layer = Lazy(), Lazy()
    compiled_layer.set_state_dict(eager.state_dict())
    compiled = paddle.compile(compiled_layer)
    for _ in range(3):
        x = paddle.randn([2, 4])
        assert_same(compiled(x), eager(x))
    assert len({id(p) for p in compiled._programs.values()}) == 2


def test_several_optimizer_steps_in_one_compiled_call():
    def make():
        paddle.seed(0)
        net = nn.Linear(4, 3)
        return net, paddle.optimizer.SGD(learning_rate=0.2, parameters=net.parameters())

    def fit(net, opt, img, label):
        losses = []
        for _ in range(3):
            loss = paddle.nn.functional.cross_entropy(net(img), label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(loss)
        return paddle.stack(losses)

    img, label = paddle.randn([5, 4]), paddle.randint(0, 3, [5])
    (net1, opt1), (net2, opt2) = make(), make()
    want = fit(net1, opt1, img, label)
    got = paddle.compile(lambda i, t: fit(net2, opt2, i, t))(img, label)
    assert_same(got, want)
    assert_same(net2.weight, net1.weight)


COUNTER = 0


def test_global_and_nonlocal_variables_changed_in_tensor_statements_are_refused():
    def branch(x):
        global COUNTER
        if paddle.sum(x) > 0:
            COUNTER += 1
        return x * 2

    def loop(x):
        count = 0

        def bump():
            nonlocal count
            count += 1

        while paddle.sum(x) < 10:
            x = x + 1.0
            bump()
        return x, count

    with pytest.raises(ConversionError, match="`COUNTER` is a global or nonlocal variable"):
        paddle.compile(branch)(POS)
    with pytest.raises(ConversionError) as info:
        paddle.compile(loop)(POS)
    assert f"{THIS_FILE}:{line_of(loop, '        bump()')}" in str(info.value)


def test_closures_share_the_variables_of_the_function_they_come_from():
    def f(x):
        count = 0

        def bump():
            nonlocal count
            count += 1

        for _ in range(3):  # a Python loop: runs while tracing, as eagerly
            x = x + 1.0
            bump()
        return x * count

    check_function(f, (POS,))


def test_prints_show_python_numbers_as_eager_code_does(capsys):
    def f(x):
        loss = paddle.mean(x * x)
        print("loss", loss.item(), x.shape, f"{float(loss):.3f}", round(loss.item(), 2))
        count = 0
        while paddle.sum(x) < 20:
            x = x * 2
            count += 1
        print(f"count={count} x={x}")
        return x

    x = paddle.ones([3, 2]) * 1.5
    compiled = paddle.compile(f, input_spec=[InputSpec([None, 2])])
    capsys.readouterr()
    compiled(x)
    got = capsys.readouterr().out
    f(x)
    assert got == capsys.readouterr().out


def test_text_of_a_traced_value_used_other_than_by_print_is_an_error():
    def f(x):
        return {f"{float(paddle.sum(x)):.1f}": x}

    with pytest.raises(ConversionError, match="made into text here") as info:
        paddle.compile(f)(POS)
    assert f"{THIS_FILE}:{line_of(f, 'return {f')}" in str(info.value)


def test_lists_appended_in_one_branch_and_after_a_tensor_break():
    def collapse(x):  # CTC-style: keep a token when it changes
        out, prev = [], -1
        for t in range(x.shape[0]):
            c = paddle.argmax(x[t])
            if c != prev and c != 0:
                out.append(c)
            prev = c
        return out

    def decode(x):
        tokens = []
        for _ in range(5):
            x = x * 2
            if paddle.sum(x) > 20:
                break
            tokens.append(x)
        return paddle.stack(tokens)

    scores = paddle.to_tensor(np.array([[0.1, .9, 0], [0, .9, .1], [.9, 0, 0], [0, 0, .9]],
                                       "float32"))
    got, want = paddle.compile(collapse)(scores), collapse(scores)
    assert len(got) == len(want) == 2
    assert_same(got, want)
    check_function(decode, (paddle.ones([2]),), (paddle.ones([2]) * 4,))


def test_lists_grown_alike_in_one_loop_stack_to_one_shape():
    def f(x, n):
        a, b = [], []
        i = 0
        while i < n:
            x = x * 2
            a.append(x)
            b.append(x + 1)
            i += 1
        return paddle.stack(a) - paddle.stack(b)

    check_function(f, (POS, paddle.to_tensor(3)))


def scale_rows_in_place(x):
    out = x
    for i in range(x.shape[0]):
        out[i] = out[i] * (i + 1)
    return out.sum(axis=1)


def test_an_input_changed_in_place_is_changed_for_the_caller_as_eagerly():
    """``x[i] = v`` on an input changes the caller's tensor in eager code; a compiled
    call writes the new value back into it too (else the caller would silently keep
    the old one). An input that requires a gradient is refused, as eager code
    refuses changing a leaf."""
    compiled = paddle.compile(scale_rows_in_place, input_spec=[InputSpec([None, 3])])
    for n in (2, 4):
        data = np.arange(n * 3, dtype="float32").reshape(n, 3)
        eager_x, compiled_x = paddle.to_tensor(data), paddle.to_tensor(data)
        assert_same(compiled(compiled_x), scale_rows_in_place(eager_x))
        np.testing.assert_array_equal(compiled_x.numpy(), eager_x.numpy())
        assert not np.array_equal(compiled_x.numpy(), data)
    leaf = paddle.to_tensor(np.ones((2, 3), "float32"), stop_gradient=False)
    with pytest.raises(paddle.IrflowError, match="requires a gradient"):
        compiled(leaf)


class StepCounter(nn.Layer):
    """A Python counter and a decaying Python float that forward changes, one of them
    under a tensor condition."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.calls = 0
        self.scale = 1.0

    def forward(self, x):
        self.calls += 1
        h = self.fc(x) * self.calls
        if h.mean() > 0:
            self.scale = self.scale * 0.5
        return h * self.scale


def test_numbers_forward_changes_are_carried_by_the_program():
    """``self.calls += 1`` in forward runs on every eager call; a compiled program runs
    Python code only when traced, so it carries such numbers as arguments and
    results: after each call they are what eager code has (not frozen at the trace)."""
    paddle.seed(3)
    eager, twin = StepCounter(), StepCounter()
    twin.set_state_dict(eager.state_dict())
    compiled = paddle.compile(twin, input_spec=[InputSpec([None, 3])])
    rng = np.random.default_rng(1)
    for step in range(5):
        x = paddle.to_tensor(rng.standard_normal((2, 3)).astype("float32") + (-1) ** step)
        assert_same(compiled(x), eager(x))
        assert (twin.calls, type(twin.calls)) == (eager.calls, int)
        assert twin.scale == eager.scale and type(twin.scale) is float
    assert eager.scale < 1.0 and eager.calls == 5


class FirstCall(nn.Layer):
    """A flag forward clears on its first call, and a float it nudges on every call
    (a double, as Python's: carried as float32 it drifted, 1.2000332 after 2000
    steps of 1e-4)."""

    def __init__(self):
        super().__init__()
        self.first, self.t = True, 1.0

    def forward(self, x):
        self.t = self.t + 1e-4
        if self.first:
            self.first = False
            return x * 2
        return x * self.t


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_a_flag_and_a_float_forward_changes_are_carried_exactly(backend):
    eager, twin = FirstCall(), FirstCall()
    compiled = paddle.compile(twin, backend=backend)
    x = paddle.ones([2], dtype="float64")
    for _ in range(300):
        assert_same(compiled(x), eager(x))
        assert (twin.first, twin.t) == (eager.first, eager.t)
    assert type(twin.first) is bool and type(twin.t) is float


class ResetScale(nn.Layer):
    """A float forward reads, then sets to a constant at the top level, and the
    training flag forward clears itself."""

    def __init__(self):
        super().__init__()
        self.scale = 10.0

    def forward(self, x):
        y = x * self.scale
        if self.training:
            y = y + 1.0
        self.scale = 1.0
        self.training = False
        return y


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_a_constant_assigned_to_a_carried_number_is_the_programs_result(backend):
    """Once the program carries ``self.scale``, ``self.scale = 1.0`` is the value it
    leaves there on every call (it left the argument's value: 10.0 on every call,
    and the training flag True)."""
    eager, twin = ResetScale(), ResetScale()
    compiled = paddle.compile(twin, backend=backend)
    x = paddle.ones([2])
    for _ in range(3):
        assert_same(compiled(x), eager(x))
        assert (twin.scale, twin.training) == (eager.scale, eager.training) == (1.0, False)
    assert type(twin.scale) is float and type(twin.training) is bool


def any_positive_row_sum(x):
    if any(x.sum(axis=1) > 0) and all(x.abs().max(axis=1) < 100.0):
        return x * 2.0
    return -x


def test_python_any_and_all_of_a_traced_vector_are_tensor_conditions():
    compiled = check_function(any_positive_row_sum,
                              *[(paddle.to_tensor(a),) for a in
                                (np.ones((2, 3), "float32"), -np.ones((3, 3), "float32"))],
                              spec=[InputSpec([None, 3])])
    assert any(op.name == "cond" for op in compiled.ir.walk())
    with pytest.raises(ConversionError, match="truth value of each row"):
        paddle.compile(lambda x: x if any(x) else -x,
                       input_spec=[InputSpec([None, 3])])(paddle.ones([2, 3]))


def sum_or_max_and_min_and_max(x):
    return x.sum() or x.max(), x.min() and x.max()


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_and_or_of_number_tensors_give_an_operand(backend):
    """``a or b`` is a where a is true, else b (``and`` the other way round), as in
    Python: of float tensors, a float tensor (a bool one was returned), taken lazily
    by a cond; both sides must have one type."""
    compiled = paddle.compile(sum_or_max_and_min_and_max, backend=backend)
    for values in ([-2.0, 2.0, 5.0], [-2.0, 2.0, 0.0], [0.0, 0.0, 0.0]):
        x = paddle.to_tensor(np.array(values, "float32"))
        for got, want in zip(compiled(x), sum_or_max_and_min_and_max(x)):
            assert got.dtype == paddle.float32
            np.testing.assert_array_equal(got.numpy(), np.asarray(want.numpy()))
    with pytest.raises(ConversionError, match="same dtype and rank"):
        paddle.compile(lambda x: x.sum() or x, backend=backend)(paddle.ones([3]))


class Accumulator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", paddle.ones([2]))

    def forward(self, x):
        self.acc.add_(x)
        return x * 2


def add_into(a, b):
    a.add_(b)
    return a + b


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_a_tensor_changed_in_place_and_passed_twice_is_refused(backend):
    """Each compiled argument is its own value, where eager code changes one tensor
    seen twice (a.add_(b) with a and b the same; a buffer forward changes passed as
    the input): such calls are an InputError, before anything runs, and calls of
    distinct tensors run as before."""
    compiled = paddle.compile(add_into, backend=backend)
    x, y = paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([1.0, 2.0])
    np.testing.assert_array_equal(compiled(x, y).numpy(), [3.0, 6.0])
    for _ in range(2):  # the first call and a known one
        with pytest.raises(paddle.InputError, match="passes twice"):
            compiled(x, x)
    np.testing.assert_array_equal(x.numpy(), [2.0, 4.0])
    model = Accumulator()
    layer = paddle.compile(model, backend=backend)
    np.testing.assert_array_equal(layer(paddle.ones([2])).numpy(), [2.0, 2.0])
    with pytest.raises(paddle.InputError, match="passes twice"):
        layer(model.acc)
    np.testing.assert_array_equal(model.acc.numpy(), [2.0, 2.0])


class KeepsPythonState(nn.Layer):
    def __init__(self):
        super().__init__()
        self.seen, self.cache = [], [paddle.zeros([2])]

    def forward(self, x, keep_tensor=False):
        self.seen.append(1)
        if keep_tensor:
            self.cache[0] = self.cache[0] + x
        return x * len(self.seen)


def append_to(xs):
    xs.append(xs[0] * 2)
    return xs[0] + 1


def test_python_containers_the_compiled_code_changes_are_said():
    """A list changed while traced changes only then: a warning at the user's call
    (a cache filled once behaves the same compiled); tensors put into a Python list
    are values of the trace, and an argument's list is the program's copy: errors,
    the lists put back as they were."""
    model = KeepsPythonState()
    with pytest.warns(RuntimeWarning, match=r"changed a Python list \(KeepsPythonState.seen\)"):
        paddle.compile(model)(paddle.ones([2]))
    cached = model.cache[0]
    with pytest.raises(ConversionError, match=r"KeepsPythonState.cache"):
        paddle.compile(model)(paddle.ones([2]), True)
    assert model.cache == [cached]
    xs = [paddle.ones([2])]
    with pytest.raises(ConversionError, match="argument 0"):
        paddle.compile(append_to)(xs)
    assert len(xs) == 1


MASK = paddle.to_tensor(np.array([1.0, 1.0], "float32"))


def times_mask(x):
    return x * MASK


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_a_captured_tensor_changed_after_compiling_retraces(backend):
    """A tensor the function captures is a constant of its program; changing it in
    place (which rebinds its array) makes the next call trace anew, as a frozen
    parameter's new value does: the result is eager's, not the first trace's."""
    compiled = paddle.compile(times_mask, backend=backend)
    np.testing.assert_array_equal(compiled(paddle.ones([2])).numpy(), [1.0, 1.0])
    MASK[0] = 0.0
    try:
        np.testing.assert_array_equal(compiled(paddle.ones([2])).numpy(), [0.0, 1.0])
        MASK.set_value(np.array([2.0, 3.0], "float32"))
        np.testing.assert_array_equal(compiled(paddle.ones([2])).numpy(), [2.0, 3.0])
    finally:
        MASK.set_value(np.array([1.0, 1.0], "float32"))


def defaults_from_enclosing_locals(x):
    k = 2

    def scaled(y, k=k):
        if y.sum() > 0:
            return y * k
        return y
    k = 3
    fs = [lambda y, i=i: y * i for i in range(3)]
    return scaled(x), fs[2](x)


def test_defaults_of_nested_functions_read_the_enclosing_locals():
    """A nested def or lambda whose default reads a local of its enclosing function
    (k=k, i=i) converts: its defaults are the ones Python evaluated (it raised
    NameError: the converter evaluated them again where those locals do not exist)."""
    check_function(defaults_from_enclosing_locals, (paddle.to_tensor([1.0, 2.0]),))


def max_and_min_of_scalars(a, b):
    return max(a, b), min(a, b), max(a, b * 2.0, 1.0)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_python_max_and_min_of_traced_scalars_return_an_argument(backend):
    """Python's max keeps the first argument unless a later one compares greater: a NaN
    first is kept, a NaN later is not (an elementwise maximum gives NaN either way),
    and only the argument returned gets a gradient."""
    compiled = paddle.compile(max_and_min_of_scalars, backend=backend)
    for x, y in ([1.0, 2.0], [2.0, 1.0], [np.nan, 1.0], [1.0, np.nan], [3.0, 3.0]):
        a, b = paddle.to_tensor(np.float32(x)), paddle.to_tensor(np.float32(y))
        for got, want in zip(compiled(a, b), max_and_min_of_scalars(a, b)):
            np.testing.assert_array_equal(got.numpy(), np.float32(want))
    grads = []
    for fn in (max_and_min_of_scalars, compiled):
        a = paddle.to_tensor(np.float32(1.0), stop_gradient=False)
        b = paddle.to_tensor(np.float32(5.0), stop_gradient=False)
        fn(a, b)[0].backward()
        grads.append((a.grad, None if b.grad is None else float(b.grad)))
    assert grads[0] == grads[1] == (None, 1.0)


def test_python_floats_a_branch_yields_or_a_loop_carries_stay_doubles():
    """A Python float is a double, in eager code and in Paddle's to_static: 0.1 in
    float32 would make 0.1 * 3 come out 0.30000001. Mixed with a tensor it still acts
    as the number it stands for: the tensor's dtype wins."""
    def chosen(x):
        if x.sum() > 0:
            s = 0.1
        else:
            s = 0.2
        return s * 3, x * s

    def grown(x):
        s = 0.1
        while x.sum() > 0:
            x = x - 1
            s = s * 1.1
        return s

    def summed(x):
        total = 0.0
        i = 0
        while i < x.shape[0]:
            total = total + x[i].sum()
            i += 1
        return x * 0 + total

    x = paddle.to_tensor(np.array([2.0, 0.5], "float32"))
    for backend in ("numpy", "llvm"):
        s3, scaled = paddle.compile(chosen, backend=backend)(x)
        assert float(s3) == chosen(x)[0] == 0.1 * 3
        assert scaled.dtype == paddle.float32
        np.testing.assert_array_equal(scaled.numpy(), chosen(x)[1].numpy())
        assert float(paddle.compile(grown, backend=backend)(x)) == grown(x) == 0.1 * 1.1 * 1.1
        total = paddle.compile(summed, backend=backend,
                               input_spec=[InputSpec([None], "float32")])(x)
        assert total.dtype == summed(x).dtype == paddle.float32
        np.testing.assert_array_equal(total.numpy(), summed(x).numpy())


class RecurrentState(nn.Layer):
    """An LSTM that keeps its (h, c) state between calls, as truncated BPTT does."""

    def __init__(self, as_tuple: bool):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)
        self.as_tuple = as_tuple
        self.state, self.h, self.c = None, None, None

    def forward(self, x):
        if self.as_tuple:
            out, st = self.lstm(x, self.state)
            self.state = (st[0].detach(), st[1].detach())
        else:
            out, (h, c) = self.lstm(x, None if self.h is None else (self.h, self.c))
            self.h, self.c = h.detach(), c.detach()
        return out


def test_a_tuple_of_tensors_stored_on_a_layer_is_refused():
    """A program carries a Tensor attribute from call to call, not a tuple of them:
    storing one is an error (it was kept traced, and later calls started from no
    state), while one attribute per tensor follows eager calls."""
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((3, 2, 5, 3))
                         .astype(np.float32))
    model = RecurrentState(as_tuple=True)
    with pytest.raises(ConversionError, match="RecurrentState.state"):
        paddle.compile(model)(x[0])
    assert model.state is None
    paddle.seed(0)
    eager = RecurrentState(as_tuple=False)
    paddle.seed(0)
    model = RecurrentState(as_tuple=False)
    static = paddle.compile(model)
    for k in range(3):
        np.testing.assert_allclose(static(x[k]).numpy(), eager(x[k]).numpy(), rtol=1e-5,
                                   atol=1e-6)
