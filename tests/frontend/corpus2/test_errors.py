"""Programs that cannot convert: each must raise a ConversionError naming the user's
line (in a helper, the helper's line), never an internal error, an internal name or
an Undefined object."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import (MODES, ConversionError, check, check_converts_or_fails, check_fails,
                     check_fails_in, check_message, check_outputs, compiled, ints, randn,
                     spec)

POS_NEG = [randn(3, 4, shift=2.0), randn(3, 4, seed=1, shift=-2.0)]
N_SPEC = [paddle.static.InputSpec([None, 4]), paddle.static.InputSpec([], "int64")]


def helper_one_branch(h):
    if h.sum() > 0:
        out = h * 2
    return out


def test_one_branch_variable_in_a_helper():
    def f(x):
        return helper_one_branch(x) + 1

    check_fails_in(helper_one_branch, f, POS_NEG, spec([None, 4]),
                   at=["if h.sum() > 0", "return out"], match="'out'")


def test_one_branch_variable_in_a_method():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def gate(self, h):
            if h.mean() > 0:
                g = F.sigmoid(h)
            return h * g

        def forward(self, x):
            return self.gate(self.fc(x))

    net = Net()
    check_fails_in(Net.gate, net, POS_NEG, spec([None, 4]), at="return h * g", match="'g'")


def test_one_branch_variable_of_elif_inside_a_loop():
    def f(x):
        for _ in range(2):
            m = x.mean()
            if m > 1:
                y = x * 0.5
            elif m > -1:
                y = x * 2.0
            x = y
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at="x = y", match="'y'")


def none_or_tensor(h):
    if h.max() > 5:
        return None
    return h


def test_helper_returns_none_or_tensor():
    def f(x):
        out = none_or_tensor(x)
        return out

    check_fails_in(none_or_tensor, f, POS_NEG, spec([None, 4]), at=["return None", "    return h"])


def test_carried_variable_grows_by_concat_in_while():
    def f(x):
        h = x
        while h.shape[0] < 100 and h.sum() < 50:
            h = paddle.concat([h, x], axis=0)
        return h

    check_fails(f, POS_NEG, spec([None, 4]), at="while h.shape[0] < 100", match="'h'")


def test_attribute_set_in_a_tensor_loop_of_a_sublayer():
    class Inner(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.trace = None

        def forward(self, h):
            while h.abs().sum() < 20:
                h = h * 2.0 + F.relu(self.fc(h))
                self.trace = h
            return h

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x)

    check_fails_in(Inner.forward, Net(), POS_NEG, spec([None, 4]), at="self.trace = h",
                   match="trace")


def test_numpy_function_in_a_loop_body():
    def f(x):
        for _ in range(2):
            x = paddle.to_tensor(np.tanh(x.numpy()))
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at="np.tanh(x.numpy())")


def test_tensor_loop_counter_indexes_a_python_list():
    def f(x, n):
        scales = [1.0, 2.0, 3.0, 4.0]
        for i in range(n):
            x = x * scales[i]
        return x

    check_fails(f, [(POS_NEG[0], ints(low=2, high=3))], N_SPEC, at="x = x * scales[i]")


def test_int_of_tensor_indexes_a_python_list_of_layers():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.experts = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            k = int(paddle.argmax(x.mean(axis=0)) % 3)
            return self.experts[k](x)

    check_fails(Net(), POS_NEG, spec([None, 4]), at="return self.experts[k](x)")


def test_dict_key_from_a_tensor():
    def f(x):
        table = {0: x * 2.0, 1: x * 3.0}
        k = int(x.sum() > 0)
        return table[k]

    check_fails(f, POS_NEG, spec([None, 4]), at="return table[k]")


def test_tolist_in_a_condition():
    def f(x):
        if x.sum(axis=1).tolist()[0] > 0:
            return x
        return -x

    check_fails(f, POS_NEG, spec([None, 4]), at="x.sum(axis=1).tolist()")


def test_list_appended_in_another_function_inside_tensor_loop():
    def record(log, h):
        log.append(h)

    def f(x):
        log = []
        while x.sum() < 10:
            x = x + 1.0
            record(log, x)
        return paddle.stack(log)

    check_fails(f, POS_NEG, spec([None, 4]), at="return paddle.stack(log)")


def test_many_element_condition_in_a_helper_while():
    def bump(h):
        while h < 5:
            h = h + 1
        return h

    def f(x):
        return bump(x)

    check_fails_in(bump, f, POS_NEG, spec([None, 4]), at="while h < 5")


def test_layer_chosen_by_tensor_conditional_expression():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)

        def forward(self, x):
            layer = self.a if x.mean() > 0 else self.b
            return layer(x)

    check_converts_or_fails(Net(), POS_NEG, spec([None, 4]),
                            at="layer = self.a if x.mean() > 0")


def test_activation_function_chosen_by_tensor_branch():
    def f(x):
        if x.mean() > 0:
            act = F.relu
        else:
            act = paddle.tanh
        return act(x)

    check_converts_or_fails(f, POS_NEG, spec([None, 4]), at="if x.mean() > 0")


def test_string_chosen_in_tensor_branch_used_as_mode():
    def f(x):
        if x.mean() > 0:
            mode = "mean"
        else:
            mode = "max"
        if mode == "mean":
            return x.mean(axis=0)
        return x.max(axis=0)

    check_fails(f, POS_NEG, spec([None, 4]), at="if x.mean() > 0", match="mode")


def test_global_counter_mutated_in_tensor_branch():
    def f(x):
        global CALLS
        if x.sum() > 0:
            CALLS += 1
        return x * 2

    global CALLS
    eager = []
    for a in POS_NEG:
        CALLS = 0
        f(paddle.to_tensor(a))
        eager.append(CALLS)
    for mode in MODES:
        fn = compiled(f, spec([None, 4]), mode)
        try:
            for a, want in zip(POS_NEG, eager):
                CALLS = 0
                fn(paddle.to_tensor(a))
                assert CALLS == want, f"{mode}: the counter is {CALLS}, eager {want}"
        except ConversionError as e:
            check_message(str(e), f, "CALLS += 1")


CALLS = 0


def test_nonlocal_mutated_in_tensor_loop():
    def f(x):
        count = 0

        def bump():
            nonlocal count
            count += 1

        while x.sum() < 10:
            x = x + 1.0
            bump()
        return x, count

    check_converts_or_fails(f, POS_NEG, spec([None, 4]), at="            bump()")


def test_shape_changing_tuple_state_in_loop():
    def f(x):
        state = (x,)
        while state[-1].sum() < 20:
            state = state + (state[-1] + 1.0,)
        return state[-1]

    check_fails(f, POS_NEG, spec([None, 4]), at="while state[-1].sum() < 20", match="state")


def test_python_list_of_floats_appended_from_tensor_in_loop():
    def f(x):
        history = []
        for _ in range(3):
            x = x * 0.5
            history.append(float(x.sum()))
        return x * sum(history)

    check(f, POS_NEG, spec([None, 4]))


def test_boolean_mask_select_in_a_loop():
    """A bool-mask read has a data-dependent size (a fresh symbol): it converts."""
    def f(x):
        total = paddle.zeros([])
        for row in x:
            total = total + row[row > 0].sum()
        return total

    check(f, POS_NEG, spec([None, 4]))


def test_zero_iteration_tensor_loop_leaves_variable_unbound_in_helper():
    def last_of(x, n):
        for i in range(n):
            out = x * float(i)
        return out

    def f(x, n):
        return last_of(x, n)

    check_fails_in(last_of, f, [(POS_NEG[0], ints(low=0, high=1))], N_SPEC,
                   at="return out", error=UnboundLocalError, match="'out'")


def test_return_inside_with_no_grad_in_tensor_branch_has_mixed_structure():
    def f(x):
        with paddle.no_grad():
            if x.sum() > 0:
                return x, x
        return x

    check_fails(f, POS_NEG, spec([None, 4]), at=["return x, x", "    return x\n"])
