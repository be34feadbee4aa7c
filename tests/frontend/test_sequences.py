"""Sequences whose length only the run knows, in converted code: lists grown in a
tensor-dependent loop (sliced, reversed, extended, joined, lists of tuples),
comprehensions, ``reversed``/``zip``/``enumerate``/``sum`` over them and over the rows
of a tensor with a symbolic first dim. Each program is compared with eager
execution, outputs and gradients (`check`), on inputs of different lengths."""
import numpy as np
import pytest

import irflow as paddle
from irflow.frontend.convert import convert_function

from .corpus.harness import check, check_fails, ints, randn, spec

N_SPEC = [paddle.static.InputSpec([None, 3]), paddle.static.InputSpec([], "int64")]
N_INPUTS = [(randn(2, 3), ints(low=4, high=5)), (randn(2, 3, seed=1), ints(low=1, high=2)),
            (randn(2, 3, seed=2), ints(low=0, high=1))]
ROWS = [randn(5, 3), randn(2, 3, seed=1)]


def grow(x, n):
    outs = []
    for _ in range(n):
        x = paddle.tanh(x * 1.5 + 0.2)
        outs.append(x)
    return outs


def test_slices_of_a_grown_list_follow_python_slicing():
    def f(x, n):
        outs = [x] + grow(x, n) + [x * 2.0]
        every_other = paddle.stack(outs[::2]).sum(axis=0)
        backwards_from_two = paddle.stack(outs[-2::-1]).sum(axis=0)
        middle = paddle.stack(outs[1:-1:1] + [x]).mean(axis=0)
        return every_other, backwards_from_two, middle, len(outs[1:100])

    check(f, N_INPUTS, N_SPEC)


def test_insert_extend_reverse_and_pop_of_a_grown_list():
    def f(x, n):
        outs = grow(x, n)
        outs.insert(1, x * 3.0)
        outs.extend([x, -x])
        outs.reverse()
        outs += grow(-x, n)
        last = outs.pop()
        return paddle.stack(outs) * 1.0, last, len(outs)

    check(f, N_INPUTS[:2], N_SPEC)


def test_comprehensions_over_grown_lists_and_rows():
    def f(x, n):
        outs = grow(x, n)
        weighted = [o * float(1 + i) for i, o in enumerate(outs)]
        squares = [row * row for row in x]
        return paddle.stack(weighted).sum(axis=0), paddle.stack(squares)

    check(f, N_INPUTS[:2], N_SPEC)


def test_comprehensions_over_python_iterables_are_python_comprehensions():
    def f(x):
        pairs = [(k, x * float(k)) for k in range(3)]
        picked = [t for k, t in pairs if k > 0]          # with an `if`: left as it is
        total = sum(t for _, t in pairs)                  # a generator: left as it is
        return paddle.stack(picked), total, [k for k, _ in pairs]

    check(f, [randn(2, 3)], spec([None, 3]))
    fn = convert_function(lambda: [a for a, b in [(1, 2, 3)]])
    with pytest.raises(ValueError, match="too many values to unpack"):
        fn()


def test_reversed_range_and_zip_over_rows_with_a_python_list():
    def f(x):
        acc = paddle.zeros([3])
        for t in reversed(range(x.shape[0])):
            acc = acc * 0.5 + x[t]
        mixed = paddle.zeros([3])
        for row, w in zip(x, [1.0, -2.0, 3.0]):
            mixed = mixed + row * w
        return acc, mixed, sum(x) * 1.0

    check(f, ROWS, spec([None, 3]))


def test_zip_of_a_grown_list_and_rows_stops_at_the_shorter():
    def f(x, n):
        acc = paddle.zeros([2, 3])
        count = 0
        for i, (o, row) in enumerate(zip(grow(x, n), x)):
            acc = acc + o * row
            count = count + i
        return acc, count

    check(f, N_INPUTS, N_SPEC)


def test_lists_of_tuples_grown_in_a_loop():
    def f(x, n):
        states = []
        h, c = x, x * 0.0
        for _ in range(n):
            c = c + h
            h = paddle.tanh(c)
            states.append((h, {"c": c}))
        hs = paddle.stack([s[0] for s in states])
        last_h, last = states[-1]
        return hs, last_h + last["c"], states, len(states)

    check(f, N_INPUTS[:2], N_SPEC)


def test_a_loop_over_a_size_gives_its_lists_that_size():
    """Lists grown by loops over ``range(x.shape[1])`` and its reverse stack to the
    input's size symbol, so they combine with each other and with the input."""
    def f(x):
        fwd, bwd = [], []
        for t in range(x.shape[1]):
            fwd.append(x[:, t] * 2.0)
        for t in reversed(range(x.shape[1])):
            bwd.append(x[:, t])
        bwd.reverse()
        return paddle.stack(fwd, axis=1) + paddle.stack(bwd, axis=1) + x

    check(f, [randn(2, 4), randn(3, 2, seed=1)], spec([None, None]))
    compiled = paddle.jit.to_static(f, input_spec=spec([None, None]))
    compiled(randn(2, 4))
    stacks = [op for op in compiled.ir.walk() if op.name == "list_stack"]
    assert stacks and all(op.result.type.shape[1] == "S1" for op in stacks), str(compiled.ir)


def test_errors_for_what_a_grown_list_cannot_do():
    def tensor_step(x, n):
        outs = grow(x, n)
        return paddle.stack(outs[::n])

    check_fails(tensor_step, N_INPUTS[:1], N_SPEC, at="outs[::n]",
                match="nonzero Python int step")

    def mixed_items(x, n):
        pairs = []
        for _ in range(n):
            x = x + 1.0
            pairs.append((x, x))
        pairs.append(x)
        return len(pairs)

    check_fails(mixed_items, N_INPUTS[:1], N_SPEC, at="pairs.append(x)",
                match=r"list of tuple\(tensor, tensor\).*cannot take tensor")


def test_an_empty_grown_list_sums_to_zeros_and_returns_empty():
    """A loop that runs no iteration leaves its list empty: its sum is zeros of the
    element's type (eager Python's is the int 0) and the list returned is []."""
    def f(x, n):
        return sum(grow(x, n))

    compiled = paddle.jit.to_static(f, input_spec=N_SPEC)
    x = paddle.to_tensor(randn(2, 3))
    assert np.allclose(compiled(x, paddle.to_tensor(2)).numpy(),
                       f(x, paddle.to_tensor(2)).numpy())
    np.testing.assert_array_equal(compiled(x, paddle.to_tensor(0)).numpy(), np.zeros((2, 3)))
    assert f(x, paddle.to_tensor(0)) == 0
    grown = paddle.jit.to_static(grow, input_spec=N_SPEC)
    assert len(grown(x, paddle.to_tensor(3))) == 3 and grown(x, paddle.to_tensor(0)) == []


def test_the_truth_of_a_grown_list_is_whether_it_is_empty():
    """``if outs``, ``not outs`` and ``a if outs else b`` test the length the run gives
    the list, as Python tests a list (n = 0 gives an empty one)."""
    def f(x, n):
        outs = grow(x, n)
        first = paddle.stack(outs).sum(0) if outs else x
        if not outs:
            first = first - 1.0
        return first
    check(f, N_INPUTS, N_SPEC)


def test_a_return_of_a_grown_list_inside_an_if_compiles():
    """The branch that does not return yields a placeholder of the returned value's
    type, whose length only the loop knows: it must not need that length."""
    def f(x, n):
        outs = grow(x, n)
        if len(outs) > 0:
            return paddle.stack(outs)[:, 0]
        return x
    check(f, N_INPUTS, N_SPEC)
