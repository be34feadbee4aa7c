"""The command line on bad input: `run --output` writes through what already exists
(a FIFO or device, a symbolic link) instead of renaming a file over it; `run`
computes its outputs without recording for a backward pass; inputs it cannot tell
apart by name are refused, not fed one file; IR text errors point at the line and
column of what is wrong; a renamed parameter is reported as missing."""
import os
import stat
import textwrap
import zipfile

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.cli import main
from irflow.cli.common import one_line
from irflow.jit.translated import TranslatedLayer
from irflow.static import InputSpec

X = np.arange(12, dtype="float32").reshape(3, 4) / 12


class Looping(nn.Layer):
    """A Linear, then `n` steps of tanh in a while loop."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, n):
        h = self.fc(x)
        i = paddle.zeros([1], "int64")
        while i < n:
            h = paddle.tanh(h)
            i = i + 1
        return h


@pytest.fixture
def saved(tmp_path):
    paddle.seed(0)
    model = Looping()
    model.eval()
    path = str(tmp_path / "model")
    paddle.jit.save(paddle.jit.to_static(model, input_spec=[
        InputSpec([None, 4], "float32", "x"), InputSpec([1], "int64", "n")]), path)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "n.npy", np.array([3]))
    expected = model(paddle.to_tensor(X), paddle.to_tensor([3])).numpy()
    return path, ["-i", f"x={tmp_path / 'x.npy'}", "-i", f"n={tmp_path / 'n.npy'}"], expected


def fails(argv, capsys, message: str) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"irflow {argv[0]}: ") and message in err, err


def test_run_output_into_a_fifo_writes_into_it_and_leaves_it_a_fifo(saved, tmp_path, capsys):
    path, inputs, expected = saved
    fifo = str(tmp_path / "out.fifo")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so a writer may open it
    try:
        assert main(["run", path, *inputs, "-o", fifo]) == 0
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        data = b""
        while chunk := os.read(reader, 1 << 16):
            data += chunk
    finally:
        os.close(reader)
    received = tmp_path / "received.npz"
    received.write_bytes(data)
    np.testing.assert_allclose(np.load(received)["output_0"], expected, rtol=1e-6)


def test_run_output_through_a_symbolic_link_keeps_the_link(saved, tmp_path, capsys):
    path, inputs, expected = saved
    target, link = tmp_path / "target.npz", tmp_path / "link.npz"
    target.write_bytes(b"old")
    os.symlink(target.name, link)
    assert main(["run", path, *inputs, "-o", str(link)]) == 0
    assert os.path.islink(link) and os.readlink(link) == target.name
    np.testing.assert_allclose(np.load(target)["output_0"], expected, rtol=1e-6)


def test_run_records_nothing_for_a_backward_pass(saved, capsys, monkeypatch):
    """A loaded layer's parameters are trainable, so a call with gradients on records
    each loop step for the backward pass (memory growing with the trip count); `run`
    differentiates nothing."""
    path, inputs, expected = saved
    grad_enabled = []
    forward = TranslatedLayer.forward

    def spy(self, *args):
        grad_enabled.append(paddle.is_grad_enabled())
        return forward(self, *args)
    monkeypatch.setattr(TranslatedLayer, "forward", spy)
    assert main(["run", path, *inputs]) == 0
    assert grad_enabled == [False]
    assert paddle.is_grad_enabled()


def test_run_refuses_inputs_it_cannot_tell_apart(tmp_path, capsys):
    """Two inputs under one name (jit.save names them apart, x and x_1; a file of an
    older version, or edited, may not): NAME=FILE would give both the one file."""
    path = str(tmp_path / "twice")
    paddle.jit.save(paddle.jit.to_static(lambda a, b: a - b, input_spec=[
        InputSpec([2], "float32", "x"), InputSpec([2], "float32", "x")]), path)
    with open(path + ".json") as f:
        text = f.read()
    with open(path + ".json", "w") as f:  # the metadata's checksums cover the others only
        f.write(text.replace('"x_1"', '"x"'))
    np.save(tmp_path / "a.npy", np.ones(2, "float32"))
    fails(["run", path, "-i", f"x={tmp_path / 'a.npy'}"], capsys,
          "the program has two inputs named 'x', which --input cannot tell apart")


def test_a_renamed_parameter_is_reported_missing(saved, capsys):
    path, inputs, _ = saved
    with open(path + ".json") as f:
        text = f.read()
    with open(path + ".json", "w") as f:  # the metadata's checksums cover the others only
        f.write(text.replace('"fc.weight"', '"fc.renamed"'))
    fails(["run", path, *inputs], capsys,
          "model.pdiparams.npz: fc.renamed.npy is missing")
    with zipfile.ZipFile(path + ".pdiparams.npz") as archive:
        assert "fc.weight.npy" in archive.namelist()


def ir_file(tmp_path, text: str) -> str:
    path = tmp_path / "bad.ir"
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.mark.parametrize("value", ['[[1.0, 2.0], [3.0]]', '"one"', "@f"])
def test_a_const_value_that_is_no_literal_of_its_type_is_a_syntax_error(tmp_path, capsys,
                                                                         value):
    path = ir_file(tmp_path, f"""\
        func @f() -> f32[2,2] {{
          %c = const {{value={value}}} : f32[2,2]
          return %c
        }}
        """)
    fails(["opt", path], capsys, "bad.ir, line 2, column 8: const: the value is not a f32 "
                                 "literal or a rectangular list of them")


def test_a_function_defined_twice_is_named_where_it_is_defined_again(tmp_path, capsys):
    path = ir_file(tmp_path, """\
        func @f(%x: f32[2]) -> f32[2] {
          return %x
        }
        func @f(%x: f32[2]) -> f32[2] {
          return %x
        }
        """)
    fails(["opt", path], capsys, "bad.ir, line 4, column 1: function @f is defined twice")


def test_a_return_that_differs_from_the_signature_is_named_at_the_return(tmp_path, capsys):
    path = ir_file(tmp_path, """\
        func @f(%x: f32[2]) -> (f32[2], f32[2]) {
          %y = relu %x : f32[2]
          return %y
        }
        """)
    fails(["opt", path], capsys, "bad.ir, line 3, column 3: the function's return types "
                                 "(f32[2]) differ from its signature (f32[2], f32[2])")


def test_running_out_of_memory_is_one_line_not_an_internal_error():
    assert one_line(MemoryError()) == "out of memory"
    assert one_line(MemoryError("Unable to allocate 8.0 EiB")) == \
        "out of memory (Unable to allocate 8.0 EiB)"
