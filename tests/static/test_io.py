"""Saving static programs: an inference program (save_inference_model) loads as a
program that computes what the test-mode program computed, needing only its feeds,
in a fresh process too; save/load of a training program's variables resumes its
training where it was."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import irflow as paddle
import irflow.nn.functional as F
from irflow.static import Executor, Program, data, program_guard

pytestmark = pytest.mark.usefixtures("static")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 4)).astype("float32")
Y = RNG.integers(0, 3, size=16).astype("int64")
FEED = {"x": X, "label": Y}


def trained():
    """A classifier with dropout and batch norm, trained a few Adam steps."""
    paddle.seed(3)
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x, label = data("x", [-1, 4]), data("label", [-1], "int64")
        h = paddle.nn.Dropout(0.5)(F.relu(paddle.static.nn.fc(x, 8)))
        logits = paddle.static.nn.fc(paddle.nn.BatchNorm1D(8)(h), 3)
        loss = F.cross_entropy(logits, label)
        paddle.optimizer.Adam(0.01).minimize(loss)
    exe = Executor()
    exe.run(startup)
    for _ in range(4):
        exe.run(main, feed=FEED, fetch_list=[loss])
    return main, exe, x, label, logits, loss


def test_an_inference_program_computes_the_test_mode_outputs(tmp_path):
    main, exe, x, _, logits, _ = trained()
    (expected,) = exe.run(main.clone(for_test=True), feed={"x": X[:5]}, fetch_list=[logits])
    path = str(tmp_path / "model")
    paddle.static.save_inference_model(path, [x], [logits], exe)
    assert sorted(os.listdir(tmp_path)) == ["model.irflow", "model.json",
                                            "model.pdiparams.npz"]
    program, feed_names, fetch_targets = paddle.static.load_inference_model(path, exe)
    assert feed_names == ["x"] and len(fetch_targets) == 1
    (out,) = exe.run(program, feed={"x": X[:5]}, fetch_list=fetch_targets)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    (again,) = exe.run(program, feed={"x": X[:5]}, fetch_list=fetch_targets)
    np.testing.assert_array_equal(again, out)  # no dropout, no statistics updated
    with paddle.static.scope_guard(paddle.static.Scope()):  # no startup: the loaded values
        (in_a_scope,) = exe.run(program, feed={"x": X[:5]}, fetch_list=fetch_targets)
    np.testing.assert_array_equal(in_a_scope, out)
    script = textwrap.dedent(f"""
        import numpy as np
        import irflow as paddle
        paddle.enable_static()
        exe = paddle.static.Executor()
        program, feeds, fetches = paddle.static.load_inference_model({path!r}, exe)
        x = np.load({str(tmp_path / 'x.npy')!r})
        np.save({str(tmp_path / 'out.npy')!r}, exe.run(program, feed={{feeds[0]: x}},
                                                        fetch_list=fetches)[0])
    """)
    np.save(tmp_path / "x.npy", X[:5])
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300,
                   env={**os.environ, "PYTHONPATH": os.getcwd()})
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), out)


def test_feeds_must_cover_the_inputs_the_fetches_need(tmp_path):
    main, exe, x, label, logits, loss = trained()
    with pytest.raises(paddle.IrflowError, match="need the input 'label', which is not among "
                                                 "feed_vars"):
        paddle.static.save_inference_model(str(tmp_path / "m"), [x], [loss], exe)
    with pytest.raises(ValueError, match="path_prefix"):
        paddle.static.save_inference_model(str(tmp_path), [x], [logits], exe)
    path = str(tmp_path / "both")  # a feed the fetches do not read stays an input
    paddle.static.save_inference_model(path, [label, x], [logits], exe)
    program, feed_names, fetches = paddle.static.load_inference_model(path, exe)
    assert feed_names == ["label", "x"]
    exe.run(program, feed={"x": X[:2]}, fetch_list=fetches)


def test_save_and_load_resume_training(tmp_path):
    main, exe, _, _, _, loss = trained()
    path = str(tmp_path / "ck" / "step4")
    paddle.static.save(main, path)
    assert sorted(os.listdir(tmp_path / "ck")) == ["step4.pdopt", "step4.pdparams"]
    params = paddle.static.load_program_state(path)
    assert set(params) == set(main.state_dict())
    paddle.seed(7)  # the same dropout masks
    after = [float(exe.run(main, feed=FEED, fetch_list=[loss])[0]) for _ in range(3)]
    paddle.static.load(main, path, exe)
    paddle.seed(7)
    assert [float(exe.run(main, feed=FEED, fetch_list=[loss])[0]) for _ in range(3)] == after
    fresh, startup = Program(), Program()
    with program_guard(fresh, startup):
        paddle.static.nn.fc(data("x", [-1, 4]), 5)
    with pytest.raises(ValueError, match=r"has no variable 'fc_\d+\.w_0' of the program"):
        paddle.static.load(fresh, path, exe)
