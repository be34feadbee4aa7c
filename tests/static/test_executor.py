"""Running static programs: training agrees with eager irflow step by step, the
startup program initializes (and re-initializes) every variable, feeds are checked
and fetches resolved by variable or name."""
import re

import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.static import Executor, Program, data, program_guard

pytestmark = pytest.mark.usefixtures("static")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4)).astype("float32")
Y = RNG.integers(0, 3, size=(6,)).astype("int64")
FEED = {"x": X, "label": Y}


def classifier(optimizer):
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 4])
        label = data("label", [-1], "int64")
        h = paddle.static.nn.fc(x, size=8, activation="tanh")
        logits = paddle.static.nn.fc(h, size=3)
        loss = F.cross_entropy(logits, label)
        optimizer.minimize(loss)
    return main, startup, loss


def eager_losses(params, make_optimizer, steps):
    """The same model trained eagerly from the same initial values."""
    w1, b1, w2, b2 = params = [paddle.Parameter(p) for p in params]
    opt = make_optimizer(params)
    losses = []
    for _ in range(steps):
        h = paddle.tanh(paddle.matmul(paddle.to_tensor(X), w1) + b1)
        loss = F.cross_entropy(paddle.matmul(h, w2) + b2, paddle.to_tensor(Y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in params]


@pytest.mark.parametrize("make", [
    lambda ps: paddle.optimizer.SGD(0.5, parameters=ps),
    lambda ps: paddle.optimizer.Adam(0.05, parameters=ps),
    lambda ps: paddle.optimizer.Momentum(0.1, momentum=0.9, parameters=ps),
])
def test_training_agrees_with_eager(make):
    main, startup, loss = classifier(make(None))
    exe = Executor(paddle.CPUPlace())
    exe.run(startup)
    initial = [p.numpy() for p in main.all_parameters()]
    losses = [float(exe.run(main, feed=FEED, fetch_list=[loss])[0]) for _ in range(4)]
    paddle.disable_static()
    want, params = eager_losses(initial, make, 4)
    paddle.enable_static()
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    for p, q in zip(main.all_parameters(), params):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-5, atol=1e-6)


def test_a_scheduler_made_and_stepped_in_static_mode_sets_each_runs_rate():
    """In static mode a program reads the rate at each run, and the scheduler is made
    and stepped between runs, as in Paddle (compiled code refuses step(); static
    programs are built by a tracer too, which is not that). The optimizer is made
    inline (`classifier(SGD(sched))`): the program keeps it, so the scheduler still
    refreshes its rate (each run used the first rate once it was collected)."""
    sched = paddle.optimizer.lr.StepDecay(0.5, step_size=1, gamma=0.5)
    main, startup, loss = classifier(paddle.optimizer.SGD(sched))
    exe = Executor(paddle.CPUPlace())
    exe.run(startup)
    initial = [p.numpy() for p in main.all_parameters()]
    losses = []
    for _ in range(3):
        losses.append(float(exe.run(main, feed=FEED, fetch_list=[loss])[0]))
        sched.step()
    paddle.disable_static()
    eager_sched = paddle.optimizer.lr.StepDecay(0.5, step_size=1, gamma=0.5)
    params = [paddle.Parameter(p) for p in initial]
    opt = paddle.optimizer.SGD(eager_sched, parameters=params)
    want = []
    for _ in range(3):
        h = paddle.tanh(paddle.matmul(paddle.to_tensor(X), params[0]) + params[1])
        eager_loss = F.cross_entropy(paddle.matmul(h, params[2]) + params[3], paddle.to_tensor(Y))
        eager_loss.backward()
        opt.step()
        opt.clear_grad()
        eager_sched.step()
        want.append(float(eager_loss))
    paddle.enable_static()
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    assert sched.last_epoch == 3


def test_the_startup_program_draws_every_initial_value_again():
    main, startup, loss = classifier(paddle.optimizer.Adam(0.05))
    exe = Executor()
    runs = []
    for _ in range(2):
        paddle.seed(7)
        exe.run(startup)
        w = main.all_parameters()[0].numpy()
        runs.append([w] + [float(exe.run(main, feed=FEED, fetch_list=[loss])[0])
                           for _ in range(3)])
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1:] == runs[1][1:]  # the optimizer's state was reset too
    assert runs[0][1] > runs[0][3]
    limit = np.sqrt(6 / (4 + 8))  # XavierUniform of fc's weight
    assert np.abs(runs[0][0]).max() <= limit and runs[0][0].std() > limit / 4
    exe.run(startup)
    assert not np.array_equal(main.all_parameters()[0].numpy(), runs[0][0])
    assert not main.all_parameters()[1].numpy().any()  # biases start at 0


def test_feed_errors_name_the_inputs():
    main, startup, loss = classifier(paddle.optimizer.SGD(0.1))
    exe = Executor()
    exe.run(startup)
    cases = [
        ({"x": X}, re.escape("the feed has no 'label', an input the fetched values need; the "
                             "program's inputs are 'x' (float32[-1, 4]), 'label' (int64[-1])")),
        ({"X": X, "label": Y}, re.escape("the feed has 'X' (did you mean 'x'?), which is not an "
                                         "input")),
        ({"x": X.astype("float64"), "label": Y}, "feed 'x' should be float32, got float64"),
        ({"x": X[:, :3], "label": Y}, r"feed 'x' should have shape \[-1, 4\], got \[6, 3\]"),
        ({"x": X, "label": Y[:4]}, r"feed 'label' should have shape \[-1\], got \[4\]; its axis "
                                   r"0 must equal axis 0 of 'x' \(6\), because the program "
                                   r"combines them \(.*test_executor.py:\d+\)"),
        ({"x": [[1.0, 2.0]], "label": Y}, r"feed 'x' should have shape \[-1, 4\], got \[1, 2\]"),
    ]
    for feed, message in cases:
        with pytest.raises(paddle.InputError, match=message):
            exe.run(main, feed=feed, fetch_list=[loss])
    (out,) = exe.run(main, feed={"x": X.tolist(), "label": Y.tolist()}, fetch_list=[loss])
    assert out.dtype == np.float32  # lists take the inputs' dtypes


def test_a_feed_is_a_dict_of_names_or_a_list_of_one():
    main, startup, loss = classifier(paddle.optimizer.SGD(0.1))
    exe = Executor()
    exe.run(startup)
    test = main.clone(for_test=True)  # (no update between the two runs)
    (out,) = exe.run(test, feed=[FEED], fetch_list=[loss])
    assert float(out) == float(exe.run(test, feed=FEED, fetch_list=[loss])[0])
    cases = [([FEED, FEED], "a feed list should hold one dict (irflow runs on one device), "
                            "got 2 items"),
             ([], "got 0 items"),
             (X, "feed should be a dict of input names to arrays, not ndarray"),
             ({main.global_block().var("x"): X}, "keys should be input names (str), got a "
                                                 "Tensor")]
    for feed, message in cases:
        with pytest.raises(TypeError, match=re.escape(message)):
            exe.run(main, feed=feed, fetch_list=[loss])


def test_a_dataloader_with_a_feed_list_gives_feeds():
    class Pairs(paddle.io.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i, 2 * i], "float32"), np.array([i % 2], "int64")

    main = Program()
    with program_guard(main, Program()):
        x, y = data("x", [-1, 2]), data("y", [-1, 1], "int64")
        s = paddle.sum(x) + paddle.sum(paddle.cast(y, "float32")) * 100
    exe = Executor()
    loader = paddle.io.DataLoader(Pairs(), feed_list=[x, y], batch_size=2, return_list=False,
                                  num_workers=1, timeout=60)
    batches = list(loader)
    assert [sorted(feed) for (feed,) in batches] == [["x", "y"]] * 3
    # Paddle 3.3.1 (PIR): 103.0, 115.0, 12.0, with or without workers
    assert [float(exe.run(main, feed=b, fetch_list=[s])[0]) for b in batches] == \
        [103.0, 115.0, 12.0]
    with pytest.raises(ValueError, match="feed_list .* should be set when return_list=False"):
        paddle.io.DataLoader(Pairs(), batch_size=2, return_list=False)
    with pytest.raises(ValueError, match=r"a batch has 2 fields, but feed_list names 1 "
                                         r"variables \(x\)"):
        next(iter(paddle.io.DataLoader(Pairs(), feed_list=[x], batch_size=2,
                                       return_list=False)))
    paddle.disable_static()  # in dynamic-graph mode batches are plain, as in Paddle
    try:
        plain = next(iter(paddle.io.DataLoader(Pairs(), batch_size=2, return_list=False)))
    finally:
        paddle.enable_static()
    assert [type(t).__name__ for t in plain] == ["Tensor", "Tensor"]


def test_fetches_by_variable_and_by_name():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 4])
        y = paddle.static.nn.fc(x, size=2, weight_attr=paddle.ParamAttr(name="w"))
        loss = paddle.mean(y)
        paddle.optimizer.SGD(0.5).minimize(loss)
    exe = Executor()
    exe.run(startup)
    w = main.state_dict()["w"]
    w0 = w.numpy()
    x_out, w_new, l_out = exe.run(main, feed={"x": X}, fetch_list=["x", "w", loss])
    np.testing.assert_array_equal(x_out, X)
    np.testing.assert_array_equal(w_new, w.numpy())  # a variable's value after the run
    np.testing.assert_allclose(w0 - w_new, 0.5 * np.tile(X.mean(0)[:, None] / 2, (1, 2)),
                               rtol=1e-5)
    assert exe.run(main, feed={"x": X}) == []
    (t,) = exe.run(main, feed={"x": X}, fetch_list=[loss], return_numpy=False)
    assert isinstance(t, paddle.Tensor)
    with pytest.raises(paddle.IrflowError, match=r"fetch_list\[0\] names 'v', which is not"):
        exe.run(main, feed={"x": X}, fetch_list=["v"])
    other = Program()
    with program_guard(other):
        z = data("z", [1])
    with pytest.raises(paddle.IrflowError, match="a variable of another program"):
        exe.run(main, feed={"x": X}, fetch_list=[z])


def test_state_dicts_save_and_restore_the_variables(tmp_path):
    main, startup, loss = classifier(paddle.optimizer.Adam(0.05))
    exe = Executor()
    exe.run(startup)
    paddle.save(main.state_dict(), tmp_path / "vars")
    first = [float(exe.run(main, feed=FEED, fetch_list=[loss])[0]) for _ in range(3)]
    n_ops = len(main.global_block().ops)
    main.set_state_dict(paddle.load(tmp_path / "vars"))  # set now, in static mode too
    assert len(main.global_block().ops) == n_ops
    again = [float(exe.run(main, feed=FEED, fetch_list=[loss])[0]) for _ in range(3)]
    assert again == first
    assert any("moment1" in name for name in main.state_dict())
    w = main.all_parameters()[0]
    with pytest.warns(UserWarning, match="Skip loading for 'nope': the program has no "
                                         "variable of that name"):  # Paddle's: the rest loads
        main.set_state_dict({"nope": np.ones(1), w.name: np.zeros(w.shape, "float32")})
    np.testing.assert_array_equal(w.numpy(), np.zeros(w.shape))


def test_parameters_are_listed_as_created_used_or_not_yet():
    """Paddle 3.3.1 (legacy IR) lists ['linear_0.w_0', 'linear_0.b_0', 'fc_0.w_0',
    'fc_0.b_0', 'batch_norm_0.w_0', 'batch_norm_0.b_0', 'batch_norm_0.w_1',
    'batch_norm_0.w_2'] for this program: creation order, the unused Linear too."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 2])
        linear = paddle.nn.Linear(2, 3)
        paddle.static.nn.batch_norm(paddle.static.nn.fc(x, 2))
    names = [p.name for p in main.all_parameters()]
    assert names[:2] == [linear.weight.name, linear.bias.name]
    assert [n.split(".")[1] for n in names[2:]] == ["w_0", "b_0", "w_0", "b_0", "w_1", "w_2"]
    assert [n.split("_")[0] for n in names[2:]] == ["fc"] * 2 + ["batch"] * 4
    assert set(main.state_dict()) >= set(names)


def test_a_run_needs_only_the_inputs_its_fetches_read():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x, label = data("x", [-1, 4]), data("label", [-1], "int64")
        logits = paddle.static.nn.fc(x, size=3)
        loss = F.cross_entropy(logits, label)
    exe = Executor()
    exe.run(startup)
    (out,) = exe.run(main, feed={"x": X}, fetch_list=[logits])
    assert out.shape == (6, 3)
    with pytest.raises(paddle.InputError, match="the feed has no 'label'"):
        exe.run(main, feed={"x": X}, fetch_list=[loss])


def test_batch_norm_trains_on_batches_and_tests_on_moving_statistics():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 2, 3, 3])
        y = paddle.static.nn.batch_norm(x, moving_mean_name="mean", moving_variance_name="var")
    test = main.clone(for_test=True)
    exe = Executor()
    exe.run(startup)
    xv = RNG.standard_normal((4, 2, 3, 3)).astype("float32") * 3 + 1
    (train_out,) = exe.run(main, feed={"x": xv}, fetch_list=[y])
    mean, var = xv.mean((0, 2, 3)), xv.var((0, 2, 3))
    expected = (xv - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    np.testing.assert_allclose(train_out, expected, rtol=1e-4, atol=1e-5)
    state = main.state_dict()
    np.testing.assert_allclose(state["mean"].numpy(), 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(state["var"].numpy(), 0.9 + 0.1 * var, rtol=1e-5)
    (test_out,) = exe.run(test, feed={"x": xv}, fetch_list=[y])
    moving = (xv - state["mean"].numpy()[:, None, None]) / \
        np.sqrt(state["var"].numpy()[:, None, None] + 1e-5)
    np.testing.assert_allclose(test_out, moving, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state["mean"].numpy(), 0.1 * mean, rtol=1e-5)  # unchanged


def test_conv2d_and_fc_agree_with_eager():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = data("x", [-1, 3, 5, 5])
        c = paddle.static.nn.conv2d(x, num_filters=4, filter_size=3, padding=1, act="relu")
        y = paddle.static.nn.fc(c, size=2, num_flatten_dims=1)
        z = paddle.static.nn.fc([y, y], size=1)
    exe = Executor()
    exe.run(startup)
    xv = RNG.standard_normal((2, 3, 5, 5)).astype("float32")
    c_out, y_out, z_out = exe.run(main, feed={"x": xv}, fetch_list=[c, y, z])
    cw, cb, w, b, w1, w2, b2 = [p.numpy() for p in main.all_parameters()]
    assert cw.shape == (4, 3, 3, 3) and np.std(cw) < 1.0  # Normal(0, sqrt(2 / 27))
    paddle.disable_static()
    eager = F.relu(F.conv2d(paddle.to_tensor(xv), paddle.to_tensor(cw), paddle.to_tensor(cb),
                            padding=1)).numpy()
    paddle.enable_static()
    np.testing.assert_allclose(c_out, eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y_out, eager.reshape(2, -1) @ w + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z_out, y_out @ w1 + y_out @ w2 + b2, rtol=1e-5, atol=1e-5)
    with pytest.raises(paddle.IrflowError, match="fc: the flattened features must be known"):
        with program_guard(Program()):
            paddle.static.nn.fc(data("u", [-1, -1]), size=2)
    with pytest.raises(ValueError, match="weight_attr is a list of 1 attributes for 2 inputs"):
        with program_guard(Program()):
            paddle.static.nn.fc([x, x], size=2, weight_attr=[paddle.ParamAttr()])


def test_nn_layers_in_a_static_program_are_initialized_by_its_startup_program():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        linear = paddle.nn.Linear(4, 2)
        y = linear(data("x", [-1, 4]))
    created = linear.weight.numpy()
    paddle.seed(3)
    Executor().run(startup)
    drawn = linear.weight.numpy()
    assert not np.array_equal(drawn, created) and "uniform" in str(startup)
    (out,) = Executor().run(main, feed={"x": X}, fetch_list=[y])
    np.testing.assert_allclose(out, X @ drawn + linear.bias.numpy(), rtol=1e-6)
