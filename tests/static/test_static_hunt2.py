"""Differences from PaddlePaddle 3.3.1 in static-graph training scripts found by a
second side-by-side hunt (MLP/CNN programs trained with Adam, cloned for test, saved
and loaded). Each test failed before its fix; expected values follow from the rule
the test's docstring states (NumPy references or hand-computed SGD steps)."""
import numpy as np
import pytest

import irflow as paddle
from irflow import static as st

pytestmark = pytest.mark.usefixtures("static")

X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.5, -0.5, 1.0]], "float32")
W = np.array([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2], [-0.1, 0.2, 0.4], [0.6, -0.3, 0.2]],
             "float32")


def _scope_value(name: str) -> np.ndarray:
    return np.array(st.global_scope().find_var(name).get_tensor())


# -------------------------------------------------------------- save_inference_model

def test_save_inference_model_of_a_test_clone_with_the_training_programs_data(tmp_path):
    """``save_inference_model(path, [x], [logits], exe, program=test_program)``, x the
    ``static.data`` of the program the test program was cloned from (Paddle's docs
    pattern): irflow refused x as "not an input of the program"."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 4], "float32")
        logits = st.nn.fc(x, 3, weight_attr=paddle.ParamAttr(
            initializer=paddle.nn.initializer.Assign(W)), bias_attr=False)
        test = main.clone(for_test=True)
        paddle.optimizer.Adam(0.01).minimize(paddle.mean(logits))
    exe = st.Executor()
    exe.run(startup)
    st.save_inference_model(str(tmp_path / "m"), [x], [logits], exe, program=test)
    program, feeds, fetches = st.load_inference_model(str(tmp_path / "m"), exe)
    assert feeds == ["x"]
    (got,) = exe.run(program, feed={"x": X}, fetch_list=fetches)
    np.testing.assert_allclose(got, X @ W, rtol=1e-6)


# -------------------------------------------------------------- set_value

def _linear_sgd():
    """mean(Linear(2, 1)(x)) minimized by SGD(0.5): fed ones, each step lowers every
    weight and the bias by 0.5 (their gradients are 1), so the loss sum(w) + b falls
    by 1.5 a step."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [None, 2], "float32")
        lin = paddle.nn.Linear(2, 1)
        loss = paddle.mean(lin(x))
        paddle.optimizer.SGD(0.5).minimize(loss)
    return main, startup, lin, loss


def test_set_value_of_a_parameter_sets_it_in_the_scope_once():
    """``layer.weight.set_value(array)`` after the startup program, in static-graph
    mode: Paddle sets the value in the scope, and training goes on from it (losses
    2, 0.5, -1). irflow recorded it as an update of the default main program, so the
    program being trained never saw it."""
    main, startup, lin, loss = _linear_sgd()
    exe = st.Executor()
    exe.run(startup)
    lin.weight.set_value(np.ones((2, 1), "float32"))
    lin.bias.set_value(np.zeros((1,), "float32"))
    ones = np.ones((3, 2), "float32")
    losses = [float(exe.run(main, feed={"x": ones}, fetch_list=[loss])[0]) for _ in range(3)]
    assert losses == [2.0, 0.5, -1.0]
    np.testing.assert_array_equal(_scope_value(lin.weight.name), [[-0.5], [-0.5]])


def test_set_value_inside_program_guard_is_not_an_update_of_each_run():
    """``set_value`` while a program is built (as a layer's ``set_state_dict`` does)
    sets the value once: before, the program reset the weight to it at every run,
    undoing each SGD step (losses 2, 2, 2)."""
    main, startup, lin, loss = _linear_sgd()
    exe = st.Executor()
    exe.run(startup)
    with st.program_guard(main, startup):
        lin.set_state_dict({"weight": np.ones((2, 1), "float32"),
                            "bias": np.zeros((1,), "float32")})
    ones = np.ones((3, 2), "float32")
    losses = [float(exe.run(main, feed={"x": ones}, fetch_list=[loss])[0]) for _ in range(3)]
    assert losses == [2.0, 0.5, -1.0]


def test_embedding_with_padding_idx_trains_from_the_values_set_in_the_scope():
    """``nn.Embedding(padding_idx=0)`` built in a static program zeroed its padding
    row with a ``set_value`` that became an update of every run: the program read
    the table drawn when the layer was built, whatever the scope held, and restarted
    from it at each run. The lookup gives zeros for the padding id; sum(e * e) has
    gradient 2e on each looked-up row, so SGD(0.1) scales a row used once by 0.8 and
    leaves the padding row as set."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        ids = st.data("ids", [None, 3], "int64")
        emb = paddle.nn.Embedding(4, 2, padding_idx=0)
        e = emb(ids)
        loss = paddle.sum(e * e)
        paddle.optimizer.SGD(0.1).minimize(loss)
    exe = st.Executor()
    exe.run(startup)
    table = np.arange(1, 9, dtype="float32").reshape(4, 2)
    st.global_scope().find_var(emb.weight.name).get_tensor().set(table, paddle.CPUPlace())
    feed = {"ids": np.array([[0, 1, 2], [0, 0, 3]], "int64")}
    got, total = exe.run(main, feed=feed, fetch_list=[e, loss])
    expected = table[feed["ids"]] * (feed["ids"] != 0)[..., None]
    np.testing.assert_array_equal(got, expected)
    assert float(total) == float((expected ** 2).sum())
    np.testing.assert_allclose(_scope_value(emb.weight.name),
                               np.concatenate([table[:1], table[1:] * 0.8]), rtol=1e-6)


# -------------------------------------------------------------- APIs of Paddle's tutorials

def test_create_global_var_is_filled_by_the_startup_and_updated_by_assign():
    """``create_global_var``: the startup program fills it; a program reads its value
    in the scope (a value set there is read), and ``paddle.assign(v, output=var)``
    updates it at each run (a step counter)."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [2], "float32")
        scale = st.create_global_var([2], 3.0, "float32", persistable=True, name="gv_scale")
        step = st.create_global_var([1], 0, "int64", persistable=True)
        y = x * scale
        paddle.assign(step + 1, output=step)
    assert step.name.startswith("_generated_var_") and step.dtype == paddle.int64
    exe = st.Executor()
    exe.run(startup)
    ones = {"x": np.ones(2, "float32")}
    runs = [exe.run(main, feed=ones, fetch_list=[y, step]) for _ in range(3)]
    assert [r[0].tolist() for r in runs] == [[3.0, 3.0]] * 3
    assert [r[1].tolist() for r in runs] == [[1], [2], [3]]
    st.global_scope().find_var("gv_scale").get_tensor().set(np.array([5, 6], "float32"),
                                                            paddle.CPUPlace())
    assert exe.run(main, feed=ones, fetch_list=[y])[0].tolist() == [5.0, 6.0]


def test_static_nn_embedding_and_layer_norm():
    """``static.nn.embedding`` (padding_idx -1 is the last row: zeros there) and
    ``static.nn.layer_norm`` over the axes from begin_norm_axis on, with a scale and
    shift of their flattened size, against NumPy."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        ids = st.data("ids", [None, 3], "int64")
        e = st.nn.embedding(ids, size=[5, 2], padding_idx=-1)
        n = st.nn.layer_norm(e, begin_norm_axis=1)
    names = [p.name for p in main.all_parameters()]
    assert names[0].startswith("embedding_") and names[0].endswith(".w_0")
    assert [list(p.shape) for p in main.all_parameters()] == [[5, 2], [6], [6]]
    exe = st.Executor()
    exe.run(startup)
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(p.shape).astype("float32") for p in main.all_parameters()]
    for name, value in zip(names, values):
        st.global_scope().find_var(name).get_tensor().set(value, paddle.CPUPlace())
    table, scale, shift = values
    index = np.array([[0, 4, 2], [4, 4, 1]], "int64")
    got_e, got_n = exe.run(main, feed={"ids": index}, fetch_list=[e, n])
    want_e = table[index] * (index != 4)[..., None]
    np.testing.assert_array_equal(got_e, want_e)
    flat = want_e.reshape(2, 6)
    normed = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got_n, (normed * scale + shift).reshape(2, 3, 2), rtol=1e-5,
                               atol=1e-6)


def test_static_accuracy_counts_labels_in_the_top_k():
    main = st.Program()
    with st.program_guard(main, st.Program()):
        pred = st.data("pred", [None, 3], "float32")
        label = st.data("label", [None, 1], "int64")
        top1, top2 = (st.accuracy(input=pred, label=label, k=k) for k in (1, 2))
    scores = np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3], [0.3, 0.5, 0.2]], "float32")
    labels = np.array([[1], [2], [2]], "int64")   # the top 1, the top 2, neither
    got = st.Executor().run(main, feed={"pred": scores, "label": labels},
                            fetch_list=[top1, top2])
    np.testing.assert_allclose(got, [1 / 3, 2 / 3], rtol=1e-6)


def test_compiled_program_runs_as_its_program():
    main = st.Program()
    with st.program_guard(main, st.Program()):
        x = st.data("x", [None, 2], "float32")
        total = paddle.sum(x)
    strategy = st.BuildStrategy()
    strategy.fuse_all_reduce_ops = True
    compiled = st.CompiledProgram(main, build_strategy=strategy)
    (got,) = st.Executor().run(compiled, feed={"x": np.ones((3, 2), "float32")},
                               fetch_list=[total])
    assert float(got) == 6.0


def test_tutorial_helpers():
    """``isinstance(x, static.Variable)``, ``cpu_places``, ``name_scope`` and
    ``static.create_parameter``, as Paddle's static tutorials use them."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup), st.name_scope("block"):
        x = st.data("x", [None, 2], "float32")
        w = st.create_parameter([2, 1], "float32", name="w_helpers",
                                default_initializer=paddle.nn.initializer.Constant(2.0))
        y = paddle.matmul(x, w)
    assert isinstance(x, st.Variable) and isinstance(w, st.Parameter)
    assert len(st.cpu_places(3)) == 3 and isinstance(st.cpu_places()[0], paddle.CPUPlace)
    exe = st.Executor()
    exe.run(startup)
    assert exe.run(main, feed={"x": np.ones((1, 2), "float32")},
                   fetch_list=[y])[0].tolist() == [[4.0]]


# -------------------------------------------------------------- gradients through cond

def _two_branch_program(optimizer):
    """loss = mean(branch(x)^2), the branch ``fa(x)`` when k > 0, else ``2 fb(x)``: two
    Linear(3, 3) of ones, fed x of ones."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [None, 3], "float32")
        k = st.data("k", [1], "int64")
        fa, fb = paddle.nn.Linear(3, 3), paddle.nn.Linear(3, 3)
        out = st.nn.cond(k > 0, lambda: fa(x), lambda: fb(x) * 2.0)
        optimizer.minimize(paddle.mean(out * out))
    exe = st.Executor()
    exe.run(startup)
    for p in [*fa.parameters(), *fb.parameters()]:
        st.global_scope().find_var(p.name).get_tensor().set(np.ones(p.shape, "float32"),
                                                            paddle.CPUPlace())

    def run(k):
        exe.run(main, feed={"x": np.ones((2, 3), "float32"), "k": np.array([k], "int64")})
    return run, fa, fb


def test_parameters_of_the_branch_not_taken_are_updated_with_zero_gradients():
    """Paddle's static graph differentiates both branches of a cond: a parameter of the
    branch a run does not take has a zero gradient, so SGD's weight decay (0.1 * 0.5)
    still shrinks it by 0.95. irflow skipped it, as eager code skips a None gradient."""
    run, fa, fb = _two_branch_program(paddle.optimizer.SGD(0.1, weight_decay=0.5))
    run(0)
    np.testing.assert_allclose(_scope_value(fa.weight.name), np.full((3, 3), 0.95), rtol=1e-6)
    # fb: out = 2 (x @ 1 + 1) = 8, d mean(out^2) / d w = 2 * 8 * 2 * 2 rows / 6 = 32/3
    np.testing.assert_allclose(_scope_value(fb.weight.name),
                               np.full((3, 3), 1 - 0.1 * (32 / 3 + 0.5)), rtol=1e-5)


def test_adam_steps_a_parameter_of_the_branch_not_taken():
    """Adam's step with a zero gradient still advances the parameter's beta powers, so
    its first real step (g > 0 everywhere) is the second Adam step: m = 0.1 g and
    v = 0.001 g^2 bias-corrected by 1 - 0.9^2 and 1 - 0.999^2, a move of
    lr * (0.1 / 0.19) / sqrt(0.001 / 0.001999) instead of lr."""
    run, fa, _ = _two_branch_program(paddle.optimizer.Adam(0.05))
    run(0)
    np.testing.assert_array_equal(_scope_value(fa.weight.name), np.ones((3, 3)))
    run(1)
    move = 0.05 * (0.1 / 0.19) / np.sqrt(0.001 / 0.001999)
    np.testing.assert_allclose(_scope_value(fa.weight.name), np.full((3, 3), 1 - move),
                               rtol=1e-5)
