"""Programs that cannot convert: a ConversionError naming the user's line, never an
internal error, an internal name or an `Undefined` object."""
import numpy as np

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .harness import check, check_fails, check_outputs, ints, randn, spec

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]


def test_variable_bound_in_one_branch_and_used_after():
    def f(x):
        if paddle.mean(x) > 0:
            y = x * 2
        return y

    check_fails(f, POS_NEG, spec([None, 4]), at=["if paddle.mean(x) > 0", "return y"],
                match="'y'")


def test_variable_missing_from_the_else_of_an_elif_chain():
    def f(x):
        m = x.mean()
        if m > 1:
            y = x
        elif m > 0:
            y = -x
        else:
            pass
        return y * 2

    check_fails(f, POS_NEG, spec([None, 4]), at="return y * 2", match="'y'")


def test_variable_first_bound_in_a_tensor_loop_and_used_after():
    def f(x):
        while x.sum() < 10:
            x = x + 1
            last = x * 2
        return last

    check_outputs(f, [POS_NEG[1]], spec([None, 4]))  # the loop runs: last has a value
    check_fails(f, [POS_NEG[0]], spec([None, 4]), at="return last",
                match="'last' is read here, but the tensor-dependent loop",
                error=UnboundLocalError)  # zero iterations: unbound, as in Python


def test_none_before_a_tensor_loop_becomes_a_tensor():
    def f(x):
        best = None
        while x.sum() < 10:
            x = x + 1
            best = x
        return best

    check_fails(f, POS_NEG, spec([None, 4]), at="while x.sum() < 10",
                match="'best' is None .*and a tensor")


def test_loop_variable_changes_shape():
    def f(x):
        while x.sum() < 100:
            x = paddle.concat([x, x], axis=0)
        return x

    check_fails(f, POS_NEG[:1], spec([3, 4]), at="while x.sum() < 100", match="'x'")


def test_branches_give_different_shapes():
    def f(x):
        if x.mean() > 0:
            y = x
        else:
            y = x[:, :2]
        return y

    check(f, POS_NEG, spec([None, 4]))  # y's width is a symbol the branch taken binds


def test_branches_give_different_dtypes():
    def f(x):
        if x.mean() > 0:
            y = x
        else:
            y = paddle.cast(x, "int64")
        return y

    check_fails(f, POS_NEG, spec([None, 4]), at="if x.mean() > 0", match="'y'")


def test_returns_of_different_structures():
    def f(x):
        if x.sum() > 0:
            return x, x
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at=["return x, x", "        return x\n"])


def test_return_tensor_or_none():
    def f(x):
        if x.sum() > 0:
            return x
        return None

    check_fails(f, POS_NEG, spec([None, 4]), at=["return None"])


def test_condition_of_many_elements_in_if():
    def f(x):
        if x > 0:
            x = x * 2
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at="if x > 0")


def test_condition_of_many_elements_in_while():
    def f(x):
        while x < 10:
            x = x + 1
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at="while x < 10")


def test_bool_of_many_elements():
    def f(x):
        ok = bool(x > 0)
        return x * 2 if ok else x

    check_fails(f, POS_NEG, spec([None, 4]), at="ok = bool(x > 0)")


def test_numpy_function_on_a_traced_tensor():
    def f(x):
        return paddle.to_tensor(np.exp(x.numpy()))

    check_fails(f, POS_NEG, spec([None, 4]), at="np.exp(x.numpy())")


def test_tolist_of_a_traced_tensor_of_a_symbolic_size():
    """(Of a static size, it is a list of stand-ins for its numbers: see
    tests/frontend/test_print_item_s16.py.)"""
    def f(x):
        values = x.tolist()
        return paddle.to_tensor(values) * 2

    check_fails(f, POS_NEG, spec([None, 4]), at="values = x.tolist()")


def test_boolean_mask_indexing_compiles():
    """A bool-mask read has a data-dependent size: a fresh symbol, not an error."""
    def f(x):
        return x[x > 0].sum()

    static = paddle.jit.to_static(f, input_spec=spec([None, 4]))
    for a in POS_NEG:
        np.testing.assert_allclose(static(paddle.to_tensor(a)).numpy(), a[a > 0].sum(),
                                   rtol=1e-6)


def test_attribute_set_inside_a_tensor_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.last = None

        def forward(self, x):
            h = x
            while h.sum() < 10:
                h = h + F.relu(self.fc(h)) + 1.0
                self.last = h
            return h

    check_fails(Net(), POS_NEG, spec([None, 4]), at="self.last = h", match="last")


def test_list_attribute_grown_in_a_tensor_loop():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.history = []

        def forward(self, x):
            while x.sum() < 10:
                x = x + 1.0
                self.history.append(x)
            return x

    check_fails(Net(), POS_NEG, spec([None, 4]), at="self.history.append(x)", match="history")


def test_dict_gains_a_key_in_a_tensor_branch():
    def f(x):
        out = {"x": x}
        if x.sum() > 0:
            out["extra"] = x * 2
        return out

    check_fails(f, POS_NEG, spec([None, 4]), at="if x.sum() > 0", match="out")


def test_set_value_inside_a_tensor_branch_changes_the_weight_when_it_runs():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            if x.mean() > 0:
                self.fc.weight.set_value(self.fc.weight * 0.5)
            return self.fc(x)

    eager, twin = Net(), Net()  # the branch that runs yields the new weight
    twin.set_state_dict(eager.state_dict())
    compiled = paddle.jit.to_static(twin, input_spec=spec([None, 4]))
    for x in [*POS_NEG, POS_NEG[0]]:
        np.testing.assert_allclose(compiled(paddle.to_tensor(x)).numpy(),
                                   eager(paddle.to_tensor(x)).numpy(), rtol=1e-6)
        np.testing.assert_allclose(twin.fc.weight.numpy(), eager.fc.weight.numpy(), rtol=1e-6)


def test_truth_value_inside_a_function_without_source():
    namespace = {"paddle": paddle}
    exec("def flip(x):\n    return x if paddle.sum(x) > 0 else -x", namespace)
    flip = namespace["flip"]

    def f(x):
        return flip(x) * 2

    check_fails(f, POS_NEG, spec([None, 4]), match="truth value")


def test_variable_assigned_only_in_a_tensor_for_range():
    def f(x, n):
        for i in range(n):
            y = x * float(i)
        return y

    specs = [paddle.static.InputSpec([None, 4]), paddle.static.InputSpec([], "int64")]
    check_outputs(f, [(POS_NEG[0], ints(low=2, high=3))], specs)
    check_fails(f, [(POS_NEG[0], ints(low=0, high=1))], specs, at="return y",
                match="'y' is read here", error=UnboundLocalError)


def test_shape_from_tensor_values():
    def f(x):
        n = paddle.cast(x.sum() > 0, "int64") + 1
        return paddle.zeros([n, 4])

    check_fails(f, POS_NEG, spec([None, 4]), at="paddle.zeros([n, 4])")


def test_tensor_used_as_a_python_list_index():
    """A list of tensors indexed by a tensor the program computes: stacked and
    gathered when the program runs (Paddle's to_static runs it too)."""
    def f(x):
        heads = [x * 1.0, x * 2.0, x * 3.0]
        k = paddle.argmax(x.sum(axis=0)) - 3  # (-3 to 0: negative indices too)
        return heads[k]

    check_outputs(f, POS_NEG, spec([None, 4]))


def test_python_int_from_tensor_used_in_range_for_a_list():
    def f(x):
        outs = [x]
        for _ in range(int(x.sum() > 0) + 1):
            outs.append(outs[-1] * 2)
        return outs

    check_outputs(f, POS_NEG, spec([None, 4]))  # a list the loop grows: 3 or 2 tensors


def test_string_built_from_a_tensor_in_a_branch():
    def f(x):
        tag = "pos" if x.sum() > 0 else "neg"
        return {tag: x}

    check_fails(f, POS_NEG, spec([None, 4]), at='tag = "pos" if x.sum() > 0 else "neg"')
