"""static.gradients and static.append_backward: gradient variables of the program,
fetched by variable or by Paddle's "<name>@GRAD", equal to eager gradients."""
import numpy as np
import pytest

import irflow as paddle
from irflow.nn.initializer import Constant
from irflow.static import Executor, Program, data, program_guard

pytestmark = pytest.mark.usefixtures("static")
X = np.array([[1.0, 2.0], [3.0, 4.0]], "float32")


def test_gradients_and_append_backward_as_paddle():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 2])
        x.stop_gradient = False
        y = paddle.static.nn.fc(x, 1, weight_attr=paddle.ParamAttr(initializer=Constant(0.5)))
        loss = paddle.mean(y * y)
        (gx,) = paddle.static.gradients([loss], [x])
        pairs = paddle.static.append_backward(loss)
        paddle.static.nn.fc(x, 3)  # parameters the loss does not use
        (none,) = paddle.static.gradients([loss], [main.all_parameters()[-2]])
    assert [p.name for p, _ in pairs] == [p.name for p in main.all_parameters()[:2]]
    assert none is None
    exe = Executor()
    exe.run(startup)
    w_name = pairs[0][0].name
    out = exe.run(main, feed={"x": X}, fetch_list=[loss, gx, pairs[0][1], w_name + "@GRAD",
                                                   pairs[1][1]])
    # Paddle 3.3.1 (legacy IR): 7.25, [[0.75, 0.75], [1.75, 1.75]], [[12.], [17.]] twice
    y_ = X @ np.full((2, 1), 0.5, "float32")
    dy = 2 * y_ / len(X)  # d mean(y^2) / dy
    assert float(out[0]) == pytest.approx(np.mean(y_ * y_))
    np.testing.assert_allclose(out[1], dy @ np.full((1, 2), 0.5), rtol=1e-6)
    np.testing.assert_allclose(out[2], X.T @ dy, rtol=1e-6)
    np.testing.assert_array_equal(out[3], out[2])
    np.testing.assert_allclose(out[4], dy.sum(0), rtol=1e-6)


def test_a_no_grad_set_and_a_parameter_list():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        y = paddle.static.nn.fc(data("x", [-1, 2]), 1)
        loss = paddle.mean(y)
        w, b = main.all_parameters()
        assert [p for p, _ in paddle.static.append_backward(loss, no_grad_set={b.name})] == [w]
        assert [p for p, _ in paddle.static.append_backward(loss, parameter_list=[b.name])] == [b]


def test_gradients_through_a_while_loop_leave_its_results_usable():
    main = Program()
    with program_guard(main, Program()):
        x = data("x", [-1, 3])
        x.stop_gradient = False
        i = paddle.full([1], 0, "int64")
        i2, v2 = paddle.static.nn.while_loop(lambda i, v: i < 3, lambda i, v: [i + 1, v * v],
                                             [i, x])
        (gx,) = paddle.static.gradients([paddle.mean(v2)], [x])
        pred = paddle.sum(v2, axis=1)  # computed on the loop's results after the gradient
    feed = {"x": np.array([[1, 1.1, 0.9], [0.5, -1, 1.2]], "float32")}
    got = Executor().run(main, feed=feed, fetch_list=[i2, v2, gx, pred])
    # Paddle 3.3.1 (PIR), rounded to 5 decimals
    assert got[0].tolist() == [3]
    np.testing.assert_allclose(got[1], [[1.0, 2.14359, 0.43047], [0.00391, 1.0, 4.29982]],
                               atol=1e-5)
    np.testing.assert_allclose(got[2], [[1.33333, 2.59829, 0.63773],
                                        [0.01042, -1.33333, 4.77758]], atol=1e-5)
    np.testing.assert_allclose(got[3], [3.57406, 5.30372], atol=1e-5)


def test_target_gradients_take_the_targets_unknown_dims():
    main = Program()
    with program_guard(main, Program()):
        x = data("x", [-1, 2])
        x.stop_gradient = False
        z = x * x
        (gx,) = paddle.static.gradients([z], [x], target_gradients=[data("tg", [-1, 2])])
        with pytest.raises(paddle.ShapeError, match=r"the gradient given for output 0 has "
                                                     r"shape \[2, 3\], the output \[-1, 2\]"):
            paddle.static.gradients([z], [x], target_gradients=[data("bad", [2, 3])])
    exe = Executor()
    (got,) = exe.run(main, feed={"x": X, "tg": np.ones((2, 2), "float32")}, fetch_list=[gx])
    np.testing.assert_array_equal(got, 2 * X)
    with pytest.raises(paddle.InputError, match=r"feed 'tg' should have shape \[-1, 2\], got "
                                                r"\[3, 2\]; its axis 0 must equal axis 0 of 'x'"):
        exe.run(main, feed={"x": X, "tg": np.ones((3, 2), "float32")}, fetch_list=[gx])
