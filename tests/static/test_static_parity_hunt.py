"""Differences from PaddlePaddle 3.3.1 in the static graph found by a side-by-side hunt
(static programs trained, cloned, saved and loaded; control flow; jit.save/load).
Each test failed before its fix; expected values are NumPy references, or exact
values a run of the same program under Paddle 3.3.1 gave."""
import numpy as np
import pytest

import irflow as paddle
from irflow import static as st

pytestmark = pytest.mark.usefixtures("static")

X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.5, -0.5, 1.0]], "float32")
W = np.array([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2], [-0.1, 0.2, 0.4], [0.6, -0.3, 0.2]],
             "float32")


def _fc(x, name):
    return st.nn.fc(x, 3, weight_attr=paddle.ParamAttr(
        name=name, initializer=paddle.nn.initializer.Assign(W)), bias_attr=False)


def _run(main, startup, feed, fetch):
    exe = st.Executor()
    exe.run(startup)
    return exe.run(main, feed=feed, fetch_list=fetch)


# -------------------------------------------------------------- no_grad_set

def test_gradients_no_grad_set_stops_the_gradient_through_a_variable():
    """``static.gradients(z, [x], no_grad_set={t})``: no gradient flows through ``t``
    (Paddle 3.3.1 gives only the direct term, 0 in the column that reaches z through
    t alone); irflow ignored a computed variable in no_grad_set."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 4], "float32")
        x.stop_gradient = False
        t = paddle.tanh(_fc(x, "w_ngs"))
        z = t * x[:, :3]
        (blocked,) = st.gradients([z], [x], no_grad_set={t})
        (full,) = st.gradients([z], [x])  # the variable blocks only the call naming it
    got, whole = _run(main, startup, {"x": X}, [blocked, full])
    tanh = np.tanh(X @ W)
    direct = np.concatenate([tanh, np.zeros((2, 1), "float32")], axis=1)
    np.testing.assert_allclose(got, direct, rtol=1e-6)
    through_t = (X[:, :3] * (1 - tanh ** 2)) @ W.T
    np.testing.assert_allclose(whole, direct + through_t, rtol=1e-5)


def test_gradients_input_in_no_grad_set_by_variable_has_none():
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 4], "float32")
        h = _fc(x, "w_ngs_in")
        grads = st.gradients([paddle.sum(h * h)], [h, x], no_grad_set=[h])
    assert grads[0] is None


def test_append_backward_no_grad_set_stops_the_gradient_through_a_variable():
    """``append_backward(loss, no_grad_set={t})`` with ``t`` between two layers: the
    first layer's weight gets no gradient (Paddle 3.3.1 pairs it with None), the
    second's is unchanged; irflow gave the first one its full gradient."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 4], "float32")
        t = paddle.tanh(_fc(x, "w_first"))
        out = st.nn.fc(t, 1, weight_attr=paddle.ParamAttr(
            name="w_second", initializer=paddle.nn.initializer.Constant(0.5)),
            bias_attr=False)
        loss = paddle.mean(out * out)
        pairs = st.append_backward(loss, no_grad_set={t})
    assert [p.name for p, _ in pairs] == ["w_second"]
    (g,) = _run(main, startup, {"x": X}, [pairs[0][1]])
    tanh = np.tanh(X @ W)
    y = tanh.sum(1, keepdims=True) * 0.5
    np.testing.assert_allclose(g, tanh.T @ (2 * y / len(X)), rtol=1e-5)


# -------------------------------------------------------------- case, switch_case

def _branches(s_value: float, k_value: int) -> list:
    """case and switch_case, with and without default, run on s and k; Paddle 3.3.1
    gives the values the test asserts."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        s = st.data("s", [1], "float32")
        k = st.data("k", [1], "int32")
        total = paddle.sum(s)
        outs = [
            st.nn.case([(total > 1, lambda: s + 10), (total > 0, lambda: s + 20)],
                       default=lambda: s + 30),
            st.nn.case([(total > 1, lambda: s + 10), (total > 5, lambda: s + 20)]),
            st.nn.switch_case(k, {0: lambda: s * 0, 1: lambda: s * 1, 3: lambda: s * 3},
                              default=lambda: s * 100),
            st.nn.switch_case(k, [lambda: s * 7, lambda: s * 8]),
            st.nn.switch_case(k, [(4, lambda: s - 4), (2, lambda: s - 2)]),
        ]
    feed = {"s": np.array([s_value], "float32"), "k": np.array([k_value], "int32")}
    return [float(o[0]) for o in _run(main, startup, feed, outs)]


@pytest.mark.parametrize("s_value, k_value, expected", [
    (2.0, 0, [12.0, 12.0, 0.0, 14.0, -2.0]),
    (0.5, 1, [20.5, 20.5, 0.5, 4.0, -3.5]),
    (-1.0, 3, [29.0, 19.0, -3.0, -8.0, -5.0]),
    (-1.0, 2, [29.0, 19.0, -100.0, -8.0, -3.0]),
])
def test_case_and_switch_case_take_paddles_default(s_value, k_value, expected):
    assert _branches(s_value, k_value) == expected


def test_switch_case_runs_eagerly():
    paddle.disable_static()
    k = paddle.to_tensor([1], "int32")
    out = st.nn.switch_case(k, {1: lambda: paddle.to_tensor(5.0), 2: lambda: 6.0})
    assert float(out) == 5.0


# -------------------------------------------------------------- two minimizes

def test_two_minimizes_on_a_shared_layer_each_take_their_own_gradients():
    """Two optimizers, each minimizing its loss over a shared encoder: the second
    loss was computed from the encoder before the first update, and its minimize
    uses its gradients only (Paddle's append_backward). irflow gave the second no
    gradient for the encoder, then added the first's to it."""
    v = np.array([[0.3], [-0.2], [0.5]], "float32")
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 4], "float32")
        h = _fc(x, "w_shared")
        heads = [st.nn.fc(h, 1, weight_attr=paddle.ParamAttr(
            name=name, initializer=paddle.nn.initializer.Assign(v)), bias_attr=False)
            for name in ("w_a", "w_b")]
        la, lb = (paddle.mean(head ** 2) for head in heads)
        params = {p.name: p for p in main.all_parameters()}
        paddle.optimizer.SGD(0.1, parameters=[params["w_shared"], params["w_a"]]).minimize(la)
        paddle.optimizer.SGD(0.1, parameters=[params["w_shared"], params["w_b"]]).minimize(lb)
    exe = st.Executor()
    exe.run(startup)
    got = [exe.run(main, feed={"x": X}, fetch_list=[la, lb]) for _ in range(3)]
    w, a, b = W.astype(np.float64), v.astype(np.float64), v.astype(np.float64)
    x = X.astype(np.float64)
    for fetched in got:
        h = x @ w
        ya, yb = h @ a, h @ b
        np.testing.assert_allclose([float(f) for f in fetched], [np.mean(ya ** 2),
                                                                  np.mean(yb ** 2)], rtol=1e-5)
        dya, dyb = 2 * ya / ya.size, 2 * yb / yb.size
        w_a, a = w - 0.1 * x.T @ (dya @ a.T), a - 0.1 * h.T @ dya
        w, b = w_a - 0.1 * x.T @ (dyb @ b.T), b - 0.1 * h.T @ dyb
