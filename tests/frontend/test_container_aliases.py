"""Tensors reached through containers in converted control flow.

A tensor changed in place through a list or dict element (``d["k"][i] = v`` in a
tensor loop or branch) is the same object every other name for it holds, so that
name sees the change, as eagerly (it used to keep the old value: the container got a
new tensor in place of the old one). Python numbers zipped with a run-time sequence
stay Python numbers (they were rounded to float32)."""
import numpy as np
import pytest

import irflow as paddle


def _through_dict(x, n):
    a = x.clone()
    d = {"k": a}
    for i in range(n):  # a tensor bound: a while loop in the program
        d["k"][i] = 5.0
    return a, d["k"]


def _through_list_in_branch(x):
    a = x.clone()
    lst = [a]
    if x.sum() > 0:  # a tensor condition
        lst[0].add_(paddle.ones_like(a))
    return a, lst[0]


def _mark_first(ts):
    if ts[0].sum() > 0:
        ts[0][0] = 5.0


def _through_a_helper(x):
    a = x.clone()
    _mark_first([a])
    return a, a


def _entry_replaced(x):
    a = x.clone()
    d = {"k": a}
    if x.sum() > 0:
        d["k"] = a * 2  # a new tensor in the dict: `a` keeps its value
    return a, d["k"]


@pytest.mark.parametrize("fn, args", [
    (_through_dict, lambda: (paddle.to_tensor([1.0, 2.0, 3.0]), paddle.to_tensor(2))),
    (_through_list_in_branch, lambda: (paddle.to_tensor([1.0, 2.0, 3.0]),)),
    (_through_list_in_branch, lambda: (paddle.to_tensor([-1.0, -2.0, -3.0]),)),
    (_through_a_helper, lambda: (paddle.to_tensor([1.0, 2.0, 3.0]),)),
    (_entry_replaced, lambda: (paddle.to_tensor([1.0, 2.0, 3.0]),)),
], ids=["dict_in_loop", "list_in_branch_taken", "list_in_branch_not_taken", "helper",
        "entry_replaced"])
def test_a_tensor_changed_through_a_container_is_changed_for_every_name(fn, args):
    want = [t.numpy() for t in fn(*args())]
    got = [t.numpy() for t in paddle.jit.to_static(fn)(*args())]
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_python_floats_zipped_with_rows_keep_their_value():
    def f(x):
        out = []
        for row, w in zip(x, [0.1, 0.3, 0.7]):
            out.append(row * w)
        return paddle.stack(out)

    x = paddle.to_tensor(np.ones((3, 2)), dtype="float64")
    got = paddle.jit.to_static(f)(x)
    assert got.dtype == paddle.float64
    np.testing.assert_array_equal(got.numpy()[:, 0], [0.1, 0.3, 0.7])
    h = paddle.to_tensor(np.ones((3, 2)), dtype="float16")
    assert paddle.jit.to_static(f)(h).dtype == paddle.float16


def test_a_temporary_made_and_changed_in_place_in_one_branch_or_body_is_local_to_it():
    """``t = x.clone(); t[0] = v`` in one branch (or a loop body) only: t is not given
    back, so the other branch not binding it is no error (it was a ConversionError)."""
    def branch(x):
        if x.sum() > 0:
            t = x.clone()
            t[0] = 100.0
            y = t * 2
        else:
            y = x
        return y

    def loop(x, n):
        y = x
        for _ in range(n):
            t = paddle.zeros_like(x)
            t[0] = 1.0
            y = y + t
        return y

    for x in (paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([-1.0, -2.0])):
        np.testing.assert_array_equal(paddle.jit.to_static(branch)(x).numpy(),
                                      branch(x).numpy())
        n = paddle.to_tensor(3)
        np.testing.assert_array_equal(paddle.jit.to_static(loop)(x, n).numpy(),
                                      loop(x, n).numpy())


def test_to_tensor_of_a_list_of_traced_values_stacks_them():
    def f(x, n):
        s = paddle.zeros([1], "int64")
        for i in range(n):  # a tensor bound: i is traced
            s = s + paddle.to_tensor([i])
        return s, paddle.to_tensor([x.sum(), 2.5]), paddle.to_tensor([[x[0], x[1]], [x[1], 1]])

    x, n = paddle.to_tensor([1.0, 2.0]), paddle.to_tensor(3)
    for want, got in zip(f(x, n), paddle.jit.to_static(f)(x, n)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_an_assignment_expression_in_a_while_condition_is_refused_clearly():
    from irflow.errors import ConversionError

    def f(x):
        t = x
        while (t := t * 2).sum() < 20:
            pass
        return t

    with pytest.raises(ConversionError, match="assignment expression"):
        paddle.jit.to_static(f)(paddle.to_tensor([1.0, 2.0]))
