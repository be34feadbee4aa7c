"""Lists of tensors grown in loops and read back (stack, concat, indexing, len,
reversed iteration, slices), dicts of tensors, tuples returned from branches."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
import irflow.nn.functional as F

from .common import MODES, OutputMismatch, check, check_outputs, compiled, ints, randn, spec

SMALL_LARGE = [randn(2, 3, scale=0.1), randn(2, 3, seed=1, scale=3.0)]
SEQS = [randn(2, 4, 3), randn(3, 2, 3, seed=1)]
N_SPEC = [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "int64")]
N_INPUTS = [(randn(2, 3), ints(low=3, high=4)), (randn(2, 3, seed=1), ints(low=1, high=2))]


def grow(x, n):
    outs = []
    h = x
    for _ in range(n):
        h = paddle.tanh(h * 1.5 + 0.2)
        outs.append(h)
    return outs


def test_grown_list_iterated_in_reverse():
    def f(x, n):
        outs = grow(x, n)
        acc = paddle.zeros_like(x)
        for o in reversed(outs):
            acc = acc * 0.5 + o
        return acc

    check(f, N_INPUTS, N_SPEC)


def test_grown_list_reversed_by_slice_then_stacked():
    def f(x, n):
        outs = grow(x, n)
        return paddle.stack(outs[::-1], axis=0).sum(axis=0) + outs[0]

    check(f, N_INPUTS, N_SPEC)


def test_grown_list_concat_of_a_tail_slice():
    def f(x, n):
        outs = [x]
        h = x
        for _ in range(n):
            h = h * 0.5 + 1.0
            outs.append(h)
        return paddle.concat(outs[1:], axis=0).mean(axis=0)

    check(f, N_INPUTS, N_SPEC)


def test_grown_list_indexed_by_half_its_length():
    def f(x, n):
        outs = grow(x, n)
        return outs[len(outs) // 2]

    check(f, N_INPUTS, N_SPEC)


def test_grown_list_read_with_range_len():
    def f(x):
        outs = []
        while x.sum() < 10.0:
            x = x + 1.0
            outs.append(x)
        total = paddle.zeros_like(x)
        for i in range(len(outs)):
            total = total + outs[i] * float(i + 1)
        return total

    check(f, [randn(2, 3), randn(2, 3, shift=-3)], spec([None, 3]))


def test_two_lists_grown_in_one_loop():
    def f(x):
        hs, cs = [], []
        h, c = x, paddle.zeros_like(x)
        for t in range(x.shape[0]):
            c = c + paddle.tanh(h)
            h = F.sigmoid(c) * h
            hs.append(h)
            cs.append(c)
        return paddle.stack(hs) - paddle.stack(cs)

    check(f, [randn(2, 3), randn(4, 3, seed=1)], spec([None, 3]))


def test_grown_list_read_by_a_second_tensor_loop():
    def f(x, n):
        outs = grow(x, n)
        best = outs[0]
        for o in outs:
            if o.sum() > best.sum():
                best = o
        return best

    check(f, N_INPUTS, N_SPEC)


def test_nonempty_list_grown_then_max_over_stack():
    def f(x):
        outs = [x]
        while x.max() < 4.0:
            x = x * 1.5 + 0.5
            outs.append(x)
        return paddle.max(paddle.stack(outs), axis=0)

    check(f, SMALL_LARGE, spec([None, 3]))


def test_append_under_a_tensor_branch_in_loop():
    def f(x):
        kept = []
        for i in range(4):
            h = x * float(i - 1)
            if h.sum() > 0:
                kept.append(h)
        return len(kept), paddle.stack(kept + [x]).sum(axis=0)

    check(f, [randn(2, 3, shift=1), randn(2, 3, shift=-1)], spec([None, 3]))


def test_list_of_tuples_grown_in_loop():
    def f(x, n):
        pairs = []
        h, c = x, x * 0.0
        for _ in range(n):
            c = c + h
            h = paddle.tanh(c)
            pairs.append((h, c))
        return paddle.stack([p[0] for p in pairs]) + paddle.stack([p[1] for p in pairs])

    check(f, N_INPUTS, N_SPEC)


def test_dict_entry_updated_in_tensor_loop():
    def f(x):
        state = {"h": x, "steps": paddle.zeros([], "int64")}
        while state["h"].abs().max() > 0.5:
            state["h"] = state["h"] * 0.5
            state["steps"] = state["steps"] + 1
        return state["h"], state["steps"]

    check(f, [randn(2, 3, scale=4), randn(2, 3, scale=0.01)], spec([None, 3]))


def test_dict_returned_from_tensor_loop_helper():
    def run(x):
        out = {"sum": paddle.zeros([]), "last": x[0]}
        for row in x:
            out["sum"] = out["sum"] + row.sum()
            out["last"] = row
        return out

    def f(x):
        d = run(x)
        return d["sum"] * d["last"]

    check(f, [randn(2, 3), randn(4, 3, seed=1)], spec([None, 3]))


def test_loop_over_dict_items_in_tensor_branch():
    def f(x):
        feats = {"a": x, "b": x * 2.0, "c": x - 1.0}
        if x.mean() > 0:
            for k in feats:
                feats[k] = feats[k] * 10.0
        return feats["a"] + feats["b"] + feats["c"]

    check(f, [randn(2, 3, shift=2), randn(2, 3, shift=-2)], spec([None, 3]))


def test_nested_tuple_and_dict_from_branches():
    def f(x):
        if x.sum() > 0:
            out = ({"y": x * 2}, (x, x.mean()))
        else:
            out = ({"y": -x}, (x * 0.5, x.max()))
        d, (a, s) = out
        return d["y"] + a * s

    check(f, [randn(2, 3, shift=2), randn(2, 3, shift=-2)], spec([None, 3]))


def test_prepend_with_insert_in_loop():
    def f(x, n):
        outs = []
        h = x
        for _ in range(n):
            h = h + 1.0
            outs.insert(0, h)
        return paddle.stack(outs)[0] - outs[-1]

    check(f, N_INPUTS, N_SPEC)


def test_extend_in_loop():
    def f(x, n):
        outs = []
        for _ in range(n):
            x = x * 0.9
            outs.extend([x, -x])
        return paddle.concat(outs, axis=1).sum(axis=1), len(outs)

    check(f, N_INPUTS, N_SPEC)


def test_list_comprehension_over_grown_list():
    def f(x, n):
        outs = grow(x, n)
        doubled = [o * 2.0 for o in outs]
        return paddle.stack(doubled).mean(axis=0)

    check(f, N_INPUTS, N_SPEC)


def test_len_of_grown_list_in_a_condition():
    def f(x):
        outs = []
        while x.sum() < 6.0:
            x = x + 1.0
            outs.append(x)
        if len(outs) > 2:
            return outs[-1] - outs[-3]
        return x

    check(f, [randn(2, 3, shift=-3), randn(2, 3, shift=5)], spec([None, 3]))


def test_zip_grown_list_with_python_weights():
    def f(x):
        outs = []
        for i in range(x.shape[0]):
            outs.append(x[i] * 2.0)
        total = paddle.zeros([3])
        for o, w in zip(outs, [1.0, 2.0, 3.0, 4.0]):
            total = total + o * w
        return total

    check(f, [randn(2, 3), randn(4, 3, seed=1)], spec([None, 3]))


def test_grown_list_indexed_by_tensor_counter():
    def f(x, n):
        outs = grow(x, n)
        acc = paddle.zeros_like(x)
        i = paddle.zeros([], "int64")
        while i < len(outs):
            acc = acc + outs[i]
            i += 1
        return acc

    check(f, N_INPUTS, N_SPEC)


def test_last_two_of_grown_list():
    def f(x, n):
        outs = [x] + grow(x, n)
        return outs[-1] - outs[-2], paddle.stack(outs[-2:]).sum(axis=0)

    check(f, N_INPUTS, N_SPEC)


def test_enumerate_over_grown_list():
    def f(x, n):
        outs = grow(x, n)
        total = paddle.zeros_like(x)
        for i, o in enumerate(outs):
            total = total + o * float(i)
        return total

    check(f, N_INPUTS, N_SPEC)


def test_list_used_as_a_stack_with_pop():
    def f(x, n):
        stack = grow(x, n)
        acc = paddle.zeros_like(x)
        while len(stack) > 0:
            acc = acc * 0.5 + stack.pop()
        return acc

    check(f, N_INPUTS, N_SPEC)


def test_builtin_sum_of_grown_list():
    def f(x, n):
        outs = grow(x, n)
        return sum(outs) / len(outs)

    check(f, N_INPUTS, N_SPEC)


def test_append_in_static_loop_with_tensor_break():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(3, 3) for _ in range(4)])

        def forward(self, x):
            feats = []
            for blk in self.blocks:
                x = paddle.tanh(blk(x)) * 2.0
                feats.append(x)
                if x.mean() > 0.5:
                    break
            return paddle.stack(feats).sum(axis=0), len(feats)

    check(Net(), [randn(2, 3, shift=3), randn(2, 3, shift=-3)], spec([None, 3]))


def test_list_of_python_ints_grown_in_tensor_loop():
    def f(x):
        sizes = []
        i = 0
        while x.abs().sum() > 1.0:
            x = x * 0.5
            sizes.append(i)
            i += 1
        return x, len(sizes)

    check(f, [randn(2, 3, scale=5), randn(2, 3, scale=0.01)], spec([None, 3]))


def test_list_state_swapped_in_tensor_loop():
    def f(x):
        a, b = x, x * 2.0
        while b.abs().sum() < 100.0:
            a, b = b, a + b
        return a, b

    check(f, SMALL_LARGE, spec([None, 3]))


@pytest.mark.xfail(strict=True, reason="ConversionError: lists inside a dict grown in a tensor loop")
def test_dict_of_lists_grown_in_loop():
    def f(x, n):
        hist = {"h": [], "g": []}
        h = x
        for _ in range(n):
            h = paddle.tanh(h + 0.3)
            hist["h"].append(h)
            hist["g"].append(1.0 - h * h)
        return paddle.stack(hist["h"]) * paddle.stack(hist["g"])

    check(f, N_INPUTS, N_SPEC)


def test_per_step_outputs_of_sequence_in_python_list_then_attention():
    def f(x):
        states = []
        h = paddle.zeros([x.shape[0], 3])
        for t in range(x.shape[1]):
            h = paddle.tanh(h * 0.5 + x[:, t])
            states.append(h)
        mem = paddle.stack(states, axis=1)
        scores = paddle.matmul(mem, h.unsqueeze(-1)).squeeze(-1)
        w = F.softmax(scores, axis=-1)
        return paddle.sum(mem * w.unsqueeze(-1), axis=1)

    check(f, SEQS, spec([None, None, 3]))


def test_tuple_of_tensor_and_list_returned():
    def f(x, n):
        outs = grow(x, n)
        return outs[-1], outs

    check(f, N_INPUTS, N_SPEC)


def test_list_grown_in_nested_loops():
    def f(x, n):
        outs = []
        for i in range(n):
            for j in range(2):
                outs.append(x * float(i * 2 + j))
        return paddle.stack(outs).sum(axis=0), len(outs)

    check(f, N_INPUTS, N_SPEC)


def test_compiled_program_with_grown_list_called_under_no_grad():
    def f(x, n):
        return paddle.stack(grow(x, n)).sum(axis=0)

    for mode in MODES:
        fn = compiled(f, N_SPEC, mode)
        for a, n in N_INPUTS:
            want = f(paddle.to_tensor(a), paddle.to_tensor(n)).numpy()
            with paddle.no_grad():
                got = fn(paddle.to_tensor(a), paddle.to_tensor(n)).numpy()
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                raise OutputMismatch(f"{mode}: {got} != eager {want}")
