"""The scope: parameters of one name are one parameter, in one program and across
programs (a test program built apart from the training one reads the trained
values), a program whose startup never ran cannot run, the values can be read
and set by name (global_scope().find_var(name).get_tensor()), and a program run
under another scope reads and updates that scope's values."""
import threading

import numpy as np
import pytest

import irflow as paddle
from irflow.nn.initializer import Constant
from irflow.static import (Executor, Program, Scope, data, global_scope, program_guard,
                           scope_guard)

pytestmark = pytest.mark.usefixtures("static")
ONES = np.ones((2, 3), "float32")


def fc(x, size, init=0.5, name="w"):
    return paddle.static.nn.fc(x, size, weight_attr=paddle.ParamAttr(name=name, initializer=Constant(init)),
                               bias_attr=False)


def test_two_layers_naming_one_parameter_train_one_weight():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 2])
        y = fc(fc(x, 2), 2)
        loss = paddle.mean(y)
        paddle.optimizer.SGD(0.1).minimize(loss)
    assert [p.name for p in main.all_parameters()] == ["w"]
    exe = Executor()
    exe.run(startup)
    losses, w = [], 0.5
    for _ in range(3):
        losses.append(float(exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[loss])[0]))
        w -= 0.1 * 2 * w  # each entry's gradient: w as the first layer's, w as the second's
    np.testing.assert_allclose(losses, [1.0, 0.64, 0.4096], rtol=1e-6)  # Paddle 3.3.1's
    np.testing.assert_allclose(main.state_dict()["w"].numpy(), np.full((2, 2), w), rtol=1e-6)


def test_a_test_program_built_apart_reads_the_trained_parameters():
    def net(x):
        return paddle.static.nn.fc(x, 1, weight_attr=paddle.ParamAttr(name="w", initializer=Constant(0.0)),
                                   bias_attr=paddle.ParamAttr(name="b", initializer=Constant(0.0)))

    train, startup, test = Program(), Program(), Program()
    with program_guard(train, startup):
        out = net(data("x", [-1, 3]))
        loss = paddle.mean(paddle.square(out - 1))
        paddle.optimizer.SGD(0.1).minimize(loss)
    with program_guard(test, Program()):
        out_test = net(data("x", [-1, 3]))
    exe = Executor()
    exe.run(startup)
    for _ in range(20):
        exe.run(train, feed={"x": ONES}, fetch_list=[loss])
    (trained,) = exe.run(train, feed={"x": ONES}, fetch_list=[out])
    (tested,) = exe.run(test, feed={"x": ONES}, fetch_list=[out_test])
    np.testing.assert_allclose(trained, np.ones((2, 1)), rtol=1e-3)
    np.testing.assert_array_equal(tested, trained)


def test_one_name_of_two_shapes_in_one_program_is_an_error():
    with program_guard(Program(), Program()):
        x = data("x", [-1, 2])
        fc(x, 2)
        with pytest.raises(ValueError, match=r"already has a parameter 'w' of float32\[2, 2\].*"
                                             r"asks for float32\[2, 3\]"):
            fc(x, 3)


def test_another_programs_parameter_of_another_shape_is_replaced():
    with program_guard(Program(), Program()):
        first = fc(data("x", [-1, 2]), 2)
    main, startup = Program(), Program()
    with program_guard(main, startup):
        y = fc(data("x", [-1, 2]), 3, init=2.0)
    exe = Executor()
    exe.run(startup)
    (out,) = exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(out, np.full((1, 3), 4.0))
    assert global_scope().find_var("w").get_tensor().shape() == [2, 3]
    assert first.shape == [-1, 2]  # (kept alive: its program's "w" was in the scope)


def test_running_before_the_startup_program_is_an_error():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        y = paddle.static.nn.fc(data("x", [-1, 2]), 1)
    exe = Executor()
    with pytest.raises(paddle.IrflowError, match=r"reads 'fc_\d+\.w_0', 'fc_\d+\.b_0', which no "
                                                 r"startup program has initialized"):
        exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[y])
    exe.run(startup)
    exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[y])


def test_setting_the_state_initializes_it():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        y = fc(data("x", [-1, 2]), 1)
    main.set_state_dict({"w": np.array([[1.0], [2.0]], "float32")})
    (out,) = Executor().run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(out, [[3.0]])


def test_find_var_reads_and_sets_a_value_by_name():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        y = fc(data("x", [-1, 2]), 1, init=1.0)
    exe = Executor()
    exe.run(startup)
    tensor = global_scope().find_var("w").get_tensor()
    np.testing.assert_array_equal(np.array(tensor), np.ones((2, 1)))
    tensor.set(np.array([[3.0], [4.0]], "float32"), paddle.CPUPlace())
    (out,) = exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(out, [[7.0]])
    assert global_scope().find_var("nothing") is None


def test_a_scope_guard_keeps_its_own_parameters():
    with program_guard(Program(), Program()):
        outer = fc(data("x", [-1, 2]), 1)  # (keeps the outer "w" alive)
    inner_scope = paddle.static.Scope()
    with scope_guard(inner_scope):
        assert global_scope() is inner_scope
        main = Program()
        with program_guard(main, Program()):
            fc(data("x", [-1, 2]), 1)
    assert global_scope() is not inner_scope
    inner, = main.all_parameters()
    assert inner is not global_scope().find_var("w").get_tensor()._tensor
    assert inner is inner_scope.find_var("w").get_tensor()._tensor
    assert outer.shape == [-1, 1]


def test_each_thread_has_its_own_scope():
    names = []

    def build():
        paddle.enable_static()
        try:
            with program_guard(Program(), Program()):
                fc(data("x", [-1, 2]), 1)
            names.append(global_scope().local_var_names())
        finally:
            paddle.disable_static()

    thread = threading.Thread(target=build)
    thread.start()
    thread.join()
    assert names == [["w"]] and global_scope().find_var("w") is None


def momentum_program():
    """w (1.0) trained by Momentum(0.5, 0.9) on d mean(x w) / dw = 1 for x = 1."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        loss = paddle.mean(fc(data("x", [-1, 1]), 1, init=1.0))
        paddle.optimizer.Momentum(0.5, momentum=0.9).minimize(loss)
    return main, startup, loss


def w_in(scope=None):
    return float(np.array((scope or global_scope()).find_var("w").get_tensor()).ravel()[0])


def test_a_program_run_under_another_scope_reads_and_updates_its_values():
    main, startup, loss = momentum_program()
    exe, feed = Executor(), {"x": np.ones((1, 1), "float32")}
    scope = Scope()
    with pytest.raises(paddle.IrflowError, match="reads 'w', which no startup program has "
                                                 "initialized"):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    exe.run(startup)
    for _ in range(2):
        exe.run(main, feed=feed, fetch_list=[loss])
    exe.run(startup, scope=scope)
    (out,) = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    # Paddle 3.3.1 (legacy IR): loss 1.0, w 0.5 in the scope; -0.45 in the global scope
    assert float(out) == 1.0 and w_in(scope) == 0.5
    assert w_in() == pytest.approx(-0.45)
    assert main.state_dict()["w"].numpy().ravel().tolist() == pytest.approx([-0.45])


def test_save_load_and_set_act_on_the_current_scope(tmp_path):
    main, startup, loss = momentum_program()
    exe, feed = Executor(), {"x": np.ones((1, 1), "float32")}
    exe.run(startup)
    for _ in range(2):
        exe.run(main, feed=feed, fetch_list=[loss])
    first, second = Scope(), Scope()
    with scope_guard(first):
        exe.run(startup)
        exe.run(main, feed=feed, fetch_list=[loss])
        paddle.static.save(main, str(tmp_path / "m"))
    assert paddle.static.load_program_state(str(tmp_path / "m"))["w"].ravel().tolist() == [0.5]
    with scope_guard(second):
        exe.run(startup)
        paddle.static.load(main, str(tmp_path / "m"), exe)  # w 0.5 and its velocity 1.0
        (out,) = exe.run(main, feed=feed, fetch_list=[loss])
        global_scope().find_var("w").get_tensor().set(np.full((1, 1), 7.0, "float32"))
    # Paddle 3.3.1 (legacy IR): loss 0.5, then w -0.45 (0.5 - 0.5 * (0.9 + 1)); the
    # global scope's w -0.45 and the first scope's 0.5 as they were; 7.0 set in the second
    assert float(out) == 0.5
    assert (w_in(first), w_in(second)) == (0.5, 7.0)
    assert w_in() == pytest.approx(-0.45)


def test_a_state_dict_by_kind_of_variable():
    main, _, _ = momentum_program()
    assert list(main.state_dict("param")) == ["w"]
    assert "w" not in main.state_dict("opt") and main.state_dict("opt")
    assert set(main.state_dict()) == {*main.state_dict("param"), *main.state_dict("opt")}
    with pytest.raises(ValueError, match="mode should be one of 'all', 'param', 'opt', not 'x'"):
        main.state_dict("x")
