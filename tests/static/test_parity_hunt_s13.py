"""Differences from PaddlePaddle 3.3.1 found by running 25 static-graph tutorial
scripts side by side (regression, MLP/CNN training, cond/while/switch_case,
gradient clipping, schedulers, weight decay, save/load, inference models,
append_backward/gradients, ``return_numpy=False``, scopes). Each test failed before
its fix: ``paddle.static.Print`` did not exist. The expected text follows Paddle's
layout of a printed variable (one ``  - key: value`` line each, the data as the
first `summarize` elements in ``%f``)."""
import numpy as np
import pytest

import irflow as paddle
from irflow import static as st
from irflow.errors import ArgumentError

pytestmark = pytest.mark.usefixtures("static")


def _printed(values, shape, dtype, message=None, name="var", summarize=20) -> str:
    """Paddle's text for a printed variable with every flag on."""
    data = " ".join("%f" % v for v in np.asarray(values, "float64").ravel()[:summarize])
    lines = [f"Variable: {name}"] + ([f"  - message: {message}"] if message else []) + [
        "  - lod: {}", "  - place: Place(cpu)", f"  - shape: {shape}", "  - layout: NCHW",
        f"  - dtype: {dtype}", f"  - data: [{data}]"]
    return "\n".join(lines) + "\n"


def test_print_shows_each_runs_value_and_passes_it_on(capsys):
    """A Print of ``h = 2 * x``, x of shape [-1, 3], prints the run's batch size in
    the shape and up to 20 elements (all 6 of a batch of 2, 20 of a batch of 9), and
    returns its input: what depends on it computes as without it."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1, 3], "float32")
        h = st.Print(x * 2.0, message="doubled")
        total = paddle.sum(h)
    exe = st.Executor()
    exe.run(startup)
    for batch in (2, 9):
        xv = np.arange(batch * 3, dtype="float32").reshape(batch, 3) / 4
        capsys.readouterr()
        (got,) = exe.run(main, feed={"x": xv}, fetch_list=[total])
        assert capsys.readouterr().out == _printed(2 * xv, [batch, 3], "float32", "doubled")
        np.testing.assert_allclose(got, (2 * xv).sum(), rtol=1e-6)


def test_print_options_names_and_integer_data(capsys):
    """The flags leave their lines out; ints and bools print in ``%f`` too; a named
    variable (a ``static.data``) prints its name; ``summarize=-1`` prints every
    element and ``summarize=2`` the first two."""
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [4], "float32")
        st.Print(x, summarize=-1, print_tensor_lod=False, print_tensor_layout=False)
        st.Print(paddle.cast(x, "int64") > 1, summarize=2, print_tensor_name=False,
                 print_tensor_type=False, print_tensor_shape=False)
    exe = st.Executor()
    exe.run(startup)
    xv = np.array([0.5, 1.5, 2.5, -3.0], "float32")
    capsys.readouterr()
    exe.run(main, feed={"x": xv}, fetch_list=[])
    expected = ("Variable: x\n  - place: Place(cpu)\n  - shape: [4]\n  - dtype: float32\n"
                "  - data: [0.500000 1.500000 2.500000 -3.000000]\n"
                "  - lod: {}\n  - place: Place(cpu)\n  - layout: NCHW\n"
                "  - data: [0.000000 0.000000]\n")
    assert capsys.readouterr().out == expected


def test_print_in_a_cond_branch_prints_only_when_the_branch_runs(capsys):
    main, startup = st.Program(), st.Program()
    with st.program_guard(main, startup):
        x = st.data("x", [-1], "float32")
        out = st.nn.cond(paddle.sum(x) > 0, lambda: st.Print(x + 1.0, message="pos"),
                         lambda: x - 1.0)
    exe = st.Executor()
    exe.run(startup)
    capsys.readouterr()
    exe.run(main, feed={"x": np.array([-1.0, -2.0], "float32")}, fetch_list=[out])
    assert capsys.readouterr().out == ""
    exe.run(main, feed={"x": np.array([1.0, 2.0, 3.0], "float32")}, fetch_list=[out])
    assert capsys.readouterr().out == _printed([2.0, 3.0, 4.0], [3], "float32", "pos")


def test_print_of_gradients_only_is_refused():
    """``print_phase='backward'`` prints only the gradient, which irflow cannot print:
    an error rather than a Print that prints nothing."""
    with st.program_guard(st.Program(), st.Program()):
        x = st.data("x", [2], "float32")
        with pytest.raises(ArgumentError, match="print_phase='backward'"):
            st.Print(x, print_phase="backward")
