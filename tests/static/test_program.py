"""Building static programs: inputs, ops from anywhere in the API, printing, blocks,
clones, unknown dims, and the static-graph mode itself."""
import threading

import numpy as np
import pytest

import irflow as paddle
from irflow.errors import IrflowError
from irflow.static import Executor, Program, data, program_guard

pytestmark = pytest.mark.usefixtures("static")


def build(shape=(-1, 4)):
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", list(shape), "float32")
        y = paddle.static.nn.fc(x, size=3, weight_attr=paddle.ParamAttr(name="w"),
                                bias_attr=paddle.ParamAttr(name="b"), activation="relu")
    return main, startup, x, y


def test_ops_of_the_main_namespace_are_added_to_the_current_program():
    main, startup, x, y = build()
    n = len(main.global_block().ops)
    with program_guard(main, startup):
        z = paddle.mean(y * 2 + 1)
    assert z._value is None and z.shape == [] and y.shape == [-1, 3]
    assert [op.name for op in main.global_block().ops[n:] if op.name != "const"] == \
        ["mul", "add", "mean"]
    Executor().run(startup)
    xv = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")
    (out,) = Executor().run(main, feed={"x": xv}, fetch_list=[z])
    w, b = main.state_dict()["w"].numpy(), main.state_dict()["b"].numpy()
    np.testing.assert_allclose(out, np.mean(np.maximum(xv @ w + b, 0) * 2 + 1), rtol=1e-6)


def test_printing_shows_the_ir_with_the_updated_variables():
    main, startup, x, y = build()
    with program_guard(main, startup), paddle.utils.unique_name.guard():
        paddle.optimizer.SGD(0.1).minimize(paddle.mean(y))
    text = str(main)
    # a static program's learning rate is named as Paddle's (learning_rate_0, _1, ...)
    assert text.startswith("func @main(%x: f32[N,4], %w: f32[4,3], %b: f32[3], "
                           "%learning_rate_0: f32) -> (f32[4,3], f32[3]) {")
    assert "return %w_1, %b_1" in text
    assert str(startup).startswith("func @startup(")
    assert str(startup).startswith("func @startup(%seed: i64) -> (f32[4,3], f32[3]) {")
    assert "%w = uniform" in str(startup) and "return %w, %b" in str(startup)


def test_blocks_list_ops_and_variables():
    main, _, x, y = build()
    block = main.global_block()
    assert block.program is main and main.num_blocks == 1
    assert list(block.vars) == ["x", "w", "b"]
    assert block.var("x").shape == [-1, 4] and block.var("w").shape == [4, 3]
    assert [p.name for p in block.all_parameters()] == ["w", "b"]
    with pytest.raises(ValueError, match="no variable 'v'; it has: x, w, b"):
        block.var("v")
    assert "Variable(name='x', shape=[-1, 4], dtype=float32)" == repr(x)


def test_unknown_dims_take_the_sizes_the_program_needs():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [None, -1])
        w = paddle.create_parameter([4, 3], "float32")
        y = paddle.matmul(x, w)
        idx = data("idx", [-1], "int64")
        rows = paddle.gather(x, idx)  # unrelated to x's batch: stays its own size
    assert y.shape == [-1, 3] and x.shape == [-1, 4]
    exe = Executor()
    exe.run(startup)
    xv = np.ones((5, 4), "float32")
    (out,) = exe.run(main, feed={"x": xv, "idx": np.array([0, 2])}, fetch_list=[rows])
    assert out.shape == (2, 4)
    with pytest.raises(paddle.InputError, match=r"feed 'x' should have shape \[-1, 4\], got "
                       r"\[5, 5\]; its axis 1 is -1 in static.data, but the program needs 4 "
                       r"there \(.*test_program.py:\d+\)"):
        exe.run(main, feed={"x": np.ones((5, 5), "float32")}, fetch_list=[y])


def test_data_errors():
    main = Program()
    with program_guard(main):
        data("x", [2])
        with pytest.raises(IrflowError, match="already has an input named 'x'"):
            data("x", [3])
    paddle.disable_static()
    for call in (lambda: data("y", [1]), lambda: paddle.static.nn.fc(None, 2),
                 lambda: program_guard(main).__enter__()):
        with pytest.raises(IrflowError, match="only supported in static-graph mode; call "
                                              "paddle.enable_static"):
            call()


def test_clone_for_test_keeps_the_forward_without_updates():
    main, startup, x, y = build()
    with program_guard(main, startup):
        loss = paddle.mean(y)
        before = main.clone(for_test=True)
        paddle.optimizer.SGD(0.1).minimize(loss)
    after = main.clone(for_test=True)
    full = main.clone()
    assert str(before) == str(after)  # the same forward, before minimize or after
    assert "-> ()" in str(after) and str(full) == str(main)
    exe = Executor()
    exe.run(startup)
    w0 = main.state_dict()["w"].numpy()
    feed = {"x": np.ones((2, 4), "float32")}
    (a,) = exe.run(after, feed=feed, fetch_list=[y])  # a variable of the source program
    np.testing.assert_array_equal(main.state_dict()["w"].numpy(), w0)
    exe.run(full, feed=feed, fetch_list=[loss])        # the clone shares the variables
    assert not np.array_equal(main.state_dict()["w"].numpy(), w0)


def test_clone_for_test_puts_nn_layers_and_dropout_in_inference_mode():
    """Paddle's clone(for_test=True) sets is_test on dropout and batch_norm ops,
    however they were built: by nn.Dropout, nn.BatchNorm1D or the functions."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 2], "float32")
        norm = paddle.nn.BatchNorm1D(2)
        outs = [norm(x), paddle.nn.Dropout(0.5)(x),
                paddle.nn.functional.dropout(x, 0.25, mode="downscale_in_infer"),
                paddle.nn.functional.dropout(x, 1.0, mode="downscale_in_infer")]
        test = main.clone(for_test=True)
    exe = Executor()
    exe.run(startup)
    xv = np.array([[1.0, 2.0], [3.0, 6.0]], "float32")
    trained = exe.run(main, feed={"x": xv}, fetch_list=outs)
    np.testing.assert_allclose(trained[0], (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-5),
                               rtol=1e-5)
    mean, var = norm._mean.numpy(), norm._variance.numpy()
    tested = exe.run(test, feed={"x": xv}, fetch_list=outs)
    np.testing.assert_allclose(tested[0], (xv - mean) / np.sqrt(var + 1e-5), rtol=1e-5)
    np.testing.assert_array_equal(tested[1], xv)
    np.testing.assert_array_equal(tested[2], xv * 0.75)
    np.testing.assert_array_equal(tested[3], xv * 0.0)
    np.testing.assert_array_equal(norm._mean.numpy(), mean)  # a test run updates nothing


def test_programs_and_their_guards():
    main, startup = Program(), Program()
    outer = paddle.static.default_main_program()
    with program_guard(main, startup):
        assert paddle.static.default_main_program() is main
        assert paddle.static.default_startup_program() is startup
        inner = Program()
        with program_guard(inner):
            assert paddle.static.default_main_program() is inner
            assert paddle.static.default_startup_program() is startup
        assert paddle.static.default_main_program() is main
    assert paddle.static.default_main_program() is outer
    x = data("x", [2])  # outside any guard: the default main program
    assert "%x: f32[2]" in str(outer) and x._tracer is outer._tracer
    with pytest.raises(TypeError, match="main_program must be a paddle.static.Program"):
        program_guard("main").__enter__()


def test_static_mode_and_default_programs_are_per_thread():
    seen = {}

    def other():
        seen["dynamic"] = paddle.in_dynamic_mode()
        seen["value"] = (paddle.ones([2]) * 2).numpy()
        paddle.enable_static()
        seen["program"] = paddle.static.default_main_program()
        paddle.disable_static()

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen["dynamic"] and seen["value"].tolist() == [2.0, 2.0]
    assert seen["program"] is not paddle.static.default_main_program()
    assert not paddle.in_dynamic_mode()


def test_variables_have_no_value_while_the_program_is_built():
    main, _, x, y = build()
    with pytest.raises(IrflowError, match=r"numpy\(\) needs a value, .* fetch it"):
        y.numpy()
    with program_guard(main), pytest.raises(IrflowError, match="paddle.static.nn.cond"):
        if paddle.mean(y) > 0:
            pass


def test_static_nn_cond_in_a_program():
    main = Program()
    with program_guard(main):
        x = data("x", [2])
        y = paddle.static.nn.cond(paddle.mean(x) > 0, lambda: x * 2, lambda: x - 1)
    exe = Executor()
    for xv, want in (([1.0, 2.0], [2.0, 4.0]), ([-1.0, -2.0], [-2.0, -3.0])):
        (out,) = exe.run(main, feed={"x": np.array(xv, "float32")}, fetch_list=[y])
        assert out.tolist() == want
    assert " cond " in str(main)
